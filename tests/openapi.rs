//! The OpenAPI documents against the real server. `/openapi/v2`: the JSON
//! document has every served path and schema in Swagger 2.0 form; the
//! protobuf client-go asks for (`OpenAPISchema()`:
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) decodes,
//! with prost structs written here from gnostic's field numbers, to the same
//! document; gzip, ETag and kube-openapi's 406. Custom resources: a
//! definition's group-version appears in the `/openapi/v3` index with its
//! document (paths, schema, `kubectl explain`), and in `/openapi/v2` (kube's
//! v2 filter applied), both gone when the definition is deleted.

mod common;

use common::Server;
use serde_json::{json, Map, Value};
use std::io::Read;

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// gnostic's `openapi.v2` messages, as far as this document uses them. A
/// oneof is written as its optional members (the same wire format).
mod gnostic {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Document {
        #[prost(string, tag = "1")]
        pub swagger: String,
        #[prost(message, optional, tag = "2")]
        pub info: Option<Info>,
        #[prost(message, optional, tag = "8")]
        pub paths: Option<Paths>,
        #[prost(message, optional, tag = "9")]
        pub definitions: Option<NamedSchemas>,
        #[prost(message, repeated, tag = "12")]
        pub security: Vec<SecurityRequirement>,
        #[prost(message, optional, tag = "13")]
        pub security_definitions: Option<SecurityDefinitions>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Info {
        #[prost(string, tag = "1")]
        pub title: String,
        #[prost(string, tag = "2")]
        pub version: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Paths {
        #[prost(message, repeated, tag = "2")]
        pub path: Vec<NamedPathItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedPathItem {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<PathItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PathItem {
        #[prost(message, optional, tag = "2")]
        pub get: Option<Operation>,
        #[prost(message, optional, tag = "3")]
        pub put: Option<Operation>,
        #[prost(message, optional, tag = "4")]
        pub post: Option<Operation>,
        #[prost(message, optional, tag = "5")]
        pub delete: Option<Operation>,
        #[prost(message, optional, tag = "8")]
        pub patch: Option<Operation>,
        #[prost(message, repeated, tag = "9")]
        pub parameters: Vec<ParametersItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Operation {
        #[prost(string, repeated, tag = "1")]
        pub tags: Vec<String>,
        #[prost(string, tag = "5")]
        pub operation_id: String,
        #[prost(string, repeated, tag = "6")]
        pub produces: Vec<String>,
        #[prost(string, repeated, tag = "7")]
        pub consumes: Vec<String>,
        #[prost(message, repeated, tag = "8")]
        pub parameters: Vec<ParametersItem>,
        #[prost(message, optional, tag = "9")]
        pub responses: Option<Responses>,
        #[prost(string, repeated, tag = "10")]
        pub schemes: Vec<String>,
        #[prost(message, repeated, tag = "13")]
        pub vendor_extension: Vec<NamedAny>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ParametersItem {
        #[prost(message, optional, tag = "1")]
        pub parameter: Option<Parameter>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Parameter {
        #[prost(message, optional, tag = "1")]
        pub body_parameter: Option<BodyParameter>,
        #[prost(message, optional, tag = "2")]
        pub non_body_parameter: Option<NonBodyParameter>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BodyParameter {
        #[prost(string, tag = "2")]
        pub name: String,
        #[prost(string, tag = "3")]
        pub r#in: String,
        #[prost(bool, tag = "4")]
        pub required: bool,
        #[prost(message, optional, tag = "5")]
        pub schema: Option<Schema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NonBodyParameter {
        #[prost(message, optional, tag = "3")]
        pub query_parameter_sub_schema: Option<QueryParameterSubSchema>,
        #[prost(message, optional, tag = "4")]
        pub path_parameter_sub_schema: Option<PathParameterSubSchema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct QueryParameterSubSchema {
        #[prost(bool, tag = "1")]
        pub required: bool,
        #[prost(string, tag = "2")]
        pub r#in: String,
        #[prost(string, tag = "4")]
        pub name: String,
        #[prost(string, tag = "6")]
        pub r#type: String,
        #[prost(bool, tag = "20")]
        pub unique_items: bool,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PathParameterSubSchema {
        #[prost(bool, tag = "1")]
        pub required: bool,
        #[prost(string, tag = "2")]
        pub r#in: String,
        #[prost(string, tag = "4")]
        pub name: String,
        #[prost(string, tag = "5")]
        pub r#type: String,
        #[prost(bool, tag = "19")]
        pub unique_items: bool,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Responses {
        #[prost(message, repeated, tag = "1")]
        pub response_code: Vec<NamedResponseValue>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedResponseValue {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<ResponseValue>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ResponseValue {
        #[prost(message, optional, tag = "1")]
        pub response: Option<Response>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Response {
        #[prost(string, tag = "1")]
        pub description: String,
        #[prost(message, optional, tag = "2")]
        pub schema: Option<SchemaItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchemaItem {
        #[prost(message, optional, tag = "1")]
        pub schema: Option<Schema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedSchemas {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSchema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedSchema {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Schema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Schema {
        #[prost(string, tag = "1")]
        pub r#ref: String,
        #[prost(string, tag = "2")]
        pub format: String,
        #[prost(message, optional, tag = "5")]
        pub default: Option<Any>,
        #[prost(double, tag = "7")]
        pub maximum: f64,
        #[prost(double, tag = "9")]
        pub minimum: f64,
        #[prost(int64, tag = "11")]
        pub max_length: i64,
        #[prost(int64, tag = "12")]
        pub min_length: i64,
        #[prost(string, tag = "13")]
        pub pattern: String,
        #[prost(int64, tag = "14")]
        pub max_items: i64,
        #[prost(int64, tag = "15")]
        pub min_items: i64,
        #[prost(bool, tag = "16")]
        pub unique_items: bool,
        #[prost(string, repeated, tag = "19")]
        pub required: Vec<String>,
        #[prost(message, repeated, tag = "20")]
        pub r#enum: Vec<Any>,
        #[prost(message, optional, boxed, tag = "21")]
        pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
        #[prost(message, optional, tag = "22")]
        pub r#type: Option<TypeItem>,
        #[prost(message, optional, tag = "23")]
        pub items: Option<ItemsItem>,
        #[prost(message, repeated, tag = "24")]
        pub all_of: Vec<Schema>,
        #[prost(message, optional, tag = "25")]
        pub properties: Option<NamedSchemas>,
        #[prost(message, repeated, tag = "31")]
        pub vendor_extension: Vec<NamedAny>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AdditionalPropertiesItem {
        #[prost(message, optional, tag = "1")]
        pub schema: Option<Schema>,
        #[prost(bool, optional, tag = "2")]
        pub boolean: Option<bool>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TypeItem {
        #[prost(string, repeated, tag = "1")]
        pub value: Vec<String>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ItemsItem {
        #[prost(message, repeated, tag = "1")]
        pub schema: Vec<Schema>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Any {
        #[prost(string, tag = "2")]
        pub yaml: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedAny {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Any>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SecurityRequirement {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedStringArray>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedStringArray {
        #[prost(string, tag = "1")]
        pub name: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SecurityDefinitions {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedSecurityDefinitionsItem {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<SecurityDefinitionsItem>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SecurityDefinitionsItem {
        #[prost(message, optional, tag = "2")]
        pub api_key_security: Option<ApiKeySecurity>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ApiKeySecurity {
        #[prost(string, tag = "1")]
        pub r#type: String,
        #[prost(string, tag = "2")]
        pub name: String,
        #[prost(string, tag = "3")]
        pub r#in: String,
    }
}

/// A gnostic `Any`'s YAML text as a value (the server writes JSON, which is
/// YAML); anything else fails the test.
fn any_value(any: &Option<gnostic::Any>) -> Value {
    let yaml = &any.as_ref().expect("an Any").yaml;
    serde_json::from_str(yaml).unwrap_or_else(|e| panic!("Any.yaml {yaml:?}: {e}"))
}

fn extensions(into: &mut Map<String, Value>, named: &[gnostic::NamedAny]) {
    for n in named {
        into.insert(n.name.clone(), any_value(&n.value));
    }
}

/// The JSON a decoded schema stands for, with the keys the document uses.
fn schema_json(s: &gnostic::Schema) -> Value {
    let mut o = Map::new();
    if !s.r#ref.is_empty() {
        o.insert("$ref".into(), json!(s.r#ref));
    }
    if !s.format.is_empty() {
        o.insert("format".into(), json!(s.format));
    }
    if s.default.is_some() {
        o.insert("default".into(), any_value(&s.default));
    }
    if s.unique_items {
        o.insert("uniqueItems".into(), json!(true));
    }
    // Numbers as JSON writes them: whole ones without a fraction.
    let number = |v: f64| if v.fract() == 0.0 && v.abs() < 1e15 { json!(v as i64) } else { json!(v) };
    for (key, v) in [("maximum", s.maximum), ("minimum", s.minimum)] {
        if v != 0.0 {
            o.insert(key.into(), number(v));
        }
    }
    for (key, v) in
        [("maxLength", s.max_length), ("minLength", s.min_length), ("maxItems", s.max_items), ("minItems", s.min_items)]
    {
        if v != 0 {
            o.insert(key.into(), json!(v));
        }
    }
    if !s.pattern.is_empty() {
        o.insert("pattern".into(), json!(s.pattern));
    }
    if !s.required.is_empty() {
        o.insert("required".into(), json!(s.required));
    }
    if !s.r#enum.is_empty() {
        o.insert("enum".into(), s.r#enum.iter().map(|a| any_value(&Some(a.clone()))).collect());
    }
    if let Some(ap) = &s.additional_properties {
        match (&ap.schema, ap.boolean) {
            (Some(schema), _) => o.insert("additionalProperties".into(), schema_json(schema)),
            (None, Some(b)) => o.insert("additionalProperties".into(), json!(b)),
            (None, None) => panic!("empty additionalProperties"),
        };
    }
    if let Some(t) = &s.r#type {
        match t.value.as_slice() {
            [one] => o.insert("type".into(), json!(one)),
            many => o.insert("type".into(), json!(many)),
        };
    }
    if let Some(items) = &s.items {
        match items.schema.as_slice() {
            [one] => o.insert("items".into(), schema_json(one)),
            many => o.insert("items".into(), many.iter().map(schema_json).collect()),
        };
    }
    if !s.all_of.is_empty() {
        o.insert("allOf".into(), s.all_of.iter().map(schema_json).collect());
    }
    if let Some(p) = &s.properties {
        o.insert("properties".into(), named_schemas_json(p));
    }
    extensions(&mut o, &s.vendor_extension);
    Value::Object(o)
}

fn named_schemas_json(n: &gnostic::NamedSchemas) -> Value {
    n.additional_properties
        .iter()
        .map(|s| (s.name.clone(), schema_json(s.value.as_ref().expect("a schema"))))
        .collect::<Map<String, Value>>()
        .into()
}

fn parameter_json(p: &gnostic::ParametersItem) -> Value {
    let p = p.parameter.as_ref().expect("a parameter, not a reference");
    if let Some(b) = &p.body_parameter {
        let mut o =
            json!({"in": b.r#in, "name": b.name, "schema": schema_json(b.schema.as_ref().expect("body schema"))});
        if b.required {
            o["required"] = json!(true);
        }
        return o;
    }
    let nb = p.non_body_parameter.as_ref().expect("a non-body parameter");
    let (required, r#in, name, ty, unique) = match (&nb.query_parameter_sub_schema, &nb.path_parameter_sub_schema) {
        (Some(q), None) => (q.required, &q.r#in, &q.name, &q.r#type, q.unique_items),
        (None, Some(q)) => (q.required, &q.r#in, &q.name, &q.r#type, q.unique_items),
        other => panic!("one of query and path: {other:?}"),
    };
    let mut o = json!({"in": r#in, "name": name, "type": ty});
    if required {
        o["required"] = json!(true);
    }
    if unique {
        o["uniqueItems"] = json!(true);
    }
    o
}

fn operation_json(op: &gnostic::Operation) -> Value {
    let mut o = Map::new();
    if !op.consumes.is_empty() {
        o.insert("consumes".into(), json!(op.consumes));
    }
    o.insert("operationId".into(), json!(op.operation_id));
    if !op.parameters.is_empty() {
        o.insert("parameters".into(), op.parameters.iter().map(parameter_json).collect());
    }
    if !op.produces.is_empty() {
        o.insert("produces".into(), json!(op.produces));
    }
    let mut responses = Map::new();
    for r in &op.responses.as_ref().expect("responses").response_code {
        let response = r.value.as_ref().and_then(|v| v.response.as_ref()).expect("a response");
        let mut v = json!({"description": response.description});
        if let Some(schema) = response.schema.as_ref().and_then(|s| s.schema.as_ref()) {
            v["schema"] = schema_json(schema);
        }
        responses.insert(r.name.clone(), v);
    }
    o.insert("responses".into(), Value::Object(responses));
    o.insert("schemes".into(), json!(op.schemes));
    o.insert("tags".into(), json!(op.tags));
    extensions(&mut o, &op.vendor_extension);
    Value::Object(o)
}

/// Object keys sorted at every level, so two documents compare regardless
/// of the order fields were rebuilt in.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut entries: Vec<_> = o.iter().map(|(k, v)| (k.clone(), normalized(v))).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_json_document_has_every_served_path_and_schema_in_swagger_2_form() {
    let s = Server::start();
    let r = s.request("GET", "/openapi/v2", &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    let etag = r.header("ETag").expect("ETag").to_string();
    assert!(etag.len() == 130 && etag.starts_with('"'), "{etag}");
    let doc: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(doc["securityDefinitions"]["BearerToken"]["type"], "apiKey");
    let text = String::from_utf8_lossy(&r.body);
    assert!(!text.contains("#/components/"), "a v3 reference is left");
    // Every $ref names a definition the document has.
    let definitions = doc["definitions"].as_object().unwrap();
    const REF: &str = "\"$ref\":\"#/definitions/";
    for (at, _) in text.match_indices(REF) {
        let rest = &text[at + REF.len()..];
        let name = &rest[..rest.find('"').unwrap()];
        assert!(definitions.contains_key(name), "dangling reference to {name}");
    }
    // The served collections all have paths, with kube's verbs as v2 operations.
    for path in [
        "/api/v1/namespaces/{namespace}/pods",
        "/api/v1/namespaces/{namespace}/pods/{name}/status",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
        "/apis/storage.k8s.io/v1/csidrivers",
        "/apis/resource.k8s.io/v1/resourceslices",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
    ] {
        assert!(doc["paths"].get(path).is_some(), "no path {path}");
    }
    let create = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"];
    assert_eq!(create["parameters"][0]["in"], "body");
    assert_eq!(create["parameters"][0]["schema"]["$ref"], "#/definitions/io.k8s.api.core.v1.ConfigMap");
    assert_eq!(create["responses"]["201"]["description"], "Created");
    assert_eq!(create["x-kubernetes-action"], "post");
    assert_eq!(create["x-kubernetes-group-version-kind"], json!({"group": "", "kind": "ConfigMap", "version": "v1"}));
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    let consumes: Vec<&str> = patch["consumes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        consumes.contains(&"application/strategic-merge-patch+json")
            && consumes.contains(&"application/apply-patch+yaml")
    );
    let deployment = &definitions["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
    );
    assert_eq!(
        definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"],
        json!({"format": "int-or-string", "type": "string"})
    );
    assert_eq!(definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"], json!({"type": "string"}));
    // Without Accept, kube-openapi answers JSON; text/html is its empty 406.
    let r = s.request("GET", "/openapi/v2", &[], None);
    assert_eq!((r.status, r.header("Content-Type")), (200, Some("application/json")));
    let r = s.request("GET", "/openapi/v2", &[("Accept", "text/html")], None);
    assert_eq!(r.status, 406);
}

/// The document's paths and definitions as decoded from protobuf.
fn decoded(raw: &[u8]) -> (Value, Value) {
    let doc = <gnostic::Document as prost::Message>::decode(raw).expect("a gnostic Document");
    let definitions = named_schemas_json(doc.definitions.as_ref().unwrap());
    let mut paths = Map::new();
    for named in &doc.paths.as_ref().unwrap().path {
        let item = named.value.as_ref().unwrap();
        let mut o = Map::new();
        for (method, op) in [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
        ] {
            if let Some(op) = op {
                o.insert(method.into(), operation_json(op));
            }
        }
        if !item.parameters.is_empty() {
            o.insert("parameters".into(), item.parameters.iter().map(parameter_json).collect());
        }
        paths.insert(named.name.clone(), Value::Object(o));
    }
    (Value::Object(paths), definitions)
}

#[test]
fn the_protobuf_document_decodes_to_the_json_one() {
    let s = Server::start();
    let json_doc: Value =
        serde_json::from_slice(&s.request("GET", "/openapi/v2", &[("Accept", "application/json")], None).body).unwrap();
    // client-go's OpenAPISchema() Accept, with Go's transport's gzip.
    let r = s.request("GET", "/openapi/v2", &[("Accept", PROTOBUF), ("Accept-Encoding", "gzip")], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"));
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&r.body[..]).read_to_end(&mut raw).unwrap();
    let plain = s.request("GET", "/openapi/v2", &[("Accept", PROTOBUF)], None);
    assert_eq!(plain.body, raw, "gzip and identity bodies differ");
    let doc = <gnostic::Document as prost::Message>::decode(&raw[..]).expect("a gnostic Document");

    assert_eq!(doc.swagger, "2.0");
    assert_eq!(doc.info.as_ref().unwrap().title, "Kubernetes");
    let bearer = &doc.security_definitions.as_ref().unwrap().additional_properties[0];
    assert_eq!(bearer.name, "BearerToken");
    let key = bearer.value.as_ref().unwrap().api_key_security.as_ref().unwrap();
    assert_eq!((key.r#type.as_str(), key.name.as_str(), key.r#in.as_str()), ("apiKey", "authorization", "header"));
    assert_eq!(doc.security[0].additional_properties[0].name, "BearerToken");

    // Every definition and every path, field by field.
    let (paths, definitions) = decoded(&raw);
    assert_eq!(normalized(&definitions), normalized(&json_doc["definitions"]));
    assert_eq!(normalized(&paths), normalized(&json_doc["paths"]));
}

fn widget_definition() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"type": "integer", "minimum": 1},
                                "replicas": {"type": "integer"},
                                "note": {"type": "string", "nullable": true},
                                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                          "properties": {"kept": {"type": "string"}}},
                                "port": {"x-kubernetes-int-or-string": true,
                                         "anyOf": [{"type": "integer"}, {"type": "string"}]}
                            }
                        },
                        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
                    }
                }}
            }]
        }
    })
}

#[test]
fn a_custom_resource_has_its_openapi_documents_while_its_definition_stands() {
    let s = Server::start();
    let before = s.request("GET", "/openapi/v2", &[("Accept", "application/json")], None);
    let r = s.post_json("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &widget_definition());
    assert_eq!(r.status, 201, "{}", r.text());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.get("/apis/example.com/v1").status != 200 {
        assert!(std::time::Instant::now() < deadline, "example.com/v1 never served");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // v3: the index names the group-version; its document has the builder's
    // paths and the schema, every reference resolved inside it.
    let index = s.get_ok("/openapi/v3");
    let url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"].as_str().expect("indexed").to_string();
    assert!(url.starts_with("/openapi/v3/apis/example.com/v1?hash="), "{url}");
    let r = s.get(&url);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Cache-Control"), Some("public, immutable"));
    let v3: Value = serde_json::from_slice(&r.body).unwrap();
    let schemas = v3["components"]["schemas"].as_object().unwrap();
    let widget = &schemas["com.example.v1.Widget"];
    assert_eq!(widget["properties"]["spec"]["properties"]["size"], json!({"type": "integer", "minimum": 1}));
    assert_eq!(
        widget["properties"]["metadata"],
        json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
    );
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        schemas["com.example.v1.WidgetList"]["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/com.example.v1.Widget"
    );
    let text = String::from_utf8_lossy(&r.body).to_string();
    const REF: &str = "\"$ref\":\"#/components/schemas/";
    for (at, _) in text.match_indices(REF) {
        let rest = &text[at + REF.len()..];
        let name = &rest[..rest.find('"').unwrap()];
        assert!(schemas.contains_key(name), "dangling reference to {name}");
    }
    let paths = &v3["paths"];
    let ids: Vec<&str> = [
        ("/apis/example.com/v1/widgets", "get"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets", "get"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets", "post"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets", "delete"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}", "patch"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status", "put"),
        ("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale", "get"),
    ]
    .iter()
    .map(|(p, m)| paths[p][m]["operationId"].as_str().unwrap_or_else(|| panic!("no {m} {p}")))
    .collect();
    assert_eq!(
        ids,
        [
            "listExampleComV1WidgetForAllNamespaces",
            "listExampleComV1NamespacedWidget",
            "createExampleComV1NamespacedWidget",
            "deletecollectionExampleComV1NamespacedWidget",
            "patchExampleComV1NamespacedWidget",
            "replaceExampleComV1NamespacedWidgetStatus",
            "readExampleComV1NamespacedWidgetScale",
        ]
    );
    let patch = &paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    let names: Vec<&str> = patch["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert!(names.contains(&"fieldValidation"), "{names:?}");
    assert_eq!(patch["tags"], json!(["exampleCom_v1"]));

    // kubectl explain reads the schema from there.
    let out = s.kubectl_ok(&["explain", "widgets.spec"]);
    assert!(out.stdout.contains("size") && out.stdout.contains("<integer>"), "{}", out.stdout);

    // v2: the schema with kube's v2 filter, and the paths, in both encodings.
    let r = s.request("GET", "/openapi/v2", &[("Accept", "application/json")], None);
    assert_ne!(r.header("ETag"), before.header("ETag"));
    let v2: Value = serde_json::from_slice(&r.body).unwrap();
    let spec = &v2["definitions"]["com.example.v1.Widget"]["properties"]["spec"];
    assert_eq!(spec["properties"]["note"], json!({}), "a nullable field is untyped in v2");
    assert_eq!(spec["properties"]["extra"], json!({"x-kubernetes-preserve-unknown-fields": true}));
    assert_eq!(spec["properties"]["port"], json!({"x-kubernetes-int-or-string": true}));
    assert_eq!(spec["required"], json!(["size"]));
    assert_eq!(
        v2["definitions"]["com.example.v1.Widget"]["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(v2["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status"]["put"].is_object());
    let pb = s.request("GET", "/openapi/v2", &[("Accept", PROTOBUF)], None);
    assert_eq!(pb.status, 200);
    let (paths, definitions) = decoded(&pb.body);
    assert_eq!(normalized(&definitions), normalized(&v2["definitions"]));
    assert_eq!(normalized(&paths), normalized(&v2["paths"]));

    // Gone with the definition.
    let r = s.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com");
    assert!(r.status == 200 || r.status == 202, "{}", r.text());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.get_ok("/openapi/v3")["paths"].get("apis/example.com/v1").is_some() {
        assert!(std::time::Instant::now() < deadline, "still indexed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(s.get("/openapi/v3/apis/example.com/v1").status, 404);
    let after = s.request("GET", "/openapi/v2", &[("Accept", "application/json")], None);
    assert_eq!(after.header("ETag"), before.header("ETag"));
}
