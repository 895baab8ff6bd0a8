//! Validation of the `admissionregistration.k8s.io` webhook configurations
//! (Validating/MutatingWebhookConfiguration) with kube-apiserver v1.36's rules
//! and words (`pkg/apis/admissionregistration/validation/validation.go`:
//! validateValidatingWebhook, validateMutatingWebhook, validateRuleWithOperations,
//! validateAdmissionReviewVersions; apiserver `util/webhook/validation.go`).
//! Match-condition CEL expressions are not compiled (listed in docs/types.md).
//!
//! Invariant: no input panics; a mistyped field reads as absent. Runs after
//! defaulting, so `failurePolicy`, `matchPolicy`, `timeoutSeconds` and the
//! service port are normally present.

use super::common::*;
use crate::types::validation::{self, FieldError};
use serde_json::Value;

const ACCEPTED_REVIEW_VERSIONS: &str = "v1, v1beta1";

/// What an update relaxes when the stored object already broke a rule
/// (kube's `validationOptions` computed from the old webhooks).
#[derive(Clone, Copy)]
pub struct Strictness {
    pub require_no_side_effects: bool,
    pub require_recognized_review_version: bool,
    pub require_unique_names: bool,
}

impl Strictness {
    /// On create every rule applies.
    pub const CREATE: Strictness = Strictness {
        require_no_side_effects: true,
        require_recognized_review_version: true,
        require_unique_names: true,
    };

    /// ValidateValidating/MutatingWebhookConfigurationUpdate: a rule the old
    /// object already broke is not enforced on its update.
    pub fn for_update(old: &Fields) -> Strictness {
        let hooks: Vec<&Fields> = list(old, "webhooks").iter().filter_map(Value::as_object).collect();
        let mut names: Vec<&str> = Vec::new();
        let unique = hooks.iter().all(|h| {
            let name = text(h, "name");
            let fresh = !names.contains(&name);
            names.push(name);
            fresh
        });
        Strictness {
            require_no_side_effects: hooks.iter().all(|h| {
                h.get("sideEffects").and_then(Value::as_str).is_some_and(|c| ["None", "NoneOnDryRun"].contains(&c))
            }),
            require_recognized_review_version: hooks.iter().all(|h| {
                let versions = strings(h, "admissionReviewVersions");
                versions.is_empty() || versions.iter().any(|v| ["v1", "v1beta1"].contains(v))
            }),
            require_unique_names: unique,
        }
    }
}

/// ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration
/// with the rules `strictness` keeps.
pub fn webhook_configuration(object: &Fields, mutating: bool, strictness: Strictness) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, hook) in list(object, "webhooks").iter().enumerate() {
        let at = format!("webhooks[{i}]");
        let Some(hook) = hook.as_object() else {
            errs.push(FieldError::required(&format!("{at}.name"), ""));
            continue;
        };
        errs.extend(webhook(hook, mutating, strictness.require_no_side_effects, &at));
        errs.extend(admission_review_versions(
            hook,
            strictness.require_recognized_review_version,
            &format!("{at}.admissionReviewVersions"),
        ));
        let name = text(hook, "name");
        if strictness.require_unique_names && !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(&format!("{at}.name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

/// apimachinery `IsFullyQualifiedName`.
fn fully_qualified_name(field: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let problems = validation::is_dns1123_subdomain(name);
    if !problems.is_empty() {
        return vec![FieldError::invalid(field, name, &problems.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            field,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

fn webhook(hook: &Fields, mutating: bool, require_no_side_effects: bool, at: &str) -> Vec<FieldError> {
    let mut errs = fully_qualified_name(&format!("{at}.name"), text(hook, "name"));
    for (i, rule) in list(hook, "rules").iter().enumerate() {
        let empty = Fields::new();
        errs.extend(rule_with_operations(rule.as_object().unwrap_or(&empty), &format!("{at}.rules[{i}]")));
    }
    let optional = |key: &str| hook.get(key).and_then(Value::as_str);
    if let Some(policy) = optional("failurePolicy").filter(|p| !["Fail", "Ignore"].contains(p)) {
        errs.push(not_supported(&format!("{at}.failurePolicy"), policy, &["Fail", "Ignore"]));
    }
    if let Some(policy) = optional("matchPolicy").filter(|p| !["Equivalent", "Exact"].contains(p)) {
        errs.push(not_supported(&format!("{at}.matchPolicy"), policy, &["Equivalent", "Exact"]));
    }
    // Only the side-effect-free classes, unless the stored object had others.
    let allowed_side_effects: &[&str] =
        if require_no_side_effects { &["None", "NoneOnDryRun"] } else { &["None", "NoneOnDryRun", "Some", "Unknown"] };
    match optional("sideEffects") {
        None => errs.push(FieldError::required(
            &format!("{at}.sideEffects"),
            &format!("must specify one of {}", allowed_side_effects.join(", ")),
        )),
        Some(class) if !allowed_side_effects.contains(&class) => {
            errs.push(not_supported(&format!("{at}.sideEffects"), class, allowed_side_effects));
        }
        Some(_) => {}
    }
    if let Some(timeout) = int(hook, "timeoutSeconds").filter(|t| !(1..=30).contains(t)) {
        errs.push(invalid_raw(
            &format!("{at}.timeoutSeconds"),
            &timeout.to_string(),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        if let Some(s) = obj(hook, selector) {
            errs.extend(validate_label_selector(s, &format!("{at}.{selector}")));
        }
    }
    if mutating {
        if let Some(policy) = optional("reinvocationPolicy").filter(|p| !["IfNeeded", "Never"].contains(p)) {
            errs.push(not_supported(&format!("{at}.reinvocationPolicy"), policy, &["IfNeeded", "Never"]));
        }
    }
    let empty = Fields::new();
    let client = obj(hook, "clientConfig").unwrap_or(&empty);
    let url = client.get("url").and_then(Value::as_str);
    let service = obj(client, "service");
    match (url, service) {
        (Some(url), None) => errs.extend(webhook_url(&format!("{at}.clientConfig.url"), url)),
        (None, Some(service)) => errs.extend(webhook_service(&format!("{at}.clientConfig.service"), service)),
        _ => {
            errs.push(FieldError::required(&format!("{at}.clientConfig"), "exactly one of url or service is required"))
        }
    }
    errs
}

/// validateRuleWithOperations and validateRule (subresources allowed).
pub(super) fn rule_with_operations(rule: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operations = strings(rule, "operations");
    if operations.is_empty() {
        errs.push(FieldError::required(&format!("{at}.operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        let quoted: Vec<String> = operations.iter().map(|o| validation::go_quote(o)).collect();
        errs.push(FieldError::invalid_bare(
            &format!("{at}.operations"),
            &format!("[]admissionregistration.OperationType{{{}}}", quoted.join(", ")),
            "if '*' is present, must not specify other operations",
        ));
    }
    const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            errs.push(not_supported(&format!("{at}.operations[{i}]"), op, &OPERATIONS));
        }
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(rule, key);
        if values.is_empty() {
            errs.push(FieldError::required(&format!("{at}.{key}"), ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            errs.push(FieldError::invalid_bare(
                &format!("{at}.{key}"),
                &go_string_slice(rule.get(key).and_then(Value::as_array)),
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    for (i, version) in strings(rule, "apiVersions").iter().enumerate() {
        if version.is_empty() {
            errs.push(FieldError::required(&format!("{at}.apiVersions[{i}]"), ""));
        }
    }
    errs.extend(resources(rule, &format!("{at}.resources")));
    if let Some(scope) = rule.get("scope").and_then(Value::as_str) {
        if !["*", "Cluster", "Namespaced"].contains(&scope) {
            errs.push(not_supported(&format!("{at}.scope"), scope, &["*", "Cluster", "Namespaced"]));
        }
    }
    errs
}

/// validateResources: wildcard resource and subresource combinations.
fn resources(rule: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = strings(rule, "resources");
    if values.is_empty() {
        errs.push(FieldError::required(at, ""));
    }
    let (mut wildcard_sub, mut wildcard_res) = (Vec::new(), Vec::new());
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, value) in values.iter().enumerate() {
        if value.is_empty() {
            errs.push(FieldError::required(&format!("{at}[{i}]"), ""));
            continue;
        }
        double |= *value == "*/*";
        single |= *value == "*";
        let Some((res, sub)) = value.split_once('/') else {
            plain = *value != "*";
            continue;
        };
        if wildcard_sub.contains(&res) {
            errs.push(FieldError::invalid(
                &format!("{at}[{i}]"),
                value,
                &format!("if '{res}/*' is present, must not specify {value}"),
            ));
        }
        if wildcard_res.contains(&sub) {
            errs.push(FieldError::invalid(
                &format!("{at}[{i}]"),
                value,
                &format!("if '*/{sub}' is present, must not specify {value}"),
            ));
        }
        if sub == "*" {
            wildcard_sub.push(res);
        }
        if res == "*" {
            wildcard_res.push(sub);
        }
    }
    let rendered = || go_string_slice(rule.get("resources").and_then(Value::as_array));
    if values.len() > 1 && double {
        errs.push(FieldError::invalid_bare(at, &rendered(), "if '*/*' is present, must not specify other resources"));
    }
    if single && plain {
        errs.push(FieldError::invalid_bare(
            at,
            &rendered(),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// validateAdmissionReviewVersions.
fn admission_review_versions(hook: &Fields, require_recognized: bool, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let versions = strings(hook, "admissionReviewVersions");
    if versions.is_empty() {
        errs.push(FieldError::required(at, &format!("must specify one of {ACCEPTED_REVIEW_VERSIONS}")));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        if seen.contains(version) {
            errs.push(FieldError::invalid(&format!("{at}[{i}]"), version, "duplicate version"));
            continue;
        }
        seen.push(version);
        for problem in validation::is_dns1035_label(version) {
            errs.push(FieldError::invalid(&format!("{at}[{i}]"), version, &problem));
        }
    }
    if require_recognized && !versions.iter().any(|v| ["v1", "v1beta1"].contains(v)) {
        errs.push(FieldError::invalid_bare(
            at,
            &go_string_slice(hook.get("admissionReviewVersions").and_then(Value::as_array)),
            &format!("must include at least one of {ACCEPTED_REVIEW_VERSIONS}"),
        ));
    }
    errs
}

/// apiserver `ValidateWebhookURL` with https forced, on Go's URL split
/// (scheme, user info, host, query, fragment).
fn webhook_url(at: &str, url: &str) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((s, r)) if !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c)) => {
            (s.to_ascii_lowercase(), r)
        }
        _ => (String::new(), rest),
    };
    let authority = rest.strip_prefix("//").map(|r| r.split('/').next().unwrap_or("")).unwrap_or("");
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if scheme != "https" {
        errs.push(FieldError::invalid(at, &scheme, &format!("'https' is the only allowed URL scheme{FORM}")));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(at, host, &format!("host must be provided{FORM}")));
    }
    if let Some(user) = user {
        errs.push(FieldError::invalid(at, user, "user information is not permitted in the URL"));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(at, fragment, "fragments are not permitted in the URL"));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(at, query, "query parameters are not permitted in the URL"));
    }
    errs
}

/// apiserver `ValidateWebhookService`. kube passes the service's name where
/// the function expects the namespace and the reverse, so the two messages
/// trade places; the outcome for a missing field is kept as kube reports it.
fn webhook_service(at: &str, service: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // Argument order in kube: (name, namespace) into (namespace, name).
    let (as_namespace, as_name) = (text(service, "name"), text(service, "namespace"));
    if as_name.is_empty() {
        errs.push(FieldError::required(&format!("{at}.name"), "service name is required"));
    }
    if as_namespace.is_empty() {
        errs.push(FieldError::required(&format!("{at}.namespace"), "service namespace is required"));
    }
    let port = int(service, "port").unwrap_or(443);
    let problems = validation::is_valid_port_num(port);
    if !problems.is_empty() {
        errs.push(invalid_raw(
            &format!("{at}.port"),
            &port.to_string(),
            &format!("port is not valid: {}", problems.join(", ")),
        ));
    }
    let Some(path) = service.get("path").and_then(Value::as_str) else { return errs };
    if path.is_empty() || path == "/" {
        return errs;
    }
    let field = format!("{at}.path");
    if path == "//" {
        errs.push(FieldError::invalid(&field, path, "segment[0] may not be empty"));
        return errs;
    }
    if !path.starts_with('/') {
        errs.push(FieldError::invalid(&field, path, "must start with a '/'"));
    }
    let inner = path.get(1..).unwrap_or("");
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(&field, path, &format!("segment[{i}] may not be empty")));
            continue;
        }
        for problem in validation::is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(&field, path, &format!("segment[{i}]: {problem}")));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(hooks: Value) -> Fields {
        json!({"webhooks": hooks}).as_object().cloned().unwrap_or_default()
    }

    fn valid_hook() -> Value {
        json!({
            "name": "check.example.com",
            "clientConfig": {"service": {"namespace": "default", "name": "svc", "port": 443, "path": "/validate"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "*"}],
            "failurePolicy": "Fail", "matchPolicy": "Equivalent", "sideEffects": "None", "timeoutSeconds": 10,
            "admissionReviewVersions": ["v1"]
        })
    }

    fn messages(object: &Fields, mutating: bool) -> Vec<String> {
        webhook_configuration(object, mutating, Strictness::CREATE).iter().map(ToString::to_string).collect()
    }

    fn with(patch: Value) -> Value {
        let mut hook = valid_hook();
        if let (Some(h), Some(p)) = (hook.as_object_mut(), patch.as_object()) {
            for (k, v) in p {
                h.insert(k.clone(), v.clone());
            }
        }
        hook
    }

    #[test]
    fn a_valid_configuration_is_accepted() {
        assert_eq!(messages(&config(json!([valid_hook()])), false), Vec::<String>::new());
        let url = with(
            json!({"clientConfig": {"url": "https://hooks.example.com:8443/x"}, "reinvocationPolicy": "IfNeeded"}),
        );
        assert_eq!(messages(&config(json!([url])), true), Vec::<String>::new());
    }

    #[test]
    fn each_rule_is_refused_with_kube_words() {
        let cases: Vec<(Value, bool, Vec<&str>)> = vec![
            (with(json!({"name": ""})), false, vec!["webhooks[0].name: Required value"]),
            (
                with(json!({"name": "check.example"})),
                false,
                vec!["webhooks[0].name: Invalid value: \"check.example\": should be a domain with at least three segments separated by dots"],
            ),
            (
                with(json!({"failurePolicy": "Maybe"})),
                false,
                vec!["webhooks[0].failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\""],
            ),
            (
                with(json!({"matchPolicy": "Loose"})),
                false,
                vec!["webhooks[0].matchPolicy: Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\""],
            ),
            (
                with(json!({"sideEffects": null})),
                false,
                vec!["webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"],
            ),
            (
                with(json!({"sideEffects": "Some"})),
                false,
                vec!["webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""],
            ),
            (
                with(json!({"timeoutSeconds": 31})),
                false,
                vec!["webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"],
            ),
            (
                with(json!({"reinvocationPolicy": "Always"})),
                true,
                vec!["webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\""],
            ),
            (
                with(json!({"clientConfig": {}})),
                false,
                vec!["webhooks[0].clientConfig: Required value: exactly one of url or service is required"],
            ),
            (
                with(json!({"clientConfig": {"url": "http://h.example.com?a=b"}})),
                false,
                vec![
                    "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                    "webhooks[0].clientConfig.url: Invalid value: \"a=b\": query parameters are not permitted in the URL",
                ],
            ),
            (
                with(json!({"clientConfig": {"service": {"name": "svc", "namespace": "default", "port": 0, "path": "x//"}}})),
                false,
                vec![
                    "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                    "webhooks[0].clientConfig.service.path: Invalid value: \"x//\": must start with a '/'",
                    "webhooks[0].clientConfig.service.path: Invalid value: \"x//\": segment[0] may not be empty",
                    "webhooks[0].clientConfig.service.path: Invalid value: \"x//\": segment[1] may not be empty",
                ],
            ),
            (
                with(json!({"rules": [{"operations": ["*", "CREATE"], "apiGroups": [], "apiVersions": ["v1"], "resources": ["*", "pods"]}]})),
                false,
                vec![
                    "webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"CREATE\"}: if '*' is present, must not specify other operations",
                    "webhooks[0].rules[0].apiGroups: Required value",
                    "webhooks[0].rules[0].resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources without subresources",
                ],
            ),
            (
                with(json!({"rules": [{"operations": ["PATCH"], "apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["pods/*", "pods/log"], "scope": "Global"}]})),
                false,
                vec![
                    "webhooks[0].rules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
                    "webhooks[0].rules[0].resources[1]: Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log",
                    "webhooks[0].rules[0].scope: Unsupported value: \"Global\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
                ],
            ),
            (
                with(json!({"admissionReviewVersions": []})),
                false,
                vec!["webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"],
            ),
            (
                with(json!({"admissionReviewVersions": ["v2", "v2"]})),
                false,
                vec![
                    "webhooks[0].admissionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
                    "webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\", \"v2\"}: must include at least one of v1, v1beta1",
                ],
            ),
        ];
        for (hook, mutating, want) in cases {
            assert_eq!(messages(&config(json!([hook])), mutating), want, "{hook}");
        }
        assert_eq!(
            messages(&config(json!([valid_hook(), valid_hook()])), false),
            ["webhooks[1].name: Duplicate value: \"check.example.com\""]
        );
    }

    #[test]
    fn an_update_keeps_what_the_stored_object_already_broke() {
        let old = config(json!([with(json!({"sideEffects": "Some"})), with(json!({"sideEffects": "Some"}))]));
        let strictness = Strictness::for_update(&old);
        assert!(webhook_configuration(&old, false, strictness).is_empty());
        let fresh = config(json!([with(json!({"sideEffects": "Some"}))]));
        assert_eq!(
            messages(&fresh, false),
            ["webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""]
        );
        assert_eq!(
            webhook_configuration(&config(json!([with(json!({"sideEffects": "Maybe"}))])), false, strictness)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["webhooks[0].sideEffects: Unsupported value: \"Maybe\": supported values: \"None\", \"NoneOnDryRun\", \"Some\", \"Unknown\""]
        );
    }
}
