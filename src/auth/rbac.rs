//! Each shard's index of RBAC objects (Role, ClusterRole, RoleBinding,
//! ClusterRoleBinding), maintained from the committed entries the shard
//! applies, and the evaluation of a request against it.
//!
//! Architecture invariant: every shard applies every committed entry, so
//! every shard's index is the same at the same revision and a check reads
//! only its own core's index (it waits, at most, for its own shard to apply
//! the commit point, so a role change acknowledged to anyone is seen by the
//! next request on every core). No I/O.
//!
//! Aggregated ClusterRoles (`aggregationRule`) are resolved in the index:
//! a ClusterRole's effective rules are its own plus the effective rules of
//! every ClusterRole its selectors match (transitively), recomputed
//! whenever a ClusterRole changes. The stored object keeps the rules it was written with (kube's
//! controller writes the union back into the object; Shardline answers
//! authorization and the review APIs from the index instead).

use super::{Attributes, UserInfo};
use crate::types::key::ObjectKey;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// One rule of a Role or ClusterRole (`rbac/v1.PolicyRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    #[serde(default, deserialize_with = "null_as_empty")]
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    #[serde(default, rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

fn has_or_star(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

impl PolicyRule {
    /// kube's `RuleAllows`: verb, group, resource (with `*/subresource`
    /// and `resource/subresource`), and resourceNames for requests that
    /// name an object; paths by exact match or a trailing `*` prefix.
    pub fn allows(&self, a: &Attributes) -> bool {
        if !has_or_star(&self.verbs, &a.verb) {
            return false;
        }
        if !a.resource_request {
            return self.non_resource_urls.iter().any(|u| {
                u == "*" || *u == a.path || u.strip_suffix('*').is_some_and(|prefix| a.path.starts_with(prefix))
            });
        }
        if !has_or_star(&self.api_groups, &a.api_group) {
            return false;
        }
        let combined =
            if a.subresource.is_empty() { a.resource.clone() } else { format!("{}/{}", a.resource, a.subresource) };
        let resource_ok = self.resources.iter().any(|r| {
            r == "*"
                || *r == combined
                || (!a.subresource.is_empty() && r.strip_prefix("*/").is_some_and(|s| s == a.subresource))
        });
        if !resource_ok {
            return false;
        }
        self.resource_names.is_empty() || (!a.name.is_empty() && self.resource_names.contains(&a.name))
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
struct Metadata {
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LabelSelectorRequirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LabelSelector {
    #[serde(default)]
    match_labels: BTreeMap<String, String>,
    #[serde(default)]
    match_expressions: Vec<LabelSelectorRequirement>,
}

impl LabelSelector {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|e| match e.operator.as_str() {
                "In" => labels.get(&e.key).is_some_and(|v| e.values.contains(v)),
                "NotIn" => labels.get(&e.key).is_none_or(|v| !e.values.contains(v)),
                "Exists" => labels.contains_key(&e.key),
                "DoesNotExist" => !labels.contains_key(&e.key),
                _ => false,
            })
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AggregationRule {
    #[serde(default)]
    cluster_role_selectors: Vec<LabelSelector>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoleObject {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default, deserialize_with = "null_as_empty")]
    rules: Vec<PolicyRule>,
    #[serde(default)]
    aggregation_rule: Option<AggregationRule>,
}

/// A list that kube stores as `null` when empty (`rules` and `verbs` have no
/// `omitempty`: an aggregated ClusterRole is stored with `"rules": null`).
fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub namespace: String,
}

impl Subject {
    fn matches(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => self.name == user.name,
            "Group" => user.in_group(&self.name),
            "ServiceAccount" => {
                let namespace = if self.namespace.is_empty() { binding_namespace } else { &self.namespace };
                user.name == format!("system:serviceaccount:{namespace}:{}", self.name)
            }
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct RoleRef {
    pub kind: String,
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BindingObject {
    #[serde(default)]
    subjects: Vec<Subject>,
    #[serde(default)]
    role_ref: RoleRef,
}

#[derive(Clone, Debug, Default)]
struct ClusterRole {
    labels: BTreeMap<String, String>,
    rules: Vec<PolicyRule>,
    aggregation: Option<Vec<LabelSelector>>,
    /// Own rules plus those of the roles the aggregation selects.
    effective: Arc<Vec<PolicyRule>>,
}

/// One shard's RBAC objects. Cheap to clone (bindings and rules are
/// shared), so the runtime can replace it copy-on-write.
#[derive(Clone, Debug, Default)]
pub struct RbacIndex {
    roles: HashMap<(String, String), Arc<Vec<PolicyRule>>>,
    cluster_roles: HashMap<String, ClusterRole>,
    role_bindings: HashMap<(String, String), Arc<BindingObject>>,
    cluster_role_bindings: HashMap<String, Arc<BindingObject>>,
}

/// Whether a log key holds an RBAC object (the runtime applies only these).
pub fn is_rbac_key(key: &[u8]) -> bool {
    crate::types::key::group_resource(key).is_some_and(|(group, _)| group == RBAC_GROUP)
}

impl RbacIndex {
    /// Applies one committed change: `Some(value)` is a put, `None` a
    /// delete. Keys of other resources and values that do not parse leave
    /// the index as it was (an unreadable object grants nothing).
    pub fn apply(&mut self, key: &[u8], value: Option<&[u8]>) {
        let Some(key) = ObjectKey::decode(key) else { return };
        if key.group != RBAC_GROUP {
            return;
        }
        let named = (key.namespace.clone(), key.name.clone());
        match key.resource.as_str() {
            "roles" => match value.and_then(|v| serde_json::from_slice::<RoleObject>(v).ok()) {
                Some(role) => {
                    self.roles.insert(named, Arc::new(role.rules));
                }
                None => {
                    self.roles.remove(&named);
                }
            },
            "clusterroles" => {
                match value.and_then(|v| serde_json::from_slice::<RoleObject>(v).ok()) {
                    Some(role) => {
                        let aggregation = role.aggregation_rule.map(|a| a.cluster_role_selectors);
                        self.cluster_roles.insert(
                            key.name,
                            ClusterRole {
                                labels: role.metadata.labels,
                                rules: role.rules,
                                aggregation,
                                effective: Arc::default(),
                            },
                        );
                    }
                    None => {
                        self.cluster_roles.remove(&key.name);
                    }
                }
                self.aggregate();
            }
            "rolebindings" => match value.and_then(|v| serde_json::from_slice::<BindingObject>(v).ok()) {
                Some(binding) => {
                    self.role_bindings.insert(named, Arc::new(binding));
                }
                None => {
                    self.role_bindings.remove(&named);
                }
            },
            "clusterrolebindings" => match value.and_then(|v| serde_json::from_slice::<BindingObject>(v).ok()) {
                Some(binding) => {
                    self.cluster_role_bindings.insert(key.name, Arc::new(binding));
                }
                None => {
                    self.cluster_role_bindings.remove(&key.name);
                }
            },
            _ => {}
        }
    }

    /// Recomputes every ClusterRole's effective rules (ClusterRoles change
    /// rarely; there are tens to hundreds of them). Aggregation is
    /// transitive, as kube's controller makes it by writing unions back: a
    /// role that aggregates an aggregating role gets its sources' rules too.
    /// Rules only grow, so this reaches its fixed point in at most one round
    /// per ClusterRole.
    fn aggregate(&mut self) {
        for role in self.cluster_roles.values_mut() {
            role.effective = Arc::new(role.rules.clone());
        }
        for _ in 0..self.cluster_roles.len() {
            let snapshot: Vec<(String, BTreeMap<String, String>, Arc<Vec<PolicyRule>>)> =
                self.cluster_roles.iter().map(|(n, r)| (n.clone(), r.labels.clone(), r.effective.clone())).collect();
            let mut changed = false;
            for (name, role) in self.cluster_roles.iter_mut() {
                let Some(selectors) = &role.aggregation else { continue };
                let mut rules = (*role.effective).clone();
                for (other, labels, other_rules) in &snapshot {
                    if other != name && selectors.iter().any(|s| s.matches(labels)) {
                        for rule in other_rules.iter() {
                            if !rules.contains(rule) {
                                rules.push(rule.clone());
                                changed = true;
                            }
                        }
                    }
                }
                role.effective = Arc::new(rules);
            }
            if !changed {
                break;
            }
        }
    }

    /// The rules of the role a binding in `namespace` refers to (a
    /// ClusterRole's including what it aggregates); None when it does not exist.
    pub fn referenced_rules(&self, role_ref: &RoleRef, namespace: &str) -> Option<Arc<Vec<PolicyRule>>> {
        self.role_rules(role_ref, namespace)
    }

    fn role_rules(&self, role_ref: &RoleRef, namespace: &str) -> Option<Arc<Vec<PolicyRule>>> {
        match role_ref.kind.as_str() {
            "ClusterRole" => self.cluster_roles.get(&role_ref.name).map(|r| r.effective.clone()),
            "Role" => self.roles.get(&(namespace.to_string(), role_ref.name.clone())).cloned(),
            _ => None,
        }
    }

    /// Calls `visit` with the rules that apply to `user` in `namespace`
    /// (cluster-wide bindings always; role bindings of that namespace when
    /// it is not empty) until it returns true.
    fn visit_rules(&self, user: &UserInfo, namespace: &str, mut visit: impl FnMut(&PolicyRule) -> bool) -> bool {
        for binding in self.cluster_role_bindings.values() {
            if binding.subjects.iter().any(|s| s.matches(user, "")) {
                if let Some(rules) = self.role_rules(&binding.role_ref, "") {
                    if rules.iter().any(&mut visit) {
                        return true;
                    }
                }
            }
        }
        if namespace.is_empty() {
            return false;
        }
        for ((binding_namespace, _), binding) in &self.role_bindings {
            if binding_namespace == namespace && binding.subjects.iter().any(|s| s.matches(user, namespace)) {
                if let Some(rules) = self.role_rules(&binding.role_ref, namespace) {
                    if rules.iter().any(&mut visit) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether RBAC allows `attributes` for `user`.
    pub fn allows(&self, user: &UserInfo, attributes: &Attributes) -> bool {
        let namespace = if attributes.resource_request { attributes.namespace.as_str() } else { "" };
        self.visit_rules(user, namespace, |rule| rule.allows(attributes))
    }

    /// Every rule that applies to `user` in `namespace` (the
    /// SelfSubjectRulesReview answer), without duplicates.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        let mut rules: Vec<PolicyRule> = Vec::new();
        self.visit_rules(user, namespace, |rule| {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
            false
        });
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_rules_as_kube_stores_them_read_as_empty() {
        let role: RoleObject = serde_json::from_str(r#"{"metadata":{"name":"a"},"rules":null}"#).unwrap();
        assert!(role.rules.is_empty());
        let rule: PolicyRule = serde_json::from_str(r#"{"verbs":null,"resources":["pods"]}"#).unwrap();
        assert!(rule.verbs.is_empty());
    }

    fn key(resource: &str, namespace: &str, name: &str) -> Vec<u8> {
        ObjectKey::new(RBAC_GROUP, resource, namespace, name).encode().to_vec()
    }

    fn put(index: &mut RbacIndex, resource: &str, namespace: &str, name: &str, value: serde_json::Value) {
        index.apply(&key(resource, namespace, name), Some(&serde_json::to_vec(&value).unwrap()));
    }

    fn request(verb: &str, resource: &str, namespace: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo::authenticated(name.into(), String::new(), groups.iter().map(|g| g.to_string()).collect())
    }

    #[test]
    fn roles_and_bindings_grant_what_they_name_and_nothing_else() {
        let mut index = RbacIndex::default();
        let alice = user("alice", &[]);
        put(
            &mut index,
            "roles",
            "team",
            "reader",
            json!({"metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}]}),
        );
        assert!(!index.allows(&alice, &request("list", "pods", "team", "")), "no binding yet");
        put(
            &mut index,
            "rolebindings",
            "team",
            "alice-reads",
            json!({
            "subjects": [{"kind": "User", "name": "alice"}], "roleRef": {"kind": "Role", "name": "reader"}}),
        );
        assert!(index.allows(&alice, &request("list", "pods", "team", "")));
        assert!(index.allows(&alice, &request("watch", "pods", "team", "")));
        assert!(!index.allows(&alice, &request("list", "pods", "other", "")));
        assert!(!index.allows(&alice, &request("list", "pods", "", "")), "not cluster-wide");
        assert!(!index.allows(&alice, &request("delete", "pods", "team", "p")));
        assert!(!index.allows(&alice, &request("list", "configmaps", "team", "")));
        let mut log = request("get", "pods", "team", "p");
        log.subresource = "log".into();
        assert!(index.allows(&alice, &log));
        log.subresource = "exec".into();
        assert!(!index.allows(&alice, &log));
        assert!(!index.allows(&user("bob", &[]), &request("list", "pods", "team", "")));
        // Deleting the binding takes the grant away.
        index.apply(&key("rolebindings", "team", "alice-reads"), None);
        assert!(!index.allows(&alice, &request("list", "pods", "team", "")));
    }

    #[test]
    fn cluster_bindings_groups_resource_names_and_paths() {
        let mut index = RbacIndex::default();
        put(
            &mut index,
            "clusterroles",
            "",
            "one-config",
            json!({"metadata": {"name": "one-config"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["only"], "verbs": ["get", "watch"]},
                      {"nonResourceURLs": ["/healthz", "/apis/*"], "verbs": ["get"]}]}),
        );
        put(
            &mut index,
            "clusterrolebindings",
            "",
            "ops",
            json!({
            "subjects": [{"kind": "Group", "name": "ops"}], "roleRef": {"kind": "ClusterRole", "name": "one-config"}}),
        );
        let carol = user("carol", &["ops"]);
        assert!(index.allows(&carol, &request("get", "configmaps", "any", "only")));
        assert!(index.allows(&carol, &request("watch", "configmaps", "any", "only")));
        assert!(!index.allows(&carol, &request("get", "configmaps", "any", "other")));
        assert!(!index.allows(&carol, &request("list", "configmaps", "any", "")), "a list names no object");
        let path = |p: &str| Attributes { verb: "get".into(), path: p.into(), ..Attributes::default() };
        assert!(index.allows(&carol, &path("/healthz")));
        assert!(index.allows(&carol, &path("/apis/apps")));
        assert!(!index.allows(&carol, &path("/livez")));
        assert!(!index.allows(&user("dave", &[]), &path("/healthz")));
        // A ServiceAccount subject.
        put(
            &mut index,
            "clusterrolebindings",
            "",
            "sa",
            json!({
            "subjects": [{"kind": "ServiceAccount", "name": "builder", "namespace": "ci"}],
            "roleRef": {"kind": "ClusterRole", "name": "one-config"}}),
        );
        assert!(index.allows(&user("system:serviceaccount:ci:builder", &[]), &path("/healthz")));
    }

    #[test]
    fn aggregated_cluster_roles_follow_their_sources() {
        let mut index = RbacIndex::default();
        put(
            &mut index,
            "clusterroles",
            "",
            "view",
            json!({"metadata": {"name": "view"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-view": "true"}}]}, "rules": []}),
        );
        put(
            &mut index,
            "clusterrolebindings",
            "",
            "viewers",
            json!({
            "subjects": [{"kind": "User", "name": "erin"}], "roleRef": {"kind": "ClusterRole", "name": "view"}}),
        );
        let erin = user("erin", &[]);
        let list_widgets = Attributes { api_group: "example.com".into(), ..request("list", "widgets", "x", "") };
        assert!(!index.allows(&erin, &list_widgets));
        put(
            &mut index,
            "clusterroles",
            "",
            "widget-viewer",
            json!({"metadata": {"name": "widget-viewer", "labels": {"aggregate-to-view": "true"}},
            "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list"]}]}),
        );
        assert!(index.allows(&erin, &list_widgets));
        assert_eq!(index.rules_for(&erin, "x").len(), 1);
        // Transitive: a role aggregating `view` (labelled) gets the widget rule too.
        put(
            &mut index,
            "clusterroles",
            "",
            "view",
            json!({"metadata": {"name": "view", "labels": {"aggregate-to-edit": "true"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-view": "true"}}]}, "rules": []}),
        );
        put(
            &mut index,
            "clusterroles",
            "",
            "edit",
            json!({"metadata": {"name": "edit"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-edit": "true"}}]}, "rules": []}),
        );
        put(
            &mut index,
            "clusterrolebindings",
            "",
            "editors",
            json!({
            "subjects": [{"kind": "User", "name": "fay"}], "roleRef": {"kind": "ClusterRole", "name": "edit"}}),
        );
        assert!(index.allows(&user("fay", &[]), &list_widgets));
        index.apply(&key("clusterroles", "", "widget-viewer"), None);
        assert!(!index.allows(&erin, &list_widgets));
        assert!(!index.allows(&user("fay", &[]), &list_widgets));
    }

    /// One change to an RBAC object, from a small universe so changes
    /// collide: a put of generated content, or a delete.
    fn change() -> impl proptest::strategy::Strategy<Value = (String, String, String, Option<serde_json::Value>)> {
        use proptest::prelude::*;
        let resource = prop::sample::select(vec!["roles", "clusterroles", "rolebindings", "clusterrolebindings"]);
        let name = prop::sample::select(vec!["a", "b", "c"]);
        let namespace = prop::sample::select(vec!["n1", "n2"]);
        let verbs = prop::sample::subsequence(vec!["get", "list", "watch", "delete"], 1..3);
        let resources = prop::sample::subsequence(vec!["pods", "configmaps", "pods/log", "*"], 1..3);
        let label = prop::sample::select(vec!["", "x", "y"]);
        let aggregates = proptest::option::of(prop::sample::select(vec!["x", "y"]));
        let subject = prop::sample::select(vec![("User", "u1"), ("User", "u2"), ("Group", "g1")]);
        let role_ref = (prop::sample::select(vec!["Role", "ClusterRole"]), prop::sample::select(vec!["a", "b", "c"]));
        let put = (verbs, resources, label, aggregates, subject, role_ref);
        (resource, name, namespace, proptest::option::of(put)).prop_map(|(resource, name, namespace, put)| {
            let namespace = if resource.starts_with("cluster") { "" } else { namespace };
            let value = put.map(|(verbs, resources, label, aggregates, (kind, subject), (ref_kind, ref_name))| {
                let mut labels = serde_json::Map::new();
                if !label.is_empty() {
                    labels.insert("agg".into(), json!(label));
                }
                let mut object = json!({"metadata": {"name": name, "labels": labels},
                    "rules": [{"apiGroups": [""], "resources": resources, "verbs": verbs}],
                    "subjects": [{"kind": kind, "name": subject}],
                    "roleRef": {"kind": ref_kind, "name": ref_name}});
                if let Some(selected) = aggregates {
                    object["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"agg": selected}}]});
                }
                object
            });
            (resource.to_string(), namespace.to_string(), name.to_string(), value)
        })
    }

    proptest::proptest! {
        /// The index after any sequence of changes answers every question
        /// as an index built from the final objects alone, in another
        /// order: it depends on the state, never on the history (aggregation
        /// included). This is what makes every shard's index the same.
        #[test]
        fn the_index_depends_only_on_the_final_objects(changes in proptest::collection::vec(change(), 0..40)) {
            let mut incremental = RbacIndex::default();
            let mut live = std::collections::BTreeMap::new();
            for (resource, namespace, name, value) in &changes {
                let key = key(resource, namespace, name);
                let bytes = value.as_ref().map(|v| serde_json::to_vec(v).unwrap());
                incremental.apply(&key, bytes.as_deref());
                match bytes {
                    Some(b) => { live.insert(key, b); }
                    None => { live.remove(&key); }
                }
            }
            let mut fresh = RbacIndex::default();
            for (key, value) in live.iter().rev() {
                fresh.apply(key, Some(value));
            }
            let users = [user("u1", &[]), user("u2", &["g1"]), user("u3", &[])];
            for u in &users {
                for namespace in ["n1", "n2", ""] {
                    for verb in ["get", "list", "watch", "delete"] {
                        for (resource, sub) in [("pods", ""), ("pods", "log"), ("configmaps", ""), ("secrets", "")] {
                            let mut a = request(verb, resource, namespace, "x");
                            a.subresource = sub.into();
                            proptest::prop_assert_eq!(incremental.allows(u, &a), fresh.allows(u, &a), "{:?} {:?}", u.name, a);
                        }
                    }
                    let mut rules = incremental.rules_for(u, namespace);
                    let mut expected = fresh.rules_for(u, namespace);
                    rules.sort_by_key(|r| format!("{r:?}"));
                    expected.sort_by_key(|r| format!("{r:?}"));
                    proptest::prop_assert_eq!(rules, expected);
                }
            }
        }
    }
}
