//! The RBAC objects kube-apiserver creates on a fresh cluster (its
//! "bootstrap policy", `plugin/pkg/auth/authorizer/rbac/bootstrappolicy`):
//! all 70 ClusterRoles (`cluster-admin`, the user-facing `admin`, `edit`
//! and `view` aggregated from the `system:aggregate-to-*` roles, the
//! `system:controller:*` roles of kube-controller-manager's controllers,
//! `system:kube-scheduler`, `system:node`, ...), the 51
//! ClusterRoleBindings, and the Roles and RoleBindings in `kube-system` and
//! `kube-public` (leader election, bootstrap signing, the
//! extension-apiserver-authentication reader). A Shardline server in RBAC
//! mode writes them at start-up where absent, so the real
//! kube-controller-manager and kube-scheduler find the permissions they
//! have on kube-apiserver, and an operator's later changes are kept across
//! restarts.
//!
//! The policy is data: `bootstrap_policy.json` holds each object's name,
//! namespace, labels, annotations and rules/aggregationRule/subjects/roleRef
//! as a v1.36 kube-apiserver served them (the items labelled
//! `kubernetes.io/bootstrapping: rbac-defaults` of
//! tests/fixtures/kube-v1.36/lists/rbac.authorization.k8s.io_v1_*.json;
//! regenerate by keeping those fields of those items). Pure data, no I/O;
//! the runtime appends them with an "absent" precondition.

use crate::types::key::ObjectKey;
use serde_json::Value;

const POLICY: &str = include_str!("bootstrap_policy.json");

/// Every bootstrap object, roles before the bindings that name them.
pub fn policy() -> Vec<(ObjectKey, Value)> {
    let data: Value = serde_json::from_str(POLICY).unwrap_or(Value::Null);
    let mut out = Vec::new();
    for (kind, resource) in [
        ("ClusterRole", "clusterroles"),
        ("Role", "roles"),
        ("ClusterRoleBinding", "clusterrolebindings"),
        ("RoleBinding", "rolebindings"),
    ] {
        for item in data[kind].as_array().into_iter().flatten() {
            let Value::Object(fields) = item else { continue };
            let metadata = &item["metadata"];
            let name = metadata["name"].as_str().unwrap_or("");
            let namespace = metadata["namespace"].as_str().unwrap_or("");
            let mut object = serde_json::Map::new();
            object.insert("kind".into(), kind.into());
            object.insert("apiVersion".into(), "rbac.authorization.k8s.io/v1".into());
            object.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            out.push((ObjectKey::new(super::rbac::RBAC_GROUP, resource, namespace, name), Value::Object(object)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rbac::RbacIndex;
    use crate::auth::{Attributes, UserInfo};

    #[test]
    fn the_bootstrap_policy_grants_what_kube_apiservers_does() {
        let mut index = RbacIndex::default();
        for (key, value) in policy() {
            index.apply(&key.encode(), Some(&serde_json::to_vec(&value).unwrap()));
        }
        let someone = UserInfo::authenticated("someone".into(), String::new(), vec![]);
        let path = |p: &str| Attributes { verb: "get".into(), path: p.into(), ..Attributes::default() };
        assert!(index.allows(&someone, &path("/apis/apps/v1")));
        assert!(index.allows(&UserInfo::anonymous(), &path("/healthz")));
        assert!(!index.allows(&UserInfo::anonymous(), &path("/apis")));
        let review = Attributes {
            verb: "create".into(),
            resource_request: true,
            api_group: "authorization.k8s.io".into(),
            resource: "selfsubjectaccessreviews".into(),
            ..Attributes::default()
        };
        assert!(index.allows(&someone, &review));
        let list_pods = Attributes {
            verb: "list".into(),
            resource_request: true,
            resource: "pods".into(),
            namespace: "default".into(),
            ..Attributes::default()
        };
        assert!(!index.allows(&someone, &list_pods));
        // `edit` aggregates the view and edit rules; `admin` adds roles.
        let edit = UserInfo::authenticated("ed".into(), String::new(), vec!["editors".into()]);
        index.apply(
            &ObjectKey::new("rbac.authorization.k8s.io", "rolebindings", "default", "e").encode(),
            Some(br#"{"subjects":[{"kind":"Group","name":"editors"}],"roleRef":{"kind":"ClusterRole","name":"edit"}}"#),
        );
        assert!(index.allows(&edit, &list_pods));
        assert!(index.allows(&edit, &Attributes { verb: "delete".into(), name: "p".into(), ..list_pods.clone() }));
        let roles = Attributes { api_group: "rbac.authorization.k8s.io".into(), resource: "roles".into(), ..list_pods };
        assert!(!index.allows(&edit, &roles));
    }

    #[test]
    fn the_policy_holds_what_the_control_plane_components_need() {
        let policy = policy();
        let count = |resource: &str| policy.iter().filter(|(k, _)| k.resource == resource).count();
        assert_eq!(
            (count("clusterroles"), count("clusterrolebindings"), count("roles"), count("rolebindings")),
            (70, 51, 7, 7)
        );
        let mut index = RbacIndex::default();
        for (key, value) in &policy {
            assert_eq!(value["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults", "{key:?}");
            index.apply(&key.encode(), Some(&serde_json::to_vec(value).unwrap()));
        }
        let attrs = |verb: &str, group: &str, resource: &str, namespace: &str| Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            ..Attributes::default()
        };
        let scheduler = UserInfo::authenticated("system:kube-scheduler".into(), String::new(), vec![]);
        assert!(index
            .allows(&scheduler, &Attributes { subresource: "binding".into(), ..attrs("create", "", "pods", "ns") }));
        assert!(index.allows(&scheduler, &attrs("update", "coordination.k8s.io", "leases", "kube-system")));
        assert!(!index.allows(&scheduler, &attrs("create", "", "secrets", "ns")));
        let manager = UserInfo::authenticated("system:kube-controller-manager".into(), String::new(), vec![]);
        assert!(index.allows(&manager, &attrs("list", "", "secrets", "")));
        assert!(index.allows(&manager, &attrs("create", "", "serviceaccounts", "kube-system")));
        let deployment_controller = UserInfo::authenticated(
            "system:serviceaccount:kube-system:deployment-controller".into(),
            String::new(),
            vec![],
        );
        assert!(index.allows(&deployment_controller, &attrs("create", "apps", "replicasets", "ns")));
        assert!(!index.allows(&deployment_controller, &attrs("create", "", "secrets", "ns")));
    }
}
