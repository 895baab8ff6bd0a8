//! `componentstatuses` (core/v1 ComponentStatus, get and list), computed on
//! each request as kube-apiserver's `pkg/registry/core/componentstatus`
//! does: nothing is stored; the backend probes the components
//! (`Backend::component_statuses`: kube-scheduler, kube-controller-manager,
//! and the log as `etcd-0`) and each becomes a ComponentStatus with one
//! `Healthy` condition (status, message, error). A list applies the label
//! and field selectors (kube filters too, though the objects carry no
//! labels); a get of a name that is not a component is kube's plain error,
//! a 500 `Component not found: NAME`. Every answer carries kube's
//! deprecation warning (`v1 ComponentStatus is deprecated in v1.19+`), in
//! every representation (JSON, YAML, Protobuf, CBOR, Table for `kubectl get
//! componentstatuses`). The list has no resourceVersion, as kube's.

use super::list::Selectors;
use super::Resolved;
use crate::api::backend::ComponentStatus;
use crate::api::negotiate::Representation;
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};

/// kube-apiserver's warning for the deprecated kind (`Warning: 299 - "..."`).
const DEPRECATION_WARNING: &str = "299 - \"v1 ComponentStatus is deprecated in v1.19+\"";

/// The object kube serves for a component (a list item has no kind and
/// apiVersion).
pub fn object(status: &ComponentStatus, typed_item: bool) -> Value {
    let mut condition = serde_json::Map::new();
    condition.insert("type".into(), json!("Healthy"));
    condition.insert("status".into(), json!(status.status));
    if !status.message.is_empty() {
        condition.insert("message".into(), json!(status.message));
    }
    if !status.error.is_empty() {
        condition.insert("error".into(), json!(status.error));
    }
    let mut object = serde_json::Map::new();
    if !typed_item {
        object.insert("kind".into(), json!("ComponentStatus"));
        object.insert("apiVersion".into(), json!("v1"));
    }
    object.insert("metadata".into(), json!({"name": status.name}));
    object.insert("conditions".into(), json!([Value::Object(condition)]));
    Value::Object(object)
}

/// What a list of the components selects (kube's `componentStatusPredicate`:
/// no labels; fields `metadata.name` and an empty `metadata.namespace`).
fn selected(selectors: &Selectors, status: &ComponentStatus) -> bool {
    selectors.labels.matches(|_| None)
        && selectors.fields.matches(|field| match field {
            "metadata.name" => Some(status.name),
            "metadata.namespace" => Some(""),
            _ => None,
        })
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let (representation, table) = super::get::object_representation(head, resolved)?;
    // Metadata-only: a component's PartialObjectMetadata (get); a list's as kube refuses a mismatch.
    match (&representation, &resolved.name) {
        (Representation::Metadata(m), Some(_)) if m.list => {
            return Err(crate::api::metadata::not_a_list(&resolved.info))
        }
        (Representation::Metadata(m), None) if !m.list => return Err(crate::api::metadata::is_a_list(&resolved.info)),
        (Representation::Metadata(_), None) => {
            return Err(ApiError::NotAcceptable(
                "PartialObjectMetadataList of componentstatuses is not served (they are computed, not stored)".into(),
            ))
        }
        _ => {}
    }
    let selectors = Selectors::parse(head, resolved)?;
    let statuses = backend.component_statuses().await;
    let body = match &resolved.name {
        Some(name) => {
            let status = statuses
                .iter()
                .find(|s| s.name == name.as_str())
                .ok_or_else(|| ApiError::Unknown(format!("Component not found: {name}")))?;
            let object = object(status, false);
            match &table {
                Some(table) => table.values(&[object], backend.now()),
                None => {
                    crate::api::encode::uncached(&serde_json::to_vec(&object).unwrap_or_default(), &representation)?
                }
            }
        }
        None => {
            let chosen: Vec<&ComponentStatus> = statuses.iter().filter(|s| selected(&selectors, s)).collect();
            match &table {
                Some(table) => {
                    let objects: Vec<Value> = chosen.iter().map(|s| object(s, false)).collect();
                    table.values(&objects, backend.now())
                }
                None => {
                    let list = json!({
                        "kind": "ComponentStatusList",
                        "apiVersion": "v1",
                        "metadata": {},
                        "items": chosen.iter().map(|s| object(s, true)).collect::<Vec<_>>(),
                    });
                    crate::api::encode::uncached(&serde_json::to_vec(&list).unwrap_or_default(), &representation)?
                }
            }
        }
    };
    let content_type = match &table {
        Some(_) => "application/json",
        None => crate::api::encode::content_type(&representation),
    };
    let mut response = respond(StatusCode::OK, content_type, Bytes::from(body));
    response.headers_mut().insert(http::header::WARNING, http::HeaderValue::from_static(DEPRECATION_WARNING));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-apiserver v1.36's own list (tests/fixtures/kube-v1.36), with the
    /// scheduler and controller manager not running and etcd healthy.
    #[test]
    fn objects_are_kubes() {
        let fixture: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/kube-v1.36/lists/core_v1_componentstatuses.json"
        ))
        .unwrap();
        let unreachable = |name: &'static str, port: u16| ComponentStatus {
            name,
            status: "False",
            message: format!(
                "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            ),
            error: String::new(),
        };
        let statuses = [
            unreachable("scheduler", 10259),
            unreachable("controller-manager", 10257),
            ComponentStatus { name: "etcd-0", status: "True", message: "ok".into(), error: String::new() },
        ];
        let items: Vec<Value> = statuses.iter().map(|s| object(s, true)).collect();
        assert_eq!(Value::Array(items), fixture["items"]);
        let failed = ComponentStatus { name: "etcd-0", status: "False", message: String::new(), error: "down".into() };
        assert_eq!(
            object(&failed, false),
            json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0"},
                "conditions": [{"type": "Healthy", "status": "False", "error": "down"}]})
        );
    }
}
