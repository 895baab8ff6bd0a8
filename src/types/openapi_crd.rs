//! OpenAPI documents of custom resources, as kube-apiextensions' OpenAPI
//! builder publishes them: one v3 document per served group-version
//! (`/openapi/v3/apis/GROUP/VERSION`) and their share of the v2 document.
//!
//! For each served version of a definition (a registry entry with
//! `custom`), the builder's routes: list (and list for all namespaces),
//! create, delete collection, read, replace, delete, patch, and those of the
//! `status` and `scale` subresources it has, with the builder's operation ids
//! (`listExampleComV1NamespacedWidget`, `deletecollectionExampleComV1...`),
//! options, media types and responses; the object's schema under its REST
//! friendly name (`com.example.v1.Widget`: the group reversed) with
//! `apiVersion`, `kind`, `metadata` and its GVK added, the list schema beside
//! it, and every built-in schema they reference (ObjectMeta, ListMeta,
//! Status, DeleteOptions, Patch, Scale) taken from the committed documents.
//! The v2 share applies kube's `ToStructuralOpenAPIV2` to the object schema
//! (junctors dropped, nullable and preserve-unknown-fields nodes untyped and
//! without properties) before the v3 -> v2 conversion of `openapi_v2`.
//!
//! Not as kube: no descriptions; the schema is published as declared, without
//! the structural `Unfold` (an `x-kubernetes-int-or-string` node gets no
//! `anyOf`).
//!
//! Invariant: pure functions of the registry's entries; no I/O.

use super::registry::ResourceInfo;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

const V3_REF: &str = "#/components/schemas/";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The served custom resources, by group-version path (`apis/G/V`), in the
/// registry's order.
pub fn custom_group_versions<'a>(
    resources: impl Iterator<Item = &'a ResourceInfo>,
) -> BTreeMap<String, Vec<&'a ResourceInfo>> {
    let mut out: BTreeMap<String, Vec<&ResourceInfo>> = BTreeMap::new();
    for r in resources.filter(|r| r.custom.is_some()) {
        out.entry(format!("apis/{}/{}", r.group, r.version)).or_default().push(r);
    }
    out
}

/// kube-openapi's `ToRESTFriendlyName` of `group/version.kind`.
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// apiserver's `ToValidOperationID`: separators dropped, the letter after
/// one upper-cased, and the first letter too when `capitalize`.
fn operation_id_part(s: &str, capitalize: bool) -> String {
    let mut out = String::new();
    let mut upper = capitalize;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    out
}

/// Every built-in schema of the committed v3 documents, by name.
fn builtin_schemas() -> &'static Map<String, Value> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut all = Map::new();
        for d in super::openapi::openapi_v3_documents() {
            let Some(bytes) = super::openapi::openapi_v3_document(d.path) else { continue };
            let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else { continue };
            if let Some(Value::Object(schemas)) = doc.pointer("/components/schemas") {
                for (k, v) in schemas {
                    all.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        all
    })
}

/// The query parameters of the built-in documents, by name (their schemas).
fn builtin_parameters() -> &'static Map<String, Value> {
    static PARAMETERS: OnceLock<Map<String, Value>> = OnceLock::new();
    PARAMETERS.get_or_init(|| {
        let mut all = Map::new();
        let Some(bytes) = super::openapi::openapi_v3_document("api/v1") else { return all };
        let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else { return all };
        let mut take = |list: Option<&Value>| {
            for p in list.and_then(Value::as_array).into_iter().flatten() {
                if p.get("in").and_then(Value::as_str) == Some("query") {
                    if let Some(name) = p.get("name").and_then(Value::as_str) {
                        all.entry(name.to_string()).or_insert_with(|| p.clone());
                    }
                }
            }
        };
        if let Some(Value::Object(paths)) = doc.get("paths") {
            for item in paths.values() {
                take(item.get("parameters"));
                for op in item.as_object().into_iter().flat_map(|o| o.values()) {
                    take(op.get("parameters"));
                }
            }
        }
        all
    })
}

fn query(names: &[&str]) -> Vec<Value> {
    let known = builtin_parameters();
    names
        .iter()
        .map(|n| {
            known
                .get(*n)
                .cloned()
                .unwrap_or_else(|| json!({"in": "query", "name": n, "schema": {"type": "string", "uniqueItems": true}}))
        })
        .collect()
}

const LIST_OPTIONS: [&str; 11] = [
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "shardSelector",
    "timeoutSeconds",
    "watch",
];
const WRITE_OPTIONS: [&str; 3] = ["dryRun", "fieldManager", "fieldValidation"];
const DELETE_OPTIONS_PARAMS: [&str; 5] = [
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

fn reference(name: &str) -> Value {
    json!({"$ref": format!("{V3_REF}{name}")})
}

fn content(types: &[&str], schema: &Value) -> Value {
    Value::Object(types.iter().map(|t| (t.to_string(), json!({"schema": schema}))).collect())
}

/// One route of the builder: the operation, before common parameters are
/// moved to the path.
struct Route {
    path: String,
    method: &'static str,
    action: &'static str,
    operation: String,
    parameters: Vec<Value>,
    body: Option<(Vec<&'static str>, Value, bool)>,
    responses: Vec<(&'static str, Value)>,
}

fn routes(r: &ResourceInfo) -> Vec<Route> {
    let group_part = operation_id_part(r.group.trim_end_matches(".k8s.io"), true);
    let version_part = operation_id_part(&r.version, true);
    let namespaced = if r.namespaced { "Namespaced" } else { "" };
    let object = reference(&definition_name(&r.group, &r.version, &r.kind));
    let list = reference(&definition_name(&r.group, &r.version, &r.list_kind));
    let status = reference(STATUS);
    let scale = reference(SCALE);
    let mut root = format!("/apis/{}/{}/{}", r.group, r.version, r.resource);
    let id = |verb: &str, rest: &str| format!("{verb}{group_part}{version_part}{rest}");
    let mut out = Vec::new();
    let ok = |schema: &Value| ("200", schema.clone());
    if r.namespaced {
        out.push(Route {
            path: root.clone(),
            method: "get",
            action: "list",
            operation: id("list", &format!("{}ForAllNamespaces", r.kind)),
            parameters: query(&LIST_OPTIONS),
            body: None,
            responses: vec![ok(&list)],
        });
        root = format!("/apis/{}/{}/namespaces/{{namespace}}/{}", r.group, r.version, r.resource);
    }
    let json_yaml = vec!["application/json", "application/yaml"];
    let patch_types =
        vec!["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"];
    out.push(Route {
        path: root.clone(),
        method: "get",
        action: "list",
        operation: id("list", &format!("{namespaced}{}", r.kind)),
        parameters: query(&LIST_OPTIONS),
        body: None,
        responses: vec![ok(&list)],
    });
    out.push(Route {
        path: root.clone(),
        method: "post",
        action: "post",
        operation: id("create", &format!("{namespaced}{}", r.kind)),
        parameters: query(&WRITE_OPTIONS),
        body: Some((json_yaml.clone(), object.clone(), true)),
        responses: vec![ok(&object), ("201", object.clone()), ("202", object.clone())],
    });
    out.push(Route {
        path: root.clone(),
        method: "delete",
        action: "deletecollection",
        operation: id("deletecollection", &format!("{namespaced}{}", r.kind)),
        parameters: query(&LIST_OPTIONS),
        body: None,
        responses: vec![ok(&status)],
    });
    let mut item = |suffix: &str, sub: &str, schema: &Value| {
        let path = format!("{root}/{{name}}{suffix}");
        let sub_title: String = sub.chars().take(1).flat_map(char::to_uppercase).chain(sub.chars().skip(1)).collect();
        let rest = format!("{namespaced}{}{sub_title}", r.kind);
        out.push(Route {
            path: path.clone(),
            method: "get",
            action: "get",
            operation: id("read", &rest),
            parameters: query(&["resourceVersion"]),
            body: None,
            responses: vec![ok(schema)],
        });
        out.push(Route {
            path: path.clone(),
            method: "put",
            action: "put",
            operation: id("replace", &rest),
            parameters: query(&WRITE_OPTIONS),
            body: Some((json_yaml.clone(), schema.clone(), true)),
            responses: vec![ok(schema), ("201", schema.clone())],
        });
        if sub.is_empty() {
            out.push(Route {
                path: path.clone(),
                method: "delete",
                action: "delete",
                operation: id("delete", &rest),
                parameters: query(&DELETE_OPTIONS_PARAMS),
                body: Some((json_yaml.clone(), reference(DELETE_OPTIONS), false)),
                responses: vec![ok(&status), ("202", status.clone())],
            });
        }
        out.push(Route {
            path,
            method: "patch",
            action: "patch",
            operation: id("patch", &rest),
            parameters: query(&WRITE_OPTIONS),
            body: Some((patch_types.clone(), reference(PATCH), true)),
            responses: vec![ok(schema)],
        });
    };
    item("", "", &object);
    if r.subresources.iter().any(|s| s == "status") {
        item("/status", "status", &object);
    }
    if r.subresources.iter().any(|s| s == "scale") {
        item("/scale", "scale", &scale);
    }
    out
}

/// The path items of one resource, with the parameters every operation of
/// a path shares moved to the path (as kube-openapi's builder does).
fn paths(r: &ResourceInfo, into: &mut Map<String, Value>) {
    let tag = format!(
        "{}_{}",
        operation_id_part(r.group.trim_end_matches(".k8s.io"), false),
        operation_id_part(&r.version, false)
    );
    let gvk = json!({"group": r.group, "kind": r.kind, "version": r.version});
    let mut by_path: Vec<(String, Vec<Route>)> = Vec::new();
    for route in routes(r) {
        match by_path.iter_mut().find(|(p, _)| *p == route.path) {
            Some((_, list)) => list.push(route),
            None => by_path.push((route.path.clone(), vec![route])),
        }
    }
    for (path, routes) in by_path {
        let mut common: Vec<Value> = Vec::new();
        if path.contains("{name}") {
            common.push(json!({"in": "path", "name": "name", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
        }
        if path.contains("{namespace}") {
            common.push(json!({"in": "path", "name": "namespace", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
        }
        common.extend(query(&["pretty"]));
        let shared: Vec<Value> =
            routes[0].parameters.iter().filter(|p| routes.iter().all(|r| r.parameters.contains(p))).cloned().collect();
        common.extend(shared.iter().cloned());
        common.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let mut item = Map::new();
        for route in routes {
            let mut op = Map::new();
            op.insert("operationId".into(), json!(route.operation));
            let own: Vec<Value> = route.parameters.into_iter().filter(|p| !shared.contains(p)).collect();
            if !own.is_empty() {
                op.insert("parameters".into(), Value::Array(own));
            }
            if let Some((types, schema, required)) = route.body {
                let mut body = json!({"content": content(&types, &schema)});
                if required {
                    body["required"] = json!(true);
                }
                op.insert("requestBody".into(), body);
            }
            let mut responses = Map::new();
            for (code, schema) in route.responses {
                responses.insert(
                    code.into(),
                    json!({"content": content(&["application/json", "application/yaml"], &schema)}),
                );
            }
            responses.insert("401".into(), json!({}));
            op.insert("responses".into(), Value::Object(responses));
            op.insert("tags".into(), json!([tag]));
            op.insert("x-kubernetes-action".into(), json!(route.action));
            op.insert("x-kubernetes-group-version-kind".into(), gvk.clone());
            item.insert(route.method.into(), Value::Object(op));
        }
        item.insert("parameters".into(), Value::Array(common));
        into.insert(path, Value::Object(item));
    }
}

/// The object's schema as published: the declared `openAPIV3Schema` with
/// TypeMeta's `apiVersion`/`kind`, `metadata` as ObjectMeta, embedded
/// resources given theirs, and the GVK. `v2` applies kube's v2 filter first
/// (and, as kube, publishes a preserve-unknown-fields root as a bare object).
fn object_schema(r: &ResourceInfo, v2: bool) -> Value {
    let declared = r.custom.as_ref().and_then(|c| c.schema.clone());
    let gvk = json!([{"group": r.group, "kind": r.kind, "version": r.version}]);
    let preserve_root =
        declared.as_ref().and_then(|s| s.get("x-kubernetes-preserve-unknown-fields")).and_then(Value::as_bool)
            == Some(true);
    let Some(mut schema) = declared.filter(|_| !(v2 && preserve_root)) else {
        return json!({"type": "object", "x-kubernetes-group-version-kind": gvk});
    };
    if v2 {
        to_structural_v2(&mut schema);
    }
    add_embedded(&mut schema, v2);
    if let Some(o) = schema.as_object_mut() {
        let properties = o.entry("properties").or_insert_with(|| json!({}));
        if let Some(p) = properties.as_object_mut() {
            p.insert("apiVersion".into(), json!({"type": "string"}));
            p.insert("kind".into(), json!({"type": "string"}));
            p.insert("metadata".into(), reference(OBJECT_META));
        }
        o.insert("x-kubernetes-group-version-kind".into(), gvk);
    }
    schema
}

fn children(schema: &mut Value, f: &mut impl FnMut(&mut Value)) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for v in props.values_mut() {
            f(v);
        }
    }
    if let Some(items @ Value::Object(_)) = schema.get_mut("items") {
        f(items);
    }
    if let Some(additional @ Value::Object(_)) = schema.get_mut("additionalProperties") {
        f(additional);
    }
}

/// `x-kubernetes-embedded-resource` nodes get TypeMeta and ObjectMeta, and
/// require kind and apiVersion (not under preserve-unknown-fields in v2).
fn add_embedded(schema: &mut Value, v2: bool) {
    children(schema, &mut |c| add_embedded(c, v2));
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if v2 && flag("x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !flag("x-kubernetes-embedded-resource") {
        return;
    }
    let Some(o) = schema.as_object_mut() else { return };
    let properties = o.entry("properties").or_insert_with(|| json!({}));
    if let Some(p) = properties.as_object_mut() {
        p.insert("apiVersion".into(), json!({"type": "string"}));
        p.insert("kind".into(), json!({"type": "string"}));
        p.insert("metadata".into(), reference(OBJECT_META));
    }
    let required = o.entry("required").or_insert_with(|| json!([]));
    if let Some(list) = required.as_array_mut() {
        for name in ["kind", "apiVersion"] {
            if !list.iter().any(|v| v == name) {
                list.push(json!(name));
            }
        }
    }
}

/// kube's `ToStructuralOpenAPIV2`, node by node from the root.
pub fn to_structural_v2(schema: &mut Value) {
    let Some(o) = schema.as_object_mut() else { return };
    for junctor in ["allOf", "oneOf", "anyOf", "not"] {
        o.remove(junctor);
    }
    let flag = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_bool) == Some(true);
    if flag(o, "nullable") {
        o.remove("type");
        o.remove("nullable");
        o.remove("items");
        o.remove("properties");
    }
    if flag(o, "x-kubernetes-preserve-unknown-fields") {
        o.remove("items");
        o.remove("properties");
    }
    if !o.contains_key("items") && o.get("type").and_then(Value::as_str) == Some("array") {
        o.remove("type");
    }
    if flag(o, "x-kubernetes-preserve-unknown-fields") && o.get("type").and_then(Value::as_str) == Some("object") {
        o.remove("type");
    }
    let nullable: Vec<String> = o
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().filter(|(_, v)| flag_of(v, "nullable")).map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    if let Some(Value::Array(required)) = o.get_mut("required") {
        required.retain(|r| !r.as_str().is_some_and(|r| nullable.iter().any(|n| n == r)));
    }
    if o.get("additionalProperties").is_some_and(|a| flag_of(a, "nullable")) {
        o.remove("required");
    }
    if o.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        o.remove("required");
    }
    children(schema, &mut to_structural_v2);
}

fn flag_of(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool) == Some(true)
}

fn list_schema(r: &ResourceInfo) -> Value {
    json!({
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"items": reference(&definition_name(&r.group, &r.version, &r.kind)), "type": "array"},
            "kind": {"type": "string"},
            "metadata": reference(LIST_META),
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [{"group": r.group, "kind": r.list_kind, "version": r.version}],
    })
}

/// Adds `name` and every built-in schema it references, transitively.
fn add_closure(name: &str, into: &mut Map<String, Value>) {
    if into.contains_key(name) {
        return;
    }
    let Some(schema) = builtin_schemas().get(name) else { return };
    into.insert(name.to_string(), schema.clone());
    let text = schema.to_string();
    for (at, _) in text.match_indices(V3_REF) {
        let rest = &text[at + V3_REF.len()..];
        if let Some(end) = rest.find('"') {
            add_closure(&rest[..end], into);
        }
    }
}

/// The v3 document of one custom group-version (`resources` all of it).
/// `v2` gives the schemas kube publishes in v2 instead (see `object_schema`).
pub fn document(resources: &[&ResourceInfo], v2: bool) -> Value {
    let mut all_paths = Map::new();
    let mut schemas = Map::new();
    for r in resources {
        paths(r, &mut all_paths);
        schemas.insert(definition_name(&r.group, &r.version, &r.kind), object_schema(r, v2));
        schemas.insert(definition_name(&r.group, &r.version, &r.list_kind), list_schema(r));
        for name in [OBJECT_META, LIST_META, STATUS, DELETE_OPTIONS, PATCH] {
            add_closure(name, &mut schemas);
        }
        if r.subresources.iter().any(|s| s == "scale") {
            add_closure(SCALE, &mut schemas);
        }
    }
    let mut schemas: Vec<(String, Value)> = schemas.into_iter().collect();
    schemas.sort_by(|a, b| a.0.cmp(&b.0));
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": all_paths,
        "components": {"schemas": Value::Object(schemas.into_iter().collect())},
    })
}

/// FNV-1a 128 of `bytes`, upper-case hex: the `hash` of an index entry (the
/// function the committed documents' hashes use).
pub fn content_hash(bytes: &[u8]) -> String {
    let mut hash: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in bytes {
        hash ^= u128::from(*b);
        hash = hash.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    format!("{hash:032X}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::crd;

    fn widget() -> Vec<ResourceInfo> {
        let mut crd = crd::tests::widget_crd();
        crd["status"] = json!({"conditions": [{"type": "NamesAccepted", "status": "True"}]});
        crd::served_resources(&crd)
    }

    #[test]
    fn names_and_operation_ids_are_the_builders() {
        assert_eq!(definition_name("example.com", "v1", "Widget"), "com.example.v1.Widget");
        assert_eq!(definition_name("stable", "v1", "Widget"), "stable.v1.Widget");
        assert_eq!(operation_id_part("example.com", true), "ExampleCom");
        assert_eq!(operation_id_part("my-group.example.com", false), "myGroupExampleCom");
        let resources = widget();
        assert!(!resources.is_empty(), "the test definition serves nothing");
        let r = &resources[0];
        let ids: Vec<String> = routes(r).iter().map(|r| r.operation.clone()).collect();
        let g = format!("{}{}", operation_id_part(&r.group, true), operation_id_part(&r.version, true));
        assert!(
            ids.contains(&format!("list{g}Namespaced{}", r.kind)) || ids.contains(&format!("list{g}{}", r.kind)),
            "{ids:?}"
        );
        assert!(ids.iter().any(|i| i.starts_with(&format!("deletecollection{g}"))), "{ids:?}");
    }

    #[test]
    fn the_document_references_only_what_it_has() {
        let resources = widget();
        let refs: Vec<&ResourceInfo> = resources.iter().filter(|r| r.version == resources[0].version).collect();
        let doc = document(&refs, false);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let text = doc.to_string();
        for (at, _) in text.match_indices(V3_REF) {
            let rest = &text[at + V3_REF.len()..];
            let name = &rest[..rest.find('"').unwrap()];
            assert!(schemas.contains_key(name), "dangling {name}");
        }
        let r = refs[0];
        let object = &schemas[&definition_name(&r.group, &r.version, &r.kind)];
        assert_eq!(object["properties"]["metadata"], reference(OBJECT_META));
        assert_eq!(object["x-kubernetes-group-version-kind"][0]["kind"], json!(r.kind));
    }

    #[test]
    fn the_v2_filter_is_kubes() {
        let mut s = json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "nullable": true},
                "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"c": {"type": "string"}}},
                "d": {"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {"type": "string"}},
                "e": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
            }
        });
        to_structural_v2(&mut s);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "required": ["b"],
                "properties": {
                    "a": {},
                    "b": {"x-kubernetes-preserve-unknown-fields": true},
                    "d": {"x-kubernetes-preserve-unknown-fields": true},
                    "e": {"x-kubernetes-int-or-string": true},
                }
            })
        );
    }
}
