//! kubectl's typed `create` subcommands, which send their bodies in
//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`):
//! every one must be decoded into the object kube-apiserver would store.
//!
//! Owns: the end-to-end check of `api::protobuf` with the bytes a real kubectl
//! 1.37 writes. kubectl comes from `$KUBECTL` or `.venv/bin/kubectl`
//! (installed by `scripts/test.sh`); without it this test fails, saying so.

mod common;

use common::Server;
use serde_json::{json, Value};

fn get(s: &Server, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    s.kubectl_ok(&all).json()
}

#[test]
fn typed_creates_are_decoded_from_protobuf() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "demo"]);
    let n = ["-n", "demo"];
    let create = |args: &[&str]| {
        let mut all = vec!["create"];
        all.extend_from_slice(args);
        all.extend_from_slice(&n);
        s.kubectl_ok(&all);
    };
    create(&["configmap", "c", "--from-literal=a=b", "--from-literal=empty="]);
    create(&["secret", "generic", "s", "--from-literal=k=v"]);
    create(&["deployment", "web", "--image=nginx", "--replicas=2", "--port=80"]);
    create(&["job", "j", "--image=busybox"]);
    create(&["cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"]);
    create(&["service", "clusterip", "svc", "--tcp=80:8080"]);
    create(&["serviceaccount", "sa"]);
    create(&["role", "r", "--verb=get", "--resource=pods"]);
    create(&["rolebinding", "rb", "--role=r", "--serviceaccount=demo:sa"]);
    s.kubectl_ok(&["create", "clusterrole", "cr", "--verb=list", "--resource=nodes"]);
    s.kubectl_ok(&["create", "clusterrolebinding", "crb", "--clusterrole=cr", "--user=alice"]);

    let c = get(&s, &["configmap", "c", "-n", "demo"]);
    assert_eq!(c["data"], json!({"a": "b", "empty": ""}));
    assert_eq!(c["metadata"]["namespace"], "demo");
    assert!(c["metadata"]["uid"].as_str().is_some_and(|u| u.len() == 36), "{c}");

    let secret = get(&s, &["secret", "s", "-n", "demo"]);
    assert_eq!(secret["data"], json!({"k": "dg=="}));

    let web = get(&s, &["deployment", "web", "-n", "demo"]);
    assert_eq!(web["apiVersion"], "apps/v1");
    assert_eq!(web["spec"]["replicas"], 2);
    assert_eq!(web["spec"]["selector"], json!({"matchLabels": {"app": "web"}}));
    assert_eq!(web["spec"]["template"]["metadata"]["labels"], json!({"app": "web"}));
    let container = &web["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "nginx");
    assert_eq!(container["image"], "nginx");
    assert_eq!(container["ports"][0]["containerPort"], 80);
    assert_eq!(web["metadata"]["generation"], 1);

    let job = get(&s, &["job", "j", "-n", "demo"]);
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["image"], "busybox");

    let cj = get(&s, &["cronjob", "cj", "-n", "demo"]);
    assert_eq!(cj["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"], "busybox");

    let svc = get(&s, &["service", "svc", "-n", "demo"]);
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["ports"][0]["port"], 80);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");

    let sa = get(&s, &["serviceaccount", "sa", "-n", "demo"]);
    assert_eq!(sa["metadata"]["name"], "sa");

    let r = get(&s, &["role", "r", "-n", "demo"]);
    assert_eq!(r["rules"], json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]));
    let rb = get(&s, &["rolebinding", "rb", "-n", "demo"]);
    assert_eq!(rb["roleRef"], json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}));
    assert_eq!(rb["subjects"], json!([{"kind": "ServiceAccount", "name": "sa", "namespace": "demo"}]));
    let cr = get(&s, &["clusterrole", "cr"]);
    assert_eq!(cr["rules"][0]["verbs"], json!(["list"]));
    let crb = get(&s, &["clusterrolebinding", "crb"]);
    assert_eq!(crb["subjects"], json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]));
}
