//! Resource requirements (`ValidateContainerResourceRequirements`,
//! `ValidateResourceQuantityValue`) and resource names.

use super::*;

/// Whether a resource name is native (no domain, or `kubernetes.io/`).
pub(crate) fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// kube's `IsOvercommitAllowed`.
pub(crate) fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !name.starts_with("hugepages-")
}

/// kube's `IsExtendedResourceName`.
pub(crate) fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with("requests.")
        && crate::types::validation::is_qualified_name(&format!("requests.{name}")).is_empty()
}

pub(crate) const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// kube's `validateContainerResourceName`.
pub(crate) fn container_resource_name(name: &str, field: &str) -> Errs {
    let qualified = crate::types::validation::is_qualified_name(name);
    if !qualified.is_empty() {
        return qualified.iter().map(|m| FieldError::invalid(field, name, m)).collect();
    }
    let mut errs = Errs::new();
    if !name.contains('/') {
        let standard = STANDARD_RESOURCES.contains(&name)
            || name.starts_with("hugepages-")
            || name.starts_with("requests.hugepages-");
        if !standard {
            errs.push(FieldError::invalid(field, name, "must be a standard resource type or fully qualified"));
        }
        if !["cpu", "memory", "ephemeral-storage"].contains(&name) && !name.starts_with("hugepages-") {
            errs.push(FieldError::invalid(field, name, "must be a standard resource for containers"));
        }
    } else if !is_native_resource(name) && !is_extended_resource(name) {
        errs.push(FieldError::invalid(field, name, "doesn't follow extended resource name standard"));
    }
    errs
}

/// kube's `ValidateContainerResourceRequirements`.
pub fn resource_requirements(resources: Option<&Value>, path: &str) -> Errs {
    let Some(resources) = resources.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let limits = obj(resources, "limits");
    let requests = obj(resources, "requests");
    let limits_path = child(path, "limits");
    let requests_path = child(path, "requests");
    let mut errs = Errs::new();
    let mut cpu_or_memory = false;
    let mut huge_pages = false;
    for (name, quantity) in limits {
        let field = key(&limits_path, name);
        errs.extend(container_resource_name(name, &field));
        errs.extend(resource_quantity(name, quantity, &field));
        huge_pages |= name.starts_with("hugepages-");
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    for (name, quantity) in requests {
        let field = key(&requests_path, name);
        errs.extend(container_resource_name(name, &field));
        errs.extend(resource_quantity(name, quantity, &field));
        errs.extend(request_within_limit(name, quantity, limits, &requests_path, &limits_path));
        huge_pages |= name.starts_with("hugepages-");
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    if huge_pages && !cpu_or_memory {
        errs.push(FieldError::forbidden(path, "HugePages require cpu or memory"));
    }
    errs
}

/// A request against its limit.
pub(super) fn request_within_limit(
    name: &str,
    request: &Value,
    limits: &Map<String, Value>,
    requests_path: &str,
    limits_path: &str,
) -> Errs {
    let request_text = request.as_str().unwrap_or("");
    let Some(limit) = limits.get(name) else {
        if overcommit_allowed(name) {
            return Vec::new();
        }
        return vec![FieldError::required(limits_path, "Limit must be set for non overcommitable resources")];
    };
    let limit_text = limit.as_str().unwrap_or("");
    let (Some(r), Some(l)) = (nano_value(request_text), nano_value(limit_text)) else {
        return Vec::new();
    };
    if r != l && !overcommit_allowed(name) {
        vec![FieldError::invalid(
            requests_path,
            request_text,
            &format!("must be equal to {name} limit of {limit_text}"),
        )]
    } else if r > l {
        vec![FieldError::invalid(
            requests_path,
            request_text,
            &format!("must be less than or equal to {name} limit of {limit_text}"),
        )]
    } else {
        Vec::new()
    }
}

/// kube's `ValidateResourceQuantityValue`: not negative; whole numbers for
/// integer resources.
pub fn resource_quantity(name: &str, quantity: &Value, field: &str) -> Errs {
    let text = quantity.as_str().unwrap_or("");
    let Some(value) = nano_value(text) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    if value < 0 {
        errs.push(FieldError::invalid(field, text, "must be greater than or equal to 0"));
    }
    const INTEGER_RESOURCES: &[&str] = &[
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let integer = INTEGER_RESOURCES.contains(&name) || is_extended_resource(name);
    if integer && value % 1_000_000_000 != 0 {
        // The Quantity is passed by value: Go prints it with `%#v`.
        errs.push(FieldError::invalid_bare(
            field,
            &super::super::quantity::go_value(text, false),
            "must be an integer",
        ));
    }
    errs
}
