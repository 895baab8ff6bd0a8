//! Tables against the real binary: `kubectl get` prints kube-apiserver's
//! columns and cells for pods, deployments, services and nodes (`-o wide`
//! included), and the Table responses of get, list and watch over raw HTTP
//! honour `includeObject` and send column definitions only in a watch's
//! first event.

mod common;

use common::{assert_status, Server};
use serde_json::{json, Value};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// Creates an object, then sets its status through the status subresource
/// (a create starts status empty, as in kube-apiserver).
fn create_with_status(s: &Server, collection: &str, object: Value, status: Value) {
    let name = object["metadata"]["name"].as_str().unwrap().to_string();
    let r = s.post_json(collection, &object);
    assert_eq!(r.status, 201, "create {collection}/{name}: {}", r.text());
    let mut current = r.json();
    current["status"] = status;
    let r = s.put_json(&format!("{collection}/{name}/status"), &current);
    assert_eq!(r.status, 200, "status of {collection}/{name}: {}", r.text());
}

/// The whitespace-separated words of the line whose first word is `first`.
fn row<'a>(output: &'a str, first: &str) -> Vec<&'a str> {
    output
        .lines()
        .find(|l| l.split_whitespace().next() == Some(first))
        .unwrap_or_else(|| panic!("no row for {first} in:\n{output}"))
        .split_whitespace()
        .collect()
}

fn header(output: &str) -> Vec<&str> {
    output.lines().next().unwrap_or_default().split_whitespace().collect()
}

/// An Age cell: a short human duration such as "7s", "2m5s" or "3h".
fn is_age(cell: &str) -> bool {
    !cell.is_empty()
        && cell.chars().next().is_some_and(|c| c.is_ascii_digit())
        && cell.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}

fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "app", "image": "nginx:1.27"}, {"name": "sidecar", "image": "envoy:1.30"}],
            "readinessGates": [{"conditionType": "example.com/lb"}],
        },
    })
}

fn crashing_pod_status() -> Value {
    json!({
        "phase": "Running",
        "podIP": "10.0.0.7",
        "podIPs": [{"ip": "10.0.0.7"}],
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "example.com/lb", "status": "True"}],
        "containerStatuses": [
            {"name": "app", "ready": true, "restartCount": 2, "image": "nginx:1.27", "imageID": "", "state": {"running": {"startedAt": "2024-01-02T11:50:00Z"}},
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-02T11:55:00Z"}}},
            {"name": "sidecar", "ready": false, "restartCount": 1, "image": "envoy:1.30", "imageID": "",
             "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 2, "finishedAt": "2024-01-02T11:40:00Z"}}},
        ],
    })
}

#[test]
fn kubectl_get_prints_kube_apiserver_columns() {
    let s = Server::start();
    const PODS: &str = "/api/v1/namespaces/default/pods";
    create_with_status(&s, PODS, pod("web-1"), crashing_pod_status());
    let r = s.post_json(
        PODS,
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "idle"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());

    // kubectl get pods.
    let out = s.kubectl_ok(&["get", "pods"]).stdout;
    assert_eq!(header(&out), ["NAME", "READY", "STATUS", "RESTARTS", "AGE"], "{out}");
    let web = row(&out, "web-1");
    assert_eq!(&web[..4], ["web-1", "1/2", "CrashLoopBackOff", "3"], "{out}");
    // Restarts "3 (<age> ago)", then the pod's age.
    assert!(web[4].starts_with('(') && is_age(&web[4][1..]) && web[5] == "ago)", "{out}");
    assert!(is_age(web[6]) && web.len() == 7, "{out}");
    let idle = row(&out, "idle");
    assert_eq!(&idle[..4], ["idle", "0/1", "Pending", "0"], "{out}");
    assert!(is_age(idle[4]), "{out}");

    // -o wide adds the priority-1 columns.
    let out = s.kubectl_ok(&["get", "pods", "-o", "wide"]).stdout;
    assert_eq!(
        header(&out),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"],
        "{out}"
    );
    assert_eq!(row(&out, "web-1")[7..], ["10.0.0.7", "node-a", "<none>", "1/1"], "{out}");
    assert_eq!(row(&out, "idle")[5..], ["<none>", "<none>", "<none>", "<none>"], "{out}");

    // kubectl get deploy.
    const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
    create_with_status(
        &s,
        DEPLOYMENTS,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}),
        json!({"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}),
    );
    let out = s.kubectl_ok(&["get", "deploy"]).stdout;
    assert_eq!(header(&out), ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], "{out}");
    let web = row(&out, "web");
    assert_eq!(&web[..4], ["web", "2/3", "3", "2"], "{out}");
    assert!(is_age(web[4]), "{out}");
    let out = s.kubectl_ok(&["get", "deploy", "-o", "wide"]).stdout;
    assert_eq!(row(&out, "web")[5..], ["web", "nginx:1.27", "app=web"], "{out}");

    // kubectl get svc.
    let r = s.post_json(
        "/api/v1/namespaces/default/services",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.20", "clusterIPs": ["10.0.0.20"], "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let out = s.kubectl_ok(&["get", "svc"]).stdout;
    assert_eq!(header(&out), ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], "{out}");
    let web = row(&out, "web");
    assert_eq!(&web[..5], ["web", "ClusterIP", "10.0.0.20", "<none>", "80/TCP,53/UDP"], "{out}");
    assert!(is_age(web[5]), "{out}");

    // kubectl get nodes -o wide.
    create_with_status(
        &s,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-a", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true}}),
        json!({"conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "192.168.1.10"}, {"type": "ExternalIP", "address": "203.0.113.10"}],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Debian", "kernelVersion": "6.1.0",
                "containerRuntimeVersion": "containerd://1.7.0", "machineID": "", "systemUUID": "", "bootID": "",
                "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}),
    );
    let out = s.kubectl_ok(&["get", "nodes", "-o", "wide"]).stdout;
    assert_eq!(
        header(&out),
        [
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME"
        ],
        "{out}"
    );
    let node = row(&out, "node-a");
    assert_eq!(&node[..3], ["node-a", "Ready,SchedulingDisabled", "control-plane"], "{out}");
    assert!(is_age(node[3]), "{out}");
    assert_eq!(
        node[4..],
        ["v1.31.0", "192.168.1.10", "203.0.113.10", "Debian", "6.1.0", "containerd://1.7.0"],
        "{out}"
    );

    // Types without printer columns: the default Name + Created At.
    let r = s.post_json(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "reader"}, "rules": []}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let out = s.kubectl_ok(&["get", "clusterroles"]).stdout;
    assert_eq!(header(&out), ["NAME", "CREATED", "AT"], "{out}");
    let reader = row(&out, "reader");
    assert!(reader[1].ends_with('Z') && reader[1].contains('T'), "{out}");
}

#[test]
fn table_responses_over_http() {
    let s = Server::start();
    const PODS: &str = "/api/v1/namespaces/default/pods";
    create_with_status(&s, PODS, pod("web-1"), crashing_pod_status());
    let r = s.post_json(
        PODS,
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-2"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let get = |path: &str| s.request("GET", path, &[("Accept", TABLE)], None);

    // A list page: metadata with resourceVersion and continue; rows carry
    // PartialObjectMetadata by default.
    let r = get(&format!("{PODS}?limit=1"));
    assert_eq!(r.status, 200, "{}", r.text());
    let table = r.json();
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert!(table["metadata"]["resourceVersion"].as_str().is_some_and(|v| !v.is_empty()), "{table}");
    let token = table["metadata"]["continue"].as_str().expect("continue token").to_string();
    assert_eq!(table["metadata"]["remainingItemCount"], 1, "{table}");
    assert_eq!(table["columnDefinitions"].as_array().map(Vec::len), Some(9), "{table}");
    assert_eq!(table["rows"][0]["cells"][0], "web-1");
    assert_eq!(table["rows"][0]["cells"][2], "CrashLoopBackOff");
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(table["rows"][0]["object"]["metadata"]["name"], "web-1");
    assert!(table["rows"][0]["object"].get("spec").is_none());
    let next = get(&format!("{PODS}?limit=1&continue={token}")).json();
    assert_eq!(next["rows"][0]["cells"][0], "web-2", "{next}");

    // includeObject=Object and None.
    let full = get(&format!("{PODS}?includeObject=Object")).json();
    assert_eq!(full["rows"][0]["object"]["kind"], "Pod", "{full}");
    assert_eq!(full["rows"][0]["object"]["spec"]["nodeName"], "node-a", "{full}");
    let none = get(&format!("{PODS}?includeObject=None")).json();
    assert_eq!(none["rows"][1]["object"], Value::Null, "{none}");
    assert_status(&get(&format!("{PODS}?includeObject=Everything")), 400, "BadRequest");

    // A single object, in v1beta1.
    let r = s.request(
        "GET",
        &format!("{PODS}/web-2"),
        &[("Accept", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let one = r.json();
    assert_eq!(one["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(one["metadata"]["resourceVersion"], one["rows"][0]["object"]["metadata"]["resourceVersion"]);

    // A watch: one Table per event, column definitions in the first only.
    let r = get(&format!("{PODS}?watch=1&timeoutSeconds=1"));
    assert_eq!(r.status, 200, "{}", r.text());
    let events: Vec<Value> =
        r.text().lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 2, "{}", r.text());
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["type"], "ADDED");
        assert_eq!(event["object"]["kind"], "Table", "{event}");
        assert_eq!(event["object"]["rows"].as_array().map(Vec::len), Some(1), "{event}");
        assert_eq!(event["object"]["columnDefinitions"].is_array(), i == 0, "{event}");
    }
    assert_eq!(events[0]["object"]["rows"][0]["cells"][0], "web-1");
    assert_eq!(events[1]["object"]["rows"][0]["cells"][0], "web-2");
    assert_eq!(events[1]["object"]["columnDefinitions"], Value::Null);

    // A streaming list: the initial-events-end bookmark is a Table too (as
    // kube-apiserver sends it), its row's metadata carrying the annotation.
    let r = get(&format!(
        "{PODS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    let events: Vec<Value> =
        r.text().lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or("")).collect();
    assert_eq!(types[..3], ["ADDED", "ADDED", "BOOKMARK"], "{}", r.text());
    let bookmark = &events[2]["object"];
    assert_eq!(bookmark["kind"], "Table", "{bookmark}");
    assert_eq!(bookmark["columnDefinitions"], Value::Null, "{bookmark}");
    assert!(bookmark["metadata"]["resourceVersion"].as_str().is_some_and(|v| !v.is_empty()), "{bookmark}");
    assert_eq!(
        bookmark["rows"][0]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true",
        "{bookmark}"
    );
    assert!(events.iter().all(|e| e["object"]["kind"] == "Table"), "{}", r.text());
}
