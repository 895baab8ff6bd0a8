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
//! - Consistent reads: a batch of requests (all that wait while the previous
//!   batch's request is in flight) costs one quorum read of etcd's current
//!   revision E. If the watch has already seen E, the batch reads at the last
//!   revision delivered to the shards; otherwise one fence write inside our
//!   range (`/registry/~fence`, never an object) gives a revision F >= E that
//!   the watch delivers after every earlier change of the range, and the
//!   batch waits (at most `resource_version_wait`) until the watch has seen F.
//!   Progress notifications are not used for this: etcd 3.4 before 3.4.24 may
//!   send one ahead of events still queued for the watch.
//! - Compaction: every `etcd_compaction_interval` a compare-and-swap on
//!   `PREFIXcompact_rev_key` elects one instance to compact etcd to a
//!   revision recorded at least `max(interval, history_window)` ago. A watch
//!   cancelled because etcd compacted past it (another writer, a long outage)
//!   re-lists at the present revision and hands every shard the new state
//!   (`Applied::Reset`): its watchers end and clients re-list, as after
//!   kube-apiserver's watch cache re-lists.
//! - TLS: https endpoints with `--etcd-cafile` (and optionally a client
//!   certificate), through tonic's rustls.
//!
//! Architecture invariant: no tokio or etcd-client type leaves this file, and
//! no glommio type enters its thread.

use super::{Applied, FreshRequest, InitialState, LogRequest, Shared};
use crate::api::kube_storage::{self, StorageLayout};
use crate::api::BackendError;
use crate::config::{EtcdTls, LogKind};
use crate::log::{AppendError, Entry, KeyValue, Operation, Precondition, PreviousValue, Proposal, Revision};
use bytes::Bytes;
use etcd_client::{
    Certificate, Client, Compare, CompareOp, ConnectOptions, DeleteOptions, EventType, GetOptions, Identity,
    PutOptions, TlsOptions, Txn, TxnOp, TxnOpResponse, WatchOptions,
};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The part of every etcd key that is ours: the object keys' root.
const KEY_ROOT: &[u8] = b"/registry/";

/// The consistent reads' fence, inside our range so the prefix watch orders
/// it among the objects' changes; `~` cannot begin an API group or resource,
/// so it is never an object key.
const FENCE_KEY: &[u8] = b"/registry/~fence";

/// The compactors' compare-and-swap key (kube-apiserver's name), after the prefix.
const COMPACT_REV_KEY: &[u8] = b"compact_rev_key";

/// How far the prefix watch has got, published after every response.
#[derive(Clone, Copy, Debug)]
struct Progress {
    /// Every change of our range up to this revision has been seen (fences
    /// included).
    seen: Revision,
    /// The revision of the last entry handed to the shards (or of the loaded
    /// state): a read at it includes everything seen.
    delivered: Revision,
}

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

/// Where our keys live in etcd, and in which layout (`--storage-layout`).
#[derive(Clone)]
struct Keys {
    prefix: Vec<u8>,
    layout: StorageLayout,
}

impl Keys {
    /// The etcd key of one of our keys (objects in the layout's form; the
    /// fence, the compaction key and the range root as they are).
    fn etcd_key(&self, key: &[u8]) -> Vec<u8> {
        let translated = match self.layout {
            StorageLayout::Kubernetes => kube_storage::kube_key(key),
            StorageLayout::Shardline => None,
        };
        let key = translated.as_deref().unwrap_or(key);
        let mut k = Vec::with_capacity(self.prefix.len() + key.len());
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(key);
        k
    }

    /// The value stored in etcd for an object's JSON.
    fn etcd_value(&self, json: &[u8]) -> Result<Vec<u8>, String> {
        match self.layout {
            StorageLayout::Kubernetes => kube_storage::encode_value(json),
            StorageLayout::Shardline => Ok(json.to_vec()),
        }
    }

    /// The JSON of a value read from etcd under `etcd_key`: an `Err` (counted
    /// and reported, with the key) when the layout's decoding refuses it.
    fn object_value(&self, etcd_key: &[u8], value: &[u8]) -> Result<Bytes, ()> {
        match self.layout {
            StorageLayout::Shardline => Ok(Bytes::copy_from_slice(value)),
            StorageLayout::Kubernetes => kube_storage::decode_value(value).map(Bytes::from).map_err(|reason| {
                kube_storage::count_decode_error();
                eprintln!(
                    "shardline: etcd key {}: cannot decode its value ({reason}); skipped",
                    String::from_utf8_lossy(etcd_key)
                );
            }),
        }
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

    /// Our key for an etcd key of our range; `None` for keys of nothing
    /// served (in the Kubernetes layout: kube's own bookkeeping, such as
    /// `/registry/ranges/...`).
    fn object_key(&self, etcd_key: &[u8]) -> Option<Bytes> {
        let key = etcd_key.strip_prefix(self.prefix.as_slice()).unwrap_or(etcd_key);
        match self.layout {
            StorageLayout::Shardline => Some(Bytes::copy_from_slice(key)),
            StorageLayout::Kubernetes => kube_storage::internal_key(key),
        }
    }

    fn is_fence(&self, etcd_key: &[u8]) -> bool {
        etcd_key.strip_prefix(self.prefix.as_slice()) == Some(FENCE_KEY)
    }
}

/// The connection options: timeouts, keep-alive and, with `--etcd-cafile`,
/// TLS (the CA bundle, and the client certificate when given).
fn connect_options(endpoints: &[String], tls: &EtcdTls, timeout: Duration) -> Result<ConnectOptions, String> {
    let mut options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_timeout(timeout)
        .with_keep_alive(Duration::from_secs(10), timeout);
    let https = endpoints.iter().any(|e| e.starts_with("https://"));
    let read = |path: &std::path::Path, what: &str| {
        std::fs::read(path).map_err(|e| format!("reading {what} {}: {e}", path.display()))
    };
    match (&tls.ca_file, &tls.cert_file, &tls.key_file) {
        (None, None, None) if !https => {}
        (None, _, _) => {
            return Err("https etcd endpoints and etcd client certificates need --etcd-cafile (the CA that signed \
                        etcd's serving certificate)"
                .into())
        }
        (Some(_), Some(_), None) | (Some(_), None, Some(_)) => {
            return Err("--etcd-certfile and --etcd-keyfile go together".into())
        }
        (Some(ca), cert, key) => {
            if !https {
                return Err("--etcd-cafile needs https:// etcd endpoints".into());
            }
            let mut tls_options = TlsOptions::new().ca_certificate(Certificate::from_pem(read(ca, "--etcd-cafile")?));
            if let (Some(cert), Some(key)) = (cert, key) {
                tls_options = tls_options
                    .identity(Identity::from_pem(read(cert, "--etcd-certfile")?, read(key, "--etcd-keyfile")?));
            }
            options = options.with_tls(tls_options);
        }
    }
    Ok(options)
}

/// Starts the etcd thread, loads the state at one revision and hands it to
/// every shard; returns once the shards have it (or start-up failed).
pub(super) async fn start(
    shared: Arc<Shared>,
    log_rx: flume::Receiver<LogRequest>,
    fresh_rx: flume::Receiver<FreshRequest>,
) -> Result<EtcdLog, String> {
    let LogKind::Etcd { endpoints, key_prefix } = shared.config.log.clone() else {
        return Err("the etcd log started without --log etcd".into());
    };
    if endpoints.is_empty() {
        return Err("--log etcd needs --etcd-endpoints URL[,URL...]".into());
    }
    let keys = Keys { prefix: key_prefix.into_bytes(), layout: shared.config.storage_layout };
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
                    _ = run(shared, keys, endpoints, log_rx, fresh_rx, ready_tx) => {}
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
    fresh_rx: flume::Receiver<FreshRequest>,
    ready_tx: flume::Sender<Result<(), String>>,
) {
    let timeout = shared.config.etcd_request_timeout;
    let options = match connect_options(&endpoints, &shared.config.etcd_tls, timeout) {
        Ok(options) => options,
        Err(reason) => {
            let _ = ready_tx.send(Err(reason));
            return;
        }
    };
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
    eprintln!(
        "shardline: etcd log at revision {revision} with {} objects (endpoints {}, prefix {:?}, storage layout {}, {} values that did not decode skipped)",
        initial.live.len(),
        endpoints.join(","),
        String::from_utf8_lossy(&keys.prefix),
        keys.layout.name(),
        kube_storage::decode_errors()
    );
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

    let (progress_tx, progress_rx) = tokio::sync::watch::channel(Progress { seen: revision, delivered: revision });
    tokio::spawn(follow(shared.clone(), client.clone(), keys.clone(), revision, progress_tx));
    tokio::spawn(serve_consistent_reads(shared.clone(), client.clone(), keys.clone(), fresh_rx, progress_rx));
    if !shared.config.etcd_compaction_interval.is_zero() {
        tokio::spawn(compact_periodically(shared.clone(), client.clone(), keys.clone()));
    }

    let in_flight = Arc::new(tokio::sync::Semaphore::new(shared.config.log_appends_in_flight_max.max(1)));
    while let Ok(request) = log_rx.recv_async().await {
        let taken = std::time::Instant::now();
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
                    shared.log_metrics.commit.observe(taken.elapsed().as_nanos().min(u64::MAX as u128) as u64);
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
        for item in response.kvs().iter().filter(|item| !keys.is_fence(item.key())) {
            let Some(key) = keys.object_key(item.key()) else { continue };
            let Ok(value) = keys.object_value(item.key(), item.value()) else { continue };
            live.push(KeyValue {
                key,
                value,
                create_revision: Revision(item.create_revision() as u64),
                mod_revision: Revision(item.mod_revision() as u64),
                cached: Bytes::new(),
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
/// entries to every shard in revision order; reconnects after errors, and
/// re-lists when etcd compacted the revisions it still needed.
async fn follow(
    shared: Arc<Shared>,
    mut client: Client,
    keys: Keys,
    mut after: Revision,
    progress: tokio::sync::watch::Sender<Progress>,
) {
    let (start, end) = keys.range();
    let mut backoff = Duration::from_millis(100);
    let mut delivered = after;
    // Since when this instance has been behind etcd (None: caught up).
    let mut behind_since: Option<Instant> = None;
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
                    // The history this instance needs is gone from etcd:
                    // continuing would miss events, so start over from the
                    // present state.
                    eprintln!(
                        "shardline: etcd compacted revision {} before this instance saw revision {}: re-listing",
                        response.compact_revision(),
                        after.0 + 1
                    );
                    shared.log_healthy.store(false, Ordering::Release);
                    let initial = relist(&shared, &client, &keys).await;
                    after = initial.revision;
                    delivered = initial.revision;
                    let initial = Arc::new(initial);
                    for tx in &shared.apply_tx {
                        let _ = tx.send_async(Applied::Reset(initial.clone())).await;
                    }
                    shared.committed.fetch_max(after.0, Ordering::AcqRel);
                    progress.send_replace(Progress { seen: after, delivered });
                    shared.log_healthy.store(true, Ordering::Release);
                    break;
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
                after = revision;
                if keys.is_fence(kv.key()) {
                    continue;
                }
                let Some(key) = keys.object_key(kv.key()) else { continue };
                // A previous value that cannot be decoded was never served.
                let previous = event.prev_kv().and_then(|p| {
                    Some(PreviousValue {
                        mod_revision: Revision(p.mod_revision() as u64),
                        create_revision: Revision(p.create_revision() as u64),
                        value: keys.object_value(p.key(), p.value()).ok()?,
                    })
                });
                let (operation, create_revision) = match event.event_type() {
                    EventType::Put => match keys.object_value(kv.key(), kv.value()) {
                        Ok(value) => (Operation::Put(value), Revision(kv.create_revision() as u64)),
                        // Undecodable now: what was served for the key is no
                        // longer its state, so it leaves (as a deletion).
                        Err(()) if previous.is_some() => {
                            (Operation::Delete, previous.as_ref().map_or(Revision::ZERO, |p| p.create_revision))
                        }
                        Err(()) => continue,
                    },
                    EventType::Delete => {
                        if previous.is_none() && event.prev_kv().is_some() {
                            continue;
                        }
                        (Operation::Delete, previous.as_ref().map(|p| p.create_revision).unwrap_or(Revision::ZERO))
                    }
                };
                entries.push(Entry { revision, key, operation, create_revision, previous });
            }
            shared.log_healthy.store(true, Ordering::Release);
            if let Some(last) = entries.last().map(|e| e.revision) {
                let batch = Arc::new(entries);
                let committed_at = std::time::Instant::now();
                for tx in &shared.apply_tx {
                    // A shard that has stopped (shutdown) no longer needs entries.
                    let _ = tx.send_async(Applied::Entries(batch.clone(), committed_at)).await;
                }
                shared.committed.fetch_max(last.0, Ordering::AcqRel);
                delivered = last;
            }
            // How far behind etcd: the response's header is etcd's revision
            // when it was sent; a progress notification (no events) also
            // says every change up to it has been sent.
            let etcd_revision = response.header().map_or(0, |h| h.revision().max(0) as u64);
            let behind = etcd_revision.saturating_sub(if response.events().is_empty() { delivered.0 } else { after.0 });
            shared.log_metrics.behind_revisions.store(behind, Ordering::Relaxed);
            if behind == 0 {
                behind_since = None;
            }
            let since = *behind_since.get_or_insert_with(Instant::now);
            let behind_ms = if behind == 0 { 0 } else { since.elapsed().as_millis() as u64 };
            shared.log_metrics.behind_ms.store(behind_ms, Ordering::Relaxed);
            progress.send_if_modified(|p| {
                let changed = p.seen != after || p.delivered != delivered;
                *p = Progress { seen: after, delivered };
                changed
            });
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// The present state, read again after etcd compacted past this instance;
/// retried (with backoff) until etcd answers.
async fn relist(shared: &Shared, client: &Client, keys: &Keys) -> InitialState {
    let mut backoff = Duration::from_millis(100);
    loop {
        match load(client, keys, shared.config.etcd_range_page_objects, shared.config.etcd_request_timeout).await {
            Ok(initial) => {
                eprintln!(
                    "shardline: etcd log re-listed at revision {} with {} objects",
                    initial.revision,
                    initial.live.len()
                );
                return initial;
            }
            Err(reason) => {
                eprintln!("shardline: re-listing after compaction: {reason}; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// Answers consistent reads' revision requests in batches: every request
/// that arrived while the previous batch's etcd read was in flight shares the
/// next one.
async fn serve_consistent_reads(
    shared: Arc<Shared>,
    client: Client,
    keys: Keys,
    fresh_rx: flume::Receiver<FreshRequest>,
    progress: tokio::sync::watch::Receiver<Progress>,
) {
    let timeout = shared.config.etcd_request_timeout;
    let wait = shared.config.resource_version_wait;
    let batches = Arc::new(tokio::sync::Semaphore::new(shared.config.etcd_consistent_read_batches_max.max(1)));
    while let Ok(first) = fresh_rx.recv_async().await {
        let Ok(permit) = batches.clone().acquire_owned().await else { break };
        let mut replies = vec![first.reply];
        replies.extend(fresh_rx.drain().map(|r| r.reply));
        let [requests, batch_count, _] = &shared.consistent_reads;
        requests.fetch_add(replies.len() as u64, Ordering::Relaxed);
        batch_count.fetch_add(1, Ordering::Relaxed);
        let mut kv = client.kv_client();
        let fence = keys.etcd_key(FENCE_KEY);
        // A quorum read of one key: its header carries etcd's current revision.
        let current =
            match tokio::time::timeout(timeout, kv.get(fence.clone(), Some(GetOptions::new().with_count_only()))).await
            {
                Ok(Ok(r)) => Ok(Revision(r.header().map(|h| h.revision()).unwrap_or(0).max(0) as u64)),
                Ok(Err(e)) => Err(format!("etcd could not tell its current revision for a consistent read: {e}")),
                Err(_) => {
                    Err(format!("etcd did not tell its current revision for a consistent read within {timeout:?}"))
                }
            };
        let current = match current {
            Ok(current) => current,
            Err(message) => {
                for reply in replies {
                    let _ = reply.send(Err(BackendError::ConsistentReadUnavailable(message.clone())));
                }
                continue;
            }
        };
        let seen = *progress.borrow();
        if seen.seen >= current {
            for reply in replies {
                let _ = reply.send(Ok(seen.delivered));
            }
            continue;
        }
        let mut progress = progress.clone();
        let fence_after = shared.config.etcd_fence_after;
        let shared = shared.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // A change of ours on its way arrives within a round-trip.
            if let Ok(Ok(p)) = tokio::time::timeout(fence_after, progress.wait_for(|p| p.seen >= current)).await {
                let delivered = p.delivered;
                for reply in replies {
                    let _ = reply.send(Ok(delivered));
                }
                return;
            }
            // Behind etcd (a change outside our keys, or ours still on its
            // way): a fence write orders a revision after `current` into our
            // watch.
            shared.consistent_reads[2].fetch_add(1, Ordering::Relaxed);
            let target = match tokio::time::timeout(timeout, kv.put(fence, Vec::new(), None)).await {
                Ok(Ok(r)) => Revision(r.header().map(|h| h.revision()).unwrap_or(0).max(0) as u64).max(current),
                Ok(Err(e)) => {
                    let message = format!("etcd refused a consistent read's fence write: {e}");
                    for reply in replies {
                        let _ = reply.send(Err(BackendError::ConsistentReadUnavailable(message.clone())));
                    }
                    return;
                }
                Err(_) => {
                    let message = format!("etcd did not acknowledge a consistent read's fence within {timeout:?}");
                    for reply in replies {
                        let _ = reply.send(Err(BackendError::ConsistentReadUnavailable(message.clone())));
                    }
                    return;
                }
            };
            let reached = match tokio::time::timeout(wait, progress.wait_for(|p| p.seen >= target)).await {
                Ok(Ok(p)) => Some(p.delivered),
                _ => None,
            };
            let result = reached.ok_or_else(|| BackendError::ConsistentReadTimeout {
                wanted: target,
                current: progress.borrow().delivered,
            });
            for reply in replies {
                let _ = reply.send(result.clone());
            }
        });
    }
}

/// kube-apiserver's compactor: every interval, a compare-and-swap on the
/// compactors' key elects one instance, which compacts etcd to the newest
/// revision it recorded at least `max(interval, history_window)` ago: every
/// revision applied within the history window stays in etcd. (The shards
/// serve reads from memory, never from etcd's history; etcd's history is
/// what a watch re-established after an error, or another instance, reads.)
async fn compact_periodically(shared: Arc<Shared>, client: Client, keys: Keys) {
    let interval = shared.config.etcd_compaction_interval;
    let keep = interval.max(shared.config.history_window);
    let timeout = shared.config.etcd_request_timeout;
    let key = keys.etcd_key(COMPACT_REV_KEY);
    let mut kv = client.kv_client();
    let mut version = 0i64;
    let mut compacted = 0i64;
    // (when, etcd's revision then), oldest first; bounded by `keep / interval + 2`.
    let mut samples: VecDeque<(Instant, i64)> = VecDeque::new();
    loop {
        tokio::time::sleep(interval).await;
        let now = Instant::now();
        let txn = Txn::new()
            .when(vec![Compare::version(key.clone(), CompareOp::Equal, version)])
            .and_then(vec![TxnOp::put(key.clone(), Vec::new(), None)])
            .or_else(vec![TxnOp::get(key.clone(), None)]);
        let response = match tokio::time::timeout(timeout, kv.txn(txn)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                eprintln!("shardline: etcd compaction round: {e}");
                continue;
            }
            Err(_) => continue,
        };
        let revision = response.header().map(|h| h.revision()).unwrap_or(0);
        let elected = response.succeeded();
        if elected {
            version += 1;
        } else {
            // Another instance compacted this round: follow its count.
            version = response
                .op_responses()
                .iter()
                .find_map(|r| match r {
                    TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.version()),
                    _ => None,
                })
                .unwrap_or(0);
        }
        let cutoff = now.checked_sub(keep);
        let target = samples.iter().rev().find(|(at, _)| Some(*at) <= cutoff).map(|(_, r)| *r);
        if let Some(target) = target {
            while samples.front().is_some_and(|(_, r)| *r < target) {
                samples.pop_front();
            }
            if elected && target > compacted {
                match tokio::time::timeout(timeout, kv.compact(target, None)).await {
                    Ok(Ok(_)) => {
                        compacted = target;
                        eprintln!("shardline: compacted etcd to revision {target}");
                    }
                    // Already compacted further (by another writer): fine.
                    Ok(Err(e)) => eprintln!("shardline: compacting etcd to revision {target}: {e}"),
                    Err(_) => {
                        eprintln!("shardline: compacting etcd to revision {target}: no answer within {timeout:?}")
                    }
                }
            }
        }
        samples.push_back((now, revision));
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
    let stored = match &proposal.operation {
        Operation::Put(value) => match keys.etcd_value(value) {
            Ok(stored) => Some(stored),
            Err(reason) => return Err(AppendError::Unavailable(format!("encoding for etcd: {reason}"))),
        },
        Operation::Delete => None,
    };
    let compare = match proposal.precondition {
        Precondition::None => vec![],
        Precondition::Absent => vec![Compare::create_revision(key.clone(), CompareOp::Equal, 0)],
        Precondition::ModRevision(r) => vec![Compare::mod_revision(key.clone(), CompareOp::Equal, r.0 as i64)],
    };
    let op = match &proposal.operation {
        Operation::Put(_) => {
            TxnOp::put(key.clone(), stored.unwrap_or_default(), Some(PutOptions::new().with_prev_key()))
        }
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
    let previous_of = |p: &etcd_client::KeyValue| {
        Some(PreviousValue {
            mod_revision: Revision(p.mod_revision() as u64),
            create_revision: Revision(p.create_revision() as u64),
            value: keys.object_value(p.key(), p.value()).ok()?,
        })
    };
    match (responses.first(), proposal.operation) {
        (Some(TxnOpResponse::Put(put)), Operation::Put(value)) => {
            let previous = put.prev_key().and_then(previous_of);
            let create_revision = previous.as_ref().map(|p| p.create_revision).unwrap_or(revision);
            Ok(Entry { revision, key: proposal.key, operation: Operation::Put(value), create_revision, previous })
        }
        (Some(TxnOpResponse::Delete(delete)), Operation::Delete) => {
            let Some(deleted) = delete.prev_kvs().first() else {
                // Nothing was deleted, so etcd's revision did not move.
                return Err(AppendError::Conflict { current: None });
            };
            Ok(Entry {
                revision,
                key: proposal.key,
                operation: Operation::Delete,
                create_revision: Revision(deleted.create_revision() as u64),
                previous: previous_of(deleted),
            })
        }
        _ => Err(AppendError::Unavailable("etcd answered the transaction with an unexpected response".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::{connect_options, Keys, StorageLayout};
    use crate::config::EtcdTls;
    use std::time::Duration;

    #[test]
    fn the_fence_key_is_in_our_range_and_never_an_object() {
        let keys = Keys { prefix: b"/t".to_vec(), layout: StorageLayout::Shardline };
        let (start, end) = keys.range();
        let fence = keys.etcd_key(super::FENCE_KEY);
        assert!(start <= fence && fence < end, "the prefix watch sees the fence");
        assert!(keys.is_fence(&fence));
        assert!(!keys.is_fence(b"/t/registry/core/configmaps/default/~fence"));
        assert!(!keys.is_fence(super::FENCE_KEY), "another prefix's fence is not ours");
    }

    #[test]
    fn tls_flags_are_checked_before_connecting() {
        let t = Duration::from_secs(1);
        let http = ["http://127.0.0.1:2379".to_string()];
        let https = ["https://127.0.0.1:2379".to_string()];
        let file = |name: &str| Some(std::path::PathBuf::from(name));
        assert!(connect_options(&http, &EtcdTls::default(), t).is_ok());
        let no_ca = connect_options(&https, &EtcdTls::default(), t).err().unwrap();
        assert!(no_ca.contains("--etcd-cafile"), "{no_ca}");
        let half = EtcdTls { ca_file: file("ca.pem"), cert_file: file("c.pem"), key_file: None };
        assert!(connect_options(&https, &half, t).err().unwrap().contains("go together"));
        let ca_on_http = EtcdTls { ca_file: file("ca.pem"), ..EtcdTls::default() };
        assert!(connect_options(&http, &ca_on_http, t).err().unwrap().contains("https://"));
        let missing = EtcdTls { ca_file: file("/nonexistent/ca.pem"), ..EtcdTls::default() };
        assert!(connect_options(&https, &missing, t).err().unwrap().contains("/nonexistent/ca.pem"));
    }

    #[test]
    fn keys_map_to_the_prefixed_registry_range_and_back() {
        let keys = Keys { prefix: b"/tenant-a".to_vec(), layout: StorageLayout::Shardline };
        assert_eq!(keys.etcd_key(b"/registry/core/pods/ns/a"), b"/tenant-a/registry/core/pods/ns/a".to_vec());
        let (start, end) = keys.range();
        assert_eq!(start, b"/tenant-a/registry/".to_vec());
        assert_eq!(end, b"/tenant-a/registry0".to_vec());
        assert_eq!(&keys.object_key(b"/tenant-a/registry/core/pods/ns/a").unwrap()[..], b"/registry/core/pods/ns/a");
        let plain = Keys { prefix: Vec::new(), layout: StorageLayout::Shardline };
        assert_eq!(plain.range().0, b"/registry/".to_vec());
        // kube-apiserver's layout, behind the same prefix; its bookkeeping keys are not ours.
        let kube = Keys { prefix: b"/tenant-a".to_vec(), layout: StorageLayout::Kubernetes };
        assert_eq!(kube.etcd_key(b"/registry/core/nodes//n1"), b"/tenant-a/registry/minions/n1".to_vec());
        assert_eq!(&kube.object_key(b"/tenant-a/registry/minions/n1").unwrap()[..], b"/registry/core/nodes//n1");
        assert_eq!(kube.object_key(b"/tenant-a/registry/ranges/serviceips"), None);
        assert_eq!(kube.etcd_key(super::FENCE_KEY), b"/tenant-a/registry/~fence".to_vec(), "the fence stays ours");
        assert!(kube.object_value(b"/k", b"not a kube value").is_err());
    }
}
