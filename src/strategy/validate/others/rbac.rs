//! Validation of the `rbac.authorization.k8s.io` kinds with kube-apiserver
//! v1.36's rules and words (`pkg/apis/rbac/validation/validation.go`):
//! policy rules (verbs required; resource rules need apiGroups and
//! resources; nonResourceURLs only in ClusterRoles and never mixed with
//! resources), aggregation rules, bindings' roleRef (group, kind, name;
//! immutable) and subjects. Object names are checked by the API layer.

use super::common::*;
use crate::types::validation::{self, go_quote, FieldError};
use serde_json::Value;

const GROUP_NAME: &str = "rbac.authorization.k8s.io";

pub fn create(kind: &str, object: &Fields) -> Vec<FieldError> {
    match kind {
        "Role" => rules(object, true),
        "ClusterRole" => {
            let mut errs = rules(object, false);
            errs.extend(aggregation_rule(object));
            errs
        }
        "RoleBinding" => binding(object, true),
        "ClusterRoleBinding" => binding(object, false),
        _ => Vec::new(),
    }
}

pub fn update(kind: &str, object: &Fields, old: &Fields) -> Vec<FieldError> {
    let mut errs = create(kind, object);
    if matches!(kind, "RoleBinding" | "ClusterRoleBinding") && role_ref(object) != role_ref(old) {
        errs.push(invalid_raw("roleRef", &go_role_ref(object), "cannot change roleRef"));
    }
    errs
}

fn role_ref(object: &Fields) -> (&str, &str, &str) {
    match obj(object, "roleRef") {
        Some(r) => (text(r, "apiGroup"), text(r, "kind"), text(r, "name")),
        None => ("", "", ""),
    }
}

fn go_role_ref(object: &Fields) -> String {
    let (group, kind, name) = role_ref(object);
    format!("rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}", go_quote(group), go_quote(kind), go_quote(name))
}

// ValidatePolicyRule for each of `rules`.
fn rules(object: &Fields, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Fields::new();
    for (i, rule) in list(object, "rules").iter().enumerate() {
        let rule = rule.as_object().unwrap_or(&empty);
        let path = format!("rules[{i}]");
        if list(rule, "verbs").is_empty() {
            errs.push(FieldError::required(&format!("{path}.verbs"), "verbs must contain at least one value"));
        }
        let urls = list(rule, "nonResourceURLs");
        if !urls.is_empty() {
            let rendered = go_string_slice(rule.get("nonResourceURLs").and_then(Value::as_array));
            let field = format!("{path}.nonResourceURLs");
            if namespaced {
                errs.push(invalid_raw(&field, &rendered, "namespaced rules cannot apply to non-resource URLs"));
            }
            if ["apiGroups", "resources", "resourceNames"].iter().any(|k| !list(rule, k).is_empty()) {
                errs.push(invalid_raw(
                    &field,
                    &rendered,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if list(rule, "apiGroups").is_empty() {
            errs.push(FieldError::required(
                &format!("{path}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if list(rule, "resources").is_empty() {
            errs.push(FieldError::required(
                &format!("{path}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
    errs
}

// ValidateClusterRole: the aggregation rule.
fn aggregation_rule(object: &Fields) -> Vec<FieldError> {
    let Some(rule) = obj(object, "aggregationRule") else { return Vec::new() };
    let selectors = list(rule, "clusterRoleSelectors");
    if selectors.is_empty() {
        return vec![FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        )];
    }
    let empty = Fields::new();
    selectors
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            validate_label_selector(
                s.as_object().unwrap_or(&empty),
                &format!("aggregationRule.clusterRoleSelectors[{i}]"),
            )
        })
        .collect()
}

// ValidateRoleBinding / ValidateClusterRoleBinding
fn binding(object: &Fields, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (group, kind, name) = role_ref(object);
    if group != GROUP_NAME {
        errs.push(not_supported("roleRef.apiGroup", group, &[GROUP_NAME]));
    }
    let kinds: &[&str] = if namespaced { &["Role", "ClusterRole"] } else { &["ClusterRole"] };
    if !kinds.contains(&kind) {
        errs.push(not_supported("roleRef.kind", kind, kinds));
    }
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for msg in validation::is_valid_path_segment_name(name) {
            errs.push(FieldError::invalid("roleRef.name", name, &msg));
        }
    }
    let empty = Fields::new();
    for (i, subject) in list(object, "subjects").iter().enumerate() {
        errs.extend(subject_errors(subject.as_object().unwrap_or(&empty), namespaced, &format!("subjects[{i}]")));
    }
    errs
}

// ValidateRoleBindingSubject
fn subject_errors(subject: &Fields, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (name, group) = (text(subject, "name"), text(subject, "apiGroup"));
    if name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), ""));
    }
    match text(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                // ValidateServiceAccountName: a DNS-1123 subdomain.
                for msg in validation::is_dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(&format!("{path}.name"), name, &msg));
                }
            }
            if !group.is_empty() {
                errs.push(not_supported(&format!("{path}.apiGroup"), group, &[""]));
            }
            if !namespaced && text(subject, "namespace").is_empty() {
                errs.push(FieldError::required(&format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP_NAME {
                errs.push(not_supported(&format!("{path}.apiGroup"), group, &[GROUP_NAME]));
            }
        }
        other => errs.push(not_supported(&format!("{path}.kind"), other, &["ServiceAccount", "User", "Group"])),
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    // pkg/apis/rbac/validation/validation.go: ValidatePolicyRule
    #[test]
    fn policy_rules() {
        let role = fields(json!({"rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}
        ]}));
        assert_eq!(
            messages(&create("Role", &role)),
            vec![
                "rules[1].verbs: Required value: verbs must contain at least one value",
                "rules[1].apiGroups: Required value: resource rules must supply at least one api group",
                r#"rules[2].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs"#,
                r#"rules[2].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs"#,
            ]
        );
        let cluster = fields(json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}));
        assert!(create("ClusterRole", &cluster).is_empty());
        let aggregated = fields(json!({"aggregationRule": {}}));
        assert_eq!(messages(&create("ClusterRole", &aggregated)), vec![
            "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"]);
    }

    // ValidateRoleBinding, ValidateRoleBindingSubject, ValidateRoleBindingUpdate
    #[test]
    fn bindings() {
        let good = fields(json!({"roleRef": {"apiGroup": GROUP_NAME, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "n"}, {"kind": "User", "apiGroup": GROUP_NAME, "name": "u"}]}));
        assert!(create("RoleBinding", &good).is_empty());
        let errs = messages(&create("ClusterRoleBinding", &good));
        assert_eq!(errs, vec![r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#]);
        let bad = fields(
            json!({"roleRef": {"apiGroup": "x", "kind": "Role"}, "subjects": [{"kind": "Robot", "name": "r"}, {"kind": "ServiceAccount", "name": "sa"}]}),
        );
        assert_eq!(
            messages(&create("ClusterRoleBinding", &bad)),
            vec![
                r#"roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io""#,
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
                "roleRef.name: Required value",
                r#"subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
                "subjects[1].namespace: Required value",
            ]
        );
        let changed = fields(json!({"roleRef": {"apiGroup": GROUP_NAME, "kind": "ClusterRole", "name": "r"}}));
        assert_eq!(
            messages(&update("RoleBinding", &changed, &good)),
            vec![
                r#"roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"r"}: cannot change roleRef"#
            ]
        );
    }
}
