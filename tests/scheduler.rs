//! A scheduler-shaped client against the real binary: it watches the
//! unscheduled pods (`fieldSelector=spec.nodeName=`), binds them through
//! `pods/NAME/binding` and the legacy `bindings` collection, and sees the
//! bound pods arrive in a node's watch (`spec.nodeName=node-1`) while the
//! unscheduled watch gets them DELETED; a second bind is 409 with kube's
//! message. Then `kubectl drain`'s call: an eviction that a
//! PodDisruptionBudget forbids (429, kube's message and cause, the pod
//! kept) and one it allows (201, the budget decremented and the pod
//! recorded in `disruptedPods`).

mod common;

use common::watch::Watch;
use common::{assert_status, Server};
use serde_json::{json, Value};

const NS: &str = "sched";

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
}

fn created(s: &Server, path: &str, body: &Value) -> Value {
    let r = s.post_json(path, body);
    assert_eq!(r.status, 201, "POST {path}: {}", r.text());
    r.json()
}

fn merge_patch(s: &Server, path: &str, body: &Value) -> Value {
    let bytes = serde_json::to_vec(body).unwrap();
    let r = s.request(
        "PATCH",
        path,
        &[("Content-Type", "application/merge-patch+json"), ("Accept", "application/json")],
        Some(&bytes),
    );
    assert_eq!(r.status, 200, "PATCH {path}: {}", r.text());
    r.json()
}

fn binding(pod: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "annotations": {"scheduled-by": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}

fn eviction(pod: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": NS}})
}

/// The next event of a watch as (type, name, spec.nodeName).
fn next(w: &mut Watch) -> (String, String, String) {
    let e = w.next();
    (
        e["type"].as_str().unwrap().to_string(),
        e["object"]["metadata"]["name"].as_str().unwrap().to_string(),
        e["object"]["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn a_scheduler_binds_pods_and_evictions_respect_disruption_budgets() {
    let s = Server::start();
    created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": NS}}));
    created(&s, "/api/v1/nodes", &json!({"metadata": {"name": "node-1"}}));

    // Discovery lists the scheduler's subresources with kube's verbs and kinds.
    let core = s.get_ok("/api/v1");
    let entry = |name: &str| {
        core["resources"].as_array().unwrap().iter().find(|r| r["name"] == name).cloned().unwrap_or(Value::Null)
    };
    assert_eq!(entry("pods/binding")["verbs"], json!(["create"]));
    assert_eq!(entry("pods/binding")["kind"], "Binding");
    assert_eq!(
        (entry("pods/eviction")["group"].clone(), entry("pods/eviction")["kind"].clone()),
        (json!("policy"), json!("Eviction"))
    );
    assert_eq!(entry("bindings")["verbs"], json!(["create"]));

    let mut unscheduled =
        Watch::open(&s, &format!("/api/v1/namespaces/{NS}/pods?watch=1&fieldSelector=spec.nodeName%3D"));
    let mut on_node = Watch::open(&s, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-1");
    for name in ["p0", "p1", "p2"] {
        created(&s, &format!("/api/v1/namespaces/{NS}/pods"), &pod(name));
        assert_eq!(next(&mut unscheduled), ("ADDED".into(), name.into(), String::new()));
    }

    // Bind two through pods/NAME/binding, one through the bindings collection.
    for name in ["p0", "p1"] {
        let status = created(&s, &format!("/api/v1/namespaces/{NS}/pods/{name}/binding"), &binding(name, "node-1"));
        assert_eq!((status["kind"].as_str(), status["status"].as_str()), (Some("Status"), Some("Success")));
    }
    created(&s, &format!("/api/v1/namespaces/{NS}/bindings"), &binding("p2", "node-1"));
    for name in ["p0", "p1", "p2"] {
        // Leaving the unscheduled selection is a DELETED there, an ADDED on the node.
        let (kind, got, _) = next(&mut unscheduled);
        assert_eq!((kind.as_str(), got.as_str()), ("DELETED", name));
        assert_eq!(next(&mut on_node), ("ADDED".into(), name.into(), "node-1".into()));
    }
    let p0 = s.get_ok(&format!("/api/v1/namespaces/{NS}/pods/p0"));
    assert_eq!(p0["spec"]["nodeName"], "node-1");
    assert_eq!(p0["metadata"]["annotations"]["scheduled-by"], "test", "the Binding's annotations are copied");
    let scheduled =
        p0["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled").unwrap();
    assert_eq!(scheduled["status"], "True");
    assert!(scheduled["lastTransitionTime"].is_string());

    // A second bind, a mismatched name, a missing pod, no target.
    let again = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p0/binding"), &binding("p0", "node-2"));
    let status = assert_status(&again, 409, "Conflict");
    assert_eq!(
        status["message"],
        "Operation cannot be fulfilled on pods/binding \"p0\": pod p0 is already assigned to node \"node-1\""
    );
    assert_eq!(status["details"], json!({"name": "p0", "kind": "pods/binding"}));
    let mismatch = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p1/binding"), &binding("p0", "node-1"));
    assert_eq!(
        assert_status(&mismatch, 400, "BadRequest")["message"],
        "name in URL does not match name in Binding object"
    );
    let missing = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/ghost/binding"), &binding("ghost", "node-1"));
    assert_eq!(assert_status(&missing, 404, "NotFound")["message"], "pods \"ghost\" not found");
    created(&s, &format!("/api/v1/namespaces/{NS}/pods"), &pod("p3"));
    let no_target = s.post_json(
        &format!("/api/v1/namespaces/{NS}/pods/p3/binding"),
        &json!({"metadata": {"name": "p3"}, "target": {}}),
    );
    assert_status(&no_target, 422, "Invalid");
    let get_binding = s.get(&format!("/api/v1/namespaces/{NS}/pods/p0/binding"));
    assert_status(&get_binding, 405, "MethodNotAllowed");

    // The pods run and are ready; a budget covers them.
    for name in ["p0", "p1", "p2"] {
        merge_patch(
            &s,
            &format!("/api/v1/namespaces/{NS}/pods/{name}/status"),
            &json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        );
    }
    let budget = created(
        &s,
        &format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"),
        &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
            "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    let generation = budget["metadata"]["generation"].as_i64().unwrap_or(1);
    let budget_status = |allowed: i64| {
        json!({"status": {"observedGeneration": generation, "disruptionsAllowed": allowed,
            "currentHealthy": 3, "desiredHealthy": 3 - allowed, "expectedPods": 3}})
    };
    let budget_path = format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web");
    merge_patch(&s, &format!("{budget_path}/status"), &budget_status(0));

    // The budget forbids it: 429, kube's message and cause; the pod stays.
    let refused = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p0/eviction"), &eviction("p0"));
    let status = assert_status(&refused, 429, "TooManyRequests");
    assert_eq!(status["message"], "Cannot evict pod as it would violate the pod's disruption budget.");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": "The disruption budget web needs 3 healthy pods and has 3 currently"}])
    );
    assert!(s.get_ok(&format!("/api/v1/namespaces/{NS}/pods/p0"))["metadata"]["deletionTimestamp"].is_null());

    // The budget allows one: 201 Success, the budget spent, the pod deleted.
    merge_patch(&s, &format!("{budget_path}/status"), &budget_status(1));
    let allowed = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p0/eviction"), &eviction("p0"));
    assert_eq!(allowed.status, 201, "{}", allowed.text());
    assert_eq!(allowed.json()["status"], "Success");
    let after = s.get_ok(&budget_path);
    assert_eq!(after["status"]["disruptionsAllowed"], 0);
    assert!(after["status"]["disruptedPods"]["p0"].is_string(), "{after}");
    let p0 = s.get(&format!("/api/v1/namespaces/{NS}/pods/p0"));
    assert!(
        p0.status == 404 || p0.json()["metadata"]["deletionTimestamp"].is_string(),
        "the evicted pod is deleted or being deleted: {}",
        p0.text()
    );
    // The budget is spent: the next eviction is refused again.
    let next_refused = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p1/eviction"), &eviction("p1"));
    assert_status(&next_refused, 429, "TooManyRequests");
    // A pending pod (p3, never bound) needs no budget.
    let pending = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p3/eviction"), &eviction("p3"));
    assert_eq!(pending.status, 201, "{}", pending.text());
    assert_eq!(s.get(&format!("/api/v1/namespaces/{NS}/pods/p3")).status, 404);
    // An Eviction naming another pod is refused.
    let wrong = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/p1/eviction"), &eviction("p2"));
    assert_eq!(
        assert_status(&wrong, 400, "BadRequest")["message"],
        "name in URL does not match name in Eviction object"
    );
}

/// `kubectl drain` (cordon, then an eviction per pod on the node, then a
/// wait for the pods to go): a PodDisruptionBudget that allows nothing
/// makes it fail with kube's message; once the budget allows it, it
/// drains the node.
#[test]
fn kubectl_drain_evicts_through_the_disruption_budget() {
    let s = Server::start();
    created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": NS}}));
    created(&s, "/api/v1/nodes", &json!({"metadata": {"name": "node-1"}}));
    created(&s, &format!("/api/v1/namespaces/{NS}/pods"), &pod("web-0"));
    created(&s, &format!("/api/v1/namespaces/{NS}/pods/web-0/binding"), &binding("web-0", "node-1"));
    merge_patch(
        &s,
        &format!("/api/v1/namespaces/{NS}/pods/web-0/status"),
        &json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    created(
        &s,
        &format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"),
        &json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    let budget_status = |allowed: i64| {
        json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
            "currentHealthy": 1, "desiredHealthy": 1 - allowed, "expectedPods": 1}})
    };
    let status_path = format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web/status");
    merge_patch(&s, &status_path, &budget_status(0));
    let drain = ["drain", "node-1", "--force", "--grace-period=0", "--timeout=6s"];
    let blocked = s.kubectl(&drain);
    assert!(!blocked.status.success(), "drain must fail while the budget allows nothing: {}", blocked.stdout);
    assert!(
        blocked.stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{}",
        blocked.stderr
    );
    assert_eq!(s.get_ok("/api/v1/nodes/node-1")["spec"]["unschedulable"], true, "drain cordons first");
    assert_eq!(s.get(&format!("/api/v1/namespaces/{NS}/pods/web-0")).status, 200);
    merge_patch(&s, &status_path, &budget_status(1));
    let out = s.kubectl_ok(&drain);
    assert!(out.stdout.contains("evicted"), "{}", out.stdout);
    assert_eq!(s.get(&format!("/api/v1/namespaces/{NS}/pods/web-0")).status, 404);
}

/// kube-scheduler and client-go's typed clients send Protobuf: a Binding and
/// an Eviction in Kubernetes' envelope, built with k8s-pb.
#[test]
fn protobuf_bindings_and_evictions() {
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::api::policy::v1 as policy;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;
    fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta { api_version: Some(api_version.into()), kind: Some(kind.into()) }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut body = b"k8s\0".to_vec();
        body.extend(unknown.encode_to_vec());
        body
    }
    let s = Server::start();
    created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": NS}}));
    created(&s, &format!("/api/v1/namespaces/{NS}/pods"), &pod("pb"));
    let binding = core::Binding {
        metadata: Some(meta::ObjectMeta { name: Some("pb".into()), namespace: Some(NS.into()), ..Default::default() }),
        target: Some(core::ObjectReference {
            kind: Some("Node".into()),
            name: Some("node-7".into()),
            ..Default::default()
        }),
    };
    let proto = [("Content-Type", "application/vnd.kubernetes.protobuf"), ("Accept", "application/json")];
    let body = envelope("v1", "Binding", binding.encode_to_vec());
    let r = s.request("POST", &format!("/api/v1/namespaces/{NS}/pods/pb/binding"), &proto, Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(s.get_ok(&format!("/api/v1/namespaces/{NS}/pods/pb"))["spec"]["nodeName"], "node-7");
    let eviction = policy::Eviction {
        metadata: Some(meta::ObjectMeta { name: Some("pb".into()), namespace: Some(NS.into()), ..Default::default() }),
        delete_options: Some(meta::DeleteOptions { grace_period_seconds: Some(0), ..Default::default() }),
    };
    let body = envelope("policy/v1", "Eviction", eviction.encode_to_vec());
    let r = s.request("POST", &format!("/api/v1/namespaces/{NS}/pods/pb/eviction"), &proto, Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(s.get(&format!("/api/v1/namespaces/{NS}/pods/pb")).status, 404, "grace period 0: deleted at once");
}

/// The other branches of kube's eviction: two budgets covering one pod
/// (500, kube's message); an unready pod while the budget has its healthy
/// pods (evicted without spending the budget); a budget whose controller
/// has not observed its generation (429, still being processed).
#[test]
fn evictions_with_two_budgets_unready_pods_and_stale_budgets() {
    let s = Server::start();
    created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": NS}}));
    for name in ["a", "b"] {
        created(&s, &format!("/api/v1/namespaces/{NS}/pods"), &pod(name));
        created(&s, &format!("/api/v1/namespaces/{NS}/pods/{name}/binding"), &binding(name, "node-1"));
    }
    merge_patch(
        &s,
        &format!("/api/v1/namespaces/{NS}/pods/a/status"),
        &json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    merge_patch(
        &s,
        &format!("/api/v1/namespaces/{NS}/pods/b/status"),
        &json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}]}}),
    );
    let budgets = format!("/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets");
    let budget = |name: &str| json!({"metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    created(&s, &budgets, &budget("one"));
    created(&s, &budgets, &budget("two"));
    let r = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/a/eviction"), &eviction("a"));
    assert_eq!(
        assert_status(&r, 500, "InternalError")["message"],
        "Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    assert_eq!(s.delete(&format!("{budgets}/two")).status, 200);
    // The budget's controller has not observed it yet (no status).
    let r = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/a/eviction"), &eviction("a"));
    let status = assert_status(&r, 429, "TooManyRequests");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "The disruption budget one is still being processed by the server."
    );
    assert_eq!(r.header("retry-after"), Some("10"));
    // Observed, one healthy of one desired, nothing allowed: the unready pod
    // b is evicted all the same, the budget untouched.
    merge_patch(
        &s,
        &format!("{budgets}/one/status"),
        &json!({"status": {"observedGeneration": 1,
        "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 2}}),
    );
    let r = s.post_json(&format!("/api/v1/namespaces/{NS}/pods/b/eviction"), &eviction("b"));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(s.get_ok(&format!("{budgets}/one"))["status"]["disruptionsAllowed"], 0);
    assert!(s.get_ok(&format!("{budgets}/one"))["status"]["disruptedPods"].is_null());
    assert_status(
        &s.post_json(&format!("/api/v1/namespaces/{NS}/pods/a/eviction"), &eviction("a")),
        429,
        "TooManyRequests",
    );
}
