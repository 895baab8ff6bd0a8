//! DELETE of one object: DeleteOptions preconditions (uid, resourceVersion),
//! dry-run, finalizers (an object with finalizers gets a deletionTimestamp and
//! stays until they are removed), and a delete appended conditionally on the
//! mod revision read. Deleting a namespace deletes what it contains first.

use super::update::parse_resource_version;
use super::{append_error, append_read_modify_write, backend_error, modified, read_current, Resolved};
use crate::api::object::{metadata, metadata_mut, storage_value, timestamp, Object};
use crate::api::status::{success_status, ApiError};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::log::{AppendError, Operation, Precondition, Proposal};
use crate::types::key::{collection_prefix, ShardId};
use http::{Response, StatusCode};
use serde_json::{json, Value};

const DELETE_ATTEMPTS_MAX: usize = 16;

/// Namespaces the server keeps, as kube-apiserver's namespace lifecycle does.
const PROTECTED_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The parts of a DeleteOptions body the server honours.
#[derive(Debug, Default)]
struct DeleteOptions {
    uid: Option<String>,
    resource_version: Option<String>,
    dry_run_all: bool,
}

fn parse_options(body: &[u8], head: &RequestHead) -> Result<DeleteOptions, ApiError> {
    let mut options = DeleteOptions { dry_run_all: head.params.dry_run_all, ..DeleteOptions::default() };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(options);
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("invalid DeleteOptions: {e}")))?;
    let preconditions = &value["preconditions"];
    options.uid = preconditions["uid"].as_str().map(str::to_string);
    options.resource_version = preconditions["resourceVersion"].as_str().map(str::to_string);
    if let Some(dry_run) = value["dryRun"].as_array() {
        options.dry_run_all |= dry_run.iter().any(|v| v == "All");
    }
    Ok(options)
}

/// Resources whose DELETE answers with the object (the rest answer Status).
fn returns_deleted_object(resolved: &Resolved) -> bool {
    resolved.info.group.is_empty() && matches!(resolved.info.resource.as_str(), "pods" | "services" | "namespaces")
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    if resolved.subresource.is_some() {
        return Err(ApiError::MethodNotAllowed { method: "DELETE".into(), target: resolved.target() });
    }
    let options = parse_options(body, head)?;
    let name = resolved.name.clone().unwrap_or_default();
    let is_namespace = resolved.info.group.is_empty() && resolved.info.resource == "namespaces";
    if is_namespace && PROTECTED_NAMESPACES.contains(&name.as_str()) {
        return Err(ApiError::Forbidden {
            target: resolved.target(),
            message: "this namespace may not be deleted".into(),
        });
    }
    let key = resolved.key(&name);
    let precondition_given = options.uid.is_some() || options.resource_version.is_some();
    for _ in 0..DELETE_ATTEMPTS_MAX {
        let current = read_current(backend, &key, backend.committed_revision())
            .await?
            .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
        if let Some(uid) = &options.uid {
            if *uid != current.meta.uid {
                return Err(ApiError::Conflict {
                    target: resolved.target(),
                    message: format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        current.meta.uid
                    ),
                });
            }
        }
        if let Some(rv) = &options.resource_version {
            if parse_resource_version(rv)? != Some(current.mod_revision) {
                return Err(ApiError::Conflict {
                    target: resolved.target(),
                    message: format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        current.mod_revision
                    ),
                });
            }
        }
        let stored: Object = serde_json::from_slice(&current.json)
            .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
        let has_finalizers =
            metadata(&stored).get("finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
        if options.dry_run_all {
            return Ok(respond(StatusCode::OK, "application/json", current.json.clone()));
        }
        if has_finalizers {
            if metadata(&stored).contains_key("deletionTimestamp") {
                return Ok(respond(StatusCode::OK, "application/json", current.json.clone()));
            }
            let mut marked = stored.clone();
            let meta = metadata_mut(&mut marked);
            meta.insert("deletionTimestamp".into(), json!(timestamp(backend.now())));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            let marked = crate::api::object::order_fields(marked);
            let proposal = Proposal {
                key: key.encode(),
                precondition: Precondition::ModRevision(current.mod_revision),
                operation: Operation::Put(storage_value(&marked)?),
            };
            let Some(entry) = append_read_modify_write(backend, proposal, !precondition_given, resolved).await? else {
                continue;
            };
            let bytes = super::create::stored_after(backend, &key, entry.revision, &marked).await?;
            return Ok(respond(StatusCode::OK, "application/json", bytes));
        }
        if is_namespace {
            delete_namespace_contents(backend, &name).await?;
        }
        if super::custom::is_definition(&resolved.info) {
            super::custom::delete_definition_objects(backend, &stored).await?;
        }
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::ModRevision(current.mod_revision),
            operation: Operation::Delete,
        };
        if append_read_modify_write(backend, proposal, !precondition_given, resolved).await?.is_none() {
            continue;
        }
        let body = if returns_deleted_object(resolved) {
            current.json.clone()
        } else {
            success_status(&resolved.target(), &current.meta.uid)
        };
        return Ok(respond(StatusCode::OK, "application/json", body));
    }
    Err(modified(resolved))
}

/// Deletes every namespaced object in `namespace` (kube's namespace
/// controller does this while the namespace is Terminating).
async fn delete_namespace_contents(backend: &impl Backend, namespace: &str) -> Result<(), ApiError> {
    let revision = backend.committed_revision();
    let mut prefixes: Vec<String> = backend
        .registry()
        .iter()
        .filter(|r| r.namespaced)
        .map(|r| collection_prefix(&r.group, &r.resource, Some(namespace)))
        .collect();
    // A custom resource served in several versions is stored once.
    prefixes.sort();
    prefixes.dedup();
    for shard in 0..backend.shard_count() {
        let prefixes = prefixes.clone();
        let victims = backend
            .on_shard(ShardId(shard), revision, move |store| {
                prefixes
                    .iter()
                    .flat_map(|p| store.list(p.as_bytes(), None, usize::MAX))
                    .map(|o| (o.key.clone(), o.mod_revision))
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(backend_error)?;
        for (key, mod_revision) in victims {
            let proposal = Proposal {
                key: key.clone(),
                precondition: Precondition::ModRevision(mod_revision),
                operation: Operation::Delete,
            };
            match backend.append(proposal).await {
                Ok(_) | Err(AppendError::Conflict { .. }) => {}
                Err(e) => return Err(append_error(e)),
            }
        }
    }
    Ok(())
}
