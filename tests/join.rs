//! Joining a cluster (issue 16): one real etcd, a Shardline instance W in
//! kube-apiserver's place (`--log etcd --storage-layout kubernetes`, client
//! certificates, `Node,RBAC`), and an instance J on the same etcd and
//! layout with `--upstream https://W` and an admin client certificate for
//! it. Every write sent to J is forwarded to W as its caller
//! (`Impersonate-*`), answered with W's status, headers and body, and is
//! readable on J as soon as J answered; reads are J's own; J writes nothing
//! to etcd itself; with W gone, a write through J gets kube's 503.
//!
//! Owns: write forwarding end to end (the request selection and headers are
//! unit-tested in `src/api/forward.rs`).

#![cfg(feature = "etcd")]

mod common;

use base64::Engine;
use common::etcd::{de_chunk, Etcd};
use common::{Launch, Server};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;

type Tls = Arc<rustls::ClientConfig>;

struct Client {
    addr: SocketAddr,
    tls: Tls,
}

struct Answer {
    code: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {} {}", self.code, self.body))
    }

    fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    }
}

impl Client {
    fn call(&self, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Answer {
        let headers = [("Accept", "application/json"), ("Content-Type", content_type)];
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let (code, headers, body) =
            common::tls::exchange(self.addr, &self.tls, method, path, &headers, body.as_bytes()).expect("a request");
        Answer { code, headers, body }
    }

    fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        self.call(method, path, "application/json", body)
    }

    fn ok(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let answer = self.send(method, path, body);
        assert!((200..300).contains(&answer.code), "{method} {path}: {} {}", answer.code, answer.body);
        answer.json()
    }
}

/// etcd's current revision and how many times the consistent reads' fence
/// key was written (0 when it never was).
fn etcd_revision_and_fences(etcd: &Etcd) -> (u64, u64) {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (status, body) =
        etcd.http("POST", "/v3/kv/range", Some(&json!({"key": b64("/registry/~fence")}))).expect("etcd answers");
    assert_eq!(status, 200, "{body}");
    let value: Value = serde_json::from_str(&de_chunk(&body)).unwrap();
    let revision = value["header"]["revision"].as_str().unwrap().parse().unwrap();
    let fences = value["kvs"][0]["version"].as_str().map(|v| v.parse().unwrap()).unwrap_or(0);
    (revision, fences)
}

/// A TCP relay on loopback to `target` that delays what the target sends
/// by `delay` (latency, not throughput: each chunk leaves `delay` after it
/// arrived). J reaches etcd through one, so its watch hears of W's writes
/// well after W has answered them: read-your-writes on J then holds only
/// because J waits for them. Its threads end with their connections.
fn slow_relay(target: SocketAddr, delay: std::time::Duration) -> SocketAddr {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(target) else { continue };
            let (mut client_in, mut server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut client_in, &mut server_out);
                let _ = server_out.shutdown(Shutdown::Write);
            });
            let (tx, rx) = std::sync::mpsc::channel::<(std::time::Instant, Vec<u8>)>();
            let mut server_in = server;
            std::thread::spawn(move || {
                let mut buffer = vec![0u8; 64 * 1024];
                while let Ok(n) = server_in.read(&mut buffer) {
                    if n == 0 || tx.send((std::time::Instant::now(), buffer[..n].to_vec())).is_err() {
                        break;
                    }
                }
            });
            let mut client_out = client;
            std::thread::spawn(move || {
                for (arrived, bytes) in rx {
                    std::thread::sleep(delay.saturating_sub(arrived.elapsed()));
                    if client_out.write_all(&bytes).is_err() {
                        break;
                    }
                }
                let _ = client_out.shutdown(Shutdown::Both);
            });
        }
    });
    addr
}

fn server_args(etcd_url: &str, pki: &common::tls::TestPki) -> Vec<String> {
    server_args_with(etcd_url, pki, "Node,RBAC")
}

fn server_args_with(etcd_url: &str, pki: &common::tls::TestPki, authorization_mode: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "--log",
        "etcd",
        "--etcd-endpoints",
        etcd_url,
        "--storage-layout",
        "kubernetes",
        "--client-ca-file",
        &pki.ca_file.display().to_string(),
        "--authorization-mode",
        authorization_mode,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(pki.server_args());
    args
}

fn configmap(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"joined": "yes"}}, "data": data})
}

fn pod(name: &str, node: &str, secret: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "s", "secret": {"secretName": secret}}]}})
}

/// Nodes n1 and n2, secrets s1 and s2 in `ns`, and pods p1 (on n1, using s1)
/// and p2 (on n2, using s2), written through `client`.
fn two_nodes_with_a_pod_each(client: &Client, ns: &str) {
    for node in ["n1", "n2"] {
        client.ok(
            "POST",
            "/api/v1/nodes",
            Some(&json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})),
        );
    }
    for name in ["s1", "s2"] {
        let secret =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"k": "v"}});
        client.ok("POST", &format!("{ns}/secrets"), Some(&secret));
    }
    client.ok("POST", &format!("{ns}/pods"), Some(&pod("p1", "n1", "s1")));
    client.ok("POST", &format!("{ns}/pods"), Some(&pod("p2", "n2", "s2")));
}

#[test]
fn writes_through_a_joined_instance_are_the_upstreams_as_the_caller() {
    let etcd = Etcd::start();
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let admin_tls = pki.client_config(Some(pki.client_cert("admin", &["system:masters"])));
    let mut w_args = server_args(&etcd.url(), &pki);
    // No compaction during the test: etcd's revision moves only by writes.
    w_args.extend(["--etcd-compaction-interval".into(), "0".into()]);
    let mut w = Server::start_with(Launch {
        extra_args: w_args,
        tls_client: Some((admin_tls.clone(), pki.ca_file.clone())),
        ..Launch::default()
    });
    let (cert, key) = pki.client_cert_files(dir.path(), "joiner", "shardline-joiner", &["system:masters"]);
    // J hears from etcd 300 ms late (W does not).
    let etcd_addr: SocketAddr = etcd.url().trim_start_matches("http://").parse().unwrap();
    let relay = slow_relay(etcd_addr, std::time::Duration::from_millis(300));
    let mut j_args = server_args(&format!("http://{relay}"), &pki);
    j_args.extend([
        "--upstream".to_string(),
        format!("https://{}", w.addr),
        "--upstream-ca-file".into(),
        pki.ca_file.display().to_string(),
        "--upstream-client-cert-file".into(),
        cert.display().to_string(),
        "--upstream-client-key-file".into(),
        key.display().to_string(),
    ]);
    let j = Server::start_with(Launch {
        extra_args: j_args,
        tls_client: Some((admin_tls.clone(), pki.ca_file.clone())),
        ..Launch::default()
    });
    let on_j = Client { addr: j.addr, tls: admin_tls.clone() };
    let on_w = Client { addr: w.addr, tls: admin_tls.clone() };
    let ns = "/api/v1/namespaces/default";
    // J's own copy, from memory (resourceVersion=0 asks etcd nothing): a
    // write J answered is there without waiting.
    let local = |path: &str| on_j.send("GET", &format!("{path}?resourceVersion=0"), None);

    // (a) Create, update, merge patch, server-side apply, delete and
    // deletecollection through J: W's answers, on W, readable on J at once.
    let (revision_before, fences_before) = etcd_revision_and_fences(&etcd);
    let mut writes = 0;
    let created = on_j.send("POST", &format!("{ns}/configmaps"), Some(&configmap("one", json!({"k": "1"}))));
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(created.header_values("content-type"), ["application/json"]);
    writes += 1;
    let created = created.json();
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let seen = local(&format!("{ns}/configmaps/one"));
    assert_eq!(seen.code, 200, "read-your-writes on J: {}", seen.body);
    assert_eq!(seen.json()["metadata"]["resourceVersion"], rv.as_str());
    assert_eq!(on_w.ok("GET", &format!("{ns}/configmaps/one"), None)["metadata"]["resourceVersion"], rv.as_str());

    let mut updated = created.clone();
    updated["data"] = json!({"k": "2"});
    let put = on_j.ok("PUT", &format!("{ns}/configmaps/one"), Some(&updated));
    writes += 1;
    assert_eq!(local(&format!("{ns}/configmaps/one")).json()["data"]["k"], "2");
    assert_eq!(
        local(&format!("{ns}/configmaps/one")).json()["metadata"]["resourceVersion"],
        put["metadata"]["resourceVersion"]
    );

    let merged = on_j.call(
        "PATCH",
        &format!("{ns}/configmaps/one"),
        "application/merge-patch+json",
        Some(&json!({"data": {"m": "merged"}})),
    );
    assert_eq!(merged.code, 200, "{}", merged.body);
    writes += 1;
    assert_eq!(local(&format!("{ns}/configmaps/one")).json()["data"], json!({"k": "2", "m": "merged"}));

    let applied = on_j.call(
        "PATCH",
        &format!("{ns}/configmaps/applied?fieldManager=join-test"),
        "application/apply-patch+yaml",
        Some(&configmap("applied", json!({"a": "1"}))),
    );
    assert_eq!(applied.code, 201, "server-side apply creates: {}", applied.body);
    writes += 1;
    let seen = local(&format!("{ns}/configmaps/applied")).json();
    assert_eq!(seen["data"]["a"], "1");
    let managers: Vec<(&str, &str)> = seen["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["manager"].as_str().unwrap(), m["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(managers, [("join-test", "Apply")]);

    // W's Warning header (fieldValidation=Warn on an unknown field) comes back.
    let mut unknown = configmap("warned", json!({}));
    unknown["bogus"] = json!(1);
    let warned = on_j.send("POST", &format!("{ns}/configmaps?fieldValidation=Warn"), Some(&unknown));
    assert_eq!(warned.code, 201, "{}", warned.body);
    writes += 1;
    let warnings = warned.header_values("warning");
    assert!(warnings.iter().any(|w| w.contains("unknown field") && w.contains("bogus")), "{:?}", warned.headers);

    let deleted = on_j.send("DELETE", &format!("{ns}/configmaps/one"), None);
    assert_eq!(deleted.code, 200, "{}", deleted.body);
    writes += 1;
    assert_eq!(local(&format!("{ns}/configmaps/one")).code, 404, "the delete is seen on J at once");
    assert_eq!(on_w.send("GET", &format!("{ns}/configmaps/one"), None).code, 404);

    let collection = on_j.send("DELETE", &format!("{ns}/configmaps?labelSelector=joined%3Dyes"), None);
    assert_eq!(collection.code, 200, "{}", collection.body);
    writes += 2; // "applied" and "warned"
    let left = local(&format!("{ns}/configmaps")).json();
    assert!(
        left["items"].as_array().unwrap().iter().all(|c| c["metadata"]["labels"]["joined"].is_null()),
        "deletecollection seen on J: {left}"
    );

    // (d) Every revision etcd moved by is one of those writes (made by W) or
    // a consistent read's fence: J wrote nothing of its own.
    let (revision_after, fences_after) = etcd_revision_and_fences(&etcd);
    assert_eq!(
        revision_after - revision_before,
        writes + (fences_after - fences_before),
        "etcd revision {revision_before} -> {revision_after}, fences {fences_before} -> {fences_after}, {writes} writes"
    );

    // (b) As the caller: RBAC on W decides, W's 403 comes back unchanged.
    on_j.ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        Some(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-writer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "list"]}]})),
    );
    on_j.ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        Some(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "alice-writes"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})),
    );
    let alice = Client { addr: j.addr, tls: pki.client_config(Some(pki.client_cert("alice", &["dev"]))) };
    let by_alice = alice.send("POST", &format!("{ns}/configmaps"), Some(&configmap("alices", json!({}))));
    assert_eq!(by_alice.code, 201, "{}", by_alice.body);
    // W saw alice (not J's own identity): its SelfSubjectReview says so.
    let review = alice.ok(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        Some(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
    );
    assert_eq!(review["status"]["userInfo"]["username"], "alice", "{review}");
    assert_eq!(review["status"]["userInfo"]["groups"], json!(["dev", "system:authenticated"]), "{review}");
    // A caller's own Impersonate-* headers are checked on J, then W sees
    // the identity they name (admin, in system:masters, may impersonate).
    let impersonating = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
        ("Impersonate-User", "erin"),
        ("Impersonate-Group", "qa"),
        ("Impersonate-Extra-Reason", "audit"),
    ];
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).to_string();
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let (code, _, text) =
        common::tls::exchange(j.addr, &admin_tls, "POST", path, &impersonating, body.as_bytes()).unwrap();
    assert_eq!(code, 201, "{text}");
    let review: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(review["status"]["userInfo"]["username"], "erin", "{review}");
    assert_eq!(review["status"]["userInfo"]["groups"], json!(["qa", "system:authenticated"]), "{review}");
    assert_eq!(review["status"]["userInfo"]["extra"], json!({"reason": ["audit"]}), "{review}");
    // alice may not impersonate: J refuses before anything is forwarded.
    let (code, _, text) =
        common::tls::exchange(j.addr, &alice.tls, "POST", path, &impersonating, body.as_bytes()).unwrap();
    assert_eq!(code, 403, "{text}");
    assert!(text.contains("User \\\"alice\\\" cannot impersonate resource \\\"users\\\""), "{text}");
    let bob_tls = pki.client_config(Some(pki.client_cert("bob", &["dev"])));
    let bob = Client { addr: j.addr, tls: bob_tls.clone() };
    let refused = bob.send("POST", &format!("{ns}/configmaps"), Some(&configmap("bobs", json!({}))));
    assert_eq!(refused.code, 403, "{}", refused.body);
    let status = refused.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"bob\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let bob_on_w = Client { addr: w.addr, tls: bob_tls };
    let direct = bob_on_w.send("POST", &format!("{ns}/configmaps"), Some(&configmap("bobs", json!({}))));
    assert_eq!((direct.code, direct.json()), (403, status), "J returns W's answer unchanged");

    // (c) A kubelet through J (J's own Node authorizer for reads): its
    // pods and their secrets, not another node's.
    two_nodes_with_a_pod_each(&on_j, ns);
    let kubelet =
        Client { addr: j.addr, tls: pki.client_config(Some(pki.client_cert("system:node:n1", &["system:nodes"]))) };
    assert_eq!(kubelet.ok("GET", &format!("{ns}/secrets/s1"), None)["metadata"]["name"], "s1");
    let watched = kubelet.send("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&watch=1&timeoutSeconds=1", None);
    assert_eq!(watched.code, 200, "{}", watched.body);
    assert!(watched.body.contains("\"p1\"") && !watched.body.contains("\"p2\""), "{}", watched.body);
    for path in [format!("{ns}/secrets/s2"), "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2&watch=1".to_string()] {
        let refused = kubelet.send("GET", &path, None);
        assert_eq!(refused.code, 403, "{path}: {}", refused.body);
        assert!(refused.json()["message"].as_str().unwrap().contains("User \"system:node:n1\" cannot"), "{path}");
    }

    // The upstream gone: a write through J is kube's failed proxy (503
    // ServiceUnavailable), nothing reaches etcd, reads are still served.
    w.kill();
    let (revision_before, _) = etcd_revision_and_fences(&etcd);
    let down = on_j.send("POST", &format!("{ns}/configmaps"), Some(&configmap("lost", json!({}))));
    assert_eq!(down.code, 503, "{}", down.body);
    let status = down.json();
    assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("ServiceUnavailable")));
    assert!(status["message"].as_str().unwrap().starts_with("error trying to reach service: "), "{status}");
    assert_eq!(etcd_revision_and_fences(&etcd).0, revision_before, "J wrote nothing itself");
    assert_eq!(local(&format!("{ns}/configmaps/alices")).code, 200, "reads are J's own");
}

fn bearer(client: &Client, token: &str, path: &str) -> Answer {
    let authorization = format!("Bearer {token}");
    let headers = [("Accept", "application/json"), ("Authorization", authorization.as_str())];
    let (code, headers, body) = common::tls::exchange(client.addr, &client.tls, "GET", path, &headers, b"").unwrap();
    Answer { code, headers, body }
}

/// Delegation (issue 16 item 3): J2 has no token file and no Node
/// authorizer; a bearer token it cannot verify is W's TokenReview's to
/// decide, and what its RBAC refuses is W's SubjectAccessReview's (W's Node
/// authorizer, field selector included). Both answers are cached: with W
/// gone they still hold, and a question never asked fails (401 for a
/// token, 500 for a decision, as kube answers an authorizer's error).
#[test]
fn tokens_and_decisions_a_joined_instance_cannot_make_are_the_upstreams() {
    let etcd = Etcd::start();
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let admin_tls = pki.client_config(Some(pki.client_cert("admin", &["system:masters"])));
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "carol-token,carol,carol-uid,\"readers\"\n").unwrap();
    let mut w_args = server_args(&etcd.url(), &pki);
    w_args.extend(["--etcd-compaction-interval".into(), "0".into()]);
    w_args.extend(["--token-auth-file".into(), tokens.display().to_string()]);
    let mut w = Server::start_with(Launch {
        extra_args: w_args,
        tls_client: Some((admin_tls.clone(), pki.ca_file.clone())),
        ..Launch::default()
    });
    let (cert, key) = pki.client_cert_files(dir.path(), "joiner", "shardline-joiner", &["system:masters"]);
    let legacy_key = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/service-account-rsa.key");
    let mut j_args = server_args_with(&etcd.url(), &pki, "RBAC");
    j_args.extend([
        "--upstream".to_string(),
        format!("https://{}", w.addr),
        "--upstream-ca-file".into(),
        pki.ca_file.display().to_string(),
        "--upstream-client-cert-file".into(),
        cert.display().to_string(),
        "--upstream-client-key-file".into(),
        key.display().to_string(),
        "--authentication-token-webhook-cache-ttl".into(),
        "10m".into(),
        "--authorization-webhook-cache-authorized-ttl".into(),
        "10m".into(),
        "--authorization-webhook-cache-unauthorized-ttl".into(),
        "10m".into(),
        // The cluster's service account key: J verifies the cluster's tokens itself.
        "--service-account-key-file".into(),
        legacy_key.display().to_string(),
    ]);
    let j = Server::start_with(Launch {
        extra_args: j_args,
        // One shard: every request meets the same caches.
        shards: Some(1),
        tls_client: Some((admin_tls.clone(), pki.ca_file.clone())),
        ..Launch::default()
    });
    let admin = Client { addr: j.addr, tls: admin_tls };
    let ns = "/api/v1/namespaces/default";
    two_nodes_with_a_pod_each(&admin, ns);
    admin.ok("POST", &format!("{ns}/configmaps"), Some(&configmap("c1", json!({}))));
    admin.ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        Some(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]})),
    );
    admin.ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        Some(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "readers-read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "readers"}]})),
    );

    // Decisions J2's RBAC cannot make: W's Node authorizer makes them.
    let kubelet =
        Client { addr: j.addr, tls: pki.client_config(Some(pki.client_cert("system:node:n1", &["system:nodes"]))) };
    assert_eq!(kubelet.ok("GET", &format!("{ns}/secrets/s1"), None)["metadata"]["name"], "s1");
    let mine = kubelet.ok("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", None);
    assert_eq!(mine["items"].as_array().unwrap().len(), 1, "{mine}");
    let refused = kubelet.send("GET", &format!("{ns}/secrets/s2"), None);
    assert_eq!(refused.code, 403, "{}", refused.body);
    assert_eq!(
        refused.json()["message"],
        "secrets \"s2\" is forbidden: User \"system:node:n1\" cannot get resource \"secrets\" in API group \"\" in the namespace \"default\": no relationship found between node 'n1' and this object"
    );
    assert_eq!(kubelet.send("GET", "/api/v1/pods", None).code, 403, "all pods: no");

    // A token J2 cannot verify: W's TokenReview names carol (in readers).
    let anyone = Client { addr: j.addr, tls: pki.client_config(None) };
    let listed = bearer(&anyone, "carol-token", &format!("{ns}/configmaps"));
    assert_eq!(listed.code, 200, "{}", listed.body);
    assert_eq!(bearer(&anyone, "carol-token", &format!("{ns}/secrets")).code, 403, "carol is no admin");
    let unknown = bearer(&anyone, "nobodys-token", &format!("{ns}/configmaps"));
    assert_eq!(unknown.code, 401, "{}", unknown.body);
    assert_eq!(unknown.json()["reason"], "Unauthorized");

    // A legacy Secret-based token J verifies itself: its use is recorded on
    // its Secret, as kube-apiserver records it, by a patch J sends upstream.
    let account = admin.ok(
        "POST",
        &format!("{ns}/serviceaccounts"),
        Some(&json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})),
    );
    let signer = shardline::auth::serviceaccount::ServiceAccountTokens::from_pem(
        &std::fs::read(&legacy_key).unwrap(),
        &[],
        "https://kubernetes.default.svc".into(),
        vec![],
    )
    .unwrap();
    let token = signer
        .sign_legacy(&shardline::auth::serviceaccount::LegacyClaims {
            iss: shardline::auth::serviceaccount::LEGACY_ISSUER.into(),
            sub: "system:serviceaccount:default:robot".into(),
            namespace: "default".into(),
            secret_name: "robot-token".into(),
            service_account_name: "robot".into(),
            service_account_uid: account["metadata"]["uid"].as_str().unwrap().into(),
        })
        .unwrap();
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    admin.ok(
        "POST",
        &format!("{ns}/secrets"),
        Some(&json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "robot-token", "annotations": {"kubernetes.io/service-account.name": "robot",
                "kubernetes.io/service-account.uid": account["metadata"]["uid"]}},
            "data": {"token": b64(&token)}})),
    );
    let used = bearer(&anyone, &token, &format!("{ns}/configmaps"));
    assert_eq!(used.code, 403, "authenticated as robot, who may not list: {}", used.body);
    assert!(used.body.contains("system:serviceaccount:default:robot"), "{}", used.body);
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let secret = admin.ok("GET", &format!("{ns}/secrets/robot-token"), None);
        if secret["metadata"]["labels"]["kubernetes.io/legacy-token-last-used"] == today.as_str() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the use was not recorded: {secret}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // W gone: the answers already given hold (cached), new questions fail.
    w.kill();
    assert_eq!(bearer(&anyone, "carol-token", &format!("{ns}/configmaps")).code, 200, "the token's review is cached");
    assert_eq!(bearer(&anyone, "nobodys-token", &format!("{ns}/configmaps")).code, 401, "a refusal is cached");
    assert_eq!(bearer(&anyone, "another-token", &format!("{ns}/configmaps")).code, 401, "cannot be asked: 401");
    assert_eq!(kubelet.send("GET", &format!("{ns}/secrets/s1"), None).code, 200, "an allow is cached");
    assert_eq!(kubelet.send("GET", &format!("{ns}/secrets/s2"), None).code, 403, "a denial is cached");
    let unasked = kubelet.send("GET", &format!("{ns}/configmaps/c1"), None);
    assert_eq!(unasked.code, 500, "{}", unasked.body);
    assert!(unasked.json()["message"].as_str().unwrap().contains("SubjectAccessReview"), "{}", unasked.body);
}

/// A stand-in upstream on loopback, one thread per connection: records each
/// request's head and answers every one with `body` (200, JSON,
/// `Connection: close`), except a watch (`watch=1`): that answer is chunked,
/// one event line per chunk as the test hands them to [`Upstream::events`],
/// and stays open until the test ends it (`None`) or the peer goes away,
/// which [`Upstream::watch_closed`] then reports.
struct Upstream {
    addr: SocketAddr,
    heads: Arc<std::sync::Mutex<Vec<String>>>,
    events: std::sync::mpsc::Sender<Option<String>>,
    watch_closed: std::sync::mpsc::Receiver<()>,
}

fn recording_upstream(body: &'static str) -> Upstream {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (events, events_rx) = std::sync::mpsc::channel::<Option<String>>();
    let events_rx = Arc::new(std::sync::Mutex::new(events_rx));
    let (closed_tx, watch_closed) = std::sync::mpsc::channel();
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (seen, events_rx, closed_tx) = (seen.clone(), events_rx.clone(), closed_tx.clone());
            std::thread::spawn(move || {
                stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).ok();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).map(|n| n == 1).unwrap_or(false) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                seen.lock().unwrap().push(head.clone());
                if !head.lines().next().unwrap_or("").contains("watch=1") {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    return;
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                );
                let events = events_rx.lock().unwrap();
                loop {
                    match events.recv_timeout(std::time::Duration::from_millis(100)) {
                        Ok(Some(line)) => {
                            let _ = write!(stream, "{:x}\r\n{line}\n\r\n", line.len() + 1);
                        }
                        Ok(None) => {
                            let _ = write!(stream, "0\r\n\r\n");
                            return;
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                    }
                    // The peer went away: a read sees the end (nothing else is sent).
                    stream.set_read_timeout(Some(std::time::Duration::from_millis(1))).ok();
                    if matches!(stream.read(&mut byte), Ok(0)) {
                        let _ = closed_tx.send(());
                        return;
                    }
                }
            });
        }
    });
    Upstream { addr, heads, events, watch_closed }
}

#[test]
fn aggregated_apis_are_proxied_through_the_upstream_and_nothing_else_is_read_there() {
    let etcd = Etcd::start();
    const METRICS: &str =
        r#"{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[]}"#;
    let Upstream { addr: upstream, heads, events, watch_closed } = recording_upstream(METRICS);
    let j = Server::start_with(Launch {
        extra_args: [
            "--log",
            "etcd",
            "--etcd-endpoints",
            &etcd.url(),
            "--storage-layout",
            "kubernetes",
            "--upstream",
            &format!("http://{upstream}"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        ..Launch::default()
    });
    let nodes = "/apis/metrics.k8s.io/v1beta1/nodes";
    // No APIService yet: J answers itself.
    assert_eq!(j.get(nodes).status, 404);
    assert_eq!(j.get("/api/v1/namespaces").status, 200);
    assert!(heads.lock().unwrap().is_empty(), "reads never go upstream: {:?}", heads.lock().unwrap());

    // The cluster's APIServices, as kube-apiserver stores them (JSON): one
    // naming a service (aggregated), one local (no service).
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let put = |name: &str, spec: Value| {
        let value = json!({"kind": "APIService", "apiVersion": "apiregistration.k8s.io/v1",
            "metadata": {"name": name, "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-28T00:00:00Z"},
            "spec": spec, "status": {}});
        let key = format!("/registry/apiregistration.k8s.io/apiservices/{name}");
        let answer =
            etcd.http("POST", "/v3/kv/put", Some(&json!({"key": b64(&key), "value": b64(&value.to_string())})));
        assert_eq!(answer.map(|a| a.0), Some(200));
    };
    put(
        "v1beta1.metrics.k8s.io",
        json!({"service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
               "group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": true,
               "groupPriorityMinimum": 100, "versionPriority": 100}),
    );
    put(
        "v1.local.example",
        json!({"group": "local.example", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 100}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while j.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.local.example").status != 200 {
        assert!(std::time::Instant::now() < deadline, "J never saw the APIServices");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // The aggregated group-version goes to the upstream, as the caller, and its answer comes back unchanged.
    let answer = j.get(&format!("{nodes}?limit=5"));
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.text(), METRICS);
    let discovery = j.get("/apis/metrics.k8s.io/v1beta1");
    assert_eq!(discovery.text(), METRICS);
    {
        let heads = heads.lock().unwrap();
        assert_eq!(heads.len(), 2, "{heads:?}");
        assert!(heads[0].starts_with(&format!("GET {nodes}?limit=5 HTTP/1.1\r\n")), "{}", heads[0]);
        assert!(heads[0].to_ascii_lowercase().contains("impersonate-user: system:anonymous\r\n"), "{}", heads[0]);
        assert!(heads[1].starts_with("GET /apis/metrics.k8s.io/v1beta1 HTTP/1.1\r\n"), "{}", heads[1]);
    }
    // Discovery lists the aggregated group (not the local APIService's), in both forms, from here.
    let groups = j.get_ok("/apis");
    let metrics: Vec<&Value> =
        groups["groups"].as_array().unwrap().iter().filter(|g| g["name"] == "metrics.k8s.io").collect();
    assert_eq!(metrics.len(), 1, "{groups}");
    assert_eq!(metrics[0]["preferredVersion"]["groupVersion"], "metrics.k8s.io/v1beta1");
    assert!(!groups.to_string().contains("local.example"));
    assert_eq!(j.get_ok("/apis/metrics.k8s.io")["versions"][0]["version"], "v1beta1");
    let aggregated = j.request(
        "GET",
        "/apis",
        &[("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")],
        None,
    );
    let aggregated = aggregated.json();
    let entry = aggregated["items"].as_array().unwrap().iter().find(|i| i["metadata"]["name"] == "metrics.k8s.io");
    assert_eq!(entry.unwrap()["versions"][0]["version"], "v1beta1", "{aggregated}");
    assert_eq!(heads.lock().unwrap().len(), 2, "discovery is not read upstream");
    // A local APIService's group, and every built-in read, stay here.
    assert_eq!(j.get("/apis/local.example/v1/things").status, 404);
    assert_eq!(j.get("/apis/apps/v1/deployments").status, 200);
    assert_eq!(heads.lock().unwrap().len(), 2);

    // An aggregated watch streams: each event reaches the client while the
    // upstream's answer is still open, and the upstream request ends when
    // the client goes away.
    let event = |name: &str| {
        json!({"type": "ADDED", "object": {"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
            "metadata": {"name": name}, "usage": {"cpu": "1m"}}})
    };
    events.send(Some(event("n1").to_string())).unwrap();
    let mut watch = common::watch::Watch::open(&j, &format!("{nodes}?watch=1"));
    assert_eq!(watch.next(), event("n1"));
    events.send(Some(event("n2").to_string())).unwrap();
    assert_eq!(watch.next(), event("n2"));
    assert!(heads.lock().unwrap()[2].starts_with(&format!("GET {nodes}?watch=1 HTTP/1.1\r\n")));
    drop(watch);
    let closed = watch_closed.recv_timeout(std::time::Duration::from_secs(10));
    assert!(closed.is_ok(), "the upstream watch outlived its client");
}
