//! Metadata-only representations against the real server, with raw HTTP:
//! PartialObjectMetadata for get, each watch event and write responses, and
//! PartialObjectMetadataList pages (continue, remainingItemCount), in JSON,
//! YAML and protobuf (decoded with k8s-pb's prost structs, as client-go's
//! decoder would), for a built-in resource and a custom resource; the 406s
//! kube-apiserver answers; Tables with `includeObject=Metadata`.

mod common;

use common::{assert_status, configmap, Server};
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{json, Value};
use shardline::api::yaml;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
/// kube-rs' `get_metadata`/`watch_metadata` Accept.
const JSON_OBJECT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
/// kube-rs' `list_metadata` Accept (and the issue's "alone" form).
const JSON_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/// client-go's metadata client, for gets and watches.
const CLIENT_GO_OBJECT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// client-go's metadata client, for lists.
const CLIENT_GO_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

fn get_as(s: &Server, path: &str, accept: &str) -> common::Response {
    s.request("GET", path, &[("Accept", accept)], None)
}

fn json_of(r: &common::Response) -> Value {
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    r.json()
}

/// A protobuf response's envelope: (apiVersion, kind, raw).
fn envelope(body: &[u8]) -> (String, String, Vec<u8>) {
    assert!(body.starts_with(b"k8s\0"), "not a protobuf envelope: {:?}", &body[..body.len().min(16)]);
    let unknown = Unknown::decode(&body[4..]).expect("runtime.Unknown");
    let type_meta = unknown.type_meta.unwrap_or_default();
    (type_meta.api_version.unwrap_or_default(), type_meta.kind.unwrap_or_default(), unknown.raw.unwrap_or_default())
}

/// The fields a PartialObjectMetadata's metadata and the full object's must
/// share, from prost's ObjectMeta.
fn summary(m: &meta::ObjectMeta) -> Value {
    json!({
        "name": m.name, "namespace": m.namespace, "uid": m.uid, "resourceVersion": m.resource_version,
        "labels": m.labels, "annotations": m.annotations, "generation": m.generation,
        "creationTimestamp": m.creation_timestamp.as_ref().and_then(|t| t.seconds),
    })
}

fn summary_of_json(m: &Value) -> Value {
    let seconds = m["creationTimestamp"].as_str().map(|t| {
        time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).unwrap().unix_timestamp()
    });
    let map = |v: &Value| -> Value { v.as_object().cloned().map(Value::Object).unwrap_or_else(|| json!({})) };
    json!({
        "name": m["name"], "namespace": m["namespace"], "uid": m["uid"], "resourceVersion": m["resourceVersion"],
        "labels": map(&m["labels"]), "annotations": map(&m["annotations"]), "generation": m["generation"],
        "creationTimestamp": seconds,
    })
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|a| a.iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// A protobuf watch body's events: (type, object envelope).
fn protobuf_events(mut body: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut events = Vec::new();
    while !body.is_empty() {
        let len = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
        let event = meta::WatchEvent::decode(&body[4..4 + len]).expect("WatchEvent");
        body = &body[4 + len..];
        events.push((event.r#type.unwrap_or_default(), event.object.and_then(|o| o.raw).unwrap_or_default()));
    }
    events
}

fn json_events(body: &[u8]) -> Vec<Value> {
    body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect()
}

fn setup() -> Server {
    let s = Server::start();
    for i in 0..5 {
        let mut cm = configmap(&format!("cm-{i}"), &[("big", &"x".repeat(200))]);
        cm["metadata"]["labels"] = json!({"app": "web", "n": i.to_string()});
        cm["metadata"]["annotations"] = json!({"note": "kept"});
        assert_eq!(s.post_json(CM, &cm).status, 201);
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    assert_eq!(s.post_json(CRDS, &crd).status, 201);
    for i in 0..5 {
        let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": format!("w-{i}"), "labels": {"app": "web"}}, "spec": {"size": i}});
        let r = s.post_json(WIDGETS, &widget);
        assert_eq!(r.status, 201, "{}", r.text());
    }
    s
}

#[test]
fn metadata_only_gets_and_lists_in_every_format() {
    let s = setup();
    for (collection, first, go_type) in [(CM, "cm-0", "core.ConfigMap"), (WIDGETS, "w-0", "unstructured.Unstructured")]
    {
        let full = s.get_ok(&format!("{collection}/{first}"));
        // GET, JSON: kind, apiVersion and the object's metadata, nothing else.
        let partial = json_of(&get_as(&s, &format!("{collection}/{first}"), JSON_OBJECT));
        assert_eq!(
            partial,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]})
        );
        // YAML: the same document.
        let r =
            get_as(&s, &format!("{collection}/{first}"), &JSON_OBJECT.replace("application/json", "application/yaml"));
        assert_eq!(r.header("content-type"), Some("application/yaml"));
        assert_eq!(Value::Object(yaml::decode_object(&r.body).unwrap()), partial);
        // Protobuf (client-go's Accept), custom resources included.
        let r = get_as(&s, &format!("{collection}/{first}"), CLIENT_GO_OBJECT);
        assert_eq!(r.status, 200, "{collection}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/vnd.kubernetes.protobuf"));
        let (api_version, kind, raw) = envelope(&r.body);
        assert_eq!((api_version.as_str(), kind.as_str()), ("meta.k8s.io/v1", "PartialObjectMetadata"));
        let decoded = meta::PartialObjectMetadata::decode(&raw[..]).expect("PartialObjectMetadata");
        assert_eq!(summary(&decoded.metadata.unwrap()), summary_of_json(&full["metadata"]));

        // A paginated list: continue and remainingItemCount as for the full objects.
        let full_list = s.get_ok(collection);
        let page = json_of(&get_as(&s, &format!("{collection}?limit=2"), JSON_LIST));
        assert_eq!(page["kind"], "PartialObjectMetadataList");
        assert_eq!(page["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(page["metadata"]["remainingItemCount"], 3);
        for item in page["items"].as_array().unwrap() {
            assert_eq!(item.as_object().unwrap().len(), 3, "{item}");
            assert_eq!(item["kind"], "PartialObjectMetadata");
            assert_eq!(item["apiVersion"], "meta.k8s.io/v1");
        }
        let mut seen = names(&page);
        let mut token = page["metadata"]["continue"].as_str().unwrap().to_string();
        while !token.is_empty() {
            let next = json_of(&get_as(&s, &format!("{collection}?limit=2&continue={token}"), JSON_LIST));
            assert_eq!(next["metadata"]["resourceVersion"], page["metadata"]["resourceVersion"], "one snapshot");
            seen.extend(names(&next));
            token = next["metadata"]["continue"].as_str().unwrap_or("").to_string();
        }
        assert_eq!(seen, names(&full_list));
        // Without limit: every item's metadata, byte for byte the full list's.
        let whole = json_of(&get_as(&s, collection, JSON_LIST));
        let metadata_of = |list: &Value| -> Vec<Value> {
            list["items"].as_array().unwrap().iter().map(|i| i["metadata"].clone()).collect()
        };
        assert_eq!(metadata_of(&whole), metadata_of(&full_list));
        // YAML list.
        let r =
            get_as(&s, &format!("{collection}?limit=2"), &JSON_LIST.replace("application/json", "application/yaml"));
        let yaml_page = Value::Object(yaml::decode_object(&r.body).unwrap());
        assert_eq!(yaml_page["items"], page["items"]);
        // Protobuf pages (client-go's Accept): ListMeta and items without TypeMeta.
        let r = get_as(&s, &format!("{collection}?limit=2"), CLIENT_GO_LIST);
        assert_eq!(r.status, 200, "{}", r.text());
        let (api_version, kind, raw) = envelope(&r.body);
        assert_eq!((api_version.as_str(), kind.as_str()), ("meta.k8s.io/v1", "PartialObjectMetadataList"));
        let list = meta::PartialObjectMetadataList::decode(&raw[..]).expect("PartialObjectMetadataList");
        let list_meta = list.metadata.unwrap();
        assert_eq!(list_meta.remaining_item_count, Some(3));
        assert!(list_meta.r#continue.as_deref().is_some_and(|c| !c.is_empty()));
        let pb_items: Vec<Value> = list.items.iter().map(|i| summary(i.metadata.as_ref().unwrap())).collect();
        let json_items: Vec<Value> =
            page["items"].as_array().unwrap().iter().map(|i| summary_of_json(&i["metadata"])).collect();
        assert_eq!(pb_items, json_items);
        // v1beta1 is served too.
        let beta = json_of(&get_as(&s, &format!("{collection}?limit=1"), &JSON_LIST.replace("v=v1", "v=v1beta1")));
        assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(beta["items"][0]["apiVersion"], "meta.k8s.io/v1beta1");
        // An empty list: Go's nil items.
        let empty = json_of(&get_as(&s, &format!("{collection}?labelSelector=app%3Dnone"), JSON_LIST));
        assert_eq!(empty["items"], Value::Null);

        // The 406s kube-apiserver answers: the wrong kind for the endpoint (after reading)...
        let r = get_as(&s, &format!("{collection}/{first}"), JSON_LIST);
        let status = assert_status(&r, 406, "NotAcceptable");
        assert_eq!(
            status["message"],
            format!("you requested PartialObjectMetadataList, but the requested object is not a list (*{go_type})")
        );
        let r = get_as(&s, collection, JSON_OBJECT);
        let status = assert_status(&r, 406, "NotAcceptable");
        assert_eq!(
            status["message"],
            format!("you requested PartialObjectMetadata, but the requested object is a list (*{go_type}List)")
        );
        // ...and a conversion without its group and version is not offered at all.
        assert_status(&get_as(&s, collection, "application/json;as=PartialObjectMetadataList"), 406, "NotAcceptable");
        // A missing object is 404 before any conversion.
        assert_status(&get_as(&s, &format!("{collection}/absent"), JSON_LIST), 404, "NotFound");
    }
    // The custom resource's protobuf-only metadata Accept is served, its plain protobuf still 406.
    assert_eq!(get_as(&s, WIDGETS, CLIENT_GO_LIST.split(',').next().unwrap()).status, 200);
    assert_status(&get_as(&s, WIDGETS, "application/vnd.kubernetes.protobuf"), 406, "NotAcceptable");
}

#[test]
fn metadata_only_watches_and_write_responses() {
    let s = setup();
    for (collection, prefix) in [(CM, "cm"), (WIDGETS, "w")] {
        let rv = common::resource_version(&s.get_ok(collection));
        // Writes answer in the metadata representation they were asked for.
        let object = if prefix == "cm" {
            configmap("late", &[("k", "v")])
        } else {
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "late"}, "spec": {"size": 9}})
        };
        let body = serde_json::to_vec(&object).unwrap();
        let r = s.request(
            "POST",
            collection,
            &[("Content-Type", "application/json"), ("Accept", JSON_OBJECT)],
            Some(&body),
        );
        assert_eq!(r.status, 201, "{}", r.text());
        let created = r.json();
        assert_eq!(created["kind"], "PartialObjectMetadata");
        assert_eq!(created["metadata"]["name"], "late");
        assert!(created.get("spec").is_none() && created.get("data").is_none());
        let r = s.request(
            "PATCH",
            &format!("{collection}/late"),
            &[("Content-Type", "application/merge-patch+json"), ("Accept", JSON_OBJECT)],
            Some(br#"{"metadata":{"labels":{"patched":"yes"}}}"#),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["kind"], "PartialObjectMetadata");
        assert_eq!(r.json()["metadata"]["labels"]["patched"], "yes");
        assert_eq!(s.delete(&format!("{collection}/late")).status, 200);

        // JSON watch from the list's revision: ADDED, MODIFIED, DELETED, each a PartialObjectMetadata.
        let path = format!("{collection}?watch=1&resourceVersion={rv}&timeoutSeconds=1");
        let events = json_events(&get_as(&s, &path, JSON_OBJECT).body);
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"], "{events:?}");
        for event in &events {
            assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
            assert_eq!(event["object"]["apiVersion"], "meta.k8s.io/v1");
            assert_eq!(event["object"]["metadata"]["name"], "late");
            assert_eq!(event["object"].as_object().unwrap().len(), 3);
        }
        // Protobuf watch (client-go's Accept): each frame's object is a PartialObjectMetadata envelope.
        let events = protobuf_events(&get_as(&s, &path, CLIENT_GO_OBJECT).body);
        assert_eq!(events.len(), 3);
        for (event_type, object) in &events {
            let (api_version, kind, raw) = envelope(object);
            assert_eq!(
                (api_version.as_str(), kind.as_str()),
                ("meta.k8s.io/v1", "PartialObjectMetadata"),
                "{event_type}"
            );
            let partial = meta::PartialObjectMetadata::decode(&raw[..]).unwrap();
            assert_eq!(partial.metadata.unwrap().name.as_deref(), Some("late"));
        }
        // A streaming list: the state as ADDED, then the initial-events-end bookmark, as PartialObjectMetadata.
        let path = format!(
            "{collection}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
        );
        let events = json_events(&get_as(&s, &path, JSON_OBJECT).body);
        let added: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "ADDED")
            .map(|e| e["object"]["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(added.len(), 5, "{events:?}");
        let end = events.iter().find(|e| e["type"] == "BOOKMARK").expect("the initial-events-end bookmark");
        assert_eq!(end["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
        assert!(end["object"]["metadata"]["resourceVersion"].as_str().is_some_and(|v| !v.is_empty()));
        // as=PartialObjectMetadataList on a watch: kube's watch ends at its first event, sending nothing.
        let r = get_as(&s, &format!("{collection}?watch=1&resourceVersion=0&timeoutSeconds=2"), JSON_LIST);
        assert_eq!(r.status, 200);
        assert!(json_events(&r.body).is_empty(), "{}", r.text());
    }
}

#[test]
fn tables_include_partial_object_metadata() {
    let s = setup();
    for (path, object) in [(format!("{CM}/cm-1"), "cm-1"), (format!("{WIDGETS}/w-1"), "w-1")] {
        let full = s.get_ok(&path);
        let table = json_of(&get_as(
            &s,
            &format!("{path}?includeObject=Metadata"),
            "application/json;as=Table;g=meta.k8s.io;v=v1",
        ));
        let row_object = &table["rows"][0]["object"];
        assert_eq!(
            row_object,
            &json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]}),
            "{object}"
        );
    }
}
