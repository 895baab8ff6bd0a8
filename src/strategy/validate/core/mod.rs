//! Validation of the core (`v1`) group's kinds, and of the pod template
//! every workload embeds, with kube-apiserver v1.36's rules and words
//! (`pkg/apis/core/validation/validation.go`, `events.go`).
//!
//! One file per family: `pod/` (PodSpec and what it holds: volumes,
//! containers, resources, security contexts, scheduling), `pods.rs`
//! (Pod create/update/status, templates), `service.rs` (Services,
//! Endpoints), `config.rs` (ConfigMaps, Secrets), `storage.rs`
//! (PersistentVolumes, claims), `cluster.rs` (Namespaces, Nodes, Events),
//! `quota.rs` (ResourceQuotas, LimitRanges);
//! `util.rs` reads JSON as Go reads structs, `quantity.rs` compares
//! quantities.
//!
//! Invariant: metadata (name, namespace, labels, annotations,
//! ownerReferences) is validated by the API layer (`api/handlers/create.rs`),
//! not here; inputs are decoded and defaulted objects; nothing here panics
//! on any JSON.
//!
//! Compared with kube's source for v1.36 by the validation audit of
//! 2026-12-04 (the copies read are named in docs/types.md).

mod cluster;
mod config;
mod pod;
mod pods;
mod quantity;
mod quota;
mod service;
mod storage;
mod util;

#[cfg(test)]
mod tests;

use crate::strategy::Object;
use crate::types::validation::FieldError;
use serde_json::Value;

/// kube's `Validate` of a new core object of `kind`.
pub fn create(kind: &str, object: &Object) -> Vec<FieldError> {
    let mut errs = finalizers(object);
    errs.extend(create_kind(kind, object));
    errs
}

fn create_kind(kind: &str, object: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pods::create(object),
        "PodTemplate" => pods::pod_template(object),
        "Service" => service::create(object),
        "Endpoints" => service::endpoints(object),
        "ConfigMap" => config::config_map(object),
        "Secret" => config::secret(object),
        "Namespace" => cluster::namespace(object),
        "Node" => cluster::node(object),
        "Event" => cluster::event(object),
        "PersistentVolume" => storage::persistent_volume(object),
        "PersistentVolumeClaim" => storage::claim(object),
        "ResourceQuota" => quota::resource_quota(&Value::Object(object.clone())),
        "LimitRange" => quota::limit_range(&Value::Object(object.clone())),
        _ => Vec::new(),
    }
}

/// kube's `Validate` of a new object written through a version kept in a
/// core kind's store (events.k8s.io/v1 Events), given in its stored form.
pub fn served_as_create(group: &str, kind: &str, stored: &Object) -> Vec<FieldError> {
    let mut errs = finalizers(stored);
    match (group, kind) {
        ("events.k8s.io", "Event") => errs.extend(cluster::event_create_strict(stored)),
        _ => errs.extend(create_kind(kind, stored)),
    }
    errs
}

/// kube's `ValidateUpdate` of such an object, both given in stored form.
pub fn served_as_update(group: &str, kind: &str, stored: &Object, old: &Object) -> Vec<FieldError> {
    let mut errs = finalizers(stored);
    match (group, kind) {
        ("events.k8s.io", "Event") => errs.extend(cluster::event_update_strict(stored, old)),
        _ => errs.extend(update_kind(kind, stored, old)),
    }
    errs
}

/// kube's `ValidateUpdate` (or the status strategy's `ValidateUpdate` when
/// `subresource` is `status`) of `object` replacing `old`.
pub fn update(kind: &str, object: &Object, old: &Object, subresource: Option<&str>) -> Vec<FieldError> {
    let mut errs = finalizers(object);
    if subresource == Some("status") {
        errs.extend(status_update(kind, object, old));
    } else {
        errs.extend(update_kind(kind, object, old));
    }
    errs
}

fn update_kind(kind: &str, object: &Object, old: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pods::update(object, old),
        "PodTemplate" => pods::pod_template(object),
        "Service" => service::update(object, old),
        "Endpoints" => service::endpoints(object),
        "ConfigMap" => config::config_map_update(object, old),
        "Secret" => config::secret_update(object, old),
        "Namespace" => Vec::new(),
        "Node" => cluster::node_update(object, old),
        "Event" => cluster::event(object),
        "PersistentVolume" => storage::persistent_volume_update(object, old),
        "PersistentVolumeClaim" => storage::claim_update(object, old),
        "ResourceQuota" => quota::resource_quota_update(&Value::Object(object.clone()), &Value::Object(old.clone())),
        "LimitRange" => quota::limit_range(&Value::Object(object.clone())),
        _ => Vec::new(),
    }
}

/// The status strategies' `ValidateUpdate`.
fn status_update(kind: &str, object: &Object, old: &Object) -> Vec<FieldError> {
    match kind {
        "Pod" => pods::status_update(object, old),
        "Service" => service::status_update(object),
        "Namespace" => cluster::namespace_status_update(object),
        "Node" => cluster::node_update(object, old),
        "PersistentVolumeClaim" => storage::claim_status_update(object),
        "ResourceQuota" => quota::resource_quota_status_update(&Value::Object(object.clone())),
        _ => Vec::new(),
    }
}

/// The finalizer rules of kube's `ValidateObjectMeta` (apimachinery's
/// `ValidateFinalizers`, then core's `validateKubeFinalizerName`), which the
/// API layer's metadata checks leave out: qualified names, not both
/// `orphan` and `foregroundDeletion`, and a name without a domain must be a
/// standard one. Every built-in kind's strategy runs them in kube.
pub fn finalizers(object: &Object) -> Vec<FieldError> {
    let names: Vec<&Value> = object
        .get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut errs = Vec::new();
    for name in &names {
        errs.extend(util::qualified_name("metadata.finalizers", name.as_str().unwrap_or("")));
    }
    let has = |f: &str| names.iter().any(|n| n.as_str() == Some(f));
    if has("orphan") && has("foregroundDeletion") {
        let all: Vec<Value> = names.iter().map(|v| (*v).clone()).collect();
        errs.push(FieldError::invalid_bare(
            "metadata.finalizers",
            &util::go_string_slice(&all),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    for (i, name) in names.iter().enumerate() {
        let name = name.as_str().unwrap_or("");
        if !name.contains('/') && !["kubernetes", "orphan", "foregroundDeletion"].contains(&name) {
            errs.push(FieldError::invalid(
                &format!("metadata.finalizers[{i}]"),
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// kube's `ValidatePodTemplateSpec` of `template` at `path`
/// (`spec.template`), for the workloads that embed one.
pub fn pod_template_spec(template: &Value, path: &str) -> Vec<FieldError> {
    pods::template_spec(template, path)
}

/// `validatePodMetadataAndSpec` of a pod (its pod-specific annotations and
/// whole spec), for the subresources that change part of a pod
/// (`strategy/subresources.rs`).
pub fn pod_metadata_and_spec(pod: &Object) -> Vec<FieldError> {
    pods::metadata_and_spec_of(pod)
}

/// kube's `ValidateEndpointIP` (also the EndpointSlice validation's): a
/// valid IP that is not unspecified, loopback or link-local.
pub fn endpoint_ip(ip: &str, field: &str) -> Vec<crate::types::validation::FieldError> {
    service::non_special_ip(ip, field)
}
