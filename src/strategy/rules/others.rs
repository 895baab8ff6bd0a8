//! Create and update rules of the kinds outside the core group (apps, batch,
//! rbac, coordination, ...): kube's registry strategies
//! (`pkg/registry/apps/*/strategy.go`, `pkg/registry/batch/*/strategy.go`).
//!
//! What the API layer already does for every kind (status reset to `{}` on
//! create, status kept on a write of the resource, only status taken from a
//! `/status` write, `metadata.generation` 1 on create and +1 when `spec`
//! changes) is not repeated here; this file holds what differs per kind: the
//! status a create starts with (Go's non-omitempty zero fields), the
//! DaemonSet's template generation, a Deployment's generation moving with
//! its annotations, and a Job's generated selector and labels.
//!
//! Invariant: pure functions of the objects and the [`Context`]; no input
//! panics (missing or mistyped fields are treated as absent).

use crate::strategy::{Context, Object, Rejection};
use serde_json::{json, Map, Value};

/// The annotation that carries a DaemonSet's `templateGeneration` in apps/v1
/// (`appsv1.DeprecatedTemplateGeneration`).
const DAEMONSET_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";
/// The Job labels kube generates (`pkg/apis/batch/types.go`).
const JOB_CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

pub fn prepare_for_create(group: &str, kind: &str, object: &mut Object, context: &Context) {
    match (group, kind) {
        // pkg/registry/certificates/certificates/strategy.go: PrepareForCreate
        // replaces whatever the body says of its requester with the request's
        // user, and starts the status empty (nobody creates an approved
        // request). The spec fields are omitempty.
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            if let Some(Value::Object(spec)) = object.get_mut("spec") {
                for field in ["username", "uid", "groups", "extra"] {
                    spec.remove(field);
                }
                if let Some(user) = context.user {
                    if !user.name.is_empty() {
                        spec.insert("username".into(), json!(user.name));
                    }
                    if !user.uid.is_empty() {
                        spec.insert("uid".into(), json!(user.uid));
                    }
                    if !user.groups.is_empty() {
                        spec.insert("groups".into(), json!(user.groups));
                    }
                    if !user.extra.is_empty() {
                        spec.insert("extra".into(), json!(user.extra));
                    }
                }
            }
            object.insert("status".into(), json!({}));
        }
        // pkg/registry/apps/replicaset/strategy.go: PrepareForCreate resets
        // status; ReplicaSetStatus.replicas is not omitempty.
        ("apps", "ReplicaSet") => {
            object.insert("status".into(), json!({"replicas": 0}));
        }
        // pkg/registry/apps/statefulset/strategy.go: PrepareForCreate; the
        // zero status keeps replicas and availableReplicas (recorded in
        // tests/fixtures/kube-v1.36/lists/apps_v1_statefulsets.json).
        ("apps", "StatefulSet") => {
            object.insert("status".into(), json!({"replicas": 0, "availableReplicas": 0}));
        }
        // pkg/registry/apps/daemonset/strategy.go: PrepareForCreate sets
        // templateGeneration 1, which apps/v1 carries as an annotation
        // (pkg/apis/apps/v1/conversion.go: Convert_apps_DaemonSet_To_v1_DaemonSet).
        ("apps", "DaemonSet") => {
            object.insert(
                "status".into(),
                json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}),
            );
            annotations_mut(object).insert(DAEMONSET_TEMPLATE_GENERATION.into(), json!("1"));
        }
        // pkg/registry/batch/job/strategy.go: PrepareForCreate
        ("batch", "Job") => {
            object.insert("status".into(), json!({}));
            if !object.get("spec").and_then(|s| s.get("manualSelector")).and_then(Value::as_bool).unwrap_or(false) {
                generate_job_selector(object);
            }
            // pkg/apis/batch/v1/defaults.go: SetDefaults_Job copies the
            // template's labels to a Job without labels; kube-apiserver
            // defaults the object again when it reads it back, so the
            // generated labels show in what it stores and serves.
            job_labels_from_template(object);
        }
        // pkg/registry/policy/poddisruptionbudget/strategy.go: PrepareForCreate
        // resets status; its counts are not omitempty (recorded in
        // lists/policy_v1_poddisruptionbudgets.json).
        ("policy", "PodDisruptionBudget") => {
            object.insert(
                "status".into(),
                json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}),
            );
        }
        // pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go:
        // PrepareForCreate resets status (v2 as recorded in
        // lists/autoscaling_v2_horizontalpodautoscalers.json; v1's status
        // has currentReplicas and desiredReplicas without omitempty).
        ("autoscaling", "HorizontalPodAutoscaler") => {
            let status = if object.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
                json!({"currentReplicas": 0, "desiredReplicas": 0})
            } else {
                json!({"desiredReplicas": 0, "currentMetrics": null})
            };
            object.insert("status".into(), status);
        }
        // pkg/registry/networking/ingress/strategy.go: PrepareForCreate resets
        // status (IngressStatus.loadBalancer is a struct).
        ("networking.k8s.io", "Ingress") => {
            object.insert("status".into(), json!({"loadBalancer": {}}));
        }
        // pkg/registry/storage/volumeattachment/strategy.go: PrepareForCreate
        // resets status (VolumeAttachmentStatus.attached is not omitempty).
        ("storage.k8s.io", "VolumeAttachment") => {
            object.insert("status".into(), json!({"attached": false}));
        }
        // pkg/registry/coordination/lease/strategy.go: PrepareForCreate drops
        // the fields of the CoordinatedLeaderElection gate, off by default
        // in v1.36.
        ("coordination.k8s.io", "Lease") => {
            if let Some(Value::Object(spec)) = object.get_mut("spec") {
                spec.shift_remove("strategy");
                spec.shift_remove("preferredHolder");
            }
        }
        _ => {}
    }
}

pub fn prepare_for_update(
    group: &str,
    kind: &str,
    object: &mut Object,
    old: &Object,
    context: &Context,
) -> Result<(), Rejection> {
    if context.subresource == Some("status") {
        return Ok(());
    }
    match (group, kind) {
        // pkg/registry/apps/deployment/strategy.go: PrepareForUpdate bumps the
        // generation when spec or annotations change (annotations are copied
        // to the ReplicaSets).
        ("apps", "Deployment") => {
            let changed = object.get("spec") != old.get("spec") || annotations(object) != annotations(old);
            set_generation(object, old, changed);
        }
        // pkg/registry/apps/daemonset/strategy.go: PrepareForUpdate keeps the
        // template generation, +1 (and the generation +1) when the template
        // changes.
        ("apps", "DaemonSet") => {
            let old_generation = annotations(old)
                .and_then(|a| a.get(DAEMONSET_TEMPLATE_GENERATION))
                .and_then(Value::as_str)
                .and_then(|g| g.parse::<i64>().ok())
                .unwrap_or(0);
            let template = |o: &Object| o.get("spec").and_then(|s| s.get("template")).cloned();
            let template_changed = template(object) != template(old);
            let next = if template_changed { old_generation + 1 } else { old_generation };
            annotations_mut(object).insert(DAEMONSET_TEMPLATE_GENERATION.into(), json!(next.to_string()));
            set_generation(object, old, object.get("spec") != old.get("spec"));
        }
        ("batch", "Job") => job_labels_from_template(object),
        // pkg/registry/discovery/endpointslice/strategy.go: PrepareForUpdate
        // bumps the generation when anything but metadata changes (a slice
        // has no spec), or its labels do.
        ("discovery.k8s.io", "EndpointSlice") => {
            let labels = |o: &Object| o.get("metadata").and_then(|m| m.get("labels")).cloned();
            let changed =
                content_without_metadata(object) != content_without_metadata(old) || labels(object) != labels(old);
            set_generation(object, old, changed);
        }
        // pkg/registry/admissionregistration/*webhookconfiguration/strategy.go:
        // PrepareForUpdate bumps the generation when the webhooks change.
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
            set_generation(object, old, object.get("webhooks") != old.get("webhooks"));
        }
        // pkg/registry/scheduling/priorityclass/strategy.go: PrepareForUpdate
        // keeps the generation (a class has no spec; its value is immutable).
        // pkg/registry/networking/ingressclass/strategy.go: PrepareForUpdate
        // bumps it when the spec changes, as the API layer does.
        // pkg/registry/coordination/lease/strategy.go: PrepareForUpdate keeps
        // the gated fields only where the stored Lease already has them.
        ("coordination.k8s.io", "Lease") => {
            let old_spec = old.get("spec").and_then(Value::as_object);
            if let Some(Value::Object(spec)) = object.get_mut("spec") {
                for key in ["strategy", "preferredHolder"] {
                    if old_spec.is_none_or(|o| o.get(key).is_none_or(Value::is_null)) {
                        spec.shift_remove(key);
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The fields of an object but its metadata, by name.
fn content_without_metadata(object: &Object) -> std::collections::BTreeMap<&String, &Value> {
    object.iter().filter(|(k, _)| *k != "metadata").collect()
}

/// `metadata.generation`: the stored one, +1 when `changed`.
fn set_generation(object: &mut Object, old: &Object, changed: bool) {
    let old_generation = old.get("metadata").and_then(|m| m.get("generation")).and_then(Value::as_i64).unwrap_or(1);
    let next = if changed { old_generation + 1 } else { old_generation };
    child(object, "metadata").insert("generation".into(), json!(next));
}

fn annotations(object: &Object) -> Option<&Map<String, Value>> {
    object.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object)
}

fn annotations_mut(object: &mut Object) -> &mut Map<String, Value> {
    child(child(object, "metadata"), "annotations")
}

/// The object at `key`, created empty when absent or not an object.
fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(inner) => inner,
        _ => unreachable!("replaced by an object above"),
    }
}

/// pkg/registry/batch/job/strategy.go: generateSelector. The template gets
/// the job-name and controller-uid labels (legacy and prefixed) unless the
/// client set them (validation then refuses a wrong value), and the selector
/// gets `batch.kubernetes.io/controller-uid` unless already there.
fn generate_job_selector(object: &mut Object) {
    let metadata = object.get("metadata");
    let text = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or("").to_string();
    let (name, uid) = (text("name"), text("uid"));
    let spec = child(object, "spec");
    let labels = child(child(child(spec, "template"), "metadata"), "labels");
    for key in [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL] {
        labels.entry(key).or_insert_with(|| json!(name));
    }
    for key in [LEGACY_JOB_CONTROLLER_UID_LABEL, JOB_CONTROLLER_UID_LABEL] {
        labels.entry(key).or_insert_with(|| json!(uid));
    }
    let match_labels = child(child(spec, "selector"), "matchLabels");
    match_labels.entry(JOB_CONTROLLER_UID_LABEL).or_insert_with(|| json!(uid));
}

/// pkg/apis/batch/v1/defaults.go: SetDefaults_Job, the labels part.
fn job_labels_from_template(object: &mut Object) {
    let labels = object
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .cloned();
    let Some(labels) = labels else { return };
    let meta = child(object, "metadata");
    if meta.get("labels").and_then(Value::as_object).is_none_or(Map::is_empty) {
        meta.insert("labels".into(), Value::Object(labels));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-25T12:00:00Z";

    fn object(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    fn create(group: &str, kind: &str, v: Value) -> Value {
        let mut o = object(v);
        prepare_for_create(group, kind, &mut o, &Context { now: NOW, subresource: None, user: None });
        Value::Object(o)
    }

    fn update(kind: &str, new: Value, old: Value, subresource: Option<&str>) -> Value {
        let mut o = object(new);
        let group = if kind == "Job" { "batch" } else { "apps" };
        let result =
            prepare_for_update(group, kind, &mut o, &object(old), &Context { now: NOW, subresource, user: None });
        assert_eq!(result, Ok(()));
        Value::Object(o)
    }

    // pkg/registry/certificates/certificates/strategy.go: PrepareForCreate.
    #[test]
    fn a_csr_names_its_requester_whatever_the_body_says() {
        let mut user =
            crate::auth::UserInfo::authenticated("kubelet".into(), "u-7".into(), vec!["system:nodes".into()]);
        user.extra.insert("scopes".into(), vec!["a".into(), "b".into()]);
        let mut o = object(json!({"spec": {"request": "x", "signerName": "s", "username": "mallory",
            "groups": ["system:masters"], "uid": "forged"},
            "status": {"conditions": [{"type": "Approved", "status": "True"}]}}));
        let context = Context { now: NOW, subresource: None, user: Some(&user) };
        prepare_for_create("certificates.k8s.io", "CertificateSigningRequest", &mut o, &context);
        assert_eq!(
            Value::Object(o),
            json!({"spec": {"request": "x", "signerName": "s", "username": "kubelet", "uid": "u-7",
                "groups": ["system:nodes", "system:authenticated"], "extra": {"scopes": ["a", "b"]}}, "status": {}})
        );
    }

    // pkg/registry/batch/job/strategy.go: generateSelector; the recorded Job
    // in tests/fixtures/kube-v1.36/lists/batch_v1_jobs.json.
    #[test]
    fn job_selector_and_labels_are_generated() {
        let j = create(
            "batch",
            "Job",
            json!({"metadata": {"name": "once", "uid": "u-1"}, "spec": {"manualSelector": false}}),
        );
        let expected = json!({
            "batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "once",
            "controller-uid": "u-1", "job-name": "once"});
        assert_eq!(j["spec"]["selector"], json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}));
        assert_eq!(j["spec"]["template"]["metadata"]["labels"], expected);
        assert_eq!(j["metadata"]["labels"], expected);
        assert_eq!(j["status"], json!({}));
    }

    #[test]
    fn job_manual_selector_is_left_alone() {
        let j = create(
            "batch",
            "Job",
            json!({"metadata": {"name": "m", "uid": "u"}, "spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}}}),
        );
        assert_eq!(j["spec"]["selector"], json!({"matchLabels": {"a": "b"}}));
        assert!(j["spec"].get("template").is_none());
    }

    #[test]
    fn job_labels_set_by_the_client_are_kept() {
        let j = create(
            "batch",
            "Job",
            json!({"metadata": {"name": "n", "uid": "u"}, "spec": {"template": {"metadata": {"labels": {"job-name": "other"}}}}}),
        );
        assert_eq!(j["spec"]["template"]["metadata"]["labels"]["job-name"], "other");
        assert_eq!(j["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"], "n");
    }

    // The zero statuses of the apps kinds: Go fields without omitempty.
    #[test]
    fn create_statuses() {
        assert_eq!(
            create("apps", "StatefulSet", json!({"status": {"replicas": 9}}))["status"],
            json!({"replicas": 0, "availableReplicas": 0})
        );
        assert_eq!(create("apps", "ReplicaSet", json!({}))["status"], json!({"replicas": 0}));
        let ds =
            create("apps", "DaemonSet", json!({"metadata": {"annotations": {DAEMONSET_TEMPLATE_GENERATION: "7"}}}));
        assert_eq!(ds["status"]["numberReady"], 0);
        assert_eq!(ds["metadata"]["annotations"][DAEMONSET_TEMPLATE_GENERATION], "1");
    }

    // pkg/registry/coordination/lease/strategy.go: PrepareForCreate, PrepareForUpdate
    #[test]
    fn lease_gated_fields() {
        let created = create(
            "coordination.k8s.io",
            "Lease",
            json!({"spec": {"holderIdentity": "a", "strategy": "OldestEmulationVersion", "preferredHolder": "b"}}),
        );
        assert_eq!(created["spec"], json!({"holderIdentity": "a"}));
        let mut new = object(json!({"spec": {"strategy": "S", "preferredHolder": "b"}}));
        let old = object(json!({"spec": {"strategy": "S"}}));
        let context = Context { now: NOW, subresource: None, user: None };
        assert_eq!(prepare_for_update("coordination.k8s.io", "Lease", &mut new, &old, &context), Ok(()));
        assert_eq!(Value::Object(new)["spec"], json!({"strategy": "S"}));
    }

    // pkg/registry/apps/deployment/strategy.go: PrepareForUpdate
    #[test]
    fn deployment_generation_moves_with_annotations() {
        let old = json!({"metadata": {"generation": 4, "annotations": {"a": "1"}}, "spec": {"replicas": 1}});
        let same = update(
            "Deployment",
            json!({"metadata": {"generation": 4, "annotations": {"a": "1"}}, "spec": {"replicas": 1}}),
            old.clone(),
            None,
        );
        assert_eq!(same["metadata"]["generation"], 4);
        let annotated = update(
            "Deployment",
            json!({"metadata": {"annotations": {"a": "2"}}, "spec": {"replicas": 1}}),
            old.clone(),
            None,
        );
        assert_eq!(annotated["metadata"]["generation"], 5);
        let scaled = update(
            "Deployment",
            json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"replicas": 2}}),
            old.clone(),
            None,
        );
        assert_eq!(scaled["metadata"]["generation"], 5);
        // A status write leaves the generation to the API layer.
        let status = update("Deployment", json!({"metadata": {"generation": 4}}), old, Some("status"));
        assert_eq!(status["metadata"]["generation"], 4);
    }

    // pkg/registry/apps/daemonset/strategy.go: PrepareForUpdate
    #[test]
    fn daemon_set_template_generation() {
        let old = json!({"metadata": {"generation": 2, "annotations": {DAEMONSET_TEMPLATE_GENERATION: "3"}},
                         "spec": {"template": {"spec": {"x": 1}}, "minReadySeconds": 0}});
        let changed = update(
            "DaemonSet",
            json!({"metadata": {}, "spec": {"template": {"spec": {"x": 2}}, "minReadySeconds": 0}}),
            old.clone(),
            None,
        );
        assert_eq!(changed["metadata"]["annotations"][DAEMONSET_TEMPLATE_GENERATION], "4");
        assert_eq!(changed["metadata"]["generation"], 3);
        let other = update(
            "DaemonSet",
            json!({"metadata": {"annotations": {DAEMONSET_TEMPLATE_GENERATION: "9"}}, "spec": {"template": {"spec": {"x": 1}}, "minReadySeconds": 5}}),
            old,
            None,
        );
        assert_eq!(other["metadata"]["annotations"][DAEMONSET_TEMPLATE_GENERATION], "3");
        assert_eq!(other["metadata"]["generation"], 3);
    }
}
