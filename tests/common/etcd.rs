//! etcd members on loopback for the integration tests: one member or a
//! cluster, each in its own temporary directory, started from `$ETCD` or
//! `PATH` (scripts/test.sh installs Debian's etcd-server), stopped by PID, and
//! read through etcd's JSON gateway; plus starting Shardline on them with
//! `--log etcd`.
//!
//! A member may serve its clients over TLS (`Etcd::start_tls`: etcd's
//! `--cert-file`/`--key-file`/`--trusted-ca-file`/`--client-cert-auth`); its
//! health is then read from a plain `--listen-metrics-urls` port.
//!
//! Invariants: members listen on 127.0.0.1 only; every wait is bounded; a
//! missing etcd fails the test, it is never skipped.

use super::*;
use base64::Engine;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long etcd may take to answer /health after it was spawned.
pub const ETCD_START: Duration = Duration::from_secs(30);

pub fn etcd_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("ETCD") {
        return PathBuf::from(path);
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let candidate = dir.join("etcd");
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("etcd not found in $ETCD or PATH: run the tests through scripts/test.sh, which installs etcd-server");
}

/// One etcd member on loopback, in its own temporary directory, stopped by PID.
pub struct Etcd {
    child: Option<Child>,
    client_port: u16,
    /// The command line, to start the member again on the same data.
    args: Vec<String>,
    _dir: tempfile::TempDir,
    /// Where `http` connects: the client port, or for a TLS member its plain
    /// metrics port (which answers /health only).
    http_port: u16,
    /// The client URLs are https.
    tls: bool,
}

/// PEM files for an etcd member serving its clients over TLS.
#[derive(Clone, Debug)]
pub struct EtcdTlsFiles {
    pub ca_file: PathBuf,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// etcd's `--client-cert-auth`: clients must present a certificate signed by the CA.
    pub client_cert_auth: bool,
}

impl Etcd {
    /// A single-member cluster.
    pub fn start() -> Etcd {
        Etcd::cluster(1).pop().unwrap()
    }

    /// `size` members on loopback forming one cluster, each healthy.
    ///
    /// A member that exits while starting (another process bound one of its
    /// ports between the probe and etcd's bind) makes the whole cluster start
    /// again on fresh ports, up to three times.
    pub fn cluster(size: usize) -> Vec<Etcd> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let ports: Vec<(u16, u16)> = (0..size).map(|_| (free_port(), free_port())).collect();
            let initial: Vec<String> =
                ports.iter().enumerate().map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}")).collect();
            let initial = initial.join(",");
            let mut members: Vec<Etcd> = ports
                .iter()
                .enumerate()
                .map(|(i, (client, peer))| Etcd::spawn(&format!("m{i}"), *client, *peer, &initial, ports[0].1))
                .collect();
            let mut failed = None;
            for etcd in &mut members {
                if let Err(why) = etcd.try_wait_healthy() {
                    failed = Some(why);
                    break;
                }
            }
            match failed {
                None => return members,
                Some(why) if attempt < 3 => eprintln!("etcd cluster start attempt {attempt} failed, retrying: {why}"),
                Some(why) => panic!("{why}"),
            }
        }
    }

    pub fn spawn(name: &str, client_port: u16, peer_port: u16, initial_cluster: &str, token: u16) -> Etcd {
        let mut etcd = Etcd::parked(name, client_port, peer_port, initial_cluster, token);
        etcd.respawn();
        etcd
    }

    /// A member's directory and command line, not started yet.
    fn parked(name: &str, client_port: u16, peer_port: u16, initial_cluster: &str, token: u16) -> Etcd {
        let dir = tempfile::Builder::new().prefix("shardline-etcd-").tempdir().unwrap();
        let client = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let data = dir.path().join("data").display().to_string();
        let args: Vec<String> = [
            "--name",
            name,
            "--data-dir",
            &data,
            "--listen-client-urls",
            &client,
            "--advertise-client-urls",
            &client,
            "--listen-peer-urls",
            &peer,
            "--initial-advertise-peer-urls",
            &peer,
            "--initial-cluster",
            initial_cluster,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            &format!("shardline-test-{token}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        Etcd { child: None, client_port, args, _dir: dir, http_port: client_port, tls: false }
    }

    /// A single member whose clients connect over TLS with these files;
    /// healthy when it returns.
    pub fn start_tls(files: &EtcdTlsFiles) -> Etcd {
        let (client_port, peer_port, metrics_port) = (free_port(), free_port(), free_port());
        let initial = format!("m0=http://127.0.0.1:{peer_port}");
        let mut etcd = Etcd::parked("m0", client_port, peer_port, &initial, peer_port);
        let client = format!("https://127.0.0.1:{client_port}");
        for (flag, value) in [("--listen-client-urls", &client), ("--advertise-client-urls", &client)] {
            let at = etcd.args.iter().position(|a| a == flag).unwrap();
            etcd.args[at + 1] = value.clone();
        }
        let path = |p: &PathBuf| p.display().to_string();
        etcd.args.extend([
            "--cert-file".to_string(),
            path(&files.cert_file),
            "--key-file".into(),
            path(&files.key_file),
            "--trusted-ca-file".into(),
            path(&files.ca_file),
            "--listen-metrics-urls".into(),
            format!("http://127.0.0.1:{metrics_port}"),
        ]);
        if files.client_cert_auth {
            etcd.args.push("--client-cert-auth".into());
        }
        etcd.http_port = metrics_port;
        etcd.tls = true;
        etcd.respawn();
        etcd.wait_healthy();
        etcd
    }

    /// Starts the member's process (again, on the same data after `kill`).
    pub fn respawn(&mut self) {
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(self._dir.path().join("etcd.log")).unwrap();
        let child = Command::new(etcd_bin())
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn etcd");
        self.child = Some(child);
    }

    pub fn wait_healthy(&mut self) {
        if let Err(why) = self.try_wait_healthy() {
            panic!("{why}");
        }
    }

    /// Waits for /health; an error says why (the member exited, or the time
    /// ran out) with the end of the member's log.
    pub fn try_wait_healthy(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + ETCD_START;
        loop {
            if let Some((200, body)) = self.http("GET", "/health", None) {
                if body.contains("true") {
                    return Ok(());
                }
            }
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() >= deadline {
                let log = std::fs::read_to_string(self._dir.path().join("etcd.log")).unwrap_or_default();
                let tail: String =
                    log.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
                let what = match exited {
                    Some(status) => format!("etcd exited while starting ({status})"),
                    None => format!("etcd did not become healthy within {ETCD_START:?}"),
                };
                return Err(format!("{what}; the end of its log:\n{tail}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// True when this member is the cluster's leader (its status says so).
    pub fn is_leader(&self) -> bool {
        let Some((200, body)) = self.http("POST", "/v3/maintenance/status", Some(&json!({}))) else { return false };
        let Ok(status) = serde_json::from_str::<Value>(&de_chunk(&body)) else { return false };
        status["leader"].is_string() && status["leader"] == status["header"]["member_id"]
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// The member's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// One HTTP request to etcd's client port (its JSON gateway); None when it
    /// does not answer.
    pub fn http(&self, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.http_port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let status = response.split(' ').nth(1)?.parse().ok()?;
        let body = response.split_once("\r\n\r\n")?.1.to_string();
        Some((status, body))
    }

    /// The mod_revision etcd holds for the key ending in `suffix`.
    pub fn mod_revision(&self, suffix: &str) -> Option<u64> {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let (status, body) = self.http(
            "POST",
            "/v3/kv/range",
            Some(&json!({"key": b64("/registry/"), "range_end": b64("/registry0")})),
        )?;
        assert_eq!(status, 200, "etcd range: {body}");
        let body = de_chunk(&body);
        let value: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("etcd range body {body:?}: {e}"));
        value["kvs"].as_array()?.iter().find_map(|kv| {
            let key = base64::engine::general_purpose::STANDARD.decode(kv["key"].as_str()?).ok()?;
            let key = String::from_utf8(key).ok()?;
            if key.ends_with(suffix) {
                kv["mod_revision"].as_str()?.parse().ok()
            } else {
                None
            }
        })
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = wait_timeout(&mut child, Duration::from_secs(10));
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// etcd's gateway may answer chunked; joins the chunks.
pub fn de_chunk(body: &str) -> String {
    if body.trim_start().starts_with('{') {
        return body.to_string();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

pub fn shardline_on(etcd: &Etcd, extra: &[&str]) -> Server {
    shardline_on_all(std::slice::from_ref(etcd), extra)
}

pub fn shardline_on_all(members: &[Etcd], extra: &[&str]) -> Server {
    let endpoints: Vec<String> = members.iter().map(|m| m.url()).collect();
    let mut extra_args: Vec<String> =
        ["--log", "etcd", "--etcd-endpoints", &endpoints.join(",")].iter().map(|s| s.to_string()).collect();
    extra_args.extend(extra.iter().map(|s| s.to_string()));
    Server::start_with(Launch { extra_args, ..Launch::default() })
}
