//! Pod objects: create (`ValidatePodCreate`), update (`ValidatePodUpdate`:
//! only images, activeDeadlineSeconds, added tolerations, removed
//! scheduling gates and a negative grace period set to 1 may change),
//! status (`ValidatePodStatusUpdate`), and pod templates
//! (`ValidatePodTemplateSpec`), from `pkg/apis/core/validation/validation.go`.

use super::pod::{pod_spec, tolerations, PodOptions};
use super::util::*;
use crate::types::validation::{inclusive_range_error, is_valid_ip, validate_labels_at, FieldError, INVALID_IP_MSG};
use serde_json::{Map, Value};

type Errs = Vec<FieldError>;

/// What kube lists as the updatable parts of a pod's spec.
const UPDATABLE_POD_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

fn spec_of(pod: &Map<String, Value>) -> &Value {
    static EMPTY: Value = Value::Null;
    pod.get("spec").unwrap_or(&EMPTY)
}

/// `validatePodMetadataAndSpec` plus `ValidatePodCreate`'s rules.
pub fn create(pod: &Map<String, Value>) -> Errs {
    let spec = spec_of(pod);
    let mut errs = metadata_and_spec(pod, spec);
    if !list(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden("spec.ephemeralContainers", "cannot be set on create"));
    }
    if !text(spec, "nodeName").is_empty() && !list(spec, "schedulingGates").is_empty() {
        errs.push(FieldError::forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"));
    }
    errs
}

/// `validatePodMetadataAndSpec` (name, labels and annotation keys are the
/// API layer's; the pod-specific annotation rules are here).
fn metadata_and_spec(pod: &Map<String, Value>, spec: &Value) -> Errs {
    let metadata = pod.get("metadata").unwrap_or(&Value::Null);
    let mut errs = pod_specific_annotations(metadata, spec, "metadata.annotations");
    let name = metadata.get("name").and_then(Value::as_str).unwrap_or("");
    errs.extend(pod_spec(spec, "spec", PodOptions { resource_is_pod: true, pod_name: name }));
    // validateContainersOnlyForPod, after the spec.
    for field in ["containers", "initContainers"] {
        for (i, container) in list(spec, field).iter().enumerate() {
            let image = text(container, "image");
            if image.len() != image.trim().len() {
                let path = child(&index(&child("spec", field), i), "image");
                errs.push(FieldError::invalid(&path, image, "must not have leading or trailing whitespace"));
            }
        }
    }
    errs
}

const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// kube's `ValidatePodSpecificAnnotations`: a mirror pod names its node, a
/// deletion cost is a 32-bit integer written plainly.
fn pod_specific_annotations(metadata: &Value, spec: &Value, path: &str) -> Errs {
    let annotations = obj(metadata, "annotations");
    let mut errs = Errs::new();
    if let Some(mirror) = annotations.get(MIRROR_POD_ANNOTATION) {
        if text(spec, "nodeName").is_empty() {
            errs.push(FieldError::invalid(
                &key(path, MIRROR_POD_ANNOTATION),
                mirror.as_str().unwrap_or(""),
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if let Some(cost) = annotations.get(DELETION_COST_ANNOTATION) {
        let cost = cost.as_str().unwrap_or("");
        let plain = match cost.as_bytes().first() {
            Some(b'-') => true,
            Some(b'0') => cost == "0",
            Some(c) => c.is_ascii_digit(),
            None => false,
        };
        if !plain || cost.parse::<i32>().is_err() {
            errs.push(FieldError::invalid(&key(path, DELETION_COST_ANNOTATION), cost, "must be a 32bit integer"));
        }
    }
    errs
}

/// kube's `ValidatePodSpecificAnnotationUpdates`: the mirror pod
/// annotation may not be added, removed or changed.
fn pod_specific_annotation_updates(pod: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let annotation = |o: &Map<String, Value>| {
        o.get("metadata").and_then(|m| m.get("annotations")).and_then(|a| a.get(MIRROR_POD_ANNOTATION)).cloned()
    };
    let field = key("metadata.annotations", MIRROR_POD_ANNOTATION);
    match (annotation(old), annotation(pod)) {
        (Some(a), Some(b)) if a == b => Vec::new(),
        (Some(_), _) => vec![FieldError::forbidden(&field, "may not remove or update mirror pod annotation")],
        (None, Some(_)) => vec![FieldError::forbidden(&field, "may not add mirror pod annotation")],
        (None, None) => Vec::new(),
    }
}

/// kube's `ValidatePodUpdate`.
pub fn update(pod: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let new_spec = spec_of(pod);
    let old_spec = spec_of(old);
    let mut errs = metadata_and_spec(pod, new_spec);
    errs.extend(pod_specific_annotation_updates(pod, old));
    for field in ["containers", "initContainers"] {
        let (container_errs, stop) =
            container_updates(list(new_spec, field), list(old_spec, field), &child("spec", field));
        errs.extend(container_errs);
        if stop {
            return errs;
        }
    }
    match (int(new_spec, "activeDeadlineSeconds"), int(old_spec, "activeDeadlineSeconds")) {
        (Some(new), old) => {
            let field = "spec.activeDeadlineSeconds";
            if !(0..=i64::from(i32::MAX)).contains(&new) {
                errs.push(invalid_int(field, new, &inclusive_range_error(0, i64::from(i32::MAX))));
                return errs;
            }
            if old.is_some_and(|old| old < new) {
                errs.push(invalid_int(field, new, "must be less than or equal to previous value"));
                return errs;
            }
        }
        (None, Some(_)) => errs.push(FieldError::invalid_bare(
            "spec.activeDeadlineSeconds",
            "null",
            "must not update from a positive integer to nil value",
        )),
        (None, None) => {}
    }
    errs.extend(only_added_tolerations(list(new_spec, "tolerations"), list(old_spec, "tolerations")));
    errs.extend(only_deleted_scheduling_gates(list(new_spec, "schedulingGates"), list(old_spec, "schedulingGates")));
    if semantic_eq(Some(new_spec), Some(old_spec)) {
        return errs;
    }
    let munged = munge_updatable(new_spec, old_spec);
    if !semantic_eq(Some(&munged), Some(old_spec)) {
        let diff = spec_diff(old_spec, &munged, "spec");
        errs.push(FieldError::forbidden(
            "spec",
            &format!("pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}\n{diff}"),
        ));
    }
    errs
}

/// kube's `ValidateContainerUpdates`: the same number of containers, each
/// with an image without surrounding whitespace.
fn container_updates(new: &[Value], old: &[Value], path: &str) -> (Errs, bool) {
    if new.len() != old.len() {
        return (vec![FieldError::forbidden(path, "pod updates may not add or remove containers")], true);
    }
    let mut errs = Errs::new();
    for (i, container) in new.iter().enumerate() {
        let image = text(container, "image");
        let field = child(&index(path, i), "image");
        if image.is_empty() {
            errs.push(FieldError::required(&field, ""));
        }
        if image.trim().len() != image.len() {
            errs.push(FieldError::invalid(&field, image, "must not have leading or trailing whitespace"));
        }
    }
    (errs, false)
}

/// kube's `validateOnlyAddedTolerations`.
fn only_added_tolerations(new: &[Value], old: &[Value]) -> Errs {
    let path = "spec.tolerations";
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        if let Some(o) = t.as_object_mut() {
            o.remove("tolerationSeconds");
        }
        t
    };
    for old_toleration in old {
        let old_toleration = without_seconds(old_toleration);
        if !new.iter().any(|n| semantic_eq(Some(&without_seconds(n)), Some(&old_toleration))) {
            return vec![FieldError::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    tolerations(new, path)
}

/// kube's `validateOnlyDeletedSchedulingGates`.
fn only_deleted_scheduling_gates(new: &[Value], old: &[Value]) -> Errs {
    let old_names: Vec<&str> = old.iter().map(|g| text(g, "name")).collect();
    new.iter()
        .enumerate()
        .filter(|(_, gate)| !old_names.contains(&text(gate, "name")))
        .map(|(i, gate)| {
            FieldError::forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{}'", text(gate, "name")),
            )
        })
        .collect()
}

/// The new spec with the fields an update may change taken from the old.
fn munge_updatable(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    let Some(spec) = munged.as_object_mut() else {
        return munged;
    };
    for field in ["containers", "initContainers"] {
        if let Some(Value::Array(items)) = spec.get_mut(field) {
            for (i, container) in items.iter_mut().enumerate() {
                let old_image = old.get(field).and_then(|l| l.get(i)).and_then(|c| c.get("image")).cloned();
                if let Some(c) = container.as_object_mut() {
                    match old_image {
                        Some(image) => c.insert("image".to_string(), image),
                        None => c.remove("image"),
                    };
                }
            }
        }
    }
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(field) {
            Some(v) => spec.insert(field.to_string(), v.clone()),
            None => spec.remove(field),
        };
    }
    let old_grace = int(old, "terminationGracePeriodSeconds");
    if old_grace.is_some_and(|g| g < 0) && int(new, "terminationGracePeriodSeconds") == Some(1) {
        if let Some(g) = old.get("terminationGracePeriodSeconds") {
            spec.insert("terminationGracePeriodSeconds".to_string(), g.clone());
        }
    }
    munged
}

/// kube's `ValidatePodStatusUpdate` (the rules a status writer hits).
pub fn status_update(pod: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    let status = pod.get("status").cloned().unwrap_or(Value::Null);
    let old_status = old.get("status").cloned().unwrap_or(Value::Null);
    const SYSTEM_CONDITIONS: &[&str] = &["PodScheduled", "Ready", "Initialized"];
    for (i, condition) in list(&status, "conditions").iter().enumerate() {
        let kind = text(condition, "type");
        if !SYSTEM_CONDITIONS.contains(&kind) {
            errs.extend(qualified_name(&format!("metadata.conditions[{i}].Type"), kind));
        }
    }
    // kube's "status.nodeName: may not be changed directly" is unreachable:
    // the status strategy copies the old spec before validating.
    let nominated = text(&status, "nominatedNodeName");
    if nominated != text(&old_status, "nominatedNodeName") && !nominated.is_empty() {
        errs.extend(dns1123_subdomain("status.nominatedNodeName", nominated));
    }
    // A status written without qosClass keeps it (lenient where kube would
    // refuse an empty value).
    let qos = text(&status, "qosClass");
    if !qos.is_empty() && qos != text(&old_status, "qosClass") {
        errs.push(FieldError::invalid("status.qosClass", qos, "field is immutable"));
    }
    for field in ["podIPs", "hostIPs"] {
        for (i, entry) in list(&status, field).iter().enumerate() {
            let ip = text(entry, "ip");
            if !is_valid_ip(ip) {
                errs.push(FieldError::invalid(&format!("status.{field}[{i}]"), ip, INVALID_IP_MSG));
            }
        }
    }
    errs
}

/// kube's `ValidatePodTemplateSpec` of `template` at `path`.
pub fn template_spec(template: &Value, path: &str) -> Errs {
    let metadata = template.get("metadata").unwrap_or(&Value::Null);
    let mut errs = validate_labels_at(&child(path, "labels"), string_map(metadata, "labels"));
    let annotations = string_map(metadata, "annotations");
    errs.extend(crate::types::validation::validate_annotations(annotations).into_iter().map(|mut e| {
        e.field = e.field.replacen("metadata.annotations", &child(path, "annotations"), 1);
        e
    }));
    let spec = template.get("spec").unwrap_or(&Value::Null);
    errs.extend(pod_specific_annotations(metadata, spec, &child(path, "annotations")));
    errs.extend(pod_spec(spec, &child(path, "spec"), PodOptions { resource_is_pod: false, pod_name: "" }));
    if !list(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(
            &child(&child(path, "spec"), "ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

/// kube's `ValidatePodTemplate` (the PodTemplate kind).
pub fn pod_template(object: &Map<String, Value>) -> Errs {
    template_spec(object.get("template").unwrap_or(&Value::Null), "template")
}

/// `validatePodMetadataAndSpec` of a whole pod.
pub fn metadata_and_spec_of(pod: &Map<String, Value>) -> Errs {
    metadata_and_spec(pod, spec_of(pod))
}
