//! `fieldValidation=Ignore|Warn|Strict` on POST, PUT and PATCH: fields the
//! type's schema does not define (`types::schema::unknown_fields`, recursive
//! through lists and maps) and keys a JSON object repeats are dropped
//! (Ignore), reported one `Warning: 299 - "..."` header each (Warn, the
//! default), or refused with 400 listing all of them (Strict), in
//! kube-apiserver's words (`unknown field "spec.foo"`, `duplicate field "x"`).
//!
//! Invariant: no I/O; unknown fields never reach the log, whatever the
//! directive (the object is pruned before it is stored).

use super::object::Object;
use super::status::{ApiError, Cause, Target};
use super::{RequestHead, ResponseBody};
use crate::types::registry::ResourceInfo;
use crate::types::schema;
use http::{HeaderValue, Response};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    Ignore,
    Warn,
    Strict,
}

/// The request's directive; `options_kind` (`CreateOptions`, `UpdateOptions`,
/// `PatchOptions`) names the options object in the 422 for a bad value.
pub fn directive(head: &RequestHead, options_kind: &str) -> Result<Directive, ApiError> {
    match head.params.field_validation.as_deref() {
        None | Some("") | Some("Warn") => Ok(Directive::Warn),
        Some("Ignore") => Ok(Directive::Ignore),
        Some("Strict") => Ok(Directive::Strict),
        Some(other) => Err(ApiError::Invalid {
            kind: options_kind.into(),
            target: Target::new("meta.k8s.io", "", ""),
            causes: vec![Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!(
                    "Unsupported value: {other:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                ),
                field: "fieldValidation".into(),
            }],
        }),
    }
}

/// The problems of `object` (and of the JSON `body` it came from, for
/// duplicate keys), as kube's strict decoding errors; unknown fields are
/// removed from `object` whatever the directive.
pub fn problems(object: &mut Object, info: &ResourceInfo, json_body: Option<&[u8]>) -> Vec<String> {
    let mut found: Vec<String> = json_body
        .map(duplicate_fields)
        .unwrap_or_default()
        .into_iter()
        .map(|p| format!("duplicate field {}", go_quote(&p)))
        .collect();
    if let Some(shape) = schema::root_shape(&info.group, &info.version, &info.kind) {
        let mut value = Value::Object(std::mem::take(object));
        for path in schema::unknown_fields(&mut value, shape, true) {
            found.push(format!("unknown field {}", go_quote(&path)));
        }
        if let Value::Object(map) = value {
            *object = map;
        }
    }
    found
}

/// Checks a decoded create or update body: drops unknown fields from
/// `object` and returns the warnings to send, or the Strict 400.
pub fn check_body(
    head: &RequestHead,
    info: &ResourceInfo,
    options_kind: &str,
    object: &mut Object,
    body: &[u8],
) -> Result<Vec<String>, ApiError> {
    let directive = directive(head, options_kind)?;
    let json = matches!(super::object::media_type(head.content_type.as_deref()).as_str(), "application/json" | "");
    let found = problems(object, info, json.then_some(body));
    decide(directive, found, |m| strict_decoding_error(info, m))
}

/// Applies the directive to the problems found: `Ok(warnings)` to send with
/// the response, or the Strict error (`strict` builds it from the joined
/// list, since create/update and patch word it differently).
pub fn decide(
    directive: Directive,
    problems: Vec<String>,
    strict: impl FnOnce(String) -> ApiError,
) -> Result<Vec<String>, ApiError> {
    match directive {
        _ if problems.is_empty() => Ok(Vec::new()),
        Directive::Ignore => Ok(Vec::new()),
        Directive::Warn => Ok(problems),
        Directive::Strict => Err(strict(format!("strict decoding error: {}", problems.join(", ")))),
    }
}

/// The 400 of a Strict create or update, as kube-apiserver's decoder words it.
pub fn strict_decoding_error(info: &ResourceInfo, message: String) -> ApiError {
    ApiError::BadRequest(format!(
        "{kind} in version {version:?} cannot be handled as a {kind}: {message}",
        kind = info.kind,
        version = info.version
    ))
}

/// Adds one `Warning: 299 - "<text>"` header per warning.
pub fn add_warnings(response: &mut Response<ResponseBody>, warnings: &[String]) {
    for warning in warnings {
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {}", go_quote(warning))) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
}

/// A string quoted as Go's `%q` quotes printable ASCII.
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Paths of the keys a JSON document repeats within one object
/// (`metadata.name`, `spec.containers[0].image`). Empty for invalid JSON
/// (decoding reports that).
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let _ = Duplicates { path: String::new(), found: &mut found }.deserialize(&mut deserializer);
    found
}

struct Duplicates<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Duplicates<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Duplicates<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut i = 0usize;
        while seq.next_element_seed(Duplicates { path: format!("{}[{i}]", self.path), found: &mut *found })?.is_some() {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if !seen.insert(key) && !found.contains(&path) {
                found.push(path.clone());
            }
            map.next_value_seed(Duplicates { path, found: &mut *found })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_with_their_paths() {
        let body = br#"{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c","image":"x","image":"y"}]},"kind":"Pod","kind":"Pod"}"#;
        assert_eq!(duplicate_fields(body), ["metadata.name", "spec.containers[0].image", "kind"]);
        assert!(duplicate_fields(br#"{"a":{"b":1},"c":{"b":2}}"#).is_empty());
        assert!(duplicate_fields(b"{").is_empty());
    }

    #[test]
    fn warnings_are_go_quoted() {
        assert_eq!(go_quote(r#"unknown field "spec.foo""#), r#""unknown field \"spec.foo\"""#);
        let info = crate::types::registry::Registry::builtin().lookup("", "v1", "pods").unwrap().clone();
        let mut pod: Object =
            serde_json::from_str(r#"{"spec":{"foo":1,"containers":[{"name":"a","bar":2}]}}"#).unwrap();
        let found = problems(&mut pod, &info, Some(br#"{"spec":{}, "spec":{}}"#));
        assert_eq!(
            found,
            ["duplicate field \"spec\"", "unknown field \"spec.foo\"", "unknown field \"spec.containers[0].bar\""]
        );
        assert_eq!(serde_json::Value::Object(pod), serde_json::json!({"spec": {"containers": [{"name": "a"}]}}));
        let e = decide(Directive::Strict, found.clone(), |m| strict_decoding_error(&info, m)).unwrap_err();
        assert!(e.message().starts_with("Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: duplicate field \"spec\", unknown field"));
        assert_eq!(decide(Directive::Warn, found.clone(), ApiError::BadRequest).unwrap().len(), 3);
        assert!(decide(Directive::Ignore, found, ApiError::BadRequest).unwrap().is_empty());
    }
}
