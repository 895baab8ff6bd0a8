//! Responses in Kubernetes' protobuf encoding: the JSON object a shard cached,
//! encoded by walking the same schema table the request decoder walks
//! (`types::proto_schema`), the inverse of `protobuf.rs`; and the envelopes
//! around it: `k8s\0` + `runtime.Unknown` for an object or a list, and for a
//! watch a 4-byte big-endian length + a `meta.v1.WatchEvent` whose object is
//! the `RawExtension` of the object's own envelope (`proto/envelope.proto`,
//! `proto/watch.proto`).
//!
//! Field by field: singular fields present in JSON are written (absent and
//! `null` ones are not); repeated numbers are written unpacked, as Go's
//! proto2 code writes them; maps one entry message per key, keys sorted, as
//! Go writes them; Go's inline structs as the field of their own that
//! protobuf gives them, filled from the parent object; Kubernetes' JSON forms
//! (`Time`, `MicroTime`, `Duration`, `IntOrString`, `Quantity`, embedded JSON,
//! the apiextensions `JSONSchemaPropsOr*` unions) back to their messages.
//! JSON members the schema does not know are dropped, as Go's typed decode
//! drops them.
//!
//! A list is the envelope of the List kind whose `raw` is the `ListMeta`
//! field followed by each item's message, and each item's message is a slice
//! of that item's cached envelope: a list page is assembled from the cached
//! bytes, never re-encoded.
//!
//! Invariant: never panics; a kind without a schema (a custom resource) is
//! `EncodeError::NoSchema` (the caller answers 406), a value the schema
//! cannot hold is `EncodeError::Invalid`.

use super::protobuf::MAGIC;
use crate::types::proto_schema::{self, Field, Form, Message, Shape, Type};
use base64::Engine;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value};

/// The media type of protobuf objects and lists.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The media type of a protobuf watch stream.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The deepest message nesting the encoder follows (the decoder's bound).
const MAX_DEPTH: usize = super::protobuf::MAX_DEPTH;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("no protobuf schema for {0}")]
    NoSchema(String),
    #[error("cannot encode {path} as protobuf: {reason}")]
    Invalid { path: String, reason: String },
}

fn invalid(path: &str, reason: impl Into<String>) -> EncodeError {
    EncodeError::Invalid { path: path.to_string(), reason: reason.into() }
}

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn key(out: &mut Vec<u8>, tag: u32, wire: u32) {
    varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

fn len_field(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    key(out, tag, LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The bytes of a length-delimited field's key and length, without its body.
fn len_header(tag: u32, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    key(&mut out, tag, LEN);
    varint(&mut out, len as u64);
    out
}

/// `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding: "", contentType: ""}`.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    len_field(&mut type_meta, 1, api_version.as_bytes());
    len_field(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 20);
    out.extend_from_slice(MAGIC);
    len_field(&mut out, 1, &type_meta);
    len_field(&mut out, 2, raw);
    len_field(&mut out, 3, b"");
    len_field(&mut out, 4, b"");
    out
}

/// The protobuf envelope of a JSON object (its own `kind` and `apiVersion`
/// choose the message), as served for a GET.
pub fn encode_object_json(json: &[u8]) -> Result<Bytes, EncodeError> {
    let value: Value = serde_json::from_slice(json).map_err(|e| invalid("", e.to_string()))?;
    let Value::Object(object) = value else { return Err(invalid("", "not an object")) };
    let text = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or("").to_string();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let message = proto_schema::message_of_kind(&api_version, &kind)
        .filter(|_| !kind.is_empty())
        .ok_or_else(|| EncodeError::NoSchema(format!("{api_version} {kind}")))?;
    let mut raw = Vec::with_capacity(json.len() / 2);
    fields_of(message, &object, &mut raw, 1, "")?;
    Ok(Bytes::from(envelope(&api_version, &kind, &raw)))
}

/// Whether `api_version`/`kind` has a protobuf schema (built-in kinds do,
/// custom resources do not).
pub fn has_schema(api_version: &str, kind: &str) -> bool {
    proto_schema::message_of_kind(api_version, kind).is_some()
}

/// The `raw` field of an envelope this file built: a slice of the same
/// allocation, not a copy.
pub fn raw_of(envelope: &Bytes) -> Option<Bytes> {
    let mut position = MAGIC.len();
    let bytes = envelope.as_ref();
    if !bytes.starts_with(MAGIC) {
        return None;
    }
    let read_varint = |position: &mut usize| -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *bytes.get(*position)?;
            *position += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    };
    while position < bytes.len() {
        let field = read_varint(&mut position)?;
        if field & 7 != u64::from(LEN) {
            return None;
        }
        let len = usize::try_from(read_varint(&mut position)?).ok()?;
        let end = position.checked_add(len).filter(|end| *end <= bytes.len())?;
        if field >> 3 == 2 {
            return Some(envelope.slice(position..end));
        }
        position = end;
    }
    None
}

/// The `ListMeta` message: resourceVersion = 2, continue = 3,
/// remainingItemCount = 4 (from the schema table, by JSON name).
fn list_meta(revision: u64, continue_token: Option<&str>, remaining: Option<usize>) -> Vec<u8> {
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), Value::String(revision.to_string()));
    if let Some(token) = continue_token {
        meta.insert("continue".into(), Value::String(token.to_string()));
    }
    if let Some(n) = remaining {
        meta.insert("remainingItemCount".into(), Value::from(n as u64));
    }
    let mut out = Vec::new();
    if let Some(message) =
        proto_schema::MESSAGES.iter().find(|m| m.name == "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
    {
        // The table's ListMeta has only strings and an int64: cannot fail.
        let _ = fields_of(message, &meta, &mut out, 1, "metadata");
    }
    out
}

/// A list page as body frames: the envelope's head, then per item the
/// `items` field's key and length followed by the item's message (a slice of
/// its cached envelope), with the lengths computed up front so nothing is
/// copied. `items` are cached object envelopes.
pub fn list_frames(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[Bytes],
) -> Result<Vec<Bytes>, EncodeError> {
    frames_of_list(list_kind, api_version, ListPage { revision, continue_token, remaining }, items, false)
}

/// The list metadata of a page.
#[derive(Clone, Copy, Debug)]
pub struct ListPage<'a> {
    pub revision: u64,
    pub continue_token: Option<&'a str>,
    pub remaining: Option<usize>,
}

/// A list as frames, `metadata` = 1 and `items` = 2 (every built-in list
/// and meta.k8s.io/v1 `PartialObjectMetadataList`), or, with `items_first`,
/// `items` = 1 and `metadata` = 2 (meta.k8s.io/v1beta1
/// `PartialObjectMetadataList`), fields in number order as Go writes them.
pub fn frames_of_list(
    list_kind: &str,
    api_version: &str,
    page: ListPage<'_>,
    items: &[Bytes],
    items_first: bool,
) -> Result<Vec<Bytes>, EncodeError> {
    let meta = list_meta(page.revision, page.continue_token, page.remaining);
    let (meta_tag, items_tag) = if items_first { (2, 1) } else { (1, 2) };
    let mut raws = Vec::with_capacity(items.len());
    for item in items {
        raws.push(raw_of(item).ok_or_else(|| invalid("items", "a cached envelope without raw"))?);
    }
    let mut raw_len = len_header(meta_tag, meta.len()).len() + meta.len();
    for raw in &raws {
        raw_len += len_header(items_tag, raw.len()).len() + raw.len();
    }
    let mut type_meta = Vec::new();
    len_field(&mut type_meta, 1, api_version.as_bytes());
    len_field(&mut type_meta, 2, list_kind.as_bytes());
    let mut head = Vec::with_capacity(64 + meta.len());
    head.extend_from_slice(MAGIC);
    len_field(&mut head, 1, &type_meta);
    head.extend_from_slice(&len_header(2, raw_len));
    let mut meta_field = Vec::with_capacity(meta.len() + 4);
    len_field(&mut meta_field, meta_tag, &meta);
    if !items_first {
        head.extend_from_slice(&meta_field);
    }
    let mut frames = Vec::with_capacity(raws.len() * 2 + 3);
    frames.push(Bytes::from(head));
    for raw in raws {
        frames.push(Bytes::from(len_header(items_tag, raw.len())));
        frames.push(raw);
    }
    let mut tail = Vec::with_capacity(meta_field.len() + 4);
    if items_first {
        tail.extend_from_slice(&meta_field);
    }
    len_field(&mut tail, 3, b"");
    len_field(&mut tail, 4, b"");
    frames.push(Bytes::from(tail));
    Ok(frames)
}

/// The message named `name` (its OpenAPI name, as in the schema table)
/// encoded from its JSON form, without an envelope: how metadata-only
/// representations encode an `ObjectMeta` from any object's JSON (custom
/// resources included).
pub fn encode_message_json(name: &str, object: &Map<String, Value>) -> Result<Vec<u8>, EncodeError> {
    let message =
        proto_schema::MESSAGES.iter().find(|m| m.name == name).ok_or_else(|| EncodeError::NoSchema(name.into()))?;
    let mut out = Vec::with_capacity(256);
    fields_of(message, object, &mut out, 1, "")?;
    Ok(out)
}

/// One watch event as frames: the 4-byte big-endian length, then the
/// `meta.v1.WatchEvent` message {type = 1, object = 2 (`RawExtension` {raw = 1})}
/// whose raw is `object_envelope`, shared, not copied.
pub fn watch_event_frames(event_type: &str, object_envelope: Bytes) -> [Bytes; 2] {
    let inner = len_header(1, object_envelope.len());
    let mut head = Vec::with_capacity(32);
    len_field(&mut head, 1, event_type.as_bytes());
    head.extend_from_slice(&len_header(2, inner.len() + object_envelope.len()));
    head.extend_from_slice(&inner);
    let total = head.len() + object_envelope.len();
    let mut frame = BytesMut::with_capacity(4 + head.len());
    frame.put_u32(total as u32);
    frame.put_slice(&head);
    [frame.freeze(), object_envelope]
}

fn message_by_id(id: u16, path: &str) -> Result<&'static Message, EncodeError> {
    proto_schema::message(id).ok_or_else(|| invalid(path, format!("schema has no message {id}")))
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Writes the fields of `message` found in `object`, in tag order.
fn fields_of(
    message: &'static Message,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
    path: &str,
) -> Result<(), EncodeError> {
    if depth > MAX_DEPTH {
        return Err(invalid(path, format!("nested deeper than {MAX_DEPTH} levels")));
    }
    for field in message.fields {
        if field.shape == Shape::Inline {
            let Type::Msg(id) = field.ty else { return Err(invalid(path, "an inline field that is not a message")) };
            let mut inner = Vec::new();
            fields_of(message_by_id(id, path)?, object, &mut inner, depth + 1, path)?;
            len_field(out, field.tag, &inner);
            continue;
        }
        let Some(value) = object.get(field.json).filter(|v| !v.is_null()) else { continue };
        let path = child(path, field.json);
        match field.shape {
            Shape::One | Shape::Inline => single(field, field.tag, value, out, depth, &path)?,
            Shape::Repeated => {
                let Value::Array(items) = value else { return Err(invalid(&path, "expected an array")) };
                for item in items.iter().filter(|v| !v.is_null()) {
                    single(field, field.tag, item, out, depth, &path)?;
                }
            }
            Shape::Map => {
                let Value::Object(entries) = value else { return Err(invalid(&path, "expected an object")) };
                let mut keys: Vec<&String> = entries.keys().collect();
                keys.sort_unstable();
                for k in keys {
                    let mut entry = Vec::new();
                    len_field(&mut entry, 1, k.as_bytes());
                    let v = &entries[k.as_str()];
                    if !v.is_null() {
                        single(field, 2, v, &mut entry, depth, &path)?;
                    }
                    len_field(out, field.tag, &entry);
                }
            }
        }
    }
    Ok(())
}

/// One value of `field`'s type, written under `tag`.
fn single(
    field: &Field,
    tag: u32,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
    path: &str,
) -> Result<(), EncodeError> {
    match field.ty {
        Type::Msg(id) => {
            let mut inner = Vec::new();
            message_value(message_by_id(id, path)?, value, &mut inner, depth + 1, path)?;
            len_field(out, tag, &inner);
        }
        Type::String => {
            let Value::String(s) = value else { return Err(invalid(path, "expected a string")) };
            len_field(out, tag, s.as_bytes());
        }
        Type::Bytes => {
            let Value::String(s) = value else { return Err(invalid(path, "expected base64 text")) };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| invalid(path, format!("not base64: {e}")))?;
            len_field(out, tag, &bytes);
        }
        Type::Bool => {
            let Value::Bool(b) = value else { return Err(invalid(path, "expected a boolean")) };
            key(out, tag, VARINT);
            varint(out, u64::from(*b));
        }
        Type::Int32 | Type::Int64 => {
            let n = value.as_i64().ok_or_else(|| invalid(path, "expected an integer"))?;
            let n = if field.ty == Type::Int32 {
                i64::from(i32::try_from(n).map_err(|_| invalid(path, "out of int32 range"))?)
            } else {
                n
            };
            key(out, tag, VARINT);
            varint(out, n as u64);
        }
        Type::Uint32 | Type::Uint64 => {
            let n = value.as_u64().ok_or_else(|| invalid(path, "expected a non-negative integer"))?;
            if field.ty == Type::Uint32 && n > u64::from(u32::MAX) {
                return Err(invalid(path, "out of uint32 range"));
            }
            key(out, tag, VARINT);
            varint(out, n);
        }
        Type::Double => {
            let n = value.as_f64().ok_or_else(|| invalid(path, "expected a number"))?;
            key(out, tag, FIXED64);
            out.extend_from_slice(&n.to_bits().to_le_bytes());
        }
        Type::Float => {
            let n = value.as_f64().ok_or_else(|| invalid(path, "expected a number"))?;
            key(out, tag, FIXED32);
            out.extend_from_slice(&(n as f32).to_bits().to_le_bytes());
        }
    }
    Ok(())
}

/// The first field of `message` of type `ty` and shape `shape` (the custom
/// forms' fields are found by type, as the decoder finds them).
fn field_of(message: &'static Message, ty: impl Fn(Type) -> bool, shape: Shape) -> Option<&'static Field> {
    message.fields.iter().find(|f| ty(f.ty) && f.shape == shape)
}

/// A message from its JSON form.
fn message_value(
    message: &'static Message,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
    path: &str,
) -> Result<(), EncodeError> {
    let int64 = field_of(message, |t| t == Type::Int64, Shape::One);
    let int32 = field_of(message, |t| t == Type::Int32, Shape::One);
    let string = field_of(message, |t| t == Type::String, Shape::One);
    let write_int = |out: &mut Vec<u8>, field: Option<&Field>, n: i64| {
        if let Some(f) = field {
            key(out, f.tag, VARINT);
            varint(out, n as u64);
        }
    };
    match message.form {
        Form::Object => {
            let Value::Object(object) = value else { return Err(invalid(path, "expected an object")) };
            fields_of(message, object, out, depth, path)?;
        }
        Form::Time | Form::MicroTime => {
            let Value::String(text) = value else { return Err(invalid(path, "expected an RFC 3339 time")) };
            let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .map_err(|e| invalid(path, format!("not an RFC 3339 time: {e}")))?;
            let nanos = if message.form == Form::MicroTime { t.microsecond() as i64 * 1000 } else { 0 };
            write_int(out, int64, t.unix_timestamp());
            write_int(out, int32, nanos);
        }
        Form::Duration => {
            let Value::String(text) = value else { return Err(invalid(path, "expected a duration")) };
            let nanos = parse_go_duration(text).ok_or_else(|| invalid(path, format!("not a duration: {text}")))?;
            write_int(out, int64, nanos);
        }
        Form::IntOrString => match value {
            Value::String(s) => {
                write_int(out, int64, 1);
                write_int(out, int32, 0);
                if let Some(f) = string {
                    len_field(out, f.tag, s.as_bytes());
                }
            }
            _ => {
                let n = value.as_i64().and_then(|n| i32::try_from(n).ok());
                let n = n.ok_or_else(|| invalid(path, "expected an int32 or a string"))?;
                write_int(out, int64, 0);
                write_int(out, int32, i64::from(n));
                if let Some(f) = string {
                    len_field(out, f.tag, b"");
                }
            }
        },
        Form::Quantity => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(invalid(path, "expected a quantity")),
            };
            if let Some(f) = string {
                len_field(out, f.tag, text.as_bytes());
            }
        }
        Form::RawJson => {
            if let Some(f) = field_of(message, |t| t == Type::Bytes, Shape::One) {
                let raw = serde_json::to_vec(value).map_err(|e| invalid(path, e.to_string()))?;
                len_field(out, f.tag, &raw);
            }
        }
        Form::SchemaOrArray | Form::SchemaOrBool | Form::SchemaOrStringArray => {
            let schema = field_of(message, |t| matches!(t, Type::Msg(_)), Shape::One);
            match (value, message.form) {
                (Value::Object(_), _) => {
                    let f = schema.ok_or_else(|| invalid(path, "no schema field"))?;
                    single(f, f.tag, value, out, depth, path)?;
                }
                (Value::Bool(b), Form::SchemaOrBool) => {
                    if let Some(f) = field_of(message, |t| t == Type::Bool, Shape::One) {
                        key(out, f.tag, VARINT);
                        varint(out, u64::from(*b));
                    }
                }
                (Value::Array(items), Form::SchemaOrArray) => {
                    let f = field_of(message, |t| matches!(t, Type::Msg(_)), Shape::Repeated)
                        .ok_or_else(|| invalid(path, "no array field"))?;
                    for item in items {
                        single(f, f.tag, item, out, depth, path)?;
                    }
                }
                (Value::Array(items), Form::SchemaOrStringArray) => {
                    let f = field_of(message, |t| t == Type::String, Shape::Repeated)
                        .ok_or_else(|| invalid(path, "no array field"))?;
                    for item in items {
                        single(f, f.tag, item, out, depth, path)?;
                    }
                }
                _ => return Err(invalid(path, "a value this union cannot hold")),
            }
        }
        Form::StringList => {
            let f = field_of(message, |t| t == Type::String, Shape::Repeated)
                .ok_or_else(|| invalid(path, "no string list field"))?;
            match value {
                Value::Null => {}
                Value::Array(items) => {
                    for item in items {
                        single(f, f.tag, item, out, depth, path)?;
                    }
                }
                _ => return Err(invalid(path, "expected an array of strings")),
            }
        }
    }
    Ok(())
}

/// Go's `time.ParseDuration` for the strings `Duration.String()` writes and
/// the usual inputs: `1h2m3s`, `1.5s`, `300ms`, `10us`, `1µs`, `-1m30s`, `0`.
pub fn parse_go_duration(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        if number.is_empty() || number == "." {
            return None;
        }
        let unit_end = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let whole: i128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
        let mut value = whole.checked_mul(scale)?;
        let mut unit_part = scale;
        for digit in fraction.chars().take(18) {
            unit_part /= 10;
            value += i128::from(digit.to_digit(10)?) * unit_part;
        }
        total = total.checked_add(value)?;
        rest = after;
    }
    let total = if negative { -total } else { total };
    i64::try_from(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::protobuf::decode_object;
    use serde_json::json;

    fn round_trip(object: &Value) -> Value {
        let envelope = encode_object_json(&serde_json::to_vec(object).unwrap()).unwrap();
        let kind = object["kind"].as_str().unwrap();
        Value::Object(decode_object(&envelope, kind).unwrap())
    }

    /// A CSR requester's `extra` is `map[string]ExtraValue`, a Go `[]string`
    /// that Protobuf carries as a message of one repeated string.
    #[test]
    fn string_lists_carried_as_messages_round_trip() {
        let csr = json!({"kind": "CertificateSigningRequest", "apiVersion": "certificates.k8s.io/v1",
            "metadata": {"name": "c"},
            "spec": {"request": "eA==", "signerName": "s", "username": "u",
                     "extra": {"scopes": ["a", "b"], "none": []}},
            "status": {}});
        let back = round_trip(&csr);
        assert_eq!(back["spec"]["extra"], csr["spec"]["extra"], "{back}");
    }

    #[test]
    fn durations_parse_as_go_parses_them() {
        for (text, nanos) in [
            ("0s", 0),
            ("0", 0),
            ("1ns", 1),
            ("1.5µs", 1_500),
            ("10us", 10_000),
            ("300ms", 300_000_000),
            ("1.5s", 1_500_000_000),
            ("1m0s", 60_000_000_000),
            ("1h2m3s", 3_723_000_000_000),
            ("-1m30s", -90_000_000_000),
        ] {
            assert_eq!(parse_go_duration(text), Some(nanos), "{text}");
        }
        for bad in ["", "1", "s", "1x", "1.2.3s", "-"] {
            assert_eq!(parse_go_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_deployment_round_trips_through_the_decoder() {
        let deployment = json!({
            "kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "web", "namespace": "demo", "uid": "1f0c", "resourceVersion": "12",
                "creationTimestamp": "2026-01-02T03:04:05Z", "labels": {"b": "2", "a": "1"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                    "containers": [{"name": "nginx", "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
                    "activeDeadlineSeconds": -30,
                    "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}]}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}}},
            "status": {}
        });
        assert_eq!(round_trip(&deployment), deployment);
    }

    #[test]
    fn custom_resources_have_no_schema() {
        let widget = br#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w"}}"#;
        assert!(matches!(encode_object_json(widget), Err(EncodeError::NoSchema(_))));
        let bad = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":5}}"#;
        assert!(matches!(encode_object_json(bad), Err(EncodeError::Invalid { .. })));
    }

    #[test]
    fn list_frames_decode_as_one_list() {
        let a =
            encode_object_json(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}"#)
                .unwrap();
        let b = encode_object_json(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b"}}"#).unwrap();
        let frames = list_frames("ConfigMapList", "v1", 9, Some("tok"), Some(3), &[a.clone(), b]).unwrap();
        // Items are slices of the cached envelopes.
        assert_eq!(frames[2].as_ptr(), raw_of(&a).unwrap().as_ptr());
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        let list = decode_object(&joined, "ConfigMapList").unwrap();
        assert_eq!(
            Value::Object(list),
            json!({"kind": "ConfigMapList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "9", "continue": "tok", "remainingItemCount": 3},
                "items": [{"metadata": {"name": "a"}, "data": {"k": "v"}}, {"metadata": {"name": "b"}}]})
        );
    }

    #[test]
    fn watch_frames_carry_the_object_envelope() {
        let object = encode_object_json(br#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"}}"#).unwrap();
        let frames = watch_event_frames("ADDED", object.clone());
        assert_eq!(frames[1].as_ptr(), object.as_ptr());
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        let len = u32::from_be_bytes([joined[0], joined[1], joined[2], joined[3]]) as usize;
        assert_eq!(len, joined.len() - 4);
        let event = &joined[4..];
        // type = 1 "ADDED"; object = 2 { raw = 1 <envelope> }
        assert_eq!(&event[..7], b"\x0a\x05ADDED");
        assert!(event.ends_with(&object));
    }
}
