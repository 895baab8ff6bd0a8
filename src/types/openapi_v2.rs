//! The OpenAPI v2 (Swagger 2.0) document of `/openapi/v2`: every served
//! group-version's paths and every schema they reference, in JSON and in the
//! protobuf encoding client-go's `OpenAPISchema()` asks for
//! (`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`, gnostic's
//! `openapi.v2.Document`).
//!
//! kube-apiserver builds both of its OpenAPI documents from the same Go
//! types; Shardline commits only the v3 documents (`types::openapi`) and
//! derives this one from them, as kube-openapi writes a v2 schema:
//! - `#/components/schemas/X` references become `#/definitions/X`, and a
//!   property that v3 wraps as `allOf: [{$ref}]` (to carry a `default`) is the
//!   bare `$ref` (v2 allows nothing beside a reference);
//! - a v3 `oneOf` of types (`Quantity`, `IntOrString`) is v2's `type: string`
//!   (kube-openapi's `OpenAPISchemaType` for both);
//! - parameters carry their schema's `type`/`uniqueItems` inline, a request
//!   body is the `body` parameter, `consumes`/`produces` list the v3 content
//!   types, responses carry one schema and their status text, and every
//!   operation has `schemes: ["https"]`;
//! - the document has kube's `BearerToken` security definition.
//!
//! Vendor extensions, defaults and enum values are gnostic `Any`s whose
//! `yaml` holds the value as JSON text (JSON is YAML; kube's gnostic writes
//! YAML flow text that parses to the same value).
//!
//! Invariant: no I/O; the documents are built at most once per process (on
//! first request) and shared as `Bytes`. The ETag is kube-openapi's: the
//! upper-case hex SHA-512 of the JSON bytes, the same for both encodings.

use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};

/// Both encodings of the document and their ETag.
pub struct OpenApiV2 {
    pub json: Bytes,
    pub protobuf: Bytes,
    /// Without quotes: upper-case hex SHA-512 of `json`.
    pub etag: String,
    /// The gzipped encodings, made by the API layer on first use.
    pub json_gzip: OnceLock<Bytes>,
    pub protobuf_gzip: OnceLock<Bytes>,
}

impl OpenApiV2 {
    fn new(json: Vec<u8>, protobuf: Vec<u8>) -> OpenApiV2 {
        let digest = ring::digest::digest(&ring::digest::SHA512, &json);
        let etag = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        OpenApiV2 {
            json: Bytes::from(json),
            protobuf: Bytes::from(protobuf),
            etag,
            json_gzip: OnceLock::new(),
            protobuf_gzip: OnceLock::new(),
        }
    }
}

/// The built-in part as a value, built once from the committed v3 documents.
fn builtin_document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let v3: Vec<Value> = super::openapi::openapi_v3_documents()
            .iter()
            .filter_map(|d| super::openapi::openapi_v3_document(d.path))
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        document_from_v3(&v3, super::discovery::GIT_VERSION)
    })
}

/// The document of the built-in resources alone.
pub fn openapi_v2() -> Arc<OpenApiV2> {
    static DOCUMENT: OnceLock<Arc<OpenApiV2>> = OnceLock::new();
    DOCUMENT
        .get_or_init(|| {
            let document = builtin_document();
            Arc::new(OpenApiV2::new(serde_json::to_vec(document).unwrap_or_default(), gnostic::document(document)))
        })
        .clone()
}

/// The document with the custom resources' share added: `custom` are their
/// v3-form documents carrying the v2 schemas (`openapi_crd::document(.., true)`).
/// The last one built is kept per thread, keyed by its inputs.
pub fn openapi_v2_with(custom: &[Value]) -> Arc<OpenApiV2> {
    if custom.is_empty() {
        return openapi_v2();
    }
    thread_local! {
        static LAST: std::cell::RefCell<Option<(Vec<u8>, Arc<OpenApiV2>)>> = const { std::cell::RefCell::new(None) };
    }
    let key = serde_json::to_vec(custom).unwrap_or_default();
    if let Some(hit) = LAST.with(|l| l.borrow().as_ref().filter(|(k, _)| *k == key).map(|(_, d)| d.clone())) {
        return hit;
    }
    let builtin = builtin_document();
    let extra = document_from_v3(custom, super::discovery::GIT_VERSION);
    // Only what the built-in part lacks: its shared meta schemas are there.
    let new_in = |section: &str| -> Map<String, Value> {
        extra[section]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| builtin[section].get(k.as_str()).is_none())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let (paths, definitions) = (new_in("paths"), new_in("definitions"));
    let mut document = builtin.clone();
    for (section, added) in [("paths", &paths), ("definitions", &definitions)] {
        if let Some(Value::Object(map)) = document.get_mut(section) {
            map.extend(added.iter().map(|(k, v)| (k.clone(), v.clone())));
            let taken = std::mem::take(map);
            *map = match sorted(taken) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
        }
    }
    // A protobuf message read twice is merged: the built-in bytes followed by
    // a Document holding only the added paths and definitions is the whole.
    let mut protobuf = openapi_v2().protobuf.to_vec();
    protobuf.extend(gnostic::document(&json!({"paths": paths, "definitions": definitions})));
    let built = Arc::new(OpenApiV2::new(serde_json::to_vec(&document).unwrap_or_default(), protobuf));
    LAST.with(|l| *l.borrow_mut() = Some((key, built.clone())));
    built
}

/// Which encoding an `Accept` header chooses, as kube-openapi's handler
/// chooses: the clauses by preference (`q`, then order), each matched against
/// JSON, then the two protobuf names; `None` is its 406. An absent or empty
/// header is `*/*` (JSON).
pub fn negotiate(accept: Option<&str>) -> Option<Encoding> {
    let accept = accept.map(str::trim).filter(|a| !a.is_empty()).unwrap_or("*/*");
    let mut clauses: Vec<(f32, usize, &str, &str)> = Vec::new();
    for (i, clause) in accept.split(',').enumerate() {
        let mut parts = clause.split(';');
        let media = parts.next().unwrap_or("").trim();
        let mut q = 1.0f32;
        for param in parts {
            if let Some((k, v)) = param.split_once('=') {
                if k.trim() == "q" {
                    q = v.trim().parse().unwrap_or(0.0);
                }
            }
        }
        let (ty, sub) = match media.split_once('/') {
            Some((t, s)) => (t.trim(), s.trim()),
            None if media == "*" => ("*", "*"),
            None => continue,
        };
        if q > 0.0 {
            clauses.push((q, i, ty, sub));
        }
    }
    // goautoneg sorts by q, then by specificity; a stable sort on q keeps the
    // header's order among equals, and a `*` sorts after a concrete type.
    clauses.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (a.2 == "*").cmp(&(b.2 == "*")))
            .then_with(|| (a.3 == "*").cmp(&(b.3 == "*")))
            .then(a.1.cmp(&b.1))
    });
    const OFFERED: [(&str, Encoding); 3] = [
        ("json", Encoding::Json),
        ("com.github.proto-openapi.spec.v2@v1.0+protobuf", Encoding::Protobuf),
        ("com.github.proto-openapi.spec.v2.v1.0+protobuf", Encoding::Protobuf),
    ];
    for (_, _, ty, sub) in clauses {
        for (offered, encoding) in OFFERED {
            if (ty == "application" || ty == "*") && (sub == offered || sub == "*") {
                return Some(encoding);
            }
        }
    }
    None
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Protobuf,
}

impl Encoding {
    /// The response's Content-Type (kube-openapi answers the deprecated
    /// `@v1.0` name with the current one).
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Protobuf => "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        }
    }
}

/// The v2 document of the given v3 documents: their paths and schemas merged,
/// keys sorted as Go's encoding/json writes kube-openapi's maps.
pub fn document_from_v3(v3: &[Value], version: &str) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for doc in v3 {
        if let Some(schemas) = doc.pointer("/components/schemas").and_then(Value::as_object) {
            for (name, schema) in schemas {
                definitions.entry(name.clone()).or_insert_with(|| schema_v2(schema));
            }
        }
        if let Some(items) = doc.get("paths").and_then(Value::as_object) {
            for (path, item) in items {
                paths.entry(path.clone()).or_insert_with(|| path_item_v2(item));
            }
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": sorted(paths),
        "definitions": sorted(definitions),
        "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    })
}

fn sorted(map: Map<String, Value>) -> Value {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(entries.into_iter().collect())
}

fn v2_ref(reference: &str) -> String {
    match reference.strip_prefix("#/components/schemas/") {
        Some(name) => format!("#/definitions/{name}"),
        None => reference.to_string(),
    }
}

/// One schema in v2 form (see the module doc).
pub fn schema_v2(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else { return schema.clone() };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return json!({"$ref": v2_ref(reference)});
    }
    if let Some([only]) = object.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        if let Some(reference) = only.get("$ref").and_then(Value::as_str) {
            return json!({"$ref": v2_ref(reference)});
        }
    }
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "properties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), schema_v2(v))).collect())
                    .unwrap_or_default();
                out.insert(key.clone(), sorted(properties));
            }
            "items" | "additionalProperties" if value.is_object() => {
                out.insert(key.clone(), schema_v2(value));
            }
            "allOf" => {
                let all: Vec<Value> = value.as_array().map(|a| a.iter().map(schema_v2).collect()).unwrap_or_default();
                out.insert(key.clone(), Value::Array(all));
            }
            "oneOf" | "anyOf" => {
                let alternatives = value.as_array().map(Vec::as_slice).unwrap_or_default();
                let string = alternatives.iter().any(|a| a.get("type").and_then(Value::as_str) == Some("string"));
                if string && !object.contains_key("type") {
                    out.insert("type".into(), json!("string"));
                }
            }
            "nullable" | "not" => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    sorted(out)
}

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

fn path_item_v2(item: &Value) -> Value {
    let mut out = Map::new();
    let Some(item) = item.as_object() else { return Value::Object(out) };
    for (key, value) in item {
        if METHODS.contains(&key.as_str()) {
            out.insert(key.clone(), operation_v2(value));
        } else if key == "parameters" {
            let parameters = value.as_array().map(|p| p.iter().map(parameter_v2).collect()).unwrap_or_default();
            out.insert(key.clone(), Value::Array(parameters));
        } else if key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    sorted(out)
}

fn parameter_v2(parameter: &Value) -> Value {
    let mut out = Map::new();
    if let Some(p) = parameter.as_object() {
        for (key, value) in p {
            if key == "schema" {
                if let Some(schema) = schema_v2(value).as_object() {
                    out.extend(schema.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            } else {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    sorted(out)
}

fn status_text(code: &str) -> &'static str {
    match code {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        "401" => "Unauthorized",
        _ => "",
    }
}

fn operation_v2(op: &Value) -> Value {
    let mut out = Map::new();
    let Some(op) = op.as_object() else { return Value::Object(out) };
    let mut parameters: Vec<Value> = Vec::new();
    if let Some(body) = op.get("requestBody") {
        let content = body.get("content").and_then(Value::as_object);
        let consumes: Vec<Value> = content.map(|c| c.keys().map(|k| json!(k)).collect()).unwrap_or_default();
        out.insert("consumes".into(), Value::Array(consumes));
        let schema = content.and_then(|c| c.values().next()).and_then(|m| m.get("schema")).map(schema_v2);
        let mut parameter = json!({"in": "body", "name": "body"});
        if body.get("required").and_then(Value::as_bool) == Some(true) {
            parameter["required"] = json!(true);
        }
        if let Some(schema) = schema {
            parameter["schema"] = schema;
        }
        parameters.push(parameter);
    }
    if let Some(list) = op.get("parameters").and_then(Value::as_array) {
        parameters.extend(list.iter().map(parameter_v2));
    }
    if !parameters.is_empty() {
        out.insert("parameters".into(), Value::Array(parameters));
    }
    let mut produces: Vec<String> = Vec::new();
    let mut responses = Map::new();
    if let Some(list) = op.get("responses").and_then(Value::as_object) {
        for (code, response) in list {
            let mut r = json!({"description": status_text(code)});
            if let Some(content) = response.get("content").and_then(Value::as_object) {
                for media in content.keys() {
                    if !produces.contains(media) {
                        produces.push(media.clone());
                    }
                }
                if let Some(schema) = content.values().next().and_then(|m| m.get("schema")) {
                    r["schema"] = schema_v2(schema);
                }
            }
            responses.insert(code.clone(), r);
        }
    }
    if !produces.is_empty() {
        out.insert("produces".into(), json!(produces));
    }
    out.insert("responses".into(), sorted(responses));
    out.insert("schemes".into(), json!(["https"]));
    for (key, value) in op {
        match key.as_str() {
            "operationId" | "tags" | "deprecated" | "summary" => {
                out.insert(key.clone(), value.clone());
            }
            k if k.starts_with("x-") => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    sorted(out)
}

/// gnostic's `openapi.v2` messages, written field by field from a v2 JSON
/// document. Field numbers are gnostic's `OpenAPIv2.proto`; fields appear in
/// number order, as Go's proto.Marshal writes them; a JSON key the message
/// has no field for is left out, as gnostic's parser leaves it out.
pub(crate) mod gnostic {
    use serde_json::Value;

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, u64::from(field) << 3 | u64::from(wire));
    }

    fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
        tag(out, field, 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    /// A proto3 string: an empty one is not written.
    fn string(out: &mut Vec<u8>, field: u32, s: &str) {
        if !s.is_empty() {
            bytes(out, field, s.as_bytes());
        }
    }

    fn message(out: &mut Vec<u8>, field: u32, body: Vec<u8>) {
        bytes(out, field, &body);
    }

    fn boolean(out: &mut Vec<u8>, field: u32, b: bool) {
        if b {
            tag(out, field, 0);
            out.push(1);
        }
    }

    fn int64(out: &mut Vec<u8>, field: u32, v: i64) {
        if v != 0 {
            tag(out, field, 0);
            varint(out, v as u64);
        }
    }

    fn double(out: &mut Vec<u8>, field: u32, v: f64) {
        if v != 0.0 {
            tag(out, field, 1);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// `Any { yaml = 2 }` holding the value as JSON text.
    fn any(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        string(&mut out, 2, &value.to_string());
        out
    }

    /// `NamedAny { name = 1; value = 2 }` for every `x-` key of `object`.
    fn vendor_extensions(out: &mut Vec<u8>, field: u32, object: &serde_json::Map<String, Value>) {
        for (key, value) in object.iter().filter(|(k, _)| k.starts_with("x-")) {
            let mut named = Vec::new();
            string(&mut named, 1, key);
            message(&mut named, 2, any(value));
            message(out, field, named);
        }
    }

    fn str_of<'a>(o: &'a serde_json::Map<String, Value>, key: &str) -> &'a str {
        o.get(key).and_then(Value::as_str).unwrap_or("")
    }

    fn strings(out: &mut Vec<u8>, field: u32, value: Option<&Value>) {
        for s in value.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            bytes(out, field, s.as_bytes());
        }
    }

    /// The scalar constraints shared by every parameter and items message,
    /// at field numbers given in `numbers` (JSON name -> field).
    fn constraints(out: &mut Vec<u8>, o: &serde_json::Map<String, Value>, numbers: &[(&str, u32)]) {
        for &(key, field) in numbers {
            let Some(value) = o.get(key) else { continue };
            match key {
                "required" | "allowEmptyValue" | "exclusiveMaximum" | "exclusiveMinimum" | "uniqueItems" => {
                    boolean(out, field, value.as_bool().unwrap_or(false))
                }
                "in" | "description" | "name" | "type" | "format" | "collectionFormat" | "pattern" => {
                    string(out, field, value.as_str().unwrap_or(""))
                }
                "default" => message(out, field, any(value)),
                "maximum" | "minimum" | "multipleOf" => double(out, field, value.as_f64().unwrap_or(0.0)),
                "maxLength" | "minLength" | "maxItems" | "minItems" => int64(out, field, value.as_i64().unwrap_or(0)),
                "enum" => {
                    for v in value.as_array().into_iter().flatten() {
                        message(out, field, any(v));
                    }
                }
                "items" => message(out, field, primitives_items(value)),
                _ => {}
            }
        }
    }

    fn primitives_items(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(o) = value.as_object() else { return out };
        const NUMBERS: [(&str, u32); 17] = [
            ("type", 1),
            ("format", 2),
            ("items", 3),
            ("collectionFormat", 4),
            ("default", 5),
            ("maximum", 6),
            ("exclusiveMaximum", 7),
            ("minimum", 8),
            ("exclusiveMinimum", 9),
            ("maxLength", 10),
            ("minLength", 11),
            ("pattern", 12),
            ("maxItems", 13),
            ("minItems", 14),
            ("uniqueItems", 15),
            ("enum", 16),
            ("multipleOf", 17),
        ];
        constraints(&mut out, o, &NUMBERS);
        vendor_extensions(&mut out, 18, o);
        out
    }

    /// `openapi.v2.Schema`.
    pub fn schema(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(o) = value.as_object() else { return out };
        string(&mut out, 1, str_of(o, "$ref"));
        string(&mut out, 2, str_of(o, "format"));
        string(&mut out, 3, str_of(o, "title"));
        string(&mut out, 4, str_of(o, "description"));
        if let Some(d) = o.get("default") {
            message(&mut out, 5, any(d));
        }
        let f = |k: &str| o.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let i = |k: &str| o.get(k).and_then(Value::as_i64).unwrap_or(0);
        let b = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
        double(&mut out, 6, f("multipleOf"));
        double(&mut out, 7, f("maximum"));
        boolean(&mut out, 8, b("exclusiveMaximum"));
        double(&mut out, 9, f("minimum"));
        boolean(&mut out, 10, b("exclusiveMinimum"));
        int64(&mut out, 11, i("maxLength"));
        int64(&mut out, 12, i("minLength"));
        string(&mut out, 13, str_of(o, "pattern"));
        int64(&mut out, 14, i("maxItems"));
        int64(&mut out, 15, i("minItems"));
        boolean(&mut out, 16, b("uniqueItems"));
        int64(&mut out, 17, i("maxProperties"));
        int64(&mut out, 18, i("minProperties"));
        strings(&mut out, 19, o.get("required"));
        for v in o.get("enum").and_then(Value::as_array).into_iter().flatten() {
            message(&mut out, 20, any(v));
        }
        match o.get("additionalProperties") {
            Some(Value::Bool(allowed)) => {
                let mut item = Vec::new();
                tag(&mut item, 2, 0);
                item.push(u8::from(*allowed));
                message(&mut out, 21, item);
            }
            Some(s @ Value::Object(_)) => {
                let mut item = Vec::new();
                message(&mut item, 1, schema(s));
                message(&mut out, 21, item);
            }
            _ => {}
        }
        match o.get("type") {
            Some(Value::String(t)) => {
                let mut item = Vec::new();
                bytes(&mut item, 1, t.as_bytes());
                message(&mut out, 22, item);
            }
            Some(types @ Value::Array(_)) => {
                let mut item = Vec::new();
                strings(&mut item, 1, Some(types));
                message(&mut out, 22, item);
            }
            _ => {}
        }
        match o.get("items") {
            Some(s @ Value::Object(_)) => {
                let mut item = Vec::new();
                message(&mut item, 1, schema(s));
                message(&mut out, 23, item);
            }
            Some(Value::Array(all)) => {
                let mut item = Vec::new();
                for s in all {
                    message(&mut item, 1, schema(s));
                }
                message(&mut out, 23, item);
            }
            _ => {}
        }
        for s in o.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            message(&mut out, 24, schema(s));
        }
        if let Some(properties) = o.get("properties").and_then(Value::as_object) {
            message(&mut out, 25, named_schemas(properties));
        }
        string(&mut out, 26, str_of(o, "discriminator"));
        boolean(&mut out, 27, b("readOnly"));
        if let Some(example) = o.get("example") {
            message(&mut out, 30, any(example));
        }
        vendor_extensions(&mut out, 31, o);
        out
    }

    /// `Properties`/`Definitions { repeated NamedSchema additional_properties = 1 }`.
    fn named_schemas(map: &serde_json::Map<String, Value>) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, s) in map {
            let mut named = Vec::new();
            string(&mut named, 1, name);
            message(&mut named, 2, schema(s));
            message(&mut out, 1, named);
        }
        out
    }

    fn parameter(value: &Value) -> Vec<u8> {
        let mut item = Vec::new(); // ParametersItem
        let Some(o) = value.as_object() else { return item };
        if let Some(reference) = o.get("$ref").and_then(Value::as_str) {
            let mut r = Vec::new();
            string(&mut r, 1, reference);
            message(&mut item, 2, r);
            return item;
        }
        let mut p = Vec::new(); // Parameter
        match str_of(o, "in") {
            "body" => {
                let mut body = Vec::new();
                string(&mut body, 1, str_of(o, "description"));
                string(&mut body, 2, str_of(o, "name"));
                string(&mut body, 3, "body");
                boolean(&mut body, 4, o.get("required").and_then(Value::as_bool).unwrap_or(false));
                if let Some(s) = o.get("schema") {
                    message(&mut body, 5, schema(s));
                }
                vendor_extensions(&mut body, 6, o);
                message(&mut p, 1, body);
            }
            location => {
                // Query and form data have `allowEmptyValue` at 5 and the rest
                // one further on; header and path do not have it.
                let with_empty = matches!(location, "query" | "formData");
                let shift = u32::from(with_empty);
                let numbers: Vec<(&str, u32)> = [("required", 1), ("in", 2), ("description", 3), ("name", 4)]
                    .into_iter()
                    .chain(with_empty.then_some(("allowEmptyValue", 5)))
                    .chain(
                        [
                            ("type", 5),
                            ("format", 6),
                            ("items", 7),
                            ("collectionFormat", 8),
                            ("default", 9),
                            ("maximum", 10),
                            ("exclusiveMaximum", 11),
                            ("minimum", 12),
                            ("exclusiveMinimum", 13),
                            ("maxLength", 14),
                            ("minLength", 15),
                            ("pattern", 16),
                            ("maxItems", 17),
                            ("minItems", 18),
                            ("uniqueItems", 19),
                            ("enum", 20),
                            ("multipleOf", 21),
                        ]
                        .into_iter()
                        .map(|(k, n)| (k, n + shift)),
                    )
                    .collect();
                let mut sub = Vec::new();
                constraints(&mut sub, o, &numbers);
                vendor_extensions(&mut sub, 22 + shift, o);
                let which = match location {
                    "header" => 1,
                    "formData" => 2,
                    "query" => 3,
                    _ => 4,
                };
                let mut non_body = Vec::new();
                message(&mut non_body, which, sub);
                message(&mut p, 2, non_body);
            }
        }
        message(&mut item, 1, p);
        item
    }

    fn operation(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(o) = value.as_object() else { return out };
        strings(&mut out, 1, o.get("tags"));
        string(&mut out, 2, str_of(o, "summary"));
        string(&mut out, 3, str_of(o, "description"));
        string(&mut out, 5, str_of(o, "operationId"));
        strings(&mut out, 6, o.get("produces"));
        strings(&mut out, 7, o.get("consumes"));
        for p in o.get("parameters").and_then(Value::as_array).into_iter().flatten() {
            message(&mut out, 8, parameter(p));
        }
        if let Some(responses) = o.get("responses").and_then(Value::as_object) {
            let mut rs = Vec::new();
            for (code, response) in responses {
                let mut r = Vec::new(); // Response
                if let Some(ro) = response.as_object() {
                    string(&mut r, 1, str_of(ro, "description"));
                    if let Some(s) = ro.get("schema") {
                        let mut item = Vec::new(); // SchemaItem
                        message(&mut item, 1, schema(s));
                        message(&mut r, 2, item);
                    }
                    vendor_extensions(&mut r, 5, ro);
                }
                let mut value = Vec::new(); // ResponseValue
                message(&mut value, 1, r);
                let mut named = Vec::new();
                string(&mut named, 1, code);
                message(&mut named, 2, value);
                message(&mut rs, 1, named);
            }
            message(&mut out, 9, rs);
        }
        strings(&mut out, 10, o.get("schemes"));
        boolean(&mut out, 11, o.get("deprecated").and_then(Value::as_bool).unwrap_or(false));
        vendor_extensions(&mut out, 13, o);
        out
    }

    fn path_item(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(o) = value.as_object() else { return out };
        string(&mut out, 1, str_of(o, "$ref"));
        for (field, method) in (2..).zip(super::METHODS) {
            if let Some(op) = o.get(method) {
                message(&mut out, field, operation(op));
            }
        }
        for p in o.get("parameters").and_then(Value::as_array).into_iter().flatten() {
            message(&mut out, 9, parameter(p));
        }
        vendor_extensions(&mut out, 10, o);
        out
    }

    /// `openapi.v2.Document`.
    pub fn document(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(o) = value.as_object() else { return out };
        string(&mut out, 1, str_of(o, "swagger"));
        if let Some(info) = o.get("info").and_then(Value::as_object) {
            let mut i = Vec::new();
            string(&mut i, 1, str_of(info, "title"));
            string(&mut i, 2, str_of(info, "version"));
            string(&mut i, 3, str_of(info, "description"));
            vendor_extensions(&mut i, 7, info);
            message(&mut out, 2, i);
        }
        string(&mut out, 3, str_of(o, "host"));
        string(&mut out, 4, str_of(o, "basePath"));
        strings(&mut out, 5, o.get("schemes"));
        strings(&mut out, 6, o.get("consumes"));
        strings(&mut out, 7, o.get("produces"));
        if let Some(paths) = o.get("paths").and_then(Value::as_object) {
            let mut ps = Vec::new();
            vendor_extensions(&mut ps, 1, paths);
            for (path, item) in paths.iter().filter(|(k, _)| !k.starts_with("x-")) {
                let mut named = Vec::new();
                string(&mut named, 1, path);
                message(&mut named, 2, path_item(item));
                message(&mut ps, 2, named);
            }
            message(&mut out, 8, ps);
        }
        if let Some(definitions) = o.get("definitions").and_then(Value::as_object) {
            message(&mut out, 9, named_schemas(definitions));
        }
        for requirement in o.get("security").and_then(Value::as_array).into_iter().flatten() {
            let mut r = Vec::new();
            for (name, scopes) in requirement.as_object().into_iter().flatten() {
                let mut array = Vec::new();
                strings(&mut array, 1, Some(scopes));
                let mut named = Vec::new();
                string(&mut named, 1, name);
                message(&mut named, 2, array);
                message(&mut r, 1, named);
            }
            message(&mut out, 12, r);
        }
        if let Some(definitions) = o.get("securityDefinitions").and_then(Value::as_object) {
            let mut ds = Vec::new();
            for (name, d) in definitions {
                let Some(d) = d.as_object() else { continue };
                let mut item = Vec::new(); // SecurityDefinitionsItem
                if str_of(d, "type") == "apiKey" {
                    let mut key = Vec::new();
                    string(&mut key, 1, "apiKey");
                    string(&mut key, 2, str_of(d, "name"));
                    string(&mut key, 3, str_of(d, "in"));
                    string(&mut key, 4, str_of(d, "description"));
                    vendor_extensions(&mut key, 5, d);
                    message(&mut item, 2, key);
                }
                let mut named = Vec::new();
                string(&mut named, 1, name);
                message(&mut named, 2, item);
                message(&mut ds, 1, named);
            }
            message(&mut out, 13, ds);
        }
        vendor_extensions(&mut out, 16, o);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_one_of_take_their_v2_form() {
        let property = json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}});
        assert_eq!(
            schema_v2(&property),
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
        );
        let quantity = json!({"oneOf": [{"type": "string"}, {"type": "number"}]});
        assert_eq!(schema_v2(&quantity), json!({"type": "string"}));
        let int_or_string = json!({"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(schema_v2(&int_or_string), json!({"format": "int-or-string", "type": "string"}));
        // A property named `$ref` (JSONSchemaProps) is a property, not a reference.
        let props = json!({"properties": {"$ref": {"type": "string"}}, "type": "object"});
        assert_eq!(schema_v2(&props), props);
    }

    #[test]
    fn an_operation_gets_its_body_parameter_media_types_and_responses() {
        let op = json!({
            "operationId": "patchCoreV1NamespacedConfigMap",
            "parameters": [{"in": "query", "name": "force", "schema": {"type": "boolean", "uniqueItems": true}}],
            "requestBody": {"content": {"application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/P"}}}, "required": true},
            "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/C"}},
                                               "application/yaml": {"schema": {"$ref": "#/components/schemas/C"}}}},
                          "401": {}},
            "tags": ["core_v1"],
            "x-kubernetes-action": "patch",
        });
        let v2 = operation_v2(&op);
        assert_eq!(v2["consumes"], json!(["application/merge-patch+json"]));
        assert_eq!(v2["produces"], json!(["application/json", "application/yaml"]));
        assert_eq!(
            v2["parameters"][0],
            json!({"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/P"}})
        );
        assert_eq!(
            v2["parameters"][1],
            json!({"in": "query", "name": "force", "type": "boolean", "uniqueItems": true})
        );
        assert_eq!(v2["responses"]["200"], json!({"description": "OK", "schema": {"$ref": "#/definitions/C"}}));
        assert_eq!(v2["responses"]["401"], json!({"description": "Unauthorized"}));
        assert_eq!(v2["schemes"], json!(["https"]));
        assert_eq!(v2["x-kubernetes-action"], "patch");
    }

    #[test]
    fn accept_negotiation_is_kube_openapis() {
        assert_eq!(negotiate(None), Some(Encoding::Json));
        assert_eq!(negotiate(Some("application/json")), Some(Encoding::Json));
        assert_eq!(negotiate(Some("*/*")), Some(Encoding::Json));
        assert_eq!(
            negotiate(Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")),
            Some(Encoding::Protobuf)
        );
        assert_eq!(
            negotiate(Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json;q=0.9")),
            Some(Encoding::Protobuf)
        );
        assert_eq!(
            negotiate(Some("application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf")),
            Some(Encoding::Protobuf)
        );
        assert_eq!(negotiate(Some("text/html")), None);
        assert_eq!(negotiate(Some("application/yaml")), None);
    }

    #[test]
    fn the_document_covers_every_served_schema_and_path() {
        let doc = openapi_v2();
        let v2: Value = serde_json::from_slice(&doc.json).unwrap();
        assert_eq!(v2["swagger"], "2.0");
        let definitions = v2["definitions"].as_object().unwrap();
        for d in super::super::openapi::openapi_v3_documents() {
            let v3: Value =
                serde_json::from_slice(&super::super::openapi::openapi_v3_document(d.path).unwrap()).unwrap();
            for name in v3["components"]["schemas"].as_object().unwrap().keys() {
                assert!(definitions.contains_key(name), "{name} of {}", d.path);
            }
            for path in v3["paths"].as_object().unwrap().keys() {
                assert!(v2["paths"].get(path).is_some(), "{path}");
            }
        }
        // No v3 reference is left anywhere.
        assert!(!String::from_utf8_lossy(&doc.json).contains("#/components/"));
        let pod = &definitions["io.k8s.api.core.v1.Pod"];
        assert_eq!(pod["properties"]["spec"], json!({"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}));
        assert_eq!(pod["x-kubernetes-group-version-kind"], json!([{"group": "", "kind": "Pod", "version": "v1"}]));
        let containers = &definitions["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(doc.etag.len(), 128);
        assert!(doc.protobuf.len() > 100_000);
    }
}
