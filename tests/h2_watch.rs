//! Many watches multiplexed over a few HTTP/2 connections (h2c, prior
//! knowledge): 10,000 watch streams on 10 connections, each must receive
//! every event of a few writes, in order. Proves the server serves watch
//! streams over HTTP/2 with its flow control, and that fan-out reaches every
//! watcher. Bounded in count and time.

mod common;

use bytes::Bytes;
use common::{configmap, Server};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 10;
const STREAMS_PER_CONNECTION: usize = 1000;
const WRITES: usize = 3;

#[tokio::test(flavor = "current_thread")]
async fn ten_thousand_watch_streams_over_ten_h2_connections() {
    let s = Server::start();
    let cm = "/api/v1/namespaces/default/configmaps";
    let start_rv = s.get_ok(cm)["metadata"]["resourceVersion"].as_str().unwrap().to_string();

    let mut bodies = Vec::with_capacity(CONNECTIONS * STREAMS_PER_CONNECTION);
    let mut drivers = Vec::new();
    for _ in 0..CONNECTIONS {
        let tcp = tokio::net::TcpStream::connect(s.addr).await.expect("connect");
        let (client, connection) = h2::client::Builder::new()
            .initial_window_size(1 << 20)
            .initial_connection_window_size(1 << 24)
            .handshake::<_, Bytes>(tcp)
            .await
            .expect("h2 handshake");
        drivers.push(tokio::spawn(async move {
            let _ = connection.await;
        }));
        let mut client = client.ready().await.expect("h2 ready");
        for _ in 0..STREAMS_PER_CONNECTION {
            let request = http::Request::builder()
                .uri(format!("http://{}{cm}?watch=1&resourceVersion={start_rv}&timeoutSeconds=60", s.addr))
                .body(())
                .unwrap();
            client = client.ready().await.expect("h2 stream capacity");
            let (response, _) = client.send_request(request, true).expect("send watch request");
            bodies.push(response);
        }
    }
    // Every stream's response head arrives.
    let mut streams = Vec::with_capacity(bodies.len());
    for response in bodies {
        let response = response.await.expect("watch response");
        assert_eq!(response.status(), 200);
        streams.push(response.into_body());
    }
    assert_eq!(streams.len(), CONNECTIONS * STREAMS_PER_CONNECTION);

    for i in 0..WRITES {
        assert_eq!(s.post_json(cm, &configmap(&format!("fan-out-{i}"), &[])).status, 201);
    }

    // Each stream receives the three ADDED events, in order.
    let deadline = Instant::now() + Duration::from_secs(120);
    for (n, mut body) in streams.into_iter().enumerate() {
        let mut received = Vec::new();
        let mut names = Vec::new();
        while names.len() < WRITES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let chunk = tokio::time::timeout(remaining, body.data())
                .await
                .unwrap_or_else(|_| panic!("stream {n} got only {names:?} in time"))
                .unwrap_or_else(|| panic!("stream {n} ended after {names:?}"))
                .expect("h2 data");
            let _ = body.flow_control().release_capacity(chunk.len());
            received.extend_from_slice(&chunk);
            while let Some(newline) = received.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = received.drain(..=newline).collect();
                let event: serde_json::Value = serde_json::from_slice(&line).expect("an event per line");
                assert_eq!(event["type"], "ADDED", "stream {n}: {event}");
                names.push(event["object"]["metadata"]["name"].as_str().unwrap().to_string());
            }
        }
        let expected: Vec<String> = (0..WRITES).map(|i| format!("fan-out-{i}")).collect();
        assert_eq!(names, expected, "stream {n}");
    }
    for driver in drivers {
        driver.abort();
    }
}
