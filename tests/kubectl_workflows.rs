//! The day-to-day kubectl workflows beyond get/apply, driven by a real
//! kubectl against the real binary (issue 15 item 7):
//!
//! - `rollout history` / `undo` of a Deployment (ReplicaSets with
//!   `deployment.kubernetes.io/revision`), a StatefulSet and a DaemonSet
//!   (ControllerRevisions). Shardline runs no workload controllers
//!   (`--controllers`: garbage collector and namespace only), so the tests
//!   write the ReplicaSets, ControllerRevisions and status fields as
//!   kube-controller-manager writes them, and check what kubectl does with them;
//! - `rollout status` returning once the status says the rollout is done;
//! - `top pods` / `top nodes`: no metrics.k8s.io in discovery, so kubectl's
//!   `error: Metrics API not available`, as against a cluster without
//!   metrics-server;
//! - `logs`, `exec`, `port-forward` with no kubelet: kube-apiserver's answers
//!   (204 for an unscheduled pod's log, 400 `does not have a host assigned`,
//!   404 for a missing node, 500 with no reason for an unreachable kubelet);
//! - `auth can-i` for the verbs these commands need, and `auth whoami`.
//!
//! Every command's output is compared with what kube-apiserver and
//! kube-controller-manager would give for the same objects.

mod common;

use common::{assert_status, kubectl_path, wait_timeout, Launch, Server};
use serde_json::{json, Value};
use std::fs::{self, File};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a watching `kubectl rollout status` may take to notice.
const ROLLOUT_STATUS_TIMEOUT: Duration = Duration::from_secs(30);

fn create(s: &Server, object: &Value) {
    let path = s.dir.path().join(format!("object-{}.json", object["metadata"]["name"].as_str().unwrap_or("x")));
    fs::write(&path, serde_json::to_vec(object).unwrap()).unwrap();
    s.kubectl_ok(&["create", "-f", path.to_str().unwrap()]);
}

fn get(s: &Server, what: &str) -> Value {
    s.kubectl_ok(&["get", what, "-n", "demo", "-o", "json"]).json()
}

fn patch_status(s: &Server, what: &str, status: Value) {
    let body = json!({ "status": status }).to_string();
    s.kubectl_ok(&["patch", what, "-n", "demo", "--subresource=status", "--type=merge", "-p", &body]);
}

fn owner(object: &Value, kind: &str) -> Value {
    json!([{"apiVersion": "apps/v1", "kind": kind, "name": object["metadata"]["name"],
            "uid": object["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}])
}

/// The stored pod template of a workload with another image in its first container.
fn template_with_image(workload: &Value, image: &str) -> Value {
    let mut template = workload["spec"]["template"].clone();
    template["spec"]["containers"][0]["image"] = json!(image);
    template
}

/// A ReplicaSet as the deployment controller makes it for one revision:
/// named and labelled by the template's hash, the revision annotations,
/// owned by the Deployment.
fn replica_set(deployment: &Value, hash: &str, revision: u32, template: &Value, cause: &str) -> Value {
    let mut template = template.clone();
    template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
    let mut selector = deployment["spec"]["selector"].clone();
    selector["matchLabels"]["pod-template-hash"] = json!(hash);
    let name = deployment["metadata"]["name"].as_str().unwrap();
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{name}-{hash}"), "namespace": "demo",
            "labels": template["metadata"]["labels"],
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": "2",
                "deployment.kubernetes.io/max-replicas": "3",
                "deployment.kubernetes.io/revision": revision.to_string(),
                "kubernetes.io/change-cause": cause,
            },
            "ownerReferences": owner(deployment, "Deployment"),
        },
        "spec": {"replicas": 0, "selector": selector, "template": template},
    })
}

/// A ControllerRevision as the StatefulSet and DaemonSet controllers make
/// it: the template as a strategic-merge patch that replaces it, labelled
/// with the template's labels and `controller-revision-hash`, annotated with
/// the workload's annotations (here a change cause), owned by the workload.
fn controller_revision(workload: &Value, kind: &str, hash: &str, revision: u32, template: &Value) -> Value {
    let image = template["spec"]["containers"][0]["image"].as_str().unwrap_or("");
    let name = format!("{}-{hash}", workload["metadata"]["name"].as_str().unwrap());
    let mut labels = template["metadata"]["labels"].clone();
    labels["controller-revision-hash"] = json!(name);
    let mut patch = template.clone();
    patch["$patch"] = json!("replace");
    json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": "demo", "labels": labels, "ownerReferences": owner(workload, kind),
                     "annotations": {"kubernetes.io/change-cause": format!("image {image}")}},
        "data": {"spec": {"template": patch}},
        "revision": revision,
    })
}

/// The lines of a `rollout history` table after its header, as (revision, cause).
fn history_rows(stdout: &str) -> Vec<(String, String)> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("REVISION"));
    assert!(lines.next().is_some_and(|h| h.contains("CHANGE-CAUSE")), "no history table:\n{stdout}");
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (revision, cause) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (revision.to_string(), cause.trim().to_string())
        })
        .collect()
}

fn rows(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Starts `kubectl rollout status WHAT` (watching) and returns the child
/// and the paths of its output.
fn spawn_rollout_status(s: &Server, what: &str) -> (std::process::Child, std::path::PathBuf, std::path::PathBuf) {
    let out = s.dir.path().join(format!("rollout-status-{}.stdout", what.replace('/', "-")));
    let err = out.with_extension("stderr");
    let child = Command::new(kubectl_path())
        .arg("--kubeconfig")
        .arg(s.kubeconfig())
        .args(["rollout", "status", what, "-n", "demo", "--timeout=60s"])
        .env_remove("KUBECONFIG")
        .env("HOME", s.dir.path())
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .expect("spawn kubectl rollout status");
    (child, out, err)
}

/// Waits for a spawned `rollout status` to exit 0 and returns its stdout.
fn finished_rollout_status(mut child: std::process::Child, out: &std::path::Path, err: &std::path::Path) -> String {
    let status = wait_timeout(&mut child, ROLLOUT_STATUS_TIMEOUT);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = fs::read_to_string(out).unwrap_or_default();
    let stderr = fs::read_to_string(err).unwrap_or_default();
    let status = status.unwrap_or_else(|| {
        panic!("rollout status did not return within {ROLLOUT_STATUS_TIMEOUT:?}:\n{stdout}\n{stderr}")
    });
    assert!(status.success(), "rollout status failed ({status:?}):\n{stdout}\n{stderr}");
    stdout
}

fn start_with_demo_namespace() -> Server {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "demo"]);
    s
}

#[test]
fn deployment_rollout_history_undo_and_status() {
    let s = start_with_demo_namespace();
    s.kubectl_ok(&["create", "deployment", "web", "-n", "demo", "--image=nginx:1.27", "--replicas=2"]);

    // No ReplicaSets yet: kubectl finds no history.
    let none = s.kubectl_ok(&["rollout", "history", "deployment/web", "-n", "demo"]);
    assert!(none.stdout.contains("No rollout history found."), "{}", none.stdout);
    let undo = s.kubectl(&["rollout", "undo", "deployment/web", "-n", "demo"]);
    assert!(!undo.status.success());
    assert!(undo.stderr.contains("error: no rollout history found for deployment \"web\""), "{}", undo.stderr);

    // The deployment controller's work: two revisions (the current
    // template is revision 2), the Deployment annotated with its revision,
    // and a ReplicaSet with matching labels that another owner controls.
    let deployment = get(&s, "deployment/web");
    let current = deployment["spec"]["template"].clone();
    let old = template_with_image(&deployment, "nginx:1.26");
    create(&s, &replica_set(&deployment, "5d8f9c7b6", 1, &old, "image nginx:1.26"));
    create(&s, &replica_set(&deployment, "6c9b8d7f5", 2, &current, "image nginx:1.27"));
    let mut stranger = replica_set(&deployment, "7f6b5c4d3", 9, &current, "not web's");
    stranger["metadata"]["ownerReferences"][0]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    create(&s, &stranger);
    s.kubectl_ok(&["annotate", "deployment/web", "-n", "demo", "deployment.kubernetes.io/revision=2"]);

    let history = s.kubectl_ok(&["rollout", "history", "deployment/web", "-n", "demo"]);
    assert!(history.stdout.starts_with("deployment.apps/web"), "{}", history.stdout);
    assert_eq!(history_rows(&history.stdout), rows(&[("1", "image nginx:1.26"), ("2", "image nginx:1.27")]));
    let one = s.kubectl_ok(&["rollout", "history", "deployment/web", "-n", "demo", "--revision=1"]);
    assert!(one.stdout.contains("deployment.apps/web with revision #1"), "{}", one.stdout);
    assert!(one.stdout.contains("Image:\tnginx:1.26"), "{}", one.stdout);
    assert!(one.stdout.contains("pod-template-hash=5d8f9c7b6"), "{}", one.stdout);
    let missing = s.kubectl(&["rollout", "history", "deployment/web", "-n", "demo", "--revision=5"]);
    assert!(!missing.status.success());
    assert!(missing.stderr.contains("unable to find the specified revision"), "{}", missing.stderr);

    // A server-side dry run changes nothing.
    let generation = deployment["metadata"]["generation"].as_i64().unwrap() + 1; // the annotation bumped it
    let dry = s.kubectl_ok(&["rollout", "undo", "deployment/web", "-n", "demo", "--dry-run=server"]);
    assert_eq!(dry.stdout.trim(), "deployment.apps/web rolled back (server dry run)");
    let after_dry = get(&s, "deployment/web");
    assert_eq!(after_dry["spec"]["template"], current);
    assert_eq!(after_dry["metadata"]["generation"], generation);

    // undo: kubectl's JSON patch replaces the template with revision 1's
    // (without pod-template-hash) and the annotations with its own.
    let undo = s.kubectl_ok(&["rollout", "undo", "deployment/web", "-n", "demo"]);
    assert_eq!(undo.stdout.trim(), "deployment.apps/web rolled back");
    let rolled = get(&s, "deployment/web");
    assert_eq!(rolled["spec"]["template"], old, "the template is revision 1's");
    assert_eq!(rolled["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.26");
    assert_eq!(
        rolled["metadata"]["annotations"],
        json!({"deployment.kubernetes.io/revision": "2", "kubernetes.io/change-cause": "image nginx:1.26"})
    );
    assert_eq!(rolled["metadata"]["generation"], generation + 1, "a template change bumps the generation");
    // Revision 1 is what runs now: undoing again to it is skipped.
    let again = s.kubectl_ok(&["rollout", "undo", "deployment/web", "-n", "demo", "--to-revision=1"]);
    assert_eq!(
        again.stdout.trim(),
        "deployment.apps/web skipped rollback (current template already matches revision 1)"
    );
    let unknown = s.kubectl(&["rollout", "undo", "deployment/web", "-n", "demo", "--to-revision=7"]);
    assert!(!unknown.status.success());
    assert!(unknown.stderr.contains("unable to find specified revision 7 in history"), "{}", unknown.stderr);
    // A paused deployment is not rolled back.
    s.kubectl_ok(&["rollout", "pause", "deployment/web", "-n", "demo"]);
    let paused = s.kubectl(&["rollout", "undo", "deployment/web", "-n", "demo", "--to-revision=2"]);
    assert!(!paused.status.success());
    assert!(paused.stderr.contains("you cannot rollback a paused deployment"), "{}", paused.stderr);
    s.kubectl_ok(&["rollout", "resume", "deployment/web", "-n", "demo"]);
    // restart: kubectl patches a restartedAt annotation into the template.
    let before = get(&s, "deployment/web")["metadata"]["generation"].as_i64().unwrap();
    let restart = s.kubectl_ok(&["rollout", "restart", "deployment/web", "-n", "demo"]);
    assert_eq!(restart.stdout.trim(), "deployment.apps/web restarted");
    let restarted = get(&s, "deployment/web");
    assert!(
        restarted["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].is_string(),
        "{restarted}"
    );
    assert_eq!(restarted["metadata"]["generation"], before + 1);

    // rollout status reads the status the controller writes.
    let generation = get(&s, "deployment/web")["metadata"]["generation"].as_i64().unwrap();
    let waiting = s.kubectl_ok(&["rollout", "status", "deployment/web", "-n", "demo", "--watch=false"]);
    assert_eq!(waiting.stdout.trim(), "Waiting for deployment spec update to be observed...");
    patch_status(
        &s,
        "deployment/web",
        json!({"observedGeneration": generation, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2,
               "availableReplicas": 2, "unavailableReplicas": 1}),
    );
    let partial = s.kubectl_ok(&["rollout", "status", "deployment/web", "-n", "demo", "--watch=false"]);
    assert_eq!(
        partial.stdout.trim(),
        "Waiting for deployment \"web\" rollout to finish: 1 out of 2 new replicas have been updated..."
    );
    let (child, out, err) = spawn_rollout_status(&s, "deployment/web");
    std::thread::sleep(Duration::from_millis(500));
    patch_status(
        &s,
        "deployment/web",
        json!({"observedGeneration": generation, "replicas": 3, "updatedReplicas": 2, "readyReplicas": 2,
               "availableReplicas": 2}),
    );
    patch_status(
        &s,
        "deployment/web",
        json!({"observedGeneration": generation, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
               "availableReplicas": 2, "unavailableReplicas": null,
               "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                               "message": "Deployment has minimum availability."},
                              {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                               "message": "ReplicaSet \"web-5d8f9c7b6\" has successfully progressed."}]}),
    );
    let watched = finished_rollout_status(child, &out, &err);
    assert!(watched.trim_end().ends_with("deployment \"web\" successfully rolled out"), "{watched}");
    // A rollout past its deadline fails.
    patch_status(
        &s,
        "deployment/web",
        json!({"observedGeneration": generation, "updatedReplicas": 1,
               "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                               "message": "ReplicaSet \"web-5d8f9c7b6\" has timed out progressing."}]}),
    );
    let late = s.kubectl(&["rollout", "status", "deployment/web", "-n", "demo"]);
    assert!(!late.status.success());
    assert!(late.stderr.contains("error: deployment \"web\" exceeded its progress deadline"), "{}", late.stderr);
}

const WORKLOADS_YAML: &str = "\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: demo}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: 'postgres:17'}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: demo}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: 'agent:2'}]}
";

#[test]
fn statefulset_and_daemonset_rollout_history_undo_and_status() {
    let s = start_with_demo_namespace();
    let path = s.dir.path().join("workloads.yaml");
    fs::write(&path, WORKLOADS_YAML).unwrap();
    s.kubectl_ok(&["create", "-f", path.to_str().unwrap()]);

    for (what, kind, resource, old_image, new_image) in [
        ("statefulset/db", "StatefulSet", "statefulset.apps/db", "postgres:16", "postgres:17"),
        ("daemonset/agent", "DaemonSet", "daemonset.apps/agent", "agent:1", "agent:2"),
    ] {
        let workload = get(&s, what);
        let current = workload["spec"]["template"].clone();
        let old = template_with_image(&workload, old_image);
        let none = s.kubectl_ok(&["rollout", "history", what, "-n", "demo"]);
        assert!(none.stdout.contains("No rollout history found."), "{}", none.stdout);
        let undo = s.kubectl(&["rollout", "undo", what, "-n", "demo"]);
        assert!(!undo.status.success());
        assert!(undo.stderr.contains("no last revision to roll back to"), "{what}: {}", undo.stderr);

        create(&s, &controller_revision(&workload, kind, "7f6d8c9b5", 1, &old));
        create(&s, &controller_revision(&workload, kind, "5b9c7d8f6", 2, &current));
        // Same labels, another owner: not this workload's history.
        let mut stranger = controller_revision(&workload, kind, "6c5b4a3d2", 8, &current);
        stranger["metadata"]["ownerReferences"][0]["uid"] = json!("00000000-0000-0000-0000-000000000000");
        create(&s, &stranger);

        let history = s.kubectl_ok(&["rollout", "history", what, "-n", "demo"]);
        assert!(history.stdout.starts_with(resource), "{}", history.stdout);
        assert_eq!(
            history_rows(&history.stdout),
            rows(&[("1", &format!("image {old_image}")), ("2", &format!("image {new_image}"))]),
            "{what}"
        );
        let one = s.kubectl_ok(&["rollout", "history", what, "-n", "demo", "--revision=1"]);
        assert!(one.stdout.contains(&format!("{resource} with revision #1")), "{}", one.stdout);
        assert!(one.stdout.contains(&format!("Image:\t{old_image}")), "{}", one.stdout);

        let generation = workload["metadata"]["generation"].as_i64().unwrap();
        let undo = s.kubectl_ok(&["rollout", "undo", what, "-n", "demo"]);
        assert_eq!(undo.stdout.trim(), format!("{resource} rolled back"));
        let rolled = get(&s, what);
        assert_eq!(rolled["spec"]["template"], old, "{what}: the template is revision 1's, without $patch");
        assert_eq!(rolled["metadata"]["generation"], generation + 1);
        // The previous revision (1) is what runs now; kubectl names the
        // revision it was asked for (0: the previous one).
        let again = s.kubectl_ok(&["rollout", "undo", what, "-n", "demo"]);
        assert_eq!(
            again.stdout.trim(),
            format!("{resource} skipped rollback (current template already matches revision 0)")
        );
        let back = s.kubectl_ok(&["rollout", "undo", what, "-n", "demo", "--to-revision=2"]);
        assert_eq!(back.stdout.trim(), format!("{resource} rolled back"));
        assert_eq!(get(&s, what)["spec"]["template"]["spec"]["containers"][0]["image"], new_image);
        let unknown = s.kubectl(&["rollout", "undo", what, "-n", "demo", "--to-revision=8"]);
        assert!(!unknown.status.success());
        assert!(unknown.stderr.contains("unable to find specified revision 8 in history"), "{}", unknown.stderr);
    }

    // rollout status of a StatefulSet: ready replicas, then the revisions.
    let generation = get(&s, "statefulset/db")["metadata"]["generation"].as_i64().unwrap();
    let waiting = s.kubectl_ok(&["rollout", "status", "statefulset/db", "-n", "demo", "--watch=false"]);
    assert_eq!(waiting.stdout.trim(), "Waiting for statefulset spec update to be observed...");
    patch_status(
        &s,
        "statefulset/db",
        json!({"observedGeneration": generation, "replicas": 1, "readyReplicas": 0,
               "currentRevision": "db-7f6d8c9b5", "updateRevision": "db-5b9c7d8f6"}),
    );
    let pods = s.kubectl_ok(&["rollout", "status", "statefulset/db", "-n", "demo", "--watch=false"]);
    assert_eq!(pods.stdout.trim(), "Waiting for 1 pods to be ready...");
    patch_status(
        &s,
        "statefulset/db",
        json!({"observedGeneration": generation, "replicas": 1, "readyReplicas": 1, "updatedReplicas": 0,
               "currentRevision": "db-7f6d8c9b5", "updateRevision": "db-5b9c7d8f6"}),
    );
    let updating = s.kubectl_ok(&["rollout", "status", "statefulset/db", "-n", "demo", "--watch=false"]);
    assert_eq!(
        updating.stdout.trim(),
        "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated..."
    );
    let (child, out, err) = spawn_rollout_status(&s, "statefulset/db");
    std::thread::sleep(Duration::from_millis(500));
    patch_status(
        &s,
        "statefulset/db",
        json!({"observedGeneration": generation, "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
               "currentReplicas": 1, "availableReplicas": 1,
               "currentRevision": "db-5b9c7d8f6", "updateRevision": "db-5b9c7d8f6"}),
    );
    let watched = finished_rollout_status(child, &out, &err);
    // kube defaults a StatefulSet's rollingUpdate.partition to 0, so kubectl
    // reports a partitioned roll out.
    assert_eq!(
        get(&s, "statefulset/db")["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert!(
        watched.trim_end().ends_with("partitioned roll out complete: 1 new pods have been updated..."),
        "{watched}"
    );

    // rollout status of a DaemonSet: updated, then available pods.
    let generation = get(&s, "daemonset/agent")["metadata"]["generation"].as_i64().unwrap();
    patch_status(
        &s,
        "daemonset/agent",
        json!({"observedGeneration": generation, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
               "numberMisscheduled": 0, "numberReady": 1, "updatedNumberScheduled": 3, "numberAvailable": 1}),
    );
    let partial = s.kubectl_ok(&["rollout", "status", "daemonset/agent", "-n", "demo", "--watch=false"]);
    assert_eq!(
        partial.stdout.trim(),
        "Waiting for daemon set \"agent\" rollout to finish: 1 of 3 updated pods are available..."
    );
    let (child, out, err) = spawn_rollout_status(&s, "daemonset/agent");
    std::thread::sleep(Duration::from_millis(500));
    patch_status(
        &s,
        "daemonset/agent",
        json!({"observedGeneration": generation, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
               "numberMisscheduled": 0, "numberReady": 3, "updatedNumberScheduled": 3, "numberAvailable": 3}),
    );
    let watched = finished_rollout_status(child, &out, &err);
    assert!(watched.trim_end().ends_with("daemon set \"agent\" successfully rolled out"), "{watched}");
}

#[test]
fn top_says_the_metrics_api_is_not_available() {
    let s = start_with_demo_namespace();
    // Discovery, which kubectl decides from, has no metrics.k8s.io.
    let groups = s.get_ok("/apis");
    let names: Vec<&str> = groups["groups"].as_array().unwrap().iter().filter_map(|g| g["name"].as_str()).collect();
    assert!(names.contains(&"apps"), "{names:?}");
    assert!(!names.contains(&"metrics.k8s.io"), "{names:?}");
    assert_eq!(s.get("/apis/metrics.k8s.io/v1beta1").status, 404);
    for args in [&["top", "pods", "-n", "demo"][..], &["top", "nodes"], &["top", "pod", "web", "-n", "demo"]] {
        let out = s.kubectl(args);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(out.stderr.trim(), "error: Metrics API not available", "{args:?}");
        assert_eq!(out.stdout, "", "{args:?}");
    }
}

const PODS_YAML: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: demo}
spec:
  containers: [{name: c, image: busybox, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: m, namespace: demo}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers: [{name: a, image: busybox}, {name: b, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: demo}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox}]
";

#[test]
fn logs_exec_and_port_forward_answer_as_kube_without_a_kubelet() {
    let s = start_with_demo_namespace();
    let path = s.dir.path().join("pods.yaml");
    fs::write(&path, PODS_YAML).unwrap();
    s.kubectl_ok(&["create", "-f", path.to_str().unwrap()]);

    // An unscheduled pod: no log location, so 204 and nothing printed.
    let r = s.get("/api/v1/namespaces/demo/pods/p/log");
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(r.text(), "");
    let logs = s.kubectl_ok(&["logs", "p", "-n", "demo"]);
    assert_eq!((logs.stdout.as_str(), logs.stderr.as_str()), ("", ""));
    let logs = s.kubectl_ok(&["logs", "p", "-n", "demo", "--tail=5", "--timestamps"]);
    assert_eq!(logs.stdout, "");
    // The container is checked first (kubectl checks it too, from the pod it read).
    let bad = s.kubectl(&["logs", "p", "-n", "demo", "-c", "nope"]);
    assert!(!bad.status.success());
    assert_eq!(bad.stderr.trim(), "error: container nope is not valid for pod p out of: c");
    let status = assert_status(&s.get("/api/v1/namespaces/demo/pods/p/log?container=nope"), 400, "BadRequest");
    assert_eq!(status["message"], "container nope is not valid for pod p");
    let status = assert_status(&s.get("/api/v1/namespaces/demo/pods/m/log"), 400, "BadRequest");
    assert_eq!(status["message"], "a container name must be specified for pod m, choose one of: [setup a b]");
    assert_eq!(s.get("/api/v1/namespaces/demo/pods/m/log?container=setup").status, 204);
    // kubectl picks the first container of a multi-container pod itself.
    let logs = s.kubectl_ok(&["logs", "m", "-n", "demo"]);
    assert_eq!(logs.stdout, "");
    assert!(logs.stderr.contains("Defaulted container \"a\" out of: a, b, setup (init)"), "{}", logs.stderr);
    // PodLogOptions: numbers that do not parse (400), values kube refuses (422).
    let status = assert_status(&s.get("/api/v1/namespaces/demo/pods/p/log?tailLines=ten"), 400, "BadRequest");
    assert_eq!(status["message"], "strconv.ParseInt: parsing \"ten\": invalid syntax");
    let status = assert_status(&s.get("/api/v1/namespaces/demo/pods/p/log?tailLines=-1&limitBytes=0"), 422, "Invalid");
    assert_eq!(
        status["message"],
        "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, \
         limitBytes: Invalid value: 0: must be greater than 0]"
    );
    assert_eq!(status["details"]["kind"], "PodLogOptions");
    assert_eq!(status["details"]["causes"][0]["field"], "tailLines");
    let both = "/api/v1/namespaces/demo/pods/p/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z";
    let status = assert_status(&s.get(both), 422, "Invalid");
    assert_eq!(
        status["message"],
        "PodLogOptions \"p\" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
    );
    assert_eq!(status["details"]["causes"][0]["field"], "[]");
    assert_status(&s.get("/api/v1/namespaces/demo/pods/nope/log"), 404, "NotFound");

    // exec and port-forward of an unscheduled pod: 400 from the server.
    let status = assert_status(
        &s.request("POST", "/api/v1/namespaces/demo/pods/p/exec?command=ls&stdout=true", &[], None),
        400,
        "BadRequest",
    );
    assert_eq!(status["message"], "pod p does not have a host assigned");
    let exec = s.kubectl(&["exec", "p", "-n", "demo", "--", "ls"]);
    assert!(!exec.status.success());
    assert!(
        exec.stderr.contains("error: unable to upgrade connection: pod p does not have a host assigned"),
        "{}",
        exec.stderr
    );
    let attach = s.kubectl(&["attach", "p", "-n", "demo"]);
    assert!(!attach.status.success());
    assert!(attach.stderr.contains("pod p does not have a host assigned"), "{}", attach.stderr);
    let status = assert_status(
        &s.request("POST", "/api/v1/namespaces/demo/pods/p/portforward?ports=80", &[], None),
        400,
        "BadRequest",
    );
    assert_eq!(status["message"], "pod p does not have a host assigned");
    // kubectl port-forward refuses a pod that is not Running by itself; a
    // Running one reaches the server.
    let pending = s.kubectl(&["port-forward", "pod/p", "-n", "demo", "0:80"]);
    assert!(!pending.status.success());
    assert!(
        pending.stderr.contains("unable to forward port because pod is not running. Current status=Pending"),
        "{}",
        pending.stderr
    );
    patch_status(&s, "pod/p", json!({"phase": "Running"}));
    let running = s.kubectl(&["port-forward", "pod/p", "-n", "demo", "0:80"]);
    assert!(!running.status.success());
    assert!(running.stderr.contains("pod p does not have a host assigned"), "{}", running.stderr);

    // A pod bound to a node that does not exist: the node is looked up.
    let status = assert_status(&s.get("/api/v1/namespaces/demo/pods/q/log"), 404, "NotFound");
    assert_eq!(status["message"], "nodes \"n1\" not found");
    let logs = s.kubectl(&["logs", "q", "-n", "demo"]);
    assert!(!logs.status.success());
    assert_eq!(logs.stderr.trim(), "Error from server (NotFound): nodes \"n1\" not found");
    // A node without an address: kube's NoMatchError, 500 with no reason.
    create(&s, &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}));
    let r = s.get("/api/v1/namespaces/demo/pods/q/log");
    assert_eq!(r.status, 500, "{}", r.text());
    let status: Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(status["message"], "no preferred addresses found; known addresses: []");
    assert!(status.get("reason").is_none(), "{status}");
    let logs = s.kubectl(&["logs", "q", "-n", "demo"]);
    assert_eq!(logs.stderr.trim(), "Error from server: no preferred addresses found; known addresses: []");
    // A node with an address: the kubelet kube would ask, unreachable here.
    let node_status = json!({"addresses": [{"type": "InternalIP", "address": "10.0.0.7"},
                                           {"type": "Hostname", "address": "n1"}],
                             "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}});
    let body = json!({ "status": node_status }).to_string();
    s.kubectl_ok(&["patch", "node/n1", "--subresource=status", "--type=merge", "-p", &body]);
    let r = s.get("/api/v1/namespaces/demo/pods/q/log?tailLines=5&follow=true");
    assert_eq!(r.status, 500, "{}", r.text());
    let status: Value = serde_json::from_str(&r.text()).unwrap();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with("Get \"https://n1:10255/containerLogs/demo/q/c?follow=true&tailLines=5\": "),
        "{message}"
    );
    assert!(status.get("reason").is_none(), "{status}");
    let exec = s.kubectl(&["exec", "q", "-n", "demo", "--", "ls"]);
    assert!(!exec.status.success());
    assert!(exec.stderr.contains("error dialing backend: dial tcp n1:10255: "), "{}", exec.stderr);
}

const TOKENS: &str = "admin-token,admin,uid-admin,system:masters\n\
                      alice-token,alice,uid-alice,dev\n";

#[test]
fn auth_can_i_and_whoami_for_the_workflow_verbs() {
    // kubectl sends bearer tokens only over TLS.
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let tokens = dir.path().join("tokens.csv");
    File::create(&tokens).unwrap().write_all(TOKENS.as_bytes()).unwrap();
    let mut args = vec!["--token-auth-file".to_string(), tokens.display().to_string()];
    args.extend(["--authorization-mode".to_string(), "RBAC".to_string()]);
    args.extend(pki.server_args());
    let s = Server::start_with(Launch {
        extra_args: args,
        readyz_token: Some("admin-token".into()),
        tls_client: Some((pki.client_config(None), pki.ca_file.clone())),
        ..Launch::default()
    });
    let admin = |args: &[&str]| {
        let out = s.kubectl_as("admin", "admin-token", args);
        assert!(out.status.success(), "{args:?}: {}", out.stderr);
    };
    admin(&["create", "namespace", "demo"]);
    admin(&["run", "p", "-n", "demo", "--image=busybox"]);
    // alice may read pods and their logs, roll deployments back (patch) and
    // read their history, and open exec only with `get` (a websocket's verb).
    admin(&["create", "role", "viewer", "-n", "demo", "--verb=get,list,watch", "--resource=pods,pods/log"]);
    admin(&["create", "role", "roller", "-n", "demo", "--verb=get,list,patch", "--resource=deployments,replicasets"]);
    admin(&["create", "role", "exec-get", "-n", "demo", "--verb=get", "--resource=pods/exec"]);
    for role in ["viewer", "roller", "exec-get"] {
        admin(&[
            "create",
            "rolebinding",
            &format!("alice-{role}"),
            "-n",
            "demo",
            &format!("--role={role}"),
            "--user=alice",
        ]);
    }
    let can_i = |args: &[&str]| {
        let mut all = vec!["auth", "can-i"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-n", "demo"]);
        let out = s.kubectl_as("alice", "alice-token", &all);
        let answer = out.stdout.trim().to_string();
        assert_eq!(out.status.success(), answer == "yes", "{args:?}: exit status follows the answer: {out:?}");
        answer
    };
    assert_eq!(can_i(&["get", "pods", "--subresource=log"]), "yes");
    assert_eq!(can_i(&["get", "pods/log"]), "yes");
    assert_eq!(can_i(&["list", "pods"]), "yes");
    assert_eq!(can_i(&["patch", "deployments.apps"]), "yes");
    assert_eq!(can_i(&["list", "replicasets.apps"]), "yes");
    assert_eq!(can_i(&["list", "controllerrevisions.apps"]), "no");
    assert_eq!(can_i(&["delete", "pods"]), "no");
    assert_eq!(can_i(&["create", "pods", "--subresource=exec"]), "no");
    assert_eq!(can_i(&["get", "pods", "--subresource=exec"]), "yes");
    assert_eq!(can_i(&["create", "pods", "--subresource=portforward"]), "no");
    assert_eq!(can_i(&["list", "pods", "--all-namespaces"]), "no");
    let who = s.kubectl_as("alice", "alice-token", &["auth", "whoami"]);
    assert!(who.status.success(), "{}", who.stderr);
    assert!(who.stdout.lines().any(|l| l.split_whitespace().eq(["Username", "alice"])), "{}", who.stdout);
    assert!(who.stdout.lines().any(|l| l.split_whitespace().eq(["UID", "uid-alice"])), "{}", who.stdout);
    assert!(
        who.stdout.lines().any(|l| l.split_whitespace().eq(["Groups", "[dev", "system:authenticated]"])),
        "{}",
        who.stdout
    );

    // The answers hold for the requests: logs allowed (204, unscheduled pod);
    // exec's websocket GET also needs `create` (kube's
    // AuthorizePodWebsocketUpgradeCreatePermission), which alice lacks.
    let request = |method: &str, path: &str, token: &str| {
        let auth = format!("Bearer {token}");
        let config = pki.client_config(None);
        common::tls::request(s.addr, &config, method, path, &[("Authorization", &auth)], b"").unwrap()
    };
    assert_eq!(request("GET", "/api/v1/namespaces/demo/pods/p/log", "alice-token").0, 204);
    let (code, body) = request("GET", "/api/v1/namespaces/demo/pods/p/exec?command=ls&stdout=1", "alice-token");
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert!(status["message"].as_str().unwrap().starts_with("pods \"p\" is forbidden"), "{status}");
    let (code, body) = request("POST", "/api/v1/namespaces/demo/pods/p/exec?command=ls&stdout=1", "alice-token");
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        status["message"],
        "pods \"p\" is forbidden: User \"alice\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"demo\""
    );
    let exec = s.kubectl_as("alice", "alice-token", &["exec", "p", "-n", "demo", "--", "ls"]);
    assert!(!exec.status.success());
    assert!(exec.stderr.contains("forbidden"), "{}", exec.stderr);
    // With `create` too, the request reaches the pod: no node, 400.
    admin(&["create", "role", "exec-create", "-n", "demo", "--verb=create", "--resource=pods/exec"]);
    admin(&["create", "rolebinding", "alice-exec-create", "-n", "demo", "--role=exec-create", "--user=alice"]);
    assert_eq!(can_i(&["create", "pods", "--subresource=exec"]), "yes");
    let (code, body) = request("GET", "/api/v1/namespaces/demo/pods/p/exec?command=ls&stdout=1", "alice-token");
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("pod p does not have a host assigned"), "{body}");
}
