//! etcd members on loopback for the integration tests: one member or a
//! cluster, each in its own temporary directory, started from `$ETCD` or
//! `PATH` (scripts/test.sh installs Debian's etcd-server), stopped by PID, and
//! read through etcd's JSON gateway; plus starting Shardline on them with
//! `--log etcd`.
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
}

impl Etcd {
    /// A single-member cluster.
    pub fn start() -> Etcd {
        Etcd::cluster(1).pop().unwrap()
    }

    /// `size` members on loopback forming one cluster, each healthy.
    pub fn cluster(size: usize) -> Vec<Etcd> {
        let ports: Vec<(u16, u16)> = (0..size).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> =
            ports.iter().enumerate().map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}")).collect();
        let initial = initial.join(",");
        let members: Vec<Etcd> = ports
            .iter()
            .enumerate()
            .map(|(i, (client, peer))| Etcd::spawn(&format!("m{i}"), *client, *peer, &initial, ports[0].1))
            .collect();
        for etcd in &members {
            etcd.wait_healthy();
        }
        members
    }

    pub fn spawn(name: &str, client_port: u16, peer_port: u16, initial_cluster: &str, token: u16) -> Etcd {
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
        let mut etcd = Etcd { child: None, client_port, args, _dir: dir };
        etcd.respawn();
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

    pub fn wait_healthy(&self) {
        let deadline = Instant::now() + ETCD_START;
        loop {
            if let Some((200, body)) = self.http("GET", "/health", None) {
                if body.contains("true") {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "etcd did not become healthy within {ETCD_START:?}");
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
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// One HTTP request to etcd's client port (its JSON gateway); None when it
    /// does not answer.
    pub fn http(&self, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.client_port)).ok()?;
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
