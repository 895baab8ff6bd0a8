//! The claims behind Service cluster IPs and node ports: the part of kube's
//! service REST allocation (`pkg/registry/core/service/storage/alloc.go`) that
//! needs the log. `strategy::allocate` plans what a write needs; this file
//! claims it, fills it in, and releases it.
//!
//! A claim is a key of its own, written with `Precondition::Absent` before the
//! Service's append: the log's conditional append makes a value unique across
//! shards and across instances sharing one etcd. An IP's claim is the
//! `networking.k8s.io/v1` IPAddress kube-apiserver writes (named by the IP,
//! `spec.parentRef` naming the Service); a node port's is an unserved
//! `servicenodeports/<port>` key with the same parentRef.
//!
//! Order, as kube's allocation transaction: claim, then write the Service;
//! if that write fails, the claims it made are deleted ([`Claims::revert`]);
//! values the Service gives up are released only after its write committed
//! ([`Claims::commit`]), and a deleted Service's after the delete
//! ([`release_all`]). A crash between the two leaves a claim whose Service
//! does not hold it: such a claim older than `allocation_claim_grace` is taken
//! over when its value is asked for, or when the range is otherwise full
//! (kube runs a repair loop for the same leak). Dry-run claims nothing.
//!
//! Invariant: a claim is deleted only by the write that made it (on failure)
//! or after checking that it names the releasing Service.

use super::{append_error, read_current, Resolved};
use crate::api::object::{invalid, metadata, new_uid, storage_value, timestamp, Object};
use crate::api::status::ApiError;
use crate::api::{Backend, RequestHead};
use crate::log::{AppendError, Operation, Precondition, Proposal, Revision};
use crate::strategy::allocate::{self as plan, Claimable, Need, Ranges, Refusal};
use crate::types::key::{collection_prefix, ObjectKey, ShardId};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

/// Dynamic picks of one value that may lose a race to another writer before
/// the write gives up with kube's "range is full": each lost race means a
/// value claimed since the listing (by another core or instance).
const CLAIM_RACES_MAX: usize = 32;

/// What a write claimed and what it will release.
#[derive(Debug, Default)]
pub struct Claims {
    /// Claims this write made: each key with the revision that created it.
    made: Vec<(ObjectKey, Revision)>,
    /// Values the Service gives up once its write is committed.
    release: Vec<Claimable>,
    /// The Service (namespace, name).
    parent: (String, String),
}

impl Claims {
    /// The write failed or changed nothing: deletes the claims it made.
    pub async fn revert(self, backend: &impl Backend) {
        for (key, revision) in self.made {
            let proposal = Proposal {
                key: key.encode(),
                precondition: Precondition::ModRevision(revision),
                operation: Operation::Delete,
            };
            // Best effort: a claim left here is taken over once stale.
            let _ = backend.append(proposal).await;
        }
    }

    /// The write is committed: releases what the Service no longer holds.
    pub async fn commit(self, backend: &impl Backend) {
        for value in &self.release {
            release_if_held_by(backend, value, &self.parent).await;
        }
    }
}

fn is_service(resolved: &Resolved) -> bool {
    plan::is_service(&resolved.info.group, &resolved.info.resource, resolved.subresource.as_deref())
}

fn parent_of(resolved: &Resolved, object: &Object) -> (String, String) {
    let name = metadata(object).get("name").and_then(Value::as_str).unwrap_or("").to_string();
    (resolved.namespace.clone().unwrap_or_default(), name)
}

/// Before validation: keeps allocated values a client left out of an update,
/// and `clusterIP`/`clusterIPs` in step (`strategy::allocate::prepare`).
pub fn prepare(resolved: &Resolved, object: &mut Object, old: Option<&Object>) {
    if is_service(resolved) {
        plan::prepare(object, old);
    }
}

/// Claims and fills in what a new Service needs (alloc.go: allocateCreate).
pub async fn create(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    object: &mut Object,
) -> Result<Claims, ApiError> {
    if !is_service(resolved) {
        return Ok(Claims::default());
    }
    let ranges = backend.config().service_ranges;
    let dry_run = head.params.dry_run_all;
    let parent = parent_of(resolved, object);
    let planned = plan::plan_create(&ranges, object, dry_run).map_err(|r| refusal(resolved, &parent.1, r))?;
    let claims = Claims { made: Vec::new(), release: planned.release.clone(), parent };
    claim_needs(backend, resolved, &ranges, &planned.needs, object, dry_run, claims).await
}

/// Claims and fills in what an updated Service needs against the stored
/// version (alloc.go: allocateUpdate); the values it gives up are released
/// by [`Claims::commit`].
pub async fn update(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    stored: &Object,
    object: &mut Object,
) -> Result<Claims, ApiError> {
    if !is_service(resolved) {
        return Ok(Claims::default());
    }
    let ranges = backend.config().service_ranges;
    let dry_run = head.params.dry_run_all;
    let parent = parent_of(resolved, object);
    let planned = plan::plan_update(&ranges, object, stored, dry_run).map_err(|r| refusal(resolved, &parent.1, r))?;
    let release = if dry_run { Vec::new() } else { planned.release.clone() };
    let claims = Claims { made: Vec::new(), release, parent };
    claim_needs(backend, resolved, &ranges, &planned.needs, object, dry_run, claims).await
}

/// After a Service was deleted: releases everything it held
/// (storage.go: afterDelete, alloc.go: releaseAllocatedResources).
pub async fn release_all(backend: &impl Backend, resolved: &Resolved, stored: &Object) {
    if !plan::is_service(&resolved.info.group, &resolved.info.resource, None) {
        return;
    }
    let parent = parent_of(resolved, stored);
    for value in plan::held(&backend.config().service_ranges, stored) {
        release_if_held_by(backend, &value, &parent).await;
    }
}

fn refusal(resolved: &Resolved, name: &str, refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::Invalid(error) => invalid(&resolved.info, name, super::create::causes(vec![error])),
        Refusal::Internal(message) => ApiError::Internal(message),
    }
}

/// Claims each need in order, filling the Service; on a refusal the claims
/// already made are reverted.
async fn claim_needs(
    backend: &impl Backend,
    resolved: &Resolved,
    ranges: &Ranges,
    needs: &[Need],
    object: &mut Object,
    dry_run: bool,
    mut claims: Claims,
) -> Result<Claims, ApiError> {
    let mut taken_ports: Vec<u16> = Vec::new();
    for need in needs {
        let outcome = if dry_run {
            dry_run_value(backend, ranges, need, &taken_ports).await
        } else {
            claim_need(backend, ranges, need, &mut claims).await
        };
        let value = match outcome {
            Ok(value) => value,
            Err(e) => {
                let name = claims.parent.1.clone();
                claims.revert(backend).await;
                return Err(match e {
                    Failure::Refused(r) => refusal(resolved, &name, r),
                    Failure::Api(e) => e,
                });
            }
        };
        if let Claimable::NodePort(port) = &value {
            taken_ports.push(*port);
        }
        plan::fill(object, need, &text(&value));
    }
    Ok(claims)
}

fn text(value: &Claimable) -> String {
    match value {
        Claimable::Ip(ip) => ip.clone(),
        Claimable::NodePort(port) => port.to_string(),
    }
}

enum Failure {
    Refused(Refusal),
    Api(ApiError),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Api(e)
    }
}

/// What kube's dry-run allocators answer: a requested IP is only checked
/// against the range (done by the plan), a requested port against the ports
/// in use; a dynamic IP is the network address, a dynamic port a dummy
/// (portallocator/operation.go, ipallocator.go: DryRun).
async fn dry_run_value(
    backend: &impl Backend,
    ranges: &Ranges,
    need: &Need,
    taken_ports: &[u16],
) -> Result<Claimable, Failure> {
    match (&need.requested, &need.slot) {
        (Some(Claimable::NodePort(port)), _) => {
            let in_use = taken_ports.contains(port)
                || read_current(backend, &Claimable::NodePort(*port).key(), backend.committed_revision())
                    .await?
                    .is_some();
            if in_use {
                return Err(Failure::Refused(need.already_allocated()));
            }
            Ok(Claimable::NodePort(*port))
        }
        (Some(value), _) => Ok(value.clone()),
        (None, plan::Slot::ClusterIp) => Ok(Claimable::Ip(ranges.cluster_ip.network_ip())),
        (None, _) => Ok(Claimable::NodePort(plan::dry_run_port(taken_ports))),
    }
}

/// Claims one need: its requested value, or a free one.
async fn claim_need(
    backend: &impl Backend,
    ranges: &Ranges,
    need: &Need,
    claims: &mut Claims,
) -> Result<Claimable, Failure> {
    let parent = claims.parent.clone();
    if let Some(value) = &need.requested {
        if reserved_for_kubernetes(ranges, value, &parent) {
            return Err(Failure::Refused(need.already_allocated()));
        }
        return match claim(backend, ranges, value, &parent).await? {
            Some(revision) => {
                claims.made.push((value.key(), revision));
                Ok(value.clone())
            }
            None => Err(Failure::Refused(need.already_allocated())),
        };
    }
    let like = match need.slot {
        plan::Slot::ClusterIp => Claimable::Ip(String::new()),
        _ => Claimable::NodePort(0),
    };
    let mut listed = claimed(backend, &like).await?;
    let mut used: BTreeSet<Claimable> = listed.iter().filter_map(|n| Claimable::from_name(&like, n)).collect();
    used.extend(claims.made.iter().filter_map(|(key, _)| Claimable::from_name(&like, &key.name)));
    for _ in 0..CLAIM_RACES_MAX {
        let Some(value) = pick(ranges, &like, &used) else {
            // Full: take over a claim left behind by a failed write, if any.
            match take_over_any(backend, ranges, &like, &mut listed).await? {
                Some(freed) => {
                    used.remove(&freed);
                    continue;
                }
                None => return Err(Failure::Refused(need.range_full())),
            }
        };
        match claim(backend, ranges, &value, &parent).await? {
            Some(revision) => {
                claims.made.push((value.key(), revision));
                return Ok(value);
            }
            None => {
                used.insert(value);
            }
        }
    }
    Err(Failure::Refused(need.range_full()))
}

/// The `kubernetes` Service's address is held by kube's bootstrap
/// controller: no other Service gets it.
fn reserved_for_kubernetes(ranges: &Ranges, value: &Claimable, parent: &(String, String)) -> bool {
    let range = &ranges.cluster_ip;
    matches!(value, Claimable::Ip(ip) if range.parse_ip(ip) == Some(range.kubernetes_service_ip()))
        && (parent.0.as_str(), parent.1.as_str()) != ("default", "kubernetes")
}

fn pick(ranges: &Ranges, like: &Claimable, used: &BTreeSet<Claimable>) -> Option<Claimable> {
    let random = [rand::random::<u64>(), rand::random::<u64>()];
    match like {
        Claimable::Ip(_) => {
            let range = &ranges.cluster_ip;
            let numbers: BTreeSet<u128> = used
                .iter()
                .filter_map(|v| match v {
                    Claimable::Ip(ip) => range.parse_ip(ip),
                    Claimable::NodePort(_) => None,
                })
                .collect();
            let taken = |ip: u128| numbers.contains(&ip);
            plan::pick_ip(range, &taken, random).map(|ip| Claimable::Ip(range.format_ip(ip)))
        }
        Claimable::NodePort(_) => {
            let taken = |port: u16| used.contains(&Claimable::NodePort(port));
            plan::pick_port(&ranges.node_port, &taken, random).map(Claimable::NodePort)
        }
    }
}

/// The names of every claim of `like`'s kind, from every shard at the
/// commit point.
async fn claimed(backend: &impl Backend, like: &Claimable) -> Result<Vec<String>, ApiError> {
    let key = like.key();
    let prefix = collection_prefix(&key.group, &key.resource, Some(""));
    let revision = backend.committed_revision();
    let mut names = Vec::new();
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let found = backend
            .on_shard(ShardId(shard), revision, move |store| {
                store
                    .list(prefix.as_bytes(), None, usize::MAX)
                    .into_iter()
                    .map(|o| o.meta().name().to_string())
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(super::backend_error)?;
        names.extend(found);
    }
    Ok(names)
}

/// Writes the claim of `value` for `parent`: `Some(revision)` when this write
/// made it, `None` when another Service holds it.
async fn claim(
    backend: &impl Backend,
    ranges: &Ranges,
    value: &Claimable,
    parent: &(String, String),
) -> Result<Option<Revision>, ApiError> {
    let key = value.key();
    for attempt in 0..2 {
        let now = timestamp(backend.now());
        let object =
            value.claim_object(ranges.cluster_ip.family(), (&parent.0, &parent.1), &now, &new_uid(rand::random()));
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::Absent,
            operation: Operation::Put(storage_value(&object)?),
        };
        match backend.append(proposal).await {
            Ok(entry) => return Ok(Some(entry.revision)),
            Err(AppendError::Conflict { .. }) if attempt == 0 => {
                if !take_over_if_stale(backend, ranges, value).await? {
                    return Ok(None);
                }
            }
            Err(AppendError::Conflict { .. }) => return Ok(None),
            Err(e) => return Err(append_error(e)),
        }
    }
    Ok(None)
}

/// Deletes the claim of `value` if it was left behind: older than
/// `allocation_claim_grace` and not held by the Service it names. `true`
/// when the value may be claimed again.
async fn take_over_if_stale(backend: &impl Backend, ranges: &Ranges, value: &Claimable) -> Result<bool, ApiError> {
    let key = value.key();
    let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else {
        return Ok(true);
    };
    let claim: Object = serde_json::from_slice(&current.json).unwrap_or_default();
    let created = metadata(&claim)
        .get("creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok())
        .map(SystemTime::from);
    let grace = backend.config().allocation_claim_grace;
    let young = created.is_some_and(|t| backend.now().duration_since(t).unwrap_or(Duration::ZERO) < grace);
    if young {
        return Ok(false);
    }
    if let Some((namespace, name)) = plan::claim_parent(&claim) {
        let service_key = ObjectKey::new("", "services", &namespace, &name);
        if let Some(service) = read_current(backend, &service_key, backend.committed_revision()).await? {
            let service: Object = serde_json::from_slice(&service.json).unwrap_or_default();
            if plan::holds(ranges, &service, value) {
                return Ok(false);
            }
        }
    }
    let proposal = Proposal {
        key: key.encode(),
        precondition: Precondition::ModRevision(current.mod_revision),
        operation: Operation::Delete,
    };
    match backend.append(proposal).await {
        Ok(_) | Err(AppendError::Conflict { .. }) => Ok(true),
        Err(e) => Err(append_error(e)),
    }
}

/// A full range: takes over the first left-behind claim among `listed`
/// (claims of `like`'s kind).
async fn take_over_any(
    backend: &impl Backend,
    ranges: &Ranges,
    like: &Claimable,
    listed: &mut Vec<String>,
) -> Result<Option<Claimable>, ApiError> {
    while let Some(name) = listed.pop() {
        let Some(value) = Claimable::from_name(like, &name) else { continue };
        if take_over_if_stale(backend, ranges, &value).await? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// Deletes the claim of `value` if it names `parent`.
async fn release_if_held_by(backend: &impl Backend, value: &Claimable, parent: &(String, String)) {
    let key = value.key();
    let Ok(Some(current)) = read_current(backend, &key, backend.committed_revision()).await else {
        return;
    };
    let claim: Object = serde_json::from_slice(&current.json).unwrap_or_default();
    if plan::claim_parent(&claim).as_ref() != Some(parent) {
        return;
    }
    let proposal = Proposal {
        key: key.encode(),
        precondition: Precondition::ModRevision(current.mod_revision),
        operation: Operation::Delete,
    };
    // Best effort: a claim left here is taken over once stale.
    let _ = backend.append(proposal).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;
    use futures_lite::future::block_on;
    use serde_json::json;
    use std::rc::Rc;

    const SVC: &str = "/api/v1/namespaces/default/services";

    fn backend() -> Rc<MemoryBackend> {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        Rc::new(MemoryBackend::new(config, 2))
    }

    fn request(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let answer = crate::api::testing::send_json(backend, method, path, body);
        (answer.code, answer.body)
    }

    fn service(name: &str, ip: Option<&str>) -> Value {
        let mut spec = json!({"ports": [{"port": 80}], "selector": {"app": name}});
        if let Some(ip) = ip {
            spec["clusterIP"] = json!(ip);
        }
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
    }

    fn claims(backend: &Rc<MemoryBackend>) -> Vec<String> {
        let mut names = block_on(claimed(&**backend, &Claimable::Ip(String::new()))).unwrap();
        names.sort();
        names
    }

    /// What a crash between a claim and the Service's write leaves behind.
    fn leave_claim(backend: &Rc<MemoryBackend>, ip: &str, parent: (&str, &str)) {
        let value = Claimable::Ip(ip.into());
        let now = timestamp(backend.now());
        let object = value.claim_object("IPv4", parent, &now, "uid-1");
        let proposal = Proposal {
            key: value.key().encode(),
            precondition: Precondition::Absent,
            operation: Operation::Put(storage_value(&object).unwrap()),
        };
        block_on(backend.append(proposal)).unwrap();
    }

    #[test]
    fn a_failed_service_write_reverts_its_claims() {
        let backend = backend();
        let (code, first) = request(&backend, "POST", SVC, Some(service("a", None)));
        assert_eq!(code, 201, "{first}");
        assert_eq!(claims(&backend), [first["spec"]["clusterIP"].as_str().unwrap()]);
        // The same name again: an IP is claimed, the append is refused (409),
        // and the claim goes.
        let (code, status) = request(&backend, "POST", SVC, Some(service("a", None)));
        assert_eq!(code, 409, "{status}");
        assert_eq!(claims(&backend).len(), 1);
        // Deleting releases the IP.
        assert_eq!(request(&backend, "DELETE", &format!("{SVC}/a"), None).0, 200);
        assert!(claims(&backend).is_empty());
    }

    #[test]
    fn a_left_behind_claim_is_taken_over_once_older_than_the_grace() {
        let backend = backend();
        leave_claim(&backend, "10.0.0.50", ("default", "ghost"));
        let (code, status) = request(&backend, "POST", SVC, Some(service("b", Some("10.0.0.50"))));
        assert_eq!(code, 422, "a young claim may belong to a write in flight: {status}");
        backend.advance_ms(61_000);
        let (code, created) = request(&backend, "POST", SVC, Some(service("b", Some("10.0.0.50"))));
        assert_eq!(code, 201, "{created}");
        let claim =
            block_on(read_current(&*backend, &Claimable::Ip("10.0.0.50".into()).key(), backend.committed_revision()))
                .unwrap()
                .unwrap();
        let claim: Object = serde_json::from_slice(&claim.json).unwrap();
        assert_eq!(plan::claim_parent(&claim), Some(("default".into(), "b".into())));
    }

    #[test]
    fn a_claim_its_service_holds_is_never_taken_over() {
        let backend = backend();
        assert_eq!(request(&backend, "POST", SVC, Some(service("a", Some("10.0.0.50")))).0, 201);
        backend.advance_ms(3_600_000);
        let (code, status) = request(&backend, "POST", SVC, Some(service("b", Some("10.0.0.50"))));
        assert_eq!(code, 422, "{status}");
        // A claim naming a Service that does not hold the value is stale.
        leave_claim(&backend, "10.0.0.51", ("default", "a"));
        backend.advance_ms(61_000);
        assert_eq!(request(&backend, "POST", SVC, Some(service("c", Some("10.0.0.51")))).0, 201);
    }
}
