//! The representations against the real server, with raw HTTP: protobuf
//! get, list pages and watch frames; CBOR get, list, watch frames and
//! request bodies; YAML get, list and request bodies; gzip of large lists;
//! the exact 406 and 415 Status bodies; and the encode-once counter.

mod common;

use common::{assert_status, configmap, Server};
use serde_json::{json, Value};
use shardline::api::{cbor, protobuf, protobuf_encode, yaml};
use std::io::Read;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const PB: &str = "application/vnd.kubernetes.protobuf";

fn get_as(s: &Server, path: &str, accept: &str) -> common::Response {
    s.request("GET", path, &[("Accept", accept)], None)
}

fn header<'a>(r: &'a common::Response, name: &str) -> &'a str {
    r.header(name).unwrap_or_else(|| panic!("no {name} header: {:?}", r.headers))
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().unwrap_or_else(|| panic!("no items: {list}")).clone()
}

/// Items without kind and apiVersion: a protobuf list's items carry none
/// (their messages have no TypeMeta), as in kube-apiserver's.
fn untyped_items(list: &Value) -> Vec<Value> {
    let mut items = items(list);
    for item in &mut items {
        item.as_object_mut().unwrap().retain(|k, _| k != "kind" && k != "apiVersion");
    }
    items
}

#[test]
fn protobuf_get_list_and_watch() {
    let s = Server::start();
    for i in 0..5 {
        s.post_json(CM, &configmap(&format!("pb-{i}"), &[("k", &format!("v{i}")), ("mode", "0755")]));
    }
    // GET: the envelope of the same object JSON serves.
    let json = s.get_ok(&format!("{CM}/pb-1"));
    let r = get_as(&s, &format!("{CM}/pb-1"), &format!("{PB}, application/json"));
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "content-type"), PB);
    assert!(r.body.starts_with(b"k8s\x00"));
    assert_eq!(Value::Object(protobuf::decode_object(&r.body, "ConfigMap").unwrap()), json);

    // A list page: ListMeta with continue and remainingItemCount, items as JSON lists them.
    let r = get_as(&s, &format!("{CM}?limit=2"), PB);
    assert_eq!(r.status, 200, "{}", r.text());
    let page = Value::Object(protobuf::decode_object(&r.body, "ConfigMapList").unwrap());
    let json_page = s.get_ok(&format!("{CM}?limit=2"));
    assert_eq!(page["kind"], "ConfigMapList");
    assert_eq!(page["metadata"]["remainingItemCount"], 3);
    assert_eq!(items(&page), untyped_items(&json_page));
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let r = get_as(&s, &format!("{CM}?limit=2&continue={token}"), PB);
    let next = Value::Object(protobuf::decode_object(&r.body, "ConfigMapList").unwrap());
    assert_eq!(items(&next).len(), 2);
    // The whole list without limit.
    let r = get_as(&s, CM, PB);
    let all = Value::Object(protobuf::decode_object(&r.body, "ConfigMapList").unwrap());
    assert_eq!(items(&all), untyped_items(&s.get_ok(CM)));

    // Watch: the current state as ADDED, then a change; frame by frame.
    let rv = common::resource_version(&json_page);
    s.post_json(CM, &configmap("pb-late", &[("k", "late")]));
    let r = get_as(&s, &format!("{CM}?watch=1&resourceVersion={rv}&timeoutSeconds=2"), &format!("{PB};stream=watch"));
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "content-type"), "application/vnd.kubernetes.protobuf;stream=watch");
    let events = protobuf_frames(&r.body);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "ADDED");
    assert_eq!(events[0].1["metadata"]["name"], "pb-late");
    assert_eq!(events[0].1["data"]["k"], "late");
    let r = get_as(&s, &format!("{CM}?watch=1&resourceVersion=0&timeoutSeconds=1"), &format!("{PB};stream=watch"));
    let names: Vec<String> =
        protobuf_frames(&r.body).iter().map(|(_, o)| o["metadata"]["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["pb-0", "pb-1", "pb-2", "pb-3", "pb-4", "pb-late"]);

    // The encode-once counter is served.
    let metrics = s.get("/metrics").text();
    assert!(metrics.contains("shardline_encodings_built{format=\"protobuf\"}"), "{metrics}");
}

/// admissionregistration.k8s.io/v1 MutatingAdmissionPolicy and its binding
/// (GA in kube 1.36, newer than the k8s-pb release the schema table started
/// from) speak Protobuf like every other built-in: a Protobuf create body and
/// response, get, list and watch frames.
#[test]
fn mutating_admission_policies_speak_protobuf() {
    let s = Server::start();
    let base = "/apis/admissionregistration.k8s.io/v1";
    let rule =
        json!({"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]});
    let objects = [
        (
            "mutatingadmissionpolicies",
            "MutatingAdmissionPolicy",
            json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "map-pb"},
            "spec": {"matchConstraints": {"resourceRules": [rule]}, "reinvocationPolicy": "Never",
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}}]}}),
        ),
        (
            "mutatingadmissionpolicybindings",
            "MutatingAdmissionPolicyBinding",
            json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "mapb-pb"},
            "spec": {"policyName": "map-pb", "paramRef": {"name": "p", "parameterNotFoundAction": "Deny"}}}),
        ),
    ];
    for (resource, kind, object) in objects {
        let collection = format!("{base}/{resource}");
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        let body = protobuf_encode::encode_object_json(&serde_json::to_vec(&object).unwrap()).unwrap();
        let r = s.request("POST", &collection, &[("Content-Type", PB), ("Accept", PB)], Some(&body));
        assert_eq!(r.status, 201, "{kind}: {}", r.text());
        assert_eq!(header(&r, "content-type"), PB);
        let created = Value::Object(protobuf::decode_object(&r.body, kind).unwrap());
        assert_eq!(created["spec"], s.get_ok(&format!("{collection}/{name}"))["spec"], "{kind}");
        // The same object written as JSON (under another name) stores the same spec.
        let mut twin = object.clone();
        twin["metadata"]["name"] = json!(format!("{name}-json"));
        let twin = s.post_json(&collection, &twin);
        assert_eq!(twin.status, 201, "{kind}: {}", twin.text());
        assert_eq!(created["spec"], twin.json()["spec"], "{kind}");
        s.request("DELETE", &format!("{collection}/{name}-json"), &[], None);

        let r = get_as(&s, &format!("{collection}/{name}"), PB);
        assert_eq!(r.status, 200, "{kind}: {}", r.text());
        assert_eq!(
            Value::Object(protobuf::decode_object(&r.body, kind).unwrap()),
            s.get_ok(&format!("{collection}/{name}"))
        );

        let list_kind = format!("{kind}List");
        let r = get_as(&s, &collection, PB);
        assert_eq!(r.status, 200, "{list_kind}: {}", r.text());
        let list = Value::Object(protobuf::decode_object(&r.body, &list_kind).unwrap());
        assert_eq!(list["kind"], list_kind.as_str());
        assert_eq!(items(&list), untyped_items(&s.get_ok(&collection)));

        let r = get_as(
            &s,
            &format!("{collection}?watch=1&resourceVersion=0&timeoutSeconds=1"),
            &format!("{PB};stream=watch"),
        );
        assert_eq!(r.status, 200, "{kind}: {}", r.text());
        let events = protobuf_frames(&r.body);
        assert_eq!(events.len(), 1, "{kind}: {events:?}");
        assert_eq!(events[0].0, "ADDED");
        assert_eq!(events[0].1["metadata"]["name"], name.as_str());
        assert_eq!(events[0].1["spec"], created["spec"], "{kind}");
    }
}

/// Splits a protobuf watch stream: 4-byte big-endian length, then a
/// WatchEvent {type = 1, object = 2 {raw = 1}} whose raw is an object envelope.
fn protobuf_frames(mut body: &[u8]) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    while !body.is_empty() {
        let len = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
        let frame = &body[4..4 + len];
        body = &body[4 + len..];
        let (event_type, rest) = field(frame, 1);
        let (object, _) = field(rest, 2);
        let (raw, _) = field(object, 1);
        let decoded = protobuf::decode_object(raw, "").unwrap();
        events.push((String::from_utf8(event_type.to_vec()).unwrap(), Value::Object(decoded)));
    }
    events
}

/// Reads one length-delimited field `tag` (with a one-byte key) at the start of `bytes`.
fn field(bytes: &[u8], tag: u8) -> (&[u8], &[u8]) {
    assert_eq!(bytes[0], tag << 3 | 2, "field {tag}");
    let (mut len, mut i) = (0usize, 1);
    loop {
        let b = bytes[i];
        len |= usize::from(b & 0x7f) << (7 * (i - 1));
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    (&bytes[i..i + len], &bytes[i + len..])
}

#[test]
fn cbor_get_list_watch_and_bodies() {
    let s = Server::start();
    // A CBOR body with text and byte strings.
    let body = cbor::encode_value(&configmap("cb-0", &[("yes", "no")]));
    let r = s.request("POST", CM, &[("Content-Type", "application/cbor"), ("Accept", "application/cbor")], Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(header(&r, "content-type"), "application/cbor");
    assert!(r.body.starts_with(cbor::SELF_DESCRIBED));
    let created = Value::Object(cbor::decode_object(&r.body).unwrap());
    assert_eq!(created["data"]["yes"], "no");
    assert_eq!(created, s.get_ok(&format!("{CM}/cb-0")));
    // Invalid bodies: duplicate keys, invalid UTF-8 text.
    for bad in [&b"\xa2\x44kind\x49ConfigMap\x64kind\x49ConfigMap"[..], b"\xa1\x64kind\x62\xff\xfe"] {
        let r = s.request("POST", CM, &[("Content-Type", "application/cbor")], Some(bad));
        assert_status(&r, 400, "BadRequest");
    }
    s.post_json(CM, &configmap("cb-1", &[]));
    let r = get_as(&s, CM, "application/cbor");
    let list = Value::Object(cbor::decode_object(&r.body).unwrap());
    // Typed list items carry no kind/apiVersion, in CBOR as in JSON (kube's).
    assert!(items(&list).iter().all(|i| i.get("kind").is_none() && i.get("apiVersion").is_none()), "{list}");
    assert_eq!(items(&list), items(&s.get_ok(CM)));
    // A watch is a CBOR sequence: one data item per event.
    let r = get_as(&s, &format!("{CM}?watch=1&resourceVersion=0&timeoutSeconds=1"), "application/cbor-seq");
    assert_eq!(header(&r, "content-type"), "application/cbor-seq");
    let mut rest: &[u8] = &r.body;
    let mut names = Vec::new();
    while !rest.is_empty() {
        let (event, after) = cbor::decode_item(rest).unwrap();
        assert_eq!(event["type"], "ADDED");
        names.push(event["object"]["metadata"]["name"].as_str().unwrap().to_string());
        rest = after;
    }
    assert_eq!(names, ["cb-0", "cb-1"]);
}

#[test]
fn yaml_get_list_and_bodies() {
    let s = Server::start();
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y-0\ndata:\n  enabled: \"yes\"\n  mode: \"0755\"\n  version: \"1.10\"\n";
    let r = s.request(
        "POST",
        CM,
        &[("Content-Type", "application/yaml"), ("Accept", "application/json")],
        Some(body.as_bytes()),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["data"], json!({"enabled": "yes", "mode": "0755", "version": "1.10"}));
    let r = get_as(&s, &format!("{CM}/y-0"), "application/yaml");
    assert_eq!(header(&r, "content-type"), "application/yaml");
    let text = r.text();
    for quoted in ["enabled: 'yes'", "mode: '0755'", "version: '1.10'"] {
        let double = quoted.replace('\'', "\"");
        assert!(text.contains(quoted) || text.contains(&double), "{quoted} in\n{text}");
    }
    assert_eq!(Value::Object(yaml::decode_object(&r.body).unwrap()), s.get_ok(&format!("{CM}/y-0")));
    let r = get_as(&s, &format!("{CM}?limit=10"), "application/yaml");
    let list = Value::Object(yaml::decode_object(&r.body).unwrap());
    assert_eq!(list["kind"], "ConfigMapList");
    // As in JSON and CBOR: typed list items carry no kind/apiVersion.
    assert!(items(&list).iter().all(|i| i.get("kind").is_none() && i.get("apiVersion").is_none()), "{list}");
    assert_eq!(items(&list), items(&s.get_ok(CM)));
    // No YAML watch stream: a 406 whose Status is in YAML, the representation
    // asked for (kube-apiserver's ErrorNegotiated).
    let r = get_as(&s, &format!("{CM}?watch=1&timeoutSeconds=1"), "application/yaml");
    assert_eq!(r.status, 406);
    assert_eq!(header(&r, "content-type"), "application/yaml");
    let status = Value::Object(yaml::decode_object(&r.body).unwrap());
    assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("NotAcceptable")));
}

#[test]
fn large_lists_are_gzipped() {
    let s = Server::start();
    let big = "x".repeat(1024);
    for i in 0..200 {
        let r = s.post_json(CM, &configmap(&format!("gz-{i:03}"), &[("blob", &big)]));
        assert_eq!(r.status, 201);
    }
    let plain = s.get_ok(CM);
    for path in [CM.to_string(), format!("{CM}?limit=500")] {
        let r = s.request("GET", &path, &[("Accept", "application/json"), ("Accept-Encoding", "gzip")], None);
        assert_eq!(r.status, 200);
        assert_eq!(header(&r, "content-encoding"), "gzip", "{path}");
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&r.body[..]).read_to_end(&mut text).unwrap();
        assert!(r.body.len() < text.len() / 5, "{path}: compressed {} of {}", r.body.len(), text.len());
        let list: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(items(&list), items(&plain), "{path}");
    }
    // Small responses, and clients that do not ask, are not compressed.
    let r = s.request("GET", &format!("{CM}/gz-001"), &[("Accept-Encoding", "gzip")], None);
    assert!(r.header("content-encoding").is_none());
    let small = format!("{CM}?fieldSelector=metadata.name%3Dgz-001");
    for path in [small.clone(), format!("{small}&limit=5")] {
        let r = s.request("GET", &path, &[("Accept-Encoding", "gzip")], None);
        assert!(r.header("content-encoding").is_none(), "{path}");
        assert_eq!(items(&r.json()).len(), 1);
    }
    assert!(s.get(CM).header("content-encoding").is_none());
}

#[test]
fn negotiation_errors_are_kube_apiserver_statuses() {
    let s = Server::start();
    s.post_json(CM, &configmap("n-0", &[]));
    let r = get_as(&s, &format!("{CM}/n-0"), "text/html");
    assert_eq!(r.status, 406);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",
            "reason": "NotAcceptable", "code": 406})
    );
    let r = s.request("POST", CM, &[("Content-Type", "text/plain")], Some(b"name: x"));
    assert_eq!(r.status, 415);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",
            "reason": "UnsupportedMediaType", "code": 415})
    );
}

/// kubectl's typed clients ask for protobuf and read our protobuf responses:
/// `create` prints the created object's name from the protobuf response, and
/// `get -o yaml` (a JSON read) agrees with it.
#[test]
fn kubectl_reads_protobuf_responses() {
    let s = Server::start();
    let out = s.kubectl_ok(&["create", "configmap", "kc", "--from-literal=enabled=yes", "-o", "json", "-v=8"]);
    assert!(
        out.stderr.contains("Accept: application/vnd.kubernetes.protobuf"),
        "kubectl did not ask for protobuf:\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "the server did not answer protobuf:\n{}",
        out.stderr
    );
    let created = out.json();
    assert_eq!(created["metadata"]["name"], "kc");
    assert_eq!(created["data"]["enabled"], "yes");
    let got = s.get_ok(&format!("{CM}/kc"));
    assert_eq!(created["metadata"]["uid"], got["metadata"]["uid"]);
    assert_eq!(created["metadata"]["resourceVersion"], got["metadata"]["resourceVersion"]);
}

/// The value of `shardline_encodings_built{format="FORMAT"}` in /metrics.
fn encodings_built(s: &Server, format: &str) -> u64 {
    let metrics = s.get("/metrics").text();
    let prefix = format!("shardline_encodings_built{{format=\"{format}\"}} ");
    let line = metrics.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{prefix} in\n{metrics}"));
    line[prefix.len()..].trim().parse().unwrap()
}

/// Encode once, seen from outside: however many gets and list pages read an
/// object version in a format, the server builds that encoding once.
#[test]
fn each_object_version_is_encoded_once_per_format() {
    let s = Server::start();
    s.post_json(CM, &configmap("once", &[("k", "v")]));
    for format in ["protobuf", "cbor", "yaml"] {
        let accept = match format {
            "protobuf" => PB,
            "cbor" => "application/cbor",
            _ => "application/yaml",
        };
        let before = encodings_built(&s, format);
        for _ in 0..3 {
            assert_eq!(get_as(&s, &format!("{CM}/once"), accept).status, 200);
            assert_eq!(get_as(&s, CM, accept).status, 200);
            assert_eq!(get_as(&s, &format!("{CM}?limit=1"), accept).status, 200);
        }
        assert_eq!(encodings_built(&s, format) - before, 1, "{format}: nine reads, one encoding");
    }
    // A new version is a new encoding.
    let mut changed = s.get_ok(&format!("{CM}/once"));
    changed["data"]["k"] = json!("w");
    assert_eq!(s.put_json(&format!("{CM}/once"), &changed).status, 200);
    let before = encodings_built(&s, "protobuf");
    let r = get_as(&s, &format!("{CM}/once"), PB);
    assert_eq!(protobuf::decode_object(&r.body, "ConfigMap").unwrap()["data"]["k"], "w");
    assert_eq!(encodings_built(&s, "protobuf") - before, 1);
}
