//! Reading decoded JSON objects the way kube's validation reads its Go
//! structs (an absent field is the zero value), building field paths as
//! `field.Path` prints them, and printing bad values as Go's `%v` / `%#v`.
//!
//! Invariant: nothing here panics on any JSON; every accessor falls back to
//! the Go zero value.

use crate::types::validation::{go_quote, FieldError};
use serde_json::{Map, Value};

/// The empty object, for absent sub-structs.
pub fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// The object at `key`, or an empty one.
pub fn obj<'a>(v: &'a Value, key: &str) -> &'a Map<String, Value> {
    v.get(key).and_then(Value::as_object).unwrap_or_else(|| empty_map())
}

/// Whether `key` holds a non-null value (a Go pointer that is set).
pub fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// The string at `key`, or `""`.
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The array at `key`, or an empty slice.
pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The integer at `key`, if set (a whole float such as `80.0` counts).
pub fn int(v: &Value, key: &str) -> Option<i64> {
    let n = v.get(key)?;
    n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e18).map(|f| f as i64))
}

/// The boolean at `key`, `false` if absent.
pub fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A `map[string]string` at `key`, in document order (non-strings skipped).
pub fn string_map<'a>(v: &'a Value, key: &str) -> Vec<(&'a str, &'a str)> {
    obj(v, key).iter().filter_map(|(k, x)| x.as_str().map(|s| (k.as_str(), s))).collect()
}

/// `path.child`, as `field.Path.Child` prints it.
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `path[i]`.
pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// `path[key]`, as `field.Path.Key` prints it.
pub fn key(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

/// A JSON value printed as Go prints the typed field: strings quoted,
/// numbers and booleans bare, `null` for absent pointers, string lists as
/// `[]string{"a", "b"}`.
pub fn go_value(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(s)) => go_quote(s),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(items)) => {
            let parts: Vec<String> = items.iter().map(|x| go_value(Some(x))).collect();
            format!("[]string{{{}}}", parts.join(", "))
        }
        Some(other) => other.to_string(),
    }
}

/// Go's `%#v` of a `[]string` (a nil slice is `[]string(nil)`).
pub fn go_string_slice(items: &[Value]) -> String {
    if items.is_empty() {
        return "[]string(nil)".to_string();
    }
    go_value(Some(&Value::Array(items.to_vec())))
}

/// `field.Invalid` of an integer value.
pub fn invalid_int(field: &str, value: i64, message: &str) -> FieldError {
    FieldError::invalid_bare(field, &value.to_string(), message)
}

/// kube's `ValidateNonnegativeField`.
pub fn nonnegative(field: &str, value: Option<i64>) -> Vec<FieldError> {
    match value {
        Some(v) if v < 0 => vec![invalid_int(field, v, "must be greater than or equal to 0")],
        _ => Vec::new(),
    }
}

/// kube's `ValidateDNS1123Label` at `field`.
pub fn dns1123_label(field: &str, value: &str) -> Vec<FieldError> {
    crate::types::validation::is_dns1123_label(value)
        .into_iter()
        .map(|m| FieldError::invalid(field, value, &m))
        .collect()
}

/// kube's `ValidateDNS1123Subdomain` at `field` (also `NameIsDNSSubdomain`
/// for references to other objects by name).
pub fn dns1123_subdomain(field: &str, value: &str) -> Vec<FieldError> {
    crate::types::validation::is_dns1123_subdomain(value)
        .into_iter()
        .map(|m| FieldError::invalid(field, value, &m))
        .collect()
}

/// kube's `ValidateQualifiedName` at `field`.
pub fn qualified_name(field: &str, value: &str) -> Vec<FieldError> {
    crate::types::validation::is_qualified_name(value)
        .into_iter()
        .map(|m| FieldError::invalid(field, value, &m))
        .collect()
}

/// `apiequality.Semantic.DeepEqual` on decoded JSON: an absent field equals
/// its zero value (`false`, `0`, `""`, `[]`, `{}`), as two Go structs
/// compare. (A pointer set to its zero value therefore equals an unset one,
/// a leniency kube does not have.)
pub fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a.filter(|v| !is_zero(v)), b.filter(|v| !is_zero(v))) {
        (None, None) => true,
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.iter().all(|(k, v)| semantic_eq(Some(v), y.get(k)))
                && y.iter().all(|(k, v)| x.contains_key(k) || is_zero(v))
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(Some(p), Some(q)))
        }
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Whether a JSON value is its Go type's zero value.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_zero),
    }
}

/// A short description of what differs, in place of kube's `cmp.Diff`
/// (whose layout go-cmp randomizes on purpose): one `-`/`+` line pair per
/// changed field.
pub fn spec_diff(old: &Value, new: &Value, path: &str) -> String {
    let mut lines = Vec::new();
    diff_into(Some(old), Some(new), path, &mut lines);
    lines.join("\n")
}

fn diff_into(old: Option<&Value>, new: Option<&Value>, path: &str, lines: &mut Vec<String>) {
    if semantic_eq(old, new) {
        return;
    }
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().collect();
            keys.extend(b.keys().filter(|k| !a.contains_key(*k)));
            for k in keys {
                diff_into(a.get(k), b.get(k), &child(path, k), lines);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff_into(Some(x), Some(y), &index(path, i), lines);
            }
        }
        _ => {
            let show = |v: Option<&Value>| v.map_or_else(|| "null".to_string(), Value::to_string);
            lines.push(format!("- {path}: {}", show(old)));
            lines.push(format!("+ {path}: {}", show(new)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accessors_fall_back_to_zero_values() {
        let v = json!({"a": "x", "n": 3, "b": true, "l": [1], "o": {"k": "v"}, "z": null});
        assert_eq!(text(&v, "a"), "x");
        assert_eq!(text(&v, "n"), "");
        assert_eq!(int(&v, "n"), Some(3));
        assert!(flag(&v, "b") && !flag(&v, "missing"));
        assert_eq!(list(&v, "l").len(), 1);
        assert_eq!(list(&v, "a").len(), 0);
        assert_eq!(string_map(&v, "o"), vec![("k", "v")]);
        assert!(!has(&v, "z") && has(&v, "a"));
        assert!(obj(&json!("not an object"), "x").is_empty());
    }

    #[test]
    fn paths_and_go_values() {
        assert_eq!(child("spec", "containers"), "spec.containers");
        assert_eq!(child("", "data"), "data");
        assert_eq!(index("spec.ports", 2), "spec.ports[2]");
        assert_eq!(key("data", "a.b"), "data[a.b]");
        assert_eq!(go_value(Some(&json!(80))), "80");
        assert_eq!(go_value(Some(&json!("x"))), "\"x\"");
        assert_eq!(go_value(None), "null");
        assert_eq!(go_value(Some(&json!(["a", "b"]))), "[]string{\"a\", \"b\"}");
        assert_eq!(go_string_slice(&[]), "[]string(nil)");
        assert_eq!(
            nonnegative("x", Some(-1))[0].to_string(),
            "x: Invalid value: -1: must be greater than or equal to 0"
        );
        assert!(nonnegative("x", Some(0)).is_empty());
    }

    #[test]
    fn semantic_equality_treats_absent_as_zero() {
        assert!(semantic_eq(Some(&json!({"a": 1, "b": false})), Some(&json!({"a": 1}))));
        assert!(semantic_eq(Some(&json!({"l": []})), None));
        assert!(!semantic_eq(Some(&json!({"a": 1})), Some(&json!({"a": 2}))));
        assert!(!semantic_eq(Some(&json!([1, 2])), Some(&json!([1]))));
        assert!(semantic_eq(Some(&json!(1.0)), Some(&json!(1))));
    }
}
