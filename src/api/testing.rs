//! An in-process [`Backend`] for deterministic tests: shards are plain
//! `ShardStore`s, the log is a counter with an index, every append is applied
//! to every shard before it returns, and the clock is a number the test sets.
//! No threads, no I/O: a test drives `api::handle` with `block_on` and gets
//! the same handlers, list planning and encodings the server runs.

use super::backend::{BackendError, HealthCheck, ProcessLimits};
use super::Backend;
use crate::config::Config;
use crate::log::{AppendError, Entry, Operation, Precondition, PreviousValue, Proposal, Revision};
use crate::store::ShardStore;
use crate::types::key::ShardId;
use crate::types::registry::Registry;
use bytes::Bytes;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

struct Current {
    mod_revision: Revision,
    create_revision: Revision,
    value: Bytes,
}

pub struct MemoryBackend {
    config: Config,
    registry: RefCell<std::rc::Rc<Registry>>,
    shards: RefCell<Vec<ShardStore>>,
    index: RefCell<HashMap<Bytes, Current>>,
    revision: Cell<u64>,
    now_ms: Cell<u64>,
    hub: RefCell<crate::watch::WatchHub>,
    /// Background tasks (`Backend::spawn`), polled by [`MemoryBackend::poll_spawned`].
    spawned: RefCell<Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>>,
    /// Request, list and watch-delivery metrics (one set: one thread).
    metrics: std::rc::Rc<crate::metrics::ShardMetrics>,
    /// The admission webhook configurations appended so far.
    webhooks: RefCell<std::rc::Rc<crate::strategy::admission::webhook::WebhookIndex>>,
    /// What answers webhook calls (none: every call fails), set by
    /// [`MemoryBackend::serve_webhooks`].
    webhook_server: RefCell<Option<WebhookServer>>,
}

/// An in-process stand-in for webhook servers: the call in, the answer out.
pub type WebhookServer = Box<dyn Fn(&super::backend::WebhookCall) -> Result<super::backend::WebhookAnswer, String>>;

impl MemoryBackend {
    /// A backend with `shard_count` shards and the default namespace.
    pub fn new(mut config: Config, shard_count: u16) -> MemoryBackend {
        config.shards = shard_count;
        let window_ms = config.history_window.as_millis() as u64;
        let commit_times_max = config.metrics_commit_times_max;
        let hub_bytes_max = config.history_bytes_max;
        let share = hub_bytes_max / usize::from(shard_count.max(1));
        let shards = (0..shard_count)
            .map(|s| ShardStore::new(ShardId(s), shard_count, window_ms).with_history_bytes_max(share))
            .collect();
        let backend = MemoryBackend {
            config,
            registry: RefCell::new(std::rc::Rc::new(Registry::builtin())),
            shards: RefCell::new(shards),
            index: RefCell::new(HashMap::new()),
            revision: Cell::new(0),
            now_ms: Cell::new(0),
            hub: RefCell::new(
                crate::watch::WatchHub::new(Revision::ZERO, window_ms, 100_000).with_history_bytes_max(hub_bytes_max),
            ),
            spawned: RefCell::new(Vec::new()),
            metrics: std::rc::Rc::new(crate::metrics::ShardMetrics::new(commit_times_max)),
            webhooks: RefCell::default(),
            webhook_server: RefCell::new(None),
        };
        let namespace = br#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"default"}}"#;
        let key = crate::types::key::ObjectKey::new("", "namespaces", "", "default").encode();
        let proposal = Proposal {
            key,
            precondition: Precondition::Absent,
            operation: Operation::Put(Bytes::from_static(namespace)),
        };
        // Appending to an empty index with an Absent precondition cannot fail.
        let _ = backend.append_now(proposal);
        backend
    }

    /// Answers webhook calls with `server` from now on.
    pub fn serve_webhooks(&self, server: WebhookServer) {
        *self.webhook_server.borrow_mut() = Some(server);
    }

    /// Polls every background task once (their timers never fire here);
    /// finished tasks are dropped. Returns how many are still pending.
    pub fn poll_spawned(&self) -> usize {
        let tasks: Vec<_> = self.spawned.borrow_mut().drain(..).collect();
        let mut pending = Vec::new();
        for mut task in tasks {
            if futures_util::FutureExt::now_or_never(task.as_mut()).is_none() {
                pending.push(task);
            }
        }
        let mut spawned = self.spawned.borrow_mut();
        pending.extend(spawned.drain(..));
        *spawned = pending;
        spawned.len()
    }

    /// Moves the clock forward (history leaves the window as entries apply).
    pub fn advance_ms(&self, ms: u64) {
        self.now_ms.set(self.now_ms.get() + ms);
    }

    fn append_now(&self, proposal: Proposal) -> Result<Entry, AppendError> {
        let mut index = self.index.borrow_mut();
        let current = index.get(&proposal.key);
        match (proposal.precondition, current) {
            (Precondition::Absent, Some(c)) => return Err(AppendError::Conflict { current: Some(c.mod_revision) }),
            (Precondition::ModRevision(r), Some(c)) if c.mod_revision != r => {
                return Err(AppendError::Conflict { current: Some(c.mod_revision) })
            }
            (Precondition::ModRevision(_), None) => return Err(AppendError::Conflict { current: None }),
            (_, None) if proposal.operation == Operation::Delete => {
                return Err(AppendError::Conflict { current: None })
            }
            _ => {}
        }
        let revision = Revision(self.revision.get() + 1);
        self.revision.set(revision.0);
        let previous = current.map(|c| PreviousValue {
            mod_revision: c.mod_revision,
            create_revision: c.create_revision,
            value: c.value.clone(),
        });
        let create_revision = current.map(|c| c.create_revision).unwrap_or(revision);
        match &proposal.operation {
            Operation::Put(value) => {
                index.insert(
                    proposal.key.clone(),
                    Current { mod_revision: revision, create_revision, value: value.clone() },
                );
            }
            Operation::Delete => {
                index.remove(&proposal.key);
            }
        }
        let entry = Entry { revision, key: proposal.key, operation: proposal.operation, create_revision, previous };
        let value = match &entry.operation {
            Operation::Put(value) => Some(value.as_ref()),
            Operation::Delete => None,
        };
        if crate::types::crd::is_definition_key(&entry.key) {
            let mut next = Registry::clone(&self.registry.borrow());
            crate::types::crd::apply_to_registry(&mut next, &entry.key, value);
            *self.registry.borrow_mut() = std::rc::Rc::new(next);
        }
        if crate::strategy::admission::webhook::is_webhook_key(&entry.key) {
            std::rc::Rc::make_mut(&mut self.webhooks.borrow_mut()).apply(&entry.key, value);
        }
        let registry = self.registry.borrow().clone();
        for shard in self.shards.borrow_mut().iter_mut() {
            shard.apply(std::slice::from_ref(&entry), self.now_ms.get(), &*registry);
        }
        self.metrics.committed(entry.revision, std::time::Instant::now());
        self.hub.borrow_mut().dispatch(std::slice::from_ref(&entry), self.now_ms.get(), &*registry);
        Ok(entry)
    }
}

impl Backend for MemoryBackend {
    fn config(&self) -> &Config {
        &self.config
    }

    fn registry(&self) -> std::rc::Rc<Registry> {
        self.registry.borrow().clone()
    }

    fn shard_count(&self) -> u16 {
        self.config.shards
    }

    fn committed_revision(&self) -> Revision {
        Revision(self.revision.get())
    }

    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(self.now_ms.get())
    }

    async fn on_shard<R, F>(&self, shard: ShardId, _min_revision: Revision, f: F) -> Result<R, BackendError>
    where
        F: FnOnce(&ShardStore) -> R + Send + 'static,
        R: Send + 'static,
    {
        let shards = self.shards.borrow();
        let store = shards.get(shard.0 as usize).ok_or(BackendError::ShardUnavailable(shard))?;
        Ok(f(store))
    }

    async fn wait_for_revision(&self, revision: Revision, _timeout: Duration) -> Result<(), Revision> {
        // Nothing else can commit while a test waits: answer at once.
        if self.committed_revision() >= revision {
            Ok(())
        } else {
            Err(self.committed_revision())
        }
    }

    /// Tests end their watches by dropping them: `closes_in` never runs out here.
    async fn start_watch(
        &self,
        filter: crate::watch::WatchFilter,
        after: Revision,
        _closes_in: Duration,
    ) -> Result<super::backend::WatchStream, crate::watch::StartError> {
        let (sender, receiver) = crate::watch::queue::watch_queue(crate::watch::queue::QueueBounds {
            events_max: self.config.watch_queue_events_max,
            bytes_max: self.config.watch_queue_bytes_max,
        });
        let registry = self.registry.borrow().clone();
        self.hub.borrow_mut().start(filter, Box::new(sender), after, self.now_ms.get(), &*registry)?;
        Ok(super::backend::WatchStream { events: Box::pin(receiver), guard: Box::new(()) })
    }

    fn watch_stats(&self) -> Vec<crate::watch::HubStats> {
        vec![self.hub.borrow().stats()]
    }

    fn count_initial_events(&self, count: u64) {
        self.hub.borrow_mut().count_initial_events(count);
    }

    fn sleep(&self, _duration: Duration) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
        // Tests end their watches by dropping them; time never runs out here.
        Box::pin(std::future::pending())
    }

    async fn append(&self, proposal: Proposal) -> Result<Entry, AppendError> {
        self.append_now(proposal)
    }

    fn health_checks(&self) -> Vec<HealthCheck> {
        Vec::new()
    }

    /// The in-process log always accepts writes; no other component is
    /// reachable without I/O, so only the storage is listed.
    async fn component_statuses(&self) -> Vec<super::backend::ComponentStatus> {
        vec![super::backend::ComponentStatus {
            name: "etcd-0",
            status: "True",
            message: "ok".into(),
            error: String::new(),
        }]
    }

    fn process_limits(&self) -> ProcessLimits {
        ProcessLimits::default()
    }

    fn spawn(&self, task: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) {
        self.spawned.borrow_mut().push(task);
    }

    fn metrics(&self) -> Option<&std::rc::Rc<crate::metrics::ShardMetrics>> {
        Some(&self.metrics)
    }

    async fn admission_webhooks(&self) -> std::rc::Rc<crate::strategy::admission::webhook::WebhookIndex> {
        self.webhooks.borrow().clone()
    }

    async fn call_webhook(&self, call: super::backend::WebhookCall) -> Result<super::backend::WebhookAnswer, String> {
        match &*self.webhook_server.borrow() {
            Some(server) => server(&call),
            None => {
                Err(format!("Post {:?}: dial tcp {}:{}: connect: connection refused", call.url, call.host, call.port))
            }
        }
    }
}

/// What a JSON request through [`crate::api::handle`] answered: the status
/// code, the body as JSON (`Null` when it is not JSON) and the `Warning`
/// headers.
pub struct JsonAnswer {
    pub code: u16,
    pub body: serde_json::Value,
    pub warnings: Vec<String>,
}

/// Sends `method path` with `body` as `application/json` (a PATCH as
/// `application/merge-patch+json`) through the real handlers on `backend`
/// and waits for the whole answer.
pub fn send_json(
    backend: &std::rc::Rc<MemoryBackend>,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> JsonAnswer {
    use http_body_util::BodyExt;
    let bytes = body.and_then(|b| serde_json::to_vec(&b).ok()).map(Bytes::from).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", if method == "PATCH" { "application/merge-patch+json" } else { "application/json" })
        .body(http_body_util::Full::new(bytes))
        .expect("a request from a method, a path and a body");
    futures_lite::future::block_on(async {
        let response = crate::api::handle(backend, request).await;
        let code = response.status().as_u16();
        let warnings = response
            .headers()
            .get_all(http::header::WARNING)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let body = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        JsonAnswer { code, body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null), warnings }
    })
}
