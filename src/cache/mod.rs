//! Objects kept already encoded: what every read and (later) every watcher
//! shares without copying.
//!
//! A [`CachedObject`] is built once when a shard applies a committed entry: the
//! stored value (the object without its resourceVersion, as etcd stores it for
//! Kubernetes) is parsed once, its `metadata.resourceVersion` set to the entry's
//! revision, and the result serialized once into `Bytes`. The parsed metadata
//! needed for filtering (labels, selectable fields) is kept beside the bytes.
//!
//! Invariants: no I/O; `json` is immutable once built and is the exact body a
//! GET returns; `meta.resource_version == mod_revision`.

use crate::log::Revision;
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;

/// The metadata a shard needs to filter and order objects without parsing
/// their JSON again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectMeta {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub resource_version: Revision,
    pub creation_timestamp: String,
    pub labels: Vec<(String, String)>,
    /// Values of the resource's selectable fields (`spec.nodeName`, ...), by path.
    pub fields: Vec<(String, String)>,
}

impl ObjectMeta {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The value of a selectable field as a field selector compares it.
    pub fn field(&self, path: &str) -> Option<&str> {
        match path {
            "metadata.name" => Some(&self.name),
            "metadata.namespace" => Some(&self.namespace),
            _ => self.fields.iter().find(|(k, _)| k == path).map(|(_, v)| v.as_str()),
        }
    }
}

/// One version of one object, encoded.
#[derive(Debug)]
pub struct CachedObject {
    pub key: Bytes,
    pub mod_revision: Revision,
    pub create_revision: Revision,
    /// The object as JSON, exactly as served.
    pub json: Bytes,
    pub meta: ObjectMeta,
}

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("stored value is not a JSON object: {0}")]
    NotJson(String),
    #[error("stored value has no metadata object")]
    NoMetadata,
}

/// Builds the cached form of a stored value at `mod_revision`.
/// `selectable_fields` are the dotted paths whose values field selectors use.
pub fn encode_stored(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    selectable_fields: &[String],
) -> Result<Arc<CachedObject>, CacheError> {
    let mut object: Value = serde_json::from_slice(value).map_err(|e| CacheError::NotJson(e.to_string()))?;
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return Err(CacheError::NoMetadata);
    };
    set_resource_version(metadata, mod_revision);
    let meta = parse_meta(&object, mod_revision, selectable_fields);
    let json = serde_json::to_vec(&object).map_err(|e| CacheError::NotJson(e.to_string()))?;
    Ok(Arc::new(CachedObject { key, mod_revision, create_revision, json: Bytes::from(json), meta }))
}

/// Sets `metadata.resourceVersion`, keeping kube-apiserver's field order
/// (after name, generateName, namespace and uid).
pub fn set_resource_version(metadata: &mut serde_json::Map<String, Value>, revision: Revision) {
    let value = Value::String(revision.0.to_string());
    if let Some(slot) = metadata.get_mut("resourceVersion") {
        *slot = value;
        return;
    }
    let position =
        ["name", "generateName", "namespace", "selfLink", "uid"].iter().filter(|k| metadata.contains_key(**k)).count();
    metadata.shift_insert(position, "resourceVersion".to_string(), value);
}

fn parse_meta(object: &Value, revision: Revision, selectable_fields: &[String]) -> ObjectMeta {
    let metadata = &object["metadata"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let labels = metadata["labels"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        .unwrap_or_default();
    let fields =
        selectable_fields.iter().filter_map(|path| field_value(object, path).map(|v| (path.clone(), v))).collect();
    ObjectMeta {
        name: text(&metadata["name"]),
        namespace: text(&metadata["namespace"]),
        uid: text(&metadata["uid"]),
        resource_version: revision,
        creation_timestamp: text(&metadata["creationTimestamp"]),
        labels,
        fields,
    }
}

/// The value at a dotted path, as a field selector sees it: strings as they
/// are, booleans and numbers in their JSON text, missing as empty string.
fn field_value(object: &Value, path: &str) -> Option<String> {
    let mut cursor = object;
    for part in path.split('.') {
        match cursor.get(part) {
            Some(next) => cursor = next,
            None => return Some(String::new()),
        }
    }
    match cursor {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_sets_resource_version_in_kube_order() {
        let value = br#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web"}},"spec":{"nodeName":"n1"}}"#;
        let fields = vec!["spec.nodeName".to_string(), "status.phase".to_string()];
        let object = encode_stored(Bytes::from_static(b"k"), value, Revision(7), Revision(5), &fields).unwrap();
        let text = std::str::from_utf8(&object.json).unwrap();
        assert!(text.contains(r#""uid":"u","resourceVersion":"7","creationTimestamp""#), "{text}");
        assert_eq!(object.meta.label("app"), Some("web"));
        assert_eq!(object.meta.field("spec.nodeName"), Some("n1"));
        assert_eq!(object.meta.field("status.phase"), Some(""));
        assert_eq!(object.meta.field("metadata.namespace"), Some("ns"));
        assert_eq!(object.meta.resource_version, Revision(7));
    }

    /// Found by the `encode_stored` fuzz target: without serde_json's
    /// `float_roundtrip`, a number was parsed to a neighbour of its value,
    /// so the served bytes, stored again, served a different number.
    #[test]
    fn served_numbers_survive_a_second_encoding() {
        let value = br#"{"metadata":{"name":"a"},"spec":55555555557777777777777777777777777777755}"#;
        let first = encode_stored(Bytes::new(), value, Revision(4), Revision(4), &[]).unwrap();
        let again = encode_stored(Bytes::new(), &first.json, Revision(4), Revision(4), &[]).unwrap();
        assert_eq!(again.json, first.json);
        assert!(
            std::str::from_utf8(&first.json).unwrap().contains(r#""spec":5.555555555777778e+40"#),
            "{:?}",
            first.json
        );
    }

    #[test]
    fn encode_rejects_non_objects() {
        let fields = Vec::new();
        assert!(encode_stored(Bytes::new(), b"[1]", Revision(1), Revision(1), &fields).is_err());
        assert!(encode_stored(Bytes::new(), b"{", Revision(1), Revision(1), &fields).is_err());
    }
}
