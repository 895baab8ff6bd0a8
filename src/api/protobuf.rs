//! Request bodies in Kubernetes' protobuf encoding: the `k8s\0` magic, a
//! `runtime.Unknown` envelope (typeMeta, raw, contentEncoding, contentType),
//! and the object inside `raw`.
//!
//! This slice decodes the envelope and `ObjectMeta` for every type, plus the
//! spec and status of a Namespace: what kubectl's typed clients send for
//! `kubectl create namespace` (they prefer protobuf since kubectl 1.32). The
//! other types' bodies answer 415 until the representations issue brings the
//! full schema-driven codec.
//!
//! Invariant: never panics on any input; every malformed byte sequence is a
//! 400 BadRequest.

use super::status::ApiError;
use serde_json::{json, Map, Value};

pub const MAGIC: &[u8] = b"k8s\x00";

/// A protobuf wire-format reader over one message's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

#[derive(Debug)]
enum Field<'a> {
    Varint,
    Bytes(&'a [u8]),
    Fixed64,
    Fixed32,
}

fn malformed(what: &str) -> ApiError {
    ApiError::BadRequest(format!("malformed protobuf body: {what}"))
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, position: 0 }
    }

    fn varint(&mut self) -> Result<u64, ApiError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.bytes.get(self.position).ok_or_else(|| malformed("truncated varint"))?;
            self.position += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("varint longer than 10 bytes"))
    }

    fn next(&mut self) -> Result<Option<(u32, Field<'a>)>, ApiError> {
        if self.position >= self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| malformed("field number too large"))?;
        let field = match key & 7 {
            0 => {
                self.varint()?;
                Field::Varint
            }
            1 => {
                self.skip(8)?;
                Field::Fixed64
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("length too large"))?;
                let start = self.position;
                self.skip(len)?;
                Field::Bytes(&self.bytes[start..start + len])
            }
            5 => {
                self.skip(4)?;
                Field::Fixed32
            }
            _ => return Err(malformed("unsupported wire type")),
        };
        Ok(Some((number, field)))
    }

    fn skip(&mut self, n: usize) -> Result<(), ApiError> {
        let end = self.position.checked_add(n).ok_or_else(|| malformed("length overflow"))?;
        if end > self.bytes.len() {
            return Err(malformed("truncated field"));
        }
        self.position = end;
        Ok(())
    }
}

fn text(bytes: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed("string is not UTF-8"))
}

/// The decoded envelope.
pub struct Envelope<'a> {
    pub api_version: String,
    pub kind: String,
    pub raw: &'a [u8],
}

pub fn decode_envelope(body: &[u8]) -> Result<Envelope<'_>, ApiError> {
    let inner = body.strip_prefix(MAGIC).ok_or_else(|| malformed("missing the k8s\\0 prefix"))?;
    let mut envelope = Envelope { api_version: String::new(), kind: String::new(), raw: &[] };
    let mut reader = Reader::new(inner);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(type_meta)) => {
                let mut r = Reader::new(type_meta);
                while let Some((n, f)) = r.next()? {
                    match (n, f) {
                        (1, Field::Bytes(b)) => envelope.api_version = text(b)?,
                        (2, Field::Bytes(b)) => envelope.kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(raw)) => envelope.raw = raw,
            (3, Field::Bytes(encoding)) if !encoding.is_empty() => {
                return Err(ApiError::UnsupportedMediaType(format!(
                    "application/vnd.kubernetes.protobuf with contentEncoding {}",
                    text(encoding)?
                )))
            }
            _ => {}
        }
    }
    Ok(envelope)
}

fn string_map(entries: &[&[u8]]) -> Result<Value, ApiError> {
    let mut map = Map::new();
    for entry in entries {
        let (mut key, mut value) = (String::new(), String::new());
        let mut r = Reader::new(entry);
        while let Some((n, f)) = r.next()? {
            match (n, f) {
                (1, Field::Bytes(b)) => key = text(b)?,
                (2, Field::Bytes(b)) => value = text(b)?,
                _ => {}
            }
        }
        map.insert(key, Value::String(value));
    }
    Ok(Value::Object(map))
}

/// Decodes a `metav1.ObjectMeta` into its JSON form (the fields a client sets
/// on create and update; server-set fields are overwritten anyway).
fn object_meta(bytes: &[u8]) -> Result<Value, ApiError> {
    let mut meta = Map::new();
    let mut labels = Vec::new();
    let mut annotations = Vec::new();
    let mut finalizers = Vec::new();
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, Field::Bytes(b)) if !b.is_empty() => {
                meta.insert("name".into(), json!(text(b)?));
            }
            (2, Field::Bytes(b)) if !b.is_empty() => {
                meta.insert("generateName".into(), json!(text(b)?));
            }
            (3, Field::Bytes(b)) if !b.is_empty() => {
                meta.insert("namespace".into(), json!(text(b)?));
            }
            (6, Field::Bytes(b)) if !b.is_empty() => {
                meta.insert("resourceVersion".into(), json!(text(b)?));
            }
            (11, Field::Bytes(b)) => labels.push(b),
            (12, Field::Bytes(b)) => annotations.push(b),
            (13, Field::Bytes(_)) => {
                return Err(ApiError::UnsupportedMediaType(
                    "application/vnd.kubernetes.protobuf (ownerReferences are decoded from JSON bodies only)".into(),
                ))
            }
            (14, Field::Bytes(b)) => finalizers.push(json!(text(b)?)),
            _ => {}
        }
    }
    if !labels.is_empty() {
        meta.insert("labels".into(), string_map(&labels)?);
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), string_map(&annotations)?);
    }
    if !finalizers.is_empty() {
        meta.insert("finalizers".into(), Value::Array(finalizers));
    }
    Ok(Value::Object(meta))
}

/// Decodes a protobuf object body of `kind` into JSON.
pub fn decode_object(body: &[u8], expected_kind: &str) -> Result<Map<String, Value>, ApiError> {
    let envelope = decode_envelope(body)?;
    let kind = if envelope.kind.is_empty() { expected_kind.to_string() } else { envelope.kind.clone() };
    if kind != "Namespace" {
        return Err(ApiError::UnsupportedMediaType(format!(
            "application/vnd.kubernetes.protobuf (decoded for Namespace only in this version; send {kind} as JSON)"
        )));
    }
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    if !envelope.api_version.is_empty() {
        object.insert("apiVersion".into(), json!(envelope.api_version));
    }
    let mut r = Reader::new(envelope.raw);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, Field::Bytes(b)) => {
                object.insert("metadata".into(), object_meta(b)?);
            }
            (2, Field::Bytes(b)) => {
                let mut finalizers = Vec::new();
                let mut s = Reader::new(b);
                while let Some((n, f)) = s.next()? {
                    if let (1, Field::Bytes(v)) = (n, f) {
                        finalizers.push(json!(text(v)?));
                    }
                }
                let mut spec = Map::new();
                if !finalizers.is_empty() {
                    spec.insert("finalizers".into(), Value::Array(finalizers));
                }
                object.insert("spec".into(), Value::Object(spec));
            }
            _ => {}
        }
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kubectl create namespace demo` as kubectl 1.37 sends it.
    const CREATE_DEMO: &[u8] = b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace\x12\x1c\n\x14\n\x04demo\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\n\x00\x1a\x00\"\x00";

    #[test]
    fn decodes_kubectl_namespace_create() {
        let object = decode_object(CREATE_DEMO, "Namespace").unwrap();
        assert_eq!(
            Value::Object(object),
            json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "demo"}, "spec": {}})
        );
    }

    #[test]
    fn malformed_bodies_are_bad_requests_not_panics() {
        for n in 0..CREATE_DEMO.len() {
            let truncated = &CREATE_DEMO[..n];
            if let Err(e) = decode_object(truncated, "Namespace") {
                assert!(matches!(e.code(), 400 | 415), "{n}: {e:?}");
            }
        }
        assert_eq!(
            decode_object(b"k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "Namespace").unwrap_err().code(),
            400
        );
        assert_eq!(decode_object(b"{}", "Namespace").unwrap_err().code(), 400);
    }

    #[test]
    fn other_kinds_are_unsupported_for_now() {
        let pod = b"k8s\x00\n\x09\n\x02v1\x12\x03Pod\x12\x00";
        assert_eq!(decode_object(pod, "Pod").unwrap_err().code(), 415);
    }
}
