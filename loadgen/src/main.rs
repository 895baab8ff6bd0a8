//! The `loadgen` command line: `loadgen run SCENARIO` against Kubernetes targets (`--kube URL`),
//! etcd targets (`--etcd URL`) or servers it starts itself (`--spawn shardline --spawn etcd`,
//! `--spawn shardline-etcd` for Shardline on the etcd log, `KIND:NAME=ARGS` for variants),
//! `loadgen validate SCENARIO...`, and `loadgen replay` (a stand-in server of endless watch
//! streams, for loadgen's own receive ceiling; `--spawn replay`). The client runtime (tokio, multi-threaded) is pinned to
//! `--cpus`, by default the CPUs the spawned servers are not pinned to.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use loadgen::bottleneck::process_cpu_s;
use loadgen::http::{ClientOptions, Endpoint};
use loadgen::repeat;
use loadgen::report::{self, Machine, Report, TargetRun};
use loadgen::run::Placement;
use loadgen::scenario;
use loadgen::spawn::{self, SpawnKind, SpawnSpec, Spawned};
use loadgen::target::{Flavor, Target};

#[derive(Parser)]
#[command(name = "loadgen", version, about = "Load generator for Kubernetes API servers and etcd")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario against one or more targets, one after the other.
    Run(Box<RunArgs>),
    /// Parse and validate scenario files (and their smoke variants).
    Validate { files: Vec<PathBuf> },
    /// Serve endless watch streams of realistic events on loopback, as fast as the client reads
    /// them, to measure loadgen's own receive ceiling (`--spawn replay` starts it).
    Replay(loadgen::replay::ReplayOptions),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Scenario files (TOML), e.g. loadgen/scenarios/kubelets.toml; run one after the other.
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Run the scenario's tiny [smoke] variant.
    #[arg(long)]
    smoke: bool,
    /// Override a scenario parameter, e.g. --set kubelets.watchers=1000 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// A Kubernetes API server: URL or NAME=URL (repeatable).
    #[arg(long = "kube", value_name = "[NAME=]URL")]
    kube: Vec<String>,
    /// An etcd (its JSON gRPC gateway): URL or NAME=URL (repeatable).
    #[arg(long = "etcd", value_name = "[NAME=]URL")]
    etcd: Vec<String>,
    /// Start this server locally on loopback and run against it (repeatable; order is kept):
    /// shardline or etcd, optionally named and with extra arguments, e.g.
    /// 'shardline:limited=--max-requests-inflight 4'.
    #[arg(long, value_name = "KIND[:NAME][=ARGS]")]
    spawn: Vec<SpawnSpec>,
    /// Bearer token for Kubernetes targets (never sent to etcd targets).
    #[arg(long)]
    token: Option<String>,
    /// File holding the bearer token.
    #[arg(long, conflicts_with = "token")]
    token_file: Option<PathBuf>,
    /// CA certificate (PEM) to verify https Kubernetes targets.
    #[arg(long)]
    ca: Option<String>,
    /// Client certificate (PEM) for https Kubernetes targets.
    #[arg(long, requires = "client_key")]
    client_cert: Option<String>,
    /// Client private key (PEM).
    #[arg(long, requires = "client_cert")]
    client_key: Option<String>,
    /// Do not verify https Kubernetes targets' certificates.
    #[arg(long)]
    insecure_skip_tls_verify: bool,
    /// CA certificate (PEM) to verify https etcd targets.
    #[arg(long)]
    etcd_ca: Option<String>,
    /// Client certificate (PEM) for https etcd targets.
    #[arg(long, requires = "etcd_client_key")]
    etcd_client_cert: Option<String>,
    /// Client private key (PEM) for https etcd targets.
    #[arg(long, requires = "etcd_client_cert")]
    etcd_client_key: Option<String>,
    /// Use HTTP/1.1 for Kubernetes targets (overrides the scenario's connection.http2).
    #[arg(long)]
    http1: bool,
    /// CPUs loadgen's threads run on, e.g. 2-3 (default: those not given to spawned servers).
    #[arg(long)]
    cpus: Option<String>,
    /// CPUs spawned servers are pinned to (default: the first half of the allowed CPUs).
    #[arg(long)]
    server_cpus: Option<String>,
    /// The shardline binary for --spawn (default: $SHARDLINE_BIN, beside loadgen, or PATH).
    #[arg(long)]
    shardline_bin: Option<PathBuf>,
    /// The etcd binary for --spawn (default: $ETCD, or PATH).
    #[arg(long)]
    etcd_bin: Option<PathBuf>,
    /// Run each (scenario, target) N times, targets interleaved (A B A B ...); the report gives
    /// each measure's median and min–max over the repeats and the ratio of the medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Where result.json, summary.md and plot.svg go (default: loadgen-results/NAME-DATE;
    /// with several scenarios, DIR/NAME).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Cmd::Validate { files } => validate(&files),
        Cmd::Run(args) => run(*args),
        Cmd::Replay(opts) => replay(opts),
    };
    if let Err(e) = code {
        eprintln!("loadgen: {e:#}");
        std::process::exit(1);
    }
}

/// `loadgen replay`: one thread (it is pinned by whoever starts it, `--spawn replay` to the
/// server CPUs).
fn replay(opts: loadgen::replay::ReplayOptions) -> Result<()> {
    raise_open_files_limit();
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(loadgen::replay::serve(opts))
}

fn validate(files: &[PathBuf]) -> Result<()> {
    if files.is_empty() {
        bail!("name at least one scenario file");
    }
    for f in files {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for smoke in [false, true] {
            let s = scenario::parse(&text, smoke, &[])
                .with_context(|| format!("{}{}", f.display(), if smoke { " [smoke]" } else { "" }))?;
            println!(
                "{}{}: ok ({}, {} watchers, {} s)",
                f.display(),
                if smoke { " [smoke]" } else { "" },
                s.name,
                s.watchers(),
                s.duration_s
            );
        }
    }
    Ok(())
}

fn named(spec: &str, default_name: &str) -> (String, String) {
    match spec.split_once('=') {
        Some((n, u)) if !n.contains("://") => (n.to_string(), u.to_string()),
        _ => (default_name.to_string(), spec.to_string()),
    }
}

/// Where a target comes from: a URL, or a server to start just before its run.
enum Source {
    Url(String),
    Spawn(SpawnSpec),
}

fn run(args: RunArgs) -> Result<()> {
    let mut scenarios = Vec::new();
    for path in &args.scenarios {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut scenario =
            scenario::parse(&text, args.smoke, &args.sets).with_context(|| path.display().to_string())?;
        if args.http1 {
            scenario.connection.http2 = false;
        }
        scenarios.push(scenario);
    }
    let mut targets: Vec<(String, Flavor, Source)> = Vec::new();
    for k in &args.kube {
        let (n, u) = named(k, "kube");
        targets.push((n, Flavor::Kube, Source::Url(u)));
    }
    for e in &args.etcd {
        let (n, u) = named(e, "etcd");
        targets.push((n, Flavor::Etcd, Source::Url(u)));
    }
    for s in &args.spawn {
        let flavor = match s.kind {
            SpawnKind::Shardline => Flavor::Kube,
            SpawnKind::Etcd => Flavor::Etcd,
            SpawnKind::ShardlineEtcd => Flavor::Kube,
            SpawnKind::Replay => Flavor::Kube,
        };
        targets.push((s.name.clone(), flavor, Source::Spawn(s.clone())));
    }
    for (i, (name, ..)) in targets.iter().enumerate() {
        if targets[..i].iter().any(|(n, ..)| n == name) {
            bail!("two targets are named {name:?}: name them, e.g. --spawn shardline:limited=ARGS");
        }
    }
    if targets.is_empty() {
        bail!("no target: give --kube URL, --etcd URL or --spawn shardline|etcd|shardline-etcd");
    }

    // CPU placement.
    let allowed = spawn::allowed_cpus();
    let (default_servers, default_loadgen) = spawn::split_cpus(&allowed);
    let server_cpus = match &args.server_cpus {
        Some(s) => spawn::parse_cpu_list(s)?,
        None => default_servers,
    };
    let loadgen_cpus = match &args.cpus {
        Some(s) => spawn::parse_cpu_list(s)?,
        None if args.spawn.is_empty() => allowed.clone(),
        None => default_loadgen,
    };
    if !args.spawn.is_empty() && server_cpus.iter().any(|c| loadgen_cpus.contains(c)) {
        eprintln!("loadgen: note: loadgen (CPUs {loadgen_cpus:?}) shares CPUs with the servers ({server_cpus:?})");
    }
    spawn::pin_current(&loadgen_cpus).context("pinning loadgen to --cpus")?;
    raise_open_files_limit();
    let pin = loadgen_cpus.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(loadgen_cpus.len().max(1))
        .enable_all()
        .on_thread_start(move || {
            let _ = spawn::pin_current(&pin);
        })
        .build()?;

    let token = match (&args.token, &args.token_file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(f)) => {
            Some(std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?.trim().to_string())
        }
        _ => None,
    };
    let several = scenarios.len() > 1;
    for scenario in &scenarios {
        run_scenario(&args, &rt, scenario, &targets, token.clone(), &loadgen_cpus, &server_cpus, several)?;
    }
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_scenario(
    args: &RunArgs,
    rt: &tokio::runtime::Runtime,
    scenario: &scenario::Scenario,
    targets: &[(String, Flavor, Source)],
    token: Option<String>,
    loadgen_cpus: &[usize],
    server_cpus: &[usize],
    several: bool,
) -> Result<()> {
    let (opts, etcd_opts) = client_options(args, token, scenario.connection.http2);

    let repeats = args.repeat as usize;
    let mut runs = Vec::new();
    for (round, index) in repeat::schedule(targets.len(), repeats) {
        let (name, flavor, source) = &targets[index];
        let (name, flavor) = (name.clone(), *flavor);
        if repeats > 1 {
            eprintln!("loadgen: {}: round {} of {repeats}, target {name}", scenario.name, round + 1);
        }
        let mut server: Option<Spawned> = None;
        let url = match source {
            Source::Url(u) => u.clone(),
            Source::Spawn(spec) => {
                let s = match spec.kind {
                    SpawnKind::Shardline => {
                        let bin = spawn::find_binary(args.shardline_bin.as_deref(), "SHARDLINE_BIN", "shardline")?;
                        Spawned::shardline(&bin, server_cpus, &spec.args)?
                    }
                    SpawnKind::Etcd => {
                        let bin = spawn::find_binary(args.etcd_bin.as_deref(), "ETCD", "etcd")?;
                        Spawned::etcd(&bin, server_cpus, &spec.args)?
                    }
                    SpawnKind::ShardlineEtcd => {
                        let bin = spawn::find_binary(args.shardline_bin.as_deref(), "SHARDLINE_BIN", "shardline")?;
                        let etcd = spawn::find_binary(args.etcd_bin.as_deref(), "ETCD", "etcd")?;
                        Spawned::shardline_on_etcd(&bin, &etcd, server_cpus, &spec.args)?
                    }
                    SpawnKind::Replay => Spawned::replay(server_cpus, &spec.args)?,
                };
                eprintln!(
                    "loadgen: started {} as {name} (pid {}) at {} on CPUs {server_cpus:?}, extra arguments {:?}",
                    s.name,
                    s.pid(),
                    s.url,
                    spec.args
                );
                let url = s.url.clone();
                server = Some(s);
                url
            }
        };
        let endpoint = Endpoint::new(&url, if flavor == Flavor::Etcd { &etcd_opts } else { &opts })?;
        let target = Target { name, flavor, endpoint };
        let placement = Placement {
            loadgen_cpus: loadgen_cpus.len(),
            server_pids: server.as_ref().map(Spawned::pids).unwrap_or_default(),
            server_cpus: server_cpus.len(),
        };
        let cpu_before = process_cpu_s();
        let result = rt.block_on(loadgen::run::run(target, scenario, placement));
        let loadgen_cpu_s = process_cpu_s() - cpu_before;
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                if let Some(s) = &server {
                    eprintln!("--- {} stderr ---\n{}", s.name, tail(&s.stderr(), 4000));
                }
                return Err(e);
            }
        };
        runs.push(TargetRun {
            repeat: round + 1,
            server_cpu_s: server.as_ref().and_then(|s| s.cpu_seconds()),
            server_peak_rss_bytes: server.as_ref().and_then(|s| s.peak_rss_bytes()),
            server_run_queue_wait_s: server.as_ref().and_then(|s| s.run_queue_wait_s()),
            loadgen_cpu_s,
            result,
        });
        drop(server);
    }

    let date = time::OffsetDateTime::now_utc();
    let report = Report {
        loadgen_version: env!("CARGO_PKG_VERSION").into(),
        date_utc: date.format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        command: std::env::args().collect(),
        smoke: args.smoke,
        machine: Machine::here(
            loadgen_cpus.to_vec(),
            if args.spawn.is_empty() { None } else { Some(server_cpus.to_vec()) },
        ),
        scenario: scenario.clone(),
        repeats,
        runs,
    };
    let out = match &args.out {
        Some(dir) if several => dir.join(&scenario.name),
        Some(dir) => dir.clone(),
        None => {
            let stamp = date
                .format(time::macros::format_description!("[year][month][day]T[hour][minute][second]"))
                .unwrap_or_default();
            Path::new("loadgen-results").join(format!(
                "{}{}-{stamp}",
                scenario.name,
                if args.smoke { "-smoke" } else { "" }
            ))
        }
    };
    report::write_all(&report, &out)?;
    println!("{}", report::table(&report));
    print!("{}", report::findings(&report));
    println!("results: {}/result.json, summary.md, plot.svg", out.display());
    Ok(())
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// The client options of Kubernetes targets and of etcd targets. `--token`, `--ca`,
/// `--client-cert`/`--client-key` and `--insecure-skip-tls-verify` are the Kubernetes targets'
/// only: etcd targets get no bearer token (a spawned etcd answered every request of a run with
/// a `--kube` target beside it 401) and their own `--etcd-ca`, `--etcd-client-cert`/`-key`. The
/// etcd gateway speaks HTTP/1.1 only (see docs/benchmarks.md).
fn client_options(args: &RunArgs, token: Option<String>, http2: bool) -> (ClientOptions, ClientOptions) {
    let kube = ClientOptions {
        token,
        ca_file: args.ca.clone(),
        client_cert_file: args.client_cert.clone(),
        client_key_file: args.client_key.clone(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        http2,
    };
    let etcd = ClientOptions {
        token: None,
        ca_file: args.etcd_ca.clone(),
        client_cert_file: args.etcd_client_cert.clone(),
        client_key_file: args.etcd_client_key.clone(),
        insecure_skip_tls_verify: false,
        http2: false,
    };
    (kube, etcd)
}

/// Raises the soft open-files limit to the hard limit (one descriptor per HTTP/1.1 watch).
fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(line: &str) -> RunArgs {
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        match cli.command {
            Cmd::Run(a) => *a,
            Cmd::Validate { .. } | Cmd::Replay(_) => unreachable!("a run command line"),
        }
    }

    #[test]
    fn token_and_ca_go_to_kubernetes_targets_only() {
        let args = run_args(
            "loadgen run s.toml --kube https://10.0.0.1:6443 --spawn etcd --token T --ca ca.crt --client-cert c --client-key k --insecure-skip-tls-verify",
        );
        let (kube, etcd) = client_options(&args, args.token.clone(), true);
        assert_eq!(kube.token.as_deref(), Some("T"));
        assert_eq!(kube.ca_file.as_deref(), Some("ca.crt"));
        assert_eq!(kube.client_cert_file.as_deref(), Some("c"));
        assert!(kube.insecure_skip_tls_verify && kube.http2);
        assert_eq!(etcd.token, None);
        assert_eq!((etcd.ca_file, etcd.client_cert_file, etcd.client_key_file), (None, None, None));
        assert!(!etcd.insecure_skip_tls_verify && !etcd.http2);
        // The endpoints built from them: the etcd requests carry no Authorization header.
        let e = Endpoint::new("http://127.0.0.1:2379", &etcd_options_of(&args)).unwrap();
        let r = e.request(http::Method::POST, "/v3/kv/put", "application/json", None);
        assert!(r.headers().get(http::header::AUTHORIZATION).is_none());
        let k = Endpoint::new("http://127.0.0.1:8080", &client_options(&args, Some("T".into()), true).0).unwrap();
        let r = k.request(http::Method::GET, "/api/v1/pods", "application/json", None);
        assert_eq!(r.headers()[http::header::AUTHORIZATION], "Bearer T");
        // etcd has its own TLS flags.
        let args = run_args(
            "loadgen run s.toml --etcd https://e:2379 --etcd-ca e.crt --etcd-client-cert c --etcd-client-key k",
        );
        let (kube, etcd) = client_options(&args, None, true);
        assert_eq!((etcd.ca_file.as_deref(), etcd.client_cert_file.as_deref()), (Some("e.crt"), Some("c")));
        assert_eq!(kube.ca_file, None);
    }

    fn etcd_options_of(args: &RunArgs) -> ClientOptions {
        client_options(args, args.token.clone(), true).1
    }
}
