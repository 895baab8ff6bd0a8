//! core/v1 and events.k8s.io/v1 Events are one store, as in kube-apiserver:
//! a write through either API is read, listed (with each API's field
//! selectors), watched (same resourceVersions), updated and deleted through
//! the other, in that API's form; events.k8s.io/v1 writes get its strict
//! validation; Tables, Protobuf, `kubectl get events` and `kubectl events`
//! see both.

mod common;

use common::watch::Watch;
use common::Server;
use serde_json::{json, Value};

const NS: &str = "ev";
const CORE: &str = "/api/v1/namespaces/ev/events";
const V1: &str = "/apis/events.k8s.io/v1/namespaces/ev/events";

fn setup() -> Server {
    let s = Server::start();
    let r =
        s.post_json("/api/v1/namespaces", &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    assert_eq!(r.status, 201, "{}", r.text());
    s
}

/// An Event written the old way, through core/v1 (kubelet's recorder).
fn legacy_core_event(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "db-0", "apiVersion": "v1"},
        "reason": "Pulled", "message": "pulled the image", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-11-25T12:00:00Z", "lastTimestamp": "2026-11-25T12:01:00Z", "count": 3})
}

/// An Event written the new way, through events.k8s.io/v1.
fn new_v1_event(name: &str) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
        "eventTime": "2026-11-25T12:00:00.000000Z", "reportingController": "example.com/fixture",
        "reportingInstance": "fixture-1", "action": "Started", "reason": "Started",
        "regarding": {"kind": "Pod", "namespace": NS, "name": "web-0", "apiVersion": "v1"},
        "note": "started the web container", "type": "Normal"})
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string()
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_write_through_either_api_is_seen_through_both() {
    let s = setup();
    let mut core_watch = Watch::open(&s, &format!("{CORE}?watch=1"));
    let mut v1_watch = Watch::open(&s, &format!("{V1}?watch=1"));
    // Watches with each API's field selectors.
    let mut web_watch = Watch::open(&s, &format!("{V1}?watch=1&fieldSelector=regarding.name%3Dweb-0"));
    let mut db_watch = Watch::open(&s, &format!("{CORE}?watch=1&fieldSelector=involvedObject.name%3Ddb-0"));

    // core/v1 -> events.k8s.io/v1
    let r = s.post_json(CORE, &legacy_core_event("db-0.1"));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let seen = s.get_ok(&format!("{V1}/db-0.1"));
    assert_eq!(seen["apiVersion"], "events.k8s.io/v1");
    assert_eq!(seen["kind"], "Event");
    assert_eq!(seen["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(rv(&seen), rv(&created));
    assert_eq!(seen["regarding"], created["involvedObject"]);
    assert_eq!(seen["note"], "pulled the image");
    assert_eq!(seen["deprecatedSource"], json!({"component": "kubelet", "host": "node-1"}));
    assert_eq!(seen["deprecatedFirstTimestamp"], "2026-11-25T12:00:00Z");
    assert_eq!(seen["deprecatedLastTimestamp"], "2026-11-25T12:01:00Z");
    assert_eq!(seen["deprecatedCount"], 3);
    assert!(seen["eventTime"].is_null());
    for core_only in ["involvedObject", "message", "source", "count", "reportingComponent", "firstTimestamp"] {
        assert!(seen.get(core_only).is_none(), "{core_only} in {seen}");
    }
    // Empty reporting fields: written by core/v1 (no omitempty), omitted by events.k8s.io/v1.
    assert_eq!(created["reportingComponent"], "");
    assert!(seen.get("reportingController").is_none() && seen.get("reportingInstance").is_none(), "{seen}");

    // events.k8s.io/v1 -> core/v1
    let r = s.post_json(V1, &new_v1_event("web-0.1"));
    assert_eq!(r.status, 201, "{}", r.text());
    let created_v1 = r.json();
    assert_eq!(created_v1["apiVersion"], "events.k8s.io/v1");
    assert_eq!(created_v1["regarding"]["name"], "web-0");
    let core = s.get_ok(&format!("{CORE}/web-0.1"));
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(rv(&core), rv(&created_v1));
    assert_eq!(core["involvedObject"]["name"], "web-0");
    assert_eq!(core["message"], "started the web container");
    assert_eq!(core["reportingComponent"], "example.com/fixture");
    assert_eq!(core["reportingInstance"], "fixture-1");
    assert_eq!(core["source"], json!({}));
    assert!(core["firstTimestamp"].is_null() && core["lastTimestamp"].is_null());
    assert_eq!(core["eventTime"], "2026-11-25T12:00:00.000000Z");

    // Lists: the same objects and revisions, each in its API's form.
    let core_list = s.get_ok(CORE);
    let v1_list = s.get_ok(V1);
    assert_eq!(names(&core_list), ["db-0.1", "web-0.1"]);
    assert_eq!(names(&v1_list), ["db-0.1", "web-0.1"]);
    assert_eq!(core_list["metadata"]["resourceVersion"], v1_list["metadata"]["resourceVersion"]);
    assert_eq!(v1_list["apiVersion"], "events.k8s.io/v1");
    for (c, v) in core_list["items"].as_array().unwrap().iter().zip(v1_list["items"].as_array().unwrap()) {
        assert_eq!(rv(c), rv(v));
        assert_eq!(c["involvedObject"], v["regarding"]);
        assert_eq!(c["message"], v["note"]);
    }
    // Each API's field selectors.
    let only = |path: &str| names(&s.get_ok(path));
    assert_eq!(only(&format!("{V1}?fieldSelector=regarding.name%3Dweb-0")), ["web-0.1"]);
    assert_eq!(only(&format!("{V1}?fieldSelector=reportingController%3Dexample.com/fixture")), ["web-0.1"]);
    assert_eq!(only(&format!("{V1}?fieldSelector=reason%3DPulled,type%3DNormal")), ["db-0.1"]);
    assert_eq!(only(&format!("{CORE}?fieldSelector=involvedObject.name%3Ddb-0")), ["db-0.1"]);
    assert_eq!(only(&format!("{CORE}?fieldSelector=reportingComponent%3Dexample.com/fixture")), ["web-0.1"]);
    assert_eq!(only(&format!("{CORE}?fieldSelector=source%3Dkubelet")), ["db-0.1"], "source is source.component");
    let r = s.get(&format!("{V1}?fieldSelector=involvedObject.name%3Ddb-0"));
    common::assert_status(&r, 400, "BadRequest");
    let r = s.get(&format!("{CORE}?fieldSelector=regarding.name%3Ddb-0"));
    common::assert_status(&r, 400, "BadRequest");

    // An update through events.k8s.io/v1 is a MODIFIED on both watches.
    let r = s.request(
        "PATCH",
        &format!("{V1}/db-0.1"),
        &[("Content-Type", "application/merge-patch+json")],
        Some(br#"{"metadata": {"labels": {"seen": "yes"}}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let patched = r.json();
    assert_eq!(patched["apiVersion"], "events.k8s.io/v1");
    assert_eq!(patched["deprecatedCount"], 3, "{patched}");
    let core_after = s.get_ok(&format!("{CORE}/db-0.1"));
    assert_eq!(core_after["metadata"]["labels"]["seen"], "yes");
    assert_eq!(core_after["count"], 3);
    assert_eq!(rv(&core_after), rv(&patched));

    // Deleted through events.k8s.io/v1, gone from core/v1.
    let r = s.delete(&format!("{V1}/web-0.1"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.get(&format!("{CORE}/web-0.1")).status, 404);

    let expected = [
        ("ADDED", "db-0.1", rv(&created)),
        ("ADDED", "web-0.1", rv(&created_v1)),
        ("MODIFIED", "db-0.1", rv(&patched)),
        ("DELETED", "web-0.1", String::new()),
    ];
    for (watch, api_version, regarding) in
        [(&mut core_watch, "v1", "involvedObject"), (&mut v1_watch, "events.k8s.io/v1", "regarding")]
    {
        for (kind, name, revision) in &expected {
            let event = watch.next();
            assert_eq!(event["type"], *kind, "{event}");
            let object = &event["object"];
            assert_eq!(object["metadata"]["name"], *name, "{event}");
            assert_eq!(object["apiVersion"], api_version, "{event}");
            assert!(object.get(regarding).is_some(), "{regarding} in {event}");
            if !revision.is_empty() {
                assert_eq!(rv(object), *revision, "{event}");
            }
        }
    }
    for (watch, expected) in [
        (&mut web_watch, [("ADDED", "web-0.1"), ("DELETED", "web-0.1")]),
        (&mut db_watch, [("ADDED", "db-0.1"), ("MODIFIED", "db-0.1")]),
    ] {
        for (kind, name) in expected {
            let event = watch.next();
            assert_eq!(
                (event["type"].as_str(), event["object"]["metadata"]["name"].as_str()),
                (Some(kind), Some(name))
            );
        }
    }
    // Nothing else reached the selected watches: a write of the other
    // event is followed, on each, by the next of its own only.
    let r = s.post_json(CORE, &legacy_core_event("db-0.2"));
    assert_eq!(r.status, 201, "{}", r.text());
    let mut web = new_v1_event("web-0.2");
    web["metadata"]["name"] = json!("web-0.2");
    assert_eq!(s.post_json(V1, &web).status, 201);
    assert_eq!(db_watch.next()["object"]["metadata"]["name"], "db-0.2");
    assert_eq!(web_watch.next()["object"]["metadata"]["name"], "web-0.2");
}

#[test]
fn events_k8s_io_writes_are_validated_strictly() {
    let s = setup();
    // A new-style event without eventTime, type or reporting fields.
    let r = s.post_json(
        V1,
        &json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "bad"},
            "regarding": {"kind": "Pod", "namespace": NS, "name": "p"}, "note": "n",
            "deprecatedCount": 2, "deprecatedSource": {"component": "kubelet"}}),
    );
    let status = common::assert_status(&r, 422, "Invalid");
    let causes: Vec<(String, String)> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap().to_string(), c["reason"].as_str().unwrap().to_string()))
        .collect();
    for (field, reason) in [
        ("eventTime", "FieldValueRequired"),
        ("type", "FieldValueInvalid"),
        ("count", "FieldValueInvalid"),
        ("source", "FieldValueInvalid"),
    ] {
        assert!(causes.contains(&(field.to_string(), reason.to_string())), "{field} {reason} in {status}");
    }
    assert_eq!(status["details"]["kind"], "Event");
    assert_eq!(status["details"]["group"], "events.k8s.io");
    // With eventTime, the reporting fields are required (the legacy rules, core names).
    let mut event = new_v1_event("half");
    for field in ["reportingController", "reportingInstance", "action"] {
        event.as_object_mut().unwrap().remove(field);
    }
    let status = common::assert_status(&s.post_json(V1, &event), 422, "Invalid");
    let message = status["message"].as_str().unwrap();
    for field in ["reportingController: Required value", "reportingInstance: Required value", "action: Required value"]
    {
        assert!(message.contains(field), "{field} in {message}");
    }
    // The same legacy event is fine through core/v1 (no strict rules there)...
    let r = s.post_json(CORE, &legacy_core_event("legacy"));
    assert_eq!(r.status, 201, "{}", r.text());
    // ... and an update through events.k8s.io/v1 may not change its fields.
    let mut current = s.get_ok(&format!("{V1}/legacy"));
    current["note"] = json!("changed");
    let status = common::assert_status(&s.put_json(&format!("{V1}/legacy"), &current), 422, "Invalid");
    let message = status["message"].as_str().unwrap();
    assert!(message.contains(r#"message: Invalid value: "changed": field is immutable"#), "{message}");
    // Through core/v1 the same change is allowed (kube's legacy validation).
    let mut core = s.get_ok(&format!("{CORE}/legacy"));
    core["message"] = json!("changed");
    let r = s.put_json(&format!("{CORE}/legacy"), &core);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.get_ok(&format!("{V1}/legacy"))["note"], "changed");
}

#[test]
fn tables_protobuf_and_kubectl_see_both_apis() {
    let s = setup();
    assert_eq!(s.post_json(CORE, &legacy_core_event("db-0.1")).status, 201);
    assert_eq!(s.post_json(V1, &new_v1_event("web-0.1")).status, 201);

    // Table through events.k8s.io/v1, with the objects in its form.
    let r = s.request(
        "GET",
        &format!("{V1}?includeObject=Object"),
        &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let table = r.json();
    assert_eq!(table["kind"], "Table");
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{table}");
    assert_eq!(rows[0]["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(rows[0]["object"]["note"], "pulled the image");
    let columns: Vec<&str> =
        table["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(columns[..4], ["Last Seen", "Type", "Reason", "Object"]);
    assert_eq!(rows[1]["cells"][3], "pod/web-0", "{table}");

    // Protobuf through both: the envelope names the API's version.
    for (path, api_version, text) in [
        (format!("{V1}/db-0.1"), "events.k8s.io/v1", "pulled the image"),
        (format!("{CORE}/web-0.1"), "v1", "fixture-1"),
    ] {
        let r = s.request("GET", &path, &[("Accept", "application/vnd.kubernetes.protobuf")], None);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("application/vnd.kubernetes.protobuf"));
        assert!(r.body.starts_with(b"k8s\0"), "{path}");
        let contains = |needle: &str| r.body.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(contains(api_version) && contains(text), "{path}: {:?}", String::from_utf8_lossy(&r.body));
    }
    // A Protobuf list through events.k8s.io/v1.
    let r = s.request("GET", V1, &[("Accept", "application/vnd.kubernetes.protobuf")], None);
    assert_eq!(r.status, 200);
    assert!(r.body.windows(b"EventList".len()).any(|w| w == b"EventList"));
    assert!(r.body.windows(b"started the web container".len()).any(|w| w == b"started the web container"));

    // kubectl apply of an events.k8s.io/v1 Event (as kube's fixture was
    // written), then again with a label: a strategic merge patch through it.
    let manifest = |labels: &str| {
        format!(
            "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: applied.1\n  namespace: {NS}\n{labels}\
             eventTime: \"2026-11-25T12:00:00.000000Z\"\nreportingController: example.com/fixture\n\
             reportingInstance: fixture-1\naction: Started\nreason: Applied\ntype: Normal\nnote: applied by kubectl\n\
             regarding: {{kind: Pod, namespace: {NS}, name: app-0, apiVersion: v1}}\n"
        )
    };
    let path = s.data_dir().join("event.yaml");
    std::fs::write(&path, manifest("")).unwrap();
    s.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
    std::fs::write(&path, manifest("  labels: {round: two}\n")).unwrap();
    s.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
    let core = s.get_ok(&format!("{CORE}/applied.1"));
    assert_eq!(core["metadata"]["labels"]["round"], "two", "{core}");
    assert_eq!(core["message"], "applied by kubectl");
    assert_eq!(core["metadata"]["managedFields"][0]["apiVersion"], "events.k8s.io/v1", "{core}");
    // Server-side apply through events.k8s.io/v1 of the same object: the
    // live object is merged in events.k8s.io/v1's form.
    std::fs::write(&path, manifest("  labels: {round: three}\n")).unwrap();
    s.kubectl_ok(&["apply", "--server-side", "--force-conflicts", "-f", path.to_str().unwrap()]);
    let v1 = s.get_ok(&format!("{V1}/applied.1"));
    assert_eq!(v1["metadata"]["labels"]["round"], "three", "{v1}");
    assert_eq!(v1["note"], "applied by kubectl");
    assert!(v1.get("message").is_none(), "{v1}");
    let applied = v1["metadata"]["managedFields"].as_array().unwrap().iter().find(|m| m["operation"] == "Apply");
    assert_eq!(applied.unwrap()["apiVersion"], "events.k8s.io/v1", "{v1}");

    // kubectl: `get events` (core/v1), the events.k8s.io resource, and `kubectl events`.
    let out = s.kubectl_ok(&["get", "events", "-n", NS]);
    assert!(out.stdout.contains("Pulled") && out.stdout.contains("Started"), "{}", out.stdout);
    assert!(out.stdout.contains("pod/db-0") && out.stdout.contains("pod/web-0"), "{}", out.stdout);
    let out = s.kubectl_ok(&["get", "events.v1.events.k8s.io", "-n", NS, "-o", "json"]);
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(names(&listed), ["applied.1", "db-0.1", "web-0.1"]);
    assert_eq!(listed["items"][2]["reportingController"], "example.com/fixture");
    let out = s.kubectl_ok(&["events", "-n", NS]);
    assert!(out.stdout.contains("pulled the image"), "{}", out.stdout);
    assert!(out.stdout.contains("started the web container"), "{}", out.stdout);
    assert!(out.stdout.contains("applied by kubectl"), "{}", out.stdout);
    let out = s.kubectl_ok(&["events", "-n", NS, "--for", "pod/web-0"]);
    assert!(out.stdout.contains("started the web container") && !out.stdout.contains("pulled"), "{}", out.stdout);
}
