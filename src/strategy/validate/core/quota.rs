//! ResourceQuotas and LimitRanges (`ValidateResourceQuota`,
//! `ValidateResourceQuotaUpdate`, `ValidateResourceQuotaStatusUpdate`,
//! `ValidateLimitRange` in `pkg/apis/core/validation/validation.go`):
//! resource names (standard, quota, container, qualified), quantity values
//! (non-negative, whole numbers for countable resources), quota scopes (known,
//! valid for each hard resource, not conflicting, immutable), limit types
//! (one item per type) and min <= defaultRequest <= default <= max with the
//! ratio bounds.
//!
//! The scope selector's requirements are checked as the scopes are (known,
//! valid for the hard resources, not conflicting) with their operators and
//! values (compared with kubernetes/kubernetes 000f2605: the operator's
//! message says 'Exists' since kube PR 124053, v1.31). Go iterates maps in random order; errors here follow the
//! objects' key order.

use super::pod::{container_resource_name, overcommit_allowed, resource_quantity, STANDARD_RESOURCES};
use super::quantity::{go_value, nano_value};
use super::util::*;
use crate::types::validation::{is_qualified_name, FieldError};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

type Errs = Vec<FieldError>;

const INVALID_QUOTA_RESOURCE: &str = "must be a standard resource for quota";

/// `helper.IsStandardQuotaResourceName`.
const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_standard_quota_resource(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// `validateResourceName`: a qualified name, standard unless it has a domain.
fn resource_name(name: &str, field: &str) -> Errs {
    let errs: Errs = is_qualified_name(name).iter().map(|m| FieldError::invalid(field, name, m)).collect();
    if !errs.is_empty() {
        return errs;
    }
    let standard =
        STANDARD_RESOURCES.contains(&name) || name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
    if !name.contains('/') && !standard {
        return vec![FieldError::invalid(field, name, "must be a standard resource type or fully qualified")];
    }
    Vec::new()
}

/// `ValidateResourceQuotaResourceName`.
fn quota_resource_name(name: &str, field: &str) -> Errs {
    let mut errs = resource_name(name, field);
    if !name.contains('/') && !is_standard_quota_resource(name) {
        errs.push(FieldError::invalid(field, name, INVALID_QUOTA_RESOURCE));
    }
    errs
}

/// A resource list (`hard`, `used`): names and values.
fn quota_resources(list: &Map<String, Value>, path: &str) -> Errs {
    let mut errs = Errs::new();
    for (name, quantity) in list {
        let field = key(path, name);
        errs.extend(quota_resource_name(name, &field));
        errs.extend(resource_quantity(name, quantity, &field));
    }
    errs
}

/// The scopes kube knows (`helper.IsStandardResourceQuotaScope`).
const SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

/// `helper.IsResourceQuotaScopeValidForResource`.
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    const COMPUTE: &[&str] = &["cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"];
    match scope {
        "BestEffort" => resource == "pods",
        "Terminating" | "NotTerminating" | "NotBestEffort" | "PriorityClass" | "CrossNamespacePodAffinity" => {
            resource == "pods" || COMPUTE.contains(&resource)
        }
        "VolumeAttributesClass" => ["persistentvolumeclaims", "requests.storage"].contains(&resource),
        _ => true,
    }
}

/// `[]core.ResourceQuotaScope{"A", "B"}`: the scopes as Go's `%#v` prints them
/// (absent is a nil slice, `[]` an empty one).
fn go_scopes(scopes: Option<&Value>) -> String {
    let Some(scopes) = scopes.and_then(Value::as_array) else { return "[]core.ResourceQuotaScope(nil)".into() };
    let items: Vec<String> =
        scopes.iter().map(|s| crate::types::validation::go_quote(s.as_str().unwrap_or_default())).collect();
    format!("[]core.ResourceQuotaScope{{{}}}", items.join(", "))
}

/// Go's `%#v` of a `core.ScopeSelector` (the value kube prints for a scope
/// that does not apply to a hard resource).
fn go_scope_selector(selector: &Value) -> String {
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]core.ScopedResourceSelectorRequirement(nil)".to_string(),
        Some(requirements) => {
            let items: Vec<String> = requirements
                .iter()
                .map(|r| {
                    let values = match r.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(values) => {
                            let quoted: Vec<String> = values
                                .iter()
                                .map(|v| crate::types::validation::go_quote(v.as_str().unwrap_or_default()))
                                .collect();
                            format!("[]string{{{}}}", quoted.join(", "))
                        }
                    };
                    format!(
                        "core.ScopedResourceSelectorRequirement{{ScopeName:{}, Operator:{}, Values:{values}}}",
                        crate::types::validation::go_quote(text(r, "scopeName")),
                        crate::types::validation::go_quote(text(r, "operator")),
                    )
                })
                .collect();
            format!("[]core.ScopedResourceSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!("core.ScopeSelector{{MatchExpressions:{expressions}}}")
}

/// `validateResourceQuotaScopes`.
fn quota_scopes(spec: &Value) -> Errs {
    let scopes = list(spec, "scopes");
    if scopes.is_empty() {
        return Vec::new();
    }
    let hard: BTreeSet<&str> = obj(spec, "hard").keys().map(String::as_str).collect();
    let rendered = go_scopes(spec.get("scopes"));
    let mut errs = Errs::new();
    let mut seen = BTreeSet::new();
    for scope in scopes {
        let scope = scope.as_str().unwrap_or_default();
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::invalid_bare("spec.scopes", &rendered, "unsupported scope"));
        }
        for resource in &hard {
            if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                errs.push(FieldError::invalid_bare("spec.scopes", &rendered, "unsupported scope applied to resource"));
            }
        }
        seen.insert(scope);
    }
    for (a, b) in [("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")] {
        if seen.contains(a) && seen.contains(b) {
            errs.push(FieldError::invalid_bare("spec.scopes", &rendered, "conflicting scopes"));
        }
    }
    errs
}

/// `validateScopeSelector` (`validateScopedResourceSelectorRequirement`).
fn scope_selector(spec: &Value) -> Errs {
    let Some(selector) = spec.get("scopeSelector").filter(|s| s.is_object()) else { return Vec::new() };
    let path = "spec.scopeSelector.matchExpressions";
    let hard: BTreeSet<&str> = obj(spec, "hard").keys().map(String::as_str).collect();
    let mut errs = Errs::new();
    let mut seen = BTreeSet::new();
    for requirement in list(selector, "matchExpressions") {
        let scope = text(requirement, "scopeName");
        let operator = text(requirement, "operator");
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::invalid(&format!("{path}.scopeName"), scope, "unsupported scope"));
        }
        for resource in &hard {
            if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                errs.push(FieldError::invalid_bare(
                    path,
                    &go_scope_selector(selector),
                    "unsupported scope applied to resource",
                ));
            }
        }
        let exists_only = ["BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity"];
        if exists_only.contains(&scope) && operator != "Exists" {
            errs.push(FieldError::invalid(
                &format!("{path}.operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        let values = list(requirement, "values");
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &format!("{path}.values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::invalid_bare(
                &format!("{path}.values"),
                &go_string_slice(values),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => errs.push(FieldError::invalid(&format!("{path}.operator"), operator, "not a valid selector operator")),
        }
        seen.insert(scope);
    }
    for (a, b) in [("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")] {
        if seen.contains(a) && seen.contains(b) {
            errs.push(FieldError::invalid_bare(path, &go_scopes(spec.get("scopes")), "conflicting scopes"));
        }
    }
    errs
}

fn quota_spec(object: &Value) -> Errs {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errs = quota_resources(obj(spec, "hard"), "spec.hard");
    errs.extend(quota_scopes(spec));
    errs.extend(scope_selector(spec));
    errs
}

fn quota_status(object: &Value) -> Errs {
    let status = object.get("status").unwrap_or(&Value::Null);
    let mut errs = quota_resources(obj(status, "hard"), "status.hard");
    errs.extend(quota_resources(obj(status, "used"), "status.used"));
    errs
}

/// `ValidateResourceQuota`.
pub fn resource_quota(object: &Value) -> Errs {
    let mut errs = quota_spec(object);
    errs.extend(quota_status(object));
    errs
}

/// `ValidateResourceQuotaUpdate`: the spec again, and the scopes may not change.
pub fn resource_quota_update(object: &Value, old: &Value) -> Errs {
    let mut errs = quota_spec(object);
    let scopes = |o: &Value| -> BTreeSet<String> {
        o.get("spec")
            .map(|s| list(s, "scopes"))
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect()
    };
    if scopes(object) != scopes(old) {
        let new_scopes = object.get("spec").and_then(|s| s.get("scopes"));
        errs.push(FieldError::invalid_bare("spec.scopes", &go_scopes(new_scopes), "field is immutable"));
    }
    errs
}

/// `ValidateResourceQuotaStatusUpdate` (the resourceVersion is the API layer's).
pub fn resource_quota_status_update(object: &Value) -> Errs {
    quota_status(object)
}

/// `validateLimitRangeTypeName`.
fn limit_type(value: &str, field: &str) -> Errs {
    let errs: Errs = is_qualified_name(value).iter().map(|m| FieldError::invalid(field, value, m)).collect();
    if !errs.is_empty() {
        return errs;
    }
    if !value.contains('/') && !["Pod", "Container", "PersistentVolumeClaim"].contains(&value) {
        return vec![FieldError::invalid(field, value, "must be a standard limit type or fully qualified")];
    }
    Vec::new()
}

/// `validateLimitRangeResourceName`.
fn limit_resource_name(limit_type: &str, name: &str, field: &str) -> Errs {
    match limit_type {
        "Pod" | "Container" => container_resource_name(name, field),
        _ => resource_name(name, field),
    }
}

/// One resource list of a limit item: its names checked and recorded.
fn section<'a>(
    item: &'a Value,
    name: &str,
    kind: &str,
    path: &str,
    keys: &mut BTreeSet<String>,
    errs: &mut Errs,
) -> &'a Map<String, Value> {
    let values = obj(item, name);
    for resource in values.keys() {
        errs.extend(limit_resource_name(kind, resource, &key(&child(path, name), resource)));
        keys.insert(resource.clone());
    }
    values
}

/// `ValidateLimitRange`.
pub fn limit_range(object: &Value) -> Errs {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errs = Errs::new();
    let mut types = BTreeSet::new();
    for (i, item) in list(spec, "limits").iter().enumerate() {
        let path = index("spec.limits", i);
        let kind = text(item, "type");
        let type_path = child(&path, "type");
        errs.extend(limit_type(kind, &type_path));
        if !types.insert(kind) {
            errs.push(FieldError::duplicate(&type_path, kind));
        }
        let mut keys = BTreeSet::new();
        let max = section(item, "max", kind, &path, &mut keys, &mut errs);
        let min = section(item, "min", kind, &path, &mut keys, &mut errs);
        let (default, default_request) = if kind == "Pod" {
            for name in ["default", "defaultRequest"] {
                if !obj(item, name).is_empty() {
                    errs.push(FieldError::forbidden(&child(&path, name), "may not be specified when `type` is 'Pod'"));
                }
            }
            (empty_map(), empty_map())
        } else {
            (
                section(item, "default", kind, &path, &mut keys, &mut errs),
                section(item, "defaultRequest", kind, &path, &mut keys, &mut errs),
            )
        };
        if kind == "PersistentVolumeClaim" && !min.contains_key("storage") && !max.contains_key("storage") {
            errs.push(FieldError::required(
                &child(&path, "limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let ratios = section(item, "maxLimitRequestRatio", kind, &path, &mut keys, &mut errs);
        for resource in &keys {
            fn get<'m>(m: &'m Map<String, Value>, resource: &str) -> Option<(&'m str, i128)> {
                let t = m.get(resource)?.as_str()?;
                Some((t, nano_value(t)?))
            }
            let (min_q, max_q, default_q, request_q, ratio_q) = (
                get(min, resource),
                get(max, resource),
                get(default, resource),
                get(default_request, resource),
                get(ratios, resource),
            );
            let at = |name: &str| key(&child(&path, name), resource);
            let invalid = |name: &str, shown: &str, message: String| {
                FieldError::invalid_bare(&at(name), &go_value(shown, true), &message)
            };
            if let (Some((lo, l)), Some((hi, h))) = (min_q, max_q) {
                if l > h {
                    errs.push(invalid("min", lo, format!("min value {lo} is greater than max value {hi}")));
                }
            }
            if let (Some((rq, r)), Some((lo, l))) = (request_q, min_q) {
                if l > r {
                    errs.push(invalid(
                        "defaultRequest",
                        rq,
                        format!("min value {lo} is greater than default request value {rq}"),
                    ));
                }
            }
            if let (Some((rq, r)), Some((hi, h))) = (request_q, max_q) {
                if r > h {
                    errs.push(invalid(
                        "defaultRequest",
                        rq,
                        format!("default request value {rq} is greater than max value {hi}"),
                    ));
                }
            }
            if let (Some((rq, r)), Some((dq, d))) = (request_q, default_q) {
                if r > d {
                    errs.push(invalid(
                        "defaultRequest",
                        rq,
                        format!("default request value {rq} is greater than default limit value {dq}"),
                    ));
                }
            }
            if let (Some((dq, d)), Some((lo, l))) = (default_q, min_q) {
                if l > d {
                    errs.push(invalid("default", lo, format!("min value {lo} is greater than default value {dq}")));
                }
            }
            if let (Some((dq, d)), Some((hi, h))) = (default_q, max_q) {
                if d > h {
                    errs.push(invalid("default", hi, format!("default value {dq} is greater than max value {hi}")));
                }
            }
            if let Some((rt, r)) = ratio_q {
                if r < 1_000_000_000 {
                    errs.push(invalid("maxLimitRequestRatio", rt, format!("ratio {rt} is less than 1")));
                }
                if let (Some((_, l)), Some((_, h))) = (min_q, max_q) {
                    // Quantity.Value / MilliValue round up; milli units unless one would overflow.
                    let ceil = |n: i128, unit: i128| n.div_euclid(unit) + i128::from(n.rem_euclid(unit) != 0);
                    const MAX_MILLI: i128 = (i64::MAX / 1000) as i128;
                    let (mut ratio, mut lo, mut hi) =
                        (ceil(r, 1_000_000_000) as f64, ceil(l, 1_000_000_000), ceil(h, 1_000_000_000));
                    if ratio < MAX_MILLI as f64 && lo < MAX_MILLI && hi < MAX_MILLI {
                        ratio = ceil(r, 1_000_000) as f64 / 1000.0;
                        lo = ceil(l, 1_000_000);
                        hi = ceil(h, 1_000_000);
                    }
                    let bound = hi as f64 / lo as f64;
                    if ratio > bound {
                        errs.push(invalid(
                            "maxLimitRequestRatio",
                            rt,
                            format!("ratio {rt} is greater than max/min = {bound:.6}"),
                        ));
                    }
                }
            }
            if let (Some((dq, d)), Some((rq, r))) = (default_q, request_q) {
                if !overcommit_allowed(resource) && d != r {
                    errs.push(invalid(
                        "defaultRequest",
                        rq,
                        format!("default value {dq} must equal to defaultRequest value {rq} in {resource}"),
                    ));
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: Errs) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn q(text: &str) -> String {
        go_value(text, true)
    }

    #[test]
    fn quota_resources_and_values() {
        assert!(messages(resource_quota(&json!({"spec": {"hard": {"pods": "10", "requests.cpu": "2",
            "count/deployments.apps": "3", "hugepages-2Mi": "1Gi"}}})))
        .is_empty());
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"hard": {"cpu": "-1", "pods": "1500m", "widgets": "1"}}}))),
            [
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0".to_string(),
                format!("spec.hard[pods]: Invalid value: {}: must be an integer", go_value("1500m", false)),
                "spec.hard[widgets]: Invalid value: \"widgets\": must be a standard resource type or fully qualified"
                    .into(),
                "spec.hard[widgets]: Invalid value: \"widgets\": must be a standard resource for quota".into(),
            ]
        );
        assert_eq!(
            messages(resource_quota(&json!({"status": {"used": {"storage": "1"}}}))),
            ["status.used[storage]: Invalid value: \"storage\": must be a standard resource for quota"]
        );
    }

    #[test]
    fn quota_scopes() {
        assert!(messages(resource_quota(&json!({"spec": {"hard": {"pods": "1", "cpu": "1"},
            "scopes": ["NotTerminating", "NotBestEffort"]}})))
        .is_empty());
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"hard": {"cpu": "1"}, "scopes": ["BestEffort", "NotBestEffort"]}}))),
            [
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: unsupported scope applied to resource",
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: conflicting scopes",
            ]
        );
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"scopes": ["Sometimes"]}}))),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Sometimes\"}: unsupported scope"]
        );
        let old = json!({"spec": {"scopes": ["Terminating"]}});
        assert!(resource_quota_update(&old, &old).is_empty());
        assert_eq!(
            messages(resource_quota_update(&json!({"spec": {}}), &old)),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): field is immutable"]
        );
    }

    #[test]
    fn quota_scope_selectors() {
        assert!(messages(resource_quota(
            &json!({"spec": {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]},
            {"scopeName": "BestEffort", "operator": "Exists"}]}}})
        ))
        .is_empty());
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"hard": {"cpu": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In"},
                {"scopeName": "Terminating", "operator": "In", "values": ["x"]},
                {"scopeName": "NotTerminating", "operator": "Exists", "values": ["x"]},
                {"scopeName": "Someday", "operator": "Maybe"}]}}}))),
            [
                "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                "spec.scopeSelector.matchExpressions.values: Invalid value: []string{\"x\"}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                "spec.scopeSelector.matchExpressions.scopeName: Invalid value: \"Someday\": unsupported scope",
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"Maybe\": not a valid selector operator",
                "spec.scopeSelector.matchExpressions: Invalid value: []core.ResourceQuotaScope(nil): conflicting scopes",
            ]
        );
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"hard": {"secrets": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "BestEffort", "operator": "Exists"}]}}}))),
            ["spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:\"BestEffort\", Operator:\"Exists\", Values:[]string(nil)}}}: unsupported scope applied to resource"]
        );
        // kube prints the scopes field as it is: `[]` is an empty slice.
        assert_eq!(
            messages(resource_quota(&json!({"spec": {"scopes": [], "scopeSelector": {"matchExpressions": [
                {"scopeName": "Terminating", "operator": "Exists"},
                {"scopeName": "NotTerminating", "operator": "Exists", "values": []}]}}}))),
            ["spec.scopeSelector.matchExpressions: Invalid value: []core.ResourceQuotaScope{}: conflicting scopes"]
        );
    }

    #[test]
    fn limit_ranges() {
        assert!(messages(limit_range(&json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "100m"}, "defaultRequest": {"cpu": "200m"}, "default": {"cpu": "500m"},
                "max": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "4"}},
            {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}},
            {"type": "Pod", "max": {"memory": "1Gi"}}]}})))
        .is_empty());
        assert_eq!(
            messages(limit_range(&json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "2"},
                "default": {"cpu": "1"}, "defaultRequest": {"cpu": "3"}, "max": {"cpu": "1500m"}}]}}))),
            [
                format!("spec.limits[0].min[cpu]: Invalid value: {}: min value 2 is greater than max value 1500m", q("2")),
                format!("spec.limits[0].defaultRequest[cpu]: Invalid value: {}: default request value 3 is greater than max value 1500m", q("3")),
                format!("spec.limits[0].defaultRequest[cpu]: Invalid value: {}: default request value 3 is greater than default limit value 1", q("3")),
                format!("spec.limits[0].default[cpu]: Invalid value: {}: min value 2 is greater than default value 1", q("2")),
            ]
        );
        assert_eq!(
            messages(limit_range(&json!({"spec": {"limits": [
                {"type": "Pod", "default": {"cpu": "1"}},
                {"type": "Pod"},
                {"type": "Cluster"},
                {"type": "PersistentVolumeClaim", "maxLimitRequestRatio": {"storage": "500m"}}]}}))),
            [
                "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'".to_string(),
                "spec.limits[1].type: Duplicate value: \"Pod\"".into(),
                "spec.limits[2].type: Invalid value: \"Cluster\": must be a standard limit type or fully qualified".into(),
                "spec.limits[3].limits: Required value: either minimum or maximum storage value is required, but neither was provided".into(),
                format!("spec.limits[3].maxLimitRequestRatio[storage]: Invalid value: {}: ratio 500m is less than 1", q("500m")),
            ]
        );
        assert_eq!(
            messages(limit_range(&json!({"spec": {"limits": [{"type": "Container", "min": {"memory": "1Gi"},
                "max": {"memory": "2Gi"}, "maxLimitRequestRatio": {"memory": "3"},
                "default": {"example.com/gpu": "2"}, "defaultRequest": {"example.com/gpu": "1"}}]}}))),
            [
                format!("spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: {}: default value 2 must equal to defaultRequest value 1 in example.com/gpu", q("1")),
                format!("spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: {}: ratio 3 is greater than max/min = 2.000000", q("3")),
            ]
        );
    }
}
