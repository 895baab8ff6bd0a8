//! PATCH: an object (or its `status` or `scale` subresource) changed by a
//! JSON patch, a JSON merge patch or a strategic merge patch (`crate::patch`).
//! The patch is applied to the current version, and the result goes through
//! PUT's checks and write path (`update::replace_current`): type, name and
//! namespace cannot change, server-owned fields are kept, and the append is
//! conditional on the version read. A patch that sets
//! `metadata.resourceVersion` is a precondition (409 when stale); otherwise a
//! concurrent write makes the handler read again and re-apply the patch, at
//! most `patch_conflict_attempts_max` times.

use super::update::replace_current;
use super::{modified, read_current, scale, Resolved};
use crate::api::field_validation;
use crate::api::object::{check_type_meta, media_type, meta_str, metadata, metadata_mut, Object};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::patch::{self, PatchError, PatchType};
use crate::types::schema;
use http::{Response, StatusCode};
use serde_json::{json, Value};

/// The patch types a built-in resource accepts, in kube-apiserver's order.
pub const ACCEPTED: [&str; 5] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
];

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let media = media_type(head.content_type.as_deref());
    let kind = match PatchType::from_media_type(&media) {
        Some(PatchType::Strategic) if resolved.info.custom.is_some() => {
            return Err(ApiError::UnsupportedPatchType { got: media, accepted: super::custom::PATCH_TYPES.to_vec() })
        }
        Some(PatchType::Apply) => return super::apply::serve(backend, head, resolved, body).await,
        Some(kind) => kind,
        None if resolved.info.custom.is_some() => {
            return Err(ApiError::UnsupportedPatchType { got: media, accepted: super::custom::PATCH_TYPES.to_vec() })
        }
        None => return Err(ApiError::UnsupportedPatchType { got: media, accepted: ACCEPTED.to_vec() }),
    };
    let directive = field_validation::directive(head, "PatchOptions")?;
    if resolved.subresource.as_deref() == Some("scale") {
        return patch_scale(backend, head, resolved, kind, body).await;
    }
    let info = &resolved.info;
    let shape = schema::root_shape(&info.group, &info.version, &info.kind);
    let url_name = resolved.name.clone().unwrap_or_default();
    let key = resolved.key(&url_name);
    // Duplicate keys are a property of the patch's JSON (merge and strategic
    // patches are objects in the object's own shape).
    let duplicates_from = (kind != PatchType::Json).then_some(body);
    let retry = !patch_sets_resource_version(kind, body);
    for _ in 0..backend.config().patch_conflict_attempts_max.max(1) {
        let current = read_current(backend, &key, backend.committed_revision())
            .await?
            .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
        // Patched in the requested version (`versions`: a custom resource's
        // or a shared store's other version).
        let original: Value = serde_json::from_slice(&super::versions::convert(info, &current.json))
            .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
        let patched = patch::apply(kind, &original, body, shape).map_err(patch_error)?;
        let Value::Object(mut object) = patched else {
            return Err(ApiError::BadRequest("the patched object is not a JSON object".into()));
        };
        // kube-apiserver shows a custom resource's patched object in a
        // Strict 422 (its JSON and merge patches decode the result strictly).
        let shown = match info.custom {
            Some(_) => serde_json::to_vec(&object).unwrap_or_default(),
            None => body.to_vec(),
        };
        let problems = field_validation::problems(&mut object, info, duplicates_from);
        let warnings = field_validation::decide(directive, problems, |m| strict_patch_error(&shown, m))?;
        check_type_meta(&mut object, info)?;
        // The patched object must decode into the kind's type: kube answers
        // 422 on the field `patch`, showing the patched object.
        if crate::strategy::handles(info) {
            if let Err(message) = crate::strategy::decode::check(&info.group, &info.version, &info.kind, &mut object) {
                let patched = serde_json::to_vec(&object).unwrap_or_default();
                return Err(strict_patch_error(&patched, message));
            }
        }
        check_identity(&object, resolved, &url_name)?;
        // The resourceVersion the patched object carries: the current one
        // unless the patch set another (a precondition, as in kube-apiserver,
        // where a patch's resourceVersion must match the stored one).
        let carried = meta_str(&object, "resourceVersion").to_string();
        if !carried.is_empty() && carried != current.mod_revision.0.to_string() {
            return Err(modified(resolved));
        }
        match replace_current(backend, head, resolved, &current, object, retry).await? {
            Some(bytes) => {
                let bytes = super::versions::convert(info, &bytes);
                let mut response = respond(StatusCode::OK, "application/json", bytes);
                field_validation::add_warnings(&mut response, &warnings);
                return Ok(response);
            }
            None => continue,
        }
    }
    Err(modified(resolved))
}

/// The `scale` subresource: the patch applies to the parent's Scale; the
/// resulting Scale sets the parent's replicas.
async fn patch_scale(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    kind: PatchType,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let current = scale::current_scale(backend, resolved).await?;
    let shape = schema::root_shape("autoscaling", "v1", "Scale");
    let patched = patch::apply(kind, &current, body, shape).map_err(patch_error)?;
    let Value::Object(mut scale_object) = patched else {
        return Err(ApiError::BadRequest("the patched object is not a JSON object".into()));
    };
    if !patch_sets_resource_version(kind, body) {
        // No precondition of the client's: let the update retry on a
        // concurrent write instead of answering 409.
        metadata_mut(&mut scale_object).shift_remove("resourceVersion");
    }
    scale::update_scale(backend, head, resolved, scale_object).await
}

/// Type, name and namespace cannot be changed by a patch.
fn check_identity(object: &Object, resolved: &Resolved, url_name: &str) -> Result<(), ApiError> {
    let name = meta_str(object, "name");
    if name != url_name {
        return Err(ApiError::BadRequest(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let given = metadata(object).get("namespace").and_then(Value::as_str).unwrap_or("");
    if resolved.info.namespaced && given != namespace {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request".into(),
        ));
    }
    Ok(())
}

/// Whether the patch itself names a resourceVersion (a precondition).
fn patch_sets_resource_version(kind: PatchType, body: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return false };
    match kind {
        PatchType::Json => value.as_array().is_some_and(|ops| {
            ops.iter().any(|op| {
                op.get("path").and_then(Value::as_str) == Some("/metadata/resourceVersion")
                    && op.get("op").and_then(Value::as_str) != Some("test")
            })
        }),
        _ => value.get("metadata").and_then(|m| m.get("resourceVersion")).is_some_and(|v| !v.is_null()),
    }
}

fn patch_error(e: PatchError) -> ApiError {
    match e {
        PatchError::BadRequest(m) => ApiError::BadRequest(m),
        PatchError::DoesNotApply(m) => ApiError::PatchDoesNotApply(m),
        PatchError::TooManyOperations { .. } => ApiError::TooManyPatchOperations(e.to_string()),
    }
}

/// A Strict PATCH with unknown or duplicate fields: kube-apiserver answers
/// 422 Invalid on the field `patch`.
fn strict_patch_error(body: &[u8], message: String) -> ApiError {
    let text = String::from_utf8_lossy(body);
    ApiError::Invalid {
        kind: String::new(),
        target: Target::new("", "", ""),
        causes: vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {}: {message}", json!(text)),
            field: "patch".into(),
        }],
    }
}
