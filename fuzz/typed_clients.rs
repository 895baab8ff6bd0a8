//! What a typed client does with an object the server stored: decode it into
//! the k8s-openapi type of its kind (as client-go, the Python client and
//! kube-rs decode into theirs). Shared by the `typed_layer` fuzz target
//! (`fuzz/src/lib.rs`) and `tests/fuzz_smoke.rs`, which include this file.

use k8s_openapi::api::{apps, batch, coordination, core, rbac};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn decode<T: DeserializeOwned>(object: Value) -> Result<(), String> {
    serde_json::from_value::<T>(object).map(|_| ()).map_err(|e| e.to_string())
}

/// Decodes `object` as the k8s-openapi type of `kind`; `Err` is the typed
/// client's error. A kind without a type here is an error too, so a newly
/// served kind is not silently left unchecked.
pub fn decode_typed(kind: &str, object: Value) -> Result<(), String> {
    match kind {
        "Namespace" => decode::<core::v1::Namespace>(object),
        "Pod" => decode::<core::v1::Pod>(object),
        "Service" => decode::<core::v1::Service>(object),
        "Endpoints" => decode::<core::v1::Endpoints>(object),
        "ConfigMap" => decode::<core::v1::ConfigMap>(object),
        "Secret" => decode::<core::v1::Secret>(object),
        "Node" => decode::<core::v1::Node>(object),
        "Event" => decode::<core::v1::Event>(object),
        "ServiceAccount" => decode::<core::v1::ServiceAccount>(object),
        "PersistentVolume" => decode::<core::v1::PersistentVolume>(object),
        "PersistentVolumeClaim" => decode::<core::v1::PersistentVolumeClaim>(object),
        "Deployment" => decode::<apps::v1::Deployment>(object),
        "ReplicaSet" => decode::<apps::v1::ReplicaSet>(object),
        "StatefulSet" => decode::<apps::v1::StatefulSet>(object),
        "DaemonSet" => decode::<apps::v1::DaemonSet>(object),
        "Job" => decode::<batch::v1::Job>(object),
        "CronJob" => decode::<batch::v1::CronJob>(object),
        "Role" => decode::<rbac::v1::Role>(object),
        "RoleBinding" => decode::<rbac::v1::RoleBinding>(object),
        "ClusterRole" => decode::<rbac::v1::ClusterRole>(object),
        "ClusterRoleBinding" => decode::<rbac::v1::ClusterRoleBinding>(object),
        "Lease" => decode::<coordination::v1::Lease>(object),
        other => Err(format!("no typed client type for kind {other}")),
    }
}
