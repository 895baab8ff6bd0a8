//! The first slice's must-show scenario, driven by a real kubectl.
//!
//! Owns: what a person sees when they point kubectl at Shardline: namespaces,
//! `apply`/`create -f` of a Deployment and Pods (with kubectl's validation left
//! on), table, JSON and YAML output, `-A`, optimistic concurrency through
//! `kubectl replace`, delete, and every acknowledged object surviving SIGKILL
//! and a restart unchanged. kubectl comes from `$KUBECTL` or `.venv/bin/kubectl`
//! (installed by `scripts/test.sh`); without it this test fails, saying so.

mod common;

use common::{assert_status, kubectl_path, resource_version, Server};
use serde_json::{json, Value};
use std::fs;

const DEPLOYMENT_YAML: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
";

const PODS_YAML: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web-pod
  namespace: demo
  labels:
    app: web-pod
spec:
  containers:
  - name: nginx
    image: nginx:1.27
---
apiVersion: v1
kind: Pod
metadata:
  name: scratch
  namespace: demo
spec:
  containers:
  - name: busybox
    image: busybox:1.36
    command: [\"sleep\", \"3600\"]
";

const DEFAULT_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

#[test]
fn kubectl_must_show_scenario_survives_sigkill() {
    // Fail first, and clearly, when kubectl is not installed.
    let kubectl = kubectl_path();
    let mut s = Server::start();
    let version = s.kubectl_ok(&["version", "--client"]);
    eprintln!("using {} ({})", kubectl.display(), version.stdout.lines().next().unwrap_or_default());

    // Namespace.
    let out = s.kubectl_ok(&["create", "namespace", "demo"]);
    assert!(out.stdout.contains("namespace/demo created"), "{}", out.stdout);

    // Deployment with apply, Pods with create; validation stays on.
    let dir = s.dir.path().to_path_buf();
    let deployment_file = dir.join("deployment.yaml");
    let pods_file = dir.join("pods.yaml");
    fs::write(&deployment_file, DEPLOYMENT_YAML).unwrap();
    fs::write(&pods_file, PODS_YAML).unwrap();
    let out = s.kubectl_ok(&["apply", "-f", deployment_file.to_str().unwrap()]);
    assert!(out.stdout.contains("deployment.apps/web created"), "{}", out.stdout);
    let out = s.kubectl_ok(&["create", "-f", pods_file.to_str().unwrap()]);
    assert!(out.stdout.contains("pod/web-pod created"), "{}", out.stdout);
    assert!(out.stdout.contains("pod/scratch created"), "{}", out.stdout);

    // Table output.
    let out = s.kubectl_ok(&["get", "pods", "-n", "demo"]);
    let header = out.stdout.lines().next().unwrap_or_default();
    assert!(header.starts_with("NAME"), "table header: {}", out.stdout);
    assert!(row_with(&out.stdout, &["web-pod"]).is_some(), "web-pod missing:\n{}", out.stdout);
    assert!(row_with(&out.stdout, &["scratch"]).is_some(), "scratch missing:\n{}", out.stdout);

    // JSON output with server-set fields.
    let deployment = s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "json"]).json();
    assert_eq!(deployment["kind"], "Deployment");
    assert_eq!(deployment["apiVersion"], "apps/v1");
    assert_eq!(deployment["metadata"]["name"], "web");
    assert_eq!(deployment["metadata"]["namespace"], "demo");
    let uid = deployment["metadata"]["uid"].as_str().expect("uid").to_string();
    assert!(uid.len() >= 32, "uid: {uid}");
    let rv1 = resource_version(&deployment);
    assert!(deployment["metadata"]["creationTimestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{deployment}");
    assert_eq!(deployment["metadata"]["generation"], 1, "{deployment}");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");

    // YAML output agrees with the JSON.
    let yaml = s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "yaml"]).stdout;
    for needle in [
        "apiVersion: apps/v1".to_string(),
        "kind: Deployment".to_string(),
        "  name: web".to_string(),
        "  namespace: demo".to_string(),
        format!("  uid: {uid}"),
        format!("  resourceVersion: \"{rv1}\""),
        "  generation: 1".to_string(),
        "image: nginx:1.27".to_string(),
    ] {
        assert!(yaml.contains(&needle), "-o yaml lacks {needle:?}:\n{yaml}");
    }

    // All namespaces: the pod appears with its namespace.
    let out = s.kubectl_ok(&["get", "pods", "-A"]);
    assert!(out.stdout.lines().next().unwrap_or_default().starts_with("NAMESPACE"), "{}", out.stdout);
    assert!(row_with(&out.stdout, &["demo", "web-pod"]).is_some(), "-A lacks demo/web-pod:\n{}", out.stdout);

    // Replace with the current resourceVersion succeeds ...
    let stale_file = dir.join("web-stale.json");
    fs::write(&stale_file, serde_json::to_vec_pretty(&deployment).unwrap()).unwrap();
    let mut changed = deployment.clone();
    changed["metadata"]["labels"]["tier"] = json!("frontend");
    let changed_file = dir.join("web-changed.json");
    fs::write(&changed_file, serde_json::to_vec_pretty(&changed).unwrap()).unwrap();
    let out = s.kubectl_ok(&["replace", "-f", changed_file.to_str().unwrap()]);
    assert!(out.stdout.contains("deployment.apps/web replaced"), "{}", out.stdout);
    let after_replace = s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "json"]).json();
    let rv2 = resource_version(&after_replace);
    assert_ne!(rv1, rv2, "replace must change resourceVersion");
    assert_eq!(after_replace["metadata"]["labels"]["tier"], "frontend");
    assert_eq!(after_replace["metadata"]["uid"], uid.as_str());

    // ... and replace with the stale one is refused with a Conflict.
    let out = s.kubectl(&["replace", "-f", stale_file.to_str().unwrap()]);
    assert!(!out.status.success(), "stale replace must fail; stdout:\n{}", out.stdout);
    assert!(
        out.stderr.contains("Conflict") || out.stderr.contains("the object has been modified"),
        "stale replace must report a Conflict:\n{}",
        out.stderr
    );
    let still = s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(resource_version(&still), rv2, "a refused replace changed the object");
    assert_eq!(still["metadata"]["labels"]["tier"], "frontend");

    // Delete one pod; a following get is NotFound.
    let out = s.kubectl_ok(&["delete", "pod", "scratch", "-n", "demo"]);
    assert!(out.stdout.contains("pod \"scratch\" deleted"), "{}", out.stdout);
    let out = s.kubectl(&["get", "pod", "scratch", "-n", "demo"]);
    assert!(!out.status.success(), "get after delete must fail:\n{}", out.stdout);
    assert!(out.stderr.contains("NotFound") && out.stderr.contains("\"scratch\" not found"), "{}", out.stderr);

    // Record every acknowledged object, exactly as the server serves it.
    let mut paths: Vec<String> = vec![
        "/api/v1/namespaces/demo".into(),
        "/apis/apps/v1/namespaces/demo/deployments/web".into(),
        "/api/v1/namespaces/demo/pods/web-pod".into(),
    ];
    paths.extend(DEFAULT_NAMESPACES.iter().map(|ns| format!("/api/v1/namespaces/{ns}")));
    let before: Vec<(String, Value)> = paths.iter().map(|p| (p.clone(), s.get_ok(p))).collect();
    assert_eq!(before[1].1, still, "raw GET and kubectl disagree on the deployment");
    let pod_names_before = pod_names(&s.get_ok("/api/v1/namespaces/demo/pods"));
    assert_eq!(pod_names_before, ["web-pod"]);

    // SIGKILL, restart on the same data dir.
    s.kill();
    s.restart();

    for (path, obj) in &before {
        let now = s.get_ok(path);
        assert_eq!(resource_version(&now), resource_version(obj), "{path}: resourceVersion changed");
        assert_eq!(&now, obj, "{path} changed across SIGKILL + restart");
    }
    assert_eq!(pod_names(&s.get_ok("/api/v1/namespaces/demo/pods")), pod_names_before);
    assert_status(&s.get("/api/v1/namespaces/demo/pods/scratch"), 404, "NotFound");

    // kubectl sees the same after the restart (the kubeconfig follows the new port).
    let out = s.kubectl(&["get", "pod", "scratch", "-n", "demo"]);
    assert!(
        !out.status.success() && out.stderr.contains("NotFound"),
        "deleted pod is back:\n{}{}",
        out.stdout,
        out.stderr
    );
    let after = s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(after, before[1].1, "kubectl's deployment after restart");
    let out = s.kubectl_ok(&["get", "ns"]);
    for ns in DEFAULT_NAMESPACES.iter().chain(["demo"].iter()) {
        assert!(row_with(&out.stdout, &[ns]).is_some(), "kubectl get ns lacks {ns}:\n{}", out.stdout);
    }
}

/// The first table row whose whitespace-separated cells start with `cells`.
fn row_with<'a>(table: &'a str, cells: &[&str]) -> Option<&'a str> {
    table.lines().skip(1).find(|line| {
        let mut words = line.split_whitespace();
        cells.iter().all(|c| words.next() == Some(*c))
    })
}

fn pod_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("items: {list}"))
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}
