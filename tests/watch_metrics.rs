//! The watch counters in `/metrics` and the initial state streamed in
//! rounds, driven through the real handlers on the in-process backend
//! (`api::testing`): a watcher that does not read is closed when its queue
//! overflows and counted, never waited for; a reader that keeps up stays;
//! and the closed watcher's stream still holds the whole initial state (read
//! in rounds of `list_stream_batch_objects`) followed by the live events it
//! had queued, with no gap and no duplicate.

use bytes::Bytes;
use futures_lite::future::block_on;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use shardline::api::testing::MemoryBackend;
use shardline::api::ResponseBody;
use shardline::config::Config;
use std::rc::Rc;

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn send(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> http::Response<ResponseBody> {
    let bytes = body.map(|b| Bytes::from(serde_json::to_vec(&b).unwrap())).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", "application/json")
        .body(Full::new(bytes))
        .unwrap();
    block_on(shardline::api::handle(backend, request))
}

fn create(backend: &Rc<MemoryBackend>, name: &str, app: &str) -> u64 {
    let response = send(backend, "POST", CM, Some(json!({"metadata": {"name": name, "labels": {"app": app}}})));
    assert_eq!(response.status(), 201);
    let body = block_on(response.into_body().collect()).unwrap().to_bytes();
    let object: Value = serde_json::from_slice(&body).unwrap();
    object["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

/// `name{shard="0"} value` from the Prometheus text.
fn sample(metrics: &str, name: &str) -> u64 {
    let prefix = format!("{name}{{shard=\"0\"}} ");
    let line = metrics.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {prefix} in\n{metrics}"));
    line[prefix.len()..].parse().unwrap()
}

fn metrics(backend: &Rc<MemoryBackend>) -> String {
    let response = send(backend, "GET", "/metrics", None);
    assert_eq!(response.status(), 200);
    let body = block_on(response.into_body().collect()).unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[test]
fn a_slow_watcher_is_closed_and_counted_after_its_initial_state_and_queued_events() {
    let mut config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
    config.watch_queue_events_max = 4;
    config.list_stream_batch_objects = 2;
    let backend = Rc::new(MemoryBackend::new(config, 2));
    let initial: Vec<String> = (0..5).map(|i| format!("initial-{i}")).collect();
    for name in &initial {
        create(&backend, name, "db");
    }
    // Neither body is read while the writes happen.
    let slow = send(&backend, "GET", &format!("{CM}?watch=1"), None);
    assert_eq!(slow.status(), 200);
    let web = send(&backend, "GET", &format!("{CM}?watch=1&labelSelector=app%3Dweb"), None);
    assert_eq!(web.status(), 200);
    let mut live = Vec::new();
    for i in 0..6 {
        let name = format!("live-{i}");
        let revision = create(&backend, &name, if i == 2 { "web" } else { "db" });
        live.push((name, revision));
    }
    let text = metrics(&backend);
    assert_eq!(sample(&text, "shardline_watchers_closed_slow_total"), 1, "{text}");
    assert_eq!(sample(&text, "shardline_watchers"), 1, "{text}");
    // 4 queued for the slow watcher before it overflowed, 1 for the web watcher.
    assert_eq!(sample(&text, "shardline_watch_events_dispatched_total"), 5, "{text}");
    // Only the first round of the unread initial state was read so far.
    assert_eq!(sample(&text, "shardline_watch_initial_events_total"), 0, "{text}");

    // The closed watcher's stream: the initial state, then the live events it queued, then the end.
    let body = block_on(slow.into_body().collect()).unwrap().to_bytes();
    let events: Vec<Value> =
        body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    let names: Vec<&str> = events.iter().map(|e| e["object"]["metadata"]["name"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = initial.iter().map(String::as_str).collect();
    expected.extend(live[..4].iter().map(|(n, _)| n.as_str()));
    assert_eq!(names, expected);
    assert!(events.iter().all(|e| e["type"] == "ADDED"));
    let revisions: Vec<u64> = events[5..]
        .iter()
        .map(|e| e["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(revisions, live[..4].iter().map(|(_, r)| *r).collect::<Vec<_>>());
    let text = metrics(&backend);
    assert_eq!(sample(&text, "shardline_watch_initial_events_total"), 5, "{text}");
    drop(web);
}

#[test]
fn a_watcher_past_its_bytes_bound_is_closed_though_its_event_count_is_low() {
    let mut config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
    config.watch_queue_events_max = 1000;
    // About three 4 KiB configmaps (each with its managedFields entry).
    config.watch_queue_bytes_max = 3 * 4096 + 2048;
    let backend = Rc::new(MemoryBackend::new(config, 2));
    let slow = send(&backend, "GET", &format!("{CM}?watch=1&resourceVersion=0"), None);
    assert_eq!(slow.status(), 200);
    let big = "x".repeat(4096);
    for i in 0..6 {
        let body = json!({"metadata": {"name": format!("big-{i}")}, "data": {"k": big}});
        assert_eq!(send(&backend, "POST", CM, Some(body)).status(), 201);
    }
    let text = metrics(&backend);
    assert_eq!(sample(&text, "shardline_watchers_closed_slow_total"), 1, "{text}");
    assert_eq!(sample(&text, "shardline_watchers"), 0, "{text}");
    assert_eq!(sample(&text, "shardline_watch_events_dispatched_total"), 3, "{text}");
    let body = block_on(slow.into_body().collect()).unwrap().to_bytes();
    let names: Vec<String> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<Value>(l).unwrap()["object"]["metadata"]["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(names, ["big-0", "big-1", "big-2"]);
}
