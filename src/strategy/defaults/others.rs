//! Defaults of the kinds of the smaller groups (coordination, networking,
//! policy, storage, scheduling, discovery, events, autoscaling, ...), one
//! arm per kind: kube-apiserver v1.36's `pkg/apis/<group>/<version>/defaults.go`
//! (`SetDefaults_*`) and `+default` markers, field for field.
//!
//! Kinds without an arm have no defaults in kube (coordination.k8s.io Lease,
//! policy PodDisruptionBudget, node RuntimeClass, events.k8s.io Event,
//! certificates CertificateSigningRequest, apps ControllerRevision,
//! networking Ingress, IngressClass, ServiceCIDR and IPAddress,
//! apiregistration APIService, storage CSINode, VolumeAttachment,
//! VolumeAttributesClass and CSIStorageCapacity), or defaults this file
//! leaves out (written in docs/types.md).
//!
//! Invariant: no input panics; a field of the wrong JSON type is left alone.

use super::core::fields::{default_ptr, default_str, each_mut, object_entry, object_mut, str_of};
use crate::strategy::Object;
use serde_json::{json, Value};

pub fn apply(group: &str, kind: &str, object: &mut Object) {
    match (group, kind) {
        // pkg/apis/scheduling/v1/defaults.go: SetDefaults_PriorityClass.
        ("scheduling.k8s.io", "PriorityClass") => default_str(object, "preemptionPolicy", "PreemptLowerPriority"),
        // pkg/apis/storage/v1/defaults.go: SetDefaults_StorageClass.
        ("storage.k8s.io", "StorageClass") => {
            default_str(object, "reclaimPolicy", "Delete");
            default_str(object, "volumeBindingMode", "Immediate");
        }
        // pkg/apis/storage/v1/defaults.go: SetDefaults_CSIDriver (with the
        // SELinuxMountReadWriteOncePod gate on, as in v1.36).
        ("storage.k8s.io", "CSIDriver") => {
            let Some(spec) = object_entry(object, "spec") else { return };
            default_ptr(spec, "attachRequired", json!(true));
            default_ptr(spec, "podInfoOnMount", json!(false));
            default_ptr(spec, "storageCapacity", json!(false));
            default_ptr(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
            if spec.get("volumeLifecycleModes").and_then(Value::as_array).is_none_or(Vec::is_empty) {
                spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
            }
            default_ptr(spec, "requiresRepublish", json!(false));
            default_ptr(spec, "seLinuxMount", json!(false));
        }
        ("autoscaling", "HorizontalPodAutoscaler") => horizontal_pod_autoscaler(object),
        // pkg/apis/networking/v1/defaults.go: SetDefaults_NetworkPolicyPort
        // and SetDefaults_NetworkPolicy.
        ("networking.k8s.io", "NetworkPolicy") => network_policy(object),
        // pkg/apis/discovery/v1/defaults.go: SetDefaults_EndpointPort.
        ("discovery.k8s.io", "EndpointSlice") => {
            for port in each_mut(object, "ports") {
                default_ptr(port, "name", json!(""));
                default_ptr(port, "protocol", json!("TCP"));
            }
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
            let mutating = kind == "MutatingWebhookConfiguration";
            for webhook in each_mut(object, "webhooks") {
                webhook_defaults(webhook, mutating);
            }
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy") => {
            let mutating = kind == "MutatingAdmissionPolicy";
            let Some(spec) = object_entry(object, "spec") else { return };
            default_ptr(spec, "failurePolicy", json!("Fail"));
            if let Some(constraints) = object_mut(spec, "matchConstraints") {
                match_resources(constraints);
            }
            if mutating {
                default_ptr(spec, "reinvocationPolicy", json!("Never"));
            }
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding") => {
            let Some(spec) = object_mut(object, "spec") else { return };
            if let Some(resources) = object_mut(spec, "matchResources") {
                match_resources(resources);
            }
            if let Some(param_ref) = object_mut(spec, "paramRef") {
                default_ptr(param_ref, "parameterNotFoundAction", json!("Deny"));
            }
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => {
            // pkg/apis/flowcontrol/v1/defaults.go: SetDefaults_FlowSchemaSpec.
            if let Some(spec) = object_entry(object, "spec") {
                if spec.get("matchingPrecedence").and_then(Value::as_i64).unwrap_or(0) == 0 {
                    spec.insert("matchingPrecedence".into(), json!(1000));
                }
            }
        }
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => priority_level(object),
        ("resource.k8s.io", "ResourceClaim") => {
            if let Some(spec) = object_mut(object, "spec") {
                claim_spec(spec);
            }
        }
        ("resource.k8s.io", "ResourceClaimTemplate") => {
            if let Some(spec) = object_mut(object, "spec").and_then(|s| object_mut(s, "spec")) {
                claim_spec(spec);
            }
        }
        _ => {}
    }
}

/// pkg/apis/autoscaling/v{1,2}/defaults.go: SetDefaults_HorizontalPodAutoscaler
/// (one replica at least; v2: a CPU utilization target of 80% when there are
/// no metrics, and every unset field of a given `behavior` filled).
fn horizontal_pod_autoscaler(object: &mut Object) {
    let v2 = object.get("apiVersion").and_then(Value::as_str) != Some("autoscaling/v1");
    let Some(spec) = object_entry(object, "spec") else { return };
    default_ptr(spec, "minReplicas", json!(1));
    if !v2 {
        return;
    }
    if spec.get("metrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(behavior) = object_mut(spec, "behavior") else { return };
    // GenerateHPAScaleUpRules / GenerateHPAScaleDownRules.
    for (key, window, policies) in [
        (
            "scaleUp",
            0,
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]),
        ),
        ("scaleDown", 300, json!([{"type": "Percent", "value": 100, "periodSeconds": 15}])),
    ] {
        let Some(rules) = object_entry(behavior, key) else { continue };
        default_ptr(rules, "stabilizationWindowSeconds", json!(window));
        default_ptr(rules, "selectPolicy", json!("Max"));
        if rules.get("policies").and_then(Value::as_array).is_none_or(Vec::is_empty) {
            rules.insert("policies".into(), policies);
        }
    }
}

fn network_policy(object: &mut Object) {
    let Some(spec) = object_entry(object, "spec") else { return };
    for direction in ["ingress", "egress"] {
        for rule in each_mut(spec, direction) {
            for port in each_mut(rule, "ports") {
                default_ptr(port, "protocol", json!("TCP"));
            }
        }
    }
    if spec.get("policyTypes").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        let egress = spec.get("egress").and_then(Value::as_array).is_some_and(|e| !e.is_empty());
        let types = if egress { json!(["Ingress", "Egress"]) } else { json!(["Ingress"]) };
        spec.insert("policyTypes".into(), types);
    }
}

/// pkg/apis/admissionregistration/v1/defaults.go: SetDefaults_ValidatingWebhook
/// and SetDefaults_MutatingWebhook, SetDefaults_Rule, SetDefaults_ServiceReference.
fn webhook_defaults(webhook: &mut Object, mutating: bool) {
    default_ptr(webhook, "failurePolicy", json!("Fail"));
    default_ptr(webhook, "matchPolicy", json!("Equivalent"));
    default_ptr(webhook, "namespaceSelector", json!({}));
    default_ptr(webhook, "objectSelector", json!({}));
    default_ptr(webhook, "timeoutSeconds", json!(10));
    if mutating {
        default_ptr(webhook, "reinvocationPolicy", json!("Never"));
    }
    for rule in each_mut(webhook, "rules") {
        default_ptr(rule, "scope", json!("*"));
    }
    if let Some(service) = object_mut(webhook, "clientConfig").and_then(|c| object_mut(c, "service")) {
        default_ptr(service, "port", json!(443));
    }
}

/// SetDefaults_MatchResources and the rules' scope.
fn match_resources(resources: &mut Object) {
    default_ptr(resources, "matchPolicy", json!("Equivalent"));
    default_ptr(resources, "namespaceSelector", json!({}));
    default_ptr(resources, "objectSelector", json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        for rule in each_mut(resources, key) {
            default_ptr(rule, "scope", json!("*"));
        }
    }
}

/// pkg/apis/flowcontrol/v1/defaults.go: SetDefaults_PriorityLevelConfiguration
/// (ExemptPriorityLevelConfiguration, LimitedPriorityLevelConfiguration,
/// QueuingConfiguration).
fn priority_level(object: &mut Object) {
    let Some(spec) = object_entry(object, "spec") else { return };
    if let Some(exempt) = object_mut(spec, "exempt") {
        default_ptr(exempt, "nominalConcurrencyShares", json!(0));
        default_ptr(exempt, "lendablePercent", json!(0));
    }
    let Some(limited) = object_mut(spec, "limited") else { return };
    if limited.get("nominalConcurrencyShares").and_then(Value::as_i64).unwrap_or(0) == 0 {
        limited.insert("nominalConcurrencyShares".into(), json!(30));
    }
    default_ptr(limited, "lendablePercent", json!(0));
    if let Some(queuing) = object_mut(limited, "limitResponse").and_then(|r| object_mut(r, "queuing")) {
        for (key, value) in [("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)] {
            if queuing.get(key).and_then(Value::as_i64).unwrap_or(0) == 0 {
                queuing.insert(key.into(), json!(value));
            }
        }
    }
}

/// pkg/apis/resource/v1/defaults.go: SetDefaults_ExactDeviceRequest (and
/// SetDefaults_DeviceSubRequest): allocation mode ExactCount, one device.
fn claim_spec(spec: &mut Object) {
    let Some(devices) = object_mut(spec, "devices") else { return };
    for request in each_mut(devices, "requests") {
        if let Some(exactly) = object_mut(request, "exactly") {
            exact_request(exactly);
        }
        for sub in each_mut(request, "firstAvailable") {
            exact_request(sub);
        }
    }
}

fn exact_request(request: &mut Object) {
    default_str(request, "allocationMode", "ExactCount");
    if str_of(request, "allocationMode") == "ExactCount" {
        default_ptr(request, "count", json!(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(group: &str, kind: &str, body: Value) -> Value {
        let mut object = body.as_object().cloned().unwrap_or_default();
        apply(group, kind, &mut object);
        Value::Object(object)
    }

    // tests/fixtures/kube-v1.36/lists: scheduling.k8s.io_v1_priorityclasses.json
    // and storage.k8s.io_v1_storageclasses.json.
    #[test]
    fn priority_and_storage_classes() {
        let pc = defaulted("scheduling.k8s.io", "PriorityClass", json!({"value": 1000}));
        assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
        let sc = defaulted("storage.k8s.io", "StorageClass", json!({"provisioner": "p"}));
        assert_eq!(
            (sc["reclaimPolicy"].as_str(), sc["volumeBindingMode"].as_str()),
            (Some("Delete"), Some("Immediate"))
        );
        let kept = defaulted("storage.k8s.io", "StorageClass", json!({"reclaimPolicy": "Retain"}));
        assert_eq!(kept["reclaimPolicy"], "Retain");
    }

    #[test]
    fn horizontal_pod_autoscalers() {
        let v2 =
            defaulted("autoscaling", "HorizontalPodAutoscaler", json!({"apiVersion": "autoscaling/v2", "spec": {}}));
        assert_eq!(v2["spec"]["minReplicas"], 1);
        assert_eq!(v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 80);
        let v1 =
            defaulted("autoscaling", "HorizontalPodAutoscaler", json!({"apiVersion": "autoscaling/v1", "spec": {}}));
        assert_eq!(v1["spec"], json!({"minReplicas": 1}));
        let behavior = defaulted(
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"minReplicas": 2, "metrics": [{"type": "Pods"}], "behavior": {"scaleDown": {"selectPolicy": "Min"}}}}),
        );
        assert_eq!(behavior["spec"]["minReplicas"], 2);
        assert_eq!(behavior["spec"]["metrics"], json!([{"type": "Pods"}]));
        assert_eq!(behavior["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Min");
        assert_eq!(behavior["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"], 300);
        assert_eq!(
            behavior["spec"]["behavior"]["scaleUp"]["policies"][0],
            json!({"type": "Pods", "value": 4, "periodSeconds": 15})
        );
    }

    // The recorded NetworkPolicy and EndpointSlice keep what they were sent
    // (policyTypes and port protocol given); the defaults fill the rest.
    #[test]
    fn network_policies_and_endpoint_slices() {
        let np = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
        );
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
        let eps = defaulted("discovery.k8s.io", "EndpointSlice", json!({"ports": [{"port": 80}]}));
        assert_eq!(eps["ports"], json!([{"port": 80, "name": "", "protocol": "TCP"}]));
    }

    #[test]
    fn webhooks_policies_and_flow_control() {
        let vwc = defaulted(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            json!({"webhooks": [{"name": "w", "rules": [{}], "clientConfig": {"service": {"name": "s"}}}]}),
        );
        let w = &vwc["webhooks"][0];
        assert_eq!((w["failurePolicy"].as_str(), w["matchPolicy"].as_str()), (Some("Fail"), Some("Equivalent")));
        assert_eq!((w["timeoutSeconds"].as_i64(), w["reinvocationPolicy"].as_str()), (Some(10), Some("Never")));
        assert_eq!(
            (w["rules"][0]["scope"].as_str(), w["clientConfig"]["service"]["port"].as_i64()),
            (Some("*"), Some(443))
        );
        let plc = defaulted(
            "flowcontrol.apiserver.k8s.io",
            "PriorityLevelConfiguration",
            json!({"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}}),
        );
        assert_eq!(plc["spec"]["limited"]["nominalConcurrencyShares"], 30);
        assert_eq!(
            plc["spec"]["limited"]["limitResponse"]["queuing"],
            json!({"queues": 64, "handSize": 8, "queueLengthLimit": 50})
        );
        let fs = defaulted("flowcontrol.apiserver.k8s.io", "FlowSchema", json!({}));
        assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
    }

    #[test]
    fn odd_shapes_do_not_panic() {
        for (group, kind) in [
            ("autoscaling", "HorizontalPodAutoscaler"),
            ("networking.k8s.io", "NetworkPolicy"),
            ("storage.k8s.io", "CSIDriver"),
            ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
            ("resource.k8s.io", "ResourceClaim"),
            ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ] {
            for body in
                [json!({"spec": 5}), json!({"spec": {"limited": [], "behavior": 1, "devices": {"requests": [3]}}})]
            {
                let _ = defaulted(group, kind, body);
            }
        }
    }
}
