//! Many watches multiplexed over a few HTTP/2 connections (h2c, prior
//! knowledge): 10,000 watch streams on 10 connections, each must receive
//! every event of a few writes, in order. Proves the server serves watch
//! streams over HTTP/2 with its flow control, and that fan-out reaches every
//! watcher. Bounded in count and time. Also the per-connection limit
//! (`--http2-max-streams-per-connection`).

mod common;

use bytes::Bytes;
use common::{configmap, Launch, Server};
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

/// `--http2-max-streams-per-connection` is what the server advertises as
/// SETTINGS_MAX_CONCURRENT_STREAMS: the client may open that many watches on
/// one connection, and a stream past it is refused by the server
/// (REFUSED_STREAM) while the others keep streaming.
#[tokio::test(flavor = "current_thread")]
async fn the_per_connection_stream_limit_is_advertised_and_enforced() {
    const LIMIT: usize = 3;
    let s = Server::start_with(Launch {
        extra_args: vec!["--http2-max-streams-per-connection".into(), LIMIT.to_string()],
        ..Launch::default()
    });
    let cm = "/api/v1/namespaces/default/configmaps";
    let watch =
        || http::Request::builder().uri(format!("http://{}{cm}?watch=1&timeoutSeconds=60", s.addr)).body(()).unwrap();
    let tcp = tokio::net::TcpStream::connect(s.addr).await.expect("connect");
    let (client, connection) = h2::client::handshake(tcp).await.expect("h2 handshake");
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.expect("h2 ready");
    let mut open = Vec::new();
    for _ in 0..LIMIT {
        client = client.ready().await.expect("h2 stream capacity");
        let (response, _) = client.send_request(watch(), true).expect("send watch request");
        let response = tokio::time::timeout(Duration::from_secs(30), response).await.expect("in time").expect("head");
        assert_eq!(response.status(), 200);
        open.push(response.into_body());
    }
    // The server's SETTINGS have arrived with the responses.
    assert_eq!(client.current_max_send_streams(), LIMIT);

    // A raw client that ignores the setting: its extra stream is refused.
    let mut raw = tokio::net::TcpStream::connect(s.addr).await.expect("connect");
    let refused = raw_streams_past_the_limit(&mut raw, LIMIT + 1).await;
    assert_eq!(refused, vec![(2 * LIMIT + 1) as u32], "the stream past the limit, and only it, is refused");

    // The admitted watches still stream.
    assert_eq!(s.post_json(cm, &configmap("after-refusal", &[])).status, 201);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for (n, body) in open.iter_mut().enumerate() {
        // Initial ADDED events of existing objects come first.
        let mut seen = Vec::new();
        while !String::from_utf8_lossy(&seen).contains("after-refusal") {
            let chunk = tokio::time::timeout_at(deadline, body.data())
                .await
                .unwrap_or_else(|_| panic!("stream {n}: no event in time: {}", String::from_utf8_lossy(&seen)))
                .expect("stream open")
                .expect("data");
            let _ = body.flow_control().release_capacity(chunk.len());
            seen.extend_from_slice(&chunk);
        }
    }
    driver.abort();
}

/// Speaks just enough HTTP/2 by hand to open `streams` watch streams at once
/// (odd ids 1, 3, ...) without waiting for the server's SETTINGS, and returns
/// the ids the server reset with REFUSED_STREAM (error code 7).
async fn raw_streams_past_the_limit(tcp: &mut tokio::net::TcpStream, streams: usize) -> Vec<u32> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }
    // HPACK: a literal without indexing whose name is the static table's `index`.
    fn literal(out: &mut Vec<u8>, index: u8, value: &str) {
        out.push(index);
        out.push(value.len() as u8);
        out.extend_from_slice(value.as_bytes());
    }
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(0x4, 0, 0, &[])); // SETTINGS (empty)
    for i in 0..streams {
        let mut block = vec![0x82, 0x86]; // :method GET, :scheme http
        literal(&mut block, 4, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=60"); // :path
        literal(&mut block, 1, "localhost"); // :authority
        out.extend(frame(0x1, 0x5, (2 * i + 1) as u32, &block)); // HEADERS, END_STREAM|END_HEADERS
    }
    tcp.write_all(&out).await.expect("write frames");
    let mut refused = Vec::new();
    let mut buf = Vec::new();
    let mut heads = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    // Until every stream is answered: a response head or a reset.
    while heads + refused.len() < streams {
        let mut chunk = [0u8; 16384];
        let n = tokio::time::timeout_at(deadline, tcp.read(&mut chunk)).await.expect("answers in time").expect("read");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        while buf.len() >= 9 {
            let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
            if buf.len() < 9 + len {
                break;
            }
            let (kind, flags) = (buf[3], buf[4]);
            let stream = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff;
            let payload: Vec<u8> = buf[9..9 + len].to_vec();
            buf.drain(..9 + len);
            match kind {
                0x1 if stream != 0 => heads += 1,
                0x3 => {
                    let code = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                    assert_eq!(code, 7, "stream {stream} reset with REFUSED_STREAM");
                    refused.push(stream);
                }
                0x4 if flags & 0x1 == 0 => {
                    tcp.write_all(&frame(0x4, 0x1, 0, &[])).await.expect("SETTINGS ack");
                }
                0x7 => panic!("GOAWAY: {payload:?}"),
                _ => {}
            }
        }
    }
    refused
}
