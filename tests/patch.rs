//! PATCH, dry-run and field validation against the real binary.
//!
//! Owns: `kubectl patch --type json|merge|strategic`, `kubectl label`,
//! `annotate`, `scale`, `apply` twice (the second apply is a strategic merge
//! patch), `create --dry-run=server`, `create --validate=strict|warn`; and
//! over raw HTTP: 415 for other patch types, 422 for a failed JSON-patch
//! `test`, 400 for a malformed patch, 404 for a missing object, 409 for a
//! stale resourceVersion in a patch, 422 for an unsupported dryRun, and a
//! dry-run write that leaves the log revision unchanged and that a watch
//! open across it never sees.

mod common;

use common::watch::Watch;
use common::{assert_status, configmap, resource_version, Server};
use serde_json::{json, Value};

const DEPLOYMENT_YAML: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
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
      - name: sidecar
        image: busybox:1.36
";

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn write_file(s: &Server, name: &str, text: &str) -> String {
    let path = s.data_dir().join(name);
    std::fs::write(&path, text).expect("write manifest");
    path.display().to_string()
}

fn get_deployment(s: &Server) -> Value {
    s.kubectl_ok(&["get", "deployment", "web", "-n", "demo", "-o", "json"]).json()
}

#[test]
fn kubectl_patch_label_annotate_scale_and_apply_twice() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "demo"]);
    let manifest = write_file(&s, "web.yaml", DEPLOYMENT_YAML);
    let out = s.kubectl_ok(&["apply", "-f", &manifest]);
    assert!(out.stdout.contains("deployment.apps/web created"), "{}", out.stdout);

    // Strategic merge patch: containers merge by name, the sidecar stays.
    let out = s.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "demo",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}"#,
    ]);
    assert!(out.stdout.contains("deployment.apps/web patched"), "{}", out.stdout);
    let d = get_deployment(&s);
    let containers = d["spec"]["template"]["spec"]["containers"].as_array().unwrap().clone();
    assert_eq!(containers.len(), 2, "{d}");
    assert_eq!(containers[0]["image"], "nginx:1.28");
    // (ports' protocol defaulted to TCP, as kube's SetDefaults_ContainerPort does)
    assert_eq!(containers[0]["ports"], json!([{"containerPort": 80, "protocol": "TCP"}]));
    assert_eq!(containers[1]["name"], "sidecar");
    assert_eq!(d["metadata"]["generation"], 2, "a spec change bumps generation: {d}");

    // Merge patch: lists are replaced.
    s.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "demo",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x:1"}]}}}}"#,
    ]);
    let d = get_deployment(&s);
    // The replaced list, with kube's container defaults (pkg/apis/core/v1/defaults.go).
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"],
        json!([{"name": "only", "image": "x:1", "resources": {}, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}])
    );

    // JSON patch with a passing test.
    s.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "demo",
        "--type",
        "json",
        "-p",
        r#"[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3}]"#,
    ]);
    assert_eq!(get_deployment(&s)["spec"]["replicas"], 3);
    // ...and a failing one: 422, nothing changes.
    let out = s.kubectl(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "demo",
        "--type",
        "json",
        "-p",
        r#"[{"op":"test","path":"/spec/replicas","value":7},{"op":"replace","path":"/spec/replicas","value":9}]"#,
    ]);
    assert!(!out.status.success(), "{}", out.stdout);
    assert!(out.stderr.contains("testing value /spec/replicas failed: test failed"), "{}", out.stderr);
    assert_eq!(get_deployment(&s)["spec"]["replicas"], 3);

    // label, annotate (strategic/merge patches of metadata), scale (the scale subresource).
    s.kubectl_ok(&["label", "deployment", "web", "-n", "demo", "tier=frontend"]);
    s.kubectl_ok(&["annotate", "deployment", "web", "-n", "demo", "note=hello"]);
    let out = s.kubectl_ok(&["scale", "deployment", "web", "-n", "demo", "--replicas=5"]);
    assert!(out.stdout.contains("scaled"), "{}", out.stdout);
    let d = get_deployment(&s);
    assert_eq!(d["metadata"]["labels"]["tier"], "frontend", "{d}");
    assert_eq!(d["metadata"]["annotations"]["note"], "hello", "{d}");
    assert_eq!(d["spec"]["replicas"], 5, "{d}");
    s.kubectl_ok(&["label", "deployment", "web", "-n", "demo", "tier-"]);
    assert!(get_deployment(&s)["metadata"]["labels"].get("tier").is_none());

    // A second (client-side) apply is a strategic merge patch computed from
    // the last-applied annotation: the merge-patched container list comes back.
    let changed = DEPLOYMENT_YAML.replace("replicas: 2", "replicas: 4").replace("busybox:1.36", "busybox:1.37");
    let manifest = write_file(&s, "web2.yaml", &changed);
    let out = s.kubectl_ok(&["apply", "-f", &manifest]);
    assert!(out.stdout.contains("deployment.apps/web configured"), "{}", out.stdout);
    let d = get_deployment(&s);
    assert_eq!(d["spec"]["replicas"], 4, "{d}");
    let images: Vec<&str> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["image"].as_str().unwrap_or_default())
        .collect();
    assert!(images.contains(&"busybox:1.37") && images.contains(&"nginx:1.27"), "{d}");
    // The container only the merge patch added is not in the last-applied
    // configuration, so apply keeps it (as kube-apiserver and kubectl do);
    // a strategic `$patch: delete` removes it by its merge key.
    assert!(images.contains(&"x:1"), "{d}");
    s.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "demo",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","$patch":"delete"}]}}}}"#,
    ]);
    let d = get_deployment(&s);
    assert_eq!(d["spec"]["template"]["spec"]["containers"].as_array().unwrap().len(), 2, "{d}");
    // Now the live object matches the configuration: a third apply sends "{}".
    let out = s.kubectl_ok(&["apply", "-f", &manifest]);
    assert!(out.stdout.contains("deployment.apps/web unchanged"), "{}", out.stdout);

    // kubectl patch on a ConfigMap in a cluster-scoped and namespaced mix.
    s.kubectl_ok(&["patch", "namespace", "demo", "-p", r#"{"metadata":{"labels":{"team":"a"}}}"#]);
    let ns = s.kubectl_ok(&["get", "namespace", "demo", "-o", "json"]).json();
    assert_eq!(ns["metadata"]["labels"]["team"], "a", "{ns}");
    let out = s.kubectl(&["patch", "configmap", "missing", "-n", "demo", "-p", r#"{"data":{"a":"b"}}"#]);
    assert!(out.stderr.contains("NotFound") || out.stderr.contains("not found"), "{}", out.stderr);
}

#[test]
fn kubectl_dry_run_server_and_field_validation() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "demo"]);
    let out = s.kubectl_ok(&[
        "create",
        "configmap",
        "dry",
        "-n",
        "demo",
        "--from-literal=a=b",
        "--dry-run=server",
        "-o",
        "json",
    ]);
    let preview = out.json();
    assert_eq!(preview["data"]["a"], "b");
    assert!(preview["metadata"]["uid"].is_string(), "dry-run create fills uid: {preview}");
    assert!(preview["metadata"].get("resourceVersion").is_none(), "nothing was stored: {preview}");
    let out = s.kubectl(&["get", "configmap", "dry", "-n", "demo"]);
    assert!(!out.status.success(), "a dry-run create stored nothing: {}", out.stdout);

    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: demo\nspec:\n  containers:\n  - name: c\n    image: busybox\n    imagePolicy: Always\n  bogus: 1\n";
    let manifest = write_file(&s, "pod.yaml", pod);
    let out = s.kubectl(&["create", "--validate=strict", "-f", &manifest]);
    assert!(!out.status.success(), "strict validation refuses unknown fields: {}", out.stdout);
    assert!(out.stderr.contains(r#"unknown field "spec.bogus""#), "{}", out.stderr);
    assert!(out.stderr.contains(r#"unknown field "spec.containers[0].imagePolicy""#), "{}", out.stderr);
    let out = s.kubectl_ok(&["create", "--validate=warn", "-f", &manifest]);
    assert!(out.stderr.contains(r#"unknown field "spec.bogus""#), "warnings are shown: {}", out.stderr);
    let stored = s.kubectl_ok(&["get", "pod", "p", "-n", "demo", "-o", "json"]).json();
    assert!(stored["spec"].get("bogus").is_none(), "unknown fields are dropped: {stored}");
    assert!(stored["spec"]["containers"][0].get("imagePolicy").is_none(), "{stored}");
}

fn patch(s: &Server, path: &str, content_type: &str, body: &str, query: &str) -> common::http::Response {
    s.request(
        "PATCH",
        &format!("{path}{query}"),
        &[("Content-Type", content_type), ("Accept", "application/json")],
        Some(body.as_bytes()),
    )
}

#[test]
fn patch_errors_and_field_validation_over_http() {
    let s = Server::start();
    let r = s.post_json(CM, &configmap("c", &[("a", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let path = format!("{CM}/c");

    // Other media types: 415 in kube's words.
    for media in ["application/json", "text/plain"] {
        let st = assert_status(&patch(&s, &path, media, "{}", ""), 415, "UnsupportedMediaType");
        assert!(st["message"].as_str().unwrap().contains("application/strategic-merge-patch+json"), "{st}");
    }
    // Malformed patches are 400; a failed test is 422 with the library's cause.
    assert_status(&patch(&s, &path, "application/json-patch+json", "{}", ""), 400, "BadRequest");
    assert_status(&patch(&s, &path, "application/merge-patch+json", "{", ""), 400, "BadRequest");
    let st = assert_status(
        &patch(&s, &path, "application/json-patch+json", r#"[{"op":"test","path":"/data/a","value":"2"}]"#, ""),
        422,
        "Invalid",
    );
    assert_eq!(st["details"]["causes"][0]["message"], "testing value /data/a failed: test failed", "{st}");
    // Missing object: 404; name changes: 400.
    assert_status(&patch(&s, &format!("{CM}/nope"), "application/merge-patch+json", "{}", ""), 404, "NotFound");
    assert_status(
        &patch(&s, &path, "application/merge-patch+json", r#"{"metadata":{"name":"other"}}"#, ""),
        400,
        "BadRequest",
    );
    // A stale resourceVersion in the patch is a precondition: 409.
    let stale = json!({"metadata": {"resourceVersion": "1"}, "data": {"a": "2"}}).to_string();
    assert_status(&patch(&s, &path, "application/merge-patch+json", &stale, ""), 409, "Conflict");
    let fresh = json!({"metadata": {"resourceVersion": resource_version(&created)}, "data": {"a": "2"}}).to_string();
    let r = patch(&s, &path, "application/merge-patch+json", &fresh, "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"]["a"], "2");

    // fieldValidation: Warn (default) warns once per field, Strict refuses, Ignore is silent.
    let body = r#"{"data":{"b":"1"},"bogus":1,"other":{"x":1}}"#;
    let r = patch(&s, &path, "application/merge-patch+json", body, "");
    assert_eq!(r.status, 200, "{}", r.text());
    let warnings: Vec<&str> =
        r.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("warning")).map(|(_, v)| v.as_str()).collect();
    assert_eq!(warnings, [r#"299 - "unknown field \"bogus\"""#, r#"299 - "unknown field \"other\"""#]);
    assert!(r.json().get("bogus").is_none());
    let st = assert_status(
        &patch(&s, &path, "application/merge-patch+json", body, "?fieldValidation=Strict"),
        422,
        "Invalid",
    );
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .contains(r#"strict decoding error: unknown field "bogus", unknown field "other""#),
        "{st}"
    );
    let r = patch(&s, &path, "application/merge-patch+json", body, "?fieldValidation=Ignore");
    assert!(r.status == 200 && r.header("warning").is_none(), "{} {:?}", r.status, r.headers);
    assert_status(&patch(&s, &path, "application/merge-patch+json", "{}", "?fieldValidation=Loose"), 422, "Invalid");
    // Duplicate keys on create, Strict: 400 naming every problem.
    let dup = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","name":"d"},"data":{},"extra":true}"#;
    let r = s.request(
        "POST",
        &format!("{CM}?fieldValidation=Strict"),
        &[("Content-Type", "application/json")],
        Some(dup.as_bytes()),
    );
    let st = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        st["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", unknown field "extra""#
    );
    // The status subresource: a patch there changes status only.
    let pods = "/api/v1/namespaces/default/pods";
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let r = s.post_json(pods, &pod);
    assert_eq!(r.status, 201, "{}", r.text());
    let body = r#"{"status":{"phase":"Running"},"spec":{"containers":[{"name":"c","image":"changed"}]}}"#;
    let r = patch(&s, &format!("{pods}/p/status"), "application/strategic-merge-patch+json", body, "");
    assert_eq!(r.status, 200, "{}", r.text());
    let stored = s.get_ok(&format!("{pods}/p"));
    assert_eq!(stored["status"]["phase"], "Running", "{stored}");
    assert_eq!(stored["spec"]["containers"][0]["image"], "busybox", "{stored}");
    // ...and a patch of the object leaves status alone.
    let r = patch(&s, &format!("{pods}/p"), "application/merge-patch+json", r#"{"status":{"phase":"Failed"}}"#, "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.get_ok(&format!("{pods}/p"))["status"]["phase"], "Running");

    // An unsupported dryRun value is 422 on writes.
    let st = assert_status(&patch(&s, &path, "application/merge-patch+json", "{}", "?dryRun=Some"), 422, "Invalid");
    assert!(st["message"].as_str().unwrap().contains("supported values: \"All\""), "{st}");
}

#[test]
fn dry_run_writes_append_nothing_and_no_watcher_sees_them() {
    let s = Server::start();
    let r = s.post_json(CM, &configmap("keep", &[("a", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let revision = |s: &Server| resource_version(&s.get_ok(CM));
    let before = revision(&s);
    let mut watch = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={before}"));

    let r = s.post_json(&format!("{CM}?dryRun=All"), &configmap("ghost", &[("a", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["name"], "ghost");
    let mut changed = s.get_ok(&format!("{CM}/keep"));
    changed["data"]["a"] = json!("2");
    let r = s.put_json(&format!("{CM}/keep?dryRun=All"), &changed);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"]["a"], "2", "the response is what would be stored");
    let r = patch(
        &s,
        &format!("{CM}/keep"),
        "application/strategic-merge-patch+json",
        r#"{"data":{"a":"3"}}"#,
        "?dryRun=All",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"]["a"], "3");
    let r = s.request("DELETE", &format!("{CM}/keep?dryRun=All"), &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.text());

    assert_eq!(revision(&s), before, "dry-run writes append nothing to the log");
    assert_eq!(s.get_ok(&format!("{CM}/keep"))["data"]["a"], "1");
    assert_eq!(s.get(&format!("{CM}/ghost")).status, 404);

    // A real write: the first event the watch sees is this one.
    let r = patch(&s, &format!("{CM}/keep"), "application/merge-patch+json", r#"{"data":{"a":"real"}}"#, "");
    assert_eq!(r.status, 200, "{}", r.text());
    let event = watch.next();
    assert_eq!(event["type"], "MODIFIED", "{event}");
    assert_eq!(event["object"]["data"]["a"], "real", "{event}");
    assert_eq!(resource_version(&event["object"]), resource_version(&r.json()));
}

/// Concurrent patches without a resourceVersion never lose each other: a
/// patch that loses the race to another writer is applied again to the new
/// version (bounded by `--patch-conflict-attempts-max`), so every label lands.
#[test]
fn concurrent_patches_without_resource_version_all_land() {
    let s = Server::start();
    let r = s.post_json(CM, &configmap("shared", &[]));
    assert_eq!(r.status, 201, "{}", r.text());
    let path = format!("{CM}/shared");
    const WRITERS: usize = 4;
    const PATCHES: usize = 15;
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let (s, path) = (&s, &path);
            scope.spawn(move || {
                for i in 0..PATCHES {
                    let body = json!({"metadata": {"labels": {format!("w{w}-{i}"): "x"}}}).to_string();
                    let r = patch(s, path, "application/strategic-merge-patch+json", &body, "");
                    assert_eq!(r.status, 200, "writer {w} patch {i}: {}", r.text());
                }
            });
        }
    });
    let labels = s.get_ok(&path)["metadata"]["labels"].as_object().cloned().unwrap_or_default();
    assert_eq!(labels.len(), WRITERS * PATCHES, "{labels:?}");
}
