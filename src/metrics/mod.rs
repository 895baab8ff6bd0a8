//! What operators graph: request durations and counts by kube-apiserver's
//! labels, write-to-watch delivery latency, list sizes, the log's commit
//! latency and group-commit size, and the standard `process_*` metrics, in
//! the Prometheus text format (`docs/metrics.md` lists every metric).
//!
//! Each shard records into its own [`ShardMetrics`] (plain counters behind a
//! `RefCell`: a shard is one thread); a scrape takes every shard's
//! [`ShardSnapshot`] through the runtime and merges them. What is observed
//! off the shards (the etcd log's thread) or for all of them (the embedded
//! log) is in [`LogMetrics`], atomics shared by every core.
//!
//! Architecture invariant: no I/O and no clock here (instants and durations
//! are arguments); every histogram has a fixed bucket set and every label
//! comes from a closed set (`requests.rs`), so a scrape's size is bounded by
//! the served resources, never by what clients send; recording never
//! allocates once a series exists.

pub mod commit_clock;
pub mod histogram;
pub mod process;
pub mod requests;
pub mod text;

use crate::log::Revision;
use commit_clock::{CommitClock, CommitTime};
use histogram::{AtomicHistogram, Buckets, Histogram};
use requests::{DryRun, Scope, SeriesKey, Target, TargetId, Targets, Verb};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use text::Kind;

const NANOS: u64 = 1_000_000_000;

/// Seconds as nanoseconds, for bucket bounds.
const fn ms(millis: u64) -> u64 {
    millis * 1_000_000
}

const fn us(micros: u64) -> u64 {
    micros * 1_000
}

/// kube-apiserver's `apiserver_request_duration_seconds` buckets (5 ms to
/// 60 s), so its dashboards' and alerts' `le` values carry over.
pub const REQUEST_DURATION: Buckets = Buckets {
    bounds: &[
        ms(5),
        ms(25),
        ms(50),
        ms(100),
        ms(200),
        ms(400),
        ms(600),
        ms(800),
        ms(1000),
        ms(1250),
        ms(1500),
        ms(2000),
        ms(3000),
        ms(4000),
        ms(5000),
        ms(6000),
        ms(8000),
        ms(10_000),
        ms(15_000),
        ms(20_000),
        ms(30_000),
        ms(45_000),
        ms(60_000),
    ],
    scale: NANOS,
};

/// Latencies well under kube's smallest bucket: a watch event or a log
/// commit takes tens of microseconds to milliseconds (100 µs to 60 s).
pub const FAST_DURATION: Buckets = Buckets {
    bounds: &[
        us(100),
        us(250),
        us(500),
        ms(1),
        us(2500),
        ms(5),
        ms(10),
        ms(25),
        ms(50),
        ms(100),
        ms(250),
        ms(500),
        ms(1000),
        ms(2500),
        ms(5000),
        ms(10_000),
        ms(30_000),
        ms(60_000),
    ],
    scale: NANOS,
};

/// Items in one list response.
pub const LIST_ITEMS: Buckets =
    Buckets { bounds: &[0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10_000, 50_000, 100_000, 500_000], scale: 1 };

/// Entries made durable together by one group commit (up to the largest
/// `log_batch_records_max` default and beyond).
pub const BATCH_ENTRIES: Buckets =
    Buckets { bounds: &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], scale: 1 };

/// kube-apiserver's `component` label value.
const COMPONENT: &str = "apiserver";

/// One request series' counters.
#[derive(Debug)]
struct RequestSeries {
    duration: Histogram,
    /// Requests per status code (a handful per series).
    codes: Vec<(u16, u64)>,
    /// Long-running requests of this series open now.
    long_running: u64,
}

impl RequestSeries {
    fn new() -> RequestSeries {
        RequestSeries { duration: Histogram::new(REQUEST_DURATION), codes: Vec::new(), long_running: 0 }
    }

    fn count(&mut self, code: u16) {
        match self.codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.codes.push((code, 1)),
        }
    }
}

#[derive(Debug)]
struct State {
    targets: Targets,
    requests: HashMap<SeriesKey, RequestSeries>,
    lists: HashMap<TargetId, Histogram>,
    delivery: Histogram,
    clock: CommitClock,
}

/// One shard's metrics. Not shared across cores: each shard owns one, and a
/// scrape merges their [`ShardSnapshot`]s.
#[derive(Debug)]
pub struct ShardMetrics {
    state: RefCell<State>,
}

impl ShardMetrics {
    /// `commit_times_max`: batches the commit clock remembers
    /// (`Config::metrics_commit_times_max`).
    pub fn new(commit_times_max: usize) -> ShardMetrics {
        ShardMetrics {
            state: RefCell::new(State {
                targets: Targets::default(),
                requests: HashMap::new(),
                lists: HashMap::new(),
                delivery: Histogram::new(FAST_DURATION),
                clock: CommitClock::new(commit_times_max),
            }),
        }
    }

    /// The target of a request to a resource (`subresource` empty for the
    /// resource itself) or, with an empty resource, to a non-resource path;
    /// `served` is asked only the first time, and `None` means the target is
    /// not served and the request is not recorded.
    pub fn target(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        served: impl FnOnce() -> bool,
    ) -> Option<TargetId> {
        self.state.borrow_mut().targets.intern(group, version, resource, subresource, served)
    }

    /// A long-running request started (it is counted in
    /// `apiserver_longrunning_requests` until [`ShardMetrics::request_finished`]).
    pub fn request_started(&self, key: SeriesKey) {
        if key.verb.is_long_running() {
            self.state.borrow_mut().requests.entry(key).or_insert_with(RequestSeries::new).long_running += 1;
        }
    }

    /// A request ended with `code` after `elapsed` (since it was received).
    pub fn request_finished(&self, key: SeriesKey, code: u16, elapsed: Duration) {
        let mut state = self.state.borrow_mut();
        let series = state.requests.entry(key).or_insert_with(RequestSeries::new);
        if key.verb.is_long_running() {
            series.long_running = series.long_running.saturating_sub(1);
        }
        series.duration.observe(elapsed.as_nanos().min(u64::MAX as u128) as u64);
        series.count(code);
    }

    /// A request refused before it was served (429 by overload protection):
    /// counted, not timed, as kube-apiserver's `RecordDroppedRequest`.
    pub fn request_dropped(&self, key: SeriesKey, code: u16) {
        self.state.borrow_mut().requests.entry(key).or_insert_with(RequestSeries::new).count(code);
    }

    /// A list response of `items` items.
    pub fn list_returned(&self, target: TargetId, items: u64) {
        self.state.borrow_mut().lists.entry(target).or_insert_with(|| Histogram::new(LIST_ITEMS)).observe(items);
    }

    /// The batch of committed entries ending at `last` was committed at `at`
    /// (recorded before its events are dispatched).
    pub fn committed(&self, last: Revision, at: Instant) {
        self.state.borrow_mut().clock.committed(last, at);
    }

    /// Events at `revisions` were handed to the connection of a watch that
    /// started at `watch_started`: each is timed from its commit. Events
    /// committed before the watch started (its history replay) are not
    /// delivery latency and are left out; an event older than the commit
    /// clock is timed from the oldest batch it holds (a lower bound).
    pub fn delivered(&self, watch_started: Instant, now: Instant, revisions: impl IntoIterator<Item = Revision>) {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        for revision in revisions {
            let committed = match state.clock.commit_time(revision) {
                CommitTime::At(at) | CommitTime::Before(at) => at,
                CommitTime::Unknown => continue,
            };
            if committed < watch_started {
                continue;
            }
            state.delivery.observe(now.saturating_duration_since(committed).as_nanos().min(u64::MAX as u128) as u64);
        }
    }

    /// A copy of every counter, to be merged with the other shards'.
    pub fn snapshot(&self) -> ShardSnapshot {
        let state = self.state.borrow();
        let target = |id: TargetId| {
            state.targets.get(id).cloned().unwrap_or_else(|| Target {
                group: String::new(),
                version: String::new(),
                resource: String::new(),
                subresource: String::new(),
            })
        };
        ShardSnapshot {
            requests: state
                .requests
                .iter()
                .map(|(key, series)| RequestSample {
                    verb: key.verb,
                    dry_run: key.dry_run,
                    scope: key.scope,
                    target: target(key.target),
                    duration: series.duration.clone(),
                    codes: series.codes.clone(),
                    long_running: series.long_running,
                })
                .collect(),
            lists: state.lists.iter().map(|(id, h)| (target(*id), h.clone())).collect(),
            delivery: state.delivery.clone(),
        }
    }
}

/// One request series of one shard, with its labels spelled out.
#[derive(Clone, Debug)]
pub struct RequestSample {
    pub verb: Verb,
    pub dry_run: DryRun,
    pub scope: Scope,
    pub target: Target,
    pub duration: Histogram,
    pub codes: Vec<(u16, u64)>,
    pub long_running: u64,
}

/// One shard's counters at a scrape (sent across cores: owns everything).
#[derive(Clone, Debug)]
pub struct ShardSnapshot {
    pub requests: Vec<RequestSample>,
    pub lists: Vec<(Target, Histogram)>,
    pub delivery: Histogram,
}

/// The log's commit latency and group-commit size, observed where the log
/// acknowledges appends (shard 0 for the embedded log, the etcd thread for
/// etcd). Atomics: shared by every core.
#[derive(Debug)]
pub struct LogMetrics {
    /// `embedded` or `etcd`.
    pub log: &'static str,
    /// From the log taking an append to its acknowledgement, committed
    /// appends only.
    pub commit: AtomicHistogram,
    /// Entries per durable batch; `None` for a log without group commit of
    /// its own (etcd: one transaction per append).
    pub batch: Option<AtomicHistogram>,
    /// The etcd log only: how far this instance is behind etcd, as its
    /// watch last measured it (etcd's revision in the response header minus
    /// the last revision delivered to the shards), and for how long it has
    /// not been caught up, in milliseconds (0 when it is).
    pub behind_revisions: std::sync::atomic::AtomicU64,
    pub behind_ms: std::sync::atomic::AtomicU64,
}

impl LogMetrics {
    pub fn new(log: &'static str, group_commit: bool) -> LogMetrics {
        LogMetrics {
            log,
            commit: AtomicHistogram::new(FAST_DURATION),
            batch: group_commit.then(|| AtomicHistogram::new(BATCH_ENTRIES)),
            behind_revisions: std::sync::atomic::AtomicU64::new(0),
            behind_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub fn snapshot(&self) -> LogSnapshot {
        LogSnapshot {
            log: self.log,
            commit: self.commit.snapshot(),
            batch: self.batch.as_ref().map(AtomicHistogram::snapshot),
            behind: (self.log == "etcd").then(|| {
                (
                    self.behind_revisions.load(std::sync::atomic::Ordering::Relaxed),
                    self.behind_ms.load(std::sync::atomic::Ordering::Relaxed),
                )
            }),
        }
    }
}

/// [`LogMetrics`] at a scrape.
#[derive(Clone, Debug)]
pub struct LogSnapshot {
    pub log: &'static str,
    pub commit: Histogram,
    pub batch: Option<Histogram>,
    /// etcd only: (revisions behind etcd, milliseconds not caught up).
    pub behind: Option<(u64, u64)>,
}

/// Everything a scrape gathered from the shards and the log.
#[derive(Clone, Debug, Default)]
pub struct Gathered {
    pub shards: Vec<ShardSnapshot>,
    pub log: Option<LogSnapshot>,
}

/// A request series' labels, merged across shards (ordered for a stable output).
type MergedKey = (Verb, DryRun, Target, Scope);

impl Gathered {
    /// Writes every family in the Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let mut requests: BTreeMap<MergedKey, (Histogram, BTreeMap<u16, u64>, u64)> = BTreeMap::new();
        let mut lists: BTreeMap<Target, Histogram> = BTreeMap::new();
        let mut delivery = Histogram::new(FAST_DURATION);
        for shard in &self.shards {
            for sample in &shard.requests {
                let key = (sample.verb, sample.dry_run, sample.target.clone(), sample.scope);
                let merged =
                    requests.entry(key).or_insert_with(|| (Histogram::new(REQUEST_DURATION), BTreeMap::new(), 0));
                merged.0.merge(&sample.duration);
                for (code, n) in &sample.codes {
                    *merged.1.entry(*code).or_default() += n;
                }
                merged.2 += sample.long_running;
            }
            for (target, histogram) in &shard.lists {
                lists.entry(target.clone()).or_insert_with(|| Histogram::new(LIST_ITEMS)).merge(histogram);
            }
            delivery.merge(&shard.delivery);
        }
        fn labels((verb, dry_run, target, scope): &MergedKey) -> [(&'static str, &str); 8] {
            [
                ("verb", verb.name()),
                ("dry_run", dry_run.name()),
                ("group", target.group.as_str()),
                ("version", target.version.as_str()),
                ("resource", target.resource.as_str()),
                ("subresource", target.subresource.as_str()),
                ("scope", scope.name()),
                ("component", COMPONENT),
            ]
        }
        if requests.values().any(|(_, codes, _)| !codes.is_empty()) {
            let name = "apiserver_request_total";
            text::header(out, name, "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.", Kind::Counter);
            for (key, (_, codes, _)) in &requests {
                for (code, n) in codes {
                    let code = code.to_string();
                    let mut all = labels(key).to_vec();
                    all.push(("code", &code));
                    text::sample(out, name, &all, n);
                }
            }
        }
        if requests.values().any(|(h, _, _)| h.count() > 0) {
            let name = "apiserver_request_duration_seconds";
            text::header(out, name, "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.", Kind::Histogram);
            for (key, (duration, _, _)) in requests.iter().filter(|(_, (h, _, _))| h.count() > 0) {
                text::histogram(out, name, &labels(key), duration);
            }
        }
        if requests.keys().any(|(verb, ..)| verb.is_long_running()) {
            let name = "apiserver_longrunning_requests";
            text::header(out, name, "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.", Kind::Gauge);
            for (key, (_, _, open)) in requests.iter().filter(|(key, _)| key.0.is_long_running()) {
                // kube's gauge has no dry_run label; a watch has no dry run.
                let all: Vec<(&str, &str)> = labels(key).into_iter().filter(|(name, _)| *name != "dry_run").collect();
                text::sample(out, name, &all, open);
            }
        }
        if !lists.is_empty() {
            let name = "shardline_list_items";
            text::header(out, name, "Items per list response, by resource.", Kind::Histogram);
            for (target, histogram) in &lists {
                let labels = [
                    ("group", target.group.as_str()),
                    ("version", target.version.as_str()),
                    ("resource", target.resource.as_str()),
                ];
                text::histogram(out, name, &labels, histogram);
            }
        }
        let name = "shardline_watch_delivery_duration_seconds";
        text::header(
            out,
            name,
            "Time from an entry's commit to its watch event being handed to a watcher's connection.",
            Kind::Histogram,
        );
        text::histogram(out, name, &[], &delivery);
        if let Some(log) = &self.log {
            let labels = [("log", log.log)];
            let name = "shardline_log_commit_duration_seconds";
            text::header(
                out,
                name,
                "Time from the log taking an append to acknowledging it durable (committed appends).",
                Kind::Histogram,
            );
            text::histogram(out, name, &labels, &log.commit);
            if let Some(batch) = &log.batch {
                let name = "shardline_log_commit_batch_entries";
                text::header(
                    out,
                    name,
                    "Entries made durable together by one group commit (one write and fdatasync).",
                    Kind::Histogram,
                );
                text::histogram(out, name, &labels, batch);
            }
            if let Some((revisions, ms)) = log.behind {
                let name = "shardline_etcd_behind_revisions";
                text::header(
                    out,
                    name,
                    "etcd's revision, as the last watch response reported it, minus the last revision this instance applied.",
                    Kind::Gauge,
                );
                text::sample(out, name, &[], revisions);
                let name = "shardline_etcd_behind_seconds";
                text::header(
                    out,
                    name,
                    "How long this instance has not been caught up with etcd (0 when it is).",
                    Kind::Gauge,
                );
                text::sample(out, name, &[], ms as f64 / 1000.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(metrics: &ShardMetrics, verb: Verb, resource: &str) -> SeriesKey {
        let target = metrics.target("", "v1", resource, "", || true).unwrap();
        SeriesKey { verb, dry_run: DryRun::No, scope: Scope::Namespace, target }
    }

    #[test]
    fn requests_are_counted_by_code_and_timed_per_series_across_shards() {
        let (a, b) = (ShardMetrics::new(16), ShardMetrics::new(16));
        let list_a = key(&a, Verb::List, "pods");
        a.request_finished(list_a, 200, Duration::from_millis(3));
        a.request_finished(list_a, 410, Duration::from_millis(30));
        a.request_dropped(list_a, 429);
        // Another shard interns in its own order: merged by labels, not ids.
        let _ = key(&b, Verb::Get, "configmaps");
        let list_b = key(&b, Verb::List, "pods");
        b.request_finished(list_b, 200, Duration::from_secs(90));
        let gathered = Gathered { shards: vec![a.snapshot(), b.snapshot()], log: None };
        let mut out = String::new();
        gathered.render(&mut out);
        let labels = "verb=\"LIST\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"";
        assert!(out.contains(&format!("apiserver_request_total{{{labels},code=\"200\"}} 2\n")), "{out}");
        assert!(out.contains(&format!("apiserver_request_total{{{labels},code=\"410\"}} 1\n")), "{out}");
        assert!(out.contains(&format!("apiserver_request_total{{{labels},code=\"429\"}} 1\n")), "{out}");
        assert!(
            out.contains(&format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"0.005\"}} 1\n")),
            "{out}"
        );
        assert!(out.contains(&format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"60\"}} 2\n")), "{out}");
        assert!(
            out.contains(&format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} 3\n")),
            "{out}"
        );
        assert!(out.contains(&format!("apiserver_request_duration_seconds_count{{{labels}}} 3\n")), "{out}");
        assert!(out.contains(&format!("apiserver_request_duration_seconds_sum{{{labels}}} 90.033\n")), "{out}");
        assert!(!out.contains("configmaps"), "a target without requests is no series: {out}");
        assert!(!out.contains("apiserver_longrunning_requests"), "{out}");
    }

    #[test]
    fn a_watch_is_long_running_until_it_ends_then_timed_whole() {
        let metrics = ShardMetrics::new(16);
        let watch = key(&metrics, Verb::Watch, "pods");
        metrics.request_started(watch);
        let render = |m: &ShardMetrics| {
            let mut out = String::new();
            Gathered { shards: vec![m.snapshot()], log: None }.render(&mut out);
            out
        };
        let open = render(&metrics);
        assert!(open.contains("apiserver_longrunning_requests{verb=\"WATCH\",group=\"\",version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"} 1\n"), "{open}");
        assert!(!open.contains("apiserver_request_total"), "counted when it ends, as kube does: {open}");
        metrics.request_finished(watch, 200, Duration::from_secs(1800));
        let ended = render(&metrics);
        assert!(
            ended.contains("resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"} 0\n"),
            "{ended}"
        );
        assert!(ended.contains("apiserver_request_duration_seconds_bucket{verb=\"WATCH\""), "{ended}");
        assert!(ended.contains(",le=\"+Inf\"} 1\n"), "{ended}");
    }

    #[test]
    fn delivery_is_timed_from_the_commit_and_skips_replayed_history() {
        let metrics = ShardMetrics::new(16);
        let t0 = Instant::now();
        metrics.committed(Revision(5), t0);
        let watch_started = t0 + Duration::from_millis(1);
        metrics.committed(Revision(7), t0 + Duration::from_millis(2));
        metrics.committed(Revision(9), t0 + Duration::from_millis(3));
        // 4 and 5 were committed before the watch began (its history replay);
        // 6 is in the batch ending at 7, 8 in the one ending at 9.
        metrics.delivered(
            watch_started,
            t0 + Duration::from_millis(4),
            [Revision(4), Revision(5), Revision(6), Revision(8)],
        );
        // A revision not committed yet is not timed.
        metrics.delivered(watch_started, t0 + Duration::from_millis(4), [Revision(10)]);
        let delivery = metrics.snapshot().delivery;
        assert_eq!(delivery.count(), 2);
        // 6: committed at 2 ms, delivered at 4 ms; 8: at 3 ms, delivered at 4 ms.
        assert_eq!(delivery.sum(), ms(2) + ms(1));
    }

    #[test]
    fn list_sizes_and_the_log_render_with_their_labels() {
        let metrics = ShardMetrics::new(16);
        let pods = metrics.target("", "v1", "pods", "", || true).unwrap();
        metrics.list_returned(pods, 0);
        metrics.list_returned(pods, 700);
        let log = LogMetrics::new("embedded", true);
        log.commit.observe(us(300));
        log.batch.as_ref().unwrap().observe(3);
        let mut out = String::new();
        Gathered { shards: vec![metrics.snapshot()], log: Some(log.snapshot()) }.render(&mut out);
        assert!(
            out.contains("shardline_list_items_bucket{group=\"\",version=\"v1\",resource=\"pods\",le=\"0\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("shardline_list_items_bucket{group=\"\",version=\"v1\",resource=\"pods\",le=\"500\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("shardline_list_items_bucket{group=\"\",version=\"v1\",resource=\"pods\",le=\"1000\"} 2\n"),
            "{out}"
        );
        assert!(out.contains("shardline_list_items_sum{group=\"\",version=\"v1\",resource=\"pods\"} 700\n"), "{out}");
        assert!(
            out.contains("shardline_log_commit_duration_seconds_bucket{log=\"embedded\",le=\"0.0005\"} 1\n"),
            "{out}"
        );
        assert!(out.contains("shardline_log_commit_batch_entries_bucket{log=\"embedded\",le=\"4\"} 1\n"), "{out}");
        assert!(out.contains("shardline_log_commit_batch_entries_sum{log=\"embedded\"} 3\n"), "{out}");
        assert!(LogMetrics::new("etcd", false).snapshot().batch.is_none());
    }
}
