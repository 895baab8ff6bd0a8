//! CBOR (`application/cbor`, `application/cbor-seq` for watch) as
//! kube-apiserver's CBOR serializer writes and reads it.
//!
//! Writing (from the cached JSON): the self-described CBOR tag 55799 first;
//! every string, map keys included, as a byte string (kube's
//! `StringToByteString` / `FieldNameToByteString`: Go strings are not known
//! to be valid UTF-8, so they are sent as bytes); map keys in bytewise
//! lexical order of their encodings (RFC 8949 §4.2.1); integers in their
//! shortest form; floats in the shortest width that keeps their value
//! (half, single, double); definite lengths only.
//!
//! Reading (request bodies): text and byte strings are both accepted as
//! strings; a text string that is not UTF-8 is a 400, as is a byte string
//! that is not (JSON cannot hold it), a duplicate map key, a non-string map
//! key, NaN or infinity, trailing bytes, and nesting deeper than
//! [`MAX_DEPTH`]. The self-described tag may prefix any item; other tags are
//! refused.
//!
//! Invariant: never panics on any input.

use super::status::ApiError;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Number, Value};

pub const MEDIA_TYPE: &str = "application/cbor";
pub const WATCH_MEDIA_TYPE: &str = "application/cbor-seq";

/// The self-described CBOR tag 55799, encoded.
pub const SELF_DESCRIBED: &[u8] = &[0xd9, 0xd9, 0xf7];

/// The deepest nesting of arrays and maps a body may have (JSON's bound).
pub const MAX_DEPTH: usize = 128;

fn header(out: &mut Vec<u8>, major: u8, n: u64) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend_from_slice(&[m | 24, n as u8]),
        0x100..=0xffff => {
            out.push(m | 25);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(m | 26);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        _ => {
            out.push(m | 27);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

fn byte_string(out: &mut Vec<u8>, bytes: &[u8]) {
    header(out, 2, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// An f64 in the shortest IEEE width that holds it exactly.
fn float(out: &mut Vec<u8>, value: f64) {
    let single = value as f32;
    if f64::from(single) != value {
        out.push(0xfb);
        out.extend_from_slice(&value.to_bits().to_be_bytes());
        return;
    }
    if let Some(half) = to_half(single) {
        out.push(0xf9);
        out.extend_from_slice(&half.to_be_bytes());
        return;
    }
    out.push(0xfa);
    out.extend_from_slice(&single.to_bits().to_be_bytes());
}

/// The binary16 bits of `value` when it is exactly representable (normal
/// half-precision numbers and zero; subnormal halves are written wider).
fn to_half(value: f32) -> Option<u16> {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0 && mantissa == 0 {
        return Some(sign);
    }
    let half_exponent = exponent - 127 + 15;
    if !(1..=30).contains(&half_exponent) || mantissa & 0x1fff != 0 {
        return None;
    }
    Some(sign | ((half_exponent as u16) << 10) | (mantissa >> 13) as u16)
}

/// The value of binary16 bits (RFC 8949 Appendix D).
fn from_half(half: u16) -> f64 {
    let exponent = (half >> 10) & 0x1f;
    let mantissa = f64::from(half & 0x3ff);
    let value = match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (mantissa + 1024.0) * 2f64.powi(i32::from(e) - 25),
    };
    if half & 0x8000 != 0 {
        -value
    } else {
        value
    }
}

/// Appends one JSON value as CBOR (without the self-described tag).
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                header(out, 0, u);
            } else if let Some(i) = n.as_i64() {
                header(out, 1, (-1 - i) as u64);
            } else {
                float(out, n.as_f64().unwrap_or(0.0));
            }
        }
        Value::String(s) => byte_string(out, s.as_bytes()),
        Value::Array(items) => {
            header(out, 4, items.len() as u64);
            for item in items {
                write_value(out, item);
            }
        }
        Value::Object(map) => {
            let mut entries: Vec<(Vec<u8>, &Value)> = map
                .iter()
                .map(|(k, v)| {
                    let mut key = Vec::with_capacity(k.len() + 2);
                    byte_string(&mut key, k.as_bytes());
                    (key, v)
                })
                .collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            header(out, 5, entries.len() as u64);
            for (key, v) in entries {
                out.extend_from_slice(&key);
                write_value(out, v);
            }
        }
    }
}

/// The self-described CBOR of a JSON document (a cached object's JSON).
pub fn encode_json(json: &[u8]) -> Result<Bytes, String> {
    let value: Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    Ok(Bytes::from(encode_value(&value)))
}

pub fn encode_value(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(SELF_DESCRIBED);
    write_value(&mut out, value);
    out
}

/// A list as frames: the head (tag, a map of kind, apiVersion, metadata and
/// the items array's header), then each item's cached CBOR without its tag.
/// Keys are written in the deterministic order (`items`, `kind`,
/// `metadata`, `apiVersion` sort by length, then bytes).
pub fn list_frames(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[Bytes],
) -> Vec<Bytes> {
    let mut metadata = Map::new();
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), Value::String(token.into()));
    }
    if let Some(n) = remaining {
        metadata.insert("remainingItemCount".into(), Value::from(n as u64));
    }
    metadata.insert("resourceVersion".into(), Value::String(revision.to_string()));
    let mut head = Vec::with_capacity(96);
    head.extend_from_slice(SELF_DESCRIBED);
    header(&mut head, 5, 4);
    byte_string(&mut head, b"kind");
    byte_string(&mut head, list_kind.as_bytes());
    byte_string(&mut head, b"items");
    header(&mut head, 4, items.len() as u64);
    let mut frames = Vec::with_capacity(items.len() + 2);
    frames.push(Bytes::from(head));
    for item in items {
        frames.push(item.slice(SELF_DESCRIBED.len().min(item.len())..));
    }
    let mut tail = Vec::with_capacity(64);
    byte_string(&mut tail, b"metadata");
    write_value(&mut tail, &Value::Object(metadata));
    byte_string(&mut tail, b"apiVersion");
    byte_string(&mut tail, api_version.as_bytes());
    frames.push(Bytes::from(tail));
    frames
}

/// A cached object's CBOR as a typed list's item (still tagged, as the
/// cached items `list_frames` takes): without the top-level `kind` and `apiVersion` entries (a typed list's
/// items carry no TypeMeta, as kube's); the other entries' bytes are copied
/// as they are, in their order. None when it is not a map of definite length.
pub fn without_type_meta(object: &Bytes) -> Option<Bytes> {
    let body = object.strip_prefix(SELF_DESCRIBED).unwrap_or(object);
    let mut d = minicbor::Decoder::new(body);
    let entries = d.map().ok()??;
    let mut kept: Vec<std::ops::Range<usize>> = Vec::with_capacity(entries as usize);
    for _ in 0..entries {
        let start = d.position();
        let key: Option<&[u8]> = match d.datatype().ok()? {
            minicbor::data::Type::Bytes => Some(d.bytes().ok()?),
            minicbor::data::Type::String => Some(d.str().ok()?.as_bytes()),
            _ => {
                d.skip().ok()?;
                None
            }
        };
        d.skip().ok()?;
        if !matches!(key, Some(b"kind") | Some(b"apiVersion")) {
            kept.push(start..d.position());
        }
    }
    let mut out = Vec::with_capacity(object.len());
    out.extend_from_slice(SELF_DESCRIBED);
    header(&mut out, 5, kept.len() as u64);
    for range in kept {
        out.extend_from_slice(&body[range]);
    }
    Some(Bytes::from(out))
}

/// One watch event, one data item of the CBOR sequence: the tag and
/// `{"type": .., "object": ..}` (keys in deterministic order), the object
/// being the cached CBOR without its tag.
pub fn watch_event_frames(event_type: &str, object: &Bytes) -> [Bytes; 2] {
    let mut head = BytesMut::with_capacity(32);
    let mut buf = Vec::with_capacity(32);
    buf.extend_from_slice(SELF_DESCRIBED);
    header(&mut buf, 5, 2);
    byte_string(&mut buf, b"type");
    byte_string(&mut buf, event_type.as_bytes());
    byte_string(&mut buf, b"object");
    head.put_slice(&buf);
    [head.freeze(), object.slice(SELF_DESCRIBED.len().min(object.len())..)]
}

fn bad(what: impl std::fmt::Display) -> ApiError {
    ApiError::BadRequest(format!("invalid CBOR body: {what}"))
}

/// Decodes a CBOR request body into a JSON object.
pub fn decode_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let mut decoder = minicbor::Decoder::new(body);
    let value = read_value(&mut decoder, 0)?;
    if decoder.position() != body.len() {
        return Err(bad("trailing bytes after the data item"));
    }
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::BadRequest("couldn't get version/kind; the CBOR body is not a map".into())),
    }
}

/// Decodes one data item of a CBOR sequence (a watch stream), returning it
/// and the bytes after it.
pub fn decode_item(bytes: &[u8]) -> Result<(Value, &[u8]), ApiError> {
    let mut decoder = minicbor::Decoder::new(bytes);
    let value = read_value(&mut decoder, 0)?;
    Ok((value, &bytes[decoder.position()..]))
}

fn text(bytes: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| bad("a byte string that is not UTF-8"))
}

fn read_string(d: &mut minicbor::Decoder<'_>) -> Result<String, ApiError> {
    use minicbor::data::Type;
    match d.datatype().map_err(bad)? {
        Type::String => Ok(d.str().map_err(bad)?.to_string()),
        Type::StringIndef => {
            let mut s = String::new();
            for chunk in d.str_iter().map_err(bad)? {
                s.push_str(chunk.map_err(bad)?);
            }
            Ok(s)
        }
        Type::Bytes => text(d.bytes().map_err(bad)?),
        Type::BytesIndef => {
            let mut b = Vec::new();
            for chunk in d.bytes_iter().map_err(bad)? {
                b.extend_from_slice(chunk.map_err(bad)?);
            }
            text(&b)
        }
        other => Err(bad(format!("map keys must be strings, not {other}"))),
    }
}

fn finite(value: f64) -> Result<Value, ApiError> {
    Number::from_f64(value).map(Value::Number).ok_or_else(|| bad("NaN and infinity cannot be decoded"))
}

fn read_value(d: &mut minicbor::Decoder<'_>, depth: usize) -> Result<Value, ApiError> {
    use minicbor::data::Type;
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH} levels")));
    }
    Ok(match d.datatype().map_err(bad)? {
        Type::Bool => Value::Bool(d.bool().map_err(bad)?),
        Type::Null | Type::Undefined => {
            d.skip().map_err(bad)?;
            Value::Null
        }
        Type::U8 | Type::U16 | Type::U32 | Type::U64 => Value::from(d.u64().map_err(bad)?),
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => Value::from(d.i64().map_err(bad)?),
        Type::Int => return Err(bad("an integer outside the int64 range")),
        Type::F16 => {
            let at = d.position();
            let bits = d.input().get(at + 1..at + 3).ok_or_else(|| bad("truncated half-precision float"))?;
            d.set_position(at + 3);
            finite(from_half(u16::from_be_bytes([bits[0], bits[1]])))?
        }
        Type::F32 => finite(f64::from(d.f32().map_err(bad)?))?,
        Type::F64 => finite(d.f64().map_err(bad)?)?,
        Type::String | Type::StringIndef | Type::Bytes | Type::BytesIndef => Value::String(read_string(d)?),
        Type::Array | Type::ArrayIndef => {
            let len = d.array().map_err(bad)?;
            let mut items = Vec::new();
            match len {
                Some(n) => {
                    for _ in 0..n {
                        items.push(read_value(d, depth + 1)?);
                    }
                }
                None => loop {
                    if d.datatype().map_err(bad)? == Type::Break {
                        d.set_position(d.position() + 1);
                        break;
                    }
                    items.push(read_value(d, depth + 1)?);
                },
            }
            Value::Array(items)
        }
        Type::Map | Type::MapIndef => {
            let len = d.map().map_err(bad)?;
            let mut map = Map::new();
            let mut entry = |d: &mut minicbor::Decoder<'_>| -> Result<(), ApiError> {
                let key = read_string(d)?;
                let value = read_value(d, depth + 1)?;
                if map.insert(key.clone(), value).is_some() {
                    return Err(bad(format!("duplicate map key {key:?}")));
                }
                Ok(())
            };
            match len {
                Some(n) => {
                    for _ in 0..n {
                        entry(d)?;
                    }
                }
                None => loop {
                    if d.datatype().map_err(bad)? == Type::Break {
                        d.set_position(d.position() + 1);
                        break;
                    }
                    entry(d)?;
                },
            }
            Value::Object(map)
        }
        Type::Tag => {
            let tag = d.tag().map_err(bad)?;
            if tag.as_u64() != 55799 {
                return Err(bad(format!("unsupported tag {}", tag.as_u64())));
            }
            read_value(d, depth + 1)?
        }
        other => return Err(bad(format!("unsupported item {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_byte_strings_keys_sorted_and_tagged() {
        let bytes = encode_value(&json!({"kind": "Pod", "a": 1}));
        // tag, map(2), "a"(bytes) 1, "kind"(bytes) "Pod"(bytes)
        assert_eq!(bytes, b"\xd9\xd9\xf7\xa2\x41a\x01\x44kind\x43Pod");
        assert_eq!(encode_value(&json!(-1)), b"\xd9\xd9\xf7\x20");
        assert_eq!(encode_value(&json!(1.5)), b"\xd9\xd9\xf7\xf9\x3e\x00", "half precision when exact");
        assert_eq!(encode_value(&json!(0.1)), b"\xd9\xd9\xf7\xfb\x3f\xb9\x99\x99\x99\x99\x99\x9a");
        assert_eq!(encode_value(&json!(100000.5)), b"\xd9\xd9\xf7\xfa\x47\xc3\x50\x40");
    }

    #[test]
    fn json_round_trips() {
        let value = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "é", "labels": {"x": "yes"}},
            "data": {"n": "0755"}, "list": [1, -2, 3.25, true, null, "s", {}], "big": 18446744073709551615u64});
        let bytes = encode_value(&value);
        assert_eq!(Value::Object(decode_object(&bytes).unwrap()), value);
    }

    #[test]
    fn text_strings_and_indefinite_lengths_are_accepted() {
        // {_ "a"(text): [_ 1], "b"(bytes): "c"(text)}
        let body = b"\xbf\x61a\x9f\x01\xff\x41b\x61c\xff";
        assert_eq!(Value::Object(decode_object(body).unwrap()), json!({"a": [1], "b": "c"}));
    }

    #[test]
    fn bad_bodies_are_400() {
        let cases: [&[u8]; 7] = [
            b"\xa1\x61a\x62\xff\xfe",  // invalid UTF-8 text string
            b"\xa2\x41a\x01\x61a\x02", // duplicate key (bytes and text)
            b"\xa1\x01\x02",           // integer key
            b"\xa1\x41a",              // truncated
            b"\xa0\x00",               // trailing bytes
            b"\xa1\x41a\xf9\x7e\x00",  // NaN
            b"\xc1\xa0",               // a tag other than 55799
        ];
        for case in cases {
            assert_eq!(decode_object(case).unwrap_err().code(), 400, "{case:?}");
        }
        let mut deep = vec![0x81u8; 1000];
        deep.push(0xa0);
        assert_eq!(decode_item(&deep).unwrap_err().code(), 400);
    }

    #[test]
    fn typed_list_items_lose_their_kind_and_api_version() {
        let object = Bytes::from(encode_json(
            br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"kind":"x"}},"data":{"apiVersion":"v"}}"#,
        )
        .unwrap());
        let item = without_type_meta(&object).unwrap();
        assert!(item.starts_with(SELF_DESCRIBED));
        let (value, rest) = decode_item(&item).unwrap();
        // In a list page, as every cached item is.
        let frames = list_frames("ConfigMapList", "v1", 5, None, None, std::slice::from_ref(&item));
        let list = decode_object(&frames.concat()).unwrap();
        assert_eq!(list["items"][0], value);
        assert!(rest.is_empty());
        assert_eq!(value, json!({"metadata": {"name": "a", "labels": {"kind": "x"}}, "data": {"apiVersion": "v"}}));
        assert_eq!(without_type_meta(&Bytes::from_static(b"\x01")), None);
    }

    #[test]
    fn lists_and_watch_events_reuse_item_bytes() {
        let a = Bytes::from(encode_value(&json!({"metadata": {"name": "a"}})));
        let frames = list_frames("PodList", "v1", 5, Some("t"), Some(2), std::slice::from_ref(&a));
        assert_eq!(frames[1].as_ptr(), a[3..].as_ptr());
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.to_vec()).collect();
        assert_eq!(
            Value::Object(decode_object(&joined).unwrap()),
            json!({"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": {"name": "a"}}],
                "metadata": {"resourceVersion": "5", "continue": "t", "remainingItemCount": 2}})
        );
        let event: Vec<u8> = watch_event_frames("ADDED", &a).iter().flat_map(|f| f.to_vec()).collect();
        let (value, rest) = decode_item(&event).unwrap();
        assert!(rest.is_empty());
        assert_eq!(value, json!({"type": "ADDED", "object": {"metadata": {"name": "a"}}}));
    }
}
