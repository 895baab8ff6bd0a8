//! The Node authorizer: what a kubelet (`system:node:NAME` in `system:nodes`)
//! may do, by the rules of kube-apiserver's Node authorization mode, decided
//! from a graph of the pods bound to each node and the objects they use.
//!
//! [`NodeGraph`] is maintained from committed entries the way the RBAC index
//! is (every shard applies every pod and volume attachment entry; no I/O).
//! It holds only pods with `spec.nodeName` set, each with the secrets,
//! configmaps, persistent volume claims, resource claims and service account
//! it refers to, and a reverse index from each referred object to the nodes
//! whose pods refer to it (with a count, so that one pod's deletion does not
//! hide another's reference). Its size is bounded by the stored pods.
//!
//! [`authorize`] returns [`Decision::Allow`] or [`Decision::NoOpinion`]
//! with kube's reason; a `NoOpinion` goes on to the next authorizer of the
//! chain (RBAC, then whatever `authz` adds after it).
//!
//! Persistent volumes join the graph as kube's do: a PersistentVolume is
//! reached through the claim its `spec.claimRef` names (node -> pod -> PVC
//! <- PV), and the secrets its volume source names for the kubelet (kube's
//! `VisitPVSecretNames` with `kubeletVisible`: not the CSI controller's
//! secrets) through that PersistentVolume.
//!
//! Architecture invariant: a node reaches an object only through a pod bound
//! to it; an entry that does not parse removes what its key held (it grants
//! nothing). Not modelled yet: resource slices.

use std::collections::HashMap;

use super::{Attributes, UserInfo};

/// The group every kubelet is in.
pub const NODES_GROUP: &str = "system:nodes";
/// The prefix of a kubelet's user name.
pub const NODE_USER_PREFIX: &str = "system:node:";
/// The namespace of node leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// One authorizer's answer (kube's `authorizer.Decision` plus reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Refused by nobody; the next authorizer decides. The reason (possibly
    /// empty) is appended to the 403 message if no one allows.
    NoOpinion(String),
}

/// The kinds of objects a pod refers to.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Referred {
    Secret,
    ConfigMap,
    PersistentVolumeClaim,
    ResourceClaim,
    ServiceAccount,
}

type ObjectName = (Referred, String, String);

#[derive(Clone, Debug)]
struct BoundPod {
    node: String,
    references: Vec<ObjectName>,
}

/// One shard's node graph. Cloned copy-on-write by the runtime.
#[derive(Clone, Debug, Default)]
pub struct NodeGraph {
    /// (namespace, name) of each pod with `spec.nodeName`.
    pods: HashMap<(String, String), BoundPod>,
    /// Each referred object -> node -> number of that node's pods referring to it.
    referred: HashMap<ObjectName, HashMap<String, u32>>,
    /// VolumeAttachment name -> `spec.nodeName`.
    volume_attachments: HashMap<String, String>,
    /// PersistentVolume name -> its claim and the secrets it gives the kubelet.
    persistent_volumes: HashMap<String, BoundVolume>,
    /// Secret (namespace, name) -> the PersistentVolumes naming it.
    volume_secrets: HashMap<(String, String), Vec<String>>,
}

/// What the graph keeps of a PersistentVolume with a `claimRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BoundVolume {
    /// (namespace, name) of `spec.claimRef`.
    claim: (String, String),
    /// (namespace, name) of each kubelet-visible secret.
    secrets: Vec<(String, String)>,
}

/// Whether a log key holds an object the graph follows.
pub fn is_node_graph_key(key: &[u8]) -> bool {
    crate::types::key::group_resource(key).is_some_and(|(group, resource)| {
        matches!((group, resource), ("", "pods") | ("", "persistentvolumes") | ("storage.k8s.io", "volumeattachments"))
    })
}

impl NodeGraph {
    /// Applies one committed change (`None` is a delete).
    pub fn apply(&mut self, key: &[u8], value: Option<&[u8]>) {
        let Some(key) = crate::types::key::ObjectKey::decode(key) else { return };
        let object = value.and_then(|v| serde_json::from_slice::<serde_json::Value>(v).ok());
        match (key.group.as_str(), key.resource.as_str()) {
            ("", "pods") => {
                let named = (key.namespace.clone(), key.name.clone());
                self.remove_pod(&named);
                if let Some(pod) = object.as_ref().and_then(|o| bound_pod(&key.namespace, &key.name, o)) {
                    for reference in &pod.references {
                        *self.referred.entry(reference.clone()).or_default().entry(pod.node.clone()).or_default() += 1;
                    }
                    self.pods.insert(named, pod);
                }
            }
            ("", "persistentvolumes") => {
                self.remove_volume(&key.name);
                if let Some(volume) = object.as_ref().and_then(bound_volume) {
                    for secret in &volume.secrets {
                        self.volume_secrets.entry(secret.clone()).or_default().push(key.name.clone());
                    }
                    self.persistent_volumes.insert(key.name, volume);
                }
            }
            ("storage.k8s.io", "volumeattachments") => {
                let node = object.as_ref().and_then(|o| o.pointer("/spec/nodeName")).and_then(|n| n.as_str());
                match node {
                    Some(node) if !node.is_empty() => {
                        self.volume_attachments.insert(key.name, node.to_string());
                    }
                    _ => {
                        self.volume_attachments.remove(&key.name);
                    }
                }
            }
            _ => {}
        }
    }

    fn remove_pod(&mut self, named: &(String, String)) {
        let Some(old) = self.pods.remove(named) else { return };
        for reference in old.references {
            if let Some(nodes) = self.referred.get_mut(&reference) {
                if let Some(count) = nodes.get_mut(&old.node) {
                    *count -= 1;
                    if *count == 0 {
                        nodes.remove(&old.node);
                    }
                }
                if nodes.is_empty() {
                    self.referred.remove(&reference);
                }
            }
        }
    }

    fn remove_volume(&mut self, name: &str) {
        let Some(old) = self.persistent_volumes.remove(name) else { return };
        for secret in old.secrets {
            if let Some(volumes) = self.volume_secrets.get_mut(&secret) {
                volumes.retain(|v| v != name);
                if volumes.is_empty() {
                    self.volume_secrets.remove(&secret);
                }
            }
        }
    }

    /// Whether a pod bound to `node` refers to the object (a secret also
    /// through a PersistentVolume bound to a claim such a pod uses).
    pub fn has_path(&self, node: &str, kind: Referred, namespace: &str, name: &str) -> bool {
        let direct = self
            .referred
            .get(&(kind, namespace.to_string(), name.to_string()))
            .is_some_and(|nodes| nodes.contains_key(node));
        direct
            || (kind == Referred::Secret
                && self
                    .volume_secrets
                    .get(&(namespace.to_string(), name.to_string()))
                    .is_some_and(|volumes| volumes.iter().any(|v| self.volume_on(node, v))))
    }

    /// Whether the PersistentVolume's claim is used by a pod bound to `node`.
    fn volume_on(&self, node: &str, volume: &str) -> bool {
        self.persistent_volumes
            .get(volume)
            .is_some_and(|v| self.has_path(node, Referred::PersistentVolumeClaim, &v.claim.0, &v.claim.1))
    }

    fn pod_on(&self, node: &str, namespace: &str, name: &str) -> bool {
        self.pods.get(&(namespace.to_string(), name.to_string())).is_some_and(|p| p.node == node)
    }

    /// Number of pods bound to a node that the graph holds (for tests and metrics).
    pub fn pods_len(&self) -> usize {
        self.pods.len()
    }
}

/// A pod's node and references; None when it is not bound to a node.
fn bound_pod(namespace: &str, pod_name: &str, pod: &serde_json::Value) -> Option<BoundPod> {
    let spec = pod.get("spec")?;
    let node = spec.get("nodeName")?.as_str().filter(|n| !n.is_empty())?.to_string();
    let mut references: Vec<ObjectName> = Vec::new();
    let mut add = |kind: Referred, name: Option<&serde_json::Value>| {
        if let Some(name) = name.and_then(|n| n.as_str()).filter(|n| !n.is_empty()) {
            let entry = (kind, namespace.to_string(), name.to_string());
            if !references.contains(&entry) {
                references.push(entry);
            }
        }
    };
    let items = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_array()).cloned().unwrap_or_default();
    add(Referred::ServiceAccount, spec.get("serviceAccountName").or_else(|| spec.get("serviceAccount")));
    for secret in items(spec.get("imagePullSecrets")) {
        add(Referred::Secret, secret.get("name"));
    }
    for field in ["containers", "initContainers", "ephemeralContainers"] {
        for container in items(spec.get(field)) {
            for from in items(container.get("envFrom")) {
                add(Referred::Secret, from.pointer("/secretRef/name"));
                add(Referred::ConfigMap, from.pointer("/configMapRef/name"));
            }
            for env in items(container.get("env")) {
                add(Referred::Secret, env.pointer("/valueFrom/secretKeyRef/name"));
                add(Referred::ConfigMap, env.pointer("/valueFrom/configMapKeyRef/name"));
            }
        }
    }
    for volume in items(spec.get("volumes")) {
        add(Referred::Secret, volume.pointer("/secret/secretName"));
        add(Referred::ConfigMap, volume.pointer("/configMap/name"));
        add(Referred::PersistentVolumeClaim, volume.pointer("/persistentVolumeClaim/claimName"));
        for source in items(volume.pointer("/projected/sources")) {
            add(Referred::Secret, source.pointer("/secret/name"));
            add(Referred::ConfigMap, source.pointer("/configMap/name"));
        }
        // Secret references of volume plugins (kube's VisitPodSecretNames).
        for pointer in [
            "/csi/nodePublishSecretRef/name",
            "/azureFile/secretName",
            "/cephfs/secretRef/name",
            "/cinder/secretRef/name",
            "/flexVolume/secretRef/name",
            "/iscsi/secretRef/name",
            "/rbd/secretRef/name",
            "/scaleIO/secretRef/name",
            "/storageos/secretRef/name",
        ] {
            add(Referred::Secret, volume.pointer(pointer));
        }
        // A generic ephemeral volume's claim is named POD-VOLUME.
        if volume.get("ephemeral").is_some() {
            if let Some(volume_name) = volume.get("name").and_then(|n| n.as_str()) {
                add(
                    Referred::PersistentVolumeClaim,
                    Some(&serde_json::Value::String(format!("{pod_name}-{volume_name}"))),
                );
            }
        }
    }
    for claim in items(spec.get("resourceClaims")) {
        add(Referred::ResourceClaim, claim.get("resourceClaimName"));
    }
    for claim in items(pod.pointer("/status/resourceClaimStatuses")) {
        add(Referred::ResourceClaim, claim.get("resourceClaimName"));
    }
    Some(BoundPod { node, references })
}

/// A PersistentVolume's claim and kubelet-visible secrets; None without a
/// `claimRef` (kube adds its edges only then).
fn bound_volume(pv: &serde_json::Value) -> Option<BoundVolume> {
    let spec = pv.get("spec")?;
    let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).unwrap_or("").to_string();
    let claim = spec.get("claimRef")?;
    let claim_namespace = text(claim.get("namespace"));
    let claim = (claim_namespace.clone(), text(claim.get("name")));
    let mut secrets = Vec::new();
    let mut add = |namespace: String, name: String| {
        if !name.is_empty() && !secrets.contains(&(namespace.clone(), name.clone())) {
            secrets.push((namespace, name));
        }
    };
    // A secret reference's namespace, else the claim's (PVs persisted before
    // secret references had namespaces).
    let or_claim = |ns: String| if ns.is_empty() { claim_namespace.clone() } else { ns };
    if let Some(azure) = spec.get("azureFile") {
        add(or_claim(text(azure.get("secretNamespace"))), text(azure.get("secretName")));
    } else if let Some(source) = ["cephfs", "flexVolume", "rbd", "scaleIO", "iscsi"].iter().find_map(|f| spec.get(*f)) {
        if let Some(secret) = source.get("secretRef") {
            add(or_claim(text(secret.get("namespace"))), text(secret.get("name")));
        }
    } else if let Some(source) = ["cinder", "storageos"].iter().find_map(|f| spec.get(*f)) {
        if let Some(secret) = source.get("secretRef") {
            add(text(secret.get("namespace")), text(secret.get("name")));
        }
    } else if let Some(csi) = spec.get("csi") {
        // The controller's secrets are not the kubelet's.
        for field in ["nodePublishSecretRef", "nodeStageSecretRef"] {
            if let Some(secret) = csi.get(field) {
                add(text(secret.get("namespace")), text(secret.get("name")));
            }
        }
    }
    Some(BoundVolume { claim, secrets })
}

/// The node a user is, when it is one (kube's `NodeIdentity`): Some("") for
/// a member of `system:nodes` whose name does not say which node.
pub fn node_identity(user: &UserInfo) -> Option<&str> {
    if !user.in_group(NODES_GROUP) {
        return None;
    }
    Some(user.name.strip_prefix(NODE_USER_PREFIX).unwrap_or(""))
}

/// The Node authorizer's decision. `field_selector` holds the request's
/// `fieldSelector` equality requirements (key, value).
pub fn authorize(graph: &NodeGraph, user: &UserInfo, a: &Attributes) -> Decision {
    let no = |reason: String| Decision::NoOpinion(reason);
    let Some(node) = node_identity(user) else { return no(String::new()) };
    if node.is_empty() {
        return no(format!("unknown node for user {:?}", user.name));
    }
    if !a.resource_request {
        return no(String::new());
    }
    let related = |kind: Referred| -> Decision {
        if a.name.is_empty() {
            return no("No Object name found".into());
        }
        if graph.has_path(node, kind, &a.namespace, &a.name) {
            Decision::Allow
        } else {
            no(format!("no relationship found between node '{node}' and this object"))
        }
    };
    let get_only = |kind: Referred| -> Decision {
        if a.verb != "get" {
            return no("can only get individual resources of this type".into());
        }
        if !a.subresource.is_empty() {
            return no("cannot get subresource".into());
        }
        related(kind)
    };
    // A get of one cluster-scoped object the node reaches when `reaches` says so.
    let get_cluster_scoped = |reaches: &dyn Fn(&str) -> bool| -> Decision {
        if a.verb != "get" {
            return no("can only get individual resources of this type".into());
        }
        if !a.subresource.is_empty() {
            return no("cannot get subresource".into());
        }
        if a.name.is_empty() {
            return no("No Object name found".into());
        }
        if reaches(&a.name) {
            Decision::Allow
        } else {
            no(format!("no relationship found between node '{node}' and this object"))
        }
    };
    let read_namespaced = |kind: Referred| -> Decision {
        if !matches!(a.verb.as_str(), "get" | "list" | "watch") {
            return no("can only read resources of this type".into());
        }
        if !a.subresource.is_empty() {
            return no("cannot read subresource".into());
        }
        if a.namespace.is_empty() {
            return no("can only read namespaced object of this type".into());
        }
        related(kind)
    };
    match (a.api_group.as_str(), a.resource.as_str()) {
        ("", "secrets") => read_namespaced(Referred::Secret),
        ("", "configmaps") => read_namespaced(Referred::ConfigMap),
        ("", "persistentvolumeclaims") => {
            if a.subresource == "status" {
                if !matches!(a.verb.as_str(), "update" | "patch") {
                    return no("can only get/update/patch this type".into());
                }
                return related(Referred::PersistentVolumeClaim);
            }
            get_only(Referred::PersistentVolumeClaim)
        }
        ("", "persistentvolumes") => get_cluster_scoped(&|name| graph.volume_on(node, name)),
        ("resource.k8s.io", "resourceclaims") => get_only(Referred::ResourceClaim),
        ("storage.k8s.io", "volumeattachments") => {
            get_cluster_scoped(&|name| graph.volume_attachments.get(name).is_some_and(|owner| owner == node))
        }
        ("", "serviceaccounts") => {
            if a.verb != "create" || a.name.is_empty() {
                return no("can only create tokens for individual service accounts".into());
            }
            if a.subresource != "token" {
                return no("can only create token subresource of serviceaccount".into());
            }
            related(Referred::ServiceAccount)
        }
        ("coordination.k8s.io", "leases") => {
            if !matches!(a.verb.as_str(), "get" | "create" | "update" | "patch" | "delete") {
                return no("can only get, create, update, patch, or delete a node lease".into());
            }
            if a.namespace != NODE_LEASE_NAMESPACE {
                return no(format!("can only access leases in the {NODE_LEASE_NAMESPACE:?} system namespace"));
            }
            if a.verb != "create" && a.name != node {
                return no("can only access node lease with the same name as the requesting node".into());
            }
            Decision::Allow
        }
        ("storage.k8s.io", "csinodes") => {
            if !matches!(a.verb.as_str(), "get" | "create" | "update" | "patch" | "delete") {
                return no("can only get, create, update, patch, or delete a CSINode".into());
            }
            if !a.subresource.is_empty() {
                return no("cannot authorize CSINode subresources".into());
            }
            if a.verb != "create" && a.name != node {
                return no("can only access CSINode with the same name as the requesting node".into());
            }
            Decision::Allow
        }
        ("", "nodes") => match (a.subresource.as_str(), a.verb.as_str()) {
            // NodeRestriction limits these writes to the node's own object.
            ("", "create" | "update" | "patch") | ("status", "update" | "patch") => Decision::Allow,
            ("", "get" | "list" | "watch") => {
                if a.name == node {
                    Decision::Allow
                } else if a.name.is_empty() {
                    no(format!("node '{node}' cannot read all nodes, only its own Node object"))
                } else {
                    no(format!("node '{node}' cannot read '{}', only its own Node object", a.name))
                }
            }
            _ => no(String::new()),
        },
        ("", "pods") => match (a.subresource.as_str(), a.verb.as_str()) {
            ("", "get") => {
                if a.name.is_empty() {
                    return no("No Object name found".into());
                }
                if graph.pod_on(node, &a.namespace, &a.name) {
                    Decision::Allow
                } else {
                    no(format!("no relationship found between node '{node}' and this object"))
                }
            }
            ("", "list" | "watch") => {
                if a.field_selector.iter().any(|(k, v)| k == "spec.nodeName" && v == node) {
                    Decision::Allow
                } else if !a.name.is_empty() && graph.pod_on(node, &a.namespace, &a.name) {
                    Decision::Allow
                } else if !a.name.is_empty() {
                    no(format!("no relationship found between node '{node}' and this object"))
                } else {
                    no("can only list/watch pods with spec.nodeName field selector".into())
                }
            }
            // Mirror pods, pod status and evictions; NodeRestriction limits
            // them to pods bound to the node.
            ("", "create" | "delete") | ("status", "update" | "patch") | ("eviction", "create") => Decision::Allow,
            _ => no(String::new()),
        },
        // Other resources: kube evaluates the `system:node` bootstrap rules
        // here; RBAC (next in the chain) holds them as the `system:node`
        // ClusterRole when a binding grants it.
        _ => no(String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::key::ObjectKey;
    use serde_json::json;

    fn key(group: &str, resource: &str, namespace: &str, name: &str) -> Vec<u8> {
        ObjectKey { group: group.into(), resource: resource.into(), namespace: namespace.into(), name: name.into() }
            .encode()
            .to_vec()
    }

    fn put_pod(graph: &mut NodeGraph, name: &str, node: &str, spec_extra: serde_json::Value) {
        let mut spec = json!({"nodeName": node, "containers": [{"name": "c", "image": "i"}]});
        for (k, v) in spec_extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let pod = json!({"metadata": {"name": name, "namespace": "ns"}, "spec": spec});
        graph.apply(&key("", "pods", "ns", name), Some(&serde_json::to_vec(&pod).unwrap()));
    }

    fn kubelet(node: &str) -> UserInfo {
        UserInfo::authenticated(format!("system:node:{node}"), String::new(), vec![NODES_GROUP.into()])
    }

    fn attrs(verb: &str, group: &str, resource: &str, namespace: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn a_node_reads_what_its_pods_use_and_nothing_else() {
        let mut graph = NodeGraph::default();
        put_pod(
            &mut graph,
            "p1",
            "n1",
            json!({
                "serviceAccountName": "sa1",
                "imagePullSecrets": [{"name": "pull"}],
                "volumes": [
                    {"name": "v", "secret": {"secretName": "vol-secret"}},
                    {"name": "cm", "configMap": {"name": "vol-cm"}},
                    {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "eph", "ephemeral": {"volumeClaimTemplate": {}}},
                    {"name": "proj", "projected": {"sources": [{"secret": {"name": "proj-secret"}}, {"configMap": {"name": "proj-cm"}}]}}
                ],
                "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "eph-secret"}}]}],
                "initContainers": [{"name": "i", "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}}]}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
            }),
        );
        put_pod(&mut graph, "p2", "n2", json!({"volumes": [{"name": "v", "secret": {"secretName": "other"}}]}));
        let n1 = kubelet("n1");
        for (resource, name) in [
            ("secrets", "pull"),
            ("secrets", "vol-secret"),
            ("secrets", "proj-secret"),
            ("secrets", "eph-secret"),
            ("configmaps", "vol-cm"),
            ("configmaps", "proj-cm"),
            ("configmaps", "env-cm"),
            ("persistentvolumeclaims", "data"),
            ("persistentvolumeclaims", "p1-eph"),
        ] {
            assert_eq!(authorize(&graph, &n1, &attrs("get", "", resource, "ns", name)), Decision::Allow, "{name}");
        }
        assert_eq!(
            authorize(&graph, &n1, &attrs("get", "resource.k8s.io", "resourceclaims", "ns", "gpu-claim")),
            Decision::Allow
        );
        let mut token = attrs("create", "", "serviceaccounts", "ns", "sa1");
        token.subresource = "token".into();
        assert_eq!(authorize(&graph, &n1, &token), Decision::Allow);
        // Watch of one secret by name is a read of it.
        assert_eq!(authorize(&graph, &n1, &attrs("watch", "", "secrets", "ns", "pull")), Decision::Allow);
        assert_eq!(
            authorize(&graph, &n1, &attrs("get", "", "secrets", "ns", "other")),
            Decision::NoOpinion("no relationship found between node 'n1' and this object".into())
        );
        assert_eq!(
            authorize(&graph, &n1, &attrs("list", "", "secrets", "ns", "")),
            Decision::NoOpinion("No Object name found".into())
        );
        assert_eq!(
            authorize(&graph, &n1, &attrs("delete", "", "secrets", "ns", "pull")),
            Decision::NoOpinion("can only read resources of this type".into())
        );
        // Not a node: no opinion, no reason.
        let alice = UserInfo::authenticated("alice".into(), String::new(), vec![]);
        assert_eq!(
            authorize(&graph, &alice, &attrs("get", "", "secrets", "ns", "pull")),
            Decision::NoOpinion("".into())
        );
        let nameless = UserInfo::authenticated("kubelet".into(), String::new(), vec![NODES_GROUP.into()]);
        assert!(
            matches!(authorize(&graph, &nameless, &attrs("get", "", "secrets", "ns", "pull")), Decision::NoOpinion(r) if r.contains("unknown node"))
        );
    }

    #[test]
    fn references_are_counted_and_removed_with_their_pods() {
        let mut graph = NodeGraph::default();
        let uses = json!({"volumes": [{"name": "v", "secret": {"secretName": "shared"}}]});
        put_pod(&mut graph, "a", "n1", uses.clone());
        put_pod(&mut graph, "b", "n1", uses.clone());
        let get = attrs("get", "", "secrets", "ns", "shared");
        graph.apply(&key("", "pods", "ns", "a"), None);
        assert_eq!(authorize(&graph, &kubelet("n1"), &get), Decision::Allow);
        // Moving to another node (or an update dropping the reference) takes it away.
        put_pod(&mut graph, "b", "n2", uses);
        assert!(matches!(authorize(&graph, &kubelet("n1"), &get), Decision::NoOpinion(_)));
        assert_eq!(authorize(&graph, &kubelet("n2"), &get), Decision::Allow);
        graph.apply(&key("", "pods", "ns", "b"), Some(b"not json"));
        assert!(matches!(authorize(&graph, &kubelet("n2"), &get), Decision::NoOpinion(_)));
        assert_eq!(graph.pods_len(), 0);
        assert!(graph.referred.is_empty());
        // Pods without a node are not held.
        let pending = json!({"metadata": {"name": "c"}, "spec": {"containers": []}});
        graph.apply(&key("", "pods", "ns", "c"), Some(&serde_json::to_vec(&pending).unwrap()));
        assert_eq!(graph.pods_len(), 0);
    }

    #[test]
    fn pods_nodes_leases_and_attachments() {
        let mut graph = NodeGraph::default();
        put_pod(&mut graph, "p1", "n1", json!({}));
        let n1 = kubelet("n1");
        let mut watch = attrs("watch", "", "pods", "", "");
        assert_eq!(
            authorize(&graph, &n1, &watch),
            Decision::NoOpinion("can only list/watch pods with spec.nodeName field selector".into())
        );
        watch.field_selector = vec![("spec.nodeName".into(), "n2".into())];
        assert!(matches!(authorize(&graph, &n1, &watch), Decision::NoOpinion(_)));
        watch.field_selector = vec![("spec.nodeName".into(), "n1".into())];
        assert_eq!(authorize(&graph, &n1, &watch), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &attrs("get", "", "pods", "ns", "p1")), Decision::Allow);
        assert!(matches!(
            authorize(&graph, &kubelet("n2"), &attrs("get", "", "pods", "ns", "p1")),
            Decision::NoOpinion(_)
        ));
        assert_eq!(authorize(&graph, &n1, &attrs("get", "", "nodes", "", "n1")), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &attrs("watch", "", "nodes", "", "n1")), Decision::Allow);
        assert_eq!(
            authorize(&graph, &n1, &attrs("get", "", "nodes", "", "n2")),
            Decision::NoOpinion("node 'n1' cannot read 'n2', only its own Node object".into())
        );
        assert_eq!(
            authorize(&graph, &n1, &attrs("list", "", "nodes", "", "")),
            Decision::NoOpinion("node 'n1' cannot read all nodes, only its own Node object".into())
        );
        let lease = |verb: &str, ns: &str, name: &str| attrs(verb, "coordination.k8s.io", "leases", ns, name);
        assert_eq!(authorize(&graph, &n1, &lease("update", NODE_LEASE_NAMESPACE, "n1")), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &lease("create", NODE_LEASE_NAMESPACE, "")), Decision::Allow);
        assert!(matches!(authorize(&graph, &n1, &lease("update", NODE_LEASE_NAMESPACE, "n2")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &lease("get", "default", "n1")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &lease("list", NODE_LEASE_NAMESPACE, "")), Decision::NoOpinion(_)));
        let va = serde_json::to_vec(&json!({"spec": {"nodeName": "n1"}})).unwrap();
        graph.apply(&key("storage.k8s.io", "volumeattachments", "", "va1"), Some(&va));
        let get_va = attrs("get", "storage.k8s.io", "volumeattachments", "", "va1");
        assert_eq!(authorize(&graph, &n1, &get_va), Decision::Allow);
        assert!(matches!(authorize(&graph, &kubelet("n2"), &get_va), Decision::NoOpinion(_)));
        graph.apply(&key("storage.k8s.io", "volumeattachments", "", "va1"), None);
        assert!(matches!(authorize(&graph, &n1, &get_va), Decision::NoOpinion(_)));
        assert_eq!(authorize(&graph, &n1, &attrs("get", "storage.k8s.io", "csinodes", "", "n1")), Decision::Allow);
        assert!(is_node_graph_key(&key("", "pods", "ns", "p")));
        assert!(is_node_graph_key(&key("", "persistentvolumes", "", "pv")));
        assert!(!is_node_graph_key(&key("", "secrets", "ns", "p")));
    }

    #[test]
    fn persistent_volumes_and_their_secrets_through_the_claims_of_a_nodes_pods() {
        let mut graph = NodeGraph::default();
        let put_pv = |graph: &mut NodeGraph, name: &str, pv: serde_json::Value| {
            graph.apply(&key("", "persistentvolumes", "", name), Some(&serde_json::to_vec(&pv).unwrap()));
        };
        put_pv(
            &mut graph,
            "pv-csi",
            json!({"spec": {"claimRef": {"namespace": "ns", "name": "data"},
                   "csi": {"driver": "d", "volumeHandle": "h",
                           "nodePublishSecretRef": {"namespace": "ns", "name": "publish"},
                           "nodeStageSecretRef": {"namespace": "storage", "name": "stage"},
                           "controllerPublishSecretRef": {"namespace": "ns", "name": "controller"}}}}),
        );
        put_pv(
            &mut graph,
            "pv-rbd",
            json!({"spec": {"claimRef": {"namespace": "ns", "name": "data"},
                   "rbd": {"monitors": ["m"], "image": "i", "secretRef": {"name": "ceph"}}}}),
        );
        put_pv(
            &mut graph,
            "pv-free",
            json!({"spec": {"csi": {"driver": "d", "volumeHandle": "h",
            "nodePublishSecretRef": {"namespace": "ns", "name": "free"}}}}),
        );
        let n1 = kubelet("n1");
        let get_pv = |name: &str| attrs("get", "", "persistentvolumes", "", name);
        let get_secret = |ns: &str, name: &str| attrs("get", "", "secrets", ns, name);
        // No pod uses the claim yet.
        assert!(matches!(authorize(&graph, &n1, &get_pv("pv-csi")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &get_secret("ns", "publish")), Decision::NoOpinion(_)));
        put_pod(
            &mut graph,
            "p",
            "n1",
            json!({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}),
        );
        assert_eq!(authorize(&graph, &n1, &get_pv("pv-csi")), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &get_pv("pv-rbd")), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &get_secret("ns", "publish")), Decision::Allow);
        assert_eq!(authorize(&graph, &n1, &get_secret("storage", "stage")), Decision::Allow);
        // A secret reference without a namespace is in the claim's.
        assert_eq!(authorize(&graph, &n1, &get_secret("ns", "ceph")), Decision::Allow);
        // The CSI controller's secret is not the kubelet's; an unbound PV is nobody's.
        assert!(matches!(authorize(&graph, &n1, &get_secret("ns", "controller")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &get_pv("pv-free")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &get_secret("ns", "free")), Decision::NoOpinion(_)));
        // Another node, a list, a write: no.
        assert!(matches!(authorize(&graph, &kubelet("n2"), &get_pv("pv-csi")), Decision::NoOpinion(_)));
        assert_eq!(
            authorize(&graph, &n1, &attrs("list", "", "persistentvolumes", "", "")),
            Decision::NoOpinion("can only get individual resources of this type".into())
        );
        // The PV deleted, or the pod gone: the paths go with them.
        graph.apply(&key("", "persistentvolumes", "", "pv-csi"), None);
        assert!(matches!(authorize(&graph, &n1, &get_secret("ns", "publish")), Decision::NoOpinion(_)));
        assert!(graph.volume_secrets.get(&("ns".to_string(), "publish".to_string())).is_none());
        graph.apply(&key("", "pods", "ns", "p"), None);
        assert!(matches!(authorize(&graph, &n1, &get_pv("pv-rbd")), Decision::NoOpinion(_)));
        assert!(matches!(authorize(&graph, &n1, &get_secret("ns", "ceph")), Decision::NoOpinion(_)));
    }
}
