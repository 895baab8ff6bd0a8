//! What the API layer needs from the rest of the server: shards to read from,
//! the log to append to, the clock, and the registry.
//!
//! `runtime/` implements it with executors and cross-core messages; tests can
//! implement it with one in-process shard. Futures are not `Send`: a request
//! is served on the core that accepted its connection.

use crate::config::Config;
use crate::log::{AppendError, Entry, Proposal, Revision};
use crate::store::ShardStore;
use crate::types::key::ShardId;
use crate::types::registry::Registry;
use std::time::SystemTime;

/// Why a cross-shard call did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("shard {0} is unavailable (shutting down)")]
    ShardUnavailable(ShardId),
    #[error("shard {shard} had not reached revision {wanted} in time (it is at {current})")]
    RevisionTimeout { shard: ShardId, wanted: Revision, current: Revision },
    /// A consistent read could not learn the log's current revision (etcd
    /// did not answer in time).
    #[error("{0}")]
    ConsistentReadUnavailable(String),
    /// The log's current revision is ahead of what this server has applied,
    /// and it did not catch up within the wait.
    #[error("too large resource version {wanted}, current {current}")]
    ConsistentReadTimeout { wanted: Revision, current: Revision },
}

/// One of kube-apiserver's component statuses: a component it probes and
/// what the probe found (the ComponentStatus's one `Healthy` condition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentStatus {
    pub name: &'static str,
    /// "True", "False" or "Unknown" (kube's `ToConditionStatus` of the probe's result).
    pub status: &'static str,
    pub message: String,
    pub error: String,
}

/// The result of a named health check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// A started watch: its events, and a guard that unregisters the watcher
/// when dropped (the client went away, or the watch timed out).
pub struct WatchStream {
    pub events: std::pin::Pin<Box<dyn futures_util::Stream<Item = crate::watch::WatchEvent>>>,
    pub guard: Box<dyn std::any::Any>,
}

/// Process limits the server runs under, as reported by /metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessLimits {
    pub memlock_bytes_soft: u64,
    pub memlock_bytes_hard: u64,
    pub open_files_soft: u64,
    pub open_files_hard: u64,
}

/// How consistent reads asked the log (`--log etcd`), as /metrics reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsistentReadStats {
    /// Consistent reads that asked etcd for its current revision.
    pub requests: u64,
    /// etcd reads of the current revision (one per batch of requests).
    pub batches: u64,
    /// Fence writes (batches behind etcd after `etcd_fence_after`).
    pub fences: u64,
}

/// One call of an admission webhook (`Backend::call_webhook`): an HTTPS
/// POST of `body` (an `AdmissionReview`), the server verified with
/// `ca_bundle`.
#[derive(Clone, Debug)]
pub struct WebhookCall {
    /// The URL as kube words it in errors (`https://HOST:PORT/PATH?timeout=10s`).
    pub url: String,
    /// The URL's host (a name or an IP literal) and port.
    pub host: String,
    pub port: u16,
    /// Connect here instead of resolving `host` (a Service's endpoint).
    pub address: Option<std::net::IpAddr>,
    /// The name the server's certificate must be valid for.
    pub server_name: String,
    pub path_and_query: String,
    pub body: Vec<u8>,
    /// PEM certificates that verify the server (`clientConfig.caBundle`).
    pub ca_bundle: Vec<u8>,
    pub timeout: std::time::Duration,
    pub response_bytes_max: usize,
}

/// A webhook's HTTP answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookAnswer {
    pub code: u16,
    pub body: Vec<u8>,
}

#[allow(async_fn_in_trait)]
pub trait Backend {
    fn config(&self) -> &Config;
    /// The resources this shard serves now: the built-in table plus the
    /// custom resources of the CustomResourceDefinitions it has applied. A
    /// handle, so it never holds a borrow across an await.
    fn registry(&self) -> std::rc::Rc<Registry>;
    /// Waits until this shard has applied `revision` (so its registry knows
    /// every CustomResourceDefinition committed by then). The default suits
    /// backends that apply every entry before an append returns.
    async fn await_applied(&self, revision: Revision) {
        let _ = revision;
    }
    fn shard_count(&self) -> u16;
    /// The log's commit point now: a read at this revision is a consistent
    /// ("most recent") read.
    fn committed_revision(&self) -> Revision;
    /// The revision a consistent ("most recent") read is served at: one that
    /// includes every write committed before the call, by this server or any
    /// other writing to the same log. The default (a log this process owns)
    /// is the commit point; an etcd-backed server asks etcd for its current
    /// revision and waits, bounded, until it has applied it.
    async fn consistent_revision(&self) -> Result<Revision, BackendError> {
        Ok(self.committed_revision())
    }
    /// Sends a request to the upstream kube-apiserver (`--upstream`) and
    /// returns its whole answer. The default (no upstream) refuses.
    async fn forward(
        &self,
        request: crate::api::forward::ForwardRequest,
    ) -> Result<crate::api::forward::ForwardResponse, crate::api::forward::ForwardError> {
        let _ = request;
        Err(crate::api::forward::ForwardError::NoUpstream)
    }
    /// This shard's caches of the upstream's TokenReview and
    /// SubjectAccessReview answers; `None` (the default) caches nothing.
    fn delegation_caches(&self) -> Option<&std::cell::RefCell<crate::auth::delegation::Caches>> {
        None
    }
    /// Counters of consistent reads asking the log; `None` (the default)
    /// when the log answers them without a round-trip.
    fn consistent_read_stats(&self) -> Option<ConsistentReadStats> {
        None
    }
    fn now(&self) -> SystemTime;
    /// Runs `f` on `shard`'s store once that shard has applied `min_revision`.
    async fn on_shard<R, F>(&self, shard: ShardId, min_revision: Revision, f: F) -> Result<R, BackendError>
    where
        F: FnOnce(&ShardStore) -> R + Send + 'static,
        R: Send + 'static;
    /// Waits until the log's commit point reaches `revision`, at most
    /// `timeout`; `Err` carries the commit point when time ran out.
    async fn wait_for_revision(&self, revision: Revision, timeout: std::time::Duration) -> Result<(), Revision>;
    /// Registers a watcher on this shard that has seen everything up to
    /// `after`; its events start with the history after it. The watcher is
    /// closed (its stream ends) once `closes_in` has passed.
    async fn start_watch(
        &self,
        filter: crate::watch::WatchFilter,
        after: Revision,
        closes_in: std::time::Duration,
    ) -> Result<WatchStream, crate::watch::StartError>;
    /// Each shard's watch counters (for /metrics), in shard order.
    fn watch_stats(&self) -> Vec<crate::watch::HubStats>;
    /// Counts events of a watch's initial state sent on this shard.
    fn count_initial_events(&self, count: u64);
    /// A timer (watch timeouts).
    fn sleep(&self, duration: std::time::Duration) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;
    /// Appends to the log; `Ok` once the entry is durable.
    async fn append(&self, proposal: Proposal) -> Result<Entry, AppendError>;
    /// Health checks for /livez, /readyz, /healthz.
    fn health_checks(&self) -> Vec<HealthCheck>;
    /// The components kube-apiserver reports in `componentstatuses`, probed
    /// now, in the order they are listed.
    async fn component_statuses(&self) -> Vec<ComponentStatus>;
    fn process_limits(&self) -> ProcessLimits;
    /// Runs `task` in the background on this shard; it may outlive the
    /// request that started it (a Terminating namespace's cleanup).
    fn spawn(&self, task: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>);
    /// This shard's RBAC index once this shard has applied the log's commit
    /// point (a role change acknowledged before the call is seen). Never
    /// asks another core. The default is an empty index (grants nothing).
    async fn rbac_index(&self) -> std::rc::Rc<crate::auth::rbac::RbacIndex> {
        std::rc::Rc::default()
    }
    /// This shard's admission webhook configurations, read like
    /// [`Backend::rbac_index`] (after this shard has applied the commit
    /// point). None by default.
    async fn admission_webhooks(&self) -> std::rc::Rc<crate::strategy::admission::webhook::WebhookIndex> {
        std::rc::Rc::default()
    }
    /// Calls an admission webhook; `Err` is Go's text for what failed
    /// (`Post "URL": dial tcp ...: connect: connection refused`). The
    /// default (no client) fails every call.
    async fn call_webhook(&self, call: WebhookCall) -> Result<WebhookAnswer, String> {
        Err(format!("Post {:?}: this server has no webhook client", call.url))
    }
    /// This shard's Node authorizer graph, read like [`Backend::rbac_index`]
    /// (after this shard has applied the commit point). Empty by default.
    async fn node_graph(&self) -> std::rc::Rc<crate::auth::node::NodeGraph> {
        std::rc::Rc::default()
    }
    /// The server's in-flight counters, shared by every shard; `None` (the
    /// default) applies no in-flight limits.
    fn in_flight(&self) -> Option<&std::sync::Arc<crate::api::pipeline::InFlight>> {
        None
    }
    /// Counts one more open watch of `user` across the server, released when
    /// the returned guard drops; `None` when the user already holds `limit`.
    async fn open_user_watch(&self, _user: &str, _limit: usize) -> Option<Box<dyn std::any::Any>> {
        Some(Box::new(()))
    }
    /// This shard's recorder of request, list and watch-delivery metrics;
    /// `None` (the default) records nothing.
    fn metrics(&self) -> Option<&std::rc::Rc<crate::metrics::ShardMetrics>> {
        None
    }
    /// Every shard's metrics and the log's, for /metrics. The default is
    /// this shard's alone.
    async fn gather_metrics(&self) -> crate::metrics::Gathered {
        crate::metrics::Gathered { shards: self.metrics().map(|m| m.snapshot()).into_iter().collect(), log: None }
    }
    /// The process's CPU time, memory and descriptors (`process_*`); `None`
    /// (the default) for a backend that is not a process of its own.
    fn process_stats(&self) -> Option<crate::metrics::process::ProcessStats> {
        None
    }
}
