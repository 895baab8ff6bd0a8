//! Runs one scenario against one target: preload, connect every watcher, then writers, list
//! clients and watchers together for `duration_s`, with a progress line on stderr every second.
//!
//! Invariant: nothing recorded before the measurement starts (preload, connecting) is in the
//! results: metrics are reset at the start, and watchers count latency only for objects stamped
//! after it. Every task stops when the run's cancellation token fires.
//!
//! Responses asking the client to wait (429, or 5xx with `Retry-After`) are handled by the
//! scenario's `[client]` policy (`retry.rs`): writers and listers wait and send the same request
//! again, up to `max_retries`; watchers wait and reconnect, without a bound. Client-visible
//! latency (`write`, `list_page`) runs from the first attempt and includes every wait; the
//! admitted attempt's own time is `write_service` / `list_page_service`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use http_body_util::BodyExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bottleneck::{self, CpuShare};
use crate::decode::Lines;
use crate::http::{read_body, Conn, Lease, WatchConns};
use crate::metrics::{CounterSnapshot, Kind, Latency, LatencySummary, Metrics, Sample};
use crate::rate::{timing_with_retries, Schedule};
use crate::retry::{asked_wait, Decision};
use crate::scenario::Scenario;
use crate::target::{node_name, parse_etcd_watch, parse_kube_event, unix_ns, Flavor, PodRef, Seen, Target, WriteOp};

/// How often tasks merge their local histograms into the run's.
const FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// How long the run waits for every watcher to connect, besides 1 s per 200 watchers.
const CONNECT_GRACE: Duration = Duration::from_secs(30);
/// How long tasks get to stop after the measurement ends.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// 429s one preload task accepts before it gives up (it waits as asked after each).
const PRELOAD_REFUSALS_MAX: u32 = 1000;

/// What one run measured (the JSON result file's per-target part).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub target: String,
    pub flavor: String,
    pub url: String,
    pub preload_pods: u64,
    pub preload_s: f64,
    pub watchers_requested: u64,
    pub watchers_connected: u64,
    pub watchers_closed_by_server: u64,
    pub connect_s: f64,
    pub measured_s: f64,
    /// The whole run: preload, connecting, measuring, stopping.
    pub whole_s: f64,
    pub totals: CounterSnapshot,
    pub watch_events_per_s: f64,
    pub watch_bytes_per_s: f64,
    pub writes_per_s: f64,
    pub list_pages_per_s: f64,
    pub lists_per_s: f64,
    pub latencies_ms: std::collections::BTreeMap<String, LatencySummary>,
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Connections opened for watches (reconnections included).
    pub watch_connections: u64,
    /// The server's HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` (the lowest seen), if it set one.
    pub server_max_concurrent_streams: Option<u64>,
    /// Watch streams per connection used: the scenario's, lowered to the server's limit.
    pub streams_per_connection: u64,
    /// Share of loadgen's CPUs' time it was busy while measuring (0..1).
    pub loadgen_cpu_busy: f64,
    /// Share of loadgen's CPUs' time its threads waited for a CPU while measuring.
    pub loadgen_cpu_waiting: f64,
    /// loadgen's CPU time while measuring, in user space and in the kernel (seconds).
    pub loadgen_cpu_user_s: f64,
    pub loadgen_cpu_system_s: f64,
    /// Watch events delivered per second of loadgen's CPU time while measuring: what one
    /// loadgen core receives and times when it is the bottleneck, whatever else ran on the
    /// machine (None without events or without CPU time).
    pub watch_events_per_loadgen_cpu_s: Option<f64>,
    /// Share of the server's CPUs' time it was busy while measuring (spawned servers only).
    pub server_cpu_busy: Option<f64>,
    /// Share of the server's CPUs' time its threads waited for a CPU while measuring.
    pub server_cpu_waiting: Option<f64>,
    /// Bytes waiting unread in loadgen's sockets: median and highest per-second sample.
    pub socket_backlog_median_bytes: Option<u64>,
    pub socket_backlog_max_bytes: Option<u64>,
    /// Why loadgen, not the server, limited this run (`bottleneck::loadgen_limited`), if it did.
    pub loadgen_limited: Option<String>,
    /// Which of the two other work on the machine starved of CPU (`bottleneck::starved`).
    pub starved: Option<String>,
    pub series: Vec<Sample>,
}

/// Where the run's processes are, to tell whether loadgen or the server was the bottleneck.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// CPUs loadgen's runtime runs on.
    pub loadgen_cpus: usize,
    /// PIDs of the server under test (a spawned one, with its backing etcd), none otherwise.
    pub server_pids: Vec<u32>,
    /// CPUs the server is pinned to.
    pub server_cpus: usize,
}

impl Placement {
    /// The server's CPU time and run-queue wait so far, in seconds.
    fn server_cpu_s(&self) -> Option<(f64, f64)> {
        if self.server_pids.is_empty() {
            return None;
        }
        Some((bottleneck::pids_cpu_s(&self.server_pids)?, bottleneck::pids_run_queue_wait_s(&self.server_pids)?))
    }
}

/// CPU time and run-queue wait of loadgen and of the server at one moment.
#[derive(Clone, Copy)]
struct CpuMark {
    at: Instant,
    loadgen_s: f64,
    loadgen_user_s: f64,
    loadgen_wait_s: f64,
    server_s: Option<(f64, f64)>,
}

impl CpuMark {
    fn now(p: &Placement) -> CpuMark {
        let (user, system) = bottleneck::process_cpu_user_system_s();
        CpuMark {
            at: Instant::now(),
            loadgen_s: user + system,
            loadgen_user_s: user,
            loadgen_wait_s: bottleneck::run_queue_wait_s("self").unwrap_or(0.0),
            server_s: p.server_cpu_s(),
        }
    }

    /// CPU shares (loadgen, server) between `self` and `later`.
    fn shares(&self, later: &CpuMark, p: &Placement) -> (CpuShare, Option<CpuShare>) {
        let wall = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let of = |cpus: usize| wall * cpus.max(1) as f64;
        let loadgen = CpuShare {
            busy: (later.loadgen_s - self.loadgen_s) / of(p.loadgen_cpus),
            waiting: (later.loadgen_wait_s - self.loadgen_wait_s) / of(p.loadgen_cpus),
        };
        let server = match (self.server_s, later.server_s) {
            (Some((a, aw)), Some((b, bw))) => {
                Some(CpuShare { busy: (b - a) / of(p.server_cpus), waiting: (bw - aw) / of(p.server_cpus) })
            }
            _ => None,
        };
        (loadgen, server)
    }
}

struct Shared {
    target: Target,
    scenario: Scenario,
    placement: Placement,
    watch_conns: WatchConns,
    metrics: Metrics,
    cancel: CancellationToken,
    /// Objects stamped before this (Unix ns) are not measured.
    measure_from_unix_ns: std::sync::atomic::AtomicU64,
}

pub async fn run(target: Target, scenario: &Scenario, placement: Placement) -> Result<RunResult> {
    let multiplex = target.flavor == Flavor::Kube && scenario.connection.http2;
    let shared = Arc::new(Shared {
        target: target.clone(),
        scenario: scenario.clone(),
        placement,
        watch_conns: WatchConns::new(
            target.endpoint.clone(),
            multiplex,
            scenario.connection.streams_per_connection as usize,
        ),
        metrics: Metrics::default(),
        cancel: CancellationToken::new(),
        measure_from_unix_ns: u64::MAX.into(),
    });
    let tag = format!("[{}]", target.name);
    let whole = Instant::now();
    let mut conn =
        target.endpoint.connect().await.with_context(|| format!("{tag} connecting to {}", target.endpoint.base))?;
    let t = Instant::now();
    let cleaned = target.clean_namespaces(&mut conn).await.with_context(|| format!("{tag} cleaning up"))?;
    if !cleaned.is_empty() {
        eprintln!(
            "{tag} deleted {} namespaces an earlier run left ({}) in {:.1} s",
            cleaned.len(),
            cleaned.join(", "),
            t.elapsed().as_secs_f64()
        );
    }
    target.ensure_namespaces(&mut conn, scenario.objects.namespaces).await?;

    let t = Instant::now();
    preload(&shared).await?;
    let preload_s = t.elapsed().as_secs_f64();
    if scenario.objects.pods > 0 {
        eprintln!("{tag} preloaded {} pods in {preload_s:.1} s", scenario.objects.pods);
    }
    let revision = target.revision(&mut conn).await?;

    // Watchers.
    let t = Instant::now();
    let mut tasks: Vec<JoinHandle<()>> = Vec::new();
    let mut specs: Vec<Option<String>> = Vec::new();
    if let Some(k) = &scenario.kubelets {
        specs.extend((0..k.watchers).map(|i| Some(node_name(i))));
    }
    if let Some(i) = &scenario.informers {
        specs.extend((0..i.watchers).map(|_| None));
    }
    for (i, node) in specs.iter().enumerate() {
        let lease = shared.watch_conns.lease().await.with_context(|| format!("{tag} connecting watch {i}"))?;
        tasks.push(tokio::spawn(watcher(shared.clone(), i as u64, Some(lease), node.clone(), revision)));
    }
    let want = specs.len() as u64;
    let deadline = Instant::now() + CONNECT_GRACE + Duration::from_secs(want / 200);
    let mut last_print = Instant::now();
    loop {
        let connected = shared.metrics.counters.watchers_connected.load(Ordering::Relaxed);
        if connected >= want {
            break;
        }
        if Instant::now() > deadline {
            eprintln!("{tag} only {connected} of {want} watchers connected; measuring anyway");
            break;
        }
        if last_print.elapsed() >= Duration::from_secs(1) {
            eprintln!("{tag} watchers connected: {connected}/{want}");
            last_print = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let connect_s = t.elapsed().as_secs_f64();
    if want > 0 {
        let w = &shared.watch_conns;
        let limit = match (multiplex, w.server_max_concurrent_streams()) {
            (false, _) => "HTTP/1.1: one watch per connection".to_string(),
            (true, None) => "the server set no limit".to_string(),
            (true, Some(m)) => format!("the server allows {m}"),
        };
        eprintln!(
            "{tag} {want} watchers connected in {connect_s:.1} s over {} connections ({} streams each at most; {limit})",
            w.opened(),
            w.streams_per_connection(),
        );
    }

    // Measurement.
    shared.metrics.reset();
    shared.measure_from_unix_ns.store(unix_ns(), Ordering::Relaxed);
    let t0 = Instant::now();
    let cpu_start = CpuMark::now(&shared.placement);
    let duration = Duration::from_secs_f64(scenario.duration_s);
    if let Some(w) = &scenario.writes {
        let schedule = Arc::new(Schedule::new(w.rate_per_s));
        for k in 0..w.concurrency {
            tasks.push(tokio::spawn(writer(shared.clone(), k, schedule.clone(), t0, t0 + duration)));
        }
    }
    if let Some(l) = &scenario.list {
        for k in 0..l.clients {
            tasks.push(tokio::spawn(lister(shared.clone(), k)));
        }
    }
    let series = Arc::new(Mutex::new(Vec::new()));
    let progress = tokio::spawn(progress(shared.clone(), series.clone(), tag.clone(), t0));
    tokio::time::sleep(duration).await;
    let measured_s = t0.elapsed().as_secs_f64();
    let cpu_end = CpuMark::now(&shared.placement);
    let (loadgen_cpu, server_cpu) = cpu_start.shares(&cpu_end, &shared.placement);
    let loadgen_cpu_user_s = cpu_end.loadgen_user_s - cpu_start.loadgen_user_s;
    let loadgen_cpu_system_s = (cpu_end.loadgen_s - cpu_start.loadgen_s) - loadgen_cpu_user_s;
    let watch_events_measured = shared.metrics.snapshot().watch_events;
    shared.cancel.cancel();
    let _ = progress.await;
    let stop_by = tokio::time::Instant::now() + STOP_GRACE;
    for task in tasks {
        let abort = task.abort_handle();
        if tokio::time::timeout_at(stop_by, task).await.is_err() {
            abort.abort();
        }
    }

    // After every task stopped: a write in flight at the end is counted with its latency.
    let totals = shared.metrics.snapshot();
    let series = std::mem::take(&mut *series.lock().unwrap());
    let m = &shared.metrics;
    let c = &m.counters;
    let per_s = |n: u64| n as f64 / measured_s;
    let backlog: Vec<u64> = series.iter().filter_map(|s| s.socket_backlog_bytes).collect();
    let socket_backlog_median_bytes = bottleneck::median(&backlog);
    let w = &shared.watch_conns;
    let loadgen_limited =
        (want > 0).then(|| bottleneck::loadgen_limited(loadgen_cpu, server_cpu, socket_backlog_median_bytes)).flatten();
    Ok(RunResult {
        target: target.name.clone(),
        flavor: target.flavor.name().into(),
        url: target.endpoint.base.clone(),
        preload_pods: scenario.objects.pods,
        preload_s,
        watchers_requested: want,
        watchers_connected: c.watchers_connected.load(Ordering::Relaxed),
        watchers_closed_by_server: c.watchers_closed_by_server.load(Ordering::Relaxed),
        connect_s,
        measured_s,
        whole_s: whole.elapsed().as_secs_f64(),
        totals,
        watch_events_per_s: per_s(totals.watch_events),
        watch_bytes_per_s: per_s(totals.watch_bytes),
        writes_per_s: per_s(totals.writes),
        list_pages_per_s: per_s(totals.list_pages),
        lists_per_s: per_s(totals.lists),
        latencies_ms: Kind::ALL
            .iter()
            .map(|&k| (k.name().to_string(), m.latency(k)))
            .filter(|(_, h)| !h.is_empty())
            .map(|(k, h)| (k, h.summary()))
            .collect(),
        errors: m.errors(),
        watch_connections: w.opened(),
        server_max_concurrent_streams: w.server_max_concurrent_streams(),
        streams_per_connection: w.streams_per_connection(),
        loadgen_cpu_busy: loadgen_cpu.busy,
        loadgen_cpu_waiting: loadgen_cpu.waiting,
        loadgen_cpu_user_s,
        loadgen_cpu_system_s,
        watch_events_per_loadgen_cpu_s: (watch_events_measured > 0 && loadgen_cpu_user_s + loadgen_cpu_system_s > 0.0)
            .then(|| watch_events_measured as f64 / (loadgen_cpu_user_s + loadgen_cpu_system_s)),
        server_cpu_busy: server_cpu.map(|s| s.busy),
        server_cpu_waiting: server_cpu.map(|s| s.waiting),
        starved: bottleneck::starved(loadgen_cpu, server_cpu),
        socket_backlog_median_bytes,
        socket_backlog_max_bytes: backlog.iter().copied().max(),
        loadgen_limited,
        series,
    })
}

/// Creates `objects.pods` pods, `preload_concurrency` at a time.
async fn preload(shared: &Arc<Shared>) -> Result<()> {
    let o = &shared.scenario.objects;
    let conc = o.preload_concurrency.min(o.pods.max(1));
    let mut tasks = Vec::new();
    for k in 0..conc {
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            let o = &shared.scenario.objects;
            let mut conn = shared.target.endpoint.connect().await?;
            let mut i = k;
            let mut refused = 0u32;
            while i < o.pods {
                let pod = PodRef::new(i, o.namespaces, o.nodes);
                match shared.target.write(&mut conn, WriteOp::Create, &pod, o.pod_bytes).await {
                    Ok(()) => {}
                    // An earlier run on the same server left the pod: fine.
                    Err(e) if e.what == "409" => {}
                    // A server protecting itself: preload is not measured, so always wait as
                    // asked (capped like any wait) and send the create again.
                    Err(e) if e.asked_wait_s.is_some() && refused < PRELOAD_REFUSALS_MAX => {
                        refused += 1;
                        let asked = e.asked_wait_s.unwrap_or(1);
                        tokio::time::sleep(shared.scenario.client.wait(asked)(0.0)).await;
                        continue;
                    }
                    Err(e) => bail!("preloading {}/{}: {}", pod.namespace, pod.name, e.what),
                }
                i += conc;
            }
            Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// Waits `d` before a retry, counted in `retries` and `backoff_us`; false when the run was
/// cancelled meanwhile.
async fn back_off(shared: &Shared, d: Duration) -> bool {
    let c = &shared.metrics.counters;
    c.retries.fetch_add(1, Ordering::Relaxed);
    let t = Instant::now();
    let finished = tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = shared.cancel.cancelled() => false,
    };
    c.backoff_us.fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
    finished
}

/// Counts a response asking to wait, answered `took` after its send.
fn throttled(m: &Metrics, took: Duration) {
    m.counters.throttled.fetch_add(1, Ordering::Relaxed);
    m.record(Kind::Throttled, took);
}

/// A task's random source for jitter, derived from the scenario's seed.
fn task_rng(seed: u64, role: u64, k: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ role.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

async fn connect_retrying(shared: &Shared) -> Option<Conn> {
    loop {
        match shared.target.endpoint.connect().await {
            Ok(c) => return Some(c),
            Err(_) => {
                shared.metrics.error("connect");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shared.cancel.cancelled() => return None,
                }
            }
        }
    }
}

/// A lease on a watch connection, retried every second until it works or the run ends.
async fn lease_retrying(shared: &Shared) -> Option<Lease> {
    loop {
        match shared.watch_conns.lease().await {
            Ok(l) => return Some(l),
            Err(_) => {
                shared.metrics.error("connect");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shared.cancel.cancelled() => return None,
                }
            }
        }
    }
}

/// One watcher's view of its stream: what it checks and records per event.
struct WatchState {
    flavor: Flavor,
    /// Where to resume from: the highest resourceVersion seen.
    revision: u64,
    /// The resourceVersion of the last event (Kubernetes): each must be above it.
    last_event: u64,
    /// Events counted in the current chunk.
    events: u64,
    /// An ERROR event (or a canceled etcd watch): start again from the current revision.
    refresh_revision: bool,
    /// Write-to-watch latencies (µs) not yet handed to the run's histogram: a few values per
    /// watcher, where a histogram of its own would cost ~190 KiB per watcher and a walk of all
    /// its buckets at every merge (the receive path's largest cost with 10,000 watchers).
    local_us: Vec<u64>,
}

/// Latencies one watcher holds before it hands them over, whatever the time since the last
/// flush (bounds its buffer at 32 KiB).
const WATCH_LATENCIES_HELD_MAX: usize = 4096;

impl WatchState {
    /// One event, received at `now` (Unix ns); stamps before `measure_from` are not timed.
    fn seen(&mut self, m: &Metrics, s: Seen, now: u64, measure_from: u64) {
        if let Some(e) = s.error {
            m.error(format!("watch {e}"));
            self.refresh_revision = true;
            return;
        }
        if let Some(r) = s.revision {
            // A Kubernetes watch delivers its events in resourceVersion order, each once.
            if self.flavor == Flavor::Kube && s.mine {
                if r <= self.last_event {
                    m.error("watch out of order or repeated");
                }
                self.last_event = r;
            }
            self.revision = self.revision.max(r);
        }
        if s.mine {
            self.events += 1;
            if let Some(stamp) = s.stamp_ns.filter(|&st| st >= measure_from) {
                self.local_us.push(now.saturating_sub(stamp) / 1000);
            }
        }
    }
}

async fn watcher(shared: Arc<Shared>, k: u64, mut lease: Option<Lease>, node: Option<String>, revision: u64) {
    let m = &shared.metrics;
    let mut rng = task_rng(shared.scenario.seed, 2, k);
    let mut connected = false;
    let mut last_flush = Instant::now();
    let flavor = shared.target.flavor;
    let mut w =
        WatchState { flavor, revision, last_event: revision, events: 0, refresh_revision: false, local_us: Vec::new() };
    'outer: while !shared.cancel.is_cancelled() {
        if lease.as_ref().is_none_or(|l| l.conn.is_closed()) {
            // Give the old stream slot back before taking a new one.
            drop(lease.take());
            lease = lease_retrying(&shared).await;
        }
        let Some(c) = lease.as_mut().map(|l| &mut l.conn) else { break };
        let req = shared.target.watch_request(node.as_deref(), w.revision);
        let sent = Instant::now();
        let resp = tokio::select! {
            r = c.send(req) => r,
            _ = shared.cancel.cancelled() => break,
        };
        let resp = match resp {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                let status = r.status();
                let asked = asked_wait(status, r.headers());
                let _ = read_body(r).await;
                if asked.is_some() {
                    throttled(m, sent.elapsed());
                    // A reflector re-establishes its watch for as long as it runs: no bound.
                    if let Decision::RetryAfter(d) = shared.scenario.client.decide(asked, None, rng.random()) {
                        if !back_off(&shared, d).await {
                            break;
                        }
                        continue;
                    }
                    m.counters.retries_exhausted.fetch_add(1, Ordering::Relaxed);
                }
                m.error(format!("watch {}", status.as_u16()));
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shared.cancel.cancelled() => break,
                }
                continue;
            }
            Err(_) => {
                m.error("watch connection");
                lease = None;
                continue;
            }
        };
        if !connected {
            connected = true;
            m.counters.watchers_connected.fetch_add(1, Ordering::Relaxed);
        }
        let mut body = resp.into_body();
        let mut lines = Lines::default();
        w.last_event = w.revision;
        w.refresh_revision = false;
        loop {
            let frame = tokio::select! {
                f = body.frame() => f,
                _ = shared.cancel.cancelled() => break 'outer,
            };
            let data = match frame {
                None => {
                    m.counters.watchers_closed_by_server.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Some(Err(_)) => {
                    m.counters.watchers_closed_by_server.fetch_add(1, Ordering::Relaxed);
                    lease = None;
                    break;
                }
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) => d,
                    Err(_) => continue,
                },
            };
            // Every event of a chunk arrived together: one clock read per chunk.
            let now = unix_ns();
            let measure_from = shared.measure_from_unix_ns.load(Ordering::Relaxed);
            w.events = 0;
            let fed = lines.feed(&data, |line| match flavor {
                Flavor::Kube => match parse_kube_event(line) {
                    Ok(s) => w.seen(m, s, now, measure_from),
                    Err(_) => m.error("watch decode"),
                },
                Flavor::Etcd => match parse_etcd_watch(line, node.as_deref()) {
                    Ok(seen) => {
                        for s in seen {
                            w.seen(m, s, now, measure_from);
                        }
                    }
                    Err(_) => m.error("watch decode"),
                },
            });
            m.counters.watch_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
            m.counters.watch_events.fetch_add(w.events, Ordering::Relaxed);
            if fed.is_err() {
                m.error("watch event too large");
                lease = None;
                break;
            }
            if w.refresh_revision {
                break;
            }
            if w.local_us.len() >= WATCH_LATENCIES_HELD_MAX || last_flush.elapsed() >= FLUSH_INTERVAL {
                m.record_us_many(Kind::WriteToWatch, &w.local_us);
                w.local_us.clear();
                last_flush = Instant::now();
            }
        }
        drop(body);
        if w.refresh_revision {
            // 410 Expired or a compacted etcd watch: start again from now.
            m.counters.watchers_closed_by_server.fetch_add(1, Ordering::Relaxed);
            if lease.as_ref().is_none_or(|l| l.conn.is_closed()) {
                lease = lease_retrying(&shared).await;
            }
            if let Some(l) = lease.as_mut() {
                if let Ok(r) = shared.target.revision(&mut l.conn).await {
                    w.revision = r;
                }
            }
        }
    }
    m.record_us_many(Kind::WriteToWatch, &w.local_us);
}

async fn writer(shared: Arc<Shared>, k: u64, schedule: Arc<Schedule>, t0: Instant, end: Instant) {
    let s = &shared.scenario;
    let w = s.writes.as_ref().expect("writer without [writes]");
    let o = &s.objects;
    let m = &shared.metrics;
    let mut rng = StdRng::seed_from_u64(s.seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut live: Vec<u64> = (k..o.pods).step_by(w.concurrency as usize).collect();
    // New pods take indices past the preloaded ones, each writer its own residue class.
    let mut next_new = o.pods.div_ceil(w.concurrency) * w.concurrency + k;
    let weights = w.create_weight + w.update_weight + w.delete_weight;
    let (mut lat, mut svc) = (Latency::default(), Latency::default());
    let mut last_flush = Instant::now();
    let mut conn: Option<Conn> = None;
    while !shared.cancel.is_cancelled() {
        let (_, intended) = schedule.claim();
        if let Some(at) = intended {
            let at = t0 + at;
            if at >= end {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(at.into()) => {}
                _ = shared.cancel.cancelled() => break,
            }
        }
        if conn.as_ref().is_none_or(|c| c.is_closed()) {
            conn = connect_retrying(&shared).await;
        }
        let Some(c) = conn.as_mut() else { break };
        let r = rng.random_range(0..weights);
        let (op, index) = if r < w.create_weight || live.is_empty() {
            let i = next_new;
            next_new += w.concurrency;
            (WriteOp::Create, i)
        } else if r < w.create_weight + w.update_weight {
            (WriteOp::Update, live[rng.random_range(0..live.len())])
        } else {
            (WriteOp::Delete, live.swap_remove(rng.random_range(0..live.len())))
        };
        let pod = PodRef::new(index, o.namespaces, o.nodes);
        let first_sent = t0.elapsed();
        let mut retries = 0u32;
        // The same write until it is admitted, fails otherwise, or the policy gives up.
        let (res, sent, done) = loop {
            let sent = t0.elapsed();
            let res = shared.target.write(c, op, &pod, o.pod_bytes).await;
            let done = t0.elapsed();
            let asked = match &res {
                Err(e) if e.asked_wait_s.is_some() => e.asked_wait_s,
                _ => break (res, sent, done),
            };
            throttled(m, done.saturating_sub(sent));
            match s.client.decide(asked, Some(retries), rng.random()) {
                Decision::RetryAfter(d) => {
                    retries += 1;
                    if !back_off(&shared, d).await {
                        break (res, sent, done);
                    }
                }
                Decision::GiveUp | Decision::Done => {
                    m.counters.retries_exhausted.fetch_add(1, Ordering::Relaxed);
                    break (res, sent, done);
                }
            }
        };
        if shared.cancel.is_cancelled() && res.is_err() {
            // Cancelled while waiting to retry: neither a result nor an error.
            break;
        }
        match res {
            Ok(()) => {
                m.counters.writes.fetch_add(1, Ordering::Relaxed);
                let t = timing_with_retries(intended, first_sent, sent, done);
                lat.record(t.latency);
                svc.record(t.service);
                if op == WriteOp::Create {
                    live.push(index);
                }
            }
            Err(e) => {
                if e.what == "connection" || e.what == "body" {
                    conn = None;
                }
                m.error(format!("write {}", e.what));
            }
        }
        if last_flush.elapsed() >= FLUSH_INTERVAL {
            m.merge(Kind::Write, &lat);
            m.merge(Kind::WriteService, &svc);
            lat.reset();
            svc.reset();
            last_flush = Instant::now();
        }
    }
    m.merge(Kind::Write, &lat);
    m.merge(Kind::WriteService, &svc);
}

async fn lister(shared: Arc<Shared>, k: u64) {
    let l = shared.scenario.list.as_ref().expect("lister without [list]");
    let m = &shared.metrics;
    let mut rng = task_rng(shared.scenario.seed, 3, k);
    let mut conn: Option<Conn> = None;
    'lists: while !shared.cancel.is_cancelled() {
        if conn.as_ref().is_none_or(|c| c.is_closed()) {
            conn = connect_retrying(&shared).await;
        }
        let Some(c) = conn.as_mut() else { break };
        let whole = Instant::now();
        let mut cont: Option<String> = None;
        loop {
            let page = Instant::now();
            let mut retries = 0u32;
            // The same page until it is admitted (or the policy gives up).
            let (resp, sent) = loop {
                let sent = Instant::now();
                let req = shared.target.list_request(l.limit, &l.accept, cont.as_deref());
                let resp = tokio::select! {
                    r = c.send(req) => r,
                    _ = shared.cancel.cancelled() => break 'lists,
                };
                let resp = match resp {
                    Ok(r) => r,
                    Err(_) => {
                        m.error("list connection");
                        conn = None;
                        continue 'lists;
                    }
                };
                let asked = asked_wait(resp.status(), resp.headers());
                if asked.is_none() {
                    break (resp, sent);
                }
                let status = resp.status();
                let _ = read_body(resp).await;
                throttled(m, sent.elapsed());
                match shared.scenario.client.decide(asked, Some(retries), rng.random()) {
                    Decision::RetryAfter(d) => {
                        retries += 1;
                        if !back_off(&shared, d).await {
                            break 'lists;
                        }
                    }
                    Decision::GiveUp | Decision::Done => {
                        m.counters.retries_exhausted.fetch_add(1, Ordering::Relaxed);
                        m.error(format!("list {}", status.as_u16()));
                        continue 'lists;
                    }
                }
            };
            let status = resp.status();
            if !status.is_success() {
                m.error(format!("list {}", status.as_u16()));
                let _ = read_body(resp).await;
                continue 'lists;
            }
            let next = if l.limit == 0 || shared.target.flavor == Flavor::Kube && !l.accept.contains("json") {
                // One whole response (or a body not parsed here): count bytes as they stream.
                let mut body = resp.into_body();
                let mut bytes = 0u64;
                loop {
                    let f = tokio::select! {
                        f = body.frame() => f,
                        _ = shared.cancel.cancelled() => break 'lists,
                    };
                    match f {
                        None => break,
                        Some(Err(_)) => {
                            m.error("list body");
                            conn = None;
                            continue 'lists;
                        }
                        Some(Ok(f)) => bytes += f.data_ref().map_or(0, |d| d.len() as u64),
                    }
                }
                m.counters.list_bytes.fetch_add(bytes, Ordering::Relaxed);
                None
            } else {
                let body = tokio::select! {
                    b = read_body(resp) => b,
                    _ = shared.cancel.cancelled() => break 'lists,
                };
                let Ok(body) = body else {
                    m.error("list body");
                    conn = None;
                    continue 'lists;
                };
                m.counters.list_bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                match shared.target.parse_list_page(&body, &l.accept) {
                    Ok((items, next)) => {
                        m.counters.list_items.fetch_add(items, Ordering::Relaxed);
                        next
                    }
                    Err(_) => {
                        m.error("list decode");
                        continue 'lists;
                    }
                }
            };
            m.counters.list_pages.fetch_add(1, Ordering::Relaxed);
            m.record(Kind::ListPage, page.elapsed());
            m.record(Kind::ListPageService, sent.elapsed());
            match next {
                Some(n) => cont = Some(n),
                None => break,
            }
        }
        m.counters.lists.fetch_add(1, Ordering::Relaxed);
        m.record(Kind::ListWhole, whole.elapsed());
    }
}

async fn progress(shared: Arc<Shared>, series: Arc<Mutex<Vec<Sample>>>, tag: String, t0: Instant) {
    let m = &shared.metrics;
    let mut prev = m.snapshot();
    let mut prev_t = 0.0;
    let mut prev_cpu = CpuMark::now(&shared.placement);
    let watches = shared.scenario.watchers() > 0;
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(1), Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shared.cancel.cancelled() => return,
        }
        let t = t0.elapsed().as_secs_f64();
        let now = m.snapshot();
        let recent = m.take_recent();
        let mut s = Sample::between(t, t - prev_t, &prev, &now, &recent);
        let cpu = CpuMark::now(&shared.placement);
        (s.loadgen_cpu_busy, s.server_cpu_busy) = {
            let (l, sv) = prev_cpu.shares(&cpu, &shared.placement);
            (Some(l.busy), sv.map(|s| s.busy))
        };
        prev_cpu = cpu;
        if watches {
            s.socket_backlog_bytes = bottleneck::socket_backlog_bytes();
        }
        let pct = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{:.0}%", 100.0 * v));
        eprintln!(
            "{tag} t={t:>5.1}s watchers={}/{} events/s={:.0} MB/s={:.2} writes/s={:.0} write p99={:.1}ms watch p99={:.1}ms pages/s={:.1} errors={} 429s={} retries={} cpu loadgen={} server={} unread={:.1}MB",
            m.counters.watchers_connected.load(Ordering::Relaxed),
            shared.scenario.watchers(),
            s.watch_events_per_s,
            s.watch_bytes_per_s / 1e6,
            s.writes_per_s,
            s.write_p99_ms,
            s.write_to_watch_p99_ms,
            s.list_pages_per_s,
            now.errors,
            now.throttled,
            now.retries,
            pct(s.loadgen_cpu_busy),
            pct(s.server_cpu_busy),
            s.socket_backlog_bytes.unwrap_or(0) as f64 / 1e6,
        );
        series.lock().unwrap().push(s);
        prev = now;
        prev_t = t;
    }
}
