//! Memory per idle watch stream, from the server's own accounting: 10,000
//! informer-style watches (all pods, bookmarks on) multiplexed over 20
//! HTTP/2 connections, and the heap the server's counting allocator reports
//! before the connections and after every watcher is registered. The goal of
//! issue 17 is at most 2 KiB per idle stream, connections included
//! (docs/limits.md, "Memory per idle watch stream"). Bounded in time; the
//! server is stopped by PID (the harness).

mod common;

use common::{Launch, Server};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 20;
const STREAMS_PER_CONNECTION: usize = 500;
const STREAMS: usize = CONNECTIONS * STREAMS_PER_CONNECTION;
/// The goal: server heap per idle watch stream.
const BYTES_PER_STREAM_MAX: u64 = 2048;

/// A gauge's value summed over its label sets.
fn gauge_sum(metrics: &str, name: &str) -> Option<u64> {
    let values: Vec<u64> = metrics
        .lines()
        .filter(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{')))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

struct Accounting {
    heap_bytes: u64,
    heap_allocations: u64,
    resident_bytes: u64,
    watchers: u64,
}

fn accounting(s: &Server) -> Accounting {
    let r = s.get("/metrics");
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.text();
    let read = |name: &str| gauge_sum(&text, name).unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"));
    Accounting {
        heap_bytes: read("shardline_memory_heap_bytes"),
        heap_allocations: read("shardline_memory_heap_allocations"),
        resident_bytes: read("shardline_memory_resident_bytes"),
        watchers: read("shardline_watchers"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn ten_thousand_idle_watch_streams_cost_at_most_two_kib_each() {
    let s = Server::start_with(Launch::default());
    let pods = "/api/v1/pods";
    let revision = s.get_ok(pods)["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let before = accounting(&s);
    assert_eq!(before.watchers, 0);

    let started = Instant::now();
    let mut heads = Vec::with_capacity(STREAMS);
    let mut drivers = Vec::new();
    for _ in 0..CONNECTIONS {
        let tcp = tokio::net::TcpStream::connect(s.addr).await.expect("connect");
        // Windows large enough for every stream's event at once (the
        // streams are read one after the other).
        let (client, connection) = h2::client::Builder::new()
            .initial_window_size(1 << 20)
            .initial_connection_window_size(1 << 24)
            .handshake::<_, bytes::Bytes>(tcp)
            .await
            .expect("h2 handshake");
        drivers.push(tokio::spawn(async move {
            let _ = connection.await;
        }));
        let mut client = client.ready().await.expect("h2 ready");
        for _ in 0..STREAMS_PER_CONNECTION {
            // What client-go's reflector sends after its list.
            let request = http::Request::builder()
                .uri(format!(
                    "http://{}{pods}?allowWatchBookmarks=true&resourceVersion={revision}&timeoutSeconds=600&watch=true",
                    s.addr
                ))
                .header(http::header::ACCEPT, "application/json, */*")
                .header(http::header::USER_AGENT, "idle-watch-memory/v0.0.0 (linux/amd64) kubernetes/test")
                .body(())
                .unwrap();
            client = client.ready().await.expect("h2 stream capacity");
            let (response, _) = client.send_request(request, true).expect("send watch request");
            heads.push(response);
        }
    }
    let mut bodies = Vec::with_capacity(STREAMS);
    for response in heads {
        let response = tokio::time::timeout(Duration::from_secs(60), response)
            .await
            .expect("every response head in time")
            .expect("watch response");
        assert_eq!(response.status(), 200);
        bodies.push(response.into_body());
    }
    // Every watcher registered (the server's count), then the heap.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut after = accounting(&s);
    while after.watchers < STREAMS as u64 {
        assert!(Instant::now() < deadline, "the server reports {} of {STREAMS} watchers", after.watchers);
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = accounting(&s);
    }
    assert_eq!(after.watchers, STREAMS as u64);
    let per_stream = |a: u64, b: u64| a.saturating_sub(b) as f64 / STREAMS as f64;
    let heap_per_stream = per_stream(after.heap_bytes, before.heap_bytes);
    eprintln!(
        "{STREAMS} idle watch streams on {CONNECTIONS} connections (opened in {:?}): heap {} -> {} bytes \
         ({heap_per_stream:.0} per stream), allocations {} -> {} ({:.1} per stream), resident {} -> {} bytes \
         ({:.0} per stream)",
        started.elapsed(),
        before.heap_bytes,
        after.heap_bytes,
        before.heap_allocations,
        after.heap_allocations,
        per_stream(after.heap_allocations, before.heap_allocations),
        before.resident_bytes,
        after.resident_bytes,
        per_stream(after.resident_bytes, before.resident_bytes),
    );
    assert!(
        heap_per_stream <= BYTES_PER_STREAM_MAX as f64,
        "{heap_per_stream:.0} heap bytes per idle watch stream, more than {BYTES_PER_STREAM_MAX}"
    );

    // The streams are live watches, not a count: a write reaches every one.
    let created = s.post_json(
        "/api/v1/namespaces/default/pods",
        &serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "wake-up"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}
        }),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for (n, mut body) in bodies.into_iter().enumerate() {
        let mut received = Vec::new();
        while !received.contains(&b'\n') {
            let chunk = tokio::time::timeout_at(deadline, body.data())
                .await
                .unwrap_or_else(|_| panic!("stream {n}: no event in time"))
                .unwrap_or_else(|| panic!("stream {n} ended"))
                .expect("h2 data");
            let _ = body.flow_control().release_capacity(chunk.len());
            received.extend_from_slice(&chunk);
        }
        let line = &received[..=received.iter().position(|b| *b == b'\n').unwrap()];
        let event: serde_json::Value = serde_json::from_slice(line).expect("an event per line");
        assert_eq!(event["type"], "ADDED", "stream {n}: {event}");
        assert_eq!(event["object"]["metadata"]["name"], "wake-up", "stream {n}");
    }
    for driver in drivers {
        driver.abort();
    }
}
