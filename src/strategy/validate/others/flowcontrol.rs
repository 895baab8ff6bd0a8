//! FlowSchema and PriorityLevelConfiguration validation with kube-apiserver
//! v1.36's words (`pkg/apis/flowcontrol/validation/validation.go`, as the
//! flowcontrol.apiserver.k8s.io/v1 API calls it: zero nominal concurrency
//! shares allowed): a schema's matching precedence, distinguisher method,
//! priority level reference, and each rule's subjects, resource and
//! non-resource rules; a priority level's type (Exempt exactly for the one
//! named `exempt`), its limited or exempt configuration, limit response and
//! queuing (shuffle-sharding's entropy bound); and both kinds' status
//! conditions (a type, once).
//!
//! A priority level may not carry v1beta3's round-trip annotation.
//!
//! Compared with kube's source at unnati2401/kubernetes a5e8298a (a v1.37
//! development copy) and kubernetes/kubernetes 08f055ca (older): the words
//! are those after kube PRs 132513 and 132472 (v1.34: "must be 'Exempt' if
//! and only if `name` is 'exempt'", a condition's missing type Required
//! without detail); an empty type is still NotSupported, as v1.37 made it
//! Required only later (PR 138740, May 2026).
//!
//! Not checked: that the mandatory objects (`exempt`, `catch-all`) keep
//! their fixed specs.
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, go_quote, FieldError};
use serde_json::Value;

/// `flowcontrol.FlowSchemaMaxMatchingPrecedence`.
const MAX_MATCHING_PRECEDENCE: i64 = 10000;
/// `priorityLevelConfigurationQueuingMaxQueues`.
const MAX_QUEUES: i64 = 10_000_000;
/// `flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey`.
const PRESERVE_ZERO_SHARES_KEY: &str = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";
/// `shufflesharding.MaxHashBits`.
const MAX_HASH_BITS: u32 = 60;

const VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"];
const SUBJECT_KINDS: &[&str] = &["Group", "ServiceAccount", "User"];
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

fn go_strings(values: &[Value]) -> String {
    go_string_slice(Some(&values.to_vec()))
}

fn strings_of(values: &[Value]) -> Vec<&str> {
    values.iter().map(|v| v.as_str().unwrap_or_default()).collect()
}

pub fn flow_schema(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let mut errs = Vec::new();
    let precedence = int(spec, "matchingPrecedence").unwrap_or(0);
    let shown = precedence.to_string();
    if precedence <= 0 {
        errs.push(invalid_raw("spec.matchingPrecedence", &shown, "must be a positive value"));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errs.push(invalid_raw(
            "spec.matchingPrecedence",
            &shown,
            &format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != "exempt" {
        errs.push(invalid_raw(
            "spec.matchingPrecedence",
            &shown,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = obj(spec, "distinguisherMethod") {
        let kind = text(method, "type");
        if !["ByNamespace", "ByUser"].contains(&kind) {
            errs.push(not_supported_raw(
                "spec.distinguisherMethod.type",
                // field.Error prints a pointer's target, without `&`.
                &format!("flowcontrol.FlowDistinguisherMethod{{Type:{}}}", go_quote(kind)),
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let level = obj(spec, "priorityLevelConfiguration").map(|p| text(p, "name")).unwrap_or("");
    if level.is_empty() {
        errs.push(FieldError::required("spec.priorityLevelConfiguration.name", "must reference a priority level"));
    } else {
        for message in validation::is_dns1123_subdomain(level) {
            errs.push(FieldError::invalid("spec.priorityLevelConfiguration.name", level, &message));
        }
    }
    for (i, rule) in list(spec, "rules").iter().enumerate() {
        errs.extend(rule_with_subjects(rule.as_object().unwrap_or(&empty), &format!("spec.rules[{i}]")));
    }
    errs.extend(conditions(object));
    errs
}

fn rule_with_subjects(rule: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let subjects = list(rule, "subjects");
    if subjects.is_empty() {
        errs.push(FieldError::required(&format!("{path}.subjects"), "subjects must contain at least one value"));
    }
    let empty = Fields::new();
    for (i, subject) in subjects.iter().enumerate() {
        errs.extend(subject_errors(subject.as_object().unwrap_or(&empty), &format!("{path}.subjects[{i}]")));
    }
    let (resources, non_resources) = (list(rule, "resourceRules"), list(rule, "nonResourceRules"));
    if resources.is_empty() && non_resources.is_empty() {
        errs.push(FieldError::required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"));
    }
    for (i, r) in resources.iter().enumerate() {
        errs.extend(resource_rule(r.as_object().unwrap_or(&empty), &format!("{path}.resourceRules[{i}]")));
    }
    for (i, r) in non_resources.iter().enumerate() {
        errs.extend(non_resource_rule(r.as_object().unwrap_or(&empty), &format!("{path}.nonResourceRules[{i}]")));
    }
    errs
}

fn subject_errors(subject: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let present = |k: &str| subject.get(k).is_some_and(|v| !v.is_null());
    let forbid = |errs: &mut Vec<FieldError>, field: &str, kind: &str| {
        errs.push(FieldError::forbidden(
            &format!("{path}.{field}"),
            &format!("{field} is forbidden when subject kind is not '{kind}'"),
        ));
    };
    let kind = text(subject, "kind");
    match kind {
        "ServiceAccount" => {
            match obj(subject, "serviceAccount") {
                None => errs.push(FieldError::required(
                    &format!("{path}.serviceAccount"),
                    "serviceAccount is required when subject kind is 'ServiceAccount'",
                )),
                Some(account) => {
                    let name = text(account, "name");
                    if name.is_empty() {
                        errs.push(FieldError::required(&format!("{path}.serviceAccount.name"), ""));
                    } else if name != "*" {
                        for message in validation::is_dns1123_subdomain(name) {
                            errs.push(FieldError::invalid(&format!("{path}.serviceAccount.name"), name, &message));
                        }
                    }
                    let namespace = text(account, "namespace");
                    if namespace.is_empty() {
                        errs.push(FieldError::required(
                            &format!("{path}.serviceAccount.namespace"),
                            "must specify namespace for service account",
                        ));
                    } else {
                        for message in validation::is_dns1123_label(namespace) {
                            errs.push(FieldError::invalid(
                                &format!("{path}.serviceAccount.namespace"),
                                namespace,
                                &message,
                            ));
                        }
                    }
                }
            }
            if present("user") {
                forbid(&mut errs, "user", "User");
            }
            if present("group") {
                forbid(&mut errs, "group", "Group");
            }
        }
        "User" | "Group" => {
            let field = if kind == "User" { "user" } else { "group" };
            match obj(subject, field) {
                None => errs.push(FieldError::required(
                    &format!("{path}.{field}"),
                    &format!("{field} is required when subject kind is '{kind}'"),
                )),
                Some(named) if text(named, "name").is_empty() => {
                    errs.push(FieldError::required(&format!("{path}.{field}.name"), ""));
                }
                Some(_) => {}
            }
            if present("serviceAccount") {
                forbid(&mut errs, "serviceAccount", "ServiceAccount");
            }
            let other = if kind == "User" { ("group", "Group") } else { ("user", "User") };
            if present(other.0) {
                forbid(&mut errs, other.0, other.1);
            }
        }
        _ => errs.push(not_supported(&format!("{path}.kind"), kind, SUBJECT_KINDS)),
    }
    errs
}

fn verbs(rule: &Fields, path: &str) -> Vec<FieldError> {
    let verbs = list(rule, "verbs");
    let names = strings_of(verbs);
    let field = format!("{path}.verbs");
    if verbs.is_empty() {
        vec![FieldError::required(&field, "verbs must contain at least one value")]
    } else if names.contains(&"*") {
        if verbs.len() > 1 {
            vec![FieldError::invalid_bare(
                &field,
                &go_strings(verbs),
                "if '*' is present, must not specify other verbs",
            )]
        } else {
            Vec::new()
        }
    } else if !names.iter().all(|v| VERBS.contains(v)) {
        vec![not_supported_raw(&field, &go_strings(verbs), VERBS)]
    } else {
        Vec::new()
    }
}

fn resource_rule(rule: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = verbs(rule, path);
    for (field, required, other) in [
        ("apiGroups", "resource rules must supply at least one api group", "api groups"),
        ("resources", "resource rules must supply at least one resource", "resources"),
    ] {
        let values = list(rule, field);
        if values.is_empty() {
            errs.push(FieldError::required(&format!("{path}.{field}"), required));
        } else if values.len() > 1 && strings_of(values).contains(&"*") {
            errs.push(FieldError::invalid_bare(
                &format!("{path}.{field}"),
                &go_strings(values),
                &format!("if '*' is present, must not specify other {other}"),
            ));
        }
    }
    let namespaces = list(rule, "namespaces");
    let cluster_scope = rule.get("clusterScope").and_then(Value::as_bool).unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errs.push(FieldError::required(
            &format!("{path}.namespaces"),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if strings_of(namespaces).contains(&"*") {
        if namespaces.len() > 1 {
            errs.push(FieldError::invalid_bare(
                &format!("{path}.namespaces"),
                &go_strings(namespaces),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, namespace) in strings_of(namespaces).into_iter().enumerate() {
            for message in validation::is_dns1123_label(namespace) {
                errs.push(FieldError::invalid(
                    &format!("{path}.namespaces[{i}]"),
                    namespace,
                    &format!("{NS_ERR_INTRO}{message}"),
                ));
            }
        }
    }
    errs
}

fn non_resource_rule(rule: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = verbs(rule, path);
    let urls = list(rule, "nonResourceURLs");
    let field = format!("{path}.nonResourceURLs");
    if urls.is_empty() {
        errs.push(FieldError::required(&field, "nonResourceURLs must contain at least one value"));
    } else if strings_of(urls).contains(&"*") {
        if urls.len() > 1 {
            errs.push(FieldError::invalid_bare(
                &field,
                &go_strings(urls),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, url) in strings_of(urls).into_iter().enumerate() {
            if let Some(message) = non_resource_url_problem(url) {
                errs.push(FieldError::invalid(&format!("{field}[{i}]"), url, message));
            }
        }
    }
    errs
}

/// `ValidateNonResourceURLPath`.
fn non_resource_url_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// The status conditions: each with a type, no type twice.
fn conditions(object: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let status = obj(object, "status");
    for (i, condition) in status.map(|s| list(s, "conditions")).unwrap_or_default().iter().enumerate() {
        let kind = condition.get("type").and_then(Value::as_str).unwrap_or("");
        if seen.contains(&kind) {
            errs.push(FieldError::duplicate(&format!("status.conditions[{i}].type"), kind));
        }
        seen.push(kind);
        if kind.is_empty() {
            errs.push(FieldError::required(&format!("status.conditions[{i}].type"), ""));
        }
    }
    errs
}

pub fn priority_level_configuration(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let kind = text(spec, "type");
    let mut errs = Vec::new();
    // v1beta3's round-trip annotation never reaches storage.
    let annotated = object
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(PRESERVE_ZERO_SHARES_KEY));
    if annotated {
        errs.push(FieldError::forbidden(
            "metadata.annotations",
            &format!("annotation '{PRESERVE_ZERO_SHARES_KEY}' is forbidden"),
        ));
    }
    if (name == "exempt") != (kind == "Exempt") {
        errs.push(FieldError::invalid("spec.type", kind, "must be 'Exempt' if and only if `name` is 'exempt'"));
    }
    let present = |k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    match kind {
        "Exempt" => {
            if present("limited") {
                errs.push(FieldError::forbidden("spec.limited", "must be nil if the type is not Limited"));
            }
            if let Some(exempt) = obj(spec, "exempt") {
                if let Some(shares) = int(exempt, "nominalConcurrencyShares").filter(|s| *s < 0) {
                    errs.push(invalid_raw(
                        "spec.exempt.nominalConcurrencyShares",
                        &shares.to_string(),
                        "must be a non-negative integer",
                    ));
                }
                errs.extend(lendable_percent(exempt, "spec.exempt.lendablePercent"));
            }
        }
        "Limited" => {
            if present("exempt") {
                errs.push(FieldError::forbidden("spec.exempt", "must be nil if the type is Limited"));
            }
            match obj(spec, "limited") {
                None => errs.push(FieldError::required("spec.limited", "must not be empty when type is Limited")),
                Some(limited) => errs.extend(limited_configuration(limited)),
            }
        }
        _ => errs.push(not_supported("spec.type", kind, &["Exempt", "Limited"])),
    }
    errs.extend(conditions(object));
    errs
}

fn lendable_percent(config: &Fields, field: &str) -> Vec<FieldError> {
    match int(config, "lendablePercent") {
        Some(p) if !(0..=100).contains(&p) => {
            vec![invalid_raw(field, &p.to_string(), "must be between 0 and 100, inclusive")]
        }
        _ => Vec::new(),
    }
}

fn limited_configuration(limited: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let shares = int(limited, "nominalConcurrencyShares").unwrap_or(0);
    if shares < 0 {
        errs.push(invalid_raw(
            "spec.limited.nominalConcurrencyShares",
            &shares.to_string(),
            "must be a non-negative integer",
        ));
    }
    let empty = Fields::new();
    let response = obj(limited, "limitResponse").unwrap_or(&empty);
    let queuing_present = response.get("queuing").is_some_and(|v| !v.is_null());
    match text(response, "type") {
        "Reject" => {
            if queuing_present {
                errs.push(FieldError::forbidden(
                    "spec.limited.limitResponse.queuing",
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match obj(response, "queuing") {
            None => errs.push(FieldError::required(
                "spec.limited.limitResponse.queuing",
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(queuing) => errs.extend(queuing_configuration(queuing)),
        },
        other => errs.push(not_supported("spec.limited.limitResponse.type", other, &["Queue", "Reject"])),
    }
    errs.extend(lendable_percent(limited, "spec.limited.lendablePercent"));
    if let Some(p) = int(limited, "borrowingLimitPercent").filter(|p| *p < 0) {
        errs.push(invalid_raw(
            "spec.limited.borrowingLimitPercent",
            &p.to_string(),
            "if specified, must be a non-negative integer",
        ));
    }
    errs
}

fn queuing_configuration(queuing: &Fields) -> Vec<FieldError> {
    let path = "spec.limited.limitResponse.queuing";
    let mut errs = Vec::new();
    let limit = int(queuing, "queueLengthLimit").unwrap_or(0);
    if limit <= 0 {
        errs.push(invalid_raw(&format!("{path}.queueLengthLimit"), &limit.to_string(), "must be positive"));
    }
    let queues = int(queuing, "queues").unwrap_or(0);
    if queues <= 0 {
        errs.push(invalid_raw(&format!("{path}.queues"), &queues.to_string(), "must be positive"));
    } else if queues > MAX_QUEUES {
        errs.push(invalid_raw(
            &format!("{path}.queues"),
            &queues.to_string(),
            &format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand = int(queuing, "handSize").unwrap_or(0);
    let field = format!("{path}.handSize");
    if hand <= 0 {
        errs.push(invalid_raw(&field, &hand.to_string(), "must be positive"));
    } else if hand > queues {
        errs.push(invalid_raw(&field, &hand.to_string(), &format!("should not be greater than queues ({queues})")));
    } else if required_entropy_bits(queues, hand) > MAX_HASH_BITS {
        errs.push(invalid_raw(
            &field,
            &hand.to_string(),
            &format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
            ),
        ));
    }
    errs
}

/// `shufflesharding.RequiredEntropyBits`: ceil(handSize * log2(deckSize)).
fn required_entropy_bits(deck: i64, hand: i64) -> u32 {
    ((deck as f64).log2() * hand as f64).ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(f: fn(&Fields) -> Vec<FieldError>, v: Value) -> Vec<String> {
        f(v.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn flow_schemas() {
        let valid = json!({"metadata": {"name": "fs"}, "spec": {"matchingPrecedence": 1000,
            "priorityLevelConfiguration": {"name": "plc"}, "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/api/*"]}]}]}});
        assert_eq!(check(flow_schema, valid), Vec::<String>::new());
        assert_eq!(
            check(flow_schema, json!({"metadata": {"name": "fs"}, "spec": {"matchingPrecedence": 1,
                "distinguisherMethod": {"type": "ByColor"}, "rules": [{"subjects": [
                    {"kind": "User"}, {"kind": "Robot"}, {"kind": "Group", "group": {"name": "g"}, "user": {"name": "u"}}],
                    "resourceRules": [{"verbs": ["get", "fly"], "apiGroups": [], "resources": ["*", "pods"], "namespaces": ["Bad"]}],
                    "nonResourceRules": [{"verbs": ["*", "get"], "nonResourceURLs": ["healthz", "/a/*/b"]}]}, {"subjects": []}]},
                "status": {"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {"status": "True"}]}})),
            [
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                "spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByColor\"}: supported values: \"ByNamespace\", \"ByUser\"",
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
                "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
                "spec.rules[0].subjects[1].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
                "spec.rules[0].subjects[2].user: Forbidden: user is forbidden when subject kind is not 'User'",
                "spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{\"get\", \"fly\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "spec.rules[0].resourceRules[0].resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources",
                "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Bad\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must not specify other verbs",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash",
                "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a/*/b\": wildcard can only do suffix matching",
                "spec.rules[1].subjects: Required value: subjects must contain at least one value",
                "spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
                "status.conditions[1].type: Duplicate value: \"Dangling\"",
                "status.conditions[2].type: Required value",
            ]
        );
        assert_eq!(
            check(
                flow_schema,
                json!({"metadata": {"name": "fs"}, "spec": {"matchingPrecedence": 10001,
                "priorityLevelConfiguration": {"name": "plc"}}})
            ),
            ["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"]
        );
    }

    /// kube's mandatory and suggested configuration (what the server writes
    /// at start-up) is valid.
    #[test]
    fn the_bootstrap_configuration_passes() {
        let all: Value = serde_json::from_str(include_str!("../../../api/system_objects_flowcontrol.json")).unwrap();
        let mut count = 0;
        for (kind, check_kind) in [
            ("PriorityLevelConfiguration", priority_level_configuration as fn(&Fields) -> Vec<FieldError>),
            ("FlowSchema", flow_schema),
        ] {
            for item in all[kind].as_array().unwrap() {
                let object = json!({"metadata": {"name": item["name"]}, "spec": item["spec"]});
                assert_eq!(check(check_kind, object), Vec::<String>::new(), "{kind} {}", item["name"]);
                count += 1;
            }
        }
        assert!(count >= 19, "{count}");
    }

    #[test]
    fn priority_levels() {
        let limited = json!({"metadata": {"name": "workload"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {"type": "Queue",
                "queuing": {"queues": 64, "handSize": 6, "queueLengthLimit": 50}}}}});
        assert_eq!(check(priority_level_configuration, limited), Vec::<String>::new());
        let exempt = json!({"metadata": {"name": "exempt"}, "spec": {"type": "Exempt",
            "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}});
        assert_eq!(check(priority_level_configuration, exempt), Vec::<String>::new());
        assert_eq!(
            check(
                priority_level_configuration,
                json!({"metadata": {"name": "p"}, "spec": {"type": "Exempt",
                "limited": {}, "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": 101}}})
            ),
            [
                "spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
                "spec.limited: Forbidden: must be nil if the type is not Limited",
                "spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
            ]
        );
        assert_eq!(
            check(priority_level_configuration, json!({"metadata": {"name": "p"}, "spec": {"type": "Limited",
                "limited": {"nominalConcurrencyShares": -1, "borrowingLimitPercent": -5, "limitResponse": {"type": "Queue",
                    "queuing": {"queues": 128, "handSize": 16, "queueLengthLimit": 0}}}}})),
            [
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 16: required entropy bits of deckSize 128 and handSize 16 should not be greater than 60",
                "spec.limited.borrowingLimitPercent: Invalid value: -5: if specified, must be a non-negative integer",
            ]
        );
        assert_eq!(
            check(
                priority_level_configuration,
                json!({"metadata": {"name": "p"}, "spec": {"type": "Limited",
                "limited": {"limitResponse": {"type": "Reject", "queuing": {}}}}})
            ),
            ["spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited"]
        );
        assert_eq!(
            check(priority_level_configuration, json!({"metadata": {"name": "p"}, "spec": {"type": "Sometimes"}})),
            ["spec.type: Unsupported value: \"Sometimes\": supported values: \"Exempt\", \"Limited\""]
        );
        assert_eq!(
            check(priority_level_configuration, json!({"metadata": {"name": "p", "annotations": {
                "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}}, "spec": {"type": "Limited",
                "limited": {"limitResponse": {"type": "Reject"}}}})),
            ["metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"]
        );
    }
}
