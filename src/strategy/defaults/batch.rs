//! Defaults of the `batch` group's kinds (Job, CronJob), as kube-apiserver
//! v1.36 fills them on decode: `pkg/apis/batch/v1/defaults.go`
//! (`SetDefaults_Job`, `SetDefaults_CronJob`,
//! `SetDefaults_PodFailurePolicyOnPodConditionsPattern`) and the generated
//! `zz_generated.defaults.go`, which defaults the pod template of a Job and
//! of a CronJob's job template (delegated to
//! `defaults::core::pod_template_spec`). A CronJob's `jobTemplate.spec` gets
//! no Job defaults (it is a `JobTemplateSpec`, not a Job).
//!
//! Invariant: only absent fields are filled; no input panics.

use super::apps::{child, default_field, template};
use crate::strategy::Object;
use serde_json::{json, Map, Value};

/// `math.MaxInt32`: the backoffLimit of a Job with a backoffLimitPerIndex.
const BACKOFF_LIMIT_WITH_PER_INDEX: i64 = 2_147_483_647;

pub fn apply(kind: &str, object: &mut Object) {
    match kind {
        "Job" => job(object),
        "CronJob" => cron_job(object),
        _ => {}
    }
}

fn is_set(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(|v| !v.is_null())
}

// pkg/apis/batch/v1/defaults.go: SetDefaults_Job (JobPodReplacementPolicy is
// GA, so podReplacementPolicy is always defaulted).
fn job(object: &mut Object) {
    let spec = child(object, "spec");
    if !is_set(spec, "completions") && !is_set(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default_field(spec, "parallelism", json!(1));
    let backoff = if is_set(spec, "backoffLimitPerIndex") { BACKOFF_LIMIT_WITH_PER_INDEX } else { 6 };
    default_field(spec, "backoffLimit", json!(backoff));
    default_field(spec, "completionMode", json!("NonIndexed"));
    default_field(spec, "suspend", json!(false));
    let replacement = if is_set(spec, "podFailurePolicy") { "Failed" } else { "TerminatingOrFailed" };
    default_field(spec, "podReplacementPolicy", json!(replacement));
    default_field(spec, "manualSelector", json!(false));
    pod_failure_policy(spec);
    template(spec);
    labels_from_template(object);
}

/// SetDefaults_Job: `if labels != nil && len(obj.Labels) == 0 { obj.Labels = labels }`
/// with the template's labels (`spec.template.metadata.labels`).
fn labels_from_template(object: &mut Object) {
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

// pkg/apis/batch/v1/defaults.go: SetDefaults_PodFailurePolicyOnPodConditionsPattern
fn pod_failure_policy(spec: &mut Map<String, Value>) {
    let Some(Value::Array(rules)) = spec.get_mut("podFailurePolicy").and_then(|p| p.get_mut("rules")) else {
        return;
    };
    for rule in rules.iter_mut() {
        if let Some(Value::Array(patterns)) = rule.get_mut("onPodConditions") {
            for pattern in patterns.iter_mut().filter_map(Value::as_object_mut) {
                if pattern.get("status").and_then(Value::as_str).unwrap_or("").is_empty() {
                    pattern.insert("status".into(), json!("True"));
                }
            }
        }
    }
}

// pkg/apis/batch/v1/defaults.go: SetDefaults_CronJob
fn cron_job(object: &mut Object) {
    let spec = child(object, "spec");
    if spec.get("concurrencyPolicy").and_then(Value::as_str).unwrap_or("").is_empty() {
        spec.insert("concurrencyPolicy".into(), json!("Allow"));
    }
    default_field(spec, "suspend", json!(false));
    default_field(spec, "successfulJobsHistoryLimit", json!(3));
    default_field(spec, "failedJobsHistoryLimit", json!(1));
    let job_template = child(spec, "jobTemplate");
    // A Go struct, always encoded (`{}` when empty), as the template's.
    child(job_template, "metadata");
    let job_spec = child(job_template, "spec");
    pod_failure_policy(job_spec);
    template(job_spec);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(kind: &str, body: Value) -> Value {
        let mut object = body.as_object().cloned().unwrap_or_default();
        apply(kind, &mut object);
        Value::Object(object)
    }

    // pkg/apis/batch/v1/defaults.go: SetDefaults_Job
    #[test]
    fn job_defaults() {
        let j = defaulted("Job", json!({"spec": {}}));
        let spec = &j["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["manualSelector"], false);
    }

    #[test]
    fn job_completions_and_parallelism_rules() {
        // Only parallelism set: completions stays unset (a work queue).
        let j = defaulted("Job", json!({"spec": {"parallelism": 3}}));
        assert!(j["spec"].get("completions").is_none());
        assert_eq!(j["spec"]["parallelism"], 3);
        // Only completions set: parallelism defaults to 1.
        let j = defaulted("Job", json!({"spec": {"completions": 5}}));
        assert_eq!(j["spec"]["completions"], 5);
        assert_eq!(j["spec"]["parallelism"], 1);
    }

    #[test]
    fn job_per_index_and_failure_policy_rules() {
        let j = defaulted(
            "Job",
            json!({"spec": {"backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}}),
        );
        assert_eq!(j["spec"]["backoffLimit"], BACKOFF_LIMIT_WITH_PER_INDEX);
        assert_eq!(j["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(j["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"], "True");
    }

    #[test]
    fn job_labels_from_template() {
        let j = defaulted("Job", json!({"spec": {"template": {"metadata": {"labels": {"app": "x"}}}}}));
        assert_eq!(j["metadata"]["labels"], json!({"app": "x"}));
        let kept = defaulted(
            "Job",
            json!({"metadata": {"labels": {"own": "y"}}, "spec": {"template": {"metadata": {"labels": {"app": "x"}}}}}),
        );
        assert_eq!(kept["metadata"]["labels"], json!({"own": "y"}));
    }

    // pkg/apis/batch/v1/defaults.go: SetDefaults_CronJob
    #[test]
    fn cron_job_defaults() {
        let c = defaulted("CronJob", json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {}}}}));
        let spec = &c["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        // No Job defaults inside the job template.
        assert!(spec["jobTemplate"]["spec"].get("parallelism").is_none());
        assert!(spec["jobTemplate"]["spec"].get("backoffLimit").is_none());
    }
}
