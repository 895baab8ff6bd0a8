//! Admission webhooks against the real binary: an HTTPS webhook server in
//! this test process (127.0.0.1, a certificate from a throw-away CA made
//! with rcgen, served with rustls) registered with `clientConfig.url` and a
//! `caBundle` in Mutating- and ValidatingWebhookConfigurations, as
//! controller-runtime's envtest registers an operator's webhooks.
//!
//! It shows: a mutating webhook's JSONPatch lands in the stored object
//! (managedFields still name only the writer's fields, defaulting still
//! applies), the AdmissionReview carries kube's request fields, a
//! validating denial is kube's Status with kube's words and the webhook's
//! code, warnings become Warning headers, namespace and object selectors
//! exclude objects, `failurePolicy` Ignore and Fail on an unreachable
//! webhook, a dry run refused by a webhook whose sideEffects is Unknown, a
//! delete denied, and kubectl going through the webhooks.

mod common;

use base64::Engine;
use common::{free_port, tls::TestPki, Server};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The reviews the webhook server received, by path.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// An HTTPS webhook server on 127.0.0.1; stops accepting when dropped.
struct WebhookServer {
    port: u16,
    seen: Seen,
    stop: Arc<AtomicBool>,
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

impl WebhookServer {
    fn start(pki: &TestPki) -> WebhookServer {
        let cert = std::fs::read(&pki.server_cert_file).unwrap();
        let key = std::fs::read(&pki.server_key_file).unwrap();
        WebhookServer::start_with(&cert, &key)
    }

    /// A server presenting this PEM certificate (chain) and key.
    fn start_with(cert_pem: &[u8], key_pem: &[u8]) -> WebhookServer {
        let certs: Vec<_> =
            rustls_pemfile::certs(&mut std::io::BufReader::new(cert_pem)).collect::<Result<_, _>>().unwrap();
        let key = rustls_pemfile::private_key(&mut std::io::BufReader::new(key_pem)).unwrap().unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Seen = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (seen_in, stop_in) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop_in.load(Ordering::Acquire) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (config, seen) = (config.clone(), seen_in.clone());
                        std::thread::spawn(move || serve_one(stream, config, seen));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        WebhookServer { port, seen, stop }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    fn reviews(&self, path: &str) -> Vec<Value> {
        self.seen.lock().unwrap().iter().filter(|(p, _)| p == path).map(|(_, r)| r.clone()).collect()
    }
}

fn serve_one(stream: std::net::TcpStream, config: Arc<rustls::ServerConfig>, seen: Seen) {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let connection = rustls::ServerConnection::new(config).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, stream);
    let mut data = Vec::new();
    let mut buffer = [0u8; 8192];
    let (head_end, length) = loop {
        let Ok(n) = tls.read(&mut buffer) else { return };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while data.len() < head_end + length {
        let Ok(n) = tls.read(&mut buffer) else { return };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buffer[..n]);
    }
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let target = head.split(' ').nth(1).unwrap_or("/").to_string();
    let path = target.split('?').next().unwrap_or("/").to_string();
    let review: Value = serde_json::from_slice(&data[head_end..head_end + length]).unwrap_or(Value::Null);
    seen.lock().unwrap().push((path.clone(), review.clone()));
    seen.lock().unwrap().push((format!("{path}#target"), json!(target)));
    let answer = answer(&path, &review);
    let body = serde_json::to_vec(&answer).unwrap();
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = tls.write_all(response.as_bytes());
    let _ = tls.write_all(&body);
    let _ = tls.flush();
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

/// What each path of the test webhook answers.
fn answer(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let name = request["name"].as_str().unwrap_or("");
    let response = match path {
        // Adds a label and a container-free annotation.
        "/mutate" => {
            let patch = if request["object"]["metadata"]["labels"].is_object() {
                json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
            };
            let patch = base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&patch).unwrap());
            json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch})
        }
        // Denies names starting with "deny" and deletes of "keep-*"; warns otherwise.
        "/validate" => {
            let old_name = request["oldObject"]["metadata"]["name"].as_str().unwrap_or("");
            if request["operation"] == "DELETE" && old_name.starts_with("keep") {
                json!({"uid": uid, "allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": format!("{old_name} is kept")}})
            } else if name.starts_with("deny") {
                json!({"uid": uid, "allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": format!("names starting with deny are refused, got {name}")}})
            } else {
                json!({"uid": uid, "allowed": true, "warnings": ["checked by validate.example.com"]})
            }
        }
        // Answers after the webhook's timeout.
        "/slow" => {
            std::thread::sleep(Duration::from_millis(2500));
            json!({"uid": uid, "allowed": true})
        }
        _ => json!({"uid": uid, "allowed": true}),
    };
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn configmap(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"a": "1"}})
}

fn rules(resources: &[&str], operations: &[&str]) -> Value {
    json!([{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}])
}

#[test]
fn webhooks_are_called_as_kube_apiserver_calls_them() {
    let server = Server::start();
    let pki = TestPki::new(server.dir.path());
    let hooks = WebhookServer::start(&pki);
    let ca = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&pki.ca_file).unwrap());
    let dead_port = free_port();
    let (other_ca, _, _) = ca_and_server(&["127.0.0.1"]);
    let other_ca = base64::engine::general_purpose::STANDARD.encode(other_ca);
    let dead = format!("https://127.0.0.1:{dead_port}/nobody");

    let mutating = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "mutator"},
        "webhooks": [{
            "name": "mutate.example.com",
            "clientConfig": {"url": hooks.url("/mutate"), "caBundle": ca},
            "rules": rules(&["configmaps"], &["CREATE", "UPDATE"]),
            "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
            "matchConditions": [{"name": "not-unconditioned", "expression": "object.metadata.name != 'unconditioned'"}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
        }],
    });
    let r = server.post_json("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", &mutating);
    assert_eq!(r.status, 201, "{}", r.text());
    let validating = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validator"},
        "webhooks": [
            {
                "name": "validate.example.com",
                "clientConfig": {"url": hooks.url("/validate"), "caBundle": ca},
                "rules": rules(&["configmaps"], &["CREATE", "UPDATE", "DELETE"]),
                "namespaceSelector": {"matchExpressions": [{"key": "webhooks", "operator": "NotIn", "values": ["off"]}]},
                "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
            {
                "name": "ignore.example.com",
                "clientConfig": {"url": dead, "caBundle": ca},
                "rules": rules(&["configmaps"], &["CREATE"]),
                "objectSelector": {"matchLabels": {"target": "ignore"}},
                "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
            {
                "name": "slow.example.com",
                "clientConfig": {"url": hooks.url("/slow"), "caBundle": ca},
                "rules": rules(&["configmaps"], &["CREATE"]),
                "objectSelector": {"matchLabels": {"target": "slow"}},
                "timeoutSeconds": 1, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
            {
                "name": "untrusted.example.com",
                "clientConfig": {"url": hooks.url("/allow"), "caBundle": other_ca},
                "rules": rules(&["configmaps"], &["CREATE"]),
                "objectSelector": {"matchLabels": {"target": "untrusted"}},
                "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
            {
                "name": "fail.example.com",
                "clientConfig": {"url": dead, "caBundle": ca},
                "rules": rules(&["configmaps"], &["CREATE"]),
                "objectSelector": {"matchLabels": {"target": "fail"}},
                "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
            {
                "name": "unresolvable.example.com",
                "clientConfig": {"url": "https://no-such-host.invalid/hook", "caBundle": ca},
                "rules": rules(&["configmaps"], &["CREATE"]),
                "objectSelector": {"matchLabels": {"target": "unresolvable"}},
                "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            },
        ],
    });
    let r = server.post_json("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", &validating);
    assert_eq!(r.status, 201, "{}", r.text());

    // The mutating webhook's patch is stored; the writer's managedFields do not claim it.
    let r = server.request(
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldManager=tester",
        &[("Content-Type", "application/json"), ("Accept", "application/json")],
        Some(&serde_json::to_vec(&configmap("one", json!({"app": "x"}))).unwrap()),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("Warning"), Some("299 - \"checked by validate.example.com\""), "{:?}", r.headers);
    let stored = server.get_ok("/api/v1/namespaces/default/configmaps/one");
    assert_eq!(stored["metadata"]["labels"], json!({"app": "x", "mutated": "yes"}));
    let managed = stored["metadata"]["managedFields"].as_array().expect("managedFields");
    assert_eq!(managed.len(), 1, "{managed:?}");
    assert_eq!(managed[0]["manager"], "tester");
    assert!(managed[0]["fieldsV1"]["f:metadata"]["f:labels"].get("f:app").is_some(), "{managed:?}");
    assert!(managed[0]["fieldsV1"]["f:metadata"]["f:labels"].get("f:mutated").is_none(), "{managed:?}");

    // The review carried kube's request fields.
    let reviews = hooks.reviews("/mutate");
    let review = reviews.last().expect("the mutating webhook was called");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    let request = &review["request"];
    assert_eq!(request["kind"], json!({"group": "", "version": "v1", "kind": "ConfigMap"}));
    assert_eq!(request["resource"], json!({"group": "", "version": "v1", "resource": "configmaps"}));
    assert_eq!(request["operation"], "CREATE");
    assert_eq!((request["namespace"].as_str(), request["name"].as_str()), (Some("default"), Some("one")));
    assert_eq!(request["options"]["kind"], "CreateOptions");
    assert_eq!(request["options"]["fieldManager"], "tester");
    assert_eq!(request["dryRun"], false);
    assert!(request["userInfo"]["username"].is_string(), "{request}");
    assert_eq!(request["object"]["data"], json!({"a": "1"}));
    assert!(request["uid"].as_str().is_some_and(|u| !u.is_empty()));
    let target = hooks.reviews("/mutate#target");
    assert_eq!(target.last().unwrap(), "/mutate?timeout=5s");
    let validated = hooks.reviews("/validate");
    assert_eq!(
        validated.last().unwrap()["request"]["object"]["metadata"]["labels"]["mutated"],
        "yes",
        "validating webhooks see the mutated object"
    );

    // An update goes through both, with the old object.
    let mut changed = stored.clone();
    changed["data"]["a"] = json!("2");
    changed["metadata"]["labels"] = json!({"app": "x"});
    let r = server.put_json("/api/v1/namespaces/default/configmaps/one", &changed);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"]["mutated"], "yes");
    let update = hooks.reviews("/mutate").last().cloned().unwrap();
    assert_eq!(update["request"]["operation"], "UPDATE");
    assert_eq!(update["request"]["options"]["kind"], "UpdateOptions");
    assert_eq!(update["request"]["oldObject"]["data"]["a"], "1");

    // A validating denial: kube's Status, the webhook's code and reason, kube's words.
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("deny-me", json!({})));
    assert_eq!(r.status, 403, "{}", r.text());
    let status = r.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["status"], "Failure");
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(status["code"], 403);
    assert_eq!(
        status["message"],
        "admission webhook \"validate.example.com\" denied the request: names starting with deny are refused, got deny-me"
    );
    assert_eq!(server.get("/api/v1/namespaces/default/configmaps/deny-me").status, 404);

    // Selectors: a namespace labelled webhooks=off is not validated; skip=... is not mutated.
    let ns =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "quiet", "labels": {"webhooks": "off"}}});
    assert_eq!(server.post_json("/api/v1/namespaces", &ns).status, 201);
    let r = server.post_json("/api/v1/namespaces/quiet/configmaps", &configmap("deny-me", json!({})));
    assert_eq!(r.status, 201, "the namespaceSelector excludes it: {}", r.text());
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("skipped", json!({"skip": "1"})));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"], json!({"skip": "1"}), "the objectSelector excludes it");
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("unconditioned", json!({"app": "y"})));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"], json!({"app": "y"}), "the matchCondition is false");

    // failurePolicy on an unreachable webhook: Ignore admits, Fail refuses with kube's 500.
    let r =
        server.post_json("/api/v1/namespaces/default/configmaps", &configmap("ignored", json!({"target": "ignore"})));
    assert_eq!(r.status, 201, "{}", r.text());
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("failed", json!({"target": "fail"})));
    assert_eq!(r.status, 500, "{}", r.text());
    let status = r.json();
    assert_eq!(status["reason"], "InternalError");
    assert_eq!(
        status["message"],
        format!(
            "Internal error occurred: failed calling webhook \"fail.example.com\": failed to call webhook: \
             Post \"https://127.0.0.1:{dead_port}/nobody?timeout=10s\": dial tcp 127.0.0.1:{dead_port}: connect: connection refused"
        )
    );

    // A URL host that does not resolve: the lookup runs off the core and fails
    // with the resolver's words, and the core keeps answering meanwhile.
    let r = server.post_json(
        "/api/v1/namespaces/default/configmaps",
        &configmap("unresolvable", json!({"target": "unresolvable"})),
    );
    assert_eq!(r.status, 500, "{}", r.text());
    let message = r.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.starts_with(
            "Internal error occurred: failed calling webhook \"unresolvable.example.com\": failed to call webhook: \
             Post \"https://no-such-host.invalid/hook?timeout=10s\": "
        ) && (message.contains("dial tcp: lookup no-such-host.invalid")
            || message.ends_with("context deadline exceeded")),
        "{message}"
    );
    assert_eq!(server.get("/readyz").status, 200);

    // A webhook past its timeoutSeconds, and one whose certificate the caBundle does not trust.
    let started = std::time::Instant::now();
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("slow", json!({"target": "slow"})));
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(started.elapsed() < Duration::from_millis(2400), "bounded by timeoutSeconds: {:?}", started.elapsed());
    assert_eq!(
        r.json()["message"],
        format!(
            "Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: \
             Post \"{}?timeout=1s\": context deadline exceeded",
            hooks.url("/slow")
        )
    );
    let r = server
        .post_json("/api/v1/namespaces/default/configmaps", &configmap("untrusted", json!({"target": "untrusted"})));
    assert_eq!(r.status, 500, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        format!(
            "Internal error occurred: failed calling webhook \"untrusted.example.com\": failed to call webhook: \
             Post \"{}?timeout=10s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            hooks.url("/allow")
        )
    );

    // On a dry run, webhooks whose sideEffects is None are called, told it is one.
    let r = server.post_json("/api/v1/namespaces/default/configmaps?dryRun=All", &configmap("dry", json!({})));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(hooks.reviews("/mutate").last().unwrap()["request"]["dryRun"], true);
    assert_eq!(hooks.reviews("/mutate").last().unwrap()["request"]["options"]["dryRun"], json!(["All"]));
    assert_eq!(server.get("/api/v1/namespaces/default/configmaps/dry").status, 404);

    // A delete goes to the validating webhook with the old object.
    assert_eq!(server.post_json("/api/v1/namespaces/default/configmaps", &configmap("keep-me", json!({}))).status, 201);
    let r = server.delete("/api/v1/namespaces/default/configmaps/keep-me");
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.json()["message"], "admission webhook \"validate.example.com\" denied the request: keep-me is kept");
    assert_eq!(server.get("/api/v1/namespaces/default/configmaps/keep-me").status, 200);
    let delete = hooks.reviews("/validate").last().cloned().unwrap();
    assert_eq!(delete["request"]["operation"], "DELETE");
    assert_eq!(delete["request"]["options"]["kind"], "DeleteOptions");
    assert_eq!(delete["request"]["object"], Value::Null);
    assert_eq!(server.delete("/api/v1/namespaces/default/configmaps/one").status, 200);

    // kubectl, through both webhooks.
    let out = server.kubectl(&["create", "configmap", "from-kubectl", "--from-literal=k=v"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stderr.contains("Warning: checked by validate.example.com"), "{}", out.stderr);
    let got = server.kubectl(&["get", "configmap", "from-kubectl", "-o", "json"]).json();
    assert_eq!(got["metadata"]["labels"]["mutated"], "yes");
    let out = server.kubectl(&["create", "configmap", "deny-kubectl"]);
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("admission webhook \"validate.example.com\" denied the request: names starting with deny are refused, got deny-kubectl"),
        "{}",
        out.stderr
    );
}

/// A CA (PEM) and a server certificate and key it signed for `names`.
fn ca_and_server(names: &[&str]) -> (String, String, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, "webhook-test-ca");
    params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = params.clone().self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let server = rcgen::CertificateParams::new(names).unwrap().signed_by(&key, &issuer).unwrap();
    (ca.pem(), server.pem(), key.serialize_pem())
}

/// `clientConfig.service`: resolved, as kube-apiserver with aggregator
/// routing resolves it, to a ready address of the Service's EndpointSlices,
/// the certificate verified for `NAME.NAMESPACE.svc`. The slice is written
/// to etcd directly: kube's validation (Shardline's too) refuses loopback
/// endpoint addresses through the API, and the test's webhook listens on
/// 127.0.0.1 only.
#[test]
fn a_service_reference_is_called_at_its_endpoints() {
    let etcd = common::etcd::Etcd::start();
    let (ca, cert, key) = ca_and_server(&["hook.default.svc"]);
    let hooks = WebhookServer::start_with(cert.as_bytes(), key.as_bytes());
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "hook-1", "namespace": "default", "uid": "6f1c1d4e-0000-4000-8000-000000000002",
                     "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"kubernetes.io/service-name": "hook"}},
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": ["127.0.0.2"], "conditions": {"ready": false}},
            {"addresses": ["127.0.0.1"], "conditions": {"ready": true}},
        ],
        "ports": [{"name": "https", "port": hooks.port, "protocol": "TCP"}],
    });
    put_in_etcd(&etcd, "discovery.k8s.io", "endpointslices", "default", "hook-1", &slice);
    let server = common::etcd::shardline_on(&etcd, &[]);
    for name in ["hook", "empty"] {
        let service = json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]},
        });
        let r = server.post_json("/api/v1/namespaces/default/services", &service);
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let hook = |name: &str, service: &str, label: &str| {
        json!({
            "name": name,
            "clientConfig": {"service": {"namespace": "default", "name": service, "path": "/mutate"}, "caBundle": ca},
            "rules": rules(&["configmaps"], &["CREATE"]),
            "objectSelector": {"matchLabels": {"to": label}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"],
        })
    };
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "by-service"},
        "webhooks": [hook("service.example.com", "hook", "hook"), hook("empty.example.com", "empty", "empty"), hook("missing.example.com", "missing", "missing")],
    });
    let r = server.post_json("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", &config);
    assert_eq!(r.status, 201, "{}", r.text());

    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("by-service", json!({"to": "hook"})));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"]["mutated"], "yes");
    assert_eq!(hooks.reviews("/mutate").len(), 1);

    // kube's words when the Service has no ready endpoint, or does not exist.
    for (label, name, reason) in [
        ("empty", "empty.example.com", "no endpoints available for service \"empty\""),
        ("missing", "missing.example.com", "service \"missing\" not found"),
    ] {
        let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap(label, json!({"to": label})));
        assert_eq!(r.status, 500, "{}", r.text());
        let service = if label == "empty" { "empty" } else { "missing" };
        assert_eq!(
            r.json()["message"],
            format!(
                "Internal error occurred: failed calling webhook \"{name}\": failed to call webhook: \
                 Post \"https://{service}.default.svc:443/mutate?timeout=10s\": {reason}"
            )
        );
    }
}

/// Writes an object into etcd under Shardline's key (as another writer of
/// the same etcd would).
fn put_in_etcd(etcd: &common::etcd::Etcd, group: &str, resource: &str, namespace: &str, name: &str, object: &Value) {
    let key = shardline::types::key::ObjectKey::new(group, resource, namespace, name).encode();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let put = json!({"key": b64(&key), "value": b64(&serde_json::to_vec(object).unwrap())});
    let (status, body) = etcd.http("POST", "/v3/kv/put", Some(&put)).expect("etcd answers");
    assert_eq!(status, 200, "{body}");
}

/// A webhook whose sideEffects is Unknown (only a configuration stored by an
/// older kube-apiserver can have it: v1 refuses it on create) refuses dry
/// runs with kube's 400, whatever its failurePolicy; a real write calls it.
#[test]
fn a_dry_run_is_refused_by_a_webhook_with_side_effects() {
    let etcd = common::etcd::Etcd::start();
    let pki_dir = tempfile::tempdir().unwrap();
    let pki = TestPki::new(pki_dir.path());
    let hooks = WebhookServer::start(&pki);
    let ca = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&pki.ca_file).unwrap());
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "legacy", "uid": "6f1c1d4e-0000-4000-8000-000000000001", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "webhooks": [{
            "name": "unknown-effects.example.com",
            "clientConfig": {"url": hooks.url("/allow"), "caBundle": ca},
            "rules": rules(&["configmaps"], &["CREATE"]),
            "failurePolicy": "Ignore", "matchPolicy": "Equivalent",
            "namespaceSelector": {}, "objectSelector": {}, "timeoutSeconds": 10,
            "sideEffects": "Unknown", "admissionReviewVersions": ["v1"],
        }],
    });
    put_in_etcd(&etcd, "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "legacy", &config);
    let server = common::etcd::shardline_on(&etcd, &[]);
    let stored = server.get_ok("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/legacy");
    assert_eq!(stored["webhooks"][0]["sideEffects"], "Unknown");

    let r = server.post_json("/api/v1/namespaces/default/configmaps?dryRun=All", &configmap("dry", json!({})));
    assert_eq!(r.status, 400, "{}", r.text());
    let status = r.json();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(status["message"], "admission webhook \"unknown-effects.example.com\" does not support dry run");
    let called_for = |name: &str| hooks.reviews("/allow").iter().filter(|r| r["request"]["name"] == name).count();
    assert_eq!(called_for("dry"), 0, "not called on the dry run: {:?}", hooks.reviews("/allow"));
    let r = server.post_json("/api/v1/namespaces/default/configmaps", &configmap("dry", json!({})));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(called_for("dry"), 1);
}
