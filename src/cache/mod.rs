//! Objects kept already encoded: what every read and (later) every watcher
//! shares without copying.
//!
//! A [`CachedObject`] is built once when a shard applies a committed entry: the
//! stored value (the object without its resourceVersion, as etcd stores it for
//! Kubernetes) is parsed once, its `metadata.resourceVersion` set to the entry's
//! revision, and the result serialized once into `Bytes`. The parsed metadata
//! needed for filtering (labels, selectable fields) is kept beside the bytes.
//!
//! The rarer representations (protobuf, CBOR, YAML) are built from `json`
//! lazily, at most once per object version, and kept beside it
//! (`encodings.rs`).
//!
//! Invariants: no I/O; `json` is immutable once built and is the exact body a
//! GET returns; `meta.resource_version == mod_revision`.

pub mod encodings;

pub use encodings::{encodings_built, Encodings, Format};

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
    /// The other representations, each built from `json` at most once, on
    /// first use, and shared by every request and watcher after that.
    pub encodings: Encodings,
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
///
/// The fast path reads the value without building a document: it borrows
/// each member's raw text, parses only the metadata filters need, and splices
/// `"resourceVersion"` into the stored bytes at the place kube-apiserver's
/// field order puts it. Anything it does not recognise exactly (escaped keys,
/// duplicate keys, non-string labels) takes the slow path, which decodes and
/// re-encodes the whole object. Numbers are served exactly as stored, never
/// converted: stored values come from the API layer's own encoder, so they
/// are always within what a full decode accepts.
pub fn encode_stored(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    selectable_fields: &[String],
) -> Result<Arc<CachedObject>, CacheError> {
    if let Some((json, meta)) = fast::encode(value, mod_revision, selectable_fields) {
        return Ok(Arc::new(CachedObject {
            key,
            mod_revision,
            create_revision,
            json: Bytes::from(json),
            meta,
            encodings: Encodings::default(),
        }));
    }
    encode_stored_slow(key, value, mod_revision, create_revision, selectable_fields)
}

/// The reference encoding: decode the whole value, set the resourceVersion,
/// encode it again. Used when the fast path declines, and by tests as the
/// model the fast path must agree with.
pub fn encode_stored_slow(
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
    Ok(Arc::new(CachedObject {
        key,
        mod_revision,
        create_revision,
        json: Bytes::from(json),
        meta,
        encodings: Encodings::default(),
    }))
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

mod fast {
    //! The splice encoder: borrowed raw members, no document built.
    use super::{ObjectMeta, Revision};
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use serde_json::value::RawValue;
    use std::fmt;

    /// An object's members in order, keys and values borrowed from the input.
    struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct MembersVisitor;
            impl<'de> Visitor<'de> for MembersVisitor {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                    let mut members = Vec::new();
                    while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                        members.push(entry);
                    }
                    Ok(Members(members))
                }
            }
            deserializer.deserialize_map(MembersVisitor)
        }
    }

    impl<'a> Members<'a> {
        fn parse(text: &'a str) -> Option<Members<'a>> {
            let members: Members<'a> = serde_json::from_str(text).ok()?;
            // Duplicate keys: the reference decoder keeps the last; decline.
            let mut keys: Vec<&str> = members.0.iter().map(|(k, _)| *k).collect();
            keys.sort_unstable();
            keys.dedup();
            (keys.len() == members.0.len()).then_some(members)
        }

        fn get(&self, key: &str) -> Option<&'a RawValue> {
            self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
        }
    }

    fn string(raw: Option<&RawValue>) -> Option<String> {
        let Some(raw) = raw else { return Some(String::new()) };
        let text = raw.get();
        if !text.starts_with('"') {
            // The reference reads a non-string as empty.
            return Some(String::new());
        }
        if !text.contains('\\') {
            return Some(text[1..text.len() - 1].to_string());
        }
        serde_json::from_str::<String>(text).ok()
    }

    /// The members of first-level objects (`spec`, `status`, ...), parsed once
    /// per value however many selectable fields look into them.
    struct Containers<'a> {
        parsed: Vec<(&'a str, Option<Members<'a>>)>,
    }

    impl<'a> Containers<'a> {
        fn get(&mut self, top: &Members<'a>, name: &'a str) -> Option<&Members<'a>> {
            let index = match self.parsed.iter().position(|(n, _)| *n == name) {
                Some(index) => index,
                None => {
                    let members = top.get(name).and_then(|raw| Members::parse(raw.get()));
                    self.parsed.push((name, members));
                    self.parsed.len() - 1
                }
            };
            self.parsed[index].1.as_ref()
        }
    }

    /// A field selector's view of the value at a dotted path (see
    /// `field_value`); `None` for objects and arrays (not selectable).
    fn field<'a>(top: &Members<'a>, containers: &mut Containers<'a>, path: &'a str) -> Option<String> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let Some(second) = parts.next() else {
            return scalar(top.get(first));
        };
        if top.get(first).is_none() {
            return Some(String::new());
        }
        let Some(container) = containers.get(top, first) else {
            // Not an object: the reference finds nothing below a scalar.
            return Some(String::new());
        };
        let mut cursor = match container.get(second) {
            Some(raw) => raw,
            None => return Some(String::new()),
        };
        for part in parts {
            let Some(members) = Members::parse(cursor.get()) else {
                return Some(String::new());
            };
            match members.get(part) {
                Some(next) => cursor = next,
                None => return Some(String::new()),
            }
        }
        scalar(Some(cursor))
    }

    /// A selectable value: strings as they are, booleans and numbers in their
    /// JSON text, null or missing as empty; `None` for objects and arrays.
    fn scalar(raw: Option<&RawValue>) -> Option<String> {
        let Some(raw) = raw else { return Some(String::new()) };
        match serde_json::from_str::<serde_json::Value>(raw.get()).ok()? {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Null => Some(String::new()),
            _ => None,
        }
    }

    /// Offset of `inner` (a slice of `outer`) within `outer`.
    fn offset_in(outer: &str, inner: &str) -> Option<usize> {
        let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
        (start + inner.len() <= outer.len()).then_some(start)
    }

    pub(super) fn encode(
        value: &[u8],
        revision: Revision,
        selectable_fields: &[String],
    ) -> Option<(Vec<u8>, ObjectMeta)> {
        let text = std::str::from_utf8(value).ok()?;
        let top = Members::parse(text)?;
        let metadata_raw = top.get("metadata")?;
        let metadata_text = metadata_raw.get();
        if !metadata_text.starts_with('{') {
            return None;
        }
        let metadata = Members::parse(metadata_text)?;
        let rv = format!("\"{}\"", revision.0);
        // Where the resourceVersion goes (and what it replaces, if present).
        let (splice_start, splice_end, insert) = match metadata.get("resourceVersion") {
            Some(existing) => {
                let start = offset_in(text, existing.get())?;
                (start, start + existing.get().len(), rv)
            }
            None => {
                let preceding = ["name", "generateName", "namespace", "selfLink", "uid"];
                let position = metadata.0.iter().filter(|(k, _)| preceding.contains(k)).count();
                if position == 0 {
                    let start = offset_in(text, metadata_text)? + 1;
                    let comma = if metadata.0.is_empty() { "" } else { "," };
                    (start, start, format!("\"resourceVersion\":{rv}{comma}"))
                } else {
                    let (_, before) = metadata.0.get(position - 1)?;
                    let end = offset_in(text, before.get())? + before.get().len();
                    (end, end, format!(",\"resourceVersion\":{rv}"))
                }
            }
        };
        let mut labels = Vec::new();
        if let Some(raw) = metadata.get("labels") {
            // The reference reads labels only from an object.
            if raw.get().starts_with('{') {
                for (k, v) in Members::parse(raw.get())?.0 {
                    labels.push((k.to_string(), string(Some(v))?));
                }
            }
        }
        let mut containers = Containers { parsed: Vec::new() };
        let fields = selectable_fields
            .iter()
            .filter_map(|path| field(&top, &mut containers, path).map(|v| (path.clone(), v)))
            .collect();
        let meta = ObjectMeta {
            name: string(metadata.get("name"))?,
            namespace: string(metadata.get("namespace"))?,
            uid: string(metadata.get("uid"))?,
            resource_version: revision,
            creation_timestamp: string(metadata.get("creationTimestamp"))?,
            labels,
            fields,
        };
        let mut out = Vec::with_capacity(value.len() + insert.len());
        out.extend_from_slice(&value[..splice_start]);
        out.extend_from_slice(insert.as_bytes());
        out.extend_from_slice(&value[splice_end..]);
        Some((out, meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path agrees with the reference encoding on canonical input
    /// (what the API layer stores): same bytes, same metadata.
    #[test]
    fn fast_path_matches_the_reference() {
        let fields: Vec<String> =
            ["spec.nodeName", "status.phase", "spec.hostNetwork", "spec.replicas", "involvedObject.kind", "spec"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let cases = [
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","t":"x"}},"spec":{"nodeName":"n1","hostNetwork":true},"status":{"phase":"Running"}}"#,
            r#"{"kind":"Pod","metadata":{}}"#,
            r#"{"metadata":{"labels":{"a":"b"}}}"#,
            r#"{"metadata":{"generateName":"x-","name":"x-abcde"},"spec":{"replicas":3}}"#,
            r#"{"metadata":{"name":"a","resourceVersion":"12","uid":"u"}}"#,
            r#"{"metadata":{"name":"é\"q","namespace":"n"},"involvedObject":{"kind":"Pod"},"spec":5}"#,
            r#"{"metadata":{"name":"a","labels":{"x":1}},"spec":{"nodeName":null}}"#,
            r#"{"metadata":{"name":"a","labels":[1]},"status":"odd"}"#,
            r#"{"metadata":{"uid":"u","name":"late"}}"#,
        ];
        for case in cases {
            let value = case.as_bytes();
            let fast = fast::encode(value, Revision(42), &fields);
            let slow = encode_stored_slow(Bytes::new(), value, Revision(42), Revision(1), &fields).unwrap();
            match fast {
                Some((json, meta)) => {
                    assert_eq!(
                        String::from_utf8(json).unwrap(),
                        String::from_utf8(slow.json.to_vec()).unwrap(),
                        "{case}"
                    );
                    assert_eq!(meta, slow.meta, "{case}");
                }
                None => panic!("fast path declined canonical input {case}"),
            }
        }
        // Declined: duplicate keys, escaped keys; the reference still answers.
        for case in [r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#, r#"{"metadata":{"n\u0061me":"a"}}"#] {
            assert!(fast::encode(case.as_bytes(), Revision(1), &fields).is_none(), "{case}");
            assert!(encode_stored(Bytes::new(), case.as_bytes(), Revision(1), Revision(1), &fields).is_ok());
        }
    }

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
    /// so the served bytes, stored again, served a different number. The
    /// reference encoding now round-trips; the fast path does not even parse
    /// the number, so it serves it exactly as stored.
    #[test]
    fn served_numbers_survive_a_second_encoding() {
        let value = br#"{"metadata":{"name":"a"},"spec":55555555557777777777777777777777777777755}"#;
        let slow = encode_stored_slow(Bytes::new(), value, Revision(4), Revision(4), &[]).unwrap();
        let again = encode_stored_slow(Bytes::new(), &slow.json, Revision(4), Revision(4), &[]).unwrap();
        assert_eq!(again.json, slow.json);
        assert!(
            std::str::from_utf8(&slow.json).unwrap().contains(r#""spec":5.555555555777778e+40"#),
            "{:?}",
            slow.json
        );
        let first = encode_stored(Bytes::new(), value, Revision(4), Revision(4), &[]).unwrap();
        let again = encode_stored(Bytes::new(), &first.json, Revision(4), Revision(4), &[]).unwrap();
        assert_eq!(again.json, first.json);
        assert!(std::str::from_utf8(&first.json)
            .unwrap()
            .contains(r#""spec":55555555557777777777777777777777777777755"#));
    }

    #[test]
    fn encode_rejects_non_objects() {
        let fields = Vec::new();
        assert!(encode_stored(Bytes::new(), b"[1]", Revision(1), Revision(1), &fields).is_err());
        assert!(encode_stored(Bytes::new(), b"{", Revision(1), Revision(1), &fields).is_err());
    }
}
