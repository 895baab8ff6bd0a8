//! Smoke run of every shipped scenario: the real `loadgen` binary runs each scenario's `[smoke]`
//! variant with `--spawn` against a local Shardline (the workspace's `shardline` binary), etcd and
//! Shardline on the etcd log (when `ETCD` or `etcd` on PATH exists; scripts/test.sh installs
//! it), then the result file is
//! checked: every watcher connected, events delivered and measured, writes and lists done, no
//! errors. Each run is bounded by the scenario's seconds; the servers are stopped by PID by loadgen.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("loadgen/ is inside the workspace").to_path_buf()
}

/// The shardline binary: $SHARDLINE_BIN, else built (a no-op when fresh) into the directory
/// cargo put loadgen in.
fn shardline_bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(build_shardline).clone()
}

fn build_shardline() -> PathBuf {
    if let Some(p) = std::env::var_os("SHARDLINE_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let loadgen = PathBuf::from(env!("CARGO_BIN_EXE_loadgen"));
    let dir = loadgen.parent().expect("binary directory");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // With etcd at hand the smoke runs Shardline on the etcd log too, which
    // needs the `etcd` feature; it is also what the test command builds, so
    // this build does not replace the tests' binary with a smaller one.
    let mut args = vec!["build", "-q", "-p", "shardline", "--bin", "shardline"];
    if etcd_bin().is_some() {
        args.extend(["--features", "etcd"]);
    }
    let status = Command::new(cargo)
        .args(&args)
        .current_dir(workspace_root())
        .status()
        .expect("run cargo build for the shardline binary");
    assert!(status.success(), "cargo build --bin shardline failed");
    let bin = dir.join("shardline");
    assert!(bin.is_file(), "{} was not built", bin.display());
    bin
}

fn etcd_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ETCD").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("etcd")).find(|p| p.is_file())
}

fn smoke(name: &str) -> Value {
    smoke_against(name, None)
}

fn smoke_against(name: &str, shardline_spawn: Option<&str>) -> Value {
    smoke_with(name, shardline_spawn, &[]).0
}

/// Runs `name`'s smoke variant against a plain Shardline and etcd (when found), or against one
/// Shardline started with `shardline_spawn` (a `--spawn` value) only, with `extra` arguments;
/// returns the result file and what loadgen printed on stdout.
fn smoke_with(name: &str, shardline_spawn: Option<&str>, extra: &[&str]) -> (Value, String) {
    let out = tempfile::tempdir().expect("temporary directory");
    let scenario = workspace_root().join("loadgen/scenarios").join(format!("{name}.toml"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loadgen"));
    cmd.arg("run").arg(&scenario).arg("--smoke").args(extra);
    cmd.arg("--spawn").arg(shardline_spawn.unwrap_or("shardline"));
    cmd.arg("--shardline-bin").arg(shardline_bin());
    let etcd = etcd_bin().filter(|_| shardline_spawn.is_none());
    match &etcd {
        Some(etcd) => {
            // etcd alone, and Shardline on the etcd log over its own etcd.
            cmd.arg("--spawn").arg("etcd").arg("--spawn").arg("shardline-etcd").arg("--etcd-bin").arg(etcd);
        }
        None if shardline_spawn.is_some() => {}
        None => eprintln!("etcd not found (set ETCD or install etcd-server): Shardline only"),
    }
    cmd.arg("--out").arg(out.path());
    let output = cmd.output().expect("run loadgen");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "loadgen {name} --smoke failed: {}\n{stderr}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = shardline_spawn.and_then(|s| s.split('=').next()?.split(':').nth(1)).unwrap_or("shardline");
    assert!(stdout.contains(&format!("| {name} | {first} |")), "side-by-side table on stdout:\n{stdout}");
    for f in ["summary.md", "plot.svg"] {
        let text = std::fs::read_to_string(out.path().join(f)).expect(f);
        assert!(text.contains(first), "{f} names the target");
    }
    let result: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("result.json")).expect("result.json")).expect("JSON");
    assert_eq!(result["smoke"], true);
    let runs = result["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), if etcd.is_some() { 3 } else { 1 });
    if etcd.is_some() {
        let names: Vec<&str> = runs.iter().map(|r| r["target"].as_str().unwrap()).collect();
        assert_eq!(names, ["shardline", "etcd", "shardline-etcd"]);
    }
    for run in runs {
        let target = run["target"].as_str().unwrap();
        let ctx = format!("{name} on {target}: {run:#}\n{stderr}");
        assert_eq!(run["errors"], serde_json::json!({}), "{ctx}");
        assert_eq!(run["watchers_connected"], run["watchers_requested"], "{ctx}");
        let totals = &run["totals"];
        let scenario = &result["scenario"];
        if !scenario["writes"].is_null() {
            assert!(totals["writes"].as_u64().unwrap() > 0, "{ctx}");
            let write = &run["latencies_ms"]["write"];
            assert_eq!(write["count"], totals["writes"], "every acknowledged write has a latency: {ctx}");
        }
        if run["watchers_requested"].as_u64().unwrap() > 0 {
            assert!(totals["watch_events"].as_u64().unwrap() > 0, "{ctx}");
            assert!(run["latencies_ms"]["write_to_watch"]["count"].as_u64().unwrap() > 0, "{ctx}");
        }
        if !scenario["list"].is_null() {
            assert!(totals["list_pages"].as_u64().unwrap() > 0, "{ctx}");
            assert!(totals["list_bytes"].as_u64().unwrap() > 0, "{ctx}");
        }
    }
    (result, stdout.into_owned())
}

#[test]
fn kubelets_smoke() {
    smoke("kubelets");
}

#[test]
fn receive_ceiling_smoke_against_the_replay() {
    // HTTP/2 and HTTP/1.1, the 2.8 KB pod and the small Lease (in small chunks, so events are
    // split across chunks and frames): every event received, in order, and timed.
    for (spawn, extra) in [
        ("replay:replay", &[][..]),
        ("replay:replay", &["--http1"][..]),
        ("replay:lease=--object lease --batch-bytes 3000", &[][..]),
    ] {
        let (r, stdout) = smoke_with("receive-ceiling", Some(spawn), extra);
        let run = &r["runs"][0];
        let ctx = format!("{spawn} {extra:?}: {run:#}");
        assert!(run["watch_events_per_loadgen_cpu_s"].as_f64().unwrap() > 0.0, "{ctx}");
        assert!(run["loadgen_cpu_user_s"].as_f64().unwrap() > 0.0, "{ctx}");
        assert!(run["server_cpu_busy"].as_f64().unwrap() > 0.0, "the replay's CPU is measured: {ctx}");
        assert!(stdout.contains("| watch events per loadgen CPU-second |"), "{stdout}");
    }
}

#[test]
fn informers_smoke() {
    let r = smoke("informers");
    // Every informer sees every write: at least as many events as watchers.
    let run = &r["runs"][0];
    assert!(run["totals"]["watch_events"].as_u64().unwrap() >= run["watchers_requested"].as_u64().unwrap());
}

#[test]
fn list_storm_smoke() {
    smoke("list-storm");
}

#[test]
fn writes_smoke() {
    smoke("writes");
}

#[test]
fn mixed_smoke() {
    smoke("mixed");
}

#[test]
fn overload_smoke() {
    // One request of each class at a time: writers and listers are refused with 429 and
    // Retry-After, wait as asked and send the same request again; none is given up (no errors).
    let r = smoke_against(
        "overload",
        Some("shardline:limited=--max-requests-inflight 1 --max-mutating-requests-inflight 1"),
    );
    let run = &r["runs"][0];
    let totals = &run["totals"];
    let ctx = format!("{run:#}");
    assert!(totals["throttled"].as_u64().unwrap() > 0, "the limits refused something: {ctx}");
    assert!(totals["retries"].as_u64().unwrap() > 0, "refused requests were retried: {ctx}");
    assert_eq!(totals["retries_exhausted"], 0, "{ctx}");
    assert!(totals["backoff_s"].as_f64().unwrap() > 0.0, "clients waited before retrying: {ctx}");
    assert_eq!(run["latencies_ms"]["throttled"]["count"], totals["throttled"], "every refusal timed: {ctx}");
    // The admitted attempt's own time never exceeds the client-visible time from the first one.
    let lat = &run["latencies_ms"];
    assert!(lat["write_service"]["max_ms"].as_f64().unwrap() <= lat["write"]["max_ms"].as_f64().unwrap(), "{ctx}");
}

#[test]
fn refuses_a_bad_scenario_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "version = 1\nname = \"x\"\nduration_s = 1\n[kubelets]\nwatchers = 5\n[objects]\nnodes = 2\n")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_loadgen")).arg("validate").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kubelets.watchers"), "{err}");
}

#[test]
fn watches_honour_the_servers_max_concurrent_streams() {
    // A server allowing 10 streams per HTTP/2 connection, a scenario asking for 500: 35 watches
    // need 4 connections, and every one of them connects.
    let (r, stdout) = smoke_with(
        "informers",
        Some("shardline:streams10=--http2-max-streams-per-connection 10"),
        &["--set", "informers.watchers=35"],
    );
    let run = &r["runs"][0];
    let ctx = format!("{run:#}\n{stdout}");
    assert_eq!(run["watchers_connected"], 35, "{ctx}");
    assert_eq!(run["server_max_concurrent_streams"], 10, "{ctx}");
    assert_eq!(run["streams_per_connection"], 10, "{ctx}");
    assert_eq!(run["watch_connections"], 4, "{ctx}");
    assert!(stdout.contains("35 of 35 watchers connected over 4 connections"), "{ctx}");
    // Shardline's default (1,000 per connection) and the scenario's 500: one connection.
    let (r, _) = smoke_with("informers", Some("shardline:default"), &["--set", "informers.watchers=35"]);
    let run = &r["runs"][0];
    assert_eq!(
        (run["watch_connections"].as_u64(), run["server_max_concurrent_streams"].as_u64()),
        (Some(1), Some(1000))
    );
}

/// A Shardline this test started, stopped by its PID when dropped.
struct Server {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(shardline_bin())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--shards", "1", "--data-dir"])
            .arg(dir.path().join("data"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start shardline");
        let server = Server { child, url: format!("http://127.0.0.1:{port}"), _dir: dir };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ready(port) {
            assert!(std::time::Instant::now() < deadline, "shardline was not ready within 60 s");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        server
    }
}

fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
    if write!(s, "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.starts_with("HTTP/1.1 200")
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: signalling our own child by its PID.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_second_run_on_the_same_server_deletes_the_first_runs_namespaces() {
    // The writes scenario creates pods with the same names in every run (same seed): without the
    // cleaning, the second run's creates would fail with 409 and its deletes with 404.
    let server = Server::start();
    let scenario = workspace_root().join("loadgen/scenarios/writes.toml");
    let mut stderrs = Vec::new();
    for round in 1..=2 {
        let out = tempfile::tempdir().unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_loadgen"))
            .arg("run")
            .arg(&scenario)
            .args(["--smoke", "--kube", &format!("reused={}", server.url), "--out"])
            .arg(out.path())
            .output()
            .expect("run loadgen");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "round {round}: {stderr}");
        let result: Value = serde_json::from_slice(&std::fs::read(out.path().join("result.json")).unwrap()).unwrap();
        let run = &result["runs"][0];
        assert_eq!(run["errors"], serde_json::json!({}), "round {round}: {run:#}\n{stderr}");
        assert!(run["totals"]["writes"].as_u64().unwrap() > 0, "round {round}: {run:#}");
        stderrs.push(stderr);
    }
    assert!(!stderrs[0].contains("earlier run left"), "{}", stderrs[0]);
    let namespaces = {
        let text = std::fs::read_to_string(&scenario).unwrap();
        let s: toml::Table = toml::from_str(&text).unwrap();
        s["smoke"].get("objects").and_then(|o| o.get("namespaces")).and_then(|n| n.as_integer()).unwrap_or(10)
    };
    assert!(
        stderrs[1].contains(&format!("[reused] deleted {namespaces} namespaces an earlier run left (loadgen-0")),
        "{}",
        stderrs[1]
    );
}
