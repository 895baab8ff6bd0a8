//! RuntimeClass: a new pod naming a `runtimeClassName` gets the class's
//! `overhead.podFixed` as its `spec.overhead` (a different overhead of its
//! own is 403), the class's `scheduling.nodeSelector` merged into its node
//! selector (a conflicting value is 403) and the class's tolerations merged
//! into its own; a class that does not exist is 403, and so is an overhead
//! without a class that defines one.
// plugin/pkg/admission/runtimeclass/admission.go: prepareObjects, setOverhead,
// setScheduling, validateOverhead; pkg/util/tolerations/tolerations.go:
// MergeTolerations, isSuperset

use super::{Object, Rejection};
use serde_json::{Map, Value};

/// The class a new pod names, if any.
pub fn class_name(pod: &Object) -> Option<&str> {
    super::text_opt(pod, &["spec", "runtimeClassName"])
}

fn not_found(name: &str) -> Rejection {
    Rejection::Forbidden(format!("pod rejected: RuntimeClass {} not found", crate::types::validation::go_quote(name)))
}

const OVERHEAD_MISMATCH: &str = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/// The class's overhead, compared as quantities (`Semantic.DeepEqual`).
fn same_overhead(a: Option<&Value>, b: Option<&Value>) -> bool {
    let list = |v: Option<&Value>| {
        super::quantity::resource_list(v).into_iter().map(|(k, q)| (k, q.nanos)).collect::<Vec<_>>()
    };
    list(a) == list(b)
}

pub fn admit(pod: &mut Object, class: Option<&Object>) -> Result<(), Rejection> {
    let Some(name) = class_name(pod).map(str::to_string) else { return Ok(()) };
    let class = class.ok_or_else(|| not_found(&name))?;
    let Some(spec) = super::map_mut(pod, &["spec"]) else { return Ok(()) };
    if let Some(fixed) = super::field(class, &["overhead", "podFixed"]) {
        if spec.get("overhead").is_some() && !same_overhead(spec.get("overhead"), Some(fixed)) {
            return Err(Rejection::Forbidden(OVERHEAD_MISMATCH.into()));
        }
        spec.insert("overhead".into(), fixed.clone());
    }
    let Some(scheduling) = super::map(class, &["scheduling"]) else { return Ok(()) };
    if let Some(selector) = scheduling.get("nodeSelector").and_then(Value::as_object) {
        let mut merged = spec.get("nodeSelector").and_then(Value::as_object).cloned().unwrap_or_default();
        for (key, value) in selector {
            if let Some(own) = merged.get(key) {
                if own != value {
                    return Err(Rejection::Forbidden(format!(
                        "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                        value.as_str().unwrap_or(""),
                        own.as_str().unwrap_or("")
                    )));
                }
            }
            merged.insert(key.clone(), value.clone());
        }
        spec.insert("nodeSelector".into(), Value::Object(merged));
    }
    let extra = super::list(scheduling, &["tolerations"]);
    if !extra.is_empty() {
        let own = spec.get("tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
        spec.insert("tolerations".into(), Value::Array(merge_tolerations(&own, extra)));
    }
    Ok(())
}

pub fn validate(pod: &Object, class: Option<&Object>) -> Result<(), Rejection> {
    let Some(name) = class_name(pod) else {
        if super::field(pod, &["spec", "overhead"]).is_some() {
            return Err(Rejection::Forbidden(
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead".into(),
            ));
        }
        return Ok(());
    };
    let class = class.ok_or_else(|| not_found(name))?;
    match super::field(class, &["overhead", "podFixed"]) {
        Some(fixed) if !same_overhead(super::field(pod, &["spec", "overhead"]), Some(fixed)) => {
            Err(Rejection::Forbidden(OVERHEAD_MISMATCH.into()))
        }
        Some(_) => Ok(()),
        None if super::field(pod, &["spec", "overhead"]).is_some() => Err(Rejection::Forbidden(
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead".into(),
        )),
        None => Ok(()),
    }
}

fn toleration_field<'a>(t: &'a Map<String, Value>, name: &str) -> &'a str {
    t.get(name).and_then(Value::as_str).unwrap_or("")
}

/// Whether toleration `ss` tolerates everything `t` does.
fn is_superset(ss: &Map<String, Value>, t: &Map<String, Value>) -> bool {
    if ss == t {
        return true;
    }
    let (ss_key, t_key) = (toleration_field(ss, "key"), toleration_field(t, "key"));
    if ss_key != t_key && !(ss_key.is_empty() && toleration_field(ss, "operator") == "Exists") {
        return false;
    }
    let (ss_effect, t_effect) = (toleration_field(ss, "effect"), toleration_field(t, "effect"));
    if ss_effect != t_effect && !ss_effect.is_empty() {
        return false;
    }
    if ss_effect == "NoExecute" {
        if let Some(limit) = ss.get("tolerationSeconds").and_then(Value::as_i64) {
            match t.get("tolerationSeconds").and_then(Value::as_i64) {
                Some(seconds) if seconds <= limit => {}
                _ => return false,
            }
        }
    }
    match toleration_field(ss, "operator") {
        "Equal" | "" => {
            matches!(toleration_field(t, "operator"), "Equal" | "")
                && toleration_field(t, "value") == toleration_field(ss, "value")
        }
        "Exists" => true,
        _ => false,
    }
}

/// `MergeTolerations`: both lists, without tolerations another one covers
/// (of equal ones, the first).
pub fn merge_tolerations(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    let empty = Map::new();
    let as_map = |v: &Value| v.as_object().cloned().unwrap_or_else(|| empty.clone());
    let mut merged: Vec<Value> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        let tm = as_map(t);
        if merged.iter().any(|m| is_superset(&as_map(m), &tm)) {
            continue;
        }
        let covered_later = all.iter().skip(i + 1).any(|t2| {
            let t2m = as_map(t2);
            t2m != tm && is_superset(&t2m, &tm)
        });
        if !covered_later {
            merged.push((*t).clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn class() -> Object {
        object(json!({
            "metadata": {"name": "gvisor"},
            "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {"nodeSelector": {"sandbox": "gvisor"}, "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}
        }))
    }

    #[test]
    fn a_pod_gets_the_class_overhead_selector_and_tolerations() {
        let mut pod =
            object(json!({"spec": {"runtimeClassName": "gvisor", "nodeSelector": {"disk": "ssd"}, "containers": []}}));
        admit(&mut pod, Some(&class())).unwrap();
        assert_eq!(pod["spec"]["overhead"], json!({"cpu": "250m", "memory": "64Mi"}));
        assert_eq!(pod["spec"]["nodeSelector"], json!({"disk": "ssd", "sandbox": "gvisor"}));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}])
        );
        assert!(validate(&pod, Some(&class())).is_ok());
    }

    #[test]
    fn refusals() {
        let mut missing = object(json!({"spec": {"runtimeClassName": "kata"}}));
        assert_eq!(
            admit(&mut missing, None).unwrap_err(),
            Rejection::Forbidden("pod rejected: RuntimeClass \"kata\" not found".into())
        );
        let mut conflict = object(json!({"spec": {"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "kata"}}}));
        assert_eq!(
            admit(&mut conflict, Some(&class())).unwrap_err(),
            Rejection::Forbidden(
                "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata".into()
            )
        );
        let mut other = object(json!({"spec": {"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}}}));
        assert_eq!(admit(&mut other, Some(&class())).unwrap_err(), Rejection::Forbidden(OVERHEAD_MISMATCH.into()));
        let classless = object(json!({"spec": {"overhead": {"cpu": "1"}}}));
        assert!(validate(&classless, None).is_err());
        let same =
            object(json!({"spec": {"runtimeClassName": "gvisor", "overhead": {"cpu": "0.25", "memory": "64Mi"}}}));
        assert!(validate(&same, Some(&class())).is_ok(), "quantities compare by value");
    }

    #[test]
    fn tolerations_merge_without_redundancy() {
        let own = [json!({"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"})];
        let extra = [
            json!({"key": "a", "operator": "Exists"}),
            json!({"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"}),
        ];
        assert_eq!(merge_tolerations(&own, &extra), vec![json!({"key": "a", "operator": "Exists"})]);
        let disjoint = [json!({"key": "b", "operator": "Exists"})];
        assert_eq!(merge_tolerations(&own, &disjoint).len(), 2);
    }
}
