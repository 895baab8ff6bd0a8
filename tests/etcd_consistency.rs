//! Shardline on the etcd log: consistent reads, compaction and TLS, against
//! real etcd processes on loopback.
//!
//! Owns: a read without resourceVersion on one instance includes a write just
//! acknowledged by another instance, or made in etcd directly, and its
//! resourceVersion is a revision the other instance can watch from (including
//! when etcd's revision moved on outside our keys); compaction every interval
//! (etcd's old revisions gone, 410 for reads and watches older than the
//! instance holds, what it still serves still in etcd); a watch that etcd
//! compacted past while the instance was frozen re-lists (new state served,
//! old watches ended, old revisions 410); TLS to etcd with a client
//! certificate, and a wrong CA refused at start-up.
//!
//! etcd comes from `$ETCD` or `PATH` (scripts/test.sh installs Debian's
//! etcd-server); a missing etcd fails the test, it is never skipped.

mod common;

use base64::Engine;
use common::etcd::*;
use common::tls::TestPki;
use common::watch::Watch;
use common::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn rv(obj: &Value) -> u64 {
    resource_version(obj).parse().unwrap()
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A POST to etcd's JSON gateway that must succeed; its decoded body.
fn etcd_call(etcd: &Etcd, path: &str, body: &Value) -> Value {
    let (status, text) = etcd.http("POST", path, Some(body)).expect("etcd answers");
    assert_eq!(status, 200, "etcd {path}: {text}");
    serde_json::from_str(&de_chunk(&text)).unwrap()
}

/// Puts a config map straight into etcd, stored as Shardline stores it
/// (JSON, without resourceVersion); returns the put's revision.
fn put_configmap_in_etcd(etcd: &Etcd, name: &str, value: &str) -> u64 {
    let object = json!({
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "data": {"k": value},
    });
    let key = format!("/registry/core/configmaps/default/{name}");
    let put = etcd_call(etcd, "/v3/kv/put", &json!({"key": b64(&key), "value": b64(&object.to_string())}));
    put["header"]["revision"].as_str().unwrap().parse().unwrap()
}

/// etcd's current revision (a quorum read's header).
fn etcd_revision(etcd: &Etcd) -> u64 {
    let range = etcd_call(etcd, "/v3/kv/range", &json!({"key": b64("/nothing-here")}));
    range["header"]["revision"].as_str().unwrap().parse().unwrap()
}

/// Whether etcd still holds `revision` (a range read at it succeeds) or
/// answers that it was compacted.
fn etcd_holds(etcd: &Etcd, revision: u64) -> bool {
    let body = json!({"key": b64("/registry/"), "range_end": b64("/registry0"), "revision": revision.to_string()});
    let (status, text) = etcd.http("POST", "/v3/kv/range", Some(&body)).expect("etcd answers");
    if status == 200 {
        return true;
    }
    assert!(text.contains("compacted"), "a range at revision {revision}: {status} {text}");
    false
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_read_without_resource_version_sees_every_write_committed_before_it() {
    let etcd = Etcd::start();
    let a = shardline_on(&etcd, &[]);
    let b = shardline_on(&etcd, &[]);

    // Written on A, read at once on B: the consistent read waits for B to
    // have what etcd has.
    for i in 0..20 {
        let name = format!("c{i:02}");
        let r = a.post_json(CM, &configmap(&name, &[("i", &i.to_string())]));
        assert_eq!(r.status, 201, "{}", r.text());
        let created = rv(&r.json());
        let got = b.get(&format!("{CM}/{name}"));
        assert_eq!(got.status, 200, "B must serve A's acknowledged write {name}: {}", got.text());
        assert_eq!(rv(&got.json()), created);
        let list = b.get_ok(CM);
        assert!(names(&list).contains(&name), "B's list lacks {name}");
        assert!(rv(&list) >= created, "the list's resourceVersion {} is older than the write {created}", rv(&list));
    }

    // Written in etcd directly (another writer), read at once on B.
    let direct = put_configmap_in_etcd(&etcd, "direct", "1");
    let got = b.get(&format!("{CM}/direct"));
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(rv(&got.json()), direct);
    assert_eq!(got.json()["data"]["k"], "1");

    // etcd's revision moves on outside our keys: the read is served at the
    // last revision of ours (the state there is etcd's state now), which the
    // other instance can watch from.
    etcd_call(&etcd, "/v3/kv/put", &json!({"key": b64("/elsewhere/x"), "value": b64("y")}));
    let foreign = etcd_revision(&etcd);
    assert!(foreign > direct);
    let list = b.get_ok(CM);
    assert_eq!(rv(&list), direct, "read at the last revision of the registry, not a foreign one");
    assert_eq!(list["items"].as_array().unwrap().len(), 21, "{:?}", names(&list));
    let mut on_a = Watch::open(&a, &format!("{CM}?watch=true&resourceVersion={}", rv(&list)));
    let r = b.post_json(CM, &configmap("after", &[]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(on_a.next_event(), ("ADDED".into(), "after".into(), rv(&r.json())));

    // The fence key the consistent reads may write is never an object.
    let all = a.get_ok("/api/v1/configmaps");
    assert!(names(&all).iter().all(|n| !n.contains("fence")), "{:?}", names(&all));
    // resourceVersion=0 ("any") and a watch without one work as before.
    assert_eq!(b.get_ok(&format!("{CM}?resourceVersion=0"))["items"].as_array().unwrap().len(), 22);
    let mut fresh = Watch::open(&b, &format!("{CM}?watch=true"));
    let first: Vec<String> = (0..22).map(|_| fresh.next_event().1).collect();
    assert!(first.contains(&"after".to_string()) && first.contains(&"direct".to_string()), "{first:?}");

    // Concurrent consistent reads share etcd round-trips (/metrics counts
    // requests and batches); a burst of 32 must have shared at least once.
    let metric = |name: &str| -> u64 {
        let text = b.get("/metrics").text();
        let line = text.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let mut shared_a_batch = false;
    for _ in 0..5 {
        let (reads, batches) =
            (metric("shardline_etcd_consistent_reads_total"), metric("shardline_etcd_consistent_read_batches_total"));
        let burst: Vec<_> = (0..32)
            .map(|_| {
                let addr = b.addr;
                std::thread::spawn(move || {
                    let mut conn = common::http::Conn::connect(addr).unwrap();
                    conn.request("GET", &format!("{CM}/direct"), &[], None).unwrap().status
                })
            })
            .collect();
        for reader in burst {
            assert_eq!(reader.join().unwrap(), 200);
        }
        let reads = metric("shardline_etcd_consistent_reads_total") - reads;
        let batches = metric("shardline_etcd_consistent_read_batches_total") - batches;
        assert!(reads >= 32 && batches >= 1 && batches <= reads, "{reads} reads, {batches} batches");
        if batches < reads {
            shared_a_batch = true;
            break;
        }
    }
    assert!(shared_a_batch, "32 concurrent reads never shared an etcd round-trip in 5 bursts");
}

/// A TCP relay on loopback that forwards to `target` at once and delivers
/// the answers `delay` late: an instance connected through it sees etcd's
/// watch events late (and every other answer, in the same order).
struct LaggingRelay {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl LaggingRelay {
    fn start(target: u16, delay: Duration) -> LaggingRelay {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            while !stopped.load(Ordering::Acquire) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(upstream) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
                let (mut to_upstream, mut from_client) = (upstream.try_clone().unwrap(), client.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from_client, &mut to_upstream);
                    let _ = to_upstream.shutdown(std::net::Shutdown::Write);
                });
                let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
                let mut from_upstream = upstream;
                std::thread::spawn(move || {
                    let mut buffer = vec![0u8; 64 * 1024];
                    while let Ok(n) = from_upstream.read(&mut buffer) {
                        if n == 0 || tx.send((Instant::now() + delay, buffer[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                });
                let mut to_client = client;
                std::thread::spawn(move || {
                    for (due, bytes) in rx {
                        std::thread::sleep(due.saturating_duration_since(Instant::now()));
                        if to_client.write_all(&bytes).is_err() {
                            break;
                        }
                    }
                    let _ = to_client.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        LaggingRelay { port, stop }
    }
}

impl Drop for LaggingRelay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
    }
}

#[test]
fn a_read_on_an_instance_whose_watch_lags_still_sees_the_latest_write() {
    let etcd = Etcd::start();
    let a = shardline_on(&etcd, &[]);
    let relay =
        LaggingRelay::start(etcd.url().rsplit(':').next().unwrap().parse().unwrap(), Duration::from_millis(300));
    let lagging = format!("http://127.0.0.1:{}", relay.port);
    let b = Server::start_with(Launch {
        extra_args: ["--log", "etcd", "--etcd-endpoints", &lagging].iter().map(|s| s.to_string()).collect(),
        ..Launch::default()
    });
    for i in 0..5 {
        let name = format!("late{i}");
        let r = a.post_json(CM, &configmap(&name, &[]));
        assert_eq!(r.status, 201, "{}", r.text());
        let created = rv(&r.json());
        // B hears of the write 300 ms late; its read waits for it.
        let got = b.get(&format!("{CM}/{name}"));
        assert_eq!(got.status, 200, "B must serve {name} although its watch lags: {}", got.text());
        assert_eq!(rv(&got.json()), created);
        let list = b.get_ok(CM);
        assert_eq!(names(&list).len(), i + 1, "{:?}", names(&list));
    }
}

#[test]
fn consistent_reads_without_etcd_answer_504_reads_at_any_revision_are_served() {
    let mut etcd = Etcd::start();
    let s = shardline_on(&etcd, &["--etcd-request-timeout", "1s"]);
    let r = s.post_json(CM, &configmap("kept", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let kept = rv(&r.json());
    etcd.kill();
    for path in [format!("{CM}/kept"), CM.to_string()] {
        let r = s.get(&path);
        assert_status(&r, 504, "Timeout");
        assert!(r.header("Retry-After").is_some(), "{path}: {:?}", r.headers);
    }
    assert_eq!(s.get_ok(&format!("{CM}/kept?resourceVersion=0"))["data"]["k"], "1");
    assert_eq!(names(&s.get_ok(&format!("{CM}?resourceVersion=0"))), ["kept"]);
    let exact = s.get_ok(&format!("{CM}?resourceVersion={kept}&resourceVersionMatch=Exact"));
    assert_eq!(names(&exact), ["kept"]);
}

#[test]
fn compaction_removes_old_revisions_from_etcd_and_old_reads_get_410() {
    let etcd = Etcd::start();
    let s = shardline_on(&etcd, &["--etcd-compaction-interval", "1s", "--history-window", "2s"]);
    let r = s.post_json(CM, &configmap("c", &[("v", "0")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let first = rv(&r.json());
    let mut object = r.json();
    for v in 1..4 {
        object["data"]["v"] = json!(v.to_string());
        let r = s.put_json(&format!("{CM}/c"), &object);
        assert_eq!(r.status, 200, "{}", r.text());
        object = r.json();
    }
    assert!(etcd_holds(&etcd, first), "not compacted yet");

    // The instance compacts etcd past the first revision once it left the
    // history window (writes keep moving the shards' window).
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut tick = 0;
    let mut written: Vec<(Instant, u64)> = Vec::new();
    while etcd_holds(&etcd, first) {
        assert!(Instant::now() < deadline, "etcd was not compacted past {first}; stderr:\n{}", s.stderr());
        std::thread::sleep(Duration::from_millis(300));
        tick += 1;
        let r = s.post_json(CM, &configmap(&format!("tick{tick}"), &[]));
        assert_eq!(r.status, 201, "{}", r.text());
        written.push((Instant::now(), rv(&r.json())));
    }
    // Compaction keeps the history window (2 s) in etcd: what was written in
    // the last second is still there.
    let recent: Vec<u64> =
        written.iter().filter(|(at, _)| at.elapsed() < Duration::from_secs(1)).map(|w| w.1).collect();
    assert!(!recent.is_empty());
    for revision in recent {
        assert!(etcd_holds(&etcd, revision), "etcd compacted {revision}, written less than a second ago");
    }

    // The instance says what it compacted (it logs once etcd answered).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.stderr().contains("compacted etcd to revision") {
        assert!(Instant::now() < deadline, "{}", s.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }

    // Older than the instance holds: 410 for an exact list and a watch.
    let r = s.get(&format!("{CM}?resourceVersion={first}&resourceVersionMatch=Exact"));
    assert_status(&r, 410, "Expired");
    let mut watch = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={first}"));
    let event = watch.next();
    assert_eq!(event["type"], "ERROR", "{event}");
    assert_eq!(event["object"]["code"], 410, "{event}");

    // The present is served, by the instance and by etcd.
    let latest = rv(&s.get_ok(CM));
    s.get_ok(&format!("{CM}?resourceVersion={latest}&resourceVersionMatch=Exact"));
    assert!(etcd_holds(&etcd, latest));
}

fn signal(pid: i32, signal: libc::c_int) {
    // SAFETY: kill(2) on the PID of a child this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal {signal} to {pid}");
}

#[test]
fn a_watch_compacted_away_while_frozen_relists_and_ends_old_watches() {
    let mut etcd = Etcd::start();
    let s = shardline_on(&etcd, &["--etcd-request-timeout", "2s", "--etcd-compaction-interval", "0"]);
    let r = s.post_json(CM, &configmap("before", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let before = rv(&r.json());
    let pid = s.pid().unwrap();
    let watch_path = format!("{CM}?watch=true&resourceVersion={before}");
    let old_watch = std::thread::spawn({
        let s_addr = s.addr;
        let path = watch_path.clone();
        move || {
            let probe = ProbeServer { addr: s_addr };
            probe.read(&path)
        }
    });
    std::thread::sleep(Duration::from_millis(500));

    // Frozen, the instance cannot re-watch while etcd restarts, changes and
    // compacts its history.
    signal(pid, libc::SIGSTOP);
    etcd.kill();
    etcd.respawn();
    etcd.wait_healthy();
    let during = put_configmap_in_etcd(&etcd, "during", "2");
    etcd_call(&etcd, "/v3/kv/deleterange", &json!({"key": b64("/registry/core/configmaps/default/before")}));
    let now = etcd_revision(&etcd);
    etcd_call(&etcd, "/v3/kv/compaction", &json!({"revision": now.to_string()}));
    assert!(!etcd_holds(&etcd, during));
    signal(pid, libc::SIGCONT);

    // It re-lists: the new state is served, the old watch ended.
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let list = s.get(&format!("{CM}?resourceVersion=0"));
        if list.status == 200 && names(&list.json()) == ["during"] {
            break;
        }
        assert!(Instant::now() < deadline, "no re-list after compaction; stderr:\n{}", s.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(s.stderr().contains("re-listing"), "{}", s.stderr());
    let events = old_watch.join().unwrap().expect("the watch from before the compaction ends");
    assert!(events.iter().all(|e| e["type"] != "ADDED" || e["object"]["metadata"]["name"] != "during"), "{events:?}");
    let r = s.get(&format!("{CM}?resourceVersion={before}&resourceVersionMatch=Exact"));
    assert_status(&r, 410, "Expired");
    let mut watch = Watch::open(&s, &watch_path);
    assert_eq!(watch.next()["object"]["code"], 410);
    let got = s.get_ok(&format!("{CM}/during"));
    assert_eq!(rv(&got), during);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s.readyz_ok() {
        assert!(Instant::now() < deadline, "not ready after the re-list");
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = s.post_json(CM, &configmap("later", &[]));
    assert_eq!(r.status, 201, "{}", r.text());
}

/// Just an address, so a thread can read a watch while the test holds the Server.
struct ProbeServer {
    addr: std::net::SocketAddr,
}

impl ProbeServer {
    fn read(&self, path: &str) -> Option<Vec<Value>> {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = Vec::new();
        match stream.read_to_end(&mut response) {
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => return None,
            Err(e) => panic!("{path}: {e}"),
        }
        let text = String::from_utf8_lossy(&response).into_owned();
        assert!(text.starts_with("HTTP/1.1 200"), "{path}: {text}");
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        Some(
            de_chunk(body).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect(),
        )
    }
}

/// PEM of one DER item.
fn pem(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = body.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

#[test]
fn tls_to_etcd_with_a_client_certificate_and_a_wrong_ca_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(dir.path());
    let etcd = Etcd::start_tls(&EtcdTlsFiles {
        ca_file: pki.ca_file.clone(),
        cert_file: pki.server_cert_file.clone(),
        key_file: pki.server_key_file.clone(),
        client_cert_auth: true,
    });
    let (cert, key) = pki.client_cert("shardline", &[]);
    let cert_file = dir.path().join("etcd-client.pem");
    let key_file = dir.path().join("etcd-client-key.pem");
    std::fs::write(&cert_file, pem("CERTIFICATE", cert.as_ref())).unwrap();
    std::fs::write(&key_file, pem("PRIVATE KEY", key.secret_der())).unwrap();
    let path = |p: &std::path::Path| p.display().to_string();
    let tls_flags = [
        "--etcd-cafile".to_string(),
        path(&pki.ca_file),
        "--etcd-certfile".into(),
        path(&cert_file),
        "--etcd-keyfile".into(),
        path(&key_file),
    ];
    let flags: Vec<&str> = tls_flags.iter().map(String::as_str).collect();
    let s = shardline_on(&etcd, &flags);
    assert!(etcd.url().starts_with("https://"));
    let r = s.post_json(CM, &configmap("secure", &[("k", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = rv(&r.json());
    assert_eq!(rv(&s.get_ok(&format!("{CM}/secure"))), created);
    let mut watch = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={created}"));
    let r = s.post_json(CM, &configmap("secure2", &[]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(watch.next_event(), ("ADDED".into(), "secure2".into(), rv(&r.json())));

    // A CA that did not sign etcd's certificate, or no client certificate
    // while etcd requires one: start-up fails, saying why.
    let other = tempfile::tempdir().unwrap();
    let wrong = TestPki::new(other.path());
    let cases = [
        (vec!["--etcd-cafile".to_string(), path(&wrong.ca_file)], "wrong CA"),
        (vec!["--etcd-cafile".to_string(), path(&pki.ca_file)], "no client certificate"),
        (vec![], "https without --etcd-cafile"),
    ];
    for (extra, case) in cases {
        let data = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(shardline_bin())
            .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port()), "--shards", "1"])
            .arg("--data-dir")
            .arg(data.path())
            .args(["--log", "etcd", "--etcd-endpoints", &etcd.url(), "--etcd-request-timeout", "3s"])
            .args(&extra)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_timeout(&mut child, Duration::from_secs(30));
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = status.unwrap_or_else(|| panic!("{case}: shardline kept running; stderr:\n{stderr}"));
        assert!(!status.success(), "{case}: started; stderr:\n{stderr}");
        assert!(stderr.contains("etcd"), "{case}: the error names etcd:\n{stderr}");
    }
}
