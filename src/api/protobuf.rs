//! Request bodies in Kubernetes' protobuf encoding: the `k8s\0` magic, a
//! `runtime.Unknown` envelope (typeMeta, raw, contentEncoding, contentType),
//! and the object inside `raw`, decoded into the JSON object kube-apiserver
//! would have decoded.
//!
//! The object is decoded by walking the schema table of `types::proto_schema`
//! (generated from the k8s-pb crate): every field number maps to its JSON
//! name and type; Kubernetes' custom JSON forms (`Time`, `MicroTime`,
//! `Duration`, `IntOrString`, `Quantity`, embedded JSON, the apiextensions
//! `JSONSchemaPropsOr*` unions) and Go's inline embedding are applied; proto
//! maps become objects and `bytes` base64 strings. Every served built-in kind
//! decodes; a kind without a table entry (a custom resource) answers 415, as
//! kube-apiserver does for custom resources.
//!
//! What reaches JSON: go-to-protobuf writes every non-pointer field, so an
//! empty singular string stands for an absent one and is dropped (as Go's
//! `omitempty` drops it); a zero `Time` is dropped (Go writes `null`); a zero
//! number or `false` is dropped when the Go field is a non-pointer with
//! `omitempty` (the schema table's Go facts: `stdin`, `nodePort`,
//! `generation`), as the same object written as JSON would be stored; a
//! pointer to zero (`replicas: 0`) is kept, and so is every value of a field
//! whose Go facts the table lacks. Unknown field numbers are skipped.
//!
//! Invariant: never panics on any input; a malformed body (truncation, wrong
//! wire type, bad UTF-8, nesting deeper than [`MAX_DEPTH`], embedded bytes that
//! are not JSON) is a 400 BadRequest.

use super::status::ApiError;
use crate::types::proto_schema::{self, Field as SchemaField, Form, Message, Shape, Type};
use serde_json::{json, Map, Number, Value};

pub const MAGIC: &[u8] = b"k8s\x00";

/// The deepest nesting of messages a body may have. Each level costs one
/// stack frame of the recursive decoder (a few hundred bytes); the deepest
/// built-in types (a Pod template inside a CronJob) nest about 12 levels and a
/// CRD's validation schema one level per schema level, so 64 leaves room for
/// deep CRD schemas while bounding the stack against hostile input.
pub const MAX_DEPTH: usize = 64;

/// A protobuf wire-format reader over one message's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

#[derive(Debug, Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed64(u64),
    Fixed32(u32),
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

    fn take(&mut self, n: usize) -> Result<&'a [u8], ApiError> {
        let end = self.position.checked_add(n).ok_or_else(|| malformed("length overflow"))?;
        let bytes = self.bytes.get(self.position..end).ok_or_else(|| malformed("truncated field"))?;
        self.position = end;
        Ok(bytes)
    }

    fn next(&mut self) -> Result<Option<(u32, Wire<'a>)>, ApiError> {
        if self.position >= self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| malformed("field number too large"))?;
        let field = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Wire::Fixed64(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("length too large"))?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                Wire::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            _ => return Err(malformed("unsupported wire type")),
        };
        Ok(Some((number, field)))
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
            (1, Wire::Bytes(type_meta)) => {
                let mut r = Reader::new(type_meta);
                while let Some((n, f)) = r.next()? {
                    match (n, f) {
                        (1, Wire::Bytes(b)) => envelope.api_version = text(b)?,
                        (2, Wire::Bytes(b)) => envelope.kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(raw)) => envelope.raw = raw,
            (3, Wire::Bytes(encoding)) if !encoding.is_empty() => {
                // An encoded raw is a media type the server does not take.
                return Err(ApiError::UnsupportedMediaType(super::negotiate::BUILTIN_MEDIA_TYPES.to_string()));
            }
            _ => {}
        }
    }
    Ok(envelope)
}

/// Decodes a protobuf object body of `expected_kind` (the endpoint's kind;
/// the envelope's group/version/kind wins when present) into JSON.
pub fn decode_object(body: &[u8], expected_kind: &str) -> Result<Map<String, Value>, ApiError> {
    let envelope = decode_envelope(body)?;
    let kind = if envelope.kind.is_empty() { expected_kind } else { envelope.kind.as_str() };
    let message = proto_schema::message_of_kind(&envelope.api_version, kind).ok_or_else(|| {
        // A custom resource: kube-apiserver lists what it accepts instead.
        ApiError::UnsupportedMediaType(super::negotiate::CUSTOM_MEDIA_TYPES.to_string())
    })?;
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    if !envelope.api_version.is_empty() {
        object.insert("apiVersion".into(), json!(envelope.api_version));
    }
    fields_into(message, envelope.raw, 1, &mut object)?;
    Ok(object)
}

fn message_by_id(id: u16) -> Result<&'static Message, ApiError> {
    proto_schema::message(id).ok_or_else(|| ApiError::Internal(format!("protobuf schema has no message {id}")))
}

/// Decodes one message in its JSON form.
fn decode_message(message: &'static Message, bytes: &[u8], depth: usize) -> Result<Option<Value>, ApiError> {
    if depth > MAX_DEPTH {
        return Err(malformed(&format!("objects nested deeper than {MAX_DEPTH} levels")));
    }
    in_form(message.form, message, bytes, depth)
}

/// Decodes the fields of `message` from `bytes` into `object`.
fn fields_into(
    message: &'static Message,
    bytes: &[u8],
    depth: usize,
    object: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    if depth > MAX_DEPTH {
        return Err(malformed(&format!("objects nested deeper than {MAX_DEPTH} levels")));
    }
    let mut reader = Reader::new(bytes);
    while let Some((tag, wire)) = reader.next()? {
        let Some(field) = message.field(tag) else { continue };
        match field.shape {
            Shape::One => match single(field, wire, depth)? {
                Some(value) if !omitted_zero(field, &value) => {
                    object.insert(field.json.to_string(), value);
                }
                _ => {
                    object.shift_remove(field.json);
                }
            },
            Shape::Inline => {
                let (Type::Msg(id), Wire::Bytes(b)) = (field.ty, wire) else {
                    return Err(wrong_wire(message, field));
                };
                fields_into(message_by_id(id)?, b, depth + 1, object)?;
            }
            Shape::Repeated => {
                let values = repeated(field, wire, depth)?;
                let entry = object.entry(field.json.to_string()).or_insert_with(|| Value::Array(Vec::new()));
                match entry {
                    Value::Array(array) => array.extend(values),
                    other => *other = Value::Array(values),
                }
            }
            Shape::Map => {
                let Wire::Bytes(b) = wire else { return Err(wrong_wire(message, field)) };
                let (key, value) = map_entry(field, b, depth)?;
                let entry = object.entry(field.json.to_string()).or_insert_with(|| Value::Object(Map::new()));
                match entry {
                    Value::Object(map) => {
                        map.insert(key, value);
                    }
                    other => *other = json!({ key: value }),
                }
            }
        }
    }
    Ok(())
}

/// Whether JSON leaves out this decoded value: the zero of a non-pointer
/// `omitempty` Go field (`stdin: false`, `nodePort: 0`, `generation: 0`),
/// which go-to-protobuf writes anyway and Go's JSON encoder omits. A pointer
/// field was set by its writer (`replicas: 0`) and is kept; so is a field
/// whose Go facts the table lacks.
fn omitted_zero(field: &SchemaField, value: &Value) -> bool {
    if !field.go_known() || field.go_pointer() || !field.go_omitempty() {
        return false;
    }
    match value {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

fn wrong_wire(message: &Message, field: &SchemaField) -> ApiError {
    malformed(&format!("wrong wire type for {}.{}", message.name, field.json))
}

fn wrong_type(field: &SchemaField) -> ApiError {
    malformed(&format!("wrong wire type for field {}", field.json))
}

/// A singular field's JSON value, or `None` when JSON leaves it out.
fn single(field: &SchemaField, wire: Wire<'_>, depth: usize) -> Result<Option<Value>, ApiError> {
    match (field.ty, wire) {
        (Type::String | Type::Bytes, Wire::Bytes([])) => Ok(None),
        (Type::Msg(id), Wire::Bytes(b)) => decode_message(message_by_id(id)?, b, depth + 1),
        _ => scalar(field, wire).map(Some),
    }
}

/// A scalar value (never a message) in JSON.
fn scalar(field: &SchemaField, wire: Wire<'_>) -> Result<Value, ApiError> {
    Ok(match (field.ty, wire) {
        (Type::String, Wire::Bytes(b)) => Value::String(text(b)?),
        (Type::Bytes, Wire::Bytes(b)) => Value::String(base64(b)),
        (Type::Bool, Wire::Varint(v)) => Value::Bool(v != 0),
        (Type::Int32, Wire::Varint(v)) => json!(v as i32),
        (Type::Int64, Wire::Varint(v)) => json!(v as i64),
        (Type::Uint32, Wire::Varint(v)) => json!(v as u32),
        (Type::Uint64, Wire::Varint(v)) => json!(v),
        (Type::Double, Wire::Fixed64(v)) => number(f64::from_bits(v))?,
        (Type::Float, Wire::Fixed32(v)) => number(f64::from(f32::from_bits(v)))?,
        _ => return Err(wrong_type(field)),
    })
}

fn number(value: f64) -> Result<Value, ApiError> {
    Number::from_f64(value).map(Value::Number).ok_or_else(|| malformed("a number that JSON cannot hold"))
}

/// The values of one occurrence of a repeated field: one element, or many
/// when a numeric field is packed.
fn repeated(field: &SchemaField, wire: Wire<'_>, depth: usize) -> Result<Vec<Value>, ApiError> {
    match (field.ty, wire) {
        (Type::Msg(id), Wire::Bytes(b)) => {
            let value = decode_message(message_by_id(id)?, b, depth + 1)?;
            Ok(vec![value.unwrap_or(Value::Null)])
        }
        (Type::String | Type::Bytes, _) => Ok(vec![scalar(field, wire)?]),
        (Type::Double, Wire::Bytes(b)) => {
            let mut r = Reader::new(b);
            let mut values = Vec::new();
            while r.position < b.len() {
                let chunk = r.take(8)?;
                let mut eight = [0u8; 8];
                eight.copy_from_slice(chunk);
                values.push(scalar(field, Wire::Fixed64(u64::from_le_bytes(eight)))?);
            }
            Ok(values)
        }
        (Type::Float, Wire::Bytes(b)) => {
            let mut r = Reader::new(b);
            let mut values = Vec::new();
            while r.position < b.len() {
                let chunk = r.take(4)?;
                let mut four = [0u8; 4];
                four.copy_from_slice(chunk);
                values.push(scalar(field, Wire::Fixed32(u32::from_le_bytes(four)))?);
            }
            Ok(values)
        }
        (_, Wire::Bytes(b)) => {
            let mut r = Reader::new(b);
            let mut values = Vec::new();
            while r.position < b.len() {
                values.push(scalar(field, Wire::Varint(r.varint()?))?);
            }
            Ok(values)
        }
        _ => Ok(vec![scalar(field, wire)?]),
    }
}

/// One proto map entry (key = 1, value = 2): its string key and JSON value.
fn map_entry(field: &SchemaField, bytes: &[u8], depth: usize) -> Result<(String, Value), ApiError> {
    let mut key = String::new();
    let mut value = None;
    let mut r = Reader::new(bytes);
    while let Some((n, wire)) = r.next()? {
        match (n, wire) {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (1, _) => return Err(wrong_type(field)),
            (2, _) => {
                value = match (field.ty, wire) {
                    (Type::Msg(id), Wire::Bytes(b)) => decode_message(message_by_id(id)?, b, depth + 1)?,
                    _ => Some(scalar(field, wire)?),
                }
            }
            _ => {}
        }
    }
    let value = match (value, field.ty) {
        (Some(v), _) => v,
        (None, Type::String | Type::Bytes) => Value::String(String::new()),
        (None, Type::Msg(id)) => decode_message(message_by_id(id)?, &[], depth + 1)?.unwrap_or(Value::Null),
        (None, Type::Bool) => Value::Bool(false),
        (None, _) => json!(0),
    };
    Ok((key, value))
}

/// The wire values of a message's fields, each with its schema field.
fn parts<'a>(message: &'static Message, bytes: &'a [u8]) -> Result<Vec<(&'static SchemaField, Wire<'a>)>, ApiError> {
    let mut out = Vec::new();
    let mut r = Reader::new(bytes);
    while let Some((tag, wire)) = r.next()? {
        if let Some(field) = message.field(tag) {
            out.push((field, wire));
        }
    }
    Ok(out)
}

fn int_of(parts: &[(&SchemaField, Wire<'_>)], ty: Type) -> Result<i64, ApiError> {
    let mut value = 0;
    for (field, wire) in parts {
        if field.ty == ty && field.shape == Shape::One {
            value = match (ty, *wire) {
                (Type::Int32, Wire::Varint(v)) => i64::from(v as i32),
                (Type::Int64, Wire::Varint(v)) => v as i64,
                _ => return Err(wrong_type(field)),
            };
        }
    }
    Ok(value)
}

fn bytes_of<'a>(parts: &[(&SchemaField, Wire<'a>)], ty: Type) -> Result<Option<&'a [u8]>, ApiError> {
    let mut value = None;
    for (field, wire) in parts {
        if field.ty == ty && field.shape == Shape::One {
            let Wire::Bytes(b) = *wire else { return Err(wrong_type(field)) };
            value = Some(b);
        }
    }
    Ok(value)
}

/// The one singular message field of a union (`JSONSchemaPropsOr*`), decoded.
fn schema_of(parts: &[(&SchemaField, Wire<'_>)], depth: usize) -> Result<Option<Value>, ApiError> {
    let mut value = None;
    for (field, wire) in parts {
        if let (Type::Msg(id), Shape::One) = (field.ty, field.shape) {
            let Wire::Bytes(b) = *wire else { return Err(wrong_type(field)) };
            value = decode_message(message_by_id(id)?, b, depth + 1)?;
        }
    }
    Ok(value)
}

/// A message in its JSON form: an object of its fields, or one of
/// Kubernetes' custom JSON forms. Fields of a custom form are picked by their declared type
/// (a `Time` has one int64 and one int32), so no field number is written here.
fn in_form(form: Form, message: &'static Message, bytes: &[u8], depth: usize) -> Result<Option<Value>, ApiError> {
    let parts = parts(message, bytes)?;
    Ok(match form {
        Form::Object => {
            let mut object = Map::new();
            fields_into(message, bytes, depth, &mut object)?;
            Some(Value::Object(object))
        }
        Form::Time | Form::MicroTime => {
            let (seconds, nanos) = (int_of(&parts, Type::Int64)?, int_of(&parts, Type::Int32)?);
            if seconds == 0 && nanos == 0 {
                return Ok(None);
            }
            Some(Value::String(rfc3339(seconds, nanos, form == Form::MicroTime)?))
        }
        Form::Duration => Some(Value::String(go_duration(int_of(&parts, Type::Int64)?))),
        Form::IntOrString => {
            if int_of(&parts, Type::Int64)? == 1 {
                let s = bytes_of(&parts, Type::String)?.unwrap_or(&[]);
                Some(Value::String(text(s)?))
            } else {
                Some(json!(int_of(&parts, Type::Int32)?))
            }
        }
        Form::Quantity => match bytes_of(&parts, Type::String)? {
            Some(s) if !s.is_empty() => Some(Value::String(text(s)?)),
            _ => Some(Value::String("0".into())),
        },
        Form::RawJson => match bytes_of(&parts, Type::Bytes)? {
            Some(raw) if !raw.is_empty() => Some(embedded_json(raw)?),
            _ => None,
        },
        Form::SchemaOrArray => match schema_of(&parts, depth)? {
            Some(schema) => Some(schema),
            None => {
                let mut items = Vec::new();
                for (field, wire) in &parts {
                    if field.shape == Shape::Repeated {
                        items.extend(repeated(field, *wire, depth)?);
                    }
                }
                Some(Value::Array(items))
            }
        },
        Form::SchemaOrBool => match schema_of(&parts, depth)? {
            Some(schema) => Some(schema),
            None => {
                let allows = parts.iter().any(|(f, w)| f.ty == Type::Bool && matches!(w, Wire::Varint(v) if *v != 0));
                Some(Value::Bool(allows))
            }
        },
        Form::StringList => {
            let mut items = Vec::new();
            for (field, wire) in &parts {
                if field.shape == Shape::Repeated && field.ty == Type::String {
                    items.push(scalar(field, *wire)?);
                }
            }
            Some(Value::Array(items))
        }
        Form::SchemaOrStringArray => match schema_of(&parts, depth)? {
            Some(schema) => Some(schema),
            None => {
                let mut items = Vec::new();
                for (field, wire) in &parts {
                    if field.shape == Shape::Repeated && field.ty == Type::String {
                        items.push(scalar(field, *wire)?);
                    }
                }
                Some(Value::Array(items))
            }
        },
    })
}

/// Embedded JSON bytes (a `RawExtension`), bounded by serde_json's own
/// recursion limit.
fn embedded_json(raw: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(raw).map_err(|e| malformed(&format!("embedded object is not JSON: {e}")))
}

/// RFC 3339 in UTC: `2026-01-02T03:04:05Z`, or with six fractional digits
/// (`MicroTime`).
fn rfc3339(seconds: i64, nanos: i64, micro: bool) -> Result<String, ApiError> {
    let t = time::OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| malformed("time out of range"))?;
    if !(0..1_000_000_000).contains(&nanos) {
        return Err(malformed("time nanos out of range"));
    }
    let date = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    Ok(if micro { format!("{date}.{:06}Z", nanos / 1000) } else { format!("{date}Z") })
}

/// Go's `time.Duration.String()`: `1h2m3s`, `1.5s`, `300ms`, `0s`.
fn go_duration(nanos: i64) -> String {
    fn with_fraction(value: u64, precision: u32) -> String {
        let unit = 10u64.pow(precision);
        let (whole, fraction) = (value / unit, value % unit);
        if fraction == 0 {
            return whole.to_string();
        }
        let digits = format!("{fraction:0width$}", width = precision as usize);
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let body = if u == 0 {
        return "0s".into();
    } else if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        format!("{}µs", with_fraction(u, 3))
    } else if u < 1_000_000_000 {
        format!("{}ms", with_fraction(u, 6))
    } else {
        let seconds = u / 1_000_000_000;
        let fraction = with_fraction(u % 1_000_000_000, 9);
        let fraction = fraction.strip_prefix('0').unwrap_or(&fraction);
        let s = format!("{}{fraction}s", seconds % 60);
        let minutes = seconds / 60;
        if minutes == 0 {
            s
        } else if minutes < 60 {
            format!("{minutes}m{s}")
        } else {
            format!("{}h{}m{s}", minutes / 60, minutes % 60)
        }
    };
    format!("{sign}{body}")
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kubectl create namespace demo` as kubectl 1.37 sends it.
    const CREATE_DEMO: &[u8] = b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace\x12\x1c\n\x14\n\x04demo\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\n\x00\x1a\x00\"\x00";

    /// A tiny protobuf encoder: a message is a list of fields.
    enum P {
        V(u32, u64),
        S(u32, &'static str),
        B(u32, Vec<u8>),
        M(u32, Vec<P>),
        D(u32, f64),
    }

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn encode(fields: &[P]) -> Vec<u8> {
        let mut out = Vec::new();
        for f in fields {
            let (tag, wire, payload) = match f {
                P::V(t, v) => (*t, 0, {
                    let mut b = Vec::new();
                    varint(*v, &mut b);
                    b
                }),
                P::S(t, s) => (*t, 2, s.as_bytes().to_vec()),
                P::B(t, b) => (*t, 2, b.clone()),
                P::M(t, m) => (*t, 2, encode(m)),
                P::D(t, d) => (*t, 1, d.to_le_bytes().to_vec()),
            };
            varint(u64::from(tag) << 3 | wire, &mut out);
            if wire == 2 {
                varint(payload.len() as u64, &mut out);
            }
            out.extend(payload);
        }
        out
    }

    fn entry(key: &'static str, value: P) -> Vec<P> {
        vec![P::S(1, key), value]
    }

    /// An envelope around `object`, as client-go writes it.
    fn body(api_version: &'static str, kind: &'static str, object: Vec<P>) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(encode(&[
            P::M(1, vec![P::S(1, api_version), P::S(2, kind)]),
            P::B(2, encode(&object)),
            P::S(3, ""),
            P::S(4, ""),
        ]));
        out
    }

    /// ObjectMeta as go-to-protobuf writes it: every non-pointer field, empty
    /// or not.
    fn meta(name: &'static str, namespace: &'static str, labels: Vec<Vec<P>>) -> P {
        let mut fields = vec![
            P::S(1, name),
            P::S(2, ""),
            P::S(3, namespace),
            P::S(4, ""),
            P::S(5, ""),
            P::S(6, ""),
            P::V(7, 0),
            P::M(8, vec![]),
        ];
        fields.extend(labels.into_iter().map(|l| P::M(11, l)));
        P::M(1, fields)
    }

    fn decode(bytes: &[u8], kind: &str) -> Value {
        Value::Object(decode_object(bytes, kind).unwrap())
    }

    #[test]
    fn decodes_kubectl_namespace_create() {
        assert_eq!(
            decode(CREATE_DEMO, "Namespace"),
            json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "demo"}, "spec": {}, "status": {}})
        );
    }

    #[test]
    fn configmap_data_and_binary_data() {
        let b = body(
            "v1",
            "ConfigMap",
            vec![
                meta("c", "d", vec![entry("app", P::S(2, "web"))]),
                P::M(2, entry("a", P::S(2, "b"))),
                P::M(2, entry("empty", P::S(2, ""))),
                P::M(3, entry("bin", P::B(2, vec![0, 1, 2, 0xff]))),
            ],
        );
        assert_eq!(
            decode(&b, "ConfigMap"),
            json!({
                "kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "c", "namespace": "d", "labels": {"app": "web"}},
                "data": {"a": "b", "empty": ""},
                "binaryData": {"bin": "AAEC/w=="}
            })
        );
    }

    #[test]
    fn secret_bytes_are_base64() {
        let b = body(
            "v1",
            "Secret",
            vec![
                meta("s", "", vec![]),
                P::M(2, entry("k", P::S(2, "v"))),
                P::M(2, entry("kk", P::S(2, "vvvv"))),
                P::S(3, "Opaque"),
            ],
        );
        let secret = decode(&b, "Secret");
        assert_eq!(secret["data"], json!({"k": "dg==", "kk": "dnZ2dg=="}));
        assert_eq!(secret["type"], "Opaque");
        assert_eq!(secret["metadata"], json!({"name": "s"}));
    }

    fn deployment() -> Vec<u8> {
        let container = vec![
            P::S(1, "nginx"),
            P::S(2, "nginx:1.27"),
            P::M(6, vec![P::S(1, ""), P::V(2, 0), P::V(3, 80), P::S(4, "TCP"), P::S(5, "")]),
            P::M(
                8,
                vec![
                    P::M(1, entry("cpu", P::M(2, vec![P::S(1, "500m")]))),
                    P::M(1, entry("memory", P::M(2, vec![P::S(1, "128Mi")]))),
                ],
            ),
            P::S(5, ""),
            P::V(18, 0),
        ];
        let template = vec![
            P::M(1, vec![P::S(1, ""), P::M(11, entry("app", P::S(2, "web")))]),
            P::M(2, vec![P::M(2, container), P::V(5, u64::MAX - 29)]),
        ];
        let strategy = vec![
            P::S(1, "RollingUpdate"),
            P::M(2, vec![P::M(1, vec![P::V(1, 0), P::V(2, 1)]), P::M(2, vec![P::V(1, 1), P::S(3, "25%")])]),
        ];
        body(
            "apps/v1",
            "Deployment",
            vec![
                meta("web", "demo", vec![entry("app", P::S(2, "web"))]),
                P::M(
                    2,
                    vec![
                        P::V(1, 2),
                        P::M(2, vec![P::M(1, entry("app", P::S(2, "web")))]),
                        P::M(3, template),
                        P::M(4, strategy),
                        P::V(5, 0),
                    ],
                ),
                P::M(3, vec![]),
            ],
        )
    }

    #[test]
    fn deployment_with_quantities_and_int_or_string() {
        let d = decode(&deployment(), "Deployment");
        assert_eq!(d["kind"], "Deployment");
        assert_eq!(d["apiVersion"], "apps/v1");
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 2);
        assert_eq!(spec["selector"], json!({"matchLabels": {"app": "web"}}));
        assert_eq!(spec.get("minReadySeconds"), None, "a non-pointer omitempty zero");
        assert_eq!(spec["strategy"]["rollingUpdate"], json!({"maxUnavailable": 1, "maxSurge": "25%"}));
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["activeDeadlineSeconds"], -30, "int64 varints are two's complement");
        assert_eq!(spec["template"]["metadata"], json!({"labels": {"app": "web"}}));
        assert_eq!(
            pod["containers"],
            json!([{
                "name": "nginx",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}
            }])
        );
        assert_eq!(d["status"], json!({}));
    }

    #[test]
    fn job_and_cronjob() {
        let pod_template =
            P::M(6, vec![P::M(2, vec![P::M(2, vec![P::S(1, "j"), P::S(2, "busybox")]), P::S(3, "Never")])]);
        let b = body("batch/v1", "Job", vec![meta("j", "", vec![]), P::M(2, vec![P::V(7, 4), pod_template])]);
        let job = decode(&b, "Job");
        assert_eq!(job["spec"]["backoffLimit"], 4);
        assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
        assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["image"], "busybox");
        let b = body("batch/v1", "CronJob", vec![meta("c", "", vec![]), P::M(2, vec![P::S(1, "*/5 * * * *")])]);
        assert_eq!(decode(&b, "CronJob")["spec"]["schedule"], "*/5 * * * *");
    }

    #[test]
    fn times_volumes_inline_and_packed() {
        let created = P::M(8, vec![P::V(1, 1_767_323_045), P::V(2, 5)]);
        let volume = vec![P::S(1, "cfg"), P::M(2, vec![P::M(19, vec![P::M(1, vec![P::S(1, "settings")])])])];
        let b = body(
            "v1",
            "Pod",
            vec![P::M(1, vec![P::S(1, "p"), created]), P::M(2, vec![P::M(1, volume), P::M(2, vec![P::S(1, "c")])])],
        );
        let pod = decode(&b, "Pod");
        assert_eq!(pod["metadata"]["creationTimestamp"], "2026-01-02T03:04:05Z");
        assert_eq!(pod["spec"]["volumes"], json!([{"name": "cfg", "configMap": {"name": "settings"}}]));
        let event = body(
            "v1",
            "Event",
            vec![meta("e", "", vec![]), P::M(10, vec![P::V(1, 1_767_322_000), P::V(2, 123_456_789)])],
        );
        assert_eq!(decode(&event, "Event")["eventTime"], "2026-01-02T02:46:40.123456Z");
    }

    #[test]
    fn raw_json_doubles_and_unknown_tags() {
        let schema = vec![
            P::S(5, "object"),
            P::M(8, vec![P::B(1, br#"{"a":[1,2]}"#.to_vec())]),
            P::D(9, 1.5),
            P::M(29, entry("spec", P::M(2, vec![P::S(5, "string"), P::V(38, 1)]))),
            P::M(30, vec![P::V(1, 1)]),
            P::V(999, 7),
        ];
        let version = vec![P::S(1, "v1"), P::V(2, 1), P::V(3, 1), P::M(4, vec![P::M(1, schema)])];
        let b = body(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            vec![meta("widgets.example.com", "", vec![]), P::M(2, vec![P::S(1, "example.com"), P::M(7, version)])],
        );
        let crd = decode(&b, "CustomResourceDefinition");
        assert_eq!(
            crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            json!({
                "type": "object",
                "default": {"a": [1, 2]},
                "maximum": 1.5,
                "properties": {"spec": {"type": "string", "x-kubernetes-preserve-unknown-fields": true}},
                "additionalProperties": true
            })
        );
    }

    /// An envelope around prost-encoded bytes, as client-go writes it.
    fn envelope(api_version: &'static str, kind: &'static str, raw: Vec<u8>) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(encode(&[P::M(1, vec![P::S(1, api_version), P::S(2, kind)]), P::B(2, raw)]));
        out
    }

    /// The stored form of a decoded object: the typed layer's decode and order.
    fn stored(group: &str, kind: &str, mut object: Map<String, Value>) -> String {
        crate::strategy::decode::check(group, "v1", kind, &mut object).unwrap();
        crate::strategy::decode::order(group, "v1", kind, &mut object);
        serde_json::to_string(&object).unwrap()
    }

    /// The same objects written as JSON and as Protobuf (encoded by the
    /// k8s-pb types with every non-pointer field set, as go-to-protobuf
    /// writes them) are stored the same.
    #[test]
    fn protobuf_and_json_writes_store_the_same_object() {
        use k8s_pb::api::apps::v1 as apps;
        use k8s_pb::api::core::v1 as core;
        use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
        use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
        use prost::Message as _;
        let object_meta = |name: &str| meta::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("demo".into()),
            generation: Some(0),
            labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        };
        let container = core::Container {
            name: Some("web".into()),
            image: Some("nginx:1.27".into()),
            ports: vec![core::ContainerPort {
                container_port: Some(80),
                host_port: Some(0),
                protocol: Some("TCP".into()),
                ..Default::default()
            }],
            resources: Some(core::ResourceRequirements::default()),
            stdin: Some(false),
            stdin_once: Some(false),
            tty: Some(false),
            ..Default::default()
        };
        let deployment = apps::Deployment {
            metadata: Some(object_meta("web")),
            spec: Some(apps::DeploymentSpec {
                replicas: Some(0),
                selector: Some(meta::LabelSelector {
                    match_labels: [("app".to_string(), "web".to_string())].into(),
                    ..Default::default()
                }),
                template: Some(core::PodTemplateSpec {
                    metadata: Some(meta::ObjectMeta {
                        generation: Some(0),
                        labels: [("app".to_string(), "web".to_string())].into(),
                        ..Default::default()
                    }),
                    spec: Some(core::PodSpec {
                        containers: vec![container],
                        host_network: Some(false),
                        host_pid: Some(false),
                        host_ipc: Some(false),
                        ..Default::default()
                    }),
                }),
                strategy: Some(apps::DeploymentStrategy::default()),
                min_ready_seconds: Some(0),
                paused: Some(false),
                ..Default::default()
            }),
            status: Some(apps::DeploymentStatus::default()),
        };
        let from_protobuf =
            decode_object(&envelope("apps/v1", "Deployment", deployment.encode_to_vec()), "Deployment").unwrap();
        let from_json = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "demo", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}
                }
            }
        });
        let Value::Object(from_json) = from_json else { unreachable!() };
        let stored_protobuf = stored("apps", "Deployment", from_protobuf);
        assert_eq!(stored_protobuf, stored("apps", "Deployment", from_json));
        assert!(stored_protobuf.contains(r#""replicas":0"#), "a pointer to zero is kept: {stored_protobuf}");

        let service = core::Service {
            metadata: Some(object_meta("web")),
            spec: Some(core::ServiceSpec {
                ports: vec![core::ServicePort {
                    name: Some(String::new()),
                    protocol: Some("TCP".into()),
                    port: Some(80),
                    target_port: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(8080),
                        str_val: Some(String::new()),
                    }),
                    node_port: Some(0),
                    ..Default::default()
                }],
                selector: [("app".to_string(), "web".to_string())].into(),
                cluster_ip: Some(String::new()),
                r#type: Some("ClusterIP".into()),
                session_affinity: Some(String::new()),
                load_balancer_ip: Some(String::new()),
                external_name: Some(String::new()),
                external_traffic_policy: Some(String::new()),
                health_check_node_port: Some(0),
                publish_not_ready_addresses: Some(false),
                ..Default::default()
            }),
            status: Some(core::ServiceStatus {
                load_balancer: Some(core::LoadBalancerStatus::default()),
                ..Default::default()
            }),
        };
        let from_protobuf = decode_object(&envelope("v1", "Service", service.encode_to_vec()), "Service").unwrap();
        let from_json = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "demo", "labels": {"app": "web"}},
            "spec": {"ports": [{"protocol": "TCP", "port": 80, "targetPort": 8080}], "selector": {"app": "web"}, "type": "ClusterIP"}
        });
        let Value::Object(from_json) = from_json else { unreachable!() };
        assert_eq!(stored("", "Service", from_protobuf), stored("", "Service", from_json));
    }

    /// admissionregistration.k8s.io/v1 MutatingAdmissionPolicy and its
    /// binding carry kube 1.36's v1 numbers (tools/gen-proto-tables/
    /// proto_fields.txt), which are v1beta1's: k8s-pb's v1beta1 types write
    /// the bytes client-go's v1 types write. They decode, and store as the
    /// same JSON writes do.
    #[test]
    fn mutating_admission_policies_decode_and_store_like_json() {
        use k8s_pb::api::admissionregistration::{v1 as registration, v1beta1 as beta};
        use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
        use prost::Message as _;
        let object_meta =
            |name: &str| meta::ObjectMeta { name: Some(name.into()), generation: Some(0), ..Default::default() };
        let policy = beta::MutatingAdmissionPolicy {
            metadata: Some(object_meta("map")),
            spec: Some(beta::MutatingAdmissionPolicySpec {
                match_constraints: Some(beta::MatchResources {
                    resource_rules: vec![beta::NamedRuleWithOperations {
                        rule_with_operations: Some(registration::RuleWithOperations {
                            operations: vec!["CREATE".into()],
                            rule: Some(registration::Rule {
                                api_groups: vec!["apps".into()],
                                api_versions: vec!["v1".into()],
                                resources: vec!["deployments".into()],
                                scope: None,
                            }),
                        }),
                        ..Default::default()
                    }],
                    match_policy: Some("Equivalent".into()),
                    ..Default::default()
                }),
                variables: vec![beta::Variable { name: Some("n".into()), expression: Some("1".into()) }],
                mutations: vec![beta::Mutation {
                    patch_type: Some("ApplyConfiguration".into()),
                    apply_configuration: Some(beta::ApplyConfiguration { expression: Some("Object{}".into()) }),
                    json_patch: None,
                }],
                failure_policy: Some("Fail".into()),
                reinvocation_policy: Some(String::new()),
                ..Default::default()
            }),
        };
        let envelope_of = |kind: &'static str, raw: Vec<u8>| envelope("admissionregistration.k8s.io/v1", kind, raw);
        let from_protobuf =
            decode_object(&envelope_of("MutatingAdmissionPolicy", policy.encode_to_vec()), "MutatingAdmissionPolicy")
                .unwrap();
        assert_eq!(from_protobuf["apiVersion"], "admissionregistration.k8s.io/v1");
        assert_eq!(from_protobuf["spec"]["mutations"][0]["applyConfiguration"]["expression"], "Object{}");
        assert_eq!(from_protobuf["spec"]["matchConstraints"]["resourceRules"][0]["resources"][0], "deployments");
        let from_json = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "map"},
            "spec": {
                "matchConstraints": {
                    "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}],
                    "matchPolicy": "Equivalent"
                },
                "variables": [{"name": "n", "expression": "1"}],
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}}],
                "failurePolicy": "Fail"
            }
        });
        let Value::Object(from_json) = from_json else { unreachable!() };
        let group = "admissionregistration.k8s.io";
        let stored_protobuf = stored(group, "MutatingAdmissionPolicy", from_protobuf);
        assert_eq!(stored_protobuf, stored(group, "MutatingAdmissionPolicy", from_json));
        assert!(
            !stored_protobuf.contains("reinvocationPolicy"),
            "an empty omitempty string is dropped: {stored_protobuf}"
        );

        let binding = beta::MutatingAdmissionPolicyBinding {
            metadata: Some(object_meta("mapb")),
            spec: Some(beta::MutatingAdmissionPolicyBindingSpec {
                policy_name: Some("map".into()),
                param_ref: Some(beta::ParamRef {
                    name: Some("p".into()),
                    namespace: Some(String::new()),
                    parameter_not_found_action: Some("Deny".into()),
                    ..Default::default()
                }),
                match_resources: None,
            }),
        };
        let kind = "MutatingAdmissionPolicyBinding";
        let from_protobuf = decode_object(&envelope_of(kind, binding.encode_to_vec()), kind).unwrap();
        let from_json = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "mapb"},
            "spec": {"policyName": "map", "paramRef": {"name": "p", "parameterNotFoundAction": "Deny"}}
        });
        let Value::Object(from_json) = from_json else { unreachable!() };
        assert_eq!(stored(group, kind, from_protobuf), stored(group, kind, from_json));
    }

    #[test]
    fn go_durations() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (300_000_000, "300ms"),
            (1_500_000_000, "1.5s"),
            (60_000_000_000, "1m0s"),
            (3_723_000_000_000, "1h2m3s"),
            (-90_000_000_000, "-1m30s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(go_duration(nanos), text);
        }
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn every_served_kind_decodes() {
        for resource in crate::types::registry::builtin_resources() {
            let api_version = if resource.group.is_empty() {
                resource.version.to_string()
            } else {
                format!("{}/{}", resource.group, resource.version)
            };
            // A create-only resource (core bindings) has no list kind.
            for kind in [resource.kind, resource.list_kind].into_iter().filter(|k| !k.is_empty()) {
                let message = proto_schema::message_of_kind(&api_version, kind);
                assert!(message.is_some(), "{api_version} {kind} has no protobuf schema");
            }
            let b = body("", resource.kind, vec![meta("x", "", vec![])]);
            let object = decode_object(&b, resource.kind).unwrap();
            assert_eq!(object["metadata"]["name"], "x", "{}", resource.kind);
        }
    }

    #[test]
    fn custom_resources_are_unsupported() {
        let b = body("example.com/v1", "Widget", vec![meta("x", "", vec![])]);
        assert_eq!(decode_object(&b, "Widget").unwrap_err().code(), 415);
    }

    #[test]
    fn malformed_bodies_are_bad_requests_not_panics() {
        let bodies = [CREATE_DEMO.to_vec(), deployment()];
        for full in &bodies {
            for n in 0..full.len() {
                if let Err(e) = decode_object(&full[..n], "Deployment") {
                    assert!(matches!(e.code(), 400 | 415), "{n}: {e:?}");
                }
                // Every single-byte corruption, too.
                let mut corrupt = full.clone();
                corrupt[n] ^= 0xa5;
                if let Err(e) = decode_object(&corrupt, "Deployment") {
                    assert!(matches!(e.code(), 400 | 415), "{n}: {e:?}");
                }
            }
        }
        assert_eq!(
            decode_object(b"k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "Namespace").unwrap_err().code(),
            400
        );
        assert_eq!(decode_object(b"{}", "Namespace").unwrap_err().code(), 400);
        // A string field sent as a varint.
        let wrong = body("v1", "ConfigMap", vec![P::M(1, vec![P::V(1, 5)])]);
        assert_eq!(decode_object(&wrong, "ConfigMap").unwrap_err().code(), 400);
        // Embedded bytes that are not JSON.
        let raw = body("v1", "Status", vec![P::M(5, vec![P::M(5, vec![P::B(1, b"{".to_vec())])])]);
        let _ = decode_object(&raw, "Status");
    }

    #[test]
    fn nesting_is_bounded() {
        // JSONSchemaProps.not (tag 28) nested far deeper than MAX_DEPTH.
        let mut schema = encode(&[P::S(5, "object")]);
        for _ in 0..200 {
            schema = encode(&[P::B(28, schema)]);
        }
        let version = vec![P::S(1, "v1"), P::M(4, vec![P::B(1, schema)])];
        let b = body(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            vec![meta("w.example.com", "", vec![]), P::M(2, vec![P::M(7, version)])],
        );
        let error = decode_object(&b, "CustomResourceDefinition").unwrap_err();
        assert_eq!(error.code(), 400);
        assert!(format!("{error:?}").contains("nested deeper"), "{error:?}");
    }
}
