//! The update rules of the subresources that change one part of a stored
//! object, as kube-apiserver's subresource strategies hold them:
//!
//! - `pods/ephemeralcontainers` (`podEphemeralContainersStrategy`): only
//!   `spec.ephemeralContainers` changes; existing ones may be neither
//!   removed nor changed; new ones carry none of the fields an ephemeral
//!   container may not have (ports, probes, lifecycle, resources, ...).
//! - `pods/resize` (`podResizeStrategy`): only the containers' (and
//!   restartable init containers') `resources` and `resizePolicy` change;
//!   only cpu and memory; the QoS class stays; not for static pods.
//! - `namespaces/finalize` (`namespaceFinalizeStrategy`): the stored
//!   status stays; `spec.finalizers` are validated.
//! - `certificatesigningrequests/approval` (`csrApprovalStrategy`): only
//!   `status.conditions` changes, with their timestamps filled in; Approved
//!   and Denied exclude each other and are never removed.
//!
//! Invariant: what a subresource may not change is taken from the stored
//! object before validation, so a write through it can never change another
//! part of the object. No I/O; bad input gives field errors, never a panic.

use super::{Context, Object};

/// kube's `field.NewPath("")`: a path with no name prints as `[]`
/// (`Pod "x" is invalid: []: Forbidden: ...`).
pub const ROOT_FIELD: &str = "[]";
use crate::types::validation::FieldError;
use serde_json::{json, Value};

/// Whether `group`/`kind` has rules of its own for `subresource` here.
pub fn serves(group: &str, kind: &str, subresource: &str) -> bool {
    matches!(
        (group, kind, subresource),
        ("", "Pod", "ephemeralcontainers" | "resize")
            | ("", "Namespace", "finalize")
            | ("certificates.k8s.io", "CertificateSigningRequest", "approval")
    )
}

/// The stored object with `metadata.generation` of the new one (the API
/// layer bumped it when the spec changed): the base every rule starts from.
fn stored_base(object: &Object, old: &Object) -> Object {
    let mut base = old.clone();
    let generation = object.get("metadata").and_then(|m| m.get("generation")).cloned();
    if let (Some(generation), Some(Value::Object(meta))) = (generation, base.get_mut("metadata")) {
        meta.insert("generation".into(), generation);
    }
    base
}

fn spec_mut(object: &mut Object) -> Option<&mut Object> {
    if !object.get("spec").is_some_and(Value::is_object) {
        object.insert("spec".into(), json!({}));
    }
    object.get_mut("spec").and_then(Value::as_object_mut)
}

fn list<'a>(object: &'a Object, parent: &str, field: &str) -> &'a [Value] {
    object.get(parent).and_then(|p| p.get(field)).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

pub fn prepare_for_update(kind: &str, subresource: &str, object: &mut Object, old: &Object, context: &Context) {
    match (kind, subresource) {
        ("Pod", "ephemeralcontainers") => {
            let mut result = stored_base(object, old);
            let ephemeral = object.get("spec").and_then(|s| s.get("ephemeralContainers")).cloned();
            if let Some(spec) = spec_mut(&mut result) {
                match ephemeral {
                    Some(e) if !e.is_null() => spec.insert("ephemeralContainers".into(), e),
                    _ => spec.shift_remove("ephemeralContainers"),
                };
            }
            *object = result;
        }
        ("Pod", "resize") => {
            let mut result = stored_base(object, old);
            for field in ["containers", "initContainers"] {
                let new = list(object, "spec", field).to_vec();
                let Some(Value::Array(containers)) = spec_mut(&mut result).and_then(|s| s.get_mut(field)) else {
                    continue;
                };
                for container in containers.iter_mut() {
                    // Init containers resize only when restartable (sidecars).
                    if field == "initContainers" && container["restartPolicy"] != "Always" {
                        continue;
                    }
                    let name = container["name"].clone();
                    let Some(from) = new.iter().find(|c| c["name"] == name) else { continue };
                    for part in ["resources", "resizePolicy"] {
                        match from.get(part) {
                            Some(v) if !v.is_null() => container[part] = v.clone(),
                            _ => {
                                if let Some(c) = container.as_object_mut() {
                                    c.shift_remove(part);
                                }
                            }
                        }
                    }
                }
            }
            *object = result;
        }
        ("Namespace", "finalize") => {
            match old.get("status") {
                Some(status) => object.insert("status".into(), status.clone()),
                None => object.shift_remove("status"),
            };
        }
        ("CertificateSigningRequest", "approval") => {
            let conditions = object.get("status").and_then(|s| s.get("conditions")).cloned();
            let mut result = old.clone();
            if let Some(meta) = object.get("metadata").cloned() {
                result.insert("metadata".into(), meta);
            }
            if !result.get("status").is_some_and(Value::is_object) {
                result.insert("status".into(), json!({}));
            }
            if let Some(Value::Object(status)) = result.get_mut("status") {
                match conditions {
                    Some(Value::Array(mut conditions)) => {
                        condition_timestamps(&mut conditions, list(old, "status", "conditions"), context.now);
                        status.insert("conditions".into(), Value::Array(conditions));
                    }
                    _ => {
                        status.shift_remove("conditions");
                    }
                }
            }
            *object = result;
        }
        _ => {}
    }
}

/// kube's `populateConditionTimestamps`: `lastUpdateTime` now when unset;
/// `lastTransitionTime` kept from the stored condition of the same type and
/// status, now otherwise.
fn condition_timestamps(conditions: &mut [Value], old: &[Value], now: &str) {
    for condition in conditions.iter_mut() {
        let Some(c) = condition.as_object_mut() else { continue };
        if c.get("lastUpdateTime").is_none_or(Value::is_null) {
            c.insert("lastUpdateTime".into(), json!(now));
        }
        if c.get("lastTransitionTime").is_none_or(Value::is_null) {
            let before = old.iter().find(|o| o["type"] == c["type"] && o["status"] == c["status"]);
            let time = before.and_then(|o| o.get("lastTransitionTime")).filter(|t| !t.is_null()).cloned();
            c.insert("lastTransitionTime".into(), time.unwrap_or(json!(now)));
        }
    }
}

/// The fields an ephemeral container may have (kube's
/// `allowedEphemeralContainerFields`); the others are forbidden.
const EPHEMERAL_FIELDS: &[&str] = &[
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "volumeMounts",
    "volumeDevices",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    "targetContainerName",
];

fn is_mirror_pod(pod: &Object) -> bool {
    pod.get("metadata").and_then(|m| m.get("annotations")).and_then(|a| a.get("kubernetes.io/config.mirror")).is_some()
}

pub fn validate_update(kind: &str, subresource: &str, object: &Object, old: &Object) -> Vec<FieldError> {
    match (kind, subresource) {
        ("Pod", "ephemeralcontainers") => ephemeral_containers(object, old),
        ("Pod", "resize") => resize(object, old),
        ("Namespace", "finalize") => {
            let mut errs = super::validate::core::finalizers(object);
            for (i, name) in list(object, "spec", "finalizers").iter().enumerate() {
                let name = name.as_str().unwrap_or("");
                let field = format!("spec.finalizers[{i}]");
                for message in crate::types::validation::is_qualified_name(name) {
                    errs.push(FieldError::invalid(&field, name, &message));
                }
                if !name.contains('/') && name != "kubernetes" {
                    errs.push(FieldError::invalid(
                        &field,
                        name,
                        "name is neither a standard finalizer name nor is it fully qualified",
                    ));
                }
            }
            errs
        }
        ("CertificateSigningRequest", "approval") => approval(object, old),
        _ => Vec::new(),
    }
}

fn ephemeral_containers(pod: &Object, old: &Object) -> Vec<FieldError> {
    if is_mirror_pod(old) {
        return vec![FieldError::forbidden(ROOT_FIELD, "static pods do not support ephemeral containers")];
    }
    let mut errs = super::validate::core::pod_metadata_and_spec(pod);
    let new = list(pod, "spec", "ephemeralContainers");
    let path = "spec.ephemeralContainers";
    for (i, container) in new.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if container["name"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required(&format!("{at}.name"), ""));
        }
        if container["image"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required(&format!("{at}.image"), ""));
        }
        for (field, value) in container.as_object().into_iter().flatten() {
            let set = !(value.is_null()
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|o| o.is_empty()));
            if set && !EPHEMERAL_FIELDS.contains(&field.as_str()) {
                errs.push(FieldError::forbidden(&format!("{at}.{field}"), "cannot be set for an Ephemeral Container"));
            }
        }
    }
    for previous in list(old, "spec", "ephemeralContainers") {
        let name = previous["name"].as_str().unwrap_or("");
        match new.iter().find(|c| c["name"] == previous["name"]) {
            None => errs.push(FieldError::forbidden(
                path,
                &format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(now) if now != previous => errs.push(FieldError::forbidden(
                &format!("{path}[{name}]"),
                &format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    errs
}

fn resize(pod: &Object, old: &Object) -> Vec<FieldError> {
    if is_mirror_pod(old) {
        return vec![FieldError::forbidden(ROOT_FIELD, "static pods cannot be resized")];
    }
    let mut errs = super::validate::core::pod_metadata_and_spec(pod);
    let spec = |o: &Object| o.get("spec").and_then(Value::as_object).cloned().unwrap_or_default();
    let (new_spec, old_spec) = (spec(pod), spec(old));
    let new_qos = super::rules::core::pod_qos_class(&new_spec);
    if super::rules::core::pod_qos_class(&old_spec) != new_qos {
        errs.push(FieldError::invalid("spec", new_qos, "Pod QOS Class may not change as a result of resizing"));
    }
    // kube's isPodResizeRequestSupported: a running container without
    // reported resources runs on a kubelet that cannot resize.
    let statuses = list(old, "status", "containerStatuses");
    if let Some(running) = statuses.iter().find(|c| c.get("state").and_then(|s| s.get("running")).is_some()) {
        if running.get("resources").is_none_or(Value::is_null) {
            errs.push(FieldError::forbidden("spec", "Pod running on node without support for resize"));
        }
    }
    // Only cpu and memory may change.
    for field in ["containers", "initContainers"] {
        for (new, before) in list(pod, "spec", field).iter().zip(list(old, "spec", field)) {
            for part in ["requests", "limits"] {
                let names = |c: &Value| -> Vec<(String, Value)> {
                    c.get("resources")
                        .and_then(|r| r.get(part))
                        .and_then(Value::as_object)
                        .map(|m| {
                            m.iter()
                                .filter(|(k, _)| *k != "cpu" && *k != "memory")
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                if names(new) != names(before) {
                    errs.push(FieldError::forbidden("spec", "only cpu and memory resources are mutable"));
                    return errs;
                }
            }
        }
    }
    errs
}

fn approval(csr: &Object, old: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let conditions = list(csr, "status", "conditions");
    let path = "status.conditions";
    let has = |list: &[Value], kind: &str| list.iter().any(|c| c["type"] == kind);
    for (i, c) in conditions.iter().enumerate() {
        let kind = c["type"].as_str().unwrap_or("");
        if kind.is_empty() {
            errs.push(FieldError::required(&format!("{path}[{i}].type"), ""));
        }
        if conditions[..i].iter().any(|other| other["type"] == c["type"])
            && matches!(kind, "Approved" | "Denied" | "Failed")
        {
            errs.push(FieldError::duplicate(&format!("{path}[{i}].type"), kind));
        }
        let status = c["status"].as_str().unwrap_or("");
        if matches!(kind, "Approved" | "Denied") && status != "True" {
            errs.push(FieldError::not_supported(&format!("{path}[{i}].status"), status, &["True"]));
        }
    }
    if has(conditions, "Approved") && has(conditions, "Denied") {
        errs.push(FieldError::invalid_bare(path, "", "Approved and Denied conditions are mutually exclusive"));
    }
    for kind in ["Approved", "Denied", "Failed"] {
        if has(list(old, "status", "conditions"), kind) && !has(conditions, kind) {
            errs.push(FieldError::forbidden(path, &format!("updates may not remove a condition of type {kind:?}")));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Object {
        serde_json::from_value(v).unwrap()
    }

    const NOW: &str = "2030-01-01T00:00:00Z";

    fn prepare(kind: &str, sub: &str, new: Value, old: &Object) -> Object {
        let mut o = object(new);
        prepare_for_update(kind, sub, &mut o, old, &Context { now: NOW, subresource: Some(sub), user: None });
        o
    }

    #[test]
    fn ephemeral_containers_change_nothing_else() {
        let old = object(json!({"metadata": {"name": "p", "labels": {"a": "1"}, "generation": 1},
            "spec": {"containers": [{"name": "app", "image": "x"}]}, "status": {"phase": "Running"}}));
        let new = prepare(
            "Pod",
            "ephemeralcontainers",
            json!({"metadata": {"name": "p", "labels": {"a": "2"}, "generation": 2},
            "spec": {"containers": [{"name": "app", "image": "changed"}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}, "status": {}}),
            &old,
        );
        assert_eq!(new["spec"]["containers"][0]["image"], "x");
        assert_eq!(new["spec"]["ephemeralContainers"][0]["name"], "debug");
        assert_eq!(
            (new["metadata"]["labels"]["a"].clone(), new["metadata"]["generation"].clone()),
            (json!("1"), json!(2))
        );
        assert_eq!(new["status"]["phase"], "Running");
        let with_port = object(json!({"spec": {"containers": [{"name": "app", "image": "x"}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox", "ports": [{"containerPort": 80}]}]}}));
        let errs = ephemeral_containers(&with_port, &old);
        assert!(errs.iter().any(|e| e.body().contains("cannot be set for an Ephemeral Container")), "{errs:?}");
        let removed = ephemeral_containers(&old, &new);
        assert!(removed.iter().any(|e| e.body().contains("may not be removed")), "{removed:?}");
    }

    #[test]
    fn static_pods_are_refused_at_kubes_root_path() {
        let mirror = object(json!({"metadata": {"name": "p", "annotations": {"kubernetes.io/config.mirror": "x"}},
            "spec": {"containers": [{"name": "app", "image": "x"}]}}));
        let errs: Vec<String> = ephemeral_containers(&mirror, &mirror).iter().map(|e| e.to_string()).collect();
        assert_eq!(errs, ["[]: Forbidden: static pods do not support ephemeral containers"]);
        let errs: Vec<String> = resize(&mirror, &mirror).iter().map(|e| e.to_string()).collect();
        assert_eq!(errs, ["[]: Forbidden: static pods cannot be resized"]);
    }

    #[test]
    fn resize_changes_only_cpu_and_memory_within_the_qos_class() {
        let resources =
            |cpu: &str| json!({"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}});
        let old = object(json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "x", "resources": resources("1")}], "nodeName": "n"}}));
        let new = prepare(
            "Pod",
            "resize",
            json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "other", "resources": resources("2")}], "nodeName": "m"}}),
            &old,
        );
        assert_eq!(new["spec"]["containers"][0]["resources"]["limits"]["cpu"], "2");
        assert_eq!(
            (new["spec"]["containers"][0]["image"].as_str(), new["spec"]["nodeName"].as_str()),
            (Some("x"), Some("n"))
        );
        assert!(resize(&new, &old).iter().all(|e| !e.body().contains("QOS")));
        // Guaranteed to Burstable is refused.
        let burstable = prepare(
            "Pod",
            "resize",
            json!({"spec": {"containers": [{"name": "app",
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}]}}),
            &old,
        );
        assert!(resize(&burstable, &old).iter().any(|e| e.body().contains("Pod QOS Class may not change")));
        let storage = prepare(
            "Pod",
            "resize",
            json!({"spec": {"containers": [{"name": "app",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}}),
            &old,
        );
        assert!(resize(&storage, &old).iter().any(|e| e.body().contains("only cpu and memory resources are mutable")));
    }

    #[test]
    fn approval_changes_only_conditions() {
        let old = object(json!({"metadata": {"name": "c"}, "spec": {"signerName": "x", "request": "cg=="},
            "status": {"certificate": "Y2VydA=="}}));
        let new = prepare(
            "CertificateSigningRequest",
            "approval",
            json!({"metadata": {"name": "c"},
            "spec": {"signerName": "changed"}, "status": {"certificate": "", "conditions": [{"type": "Approved", "status": "True"}]}}),
            &old,
        );
        assert_eq!(new["spec"]["signerName"], "x");
        assert_eq!(new["status"]["certificate"], "Y2VydA==");
        assert_eq!(new["status"]["conditions"][0]["lastUpdateTime"], NOW);
        assert!(approval(&new, &old).is_empty());
        let both = object(
            json!({"status": {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]}}),
        );
        assert!(approval(&both, &old).iter().any(|e| e.body().contains("mutually exclusive")));
        assert!(approval(&old, &new)
            .iter()
            .any(|e| e.body().contains("may not remove a condition of type \"Approved\"")));
    }

    #[test]
    fn finalize_keeps_the_status_and_checks_names() {
        let old = object(
            json!({"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating"}}),
        );
        let new = prepare(
            "Namespace",
            "finalize",
            json!({"metadata": {"name": "n"}, "spec": {"finalizers": []}, "status": {"phase": "Active"}}),
            &old,
        );
        assert_eq!(new["status"]["phase"], "Terminating");
        assert!(validate_update("Namespace", "finalize", &new, &old).is_empty());
        let bad = object(json!({"spec": {"finalizers": ["bogus"]}}));
        assert!(!validate_update("Namespace", "finalize", &bad, &old).is_empty());
    }
}
