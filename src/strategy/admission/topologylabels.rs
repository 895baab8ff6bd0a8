//! PodTopologyLabels: a new pod created with `spec.nodeName` gets that
//! node's `topology.kubernetes.io/zone` and `topology.kubernetes.io/region`
//! labels, unless it has labels of those keys already. (kube also copies
//! them through the `binding` subresource, which Shardline does not serve.)
// plugin/pkg/admission/podtopologylabels/admission.go: admitPod, mergeLabels;
// the label keys as kube-apiserver v1.36 copies them:
// tests/fixtures/kube-v1.36/lists/core_v1_pods.json (web-0 on node-a)

use super::Object;
use serde_json::Value;

pub const TOPOLOGY_LABELS: [&str; 2] = ["topology.kubernetes.io/zone", "topology.kubernetes.io/region"];

/// The node a new pod is created on, if any.
pub fn node_name(pod: &Object) -> Option<&str> {
    super::text_opt(pod, &["spec", "nodeName"]).filter(|n| !n.is_empty())
}

pub fn admit(pod: &mut Object, node: Option<&Object>) {
    let Some(node_labels) = node.and_then(|n| super::map(n, &["metadata", "labels"])) else { return };
    let copied: Vec<(String, Value)> =
        TOPOLOGY_LABELS.iter().filter_map(|key| Some((key.to_string(), node_labels.get(*key)?.clone()))).collect();
    if copied.is_empty() {
        return;
    }
    let Some(labels) = super::map_mut(pod, &["metadata", "labels"]) else { return };
    for (key, value) in copied {
        labels.entry(key).or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_on_a_node_gets_its_topology_labels() {
        // tests/fixtures/kube-v1.36/lists/core_v1_nodes.json: node-a.
        let node = json!({"metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "z1"}}})
            .as_object()
            .cloned()
            .unwrap();
        let mut pod = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"nodeName": "node-a"}})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(node_name(&pod), Some("node-a"));
        admit(&mut pod, Some(&node));
        assert_eq!(pod["metadata"]["labels"], json!({"app": "web", "topology.kubernetes.io/zone": "z1"}));
        let mut own =
            json!({"metadata": {"labels": {"topology.kubernetes.io/zone": "mine"}}}).as_object().cloned().unwrap();
        admit(&mut own, Some(&node));
        assert_eq!(own["metadata"]["labels"]["topology.kubernetes.io/zone"], "mine");
        let mut unlabeled = Object::new();
        admit(&mut unlabeled, None);
        assert!(unlabeled.is_empty());
    }
}
