//! The end of a run: the JSON result file, the Markdown summary (one column per target, with the
//! ratio when there are two) and an SVG plot (latency percentile curves and throughput over
//! time), written by hand (no plotting dependency).
//! With `--repeat N` the report holds every run, in the order run, and the table gives each
//! measure's median and min–max over a target's repeats, and the ratio of the medians.
//! Invariant: the Markdown and the SVG are computed only from the `Report` that goes into the
//! JSON file, so the three always agree.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::repeat::{group_by_name, ratio_of_medians, spread};
use crate::run::RunResult;
use crate::scenario::Scenario;

#[derive(Debug, Serialize)]
pub struct Report {
    pub loadgen_version: String,
    pub date_utc: String,
    pub command: Vec<String>,
    pub smoke: bool,
    pub machine: Machine,
    pub scenario: Scenario,
    /// Rounds run (`--repeat`, 1 by default): each target ran this many times, interleaved.
    pub repeats: usize,
    /// Every run, in the order run (round 1's targets, then round 2's, ...).
    pub runs: Vec<TargetRun>,
}

#[derive(Debug, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub kernel: String,
    pub memory_bytes: u64,
    /// `/proc/loadavg` when the report was written: other work on the machine skews results.
    pub load_average: String,
    pub loadgen_cpus: Vec<usize>,
    pub server_cpus: Option<Vec<usize>>,
    pub note: String,
}

#[derive(Debug, Serialize)]
pub struct TargetRun {
    /// Which round this run belongs to, from 1.
    pub repeat: usize,
    #[serde(flatten)]
    pub result: RunResult,
    pub server_cpu_s: Option<f64>,
    pub server_peak_rss_bytes: Option<u64>,
    /// Time the server's threads waited for a CPU while runnable (see `Spawned::run_queue_wait_s`).
    pub server_run_queue_wait_s: Option<f64>,
    /// loadgen's own CPU time during the run: near `measured_s` x its CPUs means loadgen, not
    /// the server, was the bottleneck.
    pub loadgen_cpu_s: f64,
}

impl Machine {
    pub fn here(loadgen_cpus: Vec<usize>, server_cpus: Option<Vec<usize>>) -> Machine {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
        let memory_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .map_or(0, |kib| kib * 1024);
        let shared = server_cpus.as_ref().is_some_and(|s| s.iter().any(|c| loadgen_cpus.contains(c)));
        let note = match (&server_cpus, shared) {
            (None, _) => "servers not started by loadgen; their placement is unknown".into(),
            (Some(_), true) => "loadgen and the servers share CPUs: numbers include their interference".into(),
            (Some(_), false) => "loadgen and the servers run on separate CPUs".into(),
        };
        // SAFETY: sysconf has no preconditions. (Not the affinity mask: loadgen is pinned by now.)
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        Machine { cpus, kernel, memory_bytes, load_average, loadgen_cpus, server_cpus, note }
    }
}

/// Writes `result.json`, `summary.md` and `plot.svg` into `dir`.
pub fn write_all(report: &Report, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("result.json"), serde_json::to_vec_pretty(report)?)?;
    std::fs::write(dir.join("summary.md"), markdown(report))?;
    std::fs::write(dir.join("plot.svg"), svg(report))?;
    Ok(())
}

fn lat(r: &RunResult, kind: &str, f: impl Fn(&crate::metrics::LatencySummary) -> f64) -> Option<f64> {
    r.latencies_ms.get(kind).map(f)
}

/// The rows of the side-by-side table: (label, one value per run, lower is better).
fn rows(report: &Report) -> Vec<(String, Vec<Option<f64>>, bool)> {
    let runs = &report.runs;
    let col = |f: &dyn Fn(&TargetRun) -> Option<f64>| runs.iter().map(f).collect::<Vec<_>>();
    let mut out: Vec<(String, Vec<Option<f64>>, bool)> = Vec::new();
    let s = &report.scenario;
    if s.watchers() > 0 {
        out.push(("watchers connected".into(), col(&|r| Some(r.result.watchers_connected as f64)), false));
        out.push((
            "watchers closed by the server".into(),
            col(&|r| Some(r.result.watchers_closed_by_server as f64)),
            true,
        ));
        out.push(("watcher connect time (s)".into(), col(&|r| Some(r.result.connect_s)), true));
        out.push(("watch connections".into(), col(&|r| Some(r.result.watch_connections as f64)), true));
        out.push(("watch events delivered /s".into(), col(&|r| Some(r.result.watch_events_per_s)), false));
        out.push(("watch MB/s received".into(), col(&|r| Some(r.result.watch_bytes_per_s / 1e6)), false));
        for (name, q) in [("p50", 0), ("p99", 1), ("p99.9", 2), ("max", 3)] {
            out.push((
                format!("write-to-watch latency {name} (ms)"),
                col(&|r| lat(&r.result, "write_to_watch", |l| [l.p50_ms, l.p99_ms, l.p999_ms, l.max_ms][q])),
                true,
            ));
        }
    }
    if s.writes.is_some() {
        out.push(("writes /s".into(), col(&|r| Some(r.result.writes_per_s)), false));
        out.push((
            "write latency p50 (ms, from intended start)".into(),
            col(&|r| lat(&r.result, "write", |l| l.p50_ms)),
            true,
        ));
        out.push((
            "write latency p99 (ms, from intended start)".into(),
            col(&|r| lat(&r.result, "write", |l| l.p99_ms)),
            true,
        ));
        out.push((
            "write service time p50 (ms, admitted attempt)".into(),
            col(&|r| lat(&r.result, "write_service", |l| l.p50_ms)),
            true,
        ));
        out.push((
            "write service time p99 (ms, admitted attempt)".into(),
            col(&|r| lat(&r.result, "write_service", |l| l.p99_ms)),
            true,
        ));
    }
    if s.list.is_some() {
        out.push(("list pages /s".into(), col(&|r| Some(r.result.list_pages_per_s)), false));
        out.push(("whole lists /s".into(), col(&|r| Some(r.result.lists_per_s)), false));
        out.push((
            "list MB/s".into(),
            col(&|r| Some(r.result.totals.list_bytes as f64 / r.result.measured_s / 1e6)),
            false,
        ));
        out.push((
            "list page latency p99 (ms, from first attempt)".into(),
            col(&|r| lat(&r.result, "list_page", |l| l.p99_ms)),
            true,
        ));
        out.push((
            "list page service time p99 (ms, admitted attempt)".into(),
            col(&|r| lat(&r.result, "list_page_service", |l| l.p99_ms)),
            true,
        ));
        out.push(("whole list latency p99 (ms)".into(), col(&|r| lat(&r.result, "list_whole", |l| l.p99_ms)), true));
    }
    out.push(("errors".into(), col(&|r| Some(r.result.totals.errors as f64)), true));
    out.push((
        "429 (or 5xx with Retry-After) responses".into(),
        col(&|r| Some(r.result.totals.throttled as f64)),
        true,
    ));
    out.push(("requests retried after waiting".into(), col(&|r| Some(r.result.totals.retries as f64)), true));
    out.push((
        "requests given up (out of retries)".into(),
        col(&|r| Some(r.result.totals.retries_exhausted as f64)),
        true,
    ));
    out.push(("time spent waiting to retry (s, all clients)".into(), col(&|r| Some(r.result.totals.backoff_s)), true));
    out.push(("refusal latency p99 (ms)".into(), col(&|r| lat(&r.result, "throttled", |l| l.p99_ms)), true));
    out.push(("server CPU time (s)".into(), col(&|r| r.server_cpu_s), true));
    out.push(("server waiting for a CPU (s)".into(), col(&|r| r.server_run_queue_wait_s), true));
    out.push((
        "server peak RSS (MiB)".into(),
        col(&|r| r.server_peak_rss_bytes.map(|b| b as f64 / (1 << 20) as f64)),
        true,
    ));
    out.push((
        "server CPU busy while measuring (% of its CPUs)".into(),
        col(&|r| r.result.server_cpu_busy.map(|b| 100.0 * b)),
        false,
    ));
    out.push((
        "server waiting for a CPU while measuring (% of its CPUs)".into(),
        col(&|r| r.result.server_cpu_waiting.map(|b| 100.0 * b)),
        true,
    ));
    out.push((
        "loadgen CPU busy while measuring (% of its CPUs)".into(),
        col(&|r| Some(100.0 * r.result.loadgen_cpu_busy)),
        true,
    ));
    out.push((
        "loadgen waiting for a CPU while measuring (% of its CPUs)".into(),
        col(&|r| Some(100.0 * r.result.loadgen_cpu_waiting)),
        true,
    ));
    out.push((
        "loadgen CPU in user space while measuring (s)".into(),
        col(&|r| Some(r.result.loadgen_cpu_user_s)),
        true,
    ));
    out.push((
        "loadgen CPU in the kernel while measuring (s)".into(),
        col(&|r| Some(r.result.loadgen_cpu_system_s)),
        true,
    ));
    if s.watchers() > 0 {
        out.push((
            "watch events per loadgen CPU-second".into(),
            col(&|r| r.result.watch_events_per_loadgen_cpu_s),
            false,
        ));
        out.push((
            "bytes unread in loadgen's sockets (MiB, median second)".into(),
            col(&|r| r.result.socket_backlog_median_bytes.map(|b| b as f64 / (1 << 20) as f64)),
            true,
        ));
    }
    out.push((
        "loadgen CPU busy (% of its CPUs, whole run)".into(),
        col(&|r| Some(100.0 * r.loadgen_cpu_s / (r.result.whole_s * report.machine.loadgen_cpus.len().max(1) as f64))),
        true,
    ));
    out
}

fn fmt(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v == v.trunc() && v.abs() < 1e12 => format!("{v:.0}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The side-by-side table (also printed on stdout at the end of a run): one column per target;
/// with repeats, each cell is the median and the min–max over the target's runs.
pub fn table(report: &Report) -> String {
    if report.repeats > 1 {
        repeated_table(report)
    } else {
        runs_table(report)
    }
}

/// One column per run (the whole table without repeats; the detail with them).
fn runs_table(report: &Report) -> String {
    let runs = &report.runs;
    let mut t = String::new();
    let two = runs.len() == 2 && report.repeats <= 1;
    let _ = write!(t, "| {} |", report.scenario.name);
    for r in runs {
        if report.repeats > 1 {
            let _ = write!(t, " {} #{} |", r.result.target, r.repeat);
        } else {
            let _ = write!(t, " {} |", r.result.target);
        }
    }
    if two {
        let _ = write!(t, " {} / {} |", runs[0].result.target, runs[1].result.target);
    }
    t.push('\n');
    t.push_str(&"| --- ".repeat(1 + runs.len() + two as usize));
    t.push_str("|\n");
    for (label, values, _) in rows(report) {
        let _ = write!(t, "| {label} |");
        for v in &values {
            let _ = write!(t, " {} |", fmt(*v));
        }
        if two {
            let ratio = match (values[0], values[1]) {
                (Some(a), Some(b)) if b != 0.0 => format!("{:.2}×", a / b),
                _ => "–".into(),
            };
            let _ = write!(t, " {ratio} |");
        }
        t.push('\n');
    }
    t
}

/// One column per target: median (min–max) over its repeats; with two targets, the ratio of
/// their medians.
fn repeated_table(report: &Report) -> String {
    let targets = group_by_name(report.runs.iter().map(|r| r.result.target.as_str()));
    let two = targets.len() == 2;
    let mut t = String::new();
    let _ = write!(t, "| {} (median (min–max) of {} runs) |", report.scenario.name, report.repeats);
    for (name, _) in &targets {
        let _ = write!(t, " {name} |");
    }
    if two {
        let _ = write!(t, " {} / {} (medians) |", targets[0].0, targets[1].0);
    }
    t.push('\n');
    t.push_str(&"| --- ".repeat(1 + targets.len() + two as usize));
    t.push_str("|\n");
    for (label, values, _) in rows(report) {
        let _ = write!(t, "| {label} |");
        let spreads: Vec<_> =
            targets.iter().map(|(_, runs)| spread(&runs.iter().map(|&i| values[i]).collect::<Vec<_>>())).collect();
        for s in &spreads {
            let cell = match s {
                None => "–".to_string(),
                Some(s) if s.min == s.max => fmt(Some(s.median)),
                Some(s) => format!("{} ({}–{})", fmt(Some(s.median)), fmt(Some(s.min)), fmt(Some(s.max))),
            };
            let _ = write!(t, " {cell} |");
        }
        if two {
            let ratio = ratio_of_medians(spreads[0], spreads[1]).map_or("–".into(), |r| format!("{r:.2}×"));
            let _ = write!(t, " {ratio} |");
        }
        t.push('\n');
    }
    t
}

pub fn markdown(report: &Report) -> String {
    let mut md = String::new();
    let s = &report.scenario;
    let _ = writeln!(md, "# loadgen: {}{}\n", s.name, if report.smoke { " (smoke)" } else { "" });
    let _ = writeln!(md, "- date (UTC): {}", report.date_utc);
    let _ = writeln!(md, "- command: `{}`", report.command.join(" "));
    let m = &report.machine;
    let _ = writeln!(
        md,
        "- machine: {} CPUs, {:.1} GiB, Linux {}, load average {} at the end; loadgen on CPUs {:?}, servers on {} ({})",
        m.cpus,
        m.memory_bytes as f64 / (1u64 << 30) as f64,
        m.kernel,
        m.load_average,
        m.loadgen_cpus,
        m.server_cpus.as_ref().map_or("unknown CPUs".to_string(), |c| format!("CPUs {c:?}")),
        m.note
    );
    let _ = writeln!(
        md,
        "- scenario: seed {}, {} s measured, {} pods preloaded ({} B each) in {} namespaces on {} nodes, {} watchers",
        s.seed,
        s.duration_s,
        s.objects.pods,
        s.objects.pod_bytes,
        s.objects.namespaces,
        s.objects.nodes,
        s.watchers()
    );
    md.push('\n');
    md.push_str(&table(report));
    md.push('\n');
    if report.repeats > 1 {
        let _ = writeln!(
            md,
            "Targets ran interleaved, {} rounds ({} runs in all, each with a fresh spawned server). Every run, in the order run:\n",
            report.repeats,
            report.runs.len()
        );
        md.push_str(&runs_table(report));
        md.push('\n');
    }
    md.push_str(&findings(report));
    for r in &report.runs {
        if !r.result.errors.is_empty() {
            let _ = writeln!(md, "Errors at {}: {:?}\n", r.result.target, r.result.errors);
        }
    }
    md.push_str("Latencies are HdrHistogram percentiles; write latency is measured from each write's intended start (coordinated omission corrected), service time from its actual send.\n");
    md
}

/// What the reader must know before trusting the table, one line per run (also printed at the
/// end of a run): whether loadgen, not the server, was the bottleneck, and how watches were
/// spread over connections (and the server's per-connection stream limit).
pub fn findings(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.runs {
        let res = &r.result;
        let name = if report.repeats > 1 { format!("{} #{}", res.target, r.repeat) } else { res.target.clone() };
        if let Some(who) = &res.starved {
            let _ = writeln!(
                out,
                "- **{name}: other work on the machine took the CPUs**: {who}; the numbers say more about the machine than about loadgen or the server.",
            );
        }
        if res.watchers_requested == 0 {
            continue;
        }
        match &res.loadgen_limited {
            Some(why) => {
                let advice = if res.starved.is_some() {
                    "run again on a machine with nothing else on loadgen's and the server's CPUs"
                } else {
                    "give loadgen more CPUs (`--cpus`) or fewer watchers"
                };
                let _ = writeln!(
                    out,
                    "- **{name}: loadgen, not the server, was the bottleneck**: {why}. The watch numbers are loadgen's ceiling, not the server's: {advice}.",
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "- {name}: loadgen kept up (its CPUs {:.0} % busy{}; median bytes unread in its sockets {}).",
                    100.0 * res.loadgen_cpu_busy,
                    res.server_cpu_busy.map_or(String::new(), |s| format!(", the server's {:.0} %", 100.0 * s)),
                    res.socket_backlog_median_bytes
                        .map_or("unknown".to_string(), |b| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)),
                );
            }
        }
        let _ = writeln!(
            out,
            "- {name}: {} of {} watchers connected over {} connections ({} streams per connection at most; the server allows {}).",
            res.watchers_connected,
            res.watchers_requested,
            res.watch_connections,
            res.streams_per_connection,
            res.server_max_concurrent_streams
                .map_or("any number per HTTP/2 connection, or HTTP/2 is off".to_string(), |m| m.to_string()),
        );
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

const COLORS: &[&str] = &["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// Two panels: latency percentile curves (log-log: nines on x, ms on y) and throughput over time.
pub fn svg(report: &Report) -> String {
    let (w, h) = (1000.0, 420.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>"#
    );
    let _ = write!(s, r#"<text x="10" y="20" font-size="15">loadgen: {}</text>"#, xml(&report.scenario.name));

    // Left: percentile curves.
    let (x0, y0, pw, ph) = (70.0, 50.0, 400.0, 310.0);
    // One colour per target (repeats of a target share it).
    let targets = group_by_name(report.runs.iter().map(|r| r.result.target.as_str()));
    let colour_of = |run: usize| targets.iter().position(|(_, runs)| runs.contains(&run)).unwrap_or(0);
    let name_of = |r: &TargetRun| {
        if report.repeats > 1 {
            format!("{} #{}", r.result.target, r.repeat)
        } else {
            r.result.target.clone()
        }
    };
    let mut curves = Vec::new();
    for (i, r) in report.runs.iter().enumerate() {
        let i = colour_of(i);
        for (kind, dash) in [("write_to_watch", ""), ("write", "6,3"), ("list_page", "2,2")] {
            if let Some(l) = r.result.latencies_ms.get(kind) {
                curves.push((i, format!("{} {kind}", name_of(r)), dash, l.curve.clone()));
            }
        }
    }
    let nines = |p: f64| (-(1.0 - (p / 100.0).min(0.99999)).log10()).clamp(0.0, 5.0);
    let max_ms = curves.iter().flat_map(|c| c.3.iter().map(|p| p.1)).fold(1.0f64, f64::max);
    let min_ms =
        curves.iter().flat_map(|c| c.3.iter().map(|p| p.1)).filter(|&v| v > 0.0).fold(max_ms, f64::min).max(0.001);
    let (ly0, ly1) = (min_ms.log10().floor(), max_ms.log10().ceil().max(min_ms.log10().floor() + 1.0));
    let px = |p: f64| x0 + nines(p) / 5.0 * pw;
    let py = |ms: f64| y0 + ph - (ms.max(min_ms).log10() - ly0) / (ly1 - ly0) * ph;
    axes(&mut s, x0, y0, pw, ph, "latency by percentile", "percentile", "ms");
    for (k, label) in ["0", "90", "99", "99.9", "99.99", "99.999"].iter().enumerate() {
        let x = x0 + k as f64 / 5.0 * pw;
        let _ = write!(s, r#"<text x="{x}" y="{}" text-anchor="middle">{label}</text>"#, y0 + ph + 15.0);
    }
    let mut e = ly0;
    while e <= ly1 {
        let y = y0 + ph - (e - ly0) / (ly1 - ly0) * ph;
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            x0 + pw,
            x0 - 4.0,
            y + 4.0,
            fmt(Some(10f64.powf(e)))
        );
        e += 1.0;
    }
    for (n, (i, label, dash, curve)) in curves.iter().enumerate() {
        let pts: Vec<String> = curve.iter().map(|&(p, ms)| format!("{:.1},{:.1}", px(p), py(ms))).collect();
        let c = COLORS[i % COLORS.len()];
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            pts.join(" ")
        );
        legend(&mut s, x0 + 10.0, y0 + 15.0 + n as f64 * 15.0, c, dash, label);
    }

    // Right: throughput over time.
    let (x0, pw) = (570.0, 400.0);
    axes(&mut s, x0, y0, pw, ph, "throughput over time", "seconds", "per second");
    let mut lines = Vec::new();
    for (i, r) in report.runs.iter().enumerate() {
        let i = colour_of(i);
        let series = &r.result.series;
        if report.scenario.watchers() > 0 {
            lines.push((
                i,
                format!("{} watch events/s", name_of(r)),
                "",
                series.iter().map(|p| (p.t_s, p.watch_events_per_s)).collect::<Vec<_>>(),
            ));
        }
        if report.scenario.writes.is_some() {
            lines.push((
                i,
                format!("{} writes/s", name_of(r)),
                "6,3",
                series.iter().map(|p| (p.t_s, p.writes_per_s)).collect(),
            ));
        }
        if report.scenario.list.is_some() {
            lines.push((
                i,
                format!("{} list pages/s", name_of(r)),
                "2,2",
                series.iter().map(|p| (p.t_s, p.list_pages_per_s)).collect(),
            ));
        }
    }
    let tmax = lines.iter().flat_map(|l| l.3.iter().map(|p| p.0)).fold(1.0f64, f64::max);
    let vmax = lines.iter().flat_map(|l| l.3.iter().map(|p| p.1)).fold(1.0f64, f64::max) * 1.1;
    for k in 0..=4 {
        let v = vmax * k as f64 / 4.0;
        let y = y0 + ph - ph * k as f64 / 4.0;
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            x0 + pw,
            x0 - 4.0,
            y + 4.0,
            fmt(Some(v.round()))
        );
        let t = tmax * k as f64 / 4.0;
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{t:.0}</text>"#,
            x0 + pw * k as f64 / 4.0,
            y0 + ph + 15.0
        );
    }
    for (n, (i, label, dash, pts)) in lines.iter().enumerate() {
        let c = COLORS[*i % COLORS.len()];
        let p: Vec<String> =
            pts.iter().map(|&(t, v)| format!("{:.1},{:.1}", x0 + t / tmax * pw, y0 + ph - v / vmax * ph)).collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            p.join(" ")
        );
        legend(&mut s, x0 + 10.0, y0 + 15.0 + n as f64 * 15.0, c, dash, label);
    }
    s.push_str("</svg>\n");
    s
}

#[allow(clippy::too_many_arguments)]
fn axes(s: &mut String, x0: f64, y0: f64, pw: f64, ph: f64, title: &str, xl: &str, yl: &str) {
    let _ = write!(
        s,
        r#"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="black"/><text x="{}" y="{}" text-anchor="middle" font-size="13">{title}</text><text x="{}" y="{}" text-anchor="middle">{xl}</text><text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">{yl}</text>"#,
        x0 + pw / 2.0,
        y0 - 8.0,
        x0 + pw / 2.0,
        y0 + ph + 32.0,
        x0 - 50.0,
        y0 + ph / 2.0,
        x0 - 50.0,
        y0 + ph / 2.0
    );
}

fn legend(s: &mut String, x: f64, y: f64, color: &str, dash: &str, label: &str) {
    let _ = write!(
        s,
        r#"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{}</text>"#,
        x + 20.0,
        x + 25.0,
        y + 4.0,
        xml(label)
    );
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Latency, Sample};

    fn run(name: &str, scale: f64) -> TargetRun {
        run_in(name, scale, 1)
    }

    fn run_in(name: &str, scale: f64, repeat: usize) -> TargetRun {
        let mut h = Latency::default();
        for i in 1..=100u64 {
            h.record(std::time::Duration::from_micros((i as f64 * 100.0 * scale) as u64));
        }
        let series = (1..=3)
            .map(|t| Sample {
                t_s: t as f64,
                watch_events_per_s: 100.0 * scale,
                watch_bytes_per_s: 0.0,
                writes_per_s: 10.0,
                list_pages_per_s: 0.0,
                errors_per_s: 0.0,
                write_to_watch_p99_ms: 1.0,
                write_p99_ms: 1.0,
                loadgen_cpu_busy: Some(0.5),
                server_cpu_busy: Some(0.5),
                socket_backlog_bytes: Some(0),
            })
            .collect();
        TargetRun {
            repeat,
            result: RunResult {
                target: name.into(),
                flavor: "kube".into(),
                url: "http://x".into(),
                preload_pods: 0,
                preload_s: 0.0,
                watchers_requested: 2,
                watchers_connected: 2,
                watchers_closed_by_server: 0,
                connect_s: 0.1,
                measured_s: 3.0,
                whole_s: 4.0,
                totals: Default::default(),
                watch_events_per_s: 100.0 * scale,
                watch_bytes_per_s: 0.0,
                writes_per_s: 10.0,
                list_pages_per_s: 0.0,
                lists_per_s: 0.0,
                latencies_ms: [("write_to_watch".to_string(), h.summary())].into_iter().collect(),
                errors: Default::default(),
                watch_connections: 1,
                server_max_concurrent_streams: Some(1000),
                streams_per_connection: 500,
                loadgen_cpu_busy: 0.5,
                loadgen_cpu_waiting: 0.0,
                loadgen_cpu_user_s: 0.4,
                loadgen_cpu_system_s: 0.1,
                watch_events_per_loadgen_cpu_s: Some(200.0 * scale),
                server_cpu_busy: Some(0.5),
                server_cpu_waiting: Some(0.0),
                starved: None,
                socket_backlog_median_bytes: Some(0),
                socket_backlog_max_bytes: Some(0),
                loadgen_limited: None,
                series,
            },
            server_cpu_s: Some(1.5),
            server_peak_rss_bytes: None,
            server_run_queue_wait_s: None,
            loadgen_cpu_s: 1.0,
        }
    }

    #[test]
    fn table_has_a_ratio_column_and_the_svg_both_panels() {
        let text = "version = 1\nname = \"k\"\nduration_s = 3\n[objects]\nnodes = 2\n[kubelets]\nwatchers = 2\n[writes]\nrate_per_s = 10\n";
        let report = Report {
            loadgen_version: "0".into(),
            date_utc: "now".into(),
            command: vec!["loadgen".into()],
            smoke: true,
            machine: Machine::here(vec![1], Some(vec![0])),
            scenario: crate::scenario::parse(text, false, &[]).unwrap(),
            repeats: 1,
            runs: vec![run("shardline", 1.0), run("etcd", 2.0)],
        };
        let t = table(&report);
        assert!(t.lines().next().unwrap().contains("shardline / etcd"), "{t}");
        let row = t.lines().find(|l| l.starts_with("| watch events delivered")).unwrap();
        assert!(row.ends_with("| 100 | 200 | 0.50× |"), "{row}");
        let svg = svg(&report);
        assert_eq!(svg.matches("<polyline").count(), 2 + 4, "two latency curves, two lines per target");
        assert!(svg.contains("shardline write_to_watch") && svg.contains("etcd writes/s"));
        let dir = tempfile::tempdir().unwrap();
        write_all(&report, dir.path()).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("result.json")).unwrap()).unwrap();
        assert_eq!(json["runs"][1]["target"], "etcd");
        assert!(std::fs::read_to_string(dir.path().join("summary.md")).unwrap().contains("0.50×"));
    }

    #[test]
    fn the_summary_says_when_loadgen_was_the_bottleneck_and_how_many_connections() {
        let text = "version = 1\nname = \"i\"\nduration_s = 3\n[informers]\nwatchers = 2\n[writes]\nrate_per_s = 10\n";
        let mut limited = run("shardline", 1.0);
        limited.result.loadgen_cpu_busy = 0.97;
        let share = |busy| crate::bottleneck::CpuShare { busy, waiting: 0.0 };
        limited.result.loadgen_limited = crate::bottleneck::loadgen_limited(share(0.97), Some(share(0.4)), Some(0));
        limited.result.starved = Some("the server waited for a CPU 20 % of the time".into());
        limited.result.watch_connections = 4;
        limited.result.server_max_concurrent_streams = Some(10);
        limited.result.streams_per_connection = 10;
        let report = Report {
            loadgen_version: "0".into(),
            date_utc: "now".into(),
            command: vec!["loadgen".into()],
            smoke: false,
            machine: Machine::here(vec![1], Some(vec![0])),
            scenario: crate::scenario::parse(text, false, &[]).unwrap(),
            repeats: 1,
            runs: vec![limited, run("etcd", 1.0)],
        };
        let md = markdown(&report);
        assert!(md.contains("**shardline: loadgen, not the server, was the bottleneck**: its CPUs were 97 % busy while the server's were 40 % busy"), "{md}");
        assert!(md.contains("- etcd: loadgen kept up (its CPUs 50 % busy, the server's 50 %"), "{md}");
        assert!(md.contains("2 of 2 watchers connected over 4 connections (10 streams per connection at most; the server allows 10)"), "{md}");
        assert!(!findings(&report).contains("etcd: loadgen, not the server"));
        assert!(md.contains("**shardline: other work on the machine took the CPUs**: the server waited"), "{md}");
        assert!(!md.contains("etcd: other work"), "{md}");
        let row = table(&report).lines().find(|l| l.starts_with("| watch connections")).map(str::to_string);
        assert_eq!(row.as_deref(), Some("| watch connections | 4 | 1 | 4.00× |"));
    }

    #[test]
    fn repeated_runs_give_median_spread_and_ratio_of_medians() {
        let text = "version = 1\nname = \"k\"\nduration_s = 3\n[objects]\nnodes = 2\n[kubelets]\nwatchers = 2\n[writes]\nrate_per_s = 10\n";
        // Interleaved as loadgen runs them; events/s: shardline 100, 300, 200; etcd 400, 400, 800.
        let runs = vec![
            run_in("shardline", 1.0, 1),
            run_in("etcd", 4.0, 1),
            run_in("shardline", 3.0, 2),
            run_in("etcd", 4.0, 2),
            run_in("shardline", 2.0, 3),
            run_in("etcd", 8.0, 3),
        ];
        let report = Report {
            loadgen_version: "0".into(),
            date_utc: "now".into(),
            command: vec!["loadgen".into()],
            smoke: true,
            machine: Machine::here(vec![1], Some(vec![0])),
            scenario: crate::scenario::parse(text, false, &[]).unwrap(),
            repeats: 3,
            runs,
        };
        let t = table(&report);
        let header = t.lines().next().unwrap();
        assert!(
            header.contains("of 3 runs") && header.contains("| shardline | etcd | shardline / etcd (medians) |"),
            "{t}"
        );
        let row = t.lines().find(|l| l.starts_with("| watch events delivered")).unwrap();
        // Ratio of medians 200 / 400, not of means (200 / 533).
        assert!(row.ends_with("| 200 (100–300) | 400 (400–800) | 0.50× |"), "{row}");
        // A measure equal in every run shows one number.
        let row = t.lines().find(|l| l.starts_with("| writes /s")).unwrap();
        assert!(row.ends_with("| 10 | 10 | 1.00× |"), "{row}");
        let md = markdown(&report);
        assert!(md.contains("3 rounds (6 runs in all"), "{md}");
        assert!(md.contains("| shardline #1 | etcd #1 | shardline #2 | etcd #2 | shardline #3 | etcd #3 |"), "{md}");
        let svg = svg(&report);
        // Repeats of a target share its colour.
        assert_eq!(svg.matches(COLORS[0]).count(), svg.matches(COLORS[1]).count());
        assert!(svg.contains("etcd #3 writes/s"));
        assert!(!svg.contains(COLORS[2]));
    }
}
