//! resource.k8s.io (dynamic resource allocation) validation with
//! kube-apiserver v1.36's words (`pkg/apis/resource/validation/validation.go`),
//! the basic rules of each kind: a DeviceClass's selectors (each a CEL
//! selector) and opaque configurations (a driver name and parameters); a
//! ResourceClaim's (and a ResourceClaimTemplate's inner) device requests (a
//! DNS-label name, listed once, exactly one of `exactly` and
//! `firstAvailable`, a device class name, an allocation mode and a count that
//! fits it), the spec immutable; a ResourceSlice's driver, pool (name,
//! generation, slice count), exactly one node selection, a node name, device
//! names listed once, and its driver, pool name and node name immutable.
//!
//! Not checked: CEL expressions are not compiled (only their length is);
//! device attributes, capacities, taints, counters and constraints, request
//! tolerations, the alternatives of `firstAvailable` beyond their names,
//! the claim status (allocation results). Where kube prints a Go struct
//! (`field is immutable` of a spec) its fields are written `...`.
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, FieldError};
use serde_json::Value;

/// `resource.DriverNameMaxLength`.
const DRIVER_NAME_MAX_LEN: usize = 63;
/// `resource.PoolNameMaxLength`.
const POOL_NAME_MAX_LEN: usize = 253;
/// `resource.CELSelectorExpressionMaxLength`.
const CEL_EXPRESSION_MAX_LEN: usize = 10 * 1024;
/// `resource.DeviceSelectorsMaxSize`, `DeviceConfigMaxSize`, `DeviceRequestsMaxSize`.
const SELECTORS_MAX: usize = 32;
const CONFIG_MAX: usize = 32;
const REQUESTS_MAX: usize = 32;
/// `resource.ResourceSliceMaxDevices`.
const SLICE_DEVICES_MAX: usize = 128;

fn dns_label(value: &str, field: &str) -> Vec<FieldError> {
    validation::is_dns1123_label(value).iter().map(|m| FieldError::invalid(field, value, m)).collect()
}

fn dns_subdomain(value: &str, field: &str) -> Vec<FieldError> {
    validation::is_dns1123_subdomain(value).iter().map(|m| FieldError::invalid(field, value, m)).collect()
}

/// `validateDriverName`.
fn driver_name(name: &str, field: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let mut errs = Vec::new();
    if name.len() > DRIVER_NAME_MAX_LEN {
        errs.push(FieldError::too_long(field, DRIVER_NAME_MAX_LEN));
    }
    for message in validation::is_dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(field, name, &message));
    }
    errs
}

/// `validateSlice`'s bound.
fn too_many(items: &[Value], max: usize, field: &str) -> Vec<FieldError> {
    if items.len() > max {
        vec![FieldError::too_many(field, items.len(), max)]
    } else {
        Vec::new()
    }
}

/// `validateSelector`: a CEL selector whose expression fits.
fn selectors(spec: &Fields, field: &str) -> Vec<FieldError> {
    let items = list(spec, "selectors");
    let mut errs = too_many(items, SELECTORS_MAX, field);
    for (i, selector) in items.iter().enumerate() {
        let path = format!("{field}[{i}]");
        match selector.get("cel").and_then(Value::as_object) {
            None => errs.push(FieldError::required(&format!("{path}.cel"), "")),
            Some(cel) => {
                if text(cel, "expression").len() > CEL_EXPRESSION_MAX_LEN {
                    errs.push(FieldError::too_long(&format!("{path}.cel.expression"), CEL_EXPRESSION_MAX_LEN));
                }
            }
        }
    }
    errs
}

/// `validateDeviceConfiguration`: an opaque configuration.
fn configurations(spec: &Fields, field: &str, with_requests: bool) -> Vec<FieldError> {
    let items = list(spec, "config");
    let mut errs = too_many(items, CONFIG_MAX, field);
    let empty = Fields::new();
    for (i, config) in items.iter().enumerate() {
        let config = config.as_object().unwrap_or(&empty);
        let path = format!("{field}[{i}]");
        if with_requests {
            for (j, request) in list(config, "requests").iter().enumerate() {
                let request = request.as_str().unwrap_or_default();
                // A request name, or `request/subrequest`.
                for part in request.split('/') {
                    errs.extend(dns_label(part, &format!("{path}.requests[{j}]")));
                }
            }
        }
        match obj(config, "opaque") {
            None => errs.push(FieldError::required(&format!("{path}.opaque"), "")),
            Some(opaque) => {
                errs.extend(driver_name(text(opaque, "driver"), &format!("{path}.opaque.driver")));
                if opaque.get("parameters").is_none_or(Value::is_null) {
                    errs.push(FieldError::required(&format!("{path}.opaque.parameters"), ""));
                }
            }
        }
    }
    errs
}

pub fn device_class(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = selectors(spec, "spec.selectors");
    errs.extend(configurations(spec, "spec.config", false));
    errs
}

/// `validateResourceClaimSpec` at `path` (`spec`, or a template's `spec.spec`).
fn claim_spec(spec: &Fields, path: &str) -> Vec<FieldError> {
    let empty = Fields::new();
    let devices = obj(spec, "devices").unwrap_or(&empty);
    let field = format!("{path}.devices.requests");
    let requests = list(devices, "requests");
    let mut errs = too_many(requests, REQUESTS_MAX, &field);
    let mut names: Vec<&str> = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let request = request.as_object().unwrap_or(&empty);
        let at = format!("{field}[{i}]");
        let name = text(request, "name");
        errs.extend(dns_label(name, &format!("{at}.name")));
        if names.contains(&name) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), name));
        }
        names.push(name);
        let exactly = obj(request, "exactly");
        let alternatives = list(request, "firstAvailable");
        if let Some(exactly) = exactly {
            errs.extend(exact_request(exactly, &format!("{at}.exactly")));
        }
        for (j, alternative) in alternatives.iter().enumerate() {
            let alternative = alternative.as_object().unwrap_or(&empty);
            let sub = format!("{at}.firstAvailable[{j}]");
            errs.extend(dns_label(text(alternative, "name"), &format!("{sub}.name")));
            errs.extend(device_class_name(text(alternative, "deviceClassName"), &format!("{sub}.deviceClassName")));
        }
        match usize::from(exactly.is_some()) + usize::from(!alternatives.is_empty()) {
            0 => errs.push(FieldError::required(&at, "exactly one of `exactly` or `firstAvailable` is required")),
            1 => {}
            _ => errs.push(FieldError::invalid_bare(
                &at,
                "null",
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )),
        }
    }
    errs.extend(configurations(devices, &format!("{path}.devices.config"), true));
    errs
}

fn device_class_name(name: &str, field: &str) -> Vec<FieldError> {
    dns_subdomain(name, field)
}

/// `validateExactDeviceRequest`.
fn exact_request(request: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = device_class_name(text(request, "deviceClassName"), &format!("{path}.deviceClassName"));
    errs.extend(selectors(request, &format!("{path}.selectors")));
    let count = int(request, "count").unwrap_or(0);
    let mode = text(request, "allocationMode");
    match mode {
        "All" => {
            if count != 0 {
                errs.push(invalid_raw(
                    &format!("{path}.count"),
                    &count.to_string(),
                    "must not be specified when allocationMode is 'All'",
                ));
            }
        }
        "ExactCount" => {
            if count <= 0 {
                errs.push(invalid_raw(&format!("{path}.count"), &count.to_string(), "must be greater than zero"));
            }
        }
        _ => errs.push(not_supported(&format!("{path}.allocationMode"), mode, &["All", "ExactCount"])),
    }
    errs
}

pub fn resource_claim(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    claim_spec(obj(object, "spec").unwrap_or(&empty), "spec")
}

pub fn resource_claim_template(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    if let Some(metadata) = obj(spec, "metadata") {
        errs.extend(labels_at(string_map(metadata, "labels"), "spec.metadata.labels"));
        errs.extend(annotations_at(string_map(metadata, "annotations"), "spec.metadata.annotations"));
    }
    errs.extend(claim_spec(obj(spec, "spec").unwrap_or(&empty), "spec.spec"));
    errs
}

/// A claim's and a template's spec may not change (`ValidateImmutableField`).
pub fn spec_immutable(object: &Fields, old: &Fields, kind: &str) -> Vec<FieldError> {
    if object.get("spec") == old.get("spec") {
        return Vec::new();
    }
    let ty = if kind == "ResourceClaim" {
        "resource.ResourceClaimSpec{...}"
    } else {
        "resource.ResourceClaimTemplateSpec{...}"
    };
    vec![FieldError::invalid_bare("spec", ty, IMMUTABLE)]
}

pub fn resource_slice(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = driver_name(text(spec, "driver"), "spec.driver");
    let pool = obj(spec, "pool").unwrap_or(&empty);
    let pool_name = text(pool, "name");
    if pool_name.is_empty() {
        errs.push(FieldError::required("spec.pool.name", ""));
    } else {
        if pool_name.len() > POOL_NAME_MAX_LEN {
            errs.push(FieldError::too_long("spec.pool.name", POOL_NAME_MAX_LEN));
        }
        for part in pool_name.split('/') {
            errs.extend(dns_subdomain(part, "spec.pool.name"));
        }
    }
    let count = int(pool, "resourceSliceCount").unwrap_or(0);
    if count <= 0 {
        errs.push(invalid_raw("spec.pool.resourceSliceCount", &count.to_string(), "must be greater than zero"));
    }
    if let Some(generation) = int(pool, "generation").filter(|g| *g < 0) {
        errs.push(invalid_raw(
            "spec.pool.generation",
            &generation.to_string(),
            "must be greater than or equal to zero",
        ));
    }
    let mut set = Vec::new();
    let node_name = text(spec, "nodeName");
    if !node_name.is_empty() {
        set.push("`nodeName`");
        errs.extend(dns_subdomain(node_name, "spec.nodeName"));
    }
    if let Some(selector) = obj(spec, "nodeSelector") {
        set.push("`nodeSelector`");
        let terms = list(selector, "nodeSelectorTerms");
        if terms.len() != 1 {
            errs.push(FieldError::invalid_bare(
                "spec.nodeSelector.nodeSelectorTerms",
                &format!("[]core.NodeSelectorTerm{{{}}}", if terms.is_empty() { "" } else { "..." }),
                "must have exactly one node selector term",
            ));
        }
    }
    if spec.get("allNodes").and_then(Value::as_bool) == Some(true) {
        set.push("`allNodes`");
    }
    if spec.get("perDeviceNodeSelection").and_then(Value::as_bool) == Some(true) {
        set.push("`perDeviceNodeSelection`");
    }
    const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set.len() {
        0 => errs.push(FieldError::required("spec", ONE_OF)),
        1 => {}
        _ => errs.push(FieldError::invalid(
            "spec",
            &format!("{{{}}}", set.join(", ")),
            &format!("{ONE_OF}, but multiple fields are set"),
        )),
    }
    let devices = list(spec, "devices");
    errs.extend(too_many(devices, SLICE_DEVICES_MAX, "spec.devices"));
    let mut names: Vec<&str> = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        let name = device.get("name").and_then(Value::as_str).unwrap_or("");
        let field = format!("spec.devices[{i}].name");
        errs.extend(dns_label(name, &field));
        if names.contains(&name) {
            errs.push(FieldError::duplicate(&field, name));
        }
        names.push(name);
    }
    errs
}

/// `ValidateResourceSliceUpdate`: driver, pool name and node name are fixed.
pub fn resource_slice_update(object: &Fields, old: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let (spec, old_spec) = (obj(object, "spec").unwrap_or(&empty), obj(old, "spec").unwrap_or(&empty));
    let pool_name = |s: &Fields| obj(s, "pool").map(|p| text(p, "name").to_string()).unwrap_or_default();
    let mut errs = Vec::new();
    if pool_name(spec) != pool_name(old_spec) {
        errs.push(FieldError::invalid("spec.pool.name", &pool_name(spec), IMMUTABLE));
    }
    if text(spec, "driver") != text(old_spec, "driver") {
        errs.push(FieldError::invalid("spec.driver", text(spec, "driver"), IMMUTABLE));
    }
    if text(spec, "nodeName") != text(old_spec, "nodeName") {
        // A *string: Go prints the pointer's target.
        let shown = match spec.get("nodeName").and_then(Value::as_str) {
            Some(name) => validation::go_quote(name),
            None => "null".into(),
        };
        errs.push(FieldError::invalid_bare("spec.nodeName", &shown, IMMUTABLE));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(f: fn(&Fields) -> Vec<FieldError>, v: Value) -> Vec<String> {
        f(v.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

    #[test]
    fn device_classes() {
        assert!(check(
            device_class,
            json!({"spec": {"selectors": [{"cel": {"expression": "device.driver == \"d\""}}],
            "config": [{"opaque": {"driver": "dra.example.com", "parameters": {}}}]}})
        )
        .is_empty());
        assert_eq!(
            check(device_class, json!({"spec": {"selectors": [{}, {"cel": {"expression": "x".repeat(10241)}}],
                "config": [{}, {"opaque": {"driver": "Bad_Driver"}}]}})),
            [
                "spec.selectors[0].cel: Required value",
                "spec.selectors[1].cel.expression: Too long: may not be more than 10240 bytes",
                "spec.config[0].opaque: Required value",
                "spec.config[1].opaque.driver: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.config[1].opaque.parameters: Required value",
            ]
        );
    }

    #[test]
    fn resource_claims() {
        let valid = json!({"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}},
            {"name": "all", "exactly": {"deviceClassName": "nic", "allocationMode": "All"}},
            {"name": "either", "firstAvailable": [{"name": "big", "deviceClassName": "big"}]}]}}});
        assert!(check(resource_claim, valid.clone()).is_empty());
        assert!(check(resource_claim, json!({"spec": {}})).is_empty());
        assert_eq!(
            check(resource_claim, json!({"spec": {"devices": {"requests": [
                {"name": "Gpu", "exactly": {"deviceClassName": "", "allocationMode": "ExactCount", "count": 0}},
                {"name": "Gpu", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}},
                {"name": "none"},
                {"name": "both", "exactly": {"deviceClassName": "c", "allocationMode": "Some", "count": 1},
                    "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}]}}})),
            [
                format!("spec.devices.requests[0].name: Invalid value: \"Gpu\": {LABEL_MSG}"),
                "spec.devices.requests[0].exactly.deviceClassName: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
                "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero".into(),
                format!("spec.devices.requests[1].name: Invalid value: \"Gpu\": {LABEL_MSG}"),
                "spec.devices.requests[1].name: Duplicate value: \"Gpu\"".into(),
                "spec.devices.requests[1].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'".into(),
                "spec.devices.requests[2]: Required value: exactly one of `exactly` or `firstAvailable` is required".into(),
                "spec.devices.requests[3].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\"".into(),
                "spec.devices.requests[3]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set".into(),
            ]
        );
        let template = json!({"spec": {"metadata": {"labels": {"a": "b"}}, "spec": valid["spec"]}});
        assert!(check(resource_claim_template, template.clone()).is_empty());
        assert_eq!(
            check(resource_claim_template, json!({"spec": {"spec": {"devices": {"requests": [{"name": "x"}]}}}})),
            ["spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"]
        );
        let (a, b) = (valid.as_object().unwrap(), json!({"spec": {}}));
        assert_eq!(
            spec_immutable(a, b.as_object().unwrap(), "ResourceClaim")
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["spec: Invalid value: resource.ResourceClaimSpec{...}: field is immutable"]
        );
        assert!(spec_immutable(a, a, "ResourceClaim").is_empty());
    }

    #[test]
    fn resource_slices() {
        let valid = json!({"spec": {"driver": "dra.example.com", "pool": {"name": "node-1/pool", "generation": 0,
            "resourceSliceCount": 1}, "nodeName": "node-1", "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}});
        assert!(check(resource_slice, valid.clone()).is_empty());
        assert_eq!(
            check(resource_slice, json!({"spec": {"pool": {"generation": -1}, "devices": [{"name": "a"}, {"name": "a"}]}})),
            [
                "spec.driver: Required value",
                "spec.pool.name: Required value",
                "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
                "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
                "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
                "spec.devices[1].name: Duplicate value: \"a\"",
            ]
        );
        assert_eq!(
            check(resource_slice, json!({"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
                "nodeName": "n", "allNodes": true, "nodeSelector": {"nodeSelectorTerms": []}}})),
            [
                "spec.nodeSelector.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm{}: must have exactly one node selector term",
                "spec: Invalid value: \"{`nodeName`, `nodeSelector`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
            ]
        );
        let moved = json!({"spec": {"driver": "other.example.com", "pool": {"name": "node-1/pool", "resourceSliceCount": 1},
            "nodeName": "node-2"}});
        assert_eq!(
            resource_slice_update(moved.as_object().unwrap(), valid.as_object().unwrap())
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "spec.driver: Invalid value: \"other.example.com\": field is immutable",
                "spec.nodeName: Invalid value: \"node-2\": field is immutable",
            ]
        );
    }
}
