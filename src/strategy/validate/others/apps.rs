//! Validation of the `apps` kinds with kube-apiserver v1.36's rules and
//! words: `pkg/apis/apps/validation/validation.go` and the update checks of
//! `pkg/registry/apps/*/strategy.go` (selectors immutable). Embedded pod
//! templates are validated by `validate::core::pod_template_spec`, except a
//! StatefulSet's, of which kube checks only the labels and annotations
//! (`ValidatePodTemplateSpecForStatefulSet`).

use super::common::*;
use crate::strategy::validate::core;
use crate::types::validation::FieldError;
use serde_json::Value;

pub fn create(kind: &str, object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    match kind {
        "Deployment" => deployment_spec(spec),
        "ReplicaSet" => replica_set_spec(spec),
        "StatefulSet" => stateful_set_spec(spec),
        "DaemonSet" => daemon_set_spec(spec),
        // ValidateControllerRevisionCreate.
        "ControllerRevision" => {
            let mut errs = Vec::new();
            if object.get("data").is_none_or(Value::is_null) {
                errs.push(FieldError::required("data", "data is mandatory"));
            }
            errs.extend(non_negative(int(object, "revision"), "revision"));
            errs
        }
        _ => Vec::new(),
    }
}

pub fn update(kind: &str, object: &Fields, old: &Fields, subresource: Option<&str>) -> Vec<FieldError> {
    if subresource == Some("status") {
        return status(kind, object, old);
    }
    let mut errs = create(kind, object);
    if matches!(kind, "ReplicaSet" | "DaemonSet") {
        // pkg/registry/apps/{replicaset,daemonset}/strategy.go: ValidateUpdate
        // runs Validate{ReplicaSet,DaemonSet} and then
        // Validate{ReplicaSet,DaemonSet}Update, which validates the spec
        // again: kube reports a spec error twice, and so does this.
        errs.extend(create(kind, object));
    }
    let empty = Fields::new();
    let (spec, old_spec) = (obj(object, "spec").unwrap_or(&empty), obj(old, "spec").unwrap_or(&empty));
    match kind {
        // pkg/registry/apps/{deployment,replicaset,daemonset}/strategy.go:
        // ValidateUpdate, "disallow mutation of selector".
        "Deployment" | "ReplicaSet" | "DaemonSet" if spec.get("selector") != old_spec.get("selector") => {
            errs.push(invalid_raw("spec.selector", &go_label_selector(obj(spec, "selector")), IMMUTABLE));
        }
        "StatefulSet" => errs.extend(stateful_set_update(spec, old_spec)),
        // ValidateControllerRevisionUpdate: the data is immutable. Its value
        // is Go's `%#v` of a `runtime.RawExtension`, whose bytes are shown
        // here as elided.
        "ControllerRevision" if object.get("data") != old.get("data") => {
            errs.push(FieldError::invalid_bare(
                "data",
                "runtime.RawExtension{Raw:[]uint8{...}, Object:runtime.Object(nil)}",
                IMMUTABLE,
            ));
        }
        _ => {}
    }
    errs
}

/// The selector checks every workload shares: required, valid, not empty.
fn selector_checks(spec: &Fields, kind_word: &str, errs: &mut Vec<FieldError>) {
    match obj(spec, "selector") {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(selector) => {
            errs.extend(validate_label_selector(selector, "spec.selector"));
            if Selector::of(Some(selector), "spec.selector").is_empty() {
                errs.push(invalid_raw(
                    "spec.selector",
                    &go_label_selector(Some(selector)),
                    &format!("empty selector is invalid for {kind_word}"),
                ));
            }
        }
    }
}

fn template_of(spec: &Fields) -> (&Fields, Option<&Fields>, Option<&Fields>) {
    static EMPTY: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
    let empty = EMPTY.get_or_init(Fields::new);
    let template = obj(spec, "template").unwrap_or(empty);
    let metadata = obj(template, "metadata");
    (template, metadata, obj(template, "spec"))
}

/// The restartPolicy and activeDeadlineSeconds rules of templates run by
/// controllers that restart pods (`RestartPolicyAlways` only). An absent
/// restartPolicy is the defaulted `Always`.
fn always_restart(pod_spec: Option<&Fields>, path: &str, kind: &str, errs: &mut Vec<FieldError>) {
    let restart = pod_spec.and_then(|s| s.get("restartPolicy")).and_then(Value::as_str).unwrap_or("Always");
    if restart != "Always" {
        errs.push(not_supported(&format!("{path}.spec.restartPolicy"), restart, &["Always"]));
    }
    if pod_spec.is_some_and(|s| s.get("activeDeadlineSeconds").is_some_and(|v| !v.is_null())) {
        errs.push(FieldError::forbidden(
            &format!("{path}.spec.activeDeadlineSeconds"),
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

// ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets).
fn template_for_replica_set(spec: &Fields, selector: &Selector, errs: &mut Vec<FieldError>) {
    let (template, metadata, pod_spec) = template_of(spec);
    let labels = metadata.and_then(|m| obj(m, "labels"));
    if !selector.is_empty() && !selector.matches(labels) {
        errs.push(invalid_raw("spec.template.metadata.labels", &go_string_map(labels), SELECTOR_MISMATCH));
    }
    errs.extend(core::pod_template_spec(&Value::Object(template.clone()), "spec.template"));
    always_restart(pod_spec, "spec.template", "ReplicaSet", errs);
}

// ValidateDeploymentSpec
fn deployment_spec(spec: &Fields) -> Vec<FieldError> {
    let mut errs = non_negative(int(spec, "replicas"), "spec.replicas");
    selector_checks(spec, "deployment", &mut errs);
    match Selector::of(obj(spec, "selector"), "spec.selector") {
        Selector::Invalid => {
            errs.push(invalid_raw("spec.selector", &go_label_selector(obj(spec, "selector")), "invalid label selector"))
        }
        selector => template_for_replica_set(spec, &selector, &mut errs),
    }
    errs.extend(deployment_strategy(obj(spec, "strategy")));
    let min_ready = int(spec, "minReadySeconds").unwrap_or(0);
    errs.extend(non_negative(Some(min_ready), "spec.minReadySeconds"));
    errs.extend(non_negative(int(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit"));
    if let Some(deadline) = int(spec, "progressDeadlineSeconds") {
        errs.extend(non_negative(Some(deadline), "spec.progressDeadlineSeconds"));
        if deadline <= min_ready {
            errs.push(invalid_raw(
                "spec.progressDeadlineSeconds",
                &deadline.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

// ValidateDeploymentStrategy
fn deployment_strategy(strategy: Option<&Fields>) -> Vec<FieldError> {
    let empty = Fields::new();
    let strategy = strategy.unwrap_or(&empty);
    let rolling = obj(strategy, "rollingUpdate");
    match text(strategy, "type") {
        "Recreate" if rolling.is_some() => vec![FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" => match rolling {
            None => {
                vec![FieldError::required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")]
            }
            Some(rolling) => rolling_update_deployment(rolling),
        },
        other => {
            let rendered = format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}",
                crate::types::validation::go_quote(other)
            );
            vec![not_supported_raw("spec.strategy", &rendered, &["Recreate", "RollingUpdate"])]
        }
    }
}

/// `IsValidPercent`: `[0-9]+%`.
fn percent(value: &str) -> Option<i64> {
    let digits = value.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<i64>().unwrap_or(i64::MAX))
}

const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%', or '93%', regex used for validation is '[0-9]+%')";

// ValidatePositiveIntOrPercent
pub(super) fn positive_int_or_percent(value: Option<&Value>, path: &str) -> Vec<FieldError> {
    match value {
        Some(Value::String(s)) if percent(s).is_none() => {
            vec![invalid_raw(path, &go_int_or_string(&Value::String(s.clone())), PERCENT_MSG)]
        }
        Some(v @ Value::Number(_)) => non_negative(v.as_i64(), path),
        _ => Vec::new(),
    }
}

// getIntOrPercentValue: a percent's number, an int, or Atoi of a bad string.
fn int_or_percent_value(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::String(s)) => percent(s).unwrap_or_else(|| s.parse::<i64>().unwrap_or(0)),
        Some(v) => v.as_i64().unwrap_or(0),
        None => 0,
    }
}

// IsNotMoreThan100Percent
pub(super) fn not_more_than_100_percent(value: Option<&Value>, path: &str) -> Vec<FieldError> {
    match value {
        Some(v @ Value::String(s)) if percent(s).is_some_and(|p| p > 100) => {
            vec![invalid_raw(path, &go_int_or_string(v), "must not be greater than 100%")]
        }
        _ => Vec::new(),
    }
}

// ValidateRollingUpdateDeployment
fn rolling_update_deployment(rolling: &Fields) -> Vec<FieldError> {
    let path = "spec.strategy.rollingUpdate";
    let (unavailable, surge) = (rolling.get("maxUnavailable"), rolling.get("maxSurge"));
    let mut errs = positive_int_or_percent(unavailable, &format!("{path}.maxUnavailable"));
    errs.extend(positive_int_or_percent(surge, &format!("{path}.maxSurge")));
    if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
        let rendered = go_int_or_string(unavailable.unwrap_or(&Value::from(0)));
        errs.push(invalid_raw(&format!("{path}.maxUnavailable"), &rendered, "may not be 0 when `maxSurge` is 0"));
    }
    errs.extend(not_more_than_100_percent(unavailable, &format!("{path}.maxUnavailable")));
    errs
}

// ValidateReplicaSetSpec
fn replica_set_spec(spec: &Fields) -> Vec<FieldError> {
    let mut errs = non_negative(int(spec, "replicas"), "spec.replicas");
    errs.extend(non_negative(int(spec, "minReadySeconds"), "spec.minReadySeconds"));
    // kube says "deployment" here too.
    selector_checks(spec, "deployment", &mut errs);
    match Selector::of(obj(spec, "selector"), "spec.selector") {
        Selector::Invalid => {
            errs.push(invalid_raw("spec.selector", &go_label_selector(obj(spec, "selector")), "invalid label selector"))
        }
        selector => template_for_replica_set(spec, &selector, &mut errs),
    }
    errs
}

// ValidateStatefulSetSpec
fn stateful_set_spec(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match text(spec, "podManagementPolicy") {
        "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => {
            errs.push(FieldError::invalid("spec.podManagementPolicy", other, "must be 'OrderedReady' or 'Parallel'"))
        }
    }
    errs.extend(stateful_set_update_strategy(obj(spec, "updateStrategy")));
    if let Some(policy) = obj(spec, "persistentVolumeClaimRetentionPolicy") {
        for key in ["whenDeleted", "whenScaled"] {
            let value = text(policy, key);
            if !matches!(value, "Retain" | "Delete") {
                errs.push(not_supported(
                    &format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
                    value,
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    errs.extend(non_negative(int(spec, "replicas"), "spec.replicas"));
    errs.extend(non_negative(int(spec, "minReadySeconds"), "spec.minReadySeconds"));
    if let Some(ordinals) = obj(spec, "ordinals") {
        errs.extend(non_negative(int(ordinals, "start"), "spec.ordinals.start"));
    }
    selector_checks(spec, "statefulset", &mut errs);
    let (_, metadata, pod_spec) = template_of(spec);
    match Selector::of(obj(spec, "selector"), "spec.selector") {
        Selector::Invalid => errs.push(invalid_raw("spec.selector", &go_label_selector(obj(spec, "selector")), "")),
        selector => {
            // ValidatePodTemplateSpecForStatefulSet
            let labels = metadata.and_then(|m| obj(m, "labels"));
            if !selector.is_empty() && !selector.matches(labels) {
                errs.push(invalid_raw("spec.template.metadata.labels", &go_string_map(labels), SELECTOR_MISMATCH));
            }
            errs.extend(labels_at(metadata.and_then(|m| string_map(m, "labels")), "spec.template.labels"));
            errs.extend(annotations_at(
                metadata.and_then(|m| string_map(m, "annotations")),
                "spec.template.annotations",
            ));
        }
    }
    always_restart(pod_spec, "spec.template", "StatefulSet", &mut errs);
    errs
}

fn stateful_set_update_strategy(strategy: Option<&Fields>) -> Vec<FieldError> {
    let empty = Fields::new();
    let strategy = strategy.unwrap_or(&empty);
    let rolling = obj(strategy, "rollingUpdate");
    let go_rolling = |r: &Fields| {
        format!(
            "apps.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:(*intstr.IntOrString)(nil)}}",
            int(r, "partition").unwrap_or(0)
        )
    };
    match (text(strategy, "type"), rolling) {
        ("", _) => vec![FieldError::required("spec.updateStrategy", "")],
        ("OnDelete", Some(r)) => vec![invalid_raw(
            "spec.updateStrategy.rollingUpdate",
            &go_rolling(r),
            "only allowed for updateStrategy 'RollingUpdate'",
        )],
        ("OnDelete", None) | ("RollingUpdate", None) => Vec::new(),
        ("RollingUpdate", Some(r)) => {
            let path = "spec.updateStrategy.rollingUpdate";
            let mut errs = non_negative(int(r, "partition"), &format!("{path}.partition"));
            if let Some(max) = r.get("maxUnavailable").filter(|v| !v.is_null()) {
                let field = format!("{path}.maxUnavailable");
                errs.extend(positive_int_or_percent(Some(max), &field));
                if int_or_percent_value(Some(max)) == 0 {
                    errs.push(invalid_raw(&field, &go_int_or_string(max), "cannot be 0"));
                }
                errs.extend(not_more_than_100_percent(Some(max), &field));
            }
            errs
        }
        (other, _) => {
            let rendered = format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}",
                crate::types::validation::go_quote(other)
            );
            vec![invalid_raw("spec.updateStrategy", &rendered, "must be 'RollingUpdate' or 'OnDelete'")]
        }
    }
}

// ValidateStatefulSetUpdate: only these spec fields may change.
fn stateful_set_update(spec: &Fields, old_spec: &Fields) -> Vec<FieldError> {
    const MUTABLE: [&str; 6] = [
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let strip = |s: &Fields| -> Fields {
        s.iter().filter(|(k, _)| !MUTABLE.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    if strip(spec) != strip(old_spec) {
        return vec![FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )];
    }
    Vec::new()
}

// ValidateDaemonSetSpec
fn daemon_set_spec(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let selector_fields = obj(spec, "selector");
    if let Some(selector) = selector_fields {
        errs.extend(validate_label_selector(selector, "spec.selector"));
    }
    let (template, metadata, pod_spec) = template_of(spec);
    let selector = Selector::of(selector_fields, "spec.selector");
    let labels = metadata.and_then(|m| obj(m, "labels"));
    if selector != Selector::Invalid && !selector.matches(labels) {
        errs.push(invalid_raw("spec.template.metadata.labels", &go_string_map(labels), SELECTOR_MISMATCH));
    }
    if selector_fields.is_some() && selector.is_empty() {
        errs.push(invalid_raw(
            "spec.selector",
            &go_label_selector(selector_fields),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(core::pod_template_spec(&Value::Object(template.clone()), "spec.template"));
    always_restart(pod_spec, "spec.template", "DaemonSet", &mut errs);
    errs.extend(non_negative(int(spec, "minReadySeconds"), "spec.minReadySeconds"));
    errs.extend(daemon_set_update_strategy(obj(spec, "updateStrategy")));
    errs.extend(non_negative(int(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit"));
    errs
}

// ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet
fn daemon_set_update_strategy(strategy: Option<&Fields>) -> Vec<FieldError> {
    let empty = Fields::new();
    let strategy = strategy.unwrap_or(&empty);
    let path = "spec.updateStrategy.rollingUpdate";
    match text(strategy, "type") {
        "OnDelete" => Vec::new(),
        "RollingUpdate" => {
            let Some(rolling) = obj(strategy, "rollingUpdate") else {
                return vec![FieldError::required(path, "")];
            };
            let (unavailable, surge) = (rolling.get("maxUnavailable"), rolling.get("maxSurge"));
            let mut errs = positive_int_or_percent(unavailable, &format!("{path}.maxUnavailable"));
            errs.extend(positive_int_or_percent(surge, &format!("{path}.maxSurge")));
            errs.extend(not_more_than_100_percent(unavailable, &format!("{path}.maxUnavailable")));
            errs.extend(not_more_than_100_percent(surge, &format!("{path}.maxSurge")));
            let has_unavailable = int_or_percent_value(unavailable) != 0;
            let has_surge = int_or_percent_value(surge) != 0;
            if has_unavailable && has_surge {
                let rendered = go_int_or_string(surge.unwrap_or(&Value::from(0)));
                errs.push(invalid_raw(
                    &format!("{path}.maxSurge"),
                    &rendered,
                    "may not be set when maxUnavailable is non-zero",
                ));
            } else if !has_unavailable && !has_surge {
                errs.push(FieldError::required(&format!("{path}.maxUnavailable"), "cannot be 0 when maxSurge is 0"));
            }
            errs
        }
        other => {
            let rendered = format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}",
                crate::types::validation::go_quote(other)
            );
            vec![not_supported_raw("spec.updateStrategy", &rendered, &["RollingUpdate", "OnDelete"])]
        }
    }
}

/// The status updates' counters: ValidateDeploymentStatus,
/// ValidateReplicaSetStatus, ValidateStatefulSetStatus, validateDaemonSetStatus
/// (non-negative counts, none above `status.replicas`), and
/// `collisionCount` never decremented.
fn status(kind: &str, object: &Fields, old: &Fields) -> Vec<FieldError> {
    let counters: &[&str] = match kind {
        "Deployment" => &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "collisionCount",
        ],
        "ReplicaSet" => {
            &["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"]
        }
        "StatefulSet" => &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ],
        "DaemonSet" => &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ],
        _ => return Vec::new(),
    };
    let empty = Fields::new();
    let status = obj(object, "status").unwrap_or(&empty);
    let mut errs: Vec<FieldError> =
        counters.iter().flat_map(|c| non_negative(int(status, c), &format!("status.{c}"))).collect();
    if kind != "DaemonSet" {
        let replicas = int(status, "replicas").unwrap_or(0);
        // In each validator's order.
        let bounded: &[&str] = match kind {
            "Deployment" => &["updatedReplicas", "readyReplicas", "availableReplicas"],
            "ReplicaSet" => &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
            _ => &["readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"],
        };
        for &c in bounded {
            if int(status, c).unwrap_or(0) > replicas {
                errs.push(invalid_raw(
                    &format!("status.{c}"),
                    &int(status, c).unwrap_or(0).to_string(),
                    "cannot be greater than status.replicas",
                ));
            }
        }
    }
    if kind != "DaemonSet" {
        let (available, ready) =
            (int(status, "availableReplicas").unwrap_or(0), int(status, "readyReplicas").unwrap_or(0));
        if available > ready {
            let message = if kind == "StatefulSet" {
                "cannot be greater than status.readyReplicas"
            } else {
                "cannot be greater than readyReplicas"
            };
            errs.push(invalid_raw("status.availableReplicas", &available.to_string(), message));
        }
    }
    let old_collisions = obj(old, "status").and_then(|s| int(s, "collisionCount"));
    if let Some(before) = old_collisions {
        let now = int(status, "collisionCount");
        if now.is_none_or(|n| n < before) {
            errs.push(invalid_raw("status.collisionCount", &now.unwrap_or(0).to_string(), "cannot be decremented"));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::super::common::tests::pod;
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn deployment(spec: Value) -> Fields {
        let mut base = json!({
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod("Always")},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600
        });
        if let (Some(b), Some(s)) = (base.as_object_mut(), spec.as_object()) {
            for (k, v) in s {
                b.insert(k.clone(), v.clone());
            }
        }
        fields(json!({"metadata": {"name": "web"}, "spec": base}))
    }

    #[test]
    fn valid_deployment_passes() {
        assert!(create("Deployment", &deployment(json!({}))).is_empty());
    }

    // pkg/apis/apps/validation/validation.go: ValidateDeploymentSpec,
    // ValidatePodTemplateSpecForReplicaSet, ValidateRollingUpdateDeployment
    #[test]
    fn deployment_errors_in_kubes_words() {
        let cases: Vec<(Value, &str)> = vec![
            (json!({"replicas": -1}), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
            (json!({"template": {"metadata": {"labels": {"app": "db"}}, "spec": pod("Always")}}),
             r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`"#),
            (json!({"selector": {}}), "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"),
            (json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": pod("Never")}}),
             r#"spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#),
            (json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}}),
             r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0"#),
            (json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%", "maxSurge": 1}}}),
             r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%"#),
            (json!({"strategy": {"type": "Recreate", "rollingUpdate": {}}}),
             "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"),
            (json!({"strategy": {"type": "Blue"}}),
             r#"spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Blue", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate""#),
            (json!({"progressDeadlineSeconds": 5, "minReadySeconds": 10}), "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"),
        ];
        for (spec, expected) in cases {
            let errs = messages(&create("Deployment", &deployment(spec.clone())));
            assert!(errs.contains(&expected.to_string()), "{spec}: {errs:?}");
        }
        let mut missing = deployment(json!({}));
        if let Some(Value::Object(spec)) = missing.get_mut("spec") {
            spec.shift_remove("selector");
        }
        let errs = messages(&create("Deployment", &missing));
        assert_eq!(errs[0], "spec.selector: Required value");
        assert!(errs[1].ends_with("`selector` does not match template `labels`"), "{errs:?}");
    }

    // pkg/registry/apps/deployment/strategy.go: ValidateUpdate (selector immutable)
    #[test]
    fn selectors_are_immutable() {
        let old = deployment(json!({}));
        let new = deployment(
            json!({"selector": {"matchLabels": {"app": "web", "x": "y"}}, "template": {"metadata": {"labels": {"app": "web", "x": "y"}}, "spec": pod("Always")}}),
        );
        let errs = messages(&update("Deployment", &new, &old, None));
        assert_eq!(
            errs,
            vec![
                r#"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "x":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#
            ]
        );
        assert!(update("Deployment", &old, &old, None).is_empty());
    }

    fn stateful_set(extra: Value) -> Fields {
        let mut spec = json!({
            "replicas": 1, "serviceName": "db", "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": pod("Always")},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}
        });
        if let (Some(b), Some(s)) = (spec.as_object_mut(), extra.as_object()) {
            for (k, v) in s {
                b.insert(k.clone(), v.clone());
            }
        }
        fields(json!({"spec": spec}))
    }

    // ValidateStatefulSetSpec, ValidateStatefulSetUpdate
    #[test]
    fn stateful_set_rules() {
        assert!(create("StatefulSet", &stateful_set(json!({}))).is_empty());
        let errs = messages(&create(
            "StatefulSet",
            &stateful_set(
                json!({"podManagementPolicy": "Random", "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"}}),
            ),
        ));
        assert!(
            errs.contains(
                &r#"spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'"#
                    .to_string()
            ),
            "{errs:?}"
        );
        assert!(errs.contains(&r#"spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete""#.to_string()), "{errs:?}");
        let old = stateful_set(json!({}));
        let scaled = stateful_set(json!({"replicas": 5}));
        assert!(update("StatefulSet", &scaled, &old, None).is_empty());
        let renamed = stateful_set(json!({"serviceName": "other"}));
        let errs = messages(&update("StatefulSet", &renamed, &old, None));
        assert_eq!(errs, vec!["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]);
    }

    // ValidateDaemonSetSpec, ValidateRollingUpdateDaemonSet
    #[test]
    fn daemon_set_rules() {
        let ds = |strategy: Value| {
            fields(json!({"spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod("Always")},
            "updateStrategy": strategy, "revisionHistoryLimit": 10}}))
        };
        assert!(create(
            "DaemonSet",
            &ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}))
        )
        .is_empty());
        let both = messages(&create(
            "DaemonSet",
            &ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}})),
        ));
        assert_eq!(
            both,
            vec![
                r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero"#
            ]
        );
        let none = messages(&create(
            "DaemonSet",
            &ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}})),
        ));
        assert_eq!(
            none,
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]
        );
        let bad_percent = messages(&create(
            "DaemonSet",
            &ds(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "x%", "maxSurge": 0}})),
        ));
        assert!(bad_percent[0].starts_with(r#"spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"x%"}: a valid percent string"#), "{bad_percent:?}");
    }

    // pkg/registry/apps/replicaset/strategy.go: ValidateUpdate (spec twice)
    #[test]
    fn replica_set_update_reports_spec_errors_twice() {
        let rs = |replicas: i64| {
            fields(json!({"spec": {"replicas": replicas, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod("Always")}}}))
        };
        assert!(update("ReplicaSet", &rs(1), &rs(1), None).is_empty());
        let errs = messages(&update("ReplicaSet", &rs(-1), &rs(1), None));
        assert_eq!(errs, vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"; 2]);
        let deployment_errs =
            messages(&update("Deployment", &deployment(json!({"replicas": -1})), &deployment(json!({})), None));
        assert_eq!(deployment_errs, vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]);
    }

    // ValidateDeploymentStatus
    #[test]
    fn status_counters() {
        let new =
            fields(json!({"status": {"replicas": 3, "readyReplicas": 4, "availableReplicas": 1, "collisionCount": 0}}));
        let old = fields(json!({"status": {"collisionCount": 1}}));
        let errs = messages(&update("Deployment", &new, &old, Some("status")));
        assert_eq!(
            errs,
            vec![
                "status.readyReplicas: Invalid value: 4: cannot be greater than status.replicas",
                "status.collisionCount: Invalid value: 0: cannot be decremented",
            ]
        );
        let too_available = fields(json!({"status": {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2}}));
        let errs = messages(&update("StatefulSet", &too_available, &fields(json!({})), Some("status")));
        assert_eq!(
            errs,
            vec!["status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas"]
        );
    }
}
