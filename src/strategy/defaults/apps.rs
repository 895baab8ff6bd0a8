//! Defaults of the `apps` group's kinds (Deployment, ReplicaSet,
//! StatefulSet, DaemonSet), as kube-apiserver v1.36 fills them on decode:
//! `pkg/apis/apps/v1/defaults.go` (`SetDefaults_*`) and the generated
//! `pkg/apis/apps/v1/zz_generated.defaults.go`, which also defaults every
//! embedded pod template (delegated to `defaults::core::pod_template_spec`)
//! and a StatefulSet's volume claim templates.
//!
//! Invariant: only absent fields are filled (a field a client set, even to a
//! zero value, is kept), as Go's nil-pointer checks do; no input panics.

use crate::strategy::defaults::core;
use crate::strategy::Object;
use serde_json::{json, Map, Value};

pub fn apply(kind: &str, object: &mut Object) {
    match kind {
        "Deployment" => deployment(object),
        "ReplicaSet" => replica_set(object),
        "StatefulSet" => stateful_set(object),
        "DaemonSet" => daemon_set(object),
        _ => {}
    }
}

/// The object at `key` of `map`, created empty when absent or not an
/// object (a wrong type was refused by decoding before defaulting).
pub(super) fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(inner) => inner,
        _ => unreachable!("replaced by an object above"),
    }
}

/// Sets `key` to `value` when absent (or null).
pub(super) fn default_field(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// A string field, `""` when absent (Go's zero value).
fn text<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Defaults the pod template at `spec.template`. Its `metadata` is a Go
/// struct (not a pointer), which kube always encodes, `{}` when empty
/// (recorded in tests/fixtures/kube-v1.36/lists/batch_v1_cronjobs.json).
pub(super) fn template(spec: &mut Map<String, Value>) {
    let template = child(spec, "template");
    child(template, "metadata");
    let template = spec.entry("template".to_string()).or_insert_with(|| Value::Object(Map::new()));
    core::pod_template_spec(template);
}

// pkg/apis/apps/v1/defaults.go: SetDefaults_Deployment
fn deployment(object: &mut Object) {
    let spec = child(object, "spec");
    default_field(spec, "replicas", json!(1));
    let strategy = child(spec, "strategy");
    if text(strategy, "type").is_empty() {
        strategy.insert("type".into(), json!("RollingUpdate"));
    }
    if text(strategy, "type") == "RollingUpdate" {
        let rolling = child(strategy, "rollingUpdate");
        default_field(rolling, "maxUnavailable", json!("25%"));
        default_field(rolling, "maxSurge", json!("25%"));
    }
    default_field(spec, "revisionHistoryLimit", json!(10));
    default_field(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

// pkg/apis/apps/v1/defaults.go: SetDefaults_ReplicaSet
fn replica_set(object: &mut Object) {
    let spec = child(object, "spec");
    default_field(spec, "replicas", json!(1));
    template(spec);
}

/// The annotation that carries a DaemonSet's `templateGeneration` in apps/v1.
const DAEMONSET_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

// pkg/apis/apps/v1/defaults.go: SetDefaults_DaemonSet
fn daemon_set(object: &mut Object) {
    // pkg/apis/apps/v1/conversion.go: a decoded DaemonSet round-trips
    // through the internal type, whose templateGeneration (0 when the
    // annotation is absent) is always written back as the annotation; the
    // create and update rules then set its real value. kube's field manager
    // sees it at this point, so the creator's managedFields own it
    // (tests/fixtures/kube-v1.36/lists/apps_v1_daemonsets.json).
    let annotations = child(child(object, "metadata"), "annotations");
    annotations.entry(DAEMONSET_TEMPLATE_GENERATION).or_insert_with(|| json!("0"));
    let spec = child(object, "spec");
    let strategy = child(spec, "updateStrategy");
    if text(strategy, "type").is_empty() {
        strategy.insert("type".into(), json!("RollingUpdate"));
    }
    if text(strategy, "type") == "RollingUpdate" {
        let rolling = child(strategy, "rollingUpdate");
        default_field(rolling, "maxUnavailable", json!(1));
        default_field(rolling, "maxSurge", json!(0));
    }
    default_field(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

// pkg/apis/apps/v1/defaults.go: SetDefaults_StatefulSet. The
// MaxUnavailableStatefulSet gate is off in v1.36 (the recorded StatefulSet in
// tests/fixtures/kube-v1.36/lists/apps_v1_statefulsets.json has no
// rollingUpdate.maxUnavailable); StatefulSetAutoDeletePVC is GA.
fn stateful_set(object: &mut Object) {
    let spec = child(object, "spec");
    if text(spec, "podManagementPolicy").is_empty() {
        spec.insert("podManagementPolicy".into(), json!("OrderedReady"));
    }
    let strategy = child(spec, "updateStrategy");
    if text(strategy, "type").is_empty() {
        strategy.insert("type".into(), json!("RollingUpdate"));
        child(strategy, "rollingUpdate");
    }
    if text(strategy, "type") == "RollingUpdate" {
        if let Some(Value::Object(rolling)) = strategy.get_mut("rollingUpdate") {
            default_field(rolling, "partition", json!(0));
        }
    }
    let retention = child(spec, "persistentVolumeClaimRetentionPolicy");
    if text(retention, "whenDeleted").is_empty() {
        retention.insert("whenDeleted".into(), json!("Retain"));
    }
    if text(retention, "whenScaled").is_empty() {
        retention.insert("whenScaled".into(), json!("Retain"));
    }
    default_field(spec, "replicas", json!(1));
    default_field(spec, "revisionHistoryLimit", json!(10));
    template(spec);
    if let Some(Value::Array(claims)) = spec.get_mut("volumeClaimTemplates") {
        for claim in claims.iter_mut().filter_map(Value::as_object_mut) {
            volume_claim_template(claim);
        }
    }
}

/// One of `spec.volumeClaimTemplates`: zz_generated.defaults.go calls
/// pkg/apis/core/v1/defaults.go SetDefaults_PersistentVolumeClaim (status
/// phase Pending) and SetDefaults_PersistentVolumeClaimSpec (volumeMode
/// Filesystem); kube-apiserver v1.36 also stores each template with its
/// `apiVersion: v1` and `kind: PersistentVolumeClaim` (recorded in
/// tests/fixtures/kube-v1.36/lists/apps_v1_statefulsets.json).
fn volume_claim_template(claim: &mut Map<String, Value>) {
    claim.insert("kind".into(), json!("PersistentVolumeClaim"));
    claim.insert("apiVersion".into(), json!("v1"));
    let spec = child(claim, "spec");
    default_field(spec, "volumeMode", json!("Filesystem"));
    let status = child(claim, "status");
    if text(status, "phase").is_empty() {
        status.insert("phase".into(), json!("Pending"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(kind: &str, body: Value) -> Value {
        let mut object = body.as_object().cloned().unwrap_or_default();
        apply(kind, &mut object);
        Value::Object(object)
    }

    // pkg/apis/apps/v1/defaults.go: SetDefaults_Deployment
    #[test]
    fn deployment_defaults() {
        let d = defaulted("Deployment", json!({"spec": {}}));
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    }

    #[test]
    fn deployment_keeps_what_the_client_set() {
        let d = defaulted(
            "Deployment",
            json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 0}}),
        );
        assert_eq!(d["spec"]["replicas"], 0);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(d["spec"]["revisionHistoryLimit"], 0);
        let partial = defaulted("Deployment", json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}}));
        assert_eq!(partial["spec"]["strategy"]["rollingUpdate"], json!({"maxSurge": 1, "maxUnavailable": "25%"}));
    }

    // pkg/apis/apps/v1/defaults.go: SetDefaults_ReplicaSet
    #[test]
    fn replica_set_defaults() {
        assert_eq!(defaulted("ReplicaSet", json!({}))["spec"]["replicas"], 1);
    }

    // pkg/apis/apps/v1/defaults.go: SetDefaults_DaemonSet
    #[test]
    fn daemon_set_defaults() {
        let d = defaulted("DaemonSet", json!({"spec": {}}));
        assert_eq!(
            d["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["metadata"]["annotations"][DAEMONSET_TEMPLATE_GENERATION], "0");
        let on_delete = defaulted("DaemonSet", json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
        assert_eq!(on_delete["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
    }

    // pkg/apis/apps/v1/defaults.go: SetDefaults_StatefulSet;
    // zz_generated.defaults.go for the volume claim templates.
    #[test]
    fn stateful_set_defaults() {
        let s = defaulted(
            "StatefulSet",
            json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}),
        );
        assert_eq!(s["spec"]["replicas"], 1);
        assert_eq!(s["spec"]["podManagementPolicy"], "OrderedReady");
        assert_eq!(s["spec"]["updateStrategy"], json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}));
        assert_eq!(s["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            s["spec"]["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        let claim = &s["spec"]["volumeClaimTemplates"][0];
        assert_eq!(claim["kind"], "PersistentVolumeClaim");
        assert_eq!(claim["apiVersion"], "v1");
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"]["phase"], "Pending");
        // An explicit RollingUpdate without rollingUpdate stays without it.
        let explicit = defaulted("StatefulSet", json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}));
        assert_eq!(explicit["spec"]["updateStrategy"], json!({"type": "RollingUpdate"}));
    }

    #[test]
    fn wrong_shapes_do_not_panic() {
        for kind in ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"] {
            for body in [
                json!({"spec": 3}),
                json!({"spec": {"strategy": [], "updateStrategy": "x", "volumeClaimTemplates": [1]}}),
            ] {
                let _ = defaulted(kind, body);
            }
        }
    }
}
