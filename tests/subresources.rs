//! The control plane's other subresources against the real binary:
//! `pods/ephemeralcontainers` and `pods/resize` change only their part of
//! the pod, `namespaces/finalize` (the namespace controller's last step)
//! removes a Terminating namespace once its finalizers are gone,
//! `certificatesigningrequests/approval` changes only the conditions, and
//! the kubelet's and the proxies' subresources give kube's answers when no
//! kubelet or endpoint is reachable. Discovery lists the review APIs.

mod common;

use common::{assert_status, Server};
use serde_json::{json, Value};

fn created(s: &Server, path: &str, body: &Value) -> Value {
    let r = s.post_json(path, body);
    assert_eq!(r.status, 201, "POST {path}: {}", r.text());
    r.json()
}

fn patch(s: &Server, path: &str, content_type: &str, body: &Value) -> common::http::Response {
    let bytes = serde_json::to_vec(body).unwrap();
    s.request("PATCH", path, &[("Content-Type", content_type), ("Accept", "application/json")], Some(&bytes))
}

const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";

#[test]
fn ephemeral_containers_and_resize_change_only_their_part() {
    let s = Server::start();
    let resources =
        |cpu: &str| json!({"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": cpu, "memory": "64Mi"}});
    created(
        &s,
        "/api/v1/namespaces/default/pods",
        &json!({"metadata": {"name": "web"},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": resources("100m")}]}}),
    );
    let path = "/api/v1/namespaces/default/pods/web";

    // GET of the subresource is the pod.
    assert_eq!(s.get_ok(&format!("{path}/ephemeralcontainers"))["kind"], "Pod");
    // A debug container added (as `kubectl debug` patches it); the image of
    // the app container in the same body is not taken.
    let r = patch(
        &s,
        &format!("{path}/ephemeralcontainers"),
        JSON_PATCH,
        &json!([{"op": "add", "path": "/spec/ephemeralContainers", "value": [{"name": "debug", "image": "busybox", "stdin": true}]},
                {"op": "replace", "path": "/spec/containers/0/image", "value": "evil"}]),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let pod = s.get_ok(path);
    assert_eq!(pod["spec"]["ephemeralContainers"][0]["name"], "debug");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    // An existing one may not be removed; one with ports may not be added.
    let removed =
        patch(&s, &format!("{path}/ephemeralcontainers"), MERGE, &json!({"spec": {"ephemeralContainers": []}}));
    assert!(assert_status(&removed, 422, "Invalid")["message"].as_str().unwrap().contains("may not be removed"));
    let ports = patch(
        &s,
        &format!("{path}/ephemeralcontainers"),
        JSON_PATCH,
        &json!([{"op": "add", "path": "/spec/ephemeralContainers/-",
            "value": {"name": "d2", "image": "busybox", "ports": [{"containerPort": 80}]}}]),
    );
    assert!(assert_status(&ports, 422, "Invalid")["message"]
        .as_str()
        .unwrap()
        .contains("cannot be set for an Ephemeral Container"));
    // `kubectl debug` adds one with a strategic merge patch of the subresource.
    s.kubectl_ok(&["debug", "web", "--image=busybox", "--container=dbg", "-n", "default"]);
    let pod = s.get_ok(path);
    let names: Vec<&str> =
        pod["spec"]["ephemeralContainers"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["debug", "dbg"]);
    // A plain update of the pod may not add one.
    let mut plain = s.get_ok(path);
    plain["spec"]["ephemeralContainers"][0]["image"] = json!("other");
    assert_status(&s.put_json(path, &plain), 422, "Invalid");

    // Resize: cpu changes, within the QoS class; the image does not.
    let r = patch(
        &s,
        &format!("{path}/resize"),
        MERGE,
        &json!({"spec": {"containers": [{"name": "app", "image": "evil", "resources": resources("200m")}]}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let pod = s.get_ok(path);
    assert_eq!(pod["spec"]["containers"][0]["resources"]["limits"]["cpu"], "200m");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    let burstable = patch(
        &s,
        &format!("{path}/resize"),
        MERGE,
        &json!({"spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "400m"}}}]}}),
    );
    assert!(assert_status(&burstable, 422, "Invalid")["message"]
        .as_str()
        .unwrap()
        .contains("Pod QOS Class may not change as a result of resizing"));
}

#[test]
fn finalize_and_csr_approval() {
    let s = Server::start();
    created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": "going"}}));
    let ns = s.get_ok("/api/v1/namespaces/going");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    // finalize may change spec.finalizers only: a bad name is refused.
    let mut bad = ns.clone();
    bad["spec"]["finalizers"] = json!(["not a name"]);
    assert_status(&s.put_json("/api/v1/namespaces/going/finalize", &bad), 422, "Invalid");
    // A PUT of the namespace itself keeps its finalizers.
    let mut plain = ns.clone();
    plain["spec"]["finalizers"] = json!([]);
    let r = s.put_json("/api/v1/namespaces/going", &plain);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["finalizers"], json!(["kubernetes"]));
    let mut finalized = s.get_ok("/api/v1/namespaces/going");
    finalized["spec"]["finalizers"] = json!(["example.com/hold"]);
    finalized["status"]["phase"] = json!("Terminating");
    let r = s.put_json("/api/v1/namespaces/going/finalize", &finalized);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["finalizers"], json!(["example.com/hold"]));
    assert_eq!(r.json()["status"]["phase"], "Active", "finalize keeps the stored status");
    assert_status(&s.get("/api/v1/namespaces/going/finalize"), 405, "MethodNotAllowed");

    // A CSR's approval: conditions only.
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "system:node:node-1");
    let request = base64_of(params.serialize_request(&key).unwrap().pem().unwrap().as_bytes());
    let csr = created(
        &s,
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
        &json!({"metadata": {"name": "node-csr"},
            "spec": {"request": request, "signerName": "example.com/signer", "usages": ["client auth"],
                "username": "mallory", "uid": "forged", "groups": ["system:masters"], "extra": {"x": ["y"]}}}),
    );
    // The requester is the request's user, whatever the body claims (kube's
    // PrepareForCreate); an anonymous requester has no uid and no extra.
    assert_eq!(csr["spec"]["username"], "system:anonymous", "{csr}");
    assert_eq!(csr["spec"]["groups"], json!(["system:unauthenticated"]), "{csr}");
    assert!(csr["spec"].get("uid").is_none() && csr["spec"].get("extra").is_none(), "{csr}");
    assert_eq!(csr["status"], json!({}));
    let mut approved = csr.clone();
    approved["spec"]["signerName"] = json!("example.com/other");
    approved["status"] =
        json!({"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]});
    let approval = "/apis/certificates.k8s.io/v1/certificatesigningrequests/node-csr/approval";
    let r = s.put_json(approval, &approved);
    assert_eq!(r.status, 200, "{}", r.text());
    let stored = r.json();
    assert_eq!(stored["spec"]["signerName"], "example.com/signer");
    assert_eq!(stored["status"]["conditions"][0]["type"], "Approved");
    assert!(stored["status"]["conditions"][0]["lastUpdateTime"].is_string());
    let mut both = stored.clone();
    both["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]);
    let r = s.put_json(approval, &both);
    assert!(assert_status(&r, 422, "Invalid")["message"].as_str().unwrap().contains("mutually exclusive"));
    // The signer issues through /status: a PEM certificate, once.
    let status = "/apis/certificates.k8s.io/v1/certificatesigningrequests/node-csr/status";
    let mut junk = stored.clone();
    junk["status"]["certificate"] = json!(base64_of(b"not a certificate"));
    let r = s.put_json(status, &junk);
    assert_eq!(
        assert_status(&r, 422, "Invalid")["message"],
        "CertificateSigningRequest.certificates.k8s.io \"node-csr\" is invalid: status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"
    );
    let mut issued = stored.clone();
    let pem = rcgen::generate_simple_self_signed(vec!["node-1".to_string()]).unwrap().cert.pem();
    issued["status"]["certificate"] = json!(base64_of(pem.as_bytes()));
    let r = s.put_json(status, &issued);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["status"]["certificate"], issued["status"]["certificate"]);
    let mut again = r.json();
    again["status"]["certificate"] =
        json!(base64_of(rcgen::generate_simple_self_signed(vec!["n".to_string()]).unwrap().cert.pem().as_bytes()));
    let r = s.put_json(status, &again);
    assert!(assert_status(&r, 422, "Invalid")["message"]
        .as_str()
        .unwrap()
        .contains("status.certificate: Forbidden: updates may not modify existing certificate content"));

    // The review APIs are in discovery, create only.
    let authz = s.get_ok("/apis/authorization.k8s.io/v1");
    let names: Vec<&str> = authz["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(
        names,
        ["localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"]
    );
    let groups = s.get_ok("/apis");
    assert!(groups["groups"].as_array().unwrap().iter().any(|g| g["name"] == "authentication.k8s.io"));
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn kubelet_and_proxy_subresources_answer_as_kube_does_without_a_kubelet() {
    let s = Server::start();
    let two = json!({"metadata": {"name": "two"},
        "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]}});
    created(&s, "/api/v1/namespaces/default/pods", &two);
    created(
        &s,
        "/api/v1/namespaces/default/pods",
        &json!({"metadata": {"name": "one"},
        "spec": {"containers": [{"name": "app", "image": "x"}]}}),
    );
    let base = "/api/v1/namespaces/default/pods";

    // Logs of an unscheduled pod: no stream (204, kube's StreamObject
    // without a location); the container must be valid.
    let r = s.get(&format!("{base}/one/log"));
    assert_eq!((r.status, r.text()), (204, String::new()));
    let r = s.get(&format!("{base}/two/log"));
    assert_eq!(
        assert_status(&r, 400, "BadRequest")["message"],
        "a container name must be specified for pod two, choose one of: [a b]"
    );
    let r = s.get(&format!("{base}/one/log?container=nope"));
    assert_eq!(assert_status(&r, 400, "BadRequest")["message"], "container nope is not valid for pod one");
    assert_status(&s.get(&format!("{base}/ghost/log")), 404, "NotFound");
    // exec, attach, portforward need a node.
    for sub in ["exec?command=ls", "attach", "portforward"] {
        let r = s.request("POST", &format!("{base}/one/{sub}"), &[], None);
        assert_eq!(assert_status(&r, 400, "BadRequest")["message"], "pod one does not have a host assigned", "{sub}");
    }
    // Bound to a node without an address: kube's NoMatchError, an error
    // that is no Status (500 without a reason).
    created(&s, "/api/v1/nodes", &json!({"metadata": {"name": "node-1"}}));
    created(
        &s,
        &format!("{base}/one/binding"),
        &json!({"metadata": {"name": "one"}, "target": {"kind": "Node", "name": "node-1"}}),
    );
    let no_address = |r: common::http::Response| {
        assert_eq!(r.status, 500, "{}", r.text());
        let status = r.json();
        assert_eq!(status["message"], "no preferred addresses found; known addresses: []", "{status}");
        assert!(status.get("reason").is_none(), "{status}");
    };
    no_address(s.get(&format!("{base}/one/log")));
    no_address(s.request("POST", &format!("{base}/one/exec?command=ls"), &[], None));
    // Proxies: no pod IP, no endpoints, no node address.
    let r = s.get(&format!("{base}/one/proxy"));
    assert_eq!(assert_status(&r, 400, "BadRequest")["message"], "address not allowed");
    created(
        &s,
        "/api/v1/namespaces/default/services",
        &json!({"metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "none"}}}),
    );
    let r = s.get("/api/v1/namespaces/default/services/svc/proxy");
    assert_eq!(assert_status(&r, 503, "ServiceUnavailable")["message"], "no endpoints available for service \"svc\"");
    no_address(s.get("/api/v1/nodes/node-1/proxy"));
    // Verbs kube does not list for a subresource are 405.
    assert_status(&s.request("DELETE", &format!("{base}/one/log"), &[], None), 405, "MethodNotAllowed");
}
