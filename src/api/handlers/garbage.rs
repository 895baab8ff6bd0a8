//! The garbage collector (`garbage-collector-controller`), with kube's
//! semantics (pkg/controller/garbagecollector):
//!
//! - an owner deleted with `orphan` loses its place in its dependents'
//!   ownerReferences, then the finalizer goes;
//! - an owner deleted with `foregroundDeletion` ("deleting dependents") has
//!   its dependents deleted (each in the foreground itself when it has
//!   dependents of its own, else as its own finalizers say, else in the
//!   background), and keeps its finalizer until no dependent whose reference
//!   has `blockOwnerDeletion: true` is left; then the finalizer goes and,
//!   with the last finalizer, the owner;
//! - a dependent whose owners are all gone (deleted, or never there: a
//!   reference to an absent uid) is deleted; one with a remaining owner
//!   loses its references to the gone ones (and to owners deleting their
//!   dependents in the foreground).
//!
//! [`Graph`] is the owner index kube's graph builder keeps, built from the
//! committed entries one shard applies (the runtime keeps it on shard 0 when
//! the controller runs, `--controllers`): owner key -> dependents, and the
//! objects whose deletion finalizers a collection is finishing. Applying an
//! entry queues [`Action`]s, which [`run`] carries out through the
//! [`Backend`] as a client would: reads at the commit point, conditional
//! writes, deletes with a uid precondition. The graph may lag the commit
//! point; every decision reads the objects again, as kube's does.
//!
//! Not done as kube does: the cycle guard that unblocks a dependent's
//! references when it and its owner both delete dependents.

use super::delete::{delete_object, DeleteOptions, Outcome, FINALIZER_FOREGROUND, FINALIZER_ORPHAN};
use super::{read_current, Resolved};
use crate::api::object::{metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::ApiError;
use crate::api::Backend;
use crate::cache::CachedObject;
use crate::log::{AppendError, KeyValue, Operation, Precondition, Proposal};
use crate::types::key::ObjectKey;
use crate::types::registry::Registry;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

const FIRST_RETRY: Duration = Duration::from_millis(100);
/// Tries of one dependent's collection before it waits for the next event.
const ATTEMPTS_MAX: usize = 8;

/// What the graph asks the collector to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Look at a dependent: delete it if its owners are gone (kube's
    /// `attemptToDelete`).
    Attempt(Bytes),
    /// Finish the `orphan` or `foregroundDeletion` finalizer of the object
    /// at this key with this uid.
    Collect { key: Bytes, uid: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Reference {
    owner: Bytes,
    uid: String,
}

/// The owner index kube's garbage collector keeps (see the module doc).
#[derive(Default, Debug)]
pub struct Graph {
    /// Owner key -> the keys of objects with an ownerReference to it.
    dependents: HashMap<Bytes, BTreeSet<Bytes>>,
    /// Dependent key -> its uid and its references (owners resolved to keys).
    references: HashMap<Bytes, (String, Vec<Reference>)>,
    /// Objects with a collection under way (deleting, with a GC finalizer).
    collecting: HashSet<Bytes>,
    pending: Vec<Action>,
}

pub type SharedGraph = Rc<RefCell<Graph>>;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct HeadMeta {
    namespace: String,
    uid: String,
    deletion_timestamp: Option<String>,
    finalizers: Vec<String>,
    owner_references: Vec<HeadReference>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct HeadReference {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Head {
    metadata: HeadMeta,
}

/// The key of the object an ownerReference names, seen from a dependent in
/// `namespace`; `None` when the kind is not served, or is namespaced and the
/// dependent is not.
fn owner_key(registry: &Registry, api_version: &str, kind: &str, name: &str, namespace: &str) -> Option<Bytes> {
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    let info = registry.iter().find(|r| r.group == group && r.kind == kind)?;
    if info.namespaced && namespace.is_empty() {
        // A cluster-scoped dependent cannot have a namespaced owner: kube
        // treats the reference as unresolvable, and never collects it.
        return None;
    }
    let namespace = if info.namespaced { namespace } else { "" };
    let (group, resource) = info.storage_group_resource();
    Some(ObjectKey::new(group, resource, namespace, name).encode())
}

/// The delete target an object key names.
pub fn resolved_for_key(registry: &Registry, key: &[u8]) -> Option<Resolved> {
    let k = ObjectKey::decode(key)?;
    let info = registry.iter().find(|r| r.group == k.group && r.resource == k.resource)?.clone();
    Some(Resolved { info, namespace: Some(k.namespace), name: Some(k.name), subresource: None })
}

impl Graph {
    /// Applies one committed entry (`value`: `None` for a delete).
    pub fn apply(&mut self, key: &[u8], value: Option<&[u8]>, registry: &Registry) {
        match value {
            None => self.remove(key),
            Some(value) => self.put(key, value, registry, true),
        }
    }

    /// Rebuilds the graph from a full state (start-up, or a reset by the
    /// log): collections resume, and dependents of owners absent from the
    /// state are looked at.
    pub fn load(&mut self, live: &[KeyValue], registry: &Registry) {
        *self = Graph::default();
        for kv in live {
            self.put(&kv.key, &kv.value, registry, false);
        }
        // Only references need the set of keys present (most states have none).
        let present: HashSet<&[u8]> =
            if self.dependents.is_empty() { HashSet::new() } else { live.iter().map(|kv| kv.key.as_ref()).collect() };
        let mut absent: Vec<Bytes> = Vec::new();
        for (owner, dependents) in &self.dependents {
            if !present.contains(owner.as_ref()) {
                absent.extend(dependents.iter().cloned());
            }
        }
        absent.sort();
        absent.dedup();
        self.pending.extend(absent.into_iter().map(Action::Attempt));
    }

    /// The actions queued since the last call.
    pub fn take_pending(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.pending)
    }

    /// The keys of objects with a reference to the owner at `owner_key`
    /// (any uid: a caller checks the uid on what it reads).
    pub fn dependents_of(&self, owner_key: &[u8]) -> Vec<Bytes> {
        self.dependents.get(owner_key).map(|d| d.iter().cloned().collect()).unwrap_or_default()
    }

    /// Whether some object references the owner at `owner_key` with `uid`.
    pub fn has_dependents(&self, owner_key: &[u8], uid: &str) -> bool {
        self.dependents.get(owner_key).is_some_and(|deps| {
            deps.iter().any(|d| {
                self.references
                    .get(d)
                    .is_some_and(|(_, refs)| refs.iter().any(|r| r.owner == owner_key && r.uid == uid))
            })
        })
    }

    fn unlink(&mut self, key: &[u8]) {
        if let Some((_, refs)) = self.references.remove(key) {
            for r in refs {
                if let Some(deps) = self.dependents.get_mut(&r.owner) {
                    deps.remove(key);
                    if deps.is_empty() {
                        self.dependents.remove(&r.owner);
                    }
                }
            }
        }
    }

    fn remove(&mut self, key: &[u8]) {
        self.unlink(key);
        self.collecting.remove(key);
        if let Some(deps) = self.dependents.get(key) {
            self.pending.extend(deps.iter().cloned().map(Action::Attempt));
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8], registry: &Registry, attempt_new: bool) {
        // Built once: a restart asks this of every object. (One regex for
        // both words took about 19 times their instructions, callgrind.)
        static FINDERS: std::sync::OnceLock<[memchr::memmem::Finder<'static>; 2]> = std::sync::OnceLock::new();
        let [references, deletion] = FINDERS.get_or_init(|| {
            [memchr::memmem::Finder::new(b"\"ownerReferences\""), memchr::memmem::Finder::new(b"\"deletionTimestamp\"")]
        });
        let has_references = references.find(value).is_some();
        let deleting = deletion.find(value).is_some();
        if !has_references && !deleting && !self.references.contains_key(key) && !self.collecting.contains(key) {
            return;
        }
        let meta = serde_json::from_slice::<Head>(value).map(|h| h.metadata).unwrap_or_default();
        let references: Vec<Reference> = meta
            .owner_references
            .iter()
            .filter_map(|r| {
                let owner = owner_key(registry, &r.api_version, &r.kind, &r.name, &meta.namespace)?;
                Some(Reference { owner, uid: r.uid.clone() })
            })
            .collect();
        let before = self.references.get(key).map(|(uid, refs)| (uid.clone(), refs.clone()));
        let changed = before.as_ref().is_none_or(|(uid, refs)| *uid != meta.uid || *refs != references);
        if changed {
            let added = references.iter().any(|r| before.as_ref().is_none_or(|(_, old)| !old.contains(r)));
            self.unlink(key);
            if !references.is_empty() {
                let key = Bytes::copy_from_slice(key);
                for r in &references {
                    self.dependents.entry(r.owner.clone()).or_default().insert(key.clone());
                }
                self.references.insert(key.clone(), (meta.uid.clone(), references));
                if added && attempt_new {
                    // kube's virtual owner nodes: a reference to an owner that
                    // is not there is verified, and the dependent collected.
                    self.pending.push(Action::Attempt(key));
                }
            }
        }
        let gc_finalizer = meta.finalizers.iter().any(|f| f == FINALIZER_ORPHAN || f == FINALIZER_FOREGROUND);
        if meta.deletion_timestamp.is_some() && gc_finalizer {
            if !self.collecting.contains(key) {
                let key = Bytes::copy_from_slice(key);
                self.collecting.insert(key.clone());
                self.pending.push(Action::Collect { key, uid: meta.uid });
            }
        } else {
            self.collecting.remove(key);
        }
    }
}

/// Carries out `actions`: each collection as a task of its own, the
/// attempts one after another.
pub async fn run<B: Backend + 'static>(backend: Rc<B>, graph: SharedGraph, actions: Vec<Action>) {
    let mut attempts = Vec::new();
    for action in actions {
        match action {
            Action::Collect { key, uid } => {
                let (task_backend, task_graph) = (backend.clone(), graph.clone());
                backend.spawn(Box::pin(async move { collect(task_backend, task_graph, key, uid).await }));
            }
            Action::Attempt(key) => attempts.push(key),
        }
    }
    for key in attempts {
        let mut wait = FIRST_RETRY;
        for _ in 0..ATTEMPTS_MAX {
            match attempt_key(&*backend, &graph, &key).await {
                Ok(Attempted::Retry) | Err(_) => {}
                Ok(_) => break,
            }
            backend.sleep(wait).await;
            wait = (wait * 2).min(backend.config().namespace_finalize_retry_max);
        }
    }
}

/// Finishes the deletion of the object at `key` (with uid `uid`).
pub async fn collect<B: Backend>(backend: Rc<B>, graph: SharedGraph, key: Bytes, uid: String) {
    let Some(owner) = resolved_for_key(&backend.registry(), &key) else { return };
    let mut wait = FIRST_RETRY;
    loop {
        if let Ok(true) = pass(&*backend, &graph, &owner, &uid).await {
            return;
        }
        backend.sleep(wait).await;
        wait = (wait * 2).min(backend.config().namespace_finalize_retry_max);
    }
}

fn is_deleting(object: &Object) -> bool {
    metadata(object).get("deletionTimestamp").is_some_and(|t| !t.is_null())
}

fn finalizers(object: &Object) -> Vec<String> {
    metadata(object)
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn references(object: &Object) -> Vec<Value> {
    metadata(object).get("ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The current objects with an ownerReference to the owner at `key` with
/// `uid`, with their delete targets.
async fn dependents(
    backend: &impl Backend,
    graph: &SharedGraph,
    key: &[u8],
    uid: &str,
) -> Result<Vec<(Resolved, Arc<CachedObject>, Object)>, ApiError> {
    let candidates = graph.borrow().dependents_of(key);
    let registry = backend.registry();
    let mut found = Vec::new();
    for candidate in candidates {
        let Some(resolved) = resolved_for_key(&registry, &candidate) else { continue };
        let object_key = resolved.key(resolved.name.as_deref().unwrap_or(""));
        let Some(current) = read_current(backend, &object_key, backend.committed_revision()).await? else { continue };
        let Ok(decoded) = serde_json::from_slice::<Object>(&current.json) else { continue };
        if references(&decoded).iter().any(|r| r["uid"] == uid) {
            found.push((resolved, current, decoded));
        }
    }
    Ok(found)
}

/// How looking at a dependent ended.
#[derive(Debug, PartialEq, Eq)]
enum Attempted {
    /// The object is gone.
    Gone,
    /// The object stays (an owner remains, or its deletion is pending).
    Stays,
    /// A write conflicted: look again.
    Retry,
}

async fn attempt_key(backend: &impl Backend, graph: &SharedGraph, key: &[u8]) -> Result<Attempted, ApiError> {
    let Some(resolved) = resolved_for_key(&backend.registry(), key) else { return Ok(Attempted::Stays) };
    let object_key = resolved.key(resolved.name.as_deref().unwrap_or(""));
    let Some(current) = read_current(backend, &object_key, backend.committed_revision()).await? else {
        return Ok(Attempted::Gone);
    };
    let decoded: Object = serde_json::from_slice(&current.json).map_err(|e| ApiError::Internal(e.to_string()))?;
    attempt(backend, graph, &resolved, &current, decoded).await
}

/// kube's `attemptToDeleteItem` for one dependent.
async fn attempt(
    backend: &impl Backend,
    graph: &SharedGraph,
    resolved: &Resolved,
    current: &CachedObject,
    object: Object,
) -> Result<Attempted, ApiError> {
    // Being deleted is a one-way trip; a foreground one is its own collection's.
    if is_deleting(&object) {
        return Ok(Attempted::Stays);
    }
    let refs = references(&object);
    if refs.is_empty() {
        return Ok(Attempted::Stays);
    }
    let registry = backend.registry();
    let namespace = current.meta().namespace().to_string();
    let (mut solid, mut dangling, mut waiting) = (0usize, Vec::new(), Vec::new());
    for r in &refs {
        let text = |f: &str| r[f].as_str().unwrap_or("").to_string();
        let uid = text("uid");
        let Some(owner) = owner_key(&registry, &text("apiVersion"), &text("kind"), &text("name"), &namespace) else {
            // A kind not served: kube cannot resolve it either, and keeps the object.
            solid += 1;
            continue;
        };
        let Some(owner_key) = ObjectKey::decode(&owner) else { continue };
        match read_current(backend, &owner_key, backend.committed_revision()).await? {
            Some(found) if found.meta().uid() == uid => {
                let owner_object: Object =
                    serde_json::from_slice(&found.json).map_err(|e| ApiError::Internal(e.to_string()))?;
                if is_deleting(&owner_object) && finalizers(&owner_object).iter().any(|f| f == FINALIZER_FOREGROUND) {
                    waiting.push(uid);
                } else {
                    solid += 1;
                }
            }
            _ => dangling.push(uid),
        }
    }
    if solid > 0 {
        if dangling.is_empty() && waiting.is_empty() {
            return Ok(Attempted::Stays);
        }
        // Keep the object, without its references to gone or deleting owners.
        let gone: Vec<String> = dangling.into_iter().chain(waiting).collect();
        return remove_references(backend, current, object, &gone).await;
    }
    let own_uid = current.meta().uid().to_string();
    let policy = if !waiting.is_empty() && graph.borrow().has_dependents(&current.key, &own_uid) {
        "Foreground"
    } else {
        let held = finalizers(&object);
        if held.iter().any(|f| f == FINALIZER_ORPHAN) {
            "Orphan"
        } else if held.iter().any(|f| f == FINALIZER_FOREGROUND) {
            "Foreground"
        } else {
            "Background"
        }
    };
    let options =
        DeleteOptions { uid: Some(own_uid), propagation_policy: Some(policy.into()), ..DeleteOptions::default() };
    match delete_object(backend, None, resolved, &options).await {
        Ok(Outcome::Removed(_)) | Err(ApiError::NotFound(_)) => Ok(Attempted::Gone),
        Ok(Outcome::Kept(_)) => Ok(Attempted::Stays),
        // The uid precondition failed: another object has the name now.
        Err(ApiError::Conflict { .. }) => Ok(Attempted::Gone),
        Err(e) => Err(e),
    }
}

/// Writes `object` without its ownerReferences to `uids`, conditionally on
/// the version read.
async fn remove_references(
    backend: &impl Backend,
    current: &CachedObject,
    mut object: Object,
    uids: &[String],
) -> Result<Attempted, ApiError> {
    let meta = metadata_mut(&mut object);
    let kept: Vec<Value> = meta
        .get("ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| refs.iter().filter(|r| !uids.iter().any(|u| r["uid"] == u.as_str())).cloned().collect())
        .unwrap_or_default();
    if kept.is_empty() {
        meta.shift_remove("ownerReferences");
    } else {
        meta.insert("ownerReferences".into(), json!(kept));
    }
    meta.shift_remove("resourceVersion");
    let proposal = Proposal {
        key: current.key.clone(),
        precondition: Precondition::ModRevision(current.mod_revision),
        operation: Operation::Put(storage_value(&order_fields(object))?),
    };
    match backend.append(proposal).await {
        Ok(_) => Ok(Attempted::Stays),
        Err(AppendError::Conflict { .. }) => Ok(Attempted::Retry),
        Err(e) => Err(super::append_error(e)),
    }
}

/// One pass over an owner being deleted: `Ok(true)` when there is nothing
/// left to do.
async fn pass(backend: &impl Backend, graph: &SharedGraph, owner: &Resolved, uid: &str) -> Result<bool, ApiError> {
    let key = owner.key(owner.name.as_deref().unwrap_or(""));
    let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else { return Ok(true) };
    if current.meta().uid() != uid {
        return Ok(true);
    }
    let stored: Object =
        serde_json::from_slice(&current.json).map_err(|e| ApiError::Internal(format!("stored object: {e}")))?;
    let finalizers = finalizers(&stored);
    let orphan = finalizers.iter().any(|f| f == FINALIZER_ORPHAN);
    let foreground = finalizers.iter().any(|f| f == FINALIZER_FOREGROUND);
    if !is_deleting(&stored) || !(orphan || foreground) {
        return Ok(true);
    }
    let encoded = key.encode();
    let mut blocking = 0usize;
    for (resolved, object, decoded) in dependents(backend, graph, &encoded, uid).await? {
        if orphan {
            match remove_references(backend, &object, decoded, &[uid.to_string()]).await? {
                Attempted::Retry => return Ok(false),
                Attempted::Gone | Attempted::Stays => {}
            }
            continue;
        }
        // Foreground: every dependent is deleted; those whose reference
        // blocks the owner's deletion must be gone before it goes.
        let blocks =
            references(&decoded).iter().any(|r| r["uid"] == uid && r["blockOwnerDeletion"].as_bool() == Some(true));
        let outcome = attempt(backend, graph, &resolved, &object, decoded).await?;
        if blocks && outcome != Attempted::Gone {
            blocking += 1;
        }
    }
    if blocking > 0 {
        return Ok(false);
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
    let proposal = Proposal { key: encoded, precondition: Precondition::ModRevision(current.mod_revision), operation };
    match backend.append(proposal).await {
        Ok(_) => Ok(true),
        Err(AppendError::Conflict { .. }) => Ok(false),
        Err(e) => Err(super::append_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::builtin()
    }

    fn key(group: &str, resource: &str, namespace: &str, name: &str) -> Bytes {
        ObjectKey::new(group, resource, namespace, name).encode()
    }

    fn owned(uid: &str, owner_kind: &str, owner: &str, owner_uid: &str) -> Vec<u8> {
        let api_version = if owner_kind == "Deployment" || owner_kind == "ReplicaSet" { "apps/v1" } else { "v1" };
        serde_json::to_vec(&json!({"metadata": {"namespace": "ns", "uid": uid, "ownerReferences": [
            {"apiVersion": api_version, "kind": owner_kind, "name": owner, "uid": owner_uid, "blockOwnerDeletion": true}
        ]}}))
        .unwrap()
    }

    #[test]
    fn the_graph_follows_references_and_queues_kubes_work() {
        let registry = registry();
        let mut graph = Graph::default();
        let deploy = key("apps", "deployments", "ns", "d");
        let rs = key("apps", "replicasets", "ns", "r");
        let pod = key("", "pods", "ns", "p");
        // Objects without references or deletion cost nothing.
        graph.apply(&deploy, Some(br#"{"metadata":{"namespace":"ns","uid":"d1"}}"#), &registry);
        assert!(graph.take_pending().is_empty());
        // A new dependent is looked at once (its owner may be absent).
        graph.apply(&rs, Some(&owned("r1", "Deployment", "d", "d1")), &registry);
        graph.apply(&pod, Some(&owned("p1", "ReplicaSet", "r", "r1")), &registry);
        assert_eq!(graph.take_pending(), [Action::Attempt(rs.clone()), Action::Attempt(pod.clone())]);
        graph.apply(&pod, Some(&owned("p1", "ReplicaSet", "r", "r1")), &registry);
        assert!(graph.take_pending().is_empty(), "an unchanged reference is not looked at again");
        assert!(graph.has_dependents(&rs, "r1"));
        assert!(!graph.has_dependents(&rs, "other"));
        assert_eq!(graph.dependents_of(&deploy), [rs.clone()]);

        // A foreground deletion starts one collection, however often the owner changes.
        let deleting = br#"{"metadata":{"namespace":"ns","uid":"d1","deletionTimestamp":"t","finalizers":["foregroundDeletion"]}}"#;
        graph.apply(&deploy, Some(deleting), &registry);
        graph.apply(&deploy, Some(deleting), &registry);
        assert_eq!(graph.take_pending(), [Action::Collect { key: deploy.clone(), uid: "d1".into() }]);

        // The owner gone: its dependents are looked at.
        graph.apply(&deploy, None, &registry);
        assert_eq!(graph.take_pending(), [Action::Attempt(rs.clone())]);
        // A dependent gone leaves the index.
        graph.apply(&pod, None, &registry);
        assert!(graph.dependents_of(&rs).is_empty());
    }

    #[test]
    fn a_cluster_scoped_dependent_of_a_namespaced_kind_is_left_alone() {
        let registry = registry();
        let mut graph = Graph::default();
        let node = key("", "nodes", "", "n1");
        let value = br#"{"metadata":{"uid":"n1","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"d1"}]}}"#;
        graph.apply(&node, Some(value), &registry);
        assert!(graph.take_pending().is_empty());
        assert!(graph.dependents_of(&key("apps", "deployments", "", "d")).is_empty());
        // A cluster-scoped owner of a namespaced dependent is resolved.
        let pod = key("", "pods", "ns", "p");
        let value = br#"{"metadata":{"namespace":"ns","uid":"p1","ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1"}]}}"#;
        graph.apply(&pod, Some(value), &registry);
        assert_eq!(graph.take_pending(), [Action::Attempt(pod.clone())]);
        assert_eq!(graph.dependents_of(&node), [pod]);
    }

    #[test]
    fn loading_looks_only_at_dependents_of_absent_owners() {
        let registry = registry();
        let kv = |key: Bytes, value: Vec<u8>| KeyValue {
            key,
            value: value.into(),
            create_revision: crate::log::Revision(1),
            mod_revision: crate::log::Revision(1),
            cached: Bytes::new(),
        };
        let live = vec![
            kv(key("apps", "replicasets", "ns", "r"), br#"{"metadata":{"namespace":"ns","uid":"r1"}}"#.to_vec()),
            kv(key("", "pods", "ns", "a"), owned("a1", "ReplicaSet", "r", "r1")),
            kv(key("", "pods", "ns", "b"), owned("b1", "ReplicaSet", "gone", "g1")),
        ];
        let mut graph = Graph::default();
        graph.load(&live, &registry);
        assert_eq!(graph.take_pending(), [Action::Attempt(key("", "pods", "ns", "b"))]);
    }
}
