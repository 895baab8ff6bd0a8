//! kube-apiserver's etcd layout (`--storage-layout kubernetes`) against real
//! bytes: `tests/fixtures/kube-v1.36/` holds what kube-apiserver v1.36.2 wrote
//! to etcd (`range.json`, at revision R) and what it answered for every list
//! at R (`lists/`). Every value Shardline can map is decoded and compared,
//! byte for byte, with the item kube-apiserver served for it.
//!
//! Owns: the translation of kube's keys and storage encodings
//! (`api::kube_storage`) held to kube's own answers.

use base64::Engine;
use bytes::Bytes;
use serde_json::Value;
use shardline::api::kube_storage;
use shardline::log::Revision;
use shardline::types::key::ObjectKey;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kube-v1.36")
}

fn b64(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap_or("")).expect("base64 in the fixture")
}

/// kube's list answers, by (group, resource), each item by (namespace, name).
fn kube_lists() -> BTreeMap<(String, String), BTreeMap<(String, String), Value>> {
    let mut lists = BTreeMap::new();
    for entry in std::fs::read_dir(fixtures().join("lists")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mut parts = stem.splitn(3, '_');
        let (group, _version, resource) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let group = if group == "core" { "" } else { group };
        let list: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let items = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                let meta = &item["metadata"];
                let text = |v: &Value| v.as_str().unwrap_or("").to_string();
                ((text(&meta["namespace"]), text(&meta["name"])), item.clone())
            })
            .collect();
        lists.insert((group.to_string(), resource.to_string()), items);
    }
    lists
}

/// What kube's list answers hold that these keys do not (justified): the
/// events.k8s.io/v1 list is kube's conversion of the core events (Shardline
/// keeps events.k8s.io events apart, see docs/operations.md); componentstatuses
/// are not stored.
const NOT_FROM_THESE_KEYS: &[(&str, &str)] = &[("events.k8s.io", "events"), ("", "componentstatuses")];

#[test]
fn every_stored_object_decodes_to_what_kube_apiserver_served() {
    let range: Value = serde_json::from_slice(&std::fs::read(fixtures().join("range.json")).unwrap()).unwrap();
    let mut lists = kube_lists();
    let (mut equal, mut ignored) = (0, Vec::new());
    let mut differences = Vec::new();
    for kv in range["kvs"].as_array().unwrap() {
        let kube_key = b64(&kv["key"]);
        let Some(internal) = kube_storage::internal_key(&kube_key) else {
            ignored.push(String::from_utf8_lossy(&kube_key).to_string());
            continue;
        };
        let key = ObjectKey::decode(&internal).unwrap();
        let json = kube_storage::decode_value(&b64(&kv["value"]))
            .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&kube_key)));
        let revision = |name: &str| Revision(kv[name].as_u64().or_else(|| kv[name].as_str()?.parse().ok()).unwrap());
        let cached = shardline::cache::encode_stored(
            Bytes::from(internal.clone()),
            &json,
            revision("mod_revision"),
            revision("create_revision"),
            &[],
        )
        .unwrap();
        let served = lists
            .get_mut(&(key.group.clone(), key.resource.clone()))
            .and_then(|items| items.remove(&(key.namespace.clone(), key.name.clone())));
        let Some(served) = served else {
            differences.push(format!("{}: kube-apiserver did not list it", String::from_utf8_lossy(&kube_key)));
            continue;
        };
        let expected = serde_json::to_string(&served).unwrap();
        // A list's typed items carry no kind and apiVersion in kube's JSON
        // (the list's own say them; custom resources' do); a GET's object does.
        let mut ours: serde_json::Map<String, Value> = serde_json::from_slice(&cached.json).unwrap();
        assert!(ours.get("kind").is_some_and(Value::is_string), "the object says its kind");
        if served.get("kind").is_none() {
            ours.shift_remove("kind");
            ours.shift_remove("apiVersion");
        }
        let ours = serde_json::to_string(&ours).unwrap();
        if ours == expected {
            equal += 1;
        } else {
            let at =
                ours.bytes().zip(expected.bytes()).position(|(a, b)| a != b).unwrap_or(ours.len().min(expected.len()));
            let from = at.saturating_sub(80);
            differences.push(format!(
                "{}: differs at byte {at}\n  ours:  ...{}\n  kube:  ...{}",
                String::from_utf8_lossy(&kube_key),
                &ours[from..(at + 120).min(ours.len())],
                &expected[from..(at + 120).min(expected.len())]
            ));
        }
    }
    // Every item kube listed came from a key read above.
    for ((group, resource), items) in &lists {
        if NOT_FROM_THESE_KEYS.contains(&(group.as_str(), resource.as_str())) {
            continue;
        }
        for (namespace, name) in items.keys() {
            differences.push(format!("{group}/{resource} {namespace}/{name}: listed by kube, not read from any key"));
        }
    }
    eprintln!("{equal} objects byte-for-byte equal; keys not ours: {ignored:?}");
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
    assert!(equal > 200, "only {equal} objects compared");
}
