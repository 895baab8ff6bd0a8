//! RBAC privilege-escalation prevention: a user may write a Role or
//! ClusterRole only with rules they already hold (or the `escalate` verb on
//! it), and a RoleBinding or ClusterRoleBinding only to a role whose rules
//! they hold (or the `bind` verb on that role), as the RBAC documentation's
//! "Privilege escalation prevention and bootstrapping" describes. Setting a
//! ClusterRole's `aggregationRule` needs every permission (`*` on `*.*` and
//! on every path), since it can gather any rule later.
//!
//! Pure: it decides on the new object, the user and this shard's RBAC index;
//! the write handlers call [`check`] before they append. Only in RBAC mode;
//! members of `system:masters` are exempt, as in kube-apiserver.

use super::authz::{self, AuthorizationMode};
use super::rbac::{PolicyRule, RbacIndex, RoleRef, RBAC_GROUP};
use super::{Attributes, UserInfo, MASTERS_GROUP};
use serde_json::{Map, Value};

/// Why a write was refused: the text after `<resource> "<name>" is forbidden: `.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

/// An object about to be stored: `resource` of `group` (RBAC's `roles`,
/// `clusterroles`, `rolebindings`, `clusterrolebindings` are checked),
/// `name` in `namespace` (empty for cluster-scoped).
#[derive(Clone, Copy, Debug)]
pub struct Write<'a> {
    pub group: &'a str,
    pub resource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: &'a Map<String, Value>,
}

/// Whether `user` may store `write`. Other groups and resources always pass.
pub fn check(mode: AuthorizationMode, index: &RbacIndex, user: &UserInfo, write: Write<'_>) -> Result<(), Refusal> {
    let Write { group, resource, namespace, name, object } = write;
    if group != RBAC_GROUP || !mode.has_rbac() || user.in_group(MASTERS_GROUP) {
        return Ok(());
    }
    match resource {
        "roles" | "clusterroles" => {
            if allowed(mode, index, user, "escalate", resource, namespace, name) {
                return Ok(());
            }
            let rules: Vec<PolicyRule> =
                object.get("rules").and_then(|r| serde_json::from_value(r.clone()).ok()).unwrap_or_default();
            let held = index.rules_for(user, namespace);
            confirm_no_escalation(user, &held, &rules)?;
            let aggregates = object.get("aggregationRule").is_some_and(|a| !a.is_null());
            if resource == "clusterroles" && aggregates && !uncovered(&held, &full_authority()).is_empty() {
                return Err(Refusal("must have cluster-admin privileges to use the aggregationRule".into()));
            }
            Ok(())
        }
        "rolebindings" | "clusterrolebindings" => {
            let role_ref: RoleRef =
                object.get("roleRef").and_then(|r| serde_json::from_value(r.clone()).ok()).unwrap_or_default();
            let role_resource = match role_ref.kind.as_str() {
                "ClusterRole" => "clusterroles",
                "Role" => "roles",
                // Validation refuses other kinds; nothing to grant here.
                _ => return Ok(()),
            };
            let role_namespace = if role_resource == "roles" { namespace } else { "" };
            // kube authorizes `bind` in the binding's namespace for both kinds.
            if allowed(mode, index, user, "bind", role_resource, namespace, &role_ref.name) {
                return Ok(());
            }
            let Some(rules) = index.referenced_rules(&role_ref, role_namespace) else {
                let kind = role_ref.kind.to_lowercase();
                return Err(Refusal(format!("{kind}.{RBAC_GROUP} {:?} not found", role_ref.name)));
            };
            confirm_no_escalation(user, &index.rules_for(user, namespace), &rules)
        }
        _ => Ok(()),
    }
}

fn allowed(
    mode: AuthorizationMode,
    index: &RbacIndex,
    user: &UserInfo,
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> bool {
    let attributes = Attributes {
        verb: verb.into(),
        resource_request: true,
        api_group: RBAC_GROUP.into(),
        api_version: "v1".into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Attributes::default()
    };
    authz::allows(mode, index, user, &attributes)
}

fn confirm_no_escalation(user: &UserInfo, held: &[PolicyRule], wanted: &[PolicyRule]) -> Result<(), Refusal> {
    let missing = uncovered(held, wanted);
    if missing.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = missing.iter().map(describe).collect();
    Err(Refusal(format!(
        "user {:?} (groups={:?}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        user.groups,
        listed.join("\n")
    )))
}

/// Every permission: what the aggregationRule needs.
fn full_authority() -> Vec<PolicyRule> {
    vec![
        PolicyRule {
            verbs: vec!["*".into()],
            api_groups: vec!["*".into()],
            resources: vec!["*".into()],
            ..Default::default()
        },
        PolicyRule { verbs: vec!["*".into()], non_resource_urls: vec!["*".into()], ..Default::default() },
    ]
}

/// The single-permission rules of `wanted` that no rule of `held` covers.
pub fn uncovered(held: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut missing = Vec::new();
    for rule in wanted {
        for single in break_down(rule) {
            if !held.iter().any(|owner| covers(owner, &single)) && !missing.contains(&single) {
                missing.push(single);
            }
        }
    }
    missing
}

/// One rule per verb × group × resource (× name), and per verb × path.
fn break_down(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for verb in &rule.verbs {
        for group in &rule.api_groups {
            for resource in &rule.resources {
                let one = |names: Vec<String>| PolicyRule {
                    verbs: vec![verb.clone()],
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    out.push(one(Vec::new()));
                } else {
                    out.extend(rule.resource_names.iter().map(|n| one(vec![n.clone()])));
                }
            }
        }
        for url in &rule.non_resource_urls {
            out.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

/// Whether `owner` grants everything the single-permission rule `single` does.
fn covers(owner: &PolicyRule, single: &PolicyRule) -> bool {
    if !single.verbs.iter().all(|v| has(&owner.verbs, v)) {
        return false;
    }
    if let Some(url) = single.non_resource_urls.first() {
        return owner
            .non_resource_urls
            .iter()
            .any(|o| o == url || o.strip_suffix('*').is_some_and(|prefix| url.starts_with(prefix)));
    }
    if !single.api_groups.iter().all(|g| has(&owner.api_groups, g)) {
        return false;
    }
    let resources_ok = single.resources.iter().all(|r| {
        has(&owner.resources, r)
            || r.split_once('/')
                .is_some_and(|(_, sub)| owner.resources.iter().any(|o| o.strip_prefix("*/") == Some(sub)))
    });
    if !resources_ok {
        return false;
    }
    owner.resource_names.is_empty()
        || (!single.resource_names.is_empty() && single.resource_names.iter().all(|n| owner.resource_names.contains(n)))
}

fn describe(rule: &PolicyRule) -> String {
    if rule.non_resource_urls.is_empty() {
        let mut text = format!("{{APIGroups:{:?}, Resources:{:?}", rule.api_groups, rule.resources);
        if !rule.resource_names.is_empty() {
            text.push_str(&format!(", ResourceNames:{:?}", rule.resource_names));
        }
        text.push_str(&format!(", Verbs:{:?}}}", rule.verbs));
        text
    } else {
        format!("{{NonResourceURLs:{:?}, Verbs:{:?}}}", rule.non_resource_urls, rule.verbs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        PolicyRule {
            verbs: s(verbs),
            api_groups: s(groups),
            resources: s(resources),
            resource_names: s(names),
            non_resource_urls: Vec::new(),
        }
    }

    #[test]
    fn coverage_is_per_verb_group_resource_and_name() {
        let held = vec![rule(&["get", "list"], &[""], &["pods", "configmaps"], &[])];
        assert!(uncovered(&held, &[rule(&["get"], &[""], &["pods"], &[])]).is_empty());
        assert!(uncovered(&held, &[rule(&["get"], &[""], &["pods"], &["a"])]).is_empty());
        assert_eq!(
            uncovered(&held, &[rule(&["get", "delete"], &[""], &["pods"], &[])]),
            vec![rule(&["delete"], &[""], &["pods"], &[])]
        );
        assert_eq!(uncovered(&held, &[rule(&["get"], &["apps"], &["pods"], &[])]).len(), 1);
        // A name-limited grant does not cover the whole resource.
        let named = vec![rule(&["get"], &[""], &["secrets"], &["one"])];
        assert!(uncovered(&named, &[rule(&["get"], &[""], &["secrets"], &["one"])]).is_empty());
        assert_eq!(uncovered(&named, &[rule(&["get"], &[""], &["secrets"], &[])]).len(), 1);
        assert_eq!(uncovered(&named, &[rule(&["get"], &[""], &["secrets"], &["two"])]).len(), 1);
        // Stars and subresources.
        let star = vec![rule(&["*"], &["*"], &["*"], &[])];
        assert!(uncovered(&star, &full_authority()[..1]).is_empty());
        let status = vec![rule(&["update"], &[""], &["*/status"], &[])];
        assert!(uncovered(&status, &[rule(&["update"], &[""], &["pods/status"], &[])]).is_empty());
        assert_eq!(uncovered(&status, &[rule(&["update"], &[""], &["pods"], &[])]).len(), 1);
        // Paths.
        let paths = vec![PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz/*".into()],
            ..Default::default()
        }];
        let want =
            |u: &str| PolicyRule { verbs: vec!["get".into()], non_resource_urls: vec![u.into()], ..Default::default() };
        assert!(uncovered(&paths, &[want("/healthz/ping")]).is_empty());
        assert_eq!(uncovered(&paths, &[want("/metrics")]).len(), 1);
        assert!(!uncovered(&paths, &full_authority()).is_empty());
    }

    fn index_with(objects: &[(&str, &str, &str, Value)]) -> RbacIndex {
        let mut index = RbacIndex::default();
        for (resource, namespace, name, value) in objects {
            let key = crate::types::key::ObjectKey::new(RBAC_GROUP, resource, namespace, name).encode();
            index.apply(&key, Some(&serde_json::to_vec(value).unwrap()));
        }
        index
    }

    fn w<'a>(
        group: &'a str,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
        object: &'a Map<String, Value>,
    ) -> Write<'a> {
        Write { group, resource, namespace, name, object }
    }

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn roles_and_bindings_need_held_rules_or_escalate_and_bind() {
        let alice = UserInfo::authenticated("alice".into(), String::new(), vec![]);
        let index = index_with(&[
            (
                "roles",
                "team",
                "manager",
                json!({"rules": [
                    {"verbs": ["get", "list", "create", "update"], "apiGroups": [""], "resources": ["pods"]},
                    {"verbs": ["create", "update"], "apiGroups": [RBAC_GROUP], "resources": ["roles", "rolebindings"]}
                ]}),
            ),
            (
                "roles",
                "team",
                "reader",
                json!({"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
            ),
            (
                "roles",
                "team",
                "wide",
                json!({"rules": [{"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"]}]}),
            ),
            (
                "rolebindings",
                "team",
                "alice-manager",
                json!({"subjects": [{"kind": "User", "name": "alice"}], "roleRef": {"kind": "Role", "name": "manager"}}),
            ),
        ]);
        let rbac = AuthorizationMode::Rbac;
        let role = |verbs: Value| map(json!({"rules": [{"verbs": verbs, "apiGroups": [""], "resources": ["pods"]}]}));
        // Within what alice holds: allowed.
        assert_eq!(
            check(rbac, &index, &alice, w(RBAC_GROUP, "roles", "team", "r", &role(json!(["get", "list"])))),
            Ok(())
        );
        // Beyond it: refused, naming the missing permission.
        let Err(Refusal(message)) =
            check(rbac, &index, &alice, w(RBAC_GROUP, "roles", "team", "r", &role(json!(["delete"]))))
        else {
            panic!("escalation allowed")
        };
        assert!(message.contains("attempting to grant RBAC permissions not currently held"), "{message}");
        assert!(message.contains(r#"Verbs:["delete"]"#), "{message}");
        // `Node,RBAC` has RBAC's escalation rule too.
        let node_rbac = AuthorizationMode::NodeRbac;
        assert!(
            check(node_rbac, &index, &alice, w(RBAC_GROUP, "roles", "team", "r", &role(json!(["delete"])))).is_err()
        );
        // Held rules are per namespace: nothing in another namespace.
        assert!(check(rbac, &index, &alice, w(RBAC_GROUP, "roles", "other", "r", &role(json!(["get"])))).is_err());
        // Bindings: to a role whose rules alice holds, yes; to a wider one, no.
        let binding = |name: &str| {
            map(json!({"subjects": [{"kind": "User", "name": "bob"}], "roleRef": {"kind": "Role", "name": name}}))
        };
        assert_eq!(check(rbac, &index, &alice, w(RBAC_GROUP, "rolebindings", "team", "b", &binding("reader"))), Ok(()));
        assert!(check(rbac, &index, &alice, w(RBAC_GROUP, "rolebindings", "team", "b", &binding("wide"))).is_err());
        assert!(check(rbac, &index, &alice, w(RBAC_GROUP, "rolebindings", "team", "b", &binding("missing"))).is_err());
        // AlwaysAllow, masters and other resources are not checked.
        assert_eq!(
            check(
                AuthorizationMode::AlwaysAllow,
                &index,
                &alice,
                w(RBAC_GROUP, "rolebindings", "team", "b", &binding("wide"))
            ),
            Ok(())
        );
        let root = UserInfo::authenticated("root".into(), String::new(), vec![MASTERS_GROUP.into()]);
        assert_eq!(check(rbac, &index, &root, w(RBAC_GROUP, "rolebindings", "team", "b", &binding("wide"))), Ok(()));
        assert_eq!(check(rbac, &index, &alice, w("", "configmaps", "team", "c", &role(json!(["*"])))), Ok(()));

        // `bind` on the role, or `escalate` on roles, lets a user past the check.
        let index = index_with(&[
            (
                "roles",
                "team",
                "binder",
                json!({"rules": [
                    {"verbs": ["bind"], "apiGroups": [RBAC_GROUP], "resources": ["roles"], "resourceNames": ["wide"]},
                    {"verbs": ["escalate"], "apiGroups": [RBAC_GROUP], "resources": ["roles"]}
                ]}),
            ),
            (
                "roles",
                "team",
                "wide",
                json!({"rules": [{"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"]}]}),
            ),
            (
                "rolebindings",
                "team",
                "alice-binder",
                json!({"subjects": [{"kind": "User", "name": "alice"}], "roleRef": {"kind": "Role", "name": "binder"}}),
            ),
        ]);
        assert_eq!(check(rbac, &index, &alice, w(RBAC_GROUP, "rolebindings", "team", "b", &binding("wide"))), Ok(()));
        assert_eq!(check(rbac, &index, &alice, w(RBAC_GROUP, "roles", "team", "r", &role(json!(["*"])))), Ok(()));
    }

    #[test]
    fn an_aggregation_rule_needs_every_permission() {
        let alice = UserInfo::authenticated("alice".into(), String::new(), vec![]);
        let index = index_with(&[
            (
                "clusterroles",
                "",
                "role-writer",
                json!({"rules": [{"verbs": ["create"], "apiGroups": [RBAC_GROUP], "resources": ["clusterroles"]}]}),
            ),
            (
                "clusterrolebindings",
                "",
                "alice",
                json!({"subjects": [{"kind": "User", "name": "alice"}], "roleRef": {"kind": "ClusterRole", "name": "role-writer"}}),
            ),
        ]);
        let aggregated = map(json!({"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}));
        let Err(Refusal(message)) =
            check(AuthorizationMode::Rbac, &index, &alice, w(RBAC_GROUP, "clusterroles", "", "agg", &aggregated))
        else {
            panic!("aggregation allowed")
        };
        assert!(message.contains("aggregationRule"), "{message}");
    }
}
