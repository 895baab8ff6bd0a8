//! DefaultTolerationSeconds: a pod that does not tolerate the
//! `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable`
//! NoExecute taints gets a toleration of each for 300 s, on create and update.
//! A toleration with an empty key tolerates every key, and one with an empty
//! effect every effect.
// plugin/pkg/admission/defaulttolerationseconds/admission.go: Admit

use super::Object;
use serde_json::{json, Value};

pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` (kube's defaults).
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// Whether `tolerations` already tolerate `key`'s NoExecute taint.
fn tolerates(tolerations: &[Value], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let field = |name: &str| t.get(name).and_then(Value::as_str).unwrap_or("");
        (field("key") == key || field("key").is_empty())
            && (field("effect") == "NoExecute" || field("effect").is_empty())
    })
}

pub fn admit(pod: &mut Object) {
    let Some(spec) = super::map_mut(pod, &["spec"]) else { return };
    let existing: Vec<Value> = spec.get("tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut tolerations = existing.clone();
    for key in [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE] {
        if !tolerates(&existing, key) {
            // helper.AddOrUpdateTolerationInPod: appended (none matches it yet).
            tolerations.push(json!({
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }));
        }
    }
    if tolerations.len() != existing.len() {
        spec.insert("tolerations".into(), Value::Array(tolerations));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(tolerations: Value) -> Object {
        json!({"spec": {"containers": [{"name": "c"}], "tolerations": tolerations}}).as_object().cloned().unwrap()
    }

    fn keys(pod: &Object) -> Vec<String> {
        pod["spec"]["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| format!("{}:{}", t["key"].as_str().unwrap_or(""), t["tolerationSeconds"]))
            .collect()
    }

    #[test]
    fn adds_both_tolerations_to_a_pod_without_them() {
        let mut p = json!({"spec": {"containers": [{"name": "c"}]}}).as_object().cloned().unwrap();
        admit(&mut p);
        assert_eq!(keys(&p), ["node.kubernetes.io/not-ready:300", "node.kubernetes.io/unreachable:300"]);
        assert_eq!(p["spec"]["tolerations"][0]["operator"], "Exists");
        assert_eq!(p["spec"]["tolerations"][0]["effect"], "NoExecute");
    }

    #[test]
    fn keeps_what_already_tolerates() {
        // An Exists toleration with no key and effect NoExecute tolerates both
        // (as the fixture pod web-0 does).
        let mut p = pod(json!([{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]));
        admit(&mut p);
        assert_eq!(keys(&p), [":30"]);
        let mut p = pod(json!([{"key": TAINT_NODE_NOT_READY, "operator": "Exists", "tolerationSeconds": 10}]));
        admit(&mut p);
        assert_eq!(keys(&p), ["node.kubernetes.io/not-ready:10", "node.kubernetes.io/unreachable:300"]);
        let mut p = pod(json!([{"key": TAINT_NODE_UNREACHABLE, "effect": "NoSchedule"}]));
        admit(&mut p);
        assert_eq!(keys(&p).len(), 3, "a NoSchedule toleration does not count");
    }

    #[test]
    fn malformed_specs_do_not_panic() {
        let mut p = json!({"spec": "oops"}).as_object().cloned().unwrap();
        admit(&mut p);
        let mut p = json!({"spec": {"tolerations": [1, "x", null]}}).as_object().cloned().unwrap();
        admit(&mut p);
        // Items that are not objects read as empty tolerations (which
        // tolerate everything); decoding refuses such bodies first.
        assert_eq!(p["spec"]["tolerations"].as_array().unwrap().len(), 3);
    }
}
