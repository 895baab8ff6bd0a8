//! The Node authorizer (`--authorization-mode Node,RBAC`) end to end: a
//! kubelet's client certificate (`system:node:NAME` in `system:nodes`) over
//! TLS reads what the pods bound to its node use and nothing of another
//! node's, lists and watches pods only with its own `spec.nodeName`
//! selector, and loses a secret once the pod that used it is gone.
//!
//! Owns: kube's Node authorizer rules as a kubelet meets them (the rules
//! themselves are unit-tested in `src/auth/node.rs`).

mod common;

use common::{Launch, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::time::{Duration, Instant};

const ADMIN: &str = "admin-token";

fn start(dir: &tempfile::TempDir, pki: &common::tls::TestPki) -> Server {
    let tokens = dir.path().join("tokens.csv");
    std::fs::File::create(&tokens).unwrap().write_all(b"admin-token,admin,admin-uid,\"system:masters\"\n").unwrap();
    let mut args: Vec<String> = [
        "--token-auth-file",
        &tokens.display().to_string(),
        "--authorization-mode",
        "Node,RBAC",
        "--client-ca-file",
        &pki.ca_file.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(pki.server_args());
    Server::start_with(Launch {
        extra_args: args,
        readyz_token: Some(ADMIN.into()),
        tls_client: Some((pki.client_config(None), pki.ca_file.clone())),
        ..Launch::default()
    })
}

struct Client {
    addr: std::net::SocketAddr,
    config: std::sync::Arc<rustls::ClientConfig>,
    token: Option<&'static str>,
}

impl Client {
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
        let mut headers = vec![("Accept", "application/json"), ("Content-Type", "application/json")];
        let bearer = self.token.map(|t| format!("Bearer {t}"));
        if let Some(b) = &bearer {
            headers.push(("Authorization", b));
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        common::tls::request(self.addr, &self.config, method, path, &headers, body.as_bytes()).expect("a TLS request")
    }

    fn ok(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let (code, text) = self.call(method, path, body);
        assert!((200..300).contains(&code), "{method} {path}: {code} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

fn pod(name: &str, node: &str, secret: &str, configmap: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": node,
            "containers": [{"name": "c", "image": "busybox", "envFrom": [{"configMapRef": {"name": configmap}}]}],
            "volumes": [{"name": "s", "secret": {"secretName": secret}}]}})
}

#[test]
fn a_kubelet_reads_what_its_pods_use_and_nothing_of_another_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let s = start(&dir, &pki);
    let admin = Client { addr: s.addr, config: pki.client_config(None), token: Some(ADMIN) };
    let ns = "/api/v1/namespaces/default";
    for node in ["n1", "n2"] {
        admin.ok(
            "POST",
            "/api/v1/nodes",
            Some(&json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})),
        );
    }
    for name in ["s1", "s2"] {
        let secret =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"k": "v"}});
        admin.ok("POST", &format!("{ns}/secrets"), Some(&secret));
    }
    for name in ["c1", "c2"] {
        let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        admin.ok("POST", &format!("{ns}/configmaps"), Some(&configmap));
    }
    admin.ok("POST", &format!("{ns}/pods"), Some(&pod("p1", "n1", "s1", "c1")));
    admin.ok("POST", &format!("{ns}/pods"), Some(&pod("p2", "n2", "s2", "c2")));

    let kubelet = Client {
        addr: s.addr,
        config: pki.client_config(Some(pki.client_cert("system:node:n1", &["system:nodes"]))),
        token: None,
    };
    // What its pod uses.
    assert_eq!(kubelet.ok("GET", &format!("{ns}/secrets/s1"), None)["metadata"]["name"], "s1");
    assert_eq!(kubelet.ok("GET", &format!("{ns}/configmaps/c1"), None)["metadata"]["name"], "c1");
    assert_eq!(kubelet.ok("GET", "/api/v1/nodes/n1", None)["metadata"]["name"], "n1");
    // Its own pods, by its node's selector only.
    let mine = kubelet.ok("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", None);
    let names: Vec<&str> =
        mine["items"].as_array().unwrap().iter().map(|p| p["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["p1"]);
    let (code, body) =
        kubelet.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&watch=1&timeoutSeconds=1", None);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"p1\"") && !body.contains("\"p2\""), "{body}");
    // Another node's, refused with kube's 403.
    for path in [
        format!("{ns}/secrets/s2"),
        format!("{ns}/configmaps/c2"),
        "/api/v1/nodes/n2".to_string(),
        "/api/v1/pods".to_string(),
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2".to_string(),
    ] {
        let (code, body) = kubelet.call("GET", &path, None);
        assert_eq!(code, 403, "{path}: {body}");
        let status: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(status["reason"], "Forbidden", "{path}: {body}");
        assert!(status["message"].as_str().unwrap().contains("User \"system:node:n1\" cannot"), "{path}: {body}");
    }
    // Its pod gone, the secret it used is refused again.
    admin.ok("DELETE", &format!("{ns}/pods/p1?gracePeriodSeconds=0"), None);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, body) = kubelet.call("GET", &format!("{ns}/secrets/s1"), None);
        if code == 403 {
            break;
        }
        assert!(Instant::now() < deadline, "still readable after its pod was deleted: {code} {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
