//! The core kinds of `tests/fixtures/kube-v1.36/objects.yaml` (manifests a
//! real kube-apiserver v1.36.2 was given) through
//! [`crate::strategy::decode_and_default`] and [`crate::strategy::create`],
//! compared with what that kube-apiserver stored and served for them
//! (`tests/fixtures/kube-v1.36/lists/core_v1_*.json`).
//!
//! Field order is not compared (serde_json's ordered maps compare as maps;
//! `strategy::finish` orders fields). What this layer does not produce is
//! removed from both sides before comparing, each with its reason in
//! [`IGNORED`].

use crate::strategy::{create, decode_and_default, update, Context, Object};
use crate::types::registry::Registry;
use serde_json::Value;

/// (kind, JSON pointer of a field or map entry) left out of the comparison,
/// and why.
const IGNORED: &[(&str, &str, &str)] = &[
    // Allocation (strategy/allocate.rs, another step): cluster IPs, IP
    // families and node ports.
    ("Service", "/spec/clusterIP", "allocation"),
    ("Service", "/spec/clusterIPs", "allocation"),
    ("Service", "/spec/ipFamilies", "allocation"),
    ("Service", "/spec/ipFamilyPolicy", "allocation"),
    ("Service", "/spec/ports/*/nodePort", "allocation"),
    // Admission plugins (strategy/admission.rs, another step): Priority
    // (priority, preemptionPolicy), DefaultTolerationSeconds, ServiceAccount,
    // PodTopologyLabels (the node's topology labels copied to a bound pod),
    // StorageObjectInUseProtection (the PV/PVC protection finalizers).
    ("Pod", "/spec/priority", "Priority admission"),
    ("Pod", "/spec/preemptionPolicy", "Priority admission"),
    ("Pod", "/spec/tolerations", "DefaultTolerationSeconds admission"),
    ("Pod", "/spec/serviceAccountName", "ServiceAccount admission"),
    ("Pod", "/spec/serviceAccount", "ServiceAccount admission"),
    ("Pod", "/metadata/labels/topology.kubernetes.io~1zone", "PodTopologyLabels admission"),
    ("PersistentVolume", "/metadata/finalizers", "StorageObjectInUseProtection admission"),
    ("PersistentVolumeClaim", "/metadata/finalizers", "StorageObjectInUseProtection admission"),
    // Go's encoding of zero-valued non-pointer structs (NodeStatus's
    // daemonEndpoints and nodeInfo): the decoder's re-encoding
    // (strategy/decode.rs), not a default.
    ("Node", "/status/daemonEndpoints", "zero-struct encoding"),
    ("Node", "/status/nodeInfo", "zero-struct encoding"),
];

/// Metadata set by the API layer or by kubectl, not by this layer.
const SERVER_METADATA: &[&str] =
    &["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "annotations"];

fn fixture(path: &str) -> String {
    let full = format!("{}/tests/fixtures/kube-v1.36/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// Removes `pointer` (with `*` for every list item) from `value`.
fn remove(value: &mut Value, pointer: &str) {
    let parts: Vec<String> = pointer.trim_start_matches('/').split('/').map(|p| p.replace("~1", "/")).collect();
    remove_parts(value, &parts);
}

fn remove_parts(value: &mut Value, parts: &[String]) {
    match parts {
        [] => {}
        [last] => {
            if let Some(object) = value.as_object_mut() {
                object.shift_remove(last.as_str());
            }
        }
        [first, rest @ ..] if first == "*" => {
            for item in value.as_array_mut().into_iter().flatten() {
                remove_parts(item, rest);
            }
        }
        [first, rest @ ..] => {
            if let Some(child) = value.get_mut(first.as_str()) {
                remove_parts(child, rest);
            }
        }
    }
}

/// The comparable part of an object of `kind`.
fn comparable(kind: &str, mut object: Value) -> Value {
    for (ignored_kind, pointer, _why) in IGNORED {
        if *ignored_kind == kind {
            remove(&mut object, pointer);
        }
    }
    for field in SERVER_METADATA {
        remove(&mut object, &format!("/metadata/{field}"));
    }
    for field in ["apiVersion", "kind"] {
        remove(&mut object, &format!("/{field}"));
    }
    object
}

fn served(resource: &str, name: &str, namespace: Option<&str>) -> Option<Value> {
    let list: Value = serde_json::from_str(&fixture(&format!("lists/core_v1_{resource}.json"))).ok()?;
    list.get("items")?
        .as_array()?
        .iter()
        .find(|item| {
            let meta = &item["metadata"];
            meta["name"].as_str() == Some(name) && meta["namespace"].as_str() == namespace
        })
        .cloned()
}

#[test]
fn core_manifests_match_kube_apiserver() {
    let registry = Registry::builtin();
    // kubectl reads YAML 1.1: `defaultMode: 0444` is octal (292).
    let mut options = serde_saphyr::Options::default();
    options.legacy_octal_numbers = true;
    let documents: Vec<Value> =
        serde_saphyr::from_multiple_with_options(&fixture("objects.yaml"), options).expect("objects.yaml parses");
    let mut compared = Vec::new();
    for document in documents {
        if document["apiVersion"] != "v1" {
            continue;
        }
        let kind = document["kind"].as_str().unwrap_or("").to_string();
        let Some(info) = registry.by_kind("", "v1", &kind) else {
            continue; // Not served by Shardline.
        };
        let name = document["metadata"]["name"].as_str().unwrap_or("").to_string();
        let namespace = document["metadata"]["namespace"].as_str().map(str::to_string);
        let expected = served(&info.resource, &name, namespace.as_deref())
            .unwrap_or_else(|| panic!("{kind} {name}: not in lists/core_v1_{}.json", info.resource));
        let now = expected["metadata"]["creationTimestamp"].as_str().unwrap_or("").to_string();
        let mut object: Object = document.as_object().cloned().unwrap_or_default();
        let context = Context { now: &now, subresource: None, user: None };
        assert_eq!(decode_and_default(info, &mut object), Ok(()), "{kind} {name}");
        assert_eq!(create(info, &mut object, &context), Ok(()), "{kind} {name}");
        // Writing back what was stored changes nothing, through the
        // resource and through /status (defaults and rules are idempotent).
        for subresource in [None, Some("status")] {
            let mut again = object.clone();
            let context = Context { now: "2030-01-01T00:00:00Z", subresource, user: None };
            assert_eq!(decode_and_default(info, &mut again), Ok(()), "{kind} {name}");
            assert_eq!(update(info, &mut again, &object, &context), Ok(()), "{kind} {name}");
            assert_eq!(again, object, "{kind} {name}: a write-back through {subresource:?} changed it");
        }
        let got = comparable(&kind, Value::Object(object));
        let want = comparable(&kind, expected);
        assert_eq!(
            got,
            want,
            "{kind} {name}:\n got {}\nwant {}",
            serde_json::to_string(&got).unwrap_or_default(),
            serde_json::to_string(&want).unwrap_or_default()
        );
        compared.push(kind);
    }
    compared.sort();
    compared.dedup();
    // Every served core kind the manifests hold was compared.
    let expected_kinds = [
        "ConfigMap",
        "LimitRange",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Pod",
        "ResourceQuota",
        "Secret",
        "Service",
        "ServiceAccount",
    ];
    assert_eq!(compared, expected_kinds);
}
