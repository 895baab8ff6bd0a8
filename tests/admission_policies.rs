//! ValidatingAdmissionPolicy against the real binary: a stored policy and
//! its binding refuse the writes their CEL validations fail, with kube's
//! words, code and reason; params (a ConfigMap named by the binding, and the
//! "no params found" refusal while it is missing); `Warn` bindings become
//! Warning headers; namespace selectors, messageExpression and reasons;
//! deletes; kubectl's view; and a deleted policy refuses nothing.

mod common;

use common::Server;
use serde_json::{json, Value};

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    })
}

fn deployments_rule() -> Value {
    json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]})
}

fn create(s: &Server, path: &str, body: &Value) {
    let r = s.post_json(path, body);
    assert_eq!(r.status, 201, "{path}: {}", r.text());
}

#[test]
fn policies_refuse_what_their_validations_fail_as_kube_refuses_it() {
    let s = Server::start();
    create(
        &s,
        POLICIES,
        &json!({
            "metadata": {"name": "replicas-limit"},
            "spec": {
                "matchConstraints": deployments_rule(),
                "validations": [{"expression": "object.spec.replicas <= 5", "message": "replicas must be no greater than 5"}]
            }
        }),
    );
    // A policy binds nothing until a binding names it.
    create(&s, DEPLOYMENTS, &deployment("before-binding", 9));
    create(
        &s,
        BINDINGS,
        &json!({"metadata": {"name": "replicas-limit-binding"},
                "spec": {"policyName": "replicas-limit", "validationActions": ["Deny"]}}),
    );
    create(&s, DEPLOYMENTS, &deployment("small", 3));
    let r = s.post_json(DEPLOYMENTS, &deployment("big", 9));
    assert_eq!(r.status, 422, "{}", r.text());
    let status = r.json();
    let inner = "ValidatingAdmissionPolicy 'replicas-limit' with binding 'replicas-limit-binding' denied request: replicas must be no greater than 5";
    assert_eq!(status["message"], format!("deployments.apps \"big\" is forbidden: {inner}"));
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["details"],
        json!({"name": "big", "group": "apps", "kind": "deployments", "causes": [{"message": inner}]})
    );
    // An update is checked too; the stored object is untouched.
    let mut small = s.get_ok(&format!("{DEPLOYMENTS}/small"));
    small["spec"]["replicas"] = json!(7);
    let r = s.put_json(&format!("{DEPLOYMENTS}/small"), &small);
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(s.get_ok(&format!("{DEPLOYMENTS}/small"))["spec"]["replicas"], 3);
    // kubectl prints kube's words.
    let manifest = serde_json::to_string(&deployment("via-kubectl", 8)).unwrap();
    let path = std::env::temp_dir().join(format!("vap-{}.json", std::process::id()));
    std::fs::write(&path, manifest).unwrap();
    let out = s.kubectl(&["create", "-f", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert!(!out.status.success());
    assert!(out.stderr.contains(inner), "{}", out.stderr);

    // Deleting the policy lifts it.
    assert!(s.delete(&format!("{POLICIES}/replicas-limit")).status < 300);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = s.post_json(DEPLOYMENTS, &deployment("after", 9));
        if r.status == 201 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still refused: {}", r.text());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn params_warnings_selectors_and_reasons() {
    let s = Server::start();
    create(
        &s,
        POLICIES,
        &json!({
            "metadata": {"name": "max-from-params"},
            "spec": {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": deployments_rule(),
                "variables": [{"name": "max", "expression": "int(params.data.max)"}],
                "validations": [{
                    "expression": "object.spec.replicas <= variables.max",
                    "messageExpression": "'at most ' + string(variables.max) + ' replicas'",
                    "reason": "Forbidden"
                }]
            }
        }),
    );
    create(
        &s,
        BINDINGS,
        &json!({"metadata": {"name": "max-binding"},
                "spec": {"policyName": "max-from-params", "validationActions": ["Deny"],
                         "paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}}}),
    );
    // The param is missing: kube's configuration error, under failurePolicy Fail.
    let r = s.post_json(DEPLOYMENTS, &deployment("no-params", 1));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "deployments.apps \"no-params\" is forbidden: ValidatingAdmissionPolicy 'max-from-params' with binding 'max-binding' \
         denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
    create(&s, "/api/v1/namespaces/default/configmaps", &json!({"metadata": {"name": "limits"}, "data": {"max": "2"}}));
    create(&s, DEPLOYMENTS, &deployment("two", 2));
    let r = s.post_json(DEPLOYMENTS, &deployment("three", 3));
    assert_eq!(r.status, 403, "{}", r.text());
    let status = r.json();
    assert_eq!(status["reason"], "Forbidden");
    assert!(status["message"].as_str().unwrap().ends_with("denied request: at most 2 replicas"), "{status}");

    // Under failurePolicy Ignore a configuration error (the params missing)
    // passes the binding over: its validation, which would deny, is not run.
    create(
        &s,
        POLICIES,
        &json!({"metadata": {"name": "ignored"},
                "spec": {"failurePolicy": "Ignore",
                         "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                         "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["secrets"]}]},
                         "validations": [{"expression": "false"}]}}),
    );
    create(
        &s,
        BINDINGS,
        &json!({"metadata": {"name": "ignored-binding"},
                "spec": {"policyName": "ignored", "validationActions": ["Deny"],
                         "paramRef": {"name": "absent", "namespace": "default", "parameterNotFoundAction": "Deny"}}}),
    );
    create(&s, "/api/v1/namespaces/default/secrets", &json!({"metadata": {"name": "passes"}}));
    create(&s, "/api/v1/namespaces/default/configmaps", &json!({"metadata": {"name": "absent"}}));
    let r = s.post_json("/api/v1/namespaces/default/secrets", &json!({"metadata": {"name": "now-denied"}}));
    assert_eq!(r.status, 422, "with its params present the validation runs: {}", r.text());

    // A Warn binding admits, with kube's warning; only in namespaces its selector picks.
    create(
        &s,
        POLICIES,
        &json!({"metadata": {"name": "labelled"},
                "spec": {"matchConstraints": {
                             "namespaceSelector": {"matchLabels": {"env": "prod"}},
                             "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
                         "validations": [{"expression": "has(object.metadata.labels) && 'owner' in object.metadata.labels"}]}}),
    );
    create(
        &s,
        BINDINGS,
        &json!({"metadata": {"name": "labelled-warn"}, "spec": {"policyName": "labelled", "validationActions": ["Warn"]}}),
    );
    create(&s, "/api/v1/namespaces", &json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}));
    let r = s.post_json("/api/v1/namespaces/prod/configmaps", &json!({"metadata": {"name": "unowned"}}));
    assert_eq!(r.status, 201, "{}", r.text());
    let warning = r.header("Warning").unwrap_or_default().to_string();
    assert!(
        warning.contains(
            "Validation failed for ValidatingAdmissionPolicy 'labelled' with binding 'labelled-warn': failed expression: \
             has(object.metadata.labels) && 'owner' in object.metadata.labels"
        ),
        "{warning}"
    );
    let r = s.post_json("/api/v1/namespaces/default/configmaps", &json!({"metadata": {"name": "elsewhere"}}));
    assert_eq!(r.status, 201);
    assert_eq!(r.header("Warning"), None, "the namespaceSelector leaves default out");
}
