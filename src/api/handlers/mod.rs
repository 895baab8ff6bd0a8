//! One handler per verb, and the dispatch from a resource path and method to
//! the verb.
//!
//! Invariant: every handler checks the resource against the registry first
//! (unknown resources, wrong scopes and unserved subresources are 404), and
//! returns errors as [`ApiError`] only.

pub mod admission;
pub mod allocate;
pub mod apiserver_controllers;
pub mod apply;
pub mod binding;
pub mod componentstatus;
pub mod connect;
pub mod create;
pub mod custom;
pub mod delete;
pub mod discovery;
pub mod eviction;
pub mod garbage;
pub mod get;
pub mod health;
pub mod list;
pub mod memory;
pub mod metrics;
pub mod namespace;
pub mod patch;
pub mod review;
pub mod scale;
pub mod table;
pub mod token;
pub mod update;
pub mod versions;
pub mod watch;
pub mod webhooks;

use super::route::ResourcePath;
use super::status::{ApiError, Target};
use super::{Backend, RequestHead, ResponseBody};
use crate::log::Revision;
use crate::types::key::ObjectKey;
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use http::{Method, Response};

/// A resource path checked against the registry.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub info: ResourceInfo,
    /// Empty for cluster-scoped resources; `None` for "all namespaces".
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl Resolved {
    pub fn target(&self) -> Target {
        Target::new(&self.info.group, &self.info.resource, self.name.as_deref().unwrap_or(""))
    }

    /// The key of the object `name` (in the shared store, for a resource
    /// kept in another's: `types::conversion`).
    pub fn key(&self, name: &str) -> ObjectKey {
        let (group, resource) = self.info.storage_group_resource();
        ObjectKey::new(group, resource, self.namespace.as_deref().unwrap_or(""), name)
    }

    /// The key prefix of the request's collection (a namespace's, or all).
    pub fn collection_prefix(&self) -> String {
        let (group, resource) = self.info.storage_group_resource();
        crate::types::key::collection_prefix(group, resource, self.namespace.as_deref())
    }
}

pub fn resolve(backend: &impl Backend, path: &ResourcePath) -> Result<Resolved, ApiError> {
    let info =
        backend.registry().lookup(&path.group, &path.version, &path.resource).ok_or(ApiError::PathNotFound)?.clone();
    let namespace = match (info.namespaced, &path.namespace, &path.name) {
        (true, Some(ns), _) => Some(ns.clone()),
        (true, None, None) => None,
        // `/api/v1/pods/NAME`: a namespaced object needs its namespace.
        (true, None, Some(_)) => return Err(ApiError::PathNotFound),
        (false, None, _) => Some(String::new()),
        (false, Some(_), _) => return Err(ApiError::PathNotFound),
    };
    if let Some(sub) = &path.subresource {
        if !info.subresources.iter().any(|s| s == sub) {
            return Err(ApiError::PathNotFound);
        }
    }
    Ok(Resolved { info, namespace, name: path.name.clone(), subresource: path.subresource.clone() })
}

fn has_verb(info: &ResourceInfo, verb: &str) -> bool {
    info.verbs.iter().any(|v| v == verb)
}

pub async fn resource<B: Backend + 'static>(
    shared: &std::rc::Rc<B>,
    head: &RequestHead,
    path: &ResourcePath,
    body: Bytes,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let resolved = match resolve(backend, path) {
        // A custom resource defined by a write this shard has not applied
        // yet: wait for it to reach the commit point, then look again.
        Err(ApiError::PathNotFound) => {
            backend.await_applied(backend.committed_revision()).await;
            resolve(backend, path)?
        }
        other => other?,
    };
    // Custom resources: no Protobuf (415 / 406).
    let custom_head = custom::check_media(head, &resolved.info)?;
    let head = custom_head.as_ref().unwrap_or(head);
    let not_allowed = || ApiError::MethodNotAllowed { method: head.method.to_string(), target: resolved.target() };
    if let Some(special) = resolved.subresource.as_deref().and_then(|sub| {
        crate::types::registry::control_plane_subresource(&resolved.info.group, &resolved.info.resource, sub)
    }) {
        if resolved.info.custom.is_none() {
            return control_plane_subresource(shared, head, &resolved, special, body).await;
        }
    }
    let is_collection = resolved.name.is_none();
    // The legacy `bindings` collection: a bind of the pod the Binding names.
    if resolved.info.group.is_empty()
        && resolved.info.resource == "bindings"
        && is_collection
        && head.method == Method::POST
        && resolved.namespace.is_some()
    {
        apply::validate_options(head, "CreateOptions")?;
        return binding::serve(backend, head, &resolved, &body).await;
    }
    let verb = match (&head.method, is_collection) {
        (&Method::GET, true) if head.params.watch || path.legacy_watch => "watch",
        (&Method::GET, true) => "list",
        (&Method::GET, false) if head.params.watch || path.legacy_watch => "watch",
        (&Method::GET, false) => "get",
        (&Method::POST, true) => "create",
        (&Method::PUT, false) => "update",
        (&Method::DELETE, false) => "delete",
        (&Method::DELETE, true) => "deletecollection",
        (&Method::PATCH, false) => "patch",
        _ => return Err(not_allowed()),
    };
    // Creating needs a namespace for namespaced resources (no POST /api/v1/pods).
    if verb == "create" && resolved.info.namespaced && resolved.namespace.is_none() {
        return Err(not_allowed());
    }
    if !has_verb(&resolved.info, verb) {
        return Err(not_allowed());
    }
    if let Some(value) = &head.params.dry_run_unsupported {
        let options_kind = match verb {
            "create" => Some("CreateOptions"),
            "update" => Some("UpdateOptions"),
            "patch" => Some("PatchOptions"),
            "delete" | "deletecollection" => Some("DeleteOptions"),
            _ => None,
        };
        if let Some(kind) = options_kind {
            return Err(ApiError::Invalid {
                kind: kind.into(),
                target: super::status::Target::new("meta.k8s.io", "", ""),
                causes: vec![super::status::Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!("Unsupported value: {value:?}: supported values: \"All\""),
                    field: "dryRun[0]".into(),
                }],
            });
        }
    }
    let options_kind = match verb {
        "create" => Some("CreateOptions"),
        "update" => Some("UpdateOptions"),
        "patch" => Some("PatchOptions"),
        _ => None,
    };
    if let Some(kind) = options_kind {
        apply::validate_options(head, kind)?;
    }
    let scale = resolved.subresource.as_deref() == Some("scale");
    // Computed per request from the components' probes, never stored.
    if resolved.info.group.is_empty() && resolved.info.resource == "componentstatuses" {
        return match verb {
            "get" | "list" => componentstatus::serve(backend, head, &resolved).await,
            _ => Err(not_allowed()),
        };
    }
    match verb {
        "get" if scale => scale::get(backend, &resolved).await,
        "update" if scale => scale::update(backend, head, &resolved, &body).await,
        "get" => get::serve(backend, head, &resolved).await,
        "list" => list::serve(shared, head, &resolved).await,
        "watch" => watch::serve(shared, head, &resolved).await,
        "create" => create::serve(backend, head, &resolved, &body).await,
        "update" => update::serve(backend, head, &resolved, &body).await,
        "delete" => delete::serve(shared, head, &resolved, &body).await,
        "deletecollection" => delete::serve_collection(shared, head, &resolved, &body).await,
        "patch" => {
            let response = patch::serve(backend, head, &resolved, &body).await?;
            // A metadata-only Accept (kube-rs `patch_metadata`) gets the
            // patched object's PartialObjectMetadata; other Accepts keep JSON.
            match crate::api::encode::for_write(head, &resolved.info) {
                Ok(metadata @ crate::api::negotiate::Representation::Metadata(_)) => {
                    crate::api::encode::reencode(response, &metadata, &resolved.info).await
                }
                _ => Ok(response),
            }
        }
        _ => Err(not_allowed()),
    }
}

/// A control-plane subresource (`pods/binding`, `serviceaccounts/token`,
/// `pods/log`, ...): the verbs kube lists for it, then its handler.
async fn control_plane_subresource<B: Backend + 'static>(
    shared: &std::rc::Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
    special: &crate::types::registry::ControlPlaneSubresource,
    body: Bytes,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let verb = match head.method {
        Method::GET => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    };
    let target = Target::new(&resolved.info.group, &format!("{}/{}", resolved.info.resource, special.subresource), "");
    if !special.verbs.contains(&verb) || resolved.name.is_none() {
        return Err(ApiError::MethodNotAllowed { method: head.method.to_string(), target });
    }
    match verb {
        "create" => apply::validate_options(head, "CreateOptions")?,
        "update" => apply::validate_options(head, "UpdateOptions")?,
        "patch" => apply::validate_options(head, "PatchOptions")?,
        _ => {}
    }
    match (special.resource, special.subresource, verb) {
        ("pods", "binding", _) => binding::serve(backend, head, resolved, &body).await,
        ("pods", "eviction", _) => eviction::serve(backend, head, resolved, &body).await,
        ("serviceaccounts", "token", _) => token::serve(backend, head, resolved, &body).await,
        // Views of the stored object whose writes change only part of it
        // (the strategy's subresource rules): get, update, patch.
        ("pods", "ephemeralcontainers" | "resize", _)
        | ("namespaces", "finalize", _)
        | ("certificatesigningrequests", "approval", _) => match verb {
            "get" => get::serve(backend, head, resolved).await,
            "update" => update::serve(backend, head, resolved, &body).await,
            "patch" => patch::serve(backend, head, resolved, &body).await,
            _ => Err(ApiError::MethodNotAllowed { method: head.method.to_string(), target }),
        },
        // The kubelet's and the proxies' subresources: no kubelet here.
        _ => connect::serve(backend, head, resolved, special).await,
    }
}

/// Reads the current version of `key` from its owner at the commit point.
pub async fn read_current(
    backend: &impl Backend,
    key: &ObjectKey,
    min_revision: Revision,
) -> Result<Option<std::sync::Arc<crate::cache::CachedObject>>, ApiError> {
    let encoded = key.encode();
    let shard = key.shard(backend.shard_count());
    backend.on_shard(shard, min_revision, move |store| store.get(&encoded)).await.map_err(backend_error)
}

pub fn backend_error(e: super::BackendError) -> ApiError {
    match e {
        super::BackendError::ShardUnavailable(_) => ApiError::ServiceUnavailable(e.to_string()),
        super::BackendError::RevisionTimeout { .. } => {
            ApiError::Timeout { message: e.to_string(), retry_after_seconds: 1 }
        }
        super::BackendError::ConsistentReadUnavailable(message) => {
            ApiError::Timeout { message, retry_after_seconds: 1 }
        }
        super::BackendError::ConsistentReadTimeout { wanted, current } => {
            ApiError::TooLargeResourceVersion { requested: wanted.0, current: current.0 }
        }
    }
}

/// The message of a 409 Conflict on a stale resourceVersion, as kube-apiserver words it.
pub const MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// The 409 Conflict of a write that lost to another writer.
pub fn modified(resolved: &Resolved) -> ApiError {
    ApiError::Conflict { target: resolved.target(), message: MODIFIED.into() }
}

/// Appends a change computed from the version a read-modify-write loop read
/// (the proposal's precondition names it). `Some(entry)` when committed;
/// `None` when another writer got there first and the loop should read again,
/// which it may only when the client gave no precondition of its own
/// (`retry`), and its next read at the commit point then sees the winner's
/// version; otherwise that is a 409 Conflict.
pub async fn append_read_modify_write(
    backend: &impl Backend,
    proposal: crate::log::Proposal,
    retry: bool,
    resolved: &Resolved,
) -> Result<Option<crate::log::Entry>, ApiError> {
    match backend.append(proposal).await {
        Ok(entry) => Ok(Some(entry)),
        Err(crate::log::AppendError::Conflict { current }) if retry => {
            // The winner's revision may be past this core's commit point
            // (the log checks preconditions against appends still being made
            // durable): wait for it, or the next read sees the same old
            // version and loses again, until the attempts run out.
            if let Some(revision) = current {
                let _ = backend.wait_for_revision(revision, backend.config().resource_version_wait).await;
            }
            Ok(None)
        }
        Err(crate::log::AppendError::Conflict { .. }) => Err(modified(resolved)),
        Err(e) => Err(append_error(e)),
    }
}

pub fn append_error(e: crate::log::AppendError) -> ApiError {
    match e {
        crate::log::AppendError::TooLarge { limit_bytes, .. } => ApiError::RequestEntityTooLarge { limit_bytes },
        crate::log::AppendError::Unavailable(m) => ApiError::ServiceUnavailable(m),
        crate::log::AppendError::Conflict { .. } => ApiError::Internal("unexpected precondition failure".into()),
    }
}

/// RBAC's privilege-escalation rule for a Role, ClusterRole or binding about
/// to be stored (created, replaced, patched or applied): 403 unless the user
/// holds what it grants or may `escalate`/`bind` (see `auth::escalation`).
pub async fn check_escalation(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    object: &crate::api::object::Object,
) -> Result<(), ApiError> {
    let info = &resolved.info;
    if info.group != crate::auth::rbac::RBAC_GROUP {
        return Ok(());
    }
    let index = backend.rbac_index().await;
    let namespace = resolved.namespace.as_deref().unwrap_or("");
    crate::auth::escalation::check(
        backend.config().authorization_mode,
        &index,
        &head.user,
        crate::auth::escalation::Write { group: &info.group, resource: &info.resource, namespace, name, object },
    )
    .map_err(|refusal| ApiError::Forbidden {
        target: Target::new(&info.group, &info.resource, name),
        message: refusal.0,
    })
}

/// A refusal of the typed layer as the API error kube-apiserver answers for a
/// request body: a decoding error is 400 (`Pod in version "v1" cannot be
/// handled as a Pod: ...`), validation 422, a rule 403.
pub fn rejection(
    info: &crate::types::registry::ResourceInfo,
    name: &str,
    rejection: crate::strategy::Rejection,
) -> ApiError {
    use crate::strategy::Rejection;
    match rejection {
        Rejection::Decode(message) => ApiError::BadRequest(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {message}",
            kind = info.kind,
            version = info.version
        )),
        Rejection::Invalid(errors) => crate::api::object::invalid(info, name, create::causes(errors)),
        Rejection::Forbidden(message) => {
            ApiError::Forbidden { target: Target::new(&info.group, &info.resource, name), message }
        }
    }
}

/// [`rejection`], with the object's metadata causes ahead of a 422's own,
/// as kube's `Validate` lists ObjectMeta's errors before the spec's.
pub fn rejection_after(
    info: &crate::types::registry::ResourceInfo,
    name: &str,
    metadata: Vec<crate::api::status::Cause>,
    rejection: crate::strategy::Rejection,
) -> ApiError {
    match rejection {
        crate::strategy::Rejection::Invalid(errors) if !metadata.is_empty() => {
            let mut causes = metadata;
            causes.extend(create::causes(errors));
            crate::api::object::invalid(info, name, causes)
        }
        other => self::rejection(info, name, other),
    }
}

/// The typed layer's context for a request.
pub fn strategy_context<'a>(
    now: &'a str,
    resolved: &'a Resolved,
    head: &'a RequestHead,
) -> crate::strategy::Context<'a> {
    crate::strategy::Context { now, subresource: resolved.subresource.as_deref(), user: Some(&head.user) }
}
