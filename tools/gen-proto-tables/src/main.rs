//! gen-proto-tables: derives Shardline's committed Kubernetes protobuf schema
//! table (`src/types/generated/proto_schema.rs`) from two inputs:
//!
//! - the prost-generated sources of the `k8s-pb` crate, version [`K8S_PB_VERSION`]
//!   (a dependency of this tool, so `cargo fetch` downloads it; its source
//!   directory is found under `$CARGO_HOME/registry/src`, or `$K8S_PB_SRC`): field numbers, wire types,
//!   repeated/map shapes and message types;
//! - the committed, filtered OpenAPI v3 documents in
//!   `src/types/generated/openapi/` (written by `tools/gen-tables`): which
//!   messages are reachable from the served kinds, their group/version/kind,
//!   and the exact JSON field names (prost's `volume_id` is JSON `volumeID`).
//!
//! Usage (from the repository root):
//! `cargo run -p gen-proto-tables -- src/types/generated/openapi src/types/generated/proto_schema.rs`
//!
//! Only facts are written (names, numbers, types), never the sources' comments.
//! Invariant: the output is a pure function of the inputs (messages sorted by
//! name, fields by number), so regenerating without changes is byte-identical.
//! The generator panics on any surprise in the input: it runs by hand, never
//! in the server.

use flate2::read::GzDecoder;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The k8s-pb release the table is generated from.
const K8S_PB_VERSION: &str = "0.9.0";

/// Messages whose JSON form is not an object of their fields (Kubernetes'
/// custom JSON marshalling), by OpenAPI name, with the `Form` variant the
/// decoder uses.
const FORMS: &[(&str, &str)] = &[
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "Time"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", "MicroTime"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Duration", "Duration"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "RawJson"),
    ("io.k8s.apimachinery.pkg.util.intstr.IntOrString", "IntOrString"),
    ("io.k8s.apimachinery.pkg.api.resource.Quantity", "Quantity"),
    ("io.k8s.apimachinery.pkg.runtime.RawExtension", "RawJson"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", "RawJson"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray", "SchemaOrArray"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool", "SchemaOrBool"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray", "SchemaOrStringArray"),
    ("io.k8s.api.certificates.v1.ExtraValue", "StringList"),
    ("io.k8s.api.authentication.v1.ExtraValue", "StringList"),
    ("io.k8s.api.authorization.v1.ExtraValue", "StringList"),
];

/// One field of a prost message, as read from the source.
#[derive(Debug, Clone)]
struct PbField {
    tag: u32,
    rust_name: String,
    /// Scalar type name (`string`, `int32`, ...) or `message`.
    ty: String,
    /// For `message` fields and map values: the resolved k8s-pb path.
    message: Option<String>,
    shape: &'static str,
}

/// k8s-pb messages by normalized key (module path + lower-cased name).
struct PbMessage {
    path: String,
    fields: Vec<PbField>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        panic!("usage: gen-proto-tables <openapi-dir (src/types/generated/openapi)> <out-file>");
    }
    let openapi_dir = PathBuf::from(&args[1]);
    let out = PathBuf::from(&args[2]);
    let src = k8s_pb_source_dir();
    let mut messages = read_k8s_pb(&src);
    add_extra(&mut messages, extra::read(&read_text(&proto_fields_path())));
    let (schemas, kinds) = read_openapi(&openapi_dir);

    // Messages reachable from every schema with a group/version/kind.
    let mut roots = BTreeSet::new();
    for (_, _, _, schema) in &kinds {
        roots.insert(schema.clone());
    }
    let mut reachable: BTreeMap<String, &PbMessage> = BTreeMap::new();
    // A kind newer than the k8s-pb release needs its messages in
    // `proto_fields.txt` (admissionregistration.k8s.io/v1
    // MutatingAdmissionPolicy, GA in 1.36); without them it is left out of
    // the table (served in JSON, YAML and CBOR; Protobuf is refused for it).
    let mut pending: Vec<String> = Vec::new();
    for root in &roots {
        let key = pb_key_of_openapi(root);
        if messages.contains_key(&key) {
            pending.push(key);
        } else {
            println!("no k8s-pb {K8S_PB_VERSION} message for {root}: left out");
        }
    }
    while let Some(key) = pending.pop() {
        let message = messages.get(&key).unwrap_or_else(|| panic!("k8s-pb has no message for {key}"));
        let name = openapi_name(&message.path);
        if reachable.contains_key(&name) {
            continue;
        }
        reachable.insert(name, message);
        for field in &message.fields {
            if let Some(m) = &field.message {
                pending.push(normalize_path(m));
            }
        }
    }
    let ids: BTreeMap<&str, usize> = reachable.keys().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    assert!(ids.len() < u16::MAX as usize);

    // Go structs embedded `json:",inline"` are a field of their own in protobuf
    // (`Volume.volumeSource`) but flattened in JSON: a singular message field
    // with no OpenAPI property of its own, whose message's fields are all
    // properties of the parent (or embedded inline themselves). An embedded
    // message without a schema of its own takes its JSON names from the
    // parent's properties.
    let squash = |s: &str| s.chars().filter(|c| !matches!(c, '_' | '-' | '$')).collect::<String>().to_ascii_lowercase();
    let mut naming: BTreeMap<String, Vec<String>> =
        reachable.keys().filter_map(|n| schemas.get(n).map(|p| (n.clone(), p.clone()))).collect();
    let mut inline: BTreeSet<(String, u32)> = BTreeSet::new();
    loop {
        let before = (inline.len(), naming.len());
        for (name, message) in &reachable {
            let Some(properties) = naming.get(name).cloned() else { continue };
            let squashed: BTreeSet<String> = properties.iter().map(|p| squash(p)).collect();
            for field in &message.fields {
                let Some(child) = &field.message else { continue };
                if field.shape != "One" || squashed.contains(&squash(&field.rust_name)) {
                    continue;
                }
                let child_name = openapi_name(child);
                let child_message = reachable[&child_name];
                // A child field that is itself embedded inline (`NamedRuleWithOperations`
                // embeds `RuleWithOperations`, which embeds `Rule`) counts as present.
                if !child_message.fields.is_empty()
                    && child_message.fields.iter().all(|f| {
                        squashed.contains(&squash(&f.rust_name)) || inline.contains(&(child_name.clone(), f.tag))
                    })
                {
                    inline.insert((name.clone(), field.tag));
                    naming.entry(child_name).or_insert_with(|| properties.clone());
                }
            }
        }
        if (inline.len(), naming.len()) == before {
            break;
        }
    }

    let mut text = String::new();
    writeln!(
        text,
        "//! The Kubernetes protobuf schema of every message reachable from the served\n\
         //! kinds. GENERATED by `tools/gen-proto-tables` from k8s-pb {K8S_PB_VERSION} and the\n\
         //! committed OpenAPI documents; do not edit by hand (see docs/protobuf.md)."
    )
    .unwrap();
    text.push_str("\nuse crate::types::proto_schema::{Field, Form::*, Kind, Message, Shape::*, Slot, Type::*};\n\n");
    text.push_str("/// Every message, sorted by name; `Msg(i)` is an index into this table.\n");
    text.push_str("#[rustfmt::skip]\npub static MESSAGES: &[Message] = &[\n");
    let mut fallbacks = Vec::new();
    // Every message's fields sorted by number with their JSON names, and the
    // JSON view in Go struct order (the prost declaration order) with inline
    // members flattened in place.
    let go = go_facts::read(&go_facts_path());
    let mut tables: BTreeMap<String, Vec<(PbField, String, &'static str)>> = BTreeMap::new();
    for (name, message) in &reachable {
        let form = FORMS.iter().find(|(n, _)| n == name).map(|(_, f)| *f).unwrap_or("Object");
        let properties = naming.get(name);
        let mut fields = Vec::new();
        for field in &message.fields {
            let json = json_name(field, properties, name, form, &mut fallbacks);
            let shape = if inline.contains(&(name.clone(), field.tag)) { "Inline" } else { field.shape };
            fields.push((field.clone(), json, shape));
        }
        tables.insert(name.clone(), fields);
    }
    let sorted_index = |name: &str, tag: u32| -> usize {
        let mut tags: Vec<u32> = tables[name].iter().map(|(f, _, _)| f.tag).collect();
        tags.sort();
        tags.iter().position(|t| *t == tag).expect("tag")
    };
    for name in reachable.keys() {
        let form = FORMS.iter().find(|(n, _)| n == name).map(|(_, f)| *f).unwrap_or("Object");
        let (go_package, go_name) = go_type_name(name);
        let facts = go.get(name.as_str());
        writeln!(
            text,
            "    Message {{ name: \"{name}\", form: {form}, go_name: \"{go_name}\", known: {}, fields: &[",
            facts.is_some()
        )
        .unwrap();
        let mut fields = tables[name].clone();
        fields.sort_by_key(|(f, _, _)| f.tag);
        for pair in fields.windows(2) {
            assert!(pair[0].0.tag != pair[1].0.tag, "{name}: duplicate tag {}", pair[0].0.tag);
        }
        for (field, json, shape) in &fields {
            let ty = match &field.message {
                Some(m) => format!("Msg({})", ids[openapi_name(m).as_str()]),
                None => scalar_type(&field.ty).to_string(),
            };
            if let Some(facts) = facts {
                for named in facts.keys() {
                    assert!(fields.iter().any(|(_, j, _)| j == named), "go_fields.txt: {name} has no field {named}");
                }
            }
            let fact = facts.and_then(|f| f.get(json.as_str()));
            if facts.is_some() && fact.is_none() && *shape != "Inline" {
                panic!("{name}.{json}: no Go facts (tools/gen-proto-tables/go_fields.txt)");
            }
            let element = match (&field.message, fact.and_then(|f| f.named.as_deref())) {
                (_, Some(named)) if !named.contains('.') => format!("{go_package}.{named}"),
                (_, Some(named)) => named.to_string(),
                (Some(m), None) => {
                    let (package, type_name) = go_type_name(&openapi_name(m));
                    format!("{package}.{type_name}")
                }
                (None, None) => go_scalar(&field.ty).to_string(),
            };
            // core/v1 declares every map of quantities as `ResourceList`.
            let resource_list =
                (*shape == "Map" && name.starts_with("io.k8s.api.core.v1.") && element == "resource.Quantity")
                    .then_some("v1.ResourceList");
            let whole = match (*shape, fact.and_then(|f| f.container.as_deref()).or(resource_list)) {
                (_, Some(container)) if !container.contains('.') => format!("{go_package}.{container}"),
                (_, Some(container)) => container.to_string(),
                ("Repeated", None) => format!("[]{element}"),
                ("Map", None) => format!("map[string]{element}"),
                _ => element.clone(),
            };
            let flags = fact.map(|f| f.flags()).unwrap_or_default();
            writeln!(
                text,
                "        Field {{ tag: {}, json: \"{json}\", ty: {ty}, shape: {shape}, go: \"{whole}\", go_element: \"{element}\", go_flags: {flags} }},",
                field.tag
            )
            .unwrap();
        }
        text.push_str("    ], json: &[");
        let mut slots = Vec::new();
        flatten(name, &tables, &ids, &sorted_index, &mut slots);
        for (json, owner, index) in &slots {
            write!(text, "\n        Slot {{ name: \"{json}\", message: {owner}, field: {index} }},").unwrap();
        }
        if !slots.is_empty() {
            text.push_str("\n    ");
        }
        let mut by_name: Vec<usize> = (0..slots.len()).collect();
        by_name.sort_by(|a, b| slots[*a].0.cmp(&slots[*b].0));
        for pair in by_name.windows(2) {
            assert!(slots[pair[0]].0 != slots[pair[1]].0, "{name}: duplicate JSON name {}", slots[pair[0]].0);
        }
        let by_name: Vec<String> = by_name.iter().map(|i| i.to_string()).collect();
        writeln!(text, "], by_name: &[{}] }},", by_name.join(", ")).unwrap();
    }
    text.push_str("];\n\n");
    text.push_str("/// The message of each group/version/kind, sorted.\n");
    text.push_str("#[rustfmt::skip]\npub static KINDS: &[Kind] = &[\n");
    for (group, version, kind, schema) in &kinds {
        let api_version = if group.is_empty() { version.clone() } else { format!("{group}/{version}") };
        let Some(id) = ids.get(schema.as_str()) else { continue };
        writeln!(text, "    Kind {{ api_version: \"{api_version}\", kind: \"{kind}\", message: {id} }},").unwrap();
    }
    text.push_str("];\n");
    std::fs::write(&out, text).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
    for f in fallbacks {
        eprintln!("note: no OpenAPI property for {f}; used the camelCase of the prost name");
    }
    eprintln!("wrote {} ({} messages, {} kinds)", out.display(), reachable.len(), kinds.len());
}

/// The source directory of k8s-pb [`K8S_PB_VERSION`]: `$K8S_PB_SRC` when set,
/// else the crate as `cargo fetch` unpacks it under
/// `$CARGO_HOME/registry/src/*/k8s-pb-<version>/src`.
fn k8s_pb_source_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("K8S_PB_SRC") {
        return PathBuf::from(dir);
    }
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cargo"));
    let registry = cargo_home.join("registry").join("src");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&registry)
        .unwrap_or_else(|e| panic!("reading {}: {e}; run `cargo fetch`", registry.display()))
        .map(|e| e.expect("dir entry").path().join(format!("k8s-pb-{K8S_PB_VERSION}")).join("src"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("k8s-pb {K8S_PB_VERSION} is not unpacked under {}; run `cargo fetch`", registry.display())
    })
}

/// Reads every `mod.rs` under k8s-pb's `src/`.
fn read_k8s_pb(src: &Path) -> BTreeMap<String, PbMessage> {
    let mut files = Vec::new();
    collect_files(src, &mut files);
    files.sort();
    let mut messages = BTreeMap::new();
    for file in files {
        let relative = file.parent().expect("parent").strip_prefix(src).expect("under src");
        let module: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if module.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("reading k8s-pb source");
        for (name, fields) in parse_structs(&text, &module) {
            let path = format!("{}::{name}", module.join("::"));
            messages.insert(normalize_path(&path), PbMessage { path, fields });
        }
    }
    messages
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("reading k8s-pb src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.file_name().is_some_and(|n| n == "mod.rs") {
            out.push(path);
        }
    }
}

/// Parses the top-level `pub struct X { ... }` items of one prost module.
fn parse_structs(text: &str, module: &[String]) -> Vec<(String, Vec<PbField>)> {
    let mut structs = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("pub struct ") else { continue };
        if let Some(empty) = rest.strip_suffix(" {}") {
            structs.push((empty.trim().to_string(), Vec::new()));
            continue;
        }
        let name = rest.strip_suffix(" {").unwrap_or_else(|| panic!("struct line {line:?}")).trim().to_string();
        let mut body = String::new();
        for inner in lines.by_ref() {
            if inner == "}" {
                break;
            }
            let trimmed = inner.trim();
            if trimmed.starts_with("///") || trimmed.starts_with("//") {
                continue;
            }
            body.push_str(trimmed);
            body.push(' ');
        }
        let mut fields = Vec::new();
        for chunk in body.split("#[prost(").skip(1) {
            let (attribute, rest) = chunk.split_once(")]").expect("attribute end");
            let declaration = rest.trim().strip_prefix("pub ").expect("pub field");
            let (rust_name, ty) = declaration.split_once(':').expect("field type");
            let ty = ty.trim().trim_end_matches(',').trim().replace(' ', "");
            fields.push(parse_field(attribute, rust_name.trim(), &ty, module, &name));
        }
        structs.push((name, fields));
    }
    structs
}

fn parse_field(attribute: &str, rust_name: &str, rust_type: &str, module: &[String], owner: &str) -> PbField {
    let parts: Vec<&str> = split_attribute(attribute);
    let mut tag = None;
    let mut shape = "One";
    let mut ty = String::new();
    let mut map_value = None;
    for part in &parts {
        if let Some(t) = part.strip_prefix("tag = ") {
            tag = Some(t.trim_matches('"').parse::<u32>().expect("tag number"));
        } else if let Some(m) = part.strip_prefix("btree_map = ") {
            let (key, value) = m.trim_matches('"').split_once(", ").expect("map types");
            assert_eq!(key, "string", "{owner}.{rust_name}: map key {key}");
            shape = "Map";
            map_value = Some(value.to_string());
        } else if let Some(b) = part.strip_prefix("bytes = ") {
            assert_eq!(b, "\"vec\"");
            ty = "bytes".into();
        } else if *part == "repeated" {
            shape = "Repeated";
        } else if matches!(*part, "optional" | "boxed") || part.starts_with("packed = ") {
        } else if ty.is_empty() {
            ty = part.to_string();
        } else {
            panic!("{owner}.{rust_name}: unexpected prost attribute part {part:?}");
        }
    }
    if let Some(value) = map_value {
        ty = value;
    }
    let message = if ty == "message" { Some(resolve_type(rust_type, module)) } else { None };
    PbField {
        tag: tag.unwrap_or_else(|| panic!("{owner}.{rust_name}: no tag")),
        rust_name: rust_name.trim_start_matches("r#").to_string(),
        ty,
        message,
        shape,
    }
}

fn split_attribute(attribute: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut in_quotes = false;
    for (i, c) in attribute.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            ',' if !in_quotes => {
                parts.push(attribute[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(attribute[start..].trim());
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The message path in a prost field type, resolved against `module`: the
/// last generic argument that is not a prost/core container.
fn resolve_type(rust_type: &str, module: &[String]) -> String {
    let inner = rust_type
        .split(['<', '>', ','])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .rfind(|s| !s.starts_with("::core::") && !s.starts_with("::prost::"))
        .unwrap_or_else(|| panic!("no message type in {rust_type}"));
    let mut path: Vec<String> = module.to_vec();
    let mut segments: Vec<&str> = inner.split("::").collect();
    while segments.first() == Some(&"super") {
        path.pop().expect("super beyond crate root");
        segments.remove(0);
    }
    path.extend(segments.iter().map(|s| s.to_string()));
    path.join("::")
}

/// A key that matches a k8s-pb path and an OpenAPI name: module path with
/// `::`, the type name lower-cased (prost renames `JSONSchemaProps` to
/// `JsonSchemaProps`).
fn normalize_path(path: &str) -> String {
    let (module, name) = path.rsplit_once("::").expect("qualified path");
    format!("{module}::{}", name.to_ascii_lowercase())
}

/// `io.k8s.api.core.v1.Pod` -> the normalized k8s-pb key of `api::core::v1::Pod`.
fn pb_key_of_openapi(name: &str) -> String {
    let rest = name.strip_prefix("io.k8s.").unwrap_or_else(|| panic!("unexpected schema name {name}"));
    normalize_path(&rest.replace('-', "_").replace('.', "::"))
}

/// The OpenAPI-style name of a k8s-pb message path: `io.k8s.` + dotted module
/// path with `_` as `-`, and the type name as Go spells it when the OpenAPI
/// documents know it.
fn openapi_name(path: &str) -> String {
    let (module, name) = path.rsplit_once("::").expect("qualified path");
    let module = module.replace("::", ".").replace('_', "-");
    let candidate = format!("io.k8s.{module}.{name}");
    KNOWN_NAMES.with(|known| known.borrow().get(&candidate.to_ascii_lowercase()).cloned().unwrap_or(candidate))
}

thread_local! {
    /// Lower-cased OpenAPI schema name -> its real spelling.
    static KNOWN_NAMES: std::cell::RefCell<BTreeMap<String, String>> = const { std::cell::RefCell::new(BTreeMap::new()) };
}

type Kinds = BTreeSet<(String, String, String, String)>;

/// Reads the committed OpenAPI documents: the property names of every schema,
/// and every (group, version, kind, schema name).
fn read_openapi(dir: &Path) -> (BTreeMap<String, Vec<String>>, Kinds) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("reading the OpenAPI directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.json.gz in {}", dir.display());
    let mut schemas = BTreeMap::new();
    let mut kinds = BTreeSet::new();
    for file in files {
        let reader = GzDecoder::new(std::fs::File::open(&file).expect("opening OpenAPI document"));
        let document: Value = serde_json::from_reader(reader).expect("OpenAPI JSON");
        let components = document["components"]["schemas"].as_object().expect("components.schemas");
        for (name, schema) in components {
            let properties: Vec<String> =
                schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
            schemas.insert(name.clone(), properties);
            KNOWN_NAMES.with(|k| k.borrow_mut().insert(name.to_ascii_lowercase(), name.clone()));
            for gvk in schema["x-kubernetes-group-version-kind"].as_array().into_iter().flatten() {
                let get = |k: &str| gvk[k].as_str().expect("gvk field").to_string();
                kinds.insert((get("group"), get("version"), get("kind"), name.clone()));
            }
        }
    }
    (schemas, kinds)
}

/// The JSON name of a field: the OpenAPI property that equals the prost name
/// ignoring case, `_`, `-` and `$`; else the lowerCamelCase of the prost name.
fn json_name(
    field: &PbField,
    properties: Option<&Vec<String>>,
    message: &str,
    form: &str,
    fallbacks: &mut Vec<String>,
) -> String {
    let squash = |s: &str| s.chars().filter(|c| !matches!(c, '_' | '-' | '$')).collect::<String>().to_ascii_lowercase();
    let wanted = squash(&field.rust_name);
    let matches: Vec<&String> = properties.into_iter().flatten().filter(|p| squash(p) == wanted).collect();
    match matches.as_slice() {
        [one] => (*one).clone(),
        [] => {
            let mut camel = String::new();
            for (i, part) in field.rust_name.split('_').enumerate() {
                let mut chars = part.chars();
                match (i, chars.next()) {
                    (0, Some(c)) => camel.push(c),
                    (_, Some(c)) => camel.push(c.to_ascii_uppercase()),
                    _ => {}
                }
                camel.extend(chars);
            }
            if form == "Object" {
                fallbacks.push(format!("{message}.{}", field.rust_name));
            }
            camel
        }
        many => panic!("{message}.{}: ambiguous JSON names {many:?}", field.rust_name),
    }
}

fn scalar_type(ty: &str) -> &'static str {
    match ty {
        "string" => "String",
        "bytes" => "Bytes",
        "bool" => "Bool",
        "int32" => "Int32",
        "int64" => "Int64",
        "uint32" => "Uint32",
        "uint64" => "Uint64",
        "double" => "Double",
        "float" => "Float",
        other => panic!("unsupported protobuf type {other}"),
    }
}

/// The JSON slots of message `name` in Go struct order: (JSON name, owning
/// message id, index of the field in the owner's tag-sorted fields); inline
/// members are flattened in place.
fn flatten(
    name: &str,
    tables: &BTreeMap<String, Vec<(PbField, String, &'static str)>>,
    ids: &BTreeMap<&str, usize>,
    sorted_index: &dyn Fn(&str, u32) -> usize,
    out: &mut Vec<(String, usize, usize)>,
) {
    for (field, json, shape) in &tables[name] {
        if *shape == "Inline" {
            let child = openapi_name(field.message.as_ref().expect("inline message"));
            flatten(&child, tables, ids, sorted_index, out);
        } else {
            out.push((json.clone(), ids[name], sorted_index(name, field.tag)));
        }
    }
}

/// The Go package name and type name of an OpenAPI definition name, as Go's
/// reflection prints them: `io.k8s.api.core.v1.Container` is `v1.Container`.
fn go_type_name(name: &str) -> (String, String) {
    let (module, type_name) = name.rsplit_once('.').expect("qualified name");
    let package = module.rsplit_once('.').map(|(_, p)| p).unwrap_or(module);
    (package.to_string(), type_name.to_string())
}

/// The Go type of a protobuf scalar as Go's reflection prints it.
fn go_scalar(ty: &str) -> &'static str {
    match ty {
        "string" => "string",
        "bytes" => "[]uint8",
        "bool" => "bool",
        "int32" => "int32",
        "int64" => "int64",
        "uint32" => "uint32",
        "uint64" => "uint64",
        "double" => "float64",
        "float" => "float32",
        other => panic!("unsupported protobuf type {other}"),
    }
}

/// `go_fields.txt` beside this tool's Cargo.toml.
fn go_facts_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("go_fields.txt")
}

/// `proto_fields.txt` beside this tool's Cargo.toml.
fn proto_fields_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto_fields.txt")
}

fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Adds the messages of `proto_fields.txt` to k8s-pb's; one k8s-pb already
/// has is refused (its line is stale after a k8s-pb bump).
fn add_extra(messages: &mut BTreeMap<String, PbMessage>, extra: Vec<PbMessage>) {
    for message in extra {
        let key = normalize_path(&message.path);
        assert!(
            !messages.contains_key(&key),
            "k8s-pb {K8S_PB_VERSION} has {}: delete its line from tools/gen-proto-tables/proto_fields.txt",
            message.path
        );
        messages.insert(key, message);
    }
}

/// `io.k8s.api.core.v1.Pod` -> the k8s-pb path `api::core::v1::Pod` (module
/// segments with `_` for `-`, the type name as written).
fn pb_path_of_openapi(name: &str) -> String {
    let rest = name.strip_prefix("io.k8s.").unwrap_or_else(|| panic!("unexpected schema name {name}"));
    let (module, type_name) = rest.rsplit_once('.').unwrap_or_else(|| panic!("unqualified schema name {name}"));
    format!("{}::{type_name}", module.replace('-', "_").replace('.', "::"))
}

/// The protobuf facts of `proto_fields.txt` (see the comment at its top):
/// messages k8s-pb lacks, in the shape `read_k8s_pb` gives k8s-pb's own.
mod extra {
    use super::{pb_path_of_openapi, PbField, PbMessage};

    const SCALARS: &[&str] = &["string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"];

    pub fn read(text: &str) -> Vec<PbMessage> {
        let mut out = Vec::new();
        let mut prefix = String::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            if let Some(p) = line.strip_prefix("package ") {
                prefix = p.trim().to_string();
                continue;
            }
            assert!(!prefix.is_empty(), "proto_fields.txt: {line:?} before any `package`");
            let (message, fields) = line.split_once(':').unwrap_or_else(|| panic!("proto_fields.txt: {line:?}"));
            let name = format!("{prefix}.{}", message.trim());
            let mut parsed: Vec<PbField> = Vec::new();
            for token in fields.split_whitespace() {
                let (tag, rest) = token.split_once('=').unwrap_or_else(|| malformed(&name, token));
                let (field_name, ty) = rest.split_once(':').unwrap_or_else(|| malformed(&name, token));
                let tag: u32 = tag.parse().unwrap_or_else(|_| malformed(&name, token));
                assert!(tag > 0 && !field_name.is_empty(), "proto_fields.txt: {name}: field {token:?}");
                let (shape, ty) = match ty.strip_prefix("[]") {
                    Some(element) => ("Repeated", element),
                    None => ("One", ty),
                };
                let (ty, message) = if SCALARS.contains(&ty) {
                    (ty.to_string(), None)
                } else if ty.contains('.') {
                    ("message".to_string(), Some(pb_path_of_openapi(ty)))
                } else {
                    ("message".to_string(), Some(pb_path_of_openapi(&format!("{prefix}.{ty}"))))
                };
                assert!(
                    parsed.iter().all(|f| f.tag != tag && f.rust_name != field_name),
                    "proto_fields.txt: {name}: field {tag} or {field_name} twice"
                );
                parsed.push(PbField { tag, rust_name: field_name.to_string(), ty, message, shape });
            }
            assert!(!parsed.is_empty(), "proto_fields.txt: {name} has no fields");
            out.push(PbMessage { path: pb_path_of_openapi(&name), fields: parsed });
        }
        out
    }

    fn malformed(message: &str, token: &str) -> ! {
        panic!("proto_fields.txt: {message}: field {token:?} is not NUMBER=name:TYPE")
    }
}

/// The Go struct facts of `go_fields.txt` (see the comment at its top).
mod go_facts {
    use std::collections::BTreeMap;
    use std::path::Path;

    #[derive(Debug, Default)]
    pub struct Fact {
        pub pointer: bool,
        pub omitempty: bool,
        pub omitzero: bool,
        /// A named Go type for the field's element (`Protocol`, `v1.Time`).
        pub named: Option<String>,
        /// A named Go type for the whole slice or map (`ResourceList`).
        pub container: Option<String>,
    }

    impl Fact {
        /// The `go_flags` bits of `types::proto_schema`.
        pub fn flags(&self) -> u8 {
            1 | u8::from(self.pointer) << 1 | u8::from(self.omitempty) << 2 | u8::from(self.omitzero) << 3
        }
    }

    /// Message name -> JSON field name -> facts.
    pub fn read(path: &Path) -> BTreeMap<String, BTreeMap<String, Fact>> {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let mut out: BTreeMap<String, BTreeMap<String, Fact>> = BTreeMap::new();
        let mut prefix = String::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            if let Some(p) = line.strip_prefix("package ") {
                prefix = p.trim().to_string();
                continue;
            }
            let (message, fields) = line.split_once(':').unwrap_or_else(|| panic!("go_fields.txt: {line:?}"));
            let name = format!("{prefix}.{}", message.trim());
            let entry = out.entry(name.clone()).or_default();
            for token in fields.split_whitespace() {
                let (head, container) = match token.split_once('=') {
                    Some((h, c)) => (h, Some(c.to_string())),
                    None => (token, None),
                };
                let (head, named) = match head.split_once(':') {
                    Some((h, n)) => (h, Some(n.to_string())),
                    None => (head, None),
                };
                let json = head.trim_end_matches(['*', '?', '~']);
                let marks = &head[json.len()..];
                let fact = Fact {
                    pointer: marks.contains('*'),
                    omitempty: marks.contains('?'),
                    omitzero: marks.contains('~'),
                    named,
                    container,
                };
                assert!(entry.insert(json.to_string(), fact).is_none(), "go_fields.txt: {name}.{json} twice");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_facts_parse_numbers_names_types_and_shapes() {
        let text = "# c\npackage io.k8s.api.x.v1\nA: 1=metadata:io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta 3=items:[]B 4=tags:[]string 5=n:int64\n";
        let messages = extra::read(text);
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].path, "api::x::v1::A");
        let f = &messages[0].fields;
        assert_eq!(
            (f[0].tag, f[0].rust_name.as_str(), f[0].ty.as_str(), f[0].shape),
            (1, "metadata", "message", "One")
        );
        assert_eq!(f[0].message.as_deref(), Some("apimachinery::pkg::apis::meta::v1::ObjectMeta"));
        assert_eq!((f[1].tag, f[1].shape, f[1].message.as_deref()), (3, "Repeated", Some("api::x::v1::B")));
        assert_eq!((f[2].ty.as_str(), f[2].shape, f[2].message.as_deref()), ("string", "Repeated", None));
        assert_eq!((f[3].tag, f[3].ty.as_str(), f[3].shape), (5, "int64", "One"));
        assert_eq!(
            pb_path_of_openapi("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"),
            "apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON"
        );
    }

    #[test]
    #[should_panic(expected = "twice")]
    fn extra_facts_refuse_a_duplicate_number() {
        extra::read("package io.k8s.api.x.v1\nA: 1=a:string 1=b:string\n");
    }

    #[test]
    #[should_panic(expected = "NUMBER=name:TYPE")]
    fn extra_facts_refuse_a_malformed_field() {
        extra::read("package io.k8s.api.x.v1\nA: one=a:string\n");
    }

    #[test]
    #[should_panic(expected = "delete its line")]
    fn extra_facts_refuse_a_message_k8s_pb_has() {
        let mut messages = BTreeMap::new();
        let pod = || PbMessage { path: "api::core::v1::Pod".into(), fields: Vec::new() };
        messages.insert(normalize_path("api::core::v1::Pod"), pod());
        add_extra(&mut messages, extra::read("package io.k8s.api.core.v1\nPod: 1=metadata:string\n"));
    }

    /// kube v1.36 promoted MutatingAdmissionPolicy to v1 with the numbers of
    /// v1beta1: every message of `proto_fields.txt` has a twin of the same
    /// name in k8s-pb's v1beta1 with the same numbers, names, types and
    /// shapes (message types compared by name), and k8s-pb has no v1 one.
    #[test]
    fn extra_messages_match_k8s_pb_v1beta1() {
        let messages = read_k8s_pb(&k8s_pb_source_dir());
        let extra = extra::read(&read_text(&proto_fields_path()));
        assert!(!extra.is_empty());
        let squash = |s: &str| s.replace('_', "").to_ascii_lowercase();
        let type_name = |p: &Option<String>| p.as_ref().map(|p| p.rsplit("::").next().unwrap().to_ascii_lowercase());
        for message in &extra {
            assert!(!messages.contains_key(&normalize_path(&message.path)), "k8s-pb has {}", message.path);
            let twin_path = message.path.replace("::v1::", "::v1beta1::");
            let twin = messages.get(&normalize_path(&twin_path)).unwrap_or_else(|| panic!("k8s-pb has no {twin_path}"));
            assert_eq!(message.fields.len(), twin.fields.len(), "{}", message.path);
            for (ours, theirs) in message.fields.iter().zip(&twin.fields) {
                let what = format!("{}.{}", message.path, ours.rust_name);
                assert_eq!(ours.tag, theirs.tag, "{what}");
                assert_eq!(squash(&ours.rust_name), squash(&theirs.rust_name), "{what}");
                assert_eq!(ours.ty, theirs.ty, "{what}");
                assert_eq!(ours.shape, theirs.shape, "{what}");
                assert_eq!(type_name(&ours.message), type_name(&theirs.message), "{what}");
            }
        }
    }
}
