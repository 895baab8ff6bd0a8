//! Defaults of the core (`v1`) group's kinds, and of the pod template every
//! workload embeds: what kube-apiserver v1.36's decoder does to a v1 object
//! before any strategy runs (the generated `SetObjectDefaults_*` of
//! pkg/apis/core/v1/zz_generated.defaults.go, the `SetDefaults_*` functions
//! of pkg/apis/core/v1/defaults.go, the `+default` markers of
//! staging/src/k8s.io/api/core/v1/types.go, and the v1 <-> internal
//! conversions with a visible effect, pkg/apis/core/v1/conversion.go).
//!
//! Not here: Service cluster IPs, IP families and node ports (allocation,
//! `strategy/allocate.rs`); status set on create (`rules/core`); resource
//! quantities' canonical spelling (decoding, `strategy/decode.rs`; the
//! milli round-up of `SetDefaults_ResourceList` is here, `resources.rs`);
//! the pod-level resources defaults of `SetDefaults_Pod` (PodLevelResources:
//! pod requests and limits from the containers' when `spec.resources` is
//! partly set), not done.
//!
//! Invariant: applying the defaults twice gives what applying them once
//! gives, so that an update's defaulted body compares equal to the stored
//! object when nothing changed.

pub(crate) mod fields;
mod image;
mod pod;
mod resources;
mod volume;

use crate::strategy::Object;
use base64::Engine;
use fields::{default_ptr, default_str, each_mut, object_entry, object_mut, str_of};
use serde_json::{json, Value};

/// Fills the defaults of a core object of `kind`.
pub fn apply(kind: &str, object: &mut Object) {
    match kind {
        "Pod" => pod::pod(object),
        "Service" => service(object),
        "Secret" => secret(object),
        "Namespace" => namespace(object),
        "Node" => node(object),
        "PersistentVolume" => persistent_volume(object),
        "PersistentVolumeClaim" => persistent_volume_claim(object),
        "Endpoints" => endpoints(object),
        "PodTemplate" => {
            if let Some(template) = object.get_mut("template") {
                pod_template_spec(template);
            }
        }
        "ReplicationController" => replication_controller(object),
        "LimitRange" => {
            for item in object_entry(object, "spec").into_iter().flat_map(|spec| each_mut(spec, "limits")) {
                limit_range_item(item);
            }
        }
        // ConfigMap (SetDefaults_ConfigMap makes a nil `data` an empty map,
        // which the encoding omits), Event and ServiceAccount: nothing
        // visible.
        _ => {}
    }
}

/// Defaults a `PodTemplateSpec` (`spec.template` of a workload), as kube
/// defaults the pod spec inside every template.
pub fn pod_template_spec(template: &mut Value) {
    let Some(template) = template.as_object_mut() else {
        return;
    };
    pod::drop_init_container_annotations(template);
    if let Some(spec) = object_entry(template, "spec") {
        pod::template_spec(spec);
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_ReplicationController (the
/// template's labels become the selector and the labels when those are
/// empty; one replica), and the template's pod defaults.
fn replication_controller(object: &mut Object) {
    let labels = object
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.is_object())
        .cloned();
    let is_empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(|m| m.is_empty());
    if let Some(labels) = labels {
        if is_empty(object.get("spec").and_then(|s| s.get("selector"))) {
            if let Some(spec) = object_entry(object, "spec") {
                spec.insert("selector".into(), labels.clone());
            }
        }
        if let Some(meta) = object_entry(object, "metadata") {
            if is_empty(meta.get("labels")) {
                meta.insert("labels".into(), labels);
            }
        }
    }
    let Some(spec) = object_entry(object, "spec") else { return };
    default_ptr(spec, "replicas", Value::from(1));
    if let Some(template) = spec.get_mut("template") {
        pod_template_spec(template);
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_LimitRangeItem: a Container
/// item's default limit falls back to its max, its default request to its
/// default limit, then to its min (empty maps are omitted).
fn limit_range_item(item: &mut Object) {
    if str_of(item, "type") != "Container" {
        return;
    }
    let resources = |item: &Object, key: &str| item.get(key).and_then(Value::as_object).cloned().unwrap_or_default();
    let (max, min) = (resources(item, "max"), resources(item, "min"));
    let mut default = resources(item, "default");
    for (k, v) in &max {
        default.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut request = resources(item, "defaultRequest");
    for (k, v) in default.iter().chain(min.iter()) {
        request.entry(k.clone()).or_insert_with(|| v.clone());
    }
    for (key, map) in [("default", default), ("defaultRequest", request)] {
        if !map.is_empty() {
            item.insert(key.into(), Value::Object(map));
        }
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Service, then the ports'
/// protocol (ServicePort.Protocol +default="TCP").
fn service(object: &mut Object) {
    let Some(spec) = object_entry(object, "spec") else {
        return;
    };
    default_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.shift_remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                // v1.DefaultClientIPServiceAffinitySeconds: three hours.
                spec.insert("sessionAffinityConfig".into(), json!({"clientIP": {"timeoutSeconds": 10800}}));
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    for port in each_mut(spec, "ports") {
        default_str(port, "protocol", "TCP");
        let unset =
            port.get("targetPort").is_none_or(|t| t.is_null() || t.as_i64() == Some(0) || t.as_str() == Some(""));
        if unset {
            let number = port.get("port").cloned().unwrap_or(json!(0));
            port.insert("targetPort".into(), number);
        }
    }
    let service_type = str_of(spec, "type").to_string();
    // pkg/api/v1/service: ExternallyAccessible
    let has_external_ips = spec.get("externalIPs").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    let externally_accessible = matches!(service_type.as_str(), "LoadBalancer" | "NodePort")
        || (service_type == "ClusterIP" && has_external_ips);
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(service_type.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default_ptr(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if service_type == "LoadBalancer" {
        default_ptr(spec, "allocateLoadBalancerNodePorts", json!(true));
        let ingress = object_mut(object, "status")
            .and_then(|s| object_mut(s, "loadBalancer"))
            .map(|lb| each_mut(lb, "ingress").collect::<Vec<_>>())
            .unwrap_or_default();
        for ingress in ingress {
            if !str_of(ingress, "ip").is_empty() {
                default_ptr(ingress, "ipMode", json!("VIP"));
            }
        }
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Secret (type Opaque), and
/// pkg/apis/core/v1/conversion.go: Convert_v1_Secret_To_core_Secret, which
/// writes every `stringData` entry over `data` (the v1 encoding has no
/// stringData on the way back, so it is never stored).
fn secret(object: &mut Object) {
    default_str(object, "type", "Opaque");
    let Some(Value::Object(string_data)) = object.shift_remove("stringData") else {
        return;
    };
    if string_data.is_empty() {
        return;
    }
    let Some(data) = object_entry(object, "data") else {
        return;
    };
    for (key, value) in string_data {
        let text = value.as_str().unwrap_or("");
        data.insert(key, json!(base64::engine::general_purpose::STANDARD.encode(text)));
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Namespace (the
/// `kubernetes.io/metadata.name` label, when the name is known) and
/// SetDefaults_NamespaceStatus (phase Active).
fn namespace(object: &mut Object) {
    namespace_name_label(object);
    if let Some(status) = object_entry(object, "status") {
        default_str(status, "phase", "Active");
    }
}

/// The `kubernetes.io/metadata.name` label set to the name (also kube's
/// namespace strategy's Canonicalize, for generated names).
pub fn namespace_name_label(object: &mut Object) {
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("").to_string();
    if name.is_empty() {
        return;
    }
    if let Some(labels) = object_entry(object, "metadata").and_then(|m| object_entry(m, "labels")) {
        labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_NodeStatus (allocatable =
/// capacity when unset); pkg/apis/core/v1/conversion.go:
/// Convert_v1_NodeSpec_To_core_NodeSpec (podCIDR authoritative, copied to
/// podCIDRs) and back (podCIDR = podCIDRs[0]).
fn node(object: &mut Object) {
    if let Some(spec) = object_mut(object, "spec") {
        let pod_cidr = str_of(spec, "podCIDR").to_string();
        let first = spec.get("podCIDRs").and_then(Value::as_array).and_then(|a| a.first()).cloned();
        match first {
            Some(first) if pod_cidr.is_empty() || first.as_str() == Some(&pod_cidr) => {
                spec.insert("podCIDR".into(), first);
            }
            _ if !pod_cidr.is_empty() => {
                spec.insert("podCIDRs".into(), json!([pod_cidr]));
            }
            _ => {}
        }
    }
    if let Some(status) = object_mut(object, "status") {
        let allocatable_unset = status.get("allocatable").is_none_or(Value::is_null);
        if allocatable_unset {
            if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
                status.insert("allocatable".into(), capacity);
            }
        }
        resources::round_up_list(status, "capacity");
        resources::round_up_list(status, "allocatable");
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_PersistentVolume (phase
/// Pending, reclaim policy Retain, volumeMode Filesystem) and the source
/// defaults the generated defaulter runs on its spec.
fn persistent_volume(object: &mut Object) {
    if let Some(spec) = object_entry(object, "spec") {
        default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        default_ptr(spec, "volumeMode", json!("Filesystem"));
        resources::round_up_list(spec, "capacity");
        volume::persistent_volume_source(spec);
    }
    if let Some(status) = object_entry(object, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_PersistentVolumeClaim (phase
/// Pending) and SetDefaults_PersistentVolumeClaimSpec (volumeMode
/// Filesystem).
fn persistent_volume_claim(object: &mut Object) {
    if let Some(spec) = object_entry(object, "spec") {
        volume::persistent_volume_claim_spec(spec);
    }
    if let Some(status) = object_entry(object, "status") {
        default_str(status, "phase", "Pending");
        resources::round_up_list(status, "capacity");
        resources::round_up_list(status, "allocatedResources");
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Endpoints (ports' protocol TCP).
fn endpoints(object: &mut Object) {
    for subset in each_mut(object, "subsets") {
        for port in each_mut(subset, "ports") {
            default_str(port, "protocol", "TCP");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(kind: &str, value: Value) -> Value {
        let mut object = value.as_object().cloned().unwrap_or_default();
        apply(kind, &mut object);
        Value::Object(object)
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Service
    #[test]
    fn service_defaults() {
        let s = defaulted(
            "Service",
            json!({"spec": {"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}}),
        );
        assert_eq!(
            s["spec"],
            json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
                "sessionAffinity": "None", "type": "ClusterIP", "internalTrafficPolicy": "Cluster"})
        );
        let s = defaulted("Service", json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 0}]}}));
        assert_eq!(s["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert!(s["spec"].get("allocateLoadBalancerNodePorts").is_none());
        let s = defaulted(
            "Service",
            json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "h"}]}}}),
        );
        assert_eq!(s["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(
            s["status"]["loadBalancer"]["ingress"],
            json!([{"ip": "1.2.3.4", "ipMode": "VIP"}, {"hostname": "h"}])
        );
        let s = defaulted("Service", json!({"spec": {"type": "ExternalName", "externalName": "x.example"}}));
        assert!(s["spec"].get("internalTrafficPolicy").is_none());
        assert!(s["spec"].get("externalTrafficPolicy").is_none());
        let s = defaulted("Service", json!({"spec": {"externalIPs": ["1.1.1.1"]}}));
        assert_eq!(s["spec"]["externalTrafficPolicy"], "Cluster");
        let s = defaulted("Service", json!({"spec": {"sessionAffinity": "ClientIP"}}));
        assert_eq!(s["spec"]["sessionAffinityConfig"], json!({"clientIP": {"timeoutSeconds": 10800}}));
        let s = defaulted("Service", json!({"spec": {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}}));
        assert!(s["spec"].get("sessionAffinityConfig").is_none(), "dropped with affinity None");
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Secret; conversion.go: stringData over data.
    #[test]
    fn secret_defaults_and_string_data() {
        let s =
            defaulted("Secret", json!({"data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "s3cr3t", "c": ""}}));
        assert_eq!(s, json!({"data": {"a": "eA==", "b": "czNjcjN0", "c": ""}, "type": "Opaque"}));
        let s = defaulted("Secret", json!({"type": "kubernetes.io/basic-auth"}));
        assert_eq!(s, json!({"type": "kubernetes.io/basic-auth"}));
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Namespace, SetDefaults_NamespaceStatus
    #[test]
    fn namespace_defaults() {
        let n = defaulted(
            "Namespace",
            json!({"metadata": {"name": "team", "labels": {"a": "b", "kubernetes.io/metadata.name": "x"}}}),
        );
        assert_eq!(n["metadata"]["labels"], json!({"a": "b", "kubernetes.io/metadata.name": "team"}));
        assert_eq!(n["status"], json!({"phase": "Active"}));
        let n = defaulted("Namespace", json!({"metadata": {"generateName": "team-"}}));
        assert!(n["metadata"].get("labels").is_none(), "no name, no label");
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_NodeStatus; conversion.go: NodeSpec podCIDR(s)
    #[test]
    fn node_defaults() {
        let n = defaulted("Node", json!({"spec": {"podCIDR": "10.0.0.0/24"}, "status": {"capacity": {"cpu": "4"}}}));
        assert_eq!(n["spec"]["podCIDRs"], json!(["10.0.0.0/24"]));
        assert_eq!(n["status"]["allocatable"], json!({"cpu": "4"}));
        let n = defaulted("Node", json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}));
        assert_eq!(n["spec"]["podCIDR"], "10.0.0.0/24");
        // podCIDR is authoritative when both are set and differ.
        let n = defaulted("Node", json!({"spec": {"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.0.0.0/24"]}}));
        assert_eq!(n["spec"]["podCIDRs"], json!(["10.1.0.0/24"]));
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_PersistentVolume, SetDefaults_PersistentVolumeClaim(Spec)
    #[test]
    fn volume_defaults() {
        let pv = defaulted("PersistentVolume", json!({"spec": {"hostPath": {"path": "/d"}}}));
        assert_eq!(
            pv["spec"],
            json!({"hostPath": {"path": "/d", "type": ""}, "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"})
        );
        assert_eq!(pv["status"], json!({"phase": "Pending"}));
        let pvc = defaulted("PersistentVolumeClaim", json!({"spec": {"volumeMode": "Block"}}));
        assert_eq!(pvc["spec"]["volumeMode"], "Block");
        assert_eq!(pvc["status"]["phase"], "Pending");
    }

    // zz_generated.defaults.go: SetDefaults_ResourceList on PV, PVC and Node lists.
    #[test]
    fn resource_lists_rounded() {
        let pv = defaulted("PersistentVolume", json!({"spec": {"capacity": {"storage": "100u"}}}));
        assert_eq!(pv["spec"]["capacity"]["storage"], "1m");
        let pvc =
            defaulted("PersistentVolumeClaim", json!({"spec": {"resources": {"requests": {"storage": "0.0001"}}}}));
        assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1m");
        let node = defaulted("Node", json!({"status": {"capacity": {"cpu": "1n"}}}));
        assert_eq!(node["status"]["allocatable"]["cpu"], "1m");
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Endpoints
    #[test]
    fn endpoints_defaults() {
        let e =
            defaulted("Endpoints", json!({"subsets": [{"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}]}));
        assert_eq!(e["subsets"][0]["ports"], json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]));
    }

    // A workload's template gets the pod spec defaults, not the Pod-only ones.
    #[test]
    fn template_defaults() {
        let mut template =
            json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        pod_template_spec(&mut template);
        assert_eq!(template["spec"]["restartPolicy"], "Always");
        assert_eq!(template["spec"]["containers"][0]["imagePullPolicy"], "Always");
        assert!(template["spec"].get("enableServiceLinks").is_none());
        let mut not_an_object = json!("x");
        pod_template_spec(&mut not_an_object);
        assert_eq!(not_an_object, json!("x"));
    }

    // Defaulting twice changes nothing more (the module's invariant).
    #[test]
    fn idempotent() {
        for (kind, body) in [
            (
                "Pod",
                json!({"spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 1}], "resources": {"limits": {"cpu": "1"}}}], "volumes": [{"name": "v"}]}}),
            ),
            ("Service", json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 1}]}})),
            ("Secret", json!({"stringData": {"a": "b"}})),
            ("Node", json!({"spec": {"podCIDR": "10.0.0.0/24"}})),
        ] {
            let once = defaulted(kind, body);
            assert_eq!(defaulted(kind, once.clone()), once, "{kind}");
        }
    }
}
