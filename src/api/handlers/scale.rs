//! The `scale` subresource (deployments, replicasets, statefulsets): GET
//! answers an `autoscaling/v1` Scale built from the parent object; PUT sets
//! the parent's `spec.replicas`, conditional on the Scale's resourceVersion
//! when given, as kube-apiserver's scale registries do.

use super::create::stored_after;
use super::update::parse_resource_version;
use super::{append_read_modify_write, modified, read_current, Resolved};
use crate::api::object::{decode_body, metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::log::{Operation, Precondition, Proposal};
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};

const SCALE_ATTEMPTS_MAX: usize = 16;

/// The label selector of `spec.selector` in its string form (`a=b,c in (d)`).
fn selector_text(selector: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (k, v) in labels {
            parts.push(format!("{k}={}", v.as_str().unwrap_or_default()));
        }
    }
    if let Some(expressions) = selector["matchExpressions"].as_array() {
        for e in expressions {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> =
                e["values"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            match e["operator"].as_str().unwrap_or_default() {
                "In" => parts.push(format!("{key} in ({})", values.join(","))),
                "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}

/// The Scale of a parent object.
fn scale_of(parent: &Object) -> Value {
    let meta = metadata(parent);
    let mut scale_meta = serde_json::Map::new();
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta.get(field) {
            scale_meta.insert(field.into(), v.clone());
        }
    }
    let spec = parent.get("spec").cloned().unwrap_or(Value::Null);
    let status = parent.get("status").cloned().unwrap_or(Value::Null);
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": Value::Object(scale_meta),
        "spec": {"replicas": spec["replicas"].as_i64().unwrap_or(1)},
        "status": {
            "replicas": status["replicas"].as_i64().unwrap_or(0),
            "selector": selector_text(&spec["selector"]),
        },
    })
}

fn encode(value: &Value) -> Result<Bytes, ApiError> {
    serde_json::to_vec(value).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
}

fn parse(bytes: &[u8]) -> Result<Object, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))
}

pub async fn get(backend: &impl Backend, resolved: &Resolved) -> Result<Response<ResponseBody>, ApiError> {
    let key = resolved.key(resolved.name.as_deref().unwrap_or(""));
    let current = read_current(backend, &key, backend.committed_revision())
        .await?
        .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
    Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parse(&current.json)?))?))
}

pub async fn update(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let scale = decode_body(head.content_type.as_deref(), body, "Scale")?;
    update_scale(backend, head, resolved, scale).await
}

/// The current Scale of the parent object (404 when it is absent), with the
/// parent's resourceVersion: what a PATCH of the subresource applies to.
pub async fn current_scale(backend: &impl Backend, resolved: &Resolved) -> Result<Value, ApiError> {
    let key = resolved.key(resolved.name.as_deref().unwrap_or(""));
    let current = read_current(backend, &key, backend.committed_revision())
        .await?
        .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
    Ok(scale_of(&parse(&current.json)?))
}

/// Sets the parent's `spec.replicas` from a Scale (decoded from a PUT body or
/// produced by a PATCH), conditional on its resourceVersion when it has one.
pub async fn update_scale(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    scale: Object,
) -> Result<Response<ResponseBody>, ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let replicas =
        scale.get("spec").and_then(|s| s.get("replicas")).and_then(Value::as_i64).filter(|r| *r >= 0).ok_or_else(
            || {
                crate::api::object::invalid(
                    &resolved.info,
                    &name,
                    vec![crate::api::status::Cause {
                        reason: "FieldValueInvalid".into(),
                        message: "Invalid value: must be a non-negative integer".into(),
                        field: "spec.replicas".into(),
                    }],
                )
            },
        )?;
    let wanted = parse_resource_version(metadata(&scale).get("resourceVersion").and_then(Value::as_str).unwrap_or(""))?;
    let key = resolved.key(&name);
    for _ in 0..SCALE_ATTEMPTS_MAX {
        let current = read_current(backend, &key, backend.committed_revision())
            .await?
            .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
        if wanted.is_some_and(|w| w != current.mod_revision) {
            return Err(modified(resolved));
        }
        let mut parent = parse(&current.json)?;
        if parent.get("spec").and_then(|s| s.get("replicas")).and_then(Value::as_i64) == Some(replicas) {
            return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parent))?));
        }
        if let Some(Value::Object(spec)) = parent.get_mut("spec") {
            spec.insert("replicas".into(), json!(replicas));
        } else {
            parent.insert("spec".into(), json!({"replicas": replicas}));
        }
        let generation = metadata(&parent).get("generation").and_then(Value::as_i64).unwrap_or(1);
        metadata_mut(&mut parent).insert("generation".into(), json!(generation + 1));
        let parent = order_fields(parent);
        if head.params.dry_run_all {
            return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parent))?));
        }
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::ModRevision(current.mod_revision),
            operation: Operation::Put(storage_value(&parent)?),
        };
        let Some(entry) = append_read_modify_write(backend, proposal, wanted.is_none(), resolved).await? else {
            continue;
        };
        let stored = stored_after(backend, &key, entry.revision, &parent).await?;
        return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parse(&stored)?))?));
    }
    Err(modified(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_reflects_the_parent() {
        let parent: Object = serde_json::from_value(json!({
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "d", "uid": "u", "resourceVersion": "9", "labels": {"x": "y"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}},
            "status": {"replicas": 2},
        }))
        .unwrap();
        let scale = scale_of(&parent);
        assert_eq!(scale["kind"], "Scale");
        assert_eq!(scale["apiVersion"], "autoscaling/v1");
        assert_eq!(scale["metadata"], json!({"name": "web", "namespace": "d", "uid": "u", "resourceVersion": "9"}));
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=web,tier in (a,b)"}));
    }
}
