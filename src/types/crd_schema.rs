//! A custom resource version's `openAPIV3Schema` applied to an object, as
//! kube-apiserver applies a structural schema: nulls dropped where not
//! `nullable`, defaults filled in, unknown fields pruned (unless
//! `x-kubernetes-preserve-unknown-fields`), then validation of types,
//! `required`, `enum`, `minimum`/`maximum` (and their exclusive forms),
//! `minLength`/`maxLength`, `pattern`, `minItems`/`maxItems` and
//! `uniqueItems`, reported as kube's field errors (`spec.replicas`, `spec.ports[0].name`).
//!
//! Invariant: no I/O; any JSON value and any schema value is handled without
//! panicking (an unknown or mistyped schema keyword is ignored, as a schema
//! the definition's validation would have refused).
//! Invariant: `apiVersion`, `kind` and `metadata` at the root (and in
//! `x-kubernetes-embedded-resource` objects) are never pruned.

use serde_json::{Map, Value};

/// Why a field is invalid, with kube's cause reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaErrorKind {
    /// `FieldValueRequired`
    Required,
    /// `FieldValueNotSupported` (enum)
    NotSupported,
    /// `FieldValueInvalid`
    Invalid,
}

/// One field error: its path (`spec.replicas`) and kube's message after the
/// path (`Required value`, `Invalid value: ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub field: String,
    pub kind: SchemaErrorKind,
    pub message: String,
}

impl SchemaError {
    pub fn cause_reason(&self) -> &'static str {
        match self.kind {
            SchemaErrorKind::Required => "FieldValueRequired",
            SchemaErrorKind::NotSupported => "FieldValueNotSupported",
            SchemaErrorKind::Invalid => "FieldValueInvalid",
        }
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Drops nulls where not nullable, applies defaults and prunes unknown fields
/// of `object` (a whole custom resource) in place.
pub fn prune_and_default(object: &mut Value, schema: &Value) {
    prune_value(object, schema, true);
}

fn prune_value(value: &mut Value, schema: &Value, root: bool) {
    match value {
        Value::Object(map) => prune_object(map, schema, root),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items.iter_mut() {
                    prune_value(item, item_schema, false);
                }
            }
        }
        _ => {}
    }
}

fn prune_object(map: &mut Map<String, Value>, schema: &Value, root: bool) {
    let keep_meta = root || flag(schema, "x-kubernetes-embedded-resource");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    // Defaults of absent properties.
    if let Some(properties) = properties {
        for (name, property) in properties {
            if !map.contains_key(name) {
                if let Some(default) = property.get("default") {
                    map.insert(name.clone(), default.clone());
                }
            }
        }
    }
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        if keep_meta && (key == "apiVersion" || key == "kind" || key == "metadata") {
            continue;
        }
        let child = properties.and_then(|p| p.get(&key)).or(additional);
        match child {
            Some(child_schema) => {
                let is_null = map.get(&key).is_some_and(Value::is_null);
                if is_null && !flag(child_schema, "nullable") {
                    map.remove(&key);
                    continue;
                }
                if let Some(v) = map.get_mut(&key) {
                    prune_value(v, child_schema, false);
                }
            }
            None if preserve || (properties.is_none() && schema.get("type").is_none()) => {}
            None => {
                map.remove(&key);
            }
        }
    }
}

/// The paths of the fields pruning would remove from `object` as unknown
/// (not nulls), in kube's form (`spec.foo`, `spec.items[0].bar`), as
/// `fieldValidation` reports them. `object` is not changed.
pub fn unknown_fields(object: &Value, schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    unknown_in_value(object, schema, "", true, &mut found);
    found
}

fn unknown_in_value(value: &Value, schema: &Value, path: &str, root: bool, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let keep_meta = root || flag(schema, "x-kubernetes-embedded-resource");
            let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, child) in map {
                if keep_meta && (key == "apiVersion" || key == "kind" || key == "metadata") {
                    continue;
                }
                match properties.and_then(|p| p.get(key)).or(additional) {
                    Some(child_schema) => unknown_in_value(child, child_schema, &child_path(path, key), false, found),
                    None if preserve || (properties.is_none() && schema.get("type").is_none()) => {}
                    None => found.push(child_path(path, key)),
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    unknown_in_value(item, item_schema, &format!("{path}[{i}]"), false, found);
                }
            }
        }
        _ => {}
    }
}

/// Validates `object` (already pruned) against `schema`; every violation, in
/// document order.
pub fn validate(object: &Value, schema: &Value) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    validate_value(object, schema, "", true, &mut errors);
    errors
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A value as kube prints it in `Invalid value: ...` (Go's `%#v` of the
/// decoded JSON: strings quoted, numbers and booleans bare).
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        Value::Object(_) => "\"object\"".into(),
        Value::Array(_) => "\"array\"".into(),
        other => other.to_string(),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, value: &Value, schema: &Value) -> bool {
    if flag(schema, "x-kubernetes-int-or-string") {
        return matches!(value, Value::String(_)) || value.as_i64().is_some() || value.as_u64().is_some();
    }
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        _ => true,
    }
}

fn invalid(errors: &mut Vec<SchemaError>, path: &str, value: &Value, detail: String) {
    let field = if path.is_empty() { "<nil>".to_string() } else { path.to_string() };
    errors.push(SchemaError {
        field,
        kind: SchemaErrorKind::Invalid,
        message: format!("Invalid value: {}: {detail}", shown(value)),
    });
}

fn validate_value(value: &Value, schema: &Value, path: &str, root: bool, errors: &mut Vec<SchemaError>) {
    let in_body = if path.is_empty() { "body".to_string() } else { format!("{path} in body") };
    if value.is_null() && flag(schema, "nullable") {
        return;
    }
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    let expected = if int_or_string { Some("integer,string") } else { schema.get("type").and_then(Value::as_str) };
    if let Some(expected) = expected {
        if !type_matches(expected, value, schema) {
            let actual = type_name(value);
            errors.push(SchemaError {
                field: path.to_string(),
                kind: SchemaErrorKind::Invalid,
                message: format!("Invalid value: \"{actual}\": {in_body} must be of type {expected}: \"{actual}\""),
            });
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().map(shown).collect();
            errors.push(SchemaError {
                field: path.to_string(),
                kind: SchemaErrorKind::NotSupported,
                message: format!("Unsupported value: {}: supported values: {}", shown(value), list.join(", ")),
            });
        }
    }
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
            let text = |key: &str| schema.get(key).map(Value::to_string).unwrap_or_default();
            if let Some(min) = bound("minimum") {
                if flag(schema, "exclusiveMinimum") && x <= min {
                    invalid(errors, path, value, format!("{in_body} should be greater than {}", text("minimum")));
                } else if x < min {
                    invalid(
                        errors,
                        path,
                        value,
                        format!("{in_body} should be greater than or equal to {}", text("minimum")),
                    );
                }
            }
            if let Some(max) = bound("maximum") {
                if flag(schema, "exclusiveMaximum") && x >= max {
                    invalid(errors, path, value, format!("{in_body} should be less than {}", text("maximum")));
                } else if x > max {
                    invalid(
                        errors,
                        path,
                        value,
                        format!("{in_body} should be less than or equal to {}", text("maximum")),
                    );
                }
            }
            if let Some(m) = bound("multipleOf").filter(|m| *m > 0.0) {
                if (x / m).fract() != 0.0 {
                    invalid(errors, path, value, format!("{in_body} should be a multiple of {}", text("multipleOf")));
                }
            }
        }
        Value::String(s) => {
            let length = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
                if length < min {
                    invalid(errors, path, value, format!("{in_body} should be at least {min} chars long"));
                }
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                if length > max {
                    invalid(errors, path, value, format!("{in_body} should be at most {max} chars long"));
                }
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                if let Ok(re) = regex::Regex::new(pattern) {
                    if !re.is_match(s) {
                        invalid(errors, path, value, format!("{in_body} should match '{pattern}'"));
                    }
                }
            }
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
                if count < min {
                    invalid(errors, path, value, format!("{in_body} should have at least {min} items"));
                }
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
                if count > max {
                    invalid(errors, path, value, format!("{in_body} should have at most {max} items"));
                }
            }
            if flag(schema, "uniqueItems") {
                let duplicate = items.iter().enumerate().any(|(i, a)| items[..i].contains(a));
                if duplicate {
                    errors.push(SchemaError {
                        field: path.to_string(),
                        kind: SchemaErrorKind::Invalid,
                        message: format!("Duplicate value: {in_body} shall not contain duplicates"),
                    });
                }
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate_value(item, item_schema, &format!("{path}[{i}]"), false, errors);
                }
            }
        }
        Value::Object(map) => {
            let keep_meta = root || flag(schema, "x-kubernetes-embedded-resource");
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        errors.push(SchemaError {
                            field: child_path(path, name),
                            kind: SchemaErrorKind::Required,
                            message: "Required value".into(),
                        });
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, child) in map {
                if keep_meta && (key == "apiVersion" || key == "kind" || key == "metadata") {
                    continue;
                }
                if let Some(child_schema) = properties.and_then(|p| p.get(key)).or(additional) {
                    validate_value(child, child_schema, &child_path(path, key), false, errors);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": {"type": "integer", "minimum": 1, "maximum": 10},
                        "color": {"type": "string", "enum": ["red", "green"]},
                        "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 5},
                        "mode": {"type": "string", "default": "fast"},
                        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                        "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "note": {"type": "string", "nullable": true}
                    }
                },
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        })
    }

    #[test]
    fn unknown_fields_are_pruned_except_where_preserved() {
        let mut object = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a", "x": 1},
            "extra": 1,
            "spec": {"size": 2, "bogus": true, "free": {"anything": {"goes": 1}},
                     "ports": [{"port": 80, "junk": 1}], "labels": {"a": "b"}, "note": null, "color": null}
        });
        prune_and_default(&mut object, &schema());
        assert_eq!(
            object,
            json!({
                "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a", "x": 1},
                "spec": {"size": 2, "free": {"anything": {"goes": 1}}, "ports": [{"port": 80}],
                         "labels": {"a": "b"}, "note": null, "mode": "fast"}
            })
        );
        assert!(validate(&object, &schema()).is_empty());
    }

    #[test]
    fn unknown_fields_are_listed_as_pruning_would_remove_them() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "inner": {"type": "object", "x-kubernetes-embedded-resource": true,
                          "properties": {"spec": {"type": "object"}}}}}}});
        let object = json!({
            "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "junk": 1,
            "spec": {"list": [{"a": "x", "b": 1}], "free": {"any": {"thing": 1}}, "gone": null,
                     "inner": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}, "other": 2}}});
        assert_eq!(unknown_fields(&object, &schema), ["junk", "spec.list[0].b", "spec.gone", "spec.inner.other"]);
        let mut pruned = object.clone();
        prune_and_default(&mut pruned, &schema);
        assert!(unknown_fields(&pruned, &schema).is_empty());
        assert_eq!(pruned["spec"]["free"], json!({"any": {"thing": 1}}));
    }

    #[test]
    fn preserve_unknown_fields_at_the_root_keeps_everything() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        let mut object = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {}, "spec": {"x": [1]}});
        let before = object.clone();
        prune_and_default(&mut object, &schema);
        assert_eq!(object, before);
    }

    fn messages(object: Value) -> Vec<(String, String, &'static str)> {
        validate(&object, &schema())
            .into_iter()
            .map(|e| (e.field.clone(), e.message.clone(), e.cause_reason()))
            .collect()
    }

    #[test]
    fn violations_are_reported_with_kube_paths_and_messages() {
        let got = messages(json!({
            "spec": {"size": 11, "color": "pink", "name": "ABCDEFG", "tags": ["a", "b", 3],
                     "ports": [{"port": "http"}]},
            "status": {"ready": "yes"}
        }));
        let want = [
            (
                "spec.size",
                "Invalid value: 11: spec.size in body should be less than or equal to 10",
                "FieldValueInvalid",
            ),
            (
                "spec.color",
                "Unsupported value: \"pink\": supported values: \"red\", \"green\"",
                "FieldValueNotSupported",
            ),
            (
                "spec.name",
                "Invalid value: \"ABCDEFG\": spec.name in body should be at most 5 chars long",
                "FieldValueInvalid",
            ),
            ("spec.name", "Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'", "FieldValueInvalid"),
            (
                "spec.tags",
                "Invalid value: \"array\": spec.tags in body should have at most 2 items",
                "FieldValueInvalid",
            ),
            (
                "spec.tags[2]",
                "Invalid value: \"integer\": spec.tags[2] in body must be of type string: \"integer\"",
                "FieldValueInvalid",
            ),
            (
                "spec.ports[0].port",
                "Invalid value: \"string\": spec.ports[0].port in body must be of type integer: \"string\"",
                "FieldValueInvalid",
            ),
            (
                "status.ready",
                "Invalid value: \"string\": status.ready in body must be of type boolean: \"string\"",
                "FieldValueInvalid",
            ),
        ];
        let want: Vec<(String, String, &str)> =
            want.iter().map(|(f, m, r)| (f.to_string(), m.to_string(), *r)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn required_and_minimum() {
        assert_eq!(
            messages(json!({"spec": {}})),
            [("spec.size".into(), "Required value".into(), "FieldValueRequired")]
        );
        assert_eq!(
            messages(json!({"spec": {"size": 0}})),
            [(
                "spec.size".into(),
                "Invalid value: 0: spec.size in body should be greater than or equal to 1".into(),
                "FieldValueInvalid"
            )]
        );
        assert!(messages(json!({"spec": {"size": 1, "name": "ab"}})).is_empty());
    }

    #[test]
    fn int_or_string_and_exclusive_bounds() {
        let schema = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true}
        }});
        assert!(validate(&json!({"port": "http", "ratio": 0.5}), &schema).is_empty());
        assert!(validate(&json!({"port": 80}), &schema).is_empty());
        let errors = validate(&json!({"port": true, "ratio": 0}), &schema);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(
            errors[0].message,
            "Invalid value: \"boolean\": port in body must be of type integer,string: \"boolean\""
        );
        assert_eq!(errors[1].message, "Invalid value: 0: ratio in body should be greater than 0");
    }

    #[test]
    fn odd_schemas_and_values_do_not_panic() {
        let schemas = [json!(null), json!(1), json!({"type": 3, "properties": []}), json!({"pattern": "("})];
        let values = [json!(null), json!([1, {"a": null}]), json!({"a": {"b": [null]}}), json!("x")];
        for schema in &schemas {
            for value in &values {
                let mut v = value.clone();
                prune_and_default(&mut v, schema);
                let _ = validate(&v, schema);
            }
        }
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let keys = prop::sample::select(vec![
            "spec",
            "status",
            "size",
            "color",
            "name",
            "tags",
            "ports",
            "port",
            "free",
            "labels",
            "note",
            "type",
            "properties",
            "items",
            "required",
            "enum",
            "minimum",
            "pattern",
            "nullable",
            "default",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z(\\[*+^$]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((keys.clone(), inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any value against the test schema or any value as a schema: no
        /// panic, and pruning twice changes nothing more than pruning once.
        #[test]
        fn any_value_and_schema_prune_idempotently_without_panicking(value in arb_json(), other in arb_json()) {
            for schema in [schema(), other.clone()] {
                let mut once = value.clone();
                prune_and_default(&mut once, &schema);
                let mut twice = once.clone();
                prune_and_default(&mut twice, &schema);
                proptest::prop_assert_eq!(&once, &twice);
                let _ = validate(&once, &schema);
            }
        }
    }
}
