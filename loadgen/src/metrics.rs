//! Measurements of one run: latency histograms (HdrHistogram, microseconds), counters, errors by
//! status code, and the per-second series the progress line and the plot show.
//!
//! Tasks record into local `Latency` histograms and merge them into the shared `Metrics` now and
//! then (`Latency::merge`), so the hot path takes no lock. Counters are atomics.
//! Invariant: a histogram records every value it is given (values beyond the range are clamped
//! to the highest trackable value, never dropped), so counts are exact.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency tracked: one hour, in microseconds.
const LATENCY_US_MAX: u64 = 3_600_000_000;
/// Significant decimal digits kept by every histogram.
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram in microseconds.
#[derive(Clone, Debug)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Latency(Histogram::new_with_bounds(1, LATENCY_US_MAX, SIGNIFICANT_DIGITS).expect("valid histogram bounds"))
    }
}

impl Latency {
    pub fn record(&mut self, d: Duration) {
        self.record_us(d.as_micros() as u64);
    }

    /// Records a latency in microseconds (clamped into range).
    pub fn record_us(&mut self, us: u64) {
        self.0.record(us.clamp(1, LATENCY_US_MAX)).expect("value clamped into range");
    }

    /// Adds every value of `other` (same bounds, so this cannot fail).
    pub fn merge(&mut self, other: &Latency) {
        self.0.add(&other.0).expect("histograms share bounds");
    }

    pub fn len(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    /// Latency at `quantile` (0..=1) in milliseconds.
    pub fn quantile_ms(&self, quantile: f64) -> f64 {
        self.0.value_at_quantile(quantile) as f64 / 1000.0
    }

    pub fn summary(&self) -> LatencySummary {
        let h = &self.0;
        let ms = |us: u64| us as f64 / 1000.0;
        LatencySummary {
            count: h.len(),
            mean_ms: if h.is_empty() { 0.0 } else { h.mean() / 1000.0 },
            p50_ms: ms(h.value_at_quantile(0.5)),
            p90_ms: ms(h.value_at_quantile(0.9)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p999_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
            curve: PERCENTILE_CURVE.iter().map(|&q| (q * 100.0, ms(h.value_at_quantile(q)))).collect(),
        }
    }
}

/// Quantiles of the percentile curve kept in results (for the plot).
const PERCENTILE_CURVE: &[f64] = &[0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0];

#[derive(Clone, Debug, Serialize, Default, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// (percentile, latency ms) pairs.
    pub curve: Vec<(f64, f64)>,
}

/// Which latency a histogram measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Writer's send stamp to a watcher's arrival.
    WriteToWatch,
    /// Write, from its intended start (coordinated-omission corrected).
    Write,
    /// Write, from the actual send of the attempt the server admitted (not refused with 429):
    /// the server's answer time. Waits and refused attempts before it are not in it.
    WriteService,
    /// One list page (or one unpaginated list), as the client sees it: from its first attempt,
    /// with every refused attempt and wait before the admitted one.
    ListPage,
    /// One list page, from the send of the admitted attempt only.
    ListPageService,
    /// A whole list, all its pages.
    ListWhole,
    /// A response asking the client to wait (429 or 5xx with `Retry-After`): how fast the
    /// server refuses.
    Throttled,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::WriteToWatch,
        Kind::Write,
        Kind::WriteService,
        Kind::ListPage,
        Kind::ListPageService,
        Kind::ListWhole,
        Kind::Throttled,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kind::WriteToWatch => "write_to_watch",
            Kind::Write => "write",
            Kind::WriteService => "write_service",
            Kind::ListPage => "list_page",
            Kind::ListPageService => "list_page_service",
            Kind::ListWhole => "list_whole",
            Kind::Throttled => "throttled",
        }
    }
}

/// Counters shared by every task of a run.
#[derive(Default, Debug)]
pub struct Counters {
    pub watch_events: AtomicU64,
    pub watch_bytes: AtomicU64,
    pub watchers_started: AtomicU64,
    pub watchers_connected: AtomicU64,
    pub watchers_closed_by_server: AtomicU64,
    pub writes: AtomicU64,
    pub list_pages: AtomicU64,
    pub list_items: AtomicU64,
    pub list_bytes: AtomicU64,
    pub lists: AtomicU64,
    pub errors: AtomicU64,
    /// Responses asking the client to wait (429, or 5xx with `Retry-After`).
    pub throttled: AtomicU64,
    /// Requests sent again after such a response (watch reconnects included).
    pub retries: AtomicU64,
    /// Requests given up after `client.max_retries` retries (or refused with retries off).
    pub retries_exhausted: AtomicU64,
    /// Time spent waiting before retries, summed over clients (microseconds).
    pub backoff_us: AtomicU64,
}

/// Everything one run measures.
#[derive(Default, Debug)]
pub struct Metrics {
    pub counters: Counters,
    latencies: Mutex<BTreeMap<Kind, Latency>>,
    /// Latencies of the current second, for the progress line.
    recent: Mutex<BTreeMap<Kind, Latency>>,
    errors: Mutex<BTreeMap<String, u64>>,
}

impl Metrics {
    pub fn merge(&self, kind: Kind, local: &Latency) {
        if local.is_empty() {
            return;
        }
        self.latencies.lock().unwrap().entry(kind).or_default().merge(local);
        self.recent.lock().unwrap().entry(kind).or_default().merge(local);
    }

    /// Records raw latencies (microseconds) a task collected: cheaper than a local histogram
    /// for tasks that see few values each (a watcher among thousands), whose merge would walk a
    /// whole histogram's buckets every time.
    pub fn record_us_many(&self, kind: Kind, values_us: &[u64]) {
        if values_us.is_empty() {
            return;
        }
        for map in [&self.latencies, &self.recent] {
            let mut map = map.lock().unwrap();
            let h = map.entry(kind).or_default();
            for &v in values_us {
                h.record_us(v);
            }
        }
    }

    pub fn record(&self, kind: Kind, d: Duration) {
        let mut one = Latency::default();
        one.record(d);
        self.merge(kind, &one);
    }

    /// Counts an error under its status code (`"409"`) or its kind (`"connect"`, `"timeout"`).
    pub fn error(&self, what: impl Into<String>) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        *self.errors.lock().unwrap().entry(what.into()).or_default() += 1;
    }

    pub fn errors(&self) -> BTreeMap<String, u64> {
        self.errors.lock().unwrap().clone()
    }

    pub fn latency(&self, kind: Kind) -> Latency {
        self.latencies.lock().unwrap().get(&kind).cloned().unwrap_or_default()
    }

    /// Takes the latencies recorded since the last call.
    pub fn take_recent(&self) -> BTreeMap<Kind, Latency> {
        std::mem::take(&mut *self.recent.lock().unwrap())
    }

    /// Forgets everything recorded so far (after preload and connecting, before measuring).
    pub fn reset(&self) {
        self.latencies.lock().unwrap().clear();
        self.recent.lock().unwrap().clear();
        self.errors.lock().unwrap().clear();
        let c = &self.counters;
        for a in [
            &c.watch_events,
            &c.watch_bytes,
            &c.writes,
            &c.list_pages,
            &c.list_items,
            &c.list_bytes,
            &c.lists,
            &c.errors,
            &c.throttled,
            &c.retries,
            &c.retries_exhausted,
            &c.backoff_us,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> CounterSnapshot {
        let c = &self.counters;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CounterSnapshot {
            watch_events: l(&c.watch_events),
            watch_bytes: l(&c.watch_bytes),
            writes: l(&c.writes),
            list_pages: l(&c.list_pages),
            list_bytes: l(&c.list_bytes),
            lists: l(&c.lists),
            errors: l(&c.errors),
            throttled: l(&c.throttled),
            retries: l(&c.retries),
            retries_exhausted: l(&c.retries_exhausted),
            backoff_s: l(&c.backoff_us) as f64 / 1e6,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct CounterSnapshot {
    pub watch_events: u64,
    pub watch_bytes: u64,
    pub writes: u64,
    pub list_pages: u64,
    pub list_bytes: u64,
    pub lists: u64,
    pub errors: u64,
    pub throttled: u64,
    pub retries: u64,
    pub retries_exhausted: u64,
    /// Seconds clients spent waiting before retries, summed over clients.
    pub backoff_s: f64,
}

/// One second of the run, as rates.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Sample {
    pub t_s: f64,
    pub watch_events_per_s: f64,
    pub watch_bytes_per_s: f64,
    pub writes_per_s: f64,
    pub list_pages_per_s: f64,
    pub errors_per_s: f64,
    pub write_to_watch_p99_ms: f64,
    pub write_p99_ms: f64,
    /// Share of loadgen's CPUs' time it was busy in this second (0..1).
    pub loadgen_cpu_busy: Option<f64>,
    /// Share of the (spawned) server's CPUs' time it was busy in this second.
    pub server_cpu_busy: Option<f64>,
    /// Bytes waiting unread in loadgen's sockets at the end of this second (watch scenarios).
    pub socket_backlog_bytes: Option<u64>,
}

impl Sample {
    /// The rates between two snapshots `dt_s` seconds apart.
    pub fn between(
        t_s: f64,
        dt_s: f64,
        a: &CounterSnapshot,
        b: &CounterSnapshot,
        recent: &BTreeMap<Kind, Latency>,
    ) -> Sample {
        let r = |x: u64, y: u64| if dt_s > 0.0 { y.saturating_sub(x) as f64 / dt_s } else { 0.0 };
        let p99 = |k: Kind| recent.get(&k).filter(|h| !h.is_empty()).map_or(0.0, |h| h.quantile_ms(0.99));
        Sample {
            t_s,
            watch_events_per_s: r(a.watch_events, b.watch_events),
            watch_bytes_per_s: r(a.watch_bytes, b.watch_bytes),
            writes_per_s: r(a.writes, b.writes),
            list_pages_per_s: r(a.list_pages, b.list_pages),
            errors_per_s: r(a.errors, b.errors),
            write_to_watch_p99_ms: p99(Kind::WriteToWatch),
            write_p99_ms: p99(Kind::Write),
            loadgen_cpu_busy: None,
            server_cpu_busy: None,
            socket_backlog_bytes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = Latency::default();
        let mut b = Latency::default();
        let mut all = Latency::default();
        for i in 1..=1000u64 {
            let d = us(i * 37 % 10_000 + 1);
            if i % 3 == 0 {
                a.record(d)
            } else {
                b.record(d)
            }
            all.record(d);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged.len(), 1000);
        assert_eq!(merged.summary(), all.summary());
        assert!(merged.summary().p50_ms > 0.0);
    }

    #[test]
    fn percentiles_within_three_digits() {
        let mut h = Latency::default();
        for i in 1..=10_000u64 {
            h.record(us(i * 100)); // 0.1 ms .. 1000 ms, uniform
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.p50_ms - 500.0).abs() < 1.0, "{}", s.p50_ms);
        assert!((s.p99_ms - 990.0).abs() < 1.0, "{}", s.p99_ms);
        assert!((s.max_ms - 1000.0).abs() < 1.0, "{}", s.max_ms);
        assert_eq!(s.curve.first().unwrap().0, 0.0);
        assert_eq!(s.curve.last().unwrap().0, 100.0);
    }

    #[test]
    fn out_of_range_values_are_clamped_not_dropped() {
        let mut h = Latency::default();
        h.record(Duration::ZERO);
        h.record(Duration::from_secs(10 * 3600));
        assert_eq!(h.len(), 2);
        assert!(h.summary().max_ms >= 3_599_000.0);
    }

    #[test]
    fn metrics_merge_errors_and_reset() {
        let m = Metrics::default();
        let mut l = Latency::default();
        l.record(us(500));
        m.merge(Kind::Write, &l);
        m.merge(Kind::Write, &l);
        m.error("409");
        m.error("409");
        m.error("connect");
        assert_eq!(m.latency(Kind::Write).len(), 2);
        assert_eq!(m.take_recent().get(&Kind::Write).unwrap().len(), 2);
        assert!(m.take_recent().is_empty());
        assert_eq!(m.errors().get("409"), Some(&2));
        assert_eq!(m.snapshot().errors, 3);
        m.reset();
        assert!(m.latency(Kind::Write).is_empty());
        assert!(m.errors().is_empty());
        assert_eq!(m.snapshot().errors, 0);
    }

    #[test]
    fn raw_values_record_like_a_merged_histogram() {
        let m = Metrics::default();
        let mut l = Latency::default();
        for v in [3, 500, 70_000] {
            l.record_us(v);
        }
        m.merge(Kind::WriteToWatch, &l);
        let n = Metrics::default();
        n.record_us_many(Kind::WriteToWatch, &[3, 500, 70_000]);
        n.record_us_many(Kind::WriteToWatch, &[]);
        assert_eq!(m.latency(Kind::WriteToWatch).summary(), n.latency(Kind::WriteToWatch).summary());
        assert_eq!(n.take_recent().get(&Kind::WriteToWatch).unwrap().len(), 3);
    }

    #[test]
    fn sample_rates() {
        let a = CounterSnapshot { watch_events: 100, writes: 10, ..Default::default() };
        let b = CounterSnapshot { watch_events: 300, writes: 30, ..Default::default() };
        let s = Sample::between(2.0, 2.0, &a, &b, &BTreeMap::new());
        assert_eq!(s.watch_events_per_s, 100.0);
        assert_eq!(s.writes_per_s, 10.0);
        assert_eq!(s.write_p99_ms, 0.0);
    }
}
