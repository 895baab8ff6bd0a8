//! Watches against the real binary over HTTP/1.1 (chunked JSON lines): the
//! initial state as ADDED events, then ADDED/MODIFIED/DELETED in revision
//! order; selector transitions (entering is ADDED, leaving is DELETED);
//! resuming exactly after a resourceVersion; a resourceVersion older than the
//! history is an ERROR event with a 410 Expired Status; timeoutSeconds ends
//! the stream; single-object watches (legacy path and fieldSelector).

mod common;

use common::{configmap, resource_version, Server};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CM: &str = "/api/v1/namespaces/default/configmaps";

/// A watch stream: the chunked body decoded, split into one JSON document
/// per line.
struct Watch {
    reader: BufReader<TcpStream>,
    pending: Vec<u8>,
    ended: bool,
}

impl Watch {
    fn open(s: &Server, path: &str) -> Watch {
        let mut stream = TcpStream::connect(s.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{path}: {line}");
        let mut chunked = false;
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line.to_ascii_lowercase().starts_with("transfer-encoding: chunked") {
                chunked = true;
            }
            if line == "\r\n" {
                break;
            }
        }
        assert!(chunked, "{path}: a watch is a chunked stream");
        Watch { reader, pending: Vec::new(), ended: false }
    }

    /// Reads one chunk into `pending`; false at the end of the stream.
    fn read_chunk(&mut self) -> bool {
        if self.ended {
            return false;
        }
        let mut size_line = String::new();
        if self.reader.read_line(&mut size_line).unwrap_or(0) == 0 {
            self.ended = true;
            return false;
        }
        let size = usize::from_str_radix(size_line.trim(), 16).unwrap_or_else(|_| panic!("chunk size {size_line:?}"));
        if size == 0 {
            self.ended = true;
            return false;
        }
        let mut chunk = vec![0u8; size + 2];
        std::io::Read::read_exact(&mut self.reader, &mut chunk).unwrap();
        self.pending.extend_from_slice(&chunk[..size]);
        true
    }

    /// The next event, or None when the stream ended.
    fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(newline) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=newline).collect();
                return Some(
                    serde_json::from_slice(&line).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&line))),
                );
            }
            if !self.read_chunk() {
                assert!(
                    self.pending.is_empty(),
                    "a partial event at the end: {}",
                    String::from_utf8_lossy(&self.pending)
                );
                return None;
            }
        }
    }

    fn expect(&mut self, kind: &str, name: &str) -> Value {
        let event = self.next().unwrap_or_else(|| panic!("stream ended before {kind} {name}"));
        assert_eq!(event["type"], kind, "{event}");
        assert_eq!(event["object"]["metadata"]["name"], name, "{event}");
        event
    }
}

fn labelled(name: &str, app: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"app": app}}})
}

#[test]
fn watch_sends_state_then_changes_in_order_and_resumes() {
    let s = Server::start();
    assert_eq!(s.post_json(CM, &configmap("before", &[])).status, 201);
    let mut all = Watch::open(&s, &format!("{CM}?watch=1"));
    let mut web = Watch::open(&s, &format!("{CM}?watch=true&labelSelector=app%3Dweb"));
    let mut one = Watch::open(&s, "/api/v1/watch/namespaces/default/configmaps/a");
    all.expect("ADDED", "before");

    let created = s.post_json(CM, &labelled("a", "db")).json();
    let updated = s.put_json(&format!("{CM}/a"), &labelled("a", "web")).json();
    let left = s.put_json(&format!("{CM}/a"), &labelled("a", "db")).json();
    assert_eq!(s.delete(&format!("{CM}/a")).status, 200);

    let e = all.expect("ADDED", "a");
    assert_eq!(resource_version(&e["object"]), resource_version(&created));
    let e = all.expect("MODIFIED", "a");
    assert_eq!(resource_version(&e["object"]), resource_version(&updated));
    all.expect("MODIFIED", "a");
    let deleted = all.expect("DELETED", "a");
    let deleted_rv: u64 = resource_version(&deleted["object"]).parse().unwrap();
    assert!(deleted_rv > resource_version(&left).parse::<u64>().unwrap());

    // The selector watch sees a enter (ADDED) and leave (DELETED), as kube's
    // watch cache sends it: the previous content at the leaving write's
    // resourceVersion.
    let e = web.expect("ADDED", "a");
    assert_eq!(e["object"]["metadata"]["labels"]["app"], "web");
    let e = web.expect("DELETED", "a");
    assert_eq!(e["object"]["metadata"]["labels"]["app"], "web");
    assert_eq!(resource_version(&e["object"]), resource_version(&left));

    // The single-object watch (legacy path) sees only a.
    assert_eq!(s.post_json(CM, &configmap("other", &[])).status, 201);
    one.expect("ADDED", "a");
    one.expect("MODIFIED", "a");
    one.expect("MODIFIED", "a");
    one.expect("DELETED", "a");

    // Resuming exactly after the create replays what came next, no more, no less.
    let after = resource_version(&created);
    let mut resumed = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={after}&fieldSelector=metadata.name%3Da"));
    resumed.expect("MODIFIED", "a");
    resumed.expect("MODIFIED", "a");
    let e = resumed.expect("DELETED", "a");
    assert_eq!(resource_version(&e["object"]), deleted_rv.to_string());
}

#[test]
fn too_old_resource_version_is_an_error_event_with_410_and_timeouts_end_streams() {
    let s = Server::start_with(common::Launch {
        extra_args: vec!["--history-window".into(), "1s".into()],
        ..common::Launch::default()
    });
    let first = s.post_json(CM, &configmap("x", &[])).json();
    std::thread::sleep(Duration::from_millis(1500));
    // History is trimmed as entries arrive.
    assert_eq!(s.post_json(CM, &configmap("y", &[])).status, 201);
    let old = resource_version(&first).parse::<u64>().unwrap() - 1;
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={old}"));
    let error = w.next().expect("an ERROR event");
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["kind"], "Status");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert!(error["object"]["message"].as_str().unwrap().starts_with("too old resource version"));
    assert!(w.next().is_none(), "the stream ends after the error");

    // timeoutSeconds ends the stream.
    let started = Instant::now();
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&timeoutSeconds=1"));
    w.expect("ADDED", "x");
    w.expect("ADDED", "y");
    assert!(w.next().is_none());
    assert!(started.elapsed() < Duration::from_secs(8), "the watch outlived its timeout");
}

#[test]
fn kubectl_get_watch_sees_new_objects() {
    let s = Server::start();
    let kubectl = common::kubectl_path();
    let mut child = std::process::Command::new(kubectl)
        .args(["--kubeconfig", s.kubeconfig().to_str().unwrap(), "get", "configmaps", "-w", "--request-timeout=20s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run kubectl");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(s.post_json(CM, &configmap("watched-by-kubectl", &[])).status, 201);
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            let found = line.contains("watched-by-kubectl");
            seen.push(line);
            if found {
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.iter().any(|l| l.contains("watched-by-kubectl")), "kubectl -w printed: {seen:?}");
}

#[test]
fn streaming_lists_bookmarks_and_watch_option_validation() {
    let s = Server::start_with(common::Launch {
        extra_args: vec!["--watch-bookmark-interval".into(), "1s".into()],
        ..common::Launch::default()
    });
    for name in ["s1", "s2"] {
        assert_eq!(s.post_json(CM, &configmap(name, &[])).status, 201);
    }
    // Streaming list: the state as ADDED, then the initial-events-end bookmark.
    let mut w = Watch::open(
        &s,
        &format!("{CM}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion="),
    );
    w.expect("ADDED", "s1");
    w.expect("ADDED", "s2");
    let end = w.next().expect("the initial-events-end bookmark");
    assert_eq!(end["type"], "BOOKMARK", "{end}");
    assert_eq!(end["object"]["kind"], "ConfigMap");
    assert_eq!(end["object"]["apiVersion"], "v1");
    assert_eq!(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    let end_rv: u64 = end["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    // Then changes, and periodic bookmarks that never go backwards.
    let created = s.post_json(CM, &configmap("s3", &[])).json();
    let e = w.expect("ADDED", "s3");
    let created_rv: u64 = resource_version(&created).parse().unwrap();
    assert!(created_rv > end_rv);
    assert_eq!(resource_version(&e["object"]), created_rv.to_string());
    // An update elsewhere (another namespace) advances progress without an event.
    assert_eq!(s.post_json("/api/v1/namespaces", &json!({"metadata": {"name": "elsewhere"}})).status, 201);
    let bookmark = w.next().expect("a periodic bookmark");
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    let rv: u64 = bookmark["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    assert!(rv > created_rv, "the bookmark covers progress past the last event: {rv} <= {created_rv}");
    assert!(bookmark["object"]["metadata"].get("annotations").is_none());

    // The options table for watch.
    for (query, field) in [
        ("watch=1&sendInitialEvents=true", "resourceVersionMatch"),
        ("watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1", "resourceVersionMatch"),
        ("watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1", "resourceVersionMatch"),
    ] {
        let r = s.get(&format!("{CM}?{query}"));
        let status = common::assert_status(&r, 422, "Invalid");
        assert_eq!(status["details"]["causes"][0]["field"], field, "{query}: {status}");
    }
}

/// `sendInitialEvents=false` with resourceVersion "0" ("Start at Any") or
/// unset ("Start at Most Recent"): no initial state and no history, only the
/// changes after the watch started, as kube-apiserver's watch cache answers.
#[test]
fn send_initial_events_false_starts_at_the_most_recent_revision_without_state() {
    let s = Server::start();
    for name in ["old1", "old2"] {
        assert_eq!(s.post_json(CM, &configmap(name, &[])).status, 201);
    }
    for rv in ["&resourceVersion=0", "", "&resourceVersion="] {
        let mut w = Watch::open(
            &s,
            &format!("{CM}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan{rv}&timeoutSeconds=5"),
        );
        let name = format!("new{}", rv.len());
        let created = s.post_json(CM, &configmap(&name, &[])).json();
        // The first event is the change made after the watch started: not
        // old1/old2 as initial state, nor their creation from the history.
        let e = w.expect("ADDED", &name);
        assert_eq!(resource_version(&e["object"]), resource_version(&created), "{rv}");
        assert_eq!(s.delete(&format!("{CM}/{name}")).status, 200);
        w.expect("DELETED", &name);
    }
}

/// A watch with bookmarks gets a bookmark 2 s before its timeout at the
/// current resourceVersion, but, as kube-apiserver's cache watcher, only
/// above the one the watch started from: with nothing written since, none.
/// One without bookmarks just ends.
#[test]
fn a_bookmark_comes_just_before_the_timeout() {
    let s = Server::start();
    s.post_json(CM, &configmap("last", &[]));
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3"));
    w.expect("ADDED", "last");
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "elsewhere"}});
    let elsewhere = s.post_json("/api/v1/namespaces/default/secrets", &secret).json();
    let bookmark = w.next().expect("a bookmark before the timeout");
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], resource_version(&elsewhere));
    assert!(w.next().is_none());
    // Nothing written since it started: no bookmark, the watch just ends.
    let mut quiet = Watch::open(&s, &format!("{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3"));
    quiet.expect("ADDED", "last");
    assert!(quiet.next().is_none(), "no bookmark at the watch's own start");
    let mut plain = Watch::open(&s, &format!("{CM}?watch=1&timeoutSeconds=1"));
    plain.expect("ADDED", "last");
    assert!(plain.next().is_none());
}

/// A resourceVersion the server has not reached yet: as kube-apiserver's
/// watch cache, the watch starts at once (200, no wait, no error) and
/// delivers only what comes after that resourceVersion, bookmarks included.
/// A streaming list (sendInitialEvents=true) must first reach it: after
/// `--resource-version-wait` it is an ERROR event with a 504 Timeout Status.
#[test]
fn a_watch_at_a_future_resource_version_gets_only_later_events() {
    let s = Server::start_with(common::Launch {
        extra_args: vec!["--resource-version-wait".into(), "1s".into()],
        ..common::Launch::default()
    });
    let now: u64 = resource_version(&s.post_json(CM, &configmap("f0", &[])).json()).parse().unwrap();
    let future = now + 3;
    let started = Instant::now();
    let mut w =
        Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={future}&allowWatchBookmarks=true&timeoutSeconds=4"));
    assert!(started.elapsed() < Duration::from_secs(3), "the watch waited for its resourceVersion");
    // Revisions of committed entries increase by exactly one: f1..f3 are now+1..now+3.
    let mut written = Vec::new();
    for name in ["f1", "f2", "f3", "f4"] {
        let rv: u64 = resource_version(&s.post_json(CM, &configmap(name, &[])).json()).parse().unwrap();
        written.push((name, rv));
    }
    let updated: u64 =
        resource_version(&s.put_json(&format!("{CM}/f1"), &configmap("f1", &[("k", "v")])).json()).parse().unwrap();
    let after: Vec<&(&str, u64)> = written.iter().filter(|(_, rv)| *rv > future).collect();
    assert_eq!(after.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["f4"], "{written:?}");
    let e = w.expect("ADDED", "f4");
    assert_eq!(resource_version(&e["object"]), written[3].1.to_string());
    let e = w.expect("MODIFIED", "f1");
    assert_eq!(resource_version(&e["object"]), updated.to_string());
    // The stream ends with its timeout; nothing in it is at or before the requested resourceVersion.
    while let Some(event) = w.next() {
        let rv: u64 = event["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
        assert!(rv > future, "{event} is not after {future}");
    }

    let far = updated + 1000;
    let mut w = Watch::open(
        &s,
        &format!("{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={far}"),
    );
    let error = w.next().expect("an ERROR event");
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["code"], 504, "{error}");
    assert_eq!(error["object"]["reason"], "Timeout", "{error}");
    assert!(error["object"]["message"].as_str().unwrap().contains("Too large resource version"), "{error}");
    assert!(w.next().is_none());
}

/// Kubelet-style watches (`fieldSelector=spec.nodeName=NODE`, indexed by the
/// node): a pod that moves from one node to another (deleted, then created
/// there: kube forbids changing `spec.nodeName` by update) is DELETED for the
/// first node's watch and ADDED for the second's; other nodes' watches see
/// nothing.
#[test]
fn node_watches_see_pods_arrive_and_leave_their_node() {
    // Also: the queue's bytes bound is a flag.
    let s = Server::start_with(common::Launch {
        extra_args: vec!["--watch-queue-bytes-max".into(), "1048576".into()],
        ..common::Launch::default()
    });
    const PODS: &str = "/api/v1/namespaces/default/pods";
    let pod = |node: &str| json!({"metadata": {"name": "p"}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}});
    let watch = |node: &str| Watch::open(&s, &format!("/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3D{node}"));
    let (mut a, mut b, mut other) = (watch("node-a"), watch("node-b"), watch("node-c"));
    let created = s.post_json(PODS, &pod("node-a"));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    // kube forbids changing a pod's spec.nodeName by update ("pod updates may
    // not change fields other than ..."), so a pod moves by being deleted and
    // created again on the other node.
    let mut moving = pod("node-b");
    moving["metadata"]["labels"] = json!({"moved": "yes"});
    let refused = s.put_json(&format!("{PODS}/p"), &moving);
    assert_eq!(refused.status, 422, "{}", String::from_utf8_lossy(&refused.body));
    // A scheduled pod is deleted gracefully unless the grace period is 0 (what the kubelet sends).
    assert_eq!(s.delete(&format!("{PODS}/p?gracePeriodSeconds=0")).status, 200);
    let moved = s.post_json(PODS, &pod("node-b")).json();
    assert_eq!(s.delete(&format!("{PODS}/p?gracePeriodSeconds=0")).status, 200);
    a.expect("ADDED", "p");
    let left = a.expect("DELETED", "p");
    assert_eq!(left["object"]["spec"]["nodeName"], "node-a", "leaving carries the last state");
    let arrived = b.expect("ADDED", "p");
    assert_eq!(resource_version(&arrived["object"]), resource_version(&moved));
    b.expect("DELETED", "p");
    // A marker on node-c shows node-c's watch got nothing before it.
    assert_eq!(s.post_json(PODS, &json!({"metadata": {"name": "marker"}, "spec": {"nodeName": "node-c", "containers": [{"name": "c", "image": "i"}]}})).status, 201);
    other.expect("ADDED", "marker");
}

/// An initial state larger than a round (`list_stream_batch_objects`, 500
/// per shard) streams in several rounds: every object exactly once, in key
/// order, and then the live events after the snapshot with no gap.
#[test]
fn a_large_initial_state_streams_in_rounds_then_live_events_follow() {
    let s = Server::start();
    let ns = "/api/v1/namespaces/rounds";
    assert_eq!(s.post_json("/api/v1/namespaces", &json!({"metadata": {"name": "rounds"}})).status, 201);
    let names: Vec<String> = (0..1_100).map(|i| format!("cm-{i:05}")).collect();
    let mut conn = s.conn();
    for name in &names {
        let body = serde_json::to_vec(&configmap(name, &[])).unwrap();
        let r = conn
            .request("POST", &format!("{ns}/configmaps"), &[("Content-Type", "application/json")], Some(&body))
            .unwrap();
        assert_eq!(r.status, 201);
    }
    let mut w = Watch::open(&s, &format!("{ns}/configmaps?watch=1"));
    for name in &names {
        w.expect("ADDED", name);
    }
    let created = s.post_json(&format!("{ns}/configmaps"), &configmap("after", &[])).json();
    let e = w.expect("ADDED", "after");
    assert_eq!(resource_version(&e["object"]), resource_version(&created));
}

/// The watch counters in the binary's /metrics: summed over shards.
#[test]
fn metrics_count_open_watchers_dispatched_and_initial_events() {
    let s = Server::start();
    let total = |text: &str, name: &str| -> u64 {
        let prefix = format!("{name}{{shard=");
        text.lines()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(s.post_json(CM, &configmap("m0", &[])).status, 201);
    let before = String::from_utf8(s.get("/metrics").body).unwrap();
    let mut w = Watch::open(&s, &format!("{CM}?watch=1"));
    w.expect("ADDED", "m0");
    assert_eq!(s.post_json(CM, &configmap("m1", &[])).status, 201);
    w.expect("ADDED", "m1");
    let after = String::from_utf8(s.get("/metrics").body).unwrap();
    assert_eq!(total(&after, "shardline_watchers") - total(&before, "shardline_watchers"), 1, "{after}");
    for (name, grew) in [("shardline_watch_initial_events_total", 1), ("shardline_watch_events_dispatched_total", 1)] {
        assert_eq!(total(&after, name) - total(&before, name), grew, "{name}\n{after}");
    }
    assert!(after.contains("# TYPE shardline_watchers_closed_slow_total counter"), "{after}");
    drop(w);
}
