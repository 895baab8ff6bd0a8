//! APIService validation with kube-aggregator v1.36's words
//! (`pkg/apis/apiregistration/validation/validation.go`: `ValidateAPIService`):
//! the name is `spec.version + "." + spec.group` (its path-segment rule is the
//! API layer's), the group a DNS subdomain (empty only for `v1`), the
//! version a DNS-1035 label, the priorities in range, and a service
//! reference complete (a local APIService has no caBundle and no
//! insecureSkipTLSVerify); through `/status`, only each condition's status
//! (`ValidateAPIServiceStatusUpdate`: True, False or Unknown).
//!
//! Compared with kubernetes/kubernetes 3e4a7900 (the copy with the service
//! port rule; the file has not changed its rules since): same rules, words
//! and order.
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, FieldError};
use serde_json::Value;

pub fn api_service(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let group = text(spec, "group");
    let version = text(spec, "version");
    let mut errs = Vec::new();
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let required = format!("{version}.{group}");
    if !name.is_empty() && validation::is_valid_path_segment_name(name).is_empty() && name != required {
        let message = format!("must be `spec.version+\".\"+spec.group`: {}", validation::go_quote(&required));
        errs.push(FieldError::invalid("metadata.name", name, &message));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required("spec.group", "only v1 may have an empty group and it better be legacy kube"));
    }
    if !group.is_empty() {
        for message in validation::is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", group, &message));
        }
    }
    for message in validation::is_dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", version, &message));
    }
    let group_priority = int(spec, "groupPriorityMinimum").unwrap_or(0);
    if group_priority <= 0 || group_priority > 20000 {
        errs.push(invalid_raw(
            "spec.groupPriorityMinimum",
            &group_priority.to_string(),
            "must be positive and less than 20000",
        ));
    }
    let version_priority = int(spec, "versionPriority").unwrap_or(0);
    if version_priority <= 0 || version_priority > 1000 {
        errs.push(invalid_raw(
            "spec.versionPriority",
            &version_priority.to_string(),
            "must be positive and less than 1000",
        ));
    }
    // caBundle is []byte: base64 in JSON.
    let ca_bundle_bytes = spec.get("caBundle").and_then(Value::as_str).map(base64_len).unwrap_or(0);
    let insecure = spec.get("insecureSkipTLSVerify").and_then(Value::as_bool).unwrap_or(false);
    let Some(service) = obj(spec, "service") else {
        if ca_bundle_bytes != 0 {
            errs.push(FieldError::invalid(
                "spec.caBundle",
                &format!("{ca_bundle_bytes} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(invalid_raw(
                "spec.insecureSkipTLSVerify",
                "true",
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    if text(service, "namespace").is_empty() {
        errs.push(FieldError::required("spec.service.namespace", ""));
    }
    if text(service, "name").is_empty() {
        errs.push(FieldError::required("spec.service.name", ""));
    }
    let port = int(service, "port").unwrap_or(0);
    let port_errors = validation::is_valid_port_num(port);
    if !port_errors.is_empty() {
        errs.push(invalid_raw(
            "spec.service.port",
            &port.to_string(),
            &format!("port is not valid: {}", port_errors.join(", ")),
        ));
    }
    if insecure && ca_bundle_bytes > 0 {
        errs.push(invalid_raw("spec.insecureSkipTLSVerify", "true", "may not be true if caBundle is present"));
    }
    errs
}

/// `ValidateAPIServiceStatus`: each condition's status is one of kube's three.
pub fn api_service_status(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let status = obj(object, "status").unwrap_or(&empty);
    let mut errs = Vec::new();
    for (i, condition) in list(status, "conditions").iter().enumerate() {
        let value = condition.get("status").and_then(Value::as_str).unwrap_or("");
        if !matches!(value, "True" | "False" | "Unknown") {
            errs.push(not_supported(&format!("status.conditions[{i}].status"), value, &["True", "False", "Unknown"]));
        }
    }
    errs
}

/// The decoded length of standard base64 text.
fn base64_len(text: &str) -> usize {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).map(|b| b.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(object: Value) -> Vec<String> {
        api_service(object.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_api_services_pass() {
        assert!(messages(json!({"metadata": {"name": "v1.example.org"}, "spec": {"group": "example.org",
            "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}}))
        .is_empty());
        assert!(messages(json!({"metadata": {"name": "v1beta1.metrics.k8s.io"}, "spec": {"group": "metrics.k8s.io",
            "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}}))
        .is_empty());
        assert!(messages(json!({"metadata": {"name": "v1."}, "spec": {"version": "v1",
            "groupPriorityMinimum": 18000, "versionPriority": 1}}))
        .is_empty());
    }

    #[test]
    fn status_conditions_are_true_false_or_unknown() {
        assert!(messages_of(
            api_service_status,
            json!({"status": {"conditions": [
            {"type": "Available", "status": "True"}, {"type": "Available", "status": "Unknown"}]}})
        )
        .is_empty());
        assert_eq!(
            messages_of(api_service_status, json!({"status": {"conditions": [{"type": "Available", "status": "False"},
                {"type": "Available", "status": "true"}, {"type": "Available"}]}})),
            [
                "status.conditions[1].status: Unsupported value: \"true\": supported values: \"True\", \"False\", \"Unknown\"",
                "status.conditions[2].status: Unsupported value: \"\": supported values: \"True\", \"False\", \"Unknown\"",
            ]
        );
    }

    fn messages_of(f: fn(&Fields) -> Vec<FieldError>, object: Value) -> Vec<String> {
        f(object.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn invalid_api_services_get_kube_words() {
        assert_eq!(
            messages(json!({"metadata": {"name": "example"}, "spec": {"version": "V1", "groupPriorityMinimum": 0,
                "versionPriority": 1001, "caBundle": "AAEC", "insecureSkipTLSVerify": true}})),
            [
                "metadata.name: Invalid value: \"example\": must be `spec.version+\".\"+spec.group`: \"V1.\"",
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
                "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                "spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        assert_eq!(
            messages(json!({"metadata": {"name": "v1.example.org"}, "spec": {"group": "example.org", "version": "v1",
                "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAEC", "insecureSkipTLSVerify": true,
                "service": {"port": 0}}})),
            [
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ]
        );
    }
}
