//! Shardline on the etcd log (`--log etcd`) against a real etcd on loopback.
//!
//! Owns: create/get/list/watch/update/delete over HTTP and kubectl with the
//! resourceVersion checked against etcd's mod_revision (read through etcd's
//! JSON gateway); two Shardline instances over one etcd (list on one, watch
//! from that resourceVersion on the other, writes on either seen by watchers on
//! both, in order, without gap or repeat); etcd stopped: reads still served,
//! writes answer 503 with Retry-After, /readyz not ready, and catching up when
//! etcd returns; a 3-member etcd
//! cluster under a write load from two instances losing a follower, or its
//! leader: every acknowledged write present after, every watcher's history
//! complete, ordered and without repeats.
//!
//! etcd comes from `$ETCD` or `PATH` (scripts/test.sh installs Debian's
//! etcd-server); a missing etcd fails the test, it is never skipped.

mod common;

use base64::Engine;
use common::watch::Watch;
use common::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CM: &str = "/api/v1/namespaces/default/configmaps";
/// How long etcd may take to answer /health after it was spawned.
const ETCD_START: Duration = Duration::from_secs(30);

fn etcd_bin() -> PathBuf {
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
struct Etcd {
    child: Option<Child>,
    client_port: u16,
    /// The command line, to start the member again on the same data.
    args: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Etcd {
    /// A single-member cluster.
    fn start() -> Etcd {
        Etcd::cluster(1).pop().unwrap()
    }

    /// `size` members on loopback forming one cluster, each healthy.
    fn cluster(size: usize) -> Vec<Etcd> {
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

    fn spawn(name: &str, client_port: u16, peer_port: u16, initial_cluster: &str, token: u16) -> Etcd {
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
    fn respawn(&mut self) {
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

    fn wait_healthy(&self) {
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
    fn is_leader(&self) -> bool {
        let Some((200, body)) = self.http("POST", "/v3/maintenance/status", Some(&json!({}))) else { return false };
        let Ok(status) = serde_json::from_str::<Value>(&de_chunk(&body)) else { return false };
        status["leader"].is_string() && status["leader"] == status["header"]["member_id"]
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// One HTTP request to etcd's client port (its JSON gateway); None when it
    /// does not answer.
    fn http(&self, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, String)> {
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
    fn mod_revision(&self, suffix: &str) -> Option<u64> {
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

    fn kill(&mut self) {
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
fn de_chunk(body: &str) -> String {
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

fn shardline_on(etcd: &Etcd, extra: &[&str]) -> Server {
    shardline_on_all(std::slice::from_ref(etcd), extra)
}

fn shardline_on_all(members: &[Etcd], extra: &[&str]) -> Server {
    let endpoints: Vec<String> = members.iter().map(|m| m.url()).collect();
    let mut extra_args: Vec<String> =
        ["--log", "etcd", "--etcd-endpoints", &endpoints.join(",")].iter().map(|s| s.to_string()).collect();
    extra_args.extend(extra.iter().map(|s| s.to_string()));
    Server::start_with(Launch { extra_args, ..Launch::default() })
}

fn rv(obj: &Value) -> u64 {
    resource_version(obj).parse().unwrap()
}

#[test]
fn crud_over_http_and_kubectl_with_etcd_mod_revisions() {
    let etcd = Etcd::start();
    let s = shardline_on(&etcd, &[]);

    let r = s.post_json(CM, &configmap("a", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = rv(&r.json());
    assert_eq!(etcd.mod_revision("/configmaps/default/a"), Some(created), "resourceVersion is etcd's mod_revision");
    assert_eq!(rv(&s.get_ok(&format!("{CM}/a"))), created);

    let mut watch = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={created}"));
    let mut changed = s.get_ok(&format!("{CM}/a"));
    changed["data"]["k"] = json!("2");
    let r = s.put_json(&format!("{CM}/a"), &changed);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = rv(&r.json());
    assert!(updated > created);
    assert_eq!(etcd.mod_revision("/configmaps/default/a"), Some(updated));
    assert_eq!(watch.next_event(), ("MODIFIED".into(), "a".into(), updated));

    // A stale resourceVersion is etcd's compare failing: 409, nothing written.
    let r = s.put_json(&format!("{CM}/a"), &changed);
    assert_eq!(r.status, 409, "{}", r.text());
    // Creating an existing name: 409.
    let r = s.post_json(CM, &configmap("a", &[("k", "x")]));
    assert_eq!(r.status, 409, "{}", r.text());

    // kubectl: create, get, list, delete.
    s.kubectl_ok(&["create", "configmap", "b", "--from-literal=x=y"]);
    let (kind, name, b_rv) = watch.next_event();
    assert_eq!((kind.as_str(), name.as_str()), ("ADDED", "b"));
    assert_eq!(etcd.mod_revision("/configmaps/default/b"), Some(b_rv));
    let got = s.kubectl_ok(&["get", "configmap", "b", "-o", "json"]).json();
    assert_eq!(rv(&got), b_rv);
    assert_eq!(got["data"]["x"], "y");
    let list = s.kubectl_ok(&["get", "configmaps", "-o", "json"]).json();
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    s.kubectl_ok(&["delete", "configmap", "a"]);
    let (kind, name, deleted) = watch.next_event();
    assert_eq!((kind.as_str(), name.as_str()), ("DELETED", "a"));
    assert!(deleted > b_rv);
    assert_eq!(etcd.mod_revision("/configmaps/default/a"), None, "the key is gone from etcd");
    assert_eq!(s.get(&format!("{CM}/a")).status, 404);

    // A value over etcd's request limit is refused before it reaches etcd.
    let big = "x".repeat(1600 * 1024);
    let r = s.post_json(CM, &configmap("big", &[("k", &big)]));
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(etcd.mod_revision("/configmaps/default/big"), None);
}

#[test]
fn two_instances_over_one_etcd_serve_one_history() {
    let etcd = Etcd::start();
    let a = shardline_on(&etcd, &[]);
    let b = shardline_on(&etcd, &[]);

    let r = a.post_json(CM, &configmap("first", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let list = a.get_ok(CM);
    let listed = rv(&list);
    assert!(listed >= rv(&r.json()));

    // List on A, watch on B from that resourceVersion; watch on A too.
    let mut on_b = Watch::open(&b, &format!("{CM}?watch=true&resourceVersion={listed}"));
    let mut on_a = Watch::open(&a, &format!("{CM}?watch=true&resourceVersion={listed}"));

    let mut expected = Vec::new();
    for i in 0..5 {
        let (writer, name) = if i % 2 == 0 { (&a, format!("w{i}")) } else { (&b, format!("w{i}")) };
        let r = writer.post_json(CM, &configmap(&name, &[("i", &i.to_string())]));
        assert_eq!(r.status, 201, "{}", r.text());
        expected.push(("ADDED".to_string(), name, rv(&r.json())));
    }
    let r = b.delete(&format!("{CM}/first"));
    assert_eq!(r.status, 200, "{}", r.text());
    let mut check = Watch::open(&a, &format!("{CM}?watch=true&resourceVersion={listed}"));
    let (_, _, deleted_rv) = {
        // The deletion's revision, as A's watch sees it after the five adds.
        for _ in 0..5 {
            check.next_event();
        }
        check.next_event()
    };
    expected.push(("DELETED".to_string(), "first".to_string(), deleted_rv));
    expected.sort_by_key(|e| e.2);

    for (name, watch) in [("B", &mut on_b), ("A", &mut on_a)] {
        let seen: Vec<_> = (0..expected.len()).map(|_| watch.next_event()).collect();
        assert_eq!(seen, expected, "the watch on {name} sees every write of both instances once, in order");
    }
    // The same state and resourceVersion through either instance.
    let on_a_obj = a.get_ok(&format!("{CM}/w1"));
    let on_b_obj = b.get_ok(&format!("{CM}/w1"));
    assert_eq!(rv(&on_a_obj), rv(&on_b_obj));
    assert_eq!(etcd.mod_revision("/configmaps/default/w1"), Some(rv(&on_b_obj)));
}

#[test]
fn etcd_unreachable_reads_served_writes_refused_readyz_not_ready() {
    let mut etcd = Etcd::start();
    let s = shardline_on(&etcd, &["--etcd-request-timeout", "2s"]);
    let r = s.post_json(CM, &configmap("kept", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(s.readyz_ok());

    etcd.kill();
    let r = s.post_json(CM, &configmap("lost", &[("k", "1")]));
    assert!(r.status == 503 || r.status == 504, "a write without etcd: {} {}", r.status, r.text());
    assert!(r.header("Retry-After").is_some(), "{:?}", r.headers);
    assert!(!s.readyz_ok(), "/readyz must not be ready without etcd");
    // Reads are served from memory.
    assert_eq!(s.get_ok(&format!("{CM}/kept"))["data"]["k"], "1");
    let list = s.get_ok(CM);
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    // etcd returns: the instance catches up (a write made directly in etcd
    // meanwhile is seen), becomes ready, and writes succeed again.
    etcd.respawn();
    etcd.wait_healthy();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (status, body) = etcd
        .http(
            "POST",
            "/v3/kv/txn",
            Some(
                &json!({"success": [{"request_delete_range": {"key": b64("/registry/core/configmaps/default/kept")}}]}),
            ),
        )
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let mut attempts = 0;
    while s.get(&format!("{CM}/kept")).status != 404 {
        attempts += 1;
        assert!(attempts < 600, "the instance did not catch up with etcd after it returned");
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = s.post_json(CM, &configmap("after", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(s.readyz_ok(), "ready again once etcd answers");
}

/// Creates `name` on `s`, retrying while etcd is unavailable (503/504); a 409
/// on a retry means an earlier attempt committed. Returns the object's
/// resourceVersion as `s` reports it.
fn create_acknowledged(s: &Server, name: &str) -> u64 {
    for _ in 0..100 {
        let r = s.post_json(CM, &configmap(name, &[("k", name)]));
        match r.status {
            201 => return rv(&r.json()),
            409 => return rv(&s.get_ok(&format!("{CM}/{name}"))),
            503 | 504 => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("create {name}: {other} {}", r.text()),
        }
    }
    panic!("create {name}: etcd stayed unavailable for 100 attempts");
}

/// A write load on two instances while one etcd member (the leader, or not)
/// is killed: every acknowledged write is present afterwards on both
/// instances, and a watcher on each saw them all once, in revision order.
fn member_killed_under_load(kill_leader: bool) {
    let mut members = Etcd::cluster(3);
    let a = shardline_on_all(&members, &[]);
    let b = shardline_on_all(&members, &[]);
    let start = rv(&a.get_ok(CM));
    let mut watches = [
        Watch::open(&a, &format!("{CM}?watch=true&resourceVersion={start}")),
        Watch::open(&b, &format!("{CM}?watch=true&resourceVersion={start}")),
    ];

    let writes = 60;
    let mut acknowledged = Vec::new();
    for i in 0..writes {
        if i == writes / 3 {
            let victim = if kill_leader {
                members.iter().position(|m| m.is_leader()).expect("a leader among the members")
            } else {
                members.iter().position(|m| !m.is_leader()).expect("a follower among the members")
            };
            members[victim].kill();
        }
        let name = format!("load-{i:03}");
        let writer = if i % 2 == 0 { &a } else { &b };
        acknowledged.push((name.clone(), create_acknowledged(writer, &name)));
    }
    let last = acknowledged.iter().map(|(_, r)| *r).max().unwrap();

    for (index, watch) in watches.iter_mut().enumerate() {
        let mut seen: Vec<(String, u64)> = Vec::new();
        while seen.last().map(|(_, r)| *r) < Some(last) {
            let (kind, name, revision) = watch.next_event();
            assert_eq!(kind, "ADDED", "watch {index}: only creates were made, got {kind} {name}");
            seen.push((name, revision));
        }
        assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "watch {index}: revisions strictly increase: {seen:?}");
        let mut expected = acknowledged.clone();
        expected.sort_by_key(|(_, r)| *r);
        assert_eq!(seen, expected, "watch {index}: every acknowledged write once, in order");
    }
    for s in [&a, &b] {
        let list = s.get_ok(&format!("{CM}?resourceVersion={last}&resourceVersionMatch=NotOlderThan"));
        let names: Vec<&str> =
            list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
        let mut expected: Vec<&str> = acknowledged.iter().map(|(n, _)| n.as_str()).collect();
        expected.sort();
        assert_eq!(names, expected, "every acknowledged write is present");
    }
}

#[test]
fn three_members_a_follower_killed_under_load_loses_nothing() {
    member_killed_under_load(false);
}

#[test]
fn three_members_the_leader_killed_under_load_loses_nothing() {
    member_killed_under_load(true);
}
