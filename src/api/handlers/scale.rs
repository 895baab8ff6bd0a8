//! The `scale` subresource (deployments, replicasets, statefulsets): GET
//! answers an `autoscaling/v1` Scale built from the parent object; PUT sets
//! the parent's `spec.replicas`, conditional on the Scale's resourceVersion
//! when given, as kube-apiserver's scale registries do. A custom resource's
//! Scale reads and writes the paths its definition declares
//! (`specReplicasPath`, `statusReplicasPath`, `labelSelectorPath`).

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

/// The field names of a definition's `.spec.replicas`-style path.
fn path_fields(path: &str) -> Vec<&str> {
    path.trim_start_matches('.').split('.').filter(|f| !f.is_empty()).collect()
}

fn value_at<'a>(object: &'a Object, path: &str) -> Option<&'a Value> {
    let fields = path_fields(path);
    let (first, rest) = fields.split_first()?;
    rest.iter().try_fold(object.get(*first)?, |v, f| v.get(*f))
}

/// Sets `path` (creating the objects on the way) to `value`.
fn set_at(object: &mut Object, path: &str, value: Value) {
    let fields = path_fields(path);
    let Some((last, parents)) = fields.split_last() else { return };
    let mut map = object;
    for field in parents {
        let entry = map.entry(field.to_string()).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        let Value::Object(next) = entry else { return };
        map = next;
    }
    map.insert(last.to_string(), value);
}

/// The Scale of a parent object.
fn scale_of(parent: &Object, resolved: &Resolved) -> Value {
    if let Some(paths) = resolved.info.custom.as_ref().and_then(|c| c.scale.as_ref()) {
        return custom_scale_of(parent, paths);
    }
    builtin_scale_of(parent)
}

/// A built-in resource's Scale: `spec.replicas`, `status.replicas`, and
/// `spec.selector` as text.
fn builtin_scale_of(parent: &Object) -> Value {
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

/// A custom resource's Scale, from the paths its definition declares.
fn custom_scale_of(parent: &Object, paths: &crate::types::crd::ScalePaths) -> Value {
    let meta = metadata(parent);
    let mut scale_meta = serde_json::Map::new();
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta.get(field) {
            scale_meta.insert(field.into(), v.clone());
        }
    }
    let number = |path: &str| value_at(parent, path).and_then(Value::as_i64).unwrap_or(0);
    let mut status = json!({"replicas": number(&paths.status_replicas_path)});
    if let Some(selector) =
        paths.label_selector_path.as_deref().and_then(|p| value_at(parent, p)).and_then(Value::as_str)
    {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": Value::Object(scale_meta),
        "spec": {"replicas": number(&paths.spec_replicas_path)},
        "status": status,
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
    Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parse(&current.json)?, resolved))?))
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
    Ok(scale_of(&parse(&current.json)?, resolved))
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
        let spec_path = match resolved.info.custom.as_ref().and_then(|c| c.scale.as_ref()) {
            Some(paths) => paths.spec_replicas_path.clone(),
            None => ".spec.replicas".to_string(),
        };
        let before = parent.clone();
        if value_at(&parent, &spec_path).and_then(Value::as_i64) == Some(replicas) {
            return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parent, resolved))?));
        }
        set_at(&mut parent, &spec_path, json!(replicas));
        let generation = metadata(&parent).get("generation").and_then(Value::as_i64).unwrap_or(1);
        metadata_mut(&mut parent).insert("generation".into(), json!(generation + 1));
        // The parent's update rules and validation, as kube's scale
        // subresource updates the parent through its strategy.
        let now = crate::api::object::timestamp(backend.now());
        let context = crate::strategy::Context { now: &now, subresource: Some("scale"), user: None };
        crate::strategy::update(&resolved.info, &mut parent, &before, &context)
            .map_err(|r| super::rejection(&resolved.info, &name, r))?;
        // The writer takes spec.replicas (an Update entry with subresource "scale").
        let manager = super::apply::Manager::of(backend, head, resolved);
        crate::fieldmanager::update(Some(&before), &mut parent, &manager.write());
        let mut parent = order_fields(parent);
        crate::strategy::finish(&resolved.info, &mut parent);
        if head.params.dry_run_all {
            return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parent, resolved))?));
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
        return Ok(respond(StatusCode::OK, "application/json", encode(&scale_of(&parse(&stored)?, resolved))?));
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
        let scale = builtin_scale_of(&parent);
        assert_eq!(scale["kind"], "Scale");
        assert_eq!(scale["apiVersion"], "autoscaling/v1");
        assert_eq!(scale["metadata"], json!({"name": "web", "namespace": "d", "uid": "u", "resourceVersion": "9"}));
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=web,tier in (a,b)"}));
    }

    #[test]
    fn custom_scale_uses_the_declared_paths() {
        let paths = crate::types::crd::ScalePaths {
            spec_replicas_path: ".spec.count".into(),
            status_replicas_path: ".status.ready.count".into(),
            label_selector_path: Some(".status.selector".into()),
        };
        let mut parent: Object = serde_json::from_value(json!({
            "metadata": {"name": "w", "resourceVersion": "4"},
            "spec": {"count": 5},
            "status": {"ready": {"count": 2}, "selector": "app=w"},
        }))
        .unwrap();
        let scale = custom_scale_of(&parent, &paths);
        assert_eq!(scale["spec"], json!({"replicas": 5}));
        assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=w"}));
        set_at(&mut parent, ".spec.count", json!(7));
        set_at(&mut parent, ".spec.deep.er", json!(1));
        assert_eq!(parent["spec"], json!({"count": 7, "deep": {"er": 1}}));
        parent.remove("status");
        assert_eq!(custom_scale_of(&parent, &paths)["status"], json!({"replicas": 0}));
    }
}
