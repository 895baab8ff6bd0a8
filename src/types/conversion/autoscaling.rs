//! autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscalers, as
//! kube-apiserver converts them (`pkg/apis/autoscaling/v1/conversion.go`
//! through the internal type, which is v2's shape; v2 is the storage
//! version).
//!
//! v1 has one metric, `spec.targetCPUUtilizationPercentage`: a v2 `Resource`
//! metric on `cpu` with a `Utilization` target. Whatever else v2 holds is
//! kept in v1 as annotations, so that an object read through v1 and written
//! back loses nothing:
//! - `autoscaling.alpha.kubernetes.io/metrics`: the other spec metrics, as a
//!   JSON list of autoscaling/v1 `MetricSpec`s (the v2beta1-shaped types of
//!   k8s.io/api/autoscaling/v1 kept for this annotation);
//! - `autoscaling.alpha.kubernetes.io/current-metrics`: every status metric,
//!   as v1 `MetricStatus`es (the CPU one too, for its raw value);
//! - `autoscaling.alpha.kubernetes.io/conditions`: the status conditions;
//! - `autoscaling.alpha.kubernetes.io/behavior`: `spec.behavior`, encoded by
//!   Go from the *internal* type, which has no JSON tags: its keys are the Go
//!   field names (`ScaleUp`, `StabilizationWindowSeconds`, ...), nil pointers
//!   are `null`. Read back case-insensitively, as `encoding/json` does.
//!
//! Annotations that do not decode are ignored (kube's conversion skips them
//! too rather than failing the read), and the round-trip annotations are
//! dropped from the other side's object, so a client cannot smuggle stale
//! ones in. A v1 object without any metric gets v2's CPU 80% default, as
//! kube's conversion adds it.
//!
//! Invariant: pure, no I/O, never panics; fields of the wrong type are
//! treated as absent. v2 -> v1 -> v2 gives the v2 object again (with the
//! round-trip annotations gone).

use serde_json::{json, Map, Value};

/// `autoscaling.MetricSpecsAnnotation`.
pub const METRIC_SPECS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.MetricStatusesAnnotation`.
pub const METRIC_STATUSES_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `autoscaling.HorizontalPodAutoscalerConditionsAnnotation`.
pub const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `autoscaling.BehaviorSpecsAnnotation`.
pub const BEHAVIOR_SPECS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The tolerance annotations autoscaling/v2beta2 keeps (v2beta2 has no
/// `tolerance` field); `DropRoundTripHorizontalPodAutoscalerAnnotations`
/// drops them with the others.
const TOLERANCE_ANNOTATIONS: [&str; 2] =
    ["autoscaling.alpha.kubernetes.io/scale-down-tolerance", "autoscaling.alpha.kubernetes.io/scale-up-tolerance"];
/// The annotations conversion reads and writes
/// (`DropRoundTripHorizontalPodAutoscalerAnnotations`).
pub const ROUND_TRIP_ANNOTATIONS: [&str; 6] = [
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    CONDITIONS_ANNOTATION,
    BEHAVIOR_SPECS_ANNOTATION,
    TOLERANCE_ANNOTATIONS[0],
    TOLERANCE_ANNOTATIONS[1],
];
/// `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

type Fields = Map<String, Value>;

/// A v1 object as the v2 object kube stores for it.
pub fn to_v2(v1: &Value) -> Fields {
    let mut out = Fields::new();
    let Some(map) = v1.as_object() else { return out };
    let annotations = map.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object);
    let annotation = |key: &str| -> Option<Value> {
        annotations.and_then(|a| a.get(key)).and_then(Value::as_str).and_then(|s| serde_json::from_str(s).ok())
    };
    // A list annotation decodes only as a list of objects (else Go's
    // Unmarshal fails and the annotation is ignored).
    let list_annotation =
        |key: &str| annotation(key).filter(|v| v.as_array().is_some_and(|items| items.iter().all(Value::is_object)));
    for (key, value) in map {
        let converted = match key.as_str() {
            "apiVersion" => json!("autoscaling/v2"),
            "metadata" => metadata_without_round_trip(value),
            "spec" => Value::Object(spec_to_v2(
                value,
                list_annotation(METRIC_SPECS_ANNOTATION),
                annotation(BEHAVIOR_SPECS_ANNOTATION),
            )),
            "status" => Value::Object(status_to_v2(
                value,
                list_annotation(METRIC_STATUSES_ANNOTATION),
                list_annotation(CONDITIONS_ANNOTATION),
            )),
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    out
}

/// A stored v2 object as kube serves it through autoscaling/v1.
pub fn to_v1(v2: &Value) -> Fields {
    let mut out = Fields::new();
    let Some(map) = v2.as_object() else { return out };
    let empty = Fields::new();
    let spec = map.get("spec").and_then(Value::as_object).unwrap_or(&empty);
    let status = map.get("status").and_then(Value::as_object).unwrap_or(&empty);
    let mut added: Vec<(&str, String)> = Vec::new();
    let other_metrics: Vec<Value> =
        items(spec, "metrics").filter(|m| !is_cpu_utilization(m)).map(metric_spec_to_v1).collect();
    if !other_metrics.is_empty() {
        added.push((METRIC_SPECS_ANNOTATION, go_json(&Value::Array(other_metrics))));
    }
    let current: Vec<Value> = items(status, "currentMetrics").map(metric_status_to_v1).collect();
    if !current.is_empty() {
        added.push((METRIC_STATUSES_ANNOTATION, go_json(&Value::Array(current))));
    }
    let conditions: Vec<Value> = items(status, "conditions").map(condition).collect();
    if !conditions.is_empty() {
        added.push((CONDITIONS_ANNOTATION, go_json(&Value::Array(conditions))));
    }
    if let Some(behavior) = spec.get("behavior").and_then(Value::as_object) {
        added.push((BEHAVIOR_SPECS_ANNOTATION, go_json(&internal_behavior(behavior))));
    }
    for (key, value) in map {
        let converted = match key.as_str() {
            "apiVersion" => json!("autoscaling/v1"),
            "metadata" => {
                let mut meta = metadata_without_round_trip(value);
                if !added.is_empty() {
                    if let Value::Object(meta) = &mut meta {
                        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                        if !annotations.is_object() {
                            *annotations = json!({});
                        }
                        if let Value::Object(annotations) = annotations {
                            for (k, v) in &added {
                                annotations.insert((*k).to_string(), Value::String(v.clone()));
                            }
                            annotations.sort_keys();
                        }
                    }
                }
                meta
            }
            "spec" => Value::Object(spec_to_v1(value)),
            "status" => Value::Object(status_to_v1(value)),
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    out
}

/// The metadata without the annotations only conversion writes
/// (`DropRoundTripHorizontalPodAutoscalerAnnotations`); an emptied
/// annotation map is dropped (`omitempty`).
fn metadata_without_round_trip(metadata: &Value) -> Value {
    let mut metadata = metadata.clone();
    if let Some(meta) = metadata.as_object_mut() {
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            for key in
                [METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION, BEHAVIOR_SPECS_ANNOTATION]
                    .iter()
                    .chain(TOLERANCE_ANNOTATIONS.iter())
            {
                annotations.shift_remove(*key);
            }
            if annotations.is_empty() {
                meta.shift_remove("annotations");
            }
        }
    }
    metadata
}

fn items<'a>(map: &'a Fields, key: &str) -> impl Iterator<Item = &'a Value> {
    map.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn obj<'a>(value: &'a Value, key: &str) -> Option<&'a Fields> {
    value.get(key).and_then(Value::as_object)
}

/// A field set unless absent or null.
fn present<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|v| !v.is_null())
}

/// Go's `encoding/json` matches keys case-insensitively when decoding.
fn get_ci<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let map = value.as_object()?;
    map.get(key)
        .or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v))
        .filter(|v| !v.is_null())
}

/// A non-pointer `resource.Quantity`: its zero value encodes as `"0"`.
fn quantity_or_zero(value: Option<&Value>) -> Value {
    value.cloned().unwrap_or_else(|| json!("0"))
}

/// A v2 spec metric that v1's `targetCPUUtilizationPercentage` carries.
fn is_cpu_utilization(metric: &Value) -> bool {
    metric.get("type").and_then(Value::as_str) == Some("Resource")
        && obj(metric, "resource").is_some_and(|r| {
            r.get("name").and_then(Value::as_str) == Some("cpu")
                && r.get("target").and_then(|t| present(t, "averageUtilization")).is_some()
        })
}

fn spec_to_v1(spec: &Value) -> Fields {
    let mut out = Fields::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = spec.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    // The first Resource cpu metric decides, with or without a utilization.
    let cpu = spec.get("metrics").and_then(Value::as_array).into_iter().flatten().find(|m| {
        m.get("type").and_then(Value::as_str) == Some("Resource")
            && obj(m, "resource").and_then(|r| r.get("name")).and_then(Value::as_str) == Some("cpu")
    });
    if let Some(utilization) =
        cpu.and_then(|m| m.get("resource")).and_then(|r| r.get("target")).and_then(|t| present(t, "averageUtilization"))
    {
        out.insert("targetCPUUtilizationPercentage".into(), utilization.clone());
    }
    out
}

fn spec_to_v2(spec: &Value, metrics_annotation: Option<Value>, behavior_annotation: Option<Value>) -> Fields {
    let mut out = Fields::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = spec.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let mut metrics: Vec<Value> =
        metrics_annotation.as_ref().and_then(Value::as_array).into_iter().flatten().map(metric_spec_to_v2).collect();
    if let Some(cpu) = present(spec, "targetCPUUtilizationPercentage") {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}));
    }
    if metrics.is_empty() {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}));
    }
    out.insert("metrics".into(), Value::Array(metrics));
    if let Some(behavior) = behavior_annotation.as_ref().and_then(behavior_from_internal) {
        out.insert("behavior".into(), behavior);
    }
    out
}

fn status_to_v1(status: &Value) -> Fields {
    let mut out = Fields::new();
    for key in ["observedGeneration", "lastScaleTime"] {
        if let Some(v) = status.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    // Not omitempty in v1 (v2's currentReplicas is).
    for key in ["currentReplicas", "desiredReplicas"] {
        out.insert(key.into(), status.get(key).cloned().unwrap_or_else(|| json!(0)));
    }
    // Every Resource cpu status metric with a utilization; the last wins.
    for metric in status.get("currentMetrics").and_then(Value::as_array).into_iter().flatten() {
        if metric.get("type").and_then(Value::as_str) == Some("Resource")
            && obj(metric, "resource").and_then(|r| r.get("name")).and_then(Value::as_str) == Some("cpu")
        {
            if let Some(u) =
                metric.get("resource").and_then(|r| r.get("current")).and_then(|c| present(c, "averageUtilization"))
            {
                out.insert("currentCPUUtilizationPercentage".into(), u.clone());
            }
        }
    }
    out
}

fn status_to_v2(status: &Value, metrics_annotation: Option<Value>, conditions_annotation: Option<Value>) -> Fields {
    let mut out = Fields::new();
    for key in ["observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"] {
        if let Some(v) = status.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    // The annotation's metrics have more information than the percentage.
    if let Some(Value::Array(current)) = metrics_annotation {
        out.insert("currentMetrics".into(), Value::Array(current.iter().map(metric_status_to_v2).collect()));
    } else if let Some(cpu) = present(status, "currentCPUUtilizationPercentage") {
        out.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu}}}]),
        );
    }
    if let Some(Value::Array(conditions)) = conditions_annotation {
        out.insert("conditions".into(), Value::Array(conditions.iter().map(condition_from_v1).collect()));
    }
    out
}

/// `CrossVersionObjectReference` (kind, name, apiVersion omitempty).
fn reference(value: Option<&Value>, case_insensitive: bool) -> Value {
    let mut out = Fields::new();
    let empty = Value::Null;
    let value = value.unwrap_or(&empty);
    let get = |k: &str| if case_insensitive { get_ci(value, k) } else { present(value, k) };
    out.insert("kind".into(), get("kind").cloned().unwrap_or_else(|| json!("")));
    out.insert("name".into(), get("name").cloned().unwrap_or_else(|| json!("")));
    if let Some(v) = get("apiVersion").filter(|v| v.as_str() != Some("")) {
        out.insert("apiVersion".into(), v.clone());
    }
    Value::Object(out)
}

/// Inserts `value` unless absent (an `omitempty` pointer).
fn put(out: &mut Fields, key: &str, value: Option<&Value>) {
    if let Some(v) = value {
        out.insert(key.into(), v.clone());
    }
}

fn text_or_empty(value: Option<&Value>) -> Value {
    value.cloned().unwrap_or_else(|| json!(""))
}

/// A v2 `MetricSpec` as an autoscaling/v1 `MetricSpec` (Go field order).
fn metric_spec_to_v1(metric: &Value) -> Value {
    let mut out = Fields::new();
    out.insert("type".into(), text_or_empty(metric.get("type")));
    let null = Value::Null;
    let target_of = |source: &Value| source.get("target").cloned().unwrap_or(Value::Null);
    if let Some(source) = present(metric, "object") {
        let target = target_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("target".into(), reference(source.get("describedObject"), false));
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        o.insert("targetValue".into(), quantity_or_zero(present(&target, "value")));
        put(&mut o, "selector", present(id, "selector"));
        put(&mut o, "averageValue", present(&target, "averageValue"));
        out.insert("object".into(), Value::Object(o));
    }
    if let Some(source) = present(metric, "pods") {
        let target = target_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        o.insert("targetAverageValue".into(), quantity_or_zero(present(&target, "averageValue")));
        put(&mut o, "selector", present(id, "selector"));
        out.insert("pods".into(), Value::Object(o));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = present(metric, key) {
            let target = target_of(source);
            let mut o = Fields::new();
            o.insert("name".into(), text_or_empty(present(source, "name")));
            put(&mut o, "targetAverageUtilization", present(&target, "averageUtilization"));
            put(&mut o, "targetAverageValue", present(&target, "averageValue"));
            if key == "containerResource" {
                o.insert("container".into(), text_or_empty(present(source, "container")));
            }
            out.insert(key.into(), Value::Object(o));
        }
    }
    if let Some(source) = present(metric, "external") {
        let target = target_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        put(&mut o, "metricSelector", present(id, "selector"));
        put(&mut o, "targetValue", present(&target, "value"));
        put(&mut o, "targetAverageValue", present(&target, "averageValue"));
        out.insert("external".into(), Value::Object(o));
    }
    Value::Object(out)
}

/// `MetricIdentifier` from a v1 metric name and selector.
fn identifier(name: Option<&Value>, selector: Option<&Value>) -> Value {
    let mut id = Fields::new();
    id.insert("name".into(), text_or_empty(name));
    put(&mut id, "selector", selector);
    Value::Object(id)
}

/// A `MetricTarget` (type, value, averageValue, averageUtilization).
fn target(kind: &str, value: Option<&Value>, average: Option<&Value>, utilization: Option<&Value>) -> Value {
    let mut t = Fields::new();
    t.insert("type".into(), json!(kind));
    put(&mut t, "value", value);
    put(&mut t, "averageValue", average);
    put(&mut t, "averageUtilization", utilization);
    Value::Object(t)
}

/// An autoscaling/v1 `MetricSpec` (from the annotation) as a v2 one.
fn metric_spec_to_v2(metric: &Value) -> Value {
    let mut out = Fields::new();
    out.insert("type".into(), text_or_empty(get_ci(metric, "type")));
    if let Some(source) = get_ci(metric, "object") {
        let average = get_ci(source, "averageValue");
        let kind = if average.is_none() { "Value" } else { "AverageValue" };
        let value = quantity_or_zero(get_ci(source, "targetValue"));
        let mut o = Fields::new();
        o.insert("describedObject".into(), reference(get_ci(source, "target"), true));
        o.insert("target".into(), target(kind, Some(&value), average, None));
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "selector")));
        out.insert("object".into(), Value::Object(o));
    }
    if let Some(source) = get_ci(metric, "pods") {
        let average = quantity_or_zero(get_ci(source, "targetAverageValue"));
        let mut o = Fields::new();
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "selector")));
        o.insert("target".into(), target("AverageValue", None, Some(&average), None));
        out.insert("pods".into(), Value::Object(o));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = get_ci(metric, key) {
            let utilization = get_ci(source, "targetAverageUtilization");
            let kind = if utilization.is_none() { "AverageValue" } else { "Utilization" };
            let mut o = Fields::new();
            o.insert("name".into(), text_or_empty(get_ci(source, "name")));
            o.insert("target".into(), target(kind, None, get_ci(source, "targetAverageValue"), utilization));
            if key == "containerResource" {
                o.insert("container".into(), text_or_empty(get_ci(source, "container")));
            }
            out.insert(key.into(), Value::Object(o));
        }
    }
    if let Some(source) = get_ci(metric, "external") {
        let value = get_ci(source, "targetValue");
        let kind = if value.is_none() { "AverageValue" } else { "Value" };
        let mut o = Fields::new();
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "metricSelector")));
        o.insert("target".into(), target(kind, value, get_ci(source, "targetAverageValue"), None));
        out.insert("external".into(), Value::Object(o));
    }
    Value::Object(out)
}

/// A v2 `MetricStatus` as an autoscaling/v1 `MetricStatus`.
fn metric_status_to_v1(metric: &Value) -> Value {
    let mut out = Fields::new();
    out.insert("type".into(), text_or_empty(metric.get("type")));
    let null = Value::Null;
    let current_of = |source: &Value| source.get("current").cloned().unwrap_or(Value::Null);
    if let Some(source) = present(metric, "object") {
        let current = current_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("target".into(), reference(source.get("describedObject"), false));
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        o.insert("currentValue".into(), quantity_or_zero(present(&current, "value")));
        put(&mut o, "selector", present(id, "selector"));
        put(&mut o, "averageValue", present(&current, "averageValue"));
        out.insert("object".into(), Value::Object(o));
    }
    if let Some(source) = present(metric, "pods") {
        let current = current_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        o.insert("currentAverageValue".into(), quantity_or_zero(present(&current, "averageValue")));
        put(&mut o, "selector", present(id, "selector"));
        out.insert("pods".into(), Value::Object(o));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = present(metric, key) {
            let current = current_of(source);
            let mut o = Fields::new();
            o.insert("name".into(), text_or_empty(present(source, "name")));
            put(&mut o, "currentAverageUtilization", present(&current, "averageUtilization"));
            o.insert("currentAverageValue".into(), quantity_or_zero(present(&current, "averageValue")));
            if key == "containerResource" {
                o.insert("container".into(), text_or_empty(present(source, "container")));
            }
            out.insert(key.into(), Value::Object(o));
        }
    }
    if let Some(source) = present(metric, "external") {
        let current = current_of(source);
        let id = source.get("metric").unwrap_or(&null);
        let mut o = Fields::new();
        o.insert("metricName".into(), text_or_empty(present(id, "name")));
        put(&mut o, "metricSelector", present(id, "selector"));
        o.insert("currentValue".into(), quantity_or_zero(present(&current, "value")));
        put(&mut o, "currentAverageValue", present(&current, "averageValue"));
        out.insert("external".into(), Value::Object(o));
    }
    Value::Object(out)
}

/// A `MetricValueStatus` (value, averageValue, averageUtilization).
fn current(value: Option<&Value>, average: Option<&Value>, utilization: Option<&Value>) -> Value {
    let mut c = Fields::new();
    put(&mut c, "value", value);
    put(&mut c, "averageValue", average);
    put(&mut c, "averageUtilization", utilization);
    Value::Object(c)
}

/// An autoscaling/v1 `MetricStatus` (from the annotation) as a v2 one.
fn metric_status_to_v2(metric: &Value) -> Value {
    let mut out = Fields::new();
    out.insert("type".into(), text_or_empty(get_ci(metric, "type")));
    if let Some(source) = get_ci(metric, "object") {
        let value = quantity_or_zero(get_ci(source, "currentValue"));
        let mut o = Fields::new();
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "selector")));
        o.insert("current".into(), current(Some(&value), get_ci(source, "averageValue"), None));
        o.insert("describedObject".into(), reference(get_ci(source, "target"), true));
        out.insert("object".into(), Value::Object(o));
    }
    if let Some(source) = get_ci(metric, "pods") {
        let average = quantity_or_zero(get_ci(source, "currentAverageValue"));
        let mut o = Fields::new();
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "selector")));
        o.insert("current".into(), current(None, Some(&average), None));
        out.insert("pods".into(), Value::Object(o));
    }
    for key in ["resource", "containerResource"] {
        if let Some(source) = get_ci(metric, key) {
            let average = quantity_or_zero(get_ci(source, "currentAverageValue"));
            let mut o = Fields::new();
            o.insert("name".into(), text_or_empty(get_ci(source, "name")));
            o.insert("current".into(), current(None, Some(&average), get_ci(source, "currentAverageUtilization")));
            if key == "containerResource" {
                o.insert("container".into(), text_or_empty(get_ci(source, "container")));
            }
            out.insert(key.into(), Value::Object(o));
        }
    }
    if let Some(source) = get_ci(metric, "external") {
        let value = quantity_or_zero(get_ci(source, "currentValue"));
        let mut o = Fields::new();
        o.insert("metric".into(), identifier(get_ci(source, "metricName"), get_ci(source, "metricSelector")));
        o.insert("current".into(), current(Some(&value), get_ci(source, "currentAverageValue"), None));
        out.insert("external".into(), Value::Object(o));
    }
    Value::Object(out)
}

const CONDITION_FIELDS: [&str; 6] = ["type", "status", "lastTransitionTime", "reason", "message", "observedGeneration"];

/// A v2 condition as v1's `HorizontalPodAutoscalerCondition` (the same
/// fields; `lastTransitionTime` is a struct, so Go writes `null` for it).
fn condition(value: &Value) -> Value {
    let mut out = Fields::new();
    for key in CONDITION_FIELDS {
        match (key, present(value, key)) {
            ("type" | "status", v) => {
                out.insert(key.into(), text_or_empty(v));
            }
            ("lastTransitionTime", v) => {
                out.insert(key.into(), v.cloned().unwrap_or(Value::Null));
            }
            ("reason" | "message", Some(v)) if v.as_str() == Some("") => {}
            (_, Some(v)) => {
                out.insert(key.into(), v.clone());
            }
            (_, None) => {}
        }
    }
    Value::Object(out)
}

fn condition_from_v1(value: &Value) -> Value {
    let mut out = Fields::new();
    for key in CONDITION_FIELDS {
        if let Some(v) = get_ci(value, key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The internal `HorizontalPodAutoscalerBehavior` as Go encodes it (no JSON
/// tags: Go field names, every field, nil as `null`).
fn internal_behavior(behavior: &Fields) -> Value {
    let rules = |key: &str| -> Value {
        let Some(rules) = behavior.get(key).and_then(Value::as_object) else { return Value::Null };
        let field = |k: &str| rules.get(k).cloned().unwrap_or(Value::Null);
        let policies = match rules.get("policies") {
            Some(Value::Array(policies)) => Value::Array(
                policies
                    .iter()
                    .map(|p| {
                        json!({"Type": p.get("type").cloned().unwrap_or_else(|| json!("")),
                            "Value": p.get("value").cloned().unwrap_or_else(|| json!(0)),
                            "PeriodSeconds": p.get("periodSeconds").cloned().unwrap_or_else(|| json!(0))})
                    })
                    .collect(),
            ),
            _ => Value::Null,
        };
        json!({"StabilizationWindowSeconds": field("stabilizationWindowSeconds"),
            "SelectPolicy": field("selectPolicy"), "Policies": policies, "Tolerance": field("tolerance")})
    };
    json!({"ScaleUp": rules("scaleUp"), "ScaleDown": rules("scaleDown")})
}

/// The behavior annotation as v2's `behavior`; `None` when it sets neither
/// direction (kube keeps only a behavior other than the zero value).
fn behavior_from_internal(internal: &Value) -> Option<Value> {
    let mut out = Fields::new();
    for (go, v2) in [("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")] {
        let Some(rules) = get_ci(internal, go).filter(|r| r.is_object()) else { continue };
        let mut r = Fields::new();
        for (go_field, field) in
            [("StabilizationWindowSeconds", "stabilizationWindowSeconds"), ("SelectPolicy", "selectPolicy")]
        {
            put(&mut r, field, get_ci(rules, go_field));
        }
        if let Some(Value::Array(policies)) = get_ci(rules, "Policies") {
            let policies: Vec<Value> = policies
                .iter()
                .map(|p| {
                    json!({"type": get_ci(p, "Type").cloned().unwrap_or_else(|| json!("")),
                        "value": get_ci(p, "Value").cloned().unwrap_or_else(|| json!(0)),
                        "periodSeconds": get_ci(p, "PeriodSeconds").cloned().unwrap_or_else(|| json!(0))})
                })
                .collect();
            r.insert("policies".into(), Value::Array(policies));
        }
        put(&mut r, "tolerance", get_ci(rules, "Tolerance"));
        out.insert(v2.into(), Value::Object(r));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// `json.Marshal`'s text: compact, with `<`, `>`, `&`, U+2028 and U+2029
/// escaped as Go escapes them (they only occur inside strings).
fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(v1: &Fields) -> &Fields {
        v1["metadata"]["annotations"].as_object().unwrap()
    }

    #[test]
    fn v1_cpu_target_is_a_v2_utilization_metric_and_back() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"},
                "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
            "status": {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40}});
        let v2 = Value::Object(to_v2(&v1));
        assert_eq!(v2["apiVersion"], "autoscaling/v2");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}])
        );
        assert_eq!(
            v2["status"]["currentMetrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}])
        );
        assert!(v2["spec"].get("targetCPUUtilizationPercentage").is_none());
        let back = Value::Object(to_v1(&v2));
        assert_eq!(back["spec"], v1["spec"]);
        assert_eq!(back["status"]["currentCPUUtilizationPercentage"], 40);
        // The status metric is kept whole in an annotation (raw values).
        assert_eq!(
            back["metadata"]["annotations"][METRIC_STATUSES_ANNOTATION],
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"0"}}]"#
        );
        assert!(back["metadata"]["annotations"].get(METRIC_SPECS_ANNOTATION).is_none());
    }

    #[test]
    fn a_v1_object_without_target_gets_the_cpu_default() {
        let v2 = to_v2(&json!({"spec": {"maxReplicas": 2}}));
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"],
            json!({"type": "Utilization", "averageUtilization": 80})
        );
    }

    #[test]
    fn other_metrics_behavior_and_conditions_live_in_annotations() {
        let v2 = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "annotations": {"keep": "me", METRIC_SPECS_ANNOTATION: "stale"}},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "minReplicas": 1, "maxReplicas": 5,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
                    {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "i", "apiVersion": "networking.k8s.io/v1"},
                        "metric": {"name": "hits", "selector": {"matchLabels": {"a": "b<c"}}}, "target": {"type": "Value", "value": "10"}}},
                    {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
                    {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app",
                        "target": {"type": "Utilization", "averageUtilization": 50}}},
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}},
            "status": {"desiredReplicas": 0, "currentMetrics": null,
                "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-12-03T18:00:00Z",
                    "reason": "SucceededGetScale", "message": "ok"}]}});
        let v1 = to_v1(&v2);
        let a = annotations(&v1);
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            [BEHAVIOR_SPECS_ANNOTATION, CONDITIONS_ANNOTATION, METRIC_SPECS_ANNOTATION, "keep"]
        );
        assert_eq!(
            a[METRIC_SPECS_ANNOTATION],
            concat!(
                r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}},"#,
                r#"{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},"#,
                r#"{"type":"Object","object":{"target":{"kind":"Ingress","name":"i","apiVersion":"networking.k8s.io/v1"},"#,
                r#""metricName":"hits","targetValue":"10","selector":{"matchLabels":{"a":"b\u003cc"}}}},"#,
                r#"{"type":"External","external":{"metricName":"queue","targetAverageValue":"30"}},"#,
                r#"{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":50,"container":"app"}}]"#
            )
        );
        assert_eq!(
            a[BEHAVIOR_SPECS_ANNOTATION],
            concat!(
                r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","#,
                r#""Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
            )
        );
        assert_eq!(
            a[CONDITIONS_ANNOTATION],
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-12-03T18:00:00Z","reason":"SucceededGetScale","message":"ok"}]"#
        );
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
        assert!(v1["spec"].get("metrics").is_none() && v1["spec"].get("behavior").is_none());
        // Back to v2: the same spec and conditions, the annotations gone but the client's own.
        let again = to_v2(&Value::Object(v1));
        assert_eq!(again["metadata"]["annotations"], json!({"keep": "me"}));
        let mut expected_metrics = v2["spec"]["metrics"].as_array().unwrap().clone();
        let cpu = expected_metrics.pop().unwrap();
        expected_metrics.push(cpu);
        assert_eq!(again["spec"]["metrics"], Value::Array(expected_metrics));
        assert_eq!(again["spec"]["behavior"], v2["spec"]["behavior"]);
        assert_eq!(again["status"]["conditions"], v2["status"]["conditions"]);
    }

    #[test]
    fn annotations_are_read_case_insensitively_and_bad_ones_ignored() {
        let v1 = json!({"metadata": {"annotations": {
                BEHAVIOR_SPECS_ANNOTATION: r#"{"scaleup":{"selectpolicy":"Min","Policies":null}}"#,
                METRIC_SPECS_ANNOTATION: "not json", CONDITIONS_ANNOTATION: "[1, \"x\"]"}},
            "spec": {"maxReplicas": 3}, "status": {}});
        let v2 = to_v2(&v1);
        assert_eq!(v2["spec"]["behavior"], json!({"scaleUp": {"selectPolicy": "Min"}}));
        assert_eq!(v2["spec"]["metrics"].as_array().map(Vec::len), Some(1));
        assert!(v2["status"].get("conditions").is_none());
        assert!(v2["metadata"].get("annotations").is_none());
        assert!(to_v2(&json!({"metadata": {"annotations": {BEHAVIOR_SPECS_ANNOTATION: "{}"}}, "spec": {}}))["spec"]
            .get("behavior")
            .is_none());
    }

    #[test]
    fn status_metrics_round_trip_through_the_annotation() {
        let status = json!({"currentReplicas": 1, "desiredReplicas": 1, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "250m", "averageUtilization": 25}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "current": {"value": "3"}}},
            {"type": "Pods", "pods": {"metric": {"name": "p"}, "current": {"averageValue": "2"}}},
            {"type": "Object", "object": {"metric": {"name": "o"}, "current": {"value": "4"},
                "describedObject": {"kind": "Service", "name": "s"}}}]});
        let v1 = to_v1(&json!({"metadata": {}, "spec": {}, "status": status}));
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 25);
        let v2 = to_v2(&Value::Object(v1));
        assert_eq!(v2["status"]["currentMetrics"], status["currentMetrics"]);
    }

    #[test]
    fn anything_converts_without_panicking() {
        for junk in [
            json!(null),
            json!([1]),
            json!({"spec": 3, "status": "x", "metadata": {"annotations": 7}}),
            json!({"spec": {"metrics": [1, {"type": 2, "object": 5}], "behavior": []}, "status": {"conditions": "c"}}),
        ] {
            let _ = to_v1(&Value::Object(to_v2(&junk)));
            let _ = to_v2(&Value::Object(to_v1(&junk)));
        }
    }
}
