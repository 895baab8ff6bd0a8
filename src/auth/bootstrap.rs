//! The RBAC objects kube-apiserver creates on a fresh cluster (its
//! "bootstrap policy"), which a Shardline server in RBAC mode writes at
//! start-up when they are absent: `cluster-admin`, the user-facing `admin`,
//! `edit` and `view` (aggregated from the `system:aggregate-to-*` roles by
//! their labels), `system:discovery`, `system:basic-user`,
//! `system:public-info-viewer`, and their bindings. Pure data, no I/O; the
//! runtime appends them with an "absent" precondition, so an operator's
//! later changes are kept across restarts.

use crate::types::key::ObjectKey;
use serde_json::{json, Value};

const BOOTSTRAP_LABEL: &str = "kubernetes.io/bootstrapping";

fn metadata(name: &str, extra_labels: &[&str]) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert(BOOTSTRAP_LABEL.into(), json!("rbac-defaults"));
    for label in extra_labels {
        labels.insert(format!("rbac.authorization.k8s.io/{label}"), json!("true"));
    }
    json!({
        "name": name,
        "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, labels: &[&str], rules: Value) -> (ObjectKey, Value) {
    (
        ObjectKey::new(super::rbac::RBAC_GROUP, "clusterroles", "", name),
        json!({"kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1",
               "metadata": metadata(name, labels), "rules": rules}),
    )
}

fn aggregated(name: &str, label: &str) -> (ObjectKey, Value) {
    (
        ObjectKey::new(super::rbac::RBAC_GROUP, "clusterroles", "", name),
        json!({"kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1",
               "metadata": metadata(name, &[]),
               "aggregationRule": {"clusterRoleSelectors": [
                   {"matchLabels": {format!("rbac.authorization.k8s.io/{label}"): "true"}}]},
               "rules": []}),
    )
}

fn binding(name: &str, role: &str, groups: &[&str]) -> (ObjectKey, Value) {
    let subjects: Vec<Value> =
        groups.iter().map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g})).collect();
    (
        ObjectKey::new(super::rbac::RBAC_GROUP, "clusterrolebindings", "", name),
        json!({"kind": "ClusterRoleBinding", "apiVersion": "rbac.authorization.k8s.io/v1",
               "metadata": metadata(name, &[]),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": subjects}),
    )
}

/// The workload resources the `view`/`edit` roles cover, by group.
fn workloads() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "",
            vec![
                "pods",
                "pods/log",
                "pods/status",
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "services",
                "serviceaccounts",
                "events",
                "limitranges",
                "resourcequotas",
            ],
        ),
        (
            "apps",
            vec![
                "deployments",
                "deployments/scale",
                "daemonsets",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        ("batch", vec!["jobs", "cronjobs"]),
        ("autoscaling", vec!["horizontalpodautoscalers"]),
        ("networking.k8s.io", vec!["ingresses", "networkpolicies"]),
        ("policy", vec!["poddisruptionbudgets"]),
        ("discovery.k8s.io", vec!["endpointslices"]),
    ]
}

fn workload_rules(verbs: &[&str], extra_core: &[&str]) -> Value {
    let mut rules: Vec<Value> = workloads()
        .into_iter()
        .map(|(group, resources)| json!({"apiGroups": [group], "resources": resources, "verbs": verbs}))
        .collect();
    if !extra_core.is_empty() {
        rules.push(json!({"apiGroups": [""], "resources": extra_core, "verbs": verbs}));
    }
    Value::Array(rules)
}

/// Every bootstrap object, ClusterRoles before the bindings that name them.
pub fn policy() -> Vec<(ObjectKey, Value)> {
    let read = ["get", "list", "watch"];
    let write = ["create", "delete", "deletecollection", "patch", "update"];
    let public_paths = json!(["/healthz", "/livez", "/readyz", "/version", "/version/"]);
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        aggregated("admin", "aggregate-to-admin"),
        aggregated("edit", "aggregate-to-edit"),
        aggregated("view", "aggregate-to-view"),
        cluster_role(
            "system:aggregate-to-admin",
            &["aggregate-to-admin"],
            json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
                    "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]},
                   {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews"], "verbs": ["create"]}]),
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &["aggregate-to-admin", "aggregate-to-edit"],
            workload_rules(&write, &["secrets", "pods/exec", "pods/attach", "pods/portforward"]),
        ),
        cluster_role(
            "system:aggregate-to-view",
            &["aggregate-to-admin", "aggregate-to-edit", "aggregate-to-view"],
            workload_rules(&read, &["namespaces"]),
        ),
        cluster_role(
            "system:discovery",
            &[],
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                        "/openapi/*", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:basic-user",
            &[],
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]),
        ),
        cluster_role("system:public-info-viewer", &[], json!([{"nonResourceURLs": public_paths, "verbs": ["get"]}])),
        // What a component delegating authentication and authorization
        // (an aggregated API server, a webhook) needs.
        cluster_role(
            "system:auth-delegator",
            &[],
            json!([{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                   {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]),
        ),
        // The service account issuer's discovery documents, for service accounts.
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            json!([{"nonResourceURLs": ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                                        "/openid/v1/jwks", "/openid/v1/jwks/"],
                    "verbs": ["get"]}]),
        ),
        binding("cluster-admin", "cluster-admin", &["system:masters"]),
        binding("system:discovery", "system:discovery", &["system:authenticated"]),
        binding("system:basic-user", "system:basic-user", &["system:authenticated"]),
        binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &["system:serviceaccounts"],
        ),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
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
}
