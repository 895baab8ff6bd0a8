//! Shardline's built-in controllers against the real binary, and
//! `--controllers`.
//!
//! Owns: the garbage collector's order in a foreground deletion (a
//! Deployment -> ReplicaSets -> Pods chain built by the test as owner
//! references with blockOwnerDeletion: every Pod DELETED before its
//! ReplicaSet, each ReplicaSet itself deleted in the foreground, the
//! ReplicaSets before the Deployment, as watch events show), orphan,
//! background collection of dependents whose owners are gone (a dependent
//! with a remaining owner keeps it, one whose owner never existed goes);
//! a foreground deletion interrupted by a restart finishes after it;
//! with `--controllers=-*` kube-apiserver's behaviour alone (a foreground
//! delete leaves the owner with its finalizer, dependents stay, a deleted
//! namespace stays Terminating with its `kubernetes` finalizer, creates
//! in it get 403 NamespaceTerminating); an unknown controller name stops the
//! server at start-up.

mod common;

use common::watch::Watch;
use common::{assert_status, configmap, resource_version, shardline_bin, wait_timeout, Launch, Server};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICASETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const PODS: &str = "/api/v1/namespaces/default/pods";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn reference(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": block
    })
}

fn template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

fn create(s: &Server, path: &str, body: Value) -> Value {
    let created = s.post_json(path, &body);
    assert_eq!(created.status, 201, "{path}: {}", created.text());
    created.json()
}

fn deployment(s: &Server, name: &str) -> Value {
    create(
        s,
        DEPLOYMENTS,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
               "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name)}}),
    )
}

fn replicaset(s: &Server, name: &str, owner: &Value, app: &str) -> Value {
    create(
        s,
        REPLICASETS,
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": name, "ownerReferences": [reference(owner, true)]},
               "spec": {"selector": {"matchLabels": {"app": app}}, "template": template(app)}}),
    )
}

fn pod(s: &Server, name: &str, owner: &Value) -> Value {
    create(
        s,
        PODS,
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "ownerReferences": [reference(owner, true)]},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
}

/// One watch event: (type, name, resourceVersion, object).
type Event = (String, String, u64, Value);

/// Reads `watch` until `names` have all been DELETED; returns every event read.
fn until_deleted(watch: &mut Watch, names: &[&str]) -> Vec<Event> {
    let mut events = Vec::new();
    let mut left: Vec<&str> = names.to_vec();
    while !left.is_empty() {
        let event = watch.next();
        let object = event["object"].clone();
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let rv: u64 = resource_version(&object).parse().unwrap();
        let kind = event["type"].as_str().unwrap().to_string();
        if kind == "DELETED" {
            left.retain(|n| *n != name);
        }
        events.push((kind, name, rv, object));
    }
    events
}

fn deleted_at(events: &[Event]) -> HashMap<String, u64> {
    events.iter().filter(|e| e.0 == "DELETED").map(|e| (e.1.clone(), e.2)).collect()
}

/// The revision at which `name` was first seen deleting its dependents.
fn foreground_at(events: &[Event], name: &str) -> u64 {
    events
        .iter()
        .find(|e| {
            e.1 == name
                && e.0 == "MODIFIED"
                && e.3["metadata"]["deletionTimestamp"].is_string()
                && e.3["metadata"]["finalizers"] == json!(["foregroundDeletion"])
        })
        .unwrap_or_else(|| panic!("{name} was never deleting its dependents: {events:?}"))
        .2
}

#[test]
fn foreground_deletion_removes_dependents_before_their_owners() {
    let s = Server::start();
    let rv = resource_version(&s.get_ok(DEPLOYMENTS));
    let web = deployment(&s, "web");
    let rs = [replicaset(&s, "web-a", &web, "web-a"), replicaset(&s, "web-b", &web, "web-b")];
    let mut pods_of: Vec<(String, Vec<String>)> = Vec::new();
    for set in &rs {
        let set_name = set["metadata"]["name"].as_str().unwrap().to_string();
        let names: Vec<String> = (0..3).map(|i| format!("{set_name}-{i}")).collect();
        for name in &names {
            pod(&s, name, set);
        }
        pods_of.push((set_name, names));
    }
    // A dependent that does not block its owner is deleted too.
    let mut loose = configmap("web-loose", &[]);
    loose["metadata"]["ownerReferences"] = json!([reference(&web, false)]);
    create(&s, CMS, loose);

    let watch = |path: &str| Watch::open(&s, &format!("{path}?watch=true&resourceVersion={rv}"));
    let (mut deployments, mut sets, mut pods) = (watch(DEPLOYMENTS), watch(REPLICASETS), watch(PODS));
    let deleting = s.delete(&format!("{DEPLOYMENTS}/web?propagationPolicy=Foreground"));
    assert_eq!(deleting.status, 200, "{}", deleting.text());
    assert_eq!(deleting.json()["metadata"]["finalizers"], json!(["foregroundDeletion"]));

    let deployment_events = until_deleted(&mut deployments, &["web"]);
    let set_events = until_deleted(&mut sets, &["web-a", "web-b"]);
    let all_pods: Vec<&str> = pods_of.iter().flat_map(|(_, p)| p.iter().map(String::as_str)).collect();
    let pod_events = until_deleted(&mut pods, &all_pods);

    let web_deleted = deleted_at(&deployment_events)["web"];
    let web_foreground = foreground_at(&deployment_events, "web");
    let sets_deleted = deleted_at(&set_events);
    let pods_deleted = deleted_at(&pod_events);
    for (set, names) in &pods_of {
        // Each ReplicaSet has dependents: the collector deletes it in the foreground.
        let set_foreground = foreground_at(&set_events, set);
        assert!(web_foreground < set_foreground, "{set} deleted before its owner was: {set_events:?}");
        for name in names {
            let at = pods_deleted[name];
            assert!(set_foreground < at && at < sets_deleted[set], "pod {name} at {at}, {set}: {set_events:?}");
        }
        assert!(sets_deleted[set] < web_deleted, "{set} at {}, web at {web_deleted}", sets_deleted[set]);
    }
    s.kubectl_ok(&["wait", "--for=delete", "configmap/web-loose", "--timeout=60s"]);
}

#[test]
fn orphan_removes_the_owner_reference_and_keeps_the_dependents() {
    let s = Server::start();
    let web = deployment(&s, "web");
    let set = replicaset(&s, "web-a", &web, "web-a");
    pod(&s, "web-a-0", &set);
    let orphaning = s.delete(&format!("{DEPLOYMENTS}/web?propagationPolicy=Orphan"));
    assert_eq!(orphaning.json()["metadata"]["finalizers"], json!(["orphan"]));
    s.kubectl_ok(&["wait", "--for=delete", "deployment/web", "--timeout=60s"]);
    let kept = s.get_ok(&format!("{REPLICASETS}/web-a"));
    assert!(kept["metadata"].get("ownerReferences").is_none(), "{kept}");
    assert!(kept["metadata"].get("deletionTimestamp").is_none(), "{kept}");
    // The ReplicaSet's own dependents keep their reference to it.
    let pod = s.get_ok(&format!("{PODS}/web-a-0"));
    assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], set["metadata"]["uid"], "{pod}");
}

#[test]
fn background_deletion_collects_dependents_whose_owners_are_gone() {
    let s = Server::start();
    let web = deployment(&s, "web");
    let set = replicaset(&s, "web-a", &web, "web-a");
    for i in 0..2 {
        pod(&s, &format!("web-a-{i}"), &set);
    }
    // Two owners, one stays: the dependent stays, without the gone one.
    let keeper = create(&s, CMS, configmap("keeper", &[]));
    let mut shared = configmap("shared", &[]);
    shared["metadata"]["ownerReferences"] = json!([reference(&web, true), {
        "apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": keeper["metadata"]["uid"]
    }]);
    create(&s, CMS, shared);

    // kubectl's default (Background): the owner goes at once, then its dependents.
    s.kubectl_ok(&["delete", "deployment", "web"]);
    assert_status(&s.get(&format!("{DEPLOYMENTS}/web")), 404, "NotFound");
    for object in ["replicaset/web-a", "pod/web-a-0", "pod/web-a-1"] {
        s.kubectl_ok(&["wait", "--for=delete", object, "--timeout=60s"]);
    }
    s.kubectl_ok(&["wait", "--for=jsonpath={.metadata.ownerReferences[0].name}=keeper", "configmap/shared"]);
    let shared = s.get_ok(&format!("{CMS}/shared"));
    assert_eq!(shared["metadata"]["ownerReferences"].as_array().map(Vec::len), Some(1), "{shared}");

    // A reference to an owner that never existed: the dependent is collected.
    let mut stray = configmap("stray", &[]);
    stray["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "nowhere", "uid": "no-such-uid"}]);
    create(&s, CMS, stray);
    s.kubectl_ok(&["wait", "--for=delete", "configmap/stray", "--timeout=60s"]);
    // A reference to a kind that is not served is left alone, as kube's collector leaves it.
    let mut unknown = configmap("unknown-owner", &[]);
    unknown["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "example.com/v1", "kind": "Nothing", "name": "x", "uid": "x-uid"}]);
    create(&s, CMS, unknown);
    // Collected objects after it prove the collector went past it.
    let mut later = configmap("later-stray", &[]);
    later["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "nowhere", "uid": "no-such-uid"}]);
    create(&s, CMS, later);
    s.kubectl_ok(&["wait", "--for=delete", "configmap/later-stray", "--timeout=60s"]);
    assert_eq!(s.get(&format!("{CMS}/unknown-owner")).status, 200);
}

#[test]
fn a_foreground_deletion_left_by_a_restart_finishes() {
    let mut s = Server::start();
    let web = deployment(&s, "web");
    let set = replicaset(&s, "web-a", &web, "web-a");
    // The ReplicaSet is held by a finalizer: the deletion waits for it.
    s.kubectl_ok(&[
        "patch",
        "replicaset",
        "web-a",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    let deleting = s.delete(&format!("{DEPLOYMENTS}/web?propagationPolicy=Foreground"));
    assert_eq!(deleting.status, 200, "{}", deleting.text());
    s.kubectl_ok(&["wait", "--for=jsonpath={.metadata.deletionTimestamp}", "replicaset/web-a", "--timeout=60s"]);
    s.kill();
    s.restart();
    let web = s.get_ok(&format!("{DEPLOYMENTS}/web"));
    assert_eq!(web["metadata"]["finalizers"], json!(["foregroundDeletion"]), "{web}");
    // Its dependent gone, the owner follows: the collection resumed.
    s.kubectl_ok(&["patch", "replicaset", "web-a", "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    s.kubectl_ok(&["wait", "--for=delete", "deployment/web", "--timeout=60s"]);
    assert_eq!(set["metadata"]["ownerReferences"][0]["uid"], web["metadata"]["uid"]);
}

#[test]
fn with_controllers_off_the_work_is_left_to_a_controller_manager() {
    let s = Server::start_with(Launch { extra_args: vec!["--controllers=-*".into()], ..Launch::default() });
    assert!(s.stderr().contains("controllers: none (--controllers)"), "{}", s.stderr());

    // Foreground: the owner stays with its finalizer, as with kube-apiserver alone.
    let web = deployment(&s, "web");
    replicaset(&s, "web-a", &web, "web-a");
    let deleting = s.delete(&format!("{DEPLOYMENTS}/web?propagationPolicy=Foreground"));
    assert_eq!(deleting.json()["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    // Background: the owner goes, its dependents stay.
    let api = deployment(&s, "api");
    replicaset(&s, "api-a", &api, "api-a");
    s.kubectl_ok(&["delete", "deployment", "api"]);
    // Namespace: Terminating with its finalizer, content in place.
    s.kubectl_ok(&["create", "namespace", "held"]);
    let held_cms = "/api/v1/namespaces/held/configmaps";
    create(&s, held_cms, configmap("inside", &[]));
    s.kubectl_ok(&["delete", "namespace", "held", "--wait=false"]);
    let refused = assert_status(&s.post_json(held_cms, &configmap("new", &[])), 403, "Forbidden");
    assert_eq!(
        refused["details"]["causes"],
        json!([{"reason": "NamespaceTerminating", "message": "namespace held is being terminated",
                "field": "metadata.namespace"}])
    );

    // No controller runs (the start-up line says so); give one that wrongly
    // ran the time it takes to act, then look.
    std::thread::sleep(Duration::from_secs(2));
    let web = s.get_ok(&format!("{DEPLOYMENTS}/web"));
    assert!(web["metadata"]["deletionTimestamp"].is_string(), "{web}");
    assert_eq!(web["metadata"]["finalizers"], json!(["foregroundDeletion"]), "{web}");
    let web_a = s.get_ok(&format!("{REPLICASETS}/web-a"));
    assert!(web_a["metadata"].get("deletionTimestamp").is_none(), "{web_a}");
    let api_a = s.get_ok(&format!("{REPLICASETS}/api-a"));
    assert_eq!(api_a["metadata"]["ownerReferences"][0]["name"], "api", "{api_a}");
    let ns = s.get_ok("/api/v1/namespaces/held");
    assert_eq!(ns["status"]["phase"], "Terminating", "{ns}");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]), "{ns}");
    assert_eq!(s.get(&format!("{held_cms}/inside")).status, 200);

    // What kube's garbage collector would do: delete the dependent, then
    // remove the finalizer; the owner goes with it.
    s.kubectl_ok(&["delete", "replicaset", "web-a"]);
    s.kubectl_ok(&["patch", "deployment", "web", "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    assert_status(&s.get(&format!("{DEPLOYMENTS}/web")), 404, "NotFound");
}

#[test]
fn unknown_controller_names_stop_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new(shardline_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .arg("--controllers=*,-gc")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn shardline");
    let status = wait_timeout(&mut child, Duration::from_secs(20));
    if status.is_none() {
        // SAFETY: kill(2) on our own unreaped child's PID.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGKILL);
        }
        let _ = child.wait();
    }
    let status = status.expect("shardline with --controllers=*,-gc kept running");
    assert!(!status.success());
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    assert!(stderr.contains(r#"--controllers: "-gc" is not in the list of known controllers"#), "{stderr}");
}
