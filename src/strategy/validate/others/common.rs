//! What the validation of several groups shares: reading fields of a JSON
//! object as Go reads them (absent is the zero value), kube's common field
//! checks (`ValidateNonnegativeField`, `ValidateImmutableField`,
//! `field.NotSupported`), label selectors (`ValidateLabelSelector`,
//! `LabelSelectorAsSelector`, `Matches`) and the Go `%#v` rendering of the
//! values kube prints in its messages (maps, label selectors, IntOrString).
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use crate::types::validation::{self, FieldError, FieldErrorType};
use serde_json::{Map, Value};

pub type Fields = Map<String, Value>;

/// The object at `key`, if it is one.
pub fn obj<'a>(map: &'a Fields, key: &str) -> Option<&'a Fields> {
    map.get(key).and_then(Value::as_object)
}

/// A string field, `""` when absent (Go's zero value).
pub fn text<'a>(map: &'a Fields, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An integer field, `None` when absent (a nil `*int32`).
pub fn int(map: &Fields, key: &str) -> Option<i64> {
    map.get(key).and_then(Value::as_i64)
}

/// An array field, empty when absent.
pub fn list<'a>(map: &'a Fields, key: &str) -> &'a [Value] {
    map.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The strings of an array field.
pub fn strings<'a>(map: &'a Fields, key: &str) -> Vec<&'a str> {
    list(map, key).iter().filter_map(Value::as_str).collect()
}

/// A string map field (labels, annotations, matchLabels).
pub fn string_map<'a>(map: &'a Fields, key: &str) -> Option<Vec<(&'a str, &'a str)>> {
    obj(map, key).map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v))).collect())
}

/// `field.Invalid` with a value Go prints without quotes (numbers, Go
/// structs): the rendered value leads the detail, as kube's message shows it.
pub fn invalid_raw(field: &str, rendered: &str, message: &str) -> FieldError {
    let detail = if message.is_empty() { rendered.to_string() } else { format!("{rendered}: {message}") };
    FieldError::new(field, FieldErrorType::Invalid, None, &detail)
}

/// `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> FieldError {
    let quoted: Vec<String> = supported.iter().map(|s| validation::go_quote(s)).collect();
    FieldError::new(
        field,
        FieldErrorType::NotSupported,
        Some(value),
        &format!("supported values: {}", quoted.join(", ")),
    )
}

/// `field.NotSupported` with a value Go prints without quotes.
pub fn not_supported_raw(field: &str, rendered: &str, supported: &[&str]) -> FieldError {
    let quoted: Vec<String> = supported.iter().map(|s| validation::go_quote(s)).collect();
    FieldError::new(
        field,
        FieldErrorType::NotSupported,
        None,
        &format!("{rendered}: supported values: {}", quoted.join(", ")),
    )
}

/// pkg/apis/core/validation: ValidateNonnegativeField (apimachinery's
/// `IsNegativeErrorMsg`).
pub fn non_negative(value: Option<i64>, field: &str) -> Vec<FieldError> {
    match value {
        Some(v) if v < 0 => vec![invalid_raw(field, &v.to_string(), "must be greater than or equal to 0")],
        _ => Vec::new(),
    }
}

/// `ValidateImmutableField`'s message.
pub const IMMUTABLE: &str = "field is immutable";

/// kube's `ValidateLabels` at `field` (template labels, matchLabels).
pub fn labels_at(labels: Option<Vec<(&str, &str)>>, field: &str) -> Vec<FieldError> {
    remap(validation::validate_labels(labels.unwrap_or_default()), "metadata.labels", field)
}

/// kube's `ValidateAnnotations` at `field`.
pub fn annotations_at(annotations: Option<Vec<(&str, &str)>>, field: &str) -> Vec<FieldError> {
    remap(validation::validate_annotations(annotations.unwrap_or_default()), "metadata.annotations", field)
}

fn remap(errors: Vec<FieldError>, from: &str, to: &str) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(rest) = e.field.strip_prefix(from) {
                e.field = format!("{to}{rest}");
            }
            e
        })
        .collect()
}

/// Go's `%#v` of a `map[string]string` (keys sorted, as fmt prints maps).
pub fn go_string_map(map: Option<&Fields>) -> String {
    let Some(map) = map else { return "map[string]string(nil)".to_string() };
    let mut pairs: Vec<(&String, &str)> = map.iter().map(|(k, v)| (k, v.as_str().unwrap_or(""))).collect();
    pairs.sort();
    let body: Vec<String> =
        pairs.iter().map(|(k, v)| format!("{}:{}", validation::go_quote(k), validation::go_quote(v))).collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

/// Go's `%#v` of a `[]string`.
pub fn go_string_slice(values: Option<&Vec<Value>>) -> String {
    let Some(values) = values else { return "[]string(nil)".to_string() };
    let body: Vec<String> = values.iter().map(|v| validation::go_quote(v.as_str().unwrap_or(""))).collect();
    format!("[]string{{{}}}", body.join(", "))
}

/// Go's `%#v` of a `*metav1.LabelSelector` as field.Error prints it (a nil
/// pointer is `null`, else the struct).
pub fn go_label_selector(selector: Option<&Fields>) -> String {
    let Some(selector) = selector else { return "null".to_string() };
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let e = e.as_object();
                    let s = |k: &str| e.and_then(|e| e.get(k)).and_then(Value::as_str).unwrap_or("");
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        validation::go_quote(s("key")),
                        validation::go_quote(s("operator")),
                        go_string_slice(e.and_then(|e| e.get("values")).and_then(Value::as_array))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(obj(selector, "matchLabels")),
        expressions
    )
}

/// Go's `%#v` of an `intstr.IntOrString`.
pub fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", validation::go_quote(s)),
        other => format!("intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}", other.as_i64().unwrap_or(0)),
    }
}

/// kube's `ValidateLabelSelector` (metav1 validation) at `field`, with
/// invalid label values in selectors refused.
pub fn validate_label_selector(selector: &Fields, field: &str) -> Vec<FieldError> {
    let mut errs = labels_at(string_map(selector, "matchLabels"), &format!("{field}.matchLabels"));
    for (i, expression) in list(selector, "matchExpressions").iter().enumerate() {
        let path = format!("{field}.matchExpressions[{i}]");
        let empty = Fields::new();
        let e = expression.as_object().unwrap_or(&empty);
        let values = strings(e, "values");
        match text(e, "operator") {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &format!("{path}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                &format!("{path}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                errs.push(FieldError::invalid(&format!("{path}.operator"), other, "not a valid selector operator"))
            }
        }
        let key = text(e, "key");
        for msg in validation::is_qualified_name(key) {
            errs.push(FieldError::invalid(&format!("{path}.key"), key, &msg));
        }
        for (j, value) in values.iter().enumerate() {
            for msg in validation::is_valid_label_value(value) {
                errs.push(FieldError::invalid(&format!("{path}.values[{j}]"), value, &msg));
            }
        }
    }
    errs
}

/// What `metav1.LabelSelectorAsSelector` makes of a selector.
#[derive(Debug, PartialEq)]
pub enum Selector<'a> {
    /// A nil selector: matches nothing.
    Nothing,
    /// A selector that does not convert (kube then reports it and skips the
    /// template check).
    Invalid,
    /// The requirements; none is `Everything` (kube's `Empty()`).
    Parsed(&'a Fields),
}

impl<'a> Selector<'a> {
    pub fn of(selector: Option<&'a Fields>, field: &str) -> Selector<'a> {
        match selector {
            None => Selector::Nothing,
            Some(s) if validate_label_selector(s, field).is_empty() => Selector::Parsed(s),
            Some(_) => Selector::Invalid,
        }
    }

    /// `selector.Empty()`: no requirement at all.
    pub fn is_empty(&self) -> bool {
        match self {
            Selector::Parsed(s) => {
                obj(s, "matchLabels").is_none_or(Map::is_empty) && list(s, "matchExpressions").is_empty()
            }
            _ => false,
        }
    }

    /// `selector.Matches(labels)`.
    pub fn matches(&self, labels: Option<&Fields>) -> bool {
        let Selector::Parsed(s) = self else { return false };
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let labels_match = obj(s, "matchLabels").is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
        labels_match
            && list(s, "matchExpressions").iter().filter_map(Value::as_object).all(|e| {
                let values = strings(e, "values");
                let value = label(text(e, "key"));
                match text(e, "operator") {
                    "In" => value.is_some_and(|v| values.contains(&v)),
                    "NotIn" => value.is_none_or(|v| !values.contains(&v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }
}

/// The message of a template whose labels the selector does not select.
pub const SELECTOR_MISMATCH: &str = "`selector` does not match template `labels`";

#[cfg(test)]
pub mod tests {
    use super::*;
    use serde_json::json;

    /// A pod spec as the core defaults leave it, valid under the core
    /// validation: what the workloads' tests embed.
    pub fn pod(restart_policy: &str) -> Value {
        json!({
            "containers": [{"name": "c", "image": "i", "resources": {}, "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": restart_policy, "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "securityContext": {}, "schedulerName": "default-scheduler"
        })
    }

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn go_renderings() {
        assert_eq!(go_string_map(None), "map[string]string(nil)");
        assert_eq!(go_string_map(Some(&fields(json!({"b": "2", "a": "1"})))), r#"map[string]string{"a":"1", "b":"2"}"#);
        assert_eq!(
            go_label_selector(Some(&fields(json!({"matchLabels": {"app": "web"}})))),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
        assert_eq!(go_int_or_string(&json!("120%")), r#"intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}"#);
        assert_eq!(go_int_or_string(&json!(-1)), r#"intstr.IntOrString{Type:0, IntVal:-1, StrVal:""}"#);
    }

    #[test]
    fn invalid_raw_prints_like_kube() {
        assert_eq!(
            invalid_raw("spec.replicas", "-1", "must be greater than or equal to 0").to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(
            not_supported("spec.x", "Foo", &["A", "B"]).to_string(),
            r#"spec.x: Unsupported value: "Foo": supported values: "A", "B""#
        );
    }

    // staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation: ValidateLabelSelectorRequirement
    #[test]
    fn selector_validation_and_matching() {
        let bad = fields(
            json!({"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Exists", "values": ["x"]}, {"key": "c", "operator": "Bogus"}]}),
        );
        let errs = validate_label_selector(&bad, "spec.selector");
        assert_eq!(errs[0].to_string(), "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
        assert_eq!(errs[1].to_string(), "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        assert_eq!(
            errs[2].to_string(),
            r#"spec.selector.matchExpressions[2].operator: Invalid value: "Bogus": not a valid selector operator"#
        );
        let good = fields(
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}),
        );
        let selector = Selector::of(Some(&good), "s");
        assert!(selector.matches(Some(&fields(json!({"app": "web", "tier": "fe"})))));
        assert!(!selector.matches(Some(&fields(json!({"app": "web", "tier": "db"})))));
        assert!(!selector.matches(None));
        assert!(!Selector::Nothing.matches(Some(&fields(json!({})))));
        assert!(Selector::of(Some(&fields(json!({}))), "s").is_empty());
    }
}
