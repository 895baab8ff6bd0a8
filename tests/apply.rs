//! Server-side apply and managedFields against the real binary.
//!
//! Owns: `kubectl apply --server-side` with two managers (`--field-manager`),
//! a conflict (exit code and kube's message), `--force-conflicts`, removal of
//! a field dropped from an applier's configuration, and the upgrade of an
//! object created by client-side apply; over raw HTTP: `fieldManager`
//! required and validated, `force` refused on other patches, apply creating
//! an object (YAML and CBOR bodies), the 409 Status with its causes, the
//! Update entries of POST/PUT/PATCH (by `fieldManager` or user agent), and
//! resetting managedFields.

mod common;

use common::{assert_status, configmap, Server};
use serde_json::{json, Value};
use std::fs;

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn configmap_yaml(name: &str, data: &[(&str, &str)]) -> String {
    let mut text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n");
    for (k, v) in data {
        text.push_str(&format!("  {k}: \"{v}\"\n"));
    }
    text
}

/// Each managedFields entry as (manager, operation, fieldsV1).
fn managers(object: &Value) -> Vec<(String, String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fields_of<'a>(entries: &'a [(String, String, Value)], manager: &str, operation: &str) -> &'a Value {
    &entries
        .iter()
        .find(|(m, o, _)| m == manager && o == operation)
        .unwrap_or_else(|| panic!("no {operation} entry for {manager}: {entries:?}"))
        .2
}

#[test]
fn kubectl_server_side_apply_two_managers_conflict_force_and_removal() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: String| {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let alice_v1 = file("alice1.yaml", configmap_yaml("shared", &[("a", "1"), ("b", "2"), ("d", "4")]));
    s.kubectl_ok(&["apply", "--server-side", "--field-manager=alice", "-f", &alice_v1]);
    let bob_c = file("bob1.yaml", configmap_yaml("shared", &[("c", "3")]));
    s.kubectl_ok(&["apply", "--server-side", "--field-manager=bob", "-f", &bob_c]);
    let object = s.kubectl_ok(&["get", "configmap", "shared", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(object["data"], json!({"a": "1", "b": "2", "c": "3", "d": "4"}));
    let entries = managers(&object);
    assert_eq!(fields_of(&entries, "alice", "Apply"), &json!({"f:data": {"f:a": {}, "f:b": {}, "f:d": {}}}));
    assert_eq!(fields_of(&entries, "bob", "Apply"), &json!({"f:data": {"f:c": {}}}));

    // Bob sets alice's field: a conflict, exit code 1, kube's message.
    let bob_a = file("bob2.yaml", configmap_yaml("shared", &[("a", "9"), ("c", "3")]));
    let refused = s.kubectl(&["apply", "--server-side", "--field-manager=bob", "-f", &bob_a]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        refused.stderr.contains("Apply failed with 1 conflict: conflict with \"alice\": .data.a"),
        "{}",
        refused.stderr
    );
    let unchanged = s.kubectl_ok(&["get", "configmap", "shared", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(unchanged["data"]["a"], "1");

    // --force-conflicts takes it.
    s.kubectl_ok(&["apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", &bob_a]);
    let forced = s.kubectl_ok(&["get", "configmap", "shared", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(forced["data"]["a"], "9");
    let entries = managers(&forced);
    assert_eq!(fields_of(&entries, "alice", "Apply"), &json!({"f:data": {"f:b": {}, "f:d": {}}}));
    assert_eq!(fields_of(&entries, "bob", "Apply"), &json!({"f:data": {"f:a": {}, "f:c": {}}}));

    // Alice drops d (hers alone: removed) and a (bob's now: kept).
    let alice_v2 = file("alice2.yaml", configmap_yaml("shared", &[("b", "2")]));
    s.kubectl_ok(&["apply", "--server-side", "--field-manager=alice", "-f", &alice_v2]);
    let pruned = s.kubectl_ok(&["get", "configmap", "shared", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(pruned["data"], json!({"a": "9", "b": "2", "c": "3"}));
}

#[test]
fn kubectl_server_side_apply_upgrades_client_side_apply() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let v1 = dir.path().join("v1.yaml");
    fs::write(&v1, configmap_yaml("legacy", &[("a", "1")])).unwrap();
    s.kubectl_ok(&["apply", "-f", v1.to_str().unwrap()]);
    let created = s.kubectl_ok(&["get", "configmap", "legacy", "-o", "json", "--show-managed-fields"]).json();
    let entries = managers(&created);
    assert_eq!(fields_of(&entries, "kubectl-client-side-apply", "Update")["f:data"], json!({".": {}, "f:a": {}}));
    // A field set by another writer after the client-side apply.
    s.kubectl_ok(&["patch", "configmap", "legacy", "--type=merge", "-p", r#"{"data":{"b":"5"}}"#]);

    // The server-side apply of the same file with a new value takes over
    // what the annotation names without a conflict.
    let v2 = dir.path().join("v2.yaml");
    fs::write(&v2, configmap_yaml("legacy", &[("a", "2")])).unwrap();
    s.kubectl_ok(&["apply", "--server-side", "-f", v2.to_str().unwrap()]);
    let upgraded = s.kubectl_ok(&["get", "configmap", "legacy", "-o", "json", "--show-managed-fields"]).json();
    assert_eq!(upgraded["data"], json!({"a": "2", "b": "5"}));
    let entries = managers(&upgraded);
    assert_eq!(fields_of(&entries, "kubectl", "Apply")["f:data"], json!({"f:a": {}}));
    let annotation = upgraded["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .expect("the annotation is kept");
    assert_eq!(serde_json::from_str::<Value>(annotation).unwrap()["data"], json!({"a": "2"}));

    // A field the annotation does not name still conflicts.
    let v3 = dir.path().join("v3.yaml");
    fs::write(&v3, configmap_yaml("legacy", &[("a", "2"), ("b", "6")])).unwrap();
    let refused = s.kubectl(&["apply", "--server-side", "-f", v3.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(refused.stderr.contains("conflict with \"kubectl-patch\" using v1: .data.b"), "{}", refused.stderr);
}

fn apply(s: &Server, path: &str, media: &str, body: &[u8], query: &str) -> common::http::Response {
    s.request(
        "PATCH",
        &format!("{path}{query}"),
        &[("Content-Type", media), ("Accept", "application/json")],
        Some(body),
    )
}

#[test]
fn apply_and_managed_fields_over_http() {
    let s = Server::start();
    let yaml = configmap_yaml("web", &[("a", "1")]);
    let path = format!("{CM}/web");

    // fieldManager is required and validated; force is for apply only.
    let st = assert_status(&apply(&s, &path, "application/apply-patch+yaml", yaml.as_bytes(), ""), 422, "Invalid");
    assert_eq!(
        st["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let long = format!("?fieldManager={}", "m".repeat(129));
    let st = assert_status(&apply(&s, &path, "application/apply-patch+yaml", yaml.as_bytes(), &long), 422, "Invalid");
    assert!(st["message"].as_str().unwrap().contains("fieldManager: Too long"), "{st}");
    let st = assert_status(&apply(&s, &path, "application/merge-patch+json", b"{}", "?force=true"), 422, "Invalid");
    assert!(st["message"].as_str().unwrap().contains("force: Forbidden: may not be specified for non-apply patch"));

    // Apply creates the object (201) with an Apply entry.
    let r = apply(&s, &path, "application/apply-patch+yaml", yaml.as_bytes(), "?fieldManager=alice");
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["data"], json!({"a": "1"}));
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "alice");
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert!(entry["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{entry}");

    // A CBOR apply by another manager; then a conflict answers 409 with causes.
    let cbor = shardline::api::cbor::encode_value(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web"}, "data": {"a": "2"}}));
    let r = apply(&s, &path, "application/apply-patch+cbor", &cbor, "?fieldManager=bob");
    let st = assert_status(&r, 409, "Conflict");
    assert_eq!(st["message"], "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
    assert_eq!(
        st["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".data.a"}])
    );
    let r = apply(&s, &path, "application/apply-patch+cbor", &cbor, "?fieldManager=bob&force=true");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"]["a"], "2");

    // Every write records its manager: fieldManager, else the user agent's product.
    let r = s.request(
        "POST",
        CM,
        &[("Content-Type", "application/json"), ("User-Agent", "tool/1.2 (linux)")],
        Some(serde_json::to_vec(&configmap("ua", &[("k", "v")])).unwrap().as_slice()),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["metadata"]["managedFields"][0]["manager"], "tool");
    assert_eq!(created["metadata"]["managedFields"][0]["operation"], "Update");
    assert_eq!(created["metadata"]["managedFields"][0]["fieldsV1"], json!({"f:data": {".": {}, "f:k": {}}}));
    let r = apply(
        &s,
        &format!("{CM}/ua"),
        "application/merge-patch+json",
        br#"{"data":{"k":"w"}}"#,
        "?fieldManager=patcher",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    // (kube's order: Apply first, then by time, then by name.)
    let mut names: Vec<String> = managers(&r.json()).into_iter().map(|(m, o, _)| format!("{m}/{o}")).collect();
    names.sort();
    assert_eq!(names, vec!["patcher/Update", "tool/Update"]);

    // managedFields reset by a list with one empty entry (or an empty list).
    let r =
        apply(&s, &format!("{CM}/ua"), "application/merge-patch+json", br#"{"metadata":{"managedFields":[{}]}}"#, "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["metadata"].get("managedFields").is_none(), "{}", r.text());
}

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
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
        image: IMAGE
        ports:
        - containerPort: 80
";

#[test]
fn kubectl_server_side_apply_of_a_deployment_merges_containers_by_name() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, image: &str| {
        let path = dir.path().join(name);
        fs::write(&path, DEPLOYMENT.replace("IMAGE", image)).unwrap();
        path.to_string_lossy().into_owned()
    };
    let v1 = file("v1.yaml", "nginx:1.27");
    s.kubectl_ok(&["apply", "--server-side", "-f", &v1]);
    let get = || s.kubectl_ok(&["get", "deployment", "web", "-o", "json", "--show-managed-fields"]).json();
    let first = get();
    let entries = managers(&first);
    let containers = &fields_of(&entries, "kubectl", "Apply")["f:spec"]["f:template"]["f:spec"]["f:containers"];
    assert_eq!(
        containers["k:{\"name\":\"nginx\"}"],
        // The port's key carries the schema default of `protocol` (TCP), as
        // structured-merge-diff fills a missing list-map key.
        json!({".": {}, "f:image": {}, "f:name": {}, "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}),
        "{containers}"
    );
    // Applying the same configuration again writes nothing.
    s.kubectl_ok(&["apply", "--server-side", "-f", &v1]);
    assert_eq!(get()["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
    // Another manager changing the image conflicts on the container's field.
    let v2 = file("v2.yaml", "nginx:1.28");
    let refused = s.kubectl(&["apply", "--server-side", "--field-manager=ci", "-f", &v2]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        refused.stderr.contains("conflict with \"kubectl\": .spec.template.spec.containers[name=\"nginx\"].image"),
        "{}",
        refused.stderr
    );
    // dryRun=All: the forced apply is answered, nothing is stored.
    s.kubectl_ok(&["apply", "--server-side", "--field-manager=ci", "--force-conflicts", "--dry-run=server", "-f", &v2]);
    let after = get();
    assert_eq!(after["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");
    assert_eq!(after["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
    // kubectl scale (the scale subresource) takes spec.replicas from the applier.
    s.kubectl_ok(&["scale", "deployment", "web", "--replicas=3"]);
    let scaled = get();
    let entry = scaled["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subresource"] == "scale")
        .unwrap_or_else(|| panic!("no scale entry: {scaled}"))
        .clone();
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["apiVersion"], "apps/v1");
    assert_eq!(entry["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    let entries = managers(&scaled);
    assert!(fields_of(&entries, "kubectl", "Apply")["f:spec"].get("f:replicas").is_none(), "{scaled}");
}

/// A server-side apply of `/status` (how kube's controllers write their
/// conditions) records its own Apply entry with `subresource: status`, kept
/// by later writes of the object, as kube-apiserver does (the status
/// strategy keeps the writer's managedFields).
#[test]
fn apply_of_status_records_the_status_manager() {
    let s = Server::start();
    let body = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}});
    let created = s.post_json("/apis/policy/v1/namespaces/default/poddisruptionbudgets", &body);
    assert_eq!(created.status, 201, "{}", created.text());
    let status = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                        "status": {"currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1, "expectedPods": 2,
                                   "conditions": [{"type": "DisruptionAllowed", "status": "True",
                                                   "lastTransitionTime": "2026-12-03T10:00:00Z",
                                                   "reason": "SufficientPods", "message": ""}]}});
    let path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b/status";
    let r = apply(
        &s,
        path,
        "application/apply-patch+yaml",
        status.to_string().as_bytes(),
        "?fieldManager=disruption&force=true",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let applied: Value = r.json();
    assert_eq!(applied["status"]["disruptionsAllowed"], 1, "{applied}");
    let entries = managers(&applied);
    let (_, _, fields) = entries
        .iter()
        .find(|(m, op, _)| m == "disruption" && op == "Apply")
        .unwrap_or_else(|| panic!("no Apply entry for the status writer: {entries:?}"));
    assert!(fields["f:status"]["f:conditions"]["k:{\"type\":\"DisruptionAllowed\"}"].is_object(), "{fields}");
    let entry = applied["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "disruption")
        .unwrap()
        .clone();
    assert_eq!(entry["subresource"], "status", "{entry}");
    // A later label change of the object keeps the status manager's entry.
    let labelled = s.request(
        "PATCH",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b",
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"metadata":{"labels":{"x":"y"}}}"#),
    );
    assert_eq!(labelled.status, 200, "{}", labelled.text());
    assert!(managers(&labelled.json()).iter().any(|(m, _, _)| m == "disruption"), "{}", labelled.text());
}
