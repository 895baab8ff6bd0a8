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
//! complete, ordered and without repeats; a Shardline instance killed (SIGKILL)
//! under a write load split over two instances: its watcher reconnects to the
//! other from its last resourceVersion and its history is still every
//! acknowledged write once, in order.
//!
//! etcd comes from `$ETCD` or `PATH` (scripts/test.sh installs Debian's
//! etcd-server); a missing etcd fails the test, it is never skipped.

mod common;

use base64::Engine;
use common::etcd::*;
use common::watch::Watch;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const CM: &str = "/api/v1/namespaces/default/configmaps";

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

    // A value over etcd's request limit is refused before it reaches etcd
    // (413). A ConfigMap that large is refused earlier, by validation (422,
    // kube's 1 MiB limit), so the object here is one with no size rule: a
    // Lease whose holder identity is 1.5 MiB.
    let big = "x".repeat(1600 * 1024);
    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    let r = s.post_json(
        leases,
        &serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "big"},
            "spec": {"holderIdentity": big}}),
    );
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(etcd.mod_revision("/leases/default/big"), None);
    let r = s.post_json(CM, &configmap("big", &[("k", &big)]));
    assert_eq!(r.status, 422, "{}", r.text());
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
    // Reads at any revision are served from memory; consistent reads need
    // etcd's revision (504, tests/etcd_consistency.rs).
    assert_eq!(s.get_ok(&format!("{CM}/kept?resourceVersion=0"))["data"]["k"], "1");
    let list = s.get_ok(&format!("{CM}?resourceVersion=0"));
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

/// Creates config maps named `PREFIX-NNNN` on `addr` one after the other until
/// `stop` is set or the server stops answering. Pushes the acknowledged writes
/// (name, resourceVersion) and returns the write in doubt when the server went
/// away during it (it may or may not have committed, as in kube-apiserver).
fn write_until(
    addr: std::net::SocketAddr,
    prefix: &str,
    stop: &std::sync::atomic::AtomicBool,
    acknowledged: &std::sync::Mutex<Vec<(String, u64)>>,
) -> Option<String> {
    let mut conn = Conn::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    for i in 0.. {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let name = format!("{prefix}-{i:04}");
        let body = serde_json::to_vec(&configmap(&name, &[("k", &name)])).unwrap();
        let headers = [("Content-Type", "application/json"), ("Accept", "application/json")];
        match conn.request("POST", CM, &headers, Some(&body)) {
            Ok(r) if r.status == 201 => acknowledged.lock().unwrap().push((name, rv(&r.json()))),
            Ok(r) => panic!("create {name} on {addr}: {} {}", r.status, r.text()),
            Err(_) => return Some(name),
        }
    }
    unreachable!()
}

/// Two instances over one etcd under a write load split over both; a watcher
/// on A; A is killed with SIGKILL: the watcher reconnects to B from the last
/// resourceVersion it saw, and the history it saw over both connections is
/// every acknowledged write once, in revision order, with nothing else but
/// (possibly) the one write that was in flight on A when it died.
#[test]
fn an_instance_killed_its_watcher_resumes_on_another_from_its_last_resource_version() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    let etcd = Etcd::start();
    let mut a = shardline_on(&etcd, &[]);
    let b = shardline_on(&etcd, &[]);
    let start = rv(&a.get_ok(CM));
    let mut watch = Watch::open(&a, &format!("{CM}?watch=true&resourceVersion={start}"));

    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = |addr: std::net::SocketAddr, prefix: &'static str| {
        let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
        std::thread::spawn(move || write_until(addr, prefix, &stop, &acknowledged))
    };
    let writer_a = writer(a.addr, "on-a");
    let writer_b = writer(b.addr, "on-b");

    let record = |event: Value, seen: &mut Vec<(String, u64)>| {
        assert_eq!(event["type"], "ADDED", "only creates were made: {event}");
        let name = event["object"]["metadata"]["name"].as_str().unwrap().to_string();
        seen.push((name, rv(&event["object"])));
    };
    // Some history through A, then A dies mid-load.
    let mut seen: Vec<(String, u64)> = Vec::new();
    while seen.len() < 40 {
        record(watch.next(), &mut seen);
    }
    a.kill();
    // What A sent before it died is history too; then its stream ends.
    while let Some(event) = watch.try_next() {
        record(event, &mut seen);
    }
    let in_doubt = writer_a.join().unwrap();
    let seen_on_a = seen.len();

    // The client reconnects to B from the last resourceVersion it saw, while
    // B keeps taking writes.
    let last = seen.last().unwrap().1;
    let mut on_b = Watch::open(&b, &format!("{CM}?watch=true&resourceVersion={last}"));
    let acked_after_kill = acknowledged.lock().unwrap().len();
    while acknowledged.lock().unwrap().len() < acked_after_kill + 20 {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    assert_eq!(writer_b.join().unwrap(), None, "B kept answering");

    let mut expected = acknowledged.lock().unwrap().clone();
    expected.sort_by_key(|(_, r)| *r);
    let newest = expected.last().unwrap().1;
    while seen.last().unwrap().1 < newest {
        record(on_b.next(), &mut seen);
    }
    assert!(seen.len() > seen_on_a, "events arrived through B");
    assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "revisions strictly increase, no repeats: {seen:?}");
    // Every acknowledged write once; beyond them, only the write in doubt.
    let unacknowledged: Vec<&(String, u64)> = seen.iter().filter(|e| !expected.contains(e)).collect();
    assert!(
        unacknowledged.iter().all(|(name, _)| Some(name) == in_doubt.as_ref()),
        "events for writes never acknowledged: {unacknowledged:?} (in doubt: {in_doubt:?})"
    );
    let acknowledged_seen: Vec<&(String, u64)> = seen.iter().filter(|e| expected.contains(e)).collect();
    assert_eq!(acknowledged_seen, expected.iter().collect::<Vec<_>>(), "every acknowledged write, in order");
    assert!(expected.iter().any(|(n, _)| n.starts_with("on-a")), "A acknowledged writes before it died");
    // The same state through B: every acknowledged write present.
    let list = b.get_ok(&format!("{CM}?resourceVersion={newest}&resourceVersionMatch=NotOlderThan"));
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    for (name, _) in &expected {
        assert!(names.contains(&name.as_str()), "{name} missing from B's list");
    }
}
