//! Defaults of the `rbac.authorization.k8s.io` group's kinds, as
//! kube-apiserver v1.36 fills them on decode (`pkg/apis/rbac/v1/defaults.go`):
//! a binding's `roleRef.apiGroup` and each subject's `apiGroup` by its kind.
//! Roles and ClusterRoles have no defaults.
//!
//! Invariant: only empty fields are filled; no input panics.

use crate::strategy::Object;
use serde_json::{json, Value};

const GROUP_NAME: &str = "rbac.authorization.k8s.io";

pub fn apply(kind: &str, object: &mut Object) {
    if matches!(kind, "RoleBinding" | "ClusterRoleBinding") {
        binding(object);
    }
}

fn is_empty(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).unwrap_or("").is_empty()
}

// pkg/apis/rbac/v1/defaults.go: SetDefaults_RoleBinding,
// SetDefaults_ClusterRoleBinding, SetDefaults_Subject
fn binding(object: &mut Object) {
    if let Some(Value::Object(role_ref)) = object.get_mut("roleRef") {
        if is_empty(role_ref.get("apiGroup")) {
            role_ref.insert("apiGroup".into(), json!(GROUP_NAME));
        }
    }
    let Some(Value::Array(subjects)) = object.get_mut("subjects") else { return };
    for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
        if !is_empty(subject.get("apiGroup")) {
            continue;
        }
        // A ServiceAccount's group is "", which the omitempty field omits.
        if matches!(subject.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
            subject.insert("apiGroup".into(), json!(GROUP_NAME));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // pkg/apis/rbac/v1/defaults.go: SetDefaults_Subject, SetDefaults_RoleBinding
    #[test]
    fn binding_defaults() {
        let mut object = json!({
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                         {"kind": "ServiceAccount", "name": "s", "namespace": "n"}, {"kind": "Other", "name": "o"}]
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        apply("RoleBinding", &mut object);
        let v = Value::Object(object);
        assert_eq!(v["roleRef"]["apiGroup"], GROUP_NAME);
        assert_eq!(v["subjects"][0]["apiGroup"], GROUP_NAME);
        assert_eq!(v["subjects"][1]["apiGroup"], GROUP_NAME);
        // A ServiceAccount's apiGroup is "", which kube omits.
        assert!(v["subjects"][2].get("apiGroup").is_none());
        assert!(v["subjects"][3].get("apiGroup").is_none());
    }
}
