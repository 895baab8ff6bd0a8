//! Deletion semantics and `--runtime-config` against the real binary.
//!
//! Owns: `kubectl delete` of an object whose finalizers hold it (it stays
//! with deletionTimestamp, `kubectl get` shows it) and the finalizers'
//! removal by `kubectl patch --type=json` and `--type=merge` in any order
//! (a watch sees MODIFIED then DELETED); no new finalizers while deleting;
//! `kubectl delete ns` with objects in it, a Terminating namespace refusing
//! creates (403 with kube's NamespaceTerminating cause); `kubectl delete pods -l` and deletecollection over HTTP
//! with label and field selectors; preconditions (409); propagationPolicy,
//! `--cascade` and `orphanDependents` finalizers; graceful pod deletion;
//! dry-run deletes; and a group disabled by `--runtime-config`.

mod common;

use common::watch::Watch;
use common::{assert_status, configmap, resource_version, Launch, Server};
use serde_json::{json, Value};

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn held_configmap(name: &str, finalizers: &[&str]) -> Value {
    let mut cm = configmap(name, &[("k", "v")]);
    cm["metadata"]["finalizers"] = json!(finalizers);
    cm
}

fn delete_with(s: &Server, path: &str, options: &Value) -> common::http::Response {
    s.send_json("DELETE", path, options)
}

#[test]
fn finalizers_hold_a_deleted_object_until_the_last_is_removed() {
    let s = Server::start();
    let created = s.post_json(CM, &held_configmap("held", &["example.com/one", "example.com/two"]));
    assert_eq!(created.status, 201, "{}", created.text());
    let rv = resource_version(&created.json());
    let mut watch =
        Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3Dheld"));

    // kubectl delete (without waiting: the finalizers hold the object).
    s.kubectl_ok(&["delete", "configmap", "held", "--wait=false"]);
    let got = s.kubectl_ok(&["get", "configmap", "held", "-o", "json"]).json();
    assert!(got["metadata"]["deletionTimestamp"].is_string(), "{got}");
    assert_eq!(got["metadata"]["deletionGracePeriodSeconds"], json!(0));
    let event = watch.next();
    assert_eq!(event["type"], "MODIFIED", "{event}");
    assert!(event["object"]["metadata"]["deletionTimestamp"].is_string(), "{event}");
    // A second delete changes nothing.
    let again = s.kubectl_ok(&["delete", "configmap", "held", "--wait=false"]);
    assert!(again.stdout.contains("held"), "{}", again.stdout);
    let still = s.kubectl_ok(&["get", "configmap", "held", "-o", "json"]).json();
    assert_eq!(still["metadata"]["deletionTimestamp"], got["metadata"]["deletionTimestamp"]);
    assert_eq!(resource_version(&still), resource_version(&got));

    // No new finalizers while deleting.
    let add = s.kubectl(&[
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/one","example.com/two","example.com/three"]}}"#,
    ]);
    assert!(!add.status.success(), "{}", add.stdout);
    assert!(add.stderr.contains("no new finalizers can be added if the object is being deleted"), "{}", add.stderr);

    // Remove the second finalizer first (order does not matter): it stays.
    s.kubectl_ok(&[
        "patch",
        "configmap",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers/1"}]"#,
    ]);
    let one_left = s.kubectl_ok(&["get", "configmap", "held", "-o", "json"]).json();
    assert_eq!(one_left["metadata"]["finalizers"], json!(["example.com/one"]));
    let event = watch.next();
    assert_eq!(
        (event["type"].as_str(), &event["object"]["metadata"]["finalizers"]),
        (Some("MODIFIED"), &json!(["example.com/one"]))
    );

    // The last one, by merge patch: the object is gone.
    s.kubectl_ok(&["patch", "configmap", "held", "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    let gone = s.kubectl(&["get", "configmap", "held"]);
    assert!(!gone.status.success() && gone.stderr.contains("NotFound"), "{}", gone.stderr);
    let event = watch.next();
    assert_eq!(event["type"], "DELETED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "held");

    // Removal by PUT works the same way.
    assert_eq!(s.post_json(CM, &held_configmap("put", &["example.com/x"])).status, 201);
    assert_eq!(s.delete(&format!("{CM}/put")).status, 200);
    let mut current = s.get_ok(&format!("{CM}/put"));
    current["metadata"]["finalizers"] = json!([]);
    let put = s.put_json(&format!("{CM}/put"), &current);
    assert_eq!(put.status, 200, "{}", put.text());
    assert_status(&s.get(&format!("{CM}/put")), 404, "NotFound");
}

#[test]
fn preconditions_dry_run_and_propagation_policy() {
    let s = Server::start();
    let created = s.post_json(CM, &configmap("pre", &[])).json();
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    let rv = resource_version(&created);
    let path = format!("{CM}/pre");

    let st = assert_status(&delete_with(&s, &path, &json!({"preconditions": {"uid": "not-it"}})), 409, "Conflict");
    assert_eq!(
        st["message"],
        format!("Operation cannot be fulfilled on configmaps \"pre\": Precondition failed: UID in precondition: not-it, UID in object meta: {uid}")
    );
    let st =
        assert_status(&delete_with(&s, &path, &json!({"preconditions": {"resourceVersion": "1"}})), 409, "Conflict");
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .contains("Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta"),
        "{st}"
    );

    // Dry-run: answered, nothing deleted.
    let dry = s.kubectl_ok(&["delete", "configmap", "pre", "--dry-run=server"]);
    assert!(dry.stdout.contains("server dry run"), "{}", dry.stdout);
    assert_eq!(resource_version(&s.get_ok(&path)), rv);

    // Matching preconditions delete.
    let ok = delete_with(&s, &path, &json!({"preconditions": {"uid": uid, "resourceVersion": rv}}));
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["status"], "Success");
    assert_status(&s.get(&path), 404, "NotFound");

    // Invalid option combinations are 422.
    assert_eq!(s.post_json(CM, &configmap("opts", &[])).status, 201);
    let st = assert_status(
        &delete_with(&s, &format!("{CM}/opts"), &json!({"propagationPolicy": "Orphan", "orphanDependents": true})),
        422,
        "Invalid",
    );
    assert!(
        st["message"].as_str().unwrap().contains("orphanDependents and deletionPropagation cannot be both set"),
        "{st}"
    );
    assert_status(&s.delete(&format!("{CM}/opts?propagationPolicy=Sideways")), 422, "Invalid");

    // Propagation policies set the garbage collector's finalizers; the
    // server's collector then orphans or deletes the dependents and removes
    // the finalizer (and with it the owner).
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let owned = |s: &Server, owner: &str, name: &str, finalizers: &[&str]| {
        let owner = s.get_ok(&format!("{deployments}/{owner}"));
        let mut cm = held_configmap(name, finalizers);
        cm["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true
        }]);
        assert_eq!(s.post_json(CM, &cm).status, 201);
    };
    s.kubectl_ok(&["create", "deployment", "web", "--image=nginx"]);
    owned(&s, "web", "web-dep", &[]);
    let web = s.delete(&format!("{deployments}/web?propagationPolicy=Orphan"));
    assert_eq!(web.status, 200, "{}", web.text());
    let web = web.json();
    assert_eq!(web["metadata"]["finalizers"], json!(["orphan"]), "{web}");
    assert!(web["metadata"]["deletionTimestamp"].is_string());
    s.kubectl_ok(&["wait", "--for=delete", "deployment/web", "--timeout=60s"]);
    let orphaned = s.get_ok(&format!("{CM}/web-dep"));
    assert!(orphaned["metadata"].get("ownerReferences").is_none(), "{orphaned}");

    s.kubectl_ok(&["create", "deployment", "fg", "--image=nginx"]);
    owned(&s, "fg", "fg-dep", &[]);
    owned(&s, "fg", "fg-held", &["example.com/hold"]);
    let fg = s.delete(&format!("{deployments}/fg?propagationPolicy=Foreground")).json();
    assert_eq!(fg["metadata"]["finalizers"], json!(["foregroundDeletion"]), "{fg}");
    s.kubectl_ok(&["wait", "--for=delete", "configmap/fg-dep", "--timeout=60s"]);
    s.kubectl_ok(&["wait", "--for=jsonpath={.metadata.deletionTimestamp}", "configmap/fg-held", "--timeout=60s"]);
    // The held dependent keeps its owner.
    assert_eq!(s.get_ok(&format!("{deployments}/fg"))["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    s.kubectl_ok(&["patch", "configmap", "fg-held", "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    s.kubectl_ok(&["wait", "--for=delete", "deployment/fg", "--timeout=60s"]);
    // kubectl's --cascade=foreground waits for the object and returns.
    s.kubectl_ok(&["create", "deployment", "kfg", "--image=nginx"]);
    owned(&s, "kfg", "kfg-dep", &[]);
    s.kubectl_ok(&["delete", "deployment", "kfg", "--cascade=foreground"]);
    assert_status(&s.get(&format!("{CM}/kfg-dep")), 404, "NotFound");
    s.kubectl_ok(&["create", "deployment", "korphan", "--image=nginx"]);
    s.kubectl_ok(&["delete", "deployment", "korphan", "--cascade=orphan"]);
    // The legacy option: orphanDependents=true orphans; false deletes dependents
    // in the background (the object goes at once).
    s.kubectl_ok(&["create", "deployment", "legacy", "--image=nginx"]);
    let legacy = s.delete(&format!("{deployments}/legacy?orphanDependents=true"));
    assert_eq!(legacy.status, 200, "{}", legacy.text());
    assert_eq!(legacy.json()["metadata"]["finalizers"], json!(["orphan"]));
    s.kubectl_ok(&["create", "deployment", "cascade", "--image=nginx"]);
    let cascade = s.delete(&format!("{deployments}/cascade?orphanDependents=false"));
    assert_eq!(cascade.status, 200, "{}", cascade.text());
    assert_eq!(cascade.json()["status"], "Success");
    // Background (kubectl's default) deletes at once.
    s.kubectl_ok(&["create", "deployment", "bg", "--image=nginx"]);
    s.kubectl_ok(&["delete", "deployment", "bg"]);
    assert_status(&s.get(&format!("{deployments}/bg")), 404, "NotFound");
}

fn pod(name: &str, labels: Value, node: Option<&str>) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    });
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

#[test]
fn delete_collections_by_label_and_field_and_graceful_pods() {
    let s = Server::start();
    let pods = "/api/v1/namespaces/default/pods";
    for (name, app) in [("x1", "x"), ("x2", "x"), ("y1", "y"), ("z1", "z"), ("z2", "z")] {
        assert_eq!(s.post_json(pods, &pod(name, json!({"app": app}), None)).status, 201);
    }
    // kubectl lists and deletes one by one.
    let out = s.kubectl_ok(&["delete", "pods", "-l", "app=x"]);
    assert!(out.stdout.contains("x1") && out.stdout.contains("x2"), "{}", out.stdout);
    // deletecollection: DELETE on the collection with a label selector.
    let dc = s.delete(&format!("{pods}?labelSelector=app%3Dz"));
    assert_eq!(dc.status, 200, "{}", dc.text());
    let list = dc.json();
    assert_eq!(list["kind"], "PodList");
    let mut names: Vec<&str> =
        list["items"].as_array().unwrap().iter().map(|p| p["metadata"]["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["z1", "z2"]);
    let left = s.get_ok(pods);
    let left: Vec<&str> =
        left["items"].as_array().unwrap().iter().map(|p| p["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(left, ["y1"]);
    // A field selector, and dry-run deleting nothing.
    let dry = s.delete(&format!("{pods}?fieldSelector=metadata.name%3Dy1&dryRun=All"));
    assert_eq!(dry.json()["items"].as_array().unwrap().len(), 1);
    assert_eq!(s.get_ok(pods)["items"].as_array().unwrap().len(), 1);
    assert_eq!(s.delete(&format!("{pods}?fieldSelector=metadata.name%3Dy1")).status, 200);
    assert!(s.get_ok(pods)["items"].as_array().unwrap().is_empty());
    // An unknown field is refused before anything is deleted.
    assert_status(&s.delete(&format!("{pods}?fieldSelector=spec.nope%3D1")), 400, "BadRequest");

    // deletecollection with propagationPolicy=Orphan: the collector orphans the dependents.
    let mut owner = configmap("owner", &[]);
    owner["metadata"]["labels"] = json!({"g": "1"});
    let owner = s.post_json(CM, &owner).json();
    let mut child = configmap("child", &[]);
    child["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]);
    assert_eq!(s.post_json(CM, &child).status, 201);
    let dc = s.delete(&format!("{CM}?labelSelector=g%3D1&propagationPolicy=Orphan"));
    assert_eq!(dc.json()["items"].as_array().unwrap().len(), 1, "{}", dc.text());
    s.kubectl_ok(&["wait", "--for=delete", "configmap/owner", "--timeout=60s"]);
    assert!(s.get_ok(&format!("{CM}/child"))["metadata"].get("ownerReferences").is_none());

    // A scheduled pod is deleted gracefully: it stays for its grace period.
    assert_eq!(s.post_json(pods, &pod("busy", json!({}), Some("node-1"))).status, 201);
    let marked = s.delete(&format!("{pods}/busy"));
    assert_eq!(marked.status, 200);
    let marked = marked.json();
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], json!(30), "{marked}");
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    // A forced delete (grace period 0) removes it.
    s.kubectl_ok(&["delete", "pod", "busy", "--grace-period=0", "--force"]);
    assert_status(&s.get(&format!("{pods}/busy")), 404, "NotFound");
}

#[test]
fn deleting_a_namespace_deletes_its_contents_then_the_namespace() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "demo"]);
    let ns = s.kubectl_ok(&["get", "namespace", "demo", "-o", "json"]).json();
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]), "{ns}");
    s.kubectl_ok(&["create", "configmap", "a", "-n", "demo", "--from-literal=k=v"]);
    s.kubectl_ok(&["create", "deployment", "web", "-n", "demo", "--image=nginx"]);
    s.kubectl_ok(&["create", "secret", "generic", "s", "-n", "demo", "--from-literal=k=v"]);
    // kubectl waits until the namespace is gone.
    s.kubectl_ok(&["delete", "namespace", "demo"]);
    assert_status(&s.get("/api/v1/namespaces/demo"), 404, "NotFound");
    for path in [
        "/api/v1/namespaces/demo/configmaps",
        "/apis/apps/v1/namespaces/demo/deployments",
        "/api/v1/namespaces/demo/secrets",
    ] {
        assert!(s.get_ok(path)["items"].as_array().unwrap().is_empty(), "{path}");
    }

    // A held object keeps the namespace Terminating; creates are refused.
    s.kubectl_ok(&["create", "namespace", "slow"]);
    let cms = "/api/v1/namespaces/slow/configmaps";
    assert_eq!(s.post_json(cms, &held_configmap("held", &["example.com/wait"])).status, 201);
    assert_eq!(s.post_json(cms, &configmap("plain", &[])).status, 201);
    s.kubectl_ok(&["delete", "namespace", "slow", "--wait=false"]);
    let terminating = s.get_ok("/api/v1/namespaces/slow");
    assert_eq!(terminating["status"]["phase"], "Terminating", "{terminating}");
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    let refused = assert_status(&s.post_json(cms, &configmap("new", &[])), 403, "Forbidden");
    assert_eq!(
        refused["message"],
        "configmaps \"new\" is forbidden: unable to create new content in namespace slow because it is being terminated"
    );
    // kube's namespace lifecycle admission names the cause, which clients
    // (the root-CA publisher, the CronJob controller) look for.
    assert_eq!(
        refused["details"],
        json!({"name": "new", "kind": "configmaps", "causes": [{"reason": "NamespaceTerminating",
               "message": "namespace slow is being terminated", "field": "metadata.namespace"}]})
    );
    let created = s.kubectl(&["create", "configmap", "new2", "-n", "slow"]);
    assert!(created.stderr.contains("because it is being terminated"), "{}", created.stderr);
    // The cleanup marks the held object deleted and removes the rest.
    s.kubectl_ok(&["wait", "--for=delete", "configmap/plain", "-n", "slow", "--timeout=60s"]);
    s.kubectl_ok(&[
        "wait",
        "--for=jsonpath={.metadata.deletionTimestamp}",
        "configmap/held",
        "-n",
        "slow",
        "--timeout=60s",
    ]);
    assert_eq!(s.get_ok("/api/v1/namespaces/slow")["status"]["phase"], "Terminating");
    // Its finalizer removed, the object goes, and then the namespace.
    s.kubectl_ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "slow",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    s.kubectl_ok(&["wait", "--for=delete", "namespace/slow", "--timeout=60s"]);
    assert_status(&s.get("/api/v1/namespaces/slow"), 404, "NotFound");
    // The protected namespaces stay.
    assert_status(&s.delete("/api/v1/namespaces/default"), 403, "Forbidden");

    // Namespaces have no deletecollection verb, as in kube-apiserver.
    assert_status(&s.delete("/api/v1/namespaces?labelSelector=team%3Dx"), 405, "MethodNotAllowed");
}

#[test]
fn a_namespace_left_terminating_finishes_after_a_restart() {
    let mut s = Server::start();
    s.kubectl_ok(&["create", "namespace", "later"]);
    let cms = "/api/v1/namespaces/later/configmaps";
    assert_eq!(s.post_json(cms, &held_configmap("held", &["example.com/wait"])).status, 201);
    s.kubectl_ok(&["delete", "namespace", "later", "--wait=false"]);
    s.kubectl_ok(&[
        "wait",
        "--for=jsonpath={.metadata.deletionTimestamp}",
        "configmap/held",
        "-n",
        "later",
        "--timeout=60s",
    ]);
    s.kill();
    s.restart();
    s.kubectl_ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "later",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    s.kubectl_ok(&["wait", "--for=delete", "namespace/later", "--timeout=60s"]);
}

#[test]
fn runtime_config_disables_a_group_version() {
    let s = Server::start_with(Launch {
        extra_args: vec!["--runtime-config".into(), "batch/v1=false,apps/v1/daemonsets=false".into()],
        ..Launch::default()
    });
    assert_status(&s.get("/apis/batch/v1"), 404, "NotFound");
    assert_status(&s.get("/apis/batch/v1/namespaces/default/jobs"), 404, "NotFound");
    assert_status(&s.get("/apis/apps/v1/namespaces/default/daemonsets"), 404, "NotFound");
    let groups = s.get_ok("/apis");
    let names: Vec<&str> = groups["groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"batch") && names.contains(&"apps"), "{names:?}");
    let apps = s.get_ok("/apis/apps/v1");
    let resources: Vec<&str> =
        apps["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(resources.contains(&"deployments") && !resources.contains(&"daemonsets"), "{resources:?}");
    let listed = s.kubectl_ok(&["api-resources", "-o", "name"]);
    assert!(!listed.stdout.lines().any(|l| l.starts_with("jobs")), "{}", listed.stdout);
    assert!(listed.stdout.lines().any(|l| l.starts_with("deployments")), "{}", listed.stdout);
    let get = s.kubectl(&["get", "jobs"]);
    assert!(!get.status.success(), "{}", get.stdout);
    s.kubectl_ok(&["get", "deployments"]);
}
