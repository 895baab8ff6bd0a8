//! Namespaces, Nodes and core Events (`ValidateNamespace`,
//! `ValidateNamespaceStatusUpdate`, `ValidateNode`, `ValidateNodeUpdate`
//! in `pkg/apis/core/validation/validation.go`; `legacyValidateEvent` in
//! `pkg/apis/core/validation/events.go`).

use super::pod::taint_effect;
use super::quantity::nano_value;
use super::util::*;
use crate::types::validation::{
    go_quote, is_valid_cidr, is_valid_label_value, parse_ip_sloppy, validate_label_name, FieldError, FieldErrorType,
    INVALID_CIDR_MSG,
};
use serde_json::{Map, Value};
use std::collections::HashSet;

type Errs = Vec<FieldError>;

/// The finalizer names kube knows without a domain
/// (`helper.IsStandardFinalizerName`).
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

fn part<'a>(object: &'a Map<String, Value>, field: &str) -> &'a Value {
    static EMPTY: Value = Value::Null;
    object.get(field).unwrap_or(&EMPTY)
}

/// kube's `ValidateNamespace`: `spec.finalizers` (reported at the list's
/// path, as kube does on create).
pub fn namespace(object: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    for finalizer in list(part(object, "spec"), "finalizers") {
        errs.extend(finalizer_name(finalizer.as_str().unwrap_or(""), "spec.finalizers"));
    }
    errs
}

/// apimachinery's `ValidateFinalizerName` plus kube's standard-name rule.
fn finalizer_name(name: &str, field: &str) -> Errs {
    let mut errs = qualified_name(field, name);
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errs.push(FieldError::invalid(
            field,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

/// kube's `ValidateNamespaceStatusUpdate`.
pub fn namespace_status_update(object: &Map<String, Value>) -> Errs {
    let phase = text(part(object, "status"), "phase");
    let deleting = part(object, "metadata").get("deletionTimestamp").is_some_and(|v| !v.is_null());
    match (deleting, phase) {
        (false, p) if p != "Active" => {
            vec![FieldError::invalid("status.Phase", p, "may only be 'Active' if `deletionTimestamp` is empty")]
        }
        (true, p) if p != "Terminating" => {
            vec![FieldError::invalid(
                "status.Phase",
                p,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )]
        }
        _ => Vec::new(),
    }
}

/// kube's `ValidateNode`.
pub fn node(object: &Map<String, Value>) -> Errs {
    let spec = part(object, "spec");
    let mut errs = node_taints(list(spec, "taints"));
    errs.extend(node_resources(object));
    let cidrs = &pod_cidrs(spec);
    for (i, cidr) in cidrs.iter().enumerate() {
        let cidr = cidr.as_str().unwrap_or("");
        if !is_valid_cidr(cidr) {
            errs.push(FieldError::invalid(&index("spec.podCIDRs", i), cidr, INVALID_CIDR_MSG));
        }
    }
    if cidrs.len() > 1 {
        let v6 = cidrs
            .iter()
            .filter(|c| {
                let ip = c.as_str().and_then(|c| c.split('/').next()).and_then(parse_ip_sloppy);
                ip.is_some_and(|ip| ip.is_ipv6())
            })
            .count();
        if v6 != 1 || cidrs.len() > 2 {
            errs.push(FieldError::invalid_bare(
                "spec.podCIDRs",
                &go_string_slice(cidrs),
                "may specify no more than one CIDR for each IP family",
            ));
        }
        let mut seen: HashSet<&str> = HashSet::new();
        for (i, cidr) in cidrs.iter().enumerate() {
            let cidr = cidr.as_str().unwrap_or("");
            if !seen.insert(cidr) {
                errs.push(FieldError::duplicate(&index("spec.podCIDRs", i), cidr));
            }
        }
    }
    errs
}

/// The pod CIDRs as kube's v1 conversion reads them: `podCIDRs`, or
/// `[podCIDR]` when only the singular field is set.
fn pod_cidrs(spec: &Value) -> Vec<Value> {
    let cidrs = list(spec, "podCIDRs");
    let single = text(spec, "podCIDR");
    if cidrs.is_empty() && !single.is_empty() {
        vec![Value::String(single.to_string())]
    } else {
        cidrs.to_vec()
    }
}

/// kube's `validateNodeTaints` (kube reports them under `metadata.taints`).
fn node_taints(taints: &[Value]) -> Errs {
    let mut errs = Errs::new();
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let path = index("metadata.taints", i);
        let taint_key = text(taint, "key");
        let value = text(taint, "value");
        let effect = text(taint, "effect");
        errs.extend(validate_label_name(&child(&path, "key"), taint_key));
        let msgs = is_valid_label_value(value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(&child(&path, "value"), value, &msgs.join(";")));
        }
        if effect.is_empty() {
            errs.push(FieldError::required(&child(&path, "effect"), ""));
        } else {
            errs.extend(taint_effect(effect, &child(&path, "effect")));
        }
        if !seen.insert((effect, taint_key)) {
            let time_added = if has(taint, "timeAdded") { "(*v1.Time)(...)" } else { "(*v1.Time)(nil)" };
            let shown = format!(
                "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{time_added}}}",
                go_value(taint.get("key").or(Some(&Value::String(String::new())))),
                go_value(taint.get("value").or(Some(&Value::String(String::new())))),
                go_value(taint.get("effect").or(Some(&Value::String(String::new())))),
            );
            errs.push(FieldError::with_bare_value(
                &path,
                FieldErrorType::Duplicate,
                &shown,
                "taints must be unique by key and effect pair",
            ));
        }
    }
    errs
}

/// kube's `ValidateNodeResources`: status quantities not negative (paths
/// are `status.capacity.<name>`, as kube builds them with `Child`).
fn node_resources(object: &Map<String, Value>) -> Errs {
    let status = part(object, "status");
    let mut errs = Errs::new();
    for field in ["capacity", "allocatable"] {
        for (name, quantity) in obj(status, field) {
            let text = quantity.as_str().unwrap_or("");
            if nano_value(text).is_some_and(|v| v < 0) {
                let path = child(&child("status", field), name);
                errs.push(FieldError::invalid(&path, text, "must be greater than or equal to 0"));
            }
        }
    }
    errs
}

/// kube's `ValidateNodeUpdate`.
pub fn node_update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let spec = part(object, "spec");
    let old_spec = part(old, "spec");
    let mut errs = node_resources(object);
    let mut addresses: Vec<&Value> = Vec::new();
    for (i, address) in list(part(object, "status"), "addresses").iter().enumerate() {
        if addresses.contains(&address) {
            let shown = format!(
                "core.NodeAddress{{Type:{}, Address:{}}}",
                go_value(Some(&Value::String(text(address, "type").to_string()))),
                go_value(Some(&Value::String(text(address, "address").to_string()))),
            );
            let field = index("status.addresses", i);
            errs.push(FieldError::with_bare_value(&field, FieldErrorType::Duplicate, &shown, ""));
        }
        addresses.push(address);
    }
    let old_cidrs = pod_cidrs(old_spec);
    let cidrs = pod_cidrs(spec);
    let cidr_msg = "node updates may not change podCIDR except from \"\" to valid";
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != cidrs.len() {
            errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
        } else {
            for _ in old_cidrs.iter().zip(&cidrs).filter(|(a, b)| a != b) {
                errs.push(FieldError::forbidden("spec.podCIDRs", cidr_msg));
            }
        }
    }
    let old_provider = text(old_spec, "providerID");
    if !old_provider.is_empty() && old_provider != text(spec, "providerID") {
        errs.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    errs.extend(node_taints(list(spec, "taints")));
    if text(spec, "externalID") != text(old_spec, "externalID") {
        errs.push(FieldError::forbidden("spec.externalID", "may not be updated"));
    }
    errs
}

/// kube's `legacyValidateEvent` (what `/api/v1` events get on create and
/// update).
pub fn event(object: &Map<String, Value>) -> Errs {
    let namespace = text(part(object, "metadata"), "namespace");
    let involved_namespace = text(part(object, "involvedObject"), "namespace");
    let event_time_set = object.get("eventTime").is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
    let mismatch =
        || FieldError::invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace");
    let mut errs = Errs::new();
    if !event_time_set {
        let ok = if involved_namespace.is_empty() {
            namespace.is_empty() || namespace == "default"
        } else {
            namespace == involved_namespace
        };
        if !ok {
            errs.push(mismatch());
        }
    } else {
        if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system" {
            errs.push(mismatch());
        }
        errs.extend(reporting_fields(object));
    }
    errs.extend(dns1123_subdomain("namespace", namespace));
    errs
}

/// The fields a new-style (eventTime) event must carry.
fn reporting_fields(object: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    let controller = object.get("reportingComponent").and_then(Value::as_str).unwrap_or("");
    if controller.is_empty() {
        errs.push(FieldError::required("reportingController", ""));
    }
    errs.extend(qualified_name("reportingController", controller));
    let limits: [(&str, &str, usize); 3] =
        [("reportingInstance", "reportingInstance", 128), ("action", "action", 128), ("reason", "reason", 128)];
    for (json, field, limit) in limits {
        let value = object.get(json).and_then(Value::as_str).unwrap_or("");
        if value.is_empty() {
            errs.push(FieldError::required(field, ""));
        }
        if value.len() > limit {
            errs.push(FieldError::invalid(field, "", &format!("can have at most {limit} characters")));
        }
    }
    let message = object.get("message").and_then(Value::as_str).unwrap_or("");
    if message.len() > 1024 {
        errs.push(FieldError::invalid("message", "", "can have at most 1024 characters"));
    }
    errs
}

/// kube's `ValidateEventCreate` for a write through events.k8s.io/v1 (the
/// event in its stored core form): the legacy rules, then the strict ones
/// (`series`, a set `eventTime`, a known `type`, and none of the deprecated
/// fields). The metadata is validated by the API layer.
pub fn event_create_strict(object: &Map<String, Value>) -> Errs {
    let mut errs = event(object);
    errs.extend(event_series(object));
    if !is_set(object.get("eventTime")) {
        errs.push(FieldError::required("eventTime", ""));
    }
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    if kind != "Normal" && kind != "Warning" {
        errs.push(FieldError::invalid("type", "", &format!("has invalid value: {kind}")));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if is_set(object.get(field)) {
            errs.push(FieldError::invalid(field, "", "needs to be unset"));
        }
    }
    if object.get("count").and_then(Value::as_i64).is_some_and(|c| c != 0) {
        errs.push(FieldError::invalid("count", "", "needs to be unset"));
    }
    let source = part(object, "source");
    if !text(source, "component").is_empty() || !text(source, "host").is_empty() {
        errs.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    errs
}

/// kube's `ValidateEventUpdate` for a write through events.k8s.io/v1: the
/// legacy rules, the series when it changed, and every field but the
/// series and metadata immutable (reported with the new value as Go's `%v`
/// prints it).
pub fn event_update_strict(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let mut errs = event(object);
    if !semantic_eq(object.get("series"), old.get("series")) {
        errs.extend(event_series(object));
    }
    let immutable: [(&str, &str, Shown); 14] = [
        ("involvedObject", "involvedObject", go_object_reference),
        ("reason", "reason", go_string),
        ("message", "message", go_string),
        ("source", "source", go_event_source),
        ("firstTimestamp", "firstTimestamp", go_time),
        ("lastTimestamp", "lastTimestamp", go_time),
        ("count", "count", go_int),
        ("reason", "reason", go_string),
        ("type", "type", go_string),
        ("eventTime", "eventTime", go_time),
        ("action", "action", go_string),
        ("related", "related", go_related),
        ("reportingComponent", "reportingController", go_string),
        ("reportingInstance", "reportingInstance", go_string),
    ];
    for (json, path, show) in immutable {
        if !semantic_eq(object.get(json), old.get(json)) {
            errs.push(FieldError::invalid_bare(path, &show(object.get(json)), "field is immutable"));
        }
    }
    errs
}

/// How a field's bad value is printed.
type Shown = fn(Option<&Value>) -> String;

/// `validateV1EventSeries`.
fn event_series(object: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    let Some(series) = object.get("series").filter(|s| s.is_object()) else { return errs };
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        errs.push(FieldError::invalid("series.count", "", "should be at least 2"));
    }
    if !is_set(series.get("lastObservedTime")) {
        errs.push(FieldError::required("series.lastObservedTime", ""));
    }
    errs
}

/// A time field holding a time (not null, absent or empty).
fn is_set(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

fn go_string(value: Option<&Value>) -> String {
    go_quote(value.and_then(Value::as_str).unwrap_or(""))
}

fn go_int(value: Option<&Value>) -> String {
    value.and_then(Value::as_i64).unwrap_or(0).to_string()
}

/// Go's `time.Time.String()` of an RFC 3339 UTC time (kube's `metav1.Time`
/// and `MicroTime` print so): `2026-11-25 12:00:00.5 +0000 UTC`.
fn go_time(value: Option<&Value>) -> String {
    let text = value.and_then(Value::as_str).unwrap_or("");
    let Some((date, clock)) = text.trim_end_matches('Z').split_once('T') else {
        return "0001-01-01 00:00:00 +0000 UTC".to_string();
    };
    let clock = match clock.split_once('.') {
        Some((whole, fraction)) => {
            let fraction = fraction.trim_end_matches('0');
            if fraction.is_empty() {
                whole.to_string()
            } else {
                format!("{whole}.{fraction}")
            }
        }
        None => clock.to_string(),
    };
    format!("{date} {clock} +0000 UTC")
}

/// Go's `%#v` of a core `ObjectReference`.
fn go_object_reference(value: Option<&Value>) -> String {
    let v = value.unwrap_or(&Value::Null);
    let fields = [
        ("Kind", "kind"),
        ("Namespace", "namespace"),
        ("Name", "name"),
        ("UID", "uid"),
        ("APIVersion", "apiVersion"),
        ("ResourceVersion", "resourceVersion"),
        ("FieldPath", "fieldPath"),
    ];
    let parts: Vec<String> = fields.iter().map(|(go, json)| format!("{go}:{}", go_quote(text(v, json)))).collect();
    format!("core.ObjectReference{{{}}}", parts.join(", "))
}

/// A `*ObjectReference`: the reference, or `"null"` when nil (kube prints a
/// nil pointer's bad value as the string `null`).
fn go_related(value: Option<&Value>) -> String {
    match value {
        Some(v) if v.is_object() => go_object_reference(Some(v)),
        _ => go_quote("null"),
    }
}

/// Go's `%#v` of a core `EventSource`.
fn go_event_source(value: Option<&Value>) -> String {
    let v = value.unwrap_or(&Value::Null);
    format!("core.EventSource{{Component:{}, Host:{}}}", go_quote(text(v, "component")), go_quote(text(v, "host")))
}
