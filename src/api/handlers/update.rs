//! PUT: replace an object. The update is an append conditional on the mod
//! revision read, so optimistic concurrency is exactly the log's: a stale
//! `metadata.resourceVersion` answers 409 Conflict; without one the update
//! retries on a concurrent write. Server-owned fields (uid, creationTimestamp,
//! generation, status for types with a status subresource) are kept from the
//! stored object; a no-op update writes nothing.

use super::create::{apply_namespace, create_object, stored_after};
use super::{append_read_modify_write, modified, read_current, Resolved};
use crate::api::object::{check_type_meta, decode_body, metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::log::{Operation, Precondition, Proposal, Revision};
use http::{Response, StatusCode};
use serde_json::{json, Value};

/// Attempts of an update without a resourceVersion before giving up (each
/// failed attempt means another writer won the race).
const UPDATE_ATTEMPTS_MAX: usize = 16;

/// Parses a resourceVersion given by a client.
pub fn parse_resource_version(text: &str) -> Result<Option<Revision>, ApiError> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u64>()
        .map(|n| Some(Revision(n)))
        .map_err(|_| ApiError::BadRequest(format!("invalid resource version \"{text}\"")))
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    // The response in the negotiated representation (JSON unless asked otherwise).
    let representation = crate::api::encode::for_write(head, &resolved.info)?;
    crate::api::encode::reencode(serve_json(backend, head, resolved, body).await?, &representation, &resolved.info)
        .await
}

async fn serve_json(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    // `status`, and the subresources whose strategies take one part of the
    // body (strategy/subresources.rs; dispatched only where kube serves them).
    let partial = resolved
        .subresource
        .as_deref()
        .is_some_and(|sub| crate::strategy::subresources::serves(&resolved.info.group, &resolved.info.kind, sub));
    if resolved.subresource.is_some() && resolved.subresource.as_deref() != Some("status") && !partial {
        return Err(ApiError::MethodNotAllowed { method: "PUT".into(), target: resolved.target() });
    }
    let mut object = decode_body(head.content_type.as_deref(), body, &resolved.info.kind)?;
    check_type_meta(&mut object, &resolved.info)?;
    // Also prunes a custom resource's unknown fields (reported first).
    let warnings = crate::api::field_validation::check_body(head, &resolved.info, "UpdateOptions", &mut object, body)?;
    let with_warnings = |mut response: Response<ResponseBody>| {
        crate::api::field_validation::add_warnings(&mut response, &warnings);
        response
    };
    let url_name = resolved.name.clone().unwrap_or_default();
    {
        let meta = metadata_mut(&mut object);
        let body_name = meta.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        if body_name.is_empty() {
            meta.insert("name".into(), json!(url_name));
        } else if body_name != url_name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({url_name})"
            )));
        }
    }
    apply_namespace(&mut object, resolved)?;
    let wanted =
        parse_resource_version(metadata(&object).get("resourceVersion").and_then(Value::as_str).unwrap_or(""))?;
    let key = resolved.key(&url_name);
    for _ in 0..UPDATE_ATTEMPTS_MAX {
        let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else {
            if !resolved.info.allow_create_on_update || resolved.subresource.is_some() {
                return Err(ApiError::NotFound(resolved.target()));
            }
            if wanted.is_some() {
                // kube-apiserver refuses a create-on-update that names a version.
                return Err(modified(resolved));
            }
            match create_object(backend, head, resolved, object.clone()).await {
                Ok(created) => {
                    let created = super::versions::convert(&resolved.info, &created);
                    return Ok(with_warnings(respond(StatusCode::CREATED, "application/json", created)));
                }
                Err(ApiError::AlreadyExists(_)) => continue,
                Err(e) => return Err(e),
            }
        };
        if wanted.is_some_and(|w| w != current.mod_revision) {
            return Err(modified(resolved));
        }
        match replace_current(backend, head, resolved, &current, object.clone(), wanted.is_none()).await? {
            Some(bytes) => {
                let bytes = super::versions::convert(&resolved.info, &bytes);
                return Ok(with_warnings(respond(StatusCode::OK, "application/json", bytes)));
            }
            None => continue,
        }
    }
    Err(modified(resolved))
}

/// Writes `object` (a whole new version whose name and namespace the caller
/// checked) over `current`, keeping the server-owned fields, as PUT and PATCH
/// do: validation, the no-op check, dry-run, removal of a deleted object's
/// last finalizer, and the append conditional on `current`'s mod revision.
/// `Ok(None)` when another writer got there first and `retry` allows the
/// caller to read again; otherwise that is 409 Conflict.
/// The writer's manager is recorded in `managedFields` (an Update).
pub async fn replace_current(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    current: &crate::cache::CachedObject,
    object: Object,
    retry: bool,
) -> Result<Option<bytes::Bytes>, ApiError> {
    replace_current_tracked(backend, head, resolved, current, object, retry, true).await
}

/// `replace_current`; `track` false when the caller (server-side apply) has
/// already set `managedFields`.
pub async fn replace_current_tracked(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    current: &crate::cache::CachedObject,
    object: Object,
    retry: bool,
    track: bool,
) -> Result<Option<bytes::Bytes>, ApiError> {
    let url_name = resolved.name.clone().unwrap_or_default();
    let key = resolved.key(&url_name);
    let stored_raw: Object = serde_json::from_slice(&current.json)
        .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
    // A resource kept in another's store updates the object as its own
    // version shows it, and writes it back in the stored form.
    let stored = crate::strategy::served_form(&resolved.info, &stored_raw).unwrap_or_else(|| stored_raw.clone());
    let mut object = object;
    crate::strategy::decode_and_default(&resolved.info, &mut object)
        .map_err(|r| super::rejection(&resolved.info, &url_name, r))?;
    let mut updated = merge_server_fields(object, &stored, resolved);
    // The writer's fields are recorded before the update rules and admission
    // change the object, as kube does (custom resources after their own
    // preparation).
    let early = crate::strategy::records_fields_at_decode(&resolved.info);
    if track && early {
        let manager = super::apply::Manager::of(backend, head, resolved);
        crate::fieldmanager::update(Some(&stored), &mut updated, &manager.write());
    }
    // The mutating admission plugins, before the strategy (kube's order).
    let admission = super::admission::mutate(backend, head, resolved, &url_name, &mut updated, Some(&stored)).await?;
    let now = crate::api::object::timestamp(backend.now());
    super::allocate::prepare(resolved, &mut updated, Some(&stored));
    // The metadata errors come first in the one list, as in kube's
    // `ValidateUpdate` (ValidateObjectMetaUpdate, then the spec's rules).
    let metadata_errors = super::create::metadata_causes(resolved, &updated)?;
    crate::strategy::update(&resolved.info, &mut updated, &stored, &super::strategy_context(&now, resolved, head))
        .map_err(|r| super::rejection_after(&resolved.info, &url_name, metadata_errors, r))?;
    super::custom::prepare(backend, resolved, &mut updated, false)?;
    if track && !early {
        let manager = super::apply::Manager::of(backend, head, resolved);
        crate::fieldmanager::update(Some(&stored), &mut updated, &manager.write());
    }
    let mut updated = order_fields(updated);
    let mut causes = super::create::metadata_causes(resolved, &updated)?;
    causes.extend(new_finalizers_while_deleting(&stored, &updated));
    if !causes.is_empty() {
        return Err(crate::api::object::invalid(&resolved.info, &url_name, causes));
    }
    super::check_escalation(backend, head, resolved, &url_name, &updated).await?;
    // The validating admission plugins, after the strategy.
    super::admission::validate(backend, head, resolved, &url_name, admission, &updated, Some(&stored)).await?;
    // Service cluster IPs and node ports: new ones claimed now (reverted if
    // the write fails), given-up ones released once it is committed.
    let claims = super::allocate::update(backend, head, resolved, &stored, &mut updated).await?;
    crate::strategy::finish(&resolved.info, &mut updated);
    super::versions::to_storage(&resolved.info, &mut updated);
    let value = match (storage_value(&updated), storage_value(&stored_raw)) {
        (Ok(value), Ok(old)) if value != old => value,
        (Ok(_), Ok(_)) => {
            claims.revert(backend).await;
            return Ok(Some(current.json.clone()));
        }
        (Err(e), _) | (_, Err(e)) => {
            claims.revert(backend).await;
            return Err(e);
        }
    };
    if head.params.dry_run_all {
        let mut preview = updated.clone();
        metadata_mut(&mut preview).insert("resourceVersion".into(), json!(current.mod_revision.0.to_string()));
        let bytes = serde_json::to_vec(&preview).map_err(|e| ApiError::Internal(e.to_string()))?;
        return Ok(Some(bytes.into()));
    }
    // An object being deleted whose last finalizer is removed goes away
    // (kube's ShouldDeleteDuringUpdate: not while a graceful deletion is
    // pending; a namespace also needs its spec.finalizers gone).
    let finishing = metadata(&stored).get("deletionTimestamp").is_some_and(|t| !t.is_null())
        && metadata(&stored).get("deletionGracePeriodSeconds").and_then(Value::as_i64).is_none_or(|g| g == 0)
        && metadata(&updated).get("finalizers").and_then(Value::as_array).is_none_or(|f| f.is_empty())
        && (!(resolved.info.group.is_empty() && resolved.info.resource == "namespaces")
            || super::delete::spec_finalizers(&updated).is_empty());
    if finishing && super::custom::is_definition(&resolved.info) {
        super::custom::delete_definition_objects(backend, &updated).await?;
    }
    let operation = if finishing { Operation::Delete } else { Operation::Put(value) };
    let proposal =
        Proposal { key: key.encode(), precondition: Precondition::ModRevision(current.mod_revision), operation };
    let entry = match append_read_modify_write(backend, proposal, retry, resolved).await {
        Ok(Some(entry)) => entry,
        Ok(None) => {
            claims.revert(backend).await;
            return Ok(None);
        }
        Err(e) => {
            claims.revert(backend).await;
            return Err(e);
        }
    };
    if finishing {
        claims.revert(backend).await;
        super::allocate::release_all(backend, resolved, &stored).await;
    } else {
        claims.commit(backend).await;
    }
    if finishing {
        // The last finalizer is gone: the object was deleted; answer with
        // its final state, as kube-apiserver does.
        let bytes = serde_json::to_vec(&updated).map_err(|e| ApiError::Internal(e.to_string()))?;
        return Ok(Some(bytes.into()));
    }
    Ok(Some(stored_after(backend, &key, entry.revision, &updated).await?))
}

/// kube refuses finalizers added to an object already being deleted.
fn new_finalizers_while_deleting(stored: &Object, updated: &Object) -> Option<crate::api::status::Cause> {
    if metadata(stored).get("deletionTimestamp").is_none_or(|t| t.is_null()) {
        return None;
    }
    let list = |o: &Object| -> Vec<String> {
        metadata(o)
            .get("finalizers")
            .and_then(Value::as_array)
            .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let old = list(stored);
    let added: Vec<String> = list(updated).into_iter().filter(|f| !old.contains(f)).collect();
    if added.is_empty() {
        return None;
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    Some(crate::api::status::Cause {
        reason: "FieldValueForbidden".into(),
        message: format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
        field: "metadata.finalizers".into(),
    })
}

/// The object to store: the client's, with the server-owned fields of the
/// stored version.
fn merge_server_fields(mut object: Object, stored: &Object, resolved: &Resolved) -> Object {
    let stored_meta = metadata(stored).clone();
    let status_subresource = resolved.info.subresources.iter().any(|s| s == "status");
    // `certificatesigningrequests/approval` writes status conditions only:
    // it takes the request's status as `/status` does (its strategy keeps
    // all but the conditions: strategy/subresources.rs).
    let is_status_update = matches!(resolved.subresource.as_deref(), Some("status" | "approval"));
    if is_status_update {
        // PUT .../status changes only status (and, for the core kinds whose
        // status strategies keep it, the metadata the writer may set:
        // strategy/rules/core).
        let mut result = stored.clone();
        match object.shift_remove("status") {
            Some(status) => result.insert("status".into(), status),
            None => result.shift_remove("status"),
        };
        // managedFields are the writer's, as kube's ResetObjectMetaForStatus
        // leaves them: they record what this status write changed (an
        // apply's result, or what a client sent; without any, the stored
        // ones, which the field manager then extends).
        if let Some(managed) = metadata(&object).get("managedFields") {
            metadata_mut(&mut result).insert("managedFields".into(), managed.clone());
        }
        // A version converted from a shared store reads part of its status
        // from annotations (autoscaling/v1's current metrics and
        // conditions): kube reads the request's when it decodes it.
        let info = &resolved.info;
        let round_trip = crate::types::conversion::round_trip_annotations(&info.group, &info.version, &info.kind);
        if info.custom.is_none() && !round_trip.is_empty() {
            let from = metadata(&object).get("annotations").and_then(Value::as_object).cloned().unwrap_or_default();
            let to = metadata_mut(&mut result);
            if !to.get("annotations").is_some_and(Value::is_object) {
                to.insert("annotations".into(), json!({}));
            }
            if let Some(Value::Object(annotations)) = to.get_mut("annotations") {
                for key in round_trip {
                    match from.get(*key) {
                        Some(value) => annotations.insert((*key).into(), value.clone()),
                        None => annotations.shift_remove(*key),
                    };
                }
                annotations.sort_keys();
                if annotations.is_empty() {
                    to.shift_remove("annotations");
                }
            }
        }
        if resolved.info.group.is_empty() {
            let fields = crate::strategy::rules::core::status_update_metadata(&resolved.info.kind);
            let (from, to) = (metadata(&object).clone(), metadata_mut(&mut result));
            for field in fields {
                match from.get(*field) {
                    Some(value) => to.insert((*field).into(), value.clone()),
                    None => to.shift_remove(*field),
                };
            }
        }
        return result;
    }
    if status_subresource {
        match stored.get("status") {
            Some(status) => object.insert("status".into(), status.clone()),
            None => object.shift_remove("status"),
        };
    }
    let spec_changed = match &resolved.info.custom {
        // Custom resources: any change outside metadata and status.
        Some(_) => super::custom::content_changed(&object, stored),
        None => object.get("spec") != stored.get("spec"),
    };
    let meta = metadata_mut(&mut object);
    for owned in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generateName"] {
        match stored_meta.get(owned) {
            Some(v) => meta.insert(owned.into(), v.clone()),
            None => meta.shift_remove(owned),
        };
    }
    if resolved.info.has_generation {
        let generation = stored_meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
        let next = if spec_changed { generation + 1 } else { generation };
        meta.insert("generation".into(), json!(next));
    } else {
        meta.shift_remove("generation");
    }
    meta.shift_remove("resourceVersion");
    object
}
