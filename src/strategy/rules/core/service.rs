//! The Service strategy's update rule that is not a status split:
//! pkg/registry/core/service/strategy.go: PrepareForUpdate ->
//! dropTypeDependentFields. When an update changes a Service's type so that
//! a field no longer applies, and the writer left that field as it was
//! (so it was probably set by the server), the field is wiped; the
//! allocator then releases what it held (cluster IPs, node ports).

use crate::strategy::defaults::core::fields::{object_entry, str_of};
use crate::strategy::Object;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// dropTypeDependentFields of `object` (the new Service) against `old`.
pub fn drop_type_dependent_fields(object: &mut Object, old: &Object) {
    let empty = Object::new();
    let old_spec = old.get("spec").and_then(Value::as_object).unwrap_or(&empty).clone();
    let Some(spec) = object_entry(object, "spec") else {
        return;
    };
    let old_type = str_of(&old_spec, "type").to_string();
    let new_type = str_of(spec, "type").to_string();
    let same = |spec: &Object, field: &str| same_value(old_spec.get(field), spec.get(field));
    // needsClusterIP: every type but ExternalName.
    if old_type != "ExternalName" && new_type == "ExternalName" {
        if same(spec, "clusterIP") && same(spec, "clusterIPs") {
            spec.shift_remove("clusterIP");
            spec.shift_remove("clusterIPs");
        }
        for field in ["ipFamilies", "ipFamilyPolicy"] {
            if same(spec, field) {
                spec.shift_remove(field);
            }
        }
    }
    // needsNodePort: NodePort and LoadBalancer; no net-new node port.
    let needs_node_port = |t: &str| matches!(t, "NodePort" | "LoadBalancer");
    if needs_node_port(&old_type) && !needs_node_port(&new_type) && node_ports(spec).is_subset(&node_ports(&old_spec)) {
        for port in spec.get_mut("ports").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(port) = port.as_object_mut() {
                port.shift_remove("nodePort");
            }
        }
    }
    // needsHCNodePort: LoadBalancer with externalTrafficPolicy Local.
    let needs_health_check =
        |s: &Object| str_of(s, "type") == "LoadBalancer" && str_of(s, "externalTrafficPolicy") == "Local";
    if needs_health_check(&old_spec) && !needs_health_check(spec) && same(spec, "healthCheckNodePort") {
        spec.shift_remove("healthCheckNodePort");
    }
    let leaving_load_balancer = old_type == "LoadBalancer" && new_type != "LoadBalancer";
    if leaving_load_balancer {
        let both_set = old_spec.get("allocateLoadBalancerNodePorts").is_some_and(|v| !v.is_null())
            && spec.get("allocateLoadBalancerNodePorts").is_some_and(|v| !v.is_null());
        if both_set && same(spec, "allocateLoadBalancerNodePorts") {
            spec.shift_remove("allocateLoadBalancerNodePorts");
        }
        // canSetLoadBalancerClass: LoadBalancer only.
        if same(spec, "loadBalancerClass") {
            spec.shift_remove("loadBalancerClass");
        }
    }
    // pkg/api/v1/service: ExternallyAccessible.
    let externally_accessible = |s: &Object| {
        let t = str_of(s, "type");
        matches!(t, "LoadBalancer" | "NodePort")
            || (t == "ClusterIP" && s.get("externalIPs").and_then(Value::as_array).is_some_and(|a| !a.is_empty()))
    };
    if externally_accessible(&old_spec) && !externally_accessible(spec) && same(spec, "externalTrafficPolicy") {
        spec.shift_remove("externalTrafficPolicy");
    }
    if leaving_load_balancer {
        // The load balancer's status no longer applies (kube-proxy routes by it).
        if let Some(status) = object_entry(object, "status") {
            status.insert("loadBalancer".into(), json!({}));
        }
    }
}

/// Go's comparison of a field in two Services: absent, null, "", 0 and []
/// are the zero value.
fn same_value(a: Option<&Value>, b: Option<&Value>) -> bool {
    let zero = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => n.as_i64() == Some(0),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    (zero(a) && zero(b)) || a == b
}

/// The non-zero node ports of a Service spec.
fn node_ports(spec: &Object) -> BTreeSet<i64> {
    let ports = spec.get("ports").and_then(Value::as_array).into_iter().flatten();
    ports.filter_map(|p| p.get("nodePort").and_then(Value::as_i64)).filter(|n| *n != 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop(new: Value, old: Value) -> Value {
        let mut object = new.as_object().cloned().unwrap_or_default();
        drop_type_dependent_fields(&mut object, old.as_object().unwrap_or(&Object::new()));
        Value::Object(object)
    }

    fn load_balancer() -> Value {
        json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30001, "allocateLoadBalancerNodePorts": true, "loadBalancerClass": "x",
            "ports": [{"port": 80, "nodePort": 30080}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}}})
    }

    // pkg/registry/core/service/strategy.go: dropTypeDependentFields, LoadBalancer -> ClusterIP.
    #[test]
    fn load_balancer_to_cluster_ip() {
        let mut new = load_balancer();
        new["spec"]["type"] = json!("ClusterIP");
        let got = drop(new, load_balancer());
        assert_eq!(
            got["spec"],
            json!({"type": "ClusterIP", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80}]})
        );
        assert_eq!(got["status"], json!({"loadBalancer": {}}));
    }

    // A field the writer changed is kept (validation judges it).
    #[test]
    fn changed_fields_are_kept() {
        let mut new = load_balancer();
        new["spec"]["type"] = json!("ExternalName");
        new["spec"]["clusterIP"] = json!("10.0.0.9");
        new["spec"]["ports"] = json!([{"port": 80, "nodePort": 30099}]);
        let got = drop(new, load_balancer());
        assert_eq!(got["spec"]["clusterIP"], "10.0.0.9");
        assert_eq!(got["spec"]["ports"][0]["nodePort"], 30099);
        assert!(got["spec"].get("ipFamilies").is_none());
    }

    // Same type: nothing is wiped.
    #[test]
    fn same_type_is_untouched() {
        let got = drop(load_balancer(), load_balancer());
        assert_eq!(got, load_balancer());
    }
}
