//! DELETE of one object and of a collection (`deletecollection`), with
//! kube-apiserver's DeleteOptions: preconditions (uid, resourceVersion),
//! `gracePeriodSeconds` (graceful deletion of pods), `propagationPolicy` and
//! the legacy `orphanDependents` (the `orphan` and `foregroundDeletion`
//! finalizers), `dryRun`, and `ignoreStoreReadErrorWithClusterBreakingPotential`
//! (behind the AllowUnsafeMalformedObjectDeletion gate).
//!
//! Deleting is two phases, as in Kubernetes: an object with finalizers (or a
//! pod given a grace period) gets `deletionTimestamp` and
//! `deletionGracePeriodSeconds` and stays (watchers see MODIFIED); it is
//! removed when an update leaves it without finalizers (`update.rs`). A
//! namespace goes Terminating and, when the namespace controller runs
//! (`--controllers`), its contents are deleted by a background task
//! (`namespace.rs`); the garbage collector (`garbage.rs`) follows the
//! committed entries, not this path. What to write is decided by [`plan`], a pure
//! function; every write is appended conditionally on the mod revision read.

use super::update::parse_resource_version;
use super::{append_read_modify_write, backend_error, modified, read_current, Resolved};
use crate::api::object::{metadata, metadata_mut, order_fields, storage_value, timestamp, Object};
use crate::api::status::{success_status, ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::log::{Operation, Precondition, Proposal};
use crate::types::key::{collection_prefix, ShardId};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

const DELETE_ATTEMPTS_MAX: usize = 16;

/// Namespaces the server keeps, as kube-apiserver's namespace lifecycle does.
const PROTECTED_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

pub const FINALIZER_ORPHAN: &str = "orphan";
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";
/// The namespace controller's finalizer, in a namespace's `spec.finalizers`.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// A pod's grace period when its spec names none (kube's defaulting).
const POD_DEFAULT_GRACE_SECONDS: i64 = 30;

/// The DeleteOptions of a request (query parameters, then the body's fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub grace_period_seconds: Option<i64>,
    pub propagation_policy: Option<String>,
    pub orphan_dependents: Option<bool>,
    pub dry_run_all: bool,
    pub ignore_store_read_error: bool,
}

impl DeleteOptions {
    /// What kube's namespace controller deletes a namespace's contents with.
    pub fn background() -> DeleteOptions {
        DeleteOptions { propagation_policy: Some("Background".into()), ..DeleteOptions::default() }
    }

    fn precondition_given(&self) -> bool {
        self.uid.is_some() || self.resource_version.is_some()
    }
}

fn options_invalid(field: &str, reason: &str, message: String) -> ApiError {
    ApiError::Invalid {
        kind: "DeleteOptions".into(),
        target: Target::new("meta.k8s.io", "", ""),
        causes: vec![Cause { reason: reason.into(), message, field: field.into() }],
    }
}

/// Reads DeleteOptions from the query and the body (the body wins), and
/// validates them as kube-apiserver does.
pub fn parse_options(
    body: &[u8],
    head: &RequestHead,
    allow_unsafe_delete: bool,
    collection: bool,
) -> Result<DeleteOptions, ApiError> {
    let mut options = DeleteOptions {
        grace_period_seconds: head.params.grace_period_seconds,
        propagation_policy: head.params.propagation_policy.clone(),
        dry_run_all: head.params.dry_run_all,
        ..DeleteOptions::default()
    };
    let (mut orphan_seen, mut ignore_seen) = (false, false);
    for (name, value) in form_urlencoded::parse(head.query.as_deref().unwrap_or("").as_bytes()) {
        // The first value counts, read as apimachinery reads a boolean.
        let flag = crate::api::params::Params::query_bool(&value);
        match name.as_ref() {
            "orphanDependents" if !orphan_seen => {
                orphan_seen = true;
                options.orphan_dependents = Some(flag);
            }
            "ignoreStoreReadErrorWithClusterBreakingPotential" if !ignore_seen => {
                ignore_seen = true;
                options.ignore_store_read_error = flag;
            }
            _ => {}
        }
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        let json_body = head.content_type.as_deref().is_none_or(|c| {
            let media = c.split(';').next().unwrap_or("").trim();
            media.is_empty() || media.eq_ignore_ascii_case("application/json")
        });
        let value: Value = if json_body {
            serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("invalid DeleteOptions: {e}")))?
        } else {
            // Protobuf, YAML or CBOR DeleteOptions, as typed clients send them.
            Value::Object(crate::api::object::decode_body(head.content_type.as_deref(), body, "DeleteOptions")?)
        };
        if !value.is_object() {
            return Err(ApiError::BadRequest("invalid DeleteOptions: not a JSON object".into()));
        }
        let wrong = |field: &str, go_type: &str| {
            ApiError::BadRequest(format!(
                "json: cannot unmarshal {} into Go struct field DeleteOptions.{field} of type {go_type}",
                value[field]
            ))
        };
        let preconditions = &value["preconditions"];
        if let Some(uid) = preconditions.get("uid").filter(|v| !v.is_null()) {
            options.uid = Some(uid.as_str().ok_or_else(|| wrong("preconditions", "string"))?.to_string());
        }
        if let Some(rv) = preconditions.get("resourceVersion").filter(|v| !v.is_null()) {
            options.resource_version = Some(rv.as_str().ok_or_else(|| wrong("preconditions", "string"))?.to_string());
        }
        if let Some(grace) = value.get("gracePeriodSeconds").filter(|v| !v.is_null()) {
            options.grace_period_seconds = Some(grace.as_i64().ok_or_else(|| wrong("gracePeriodSeconds", "int64"))?);
        }
        if let Some(policy) = value.get("propagationPolicy").filter(|v| !v.is_null()) {
            options.propagation_policy =
                Some(policy.as_str().ok_or_else(|| wrong("propagationPolicy", "v1.DeletionPropagation"))?.to_string());
        }
        if let Some(orphan) = value.get("orphanDependents").filter(|v| !v.is_null()) {
            options.orphan_dependents = Some(orphan.as_bool().ok_or_else(|| wrong("orphanDependents", "bool"))?);
        }
        if let Some(flag) = value.get("ignoreStoreReadErrorWithClusterBreakingPotential").filter(|v| !v.is_null()) {
            options.ignore_store_read_error =
                flag.as_bool().ok_or_else(|| wrong("ignoreStoreReadErrorWithClusterBreakingPotential", "bool"))?;
        }
        if let Some(dry_run) = value.get("dryRun").filter(|v| !v.is_null()) {
            let values = dry_run.as_array().ok_or_else(|| wrong("dryRun", "[]string"))?;
            for (i, v) in values.iter().enumerate() {
                match v.as_str() {
                    Some("All") => options.dry_run_all = true,
                    Some(other) => {
                        return Err(options_invalid(
                            &format!("dryRun[{i}]"),
                            "FieldValueNotSupported",
                            format!("Unsupported value: {other:?}: supported values: \"All\""),
                        ))
                    }
                    None => return Err(wrong("dryRun", "[]string")),
                }
            }
        }
    }
    // Without the feature gate the option does not exist.
    if !allow_unsafe_delete {
        options.ignore_store_read_error = false;
    }
    validate(&options, collection)?;
    Ok(options)
}

fn validate(options: &DeleteOptions, collection: bool) -> Result<(), ApiError> {
    if let Some(policy) = &options.propagation_policy {
        if options.orphan_dependents.is_some() {
            return Err(options_invalid(
                "propagationPolicy",
                "FieldValueInvalid",
                format!("Invalid value: {policy:?}: orphanDependents and deletionPropagation cannot be both set"),
            ));
        }
        if !matches!(policy.as_str(), "Foreground" | "Background" | "Orphan") {
            return Err(options_invalid(
                "propagationPolicy",
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {policy:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                ),
            ));
        }
    }
    if options.ignore_store_read_error {
        const FLAG: &str = ".ignoreStoreReadErrorWithClusterBreakingPotential";
        if collection {
            return Err(options_invalid(
                "ignoreStoreReadErrorWithClusterBreakingPotential",
                "FieldValueInvalid",
                "Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option".into(),
            ));
        }
        let set: [(&str, bool); 5] = [
            ("dryRun", options.dry_run_all),
            ("gracePeriodSeconds", options.grace_period_seconds.is_some()),
            ("orphanDependents", options.orphan_dependents.is_some()),
            ("preconditions", options.precondition_given()),
            ("propagationPolicy", options.propagation_policy.is_some()),
        ];
        if let Some((field, _)) = set.iter().find(|(_, is_set)| *is_set) {
            return Err(options_invalid(
                field,
                "FieldValueInvalid",
                format!("Invalid value: \"{field}\": cannot be set together with {FLAG}"),
            ));
        }
    }
    Ok(())
}

/// What a delete does to the stored object.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Remove it from storage now.
    Remove,
    /// Write this version (deletionTimestamp, finalizers); the object stays.
    Write(Object),
    /// Nothing to write: a deletion is already pending.
    Unchanged,
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.resource == "namespaces"
}

fn is_pod(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.resource == "pods"
}

fn finalizers(object: &Object) -> Vec<String> {
    metadata(object)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// A namespace's `spec.finalizers`.
pub fn spec_finalizers(object: &Object) -> Vec<String> {
    object
        .get("spec")
        .and_then(|s| s.get("finalizers"))
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// kube's default garbage collection policy is to orphan for these (kept
/// for compatibility in their v1 APIs); the rest delete dependents.
fn orphans_by_default(info: &ResourceInfo) -> bool {
    matches!((info.group.as_str(), info.resource.as_str()), ("", "replicationcontrollers") | ("batch", "jobs"))
}

/// The finalizers after applying the options' propagation policy, as
/// kube-apiserver's `deletionFinalizersForGarbageCollection` computes them.
fn gc_finalizers(info: &ResourceInfo, existing: &[String], options: &DeleteOptions) -> Vec<String> {
    let first_marker = existing.iter().find(|f| *f == FINALIZER_ORPHAN || *f == FINALIZER_FOREGROUND);
    let orphan = match (options.orphan_dependents, options.propagation_policy.as_deref()) {
        (Some(orphan), _) => orphan,
        (None, Some(policy)) => policy == "Orphan",
        (None, None) => match first_marker {
            Some(f) => f == FINALIZER_ORPHAN,
            None => orphans_by_default(info),
        },
    };
    let foreground = match (options.orphan_dependents, options.propagation_policy.as_deref()) {
        (Some(_), _) => false,
        (None, Some(policy)) => policy == "Foreground",
        (None, None) => first_marker.is_some_and(|f| f == FINALIZER_FOREGROUND),
    };
    let mut new: Vec<String> =
        existing.iter().filter(|f| *f != FINALIZER_ORPHAN && *f != FINALIZER_FOREGROUND).cloned().collect();
    if orphan {
        new.push(FINALIZER_ORPHAN.into());
    }
    if foreground {
        new.push(FINALIZER_FOREGROUND.into());
    }
    let as_set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    if as_set(&new) == as_set(existing) {
        existing.to_vec()
    } else {
        new
    }
}

fn set_finalizers(object: &mut Object, finalizers: Vec<String>) {
    let meta = metadata_mut(object);
    if finalizers.is_empty() {
        meta.shift_remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(finalizers));
    }
}

fn bump_generation(object: &mut Object) {
    let meta = metadata_mut(object);
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
        meta.insert("generation".into(), json!(generation + 1));
    }
}

fn parse_time(text: &str) -> Option<SystemTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok().map(SystemTime::from)
}

fn add_seconds(at: SystemTime, seconds: i64) -> SystemTime {
    if seconds >= 0 {
        at + Duration::from_secs(seconds as u64)
    } else {
        at.checked_sub(Duration::from_secs(seconds.unsigned_abs())).unwrap_or(at)
    }
}

/// A pod's grace period for this delete (kube's `CheckGracefulDelete`):
/// the option, else the spec's, else the default; zero when the pod is not
/// scheduled or has already finished.
fn pod_grace_period(pod: &Object, requested: Option<i64>) -> i64 {
    let spec = pod.get("spec");
    let mut period = requested.unwrap_or_else(|| {
        spec.and_then(|s| s.get("terminationGracePeriodSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(POD_DEFAULT_GRACE_SECONDS)
    });
    if spec.and_then(|s| s.get("nodeName")).and_then(Value::as_str).unwrap_or("").is_empty() {
        period = 0;
    }
    let phase = pod.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str).unwrap_or("");
    if phase == "Failed" || phase == "Succeeded" {
        period = 0;
    }
    if period < 0 {
        1
    } else {
        period
    }
}

/// What deleting `stored` with `options` at `now` writes.
pub fn plan(info: &ResourceInfo, stored: &Object, options: &DeleteOptions, now: SystemTime) -> Plan {
    let mut object = stored.clone();
    // Negative grace periods are one second on the delete path.
    let requested = options.grace_period_seconds.map(|g| if g < 0 { 1 } else { g });
    let deleting = metadata(stored).get("deletionTimestamp").and_then(Value::as_str).map(str::to_string);
    if is_namespace(info) {
        match &deleting {
            None => {
                metadata_mut(&mut object).insert("deletionTimestamp".into(), json!(timestamp(now)));
                let status = object.entry("status").or_insert_with(|| json!({}));
                if let Value::Object(status) = status {
                    status.insert("phase".into(), json!("Terminating"));
                }
                let existing = finalizers(stored);
                let has = |f: &str| existing.iter().any(|e| e == f);
                let orphan = match (options.orphan_dependents, options.propagation_policy.as_deref()) {
                    (Some(o), _) => o,
                    (None, Some(p)) => p == "Orphan",
                    (None, None) => has(FINALIZER_ORPHAN),
                };
                let foreground = match (options.orphan_dependents, options.propagation_policy.as_deref()) {
                    (Some(o), _) => !o,
                    (None, Some(p)) => p == "Foreground",
                    (None, None) => has(FINALIZER_FOREGROUND),
                };
                let mut new: Vec<String> =
                    existing.iter().filter(|f| *f != FINALIZER_ORPHAN && *f != FINALIZER_FOREGROUND).cloned().collect();
                if orphan {
                    new.push(FINALIZER_ORPHAN.into());
                }
                if foreground {
                    new.push(FINALIZER_FOREGROUND.into());
                }
                if new.len() != existing.len() || orphan != has(FINALIZER_ORPHAN) {
                    set_finalizers(&mut object, new);
                }
                return Plan::Write(object);
            }
            Some(_) if !spec_finalizers(stored).is_empty() => return Plan::Unchanged,
            Some(_) => {}
        }
    }
    let existing_grace = metadata(stored).get("deletionGracePeriodSeconds").and_then(Value::as_i64);
    if let (Some(since), true, Some(grace)) = (&deleting, is_pod(info), existing_grace.filter(|g| *g > 0)) {
        // A graceful deletion is pending: only a shorter period changes it.
        return match requested {
            Some(period) if period < grace => {
                let base = parse_time(since).unwrap_or(now);
                let at = add_seconds(add_seconds(base, -grace), period);
                let meta = metadata_mut(&mut object);
                meta.insert("deletionTimestamp".into(), json!(timestamp(at)));
                meta.insert("deletionGracePeriodSeconds".into(), json!(period));
                if period == 0 && finalizers(&object).is_empty() {
                    Plan::Remove
                } else {
                    Plan::Write(object)
                }
            }
            _ => Plan::Unchanged,
        };
    }
    let new_finalizers = gc_finalizers(info, &finalizers(stored), options);
    if deleting.is_none() && is_pod(info) {
        let period = pod_grace_period(stored, requested);
        if period > 0 {
            let meta = metadata_mut(&mut object);
            meta.insert("deletionTimestamp".into(), json!(timestamp(add_seconds(now, period))));
            meta.insert("deletionGracePeriodSeconds".into(), json!(period));
            bump_generation(&mut object);
            set_finalizers(&mut object, new_finalizers);
            return Plan::Write(object);
        }
    }
    if new_finalizers.is_empty() {
        return Plan::Remove;
    }
    // Mark as deleting: the finalizers' owners take it from here.
    if deleting.is_none() {
        bump_generation(&mut object);
    }
    let keep_earlier = deleting.as_deref().and_then(parse_time).is_some_and(|t| t <= now);
    let meta = metadata_mut(&mut object);
    if !keep_earlier {
        meta.insert("deletionTimestamp".into(), json!(timestamp(now)));
    }
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    set_finalizers(&mut object, new_finalizers);
    Plan::Write(object)
}

/// How a delete ended.
pub enum Outcome {
    /// The object is gone; this was its last version.
    Removed(Arc<CachedObject>),
    /// The object stays (finalizers, graceful deletion, a Terminating
    /// namespace); its version after the request.
    Kept(Bytes),
}

fn precondition_failed(resolved: &Resolved, message: String) -> ApiError {
    ApiError::Conflict { target: resolved.target(), message }
}

/// Deletes the object `resolved` names: reads it, checks the preconditions,
/// and appends the plan's write or removal conditionally on what it read.
pub async fn delete_object(
    backend: &impl Backend,
    resolved: &Resolved,
    options: &DeleteOptions,
) -> Result<Outcome, ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let key = resolved.key(&name);
    for _ in 0..DELETE_ATTEMPTS_MAX {
        let current = read_current(backend, &key, backend.committed_revision())
            .await?
            .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
        let stored: Object = match serde_json::from_slice(&current.json) {
            Ok(stored) => stored,
            Err(e) if !options.ignore_store_read_error => {
                return Err(ApiError::Internal(format!(
                    "the object cannot be decoded ({e}); an unsafe delete with \
                     ignoreStoreReadErrorWithClusterBreakingPotential can remove it"
                )))
            }
            // The unsafe delete: no preconditions, no finalizers.
            Err(_) => {
                let proposal = Proposal {
                    key: key.encode(),
                    precondition: Precondition::ModRevision(current.mod_revision),
                    operation: Operation::Delete,
                };
                if append_read_modify_write(backend, proposal, true, resolved).await?.is_none() {
                    continue;
                }
                return Ok(Outcome::Removed(current));
            }
        };
        if let Some(uid) = &options.uid {
            if uid != current.meta().uid() {
                return Err(precondition_failed(
                    resolved,
                    format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        current.meta().uid()
                    ),
                ));
            }
        }
        if let Some(rv) = &options.resource_version {
            if parse_resource_version(rv)? != Some(current.mod_revision) {
                return Err(precondition_failed(
                    resolved,
                    format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        current.mod_revision
                    ),
                ));
            }
        }
        let (operation, written) = match plan(&resolved.info, &stored, options, backend.now()) {
            Plan::Unchanged => return Ok(Outcome::Kept(current.json.clone())),
            Plan::Write(object) => {
                let object = order_fields(object);
                let value = storage_value(&object)?;
                if value == storage_value(&stored)? {
                    return Ok(Outcome::Kept(current.json.clone()));
                }
                if options.dry_run_all {
                    let mut preview = object;
                    crate::cache::set_resource_version(metadata_mut(&mut preview), current.mod_revision);
                    let bytes = serde_json::to_vec(&preview).map_err(|e| ApiError::Internal(e.to_string()))?;
                    return Ok(Outcome::Kept(bytes.into()));
                }
                (Operation::Put(value), Some(object))
            }
            Plan::Remove if options.dry_run_all => return Ok(Outcome::Removed(current)),
            Plan::Remove => {
                // A definition's custom resources go before the definition.
                if super::custom::is_definition(&resolved.info) {
                    super::custom::delete_definition_objects(backend, &stored).await?;
                }
                (Operation::Delete, None)
            }
        };
        let proposal =
            Proposal { key: key.encode(), precondition: Precondition::ModRevision(current.mod_revision), operation };
        let Some(entry) = append_read_modify_write(backend, proposal, !options.precondition_given(), resolved).await?
        else {
            continue;
        };
        return match written {
            Some(object) => {
                Ok(Outcome::Kept(super::create::stored_after(backend, &key, entry.revision, &object).await?))
            }
            None => {
                // A deleted Service's cluster IPs and node ports are free again.
                super::allocate::release_all(backend, resolved, &stored).await;
                Ok(Outcome::Removed(current))
            }
        };
    }
    Err(modified(resolved))
}

/// Resources whose DELETE answers with the object (the rest answer Status).
fn returns_deleted_object(resolved: &Resolved) -> bool {
    resolved.info.group.is_empty() && matches!(resolved.info.resource.as_str(), "pods" | "services" | "namespaces")
}

pub async fn serve<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    if resolved.subresource.is_some() {
        return Err(ApiError::MethodNotAllowed { method: "DELETE".into(), target: resolved.target() });
    }
    let options = parse_options(body, head, backend.config().allow_unsafe_malformed_object_deletion, false)?;
    let name = resolved.name.clone().unwrap_or_default();
    let namespace = is_namespace(&resolved.info);
    if namespace && PROTECTED_NAMESPACES.contains(&name.as_str()) {
        return Err(ApiError::Forbidden {
            target: resolved.target(),
            message: "this namespace may not be deleted".into(),
        });
    }
    match delete_object(backend, resolved, &options).await? {
        Outcome::Removed(last) => {
            let body = if returns_deleted_object(resolved) {
                super::versions::convert(&resolved.info, &last.json)
            } else {
                success_status(&resolved.target(), last.meta().uid())
            };
            Ok(respond(StatusCode::OK, "application/json", body))
        }
        Outcome::Kept(bytes) => {
            // The namespace controller, when it runs (`--controllers`); the
            // garbage collector follows the committed entries (garbage.rs).
            if namespace && !options.dry_run_all && backend.config().controllers.namespace {
                let backend = shared.clone();
                shared.spawn(Box::pin(async move { super::namespace::finalize(backend, name).await }));
            }
            // kube answers 202 when a cascading delete was asked for the old way.
            let code = if options.orphan_dependents == Some(false) { StatusCode::ACCEPTED } else { StatusCode::OK };
            Ok(respond(code, "application/json", super::versions::convert(&resolved.info, &bytes)))
        }
    }
}

/// The current objects of a collection (a namespace's, or every
/// namespace's) that match the request's selectors, in key order per shard.
pub async fn list_current(
    backend: &impl Backend,
    info: &ResourceInfo,
    namespace: Option<&str>,
    selectors: Option<super::list::Selectors>,
) -> Result<Vec<Arc<CachedObject>>, ApiError> {
    let revision = backend.committed_revision();
    let (group, resource) = info.storage_group_resource();
    let prefix = collection_prefix(group, resource, namespace);
    let mut all = Vec::new();
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let selectors = selectors.clone();
        let found = backend
            .on_shard(ShardId(shard), revision, move |store| {
                store
                    .list(prefix.as_bytes(), None, usize::MAX)
                    .into_iter()
                    .filter(|o| selectors.as_ref().is_none_or(|s| s.matches(o)))
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(backend_error)?;
        all.extend(found);
    }
    Ok(all)
}

/// The object `object` names, as a delete target of `info`'s resource.
pub fn resolved_for(info: &ResourceInfo, object: &CachedObject) -> Resolved {
    let namespace = if info.namespaced { object.meta().namespace().to_string() } else { String::new() };
    Resolved {
        info: info.clone(),
        namespace: Some(namespace),
        name: Some(object.meta().name().to_string()),
        subresource: None,
    }
}

/// DELETE on a collection: deletes every object the selectors match (each
/// as a DELETE of it with the same options would) and answers with the list
/// of what was matched, as kube-apiserver does.
pub async fn serve_collection<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    if resolved.subresource.is_some() {
        return Err(ApiError::MethodNotAllowed { method: "DELETE".into(), target: resolved.target() });
    }
    let options = parse_options(body, head, backend.config().allow_unsafe_malformed_object_deletion, true)?;
    let selectors = super::list::Selectors::parse(head, resolved)?;
    let revision = backend.committed_revision();
    let matched = list_current(backend, &resolved.info, resolved.namespace.as_deref(), Some(selectors)).await?;
    let mut items = Vec::with_capacity(matched.len());
    for object in matched {
        let target = resolved_for(&resolved.info, &object);
        if is_namespace(&resolved.info) && PROTECTED_NAMESPACES.contains(&object.meta().name()) {
            continue;
        }
        match delete_object(backend, &target, &options).await {
            Ok(Outcome::Kept(_)) => {
                if is_namespace(&resolved.info) && !options.dry_run_all && backend.config().controllers.namespace {
                    let (backend, name) = (shared.clone(), object.meta().name().to_string());
                    shared.spawn(Box::pin(async move { super::namespace::finalize(backend, name).await }));
                }
            }
            Ok(Outcome::Removed(_)) | Err(ApiError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        items.push(super::versions::convert(&resolved.info, &object.json));
    }
    let mut out = Vec::new();
    out.extend_from_slice(
        format!(
            "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{{\"resourceVersion\":\"{}\"}},\"items\":[",
            json!(resolved.info.list_kind),
            json!(resolved.info.api_version()),
            revision.0
        )
        .as_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item);
    }
    out.extend_from_slice(b"]}");
    Ok(respond(StatusCode::OK, "application/json", out.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::registry::Registry;

    fn info(group: &str, resource: &str) -> ResourceInfo {
        Registry::builtin().iter().find(|r| r.group == group && r.resource == resource).unwrap().clone()
    }

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map.into_iter().collect(),
            _ => unreachable!(),
        }
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    fn written(plan: Plan) -> Object {
        match plan {
            Plan::Write(o) => o,
            other => panic!("expected a write, got {other:?}"),
        }
    }

    #[test]
    fn without_finalizers_an_object_is_removed_at_once() {
        let cm = object(json!({"metadata": {"name": "a"}}));
        assert_eq!(plan(&info("", "configmaps"), &cm, &DeleteOptions::default(), now()), Plan::Remove);
        // A grace period means nothing to kinds without graceful deletion.
        let options = DeleteOptions { grace_period_seconds: Some(30), ..DeleteOptions::default() };
        assert_eq!(plan(&info("", "configmaps"), &cm, &options, now()), Plan::Remove);
    }

    #[test]
    fn finalizers_mark_the_object_and_a_second_delete_changes_nothing() {
        let cm = object(json!({"metadata": {"name": "a", "finalizers": ["example.com/x"]}}));
        let marked = written(plan(&info("", "configmaps"), &cm, &DeleteOptions::default(), now()));
        assert_eq!(metadata(&marked)["deletionTimestamp"], json!(timestamp(now())));
        assert_eq!(metadata(&marked)["deletionGracePeriodSeconds"], json!(0));
        assert_eq!(metadata(&marked)["finalizers"], json!(["example.com/x"]));
        let later = now() + Duration::from_secs(60);
        let again = written(plan(&info("", "configmaps"), &marked, &DeleteOptions::default(), later));
        assert_eq!(again, marked, "the first deletionTimestamp stays");
    }

    #[test]
    fn propagation_policy_sets_the_garbage_collector_finalizers() {
        let deploy = object(json!({"metadata": {"name": "d", "generation": 3}}));
        let with = |policy: &str| DeleteOptions { propagation_policy: Some(policy.into()), ..DeleteOptions::default() };
        let orphaned = written(plan(&info("apps", "deployments"), &deploy, &with("Orphan"), now()));
        assert_eq!(metadata(&orphaned)["finalizers"], json!(["orphan"]));
        assert_eq!(metadata(&orphaned)["generation"], json!(4));
        let foreground = written(plan(&info("apps", "deployments"), &deploy, &with("Foreground"), now()));
        assert_eq!(metadata(&foreground)["finalizers"], json!(["foregroundDeletion"]));
        assert_eq!(plan(&info("apps", "deployments"), &deploy, &with("Background"), now()), Plan::Remove);
        // The legacy option.
        let legacy = DeleteOptions { orphan_dependents: Some(true), ..DeleteOptions::default() };
        let orphaned = written(plan(&info("apps", "deployments"), &deploy, &legacy, now()));
        assert_eq!(metadata(&orphaned)["finalizers"], json!(["orphan"]));
        // batch/v1 Jobs orphan by default; Background overrides it.
        let job = object(json!({"metadata": {"name": "j"}}));
        let default = written(plan(&info("batch", "jobs"), &job, &DeleteOptions::default(), now()));
        assert_eq!(metadata(&default)["finalizers"], json!(["orphan"]));
        assert_eq!(plan(&info("batch", "jobs"), &job, &with("Background"), now()), Plan::Remove);
        // Switching policy swaps the finalizers, keeping the others.
        let held = object(json!({"metadata": {"name": "d", "finalizers": ["a/b", "orphan"]}}));
        let swapped = written(plan(&info("apps", "deployments"), &held, &with("Foreground"), now()));
        assert_eq!(metadata(&swapped)["finalizers"], json!(["a/b", "foregroundDeletion"]));
    }

    #[test]
    fn pods_on_a_node_are_deleted_gracefully() {
        let pod = object(json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 20},
            "status": {"phase": "Running"}
        }));
        let marked = written(plan(&info("", "pods"), &pod, &DeleteOptions::default(), now()));
        assert_eq!(metadata(&marked)["deletionGracePeriodSeconds"], json!(20));
        assert_eq!(metadata(&marked)["deletionTimestamp"], json!(timestamp(now() + Duration::from_secs(20))));
        // A second delete with a longer period changes nothing; a shorter one shortens it.
        let longer = DeleteOptions { grace_period_seconds: Some(60), ..DeleteOptions::default() };
        assert_eq!(plan(&info("", "pods"), &marked, &longer, now()), Plan::Unchanged);
        let shorter = DeleteOptions { grace_period_seconds: Some(5), ..DeleteOptions::default() };
        let shortened = written(plan(&info("", "pods"), &marked, &shorter, now()));
        assert_eq!(metadata(&shortened)["deletionGracePeriodSeconds"], json!(5));
        assert_eq!(metadata(&shortened)["deletionTimestamp"], json!(timestamp(now() + Duration::from_secs(5))));
        // Zero deletes now.
        let force = DeleteOptions { grace_period_seconds: Some(0), ..DeleteOptions::default() };
        assert_eq!(plan(&info("", "pods"), &marked, &force, now()), Plan::Remove);
        assert_eq!(plan(&info("", "pods"), &pod, &force, now()), Plan::Remove);
        // Unscheduled or finished pods go at once.
        let pending = object(json!({"metadata": {"name": "p"}, "spec": {}}));
        assert_eq!(plan(&info("", "pods"), &pending, &DeleteOptions::default(), now()), Plan::Remove);
        let done =
            object(json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n"}, "status": {"phase": "Succeeded"}}));
        assert_eq!(plan(&info("", "pods"), &done, &DeleteOptions::default(), now()), Plan::Remove);
        // Negative periods are one second.
        let negative = DeleteOptions { grace_period_seconds: Some(-5), ..DeleteOptions::default() };
        let one = written(plan(&info("", "pods"), &pod, &negative, now()));
        assert_eq!(metadata(&one)["deletionGracePeriodSeconds"], json!(1));
    }

    #[test]
    fn a_namespace_goes_terminating_until_its_spec_finalizers_are_gone() {
        let ns = object(json!({
            "metadata": {"name": "demo"},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}
        }));
        let terminating = written(plan(&info("", "namespaces"), &ns, &DeleteOptions::background(), now()));
        assert_eq!(terminating["status"]["phase"], json!("Terminating"));
        assert!(metadata(&terminating).contains_key("deletionTimestamp"));
        assert!(!metadata(&terminating).contains_key("finalizers"));
        assert_eq!(plan(&info("", "namespaces"), &terminating, &DeleteOptions::default(), now()), Plan::Unchanged);
        let mut finalized = terminating.clone();
        finalized.insert("spec".into(), json!({}));
        assert_eq!(plan(&info("", "namespaces"), &finalized, &DeleteOptions::default(), now()), Plan::Remove);
        let orphan = DeleteOptions { propagation_policy: Some("Orphan".into()), ..DeleteOptions::default() };
        let held = written(plan(&info("", "namespaces"), &ns, &orphan, now()));
        assert_eq!(metadata(&held)["finalizers"], json!(["orphan"]));
    }

    #[test]
    fn options_are_validated_as_kube_validates_them() {
        let with_type = |query: &str, content_type: Option<&str>| RequestHead {
            method: http::Method::DELETE,
            params: crate::api::params::Params::parse(Some(query)).unwrap(),
            accept: None,
            content_type: content_type.map(str::to_string),
            content_length: None,
            query: Some(query.into()),
            accept_encoding: None,
            user: Default::default(),
            user_agent: None,
            warnings: Default::default(),
        };
        let yaml = parse_options(
            b"kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: 7\npropagationPolicy: Foreground\n",
            &with_type("", Some("application/yaml")),
            false,
            false,
        )
        .unwrap();
        assert_eq!((yaml.grace_period_seconds, yaml.propagation_policy.as_deref()), (Some(7), Some("Foreground")));
        let head = |query: &str| RequestHead {
            method: http::Method::DELETE,
            params: crate::api::params::Params::parse(Some(query)).unwrap(),
            accept: None,
            content_type: None,
            content_length: None,
            query: Some(query.into()),
            accept_encoding: None,
            user: Default::default(),
            user_agent: None,
            warnings: Default::default(),
        };
        let both = br#"{"propagationPolicy":"Orphan","orphanDependents":true}"#;
        assert_eq!(parse_options(both, &head(""), false, false).unwrap_err().code(), 422);
        assert_eq!(parse_options(b"", &head("propagationPolicy=Sideways"), false, false).unwrap_err().code(), 422);
        let parsed = parse_options(
            br#"{"gracePeriodSeconds":5,"preconditions":{"uid":"u"}}"#,
            &head("orphanDependents=false"),
            false,
            false,
        )
        .unwrap();
        assert_eq!(
            (parsed.grace_period_seconds, parsed.uid.as_deref(), parsed.orphan_dependents),
            (Some(5), Some("u"), Some(false))
        );
        assert_eq!(parse_options(br#"{"dryRun":["Some"]}"#, &head(""), false, false).unwrap_err().code(), 422);
        assert_eq!(parse_options(b"[1]", &head(""), false, false).unwrap_err().code(), 400);
        // The unsafe option: dropped without the gate; alone with it.
        let unsafe_body = br#"{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"gracePeriodSeconds":0}"#;
        assert!(!parse_options(unsafe_body, &head(""), false, false).unwrap().ignore_store_read_error);
        assert_eq!(parse_options(unsafe_body, &head(""), true, false).unwrap_err().code(), 422);
        let alone = br#"{"ignoreStoreReadErrorWithClusterBreakingPotential":true}"#;
        assert!(parse_options(alone, &head(""), true, false).unwrap().ignore_store_read_error);
        assert_eq!(parse_options(alone, &head(""), true, true).unwrap_err().code(), 422);
    }
}
