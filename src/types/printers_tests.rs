//! Golden tests of the printers: a realistic object per built-in type at a
//! fixed clock, and the cells kube-apiserver's rules give for it (worked out
//! by hand from those rules).

use super::*;
use serde_json::json;
use std::time::{Duration, SystemTime};

/// 2024-01-02T12:00:00Z.
fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_704_196_800)
}

fn names(group: &str, resource: &str) -> Vec<(String, u8)> {
    for_resource(group, resource).columns().into_iter().map(|c| (c.name, c.priority)).collect()
}

fn cells(group: &str, resource: &str, object: Value) -> Value {
    let printer = for_resource(group, resource);
    let row = printer.row(&object, now());
    assert_eq!(row.cells.len(), printer.columns().len(), "one cell per column for {resource}");
    Value::Array(row.cells)
}

#[test]
fn human_durations_follow_kubectl() {
    let s = |n: i128| human_duration(n * 1_000_000_000);
    assert_eq!(s(-5), "<invalid>");
    assert_eq!(s(-1), "0s");
    assert_eq!(s(0), "0s");
    assert_eq!(s(119), "119s");
    assert_eq!(s(120), "2m");
    assert_eq!(s(312), "5m12s");
    assert_eq!(s(600), "10m");
    assert_eq!(s(179 * 60), "179m");
    assert_eq!(s(3 * 3600 + 12 * 60), "3h12m");
    assert_eq!(s(5 * 3600), "5h");
    assert_eq!(s(20 * 3600), "20h");
    assert_eq!(s(47 * 3600 + 59 * 60), "47h");
    assert_eq!(s(48 * 3600), "2d");
    assert_eq!(s(3 * 86400 + 4 * 3600), "3d4h");
    assert_eq!(s(400 * 86400), "400d");
    assert_eq!(s((2 * 365 + 35) * 86400), "2y35d");
    assert_eq!(s(9 * 365 * 86400), "9y");
    assert_eq!(human_duration(-1_500_000_000), "0s");
}

#[test]
fn pod_running_with_restarts() {
    assert_eq!(
        names("", "pods"),
        vec![
            ("Name".into(), 0),
            ("Ready".into(), 0),
            ("Status".into(), 0),
            ("Restarts".into(), 0),
            ("Age".into(), 0),
            ("IP".into(), 1),
            ("Node".into(), 1),
            ("Nominated Node".into(), 1),
            ("Readiness Gates".into(), 1),
        ]
    );
    let pod = json!({
        "metadata": {"name": "web-1", "namespace": "default", "creationTimestamp": "2024-01-02T08:48:00Z"},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "app", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}],
            "readinessGates": [{"conditionType": "example.com/lb"}],
        },
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.7",
            "podIPs": [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}],
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "example.com/lb", "status": "True"}],
            "containerStatuses": [
                {"name": "app", "ready": true, "restartCount": 2, "state": {"running": {"startedAt": "2024-01-02T11:50:00Z"}},
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-02T11:55:00Z"}}},
                {"name": "sidecar", "ready": false, "restartCount": 1,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                 "lastState": {"terminated": {"exitCode": 2, "finishedAt": "2024-01-02T11:40:00Z"}}},
            ],
        },
    });
    assert_eq!(
        cells("", "pods", pod),
        json!(["web-1", "1/2", "CrashLoopBackOff", "3 (5m ago)", "3h12m", "10.0.0.7", "node-a", "<none>", "1/1"])
    );
}

#[test]
fn pod_statuses() {
    let base = |status: Value, spec_extra: Value| {
        let mut spec = json!({"containers": [{"name": "app", "image": "x"}]});
        if let (Some(s), Some(extra)) = (spec.as_object_mut(), spec_extra.as_object()) {
            s.extend(extra.clone());
        }
        json!({"metadata": {"name": "p", "creationTimestamp": "2024-01-02T11:59:30Z"}, "spec": spec, "status": status})
    };
    let status = |pod: Value| cells("", "pods", pod)[2].clone();
    // A freshly created pod.
    assert_eq!(
        cells("", "pods", base(json!({"phase": "Pending"}), json!({}))),
        json!(["p", "0/1", "Pending", "0", "30s", "<none>", "<none>", "<none>", "<none>"])
    );
    // Completed.
    let done = base(
        json!({"phase": "Succeeded", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
        json!({}),
    );
    assert_eq!(status(done.clone()), json!("Completed"));
    let row = for_resource("", "pods").row(&done, now());
    assert_eq!(
        row.conditions,
        vec![
            json!({"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."})
        ]
    );
    // Terminated without a reason.
    assert_eq!(
        status(base(
            json!({"phase": "Running", "containerStatuses": [
        {"name": "app", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}),
            json!({})
        )),
        json!("Signal:9")
    );
    assert_eq!(
        status(base(
            json!({"phase": "Running", "containerStatuses": [
        {"name": "app", "state": {"terminated": {"exitCode": 3}}}]}),
            json!({})
        )),
        json!("ExitCode:3")
    );
    // Init containers: the second of two running.
    let init = json!({"initContainers": [{"name": "i1", "image": "x"}, {"name": "i2", "image": "x"}]});
    assert_eq!(
        status(base(
            json!({"phase": "Pending", "initContainerStatuses": [
        {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
        {"name": "i2", "state": {"running": {}}}]}),
            init.clone()
        )),
        json!("Init:1/2")
    );
    assert_eq!(
        status(base(
            json!({"phase": "Pending", "initContainerStatuses": [
        {"name": "i1", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
            init.clone()
        )),
        json!("Init:CrashLoopBackOff")
    );
    assert_eq!(
        status(base(
            json!({"phase": "Pending", "initContainerStatuses": [
        {"name": "i1", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}),
            init
        )),
        json!("Init:Error")
    );
    // Being deleted.
    let mut deleting = base(json!({"phase": "Running"}), json!({}));
    deleting["metadata"]["deletionTimestamp"] = json!("2024-01-02T12:00:00Z");
    assert_eq!(status(deleting.clone()), json!("Terminating"));
    deleting["status"]["reason"] = json!("NodeLost");
    assert_eq!(status(deleting), json!("Unknown"));
    // Scheduling gates.
    assert_eq!(
        status(base(
            json!({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
            json!({})
        )),
        json!("SchedulingGated")
    );
    // A sidecar (restartable init container) counts toward Ready.
    let sidecar = base(
        json!({"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}],
               "initContainerStatuses": [{"name": "proxy", "started": true, "ready": true, "restartCount": 1, "state": {"running": {}}}],
               "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}]}),
        json!({"initContainers": [{"name": "proxy", "image": "x", "restartPolicy": "Always"}]}),
    );
    let c = cells("", "pods", sidecar);
    assert_eq!((c[1].clone(), c[2].clone(), c[3].clone()), (json!("2/2"), json!("Running"), json!("1")));
}

#[test]
fn deployment_replicaset_statefulset_daemonset() {
    let template = json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}, {"name": "log", "image": "fluentbit"}]}});
    let created = json!({"name": "web", "namespace": "default", "creationTimestamp": "2023-12-31T12:00:00Z"});
    assert_eq!(
        names("apps", "deployments").into_iter().map(|c| c.0).collect::<Vec<_>>(),
        ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    );
    assert_eq!(
        cells(
            "apps",
            "deployments",
            json!({
                "metadata": created, "spec": {"replicas": 3, "template": template,
                    "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]}},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
            })
        ),
        json!(["web", "2/3", 3, 2, "2d", "web,log", "nginx:1.25,fluentbit", "app=web,tier in (be,fe)"])
    );
    assert_eq!(
        cells(
            "apps",
            "replicasets",
            json!({
                "metadata": created, "spec": {"replicas": 2, "template": template, "selector": {"matchLabels": {"app": "web"}}},
                "status": {"replicas": 2, "readyReplicas": 1},
            })
        ),
        json!(["web", 2, 2, 1, "2d", "web,log", "nginx:1.25,fluentbit", "app=web"])
    );
    assert_eq!(
        cells(
            "apps",
            "statefulsets",
            json!({
                "metadata": created, "spec": {"replicas": 3, "template": template}, "status": {"readyReplicas": 3},
            })
        ),
        json!(["web", "3/3", "2d", "web,log", "nginx:1.25,fluentbit"])
    );
    let mut ds_template = template.clone();
    ds_template["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
    assert_eq!(
        cells(
            "apps",
            "daemonsets",
            json!({
                "metadata": created, "spec": {"template": ds_template, "selector": {"matchLabels": {"app": "web"}}},
                "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                           "updatedNumberScheduled": 3, "numberAvailable": 2},
            })
        ),
        json!(["web", 3, 3, 2, 3, 2, "kubernetes.io/os=linux", "2d", "web,log", "nginx:1.25,fluentbit", "app=web"])
    );
    // No selector: the deployment prints "", the replica set "<none>".
    let bare = json!({"metadata": {"name": "b"}, "spec": {}});
    assert_eq!(cells("apps", "deployments", bare.clone())[7], json!(""));
    assert_eq!(cells("apps", "replicasets", bare.clone())[7], json!("<none>"));
    assert_eq!(cells("apps", "deployments", bare)[4], json!("<unknown>"));
}

#[test]
fn jobs_and_cronjobs() {
    let job = |status: Value, spec: Value| {
        json!({
            "metadata": {"name": "pi", "creationTimestamp": "2024-01-02T11:00:00Z"},
            "spec": spec, "status": status,
        })
    };
    let spec = json!({"completions": 3, "parallelism": 1, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
        "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}});
    assert_eq!(
        cells(
            "batch",
            "jobs",
            job(
                json!({"succeeded": 3, "startTime": "2024-01-02T11:00:05Z", "completionTime": "2024-01-02T11:01:05Z",
            "conditions": [{"type": "Complete", "status": "True"}]}),
                spec.clone()
            )
        ),
        json!(["pi", "Complete", "3/3", "60s", "60m", "pi", "perl", "batch.kubernetes.io/controller-uid=u1"])
    );
    let running = cells(
        "batch",
        "jobs",
        job(
            json!({"succeeded": 1, "startTime": "2024-01-02T11:57:00Z"}),
            json!({"parallelism": 4, "template": {"spec": {"containers": []}}}),
        ),
    );
    assert_eq!(
        (running[1].clone(), running[2].clone(), running[3].clone()),
        (json!("Running"), json!("1/1 of 4"), json!("3m"))
    );
    let suspended =
        cells("batch", "jobs", job(json!({"conditions": [{"type": "Suspended", "status": "True"}]}), json!({})));
    assert_eq!(
        (suspended[1].clone(), suspended[2].clone(), suspended[3].clone()),
        (json!("Suspended"), json!("0/1"), json!(""))
    );
    assert_eq!(
        cells(
            "batch",
            "cronjobs",
            json!({
                "metadata": {"name": "nightly", "creationTimestamp": "2023-12-20T12:00:00Z"},
                "spec": {"schedule": "0 3 * * *", "timeZone": "Etc/UTC", "suspend": false,
                         "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "backup", "image": "restic"}]}}}}},
                "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": "2024-01-02T03:00:00Z"},
            })
        ),
        json!(["nightly", "0 3 * * *", "Etc/UTC", "False", 1, "9h", "13d", "backup", "restic", "<none>"])
    );
    // Never scheduled, no time zone, suspend unset (kube-apiserver defaults it to false); suspended.
    let bare = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@hourly"}});
    assert_eq!(
        cells("batch", "cronjobs", bare.clone()).as_array().unwrap()[..6],
        [json!("c"), json!("@hourly"), json!("<none>"), json!("False"), json!(0), json!("<none>")]
    );
    let mut suspended = bare;
    suspended["spec"]["suspend"] = json!(true);
    assert_eq!(cells("batch", "cronjobs", suspended)[3], json!("True"));
}

#[test]
fn services_endpoints_ingresses() {
    let created = json!({"name": "web", "creationTimestamp": "2024-01-02T11:55:00Z"});
    assert_eq!(
        cells(
            "",
            "services",
            json!({"metadata": created, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"], "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "selector": {"app": "web"}}})
        ),
        json!(["web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "5m", "app=web"])
    );
    assert_eq!(
        cells(
            "",
            "services",
            json!({"metadata": created, "spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.1.1"],
            "externalIPs": ["192.0.2.9"], "ports": [{"port": 443, "nodePort": 30443}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.5"}, {"hostname": "lb.example.com"}]}}})
        ),
        json!([
            "web",
            "LoadBalancer",
            "10.96.1.1",
            "203.0.113.5,lb.example.com,192.0.2.9",
            "443:30443/TCP",
            "5m",
            "<none>"
        ])
    );
    assert_eq!(
        cells("", "services", json!({"metadata": created, "spec": {"type": "LoadBalancer"}}))[3],
        json!("<pending>")
    );
    assert_eq!(
        cells(
            "",
            "services",
            json!({"metadata": created, "spec": {"type": "ExternalName", "externalName": "db.example.com"}})
        ),
        json!(["web", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"])
    );
    assert_eq!(
        cells(
            "",
            "endpoints",
            json!({"metadata": created, "subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 8080}, {"port": 9090}]},
            {"addresses": [{"ip": "fd00::3"}]}]})
        ),
        json!(["web", "10.0.0.1:8080,10.0.0.2:8080,10.0.0.1:9090 + 2 more...", "5m"])
    );
    assert_eq!(cells("", "endpoints", json!({"metadata": created}))[1], json!("<none>"));
    assert_eq!(
        cells(
            "networking.k8s.io",
            "ingresses",
            json!({"metadata": created, "spec": {"ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}], "tls": [{"hosts": ["a.example.com"]}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}})
        ),
        json!(["web", "nginx", "a.example.com,b.example.com", "203.0.113.7", "80, 443", "5m"])
    );
    assert_eq!(
        cells(
            "networking.k8s.io",
            "ingresses",
            json!({"metadata": created, "spec": {"rules": [
            {"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}, {}]}})
        ),
        json!(["web", "<none>", "a,b,c + 2 more...", "", "80", "5m"])
    );
}

#[test]
fn nodes_namespaces_and_config() {
    assert_eq!(
        cells(
            "",
            "nodes",
            json!({
                "metadata": {"name": "node-a", "creationTimestamp": "2023-12-02T12:00:00Z",
                    "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "etcd", "kubernetes.io/os": "linux"}},
                "spec": {"unschedulable": true},
                "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "Hostname", "address": "node-a"}, {"type": "InternalIP", "address": "192.168.1.10"}],
                    "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Debian GNU/Linux 12", "kernelVersion": "6.1.0",
                        "containerRuntimeVersion": "containerd://1.7.0"}},
            })
        ),
        json!([
            "node-a",
            "Ready,SchedulingDisabled",
            "control-plane,etcd",
            "31d",
            "v1.31.0",
            "192.168.1.10",
            "<none>",
            "Debian GNU/Linux 12",
            "6.1.0",
            "containerd://1.7.0"
        ])
    );
    assert_eq!(
        cells("", "nodes", json!({"metadata": {"name": "bare"}})),
        json!([
            "bare",
            "Unknown",
            "<none>",
            "<unknown>",
            "",
            "<none>",
            "<none>",
            "<unknown>",
            "<unknown>",
            "<unknown>"
        ])
    );
    let created = json!({"name": "n", "creationTimestamp": "2024-01-02T11:59:50Z"});
    assert_eq!(
        cells("", "namespaces", json!({"metadata": created, "status": {"phase": "Active"}})),
        json!(["n", "Active", "10s"])
    );
    assert_eq!(
        cells(
            "",
            "configmaps",
            json!({"metadata": created, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}})
        ),
        json!(["n", 3, "10s"])
    );
    assert_eq!(
        cells(
            "",
            "secrets",
            json!({"metadata": created, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}})
        ),
        json!(["n", "kubernetes.io/tls", 2, "10s"])
    );
    assert_eq!(cells("", "secrets", json!({"metadata": created}))[1], json!("Opaque"));
    assert_eq!(
        cells("", "serviceaccounts", json!({"metadata": created, "secrets": [{"name": "t"}]})),
        json!(["n", 1, "10s"])
    );
    assert_eq!(
        cells("coordination.k8s.io", "leases", json!({"metadata": created, "spec": {"holderIdentity": "kcm-1"}})),
        json!(["n", "kcm-1", "10s"])
    );
}

#[test]
fn events() {
    assert_eq!(
        names("", "events").into_iter().map(|c| c.0).collect::<Vec<_>>(),
        ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"]
    );
    assert_eq!(
        cells(
            "",
            "events",
            json!({
                "metadata": {"name": "web-1.17a", "namespace": "default"},
                "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{app}"},
                "reason": "BackOff", "type": "Warning", "message": "Back-off restarting failed container\n",
                "source": {"component": "kubelet", "host": "node-a"},
                "firstTimestamp": "2024-01-02T11:00:00Z", "lastTimestamp": "2024-01-02T11:58:00Z", "count": 14,
            })
        ),
        json!([
            "2m",
            "Warning",
            "BackOff",
            "pod/web-1",
            "spec.containers{app}",
            "kubelet, node-a",
            "Back-off restarting failed container",
            "60m",
            14,
            "web-1.17a"
        ])
    );
    // The newer form: eventTime, a series, the reporting controller; 59.88s
    // truncates to 59s.
    assert_eq!(
        cells(
            "",
            "events",
            json!({
                "metadata": {"name": "e2"}, "involvedObject": {"kind": "Node"}, "type": "Normal", "reason": "Sync",
                "eventTime": "2024-01-02T11:50:00.000000Z", "series": {"count": 5, "lastObservedTime": "2024-01-02T11:59:00.123456Z"},
                "reportingComponent": "controller-x", "message": "m",
            })
        ),
        json!(["59s", "Normal", "Sync", "node", "", "controller-x", "m", "10m", 5, "e2"])
    );
}

#[test]
fn storage() {
    let created = json!({"name": "pv-1", "creationTimestamp": "2024-01-01T12:00:00Z"});
    assert_eq!(
        cells(
            "",
            "persistentvolumes",
            json!({"metadata": created, "spec": {"capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "fast", "volumeMode": "Filesystem"},
            "status": {"phase": "Bound"}})
        ),
        json!([
            "pv-1",
            "10Gi",
            "RWO,RWX",
            "Retain",
            "Bound",
            "default/data",
            "fast",
            "<unset>",
            "",
            "24h",
            "Filesystem"
        ])
    );
    assert_eq!(
        cells(
            "",
            "persistentvolumeclaims",
            json!({"metadata": {"name": "data", "creationTimestamp": "2024-01-01T12:00:00Z",
            "annotations": {"volume.beta.kubernetes.io/storage-class": "legacy"}},
            "spec": {"volumeName": "pv-1", "storageClassName": "fast", "resources": {"requests": {"storage": "5Gi"}}},
            "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]}})
        ),
        json!(["data", "Bound", "pv-1", "10Gi", "RWO", "legacy", "<unset>", "24h", "Filesystem"])
    );
    // Fields kube-apiserver defaults (phase Pending, volumeMode Filesystem,
    // reclaim policy Retain) print their default when the stored object lacks them.
    let mut pending = json!({"metadata": {"name": "p", "creationTimestamp": "2024-01-01T12:00:00Z"},
        "spec": {"storageClassName": "fast", "volumeMode": "Block"}});
    assert_eq!(
        cells("", "persistentvolumeclaims", pending.clone()),
        json!(["p", "Pending", "", "", "", "fast", "<unset>", "24h", "Block"])
    );
    assert_eq!(
        cells(
            "",
            "persistentvolumes",
            json!({"metadata": {"name": "bare", "creationTimestamp": "2024-01-01T12:00:00Z"}})
        ),
        json!(["bare", "", "", "Retain", "Pending", "", "", "<unset>", "", "24h", "Filesystem"])
    );
    pending["metadata"]["deletionTimestamp"] = json!("2024-01-02T00:00:00Z");
    assert_eq!(cells("", "persistentvolumeclaims", pending)[1], json!("Terminating"));
}

#[test]
fn rbac_bindings_and_default_tables() {
    let binding = json!({"metadata": {"name": "read", "creationTimestamp": "2024-01-02T10:00:00Z"},
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"}, {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "namespace": "ci", "name": "runner"}]});
    for resource in ["rolebindings", "clusterrolebindings"] {
        assert_eq!(
            cells("rbac.authorization.k8s.io", resource, binding.clone()),
            json!(["read", "ClusterRole/view", "120m", "alice, bob", "devs", "ci/runner"])
        );
    }
    // Roles, cluster roles, CRDs: the default table with the creation time as a date.
    for (group, resource) in [
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
    ] {
        let printer = for_resource(group, resource);
        assert!(matches!(printer, TablePrinter::Default));
        let columns: Vec<(String, String)> = printer.columns().into_iter().map(|c| (c.name, c.type_)).collect();
        assert_eq!(columns, vec![("Name".into(), "string".into()), ("Created At".into(), "date".into())]);
        let row = printer.row(&json!({"metadata": {"name": "r", "creationTimestamp": "2024-01-02T10:00:00Z"}}), now());
        assert_eq!(row.cells, vec![json!("r"), json!("2024-01-02T10:00:00Z")]);
    }
}

#[test]
fn every_served_builtin_prints_without_panicking() {
    let weird = [json!(null), json!(7), json!({"metadata": 3, "spec": "x", "status": []}), json!({})];
    for resource in crate::types::registry::builtin_resources() {
        let printer = for_resource(resource.group, resource.resource);
        let columns = printer.columns();
        assert!(!columns.is_empty());
        for object in &weird {
            assert_eq!(printer.row(object, now()).cells.len(), columns.len(), "{}", resource.resource);
        }
    }
}

#[test]
fn custom_resource_columns() {
    let printer = TablePrinter::for_custom_resource(&[
        json!({"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}),
        json!({"name": "Phase", "type": "string", "jsonPath": ".status.phase", "description": "The phase."}),
        json!({"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}),
        json!({"name": "Started", "type": "date", "jsonPath": ".status.startedAt", "priority": 1}),
        json!({"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"}),
    ])
    .unwrap();
    let columns: Vec<(String, u8)> = printer.columns().into_iter().map(|c| (c.name, c.priority)).collect();
    assert_eq!(
        columns,
        vec![
            ("Name".into(), 0),
            ("Replicas".into(), 0),
            ("Phase".into(), 0),
            ("Ready".into(), 0),
            ("Started".into(), 1),
            ("Paused".into(), 0)
        ]
    );
    let object = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3.0},
        "status": {"phase": "Running", "startedAt": "2024-01-02T11:00:00Z", "conditions": [{"type": "Ready", "status": "True"}]}});
    assert_eq!(
        printer.row(&object, now()).cells,
        vec![json!("db"), json!(3), json!("Running"), json!("True"), json!("60m"), Value::Null]
    );
    // Without printer columns: Name and Age.
    let default = TablePrinter::for_custom_resource(&[]).unwrap();
    let columns: Vec<String> = default.columns().into_iter().map(|c| c.name).collect();
    assert_eq!(columns, ["Name", "Age"]);
    let row = default.row(&json!({"metadata": {"name": "x", "creationTimestamp": "2024-01-02T11:59:00Z"}}), now());
    assert_eq!(row.cells, vec![json!("x"), json!("60s")]);
    assert!(TablePrinter::for_custom_resource(&[json!({"name": "Bad", "type": "string", "jsonPath": "spec"})]).is_err());
}

#[test]
fn column_definitions_of_every_builtin() {
    // (group, resource, [name:type:priority ...]) as kube-apiserver declares them.
    let expected: &[(&str, &str, &str)] = &[
        ("", "pods", "Name:string:0 Ready:string:0 Status:string:0 Restarts:string:0 Age:string:0 IP:string:1 Node:string:1 Nominated_Node:string:1 Readiness_Gates:string:1"),
        ("", "services", "Name:string:0 Type:string:0 Cluster-IP:string:0 External-IP:string:0 Port(s):string:0 Age:string:0 Selector:string:1"),
        ("", "endpoints", "Name:string:0 Endpoints:string:0 Age:string:0"),
        ("", "nodes", "Name:string:0 Status:string:0 Roles:string:0 Age:string:0 Version:string:0 Internal-IP:string:1 External-IP:string:1 OS-Image:string:1 Kernel-Version:string:1 Container-Runtime:string:1"),
        ("", "namespaces", "Name:string:0 Status:string:0 Age:string:0"),
        ("", "configmaps", "Name:string:0 Data:string:0 Age:string:0"),
        ("", "secrets", "Name:string:0 Type:string:0 Data:string:0 Age:string:0"),
        ("", "serviceaccounts", "Name:string:0 Secrets:string:0 Age:string:0"),
        ("", "events", "Last_Seen:string:0 Type:string:0 Reason:string:0 Object:string:0 Subobject:string:1 Source:string:1 Message:string:0 First_Seen:string:1 Count:string:1 Name:string:1"),
        ("", "persistentvolumes", "Name:string:0 Capacity:string:0 Access_Modes:string:0 Reclaim_Policy:string:0 Status:string:0 Claim:string:0 StorageClass:string:0 VolumeAttributesClass:string:0 Reason:string:0 Age:string:0 VolumeMode:string:1"),
        ("", "persistentvolumeclaims", "Name:string:0 Status:string:0 Volume:string:0 Capacity:string:0 Access_Modes:string:0 StorageClass:string:0 VolumeAttributesClass:string:0 Age:string:0 VolumeMode:string:1"),
        ("apps", "deployments", "Name:string:0 Ready:string:0 Up-to-date:string:0 Available:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("apps", "replicasets", "Name:string:0 Desired:integer:0 Current:integer:0 Ready:integer:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("apps", "statefulsets", "Name:string:0 Ready:string:0 Age:string:0 Containers:string:1 Images:string:1"),
        ("apps", "daemonsets", "Name:string:0 Desired:integer:0 Current:integer:0 Ready:integer:0 Up-to-date:integer:0 Available:integer:0 Node_Selector:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("batch", "jobs", "Name:string:0 Status:string:0 Completions:string:0 Duration:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("batch", "cronjobs", "Name:string:0 Schedule:string:0 Timezone:string:0 Suspend:boolean:0 Active:integer:0 Last_Schedule:string:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("networking.k8s.io", "ingresses", "Name:string:0 Class:string:0 Hosts:string:0 Address:string:0 Ports:string:0 Age:string:0"),
        ("rbac.authorization.k8s.io", "rolebindings", "Name:string:0 Role:string:0 Age:string:0 Users:string:1 Groups:string:1 ServiceAccounts:string:1"),
        ("rbac.authorization.k8s.io", "clusterrolebindings", "Name:string:0 Role:string:0 Age:string:0 Users:string:1 Groups:string:1 ServiceAccounts:string:1"),
        ("rbac.authorization.k8s.io", "roles", "Name:string:0 Created_At:date:0"),
        ("rbac.authorization.k8s.io", "clusterroles", "Name:string:0 Created_At:date:0"),
        ("coordination.k8s.io", "leases", "Name:string:0 Holder:string:0 Age:string:0"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "Name:string:0 Created_At:date:0"),
        ("", "podtemplates", "Template:string:0 Containers:string:0 Images:string:0 Pod_Labels:string:0"),
        ("", "replicationcontrollers", "Name:string:0 Desired:integer:0 Current:integer:0 Ready:integer:0 Age:string:0 Containers:string:1 Images:string:1 Selector:string:1"),
        ("", "resourcequotas", "Name:string:0 Age:string:0 Request:string:0 Limit:string:0"),
        ("", "limitranges", "Name:string:0 Created_At:date:0"),
        ("", "componentstatuses", "Name:string:0 Status:string:0 Message:string:0 Error:string:0"),
        ("", "bindings", "Name:string:0 Created_At:date:0"),
        ("apiregistration.k8s.io", "apiservices", "Name:string:0 Service:string:0 Available:string:0 Age:string:0"),
        ("apps", "controllerrevisions", "Name:string:0 Controller:string:0 Revision:integer:0 Age:string:0"),
        ("events.k8s.io", "events", "Last_Seen:string:0 Type:string:0 Reason:string:0 Object:string:0 Subobject:string:1 Source:string:1 Message:string:0 First_Seen:string:1 Count:string:1 Name:string:1"),
        ("autoscaling", "horizontalpodautoscalers", "Name:string:0 Reference:string:0 Targets:string:0 MinPods:string:0 MaxPods:integer:0 Replicas:string:0 Age:string:0"),
        ("certificates.k8s.io", "certificatesigningrequests", "Name:string:0 Age:string:0 SignerName:string:0 Requestor:string:0 RequestedDuration:string:0 Condition:string:0"),
        ("networking.k8s.io", "ingressclasses", "Name:string:0 Controller:string:0 Parameters:string:0 Age:string:0"),
        ("networking.k8s.io", "networkpolicies", "Name:string:0 Pod-Selector:string:0 Age:string:0"),
        ("networking.k8s.io", "servicecidrs", "Name:string:0 CIDRs:string:0 Age:string:0"),
        ("networking.k8s.io", "ipaddresses", "Name:string:0 ParentRef:string:0 Age:string:0"),
        ("policy", "poddisruptionbudgets", "Name:string:0 Min_Available:string:0 Max_Unavailable:string:0 Allowed_Disruptions:integer:0 Age:string:0"),
        ("storage.k8s.io", "storageclasses", "Name:string:0 Provisioner:string:0 ReclaimPolicy:string:0 VolumeBindingMode:string:0 AllowVolumeExpansion:string:0 Age:string:0"),
        ("storage.k8s.io", "csidrivers", "Name:string:0 AttachRequired:boolean:0 PodInfoOnMount:boolean:0 StorageCapacity:boolean:0 TokenRequests:string:0 RequiresRepublish:boolean:0 Modes:string:0 Age:string:0"),
        ("storage.k8s.io", "csinodes", "Name:string:0 Drivers:integer:0 Age:string:0"),
        ("storage.k8s.io", "csistoragecapacities", "Name:string:0 StorageClassName:string:0 Capacity:string:0"),
        ("storage.k8s.io", "volumeattachments", "Name:string:0 Attacher:string:0 PV:string:0 Node:string:0 Attached:boolean:0 Age:string:0"),
        ("storage.k8s.io", "volumeattributesclasses", "Name:string:0 DriverName:string:0 Age:string:0"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "Name:string:0 Webhooks:integer:0 Age:string:0"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "Name:string:0 Webhooks:integer:0 Age:string:0"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies", "Name:string:0 Validations:integer:0 ParamKind:string:0 Age:string:0"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "Name:string:0 PolicyName:string:0 ParamRef:string:0 Age:string:0"),
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies", "Name:string:0 Mutations:integer:0 ParamKind:string:0 Age:string:0"),
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings", "Name:string:0 PolicyName:string:0 ParamRef:string:0 Age:string:0"),
        ("scheduling.k8s.io", "priorityclasses", "Name:string:0 Value:integer:0 Global-Default:boolean:0 Age:string:0 PreemptionPolicy:string:0"),
        ("node.k8s.io", "runtimeclasses", "Name:string:0 Handler:string:0 Age:string:0"),
        ("discovery.k8s.io", "endpointslices", "Name:string:0 AddressType:string:0 Ports:string:0 Endpoints:string:0 Age:string:0"),
        ("flowcontrol.apiserver.k8s.io", "flowschemas", "Name:string:0 PriorityLevel:string:0 MatchingPrecedence:string:0 DistinguisherMethod:string:0 Age:string:0 MissingPL:string:0"),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "Name:string:0 Type:string:0 NominalConcurrencyShares:string:0 Queues:string:0 HandSize:string:0 QueueLengthLimit:string:0 Age:string:0"),
        ("resource.k8s.io", "deviceclasses", "Name:string:0 Age:string:0"),
        ("resource.k8s.io", "resourceclaims", "Name:string:0 State:string:0 Age:string:0"),
        ("resource.k8s.io", "resourceclaimtemplates", "Name:string:0 Age:string:0"),
        ("resource.k8s.io", "resourceslices", "Name:string:0 Node:string:0 Driver:string:0 Pool:string:0 Age:string:0"),
    ];
    for (group, resource, columns) in expected {
        let got: Vec<String> = for_resource(group, resource)
            .columns()
            .iter()
            .map(|c| format!("{}:{}:{}", c.name.replace(' ', "_"), c.type_, c.priority))
            .collect();
        assert_eq!(got.join(" "), *columns, "{group}/{resource}");
        // Only the Name column has the name format; every column is described.
        for c in for_resource(group, resource).columns() {
            // (A pod template's first column is kube's "Template".)
            let first = c.name == "Name" || (*resource == "podtemplates" && c.name == "Template");
            assert_eq!(c.format == "name", first, "{resource} {}", c.name);
            assert!(!c.description.is_empty(), "{resource} {}", c.name);
        }
    }
    // Every served built-in is covered above.
    for r in crate::types::registry::builtin_resources() {
        assert!(expected.iter().any(|(g, res, _)| *g == r.group && *res == r.resource), "{}", r.resource);
    }
}

/// A realistic object of each kind, for the mutation property below.
fn samples() -> Vec<(&'static str, &'static str, Value)> {
    let meta = json!({"name": "x", "creationTimestamp": "2024-01-02T11:00:00Z", "labels": {"a": "b"}});
    vec![
        (
            "",
            "pods",
            json!({"metadata": meta, "spec": {"containers": [{"name": "c"}], "initContainers": [{"name": "i", "restartPolicy": "Always"}]},
            "status": {"phase": "Running", "initContainerStatuses": [{"name": "i", "state": {"terminated": {"exitCode": 1}}}],
                "containerStatuses": [{"name": "c", "restartCount": 1, "state": {"running": {}}, "lastState": {"terminated": {"finishedAt": "2024-01-02T11:00:00Z"}}}]}}),
        ),
        (
            "",
            "services",
            json!({"metadata": meta, "spec": {"type": "LoadBalancer", "ports": [{"port": 1, "nodePort": 2}]}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}),
        ),
        (
            "",
            "endpoints",
            json!({"metadata": meta, "subsets": [{"addresses": [{"ip": "1.2.3.4"}], "ports": [{"port": 80}]}]}),
        ),
        (
            "",
            "nodes",
            json!({"metadata": meta, "status": {"conditions": [{"type": "Ready", "status": "True"}], "addresses": [{"type": "InternalIP", "address": "a"}]}}),
        ),
        (
            "",
            "events",
            json!({"metadata": meta, "involvedObject": {"kind": "Pod", "name": "p"}, "series": {"count": 2, "lastObservedTime": "2024-01-02T11:00:00Z"}}),
        ),
        (
            "",
            "persistentvolumes",
            json!({"metadata": meta, "spec": {"accessModes": ["ReadWriteOnce"], "claimRef": {"name": "c"}}}),
        ),
        (
            "apps",
            "deployments",
            json!({"metadata": meta, "spec": {"replicas": 2, "selector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}}),
        ),
        (
            "batch",
            "jobs",
            json!({"metadata": meta, "spec": {"completions": 2}, "status": {"startTime": "2024-01-02T11:00:00Z", "conditions": [{"type": "Complete", "status": "True"}]}}),
        ),
        (
            "batch",
            "cronjobs",
            json!({"metadata": meta, "spec": {"schedule": "* * * * *", "suspend": true}, "status": {"lastScheduleTime": "2024-01-02T11:00:00Z"}}),
        ),
        ("networking.k8s.io", "ingresses", json!({"metadata": meta, "spec": {"rules": [{"host": "h"}], "tls": [{}]}})),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            json!({"metadata": meta, "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}]}),
        ),
    ]
}

/// Replaces the value at a pseudo-random position of `v` with `replacement`.
fn mutate(v: &mut Value, mut choice: usize, replacement: Value) {
    let mut current = v;
    loop {
        let children = match current {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if children == 0 || choice % 3 == 0 {
            *current = replacement;
            return;
        }
        let index = (choice / 3) % children;
        choice /= 7;
        current = match current {
            Value::Object(m) => m.values_mut().nth(index).unwrap(),
            Value::Array(a) => &mut a[index],
            _ => unreachable!(),
        };
        if choice == 0 {
            *current = replacement;
            return;
        }
    }
}

proptest::proptest! {
    #[test]
    fn mutated_objects_print_without_panicking(
        sample in 0usize..11,
        choices in proptest::collection::vec(0usize..100_000, 1..4),
        kind in 0u8..7,
        n in proptest::num::i64::ANY,
        text in "[-a-zA-Z0-9:.TZ ]{0,24}",
    ) {
        let (group, resource, mut object) = samples().swap_remove(sample);
        for choice in choices {
            let replacement = match kind {
                0 => Value::Null,
                1 => json!(n),
                2 => json!(text.clone()),
                3 => json!([]),
                4 => json!({}),
                5 => json!(true),
                _ => json!(f64::from(n as i32) / 3.0),
            };
            mutate(&mut object, choice, replacement);
        }
        let printer = for_resource(group, resource);
        proptest::prop_assert_eq!(printer.row(&object, now()).cells.len(), printer.columns().len());
    }
}

#[test]
fn every_builtin_printer_prints_any_json_with_one_cell_per_column() {
    let odd = [
        json!(null),
        json!({}),
        json!({"metadata": 5, "spec": "x", "status": []}),
        json!({"spec": {"metrics": [{"type": "Resource"}, 7], "ports": [{}], "limited": {"limitResponse": {"queuing": 1}}},
               "status": {"conditions": [{"type": "Available"}], "hard": {"a": 1}}, "endpoints": [{"addresses": [1]}]}),
    ];
    for r in crate::types::registry::builtin_resources() {
        let printer = for_resource(r.group, r.resource);
        for object in &odd {
            assert_eq!(printer.row(object, now()).cells.len(), printer.columns().len(), "{}", r.resource);
        }
    }
}

// pkg/printers/internalversion/printers.go: the cells of the kinds served
// since issue 15, for objects like those of tests/fixtures/kube-v1.36.
#[test]
fn cells_of_the_other_builtin_kinds() {
    let meta = json!({"name": "x", "creationTimestamp": "2024-01-02T11:00:00Z"});
    let row = |group: &str, resource: &str, mut object: Value| {
        object["metadata"] = meta.clone();
        for_resource(group, resource).row(&object, now()).cells
    };
    assert_eq!(
        row(
            "policy",
            "poddisruptionbudgets",
            json!({"spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}})
        ),
        [json!("x"), json!("2"), json!("N/A"), json!(1), json!("60m")]
    );
    assert_eq!(
        row(
            "autoscaling",
            "horizontalpodautoscalers",
            json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
                            {"type": "Pods", "pods": {"target": {"averageValue": "1k"}}},
                            {"type": "Resource", "resource": {"name": "memory", "target": {"averageValue": "1Gi"}}}]},
                "status": {"desiredReplicas": 0, "currentMetrics": null}})
        ),
        [
            json!("x"),
            json!("Deployment/web"),
            json!("cpu: <unknown>/70%, <unknown>/1k + 1 more..."),
            json!("2"),
            json!(10),
            json!(0),
            json!("60m")
        ]
    );
    // autoscaling/v1's target is one CPU utilization metric.
    assert_eq!(
        row("autoscaling", "horizontalpodautoscalers", json!({"spec": {"targetCPUUtilizationPercentage": 80}}))[2],
        json!("cpu: <unknown>/80%")
    );
    assert_eq!(row("autoscaling", "horizontalpodautoscalers", json!({}))[2..4], [json!("<none>"), json!("<unset>")]);
    // A v1 object prints every metric of the internal object: the CPU target
    // and those kept in the metrics annotation.
    let v1 = json!({"apiVersion": "autoscaling/v1", "metadata": {"annotations": {
            "autoscaling.alpha.kubernetes.io/metrics":
                r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]"#}},
        "spec": {"targetCPUUtilizationPercentage": 60}, "status": {"currentReplicas": 0, "desiredReplicas": 0}});
    let cells = for_resource("autoscaling", "horizontalpodautoscalers").row(&v1, now()).cells;
    assert_eq!(cells[2], json!("memory: <unknown>/100Mi, cpu: <unknown>/60%"));
    assert_eq!(
        row(
            "discovery.k8s.io",
            "endpointslices",
            json!({"addressType": "IPv4", "ports": [{"name": "http", "port": 8080}, {"name": "n"}, {}],
                "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4"]}]})
        ),
        [json!("x"), json!("IPv4"), json!("8080,n,*"), json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."), json!("60m")]
    );
    assert_eq!(row("discovery.k8s.io", "endpointslices", json!({}))[2], json!("<unset>"));
    let mut default_class = json!({"provisioner": "p"});
    default_class["metadata"] =
        json!({"name": "x", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}});
    assert_eq!(
        for_resource("storage.k8s.io", "storageclasses").row(&default_class, now()).cells[..5],
        [json!("x (default)"), json!("p"), json!("Delete"), json!("Immediate"), json!(false)]
    );
    assert_eq!(
        row(
            "",
            "resourcequotas",
            json!({"spec": {"hard": {"pods": "50", "limits.cpu": "2", "requests.cpu": "10"}},
            "status": {"hard": {"pods": "50", "limits.cpu": "2", "requests.cpu": "10"}, "used": {"pods": "3"}}})
        ),
        [json!("x"), json!("60m"), json!("pods: 3/50, requests.cpu: 0/10"), json!("limits.cpu: 0/2")]
    );
    assert_eq!(
        row("scheduling.k8s.io", "priorityclasses", json!({"value": 1000})),
        [json!("x"), json!(1000), json!(false), json!("60m"), json!("PreemptLowerPriority")]
    );
    assert_eq!(
        row(
            "networking.k8s.io",
            "ipaddresses",
            json!({"spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "kubernetes"}}})
        )[1],
        json!("services/default/kubernetes")
    );
    assert_eq!(row("networking.k8s.io", "networkpolicies", json!({"spec": {"podSelector": {}}}))[1], json!("<none>"));
    assert_eq!(row("apps", "controllerrevisions", json!({"revision": 3}))[1..3], [json!("<none>"), json!(3)]);
    let mut revision = json!({"revision": 2});
    revision["metadata"] = json!({"name": "r", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true}]});
    assert_eq!(
        for_resource("apps", "controllerrevisions").row(&revision, now()).cells[1],
        json!("daemonset.apps/agent")
    );
    assert_eq!(
        row(
            "certificates.k8s.io",
            "certificatesigningrequests",
            json!({"spec": {"signerName": "s", "username": "u", "expirationSeconds": 3600},
            "status": {"conditions": [{"type": "Approved"}], "certificate": "Y2VydA=="}})
        )[2..],
        [json!("s"), json!("u"), json!("60m"), json!("Approved,Issued")]
    );
    assert_eq!(
        row("storage.k8s.io", "csidrivers", json!({"spec": {}}))[1..7],
        [json!(true), json!(false), json!(false), json!("<unset>"), json!(false), json!("<none>")]
    );
    assert_eq!(row("apiregistration.k8s.io", "apiservices", json!({}))[1..3], [json!("Local"), json!("Unknown")]);
    assert_eq!(
        row(
            "apiregistration.k8s.io",
            "apiservices",
            json!({"spec": {"service": {"namespace": "kube-system", "name": "metrics"}},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}})
        )[1..3],
        [json!("kube-system/metrics"), json!("False (MissingEndpoints)")]
    );
    assert_eq!(
        row("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", json!({"spec": {"type": "Exempt"}}))[1..6],
        [json!("Exempt"), json!("<none>"), json!("<none>"), json!("<none>"), json!("<none>")]
    );
    assert_eq!(row("resource.k8s.io", "resourceclaims", json!({}))[1], json!("pending"));
    // events.k8s.io Events print as core Events (the fixture's event).
    let cells = row(
        "events.k8s.io",
        "events",
        json!({"eventTime": "2024-01-02T11:59:00.000000Z", "reportingController": "example.com/mirror",
            "reportingInstance": "mirror-1", "reason": "Started", "type": "Normal", "note": "started",
            "regarding": {"kind": "Pod", "name": "web-0"}, "deprecatedSource": {}}),
    );
    assert_eq!(
        cells,
        [
            json!("60s"),
            json!("Normal"),
            json!("Started"),
            json!("pod/web-0"),
            json!(""),
            json!("example.com/mirror, mirror-1"),
            json!("started"),
            json!("60s"),
            json!(1),
            json!("x")
        ]
    );
}
