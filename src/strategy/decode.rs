//! Strict decoding of built-in objects, as kube-apiserver's JSON decoder
//! (sigs.k8s.io/json, a case-sensitive fork of Go's encoding/json, into the
//! Go types) accepts or refuses them, and the re-encoding it implies: nulls
//! dropped, quantities and times canonical, fields in the Go structs' order,
//! and the zero values Go's encoder writes for fields without `omitempty`.
//!
//! Facts: Go's `encoding/json` decode.go (`UnmarshalTypeError` and its
//! `Go struct field S.a.b of type T` wording since Go 1.20, `literalStore`,
//! `saveError`: the first type error is reported after the whole document is
//! read, while an `UnmarshalJSON` error stops decoding at once) and encode.go
//! (`omitempty`, `omitzero`, sorted map keys); apimachinery's `Quantity`,
//! `IntOrString`, `Time` and `MicroTime` JSON methods; Go's `encoding/base64`
//! (`illegal base64 data at input byte N`) and `time.Parse` (RFC 3339 errors).
//!
//! Invariant: driven by the generated schema table
//! (`types::proto_schema`: Go struct order, Go type names, Go field facts),
//! never by per-type code; no input panics; nothing is allocated per field
//! unless a value is rewritten or an error is built.

use super::quantity;
use super::Object;
use crate::types::proto_schema::{self, Field, Form, Message, Shape, Type};
use serde_json::{Map, Number, Value};

/// The message of a (group, version, kind).
fn message_of(group: &str, version: &str, kind: &str) -> Option<&'static Message> {
    let found = proto_schema::KINDS.iter().find(|k| {
        k.kind == kind
            && match k.api_version.split_once('/') {
                Some((g, v)) => g == group && v == version,
                None => group.is_empty() && k.api_version == version,
            }
    })?;
    proto_schema::message(found.message)
}

/// Checks every field of `object` against the Go type of (group, version,
/// kind); `Err` carries Go's decoding error text. On success the object is
/// what a Go decode and encode would leave of it (before field order): nulls
/// dropped, null list items and map values made zero, quantities, times and
/// base64 canonical.
pub fn check(group: &str, version: &str, kind: &str, object: &mut Object) -> Result<(), String> {
    let Some(message) = message_of(group, version, kind) else { return Ok(()) };
    let mut decoder = Decoder { saved: None };
    decoder.object(message, object, None)?;
    match decoder.saved {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// One struct field being decoded: Go's error context (the innermost struct
/// and the stack of JSON field names from the root).
struct Frame<'a> {
    parent: Option<&'a Frame<'a>>,
    name: &'a str,
    go_struct: &'static str,
}

impl Frame<'_> {
    /// `PodSpec.spec.containers`.
    fn describe(&self) -> String {
        let mut names = Vec::new();
        let mut frame = Some(self);
        while let Some(f) = frame {
            names.push(f.name);
            frame = f.parent;
        }
        names.reverse();
        format!("{}.{}", self.go_struct, names.join("."))
    }
}

/// The JSON kind of a value as Go's errors name it.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A decoding error that stops decoding (an `UnmarshalJSON` method's).
type Hard = String;

struct Decoder {
    /// The first type error (Go's `saveError`), reported at the end.
    saved: Option<String>,
}

impl Decoder {
    fn save(&mut self, error: impl FnOnce() -> String) {
        if self.saved.is_none() {
            self.saved = Some(error());
        }
    }

    /// `json: cannot unmarshal WHAT into Go struct field S.path of type T`.
    fn type_error(&mut self, what: &str, frame: &Frame<'_>, go_type: &str) {
        self.save(|| {
            format!("json: cannot unmarshal {what} into Go struct field {} of type {go_type}", frame.describe())
        });
    }

    fn object(&mut self, message: &'static Message, map: &mut Object, parent: Option<&Frame<'_>>) -> Result<(), Hard> {
        let mut nulls = false;
        for (key, value) in map.iter_mut() {
            let Some((_, field)) = message.json_field(key) else { continue };
            if value.is_null() {
                nulls = true;
                continue;
            }
            let frame = Frame { parent, name: key, go_struct: message.go_name };
            self.field(field, value, &frame)?;
            // A zero time decodes to what encodes as null.
            nulls |= value.is_null();
        }
        if nulls {
            // A null field is nil or zero after decoding: absent; what Go's
            // encoder writes for a zero field `order` adds back.
            map.retain(|key, value| !value.is_null() || message.json_field(key).is_none());
        }
        Ok(())
    }

    fn field(&mut self, field: &'static Field, value: &mut Value, frame: &Frame<'_>) -> Result<(), Hard> {
        match field.shape {
            Shape::One | Shape::Inline => self.single(field, field.go, value, frame),
            Shape::Repeated => match value {
                Value::Array(items) => {
                    for item in items.iter_mut() {
                        if item.is_null() {
                            *item = zero_item(field);
                        } else {
                            self.single(field, field.go_element, item, frame)?;
                        }
                    }
                    Ok(())
                }
                other => {
                    self.type_error(json_kind(other), frame, field.go);
                    Ok(())
                }
            },
            Shape::Map => match value {
                Value::Object(map) => {
                    for (_, item) in map.iter_mut() {
                        if item.is_null() {
                            *item = zero_item(field);
                        } else {
                            self.single(field, field.go_element, item, frame)?;
                        }
                    }
                    Ok(())
                }
                other => {
                    self.type_error(json_kind(other), frame, field.go);
                    Ok(())
                }
            },
        }
    }

    /// One value of the field's element type (`go` names it in errors).
    fn single(&mut self, field: &'static Field, go: &str, value: &mut Value, frame: &Frame<'_>) -> Result<(), Hard> {
        match field.ty {
            Type::String => {
                if !value.is_string() {
                    self.type_error(json_kind(value), frame, go);
                }
            }
            Type::Bool => {
                if !value.is_boolean() {
                    self.type_error(json_kind(value), frame, go);
                }
            }
            Type::Int32 | Type::Int64 | Type::Uint32 | Type::Uint64 => match value {
                Value::Number(n) => {
                    if !integer_fits(n, field.ty) {
                        self.type_error(&format!("number {n}"), frame, go);
                    }
                }
                other => self.type_error(json_kind(other), frame, go),
            },
            Type::Double | Type::Float => {
                if !value.is_number() {
                    self.type_error(json_kind(value), frame, go);
                }
            }
            Type::Bytes => self.bytes(value, frame, go),
            Type::Msg(id) => {
                let Some(message) = proto_schema::message(id) else { return Ok(()) };
                return self.message_value(message, go, value, frame);
            }
        }
        Ok(())
    }

    /// A `[]byte`: a base64 string (or, as Go allows, an array of bytes).
    fn bytes(&mut self, value: &mut Value, frame: &Frame<'_>, go: &str) {
        match value {
            Value::String(text) => match go_base64_decode(text.as_bytes()) {
                Ok(bytes) => {
                    use base64::Engine as _;
                    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                    if encoded != *text {
                        *text = encoded;
                    }
                }
                Err(offset) => self.save(|| format!("illegal base64 data at input byte {offset}")),
            },
            Value::Array(items) => {
                let mut bytes = Vec::with_capacity(items.len());
                for item in items.iter() {
                    match item {
                        Value::Number(n) => match n.as_u64().filter(|v| *v <= 255) {
                            Some(b) => bytes.push(b as u8),
                            None => return self.type_error(&format!("number {n}"), frame, "uint8"),
                        },
                        Value::Null => bytes.push(0),
                        other => return self.type_error(json_kind(other), frame, "uint8"),
                    }
                }
                use base64::Engine as _;
                *value = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
            other => self.type_error(json_kind(other), frame, go),
        }
    }

    /// A message-typed value: a struct, or one of Kubernetes' JSON forms.
    fn message_value(
        &mut self,
        message: &'static Message,
        go: &str,
        value: &mut Value,
        frame: &Frame<'_>,
    ) -> Result<(), Hard> {
        match message.form {
            Form::Object => match value {
                Value::Object(map) => self.object(message, map, Some(frame))?,
                other => self.type_error(json_kind(other), frame, go),
            },
            // quantity.go UnmarshalJSON: a string's contents or any other
            // JSON text goes to ParseQuantity; its error ends decoding.
            Form::Quantity => {
                let canonical = match value {
                    Value::String(text) => match quantity::canonical(text) {
                        Ok(c) if c == text.as_str() => None,
                        Ok(c) => Some(c.into_owned()),
                        Err(e) => return Err(e.to_string()),
                    },
                    Value::Number(n) => {
                        let literal = n.to_string();
                        Some(quantity::canonical(&literal).map_err(|e| e.to_string())?.into_owned())
                    }
                    _ => return Err(quantity::QuantityError::Format.to_string()),
                };
                if let Some(c) = canonical {
                    *value = Value::String(c);
                }
            }
            // intstr.go UnmarshalJSON: a string, else an int32 decoded by a
            // fresh json.Unmarshal (no struct context in its errors).
            Form::IntOrString => match value {
                Value::String(_) => {}
                Value::Number(n) if integer_fits(n, Type::Int32) => {}
                Value::Number(n) => {
                    return Err(format!("json: cannot unmarshal number {n} into Go value of type int32"))
                }
                other => {
                    return Err(format!("json: cannot unmarshal {} into Go value of type int32", json_kind(other)))
                }
            },
            // time.go / micro_time.go UnmarshalJSON: a string parsed as RFC
            // 3339; MarshalJSON writes it back in UTC.
            Form::Time | Form::MicroTime => {
                let micro = message.form == Form::MicroTime;
                let Value::String(text) = value else {
                    return Err(format!("json: cannot unmarshal {} into Go value of type string", json_kind(value)));
                };
                match parse_time(text, micro)? {
                    Some(canonical) if canonical != *text => *text = canonical,
                    Some(_) => {}
                    // The zero time encodes as null.
                    None => *value = Value::Null,
                }
            }
            Form::Duration => {
                if !value.is_string() {
                    return Err(format!("json: cannot unmarshal {} into Go value of type string", json_kind(value)));
                }
            }
            Form::RawJson | Form::SchemaOrArray | Form::SchemaOrBool | Form::SchemaOrStringArray => {}
            // A `[]string`: null (a nil slice) or an array of strings.
            Form::StringList => match value {
                Value::Null => {}
                Value::Array(items) => {
                    for item in items.iter_mut() {
                        match item {
                            Value::String(_) => {}
                            Value::Null => *item = Value::String(String::new()),
                            other => self.type_error(json_kind(other), frame, "string"),
                        }
                    }
                }
                other => self.type_error(json_kind(other), frame, go),
            },
        }
        Ok(())
    }
}

/// Whether a JSON number decodes into the integer type (Go's
/// `strconv.ParseInt`/`ParseUint` of the literal, then the overflow check).
fn integer_fits(n: &Number, ty: Type) -> bool {
    match ty {
        Type::Int32 => n.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
        Type::Int64 => n.as_i64().is_some(),
        Type::Uint32 => n.as_u64().is_some_and(|v| u32::try_from(v).is_ok()),
        Type::Uint64 => n.as_u64().is_some(),
        _ => true,
    }
}

/// What a null list item or map value decodes to: the element type's zero
/// value, as Go's encoder then writes it.
fn zero_item(field: &Field) -> Value {
    match field.ty {
        Type::String => Value::String(String::new()),
        Type::Bool => Value::Bool(false),
        Type::Int32 | Type::Int64 | Type::Uint32 | Type::Uint64 | Type::Double | Type::Float => Value::from(0),
        Type::Bytes => Value::Null,
        Type::Msg(id) => match proto_schema::message(id).map(|m| m.form) {
            Some(Form::Object) => Value::Object(Map::new()),
            Some(Form::Quantity) => Value::String("0".into()),
            Some(Form::IntOrString) => Value::from(0),
            Some(Form::Duration) => Value::String("0s".into()),
            _ => Value::Null,
        },
    }
}

/// Go's `base64.StdEncoding.Decode`: padding required, `\r` and `\n`
/// ignored; `Err` is the offset of `CorruptInputError`.
fn go_base64_decode(src: &[u8]) -> Result<Vec<u8>, usize> {
    fn value_of(c: u8) -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let newline = |c: u8| c == b'\n' || c == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    loop {
        // One quantum (base64.go decodeQuantum).
        let mut buf = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        let mut trailing = None;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            };
            si += 1;
            if let Some(v) = value_of(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while src.get(si).copied().is_some_and(newline) {
                        si += 1;
                    }
                    match src.get(si) {
                        None => return Err(src.len()),
                        Some(b'=') => si += 1,
                        Some(_) => return Err(si - 1),
                    }
                }
                _ => {}
            }
            while src.get(si).copied().is_some_and(newline) {
                si += 1;
            }
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let v = u32::from(buf[0]) << 18 | u32::from(buf[1]) << 12 | u32::from(buf[2]) << 6 | u32::from(buf[3]);
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(bytes.get(..len.saturating_sub(1)).unwrap_or(&[]));
        if let Some(offset) = trailing {
            return Err(offset);
        }
        if len < 4 {
            return Ok(out);
        }
    }
}

/// `time.Parse(time.RFC3339, text)` (or `RFC3339Micro` for MicroTime)
/// and the string `MarshalJSON` writes for the result: `Some` in UTC at
/// second (or microsecond) precision, `None` for the zero time (null).
/// `Err` is Go's `ParseError` text.
fn parse_time(text: &str, micro: bool) -> Result<Option<String>, String> {
    let layout = if micro { "2006-01-02T15:04:05.000000Z07:00" } else { "2006-01-02T15:04:05Z07:00" };
    let quote = |s: &str| format!("{:?}", s);
    let fail = |value_elem: &str, layout_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(text),
            quote(layout),
            quote(value_elem),
            quote(layout_elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", quote(text));
    let mut rest = text;
    // Literal separators must match exactly; numbers are fixed width but the
    // hour, which Go reads with one or two digits.
    let year = take_digits(&mut rest, 4, 4).ok_or_else(|| fail(rest, "2006"))?;
    expect(&mut rest, "-").map_err(|at| fail(at, "-"))?;
    let hold = rest;
    let month = take_digits(&mut rest, 2, 2).ok_or_else(|| fail(hold, "01"))?;
    if !(1..=12).contains(&month) {
        return Err(range("month"));
    }
    expect(&mut rest, "-").map_err(|at| fail(at, "-"))?;
    let hold = rest;
    let day = take_digits(&mut rest, 2, 2).ok_or_else(|| fail(hold, "02"))?;
    if day > 31 {
        return Err(range("day"));
    }
    expect(&mut rest, "T").map_err(|at| fail(at, "T"))?;
    let hold = rest;
    let hour = take_digits(&mut rest, 1, 2).ok_or_else(|| fail(hold, "15"))?;
    if hour >= 24 {
        return Err(range("hour"));
    }
    expect(&mut rest, ":").map_err(|at| fail(at, ":"))?;
    let hold = rest;
    let minute = take_digits(&mut rest, 2, 2).ok_or_else(|| fail(hold, "04"))?;
    if minute >= 60 {
        return Err(range("minute"));
    }
    expect(&mut rest, ":").map_err(|at| fail(at, ":"))?;
    let hold = rest;
    let second = take_digits(&mut rest, 2, 2).ok_or_else(|| fail(hold, "05"))?;
    if second >= 60 {
        return Err(range("second"));
    }
    let mut nanos: u32 = 0;
    if micro {
        let hold = rest;
        let fraction =
            rest.strip_prefix(['.', ',']).and_then(|r| r.get(..6)).filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
        let Some(fraction) = fraction else { return Err(fail(hold, ".000000")) };
        nanos = fraction.parse::<u32>().unwrap_or(0) * 1000;
        rest = rest.get(7..).unwrap_or("");
    } else if rest.len() >= 2 && rest.starts_with(['.', ',']) && rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
    {
        // Go accepts a fraction the layout does not show.
        let digits = rest.bytes().skip(1).take_while(u8::is_ascii_digit).count();
        let fraction = rest.get(1..1 + digits.min(9)).unwrap_or("0");
        nanos = format!("{fraction:0<9}").parse::<u32>().unwrap_or(0);
        rest = rest.get(1 + digits..).unwrap_or("");
    }
    let hold = rest;
    let offset_seconds: i32 = if let Some(r) = rest.strip_prefix('Z') {
        rest = r;
        0
    } else {
        let b = rest.as_bytes();
        let sign = match b.first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(fail(hold, "Z07:00")),
        };
        if b.len() < 6 || b.get(3) != Some(&b':') {
            return Err(fail(hold, "Z07:00"));
        }
        let (mut h, mut m) = (rest.get(1..3).unwrap_or(""), rest.get(4..6).unwrap_or(""));
        let hours = take_digits(&mut h, 2, 2).ok_or_else(|| fail(hold, "Z07:00"))?;
        let minutes = take_digits(&mut m, 2, 2).ok_or_else(|| fail(hold, "Z07:00"))?;
        if hours > 24 {
            return Err(range("time zone offset hour"));
        }
        if minutes > 60 {
            return Err(range("time zone offset minute"));
        }
        rest = rest.get(6..).unwrap_or("");
        sign * (hours as i32 * 3600 + minutes as i32 * 60)
    };
    if !rest.is_empty() {
        return Err(format!("parsing time {}: extra text: {}", quote(text), quote(rest)));
    }
    let month_enum = time::Month::try_from(month as u8).map_err(|_| range("month"))?;
    let date = time::Date::from_calendar_date(year as i32, month_enum, day as u8).map_err(|_| range("day"))?;
    let clock = time::Time::from_hms_nano(hour as u8, minute as u8, second as u8, nanos).map_err(|_| range("hour"))?;
    let offset = time::UtcOffset::from_whole_seconds(offset_seconds).map_err(|_| range("time zone offset hour"))?;
    let utc = time::PrimitiveDateTime::new(date, clock).assume_offset(offset).to_offset(time::UtcOffset::UTC);
    if utc.year() == 1 && utc.ordinal() == 1 && utc.time() == time::Time::MIDNIGHT {
        return Ok(None);
    }
    let base = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    );
    Ok(Some(if micro { format!("{base}.{:06}Z", utc.nanosecond() / 1000) } else { format!("{base}Z") }))
}

/// Reads `min..=max` ASCII digits (Go's `getnum`/`atoi` for a layout field).
fn take_digits(rest: &mut &str, min: usize, max: usize) -> Option<u32> {
    let n = rest.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    let value = rest.get(..n)?.parse().ok()?;
    *rest = rest.get(n..)?;
    Some(value)
}

/// A literal of the layout; `Err` is the value where it did not match.
fn expect<'a>(rest: &mut &'a str, literal: &str) -> Result<(), &'a str> {
    match rest.strip_prefix(literal) {
        Some(r) => {
            *rest = r;
            Ok(())
        }
        None => Err(rest),
    }
}

/// Puts every field of `object` in kube's order: `kind`, `apiVersion` (Go's
/// `metav1.TypeMeta`, as kube-apiserver writes objects to etcd and to
/// clients), then the Go struct's field order, recursively (inline members in place,
/// map keys sorted, unknown fields last in their order), and adds the zero
/// values Go's encoder writes for absent fields without `omitempty` (for
/// the structs whose Go facts the table has).
pub fn order(group: &str, version: &str, kind: &str, object: &mut Object) {
    if let Some(message) = message_of(group, version, kind) {
        order_object(message, object);
    }
}

/// What Go's encoder writes for an object of (group, version, kind) built
/// from another version's fields (`types::conversion`): the zero values its
/// `omitempty` fields drop removed (empty strings, zero numbers, `false`,
/// null or empty slices, maps and pointers), then [`order`]'s fields in Go
/// order with the zero values of the other fields filled in.
pub fn normalize(group: &str, version: &str, kind: &str, object: &mut Object) {
    if let Some(message) = message_of(group, version, kind) {
        drop_omitted(message, object);
        order_object(message, object);
    }
}

fn drop_omitted(message: &'static Message, map: &mut Object) {
    map.retain(|key, value| {
        let Some((_, field)) = message.json_field(key) else { return true };
        if let (Type::Msg(id), Shape::One | Shape::Inline, Value::Object(inner)) = (field.ty, field.shape, &mut *value)
        {
            if let Some(nested) = proto_schema::message(id).filter(|m| m.form == Form::Object) {
                drop_omitted(nested, inner);
            }
        }
        !(field.go_known() && field.go_omitempty() && omitted_zero(field, value))
    });
}

/// Whether `omitempty` drops this value of `field` (never a struct's).
fn omitted_zero(field: &'static Field, value: &Value) -> bool {
    match value {
        Value::Null => field.go_pointer() || matches!(field.shape, Shape::Repeated | Shape::Map),
        Value::Array(items) => items.is_empty() && field.shape == Shape::Repeated,
        Value::Object(map) => map.is_empty() && field.shape == Shape::Map,
        _ if field.go_pointer() || !matches!(field.shape, Shape::One) => false,
        Value::String(s) => s.is_empty() && field.ty == Type::String,
        Value::Bool(b) => !b && field.ty == Type::Bool,
        Value::Number(n) => n.as_f64() == Some(0.0) && !matches!(field.ty, Type::Msg(_) | Type::String),
    }
}

fn order_object(message: &'static Message, map: &mut Object) {
    for (key, value) in map.iter_mut() {
        if let Some((_, field)) = message.json_field(key) {
            order_field(field, value);
        }
    }
    if message.known {
        fill_zero_values(message, map);
    }
    // metav1.TypeMeta (`kind`, then `apiVersion`) is embedded first in every
    // kind's struct, the root's and an embedded object's
    // (`volumeClaimTemplates`) alike.
    let rank = |key: &str| -> usize {
        match (message.json_field(key), key) {
            (Some((i, _)), _) => i + 2,
            (None, "kind") => 0,
            (None, "apiVersion") => 1,
            (None, _) => usize::MAX,
        }
    };
    let mut previous = 0;
    let sorted = map.keys().all(|k| {
        let r = rank(k);
        let ok = r >= previous;
        previous = r;
        ok
    });
    if !sorted {
        let mut entries: Vec<(usize, String, Value)> =
            std::mem::take(map).into_iter().map(|(k, v)| (rank(&k), k, v)).collect();
        entries.sort_by_key(|e| e.0);
        map.extend(entries.into_iter().map(|(_, k, v)| (k, v)));
    }
}

fn order_field(field: &'static Field, value: &mut Value) {
    match (field.shape, value) {
        (Shape::Repeated, Value::Array(items)) => {
            for item in items {
                order_single(field, item);
            }
        }
        (Shape::Map, Value::Object(map)) => {
            if !map.keys().zip(map.keys().skip(1)).all(|(a, b)| a <= b) {
                map.sort_keys();
            }
            for (_, item) in map.iter_mut() {
                order_single(field, item);
            }
        }
        (Shape::One | Shape::Inline, value) => order_single(field, value),
        _ => {}
    }
}

fn order_single(field: &'static Field, value: &mut Value) {
    if let (Type::Msg(id), Value::Object(map)) = (field.ty, value) {
        if let Some(message) = proto_schema::message(id).filter(|m| m.form == Form::Object) {
            order_object(message, map);
        }
    }
}

/// Adds what Go's encoder writes for each absent field of a struct whose
/// facts are known: `null` for a nil slice, map or pointer without
/// `omitempty`, `""`/`0`/`false` for such scalars, and every non-pointer
/// struct (`omitempty` never drops a struct): `{}` filled the same way,
/// `"0"` for a Quantity, `0` for an IntOrString, `null` for a zero Time.
fn fill_zero_values(message: &'static Message, map: &mut Object) {
    for slot in message.json {
        if map.contains_key(slot.name) {
            continue;
        }
        let Some(field) = message.slot_field(slot) else { continue };
        if let Some(zero) = encoded_zero(field) {
            map.insert(slot.name.to_string(), zero);
        }
    }
}

fn encoded_zero(field: &'static Field) -> Option<Value> {
    if !field.go_known() || field.go_omitzero() {
        return None;
    }
    let omitempty = field.go_omitempty();
    if field.go_pointer() || matches!(field.shape, Shape::Repeated | Shape::Map) {
        return (!omitempty).then_some(Value::Null);
    }
    match field.ty {
        Type::String => (!omitempty).then(|| Value::String(String::new())),
        Type::Bool => (!omitempty).then_some(Value::Bool(false)),
        Type::Int32 | Type::Int64 | Type::Uint32 | Type::Uint64 | Type::Double | Type::Float => {
            (!omitempty).then(|| Value::from(0))
        }
        Type::Bytes => (!omitempty).then_some(Value::Null),
        Type::Msg(id) => {
            let message = proto_schema::message(id)?;
            Some(match message.form {
                Form::Object => {
                    let mut map = Map::new();
                    order_object(message, &mut map);
                    Value::Object(map)
                }
                Form::Quantity => Value::String("0".into()),
                Form::IntOrString => Value::from(0),
                Form::Duration => Value::String("0s".into()),
                Form::Time | Form::MicroTime | Form::RawJson | Form::StringList => Value::Null,
                Form::SchemaOrArray | Form::SchemaOrBool | Form::SchemaOrStringArray => return None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    fn check_json(group: &str, kind: &str, value: Value) -> Result<Value, String> {
        let version = if group == "autoscaling" { "v2" } else { "v1" };
        let mut map = object(value);
        check(group, version, kind, &mut map).map(|_| Value::Object(map))
    }

    /// Go's wording for each wrong JSON type, with the innermost struct, the
    /// dotted path from the root and the Go type.
    #[test]
    fn wrong_types_are_refused_with_go_wording() {
        let cases = [
            (
                "",
                "Pod",
                json!({"spec": {"containers": "oops"}}),
                "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"containers": ["x"]}}),
                "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container",
            ),
            ("", "Pod", json!({"spec": "x"}), "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"),
            (
                "",
                "ConfigMap",
                json!({"data": {"k": 1}}),
                "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"labels": "x"}}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"name": 5}}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string",
            ),
            (
                "apps",
                "Deployment",
                json!({"spec": {"replicas": 1.5}}),
                "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                "apps",
                "Deployment",
                json!({"spec": {"replicas": 3_000_000_000u64}}),
                "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                "apps",
                "Deployment",
                json!({"spec": {"replicas": "3"}}),
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                "apps",
                "Deployment",
                json!({"spec": {"paused": "yes"}}),
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
            ),
            (
                "apps",
                "Deployment",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": "80"}]}]}}}}),
                "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"activeDeadlineSeconds": true}}),
                "json: cannot unmarshal bool into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"volumes": [{"name": "v", "configMap": []}]}}),
                "json: cannot unmarshal array into Go struct field Volume.spec.volumes.configMap of type v1.ConfigMapVolumeSource",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "args": [1]}]}}),
                "json: cannot unmarshal number into Go struct field Container.spec.containers.args of type string",
            ),
            ("", "Secret", json!({"data": {"k": "abc"}}), "illegal base64 data at input byte 0"),
            ("", "Secret", json!({"data": {"k": "ab!d"}}), "illegal base64 data at input byte 2"),
            ("", "Secret", json!({"data": {"k": "YQ==YQ=="}}), "illegal base64 data at input byte 4"),
            ("", "ConfigMap", json!({"binaryData": {"k": "a==="}}), "illegal base64 data at input byte 1"),
            (
                "",
                "Secret",
                json!({"data": {"k": 5}}),
                "json: cannot unmarshal number into Go struct field Secret.data of type []uint8",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]}}),
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1mi"}}}]}}),
                "unable to parse quantity's suffix",
            ),
            (
                "",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "resources": {"limits": "x"}}]}}),
                "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList",
            ),
            (
                "",
                "Service",
                json!({"spec": {"ports": [{"port": 80, "targetPort": 1.5}]}}),
                "json: cannot unmarshal number 1.5 into Go value of type int32",
            ),
            (
                "",
                "Service",
                json!({"spec": {"ports": [{"port": 80, "targetPort": true}]}}),
                "json: cannot unmarshal bool into Go value of type int32",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": "yesterday"}}),
                "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": "2026-13-01T00:00:00Z"}}),
                "parsing time \"2026-13-01T00:00:00Z\": month out of range",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": "2026-01-01 00:00:00Z"}}),
                "parsing time \"2026-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\"",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00"}}),
                "parsing time \"2026-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\"",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": "2026-02-30T00:00:00Z"}}),
                "parsing time \"2026-02-30T00:00:00Z\": day out of range",
            ),
            (
                "",
                "Event",
                json!({"eventTime": "2026-01-01T00:00:00Z"}),
                "parsing time \"2026-01-01T00:00:00Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\"",
            ),
            (
                "",
                "ConfigMap",
                json!({"metadata": {"creationTimestamp": 5}}),
                "json: cannot unmarshal number into Go value of type string",
            ),
        ];
        for (group, kind, body, expected) in cases {
            let got = check_json(group, kind, body.clone());
            assert_eq!(got, Err(expected.to_string()), "{kind} {body}");
        }
    }

    #[test]
    fn the_first_type_error_wins_but_an_unmarshaler_error_stops_at_once() {
        let two = json!({"metadata": {"name": 1}, "data": {"k": 2}});
        assert_eq!(
            check_json("", "ConfigMap", two),
            Err("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string".into())
        );
        let hard_later = json!({"spec": {"replicas": "x", "template": {"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"memory": "big"}}}
        ]}}}});
        let got = check_json("apps", "Deployment", hard_later).unwrap_err();
        assert!(got.starts_with("quantities must match"), "{got}");
    }

    #[test]
    fn a_go_round_trip_is_applied() {
        let pod = json!({
            "metadata": {"name": "p", "labels": {"a": null, "b": "c"}, "annotations": null,
                "creationTimestamp": "2026-01-01T10:00:00.5+02:00"},
            "spec": {
                "containers": [
                    {"name": "a", "args": [null, "x"], "image": null,
                     "resources": {"limits": {"cpu": "1000m", "memory": "2048Ki"},
                                   "requests": {"cpu": 0.5, "memory": null}}},
                    null
                ],
                "nodeSelector": {"k": null},
                "securityContext": null
            }
        });
        let got = check_json("", "Pod", pod).unwrap();
        assert_eq!(
            got,
            json!({
                "metadata": {"name": "p", "labels": {"a": "", "b": "c"},
                    "creationTimestamp": "2026-01-01T08:00:00Z"},
                "spec": {
                    "containers": [
                        {"name": "a", "args": ["", "x"],
                         "resources": {"limits": {"cpu": "1", "memory": "2Mi"},
                                       "requests": {"cpu": "500m", "memory": "0"}}},
                        {}
                    ],
                    "nodeSelector": {"k": ""}
                }
            })
        );
        let secret = check_json("", "Secret", json!({"data": {"a": "YR==", "b": "YW\r\nJj", "c": [97, 98]}})).unwrap();
        assert_eq!(secret["data"], json!({"a": "YQ==", "b": "YWJj", "c": "YWI="}));
        let event = check_json("", "Event", json!({"eventTime": "2026-01-02T03:04:05.123456+01:00"})).unwrap();
        assert_eq!(event["eventTime"], "2026-01-02T02:04:05.123456Z");
        let zero = check_json("", "ConfigMap", json!({"metadata": {"creationTimestamp": "0001-01-01T00:00:00Z"}}));
        assert_eq!(zero.unwrap()["metadata"], json!({}));
        // Unknown fields are not this module's concern: kept as they are.
        let unknown = check_json("", "ConfigMap", json!({"nope": null, "data": {"a": "b"}})).unwrap();
        assert_eq!(unknown, json!({"nope": null, "data": {"a": "b"}}));
    }

    /// What Go's encoder writes for a minimal object: every non-pointer
    /// struct (`metadata`, `resources`, `status`), `null` for a nil slice
    /// without `omitempty`, nothing for an `omitempty` zero.
    #[test]
    fn order_adds_what_go_encodes_for_zero_fields() {
        let mut pod = object(
            json!({"spec": {"containers": [{"image": "i", "name": "a", "stdin": false}]}, "kind": "Pod", "apiVersion": "v1"}),
        );
        order("", "v1", "Pod", &mut pod);
        assert_eq!(
            serde_json::to_string(&pod).unwrap(),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{},"spec":{"containers":[{"name":"a","image":"i","resources":{},"stdin":false}]},"status":{}}"#
        );
        let mut job = object(
            json!({"metadata": {"name": "j", "labels": {"b": "1", "a": "2"}, "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"}}),
        );
        order("batch", "v1", "Job", &mut job);
        assert_eq!(
            serde_json::to_string(&job["metadata"]).unwrap(),
            r#"{"name":"j","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"2","b":"1"}}"#
        );
        let mut role = object(json!({"metadata": {"name": "r"}}));
        order("rbac.authorization.k8s.io", "v1", "ClusterRole", &mut role);
        assert_eq!(serde_json::to_string(&role).unwrap(), r#"{"metadata":{"name":"r"},"rules":null}"#);
        let mut service = object(json!({"spec": {"ports": [{"port": 80}]}}));
        order("", "v1", "Service", &mut service);
        assert_eq!(
            serde_json::to_string(&service).unwrap(),
            r#"{"metadata":{},"spec":{"ports":[{"port":80,"targetPort":0}]},"status":{"loadBalancer":{}}}"#
        );
        // A kubelet's status write: `lastState` is a struct, always written.
        let mut pod = object(json!({"status": {"containerStatuses": [
            {"state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}, "name": "a", "ready": true,
             "restartCount": 0, "image": "i", "imageID": "", "started": true}
        ]}}));
        order("", "v1", "Pod", &mut pod);
        assert_eq!(
            serde_json::to_string(&pod["status"]).unwrap(),
            concat!(
                r#"{"containerStatuses":[{"name":"a","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}},"#,
                r#""lastState":{},"ready":true,"restartCount":0,"image":"i","imageID":"","started":true}]}"#
            )
        );
        // As kube stores a Node created without status (the reference list).
        let mut node = object(json!({"metadata": {"name": "n"}}));
        order("", "v1", "Node", &mut node);
        assert_eq!(
            serde_json::to_string(&node).unwrap(),
            concat!(
                r#"{"metadata":{"name":"n"},"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"#,
                r#""nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","#,
                r#""containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}"#
            )
        );
        let mut event = object(json!({"involvedObject": {"kind": "Pod"}}));
        order("", "v1", "Event", &mut event);
        assert_eq!(
            serde_json::to_string(&event).unwrap(),
            r#"{"metadata":{},"involvedObject":{"kind":"Pod"},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}"#
        );
    }

    #[test]
    fn base64_follows_go() {
        assert_eq!(go_base64_decode(b""), Ok(vec![]));
        assert_eq!(go_base64_decode(b"YWJj"), Ok(b"abc".to_vec()));
        assert_eq!(go_base64_decode(b"YWI="), Ok(b"ab".to_vec()));
        assert_eq!(go_base64_decode(b"YQ=="), Ok(b"a".to_vec()));
        assert_eq!(go_base64_decode(b"YQ="), Err(3));
        assert_eq!(go_base64_decode(b"YQ"), Err(0));
        assert_eq!(go_base64_decode(b"Y"), Err(0));
        assert_eq!(go_base64_decode(b"YWJjZ"), Err(4));
        assert_eq!(go_base64_decode(b"=YWJ"), Err(0));
        assert_eq!(go_base64_decode(b"YQ=a"), Err(2));
    }

    /// Every object kube-apiserver v1.36 stored (the reference lists): with
    /// kind and apiVersion set (kube writes them in that order), `order` leaves its bytes unchanged, and a
    /// scrambled copy comes back identical.
    #[test]
    fn kube_objects_keep_their_bytes_and_scrambled_ones_come_back() {
        let (mut seen, mut kinds) = (0, 0);
        for list in FIXTURES {
            let list: Value = serde_json::from_str(list).expect("fixture JSON");
            let api_version = list["apiVersion"].as_str().expect("apiVersion").to_string();
            let kind = list["kind"].as_str().expect("kind").trim_end_matches("List").to_string();
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version.as_str()));
            if message_of(group, version, &kind).is_none() {
                // Not a kind Shardline serves (no table entry).
                continue;
            }
            kinds += 1;
            for item in list["items"].as_array().expect("items") {
                let mut typed = Map::new();
                typed.insert("kind".into(), Value::from(kind.clone()));
                typed.insert("apiVersion".into(), Value::from(api_version.clone()));
                typed.extend(item.as_object().expect("item").clone());
                let before = serde_json::to_string(&typed).unwrap();
                let mut ordered = typed.clone();
                order(group, version, &kind, &mut ordered);
                assert_eq!(serde_json::to_string(&ordered).unwrap(), before, "{api_version} {kind} changed");
                let mut scrambled = Value::Object(typed.clone());
                scramble(&mut scrambled);
                let Value::Object(mut scrambled) = scrambled else { unreachable!() };
                assert_ne!(serde_json::to_string(&scrambled).unwrap(), before);
                order(group, version, &kind, &mut scrambled);
                assert_eq!(serde_json::to_string(&scrambled).unwrap(), before, "{api_version} {kind} scrambled");
                seen += 1;
            }
        }
        assert!(kinds >= 20 && seen > 40, "{kinds} kinds, {seen} objects");
    }

    /// Every value of the stored objects replaced, one at a time, by each
    /// JSON kind: `check` never panics, and what it accepts is a fixed point
    /// (checking and ordering it again changes nothing).
    #[test]
    fn any_value_anywhere_is_refused_or_accepted_without_panic() {
        let replacements = [
            Value::Null,
            json!(true),
            json!(1.5),
            json!(-1),
            json!(3_000_000_000u64),
            json!("x"),
            json!("1e3"),
            json!([null, 1, "a"]),
            json!({"k": null}),
        ];
        let (mut accepted, mut refused) = (0, 0);
        for (kind, group) in [("Pod", ""), ("Deployment", "apps"), ("Service", "")] {
            let list_kind = format!("\"kind\": \"{kind}List\"");
            let list = FIXTURES.iter().find(|f| f.contains(&list_kind)).expect("a reference list");
            let list: Value = serde_json::from_str(list).unwrap();
            let item = list["items"][0].clone();
            let mut paths = Vec::new();
            pointers(&item, String::new(), &mut paths);
            for path in &paths {
                for replacement in &replacements {
                    let mut mutated = item.clone();
                    if let Some(slot) = mutated.pointer_mut(path) {
                        *slot = replacement.clone();
                    }
                    let Value::Object(mut map) = mutated else { unreachable!() };
                    if check(group, "v1", kind, &mut map).is_err() {
                        refused += 1;
                        continue;
                    }
                    accepted += 1;
                    order(group, "v1", kind, &mut map);
                    let once = serde_json::to_string(&map).unwrap();
                    assert_eq!(check(group, "v1", kind, &mut map), Ok(()), "{kind} {path}");
                    order(group, "v1", kind, &mut map);
                    assert_eq!(serde_json::to_string(&map).unwrap(), once, "{kind} {path} = {replacement}");
                }
            }
        }
        assert!(accepted > 100 && refused > 100, "{accepted} accepted, {refused} refused");
    }

    /// JSON pointers to every value under `value`.
    fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(path.clone());
                    pointers(v, path, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let path = format!("{at}/{i}");
                    out.push(path.clone());
                    pointers(v, path, out);
                }
            }
            _ => {}
        }
    }

    /// Reverses the keys of every object, recursively.
    fn scramble(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().rev().collect();
                for (k, mut v) in entries {
                    // FieldsV1 is raw JSON kept as written, not a Go struct.
                    if k != "fieldsV1" {
                        scramble(&mut v);
                    }
                    map.insert(k, v);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(scramble),
            _ => {}
        }
    }

    const FIXTURES: &[&str] = &[
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_mutatingadmissionpolicies.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_mutatingadmissionpolicybindings.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_mutatingwebhookconfigurations.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_validatingadmissionpolicies.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_validatingadmissionpolicybindings.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/admissionregistration.k8s.io_v1_validatingwebhookconfigurations.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apiextensions.k8s.io_v1_customresourcedefinitions.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apiregistration.k8s.io_v1_apiservices.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apps_v1_controllerrevisions.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apps_v1_daemonsets.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apps_v1_deployments.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apps_v1_replicasets.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/apps_v1_statefulsets.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/autoscaling_v2_horizontalpodautoscalers.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/batch_v1_cronjobs.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/batch_v1_jobs.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/certificates.k8s.io_v1_certificatesigningrequests.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/coordination.k8s.io_v1_leases.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_componentstatuses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_configmaps.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_endpoints.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_events.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_limitranges.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_namespaces.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_nodes.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_persistentvolumeclaims.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_persistentvolumes.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_pods.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_podtemplates.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_replicationcontrollers.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_resourcequotas.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_secrets.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_serviceaccounts.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/core_v1_services.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/discovery.k8s.io_v1_endpointslices.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/events.k8s.io_v1_events.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/flowcontrol.apiserver.k8s.io_v1_flowschemas.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/networking.k8s.io_v1_ingressclasses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/networking.k8s.io_v1_ingresses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/networking.k8s.io_v1_ipaddresses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/networking.k8s.io_v1_networkpolicies.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/networking.k8s.io_v1_servicecidrs.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/node.k8s.io_v1_runtimeclasses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/policy_v1_poddisruptionbudgets.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/rbac.authorization.k8s.io_v1_clusterrolebindings.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/rbac.authorization.k8s.io_v1_clusterroles.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/rbac.authorization.k8s.io_v1_rolebindings.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/rbac.authorization.k8s.io_v1_roles.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/resource.k8s.io_v1_deviceclasses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/resource.k8s.io_v1_resourceclaims.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/resource.k8s.io_v1_resourceclaimtemplates.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/resource.k8s.io_v1_resourceslices.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/scheduling.k8s.io_v1_priorityclasses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_csidrivers.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_csinodes.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_csistoragecapacities.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_storageclasses.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_volumeattachments.json"),
        include_str!("../../tests/fixtures/kube-v1.36/lists/storage.k8s.io_v1_volumeattributesclasses.json"),
    ];
}
