//! resource.k8s.io (dynamic resource allocation) validation with
//! kube-apiserver v1.36's words (`pkg/apis/resource/validation/validation.go`,
//! read at kubernetes/kubernetes 009801d9, a v1.37 development copy; the
//! rules here are those whose fields v1.36's API has), the basic rules of
//! each kind: a DeviceClass's selectors (each a CEL selector) and opaque
//! configurations (a driver name and parameters that are a JSON object); a
//! ResourceClaim's (and a ResourceClaimTemplate's inner) device requests (a
//! DNS-label name, listed once, exactly one of `exactly` and
//! `firstAvailable`, the one set checked: device class name, selectors,
//! allocation mode and a count that fits it), constraints' and configurations'
//! request references; on update only that the spec is unchanged; a
//! ResourceSlice's driver, pool (name, generation, slice count), exactly one
//! node selection (per device when `perDeviceNodeSelection`), a node name,
//! devices listed once and within bound, not both devices and shared
//! counters, and its driver, pool name and node name immutable.
//!
//! As kube's `validateSlice`/`validateSet`: a list past its bound is one
//! `Too many` (its items are not checked), and a repeated key is a
//! `Duplicate` at the item's index, after the items' own errors.
//!
//! Not checked: CEL expressions are not compiled (only their length is);
//! device attributes, capacities, taints, counters, the constraints'
//! attribute names, request tolerations, node selectors' terms, the claim
//! status (allocation results). Where kube prints a Go struct (`field is
//! immutable` of a spec) its fields are written `...`. The opaque
//! configuration's driver, which kube's declarative rules cover, is only
//! `Required` when empty; the slice's driver, which they do not, is also
//! reported as not a subdomain, as `ValidateCSIDriverName` does.
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
/// `resource.DeviceConstraintsMaxSize`.
const CONSTRAINTS_MAX: usize = 32;
/// `resource.FirstAvailableDeviceRequestMaxSize`.
const FIRST_AVAILABLE_MAX: usize = 8;
/// `resource.OpaqueParametersMaxLength`.
const OPAQUE_PARAMETERS_MAX_LEN: usize = 10 * 1024;
/// `resource.ResourceSliceMaxDevices`, and
/// `ResourceSliceMaxDevicesWithAdvancedFeatures` for a slice whose devices
/// have taints, consume counters or have list attributes.
const SLICE_DEVICES_MAX: usize = 128;
const SLICE_DEVICES_ADVANCED_MAX: usize = 64;

fn dns_label(value: &str, field: &str) -> Vec<FieldError> {
    validation::is_dns1123_label(value).iter().map(|m| FieldError::invalid(field, value, m)).collect()
}

fn dns_subdomain(value: &str, field: &str) -> Vec<FieldError> {
    validation::is_dns1123_subdomain(value).iter().map(|m| FieldError::invalid(field, value, m)).collect()
}

/// `validateDriverName` (core's `ValidateCSIDriverName`): an empty name is
/// both required and not a subdomain, as kube reports it.
fn driver_name(name: &str, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(field, ""));
    }
    if name.len() > DRIVER_NAME_MAX_LEN {
        errs.push(FieldError::too_long(field, DRIVER_NAME_MAX_LEN));
    }
    for message in validation::is_dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(field, name, &message));
    }
    errs
}

/// The opaque configuration's driver: kube's declarative rules cover it
/// (required, then the format), so an empty name is only required.
fn opaque_driver_name(name: &str, field: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    driver_name(name, field)
}

/// `validateSlice`'s bound: past it, kube reports only the count (the items
/// are not validated).
fn too_many(items: &[Value], max: usize, field: &str) -> Option<FieldError> {
    (items.len() > max).then(|| FieldError::too_many(field, items.len(), max))
}

/// `validateSet`'s uniqueness: after the items' own errors, each repeated key
/// is a `Duplicate` at the item's index.
fn duplicates<'a>(keys: impl IntoIterator<Item = &'a str>, field: &str) -> Vec<FieldError> {
    let mut seen: Vec<&str> = Vec::new();
    let mut errs = Vec::new();
    for (i, key) in keys.into_iter().enumerate() {
        if seen.contains(&key) {
            errs.push(FieldError::duplicate(&format!("{field}[{i}]"), key));
        } else {
            seen.push(key);
        }
    }
    errs
}

/// `validateSelectorSlice`/`validateSelector`: a CEL selector whose
/// expression fits.
fn selectors(spec: &Fields, field: &str) -> Vec<FieldError> {
    let items = list(spec, "selectors");
    if let Some(err) = too_many(items, SELECTORS_MAX, field) {
        return vec![err];
    }
    let mut errs = Vec::new();
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

/// `validateRawExtension` of opaque parameters: present, not null, within
/// `OpaqueParametersMaxLength` and a JSON object. (The length is that of the
/// value as re-encoded, which is the request's bytes when they were compact.)
fn opaque_parameters(parameters: Option<&Value>, field: &str) -> Vec<FieldError> {
    match parameters {
        None | Some(Value::Null) => vec![FieldError::required(field, "")],
        Some(value) => {
            if serde_json::to_vec(value).map(|b| b.len()).unwrap_or(0) > OPAQUE_PARAMETERS_MAX_LEN {
                vec![FieldError::too_long(field, OPAQUE_PARAMETERS_MAX_LEN)]
            } else if !value.is_object() {
                vec![FieldError::invalid(field, "<value omitted>", "must be a valid JSON object")]
            } else {
                Vec::new()
            }
        }
    }
}

const REQUEST_REF_MSG: &str =
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// A `requests` list of references (a config's or a constraint's): at most
/// `REQUESTS_MAX` (past it only that error), each a request of the claim,
/// none twice.
fn request_refs(object: &Fields, at: &str, names: &RequestNames) -> Vec<FieldError> {
    let refs = list(object, "requests");
    if let Some(err) = too_many(refs, REQUESTS_MAX, at) {
        return vec![err];
    }
    let refs: Vec<&str> = refs.iter().map(|r| r.as_str().unwrap_or_default()).collect();
    let mut errs = Vec::new();
    for (j, request) in refs.iter().enumerate() {
        errs.extend(request_ref(request, &format!("{at}[{j}]"), names));
    }
    errs.extend(duplicates(refs.iter().copied(), at));
    errs
}

/// `validateRequestNameRef`: `request` or `request/subrequest`, each a DNS
/// label, naming a request (and subrequest) of the claim.
fn request_ref(name: &str, field: &str, names: &RequestNames) -> Vec<FieldError> {
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        return vec![FieldError::invalid(field, name, REQUEST_REF_MSG)];
    }
    let mut errs: Vec<FieldError> = segments.iter().flat_map(|s| dns_label(s, field)).collect();
    let known = names.iter().any(|(request, subrequests)| {
        *request == segments[0]
            && match segments.get(1) {
                None => true,
                Some(sub) => subrequests.contains(sub),
            }
    });
    if !known {
        errs.push(FieldError::invalid(field, name, REQUEST_REF_MSG));
    }
    errs
}

/// A claim's request names, each with its subrequests' (`gatherRequestNames`).
type RequestNames<'a> = Vec<(&'a str, Vec<&'a str>)>;

/// `validateDeviceConfiguration` of the items of `config` (a DeviceClass's
/// or a claim's, whose items also name requests).
fn configurations(spec: &Fields, field: &str, requests: Option<&RequestNames>) -> Vec<FieldError> {
    let items = list(spec, "config");
    if let Some(err) = too_many(items, CONFIG_MAX, field) {
        return vec![err];
    }
    let mut errs = Vec::new();
    let empty = Fields::new();
    for (i, config) in items.iter().enumerate() {
        let config = config.as_object().unwrap_or(&empty);
        let path = format!("{field}[{i}]");
        if let Some(names) = requests {
            errs.extend(request_refs(config, &format!("{path}.requests"), names));
        }
        match obj(config, "opaque") {
            None => errs.push(FieldError::required(&format!("{path}.opaque"), "")),
            Some(opaque) => {
                errs.extend(opaque_driver_name(text(opaque, "driver"), &format!("{path}.opaque.driver")));
                errs.extend(opaque_parameters(opaque.get("parameters"), &format!("{path}.opaque.parameters")));
            }
        }
    }
    errs
}

pub fn device_class(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = selectors(spec, "spec.selectors");
    errs.extend(configurations(spec, "spec.config", None));
    errs
}

/// `validateResourceClaimSpec` at `path` (`spec`, or a template's `spec.spec`).
fn claim_spec(spec: &Fields, path: &str) -> Vec<FieldError> {
    let empty = Fields::new();
    let devices = obj(spec, "devices").unwrap_or(&empty);
    let field = format!("{path}.devices.requests");
    let requests = list(devices, "requests");
    let names: RequestNames = requests
        .iter()
        .map(|r| {
            let r = r.as_object().unwrap_or(&empty);
            let subs = list(r, "firstAvailable").iter().filter_map(|s| s.get("name")?.as_str()).collect();
            (text(r, "name"), subs)
        })
        .collect();
    let mut errs = Vec::new();
    if let Some(err) = too_many(requests, REQUESTS_MAX, &field) {
        errs.push(err);
    } else {
        for (i, request) in requests.iter().enumerate() {
            errs.extend(device_request(request.as_object().unwrap_or(&empty), &format!("{field}[{i}]")));
        }
        errs.extend(duplicates(names.iter().map(|(n, _)| *n), &field));
    }
    errs.extend(constraints(devices, &format!("{path}.devices.constraints"), &names));
    errs.extend(configurations(devices, &format!("{path}.devices.config"), Some(&names)));
    errs
}

/// `validateDeviceRequest`: a DNS-label name and exactly one of `exactly` and
/// `firstAvailable`, the one set validated.
fn device_request(request: &Fields, at: &str) -> Vec<FieldError> {
    let empty = Fields::new();
    let mut errs = dns_label(text(request, "name"), &format!("{at}.name"));
    let exactly = obj(request, "exactly");
    let alternatives = list(request, "firstAvailable");
    match (exactly, alternatives.is_empty()) {
        (None, true) => errs.push(FieldError::required(at, "exactly one of `exactly` or `firstAvailable` is required")),
        (Some(_), false) => errs.push(FieldError::invalid_bare(
            at,
            "null",
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (None, false) => {
            let field = format!("{at}.firstAvailable");
            if let Some(err) = too_many(alternatives, FIRST_AVAILABLE_MAX, &field) {
                errs.push(err);
            } else {
                let mut keys = Vec::new();
                for (j, alternative) in alternatives.iter().enumerate() {
                    let alternative = alternative.as_object().unwrap_or(&empty);
                    let sub = format!("{field}[{j}]");
                    errs.extend(dns_label(text(alternative, "name"), &format!("{sub}.name")));
                    errs.extend(device_class_name(
                        text(alternative, "deviceClassName"),
                        &format!("{sub}.deviceClassName"),
                    ));
                    errs.extend(selectors(alternative, &format!("{sub}.selectors")));
                    errs.extend(allocation_mode(alternative, &sub));
                    keys.push(text(alternative, "name"));
                }
                errs.extend(duplicates(keys, &field));
            }
        }
        (Some(exactly), true) => errs.extend(exact_request(exactly, &format!("{at}.exactly"))),
    }
    errs
}

/// `validateDeviceConstraint`: the requests it names, and `matchAttribute`
/// or `distinctAttribute` (whose name format is not checked here).
fn constraints(devices: &Fields, field: &str, names: &RequestNames) -> Vec<FieldError> {
    let items = list(devices, "constraints");
    if let Some(err) = too_many(items, CONSTRAINTS_MAX, field) {
        return vec![err];
    }
    let empty = Fields::new();
    let mut errs = Vec::new();
    for (i, constraint) in items.iter().enumerate() {
        let constraint = constraint.as_object().unwrap_or(&empty);
        let path = format!("{field}[{i}]");
        errs.extend(request_refs(constraint, &format!("{path}.requests"), names));
        let set = |key: &str| constraint.get(key).is_some_and(|v| !v.is_null());
        if !set("matchAttribute") && !set("distinctAttribute") {
            // DRAConsumableCapacity (beta, on in v1.36) words it so.
            errs.push(FieldError::required(
                &path,
                "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set",
            ));
        }
    }
    errs
}

/// `validateDeviceClass`: required, else a DNS subdomain.
fn device_class_name(name: &str, field: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    dns_subdomain(name, field)
}

/// `validateExactDeviceRequest`.
fn exact_request(request: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = device_class_name(text(request, "deviceClassName"), &format!("{path}.deviceClassName"));
    errs.extend(selectors(request, &format!("{path}.selectors")));
    errs.extend(allocation_mode(request, path));
    errs
}

/// `validateDeviceAllocationMode`: the count fits the mode.
fn allocation_mode(request: &Fields, path: &str) -> Vec<FieldError> {
    let count = int(request, "count").unwrap_or(0);
    let mode = text(request, "allocationMode");
    match mode {
        "All" if count != 0 => vec![invalid_raw(
            &format!("{path}.count"),
            &count.to_string(),
            "must not be specified when allocationMode is 'All'",
        )],
        "ExactCount" if count <= 0 => {
            vec![invalid_raw(&format!("{path}.count"), &count.to_string(), "must be greater than zero")]
        }
        "All" | "ExactCount" => Vec::new(),
        _ => vec![not_supported(&format!("{path}.allocationMode"), mode, &["All", "ExactCount"])],
    }
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
    resource_slice_spec(object, None)
}

/// `ValidateResourceSliceUpdate`: the spec's rules, with driver, pool name and
/// node name fixed (reported where kube reports them: after the pool).
pub fn resource_slice_update(object: &Fields, old: &Fields) -> Vec<FieldError> {
    resource_slice_spec(object, Some(old))
}

/// `validateResourceSliceSpec`.
fn resource_slice_spec(object: &Fields, old: Option<&Fields>) -> Vec<FieldError> {
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
    if let Some(old) = old {
        errs.extend(slice_immutable(spec, obj(old, "spec").unwrap_or(&empty)));
    }
    let mut set = Vec::new();
    match spec.get("nodeName").and_then(Value::as_str) {
        Some("") => {
            errs.push(FieldError::invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
        }
        Some(node_name) => {
            set.push("`nodeName`");
            errs.extend(dns_subdomain(node_name, "spec.nodeName"));
        }
        None => {}
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
    for (key, word) in [("allNodes", "`allNodes`"), ("perDeviceNodeSelection", "`perDeviceNodeSelection`")] {
        match spec.get(key).and_then(Value::as_bool) {
            Some(true) => set.push(word),
            Some(false) => {
                errs.push(invalid_raw(&format!("spec.{key}"), "false", "must be either unset or set to true"))
            }
            None => {}
        }
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
    let present = |key: &str| spec.get(key).is_some_and(|v| !v.is_null());
    if present("sharedCounters") && present("devices") {
        errs.push(FieldError::invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"));
    }
    let devices = list(spec, "devices");
    let advanced = devices.iter().any(|d| {
        let nonempty = |key: &str| d.get(key).and_then(Value::as_array).is_some_and(|a| !a.is_empty());
        let list_attribute = d.get("attributes").and_then(Value::as_object).is_some_and(|attributes| {
            attributes.values().any(|a| {
                ["bools", "ints", "strings", "versions"].iter().any(|k| a.get(*k).is_some_and(|v| !v.is_null()))
            })
        });
        nonempty("taints") || nonempty("consumesCounters") || list_attribute
    });
    let max = if advanced { SLICE_DEVICES_ADVANCED_MAX } else { SLICE_DEVICES_MAX };
    if let Some(err) = too_many(devices, max, "spec.devices") {
        errs.push(err);
    } else {
        let per_device = spec.get("perDeviceNodeSelection").and_then(Value::as_bool) == Some(true);
        for (i, device) in devices.iter().enumerate() {
            let device = device.as_object().unwrap_or(&empty);
            errs.extend(device_node_selection(device, &format!("spec.devices[{i}]"), per_device));
        }
        errs.extend(duplicates(
            devices.iter().map(|d| d.get("name").and_then(Value::as_str).unwrap_or("")),
            "spec.devices",
        ));
    }
    errs
}

/// `validateDevice`'s name and node selection (a device's own only when the
/// slice selects per device).
fn device_node_selection(device: &Fields, path: &str, per_device: bool) -> Vec<FieldError> {
    let mut errs = dns_label(text(device, "name"), &format!("{path}.name"));
    let present = |key: &str| device.get(key).is_some_and(|v| !v.is_null());
    if per_device {
        let mut set = Vec::new();
        match device.get("nodeName").and_then(Value::as_str) {
            Some("") => errs.push(FieldError::invalid(&format!("{path}.nodeName"), "", "must not be empty")),
            Some(node_name) => {
                set.push("`nodeName`");
                errs.extend(dns_subdomain(node_name, &format!("{path}.nodeName")));
            }
            None => {}
        }
        if present("nodeSelector") {
            set.push("`nodeSelector`");
        }
        match device.get("allNodes").and_then(Value::as_bool) {
            Some(true) => set.push("`allNodes`"),
            Some(false) => {
                errs.push(invalid_raw(&format!("{path}.allNodes"), "false", "must be either unset or set to true"))
            }
            None => {}
        }
        const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
        match set.len() {
            0 => errs.push(FieldError::required(path, ONE_OF)),
            1 => {}
            _ => errs.push(FieldError::invalid(path, &format!("{{{}}}", set.join(", ")), ONE_OF)),
        }
    } else if present("nodeName") || present("nodeSelector") || present("allNodes") {
        errs.push(FieldError::invalid_bare(
            path,
            "null",
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        ));
    }
    errs
}

/// The update's `ValidateImmutableField`s: pool name, driver, node name.
fn slice_immutable(spec: &Fields, old_spec: &Fields) -> Vec<FieldError> {
    let pool_name = |s: &Fields| obj(s, "pool").map(|p| text(p, "name").to_string()).unwrap_or_default();
    let mut errs = Vec::new();
    if pool_name(spec) != pool_name(old_spec) {
        errs.push(FieldError::invalid("spec.pool.name", &pool_name(spec), IMMUTABLE));
    }
    if text(spec, "driver") != text(old_spec, "driver") {
        errs.push(FieldError::invalid("spec.driver", text(spec, "driver"), IMMUTABLE));
    }
    let node_name = |s: &Fields| s.get("nodeName").and_then(Value::as_str).map(str::to_string);
    if node_name(spec) != node_name(old_spec) {
        // A *string: Go prints the pointer's target.
        let shown = match node_name(spec) {
            Some(name) => validation::go_quote(&name),
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
    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn device_classes() {
        assert!(check(
            device_class,
            json!({"spec": {"selectors": [{"cel": {"expression": "device.driver == \"d\""}}],
            "config": [{"opaque": {"driver": "dra.example.com", "parameters": {}}}]}})
        )
        .is_empty());
        assert_eq!(
            check(
                device_class,
                json!({"spec": {"selectors": [{}, {"cel": {"expression": "x".repeat(10241)}}],
                "config": [{}, {"opaque": {"driver": "Bad_Driver"}}, {"opaque": {"driver": "d", "parameters": [1]}}]}})
            ),
            [
                "spec.selectors[0].cel: Required value".to_string(),
                "spec.selectors[1].cel.expression: Too long: may not be more than 10240 bytes".into(),
                "spec.config[0].opaque: Required value".into(),
                format!("spec.config[1].opaque.driver: Invalid value: \"Bad_Driver\": {SUBDOMAIN_MSG}"),
                "spec.config[1].opaque.parameters: Required value".into(),
                "spec.config[2].opaque.parameters: Invalid value: \"<value omitted>\": must be a valid JSON object"
                    .into(),
            ]
        );
        // Past the bound only the count is reported (kube's validateSlice).
        let many: Vec<Value> = (0..33).map(|_| json!({})).collect();
        assert_eq!(
            check(device_class, json!({"spec": {"selectors": many}})),
            ["spec.selectors: Too many: 33: must have at most 32 items"]
        );
    }

    #[test]
    fn resource_claims() {
        let valid = json!({"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}},
            {"name": "all", "exactly": {"deviceClassName": "nic", "allocationMode": "All"}},
            {"name": "either", "firstAvailable": [{"name": "big", "deviceClassName": "big", "allocationMode": "ExactCount", "count": 1}]}],
            "constraints": [{"requests": ["gpu", "either/big"], "matchAttribute": "dra.example.com/model"}],
            "config": [{"requests": ["gpu"], "opaque": {"driver": "dra.example.com", "parameters": {"a": 1}}}]}}});
        assert!(check(resource_claim, valid.clone()).is_empty());
        assert!(check(resource_claim, json!({"spec": {}})).is_empty());
        // kube's messages, in kube's order: each request's own errors, then
        // the repeated names at their index; firstAvailable checked only when
        // it is the one field set.
        assert_eq!(
            check(resource_claim, json!({"spec": {"devices": {"requests": [
                {"name": "Gpu", "exactly": {"deviceClassName": "", "allocationMode": "ExactCount", "count": 0}},
                {"name": "Gpu", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}},
                {"name": "none"},
                {"name": "both", "exactly": {"deviceClassName": "c", "allocationMode": "Some", "count": 1},
                    "firstAvailable": [{"name": "a", "deviceClassName": "c"}]},
                {"name": "alt", "firstAvailable": [{"name": "a", "deviceClassName": "c", "allocationMode": "All"},
                    {"name": "a", "allocationMode": "ExactCount", "count": 1}]}],
                "constraints": [{"requests": ["nope", "alt/a/b"]}],
                "config": [{"requests": ["alt/a", "alt/z", "alt/a"], "opaque": {"driver": "", "parameters": null}}]}}})),
            [
                format!("spec.devices.requests[0].name: Invalid value: \"Gpu\": {LABEL_MSG}"),
                "spec.devices.requests[0].exactly.deviceClassName: Required value".into(),
                "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero".into(),
                format!("spec.devices.requests[1].name: Invalid value: \"Gpu\": {LABEL_MSG}"),
                "spec.devices.requests[1].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'".into(),
                "spec.devices.requests[2]: Required value: exactly one of `exactly` or `firstAvailable` is required".into(),
                "spec.devices.requests[3]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set".into(),
                "spec.devices.requests[4].firstAvailable[1].deviceClassName: Required value".into(),
                "spec.devices.requests[4].firstAvailable[1]: Duplicate value: \"a\"".into(),
                "spec.devices.requests[1]: Duplicate value: \"Gpu\"".into(),
                "spec.devices.constraints[0].requests[0]: Invalid value: \"nope\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'".into(),
                "spec.devices.constraints[0].requests[1]: Invalid value: \"alt/a/b\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'".into(),
                "spec.devices.constraints[0]: Required value: exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set".into(),
                "spec.devices.config[0].requests[1]: Invalid value: \"alt/z\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'".into(),
                "spec.devices.config[0].requests[2]: Duplicate value: \"alt/a\"".into(),
                "spec.devices.config[0].opaque.driver: Required value".into(),
                "spec.devices.config[0].opaque.parameters: Required value".into(),
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
                "spec.driver: Required value".to_string(),
                format!("spec.driver: Invalid value: \"\": {SUBDOMAIN_MSG}"),
                "spec.pool.name: Required value".into(),
                "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero".into(),
                "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero".into(),
                "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required".into(),
                "spec.devices[1]: Duplicate value: \"a\"".into(),
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
        assert_eq!(
            check(resource_slice, json!({"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
                "nodeName": "", "allNodes": false, "perDeviceNodeSelection": true, "sharedCounters": [],
                "devices": [{"name": "a"}, {"name": "b", "nodeName": "n", "allNodes": true}, {"name": "c", "allNodes": false, "nodeName": ""}]}})),
            [
                "spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string",
                "spec.allNodes: Invalid value: false: must be either unset or set to true",
                "spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed",
                "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                "spec.devices[1]: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                "spec.devices[2].nodeName: Invalid value: \"\": must not be empty",
                "spec.devices[2].allNodes: Invalid value: false: must be either unset or set to true",
                "spec.devices[2]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            ]
        );
        assert_eq!(
            check(resource_slice, json!({"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
                "allNodes": true, "devices": [{"name": "a", "nodeName": "n"}]}})),
            ["spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"]
        );
        let tainted: Vec<Value> = (0..65)
            .map(|i| json!({"name": format!("d{i}"), "taints": [{"key": "k", "effect": "NoSchedule"}]}))
            .collect();
        assert_eq!(
            check(
                resource_slice,
                json!({"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
                "allNodes": true, "devices": tainted}})
            ),
            ["spec.devices: Too many: 65: must have at most 64 items"]
        );
        // The immutable fields come right after the pool's own errors.
        let moved = json!({"spec": {"driver": "other.example.com", "pool": {"name": "node-1/pool", "resourceSliceCount": 0},
            "nodeName": "node-2"}});
        assert_eq!(
            resource_slice_update(moved.as_object().unwrap(), valid.as_object().unwrap())
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
                "spec.driver: Invalid value: \"other.example.com\": field is immutable",
                "spec.nodeName: Invalid value: \"node-2\": field is immutable",
            ]
        );
    }
}
