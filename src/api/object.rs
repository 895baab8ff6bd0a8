//! Turning a request body into the object the server stores: decoding,
//! type checks, server-set metadata, kube-apiserver's field order, and the
//! storage encoding (the object without its resourceVersion, which the log's
//! revision supplies).
//!
//! Invariant: no I/O; the clock and randomness come in as arguments or from
//! the caller.

use super::status::{ApiError, Cause, Target};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::time::SystemTime;

pub type Object = Map<String, Value>;

/// The media type of a request body, without parameters, lower-cased.
pub fn media_type(content_type: Option<&str>) -> String {
    content_type.unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Decodes a create/update body into a JSON object.
pub fn decode_body(content_type: Option<&str>, body: &[u8], kind: &str) -> Result<Object, ApiError> {
    let media = media_type(content_type);
    match media.as_str() {
        "application/json" | "" => {}
        "application/vnd.kubernetes.protobuf" => return super::protobuf::decode_object(body, kind),
        "application/yaml" => return super::yaml::decode_object(body),
        "application/cbor" => return super::cbor::decode_object(body),
        _ => {
            let builtin = crate::types::proto_schema::message_of_kind("", kind).is_some();
            let accepted =
                if builtin { super::negotiate::BUILTIN_MEDIA_TYPES } else { super::negotiate::CUSTOM_MEDIA_TYPES };
            return Err(ApiError::UnsupportedMediaType(accepted.to_string()));
        }
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::BadRequest(
            "couldn't get version/kind; json parse error: the body is not a JSON object".into(),
        )),
    }
}

/// Checks `apiVersion` and `kind` against the endpoint and fills them in
/// when absent, as kube-apiserver defaults them from the URL.
pub fn check_type_meta(object: &mut Object, info: &ResourceInfo) -> Result<(), ApiError> {
    let expected_version = info.api_version();
    match object.get("apiVersion") {
        None | Some(Value::Null) => {}
        Some(Value::String(v)) if v.is_empty() || *v == expected_version => {}
        Some(Value::String(v)) => {
            return Err(ApiError::BadRequest(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected_version})"
            )))
        }
        Some(_) => return Err(ApiError::BadRequest("apiVersion must be a string".into())),
    }
    match object.get("kind") {
        None | Some(Value::Null) => {}
        Some(Value::String(k)) if k.is_empty() || *k == info.kind => {}
        Some(Value::String(k)) => {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                info.kind
            )))
        }
        Some(_) => return Err(ApiError::BadRequest("kind must be a string".into())),
    }
    object.insert("kind".into(), Value::String(info.kind.clone()));
    object.insert("apiVersion".into(), Value::String(expected_version));
    match object.get("metadata") {
        None | Some(Value::Null) => {
            object.insert("metadata".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(_)) => {}
        Some(_) => return Err(ApiError::BadRequest("metadata must be an object".into())),
    }
    Ok(())
}

pub fn metadata(object: &Object) -> &Object {
    static EMPTY: std::sync::OnceLock<Object> = std::sync::OnceLock::new();
    object.get("metadata").and_then(Value::as_object).unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

pub fn metadata_mut(object: &mut Object) -> &mut Object {
    if !matches!(object.get("metadata"), Some(Value::Object(_))) {
        object.insert("metadata".into(), Value::Object(Map::new()));
    }
    match object.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was just set to an object"),
    }
}

pub fn meta_str<'a>(object: &'a Object, field: &str) -> &'a str {
    metadata(object).get(field).and_then(Value::as_str).unwrap_or("")
}

/// kube-apiserver's order of object and metadata fields, so stored objects
/// read back the way Kubernetes writes them.
const TOP_ORDER: [&str; 5] = ["kind", "apiVersion", "metadata", "spec", "status"];
const META_ORDER: [&str; 16] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "clusterName",
];

fn reorder(mut map: Object, order: &[&str]) -> Object {
    let mut out = Map::new();
    for key in order {
        if let Some(v) = map.shift_remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    for (k, v) in map {
        out.insert(k, v);
    }
    out
}

pub fn order_fields(mut object: Object) -> Object {
    if let Some(Value::Object(meta)) = object.shift_remove("metadata") {
        object.insert("metadata".into(), Value::Object(reorder(meta, &META_ORDER)));
    }
    reorder(object, &TOP_ORDER)
}

/// The bytes the log stores: the object without `metadata.resourceVersion`.
pub fn storage_value(object: &Object) -> Result<Bytes, ApiError> {
    let encoded = if matches!(object.get("metadata"), Some(Value::Object(_))) {
        // The common case, serialized from the borrowed object: no copy of
        // the tree per write, the same bytes as the copy below would give.
        serde_json::to_vec(&WithoutResourceVersion(object))
    } else {
        let mut copy = object.clone();
        metadata_mut(&mut copy).shift_remove("resourceVersion");
        serde_json::to_vec(&copy)
    };
    encoded.map(Bytes::from).map_err(|e| ApiError::Internal(format!("encoding object: {e}")))
}

/// An object serialized as it is, except `metadata.resourceVersion`
/// (its metadata is an object): the stored form `storage_value` encodes.
struct WithoutResourceVersion<'a>(&'a Object);

impl serde::Serialize for WithoutResourceVersion<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            match value {
                Value::Object(meta) if key == "metadata" => map.serialize_entry(key, &MetadataWithout(meta))?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// Metadata without its `resourceVersion`.
struct MetadataWithout<'a>(&'a Object);

impl serde::Serialize for MetadataWithout<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let kept = self.0.len() - usize::from(self.0.contains_key("resourceVersion"));
        let mut map = serializer.serialize_map(Some(kept))?;
        for (key, value) in self.0.iter().filter(|(key, _)| key.as_str() != "resourceVersion") {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// RFC 3339 at second precision in UTC, as metav1.Time serializes.
pub fn timestamp(now: SystemTime) -> String {
    let seconds = now.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let t = time::OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A random (version 4) UUID.
pub fn new_uid(random: u128) -> String {
    let v = (random & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let h = format!("{v:032x}");
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// The 5-character suffix kube-apiserver appends to `generateName`.
pub fn generated_suffix(mut random: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut s = String::with_capacity(5);
    for _ in 0..5 {
        s.push(ALPHABET[(random % ALPHABET.len() as u64) as usize] as char);
        random /= ALPHABET.len() as u64;
    }
    s
}

/// A 422 Invalid error for `kind "name"`.
pub fn invalid(info: &ResourceInfo, name: &str, causes: Vec<Cause>) -> ApiError {
    ApiError::Invalid { kind: info.kind.clone(), target: Target::new(&info.group, &info.resource, name), causes }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `storage_value` stored before it serialized the borrowed object:
    /// a copy without `metadata.resourceVersion`.
    fn storage_value_by_copy(object: &Object) -> Vec<u8> {
        let mut copy = object.clone();
        metadata_mut(&mut copy).shift_remove("resourceVersion");
        serde_json::to_vec(&copy).unwrap()
    }

    #[test]
    fn storage_value_drops_only_the_resource_version() {
        let cases = [
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","resourceVersion":"7","uid":"u","labels":{"resourceVersion":"k"}},"spec":{"resourceVersion":"1"}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"7"}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"status":{}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{}}"#,
            r#"{"apiVersion":"v1","kind":"Pod"}"#,
            r#"{"metadata":"text","kind":"Pod"}"#,
            r#"{"metadata":null}"#,
        ];
        for case in cases {
            let object: Object = serde_json::from_str(case).unwrap();
            let stored = storage_value(&object).unwrap();
            assert_eq!(stored.as_ref(), storage_value_by_copy(&object).as_slice(), "{case}");
            assert!(!String::from_utf8_lossy(&stored).contains(r#""resourceVersion":"7""#), "{case}");
        }
    }

    #[test]
    fn field_order_follows_kube() {
        let object: Object = serde_json::from_str(
            r#"{"spec":{},"metadata":{"labels":{},"namespace":"d","name":"x","uid":"u"},"apiVersion":"v1","kind":"Pod","extra":1}"#,
        )
        .unwrap();
        let ordered = order_fields(object);
        assert_eq!(
            serde_json::to_string(&ordered).unwrap(),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x","namespace":"d","uid":"u","labels":{}},"spec":{},"extra":1}"#
        );
    }

    #[test]
    fn timestamps_and_uids() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        assert_eq!(timestamp(t), "2023-11-14T22:13:20Z");
        let uid = new_uid(u128::MAX);
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
        assert!(matches!(&uid[19..20], "8" | "9" | "a" | "b"));
        assert_eq!(generated_suffix(0), "bbbbb");
    }

    #[test]
    fn bodies_are_checked() {
        assert_eq!(decode_body(Some("text/plain"), b"{}", "Pod").unwrap_err().code(), 415);
        assert_eq!(decode_body(Some("application/json"), b"{", "Pod").unwrap_err().code(), 400);
        assert_eq!(decode_body(Some("application/json"), b"[]", "Pod").unwrap_err().code(), 400);
        assert!(decode_body(Some("application/json; charset=utf-8"), b"{}", "Pod").is_ok());
    }
}
