//! kube-apiserver's etcd layout (`--storage-layout kubernetes`) against real
//! bytes: `tests/fixtures/kube-v1.36/` holds what kube-apiserver v1.36.2 wrote
//! to etcd (`range.json`, at revision R) and what it answered for every list
//! at R (`lists/`). Every value Shardline can map is decoded and compared,
//! byte for byte, with the item kube-apiserver served for it.
//!
//! Then through a real etcd: the same keys and values written at the same
//! revisions (padding writes outside `/registry/` move etcd's revision to
//! each key's mod_revision), Shardline started on it with `--storage-layout
//! kubernetes`, every list compared with kube's answer, and the changes of
//! `watch.json` replayed in order while Shardline's watches are compared with
//! kube's (`watch-answers.json`).
//!
//! Owns: the translation of kube's keys and storage encodings
//! (`api::kube_storage`) held to kube's own answers.

mod common;

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
/// kube's lists, by (group, version, resource), each by (namespace, name).
fn kube_lists() -> BTreeMap<(String, String, String), BTreeMap<(String, String), Value>> {
    let mut lists = BTreeMap::new();
    for entry in std::fs::read_dir(fixtures().join("lists")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mut parts = stem.splitn(3, '_');
        let (group, version, resource) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
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
        lists.insert((group.to_string(), version.to_string(), resource.to_string()), items);
    }
    lists
}

/// What kube's list answers hold that these keys do not (justified):
/// componentstatuses are not stored. (events.k8s.io/v1 events are the core
/// events' keys, compared below in both versions.)
const NOT_FROM_THESE_KEYS: &[(&str, &str)] = &[("", "componentstatuses")];

/// The versions served from the store of (group, resource) besides its own,
/// as kube lists them: events.k8s.io/v1 Events are core Events.
fn also_served_as(group: &str, resource: &str) -> Vec<shardline::types::registry::ResourceInfo> {
    shardline::types::registry::Registry::builtin()
        .iter()
        .filter(|info| info.storage_group_resource() == (group, resource) && info.stored_as().is_some())
        .cloned()
        .collect()
}

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
        // The same key as the other versions served from it show it.
        for info in also_served_as(&key.group, &key.resource) {
            let converted = shardline::api::handlers::versions::convert(&info, &cached.json);
            // The fixture holds each resource's list in one version (its
            // preferred one: autoscaling/v2 HPAs, not v1's view of them).
            let Some(items) = lists.get_mut(&(info.group.clone(), info.version.clone(), info.resource.clone())) else {
                continue;
            };
            let served = items.remove(&(key.namespace.clone(), key.name.clone()));
            let Some(served) = served else {
                differences.push(format!("{}: kube-apiserver did not list it as {}", key.name, info.api_version()));
                continue;
            };
            let mut ours: serde_json::Map<String, Value> = serde_json::from_slice(&converted).unwrap();
            assert_eq!(ours.get("apiVersion"), Some(&Value::String(info.api_version())));
            ours.shift_remove("kind");
            ours.shift_remove("apiVersion");
            let (ours, expected) = (serde_json::to_string(&ours).unwrap(), serde_json::to_string(&served).unwrap());
            if ours == expected {
                equal += 1;
            } else {
                differences.push(format!(
                    "{} as {}:
  ours: {ours}
  kube: {expected}",
                    key.name,
                    info.api_version()
                ));
            }
        }
        // The version the object is stored (and listed by kube) in.
        let stored: Value = serde_json::from_slice(&cached.json).unwrap();
        let version = stored["apiVersion"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
        let served = lists
            .get_mut(&(key.group.clone(), version, key.resource.clone()))
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
    for ((group, _version, resource), items) in &lists {
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

/// A keep-alive connection to etcd's JSON gateway.
struct EtcdWriter {
    conn: common::http::Conn,
}

impl EtcdWriter {
    fn new(etcd: &common::etcd::Etcd) -> EtcdWriter {
        let addr = etcd.url().trim_start_matches("http://").parse().expect("etcd's client address");
        EtcdWriter { conn: common::http::Conn::connect(addr).expect("connect to etcd") }
    }

    /// One request; etcd's revision after it.
    fn call(&mut self, path: &str, body: Value) -> u64 {
        let body = body.to_string();
        let r = self
            .conn
            .request("POST", path, &[("Content-Type", "application/json")], Some(body.as_bytes()))
            .expect("etcd request");
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        let answer: Value = serde_json::from_str(&common::etcd::de_chunk(&r.text())).expect("etcd's JSON");
        answer["header"]["revision"].as_str().and_then(|v| v.parse().ok()).expect("a revision")
    }

    fn put(&mut self, key_b64: &str, value_b64: &str) -> u64 {
        self.call("/v3/kv/put", serde_json::json!({"key": key_b64, "value": value_b64}))
    }

    fn delete(&mut self, key_b64: &str) -> u64 {
        self.call("/v3/kv/deleterange", serde_json::json!({"key": key_b64}))
    }

    /// Writes outside `/registry/` until etcd's revision is `revision`.
    fn pad_to(&mut self, mut current: u64, revision: u64) -> u64 {
        let padding = base64::engine::general_purpose::STANDARD.encode("/padding");
        while current < revision {
            current = self.put(&padding, "");
        }
        current
    }
}

fn kube_path(group: &str, version: &str, resource: &str) -> String {
    if group == "core" {
        format!("/api/{version}/{resource}")
    } else {
        format!("/apis/{group}/{version}/{resource}")
    }
}

/// kube-apiserver's token for the page after `key`, as its `EncodeContinue`
/// writes it for `key` and a NUL: base64 (URL, no padding) of Go's JSON. The
/// fixture's keys need no JSON escapes (checked).
fn kube_continue(key: &str, prefix: &str, rv: u64) -> String {
    let relative = key.strip_prefix(prefix).expect("a key under the prefix");
    assert!(relative.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:_/".contains(&b)), "{relative}");
    let json = format!(r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":"{relative}\u0000"}}"#);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

/// Lists kube's answers hold that these keys cannot give (justified):
/// componentstatuses are kube-apiserver's probes of its own components, not
/// stored objects. (events.k8s.io/v1 events are served converted from the
/// core events' keys, and compared.)
const LISTS_NOT_COMPARED: &[&str] = &["core_v1_componentstatuses.json"];

#[test]
fn a_kubernetes_etcd_is_served_as_kube_apiserver_served_it() {
    let range: Value = serde_json::from_slice(&std::fs::read(fixtures().join("range.json")).unwrap()).unwrap();
    let revision_at = range["header"]["revision"].as_u64().unwrap();
    let etcd = common::etcd::Etcd::start();
    let mut writer = EtcdWriter::new(&etcd);
    let mut kvs: Vec<&Value> = range["kvs"].as_array().unwrap().iter().collect();
    let mod_revision = |kv: &Value| kv["mod_revision"].as_u64().unwrap();
    kvs.sort_by_key(|kv| mod_revision(kv));
    let mut current = 1;
    for kv in kvs {
        writer.pad_to(current, mod_revision(kv) - 1);
        current = writer.put(kv["key"].as_str().unwrap(), kv["value"].as_str().unwrap());
        assert_eq!(current, mod_revision(kv), "etcd's revision follows the fixture's");
    }
    current = writer.pad_to(current, revision_at);
    assert_eq!(current, revision_at);

    let s = common::etcd::shardline_on(&etcd, &["--storage-layout", "kubernetes", "--controllers=-*"]);
    let metrics = s.get("/metrics").text();
    assert!(metrics.contains("shardline_storage_decode_errors_total 0"), "every value decodes");

    // Every list, as kube-apiserver answered it at the same revision.
    let mut compared = 0;
    for entry in std::fs::read_dir(fixtures().join("lists")).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        if LISTS_NOT_COMPARED.contains(&file.as_str()) {
            continue;
        }
        let stem = file.trim_end_matches(".json");
        let mut parts = stem.splitn(3, '_');
        let (group, version, resource) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let url =
            format!("{}?resourceVersion={revision_at}&resourceVersionMatch=Exact", kube_path(group, version, resource));
        let r = s.get(&url);
        assert_eq!(r.status, 200, "{url}: {}", r.text());
        let expected: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let ours: Value = r.json();
        assert_eq!(
            serde_json::to_string(&ours).unwrap(),
            serde_json::to_string(&expected).unwrap(),
            "{url} differs from kube-apiserver's answer"
        );
        compared += 1;
    }
    assert!(compared >= 55, "only {compared} lists compared");

    // Continue tokens: page through collections at R and compare each token
    // with the one kube-apiserver's EncodeContinue writes for the same page,
    // built by hand from kube's own etcd keys (its key prefix for the
    // collection stripped, a NUL appended, rv R). A kube token continues
    // here, so a client may switch servers between pages.
    let keys: Vec<String> =
        range["kvs"].as_array().unwrap().iter().map(|kv| String::from_utf8(b64(&kv["key"])).unwrap()).collect();
    let collections = [
        ("/api/v1/configmaps", "/registry/configmaps/", 1),
        ("/api/v1/services", "/registry/services/specs/", 1),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings",
            "/registry/rolebindings/kube-system/",
            1,
        ),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "/registry/clusterroles/", 7),
        ("/apis/example.com/v1/widgets", "/registry/example.com/widgets/", 2),
    ];
    for (path, kube_prefix, limit) in collections {
        let mut under: Vec<&str> = keys.iter().map(String::as_str).filter(|k| k.starts_with(kube_prefix)).collect();
        under.sort_unstable();
        assert!(under.len() > limit, "{path}: {} keys, too few to page", under.len());
        let mut token: Option<String> = None;
        let mut served = Vec::new();
        loop {
            let url = match &token {
                None => format!("{path}?limit={limit}&resourceVersion={revision_at}"),
                Some(t) => format!("{path}?limit={limit}&continue={t}"),
            };
            let page = s.get_ok(&url);
            assert_eq!(page["metadata"]["resourceVersion"], revision_at.to_string(), "{url}");
            let items = page["items"].as_array().unwrap();
            assert!(!items.is_empty() && served.len() + items.len() <= under.len(), "{url}: {page}");
            for item in items {
                let ns = item["metadata"]["namespace"].as_str().map(|n| format!("{n}/")).unwrap_or_default();
                served.push(format!("{ns}{}", item["metadata"]["name"].as_str().unwrap()));
            }
            let next = page["metadata"]["continue"].as_str().unwrap_or("").to_string();
            if served.len() == under.len() {
                assert_eq!(next, "", "{url}: no token after the last page");
                break;
            }
            let last = under[served.len() - 1];
            assert_eq!(next, kube_continue(last, kube_prefix, revision_at), "{url}: kube's token after {last}");
            token = Some(next);
        }
        let relative: Vec<&str> = under.iter().map(|k| &k[kube_prefix.len()..]).collect();
        let expected: Vec<String> = if path.contains("/namespaces/") {
            let ns = kube_prefix.trim_end_matches('/').rsplit('/').next().unwrap();
            relative.iter().map(|name| format!("{ns}/{name}")).collect()
        } else {
            relative.iter().map(|k| k.to_string()).collect()
        };
        assert_eq!(served, expected, "{path}: every object once, in kube's key order");
        // A token kube-apiserver wrote after the first key continues here.
        let page = s.get_ok(&format!("{path}?limit=1&continue={}", kube_continue(under[0], kube_prefix, revision_at)));
        assert_eq!(page["metadata"]["resourceVersion"], revision_at.to_string());
        let name = page["items"][0]["metadata"]["name"].as_str().unwrap();
        assert!(under[1].ends_with(&format!("/{name}")), "{path}: after {} comes {}, got {name}", under[0], under[1]);
    }

    // The changes of watch.json, replayed in order, as kube's watches saw them.
    let watch: Value = serde_json::from_slice(&std::fs::read(fixtures().join("watch.json")).unwrap()).unwrap();
    let answers: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("watch-answers.json")).unwrap()).unwrap();
    let mut streams: Vec<(String, common::watch::Watch, Vec<Value>)> = answers["watches"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, w)| {
            let path = w["path"].as_str().unwrap().to_string();
            (name.clone(), common::watch::Watch::open(&s, &path), w["events"].as_array().unwrap().clone())
        })
        .collect();
    for event in watch["events"].as_array().unwrap() {
        let kv = &event["kv"];
        let wanted = kv["mod_revision"].as_u64().unwrap();
        writer.pad_to(current, wanted - 1);
        current = if event["type"].as_u64() == Some(1) {
            writer.delete(kv["key"].as_str().unwrap())
        } else {
            writer.put(kv["key"].as_str().unwrap(), kv["value"].as_str().unwrap())
        };
        assert_eq!(current, wanted, "etcd's revision follows the fixture's watch");
    }
    // Caught up with etcd: the lag gauges say so once the last change is in.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let metrics = s.get("/metrics").text();
        if metrics.contains("\nshardline_etcd_behind_revisions 0\n")
            && metrics.contains("\nshardline_etcd_behind_seconds 0\n")
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still behind etcd:\n{metrics}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for (name, stream, expected) in &mut streams {
        for (i, want) in expected.iter().enumerate() {
            let got = stream.next();
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(want).unwrap(),
                "watch {name}, event {i} differs from kube-apiserver's"
            );
        }
    }
}
