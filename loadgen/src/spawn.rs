//! `--spawn`: starts a local Shardline and/or etcd on loopback (free ports, temporary data
//! directories, pinned to the server CPUs), or a Shardline on the etcd log over its own etcd
//! (`shardline-etcd`: both processes on the server CPUs), waits until each answers its health
//! check, and stops each by its PID (SIGTERM, then SIGKILL after a grace period) when dropped.
//! Also CPU placement: which cores the servers get and which loadgen keeps, and `--spawn`'s
//! `KIND[:NAME][=ARGS]` syntax, which runs the same scenario against differently configured
//! servers in one command (e.g. with and without in-flight limits).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long a spawned server gets to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a spawned server gets to exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// What kind of server `--spawn` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnKind {
    Shardline,
    Etcd,
    /// Shardline with `--log etcd` on its own single-member etcd (both on the server CPUs).
    ShardlineEtcd,
    /// `loadgen replay` (this executable): watch events as fast as loopback carries them, to
    /// measure loadgen's own receive ceiling.
    Replay,
}

/// One `--spawn KIND[:NAME][=ARGS]`: the server, its target name (default: the kind) and extra
/// command-line arguments (split on whitespace) given to it after loadgen's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnSpec {
    pub kind: SpawnKind,
    pub name: String,
    pub args: Vec<String>,
}

impl std::str::FromStr for SpawnSpec {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<SpawnSpec> {
        let (head, args) = match s.split_once('=') {
            Some((h, a)) => (h, a.split_whitespace().map(str::to_string).collect()),
            None => (s, Vec::new()),
        };
        let (kind, name) = match head.split_once(':') {
            Some((k, n)) => (k, Some(n)),
            None => (head, None),
        };
        let kind = match kind.trim() {
            "shardline" => SpawnKind::Shardline,
            "etcd" => SpawnKind::Etcd,
            "shardline-etcd" => SpawnKind::ShardlineEtcd,
            "replay" => SpawnKind::Replay,
            other => bail!("--spawn {s:?}: unknown server {other:?} (shardline, etcd, shardline-etcd or replay)"),
        };
        let name = match name.map(str::trim) {
            None => match kind {
                SpawnKind::Shardline => "shardline",
                SpawnKind::Etcd => "etcd",
                SpawnKind::ShardlineEtcd => "shardline-etcd",
                SpawnKind::Replay => "replay",
            }
            .to_string(),
            Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) => {
                n.to_string()
            }
            Some(n) => bail!("--spawn {s:?}: the name {n:?} must be letters, digits, '-', '_' or '.'"),
        };
        Ok(SpawnSpec { kind, name, args })
    }
}

/// A server this process started.
pub struct Spawned {
    pub name: String,
    pub url: String,
    child: Child,
    /// Data directory and logs; removed on drop.
    dir: tempfile::TempDir,
    /// The etcd a `shardline-etcd` Shardline writes to: stopped after it, and counted in the
    /// server's CPU time, run-queue wait and memory (the target is the pair).
    backing: Option<Box<Spawned>>,
}

pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes into the zeroed set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Pins the calling thread (or, before exec, the child) to `cpus`.
pub fn pin_current(cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: plain syscalls on a set we own; async-signal-safe, so usable in pre_exec.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Parses `0,2-3` into `[0, 2, 3]`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse()?, b.parse()?);
                if a > b {
                    bail!("bad CPU range {part}");
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().with_context(|| format!("bad CPU {part:?}"))?),
        }
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        bail!("empty CPU list {s:?}");
    }
    Ok(out)
}

/// Splits the allowed CPUs: the servers get the first half (at least one), loadgen the rest.
/// With one CPU, both get it (and the comparison shares it).
pub fn split_cpus(allowed: &[usize]) -> (Vec<usize>, Vec<usize>) {
    if allowed.len() < 2 {
        return (allowed.to_vec(), allowed.to_vec());
    }
    let servers = allowed.len() / 2;
    (allowed[..servers].to_vec(), allowed[servers..].to_vec())
}

fn command_pinned(bin: &Path, cpus: &[usize]) -> Command {
    let mut cmd = Command::new(bin);
    let cpus = cpus.to_vec();
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure only calls sched_setaffinity, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || pin_current(&cpus));
    }
    cmd
}

impl Spawned {
    /// Starts a single-member etcd, then `shardline serve --log etcd` on it, both on `cpus`, then
    /// `extra` arguments for Shardline.
    pub fn shardline_on_etcd(
        shardline_bin: &Path,
        etcd_bin: &Path,
        cpus: &[usize],
        extra: &[String],
    ) -> Result<Spawned> {
        let etcd = Spawned::etcd(etcd_bin, cpus, &[])?;
        let mut args: Vec<String> =
            ["--log", "etcd", "--etcd-endpoints", &etcd.url].iter().map(|a| a.to_string()).collect();
        args.extend(extra.iter().cloned());
        let mut s = Spawned::shardline(shardline_bin, cpus, &args)?;
        s.name = "shardline-etcd".into();
        s.backing = Some(Box::new(etcd));
        Ok(s)
    }

    /// Starts `shardline serve` with one shard per server CPU, then `extra` arguments.
    pub fn shardline(bin: &Path, cpus: &[usize], extra: &[String]) -> Result<Spawned> {
        let dir = tempfile::Builder::new().prefix("loadgen-shardline-").tempdir()?;
        let port = free_port()?;
        let log = std::fs::File::create(dir.path().join("stderr.log"))?;
        let child = command_pinned(bin, cpus)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--shards", &cpus.len().max(1).to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut s =
            Spawned { name: "shardline".into(), url: format!("http://127.0.0.1:{port}"), child, dir, backing: None };
        s.wait_ready("/readyz", b"ok")?;
        Ok(s)
    }

    /// Starts `loadgen replay` (this executable) on a free loopback port, then `extra` arguments
    /// (`--object`, `--pad-bytes`, `--batch-bytes`).
    pub fn replay(cpus: &[usize], extra: &[String]) -> Result<Spawned> {
        let bin = std::env::current_exe().context("finding loadgen's own executable")?;
        let dir = tempfile::Builder::new().prefix("loadgen-replay-").tempdir()?;
        let port = free_port()?;
        let log = std::fs::File::create(dir.path().join("stderr.log"))?;
        let child = command_pinned(&bin, cpus)
            .args(["replay", "--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {} replay", bin.display()))?;
        let mut s =
            Spawned { name: "replay".into(), url: format!("http://127.0.0.1:{port}"), child, dir, backing: None };
        s.wait_ready("/readyz", b"ok")?;
        Ok(s)
    }

    /// Starts a single-member etcd on loopback, then `extra` arguments.
    pub fn etcd(bin: &Path, cpus: &[usize], extra: &[String]) -> Result<Spawned> {
        let dir = tempfile::Builder::new().prefix("loadgen-etcd-").tempdir()?;
        let (client, peer) = (free_port()?, free_port()?);
        let log = std::fs::File::create(dir.path().join("stderr.log"))?;
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let child = command_pinned(bin, cpus)
            .arg("--name=loadgen")
            .arg(format!("--data-dir={}", dir.path().join("data").display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=loadgen={peer_url}"))
            // 8 GiB, etcd's recommended maximum: large preloads must not hit the 2 GiB default.
            .arg("--quota-backend-bytes=8589934592")
            .args(extra)
            .env("GOMAXPROCS", cpus.len().max(1).to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut s = Spawned { name: "etcd".into(), url: client_url, child, dir, backing: None };
        s.wait_ready("/health", b"true")?;
        Ok(s)
    }

    fn wait_ready(&mut self, path: &str, want: &[u8]) -> Result<()> {
        let addr = self.url.trim_start_matches("http://").to_string();
        let deadline = Instant::now() + READY_TIMEOUT;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!("{} exited with {status} before it was ready:\n{}", self.name, self.stderr());
            }
            if let Ok(body) = http_get(&addr, path) {
                if body.windows(want.len()).any(|w| w == want) {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("{} was not ready within {READY_TIMEOUT:?}:\n{}", self.name, self.stderr())
    }

    pub fn stderr(&self) -> String {
        let own = std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default();
        match &self.backing {
            Some(b) => format!("{own}\n--- {} (backing) stderr ---\n{}", b.name, b.stderr()),
            None => own,
        }
    }

    /// Adds the backing etcd's share of a measurement (a missing one makes the sum unknown).
    fn with_backing(&self, own: Option<f64>, of: impl Fn(&Spawned) -> Option<f64>) -> Option<f64> {
        match &self.backing {
            Some(b) => Some(own? + of(b)?),
            None => own,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's PIDs: its own, then its backing etcd's.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.pid()];
        if let Some(b) = &self.backing {
            pids.extend(b.pids());
        }
        pids
    }

    /// Peak resident memory of the server so far (`VmHWM`), in bytes; with a backing etcd, the
    /// sum of both peaks (an upper bound of the pair's peak).
    pub fn peak_rss_bytes(&self) -> Option<u64> {
        let own = self.own_peak_rss_bytes();
        self.with_backing(own.map(|b| b as f64), |b| b.peak_rss_bytes().map(|b| b as f64)).map(|b| b as u64)
    }

    fn own_peak_rss_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// CPU time the server (and its backing etcd) used so far (user + system), in seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.with_backing(self.own_cpu_seconds(), Spawned::cpu_seconds)
    }

    fn own_cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        Some(ticks as f64 / hz)
    }
}

impl Spawned {
    /// Time the server's threads were runnable but waiting for a CPU (run-queue delay, summed
    /// over threads from `/proc/PID/task/*/schedstat`), in seconds. On a shared machine this
    /// tells starvation (high) from waiting on I/O or locks (CPU time and this both low).
    pub fn run_queue_wait_s(&self) -> Option<f64> {
        self.with_backing(self.own_run_queue_wait_s(), Spawned::run_queue_wait_s)
    }

    fn own_run_queue_wait_s(&self) -> Option<f64> {
        let mut ns = 0u64;
        for task in std::fs::read_dir(format!("/proc/{}/task", self.pid())).ok()? {
            let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
            ns += stat.split_whitespace().nth(1)?.parse::<u64>().ok()?;
        }
        Some(ns as f64 / 1e9)
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: signalling our own child by its PID.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + STOP_GRACE;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A minimal blocking HTTP/1.1 GET, for readiness checks only.
fn http_get(addr: &str, path: &str) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    if !out.starts_with(b"HTTP/1.1 200") {
        return Err(std::io::Error::other("not 200"));
    }
    Ok(out)
}

/// Finds a program: the explicit path, else `env` (an environment variable), else beside this
/// executable (cargo puts the workspace's binaries together), else on PATH.
pub fn find_binary(explicit: Option<&Path>, env: &str, name: &str) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    if let Ok(me) = std::env::current_exe() {
        for dir in me.ancestors().skip(1).take(2) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    bail!("{name} not found: pass its path, set {env}, or put it on PATH")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-4, 3").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("").is_err());
        assert!(parse_cpu_list("a").is_err());
    }

    #[test]
    fn spawn_specs() {
        let s: SpawnSpec = "shardline".parse().unwrap();
        assert_eq!(s, SpawnSpec { kind: SpawnKind::Shardline, name: "shardline".into(), args: vec![] });
        let s: SpawnSpec =
            "shardline:limited=--max-requests-inflight 4  --max-mutating-requests-inflight 2".parse().unwrap();
        assert_eq!(s.name, "limited");
        assert_eq!(s.args, ["--max-requests-inflight", "4", "--max-mutating-requests-inflight", "2"]);
        let s: SpawnSpec = "etcd=--snapshot-count=1000".parse().unwrap();
        assert_eq!((s.kind, s.name.as_str()), (SpawnKind::Etcd, "etcd"));
        assert_eq!(s.args, ["--snapshot-count=1000"]);
        let s: SpawnSpec = "replay:lease=--object lease".parse().unwrap();
        assert_eq!((s.kind, s.name.as_str()), (SpawnKind::Replay, "lease"));
        assert_eq!(s.args, ["--object", "lease"]);
        assert!("kube-apiserver".parse::<SpawnSpec>().is_err());
        assert!("shardline:".parse::<SpawnSpec>().is_err());
        assert!("shardline:a b".parse::<SpawnSpec>().is_err());
    }

    #[test]
    fn cpu_split() {
        assert_eq!(split_cpus(&[0, 1]), (vec![0], vec![1]));
        assert_eq!(split_cpus(&[0, 1, 2, 3, 4]), (vec![0, 1], vec![2, 3, 4]));
        assert_eq!(split_cpus(&[5]), (vec![5], vec![5]));
    }
}
