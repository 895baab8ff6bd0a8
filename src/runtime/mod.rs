//! The thread-per-core runtime: the only module that knows glommio.
//!
//! One executor per shard, pinned to a core, each with its own listener on
//! the same port (SO_REUSEPORT) serving the connections it accepts. Shards
//! talk only through bounded channels: `invoke` (run a closure on another
//! shard's store once it has applied a revision), `apply` (committed log
//! entries, in revision order, to every shard, or a reset to a re-listed
//! state), the log's request channel (appends go to the log, which lives on
//! shard 0) and the consistent-read channel (to the etcd log).
//!
//! Architecture invariants: no glommio type leaves this module; a full
//! channel makes its sender wait (backpressure), never grows; a write is
//! acknowledged only after the log made it durable; shutdown stops accepting,
//! drains connections, then closes (flushes) the log.

mod deadlines;
#[cfg(feature = "etcd")]
mod etcd_log;
pub mod hyper_glue;
pub mod limits;
pub mod log_dir;
pub mod probe;
pub mod process;
pub mod tls;
#[cfg(feature = "etcd")]
mod upstream;

use crate::api::{self, Backend, BackendError, HealthCheck};
use crate::config::Config;
use crate::log::embedded::{EmbeddedLog, LogOptions};
use crate::log::{AppendError, Entry, KeyValue, KnownValue, Operation, Precondition, Proposal, Revision};
use crate::store::{FieldIndex, ShardStore};
use crate::types::key::{ObjectKey, ShardId};
use crate::types::registry::Registry;
use bytes::Bytes;
use futures_channel::oneshot;
use glommio::net::TcpListener;
use glommio::{LocalExecutorBuilder, Placement};
use hyper_glue::{HyperIo, LocalExecutor, LocalTimer};
use limits::ProcessLimits;
use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("starting shard {shard}: {reason}")]
    Executor { shard: u16, reason: String },
    #[error("listening on {addr}: {reason}")]
    Listen { addr: String, reason: String },
    #[error("TLS: {0}")]
    Tls(#[from] tls::TlsError),
    #[error("the log: {0}")]
    Log(String),
    #[error("installing signal handlers: {0}")]
    Signals(std::io::Error),
    #[error("a shard stopped abnormally: {0}")]
    ShardFailed(String),
    #[error("start-up failed: {0}")]
    Startup(String),
}

/// Work for a shard's store, run once it has applied `min_revision`.
type Job = Box<dyn FnOnce(&ShardStore) + Send>;

enum ShardMessage {
    Invoke {
        min_revision: Revision,
        job: Job,
    },
    /// Count one more open watch of `user` if they hold fewer than `limit`
    /// (sent to the shard owning the user's count, `user_watch_owner`).
    OpenUserWatch {
        user: String,
        limit: usize,
        reply: oneshot::Sender<bool>,
    },
    /// One of `user`'s counted watches ended.
    CloseUserWatch {
        user: String,
    },
    /// This shard's metrics, for a scrape on another shard.
    Metrics {
        reply: oneshot::Sender<crate::metrics::ShardSnapshot>,
    },
    Shutdown,
}

/// The shard keeping `user`'s count of open watches: every shard asks it, so
/// `--watches-per-user-max` holds across the server, not per core.
fn user_watch_owner(user: &str, shards: usize) -> ShardId {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same owner on every core.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    user.hash(&mut h);
    ShardId((h.finish() % shards.max(1) as u64) as u16)
}

struct LogRequest {
    proposal: Proposal,
    /// The key's value at its mod revision, read from its owner (the embedded
    /// log keeps no values; the etcd log ignores it: etcd returns `prev_kv`).
    known: Option<KnownValue>,
    reply: oneshot::Sender<Result<Entry, AppendError>>,
}

/// A consistent read asking the log for a revision that includes every write
/// committed before the request, by any writer (answered by the etcd log;
/// the embedded log's commit point already is one).
#[cfg_attr(not(feature = "etcd"), allow(dead_code))]
struct FreshRequest {
    reply: oneshot::Sender<Result<Revision, BackendError>>,
}

/// A request for the upstream kube-apiserver (`--upstream`), to the
/// upstream client's thread (`upstream.rs`), and where its answer goes.
#[cfg_attr(not(feature = "etcd"), allow(dead_code))]
struct ForwardJob {
    request: api::forward::ForwardRequest,
    reply: oneshot::Sender<Result<api::forward::ForwardResponse, api::forward::ForwardError>>,
}

/// Tries of an append without precondition that keeps losing races to other
/// writes of its key (each try pins the state it read as its precondition).
const APPEND_UNCONDITIONAL_ATTEMPTS_MAX: usize = 64;

/// What the log hands every shard after start-up, in order.
enum Applied {
    /// Committed entries, in revision order, and when the log committed
    /// them (watch events are timed from it).
    Entries(Arc<Vec<Entry>>, Instant),
    /// The log lost the history between this shard's state and its present
    /// (etcd compacted it while this instance was behind): replace the state
    /// with this one and end every watch, whose clients then re-list.
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    Reset(Arc<InitialState>),
}

/// The consistent state every shard loads before serving.
struct InitialState {
    revision: Revision,
    live: Vec<KeyValue>,
}

/// State shared by every core; only atomics and channel senders.
struct Shared {
    config: Config,
    registry: Registry,
    limits: ProcessLimits,
    /// The log's commit point: the highest revision acknowledged durable.
    committed: AtomicU64,
    invoke_tx: Vec<flume::Sender<ShardMessage>>,
    apply_tx: Vec<flume::Sender<Applied>>,
    init_tx: Vec<flume::Sender<Arc<InitialState>>>,
    log_tx: flume::Sender<LogRequest>,
    /// Consistent reads' revision requests, to the etcd log (batched there).
    fresh_tx: flume::Sender<FreshRequest>,
    /// Requests, batches and fences of those (for /metrics).
    consistent_reads: [AtomicU64; 3],
    /// Forwarded requests, to the upstream client's thread (`--upstream`).
    upstream_tx: Option<flume::Sender<ForwardJob>>,
    bootstrapped: AtomicBool,
    /// Each shard has loaded the log's state (at start-up, or again after
    /// the log reset it): objects, custom resources' registry, RBAC index,
    /// Node graph, garbage-collector graph. kube's `informer-sync`.
    shards_loaded: Vec<AtomicBool>,
    log_healthy: AtomicBool,
    shutting_down: AtomicBool,
    drained_shards: AtomicUsize,
    log_closed: AtomicBool,
    /// Each shard's watch counters, published after every change to its hub
    /// so any shard can serve /metrics.
    watch_stats: Vec<WatchCounters>,
    /// Requests in flight across every shard (overload protection).
    in_flight: Arc<api::pipeline::InFlight>,
    /// The log's commit latency and group-commit size (for /metrics).
    log_metrics: crate::metrics::LogMetrics,
}

/// A shard's [`crate::watch::HubStats`] as atomics.
#[derive(Default)]
struct WatchCounters {
    watchers: AtomicU64,
    closed_slow: AtomicU64,
    events_dispatched: AtomicU64,
    initial_events_sent: AtomicU64,
    history_bytes: AtomicU64,
}

impl Shared {
    fn publish_watch_stats(&self, shard: ShardId, hub: &crate::watch::WatchHub) {
        let Some(counters) = self.watch_stats.get(shard.0 as usize) else { return };
        let stats = hub.stats();
        counters.watchers.store(stats.watchers as u64, Ordering::Relaxed);
        counters.closed_slow.store(stats.closed_slow, Ordering::Relaxed);
        counters.events_dispatched.store(stats.events_dispatched, Ordering::Relaxed);
        counters.initial_events_sent.store(stats.initial_events_sent, Ordering::Relaxed);
        counters.history_bytes.store(stats.history_bytes as u64, Ordering::Relaxed);
    }
}

/// The receiving ends a shard owns.
struct ShardInbox {
    invoke_rx: flume::Receiver<ShardMessage>,
    apply_rx: flume::Receiver<Applied>,
    init_rx: flume::Receiver<Arc<InitialState>>,
    /// Only shard 0 hosts the log.
    log_rx: Option<flume::Receiver<LogRequest>>,
    fresh_rx: Option<flume::Receiver<FreshRequest>>,
}

impl FieldIndex for Registry {
    fn selectable_fields(&self, group: &str, resource: &str) -> &[String] {
        self.iter()
            .find(|r| r.group == group && r.resource == resource)
            .map(|r| r.selectable_fields.as_slice())
            .unwrap_or(&[])
    }
}

/// A one-shot event on one executor (shutdown). Every waiting future holds
/// one registration, replaced on each poll, so a connection polled for
/// hours still holds one waker (glommio counts waker clones per task in an
/// `i16`: a clone per poll overflowed it after ~32k requests).
#[derive(Default)]
struct LocalSignal {
    fired: Cell<bool>,
    waiters: crate::log::embedded::notify::Notify,
}

impl LocalSignal {
    fn fire(&self) {
        self.fired.set(true);
        self.waiters.notify_all();
    }

    async fn wait(&self) {
        self.waiters.wait_until(|| self.fired.get()).await
    }
}

/// One shard's executor-local state.
struct Local {
    id: ShardId,
    /// This shard's caches of the upstream's TokenReview and
    /// SubjectAccessReview answers (`--upstream` only).
    delegation: Option<RefCell<crate::auth::delegation::Caches>>,
    store: RefCell<ShardStore>,
    /// This shard's copy of the registry: the built-in table plus the custom
    /// resources of the CustomResourceDefinitions it has applied (replaced,
    /// never mutated in place, so handlers keep a consistent snapshot).
    registry: RefCell<Rc<Registry>>,
    /// This shard's watchers and the history they resume from.
    hub: RefCell<crate::watch::WatchHub>,
    /// Raised each time the log resets the state and `hub` is replaced.
    hub_epoch: Cell<u64>,
    /// Jobs waiting for the store to reach a revision.
    deferred: RefCell<Vec<(Revision, Job)>>,
    shutdown: LocalSignal,
    connections: Cell<usize>,
    started: Instant,
    /// This shard's RBAC index, maintained from the entries it applies;
    /// replaced copy-on-write so a check holds a consistent one.
    rbac: RefCell<Rc<crate::auth::rbac::RbacIndex>>,
    /// This shard's Node authorizer graph (only with `Node,RBAC`), kept
    /// like `rbac`.
    node_graph: RefCell<Rc<crate::auth::node::NodeGraph>>,
    /// Open watches (on any shard) of the users this shard keeps the count
    /// of (`user_watch_owner`).
    user_watches: RefCell<std::collections::HashMap<String, usize>>,
    /// Watchers with events waiting, woken in bounded rounds by
    /// `delivery_loop` so requests run between rounds.
    delivery: Rc<RefCell<crate::watch::queue::DeliveryRounds>>,
    /// This shard's request, list and watch-delivery metrics.
    metrics: Rc<crate::metrics::ShardMetrics>,
    /// The garbage collector's owner index (`garbage.rs`), kept on the log's
    /// shard when `--controllers` runs the garbage-collector-controller.
    garbage: Option<api::handlers::garbage::SharedGraph>,
    /// Wakes kube-apiserver's own controllers of its bootstrap objects
    /// (`apiserver_controllers.rs`) when a FlowSchema, PriorityLevelConfiguration
    /// or ServiceCIDR is committed; on the log's shard, unless `--upstream`.
    apiserver_trigger: Option<Rc<api::handlers::apiserver_controllers::Trigger>>,
    /// The deadlines of `Backend::sleep` (watch timeouts), woken by one timer task.
    deadlines: Rc<deadlines::Deadlines>,
}

impl Local {
    fn run_or_defer(&self, min_revision: Revision, job: Job) {
        let applied = self.store.borrow().applied();
        if applied >= min_revision {
            job(&self.store.borrow());
        } else {
            self.deferred.borrow_mut().push((min_revision, job));
        }
    }

    fn run_ready_jobs(&self) {
        let applied = self.store.borrow().applied();
        let ready: Vec<Job> = {
            let mut deferred = self.deferred.borrow_mut();
            let (ready, waiting): (Vec<_>, Vec<_>) = deferred.drain(..).partition(|(r, _)| *r <= applied);
            *deferred = waiting;
            ready.into_iter().map(|(_, job)| job).collect()
        };
        let store = self.store.borrow();
        for job in ready {
            job(&store);
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Counts one more watch of `user` (whose count this shard keeps) unless
    /// they hold `limit` already.
    fn try_open_user_watch(&self, user: &str, limit: usize) -> bool {
        let Ok(mut watches) = self.user_watches.try_borrow_mut() else { return false };
        let open = watches.entry(user.to_string()).or_insert(0);
        if *open >= limit {
            return false;
        }
        *open += 1;
        true
    }

    fn close_user_watch(&self, user: &str) {
        if let Ok(mut watches) = self.user_watches.try_borrow_mut() {
            if let Some(open) = watches.get_mut(user) {
                *open = open.saturating_sub(1);
                if *open == 0 {
                    watches.remove(user);
                }
            }
        }
    }
}

/// One open watch of a user, counted on its owner shard until dropped.
struct UserWatchGuard {
    local: Rc<Local>,
    shared: Arc<Shared>,
    owner: ShardId,
    user: String,
}

impl Drop for UserWatchGuard {
    fn drop(&mut self) {
        let user = std::mem::take(&mut self.user);
        if self.owner == self.local.id {
            self.local.close_user_watch(&user);
            return;
        }
        let Some(tx) = self.shared.invoke_tx.get(self.owner.0 as usize) else { return };
        match tx.try_send(ShardMessage::CloseUserWatch { user }) {
            Ok(()) | Err(flume::TrySendError::Disconnected(_)) => {}
            // A full channel makes its sender wait: in a task of its own,
            // since a drop cannot wait.
            Err(flume::TrySendError::Full(message)) => {
                let tx = tx.clone();
                glommio::spawn_local(async move {
                    let _ = tx.send_async(message).await;
                })
                .detach();
            }
        }
    }
}

/// The [`Backend`] the API layer uses on one shard.
pub struct ShardBackend {
    shared: Arc<Shared>,
    local: Rc<Local>,
}

impl ShardBackend {
    async fn send_append(&self, proposal: Proposal, known: Option<KnownValue>) -> Result<Entry, AppendError> {
        let (reply, result) = oneshot::channel();
        self.shared
            .log_tx
            .send_async(LogRequest { proposal, known, reply })
            .await
            .map_err(|_| AppendError::Unavailable("the log is closed".into()))?;
        result.await.map_err(|_| AppendError::Unavailable("the log dropped the request".into()))?
    }

    /// The key's value at mod revision `revision`, from its owner once it has
    /// applied that revision (None if the owner has another version, or
    /// none: the key changed since, or its value did not decode).
    async fn read_known(&self, key: &Bytes, revision: Revision) -> Option<KnownValue> {
        let owner = crate::types::key::shard_for_key(key, self.shared.config.shards);
        let key = key.clone();
        self.on_shard(owner, revision, move |store| {
            store
                .get(&key)
                .filter(|object| object.mod_revision == revision)
                .map(|object| KnownValue { mod_revision: revision, value: object.json.clone() })
        })
        .await
        .ok()
        .flatten()
    }

    /// The key's newest value on its owner once it has applied `revision`.
    async fn read_latest(&self, key: &Bytes, revision: Revision) -> Option<KnownValue> {
        let owner = crate::types::key::shard_for_key(key, self.shared.config.shards);
        let key = key.clone();
        self.on_shard(owner, revision, move |store| {
            store.get(&key).map(|object| KnownValue { mod_revision: object.mod_revision, value: object.json.clone() })
        })
        .await
        .ok()
        .flatten()
    }
}

impl Backend for ShardBackend {
    fn config(&self) -> &Config {
        &self.shared.config
    }

    fn registry(&self) -> Rc<Registry> {
        self.local.registry.borrow().clone()
    }

    async fn await_applied(&self, revision: Revision) {
        let _ = self.on_shard(self.local.id, revision, |_| ()).await;
    }

    fn shard_count(&self) -> u16 {
        self.shared.config.shards
    }

    fn committed_revision(&self) -> Revision {
        Revision(self.shared.committed.load(Ordering::Acquire))
    }

    fn delegation_caches(&self) -> Option<&RefCell<crate::auth::delegation::Caches>> {
        self.local.delegation.as_ref()
    }

    async fn forward(
        &self,
        request: api::forward::ForwardRequest,
    ) -> Result<api::forward::ForwardResponse, api::forward::ForwardError> {
        use api::forward::ForwardError;
        let Some(tx) = &self.shared.upstream_tx else { return Err(ForwardError::NoUpstream) };
        let (reply, answer) = oneshot::channel();
        let stopped = || ForwardError::Unreachable("the upstream client stopped".into());
        tx.send_async(ForwardJob { request, reply }).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    async fn consistent_revision(&self) -> Result<Revision, BackendError> {
        if matches!(self.shared.config.log, crate::config::LogKind::Embedded) {
            return Ok(self.committed_revision());
        }
        let unavailable = || BackendError::ConsistentReadUnavailable("the log is closed".into());
        let (reply, revision) = oneshot::channel();
        self.shared.fresh_tx.send_async(FreshRequest { reply }).await.map_err(|_| unavailable())?;
        revision.await.map_err(|_| unavailable())?
    }

    fn consistent_read_stats(&self) -> Option<api::backend::ConsistentReadStats> {
        if matches!(self.shared.config.log, crate::config::LogKind::Embedded) {
            return None;
        }
        let [requests, batches, fences] = &self.shared.consistent_reads;
        Some(api::backend::ConsistentReadStats {
            requests: requests.load(Ordering::Relaxed),
            batches: batches.load(Ordering::Relaxed),
            fences: fences.load(Ordering::Relaxed),
        })
    }

    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    async fn on_shard<R, F>(&self, shard: ShardId, min_revision: Revision, f: F) -> Result<R, BackendError>
    where
        F: FnOnce(&ShardStore) -> R + Send + 'static,
        R: Send + 'static,
    {
        let (reply, result) = oneshot::channel();
        let job: Job = Box::new(move |store| {
            let _ = reply.send(f(store));
        });
        if shard == self.local.id {
            self.local.run_or_defer(min_revision, job);
        } else {
            let inbox = self.shared.invoke_tx.get(shard.0 as usize).ok_or(BackendError::ShardUnavailable(shard))?;
            inbox
                .send_async(ShardMessage::Invoke { min_revision, job })
                .await
                .map_err(|_| BackendError::ShardUnavailable(shard))?;
        }
        result.await.map_err(|_| BackendError::ShardUnavailable(shard))
    }

    async fn wait_for_revision(&self, revision: Revision, timeout: Duration) -> Result<(), Revision> {
        let deadline = Instant::now() + timeout;
        loop {
            let committed = self.committed_revision();
            if committed >= revision {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(committed);
            }
            // Rare (a client ahead of this server): a short poll is enough.
            glommio::timer::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn start_watch(
        &self,
        filter: crate::watch::WatchFilter,
        after: Revision,
        closes_in: Duration,
    ) -> Result<api::backend::WatchStream, crate::watch::StartError> {
        let config = &self.shared.config;
        let (sender, receiver) = crate::watch::queue::watch_queue_in_rounds(
            crate::watch::queue::QueueBounds {
                events_max: config.watch_queue_events_max,
                bytes_max: config.watch_queue_bytes_max,
            },
            self.local.delivery.clone(),
        );
        let started = {
            let mut hub = self.local.hub.borrow_mut();
            let registry = self.local.registry.borrow().clone();
            let now_ms = self.local.now_ms();
            let started = hub.start(filter, Box::new(sender), after, now_ms, &*registry);
            // The timeout is the hub's (run by `bookmark_loop`), not a timer per watch.
            if let Ok(Some(id)) = &started {
                hub.close_at(*id, now_ms.saturating_add(closes_in.as_millis() as u64), now_ms);
            }
            self.shared.publish_watch_stats(self.local.id, &hub);
            started?
        };
        let guard = started.map(|id| WatchGuard {
            local: self.local.clone(),
            shared: self.shared.clone(),
            id,
            epoch: self.local.hub_epoch.get(),
        });
        // The guard rides in the events' box (one allocation per watch,
        // not two); the `guard` box holds nothing and allocates nothing.
        Ok(api::backend::WatchStream { events: Box::pin(LocalWatch { _guard: guard, receiver }), guard: Box::new(()) })
    }

    fn sleep(&self, duration: Duration) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
        Box::pin(self.local.deadlines.until(Instant::now() + duration))
    }

    fn watch_stats(&self) -> Vec<crate::watch::HubStats> {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        self.shared
            .watch_stats
            .iter()
            .map(|c| crate::watch::HubStats {
                watchers: load(&c.watchers) as usize,
                closed_slow: load(&c.closed_slow),
                history_entries: 0,
                history_bytes: load(&c.history_bytes) as usize,
                events_dispatched: load(&c.events_dispatched),
                initial_events_sent: load(&c.initial_events_sent),
            })
            .collect()
    }

    fn count_initial_events(&self, count: u64) {
        let mut hub = self.local.hub.borrow_mut();
        hub.count_initial_events(count);
        self.shared.publish_watch_stats(self.local.id, &hub);
    }

    async fn append(&self, proposal: Proposal) -> Result<Entry, AppendError> {
        if self.shared.config.upstream.is_some() {
            // Its writes go to the upstream (`api::forward`); nothing of its
            // own reaches the cluster's etcd.
            return Err(AppendError::Unavailable(
                "this instance forwards writes to --upstream and writes nothing itself".into(),
            ));
        }
        if !matches!(self.shared.config.log, crate::config::LogKind::Embedded) {
            return self.send_append(proposal, None).await;
        }
        match proposal.precondition {
            Precondition::Absent => self.send_append(proposal, None).await,
            Precondition::ModRevision(revision) => {
                let known = self.read_known(&proposal.key, revision).await;
                self.send_append(proposal, known).await
            }
            // The entry's previous value must be the one it replaces: pin the
            // state read from the owner as the precondition, and try again
            // from the log's state when another write came first (the caller
            // asked for no condition).
            Precondition::None => {
                // None: not known yet; Some(state): the log's state as the
                // last conflict reported it.
                let mut pin: Option<Option<Revision>> = None;
                let mut attempts = 0;
                loop {
                    let (precondition, known) = match pin {
                        None => {
                            let committed = Revision(self.shared.committed.load(Ordering::Acquire));
                            let known = self.read_latest(&proposal.key, committed).await;
                            let precondition = known
                                .as_ref()
                                .map_or(Precondition::Absent, |k| Precondition::ModRevision(k.mod_revision));
                            (precondition, known)
                        }
                        Some(Some(revision)) => {
                            (Precondition::ModRevision(revision), self.read_known(&proposal.key, revision).await)
                        }
                        Some(None) => (Precondition::Absent, None),
                    };
                    let pinned = Proposal { precondition, ..proposal.clone() };
                    attempts += 1;
                    match self.send_append(pinned, known).await {
                        Err(AppendError::Conflict { current }) if attempts < APPEND_UNCONDITIONAL_ATTEMPTS_MAX => {
                            // Deleting an absent key stays a conflict.
                            if current.is_none() && matches!(proposal.operation, Operation::Delete) {
                                return Err(AppendError::Conflict { current });
                            }
                            pin = Some(current);
                        }
                        other => return other,
                    }
                }
            }
        }
    }

    fn spawn(&self, task: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) {
        glommio::spawn_local(task).detach();
    }

    async fn rbac_index(&self) -> Rc<crate::auth::rbac::RbacIndex> {
        // Read-your-writes for permissions: wait (on this core only) until
        // this shard has applied everything acknowledged so far.
        let committed = self.committed_revision();
        if self.local.store.borrow().applied() < committed {
            let (reply, applied) = oneshot::channel::<()>();
            self.local.run_or_defer(
                committed,
                Box::new(move |_| {
                    let _ = reply.send(());
                }),
            );
            let _ = applied.await;
        }
        self.local.rbac.borrow().clone()
    }

    async fn node_graph(&self) -> Rc<crate::auth::node::NodeGraph> {
        // The same commit-point wait as rbac_index (both are read together;
        // the second call finds the shard caught up).
        let _ = self.rbac_index().await;
        self.local.node_graph.borrow().clone()
    }

    fn in_flight(&self) -> Option<&Arc<api::pipeline::InFlight>> {
        Some(&self.shared.in_flight)
    }

    fn metrics(&self) -> Option<&Rc<crate::metrics::ShardMetrics>> {
        Some(&self.local.metrics)
    }

    async fn gather_metrics(&self) -> crate::metrics::Gathered {
        let mut shards = Vec::with_capacity(self.shared.invoke_tx.len());
        for (index, inbox) in self.shared.invoke_tx.iter().enumerate() {
            if index == self.local.id.0 as usize {
                shards.push(self.local.metrics.snapshot());
                continue;
            }
            let (reply, snapshot) = oneshot::channel();
            // A shard that stopped (shutdown) is left out of the scrape.
            if inbox.send_async(ShardMessage::Metrics { reply }).await.is_ok() {
                if let Ok(snapshot) = snapshot.await {
                    shards.push(snapshot);
                }
            }
        }
        crate::metrics::Gathered { shards, log: Some(self.shared.log_metrics.snapshot()) }
    }

    fn process_stats(&self) -> Option<crate::metrics::process::ProcessStats> {
        process::read()
    }

    async fn open_user_watch(&self, user: &str, limit: usize) -> Option<Box<dyn std::any::Any>> {
        let owner = user_watch_owner(user, self.shared.invoke_tx.len());
        let admitted = if owner == self.local.id {
            self.local.try_open_user_watch(user, limit)
        } else {
            let inbox = self.shared.invoke_tx.get(owner.0 as usize)?;
            let (reply, answer) = oneshot::channel();
            let message = ShardMessage::OpenUserWatch { user: user.to_string(), limit, reply };
            inbox.send_async(message).await.ok()?;
            answer.await.unwrap_or(false)
        };
        admitted.then(|| {
            Box::new(UserWatchGuard {
                local: self.local.clone(),
                shared: self.shared.clone(),
                owner,
                user: user.to_string(),
            }) as Box<dyn std::any::Any>
        })
    }

    fn process_limits(&self) -> api::backend::ProcessLimits {
        let l = self.shared.limits;
        api::backend::ProcessLimits {
            memlock_bytes_soft: l.memlock_bytes.soft,
            memlock_bytes_hard: l.memlock_bytes.hard,
            open_files_soft: l.open_files.soft,
            open_files_hard: l.open_files.hard,
        }
    }

    /// kube-apiserver's components: kube-scheduler and kube-controller-manager
    /// probed at their /healthz (`probe.rs`, both at once), and `etcd-0`, the
    /// log this server stores in (kube names its storage backends `etcd-N`):
    /// healthy with kube's message "ok" while the log accepts writes (the
    /// `etcd` health check's state, for the embedded log and `--log etcd`
    /// alike), else unhealthy with the reason as its error.
    async fn component_statuses(&self) -> Vec<crate::api::backend::ComponentStatus> {
        use crate::api::backend::ComponentStatus;
        let config = &self.shared.config;
        let timeout = config.componentstatus_probe_timeout;
        let (scheduler, controller_manager) = futures_lite::future::zip(
            probe::healthz(config.componentstatus_scheduler_address, timeout),
            probe::healthz(config.componentstatus_controller_manager_address, timeout),
        )
        .await;
        let log_ok = self.shared.log_healthy.load(Ordering::Acquire);
        let from_probe = |name, outcome: probe::Outcome| ComponentStatus {
            name,
            status: outcome.status,
            message: outcome.message,
            error: String::new(),
        };
        vec![
            from_probe("scheduler", scheduler),
            from_probe("controller-manager", controller_manager),
            ComponentStatus {
                name: "etcd-0",
                status: if log_ok { "True" } else { "False" },
                message: if log_ok { "ok".into() } else { String::new() },
                error: if log_ok { String::new() } else { "the log is not accepting writes".into() },
            },
        ]
    }

    fn health_checks(&self) -> Vec<HealthCheck> {
        let unloaded = self.shared.shards_loaded.iter().position(|loaded| !loaded.load(Ordering::Acquire));
        let mut checks = vec![
            HealthCheck {
                name: "log",
                ok: self.shared.log_healthy.load(Ordering::Acquire),
                detail: "the log is not accepting writes".into(),
            },
            HealthCheck {
                name: "bootstrap-namespaces",
                ok: self.shared.bootstrapped.load(Ordering::Acquire),
                detail: "the default namespaces are not created yet".into(),
            },
            HealthCheck {
                name: "informer-sync",
                ok: unloaded.is_none(),
                detail: unloaded
                    .map(|shard| format!("shard {shard} has not loaded the log's state yet"))
                    .unwrap_or_default(),
            },
            HealthCheck {
                name: "shutdown",
                ok: !self.shared.shutting_down.load(Ordering::Acquire),
                detail: "the server is shutting down".into(),
            },
        ];
        if !matches!(self.shared.config.log, crate::config::LogKind::Embedded) {
            let behind_ms = self.shared.log_metrics.behind_ms.load(Ordering::Relaxed);
            let max = self.shared.config.etcd_behind_ready_max;
            checks.push(HealthCheck {
                name: "etcd-lag",
                ok: u128::from(behind_ms) <= max.as_millis(),
                detail: format!(
                    "{} revisions behind etcd for {} ms (more than --etcd-behind-ready-max {} ms)",
                    self.shared.log_metrics.behind_revisions.load(Ordering::Relaxed),
                    behind_ms,
                    max.as_millis()
                ),
            });
        }
        checks
    }
}

/// A watcher's queue with its guard: the body's stream of events, which
/// unregisters the watcher when dropped.
struct LocalWatch {
    _guard: Option<WatchGuard>,
    receiver: crate::watch::queue::QueueReceiver,
}

impl futures_util::Stream for LocalWatch {
    type Item = crate::watch::WatchEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<crate::watch::WatchEvent>> {
        std::pin::Pin::new(&mut self.receiver).poll_next(cx)
    }
}

/// Unregisters a watcher when its response body goes away.
struct WatchGuard {
    local: Rc<Local>,
    shared: Arc<Shared>,
    id: crate::watch::WatchId,
    /// The hub the watcher was registered in (`Local::hub_epoch`).
    epoch: u64,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        if self.local.hub_epoch.get() != self.epoch {
            return;
        }
        if let Ok(mut hub) = self.local.hub.try_borrow_mut() {
            hub.stop(self.id);
            self.shared.publish_watch_stats(self.local.id, &hub);
        }
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    match glommio::CpuSet::online() {
        Ok(set) => {
            let mut cpus: Vec<usize> = set.into_iter().map(|l| l.cpu).collect();
            cpus.sort_unstable();
            cpus.dedup();
            if cpus.is_empty() {
                vec![0]
            } else {
                cpus
            }
        }
        Err(_) => vec![0],
    }
}

/// Number of shards to run when `--shards` is not given: one per usable core.
pub fn default_shard_count() -> u16 {
    std::thread::available_parallelism().map(|n| n.get().min(u16::MAX as usize) as u16).unwrap_or(1)
}

/// Runs the server until SIGTERM/SIGINT; returns after a clean shutdown.
pub fn serve(config: Config, registry: Registry) -> Result<(), RuntimeError> {
    let limits = limits::read_and_raise();
    eprintln!("shardline: process limits: {limits}");
    let tls = tls::server_config_with_client_ca(&config.tls, config.authentication.client_ca_file.as_deref())?;
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| RuntimeError::Log(format!("creating {}: {e}", config.data_dir.display())))?;
    // glommio opens directories by absolute path only.
    let mut config = config;
    config.data_dir = std::fs::canonicalize(&config.data_dir)
        .map_err(|e| RuntimeError::Log(format!("resolving {}: {e}", config.data_dir.display())))?;
    let running = config.controllers.running();
    eprintln!(
        "shardline: controllers: {} (--controllers)",
        if running.is_empty() { "none".to_string() } else { running.join(", ") }
    );
    eprintln!(
        "shardline: {} shards, io_uring registered memory {} bytes per shard, data dir {}",
        config.shards,
        config.io_memory_bytes,
        config.data_dir.display()
    );
    // The shards' listeners share the port with SO_REUSEPORT, which would
    // also let them join another process's listeners on it (same user): the
    // kernel would then split connections between two servers. Bind it once
    // without SO_REUSEPORT first, so a port in use is refused ("address
    // already in use", as kube-apiserver refuses it); with port 0 this also
    // picks the port every shard binds. The probe is released just before
    // the shards bind.
    let probe = std::net::TcpListener::bind(config.listen)
        .map_err(|e| RuntimeError::Listen { addr: config.listen.to_string(), reason: e.to_string() })?;
    let listen = probe
        .local_addr()
        .map_err(|e| RuntimeError::Listen { addr: config.listen.to_string(), reason: e.to_string() })?;
    let shard_count = config.shards.max(1);
    let mut invoke_tx = Vec::new();
    let mut apply_tx = Vec::new();
    let mut init_tx = Vec::new();
    let mut inboxes = Vec::new();
    let (log_tx, log_rx) = flume::bounded(config.mesh_channel_capacity);
    let (fresh_tx, fresh_rx) = flume::bounded(config.mesh_channel_capacity);
    for shard in 0..shard_count {
        let (itx, irx) = flume::bounded(config.mesh_channel_capacity);
        let (atx, arx) = flume::bounded(config.apply_queue_capacity);
        let (ntx, nrx) = flume::bounded(1);
        invoke_tx.push(itx);
        apply_tx.push(atx);
        init_tx.push(ntx);
        inboxes.push(ShardInbox {
            invoke_rx: irx,
            apply_rx: arx,
            init_rx: nrx,
            log_rx: if shard == 0 { Some(log_rx.clone()) } else { None },
            fresh_rx: if shard == 0 { Some(fresh_rx.clone()) } else { None },
        });
    }
    drop(log_rx);
    drop(fresh_rx);
    config.shards = shard_count;
    config.listen = listen;
    let config_log = config.log.clone();
    let upstream_tx = match &config.upstream {
        None => None,
        #[cfg(feature = "etcd")]
        Some(_) => Some(upstream::start(&config).map_err(RuntimeError::Startup)?),
        #[cfg(not(feature = "etcd"))]
        Some(_) => return Err(RuntimeError::Startup("--upstream needs a build with the `etcd` cargo feature".into())),
    };
    crate::cache::set_derived_bytes_max(config.derived_encodings_bytes_max as u64);
    let shared = Arc::new(Shared {
        config,
        registry,
        limits,
        committed: AtomicU64::new(0),
        invoke_tx,
        apply_tx,
        init_tx,
        log_tx,
        fresh_tx,
        consistent_reads: Default::default(),
        upstream_tx,
        bootstrapped: AtomicBool::new(false),
        shards_loaded: (0..shard_count).map(|_| AtomicBool::new(false)).collect(),
        log_healthy: AtomicBool::new(false),
        shutting_down: AtomicBool::new(false),
        drained_shards: AtomicUsize::new(0),
        log_closed: AtomicBool::new(false),
        watch_stats: (0..shard_count).map(|_| WatchCounters::default()).collect(),
        in_flight: Arc::default(),
        log_metrics: match &config_log {
            crate::config::LogKind::Embedded => crate::metrics::LogMetrics::new("embedded", true),
            crate::config::LogKind::Etcd { .. } => crate::metrics::LogMetrics::new("etcd", false),
        },
    });

    spawn_signal_thread(shared.clone())?;

    let cpus = allowed_cpus();
    drop(probe);
    let (bound_tx, bound_rx) = std::sync::mpsc::channel::<Result<ShardId, String>>();
    let mut handles = Vec::new();
    for (index, inbox) in inboxes.into_iter().enumerate() {
        let shard = ShardId(index as u16);
        let cpu = cpus[index % cpus.len()];
        let shared = shared.clone();
        let tls = tls.clone();
        let bound_tx = bound_tx.clone();
        let handle = LocalExecutorBuilder::new(Placement::Fixed(cpu))
            .name(&format!("shard-{index}"))
            .io_memory(shared.config.io_memory_bytes)
            .ring_depth(shared.config.ring_depth)
            .preempt_timer(shared.config.shard_io_poll_interval)
            .spawn(move || async move { shard_main(shard, shared, inbox, tls, bound_tx).await })
            .map_err(|e| RuntimeError::Executor { shard: index as u16, reason: e.to_string() })?;
        handles.push(handle);
    }
    drop(bound_tx);
    let mut bound = 0;
    while bound < shard_count {
        match bound_rx.recv() {
            Ok(Ok(_)) => bound += 1,
            Ok(Err(reason)) => {
                eprintln!("shardline: {reason}");
                shared.shutting_down.store(true, Ordering::Release);
                for tx in &shared.invoke_tx {
                    let _ = tx.send(ShardMessage::Shutdown);
                }
                return Err(RuntimeError::Startup(reason));
            }
            Err(_) => break,
        }
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!("shardline: listening on {scheme}://{listen} with {shard_count} shards");
    let mut failure = None;
    for (index, handle) in handles.into_iter().enumerate() {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(reason)) => failure = Some(format!("shard {index}: {reason}")),
            Err(e) => failure = Some(format!("shard {index}: {e}")),
        }
    }
    match failure {
        Some(reason) => Err(RuntimeError::ShardFailed(reason)),
        None => {
            eprintln!("shardline: shutdown complete");
            Ok(())
        }
    }
}

fn spawn_signal_thread(shared: Arc<Shared>) -> Result<(), RuntimeError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT]).map_err(RuntimeError::Signals)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut received = signals.forever();
            if let Some(signal) = received.next() {
                eprintln!("shardline: signal {signal}: stopping (draining connections, then flushing the log)");
                shared.shutting_down.store(true, Ordering::Release);
                for tx in &shared.invoke_tx {
                    let _ = tx.send(ShardMessage::Shutdown);
                }
            }
            // A second signal does not wait for the drain. Acknowledged writes
            // are durable already; only in-flight requests are cut.
            if let Some(signal) = received.next() {
                eprintln!("shardline: signal {signal} again: exiting now");
                std::process::exit(1);
            }
        })
        .map_err(RuntimeError::Signals)?;
    Ok(())
}

/// The namespaces a fresh server has.
const DEFAULT_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

async fn shard_main(
    shard: ShardId,
    shared: Arc<Shared>,
    inbox: ShardInbox,
    tls: Option<Arc<rustls::ServerConfig>>,
    bound_tx: std::sync::mpsc::Sender<Result<ShardId, String>>,
) -> Result<(), String> {
    let config = &shared.config;
    // glommio 0.9 can park its executor in io_uring_enter while a task queue
    // is still runnable, when the preempt timer fired before any task ran
    // (more likely with a short `shard_io_poll_interval` on a loaded
    // machine): with no I/O or timer due, it never wakes. A pending timer
    // bounds every park, so such a stall lasts at most this interval.
    let wakeup = config.shard_park_wakeup_interval;
    glommio::spawn_local(async move {
        loop {
            glommio::timer::sleep(wakeup).await;
        }
    })
    .detach();
    let local = Rc::new(Local {
        id: shard,
        delegation: config
            .upstream
            .is_some()
            .then(|| RefCell::new(crate::auth::delegation::Caches::new(config.upstream_cache_entries_max))),
        store: RefCell::new(
            ShardStore::new(shard, config.shards, config.history_window.as_millis() as u64)
                .with_history_bytes_max(config.history_bytes_max / usize::from(config.shards.max(1))),
        ),
        registry: RefCell::new(Rc::new(shared.registry.clone())),
        hub: RefCell::new(
            crate::watch::WatchHub::new(
                Revision::ZERO,
                config.history_window.as_millis() as u64,
                config.watch_history_entries_max,
            )
            .with_history_bytes_max(config.history_bytes_max)
            .with_bookmark_frequency_ms(config.watch_bookmark_interval.as_millis() as u64),
        ),
        hub_epoch: Cell::new(0),
        deferred: RefCell::new(Vec::new()),
        shutdown: LocalSignal::default(),
        connections: Cell::new(0),
        started: Instant::now(),
        rbac: RefCell::default(),
        node_graph: RefCell::default(),
        user_watches: RefCell::default(),
        delivery: Rc::default(),
        metrics: Rc::new(crate::metrics::ShardMetrics::new(config.metrics_commit_times_max)),
        garbage: (inbox.log_rx.is_some() && config.controllers.garbage_collector).then(Rc::default),
        apiserver_trigger: (inbox.log_rx.is_some() && config.upstream.is_none()).then(Rc::default),
        deadlines: Rc::default(),
    });

    let log = match inbox.log_rx {
        Some(log_rx) => match open_log(&shared, log_rx, inbox.fresh_rx).await {
            Ok(log) => Some(log),
            Err(reason) => {
                let _ = bound_tx.send(Err(reason.clone()));
                return Err(reason);
            }
        },
        None => None,
    };

    // Snapshots keep the cache's hints, made with this shard's registry (its
    // custom resources' selectable fields included), so a restart builds
    // objects without parsing them.
    if let Some(RunningLog::Embedded(log)) = &log {
        log.set_annotator(Rc::new(CacheHints { local: local.clone() }));
    }

    let Ok(initial) = inbox.init_rx.recv_async().await else {
        let reason = "the log did not deliver the initial state".to_string();
        let _ = bound_tx.send(Err(reason.clone()));
        return Err(reason);
    };
    let started = Instant::now();
    load_initial(&local, &shared, &initial);
    drop(initial);
    shared.shards_loaded[usize::from(shard.0)].store(true, Ordering::Release);
    // The recovered state's read buffers are freed once every shard has
    // loaded; give their pages back (glibc keeps freed memory between live
    // allocations resident otherwise: hundreds of MiB after a large restart).
    limits::release_free_memory();
    eprintln!(
        "shardline: shard {shard} loaded {} objects in {} ms",
        local.store.borrow().stats().live_objects,
        started.elapsed().as_millis()
    );

    glommio::spawn_local(apply_loop(local.clone(), shared.clone(), inbox.apply_rx)).detach();
    glommio::spawn_local(invoke_loop(local.clone(), inbox.invoke_rx)).detach();
    glommio::spawn_local(bookmark_loop(local.clone(), shared.clone(), config.watch_bookmark_check_interval)).detach();
    glommio::spawn_local(delivery_loop(local.delivery.clone(), config.watch_delivery_round_watchers)).detach();
    glommio::spawn_local(deadlines::run(local.deadlines.clone())).detach();

    let listener = match TcpListener::bind(config.listen) {
        Ok(l) => l,
        Err(e) => {
            let reason = format!("shard {shard} cannot listen on {}: {e}", config.listen);
            let _ = bound_tx.send(Err(reason.clone()));
            return Err(reason);
        }
    };
    let _ = bound_tx.send(Ok(shard));
    drop(bound_tx);

    if log.is_some() {
        let backend = ShardBackend { shared: shared.clone(), local: local.clone() };
        let namespace_controller = config.controllers.namespace;
        let trigger = local.apiserver_trigger.clone();
        glommio::spawn_local(async move {
            let controllers = bootstrap_namespaces(&backend).await;
            let shard_backend = Rc::new(ShardBackend { shared: backend.shared.clone(), local: backend.local.clone() });
            // Namespaces a restart left Terminating finish their cleanup.
            if namespace_controller {
                api::handlers::namespace::resume_terminating(Rc::new(backend)).await;
            }
            // kube-apiserver's own controllers keep its bootstrap objects
            // current from here on (not with --upstream: no trigger).
            if let (Some((facts, writes)), Some(trigger)) = (controllers, trigger) {
                api::handlers::apiserver_controllers::run(shard_backend, facts, trigger, writes).await;
            }
        })
        .detach();
        // Collections a restart interrupted, and dependents of absent owners.
        start_garbage_actions(&local, &shared);
    }

    accept_loop(&local, &shared, listener, tls).await;

    // Drain: connections were told to finish; wait for them, bounded.
    let deadline = Instant::now() + config.shutdown_grace;
    while local.connections.get() > 0 && Instant::now() < deadline {
        glommio::timer::sleep(Duration::from_millis(10)).await;
    }
    shared.drained_shards.fetch_add(1, Ordering::AcqRel);
    while shared.drained_shards.load(Ordering::Acquire) < config.shards as usize && Instant::now() < deadline {
        glommio::timer::sleep(Duration::from_millis(10)).await;
    }
    if let Some(log) = log {
        match log {
            RunningLog::Embedded(log) => {
                if let Err(e) = log.close().await {
                    eprintln!("shardline: closing the log: {e}");
                }
            }
            #[cfg(feature = "etcd")]
            RunningLog::Etcd(log) => log.close(config.shutdown_grace),
        }
        shared.log_healthy.store(false, Ordering::Release);
        shared.log_closed.store(true, Ordering::Release);
    } else {
        while !shared.log_closed.load(Ordering::Acquire) && Instant::now() < deadline + config.shutdown_grace {
            glommio::timer::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(())
}

type Log = EmbeddedLog<log_dir::GlommioLogDirectory>;

/// The embedded log's snapshot annotator: each record's `cache::snapshot_hint`
/// for the selectable fields the log's shard gives its resource; a record whose
/// hint is current keeps it.
struct CacheHints {
    local: Rc<Local>,
}

impl crate::log::SnapshotAnnotator for CacheHints {
    fn annotate(&self, key: &[u8], value: &[u8], cached: &[u8]) -> Option<Vec<u8>> {
        let registry = self.local.registry.borrow().clone();
        let fields = match crate::types::key::group_resource(key) {
            Some((group, resource)) => registry.selectable_fields(group, resource),
            None => &[],
        };
        if crate::cache::hint_is_current(cached, fields) {
            return None;
        }
        Some(crate::cache::snapshot_hint(value, fields))
    }
}

/// The log shard 0 hosts: the embedded WAL, or the bridge to etcd.
enum RunningLog {
    Embedded(Rc<Log>),
    #[cfg(feature = "etcd")]
    Etcd(etcd_log::EtcdLog),
}

/// Starts the log `--log` names.
async fn open_log(
    shared: &Arc<Shared>,
    log_rx: flume::Receiver<LogRequest>,
    fresh_rx: Option<flume::Receiver<FreshRequest>>,
) -> Result<RunningLog, String> {
    let fresh_rx = fresh_rx.ok_or("the log's shard has no consistent-read channel")?;
    match &shared.config.log {
        crate::config::LogKind::Embedded => start_log(shared, log_rx).await.map(RunningLog::Embedded),
        #[cfg(feature = "etcd")]
        crate::config::LogKind::Etcd { .. } => {
            etcd_log::start(shared.clone(), log_rx, fresh_rx).await.map(RunningLog::Etcd)
        }
        #[cfg(not(feature = "etcd"))]
        crate::config::LogKind::Etcd { .. } => {
            drop(log_rx);
            drop(fresh_rx);
            Err("--log etcd needs a build with the `etcd` cargo feature".into())
        }
    }
}

/// Opens the log on this shard, hands every shard the recovered state, and
/// starts the append, broadcast and snapshot tasks.
async fn start_log(shared: &Arc<Shared>, log_rx: flume::Receiver<LogRequest>) -> Result<Rc<Log>, String> {
    let config = &shared.config;
    let directory = log_dir::GlommioLogDirectory::new(config.data_dir.join("log"))
        .await
        .map_err(|e| format!("opening the log directory: {e}"))?;
    let started = Instant::now();
    let (log, recovered) = EmbeddedLog::open(directory, LogOptions::from_config(config))
        .await
        .map_err(|e| format!("opening the log in {}: {e}", config.data_dir.display()))?;
    let log = Rc::new(log);
    eprintln!(
        "shardline: log recovered at revision {} with {} objects in {} ms",
        recovered.revision,
        recovered.live.len(),
        started.elapsed().as_millis()
    );
    shared.committed.store(recovered.revision.0, Ordering::Release);
    let initial = Arc::new(InitialState { revision: recovered.revision, live: recovered.live });
    for tx in &shared.init_tx {
        tx.send_async(initial.clone()).await.map_err(|_| "a shard stopped before start-up".to_string())?;
    }
    shared.log_healthy.store(true, Ordering::Release);

    // Appends: one local task each, so concurrent appends share a group commit.
    let in_flight = Rc::new(glommio::sync::Semaphore::new(config.log_appends_in_flight_max as u64));
    let append_log = log.clone();
    let append_shared = shared.clone();
    // The last revision of the newest group commit acknowledged so far.
    let batch_end = Rc::new(Cell::new(recovered.revision));
    glommio::spawn_local(async move {
        while let Ok(request) = log_rx.recv_async().await {
            let taken = Instant::now();
            let Ok(permit) = in_flight.clone().acquire_static_permit(1).await else { break };
            let log = append_log.clone();
            let shared = append_shared.clone();
            let batch_end = batch_end.clone();
            glommio::spawn_local(async move {
                let result = log.append_known(request.proposal, request.known).await;
                match &result {
                    Ok(entry) => {
                        shared.committed.fetch_max(entry.revision.0, Ordering::AcqRel);
                        observe_commit(&shared.log_metrics, &log, &batch_end, entry.revision, taken);
                    }
                    Err(AppendError::Unavailable(_)) => shared.log_healthy.store(false, Ordering::Release),
                    Err(_) => {}
                }
                let _ = request.reply.send(result);
                drop(permit);
            })
            .detach();
        }
    })
    .detach();

    // Broadcast: every committed entry to every shard, in revision order.
    let broadcast_log = log.clone();
    let broadcast_shared = shared.clone();
    let mut last = recovered.revision;
    glommio::spawn_local(async move {
        loop {
            if broadcast_log.wait_committed(last).await.is_err() {
                break;
            }
            let entries = match broadcast_log.read_committed(last, 1024) {
                Ok(entries) if entries.is_empty() => continue,
                Ok(entries) => entries,
                Err(e) => {
                    eprintln!("shardline: the log tail lost entries after {last}: {e}");
                    broadcast_shared.log_healthy.store(false, Ordering::Release);
                    break;
                }
            };
            let batch_last = entries[entries.len() - 1].revision;
            let batch = Arc::new(entries);
            let committed_at = Instant::now();
            for tx in &broadcast_shared.apply_tx {
                // A shard that has stopped (shutdown) no longer needs entries.
                let _ = tx.send_async(Applied::Entries(batch.clone(), committed_at)).await;
            }
            broadcast_log.release(batch_last);
            last = batch_last;
        }
    })
    .detach();

    // Snapshots: checked periodically; the log decides when one is due.
    let snapshot_log = log.clone();
    let interval = config.log_snapshot_check_interval;
    let snapshot_shared = shared.clone();
    glommio::spawn_local(async move {
        while !snapshot_shared.log_closed.load(Ordering::Acquire) {
            glommio::timer::sleep(interval).await;
            if let Err(e) = snapshot_log.snapshot_if_due().await {
                eprintln!("shardline: snapshot failed: {e}");
            }
        }
    })
    .detach();
    Ok(log)
}

/// Times an acknowledged append from when the log took it, and counts the
/// entries of each group commit once: the first acknowledgement past the
/// previous commit's end sees the log's new commit point, the end of the
/// batch just made durable (the embedded log's revisions have no gaps).
fn observe_commit(
    metrics: &crate::metrics::LogMetrics,
    log: &Log,
    batch_end: &Cell<Revision>,
    revision: Revision,
    taken: Instant,
) {
    metrics.commit.observe(taken.elapsed().as_nanos().min(u64::MAX as u128) as u64);
    if revision > batch_end.get() {
        let end = log.committed_revision().max(revision);
        if let Some(batch) = &metrics.batch {
            batch.observe(end.0 - batch_end.get().0);
        }
        batch_end.set(end);
    }
}

async fn bootstrap_namespaces(
    backend: &ShardBackend,
) -> Option<(api::system_objects::Facts, api::system_objects::StatusWrites)> {
    if backend.shared.config.upstream.is_some() {
        // The upstream kube-apiserver bootstraps the cluster it serves.
        backend.shared.bootstrapped.store(true, Ordering::Release);
        return None;
    }
    for name in DEFAULT_NAMESPACES {
        let key = ObjectKey::new("", "namespaces", "", name);
        let object = serde_json::json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "uid": api::object::new_uid(rand::random()),
                "creationTimestamp": api::object::timestamp(SystemTime::now()),
                "labels": {"kubernetes.io/metadata.name": name},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        let value = bytes::Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
        let proposal =
            Proposal { key: key.encode(), precondition: Precondition::Absent, operation: Operation::Put(value) };
        match backend.append(proposal).await {
            Ok(_) | Err(AppendError::Conflict { .. }) => {}
            Err(e) => {
                eprintln!("shardline: creating namespace {name}: {e}");
                return None;
            }
        }
    }
    if backend.shared.config.authorization_mode.has_rbac() && !bootstrap_rbac(backend).await {
        return None;
    }
    let config = &backend.shared.config;
    let range = &config.service_ranges.cluster_ip;
    let today = api::object::timestamp(SystemTime::now()).get(..10).unwrap_or("").to_string();
    let facts = api::system_objects::Facts {
        service_cidr: range.to_string(),
        service_ip: range.format_ip(range.kubernetes_service_ip()),
        port: config.listen.port(),
        today,
    };
    match api::system_objects::ensure(backend, &facts).await {
        Ok(ensured) => {
            for refused in ensured.refused {
                eprintln!("shardline: not creating kube-apiserver's object {refused}");
            }
        }
        Err(e) => {
            eprintln!("shardline: creating kube-apiserver's own objects: {e}");
            return None;
        }
    }
    // kube-apiserver's own controllers' first pass (the statuses they give
    // these objects) before the server reports ready, so a client's first
    // read sees them; `apiserver_controllers::run` keeps them current after.
    let mut writes = api::system_objects::StatusWrites::default();
    let outcome = api::handlers::apiserver_controllers::pass(backend, &facts, &mut writes).await;
    for failed in outcome.failed {
        eprintln!("shardline: kube-apiserver's controllers: {failed}");
    }
    backend.shared.bootstrapped.store(true, Ordering::Release);
    Some((facts, writes))
}

/// Writes kube-apiserver's bootstrap RBAC policy where absent (RBAC mode);
/// false when the log refused a write. The appends are made at once (the
/// log commits them in a few batches, not one fsync each): the policy is
/// some 135 objects, written or found present at every start.
async fn bootstrap_rbac(backend: &ShardBackend) -> bool {
    let appends = crate::auth::bootstrap::policy().into_iter().map(|(key, mut object)| async move {
        if let Some(metadata) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            metadata.insert("uid".into(), serde_json::json!(api::object::new_uid(rand::random())));
            metadata.insert("creationTimestamp".into(), serde_json::json!(api::object::timestamp(SystemTime::now())));
        }
        let value = bytes::Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
        let proposal =
            Proposal { key: key.encode(), precondition: Precondition::Absent, operation: Operation::Put(value) };
        match backend.append(proposal).await {
            Ok(_) | Err(AppendError::Conflict { .. }) => true,
            Err(e) => {
                eprintln!("shardline: creating the bootstrap RBAC policy ({}): {e}", key.name);
                false
            }
        }
    });
    futures_util::future::join_all(appends).await.into_iter().all(|written| written)
}

/// Loads a consistent state into this shard's (empty) store, and rebuilds
/// what derives from it: the registry's custom resources, the RBAC index, and
/// a watch hub that starts at its revision.
fn load_initial(local: &Local, shared: &Shared, initial: &InitialState) {
    let config = &shared.config;
    let started = Instant::now();
    {
        let mut registry = shared.registry.clone();
        for kv in initial.live.iter().filter(|kv| crate::types::crd::is_definition_key(&kv.key)) {
            crate::types::crd::apply_to_registry(&mut registry, &kv.key, Some(&kv.value));
        }
        *local.registry.borrow_mut() = Rc::new(registry);
    }
    let registry = local.registry.borrow().clone();
    let registry_done = started.elapsed();
    // The store keeps only this shard's keys, each its own copy (never a
    // slice of the log's read buffers, which must not stay alive for them).
    local.store.borrow_mut().load(initial.revision, &initial.live, &*registry);
    let store_done = started.elapsed();
    {
        let mut index = crate::auth::rbac::RbacIndex::default();
        for kv in initial.live.iter().filter(|kv| crate::auth::rbac::is_rbac_key(&kv.key)) {
            index.apply(&kv.key, Some(&kv.value));
        }
        *local.rbac.borrow_mut() = Rc::new(index);
    }
    if config.authorization_mode.has_node() {
        let mut graph = crate::auth::node::NodeGraph::default();
        for kv in initial.live.iter().filter(|kv| crate::auth::node::is_node_graph_key(&kv.key)) {
            graph.apply(&kv.key, Some(&kv.value));
        }
        *local.node_graph.borrow_mut() = Rc::new(graph);
    }
    let rbac_done = started.elapsed();
    if let Some(graph) = &local.garbage {
        graph.borrow_mut().load(&initial.live, &registry);
    }
    eprintln!(
        "shardline: shard {} load phases: registry {} ms, objects {} ms, rbac {} ms, garbage graph {} ms",
        local.id,
        registry_done.as_millis(),
        (store_done - registry_done).as_millis(),
        (rbac_done - store_done).as_millis(),
        (started.elapsed() - rbac_done).as_millis()
    );
    // Watches start at or after the loaded state: history before it is unknown.
    *local.hub.borrow_mut() = crate::watch::WatchHub::new(
        initial.revision,
        config.history_window.as_millis() as u64,
        config.watch_history_entries_max,
    )
    .with_history_bytes_max(config.history_bytes_max)
    .with_bookmark_frequency_ms(config.watch_bookmark_interval.as_millis() as u64);
}

async fn apply_loop(local: Rc<Local>, shared: Arc<Shared>, apply_rx: flume::Receiver<Applied>) {
    while let Ok(applied) = apply_rx.recv_async().await {
        let batch = match applied {
            Applied::Entries(batch, committed_at) => {
                if let Some(last) = batch.last() {
                    local.metrics.committed(last.revision, committed_at);
                }
                batch
            }
            Applied::Reset(initial) => {
                // A new hub drops every watcher (their streams end); guards of
                // the old hub's watchers no longer touch the new one.
                local.hub_epoch.set(local.hub_epoch.get() + 1);
                let loaded = &shared.shards_loaded[usize::from(local.id.0)];
                loaded.store(false, Ordering::Release);
                *local.store.borrow_mut() =
                    ShardStore::new(local.id, shared.config.shards, shared.config.history_window.as_millis() as u64)
                        .with_history_bytes_max(
                            shared.config.history_bytes_max / usize::from(shared.config.shards.max(1)),
                        );
                load_initial(&local, &shared, &initial);
                loaded.store(true, Ordering::Release);
                shared.publish_watch_stats(local.id, &local.hub.borrow());
                local.run_ready_jobs();
                start_garbage_actions(&local, &shared);
                if let Some(trigger) = &local.apiserver_trigger {
                    trigger.fire();
                }
                continue;
            }
        };
        let now_ms = local.now_ms();
        if batch.iter().any(|e| crate::types::crd::is_definition_key(&e.key)) {
            let mut registry = Registry::clone(&local.registry.borrow());
            for entry in batch.iter() {
                let value = match &entry.operation {
                    Operation::Put(value) => Some(value.as_ref()),
                    Operation::Delete => None,
                };
                crate::types::crd::apply_to_registry(&mut registry, &entry.key, value);
            }
            *local.registry.borrow_mut() = Rc::new(registry);
        }
        let registry = local.registry.borrow().clone();
        local.store.borrow_mut().apply(&batch, now_ms, &*registry);
        apply_rbac(&local, &batch);
        if shared.config.authorization_mode.has_node() {
            apply_node_graph(&local, &batch);
        }
        if let Some(graph) = &local.garbage {
            let mut graph = graph.borrow_mut();
            for entry in batch.iter() {
                let value = match &entry.operation {
                    Operation::Put(value) => Some(value.as_ref()),
                    Operation::Delete => None,
                };
                graph.apply(&entry.key, value, &registry);
            }
        }
        start_garbage_actions(&local, &shared);
        if let Some(trigger) = &local.apiserver_trigger {
            if batch.iter().any(|e| api::handlers::apiserver_controllers::is_watched_key(&e.key)) {
                trigger.fire();
            }
        }
        {
            let mut hub = local.hub.borrow_mut();
            hub.dispatch(&batch, now_ms, &*registry);
            shared.publish_watch_stats(local.id, &hub);
        }
        local.run_ready_jobs();
    }
}

/// Starts the garbage collector's queued actions (on this shard).
fn start_garbage_actions(local: &Rc<Local>, shared: &Arc<Shared>) {
    let Some(graph) = &local.garbage else { return };
    let actions = graph.borrow_mut().take_pending();
    if actions.is_empty() {
        return;
    }
    let backend = Rc::new(ShardBackend { shared: shared.clone(), local: local.clone() });
    glommio::spawn_local(api::handlers::garbage::run(backend, graph.clone(), actions)).detach();
}

/// Applies a batch's RBAC changes to this shard's index (copy-on-write:
/// checks in progress keep the index they read).
fn apply_rbac(local: &Local, batch: &[Entry]) {
    let mut changes = batch.iter().filter(|e| crate::auth::rbac::is_rbac_key(&e.key)).peekable();
    if changes.peek().is_none() {
        return;
    }
    let mut rbac = local.rbac.borrow_mut();
    let index = Rc::make_mut(&mut rbac);
    for entry in changes {
        match &entry.operation {
            Operation::Put(value) => index.apply(&entry.key, Some(value)),
            Operation::Delete => index.apply(&entry.key, None),
        }
    }
}

/// Applies a batch's pod and volume attachment changes to this shard's
/// Node authorizer graph (copy-on-write, as `apply_rbac`).
fn apply_node_graph(local: &Local, batch: &[Entry]) {
    let mut changes = batch.iter().filter(|e| crate::auth::node::is_node_graph_key(&e.key)).peekable();
    if changes.peek().is_none() {
        return;
    }
    let mut graph = local.node_graph.borrow_mut();
    let graph = Rc::make_mut(&mut graph);
    for entry in changes {
        match &entry.operation {
            Operation::Put(value) => graph.apply(&entry.key, Some(value)),
            Operation::Delete => graph.apply(&entry.key, None),
        }
    }
}

/// Runs this shard's watch wake-ups (`WatchHub::tick`): bookmarks due and
/// watches whose time is up. Sleeps until the hub's next wake-up, but never
/// longer than `interval`, so a watcher registered meanwhile with an earlier
/// one (a deadline less than `interval` away) waits at most that.
async fn bookmark_loop(local: Rc<Local>, shared: Arc<Shared>, interval: Duration) {
    loop {
        let now_ms = local.now_ms();
        let next = {
            let mut hub = local.hub.borrow_mut();
            let tick = hub.tick(now_ms);
            if tick.closed > 0 {
                shared.publish_watch_stats(local.id, &hub);
            }
            hub.next_wake_ms()
        };
        let until_next = next.map_or(interval, |at| Duration::from_millis(at.saturating_sub(now_ms)));
        glommio::timer::sleep(until_next.min(interval).max(Duration::from_millis(1))).await;
    }
}

/// Wakes the watchers that have events waiting, `round_watchers` at a time.
/// After each round this task goes to the back of the run queue, so every
/// task that became ready meanwhile (a request, the log, an apply) runs
/// before the next round: a large fan-out cannot hold a request up for more
/// than about one round's delivery.
async fn delivery_loop(rounds: Rc<RefCell<crate::watch::queue::DeliveryRounds>>, round_watchers: usize) {
    loop {
        std::future::poll_fn(|cx| rounds.borrow_mut().poll_ready(cx)).await;
        let round = rounds.borrow_mut().take_round(round_watchers);
        for waker in round {
            waker.wake();
        }
        futures_lite::future::yield_now().await;
    }
}

async fn invoke_loop(local: Rc<Local>, invoke_rx: flume::Receiver<ShardMessage>) {
    while let Ok(message) = invoke_rx.recv_async().await {
        match message {
            ShardMessage::Invoke { min_revision, job } => local.run_or_defer(min_revision, job),
            ShardMessage::OpenUserWatch { user, limit, reply } => {
                let _ = reply.send(local.try_open_user_watch(&user, limit));
            }
            ShardMessage::CloseUserWatch { user } => local.close_user_watch(&user),
            ShardMessage::Metrics { reply } => {
                let _ = reply.send(local.metrics.snapshot());
            }
            ShardMessage::Shutdown => local.shutdown.fire(),
        }
    }
}

async fn accept_loop(
    local: &Rc<Local>,
    shared: &Arc<Shared>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let acceptor = tls.map(futures_rustls::TlsAcceptor::from);
    let slots = Rc::new(glommio::sync::Semaphore::new(shared.config.connections_per_shard_max as u64));
    loop {
        let Ok(permit) = slots.clone().acquire_static_permit(1).await else { return };
        let accepted = futures_lite::future::or(async { Some(listener.accept().await) }, async {
            local.shutdown.wait().await;
            None
        })
        .await;
        let stream = match accepted {
            None => return,
            Some(Ok(stream)) => stream,
            Some(Err(e)) => {
                eprintln!("shardline: accept failed: {e}");
                glommio::timer::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let backend = Rc::new(ShardBackend { shared: shared.clone(), local: local.clone() });
        let acceptor = acceptor.clone();
        let local = local.clone();
        local.connections.set(local.connections.get() + 1);
        glommio::spawn_local(async move {
            match acceptor {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        // A verified client certificate names the connection's user.
                        let certificate = stream
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|chain| chain.first())
                            .and_then(|leaf| crate::auth::authn::certificate_user(leaf).ok())
                            .map(api::pipeline::ClientCertificateUser);
                        serve_connection(HyperIo::new(stream), backend, &local, certificate).await;
                    }
                }
                None => {
                    let io = hyper_glue::TcpIo::new(stream, backend.shared.config.connection_outbox_bytes_max);
                    serve_connection(io, backend, &local, None).await
                }
            }
            local.connections.set(local.connections.get() - 1);
            drop(permit);
        })
        .detach();
    }
}

async fn serve_connection<T>(
    io: T,
    backend: Rc<ShardBackend>,
    local: &Rc<Local>,
    certificate: Option<api::pipeline::ClientCertificateUser>,
) where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
{
    let config = &backend.shared.config;
    let mut builder = hyper_util::server::conn::auto::Builder::new(LocalExecutor);
    builder.http1().timer(LocalTimer).header_read_timeout(config.header_read_timeout).keep_alive(true);
    builder.http2().timer(LocalTimer).max_concurrent_streams(config.http2_max_concurrent_streams);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        let backend = backend.clone();
        if let Some(certificate) = &certificate {
            request.extensions_mut().insert(certificate.clone());
        }
        // Boxed: hyper keeps an HTTP/2 stream's service future inside the
        // stream's task (an enum beside the response body), so an unboxed
        // future's size would stay allocated for as long as a watch streams.
        // The box is freed once the response head is out.
        let future: std::pin::Pin<Box<dyn std::future::Future<Output = _>>> =
            Box::pin(async move { Ok::<_, Infallible>(api::handle(&backend, request).await) });
        future
    });
    let connection = builder.serve_connection(io, service);
    futures_util::pin_mut!(connection);
    let finished = futures_lite::future::or(async { Some(connection.as_mut().await) }, async {
        local.shutdown.wait().await;
        None
    })
    .await;
    if finished.is_none() {
        connection.as_mut().graceful_shutdown();
        let _ = connection.await;
    }
}

#[cfg(test)]
mod tests {
    use super::LocalSignal;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct CountingWaker;
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {}
    }

    /// A future polled many times while it waits keeps one waker, not one per
    /// poll (glommio's per-task waker count is an i16; a connection serving
    /// 40k requests used to overflow it and abort the shard).
    #[test]
    fn waiting_on_a_signal_holds_one_waker_however_often_polled() {
        let signal = LocalSignal::default();
        let counter = Arc::new(CountingWaker);
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut wait = pin!(signal.wait());
        for _ in 0..100_000 {
            assert!(wait.as_mut().poll(&mut cx).is_pending());
        }
        // The test's own handle, `waker`, and the one registration.
        assert_eq!(Arc::strong_count(&counter), 3);
        signal.fire();
        assert_eq!(wait.as_mut().poll(&mut cx), Poll::Ready(()));
        assert_eq!(Arc::strong_count(&counter), 2);
    }
}
