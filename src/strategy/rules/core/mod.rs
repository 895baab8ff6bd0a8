//! Create and update rules of the core (`v1`) group's kinds: kube's
//! `PrepareForCreate`, `PrepareForUpdate` and `Canonicalize` of
//! pkg/registry/core/*/strategy.go, and of the `/status` strategies.
//!
//! What the API layer already did before these run: on create, the name,
//! uid, creationTimestamp and `metadata.generation` (1 for kinds that have
//! one); on update, the server-owned metadata, `status` carried over from
//! the stored object for kinds with a status subresource (the whole stored
//! object with the new `status` for a `/status` write), and the generation
//! bump when `spec` changed (api/handlers/update.rs).
//!
//! Invariant: every rule is a pure function of the objects and the
//! [`Context`]; applying a rule to its own output changes nothing.

mod endpoints;
mod qos;
mod service;

#[cfg(test)]
mod fixture_tests;

use crate::strategy::defaults::core::fields::{each_mut, object_entry, object_mut, str_of};
use crate::strategy::defaults::core::namespace_name_label;
use crate::strategy::{Context, Object, Rejection};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};

pub use qos::{parse_quantity_nanos, pod_qos_class};

/// The namespace controller's finalizer (api.FinalizerKubernetes).
const FINALIZER_KUBERNETES: &str = "kubernetes";

/// kube's `PrepareForCreate` (and `Canonicalize`) of a core kind.
pub fn prepare_for_create(kind: &str, object: &mut Object, context: &Context) {
    prepare_kind_for_create(kind, object, context);
    canonicalize(kind, object);
}

fn prepare_kind_for_create(kind: &str, object: &mut Object, context: &Context) {
    match kind {
        "Pod" => pod_create(object, context),
        "Namespace" => namespace_create(object),
        // pkg/registry/core/service/strategy.go: PrepareForCreate resets
        // status; an empty ServiceStatus encodes its loadBalancer struct.
        "Service" => {
            object.insert("status".into(), json!({"loadBalancer": {}}));
        }
        // pkg/registry/core/persistentvolume/strategy.go: PrepareForCreate
        // resets status to phase Pending with lastPhaseTransitionTime now.
        "PersistentVolume" => {
            object.insert("status".into(), json!({"phase": "Pending", "lastPhaseTransitionTime": context.now}));
        }
        // pkg/registry/core/persistentvolumeclaim/strategy.go: PrepareForCreate
        // resets status; SetDefaults_PersistentVolumeClaim makes it Pending.
        "PersistentVolumeClaim" => {
            object.insert("status".into(), json!({"phase": "Pending"}));
        }
        // pkg/registry/core/node/strategy.go: PrepareForCreate keeps the
        // status a Node is created with (the control plane's tests create
        // fake nodes that way); NodeStatus is a struct, always encoded.
        "Node" => {
            // dropDisabledFields on create: the removed dynamic kubelet
            // config (spec.configSource, status.config) is dropped.
            if let Some(spec) = object_mut(object, "spec") {
                spec.shift_remove("configSource");
            }
            if let Some(status) = object_entry(object, "status") {
                status.shift_remove("config");
            }
        }
        // pkg/registry/core/serviceaccount/strategy.go: PrepareForCreate.
        "ServiceAccount" => clean_secret_references(object),
        // pkg/registry/core/replicationcontroller/strategy.go:
        // PrepareForCreate resets status (ReplicationControllerStatus.replicas
        // is not omitempty).
        "ReplicationController" => {
            object.insert("status".into(), json!({"replicas": 0}));
        }
        // pkg/registry/core/resourcequota/strategy.go: PrepareForCreate
        // resets status (recorded in lists/core_v1_resourcequotas.json).
        "ResourceQuota" => {
            object.insert("status".into(), json!({}));
        }
        _ => {}
    }
}

/// kube's `Canonicalize` of a core kind, which kube runs after validation
/// on create and update. The pipeline (strategy/mod.rs) has no step after
/// validation yet, so the prepare functions call it last; a validation error
/// of an Endpoints object then names the repacked subsets' indexes.
pub fn canonicalize(kind: &str, object: &mut Object) {
    match kind {
        // pkg/registry/core/endpoint/strategy.go: Canonicalize.
        "Endpoints" => endpoints::repack_subsets(object),
        // pkg/registry/core/namespace/strategy.go: Canonicalize.
        "Namespace" => namespace_name_label(object),
        _ => {}
    }
}

/// kube's `PrepareForUpdate` of a core kind, or of its status strategy
/// when `context.subresource` is `status`; `old` is the stored version.
pub fn prepare_for_update(kind: &str, object: &mut Object, old: &Object, context: &Context) -> Result<(), Rejection> {
    prepare_kind_for_update(kind, object, old, context);
    canonicalize(kind, object);
    Ok(())
}

fn prepare_kind_for_update(kind: &str, object: &mut Object, old: &Object, context: &Context) {
    let status_update = context.subresource == Some("status");
    match (kind, status_update) {
        ("Pod", false) => keep_stored(object, old, "status"),
        ("Pod", true) => pod_status_update(object, old),
        ("Namespace", false) => {
            // pkg/registry/core/namespace/strategy.go: PrepareForUpdate keeps
            // spec.finalizers and status; Canonicalize keeps the name label.
            keep_stored(object, old, "status");
            let finalizers = old.get("spec").and_then(|s| s.get("finalizers")).cloned();
            match (finalizers, object_entry(object, "spec")) {
                (Some(finalizers), Some(spec)) => {
                    spec.insert("finalizers".into(), finalizers);
                }
                (None, Some(spec)) => {
                    spec.shift_remove("finalizers");
                }
                _ => {}
            }
            if object.get("spec").and_then(Value::as_object).is_some_and(|s| s.is_empty()) && old.get("spec").is_none()
            {
                object.shift_remove("spec");
            }
        }
        ("Namespace", true) => keep_stored(object, old, "spec"),
        ("Service", false) => {
            keep_stored(object, old, "status");
            service::drop_type_dependent_fields(object, old);
        }
        ("Node", false) => {
            // pkg/registry/core/node/strategy.go: PrepareForUpdate keeps the
            // stored status; dropDisabledFields drops a new configSource.
            keep_stored(object, old, "status");
            keep_only_if_stored(object, old, "spec", "configSource");
        }
        ("Node", true) => {
            // nodeStatusStrategy.PrepareForUpdate: spec kept, and a new
            // status.config dropped.
            keep_stored(object, old, "spec");
            keep_only_if_stored(object, old, "status", "config");
        }
        ("PersistentVolume" | "PersistentVolumeClaim", false) => keep_stored(object, old, "status"),
        // pkg/registry/core/{replicationcontroller,resourcequota}/strategy.go:
        // PrepareForUpdate keeps the stored status; the status strategies
        // keep the stored spec.
        ("ReplicationController" | "ResourceQuota", false) => keep_stored(object, old, "status"),
        ("ReplicationController" | "ResourceQuota", true) => keep_stored(object, old, "spec"),
        // pkg/registry/core/serviceaccount/strategy.go: PrepareForUpdate.
        ("ServiceAccount", _) => clean_secret_references(object),
        ("PersistentVolume", true) => {
            keep_stored(object, old, "spec");
            persistent_volume_phase_time(object, old, context);
        }
        ("Service" | "PersistentVolumeClaim", true) => keep_stored(object, old, "spec"),
        _ => {}
    }
}

/// The metadata a `/status` write of a core `kind` takes from the request
/// (the API layer keeps the rest of the stored object): the core status
/// strategies replace only the spec (pkg/registry/core/{pod,namespace,node,
/// service,persistentvolume,persistentvolumeclaim}/strategy.go), none calls
/// ResetObjectMetaForStatus; a Pod's keeps its ownerReferences
/// (podStatusStrategy.PrepareForUpdate: old kubelets corrupt them).
pub fn status_update_metadata(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" => &["labels", "annotations", "finalizers"],
        "Namespace"
        | "Node"
        | "Service"
        | "PersistentVolume"
        | "PersistentVolumeClaim"
        | "ReplicationController"
        | "ResourceQuota" => &["labels", "annotations", "finalizers", "ownerReferences"],
        _ => &[],
    }
}

/// Drops `object.parent.field` unless the stored object has one (a field
/// kube keeps only while it is in use).
fn keep_only_if_stored(object: &mut Object, old: &Object, parent: &str, field: &str) {
    let in_use = old.get(parent).and_then(|p| p.get(field)).is_some_and(|v| !v.is_null());
    if !in_use {
        if let Some(parent) = object_mut(object, parent) {
            parent.shift_remove(field);
        }
    }
}

/// cleanSecretReferences: a ServiceAccount's `secrets` keep only their names.
fn clean_secret_references(object: &mut Object) {
    for secret in each_mut(object, "secrets") {
        secret.retain(|key, _| key == "name");
    }
}

/// `object.field = old.field` (absent when absent in `old`).
fn keep_stored(object: &mut Object, old: &Object, field: &str) {
    match old.get(field) {
        Some(value) => object.insert(field.into(), value.clone()),
        None => object.shift_remove(field),
    };
}

/// pkg/registry/core/pod/strategy.go: PrepareForCreate: status reset to
/// phase Pending and the QoS class, then applySchedulingGatedCondition,
/// mutatePodAffinity and mutateTopologySpreadConstraints. (The generation
/// is set to 1 by the API layer for every kind that has one.)
fn pod_create(object: &mut Object, context: &Context) {
    let Some(spec) = object_entry(object, "spec") else {
        return;
    };
    let class = pod_qos_class(spec);
    let gated = spec.get("schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty());
    let mut status = Object::new();
    status.insert("phase".into(), json!("Pending"));
    if gated {
        // podutil.UpdatePodCondition stamps lastTransitionTime; a zero
        // lastProbeTime encodes as null.
        status.insert(
            "conditions".into(),
            json!([{
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": null,
                "lastTransitionTime": context.now,
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]),
        );
    }
    status.insert("qosClass".into(), json!(class));
    object.insert("status".into(), Value::Object(status));
    let labels =
        object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object).cloned().unwrap_or_default();
    let annotations = object
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(spec) = object_mut(object, "spec") {
        pod_affinity_label_keys(spec, &labels);
        topology_spread_label_keys(spec, &labels);
        app_armor_version_skew(spec, &annotations);
    }
}

/// The deprecated per-container AppArmor annotation's key prefix
/// (api.DeprecatedAppArmorAnnotationKeyPrefix).
const APP_ARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// applyAppArmorVersionSkew: on a non-Windows pod, a container's deprecated
/// AppArmor annotation becomes its `securityContext.appArmorProfile` when
/// the container has none, the annotation maps to a valid profile, and that
/// profile differs from the pod's.
fn app_armor_version_skew(spec: &mut Object, annotations: &Object) {
    let windows = spec.get("os").and_then(|o| o.get("name")).and_then(Value::as_str) == Some("windows");
    if windows {
        return;
    }
    let pod_profile = spec.get("securityContext").and_then(|s| s.get("appArmorProfile")).cloned();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in each_mut(spec, list) {
            let key = format!("{APP_ARMOR_ANNOTATION_PREFIX}{}", str_of(container, "name"));
            let Some(annotation) = annotations.get(&key).and_then(Value::as_str) else {
                continue;
            };
            let has_field =
                container.get("securityContext").and_then(|s| s.get("appArmorProfile")).is_some_and(|p| !p.is_null());
            if has_field {
                continue;
            }
            let Some(profile) = app_armor_profile_for_annotation(annotation) else {
                continue;
            };
            if pod_profile.as_ref() == Some(&profile) {
                continue;
            }
            if let Some(security_context) = object_entry(container, "securityContext") {
                security_context.insert("appArmorProfile".into(), profile);
            }
        }
    }
}

/// pkg/api/pod/util.go: ApparmorFieldForAnnotation, then the field's
/// validation (a Localhost profile's name is required, at most 4095 bytes
/// and not padded with white space); `None` when either refuses it.
fn app_armor_profile_for_annotation(annotation: &str) -> Option<Value> {
    match annotation {
        "unconfined" => Some(json!({"type": "Unconfined"})),
        "runtime/default" => Some(json!({"type": "RuntimeDefault"})),
        _ => {
            let name = annotation.strip_prefix("localhost/")?;
            let valid = !name.is_empty() && name.len() <= 4095 && name.trim() == name;
            valid.then(|| json!({"type": "Localhost", "localhostProfile": name}))
        }
    }
}

/// mutatePodAffinity (MatchLabelKeysInPodAffinity, on by default): every
/// pod (anti-)affinity term with a label selector gets `In` requirements
/// for its matchLabelKeys and `NotIn` ones for its mismatchLabelKeys, with
/// the pod's values of those labels.
fn pod_affinity_label_keys(spec: &mut Object, labels: &Object) {
    let Some(affinity) = object_mut(spec, "affinity") else {
        return;
    };
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(affinity) = object_mut(affinity, kind) else {
            continue;
        };
        for term in each_mut(affinity, "requiredDuringSchedulingIgnoredDuringExecution") {
            merge_label_keys(term, labels, true);
        }
        for weighted in each_mut(affinity, "preferredDuringSchedulingIgnoredDuringExecution") {
            if let Some(term) = object_mut(weighted, "podAffinityTerm") {
                merge_label_keys(term, labels, true);
            }
        }
    }
}

/// mutateTopologySpreadConstraints (MatchLabelKeysInPodTopologySpread and
/// MatchLabelKeysInPodTopologySpreadSelectorMerge, on by default): the
/// same merge of matchLabelKeys into each constraint's label selector.
fn topology_spread_label_keys(spec: &mut Object, labels: &Object) {
    for constraint in each_mut(spec, "topologySpreadConstraints") {
        merge_label_keys(constraint, labels, false);
    }
}

/// applyLabelKeysToLabelSelector on one term or constraint.
fn merge_label_keys(term: &mut Object, labels: &Object, with_mismatch: bool) {
    let keys = |field: &str| -> Vec<String> {
        term.get(field)
            .and_then(Value::as_array)
            .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let match_keys = keys("matchLabelKeys");
    let mismatch_keys = if with_mismatch { keys("mismatchLabelKeys") } else { Vec::new() };
    if match_keys.is_empty() && mismatch_keys.is_empty() {
        return;
    }
    // A nil selector matches nothing and is left nil.
    let Some(selector) = object_mut(term, "labelSelector") else {
        return;
    };
    let mut added = Vec::new();
    for (keys, operator) in [(match_keys, "In"), (mismatch_keys, "NotIn")] {
        for key in keys {
            if let Some(value) = labels.get(&key).and_then(Value::as_str) {
                added.push(json!({"key": key, "operator": operator, "values": [value]}));
            }
        }
    }
    if added.is_empty() {
        return;
    }
    if selector.get("matchExpressions").is_none_or(Value::is_null) {
        selector.insert("matchExpressions".into(), json!([]));
    }
    if let Some(expressions) = selector.get_mut("matchExpressions").and_then(Value::as_array_mut) {
        expressions.extend(added);
    }
}

/// pkg/registry/core/pod/strategy.go: podStatusStrategy.PrepareForUpdate:
/// spec and ownerReferences from the stored pod (the API layer's status
/// path keeps the stored metadata), the QoS class backfilled when the new
/// status has none, and observedGeneration kept when cleared
/// (preserveOldObservedGeneration), for the status and per condition type.
fn pod_status_update(object: &mut Object, old: &Object) {
    keep_stored(object, old, "spec");
    let old_status = old.get("status").and_then(Value::as_object).cloned().unwrap_or_default();
    let Some(status) = object_entry(object, "status") else {
        return;
    };
    if str_of(status, "qosClass").is_empty() {
        if let Some(class) = old_status.get("qosClass").filter(|c| c.as_str().is_some_and(|c| !c.is_empty())) {
            status.insert("qosClass".into(), class.clone());
        }
    }
    let unset = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v.as_i64() == Some(0));
    if unset(status.get("observedGeneration")) {
        if let Some(generation) = old_status.get("observedGeneration").filter(|g| !unset(Some(g))) {
            status.insert("observedGeneration".into(), generation.clone());
        }
    }
    // Old conditions' generations, per type, consumed in order.
    let mut old_generations: HashMap<String, VecDeque<Option<Value>>> = HashMap::new();
    for condition in old_status.get("conditions").and_then(Value::as_array).into_iter().flatten() {
        let kind = condition.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        old_generations.entry(kind).or_default().push_back(condition.get("observedGeneration").cloned());
    }
    for condition in each_mut(status, "conditions") {
        let kind = str_of(condition, "type");
        let Some(generation) = old_generations.get_mut(kind).and_then(VecDeque::pop_front) else {
            continue;
        };
        if unset(condition.get("observedGeneration")) {
            if let Some(generation) = generation.filter(|g| !unset(Some(g))) {
                condition.insert("observedGeneration".into(), generation);
            }
        }
    }
}

/// pkg/registry/core/namespace/strategy.go: PrepareForCreate (status
/// Active; the `kubernetes` finalizer added to spec.finalizers).
fn namespace_create(object: &mut Object) {
    object.insert("status".into(), json!({"phase": "Active"}));
    if let Some(spec) = object_entry(object, "spec") {
        let has_kubernetes = spec
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|f| f.as_str() == Some(FINALIZER_KUBERNETES)));
        if !has_kubernetes {
            match spec.get_mut("finalizers").and_then(Value::as_array_mut) {
                Some(finalizers) => finalizers.push(json!(FINALIZER_KUBERNETES)),
                None => {
                    spec.insert("finalizers".into(), json!([FINALIZER_KUBERNETES]));
                }
            }
        }
    }
}

/// pkg/registry/core/persistentvolume/strategy.go:
/// persistentvolumeStatusStrategy.PrepareForUpdate: the phase's transition
/// time is kept while the phase stays, and set to now when the phase
/// changes and the writer did not set a new time.
fn persistent_volume_phase_time(object: &mut Object, old: &Object, context: &Context) {
    let old_status = old.get("status").and_then(Value::as_object);
    let old_phase = old_status.map(|s| str_of(s, "phase")).unwrap_or("").to_string();
    let old_time = old_status.and_then(|s| s.get("lastPhaseTransitionTime")).filter(|t| !t.is_null()).cloned();
    let Some(status) = object_entry(object, "status") else {
        return;
    };
    let new_time = status.get("lastPhaseTransitionTime").filter(|t| !t.is_null()).cloned();
    if str_of(status, "phase") == old_phase {
        if new_time.is_none() {
            if let Some(time) = old_time {
                status.insert("lastPhaseTransitionTime".into(), time);
            }
        }
    } else if new_time.is_none() || new_time == old_time {
        status.insert("lastPhaseTransitionTime".into(), json!(context.now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-25T12:00:00Z";

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn create(kind: &str, value: Value) -> Value {
        let mut o = object(value);
        prepare_for_create(kind, &mut o, &Context { now: NOW, subresource: None, user: None });
        Value::Object(o)
    }

    fn update(kind: &str, new: Value, old: Value, subresource: Option<&str>) -> Value {
        let mut o = object(new);
        let result = prepare_for_update(kind, &mut o, &object(old), &Context { now: NOW, subresource, user: None });
        assert_eq!(result, Ok(()));
        Value::Object(o)
    }

    // pkg/registry/core/pod/strategy.go: PrepareForCreate (phase Pending, QoS class).
    #[test]
    fn pod_create_status() {
        let p = create(
            "Pod",
            json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}, "status": {"phase": "Running", "podIP": "1.2.3.4"}}),
        );
        assert_eq!(p["status"], json!({"phase": "Pending", "qosClass": "Burstable"}));
    }

    // pkg/registry/core/pod/strategy.go: applySchedulingGatedCondition
    #[test]
    fn pod_create_scheduling_gated() {
        let p = create("Pod", json!({"spec": {"schedulingGates": [{"name": "g"}], "containers": []}}));
        assert_eq!(p["status"]["conditions"][0]["reason"], "SchedulingGated");
        assert_eq!(p["status"]["conditions"][0]["status"], "False");
        assert_eq!(p["status"]["conditions"][0]["lastTransitionTime"], NOW);
    }

    // pkg/registry/core/pod/strategy.go: mutatePodAffinity, mutateTopologySpreadConstraints
    #[test]
    fn pod_create_label_keys() {
        let p = create(
            "Pod",
            json!({"metadata": {"labels": {"app": "web", "rev": "7"}}, "spec": {"containers": [],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "k", "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["rev"], "mismatchLabelKeys": ["app", "missing"]}]}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}, "matchLabelKeys": ["rev"]},
                    {"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["rev"]}]}}),
        );
        assert_eq!(
            p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
                ["labelSelector"]["matchExpressions"],
            json!([{"key": "rev", "operator": "In", "values": ["7"]}, {"key": "app", "operator": "NotIn", "values": ["web"]}])
        );
        assert_eq!(
            p["spec"]["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"],
            json!([{"key": "x", "operator": "Exists"}, {"key": "rev", "operator": "In", "values": ["7"]}])
        );
        assert!(p["spec"]["topologySpreadConstraints"][1].get("labelSelector").is_none(), "nil selector stays nil");
    }

    // pkg/registry/core/pod/strategy.go: applyAppArmorVersionSkew
    #[test]
    fn pod_create_app_armor_annotations() {
        let p = create(
            "Pod",
            json!({"metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/a": "localhost/prof",
                "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
                "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
                "container.apparmor.security.beta.kubernetes.io/d": "unconfined"}},
                "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}, "containers": [
                    {"name": "a"}, {"name": "b"}, {"name": "c"},
                    {"name": "d", "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}]}}),
        );
        let containers = &p["spec"]["containers"];
        assert_eq!(
            containers[0]["securityContext"]["appArmorProfile"],
            json!({"type": "Localhost", "localhostProfile": "prof"})
        );
        assert!(containers[1].get("securityContext").is_none(), "same as the pod's profile");
        assert!(containers[2].get("securityContext").is_none(), "invalid annotation");
        assert_eq!(
            containers[3]["securityContext"]["appArmorProfile"],
            json!({"type": "RuntimeDefault"}),
            "field wins"
        );
        let windows = create(
            "Pod",
            json!({"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
                "spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}}),
        );
        assert!(windows["spec"]["containers"][0].get("securityContext").is_none());
    }

    // pkg/registry/core/pod/strategy.go: PrepareForUpdate keeps the stored status.
    #[test]
    fn pod_update_keeps_status() {
        let p = update(
            "Pod",
            json!({"spec": {"a": 1}, "status": {"phase": "Failed"}}),
            json!({"spec": {}, "status": {"phase": "Running"}}),
            None,
        );
        assert_eq!(p, json!({"spec": {"a": 1}, "status": {"phase": "Running"}}));
    }

    // pkg/registry/core/pod/strategy.go: podStatusStrategy.PrepareForUpdate,
    // preserveOldObservedGeneration
    #[test]
    fn pod_status_update() {
        let old = json!({"spec": {"nodeName": "a"}, "status": {"phase": "Pending", "qosClass": "Burstable", "observedGeneration": 3,
            "conditions": [{"type": "Ready", "status": "False", "observedGeneration": 2}]}});
        let new = json!({"spec": {"nodeName": "b"}, "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "True"}]}});
        let p = update("Pod", new, old, Some("status"));
        assert_eq!(p["spec"], json!({"nodeName": "a"}));
        assert_eq!(p["status"]["qosClass"], "Burstable");
        assert_eq!(p["status"]["observedGeneration"], 3);
        assert_eq!(p["status"]["conditions"][0]["observedGeneration"], 2);
        assert!(p["status"]["conditions"][1].get("observedGeneration").is_none());
    }

    // pkg/registry/core/namespace/strategy.go: PrepareForCreate, Canonicalize
    #[test]
    fn namespace_create_rules() {
        let n = create(
            "Namespace",
            json!({"metadata": {"name": "gen-x1"}, "spec": {"finalizers": ["example.com/x"]}, "status": {"phase": "Terminating"}}),
        );
        assert_eq!(n["spec"]["finalizers"], json!(["example.com/x", "kubernetes"]));
        assert_eq!(n["status"], json!({"phase": "Active"}));
        assert_eq!(n["metadata"]["labels"]["kubernetes.io/metadata.name"], "gen-x1");
        let n = create("Namespace", json!({"metadata": {"name": "a"}}));
        assert_eq!(n["spec"], json!({"finalizers": ["kubernetes"]}));
    }

    // pkg/registry/core/namespace/strategy.go: PrepareForUpdate (spec.finalizers and status kept)
    #[test]
    fn namespace_update_rules() {
        let old =
            json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let n = update(
            "Namespace",
            json!({"metadata": {"name": "a", "labels": {}}, "spec": {"finalizers": []}, "status": {"phase": "Terminating"}}),
            old.clone(),
            None,
        );
        assert_eq!(n["spec"], json!({"finalizers": ["kubernetes"]}));
        assert_eq!(n["status"], json!({"phase": "Active"}));
        assert_eq!(n["metadata"]["labels"], json!({"kubernetes.io/metadata.name": "a"}));
        let n = update(
            "Namespace",
            json!({"metadata": {"name": "a"}, "spec": {}, "status": {"phase": "Terminating"}}),
            old,
            Some("status"),
        );
        assert_eq!(n["spec"], json!({"finalizers": ["kubernetes"]}));
        assert_eq!(n["status"], json!({"phase": "Terminating"}));
    }

    // pkg/registry/core/{service,persistentvolume,persistentvolumeclaim}/strategy.go: PrepareForCreate
    #[test]
    fn status_reset_on_create() {
        let status = json!({"phase": "Bound", "loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}});
        let with_status = json!({"spec": {}, "status": status});
        assert_eq!(create("Service", with_status.clone())["status"], json!({"loadBalancer": {}}));
        assert_eq!(
            create("PersistentVolume", with_status.clone())["status"],
            json!({"phase": "Pending", "lastPhaseTransitionTime": NOW})
        );
        assert_eq!(create("PersistentVolumeClaim", with_status.clone())["status"], json!({"phase": "Pending"}));
        // pkg/registry/core/node/strategy.go: a Node keeps the status it is created with.
        assert_eq!(create("Node", with_status)["status"], status);
        assert_eq!(create("Node", json!({"spec": {}}))["status"], json!({}));
    }

    // Main-resource writes keep the stored status; /status writes keep the stored spec.
    #[test]
    fn status_subresource_split() {
        for kind in ["Service", "Node", "PersistentVolume", "PersistentVolumeClaim"] {
            let old = json!({"spec": {"a": 1}, "status": {"phase": "Old"}});
            let new = json!({"spec": {"a": 2}, "status": {"phase": "New"}});
            assert_eq!(
                update(kind, new.clone(), old.clone(), None),
                json!({"spec": {"a": 2}, "status": {"phase": "Old"}}),
                "{kind}"
            );
            let s = update(kind, new, old, Some("status"));
            assert_eq!((&s["spec"], &s["status"]["phase"]), (&json!({"a": 1}), &json!("New")), "{kind}");
        }
    }

    // pkg/registry/core/*/strategy.go: status strategies keep the request's
    // metadata, except a Pod's ownerReferences.
    #[test]
    fn status_writes_keep_metadata() {
        assert!(status_update_metadata("Pod").contains(&"labels"));
        assert!(!status_update_metadata("Pod").contains(&"ownerReferences"));
        assert!(status_update_metadata("Node").contains(&"ownerReferences"));
        assert!(status_update_metadata("ConfigMap").is_empty());
    }

    // pkg/registry/core/node/strategy.go: dropDisabledFields, nodeStatusStrategy.PrepareForUpdate
    #[test]
    fn node_config_source_dropped() {
        let n = create(
            "Node",
            json!({"spec": {"configSource": {"configMap": {}}}, "status": {"config": {}, "phase": "x"}}),
        );
        assert_eq!(n, json!({"spec": {}, "status": {"phase": "x"}}));
        let new = json!({"spec": {"configSource": {"a": 1}}, "status": {"config": {"b": 1}}});
        let n = update("Node", new.clone(), json!({"spec": {}, "status": {}}), None);
        assert_eq!(n["spec"], json!({}));
        let n = update("Node", new.clone(), json!({"spec": {"configSource": {"a": 0}}, "status": {}}), None);
        assert_eq!(n["spec"], json!({"configSource": {"a": 1}}));
        let n = update("Node", new, json!({"spec": {}, "status": {}}), Some("status"));
        assert_eq!(n["status"], json!({}));
    }

    // pkg/registry/core/endpoint/strategy.go: Canonicalize on create and update.
    #[test]
    fn endpoints_canonicalized() {
        let body =
            json!({"subsets": [{"addresses": [{"ip": "10.0.0.2"}, {"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]});
        let want = json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}]}]);
        assert_eq!(create("Endpoints", body.clone())["subsets"], want);
        assert_eq!(update("Endpoints", body, json!({}), None)["subsets"], want);
    }

    // pkg/registry/core/serviceaccount/strategy.go: cleanSecretReferences
    #[test]
    fn service_account_secret_references() {
        let body = json!({"secrets": [{"name": "a", "namespace": "x", "uid": "u"}, {"kind": "Secret"}]});
        assert_eq!(create("ServiceAccount", body.clone())["secrets"], json!([{"name": "a"}, {}]));
        assert_eq!(update("ServiceAccount", body, json!({}), None)["secrets"], json!([{"name": "a"}, {}]));
    }

    // pkg/registry/core/persistentvolume/strategy.go: status PrepareForUpdate (lastPhaseTransitionTime)
    #[test]
    fn persistent_volume_transition_time() {
        let old =
            json!({"spec": {}, "status": {"phase": "Pending", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}});
        let same = update("PersistentVolume", json!({"status": {"phase": "Pending"}}), old.clone(), Some("status"));
        assert_eq!(same["status"]["lastPhaseTransitionTime"], "2020-01-01T00:00:00Z");
        let changed =
            update("PersistentVolume", json!({"status": {"phase": "Available"}}), old.clone(), Some("status"));
        assert_eq!(changed["status"]["lastPhaseTransitionTime"], NOW);
        let given = update(
            "PersistentVolume",
            json!({"status": {"phase": "Bound", "lastPhaseTransitionTime": "2021-01-01T00:00:00Z"}}),
            old,
            Some("status"),
        );
        assert_eq!(given["status"]["lastPhaseTransitionTime"], "2021-01-01T00:00:00Z");
    }
}
