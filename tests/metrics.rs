//! `/metrics` of a real `shardline` process after a few requests: every
//! line parses as the Prometheus text format (a strict parser below: HELP
//! and TYPE before a family's samples, families not interleaved, no series
//! twice, histograms cumulative with `+Inf` equal to `_count`), kube-apiserver's
//! request metrics carry its labels and moved for the requests made (create,
//! get, list, watch), the watch was long-running while open and timed whole
//! when it ended, and the delivery, list-size, log and `process_*` metrics
//! moved with it. Requests to a resource nobody serves make no series.

mod common;

use common::watch::Watch;
use common::{configmap, Server};
use std::collections::{BTreeMap, BTreeSet};

const CM: &str = "/api/v1/namespaces/default/configmaps";

type Labels = BTreeMap<String, String>;

/// One parsed exposition: each family's type, and every sample.
#[derive(Debug, Default)]
struct Exposition {
    types: BTreeMap<String, String>,
    samples: Vec<(String, Labels, f64)>,
}

/// The family a sample belongs to (`x_bucket` of histogram `x` is `x`).
fn family_of<'a>(name: &'a str, types: &BTreeMap<String, String>) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if types.get(base).is_some_and(|t| t == "histogram") {
                return base;
            }
        }
    }
    name
}

fn is_name(s: &str, colons: bool) -> bool {
    let mut chars = s.chars();
    let first_ok = |c: char| c.is_ascii_alphabetic() || c == '_' || (colons && c == ':');
    chars.next().is_some_and(first_ok) && chars.all(|c| first_ok(c) || c.is_ascii_digit())
}

fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => s.parse().map_err(|_| format!("bad value {s:?}")),
    }
}

/// `{a="x",b="y"}` (after the name), returning the labels and the rest.
fn parse_labels(s: &str) -> Result<(Labels, &str), String> {
    let mut labels = Labels::new();
    let Some(mut rest) = s.strip_prefix('{') else { return Ok((labels, s)) };
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = rest.find('=').ok_or("a label without =")?;
        let name = &rest[..eq];
        if !is_name(name, false) {
            return Err(format!("bad label name {name:?}"));
        }
        rest = rest[eq + 1..].strip_prefix('"').ok_or("an unquoted label value")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next().ok_or("an unterminated label value")? {
                (i, '"') => break i,
                (_, '\\') => match chars.next().ok_or("a dangling escape")?.1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    c => return Err(format!("bad escape \\{c}")),
                },
                (_, c) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

/// A strict reading of the text format, version 0.0.4.
fn parse(text: &str) -> Result<Exposition, String> {
    let mut exposition = Exposition::default();
    let mut helps = BTreeSet::new();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut current: Option<String> = None;
    let mut series = BTreeSet::new();
    for (number, line) in text.lines().enumerate() {
        let context = |e: String| format!("line {}: {e}: {line:?}", number + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix("# ") {
            let mut words = comment.splitn(3, ' ');
            let (keyword, name) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            match keyword {
                "HELP" | "TYPE" => {
                    if !is_name(name, true) {
                        return Err(context(format!("bad metric name {name:?}")));
                    }
                    if current.as_deref() != Some(name) {
                        if finished.contains(name) {
                            return Err(context(format!("family {name} resumed after another")));
                        }
                        if let Some(previous) = current.replace(name.to_string()) {
                            finished.insert(previous);
                        }
                    }
                    if keyword == "HELP" && !helps.insert(name.to_string()) {
                        return Err(context("HELP twice".into()));
                    }
                    if keyword == "TYPE" {
                        let kind = words.next().unwrap_or("");
                        if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                            return Err(context(format!("bad type {kind:?}")));
                        }
                        if exposition.samples.iter().any(|(n, _, _)| family_of(n, &exposition.types) == name) {
                            return Err(context("TYPE after the family's samples".into()));
                        }
                        if exposition.types.insert(name.to_string(), kind.to_string()).is_some() {
                            return Err(context("TYPE twice".into()));
                        }
                    }
                }
                _ => {} // another comment
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).ok_or_else(|| context("no value".into()))?;
        let name = &line[..name_end];
        if !is_name(name, true) {
            return Err(context(format!("bad metric name {name:?}")));
        }
        let (labels, rest) = parse_labels(&line[name_end..]).map_err(context)?;
        let mut fields = rest.split(' ').filter(|f| !f.is_empty());
        let value = parse_value(fields.next().ok_or_else(|| context("no value".into()))?).map_err(context)?;
        if let Some(timestamp) = fields.next() {
            timestamp.parse::<i64>().map_err(|_| context("bad timestamp".into()))?;
        }
        if fields.next().is_some() {
            return Err(context("trailing fields".into()));
        }
        let family = family_of(name, &exposition.types).to_string();
        if current.as_deref() != Some(family.as_str()) {
            if finished.contains(&family) {
                return Err(context(format!("family {family} resumed after another")));
            }
            if let Some(previous) = current.replace(family.clone()) {
                finished.insert(previous);
            }
        }
        if !series.insert((name.to_string(), labels.clone())) {
            return Err(context("the same series twice".into()));
        }
        exposition.samples.push((name.to_string(), labels, value));
    }
    check_histograms(&exposition)?;
    Ok(exposition)
}

/// Every histogram series: buckets non-decreasing in `le`, ending at `+Inf`
/// with the `_count`, and a `_sum`.
fn check_histograms(exposition: &Exposition) -> Result<(), String> {
    for (family, _) in exposition.types.iter().filter(|(_, t)| *t == "histogram") {
        let mut buckets: BTreeMap<Labels, Vec<(f64, f64)>> = BTreeMap::new();
        for (name, labels, value) in &exposition.samples {
            if name == &format!("{family}_bucket") {
                let mut rest = labels.clone();
                let le = rest.remove("le").ok_or(format!("{family}_bucket without le"))?;
                buckets.entry(rest).or_default().push((parse_value(&le)?, *value));
            }
        }
        for (labels, series) in &buckets {
            let les: Vec<f64> = series.iter().map(|(le, _)| *le).collect();
            if les.windows(2).any(|w| w[0] >= w[1]) || les.last() != Some(&f64::INFINITY) {
                return Err(format!("{family}{labels:?}: buckets out of order or no +Inf: {les:?}"));
            }
            if series.windows(2).any(|w| w[0].1 > w[1].1) {
                return Err(format!("{family}{labels:?}: buckets not cumulative: {series:?}"));
            }
            let find = |suffix: &str| {
                exposition
                    .samples
                    .iter()
                    .find(|(n, l, _)| *n == format!("{family}{suffix}") && l == labels)
                    .map(|s| s.2)
            };
            let count = find("_count").ok_or(format!("{family}{labels:?}: no _count"))?;
            find("_sum").ok_or(format!("{family}{labels:?}: no _sum"))?;
            if series.last().map(|s| s.1) != Some(count) {
                return Err(format!("{family}{labels:?}: +Inf bucket is not _count {count}"));
            }
        }
    }
    Ok(())
}

impl Exposition {
    /// Samples of `name` whose labels include `labels`.
    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Vec<(&Labels, f64)> {
        self.samples
            .iter()
            .filter(|(n, l, _)| n == name && labels.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v)))
            .map(|(_, l, v)| (l, *v))
            .collect()
    }

    /// The one sample of `name` with exactly these labels (plus kube's
    /// `component`, and a histogram's `le` when given).
    fn one(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let found = self.find(name, labels);
        let exact: Vec<_> = found.iter().filter(|(l, _)| l.len() == labels.len()).collect();
        assert_eq!(exact.len(), 1, "one {name}{labels:?}, found {found:?}");
        exact[0].1
    }
}

fn scrape(s: &Server) -> (String, Exposition) {
    let r = s.get("/metrics");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("content-type").unwrap_or_default().starts_with("text/plain; version=0.0.4"));
    let text = r.text();
    let exposition = parse(&text).unwrap_or_else(|e| panic!("/metrics is not the Prometheus text format: {e}\n{text}"));
    (text, exposition)
}

/// kube-apiserver's request labels for a core-group resource.
fn request<'a>(verb: &'a str, resource: &'a str, scope: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("verb", verb),
        ("dry_run", ""),
        ("group", ""),
        ("version", "v1"),
        ("resource", resource),
        ("subresource", ""),
        ("scope", scope),
        ("component", "apiserver"),
    ]
}

/// The labels of `apiserver_longrunning_requests` (no `dry_run`).
fn long_running<'a>(verb: &'a str, resource: &'a str, scope: &'a str) -> Vec<(&'a str, &'a str)> {
    request(verb, resource, scope).into_iter().filter(|(name, _)| *name != "dry_run").collect()
}

fn with<'a>(mut labels: Vec<(&'a str, &'a str)>, name: &'a str, value: &'a str) -> Vec<(&'a str, &'a str)> {
    labels.push((name, value));
    labels
}

#[test]
fn request_watch_list_log_and_process_metrics_move_and_parse() {
    let s = Server::start();
    assert_eq!(s.post_json(CM, &configmap("first", &[("a", "1")])).status, 201);
    assert_eq!(s.get(&format!("{CM}/first")).status, 200);
    assert_eq!(s.get(&format!("{CM}/missing")).status, 404);
    assert_eq!(s.get(CM).status, 200);
    assert_eq!(s.get(&format!("{CM}?limit=1")).status, 200);
    // Nobody serves these: they are 404s and no series.
    assert_eq!(s.get("/api/v1/namespaces/default/nonsense").status, 404);
    assert_eq!(s.get("/apis/made.up/v1/things").status, 404);

    // A watch that ends by itself after a second, with one live event.
    let mut watch = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion=0&timeoutSeconds=1"));
    let (kind, name, _) = watch.next_event();
    assert_eq!((kind.as_str(), name.as_str()), ("ADDED", "first"), "the initial state");
    let (_, open) = scrape(&s);
    assert_eq!(open.one("apiserver_longrunning_requests", &long_running("WATCH", "configmaps", "namespace")), 1.0);
    assert_eq!(s.post_json(CM, &configmap("second", &[("b", "2")])).status, 201);
    let (kind, name, _) = watch.next_event();
    assert_eq!((kind.as_str(), name.as_str()), ("ADDED", "second"), "the live event");
    while watch.try_next().is_some() {}

    let (text, m) = scrape(&s);
    let total = "apiserver_request_total";
    assert_eq!(m.one(total, &with(request("POST", "configmaps", "resource"), "code", "201")), 2.0, "{text}");
    assert_eq!(m.one(total, &with(request("GET", "configmaps", "resource"), "code", "200")), 1.0, "{text}");
    assert_eq!(m.one(total, &with(request("GET", "configmaps", "resource"), "code", "404")), 1.0, "{text}");
    assert_eq!(m.one(total, &with(request("LIST", "configmaps", "namespace"), "code", "200")), 2.0, "{text}");
    // Counted when it ended (the server's timeout), and timed whole.
    assert_eq!(m.one(total, &with(request("WATCH", "configmaps", "namespace"), "code", "200")), 1.0, "{text}");
    let duration = "apiserver_request_duration_seconds";
    let watch_labels = request("WATCH", "configmaps", "namespace");
    assert!(m.one(&format!("{duration}_sum"), &watch_labels) >= 1.0, "the whole watch: {text}");
    assert_eq!(m.one(&format!("{duration}_count"), &watch_labels), 1.0, "{text}");
    assert_eq!(
        m.one("apiserver_longrunning_requests", &long_running("WATCH", "configmaps", "namespace")),
        0.0,
        "{text}"
    );
    assert_eq!(m.one(&format!("{duration}_count"), &request("LIST", "configmaps", "namespace")), 2.0, "{text}");
    // kube's buckets.
    let les: Vec<&str> = m
        .find(&format!("{duration}_bucket"), &request("POST", "configmaps", "resource"))
        .iter()
        .map(|(l, _)| l["le"].as_str())
        .collect();
    assert_eq!(
        les,
        [
            "0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25", "1.5", "2", "3", "4", "5", "6",
            "8", "10", "15", "20", "30", "45", "60", "+Inf"
        ]
    );
    assert!(!text.contains("nonsense") && !text.contains("made.up"), "an unserved target is no series: {text}");
    // Non-resource requests carry their path (the harness's readiness probes).
    assert!(
        m.one(
            total,
            &[
                ("verb", "GET"),
                ("dry_run", ""),
                ("group", ""),
                ("version", ""),
                ("resource", ""),
                ("subresource", "/readyz"),
                ("scope", ""),
                ("component", "apiserver"),
                ("code", "200")
            ]
        ) >= 1.0,
        "{text}"
    );

    // The live event was timed from its commit.
    assert!(m.one("shardline_watch_delivery_duration_seconds_count", &[]) >= 1.0, "{text}");
    // Two lists of one item each (only `first` existed then).
    let list_labels = [("group", ""), ("version", "v1"), ("resource", "configmaps")];
    assert_eq!(m.one("shardline_list_items_count", &list_labels), 2.0, "{text}");
    assert_eq!(m.one("shardline_list_items_sum", &list_labels), 2.0, "{text}");

    // Every committed append was timed, and the group commits' entries add
    // up to the log's revision (the bootstrap namespaces included).
    let committed = m.one("shardline_committed_revision", &[]);
    let log = [("log", "embedded")];
    assert_eq!(m.one("shardline_log_commit_duration_seconds_count", &log), committed, "{text}");
    assert_eq!(m.one("shardline_log_commit_batch_entries_sum", &log), committed, "{text}");
    assert!(m.one("shardline_log_commit_batch_entries_count", &log) >= 1.0, "{text}");

    // The process's own.
    assert_eq!(m.types["process_cpu_seconds_total"], "counter");
    assert!(m.one("process_cpu_seconds_total", &[]) > 0.0, "{text}");
    assert!(m.one("process_resident_memory_bytes", &[]) > 0.0, "{text}");
    assert!(m.one("process_virtual_memory_bytes", &[]) >= m.one("process_resident_memory_bytes", &[]), "{text}");
    let open_fds = m.one("process_open_fds", &[]);
    assert!(open_fds >= 3.0 && m.one("process_max_fds", &[]) >= open_fds, "{text}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let started = m.one("process_start_time_seconds", &[]);
    assert!(started > now - 3600.0 && started <= now + 1.0, "started within the test: {started} vs {now}");
}

#[test]
fn the_parser_refuses_what_the_format_forbids() {
    let good = "# HELP a_seconds x\n# TYPE a_seconds histogram\na_seconds_bucket{le=\"1\"} 1\na_seconds_bucket{le=\"+Inf\"} 2\na_seconds_sum 3\na_seconds_count 2\n# TYPE b counter\nb{x=\"q\\\"\"} 4\n";
    let parsed = parse(good).unwrap();
    assert_eq!(parsed.one("b", &[("x", "q\"")]), 4.0);
    for bad in [
        "# TYPE b counter\nb 1\nb 2\n",                             // a series twice
        "b 1\n# TYPE b counter\n",                                  // TYPE after samples
        "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n", // interleaved families
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", // not cumulative
        "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", // no +Inf
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n", // +Inf is not the count
        "b{x=unquoted} 1\n",
        "b{x=\"1\",x=\"2\"} 1\n",
        "b 1 2 3\n",
        "1b 1\n",
        "b one\n",
    ] {
        assert!(parse(bad).is_err(), "accepted: {bad}");
    }
}
