//! autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers are one store
//! kept in v2, as in kube-apiserver: an object written through either
//! version is read, listed, watched, updated, patched and its status written
//! through the other, converted (v1's targetCPUUtilizationPercentage is v2's
//! cpu Utilization metric; v2's other metrics, behavior and conditions ride
//! in v1's `autoscaling.alpha.kubernetes.io/*` annotations and come back).

mod common;

use common::watch::Watch;
use common::Server;
use serde_json::{json, Value};

const NS: &str = "hpa";
const V1: &str = "/apis/autoscaling/v1/namespaces/hpa/horizontalpodautoscalers";
const V2: &str = "/apis/autoscaling/v2/namespaces/hpa/horizontalpodautoscalers";
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

fn setup() -> Server {
    let s = Server::start();
    let r =
        s.post_json("/api/v1/namespaces", &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    assert_eq!(r.status, 201, "{}", r.text());
    s
}

fn target() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_v1_write_is_a_v2_object_and_back() {
    let s = setup();
    let mut v2_watch = Watch::open(&s, &format!("{V2}?watch=1"));
    let r = s.post_json(
        V1,
        &json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": target(), "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["apiVersion"], "autoscaling/v1");
    assert_eq!(created["spec"]["minReplicas"], 1);
    assert_eq!(created["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(created["status"], json!({"currentReplicas": 0, "desiredReplicas": 0}));
    assert!(created["metadata"].get("annotations").is_none(), "{created}");

    let seen = s.get_ok(&format!("{V2}/web"));
    assert_eq!(seen["apiVersion"], "autoscaling/v2");
    assert_eq!(rv(&seen), rv(&created));
    assert_eq!(seen["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        seen["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}])
    );
    assert!(seen["spec"].get("targetCPUUtilizationPercentage").is_none());
    assert_eq!(seen["status"], json!({"desiredReplicas": 0, "currentMetrics": null}));

    let event = v2_watch.next();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["apiVersion"], "autoscaling/v2");
    assert_eq!(event["object"]["spec"]["metrics"], seen["spec"]["metrics"]);

    // The v2 list shows it in v2.
    let list = s.get_ok(V2);
    assert_eq!(list["items"][0]["spec"]["metrics"], seen["spec"]["metrics"]);

    // A v2 update: a memory metric and a behavior; v1 keeps them in annotations.
    let mut v2 = seen.clone();
    v2["spec"]["metrics"].as_array_mut().unwrap().insert(
        0,
        json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}),
    );
    v2["spec"]["behavior"] = json!({"scaleDown": {"stabilizationWindowSeconds": 60}});
    let r = s.put_json(&format!("{V2}/web"), &v2);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();
    // v2's defaults fill the behavior's unset rules.
    assert_eq!(updated["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
    assert_eq!(updated["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"], 0);
    let event = v2_watch.next();
    assert_eq!(event["type"], "MODIFIED");

    let v1 = s.get_ok(&format!("{V1}/web"));
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(rv(&v1), rv(&updated));
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(
        annotations[METRICS],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]"#
    );
    let behavior: Value = serde_json::from_str(annotations[BEHAVIOR].as_str().unwrap()).unwrap();
    assert_eq!(behavior["ScaleDown"]["StabilizationWindowSeconds"], 60);
    assert_eq!(behavior["ScaleUp"]["Policies"][0], json!({"Type": "Pods", "Value": 4, "PeriodSeconds": 15}));

    // A v1 write of what v1 showed (a label added) keeps v2's metrics and behavior.
    let mut v1_back = v1.clone();
    v1_back["metadata"]["labels"] = json!({"team": "a"});
    let r = s.put_json(&format!("{V1}/web"), &v1_back);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["metadata"]["annotations"], *annotations);
    let again = s.get_ok(&format!("{V2}/web"));
    assert_eq!(again["metadata"]["labels"], json!({"team": "a"}));
    assert!(again["metadata"].get("annotations").is_none(), "{again}");
    assert_eq!(again["spec"]["metrics"], updated["spec"]["metrics"]);
    assert_eq!(again["spec"]["behavior"], updated["spec"]["behavior"]);
    assert_eq!(v2_watch.next()["object"]["metadata"]["labels"], json!({"team": "a"}));

    // A v1 merge patch of the CPU target changes v2's cpu metric only.
    let r = s.request(
        "PATCH",
        &format!("{V1}/web"),
        &[("Content-Type", "application/merge-patch+json"), ("Accept", "application/json")],
        Some(br#"{"spec":{"targetCPUUtilizationPercentage":75}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["targetCPUUtilizationPercentage"], 75);
    let patched = s.get_ok(&format!("{V2}/web"));
    let metrics = patched["spec"]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2, "{patched}");
    assert_eq!(metrics[0]["resource"]["name"], "memory");
    assert_eq!(metrics[1]["resource"]["target"]["averageUtilization"], 75);

    // A v2 status write (conditions, current metrics) is v1's status and annotations.
    let mut status = patched.clone();
    status["status"] = json!({"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "120m", "averageUtilization": 40}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-12-03T18:00:00Z",
            "reason": "ReadyForNewScale", "message": "recommended size matches current size"}]});
    let r = s.put_json(&format!("{V2}/web/status"), &status);
    assert_eq!(r.status, 200, "{}", r.text());
    let v1 = s.get_ok(&format!("{V1}/web"));
    assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 40);
    assert_eq!(v1["status"]["currentReplicas"], 2);
    assert_eq!(v1["status"]["desiredReplicas"], 3);
    let conditions: Value = serde_json::from_str(v1["metadata"]["annotations"][CONDITIONS].as_str().unwrap()).unwrap();
    assert_eq!(conditions[0]["reason"], "ReadyForNewScale");

    // A v1 status write: what its annotations say wins (kube reads them when
    // it decodes the request); without them its CPU percentage is the status
    // metric and the conditions are gone, as in kube.
    let mut v1_status = v1.clone();
    v1_status["status"]["currentCPUUtilizationPercentage"] = json!(55);
    let r = s.put_json(&format!("{V1}/web/status"), &v1_status);
    assert_eq!(r.status, 200, "{}", r.text());
    let seen = s.get_ok(&format!("{V2}/web"));
    assert_eq!(seen["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"], 40);
    assert_eq!(seen["status"]["conditions"][0]["reason"], "ReadyForNewScale");
    v1_status["metadata"]["resourceVersion"] = r.json()["metadata"]["resourceVersion"].clone();
    v1_status["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("autoscaling.alpha.kubernetes.io/current-metrics");
    v1_status["metadata"]["annotations"].as_object_mut().unwrap().remove(CONDITIONS);
    let r = s.put_json(&format!("{V1}/web/status"), &v1_status);
    assert_eq!(r.status, 200, "{}", r.text());
    let seen = s.get_ok(&format!("{V2}/web"));
    assert_eq!(
        seen["status"]["currentMetrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 55}}}])
    );
    assert!(seen["status"].get("conditions").is_none(), "{seen}");
    assert_eq!(seen["spec"]["metrics"].as_array().map(Vec::len), Some(2), "the spec is kept: {seen}");
    let v1 = s.get_ok(&format!("{V1}/web"));

    // The v1 list and watch show v1.
    let list = s.get_ok(V1);
    assert_eq!(list["items"][0]["spec"]["targetCPUUtilizationPercentage"], 75);
    let mut v1_watch = Watch::open(&s, &format!("{V1}?watch=1&resourceVersion={}", rv(&v1)));
    let r = s.request(
        "PATCH",
        &format!("{V2}/web"),
        &[("Content-Type", "application/merge-patch+json"), ("Accept", "application/json")],
        Some(br#"{"spec":{"maxReplicas":9}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let event = v1_watch.next();
    assert_eq!(event["type"], "MODIFIED");
    assert_eq!(event["object"]["apiVersion"], "autoscaling/v1");
    assert_eq!(event["object"]["spec"]["maxReplicas"], 9);
    assert_eq!(event["object"]["spec"]["targetCPUUtilizationPercentage"], 75);

    // Deleted through v1, gone from v2.
    let r = s.delete(&format!("{V1}/web"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.get(&format!("{V2}/web")).status, 404);
    assert_eq!(v1_watch.next()["type"], "DELETED");
}

#[test]
fn a_v2_write_without_cpu_is_seen_by_v1_with_annotations_only() {
    let s = setup();
    let r = s.post_json(
        V2,
        &json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "q"},
            "spec": {"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 4, "metrics": [
                {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}}}]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let v1 = s.get_ok(&format!("{V1}/q"));
    assert!(v1["spec"].get("targetCPUUtilizationPercentage").is_none(), "{v1}");
    assert_eq!(
        v1["metadata"]["annotations"][METRICS],
        r#"[{"type":"External","external":{"metricName":"queue","targetValue":"30"}}]"#
    );
    // Tables print the same object through both versions (kube prints the internal one).
    let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
    let targets = |path: &str| {
        let r = s.request("GET", path, &[("Accept", table)], None);
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["rows"][0]["cells"][2].clone()
    };
    assert_eq!(targets(&format!("{V1}/q")), json!("<unknown>/30"));
    assert_eq!(targets(&format!("{V1}/q")), targets(&format!("{V2}/q")));
    // Protobuf through v1 carries the v1 kind.
    let r = s.request("GET", &format!("{V1}/q"), &[("Accept", "application/vnd.kubernetes.protobuf")], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/vnd.kubernetes.protobuf"));
    assert!(r.body.windows(b"autoscaling/v1".len()).any(|w| w == b"autoscaling/v1"));
    // Invalid through v1 (the shared rules) is refused and nothing changes.
    let mut bad = v1.clone();
    bad["spec"]["maxReplicas"] = json!(1);
    let r = s.put_json(&format!("{V1}/q"), &bad);
    assert_eq!(r.status, 422, "{}", r.text());
    assert!(r.text().contains("spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`"));
    assert_eq!(s.get_ok(&format!("{V2}/q"))["spec"]["maxReplicas"], 4);
}

#[test]
fn server_side_apply_through_v1_is_seen_through_v2() {
    let s = setup();
    let body = serde_json::to_vec(&json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "applied"},
        "spec": {"scaleTargetRef": target(), "maxReplicas": 4, "targetCPUUtilizationPercentage": 50}}))
    .unwrap();
    let r = s.request(
        "PATCH",
        &format!("{V1}/applied?fieldManager=test"),
        &[("Content-Type", "application/apply-patch+yaml"), ("Accept", "application/json")],
        Some(&body),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["apiVersion"], "autoscaling/v1");
    assert_eq!(r.json()["spec"]["targetCPUUtilizationPercentage"], 50);
    let v2 = s.get_ok(&format!("{V2}/applied"));
    assert_eq!(v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 50);
    assert_eq!(v2["metadata"]["managedFields"][0]["manager"], "test");
    assert_eq!(v2["metadata"]["managedFields"][0]["apiVersion"], "autoscaling/v1");
}
