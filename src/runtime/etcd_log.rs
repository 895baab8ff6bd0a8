//! The etcd-backed log (`--log etcd`): etcd orders and stores every change, and
//! its revision is the resourceVersion, as in Kubernetes.
//!
//! The `etcd-client` crate runs on its own thread with its own tokio runtime,
//! outside the glommio executors; it talks to the shards only through the
//! bounded flume channels the embedded log uses too: it takes appends from the
//! log request channel, hands every shard the state loaded at start-up, and
//! broadcasts committed entries (from a prefix watch) in revision order.
//!
//! - A write is one etcd transaction: compare the key's `mod_revision` (or
//!   `create_revision == 0` for "absent"), then put or delete (with the
//!   previous value); else read the key, to report the conflict. Optimistic
//!   concurrency is etcd's; the transaction's revision is the resourceVersion.
//! - Start-up: paginated range reads over `PREFIX/registry/` at one revision,
//!   then a watch of that range from the next revision, with previous values
//!   and progress notifications, re-established from the last revision seen
//!   after an error.
//! - Revisions seen by one instance have gaps (other prefixes, other writers'
//!   failed or foreign transactions do not reach it): shards accept strictly
//!   increasing revisions (see docs/architecture.md, "The etcd log").
//! - etcd unreachable: reads keep being served from memory, the `log` health
//!   check fails (so `/readyz` is not ready), and every write gets an answer
//!   within `etcd_request_timeout` (`Unavailable`: 503 with Retry-After).
//!
//! Architecture invariant: no tokio or etcd-client type leaves this file, and
//! no glommio type enters its thread.

use super::{InitialState, LogRequest, Shared};
use crate::config::LogKind;
use crate::log::{AppendError, Entry, KeyValue, Operation, Precondition, PreviousValue, Proposal, Revision};
use bytes::Bytes;
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, DeleteOptions, EventType, GetOptions, PutOptions, Txn, TxnOp,
    TxnOpResponse, WatchOptions,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// The part of every etcd key that is ours: the object keys' root.
const KEY_ROOT: &[u8] = b"/registry/";

/// The running etcd log; dropping or closing it stops its thread.
pub(super) struct EtcdLog {
    stop: flume::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EtcdLog {
    /// Stops taking appends and watching; waits (bounded) for the thread.
    pub(super) fn close(mut self, grace: Duration) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let deadline = std::time::Instant::now() + grace;
            while !thread.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

/// Where our keys live in etcd.
#[derive(Clone)]
struct Keys {
    prefix: Vec<u8>,
}

impl Keys {
    fn etcd_key(&self, key: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.prefix.len() + key.len());
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(key);
        k
    }

    /// The first key of our range and the key after its end.
    fn range(&self) -> (Vec<u8>, Vec<u8>) {
        let start = self.etcd_key(KEY_ROOT);
        let mut end = start.clone();
        // "/registry/" ends in '/', so incrementing the last byte cannot overflow.
        if let Some(last) = end.last_mut() {
            *last += 1;
        }
        (start, end)
    }

    fn object_key(&self, etcd_key: &[u8]) -> Bytes {
        Bytes::copy_from_slice(etcd_key.strip_prefix(self.prefix.as_slice()).unwrap_or(etcd_key))
    }
}

/// Starts the etcd thread, loads the state at one revision and hands it to
/// every shard; returns once the shards have it (or start-up failed).
pub(super) async fn start(shared: Arc<Shared>, log_rx: flume::Receiver<LogRequest>) -> Result<EtcdLog, String> {
    let LogKind::Etcd { endpoints, key_prefix } = shared.config.log.clone() else {
        return Err("the etcd log started without --log etcd".into());
    };
    if endpoints.is_empty() {
        return Err("--log etcd needs --etcd-endpoints URL[,URL...]".into());
    }
    let keys = Keys { prefix: key_prefix.into_bytes() };
    let (ready_tx, ready_rx) = flume::bounded::<Result<(), String>>(1);
    let (stop_tx, stop_rx) = flume::bounded::<()>(1);
    let thread = std::thread::Builder::new()
        .name("etcd-log".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(r) => r,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("starting the etcd client's runtime: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                tokio::select! {
                    _ = run(shared, keys, endpoints, log_rx, ready_tx) => {}
                    _ = stop_rx.recv_async() => {}
                }
            });
        })
        .map_err(|e| format!("starting the etcd thread: {e}"))?;
    match ready_rx.recv_async().await {
        Ok(Ok(())) => Ok(EtcdLog { stop: stop_tx, thread: Some(thread) }),
        Ok(Err(reason)) => Err(reason),
        Err(_) => Err("the etcd thread stopped during start-up".into()),
    }
}

async fn run(
    shared: Arc<Shared>,
    keys: Keys,
    endpoints: Vec<String>,
    log_rx: flume::Receiver<LogRequest>,
    ready_tx: flume::Sender<Result<(), String>>,
) {
    let timeout = shared.config.etcd_request_timeout;
    let options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_timeout(timeout)
        .with_keep_alive(Duration::from_secs(10), timeout);
    let client = match tokio::time::timeout(timeout, Client::connect(&endpoints, Some(options))).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            let _ = ready_tx.send(Err(format!("connecting to etcd at {endpoints:?}: {e}")));
            return;
        }
        Err(_) => {
            let _ = ready_tx.send(Err(format!("connecting to etcd at {endpoints:?}: no answer within {timeout:?}")));
            return;
        }
    };
    let initial = match load(&client, &keys, shared.config.etcd_range_page_objects, timeout).await {
        Ok(initial) => initial,
        Err(reason) => {
            let _ = ready_tx.send(Err(reason));
            return;
        }
    };
    let revision = initial.revision;
    eprintln!("shardline: etcd log at revision {revision} with {} objects", initial.live.len());
    shared.committed.fetch_max(revision.0, Ordering::AcqRel);
    let initial = Arc::new(initial);
    for tx in &shared.init_tx {
        if tx.send_async(initial.clone()).await.is_err() {
            let _ = ready_tx.send(Err("a shard stopped before start-up".into()));
            return;
        }
    }
    drop(initial);
    shared.log_healthy.store(true, Ordering::Release);
    let _ = ready_tx.send(Ok(()));

    tokio::spawn(follow(shared.clone(), client.clone(), keys.clone(), revision));

    let in_flight = Arc::new(tokio::sync::Semaphore::new(shared.config.log_appends_in_flight_max.max(1)));
    while let Ok(request) = log_rx.recv_async().await {
        let Ok(permit) = in_flight.clone().acquire_owned().await else { break };
        let mut client = client.clone();
        let shared = shared.clone();
        let keys = keys.clone();
        tokio::spawn(async move {
            let result = append(&mut client, &keys, request.proposal, &shared).await;
            match &result {
                Ok(entry) => {
                    shared.committed.fetch_max(entry.revision.0, Ordering::AcqRel);
                    shared.log_healthy.store(true, Ordering::Release);
                }
                Err(AppendError::Unavailable(_)) => shared.log_healthy.store(false, Ordering::Release),
                Err(_) => {}
            }
            let _ = request.reply.send(result);
            drop(permit);
        });
    }
}

/// Every live key under our range, read page by page at one revision.
async fn load(client: &Client, keys: &Keys, page: i64, timeout: Duration) -> Result<InitialState, String> {
    let mut kv = client.kv_client();
    let (mut from, end) = keys.range();
    let mut revision = 0i64;
    let mut live = Vec::new();
    loop {
        let mut options = GetOptions::new().with_range(end.clone()).with_limit(page.max(1));
        if revision > 0 {
            options = options.with_revision(revision);
        }
        let response = match tokio::time::timeout(timeout, kv.get(from.clone(), Some(options))).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(format!("reading the state from etcd: {e}")),
            Err(_) => return Err(format!("reading the state from etcd: no answer within {timeout:?}")),
        };
        if revision == 0 {
            revision = response.header().map(|h| h.revision()).unwrap_or(0);
        }
        for item in response.kvs() {
            live.push(KeyValue {
                key: keys.object_key(item.key()),
                value: Bytes::copy_from_slice(item.value()),
                create_revision: Revision(item.create_revision() as u64),
                mod_revision: Revision(item.mod_revision() as u64),
            });
        }
        match response.kvs().last() {
            Some(last) if response.more() => {
                from = last.key().to_vec();
                from.push(0);
            }
            _ => break,
        }
    }
    Ok(InitialState { revision: Revision(revision.max(0) as u64), live })
}

/// Follows the prefix watch from `after + 1`, broadcasting each response's
/// entries to every shard in revision order; reconnects after errors.
async fn follow(shared: Arc<Shared>, mut client: Client, keys: Keys, mut after: Revision) {
    let (start, end) = keys.range();
    let mut backoff = Duration::from_millis(100);
    loop {
        let options = WatchOptions::new()
            .with_range(end.clone())
            .with_start_revision(after.0 as i64 + 1)
            .with_prev_key()
            .with_progress_notify();
        let (_watcher, mut stream) = match client.watch(start.clone(), Some(options)).await {
            Ok(w) => w,
            Err(e) => {
                eprintln!("shardline: etcd watch from revision {}: {e}; retrying", after.0 + 1);
                shared.log_healthy.store(false, Ordering::Release);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        loop {
            let response = match stream.message().await {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    eprintln!("shardline: etcd watch broke after revision {after}: {e}; re-watching");
                    shared.log_healthy.store(false, Ordering::Release);
                    break;
                }
            };
            backoff = Duration::from_millis(100);
            if response.canceled() {
                if response.compact_revision() > 0 {
                    // The history this instance needs is gone from etcd: it
                    // cannot continue without missing events.
                    eprintln!(
                        "shardline: etcd compacted revision {} before this instance saw revision {}: stopping the log",
                        response.compact_revision(),
                        after.0 + 1
                    );
                    shared.log_healthy.store(false, Ordering::Release);
                    return;
                }
                eprintln!("shardline: etcd cancelled the watch: {}; re-watching", response.cancel_reason());
                break;
            }
            let mut entries = Vec::with_capacity(response.events().len());
            for event in response.events() {
                let Some(kv) = event.kv() else { continue };
                let revision = Revision(kv.mod_revision() as u64);
                if revision <= after {
                    // Two changes in one foreign transaction share a revision;
                    // Shardline's own writes are one key each.
                    eprintln!(
                        "shardline: etcd event at revision {revision} after {after} ignored (multi-key transaction)"
                    );
                    continue;
                }
                let previous = event.prev_kv().map(|p| PreviousValue {
                    mod_revision: Revision(p.mod_revision() as u64),
                    create_revision: Revision(p.create_revision() as u64),
                    value: Bytes::copy_from_slice(p.value()),
                });
                let (operation, create_revision) = match event.event_type() {
                    EventType::Put => {
                        (Operation::Put(Bytes::copy_from_slice(kv.value())), Revision(kv.create_revision() as u64))
                    }
                    EventType::Delete => {
                        (Operation::Delete, previous.as_ref().map(|p| p.create_revision).unwrap_or(Revision::ZERO))
                    }
                };
                entries.push(Entry { revision, key: keys.object_key(kv.key()), operation, create_revision, previous });
                after = revision;
            }
            shared.log_healthy.store(true, Ordering::Release);
            if entries.is_empty() {
                continue;
            }
            let last = after;
            let batch = Arc::new(entries);
            for tx in &shared.apply_tx {
                // A shard that has stopped (shutdown) no longer needs entries.
                let _ = tx.send_async(batch.clone()).await;
            }
            shared.committed.fetch_max(last.0, Ordering::AcqRel);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// One conditional write as an etcd transaction.
async fn append(client: &mut Client, keys: &Keys, proposal: Proposal, shared: &Shared) -> Result<Entry, AppendError> {
    let limit = shared.config.etcd_value_bytes_max;
    if let Operation::Put(value) = &proposal.operation {
        if value.len() + proposal.key.len() > limit {
            return Err(AppendError::TooLarge { size_bytes: value.len() + proposal.key.len(), limit_bytes: limit });
        }
    }
    let key = keys.etcd_key(&proposal.key);
    let compare = match proposal.precondition {
        Precondition::None => vec![],
        Precondition::Absent => vec![Compare::create_revision(key.clone(), CompareOp::Equal, 0)],
        Precondition::ModRevision(r) => vec![Compare::mod_revision(key.clone(), CompareOp::Equal, r.0 as i64)],
    };
    let op = match &proposal.operation {
        Operation::Put(value) => TxnOp::put(key.clone(), value.to_vec(), Some(PutOptions::new().with_prev_key())),
        Operation::Delete => TxnOp::delete(key.clone(), Some(DeleteOptions::new().with_prev_key())),
    };
    let txn = Txn::new().when(compare).and_then(vec![op]).or_else(vec![TxnOp::get(key.clone(), None)]);
    let timeout = shared.config.etcd_request_timeout;
    let response = match tokio::time::timeout(timeout, client.txn(txn)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(AppendError::Unavailable(format!("etcd: {e}"))),
        Err(_) => return Err(AppendError::Unavailable(format!("etcd did not answer within {timeout:?}"))),
    };
    let revision = Revision(response.header().map(|h| h.revision()).unwrap_or(0).max(0) as u64);
    let responses = response.op_responses();
    if !response.succeeded() {
        let current = responses.iter().find_map(|r| match r {
            TxnOpResponse::Get(get) => Some(get.kvs().first().map(|kv| Revision(kv.mod_revision() as u64))),
            _ => None,
        });
        return Err(AppendError::Conflict { current: current.flatten() });
    }
    let previous_of = |p: &etcd_client::KeyValue| PreviousValue {
        mod_revision: Revision(p.mod_revision() as u64),
        create_revision: Revision(p.create_revision() as u64),
        value: Bytes::copy_from_slice(p.value()),
    };
    match (responses.first(), proposal.operation) {
        (Some(TxnOpResponse::Put(put)), Operation::Put(value)) => {
            let previous = put.prev_key().map(previous_of);
            let create_revision = previous.as_ref().map(|p| p.create_revision).unwrap_or(revision);
            Ok(Entry { revision, key: proposal.key, operation: Operation::Put(value), create_revision, previous })
        }
        (Some(TxnOpResponse::Delete(delete)), Operation::Delete) => {
            let Some(previous) = delete.prev_kvs().first().map(previous_of) else {
                // Nothing was deleted, so etcd's revision did not move.
                return Err(AppendError::Conflict { current: None });
            };
            Ok(Entry {
                revision,
                key: proposal.key,
                operation: Operation::Delete,
                create_revision: previous.create_revision,
                previous: Some(previous),
            })
        }
        _ => Err(AppendError::Unavailable("etcd answered the transaction with an unexpected response".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::Keys;

    #[test]
    fn keys_map_to_the_prefixed_registry_range_and_back() {
        let keys = Keys { prefix: b"/tenant-a".to_vec() };
        assert_eq!(keys.etcd_key(b"/registry/core/pods/ns/a"), b"/tenant-a/registry/core/pods/ns/a".to_vec());
        let (start, end) = keys.range();
        assert_eq!(start, b"/tenant-a/registry/".to_vec());
        assert_eq!(end, b"/tenant-a/registry0".to_vec());
        assert_eq!(&keys.object_key(b"/tenant-a/registry/core/pods/ns/a")[..], b"/registry/core/pods/ns/a");
        let plain = Keys { prefix: Vec::new() };
        assert_eq!(plain.range().0, b"/registry/".to_vec());
    }
}
