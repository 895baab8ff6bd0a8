//! ConfigMaps and Secrets (`ValidateConfigMap`, `ValidateConfigMapUpdate`,
//! `ValidateSecret`, `ValidateSecretUpdate` in
//! `pkg/apis/core/validation/validation.go`): valid keys, at most 1 MiB of
//! data, per-type required keys, and what `immutable: true` freezes.

use super::util::*;
use crate::types::validation::{is_config_map_key, FieldError};
use base64::Engine;
use serde_json::{Map, Value};

type Errs = Vec<FieldError>;

/// `core.MaxSecretSize`: 1 MiB, for Secrets and ConfigMaps alike.
const MAX_SECRET_SIZE: usize = 1024 * 1024;
const IMMUTABLE_MSG: &str = "field is immutable when `immutable` is set";

fn map_of<'a>(object: &'a Map<String, Value>, field: &str) -> &'a Map<String, Value> {
    object.get(field).and_then(Value::as_object).unwrap_or_else(|| empty_map())
}

/// The byte length of a base64 value (what Go holds as `[]byte`).
fn decoded_len(value: &Value) -> usize {
    let text = value.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD.decode(text).map(|b| b.len()).unwrap_or(text.len())
}

fn key_errors(path: &str, key_name: &str) -> Errs {
    is_config_map_key(key_name).iter().map(|m| FieldError::invalid(&key(path, key_name), key_name, m)).collect()
}

/// kube's `ValidateConfigMap` (metadata is the API layer's).
pub fn config_map(object: &Map<String, Value>) -> Errs {
    let data = map_of(object, "data");
    let binary = map_of(object, "binaryData");
    let mut errs = Errs::new();
    let mut total = 0usize;
    for (name, value) in data {
        errs.extend(key_errors("data", name));
        if binary.contains_key(name) {
            errs.push(FieldError::invalid(&key("data", name), name, "duplicate of key present in binaryData"));
        }
        total = total.saturating_add(value.as_str().map_or(0, str::len));
    }
    for (name, value) in binary {
        errs.extend(key_errors("binaryData", name));
        total = total.saturating_add(decoded_len(value));
    }
    if total > MAX_SECRET_SIZE {
        // kube passes the empty path: the error is about the whole object.
        errs.push(FieldError::too_long("", MAX_SECRET_SIZE));
    }
    errs
}

/// `immutable: true` on the old object freezes `immutable` and the listed
/// data fields.
fn immutable_rules(object: &Map<String, Value>, old: &Map<String, Value>, fields: &[&str]) -> Errs {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut errs = Errs::new();
    if object.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_MSG));
    }
    for field in fields {
        if !semantic_eq(object.get(*field), old.get(*field)) {
            errs.push(FieldError::forbidden(field, IMMUTABLE_MSG));
        }
    }
    errs
}

/// kube's `ValidateConfigMapUpdate`.
pub fn config_map_update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let mut errs = immutable_rules(object, old, &["data", "binaryData"]);
    errs.extend(config_map(object));
    errs
}

/// Whether the secret carries `key` (in `data`, or in `stringData` when
/// defaulting has not merged it yet).
fn secret_has(object: &Map<String, Value>, name: &str) -> bool {
    map_of(object, "data").contains_key(name) || map_of(object, "stringData").contains_key(name)
}

/// kube's `ValidateSecret`.
pub fn secret(object: &Map<String, Value>) -> Errs {
    let data = map_of(object, "data");
    let mut errs = Errs::new();
    let mut total = 0usize;
    for (name, value) in data {
        errs.extend(key_errors("data", name));
        total = total.saturating_add(decoded_len(value));
    }
    for (name, value) in map_of(object, "stringData") {
        if !data.contains_key(name) {
            errs.extend(key_errors("data", name));
            total = total.saturating_add(value.as_str().map_or(0, str::len));
        }
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long("data", MAX_SECRET_SIZE));
    }
    errs.extend(secret_type_rules(object));
    errs
}

/// The required keys of each Secret type.
fn secret_type_rules(object: &Map<String, Value>) -> Errs {
    let required = |name: &str| FieldError::required(&key("data", name), "");
    match object.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let annotation = object
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if annotation.is_empty() {
                vec![FieldError::required("metadata.annotations[kubernetes.io/service-account.name]", "")]
            } else {
                Vec::new()
            }
        }
        "kubernetes.io/dockercfg" => docker_config(object, ".dockercfg"),
        "kubernetes.io/dockerconfigjson" => docker_config(object, ".dockerconfigjson"),
        "kubernetes.io/basic-auth" => {
            if !secret_has(object, "username") && !secret_has(object, "password") {
                vec![required("username"), required("password")]
            } else {
                Vec::new()
            }
        }
        "kubernetes.io/ssh-auth" => {
            let present = map_of(object, "data").get("ssh-privatekey").is_some_and(|v| decoded_len(v) > 0)
                || map_of(object, "stringData")
                    .get("ssh-privatekey")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty());
            if present {
                Vec::new()
            } else {
                vec![required("ssh-privatekey")]
            }
        }
        "kubernetes.io/tls" => {
            ["tls.crt", "tls.key"].iter().filter(|k| !secret_has(object, k)).map(|k| required(k)).collect()
        }
        _ => Vec::new(),
    }
}

/// A docker config key must be present and hold a JSON object.
fn docker_config(object: &Map<String, Value>, name: &str) -> Errs {
    let field = key("data", name);
    let bytes = if let Some(v) = map_of(object, "data").get(name) {
        base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap_or("")).unwrap_or_default()
    } else if let Some(v) = map_of(object, "stringData").get(name) {
        v.as_str().unwrap_or("").as_bytes().to_vec()
    } else {
        return vec![FieldError::required(&field, "")];
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(_)) => Vec::new(),
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                _ => "null",
            };
            if kind == "null" {
                Vec::new()
            } else {
                let msg = format!("json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}");
                vec![FieldError::invalid(&field, "<secret contents redacted>", &msg)]
            }
        }
        Err(e) => vec![FieldError::invalid(&field, "<secret contents redacted>", &go_json_error(&e, &bytes))],
    }
}

/// Go's `encoding/json` syntax error for the common cases.
fn go_json_error(e: &serde_json::Error, bytes: &[u8]) -> String {
    if bytes.iter().all(u8::is_ascii_whitespace) || e.is_eof() {
        return "unexpected end of JSON input".to_string();
    }
    let column = e.column().saturating_sub(1);
    let line_start: usize = bytes.split(|b| *b == b'\n').take(e.line().saturating_sub(1)).map(|l| l.len() + 1).sum();
    let found = bytes.get(line_start + column).copied().unwrap_or(b'?');
    format!("invalid character '{}' looking for beginning of value", found as char)
}

/// kube's `ValidateSecretUpdate`.
pub fn secret_update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    let new_type = object.get("type").and_then(Value::as_str).unwrap_or("");
    let old_type = old.get("type").and_then(Value::as_str).unwrap_or("");
    if new_type != old_type {
        errs.push(FieldError::invalid("type", new_type, "field is immutable"));
    }
    errs.extend(immutable_rules(object, old, &["data"]));
    errs.extend(secret(object));
    errs
}
