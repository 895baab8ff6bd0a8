//! The default admission plugins against a real `shardline` process, over
//! raw HTTP (and kubectl for PodSecurity's warnings and refusals): the ones that need no other resource served
//! (DefaultTolerationSeconds, TaintNodesByCondition, Priority with no
//! PriorityClass stored and with the built-in classes, PodSecurity), and the
//! `--enable-admission-plugins`/`--disable-admission-plugins` flags. The
//! plugins that read LimitRanges, ResourceQuotas and StorageClasses are
//! tested in process (`src/api/handlers/admission.rs`) and as pure functions
//! (`src/strategy/admission/`) until those resources are served.

mod common;

use common::{assert_status, shardline_bin, wait_timeout, Launch, Server};
use serde_json::{json, Value};
use std::time::Duration;

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}
    })
}

fn toleration_keys(pod: &Value) -> Vec<(String, Value)> {
    pod["spec"]["tolerations"]
        .as_array()
        .map(|t| {
            t.iter().map(|t| (t["key"].as_str().unwrap_or("").to_string(), t["tolerationSeconds"].clone())).collect()
        })
        .unwrap_or_default()
}

#[test]
fn pods_get_default_tolerations_priority_and_preemption_policy() {
    let s = Server::start();
    let r = s.post_json(PODS, &pod("plain"));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    // plugin/pkg/admission/defaulttolerationseconds: 300 s for not-ready and unreachable.
    assert_eq!(
        toleration_keys(&created),
        [
            ("node.kubernetes.io/not-ready".to_string(), json!(300)),
            ("node.kubernetes.io/unreachable".to_string(), json!(300))
        ]
    );
    assert_eq!(created["spec"]["tolerations"][0]["operator"], "Exists");
    assert_eq!(created["spec"]["tolerations"][0]["effect"], "NoExecute");
    // tests/fixtures/kube-v1.36/lists/core_v1_pods.json: no class, priority 0, PreemptLowerPriority.
    assert_eq!(created["spec"]["priority"], 0);
    assert_eq!(created["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert!(created["spec"].get("priorityClassName").is_none(), "{created}");
    assert_eq!(s.get_ok(&format!("{PODS}/plain")), created, "stored as answered");

    // A pod that tolerates every NoExecute taint keeps its own toleration only.
    let mut tolerant = pod("tolerant");
    tolerant["spec"]["tolerations"] = json!([{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]);
    let created = s.post_json(PODS, &tolerant).json();
    assert_eq!(toleration_keys(&created), [(String::new(), json!(30))]);

    // The built-in classes resolve with no PriorityClass stored.
    let mut critical = pod("critical");
    critical["spec"]["priorityClassName"] = json!("system-node-critical");
    let r = s.post_json(PODS, &critical);
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["spec"]["priority"], 2_000_001_000);

    // dryRun runs admission too.
    let r = s.post_json(&format!("{PODS}?dryRun=All"), &pod("dry"));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(toleration_keys(&r.json()).len(), 2);
    assert_eq!(s.get(&format!("{PODS}/dry")).status, 404);
}

#[test]
fn priority_refusals_are_kubes_403s() {
    let s = Server::start();
    let mut gold = pod("gold");
    gold["spec"]["priorityClassName"] = json!("gold");
    let status = assert_status(&s.post_json(PODS, &gold), 403, "Forbidden");
    assert_eq!(status["message"], "pods \"gold\" is forbidden: no PriorityClass with name gold was found");
    assert_eq!(status["details"]["name"], "gold", "{status}");
    assert_eq!(status["details"]["kind"], "pods", "{status}");

    let mut given = pod("given");
    given["spec"]["priority"] = json!(10);
    let status = assert_status(&s.post_json(PODS, &given), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"given\" is forbidden: the integer value of priority (10) must not be provided in pod spec; priority \
         admission controller computed 0 from the given PriorityClass name"
    );
    assert_eq!(s.get(&format!("{PODS}/gold")).status, 404, "nothing stored");
}

#[test]
fn updates_keep_priority_and_tolerations() {
    let s = Server::start();
    let created = s.post_json(PODS, &pod("web")).json();
    // A PUT of the original body (without what admission added) keeps them.
    let mut replace = pod("web");
    replace["metadata"]["labels"] = json!({"app": "web"});
    replace["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let r = s.put_json(&format!("{PODS}/web"), &replace);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();
    assert_eq!(updated["spec"]["priority"], 0);
    assert_eq!(updated["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(toleration_keys(&updated).len(), 2);
    assert_eq!(updated["metadata"]["labels"]["app"], "web");
}

#[test]
fn new_nodes_get_the_not_ready_taint() {
    let s = Server::start();
    let node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a"},
        "spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]}
    });
    let r = s.post_json("/api/v1/nodes", &node);
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(
        created["spec"]["taints"],
        json!([
            {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
        ])
    );
    // Only on create: the node lifecycle controller removes it later.
    let mut ready = created.clone();
    ready["spec"]["taints"] = json!([]);
    let r = s.put_json("/api/v1/nodes/node-a", &ready);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["spec"].get("taints").is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty())));
}

fn namespace(s: &Server, name: &str, labels: Value) {
    let r = s.post_json("/api/v1/namespaces", &json!({"metadata": {"name": name, "labels": labels}}));
    assert_eq!(r.status, 201, "{}", r.text());
}

fn warnings(r: &common::http::Response) -> Vec<String> {
    r.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("warning")).map(|(_, v)| v.clone()).collect()
}

#[test]
fn pod_security_enforces_and_warns_by_namespace_labels() {
    let s = Server::start();
    namespace(
        &s,
        "secure",
        json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}),
    );
    let pods = "/api/v1/namespaces/secure/pods";
    let mut privileged = pod("priv");
    privileged["spec"]["containers"][0]["securityContext"] = json!({"privileged": true});
    let status = assert_status(&s.post_json(pods, &privileged), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"priv\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"app\" must \
         not set securityContext.privileged=true)"
    );
    assert_eq!(s.get(&format!("{pods}/priv")).status, 404);

    // Baseline passes; restricted is only warned about.
    let r = s.post_json(pods, &pod("plain"));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        warnings(&r),
        ["299 - \"would violate PodSecurity \\\"restricted:latest\\\": allowPrivilegeEscalation != false (container \
          \\\"app\\\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \
          \\\"app\\\" must set securityContext.capabilities.drop=[\\\"ALL\\\"]), runAsNonRoot != true (pod or \
          container \\\"app\\\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \
          \\\"app\\\" must set securityContext.seccompProfile.type to \\\"RuntimeDefault\\\" or \\\"Localhost\\\")\""]
    );

    // A workload is never refused, only warned about (at the enforce level too).
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"hostNetwork": true, "containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    });
    let r = s.post_json("/apis/apps/v1/namespaces/secure/deployments", &deployment);
    assert_eq!(r.status, 201, "{}", r.text());
    let warned = warnings(&r);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("299 - \"would violate PodSecurity \\\"restricted:latest\\\": host namespaces"),
        "{warned:?}"
    );

    // A namespace without labels is privileged: no check, no warning.
    let r = s.post_json(PODS, &privileged);
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(warnings(&r).is_empty());
}

#[test]
fn plugins_can_be_disabled_by_kubes_names() {
    let s = Server::start_with(Launch {
        extra_args: ["--disable-admission-plugins", "DefaultTolerationSeconds,Priority,PodSecurity"]
            .map(String::from)
            .to_vec(),
        ..Launch::default()
    });
    let r = s.post_json(PODS, &pod("bare"));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert!(created["spec"].get("tolerations").is_none(), "{created}");
    assert!(created["spec"].get("priority").is_none(), "{created}");
    let mut gold = pod("gold");
    gold["spec"]["priorityClassName"] = json!("gold");
    assert_eq!(s.post_json(PODS, &gold).status, 201, "Priority is off");
}

#[test]
fn unknown_or_overlapping_plugins_stop_the_server() {
    for flags in [
        ["--enable-admission-plugins", "NoSuchPlugin", "--disable-admission-plugins", ""],
        ["--enable-admission-plugins", "Priority", "--disable-admission-plugins", "Priority"],
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = std::process::Command::new(shardline_bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .args(flags)
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
        let status = status.unwrap_or_else(|| panic!("shardline with {flags:?} kept running"));
        assert!(!status.success(), "{flags:?}");
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
        }
        assert!(stderr.contains("admission"), "{flags:?}: {stderr}");
    }
}

#[test]
fn claims_and_volumes_get_protection_finalizers() {
    // tests/fixtures/kube-v1.36/lists/core_v1_persistentvolumeclaims.json: data.
    let s = Server::start();
    let claim = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "storageClassName": "standard"}
    });
    let r = s.post_json("/api/v1/namespaces/default/persistentvolumeclaims", &claim);
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["finalizers"], json!(["kubernetes.io/pvc-protection"]));
    let volume = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data/pv-1"}}
    });
    let r = s.post_json("/api/v1/persistentvolumes", &volume);
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["finalizers"], json!(["kubernetes.io/pv-protection"]));
}

#[test]
fn pods_created_on_a_node_get_its_topology_labels() {
    // tests/fixtures/kube-v1.36/lists/core_v1_pods.json: web-0 on node-a gets its zone.
    let s = Server::start();
    let node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "z1"}}
    });
    assert_eq!(s.post_json("/api/v1/nodes", &node).status, 201);
    let mut placed = pod("web-0");
    placed["metadata"]["labels"] = json!({"app": "web"});
    placed["spec"]["nodeName"] = json!("node-a");
    let r = s.post_json(PODS, &placed);
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"], json!({"app": "web", "topology.kubernetes.io/zone": "z1"}));
    let r = s.post_json(PODS, &pod("unplaced"));
    assert!(r.json()["metadata"].get("labels").is_none());
}

#[test]
fn namespace_labels_are_validated_and_stricter_levels_warn_about_existing_pods() {
    let s = Server::start();
    let bad = json!({"metadata": {"name": "bad", "labels": {"pod-security.kubernetes.io/enforce": "strict"}}});
    let status = assert_status(&s.post_json("/api/v1/namespaces", &bad), 422, "Invalid");
    assert_eq!(
        status["message"],
        "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": \
         must be one of privileged, baseline, restricted"
    );
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.labels[pod-security.kubernetes.io/enforce]");

    namespace(&s, "apps", json!({}));
    let mut host = pod("host");
    host["spec"]["hostPID"] = json!(true);
    assert_eq!(s.post_json("/api/v1/namespaces/apps/pods", &host).status, 201);
    let mut current = s.get_ok("/api/v1/namespaces/apps");
    current["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = json!("baseline");
    let r = s.put_json("/api/v1/namespaces/apps", &current);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        warnings(&r),
        [
            "299 - \"existing pods in namespace \\\"apps\\\" violate the new PodSecurity enforce level \\\"baseline:latest\\\"\"",
            "299 - \"host: host namespaces\""
        ]
    );
    // The existing pod stays; a new one like it is refused.
    assert_eq!(s.get("/api/v1/namespaces/apps/pods/host").status, 200);
    host["metadata"]["name"] = json!("host2");
    assert_status(&s.post_json("/api/v1/namespaces/apps/pods", &host), 403, "Forbidden");
}

#[test]
fn kubectl_shows_pod_security_warnings_and_refusals() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "guarded"]);
    s.kubectl_ok(&[
        "label",
        "namespace",
        "guarded",
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    let out = s.kubectl_ok(&["run", "web", "-n", "guarded", "--image=nginx", "--restart=Never"]);
    assert!(
        out.stderr
            .contains("Warning: would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"),
        "{}",
        out.stderr
    );
    let out = s.kubectl(&["run", "priv", "-n", "guarded", "--image=nginx", "--restart=Never", "--privileged"]);
    assert!(!out.status.success());
    assert!(
        out.stderr.contains(
            "pods \"priv\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"priv\" must \
             not set securityContext.privileged=true)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn service_account_admission_when_enabled() {
    let s = Server::start_with(Launch {
        extra_args: ["--enable-admission-plugins", "ServiceAccount"].map(String::from).to_vec(),
        ..Launch::default()
    });
    let status = assert_status(&s.post_json(PODS, &pod("early")), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"early\" is forbidden: error looking up service account default/default: serviceaccount \"default\" \
         not found"
    );
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    assert_eq!(s.post_json("/api/v1/namespaces/default/serviceaccounts", &account).status, 201);
    let r = s.post_json(PODS, &pod("web"));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["spec"]["serviceAccountName"], "default");
    let volume = created["spec"]["volumes"][0]["name"].as_str().unwrap_or("").to_string();
    assert!(volume.starts_with("kube-api-access-") && volume.len() == "kube-api-access-".len() + 5, "{created}");
    assert_eq!(
        created["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
}
