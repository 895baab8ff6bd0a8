//! What a typed client does with an object the server stored: decode it into
//! the k8s-openapi type of its kind (as client-go, the Python client and
//! kube-rs decode into theirs). Shared by the `typed_layer` fuzz target
//! (`fuzz/src/lib.rs`) and `tests/fuzz_smoke.rs`, which include this file.

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, certificates, coordination, core, discovery, events, flowcontrol,
    networking, node, policy, rbac, resource, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn decode<T: DeserializeOwned>(object: Value) -> Result<(), String> {
    serde_json::from_value::<T>(object).map(|_| ()).map_err(|e| e.to_string())
}

/// Decodes `object` as the k8s-openapi type of `api_version` and `kind`;
/// `Err` is the typed client's error. A kind without a type here is an error
/// too, so a newly served kind is not silently left unchecked.
pub fn decode_typed(api_version: &str, kind: &str, object: Value) -> Result<(), String> {
    match (api_version, kind) {
        ("v1", "Namespace") => decode::<core::v1::Namespace>(object),
        ("v1", "Pod") => decode::<core::v1::Pod>(object),
        ("v1", "Service") => decode::<core::v1::Service>(object),
        ("v1", "Endpoints") => decode::<core::v1::Endpoints>(object),
        ("v1", "ConfigMap") => decode::<core::v1::ConfigMap>(object),
        ("v1", "Secret") => decode::<core::v1::Secret>(object),
        ("v1", "Node") => decode::<core::v1::Node>(object),
        ("v1", "Event") => decode::<core::v1::Event>(object),
        ("v1", "ServiceAccount") => decode::<core::v1::ServiceAccount>(object),
        ("v1", "PersistentVolume") => decode::<core::v1::PersistentVolume>(object),
        ("v1", "PersistentVolumeClaim") => decode::<core::v1::PersistentVolumeClaim>(object),
        ("v1", "Binding") => decode::<core::v1::Binding>(object),
        ("v1", "ComponentStatus") => decode::<core::v1::ComponentStatus>(object),
        ("v1", "LimitRange") => decode::<core::v1::LimitRange>(object),
        ("v1", "PodTemplate") => decode::<core::v1::PodTemplate>(object),
        ("v1", "ReplicationController") => decode::<core::v1::ReplicationController>(object),
        ("v1", "ResourceQuota") => decode::<core::v1::ResourceQuota>(object),
        ("apps/v1", "Deployment") => decode::<apps::v1::Deployment>(object),
        ("apps/v1", "ReplicaSet") => decode::<apps::v1::ReplicaSet>(object),
        ("apps/v1", "StatefulSet") => decode::<apps::v1::StatefulSet>(object),
        ("apps/v1", "DaemonSet") => decode::<apps::v1::DaemonSet>(object),
        ("apps/v1", "ControllerRevision") => decode::<apps::v1::ControllerRevision>(object),
        ("batch/v1", "Job") => decode::<batch::v1::Job>(object),
        ("batch/v1", "CronJob") => decode::<batch::v1::CronJob>(object),
        ("rbac.authorization.k8s.io/v1", "Role") => decode::<rbac::v1::Role>(object),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => decode::<rbac::v1::RoleBinding>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => decode::<rbac::v1::ClusterRole>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => decode::<rbac::v1::ClusterRoleBinding>(object),
        ("coordination.k8s.io/v1", "Lease") => decode::<coordination::v1::Lease>(object),
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy") => {
            decode::<admissionregistration::v1::MutatingAdmissionPolicy>(object)
        }
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding") => {
            decode::<admissionregistration::v1::MutatingAdmissionPolicyBinding>(object)
        }
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            decode::<admissionregistration::v1::MutatingWebhookConfiguration>(object)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy") => {
            decode::<admissionregistration::v1::ValidatingAdmissionPolicy>(object)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding") => {
            decode::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(object)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            decode::<admissionregistration::v1::ValidatingWebhookConfiguration>(object)
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            decode::<apiextensions::v1::CustomResourceDefinition>(object)
        }
        ("apiregistration.k8s.io/v1", "APIService") => decode::<apiregistration::v1::APIService>(object),
        ("autoscaling/v1", "HorizontalPodAutoscaler") => decode::<autoscaling::v1::HorizontalPodAutoscaler>(object),
        ("autoscaling/v2", "HorizontalPodAutoscaler") => decode::<autoscaling::v2::HorizontalPodAutoscaler>(object),
        ("certificates.k8s.io/v1", "CertificateSigningRequest") => {
            decode::<certificates::v1::CertificateSigningRequest>(object)
        }
        ("discovery.k8s.io/v1", "EndpointSlice") => decode::<discovery::v1::EndpointSlice>(object),
        ("events.k8s.io/v1", "Event") => decode::<events::v1::Event>(object),
        ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema") => decode::<flowcontrol::v1::FlowSchema>(object),
        ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration") => {
            decode::<flowcontrol::v1::PriorityLevelConfiguration>(object)
        }
        ("networking.k8s.io/v1", "IPAddress") => decode::<networking::v1::IPAddress>(object),
        ("networking.k8s.io/v1", "Ingress") => decode::<networking::v1::Ingress>(object),
        ("networking.k8s.io/v1", "IngressClass") => decode::<networking::v1::IngressClass>(object),
        ("networking.k8s.io/v1", "NetworkPolicy") => decode::<networking::v1::NetworkPolicy>(object),
        ("networking.k8s.io/v1", "ServiceCIDR") => decode::<networking::v1::ServiceCIDR>(object),
        ("node.k8s.io/v1", "RuntimeClass") => decode::<node::v1::RuntimeClass>(object),
        ("policy/v1", "PodDisruptionBudget") => decode::<policy::v1::PodDisruptionBudget>(object),
        ("resource.k8s.io/v1", "DeviceClass") => decode::<resource::v1::DeviceClass>(object),
        ("resource.k8s.io/v1", "ResourceClaim") => decode::<resource::v1::ResourceClaim>(object),
        ("resource.k8s.io/v1", "ResourceClaimTemplate") => decode::<resource::v1::ResourceClaimTemplate>(object),
        ("resource.k8s.io/v1", "ResourceSlice") => decode::<resource::v1::ResourceSlice>(object),
        ("scheduling.k8s.io/v1", "PriorityClass") => decode::<scheduling::v1::PriorityClass>(object),
        ("storage.k8s.io/v1", "CSIDriver") => decode::<storage::v1::CSIDriver>(object),
        ("storage.k8s.io/v1", "CSINode") => decode::<storage::v1::CSINode>(object),
        ("storage.k8s.io/v1", "CSIStorageCapacity") => decode::<storage::v1::CSIStorageCapacity>(object),
        ("storage.k8s.io/v1", "StorageClass") => decode::<storage::v1::StorageClass>(object),
        ("storage.k8s.io/v1", "VolumeAttachment") => decode::<storage::v1::VolumeAttachment>(object),
        ("storage.k8s.io/v1", "VolumeAttributesClass") => decode::<storage::v1::VolumeAttributesClass>(object),
        (api_version, kind) => Err(format!("no typed client type for {api_version} {kind}")),
    }
}
