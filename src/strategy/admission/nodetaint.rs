//! TaintNodesByCondition: a new Node gets the `node.kubernetes.io/not-ready`
//! NoSchedule taint unless it has a taint of that key and effect already
//! (the node lifecycle controller removes it once the node is Ready).
// plugin/pkg/admission/nodetaint/admission.go: Admit, addTaint (Taint.MatchTaint: key and effect)

use super::Object;
use serde_json::{json, Value};

pub fn admit(node: &mut Object) {
    let Some(spec) = super::map_mut(node, &["spec"]) else { return };
    let mut taints: Vec<Value> = spec.get("taints").and_then(Value::as_array).cloned().unwrap_or_default();
    let present = taints.iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(super::tolerations::TAINT_NODE_NOT_READY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if !present {
        taints.push(json!({"key": super::tolerations::TAINT_NODE_NOT_READY, "effect": "NoSchedule"}));
        spec.insert("taints".into(), Value::Array(taints));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_node_gets_the_not_ready_taint_once() {
        let mut node = json!({"spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]}})
            .as_object()
            .cloned()
            .unwrap();
        admit(&mut node);
        assert_eq!(
            node["spec"]["taints"],
            json!([
                {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
            ])
        );
        admit(&mut node);
        assert_eq!(node["spec"]["taints"].as_array().unwrap().len(), 2);
        let mut bare = Object::new();
        admit(&mut bare);
        assert_eq!(bare["spec"]["taints"][0]["key"], "node.kubernetes.io/not-ready");
    }
}
