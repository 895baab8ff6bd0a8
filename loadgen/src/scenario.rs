//! Scenario files: parsing, overrides (`[smoke]`, `--set`) and validation.
//!
//! A scenario is a versioned TOML file. It preloads pods, then runs its workloads (kubelets,
//! informers, list storm, writes; a "mixed" scenario simply has several) together for
//! `duration_s`. Every field is documented in `loadgen/README.md`.
//! Invariant: a `Scenario` that `validate()` accepted has counts and rates that the runner can
//! use without further checks (no zero divisors, no empty node set for node watchers).

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The scenario file format this build reads.
pub const SCENARIO_VERSION: u32 = 1;

/// Upper bounds on what one scenario may ask for: they protect the load generator itself
/// (memory per watcher, open files), not the server under test.
pub const WATCHERS_MAX: u64 = 200_000;
pub const POD_BYTES_MAX: u64 = 1_000_000;
pub const DURATION_S_MAX: f64 = 86_400.0;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub version: u32,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Seed of every random choice (pod placement, operation mix, object picks).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Measurement time, after preload and after every watcher is connected.
    pub duration_s: f64,
    #[serde(default)]
    pub objects: Objects,
    #[serde(default)]
    pub connection: Connection,
    /// What clients do with 429 and `Retry-After` (client-go's behaviour by default).
    #[serde(default)]
    pub client: crate::retry::RetryPolicy,
    pub kubelets: Option<Kubelets>,
    pub informers: Option<Informers>,
    pub list: Option<ListStorm>,
    pub writes: Option<Writes>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Objects {
    /// Namespaces the pods are spread over (`loadgen-0` ...).
    #[serde(default = "default_namespaces")]
    pub namespaces: u64,
    /// Nodes pods are scheduled on (`spec.nodeName = node-<i>`).
    #[serde(default = "default_nodes")]
    pub nodes: u64,
    /// Pods created before the measurement starts.
    #[serde(default)]
    pub pods: u64,
    /// Approximate encoded size of one pod (padded with an annotation).
    #[serde(default = "default_pod_bytes")]
    pub pod_bytes: u64,
    /// Creates in flight during preload.
    #[serde(default = "default_preload_concurrency")]
    pub preload_concurrency: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// HTTP/2 (TLS ALPN `h2`, or h2c prior knowledge on plain HTTP) instead of HTTP/1.1.
    #[serde(default = "default_true")]
    pub http2: bool,
    /// Watch streams multiplexed over one HTTP/2 connection.
    #[serde(default = "default_streams_per_connection")]
    pub streams_per_connection: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Kubelets {
    /// Node watchers: watcher i watches `pods?fieldSelector=spec.nodeName=node-<i>`.
    /// At most `objects.nodes`.
    pub watchers: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Informers {
    /// Watchers of all pods in all namespaces.
    pub watchers: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ListStorm {
    /// Clients listing all pods in all namespaces, back to back.
    pub clients: u64,
    /// Page size; 0 lists without `limit` (one response).
    #[serde(default = "default_limit")]
    pub limit: u64,
    /// Accept header of list requests (`application/json`,
    /// `application/vnd.kubernetes.protobuf`, ...).
    #[serde(default = "default_accept")]
    pub accept: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Writes {
    /// Target operations per second over all writers; 0 = as fast as the writers can.
    pub rate_per_s: f64,
    /// Writers (each with its own connection and requests in flight one at a time).
    #[serde(default = "default_write_concurrency")]
    pub concurrency: u64,
    /// Relative weights of creates, updates and deletes.
    #[serde(default = "default_one")]
    pub create_weight: u32,
    #[serde(default = "default_update_weight")]
    pub update_weight: u32,
    #[serde(default = "default_one")]
    pub delete_weight: u32,
}

fn default_seed() -> u64 {
    1
}
fn default_namespaces() -> u64 {
    10
}
fn default_nodes() -> u64 {
    100
}
fn default_pod_bytes() -> u64 {
    1500
}
fn default_preload_concurrency() -> u64 {
    32
}
fn default_true() -> bool {
    true
}
fn default_streams_per_connection() -> u64 {
    500
}
fn default_limit() -> u64 {
    500
}
fn default_accept() -> String {
    "application/json".into()
}
fn default_write_concurrency() -> u64 {
    16
}
fn default_one() -> u32 {
    1
}
fn default_update_weight() -> u32 {
    8
}

impl Default for Objects {
    fn default() -> Self {
        Objects {
            namespaces: default_namespaces(),
            nodes: default_nodes(),
            pods: 0,
            pod_bytes: default_pod_bytes(),
            preload_concurrency: default_preload_concurrency(),
        }
    }
}

impl Default for Connection {
    fn default() -> Self {
        Connection { http2: true, streams_per_connection: default_streams_per_connection() }
    }
}

/// Parses a scenario from TOML text. With `smoke`, the file's `[smoke]` table is merged over
/// the rest first; then each `key.path=value` of `sets` (a TOML value) is applied.
pub fn parse(text: &str, smoke: bool, sets: &[String]) -> Result<Scenario> {
    let mut root: toml::Table = toml::from_str(text).context("scenario is not valid TOML")?;
    let smoke_table = root.remove("smoke");
    if smoke {
        match smoke_table {
            Some(toml::Value::Table(t)) => merge(&mut root, t),
            Some(_) => bail!("[smoke] must be a table"),
            None => bail!("the scenario has no [smoke] variant"),
        }
    }
    for set in sets {
        apply_set(&mut root, set)?;
    }
    let scenario: Scenario = toml::Value::Table(root).try_into().context("scenario does not match the format")?;
    scenario.validate()?;
    Ok(scenario)
}

/// Deep-merges `over` into `base`: tables merge key by key, anything else replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Applies `a.b.c=VALUE`, VALUE parsed as a TOML value (a bare word is taken as a string).
fn apply_set(root: &mut toml::Table, set: &str) -> Result<()> {
    let (path, raw) = set.split_once('=').with_context(|| format!("--set {set:?}: expected KEY=VALUE"))?;
    let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").expect("parsed table has key v"),
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let parts: Vec<&str> = path.trim().split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        bail!("--set {set:?}: empty key segment");
    }
    let mut table = root;
    for part in &parts[..parts.len() - 1] {
        let entry = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => bail!("--set {set:?}: {part} is not a table"),
        };
    }
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

impl Scenario {
    /// Checks the parameters make sense together; errors name the field.
    pub fn validate(&self) -> Result<()> {
        if self.version != SCENARIO_VERSION {
            bail!("version {} is not supported (this loadgen reads version {SCENARIO_VERSION})", self.version);
        }
        if self.name.is_empty() {
            bail!("name must not be empty");
        }
        if !(self.duration_s > 0.0 && self.duration_s <= DURATION_S_MAX) {
            bail!("duration_s must be in (0, {DURATION_S_MAX}]");
        }
        let o = &self.objects;
        if o.namespaces == 0 || o.nodes == 0 {
            bail!("objects.namespaces and objects.nodes must be at least 1");
        }
        if o.pod_bytes < 200 || o.pod_bytes > POD_BYTES_MAX {
            bail!("objects.pod_bytes must be in [200, {POD_BYTES_MAX}]");
        }
        if o.preload_concurrency == 0 {
            bail!("objects.preload_concurrency must be at least 1");
        }
        self.client.validate()?;
        if self.connection.streams_per_connection == 0 {
            bail!("connection.streams_per_connection must be at least 1");
        }
        let mut any = false;
        if let Some(k) = &self.kubelets {
            any = true;
            if k.watchers == 0 || k.watchers > o.nodes {
                bail!("kubelets.watchers must be in [1, objects.nodes = {}]", o.nodes);
            }
        }
        if let Some(i) = &self.informers {
            any = true;
            if i.watchers == 0 {
                bail!("informers.watchers must be at least 1");
            }
        }
        let watchers =
            self.kubelets.as_ref().map_or(0, |k| k.watchers) + self.informers.as_ref().map_or(0, |i| i.watchers);
        if watchers > WATCHERS_MAX {
            bail!("{watchers} watchers in all: at most {WATCHERS_MAX}");
        }
        if let Some(l) = &self.list {
            any = true;
            if l.clients == 0 {
                bail!("list.clients must be at least 1");
            }
            if l.accept.trim().is_empty() {
                bail!("list.accept must not be empty");
            }
        }
        if let Some(w) = &self.writes {
            any = true;
            if !(w.rate_per_s >= 0.0 && w.rate_per_s.is_finite()) {
                bail!("writes.rate_per_s must be 0 (as fast as possible) or positive");
            }
            if w.concurrency == 0 {
                bail!("writes.concurrency must be at least 1");
            }
            if w.create_weight + w.update_weight + w.delete_weight == 0 {
                bail!("writes: at least one of create_weight, update_weight, delete_weight must be positive");
            }
        }
        if !any {
            bail!("the scenario has no workload: add [kubelets], [informers], [list] or [writes]");
        }
        Ok(())
    }

    /// Watch streams the scenario opens.
    pub fn watchers(&self) -> u64 {
        self.kubelets.as_ref().map_or(0, |k| k.watchers) + self.informers.as_ref().map_or(0, |i| i.watchers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBELETS: &str = r#"
version = 1
name = "kubelets"
duration_s = 60
[objects]
nodes = 5000
pods = 50000
[kubelets]
watchers = 5000
[writes]
rate_per_s = 200
[smoke]
duration_s = 2
objects = { nodes = 10, pods = 50 }
kubelets = { watchers = 10 }
"#;

    #[test]
    fn parses_with_defaults() {
        let s = parse(KUBELETS, false, &[]).unwrap();
        assert_eq!(s.objects.nodes, 5000);
        assert_eq!(s.objects.namespaces, 10);
        assert_eq!(s.kubelets.as_ref().unwrap().watchers, 5000);
        assert_eq!(s.writes.as_ref().unwrap().concurrency, 16);
        assert!(s.connection.http2);
        assert_eq!(s.seed, 1);
        // Clients honour Retry-After unless told otherwise, with client-go's retry bound.
        assert!(s.client.honour_retry_after);
        assert_eq!(s.client.max_retries, 10);
    }

    #[test]
    fn smoke_merges_over_the_base() {
        let s = parse(KUBELETS, true, &[]).unwrap();
        assert_eq!(s.duration_s, 2.0);
        assert_eq!(s.objects.nodes, 10);
        assert_eq!(s.objects.pods, 50);
        // Keys the smoke table does not name keep their base values.
        assert_eq!(s.objects.pod_bytes, 1500);
        assert_eq!(s.writes.as_ref().unwrap().rate_per_s, 200.0);
    }

    #[test]
    fn set_overrides_nested_keys() {
        let s = parse(KUBELETS, false, &["kubelets.watchers=100".into(), "objects.nodes=100".into(), "name=x".into()])
            .unwrap();
        assert_eq!(s.kubelets.unwrap().watchers, 100);
        assert_eq!(s.name, "x");
        assert!(parse(KUBELETS, false, &["nokey".into()]).is_err());
        assert!(parse(KUBELETS, false, &["duration_s.x=1".into()]).is_err());
    }

    #[test]
    fn refuses_bad_scenarios() {
        let cases: &[(&str, &str)] = &[
            ("version=2", "version"),
            ("kubelets.watchers=6000", "kubelets.watchers"),
            ("duration_s=0", "duration_s"),
            ("writes.rate_per_s=-1", "rate_per_s"),
            ("objects.pod_bytes=10", "pod_bytes"),
            ("connection.streams_per_connection=0", "streams_per_connection"),
            ("bogus=1", "format"),
            ("client.jitter=3", "client.jitter"),
            ("client.bogus=1", "format"),
        ];
        for (set, word) in cases {
            let err = format!("{:#}", parse(KUBELETS, false, &[set.to_string()]).unwrap_err());
            assert!(err.contains(word), "{set}: {err}");
        }
        let no_smoke = KUBELETS.split("[smoke]").next().unwrap();
        assert!(parse(no_smoke, true, &[]).is_err());
        let no_workload = "version = 1\nname = \"n\"\nduration_s = 1\n";
        assert!(format!("{:#}", parse(no_workload, false, &[]).unwrap_err()).contains("no workload"));
    }

    #[test]
    fn shipped_scenarios_parse_in_both_variants() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                parse(&text, false, &[]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                let smoke = parse(&text, true, &[]).unwrap_or_else(|e| panic!("{} smoke: {e:#}", path.display()));
                assert!(smoke.duration_s <= 5.0, "{}: smoke runs for seconds", path.display());
                n += 1;
            }
        }
        assert!(n >= 6, "expected the six scenarios, found {n}");
    }
}
