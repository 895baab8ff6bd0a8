//! Instruction-count workloads (issue 17, item 8): one kind of operation
//! repeated COUNT times through the real request handlers on the in-process
//! backend (`api::testing::MemoryBackend`), with a set-up that does not
//! depend on COUNT. Run under `valgrind --tool=callgrind` at two counts, the
//! difference of the totals divided by the difference of the operations is
//! the instructions per operation, start-up and set-up cancelled out.
//! `benches/system/instructions.py` does that for every mode and prints the
//! table (docs/benchmarks.md, "Method").
//!
//! Modes (`instructions MODE ENCODING SIZE COUNT`):
//!
//! - `watch ENCODING WATCHERS ENTRIES`: WATCHERS watch requests on one pod
//!   collection (`?watch=1` through `api::handle`, so the hub's filter, the
//!   queue and the handler's body stream are the server's), then ENTRIES
//!   committed pod updates, each appended through the backend (every shard's
//!   store applies it, the hub dispatches it to every watcher's queue) and
//!   then every watcher's response body polled until it has nothing more:
//!   each watcher yields that event as one body frame, as hyper would take
//!   it. Operations: delivered events (ENTRIES x WATCHERS).
//! - `list ENCODING ITEMS PAGES`: PAGES requests for the first page of ITEMS
//!   pods (`?limit=ITEMS`) of a preloaded collection on two shards: the list
//!   plan, each shard's snapshot read, the merge, the continue token and the
//!   list body; every body frame taken and dropped as a socket write would.
//!   Operations: items listed (PAGES x ITEMS).
//! - `write VERB 0 WRITES`: WRITES creates (the same pod and path as
//!   `benches/write_path.rs`), updates (PUT of a whole pod without
//!   resourceVersion) or strategic merge patches (a label, as `kubectl
//!   label`) of pods. Operations: writes.
//!
//! ENCODING is `json`, `protobuf` or `cbor` (the Accept header); writes are
//! JSON. Each run prints `operations: N`, which the script reads. Without
//! arguments (as `cargo bench` runs it) every mode runs once at a small size
//! and prints what it did: a check that the modes work, not a measurement.
//!
//! Not in these counts: the sockets, TLS and hyper's HTTP framing, the
//! runtime's cross-core channels and delivery rounds, and the log's
//! durability (the in-process log is a counter and a map).

use bytes::Bytes;
use futures_lite::future::block_on;
use futures_util::FutureExt;
use http_body_util::{BodyExt, Full};
use shardline::api::testing::MemoryBackend;
use shardline::api::{Backend, ResponseBody};
use shardline::config::Config;
use shardline::log::{Operation, Precondition, Proposal};
use shardline::types::key::ObjectKey;
use std::rc::Rc;

/// The fixture's web pod (tests/fixtures/kube-v1.36/objects.yaml), as JSON:
/// the body `benches/write_path.rs` creates, so the create rows agree.
const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-","labels":{"app":"web","tier":"front"},"annotations":{"a":"b"}},"spec":{"nodeName":"node-a","containers":[{"name":"app","image":"registry.example/web:1.2.3","command":["/bin/web"],"args":["--port=8080","--verbose"],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"containerPort":9090,"protocol":"UDP"}],"env":[{"name":"MODE","value":"prod"},{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}],"resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"1","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5},"livenessProbe":{"tcpSocket":{"port":8080},"initialDelaySeconds":10},"volumeMounts":[{"name":"conf","mountPath":"/etc/web","readOnly":true}]}],"volumes":[{"name":"conf","configMap":{"name":"cm-text"}}],"tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"}]}}"#;

/// Pods the watch mode updates in turn (set-up creates them).
const WATCHED_PODS: usize = 10;
/// Pods in the listed collection; a page is its first ITEMS of them.
const LISTED_PODS: usize = 1_000;
/// Pods the update and patch modes write in turn (set-up creates them).
const WRITTEN_PODS: usize = 10;
const SHARDS: u16 = 2;
const COLLECTION: &str = "/api/v1/namespaces/default/pods";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Json,
    Protobuf,
    Cbor,
}

impl Encoding {
    fn parse(text: &str) -> Option<Encoding> {
        match text {
            "json" => Some(Encoding::Json),
            "protobuf" => Some(Encoding::Protobuf),
            "cbor" => Some(Encoding::Cbor),
            _ => None,
        }
    }

    /// The Accept header of a watch, as client-go sends it, and the
    /// Content-Type the server must answer.
    fn watch(self) -> (Option<&'static str>, &'static str) {
        match self {
            Encoding::Json => (None, "application/json"),
            Encoding::Protobuf => {
                (Some("application/vnd.kubernetes.protobuf"), "application/vnd.kubernetes.protobuf;stream=watch")
            }
            Encoding::Cbor => (Some("application/cbor"), "application/cbor-seq"),
        }
    }

    /// The Accept header of a list and the Content-Type of its answer.
    fn list(self) -> (Option<&'static str>, &'static str) {
        match self {
            Encoding::Json => (None, "application/json"),
            Encoding::Protobuf => (Some("application/vnd.kubernetes.protobuf"), "application/vnd.kubernetes.protobuf"),
            Encoding::Cbor => (Some("application/cbor"), "application/cbor"),
        }
    }
}

fn backend() -> Rc<MemoryBackend> {
    let config = Config::with_defaults("127.0.0.1:0".parse().expect("addr"), "/nonexistent".into(), SHARDS);
    Rc::new(MemoryBackend::new(config, SHARDS))
}

/// A pod of about 2 KB, shaped like a real one (as benches/list.rs and
/// benches/formats.rs build them); `version` changes its podIP and a label.
fn stored_pod(name: &str, version: usize) -> Bytes {
    let env: Vec<String> =
        (0..24).map(|i| format!(r#"{{"name":"VARIABLE_{i:02}","value":"value-{i:02}-{name}"}}"#)).collect();
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"default","uid":"6f1c2c1e-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web","tier":"front","version":"v{version}"}}}},"spec":{{"nodeName":"node-17","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"default","containers":[{{"name":"app","image":"registry.example/app:1.0","ports":[{{"containerPort":8080,"protocol":"TCP"}}],"env":[{}],"resources":{{"limits":{{"cpu":"500m","memory":"256Mi"}}}}}}]}},"status":{{"phase":"Running","podIP":"10.0.{}.{}","startTime":"2026-01-01T00:00:05Z"}}}}"#,
        env.join(","),
        version / 250 % 250,
        version % 250
    ))
}

/// Appends a pod version straight to the log (no typed layer: the entry a
/// write would commit), applied by every shard and dispatched to watchers.
fn commit(backend: &MemoryBackend, name: &str, version: usize) {
    let proposal = Proposal {
        key: ObjectKey::new("", "pods", "default", name).encode(),
        precondition: Precondition::None,
        operation: Operation::Put(stored_pod(name, version)),
    };
    block_on(backend.append(proposal)).expect("an unconditional put is committed");
}

fn request(
    method: &str,
    path: &str,
    accept: Option<&str>,
    content_type: &str,
    body: Bytes,
) -> http::Request<Full<Bytes>> {
    let mut builder = http::Request::builder().method(method).uri(path).header("Content-Type", content_type);
    if let Some(accept) = accept {
        builder = builder.header("Accept", accept);
    }
    builder.body(Full::new(body)).expect("request")
}

fn send(backend: &Rc<MemoryBackend>, request: http::Request<Full<Bytes>>) -> http::Response<ResponseBody> {
    block_on(shardline::api::handle(backend, request))
}

fn content_type(response: &http::Response<ResponseBody>) -> &str {
    response.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Takes every frame the body has ready now, without waiting (what hyper
/// does each time the body's task is woken): frames and bytes taken.
fn take_ready(body: &mut ResponseBody) -> (usize, usize) {
    let (mut frames, mut bytes) = (0, 0);
    loop {
        match body.frame().now_or_never() {
            None => return (frames, bytes),
            Some(Some(Ok(frame))) => {
                frames += 1;
                bytes += frame.data_ref().map_or(0, Bytes::len);
            }
            Some(Some(Err(e))) => panic!("watch body failed: {e}"),
            Some(None) => panic!("watch body ended"),
        }
    }
}

/// Takes the whole body (a list page), frame by frame: frames and bytes.
fn take_all(body: &mut ResponseBody) -> (usize, usize) {
    let (mut frames, mut bytes) = (0, 0);
    while let Some(frame) = block_on(body.frame()) {
        let frame = frame.expect("a list body frame");
        frames += 1;
        bytes += frame.data_ref().map_or(0, Bytes::len);
    }
    (frames, bytes)
}

/// Returns the events delivered (`entries` x `watchers`).
fn watch(encoding: Encoding, watchers: usize, entries: usize) -> usize {
    let backend = backend();
    for i in 0..WATCHED_PODS {
        commit(&backend, &format!("pod-{i:02}"), 0);
    }
    let (accept, expected) = encoding.watch();
    let path = format!("{COLLECTION}?watch=1&resourceVersion={}", backend.committed_revision());
    let mut bodies: Vec<ResponseBody> = (0..watchers)
        .map(|_| {
            let response = send(&backend, request("GET", &path, accept, "application/json", Bytes::new()));
            assert_eq!(response.status(), 200, "watch {path}");
            assert_eq!(content_type(&response), expected, "watch content type");
            let mut body = response.into_body();
            assert_eq!(take_ready(&mut body), (0, 0), "a watch from the current revision starts empty");
            body
        })
        .collect();
    let mut delivered = 0;
    for version in 1..=entries {
        commit(&backend, &format!("pod-{:02}", version % WATCHED_PODS), version);
        for body in &mut bodies {
            let (frames, bytes) = take_ready(body);
            assert_eq!(frames, 1, "one event, one frame");
            assert!(bytes > 1_000, "the frame holds the pod");
            delivered += frames;
        }
    }
    assert_eq!(delivered, entries * watchers);
    delivered
}

/// Returns the items listed (`pages` x `items`).
fn list(encoding: Encoding, items: usize, pages: usize) -> usize {
    assert!(items < LISTED_PODS, "a page is part of the collection");
    let backend = backend();
    for i in 0..LISTED_PODS {
        commit(&backend, &format!("pod-{i:05}"), i);
    }
    let (accept, expected) = encoding.list();
    let path = format!("{COLLECTION}?limit={items}");
    let page = |backend: &Rc<MemoryBackend>| {
        let response = send(backend, request("GET", &path, accept, "application/json", Bytes::new()));
        assert_eq!(response.status(), 200, "list {path}");
        assert_eq!(content_type(&response), expected, "list content type");
        take_all(&mut response.into_body())
    };
    // Set-up: the first page builds the items' cached encodings (once per
    // object version, as in the server); a JSON page is checked whole.
    let (_, bytes) = page(&backend);
    if encoding == Encoding::Json {
        let json = send(&backend, request("GET", &path, None, "application/json", Bytes::new()));
        let body = block_on(json.into_body().collect()).expect("list body").to_bytes();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("a JSON list");
        assert_eq!(value["items"].as_array().map(Vec::len), Some(items), "a page of {items}");
        assert!(value["metadata"]["continue"].as_str().is_some_and(|t| !t.is_empty()), "a continue token");
    }
    for _ in 0..pages {
        assert_eq!(page(&backend).1, bytes, "every page is the same page");
    }
    pages * items
}

/// A named copy of the fixture pod with one label's value.
fn named_pod(name: &str, revision: usize) -> Bytes {
    let named = POD.replacen(r#""generateName":"web-""#, &format!(r#""name":"{name}""#), 1);
    Bytes::from(named.replacen(r#""tier":"front""#, &format!(r#""tier":"front","rev":"r{revision}""#), 1))
}

/// Returns the writes made.
fn write(verb: &str, writes: usize) -> usize {
    let backend = backend();
    let json = "application/json";
    for i in 0..WRITTEN_PODS {
        let response = send(&backend, request("POST", COLLECTION, None, json, named_pod(&format!("web-{i:02}"), 0)));
        assert_eq!(response.status(), 201, "set-up create");
    }
    for n in 1..=writes {
        let name = format!("web-{:02}", n % WRITTEN_PODS);
        let one = format!("{COLLECTION}/{name}");
        let (request, status) = match verb {
            "create" => (request("POST", COLLECTION, None, json, Bytes::from_static(POD.as_bytes())), 201),
            "update" => (request("PUT", &one, None, json, named_pod(&name, n)), 200),
            "patch" => {
                let patch = format!(r#"{{"metadata":{{"labels":{{"rev":"r{n}"}}}}}}"#);
                (request("PATCH", &one, None, "application/strategic-merge-patch+json", Bytes::from(patch)), 200)
            }
            other => panic!("unknown write verb {other:?}: create, update or patch"),
        };
        let response = send(&backend, request);
        assert_eq!(response.status(), status, "{verb} {n}");
        // The answer's body is written to the client: take it.
        take_all(&mut response.into_body());
    }
    writes
}

fn run(mode: &str, kind: &str, size: usize, count: usize) -> usize {
    match mode {
        "watch" => watch(Encoding::parse(kind).expect("json, protobuf or cbor"), size, count),
        "list" => list(Encoding::parse(kind).expect("json, protobuf or cbor"), size, count),
        "write" => write(kind, count),
        other => panic!("unknown mode {other:?}: watch, list or write"),
    }
}

const USAGE: &str =
    "usage: instructions watch|list ENCODING SIZE COUNT | instructions write create|update|patch 0 COUNT";

fn main() {
    // `cargo bench` passes `--bench` (and perhaps a filter); the modes take
    // four plain arguments.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if let [mode, kind, size, count] = args.as_slice() {
        let size: usize = size.parse().expect(USAGE);
        let count: usize = count.parse().expect(USAGE);
        println!("operations: {}", run(mode, kind, size, count));
        return;
    }
    if !args.is_empty() {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    eprintln!("{USAGE}\nno mode given: every mode once at a small size (a check, not a measurement; see benches/system/instructions.py)");
    for encoding in ["json", "protobuf", "cbor"] {
        println!("watch {encoding} 10 watchers x 3 entries: {} events", run("watch", encoding, 10, 3));
        println!("list {encoding} 3 pages of 50: {} items", run("list", encoding, 50, 3));
    }
    for verb in ["create", "update", "patch"] {
        println!("write {verb} x 3: {} writes", run("write", verb, 0, 3));
    }
}
