//! The objects kube-apiserver keeps itself, as the real binary creates them
//! on a fresh data directory: the `default/kubernetes` Service with the first
//! address of `--service-cluster-ip-range` (claimed like any Service's), its
//! ServiceCIDR, the system PriorityClasses, the legacy token tracking
//! ConfigMap, the Priority and Fairness configuration, and, in RBAC mode,
//! kube's whole bootstrap policy; an operator's change to one is kept across a
//! restart.

mod common;

use common::{Launch, Server};
use serde_json::{json, Value};

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> =
        list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect();
    names.sort();
    names
}

/// A list kube-apiserver v1.36 served on a fresh cluster (`tests/fixtures/kube-v1.36/lists`).
fn fixture_list(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/kube-v1.36/lists/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `value` without the times in it (`time`, `lastTransitionTime`), which
/// differ between any two clusters.
fn without_times(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "time" && *k != "lastTransitionTime")
                .map(|(k, v)| (k.clone(), without_times(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_times).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_fresh_server_holds_kube_apiservers_own_objects_and_keeps_changes_to_them() {
    let mut server = Server::start_with(Launch {
        extra_args: vec!["--service-cluster-ip-range".into(), "10.96.0.0/16".into()],
        ..Launch::default()
    });
    let service = server.get_ok("/api/v1/namespaces/default/services/kubernetes");
    assert_eq!(service["spec"]["clusterIP"], "10.96.0.1", "{service}");
    assert_eq!(service["spec"]["ports"][0]["port"], 443);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], server.addr.port());
    assert_eq!(service["metadata"]["labels"]["provider"], "kubernetes");
    assert_eq!(service["metadata"]["managedFields"][0]["manager"], "kube-apiserver");
    // The address is claimed: another Service cannot take it.
    let taken = server.post_json(
        "/api/v1/namespaces/default/services",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "other"},
                "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}),
    );
    assert_eq!(taken.status, 422, "{}", taken.text());
    assert_eq!(names(&server.get_ok("/apis/networking.k8s.io/v1/ipaddresses")), ["10.96.0.1"]);
    let cidr = server.get_ok("/apis/networking.k8s.io/v1/servicecidrs/kubernetes");
    assert_eq!(cidr["spec"]["cidrs"], json!(["10.96.0.0/16"]));
    // Its Ready condition and both writers' managedFields, as a real
    // v1.36 cluster with the same range holds them (times aside).
    let kube_cidr = &fixture_list("networking.k8s.io_v1_servicecidrs")["items"][0];
    assert_eq!(without_times(&cidr["status"]), without_times(&kube_cidr["status"]), "{cidr}");
    assert_eq!(
        without_times(&cidr["metadata"]["managedFields"]),
        without_times(&kube_cidr["metadata"]["managedFields"]),
        "{cidr}"
    );
    assert_eq!(
        names(&server.get_ok("/apis/scheduling.k8s.io/v1/priorityclasses")),
        ["system-cluster-critical", "system-node-critical"]
    );
    let critical = server.get_ok("/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical");
    assert_eq!(critical["value"], 2_000_001_000);
    let tracking =
        server.get_ok("/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking");
    assert_eq!(tracking["data"]["since"].as_str().unwrap().len(), "2006-01-02".len(), "{tracking}");
    assert_eq!(names(&server.get_ok("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations")).len(), 8);
    let schemas = server.get_ok("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas");
    assert_eq!(names(&schemas).len(), 11);
    assert!(names(&schemas).contains(&"system-leader-election".to_string()));
    // Each says its priority level exists (Dangling False), applied by the
    // Priority and Fairness config consumer, as in the real cluster.
    let kube_schemas = fixture_list("flowcontrol.apiserver.k8s.io_v1_flowschemas");
    for kube in kube_schemas["items"].as_array().unwrap() {
        let ours = schemas["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == kube["metadata"]["name"])
            .unwrap();
        assert_eq!(without_times(&ours["status"]), without_times(&kube["status"]), "{ours}");
        assert_eq!(
            without_times(&ours["metadata"]["managedFields"]),
            without_times(&kube["metadata"]["managedFields"]),
            "{}",
            ours["metadata"]["name"]
        );
    }
    // The levels too: written by the config producer, as kube records it.
    let levels = server.get_ok("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations");
    let kube_levels = fixture_list("flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations");
    for kube in kube_levels["items"].as_array().unwrap() {
        let name = &kube["metadata"]["name"];
        let ours = levels["items"].as_array().unwrap().iter().find(|i| i["metadata"]["name"] == *name).unwrap();
        assert_eq!(
            without_times(&ours["metadata"]["managedFields"]),
            without_times(&kube["metadata"]["managedFields"]),
            "{name}"
        );
    }
    let cidr_version = cidr["metadata"]["resourceVersion"].clone();

    // An operator's change survives a restart; nothing is created twice.
    let patched = server.send_json(
        "PUT",
        "/apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical",
        &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "system-cluster-critical",
                             "resourceVersion": server.get_ok("/apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical")["metadata"]["resourceVersion"]},
                "value": 2_000_000_000, "description": "changed by the operator",
                "preemptionPolicy": "PreemptLowerPriority"}),
    );
    assert_eq!(patched.status, 200, "{}", patched.text());
    let before = server.get_ok("/api/v1/namespaces/default/services/kubernetes")["metadata"]["uid"].clone();
    // What kube-apiserver's own controllers keep is current: a restart
    // (their first pass, then the next) writes none of it again.
    let versions = |server: &Server| -> Vec<(String, Value)> {
        ["flowschemas", "prioritylevelconfigurations"]
            .iter()
            .flat_map(|r| {
                server.get_ok(&format!("/apis/flowcontrol.apiserver.k8s.io/v1/{r}"))["items"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .map(|i| (i["metadata"]["name"].as_str().unwrap().to_string(), i["metadata"]["resourceVersion"].clone()))
            .collect()
    };
    let flowcontrol_versions = versions(&server);
    server.terminate();
    server.restart();
    assert_eq!(versions(&server), flowcontrol_versions);
    let after = server.get_ok("/apis/scheduling.k8s.io/v1/priorityclasses/system-cluster-critical");
    assert_eq!(after["description"], "changed by the operator");
    assert_eq!(server.get_ok("/api/v1/namespaces/default/services/kubernetes")["metadata"]["uid"], before);
    assert_eq!(names(&server.get_ok("/api/v1/services")), ["kubernetes"]);
    // A ready ServiceCIDR is not written again.
    assert_eq!(
        server.get_ok("/apis/networking.k8s.io/v1/servicecidrs/kubernetes")["metadata"]["resourceVersion"],
        cidr_version
    );

    // The address stays reserved for it (kube's ipallocator), and a deleted
    // `kubernetes` Service comes back at the next start, at the same address.
    assert_eq!(server.delete("/api/v1/namespaces/default/services/kubernetes").status, 200);
    let squatter = server.post_json(
        "/api/v1/namespaces/default/services",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "squatter"},
                "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}),
    );
    assert_eq!(squatter.status, 422, "{}", squatter.text());
    server.terminate();
    server.restart();
    let service = server.get_ok("/api/v1/namespaces/default/services/kubernetes");
    assert_eq!(service["spec"]["clusterIP"], "10.96.0.1");
    assert_ne!(service["metadata"]["uid"], before);
}

#[test]
fn rbac_mode_writes_kubes_whole_bootstrap_policy() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "admin-token,admin,1,\"system:masters\"\n").unwrap();
    let server = Server::start_with(Launch {
        extra_args: vec![
            "--authorization-mode".into(),
            "RBAC".into(),
            "--token-auth-file".into(),
            tokens.display().to_string(),
        ],
        readyz_token: Some("admin-token".into()),
        ..Launch::default()
    });
    let list = |path: &str| -> Vec<String> {
        let r = server.request("GET", path, &[("Authorization", "Bearer admin-token")], None);
        assert_eq!(r.status, 200, "{}", r.text());
        names(&r.json())
    };
    let roles = list("/apis/rbac.authorization.k8s.io/v1/clusterroles");
    assert_eq!(roles.len(), 70, "{roles:?}");
    for name in [
        "system:kube-scheduler",
        "system:kube-controller-manager",
        "system:node",
        "system:controller:deployment-controller",
    ] {
        assert!(roles.contains(&name.to_string()), "{name}");
    }
    assert_eq!(list("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings").len(), 51);
    let roles = list("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles");
    assert!(roles.contains(&"system::leader-locking-kube-scheduler".to_string()), "{roles:?}");
    // Anonymous requests get what kube's policy gives them: /healthz, not the API.
    assert_eq!(server.request("GET", "/healthz", &[], None).status, 200);
    assert_eq!(server.request("GET", "/api/v1/namespaces", &[], None).status, 403);
}

/// Polls `done` every 50 ms for at most 15 s (kube-apiserver's controllers
/// here react to each write; the bound only keeps a failure from hanging).
#[track_caller]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let limit = std::time::Duration::from_secs(15);
    let deadline = std::time::Instant::now() + limit;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

const FS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const PLC: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";
const AUTO_UPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// The `Dangling` condition of the FlowSchema `name`, `null` while it has none.
fn dangling(server: &Server, name: &str) -> Value {
    let r = server.get(&format!("{FS}/{name}"));
    if r.status != 200 {
        return Value::Null;
    }
    let schema = r.json();
    schema["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Dangling"))
        .cloned()
        .unwrap_or(Value::Null)
}

fn merge_patch(server: &Server, path: &str, body: &Value) -> common::Response {
    let bytes = serde_json::to_vec(body).unwrap();
    server.request(
        "PATCH",
        path,
        &[("Content-Type", "application/merge-patch+json"), ("Accept", "application/json")],
        Some(&bytes),
    )
}

#[test]
fn kube_apiservers_own_controllers_keep_its_objects_current() {
    let server = Server::start();

    // A FlowSchema created after start-up gets its condition from the config
    // consumer: dangling while its level does not exist, not once it does,
    // dangling again when the level goes.
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "late"},
        "spec": {"priorityLevelConfiguration": {"name": "late-level"}, "matchingPrecedence": 5000,
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": "someone"}}],
                            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}]}});
    let created = server.post_json(FS, &schema);
    assert_eq!(created.status, 201, "{}", created.text());
    wait_until("the new FlowSchema's Dangling condition", || dangling(&server, "late")["status"] == "True");
    let condition = dangling(&server, "late");
    assert_eq!(condition["reason"], "NotFound", "{condition}");
    assert_eq!(
        condition["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"late-level\" but there is no such object"
    );
    let late = server.get_ok(&format!("{FS}/late"));
    let consumer = late["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["manager"] == "api-priority-and-fairness-config-consumer-v1")
        .cloned()
        .unwrap_or_else(|| panic!("{late}"));
    assert_eq!((&consumer["operation"], &consumer["subresource"]), (&json!("Apply"), &json!("status")), "{late}");

    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "late-level"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}});
    assert_eq!(server.post_json(PLC, &level).status, 201);
    wait_until("Dangling False once the level exists", || dangling(&server, "late")["status"] == "False");
    assert_eq!(dangling(&server, "late")["reason"], "Found");
    assert_eq!(server.delete(&format!("{PLC}/late-level")).status, 200);
    wait_until("Dangling True once the level is deleted", || dangling(&server, "late")["status"] == "True");
    // The consumer insists on the condition it keeps: another writer's is
    // replaced (at most six times a minute per FlowSchema, as kube).
    let overwritten = merge_patch(
        &server,
        &format!("{FS}/late/status"),
        &json!({"status": {"conditions": [{"type": "Dangling", "status": "False", "reason": "Mine",
                                           "message": "someone else's", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
    );
    assert_eq!(overwritten.status, 200, "{}", overwritten.text());
    wait_until("the consumer's condition back", || dangling(&server, "late")["reason"] == "NotFound");

    // The mandatory objects come back when deleted (the config producer),
    // and the schemas naming a mandatory level never dangle meanwhile.
    for path in [format!("{FS}/exempt"), format!("{PLC}/exempt"), format!("{PLC}/catch-all")] {
        let before = server.get_ok(&path)["metadata"]["uid"].clone();
        assert_eq!(server.delete(&path).status, 200, "{path}");
        wait_until(&format!("{path} back"), || {
            let r = server.get(&path);
            r.status == 200 && r.json()["metadata"]["uid"] != before
        });
        let back = server.get_ok(&path);
        assert_eq!(back["metadata"]["annotations"][AUTO_UPDATE], "true", "{back}");
        let managers = back["metadata"]["managedFields"].as_array().unwrap();
        assert!(
            managers.iter().any(|m| m["manager"] == "api-priority-and-fairness-config-producer-v1"
                && m["operation"] == "Update"
                && m["subresource"].is_null()),
            "{back}"
        );
    }
    wait_until("the recreated exempt FlowSchema's condition", || dangling(&server, "exempt")["status"] == "False");
    assert_eq!(dangling(&server, "probes")["status"], "False", "names the mandatory level exempt");

    // A mandatory object's spec is put back even when the operator says it
    // is theirs (kube's mandatory strategy ignores the annotation, and sets
    // it back to true).
    let patched = merge_patch(
        &server,
        &format!("{FS}/catch-all"),
        &json!({"metadata": {"annotations": {AUTO_UPDATE: "false"}}, "spec": {"matchingPrecedence": 9999}}),
    );
    assert_eq!(patched.status, 200, "{}", patched.text());
    wait_until("catch-all's spec put back", || {
        let fs = server.get_ok(&format!("{FS}/catch-all"));
        fs["spec"]["matchingPrecedence"] == 10000 && fs["metadata"]["annotations"][AUTO_UPDATE] == "true"
    });

    // A suggested object's spec is the operator's with `false`, the servers'
    // with `true`. The second write is after the first, so the pass that
    // puts it back has seen the first.
    let shares = |name: &str| {
        json!({"metadata": {"annotations": {AUTO_UPDATE: name}},
                                      "spec": {"limited": {"nominalConcurrencyShares": 77}}})
    };
    assert_eq!(merge_patch(&server, &format!("{PLC}/workload-low"), &shares("false")).status, 200);
    assert_eq!(merge_patch(&server, &format!("{PLC}/global-default"), &shares("true")).status, 200);
    wait_until("global-default's spec put back", || {
        server.get_ok(&format!("{PLC}/global-default"))["spec"]["limited"]["nominalConcurrencyShares"] == 20
    });
    let kept = server.get_ok(&format!("{PLC}/workload-low"));
    assert_eq!(kept["spec"]["limited"]["nominalConcurrencyShares"], 77, "{kept}");
    assert_eq!(kept["metadata"]["annotations"][AUTO_UPDATE], "false");

    // An object outside the bootstrap set that says the servers own it is
    // removed; one without that claim is the operator's and stays.
    let mut retired = level.clone();
    retired["metadata"] = json!({"name": "retired", "annotations": {AUTO_UPDATE: "true"}});
    let mut mine = level.clone();
    mine["metadata"] = json!({"name": "mine"});
    assert_eq!(server.post_json(PLC, &mine).status, 201);
    assert_eq!(server.post_json(PLC, &retired).status, 201);
    wait_until("the unwanted level removed", || server.get(&format!("{PLC}/retired")).status == 404);
    assert_eq!(server.get(&format!("{PLC}/mine")).status, 200);

    // The `kubernetes` ServiceCIDR: kube-apiserver alone gives it no
    // finalizer (kube-controller-manager's service-cidr-controller does), so
    // a DELETE removes it; the default ServiceCIDR controller creates it again
    // from the flag, Ready.
    let cidr_path = "/apis/networking.k8s.io/v1/servicecidrs/kubernetes";
    let cidr = server.get_ok(cidr_path);
    assert!(cidr["metadata"]["finalizers"].is_null(), "{cidr}");
    let deleted = server.delete(cidr_path);
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    wait_until("the kubernetes ServiceCIDR back and Ready", || {
        let r = server.get(cidr_path);
        let back = r.json();
        r.status == 200
            && back["metadata"]["uid"] != cidr["metadata"]["uid"]
            && back["status"]["conditions"][0]["status"] == "True"
    });
    let back = server.get_ok(cidr_path);
    assert_eq!(back["spec"], cidr["spec"]);
    assert_eq!(without_times(&back["status"]), without_times(&cidr["status"]));
    assert_eq!(without_times(&back["metadata"]["managedFields"]), without_times(&cidr["metadata"]["managedFields"]));
}
