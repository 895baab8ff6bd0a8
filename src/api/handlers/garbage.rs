//! The part of kube's garbage collector that finishes deletes whose
//! propagation policy left a finalizer on the owner: `orphan` (dependents
//! lose their ownerReference to it, then the finalizer goes) and
//! `foregroundDeletion` (dependents are deleted, and once none remains the
//! finalizer goes). Removing the last finalizer removes the owner, through
//! the same rule as an update (`delete::plan` is not involved).
//!
//! Dependents are found by scanning the owner's namespace (or, for a
//! cluster-scoped owner, every object) for an ownerReference with its uid:
//! there is no owner graph, so this runs only for these two policies, never
//! for Background deletes (dependents of a Background delete stay).
//!
//! Runs as a background task started through [`Backend::spawn`]; passes
//! repeat with a growing wait (up to `namespace_finalize_retry_max`) while a
//! dependent is held or a write conflicts.

use super::delete::{delete_object, list_current, resolved_for, DeleteOptions, Outcome};
use super::delete::{FINALIZER_FOREGROUND, FINALIZER_ORPHAN};
use super::{read_current, Resolved};
use crate::api::object::{metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::ApiError;
use crate::api::Backend;
use crate::cache::CachedObject;
use crate::log::{AppendError, Operation, Precondition, Proposal};
use crate::types::registry::ResourceInfo;
use serde_json::{json, Value};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

const FIRST_RETRY: Duration = Duration::from_millis(100);

/// True when `object` (JSON) carries a finalizer this collector handles.
pub fn needs_collection(object: &[u8]) -> bool {
    serde_json::from_slice::<Value>(object).is_ok_and(|v| {
        v["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == FINALIZER_ORPHAN || f == FINALIZER_FOREGROUND))
    })
}

/// Finishes the deletion of `owner` (the object with uid `uid`).
pub async fn collect<B: Backend>(backend: Rc<B>, owner: Resolved, uid: String) {
    let mut wait = FIRST_RETRY;
    loop {
        if let Ok(true) = pass(&*backend, &owner, &uid).await {
            return;
        }
        backend.sleep(wait).await;
        wait = (wait * 2).min(backend.config().namespace_finalize_retry_max);
    }
}

fn owned_by(object: &Object, uid: &str) -> bool {
    metadata(object)
        .get("ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid))
}

/// The objects with an ownerReference to `uid`, decoded.
async fn dependents(
    backend: &impl Backend,
    namespace: &str,
    uid: &str,
) -> Result<Vec<(ResourceInfo, Arc<CachedObject>, Object)>, ApiError> {
    let mut seen = std::collections::BTreeSet::new();
    let resources: Vec<ResourceInfo> = backend
        .registry()
        .iter()
        .filter(|r| (namespace.is_empty() || r.namespaced) && seen.insert((r.group.clone(), r.resource.clone())))
        .cloned()
        .collect();
    let mut found = Vec::new();
    for info in resources {
        let scope = if namespace.is_empty() { None } else { Some(namespace) };
        for object in list_current(backend, &info, scope, None).await? {
            if let Ok(decoded) = serde_json::from_slice::<Object>(&object.json) {
                if owned_by(&decoded, uid) {
                    found.push((info.clone(), object, decoded));
                }
            }
        }
    }
    Ok(found)
}

/// One pass: `Ok(true)` when there is nothing left to do.
async fn pass(backend: &impl Backend, owner: &Resolved, uid: &str) -> Result<bool, ApiError> {
    let key = owner.key(owner.name.as_deref().unwrap_or(""));
    let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else { return Ok(true) };
    if current.meta().uid() != uid {
        return Ok(true);
    }
    let stored: Object =
        serde_json::from_slice(&current.json).map_err(|e| ApiError::Internal(format!("stored object: {e}")))?;
    let finalizers: Vec<String> = metadata(&stored)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let orphan = finalizers.iter().any(|f| f == FINALIZER_ORPHAN);
    let foreground = finalizers.iter().any(|f| f == FINALIZER_FOREGROUND);
    if metadata(&stored).get("deletionTimestamp").is_none_or(|t| t.is_null()) || !(orphan || foreground) {
        return Ok(true);
    }
    let namespace = owner.namespace.clone().unwrap_or_default();
    for (info, object, mut decoded) in dependents(backend, &namespace, uid).await? {
        if orphan {
            let meta = metadata_mut(&mut decoded);
            let kept: Vec<Value> = meta
                .get("ownerReferences")
                .and_then(Value::as_array)
                .map(|refs| refs.iter().filter(|r| r["uid"] != uid).cloned().collect())
                .unwrap_or_default();
            if kept.is_empty() {
                meta.shift_remove("ownerReferences");
            } else {
                meta.insert("ownerReferences".into(), json!(kept));
            }
            meta.shift_remove("resourceVersion");
            let proposal = Proposal {
                key: object.key.clone(),
                precondition: Precondition::ModRevision(object.mod_revision),
                operation: Operation::Put(storage_value(&order_fields(decoded))?),
            };
            match backend.append(proposal).await {
                Ok(_) => {}
                Err(AppendError::Conflict { .. }) => return Ok(false),
                Err(e) => return Err(super::append_error(e)),
            }
        } else {
            match delete_object(backend, &resolved_for(&info, &object), &DeleteOptions::background()).await {
                Ok(Outcome::Removed(_)) | Err(ApiError::NotFound(_)) => {}
                Ok(Outcome::Kept(_)) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }
    // Every dependent is handled: the finalizers go, and with the last one the owner.
    let remaining: Vec<&String> =
        finalizers.iter().filter(|f| *f != FINALIZER_ORPHAN && *f != FINALIZER_FOREGROUND).collect();
    let grace = metadata(&stored).get("deletionGracePeriodSeconds").and_then(Value::as_i64);
    let namespace_held = owner.info.group.is_empty()
        && owner.info.resource == "namespaces"
        && !super::delete::spec_finalizers(&stored).is_empty();
    let operation = if remaining.is_empty() && grace.is_none_or(|g| g == 0) && !namespace_held {
        Operation::Delete
    } else {
        let mut updated = stored.clone();
        let meta = metadata_mut(&mut updated);
        if remaining.is_empty() {
            meta.shift_remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(remaining));
        }
        Operation::Put(storage_value(&order_fields(updated))?)
    };
    let proposal =
        Proposal { key: key.encode(), precondition: Precondition::ModRevision(current.mod_revision), operation };
    match backend.append(proposal).await {
        Ok(_) => Ok(true),
        Err(AppendError::Conflict { .. }) => Ok(false),
        Err(e) => Err(super::append_error(e)),
    }
}
