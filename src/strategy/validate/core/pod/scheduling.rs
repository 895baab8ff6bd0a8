//! Scheduling and DNS (`ValidateTolerations`, `validateAffinity`,
//! `ValidateNodeSelector`, `validatePodDNSConfig`, scheduling gates,
//! topology spread constraints).

use super::*;

/// kube's `ValidateTolerations`.
pub fn tolerations(items: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, toleration) in items.iter().enumerate() {
        let item_path = index(path, i);
        let operator_path = child(&item_path, "operator");
        let key_text = text(toleration, "key");
        let operator = text(toleration, "operator");
        let value = text(toleration, "value");
        let effect = text(toleration, "effect");
        if !key_text.is_empty() {
            errs.extend(validate_label_name(&child(&item_path, "key"), key_text));
        }
        if key_text.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                &operator_path,
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if has(toleration, "tolerationSeconds") && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                &child(&item_path, "effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let msgs = is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(&operator_path, value, &msgs.join(";")));
                }
            }
            "Exists" if !value.is_empty() => {
                errs.push(FieldError::invalid(
                    &operator_path,
                    value,
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
            "Exists" => {}
            other => errs.push(FieldError::not_supported(&operator_path, other, &["Equal", "Exists"])),
        }
        if !effect.is_empty() {
            errs.extend(taint_effect(effect, &child(&item_path, "effect")));
        }
    }
    errs
}

/// kube's `validateTaintEffect` of a non-empty effect.
pub fn taint_effect(effect: &str, field: &str) -> Errs {
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if EFFECTS.contains(&effect) {
        Vec::new()
    } else {
        vec![FieldError::not_supported(field, effect, EFFECTS)]
    }
}

/// kube's `validateAffinity`.
pub(super) fn affinity(affinity: Option<&Value>, path: &str) -> Errs {
    let Some(affinity) = affinity.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    if let Some(node) = affinity.get("nodeAffinity").filter(|v| v.is_object()) {
        let node_path = child(path, "nodeAffinity");
        if let Some(required) = node.get("requiredDuringSchedulingIgnoredDuringExecution").filter(|v| v.is_object()) {
            errs.extend(node_selector(required, &child(&node_path, "requiredDuringSchedulingIgnoredDuringExecution")));
        }
        let preferred_path = child(&node_path, "preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(node, "preferredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            errs.extend(weight(term, &index(&preferred_path, i)));
            errs.extend(node_selector_term(
                obj_value(term, "preference"),
                &child(&index(&preferred_path, i), "preference"),
                true,
            ));
        }
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(pod) = affinity.get(kind).filter(|v| v.is_object()) else {
            continue;
        };
        let kind_path = child(path, kind);
        let required_path = child(&kind_path, "requiredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(pod, "requiredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            errs.extend(pod_affinity_term(term, &index(&required_path, i)));
        }
        let preferred_path = child(&kind_path, "preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(pod, "preferredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            let term_path = index(&preferred_path, i);
            errs.extend(weight(term, &term_path));
            errs.extend(pod_affinity_term(obj_value(term, "podAffinityTerm"), &child(&term_path, "podAffinityTerm")));
        }
    }
    errs
}

pub(super) fn obj_value<'a>(v: &'a Value, key: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    v.get(key).unwrap_or(&NULL)
}

pub(super) fn weight(term: &Value, path: &str) -> Errs {
    let w = int(term, "weight").unwrap_or(0);
    if w <= 0 || w > 100 {
        vec![invalid_int(&child(path, "weight"), w, "must be in the range 1-100")]
    } else {
        Vec::new()
    }
}

/// kube's `validatePodAffinityTerm`.
pub(super) fn pod_affinity_term(term: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    for selector in ["labelSelector", "namespaceSelector"] {
        if let Some(s) = term.get(selector) {
            errs.extend(validate_label_selector(s, &child(path, selector)));
        }
    }
    for name in list(term, "namespaces") {
        let name = name.as_str().unwrap_or("");
        errs.extend(dns1123_label(&child(path, "namespace"), name));
    }
    let topology_key = text(term, "topologyKey");
    if topology_key.is_empty() {
        errs.push(FieldError::required(&child(path, "topologyKey"), "can not be empty"));
    }
    errs.extend(validate_label_name(&child(path, "topologyKey"), topology_key));
    errs
}

/// kube's `ValidateNodeSelector`.
pub fn node_selector(selector: &Value, path: &str) -> Errs {
    let terms_path = child(path, "nodeSelectorTerms");
    let terms = list(selector, "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![FieldError::required(&terms_path, "must have at least one node selector term")];
    }
    terms.iter().enumerate().flat_map(|(i, term)| node_selector_term(term, &index(&terms_path, i), false)).collect()
}

/// kube's `ValidateNodeSelectorTerm`.
pub(super) fn node_selector_term(term: &Value, path: &str, allow_invalid_values: bool) -> Errs {
    let mut errs = Errs::new();
    for (j, req) in list(term, "matchExpressions").iter().enumerate() {
        let req_path = index(&child(path, "matchExpressions"), j);
        let values = list(req, "values");
        match text(req, "operator") {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                &child(&req_path, "values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            other => {
                errs.push(FieldError::invalid(&child(&req_path, "operator"), other, "not a valid selector operator"))
            }
        }
        errs.extend(validate_label_name(&child(&req_path, "key"), text(req, "key")));
        if !allow_invalid_values {
            for (k, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or("");
                let field = index(&child(&req_path, "values"), k);
                errs.extend(is_valid_label_value(value).iter().map(|m| FieldError::invalid(&field, value, m)));
            }
        }
    }
    for (j, req) in list(term, "matchFields").iter().enumerate() {
        let req_path = index(&child(path, "matchFields"), j);
        let values = list(req, "values");
        match text(req, "operator") {
            "In" | "NotIn" if values.len() != 1 => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            other => {
                errs.push(FieldError::invalid(&child(&req_path, "operator"), other, "not a valid selector operator"))
            }
        }
        let field_key = text(req, "key");
        if field_key != "metadata.name" {
            errs.push(FieldError::invalid(&child(&req_path, "key"), field_key, "not a valid field selector key"));
        } else {
            for (k, value) in values.iter().enumerate() {
                errs.extend(dns1123_subdomain(&index(&child(&req_path, "values"), k), value.as_str().unwrap_or("")));
            }
        }
    }
    errs
}

/// kube's `validatePodDNSConfig` (RelaxedDNSSearchValidation is on).
pub(super) fn dns_config(spec: &Value, path: &str) -> Errs {
    let config = spec.get("dnsConfig").filter(|v| v.is_object());
    if text(spec, "dnsPolicy") == "None" {
        let Some(config) = config else {
            return vec![FieldError::required(path, "must provide `dnsConfig` when `dnsPolicy` is None")];
        };
        if list(config, "nameservers").is_empty() {
            return vec![FieldError::required(
                &child(path, "nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )];
        }
    }
    let Some(config) = config else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    let nameservers = list(config, "nameservers");
    if nameservers.len() > 3 {
        errs.push(FieldError::invalid_bare(
            &child(path, "nameservers"),
            &go_string_slice(nameservers),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        let ns = ns.as_str().unwrap_or("");
        if !is_valid_ip(ns) {
            errs.push(FieldError::invalid(&index(&child(path, "nameservers"), i), ns, INVALID_IP_MSG));
        }
    }
    let searches = list(config, "searches");
    if searches.len() > 32 {
        errs.push(FieldError::invalid_bare(
            &child(path, "searches"),
            &go_string_slice(searches),
            "must not have more than 32 search paths",
        ));
    }
    let joined: Vec<&str> = searches.iter().map(|s| s.as_str().unwrap_or("")).collect();
    if joined.join(" ").len() > 2048 {
        errs.push(FieldError::invalid_bare(
            &child(path, "searches"),
            &go_string_slice(searches),
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, search) in joined.iter().enumerate() {
        if *search == "." {
            continue;
        }
        let trimmed = search.strip_suffix('.').unwrap_or(search);
        let field = index(&child(path, "searches"), i);
        errs.extend(subdomain_with_underscore(trimmed).iter().map(|m| FieldError::invalid(&field, trimmed, m)));
    }
    for (i, option) in list(config, "options").iter().enumerate() {
        if text(option, "name").is_empty() {
            errs.push(FieldError::required(&index(&child(path, "options"), i), "must not be empty"));
        }
    }
    errs
}

/// kube's `IsDNS1123SubdomainWithUnderscore`: labels of
/// `_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?` joined by dots.
pub(super) fn subdomain_with_underscore(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(crate::types::validation::max_len_error(253));
    }
    let label_ok = |label: &str| {
        let b = label.strip_prefix('_').unwrap_or(label).as_bytes();
        let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-' || *c == b'_'),
            _ => false,
        }
    };
    if !value.split('.').all(label_ok) {
        errs.push(regex_error_message(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
            "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    errs
}

/// kube's `validateSchedulingGates`.
pub(super) fn scheduling_gates(gates: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, gate) in gates.iter().enumerate() {
        let name = text(gate, "name");
        errs.extend(qualified_name(&index(path, i), name));
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(&index(path, i), name));
        }
    }
    errs
}

/// kube's `validateTopologySpreadConstraints` (the common rules).
pub(super) fn topology_spread(constraints: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, constraint) in constraints.iter().enumerate() {
        let item_path = index(path, i);
        let skew = int(constraint, "maxSkew").unwrap_or(0);
        if skew <= 0 {
            errs.push(invalid_int(&child(&item_path, "maxSkew"), skew, "must be greater than zero"));
        }
        let topology_key = text(constraint, "topologyKey");
        if topology_key.is_empty() {
            errs.push(FieldError::required(&child(&item_path, "topologyKey"), "can not be empty"));
        }
        let action = text(constraint, "whenUnsatisfiable");
        const ACTIONS: &[&str] = &["DoNotSchedule", "ScheduleAnyway"];
        if !ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(&child(&item_path, "whenUnsatisfiable"), action, ACTIONS));
        }
        let repeated = constraints
            .iter()
            .skip(i + 1)
            .any(|other| text(other, "topologyKey") == topology_key && text(other, "whenUnsatisfiable") == action);
        if repeated {
            errs.push(FieldError::duplicate(
                &child(&item_path, "{topologyKey, whenUnsatisfiable}"),
                &format!("{{{topology_key}, {action}}}"),
            ));
        }
        if let Some(min) = int(constraint, "minDomains") {
            let field = child(&item_path, "minDomains");
            if min <= 0 {
                errs.push(invalid_int(&field, min, "must be greater than zero"));
            }
            if action != "DoNotSchedule" {
                let msg = format!("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}");
                errs.push(invalid_int(&field, min, &msg));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            errs.extend(supported_if_set(constraint.get(policy), &child(&item_path, policy), &["Honor", "Ignore"]));
        }
        if let Some(selector) = constraint.get("labelSelector") {
            errs.extend(validate_label_selector(selector, &child(&item_path, "labelSelector")));
        }
    }
    errs
}
