//! Behaviour that must match kube-apiserver byte for byte, against the real
//! server: Status errors in the negotiated representation (protobuf, YAML),
//! bookmarks (periodic, and before a watch's `timeoutSeconds` ends), and the health
//! checks by kube's names.

mod common;

use common::{configmap, Server};
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::Value;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const PB: &str = "application/vnd.kubernetes.protobuf";

/// The Status inside a protobuf error body: `k8s\0` + Unknown{typeMeta, raw}.
fn protobuf_status(r: &common::Response) -> meta::Status {
    assert_eq!(r.header("content-type"), Some(PB), "{:?}", r.headers);
    assert!(r.body.starts_with(b"k8s\x00"), "{:?}", r.body);
    let unknown = Unknown::decode(&r.body[4..]).expect("runtime.Unknown");
    let type_meta = unknown.type_meta.expect("typeMeta");
    assert_eq!(type_meta.api_version.as_deref(), Some("v1"));
    assert_eq!(type_meta.kind.as_deref(), Some("Status"));
    meta::Status::decode(unknown.raw.as_deref().unwrap_or_default()).expect("Status")
}

#[test]
fn status_errors_in_the_negotiated_representation() {
    let s = Server::start();
    s.post_json(CM, &configmap("e-0", &[]));

    // 404 in protobuf, as client-go's typed clients ask (protobuf first, JSON second).
    let r = s.request("GET", &format!("{CM}/missing"), &[("Accept", &format!("{PB}, application/json"))], None);
    assert_eq!(r.status, 404);
    let status = protobuf_status(&r);
    assert_eq!(status.code, Some(404));
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
    assert_eq!(status.status.as_deref(), Some("Failure"));
    assert_eq!(status.message.as_deref(), Some("configmaps \"missing\" not found"));
    let details = status.details.expect("details");
    assert_eq!(details.name.as_deref(), Some("missing"));
    assert_eq!(details.kind.as_deref(), Some("configmaps"));

    // 409 AlreadyExists in protobuf.
    let body = serde_json::to_vec(&configmap("e-0", &[])).unwrap();
    let r = s.request("POST", CM, &[("Accept", PB), ("Content-Type", "application/json")], Some(&body));
    assert_eq!(r.status, 409);
    let status = protobuf_status(&r);
    assert_eq!(status.reason.as_deref(), Some("AlreadyExists"));
    assert_eq!(status.code, Some(409));

    // 422 Invalid in protobuf, with its causes.
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}"#;
    let r = s.request("POST", CM, &[("Accept", PB), ("Content-Type", "application/json")], Some(body));
    assert_eq!(r.status, 422);
    let status = protobuf_status(&r);
    assert_eq!(status.reason.as_deref(), Some("Invalid"));
    assert!(!status.details.expect("details").causes.is_empty());

    // YAML: the same Status as a YAML document.
    let r = s.request("GET", &format!("{CM}/missing"), &[("Accept", "application/yaml")], None);
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some("application/yaml"));
    let yaml_status = Value::Object(shardline::api::yaml::decode_object(&r.body).expect("YAML Status"));
    let json = s.get(&format!("{CM}/missing")).json();
    assert_eq!(yaml_status, json);
    assert_eq!(yaml_status["kind"], "Status");
    assert_eq!(yaml_status["code"], 404);

    // A conversion the Status cannot take (`as=Table`) is skipped: JSON.
    let r = s.request(
        "GET",
        &format!("{CM}/missing"),
        &[("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1,application/json")],
        None,
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["reason"], "NotFound");
}

/// An event's type and object name.
fn event_of(event: &Value) -> (String, String) {
    (
        event["type"].as_str().unwrap_or_default().to_string(),
        event["object"]["metadata"]["name"].as_str().unwrap_or_default().to_string(),
    )
}

/// Writes something the configmap watches do not select (a Secret): the
/// server's resourceVersion moves on, as kube's watch cache's does with its
/// storage's progress. Returns the new resourceVersion.
fn write_elsewhere(s: &Server, name: &str) -> String {
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}});
    let r = s.post_json("/api/v1/namespaces/default/secrets", &secret);
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["metadata"]["resourceVersion"].as_str().unwrap().to_string()
}

/// With `allowWatchBookmarks`, a bookmark comes 2 s before `timeoutSeconds`
/// ends (kube-apiserver's cache watcher: the deadline less 2 s), at the
/// current resourceVersion, and the watch stays open until the timeout:
/// a change in those 2 s is still delivered.
#[test]
fn a_bookmark_comes_two_seconds_before_the_timeout_and_the_watch_lasts_until_it() {
    let s = Server::start();
    let created = s.post_json(CM, &configmap("b-0", &[])).json();
    let from = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let opened = std::time::Instant::now();
    let mut w = common::watch::Watch::open(
        &s,
        &format!("{CM}?watch=1&allowWatchBookmarks=true&resourceVersion={from}&timeoutSeconds=6"),
    );
    let current = write_elsewhere(&s, "b-elsewhere");
    let bookmark = w.next();
    let at = opened.elapsed();
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(
        bookmark["object"],
        serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": current}}),
        "kube's bookmark: the empty object at the current resourceVersion"
    );
    // Due at 4 s (within the shard's wake-up); the periodic one is a minute away.
    assert!(at >= std::time::Duration::from_millis(3_900) && at < std::time::Duration::from_secs(6), "{at:?}");
    let late = s.post_json(CM, &configmap("b-1", &[]));
    assert_eq!(late.status, 201);
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "b-1".into()), "still open after the bookmark");
    assert!(w.try_next().is_none(), "then the watch ends, with no other bookmark");
    let ended = opened.elapsed();
    assert!(ended >= std::time::Duration::from_secs(6), "open until timeoutSeconds: ended after {ended:?}");

    // Without bookmarks, no bookmark: the watch ends at its timeout.
    let opened = std::time::Instant::now();
    let mut plain = common::watch::Watch::open(&s, &format!("{CM}?watch=1&timeoutSeconds=3"));
    assert_eq!(event_of(&plain.next()), ("ADDED".into(), "b-0".into()));
    assert_eq!(event_of(&plain.next()), ("ADDED".into(), "b-1".into()));
    write_elsewhere(&s, "b-elsewhere-2");
    assert!(plain.try_next().is_none(), "no bookmark without allowWatchBookmarks");
    assert!(opened.elapsed() >= std::time::Duration::from_secs(3));
}

/// Periodic bookmarks (`--watch-bookmark-interval`, kube's bookmark
/// frequency, a minute by default): at the current resourceVersion, again
/// when nothing changed since, never at or below where the watch started.
#[test]
fn periodic_bookmarks_at_the_current_resource_version() {
    let s = Server::start_with(common::Launch {
        extra_args: vec!["--watch-bookmark-interval".into(), "1s".into()],
        ..Default::default()
    });
    let created = s.post_json(CM, &configmap("p-0", &[])).json();
    let from = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let mut w = common::watch::Watch::open(
        &s,
        &format!("{CM}?watch=1&allowWatchBookmarks=true&resourceVersion={from}&timeoutSeconds=30"),
    );
    let current = write_elsewhere(&s, "p-elsewhere");
    // No configmap changes: bookmarks only, each at the current resourceVersion.
    let opened = std::time::Instant::now();
    for n in 0..3 {
        let event = w.next();
        assert_eq!(event["type"], "BOOKMARK", "{n}: {event}");
        assert_eq!(event["object"]["metadata"]["resourceVersion"], current.as_str(), "{n}: {event}");
        assert_eq!(event["object"]["kind"], "ConfigMap");
    }
    // Three a second apart, the first within one.
    assert!(opened.elapsed() < std::time::Duration::from_secs(6), "{:?}", opened.elapsed());
    // A change, then bookmarks past it.
    let changed = s.post_json(CM, &configmap("p-1", &[])).json();
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "p-1".into()));
    let next = w.next();
    assert_eq!(next["type"], "BOOKMARK", "{next}");
    assert_eq!(next["object"]["metadata"]["resourceVersion"], changed["metadata"]["resourceVersion"]);
    // Pods are served the same way, their bookmark the empty Pod kube sends.
    let mut pods = common::watch::Watch::open(
        &s,
        &format!("/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion={from}&timeoutSeconds=30"),
    );
    let pod_bookmark = pods.next();
    assert_eq!(pod_bookmark["type"], "BOOKMARK", "{pod_bookmark}");
    assert_eq!(
        pod_bookmark["object"],
        serde_json::json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"resourceVersion": changed["metadata"]["resourceVersion"]},
            "spec": {"containers": null}, "status": {}})
    );
}

/// A Protobuf watch (client-go's typed informers) gets the same bookmark as
/// a JSON one: a length-prefixed WatchEvent of type BOOKMARK whose object is
/// the kind's empty object at the current resourceVersion, and the watch
/// lasts until its timeout.
#[test]
fn protobuf_bookmarks_hold_what_json_bookmarks_hold() {
    let s = std::sync::Arc::new(Server::start());
    let created = s.post_json(CM, &configmap("pb-0", &[])).json();
    let from = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let writer = {
        let s = s.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            write_elsewhere(&s, "pb-elsewhere")
        })
    };
    let opened = std::time::Instant::now();
    let path = format!("{CM}?watch=1&allowWatchBookmarks=true&resourceVersion={from}&timeoutSeconds=3");
    let r = s.request("GET", &path, &[("Accept", &format!("{PB};stream=watch"))], None);
    assert!(opened.elapsed() >= std::time::Duration::from_secs(3), "open until the timeout");
    assert_eq!(r.status, 200);
    let current = writer.join().unwrap();
    let mut frames = Vec::new();
    let mut rest = &r.body[..];
    while rest.len() >= 4 {
        let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        frames.push(meta::WatchEvent::decode(&rest[4..4 + n]).expect("a WatchEvent"));
        rest = &rest[4 + n..];
    }
    assert!(rest.is_empty());
    assert_eq!(frames.len(), 1, "one bookmark, 2 s before the end");
    assert_eq!(frames[0].r#type.as_deref(), Some("BOOKMARK"));
    let raw = frames[0].object.as_ref().and_then(|o| o.raw.as_deref()).unwrap();
    assert!(raw.starts_with(b"k8s\x00"));
    let unknown = Unknown::decode(&raw[4..]).unwrap();
    let type_meta = unknown.type_meta.unwrap();
    assert_eq!((type_meta.api_version.as_deref(), type_meta.kind.as_deref()), (Some("v1"), Some("ConfigMap")));
    let object = k8s_pb::api::core::v1::ConfigMap::decode(unknown.raw.as_deref().unwrap_or_default()).unwrap();
    let metadata = object.metadata.unwrap();
    assert_eq!(metadata.resource_version.as_deref(), Some(current.as_str()));
    // Only the resourceVersion (an empty string is Go's absent string, as kube's encoder writes it).
    let empty = |v: &Option<String>| v.as_deref().unwrap_or_default().is_empty();
    assert!(empty(&metadata.name) && empty(&metadata.namespace) && empty(&metadata.uid), "{metadata:?}");
    assert!(metadata.labels.is_empty() && metadata.annotations.is_empty(), "{metadata:?}");
    assert!(object.data.is_empty() && object.binary_data.is_empty());
}

/// The checks of kube's body, in kube's order and under kube's names.
fn verbose_checks(s: &Server, path: &str) -> Vec<String> {
    let r = s.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    let text = r.text();
    assert!(text.ends_with(&format!("{} check passed\n", &path[1..path.find('?').unwrap()])), "{text}");
    text.lines().filter_map(|l| l.strip_prefix("[+]")).filter_map(|l| l.strip_suffix(" ok")).map(String::from).collect()
}

#[test]
fn health_checks_named_as_kube_names_them() {
    let s = Server::start();
    let hook = "poststarthook/start-system-namespaces-controller";
    assert_eq!(verbose_checks(&s, "/livez?verbose"), ["ping", "log", "etcd", hook]);
    assert_eq!(verbose_checks(&s, "/healthz?verbose"), ["ping", "log", "etcd", hook]);
    assert_eq!(
        verbose_checks(&s, "/readyz?verbose"),
        ["ping", "log", "etcd", "etcd-readiness", "informer-sync", hook, "shutdown"]
    );
    for path in [
        "/livez/ping",
        "/livez/etcd",
        "/readyz/etcd",
        "/readyz/etcd-readiness",
        "/readyz/informer-sync",
        "/readyz/log",
        "/readyz/shutdown",
        "/readyz/poststarthook/start-system-namespaces-controller",
        "/healthz/etcd",
    ] {
        let r = s.get(path);
        assert_eq!((r.status, r.text()), (200, "ok".to_string()), "{path}");
    }
    // Readiness-only checks are not liveness checks, as in kube-apiserver.
    for path in [
        "/livez/etcd-readiness",
        "/livez/informer-sync",
        "/livez/shutdown",
        "/healthz/shutdown",
        "/readyz/no-such-check",
    ] {
        assert_eq!(s.get(path).status, 404, "{path}");
    }
}

/// A component's /healthz over TLS (a self-signed certificate: kube's probe
/// does not verify it), answering `ok` to every request on a thread; the
/// requests' head lines are recorded.
fn fake_component() -> (std::net::SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = rustls::pki_types::CertificateDer::from(certified.cert.der().to_vec());
    let key = rustls::pki_types::PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            let Ok(connection) = rustls::ServerConnection::new(config.clone()) else { continue };
            let mut tls = rustls::StreamOwned::new(connection, tcp);
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") {
                match std::io::Read::read(&mut tls, &mut byte) {
                    Ok(1) => request.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&request).to_string();
            record.lock().unwrap().extend(head.lines().filter(|l| !l.is_empty()).map(String::from));
            let _ = std::io::Write::write_all(&mut tls, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            tls.conn.send_close_notify();
            let _ = std::io::Write::flush(&mut tls);
        }
    });
    (addr, seen)
}

/// componentstatuses as kube-apiserver computes them: kube-scheduler and
/// kube-controller-manager probed at their /healthz (here one answers and
/// one is not running: kube's connection-refused message), and the log as
/// `etcd-0`; kube's deprecation warning; `kubectl get componentstatuses`.
#[test]
fn componentstatuses_probe_the_components_as_kube_does() {
    let (scheduler, requests) = fake_component();
    let nothing = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let controller_manager = nothing.local_addr().unwrap();
    drop(nothing);
    let s = Server::start_with(common::Launch {
        extra_args: vec![
            "--componentstatus-scheduler-address".into(),
            scheduler.to_string(),
            "--componentstatus-controller-manager-address".into(),
            controller_manager.to_string(),
        ],
        ..Default::default()
    });
    let r = s.get("/api/v1/componentstatuses");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("warning"), Some("299 - \"v1 ComponentStatus is deprecated in v1.19+\""));
    let port = controller_manager.port();
    assert_eq!(
        r.json(),
        serde_json::json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": [
            {"metadata": {"name": "scheduler"}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]},
            {"metadata": {"name": "controller-manager"}, "conditions": [{"type": "Healthy", "status": "False",
                "message": format!("Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused")}]},
            {"metadata": {"name": "etcd-0"}, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]},
        ]})
    );
    let seen = requests.lock().unwrap().clone();
    assert!(seen.contains(&"GET /healthz HTTP/1.1".to_string()), "{seen:?}");
    assert!(seen.contains(&"User-Agent: kube-probe/1.36".to_string()), "{seen:?}");

    // One component; a field selector; a name that is no component (kube's plain error, 500).
    let etcd = s.get_ok("/api/v1/componentstatuses/etcd-0");
    assert_eq!(etcd["kind"], "ComponentStatus");
    assert_eq!(etcd["conditions"][0]["status"], "True");
    let one = s.get_ok("/api/v1/componentstatuses?fieldSelector=metadata.name%3Dscheduler");
    assert_eq!(one["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["items"][0]["metadata"]["name"], "scheduler");
    assert_eq!(s.get_ok("/api/v1/componentstatuses?labelSelector=a%3Db")["items"], serde_json::json!([]));
    let missing = s.get("/api/v1/componentstatuses/nope");
    assert_eq!(missing.status, 500);
    assert_eq!(missing.json()["message"], "Component not found: nope");
    assert_eq!(s.request("DELETE", "/api/v1/componentstatuses/etcd-0", &[], None).status, 405);
    // Protobuf, as client-go's typed clients ask.
    let r = s.request("GET", "/api/v1/componentstatuses", &[("Accept", PB)], None);
    assert_eq!((r.status, r.header("content-type")), (200, Some(PB)));
    let unknown = Unknown::decode(&r.body[4..]).expect("runtime.Unknown");
    let list = k8s_pb::api::core::v1::ComponentStatusList::decode(unknown.raw.as_deref().unwrap_or_default()).unwrap();
    let names: Vec<&str> = list.items.iter().filter_map(|i| i.metadata.as_ref()?.name.as_deref()).collect();
    assert_eq!(names, ["scheduler", "controller-manager", "etcd-0"]);

    let out = s.kubectl(&["get", "componentstatuses"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"), "{}", out.stderr);
    let rows: Vec<Vec<&str>> = out.stdout.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0], ["NAME", "STATUS", "MESSAGE", "ERROR"], "{}", out.stdout);
    assert_eq!(rows[1][..3], ["scheduler", "Healthy", "ok"], "{}", out.stdout);
    assert_eq!(rows[2][..3], ["controller-manager", "Unhealthy", "Get"], "{}", out.stdout);
    assert_eq!(rows[3][..3], ["etcd-0", "Healthy", "ok"], "{}", out.stdout);
}
