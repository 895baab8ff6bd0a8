//! The bodies of the fuzz targets: one checking function per parser and
//! decoder of the server, each taking arbitrary bytes.
//!
//! `fuzz/fuzz_targets/*.rs` (libFuzzer through cargo-fuzz, run by
//! `scripts/fuzz.sh`) and `tests/fuzz_smoke.rs` (a seeded, count-bounded run
//! inside `cargo test`) call these same functions, so CI exercises exactly the
//! code paths the fuzzer does. [`TARGETS`] is the list both sides iterate.
//!
//! Each function returns normally for every input. It panics only when the
//! parser under test panicked or broke one of the properties asserted here
//! (round trips, error codes, agreement between related functions); either is
//! a bug in the parser, not in the harness.
//!
//! Invariant: no I/O, no clock, no randomness: the outcome depends only on the
//! input bytes, so every crash file replays.

use crate::api::negotiate::{self, Representation};
use crate::api::object;
use crate::api::params::Params;
use crate::api::protobuf;
use crate::api::route::{self, ResourcePath, Route};
use crate::cache;
use crate::log::Revision;
use crate::types::key::{shard_for_key, ObjectKey};
use crate::types::registry::Registry;
use crate::types::selector::{self, Operator, Requirement, Selector};
use crate::types::validation::{self, NameRule};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// One fuzz target: its name (also the name of its file in
/// `fuzz/fuzz_targets/`, its binary, and its corpus folder in `fuzz/corpus/`),
/// its body, and what it parses.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    pub parses: &'static str,
}

/// Every fuzz target, in the order `scripts/fuzz.sh` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "label_selector",
        run: label_selector,
        parses: "types::selector::parse_label_selector, Selector::matches",
    },
    Target {
        name: "field_selector",
        run: field_selector,
        parses: "types::selector::parse_field_selector, Selector::matches",
    },
    Target { name: "params", run: params, parses: "api::params::Params::parse" },
    Target { name: "route", run: route, parses: "api::route::parse" },
    Target { name: "accept", run: accept, parses: "api::negotiate::{parse_accept, for_objects, for_discovery}" },
    Target { name: "protobuf", run: protobuf, parses: "api::protobuf::{decode_envelope, decode_object}" },
    Target { name: "body", run: body, parses: "api::object::{decode_body, check_type_meta}" },
    Target { name: "object_key", run: object_key, parses: "types::key::ObjectKey::decode" },
    Target { name: "validation", run: validation, parses: "types::validation name, label and annotation validators" },
    Target { name: "encode_stored", run: encode_stored, parses: "cache::encode_stored" },
    Target { name: "log_record", run: log_record, parses: "log::embedded record frames, segment scan, snapshot read" },
    Target {
        name: "continue_token",
        run: continue_token,
        parses: "list::continue_token::ContinueToken::decode (base64, Go's JSON scanner and decoder), list::plan",
    },
    Target {
        name: "credentials",
        run: credentials,
        parses: "auth::authn::{TokenFile::parse, bearer_token, certificate_user}",
    },
    Target {
        name: "patch",
        run: patch,
        parses: "patch::apply (JSON, merge, strategic merge), types::schema::unknown_fields",
    },
    Target {
        name: "fieldmanager",
        run: fieldmanager,
        parses: "fieldmanager::fieldset::from_fields_v1, fieldmanager::{apply, update, decode}",
    },
    Target {
        name: "representations",
        run: representations,
        parses: "api::cbor::decode_object, api::yaml::decode_object, api::protobuf_encode::encode_object_json",
    },
    Target {
        name: "custom_resource",
        run: custom_resource,
        parses: "types::crd (definitions, status, served resources), types::crd_schema (pruning, validation)",
    },
    Target {
        name: "service_account_token",
        run: service_account_token,
        parses: "auth::serviceaccount (verify, sign, from_pem), handlers::review::protobuf_{eviction,token_request}",
    },
    Target {
        name: "admission_review",
        run: admission_review,
        parses: "strategy::admission::webhook::{read_answer, apply_patch, denial, parse_configuration} and matchConditions (CEL)",
    },
    Target {
        name: "typed_layer",
        run: typed_layer,
        parses: "strategy::{decode_and_default, create, update, finish} (decode, defaults, rules, validation, order)",
    },
];

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

// --- Selectors -----------------------------------------------------------------

/// Writes a label selector back in the query-string form.
pub fn render_label_selector(selector: &Selector) -> String {
    let parts: Vec<String> = selector
        .requirements
        .iter()
        .map(|r| match &r.operator {
            Operator::Equals => format!("{}={}", r.key, r.value),
            Operator::NotEquals => format!("{}!={}", r.key, r.value),
            Operator::In(values) => format!("{} in ({})", r.key, values.join(",")),
            Operator::NotIn(values) => format!("{} notin ({})", r.key, values.join(",")),
            Operator::Exists => r.key.clone(),
            Operator::DoesNotExist => format!("!{}", r.key),
            Operator::GreaterThan(n) => format!("{}>{n}", r.key),
            Operator::LessThan(n) => format!("{}<{n}", r.key),
        })
        .collect();
    parts.join(",")
}

/// Writes a field selector back in the query-string form, escaping `\`, `,`
/// and `=` in values. Keys are written as they are (kube does not trim
/// them); `None` when one cannot be written back: a key ending in `!`
/// before `=` reads as `!=`, as kube's own `String()` would write it.
pub fn render_field_selector(selector: &Selector) -> Option<String> {
    let mut parts = Vec::new();
    for r in &selector.requirements {
        let mut value = String::new();
        for c in r.value.chars() {
            if matches!(c, '\\' | ',' | '=') {
                value.push('\\');
            }
            value.push(c);
        }
        let op = match r.operator {
            Operator::NotEquals => "!=",
            _ if r.key.ends_with('!') => return None,
            _ => "=",
        };
        parts.push(format!("{}{op}{value}", r.key));
    }
    Some(parts.join(","))
}

fn negated(r: &Requirement) -> Option<Requirement> {
    let operator = match &r.operator {
        Operator::Equals => Operator::NotEquals,
        Operator::NotEquals => Operator::Equals,
        Operator::In(v) => Operator::NotIn(v.clone()),
        Operator::NotIn(v) => Operator::In(v.clone()),
        Operator::Exists => Operator::DoesNotExist,
        Operator::DoesNotExist => Operator::Exists,
        Operator::GreaterThan(_) | Operator::LessThan(_) => return None,
    };
    Some(Requirement { key: r.key.clone(), operator, value: r.value.clone() })
}

/// Checks `Selector::matches` against its own parts on a few label sets built
/// from the selector: the empty set, one that gives each key the value its
/// requirement names, and one that gives each key a value no requirement
/// names. A conjunction matches iff every requirement does; a requirement
/// and its negation never agree.
fn check_matches(selector: &Selector) {
    let named: Vec<(String, String)> = selector
        .requirements
        .iter()
        .map(|r| {
            let value = match &r.operator {
                Operator::In(v) | Operator::NotIn(v) => v.first().cloned().unwrap_or_default(),
                _ => r.value.clone(),
            };
            (r.key.clone(), value)
        })
        .collect();
    let other: Vec<(String, String)> =
        selector.requirements.iter().map(|r| (r.key.clone(), "\u{1}unnamed".to_string())).collect();
    for labels in [Vec::new(), named, other] {
        let lookup = |k: &str| labels.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let all = selector.requirements.iter().all(|r| {
            let one = Selector { requirements: vec![r.clone()] };
            let matched = one.matches(lookup);
            if let Some(not) = negated(r) {
                let not = Selector { requirements: vec![not] };
                assert_ne!(matched, not.matches(lookup), "{r:?} and its negation agree on {labels:?}");
            }
            matched
        });
        assert_eq!(selector.matches(lookup), all, "{selector:?} on {labels:?}");
    }
    assert!(Selector::default().matches(|_| None), "the empty selector matches everything");
}

/// `labelSelector`: never panics; a parsed selector's keys and values are
/// trimmed and non-empty keys; writing it back and parsing again gives the
/// same requirements; `matches` is consistent (see `check_matches`).
pub fn label_selector(data: &[u8]) {
    let input = text(data);
    let Ok(selector) = selector::parse_label_selector(&input) else { return };
    for r in &selector.requirements {
        assert!(!r.key.is_empty() && r.key.trim() == r.key, "bad key in {r:?}");
        assert_eq!(r.value.trim(), r.value, "untrimmed value in {r:?}");
    }
    let rendered = render_label_selector(&selector);
    let again = selector::parse_label_selector(&rendered)
        .unwrap_or_else(|e| panic!("{input:?} parsed, but its rendering {rendered:?} does not: {e}"));
    assert_eq!(again, selector, "{input:?} -> {rendered:?}");
    check_matches(&selector);
}

/// `fieldSelector`: never panics; keys hold no unescaped `,` and no `=`;
/// only `=`, `==` and `!=` come out; writing it back (values escaped) and
/// parsing again gives the same requirements (in kube's sorted order);
/// `matches` is consistent.
pub fn field_selector(data: &[u8]) {
    let input = text(data);
    let Ok(selector) = selector::parse_field_selector(&input) else { return };
    for r in &selector.requirements {
        assert!(!r.key.contains('='), "bad key in {r:?}");
        assert!(matches!(r.operator, Operator::Equals | Operator::NotEquals), "{r:?}");
    }
    if let Some(rendered) = render_field_selector(&selector) {
        let again = selector::parse_field_selector(&rendered)
            .unwrap_or_else(|e| panic!("{input:?} parsed, but its rendering {rendered:?} does not: {e}"));
        let sorted = |s: &Selector| {
            let mut r: Vec<String> = s.requirements.iter().map(|r| format!("{r:?}")).collect();
            r.sort();
            r
        };
        assert_eq!(sorted(&again), sorted(&selector), "{input:?} -> {rendered:?}");
    }
    check_matches(&selector);
}

// --- Query parameters ------------------------------------------------------------

/// Writes parsed parameters back as a query string.
pub fn render_params(p: &Params) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    if let Some(pretty) = p.pretty {
        q.append_pair("pretty", if pretty { "true" } else { "false" });
    }
    let bools = [("watch", p.watch), ("verbose", p.verbose)];
    for (name, value) in bools {
        if value {
            q.append_pair(name, "true");
        }
    }
    let strings = [
        ("labelSelector", &p.label_selector),
        ("fieldSelector", &p.field_selector),
        ("resourceVersion", &p.resource_version),
        ("resourceVersionMatch", &p.resource_version_match),
        ("continue", &p.continue_token),
        ("fieldManager", &p.field_manager),
        ("fieldValidation", &p.field_validation),
        ("propagationPolicy", &p.propagation_policy),
        ("includeObject", &p.include_object),
        ("dryRun", &p.dry_run_unsupported),
    ];
    for (name, value) in strings {
        if let Some(v) = value {
            q.append_pair(name, v);
        }
    }
    if let Some(n) = p.limit {
        q.append_pair("limit", &n.to_string());
    }
    if let Some(n) = p.timeout_seconds {
        q.append_pair("timeoutSeconds", &n.to_string());
    }
    if let Some(n) = p.grace_period_seconds {
        q.append_pair("gracePeriodSeconds", &n.to_string());
    }
    if p.dry_run_all {
        q.append_pair("dryRun", "All");
    }
    for e in &p.exclude {
        q.append_pair("exclude", e);
    }
    if p.allow_watch_bookmarks {
        q.append_pair("allowWatchBookmarks", "true");
    }
    if let Some(send) = p.send_initial_events {
        q.append_pair("sendInitialEvents", if send { "true" } else { "false" });
    }
    q.finish()
}

/// Query strings: never panics; every error is a 400; a limit is never 0
/// (0 and negatives mean "no limit"); writing the parameters back and
/// parsing again gives the same parameters.
pub fn params(data: &[u8]) {
    let query = text(data);
    assert_eq!(Params::parse(None).ok(), Some(Params::default()));
    match Params::parse(Some(&query)) {
        Err(e) => assert_eq!(e.code(), 400, "{query:?}: {e:?}"),
        Ok(p) => {
            assert_ne!(p.limit, Some(0), "{query:?}");
            let rendered = render_params(&p);
            let again = Params::parse(Some(&rendered))
                .unwrap_or_else(|e| panic!("{query:?} parsed, but its rendering {rendered:?} does not: {e:?}"));
            assert_eq!(again, p, "{query:?} -> {rendered:?}");
        }
    }
}

// --- Paths -----------------------------------------------------------------------

/// The path a parsed route came from, in its canonical form.
pub fn render_route(r: &Route) -> Option<String> {
    Some(match r {
        Route::CoreVersions => "/api".into(),
        Route::Groups => "/apis".into(),
        Route::Group(g) => format!("/apis/{g}"),
        Route::GroupVersion { group, version } if group.is_empty() => format!("/api/{version}"),
        Route::GroupVersion { group, version } => format!("/apis/{group}/{version}"),
        Route::Version => "/version".into(),
        Route::OpenApiV3Index => "/openapi/v3".into(),
        Route::OpenApiV3(rest) => format!("/openapi/v3/{rest}"),
        Route::OpenApiV2 => "/openapi/v2".into(),
        Route::Health { kind, check: None } => format!("/{}", kind.name()),
        Route::Health { kind, check: Some(c) } => format!("/{}/{c}", kind.name()),
        Route::Metrics => "/metrics".into(),
        Route::OpenIdConfiguration => "/.well-known/openid-configuration".into(),
        Route::OpenIdKeys => "/openid/v1/jwks".into(),
        Route::Resource(p) => render_resource_path(p),
        Route::NotFound => return None,
    })
}

fn render_resource_path(p: &ResourcePath) -> String {
    let mut s =
        if p.group.is_empty() { format!("/api/{}", p.version) } else { format!("/apis/{}/{}", p.group, p.version) };
    if p.legacy_watch {
        s.push_str("/watch");
    }
    if let Some(ns) = &p.namespace {
        s.push_str("/namespaces/");
        s.push_str(ns);
    }
    for part in [Some(&p.resource), p.name.as_ref(), p.subresource.as_ref()].into_iter().flatten() {
        s.push('/');
        s.push_str(part);
    }
    s
}

/// Paths: never panics; trailing slashes never matter; a Resource has
/// non-empty version and resource and no empty or `/`-holding segment; a
/// route written back parses to the same route.
pub fn route(data: &[u8]) {
    let path = text(data);
    let parsed = route::parse(&path);
    assert_eq!(route::parse(&format!("{path}/")), parsed, "{path:?} with a trailing slash");
    if let Route::Resource(p) = &parsed {
        assert!(!p.resource.is_empty(), "{path:?}: empty resource name");
        assert!(!p.version.is_empty(), "{path:?}: empty version");
        let segments =
            [Some(&p.version), Some(&p.resource), p.namespace.as_ref(), p.name.as_ref(), p.subresource.as_ref()];
        for s in segments.into_iter().flatten() {
            assert!(!s.is_empty() && !s.contains('/'), "{path:?}: bad segment {s:?} in {p:?}");
        }
    }
    if let Some(rendered) = render_route(&parsed) {
        assert_eq!(route::parse(&rendered), parsed, "{path:?} -> {rendered:?}");
    }
}

// --- Accept headers --------------------------------------------------------------

/// Accept headers (the first byte picks whether tables are allowed, the rest
/// is the header): never panics; media types come out trimmed, lower-cased
/// and non-empty, never with a `q` parameter; errors are 406 only; a Table
/// only when allowed; allowing tables never turns an answer into a 406;
/// appending `application/json` always makes the header acceptable.
pub fn accept(data: &[u8]) {
    let (table_allowed, header) = match data.split_first() {
        Some((first, rest)) => (first & 1 == 1, text(rest)),
        None => (true, String::new()),
    };
    let ranges = negotiate::parse_accept(&header);
    assert!(ranges.len() <= header.split(',').count(), "{header:?}: more ranges than parts");
    for r in &ranges {
        assert!(!r.media_type.is_empty(), "{header:?}: empty media type");
        assert_eq!(r.media_type, r.media_type.trim().to_ascii_lowercase(), "{header:?}");
        for (k, _) in &r.params {
            assert!(!k.is_empty() && k != "q" && k.trim() == k, "{header:?}: parameter {k:?}");
        }
    }
    let objects = negotiate::for_objects(Some(&header), table_allowed);
    match &objects {
        Ok(Representation::Json) => {}
        Ok(Representation::Table { version }) => {
            assert!(table_allowed, "{header:?}: a Table although tables are not allowed");
            assert!(version == "v1" || version == "v1beta1", "{header:?}: Table {version}");
        }
        Ok(other) => panic!("{header:?}: for_objects chose {other:?}"),
        Err(e) => assert_eq!(e.code(), 406, "{header:?}: {e:?}"),
    }
    if negotiate::for_objects(Some(&header), false).is_ok() {
        assert!(negotiate::for_objects(Some(&header), true).is_ok(), "{header:?}: allowing tables made it a 406");
    }
    match negotiate::for_discovery(Some(&header)) {
        Ok(Representation::Json) => {}
        Ok(Representation::AggregatedDiscovery { version }) => {
            assert!(version == "v2" || version == "v2beta1", "{header:?}: discovery {version}")
        }
        Ok(other) => panic!("{header:?}: for_discovery chose {other:?}"),
        Err(e) => assert_eq!(e.code(), 406, "{header:?}: {e:?}"),
    }
    // Every route's offer: metadata-only kinds only as meta.k8s.io v1/v1beta1, errors 406 only.
    for offer in [
        negotiate::Offer::objects(true),
        negotiate::Offer::objects(false),
        negotiate::Offer::watch(true),
        negotiate::Offer::watch(false),
    ] {
        match negotiate::choose(Some(&header), offer) {
            Ok(Representation::Metadata(m)) => {
                assert!(m.version == "v1" || m.version == "v1beta1", "{header:?}: metadata {}", m.version);
                assert!(!(offer.watch && m.wire == negotiate::Wire::Yaml), "{header:?}: a YAML watch");
            }
            Ok(_) => {}
            Err(e) => assert_eq!(e.code(), 406, "{header:?}: {e:?}"),
        }
    }
    let with_json = format!("{header},application/json");
    assert!(negotiate::for_objects(Some(&with_json), table_allowed).is_ok(), "{with_json:?}");
    assert!(negotiate::for_discovery(Some(&with_json)).is_ok(), "{with_json:?}");
    if header.trim().is_empty() {
        assert_eq!(objects.ok(), Some(Representation::Json), "a blank Accept header means JSON");
    }
}

// --- Protobuf bodies -------------------------------------------------------------

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, number << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn string_entry(key: &str, value: &str) -> Vec<u8> {
    let mut entry = Vec::new();
    put_bytes(&mut entry, 1, key.as_bytes());
    put_bytes(&mut entry, 2, value.as_bytes());
    entry
}

/// A Namespace built from the input's text (fields separated by `\u{1}`:
/// name, generateName, namespace, resourceVersion, then labels,
/// annotations and finalizers in turn, `k=v` for map entries), encoded the
/// way kubectl does, and the JSON the decoder must produce for it.
fn namespace_case(data: &[u8]) -> (Vec<u8>, Value) {
    let input = text(data);
    let pieces: Vec<&str> = input.split('\u{1}').collect();
    let piece = |i: usize| pieces.get(i).copied().unwrap_or("");
    let mut meta_pb = Vec::new();
    let mut meta = Map::new();
    for (number, field, value) in [
        (1, "name", piece(0)),
        (2, "generateName", piece(1)),
        (3, "namespace", piece(2)),
        (6, "resourceVersion", piece(3)),
    ] {
        put_bytes(&mut meta_pb, number, value.as_bytes());
        if !value.is_empty() {
            meta.insert(field.into(), json!(value));
        }
    }
    let (mut labels, mut annotations, mut finalizers) = (Map::new(), Map::new(), Vec::new());
    for (i, p) in pieces.iter().copied().skip(4).enumerate() {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        match i % 3 {
            0 => {
                put_bytes(&mut meta_pb, 11, &string_entry(k, v));
                labels.insert(k.to_string(), json!(v));
            }
            1 => {
                put_bytes(&mut meta_pb, 12, &string_entry(k, v));
                annotations.insert(k.to_string(), json!(v));
            }
            _ => {
                put_bytes(&mut meta_pb, 14, p.as_bytes());
                finalizers.push(json!(p));
            }
        }
    }
    for (field, value) in [
        ("labels", Value::Object(labels)),
        ("annotations", Value::Object(annotations)),
        ("finalizers", Value::Array(finalizers.clone())),
    ] {
        if value.as_object().is_some_and(|m| !m.is_empty()) || value.as_array().is_some_and(|a| !a.is_empty()) {
            meta.insert(field.into(), value);
        }
    }
    // The spec holds the same finalizers in reverse order.
    let mut spec_pb = Vec::new();
    let mut spec = Map::new();
    let spec_finalizers: Vec<Value> = finalizers.iter().rev().cloned().collect();
    for f in &spec_finalizers {
        put_bytes(&mut spec_pb, 1, f.as_str().unwrap_or_default().as_bytes());
    }
    if !spec_finalizers.is_empty() {
        spec.insert("finalizers".into(), Value::Array(spec_finalizers));
    }
    let mut raw = Vec::new();
    put_bytes(&mut raw, 1, &meta_pb);
    put_bytes(&mut raw, 2, &spec_pb);
    let mut type_meta = Vec::new();
    put_bytes(&mut type_meta, 1, b"v1");
    put_bytes(&mut type_meta, 2, b"Namespace");
    let mut body = protobuf::MAGIC.to_vec();
    put_bytes(&mut body, 1, &type_meta);
    put_bytes(&mut body, 2, &raw);
    let expected = json!({"kind": "Namespace", "apiVersion": "v1", "metadata": meta, "spec": spec});
    (body, expected)
}

/// Protobuf bodies: never panics; every error is 400 or 415; a decoded
/// object names a kind the schema table knows, and its metadata (when
/// present) is an object. Then a Namespace built from the input is encoded
/// as kubectl sends it and must decode to exactly the expected JSON.
pub fn protobuf(data: &[u8]) {
    if let Err(e) = protobuf::decode_envelope(data) {
        assert!(matches!(e.code(), 400 | 415), "decode_envelope: {e:?}");
    }
    for kind in ["Namespace", "Pod"] {
        match protobuf::decode_object(data, kind) {
            Err(e) => assert!(matches!(e.code(), 400 | 415), "decode_object: {e:?}"),
            Ok(object) => {
                assert!(object.get("kind").is_some_and(Value::is_string), "{object:?}");
                if let Some(meta) = object.get("metadata") {
                    assert!(meta.is_object(), "metadata is not an object: {object:?}");
                }
            }
        }
    }
    let (body, expected) = namespace_case(data);
    match protobuf::decode_object(&body, "Namespace") {
        Ok(object) => assert_eq!(Value::Object(object), expected),
        // The structured case carries only the input's text, always UTF-8.
        Err(e) => panic!("a well-formed Namespace body failed to decode: {e:?}"),
    }
}

// --- Request bodies --------------------------------------------------------------

/// The content types the `body` target picks from with its first byte.
pub const BODY_CONTENT_TYPES: &[Option<&str>] = &[
    Some("application/json"),
    Some("application/vnd.kubernetes.protobuf"),
    None,
    Some("application/json; charset=utf-8"),
    Some("APPLICATION/JSON"),
    Some("text/plain"),
    Some("application/yaml"),
    Some(""),
];

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

/// Request bodies: byte 0 picks the content type from
/// [`BODY_CONTENT_TYPES`], byte 1 the resource from the built-in registry,
/// the rest is the body. Never panics; decode errors are 400 or 415 (415
/// only for a media type other than JSON); a JSON object body always
/// decodes; `check_type_meta` fails only with 400, and on success leaves the
/// endpoint's kind and apiVersion and a metadata object, and a second call
/// changes nothing.
pub fn body(data: &[u8]) {
    let (selector, resource, body) = match data {
        [a, b, rest @ ..] => (*a as usize, *b as usize, rest),
        _ => (0, 0, data),
    };
    let content_type = BODY_CONTENT_TYPES[selector % BODY_CONTENT_TYPES.len()];
    let registry = registry();
    let info = registry.iter().nth(resource % registry.len()).expect("the built-in registry is not empty");
    let media = object::media_type(content_type);
    let is_json = media == "application/json" || media.is_empty();
    let decoded = object::decode_body(content_type, body, &info.kind);
    if is_json && serde_json::from_slice::<Map<String, Value>>(body).is_ok() {
        assert!(decoded.is_ok(), "a JSON object body was rejected: {decoded:?}");
    }
    let mut object = match decoded {
        Err(e) => {
            assert!(matches!(e.code(), 400 | 415), "decode_body: {e:?}");
            if is_json {
                assert_eq!(e.code(), 400, "JSON bodies fail with 400 only: {e:?}");
            }
            return;
        }
        Ok(object) => object,
    };
    match object::check_type_meta(&mut object, info) {
        Err(e) => assert_eq!(e.code(), 400, "check_type_meta: {e:?}"),
        Ok(()) => {
            assert_eq!(object.get("kind"), Some(&json!(info.kind)));
            assert_eq!(object.get("apiVersion"), Some(&json!(info.api_version())));
            assert!(object.get("metadata").is_some_and(Value::is_object), "{object:?}");
            let before = object.clone();
            assert!(object::check_type_meta(&mut object, info).is_ok(), "second check of {before:?}");
            assert_eq!(object, before, "check_type_meta is not idempotent");
        }
    }
}

// --- Object keys -----------------------------------------------------------------

/// Object keys: never panics; a decoded key has a non-empty resource and
/// name and no `/` in any part, encodes back to exactly the input bytes (so
/// one key has one byte form and one owning shard), and decodes again to
/// itself. Then a key built from the input's `/`-free pieces round-trips.
pub fn object_key(data: &[u8]) {
    if let Some(key) = ObjectKey::decode(data) {
        assert!(!key.resource.is_empty() && !key.name.is_empty(), "{key:?}");
        for part in [&key.group, &key.resource, &key.namespace, &key.name] {
            assert!(!part.contains('/'), "{key:?}");
        }
        let encoded = key.encode();
        assert_eq!(&encoded[..], data, "{key:?} does not encode back to its bytes");
        assert_eq!(ObjectKey::decode(&encoded).as_ref(), Some(&key));
        for shards in [1, 2, 7] {
            assert_eq!(key.shard(shards), shard_for_key(data, shards), "{key:?}");
        }
    }
    let input = text(data);
    let pieces: Vec<&str> = input.split('/').collect();
    let piece = |i: usize| pieces.get(i).copied().unwrap_or("x");
    let (group, resource, namespace, name) = (piece(0), piece(1), piece(2), piece(3));
    if group != "core" && !resource.is_empty() && !name.is_empty() {
        let key = ObjectKey::new(group, resource, namespace, name);
        assert_eq!(ObjectKey::decode(&key.encode()), Some(key.clone()), "{key:?} does not round-trip");
    }
}

// --- Validation ------------------------------------------------------------------

/// Reference forms of the validators' regular expressions, written
/// independently of `types::validation` to check it against.
mod reference {
    fn alnum_lower(c: char) -> bool {
        c.is_ascii_lowercase() || c.is_ascii_digit()
    }

    /// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, no length limit.
    pub fn dns1123_label_shape(s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        !chars.is_empty()
            && alnum_lower(chars[0])
            && alnum_lower(chars[chars.len() - 1])
            && chars.iter().all(|&c| alnum_lower(c) || c == '-')
    }

    pub fn dns1123_label(s: &str) -> bool {
        s.len() <= 63 && dns1123_label_shape(s)
    }

    pub fn dns1123_subdomain(s: &str) -> bool {
        s.len() <= 253 && s.split('.').all(dns1123_label_shape)
    }

    pub fn dns1035_label(s: &str) -> bool {
        dns1123_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
    }

    /// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 bytes.
    pub fn name_part(s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        !chars.is_empty()
            && s.len() <= 63
            && chars[0].is_ascii_alphanumeric()
            && chars[chars.len() - 1].is_ascii_alphanumeric()
            && chars.iter().all(|&c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    }

    pub fn qualified_name(s: &str) -> bool {
        match s.split_once('/') {
            None => name_part(s),
            Some((prefix, name)) => !prefix.is_empty() && dns1123_subdomain(prefix) && name_part(name),
        }
    }

    pub fn label_value(s: &str) -> bool {
        s.is_empty() || name_part(s)
    }

    pub fn path_segment_name(s: &str) -> bool {
        s != "." && s != ".." && !s.contains('/') && !s.contains('%')
    }
}

/// Validators: never panic; each one accepts exactly what the reference form
/// of kube's regular expression accepts, and explains every rejection with
/// non-empty messages; the object-meta and label checks agree with the
/// single-value checks; `go_quote` brackets its output in quotes and leaves
/// no raw control character in it.
pub fn validation(data: &[u8]) {
    let v = text(data);
    let v = v.as_str();
    let checks: [(&str, Vec<String>, bool); 7] = [
        ("is_dns1123_subdomain", validation::is_dns1123_subdomain(v), reference::dns1123_subdomain(v)),
        ("is_dns1123_label", validation::is_dns1123_label(v), reference::dns1123_label(v)),
        ("is_dns1035_label", validation::is_dns1035_label(v), reference::dns1035_label(v)),
        ("is_qualified_name", validation::is_qualified_name(v), reference::qualified_name(v)),
        ("is_valid_label_value", validation::is_valid_label_value(v), reference::label_value(v)),
        ("is_valid_path_segment_name", validation::is_valid_path_segment_name(v), reference::path_segment_name(v)),
        (
            "is_valid_path_segment_prefix",
            validation::is_valid_path_segment_prefix(v),
            !v.contains('/') && !v.contains('%'),
        ),
    ];
    for (name, messages, valid) in &checks {
        assert_eq!(messages.is_empty(), *valid, "{name}({v:?}) = {messages:?}");
        assert!(messages.iter().all(|m| !m.is_empty()), "{name}({v:?}): empty message");
    }
    for rule in [
        NameRule::Dns1123Subdomain,
        NameRule::Dns1123Label,
        NameRule::Dns1035Label,
        NameRule::PathSegment,
        NameRule::CronJob,
    ] {
        let as_name = rule.check(v, false);
        let errors = validation::validate_object_name(rule, v, "");
        if v.is_empty() {
            assert_eq!(errors.len(), 1, "an empty name with no generateName is one error");
        } else {
            let cronjob_too_long = rule == NameRule::CronJob && v.len() > validation::CRONJOB_NAME_MAX_LEN;
            assert_eq!(errors.is_empty(), as_name.is_empty() && !cronjob_too_long, "{rule:?} {v:?}: {errors:?}");
        }
        let generated = validation::validate_object_name(rule, "", v);
        if !v.is_empty() {
            assert_eq!(generated.is_empty(), rule.check(v, true).is_empty(), "{rule:?} generateName {v:?}");
        }
        for e in errors.iter().chain(&generated) {
            assert!(!e.to_string().is_empty());
            let _ = e.body();
        }
        let message = validation::invalid_message("Pod", v, &errors);
        assert!(message.starts_with("Pod \""), "{message:?}");
    }
    let namespace = validation::validate_object_namespace(v);
    assert_eq!(namespace.is_empty(), !v.is_empty() && reference::dns1123_label(v), "namespace {v:?}");
    let labels = validation::validate_labels([(v, v)]);
    assert_eq!(labels.is_empty(), reference::qualified_name(v) && reference::label_value(v), "labels {v:?}");
    let annotations = validation::validate_annotations([(v, v)]);
    let fits = 2 * v.len() <= validation::ANNOTATIONS_BYTES_MAX;
    assert_eq!(annotations.is_empty(), reference::qualified_name(&v.to_lowercase()) && fits, "annotations {v:?}");
    let quoted = validation::go_quote(v);
    assert!(quoted.len() >= 2 && quoted.starts_with('"') && quoted.ends_with('"'), "{quoted:?}");
    assert!(!quoted.chars().any(char::is_control), "go_quote left a control character: {quoted:?}");
}

// --- The cache's encoding --------------------------------------------------------

/// Selectable field paths the `encode_stored` target asks for, odd ones
/// included.
pub const SELECTABLE_FIELDS: &[&str] = &["spec.nodeName", "status.phase", "metadata.name", "spec", "", "a..b"];

/// Stored values: byte 0 gives the revisions, the rest is the value. Never
/// panics; on success the object built from the value's snapshot hint is the
/// one the scan built, the served JSON is an object whose
/// `metadata.resourceVersion` is the revision, the parsed metadata agrees
/// with the JSON, and encoding the served bytes again gives the same bytes
/// and metadata.
pub fn encode_stored(data: &[u8]) {
    let (revision, value) = match data.split_first() {
        Some((first, rest)) => (u64::from(*first) * 1_000_003, rest),
        None => (0, data),
    };
    let fields: Vec<String> = SELECTABLE_FIELDS.iter().map(|s| s.to_string()).collect();
    let key = Bytes::from_static(b"/registry/core/pods/ns/x");
    let Ok(first) = cache::encode_stored(key.clone(), value, Revision(revision), Revision(1), &fields) else { return };
    assert_eq!(first.mod_revision, Revision(revision));
    // A restart builds the object from its value's snapshot hint: the same
    // object as the scan.
    let hint = cache::snapshot_hint(value, &fields);
    let prepared = cache::PreparedFields::new(&fields);
    let hinted = cache::encode_stored_hinted(key.clone(), value, Revision(revision), Revision(1), &prepared, &hint)
        .expect("what encodes, encodes from its hint");
    assert_eq!(hinted.json, first.json, "hinted and scanned encodings differ");
    assert_eq!(hinted.meta().summary(), first.meta().summary(), "hinted and scanned metadata differ");
    // Stored values come from the API layer's own encoder, so the reference
    // (a full decode) accepts them all. For anything else the fast path may
    // serve a value the reference refuses (a number beyond f64, say): it must
    // still be JSON by the grammar, and then there is nothing to compare.
    let Ok(served) = serde_json::from_slice::<Value>(&first.json) else {
        serde_json::from_slice::<serde::de::IgnoredAny>(&first.json).expect("the served bytes are JSON");
        assert!(
            cache::encode_stored_slow(key, value, Revision(revision), Revision(1), &fields).is_err(),
            "the reference decodes what a full decode of the served bytes cannot"
        );
        return;
    };
    let meta = served.get("metadata").and_then(Value::as_object).expect("the served object has metadata");
    assert_eq!(meta.get("resourceVersion"), Some(&json!(revision.to_string())));
    assert_eq!(meta.get("name").and_then(Value::as_str).unwrap_or(""), first.meta().name());
    assert_eq!(meta.get("namespace").and_then(Value::as_str).unwrap_or(""), first.meta().namespace());
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            assert_eq!(first.meta().label(k), Some(v.as_str().unwrap_or("")), "label {k}");
        }
    }
    for (path, _) in first.meta().fields() {
        assert!(fields.iter().any(|f| f == path), "unrequested field {path}");
    }
    let again = cache::encode_stored(key.clone(), &first.json, Revision(revision), Revision(1), &fields)
        .expect("the served bytes encode again");
    assert_eq!(again.json, first.json, "encoding is not idempotent");
    assert_eq!(again.meta().summary(), first.meta().summary());
    // The fast path (splicing) and the reference (decode and re-encode)
    // serve the same document and the same metadata.
    let reference = cache::encode_stored_slow(key, value, Revision(revision), Revision(1), &fields)
        .expect("the reference encodes whatever the fast path encodes");
    let reference_doc: Value = serde_json::from_slice(&reference.json).expect("the reference serves JSON");
    assert_eq!(served, reference_doc, "fast and reference encodings differ");
    assert_eq!(first.meta().summary(), reference.meta().summary(), "fast and reference metadata differ");
}

// --- Log records -----------------------------------------------------------------

/// The log's on-disk decoders: the input is a segment file and a snapshot
/// file. Neither may panic; a segment scanned as the last one (torn tail
/// allowed) never fails on a bad frame; every record decoded re-encodes to a
/// frame that decodes to the same record.
pub fn log_record(data: &[u8]) {
    use crate::log::embedded::record::{decode_record, encode_record, push_frame, read_frame, FrameRead};
    use crate::log::embedded::segment::scan_segment;
    use crate::log::embedded::snapshot::read_snapshot;
    let bytes = bytes::Bytes::copy_from_slice(data);
    let last = scan_segment("segment-00000000000000000001.wal", &bytes, true);
    let scan = match last {
        Ok(scan) => scan,
        // As the last segment, only a frame whose CRC holds but whose record
        // does not decode may fail the scan.
        Err(crate::log::LogError::Corrupt { offset, .. }) => {
            assert!(matches!(read_frame(&bytes, offset as usize), FrameRead::Frame { .. }));
            return;
        }
        Err(other) => panic!("scan_segment failed with {other}"),
    };
    assert!(scan.valid_len as usize <= data.len());
    let middle = scan_segment("segment-00000000000000000001.wal", &bytes, false);
    if let Ok(middle) = &middle {
        assert_eq!(middle.records, scan.records, "a clean scan must not depend on the segment's position");
    }
    let mut builder = flatbuffers::FlatBufferBuilder::new();
    for record in &scan.records {
        let payload =
            encode_record(&mut builder, record.revision, &record.key, &record.operation, record.create_revision);
        let mut frame = Vec::new();
        push_frame(&mut frame, payload);
        let frame = bytes::Bytes::from(frame);
        let FrameRead::Frame { payload, .. } = read_frame(&frame, 0) else { panic!("re-encoded frame does not read") };
        let again = decode_record(&frame, payload);
        assert_eq!(again.as_ref(), Ok(record), "record does not survive re-encoding");
    }
    let _ = read_snapshot("snapshot-00000000000000000001.snap", &bytes);
}

// --- Continue tokens and list options --------------------------------------------

/// Continue tokens and the list options table. Decoding never panics, on
/// the bytes as a token and on the bytes as the token's JSON (base64 of
/// them); every refusal is kube's "continue key is not valid"; a decoded
/// token never leaves the prefix it is joined to (no empty, `.` or `..`
/// segment) and, unless its start is empty (kube's own token for the
/// prefix itself), encodes to a token that decodes to it again; the
/// options table never panics and refuses only with a 400 or a 422 field
/// error naming resourceVersionMatch.
pub fn continue_token(data: &[u8]) {
    use crate::list::continue_token::{ContinueToken, TokenError};
    use crate::list::{plan, ListOptions, PlanError};
    use base64::Engine;
    let text = String::from_utf8_lossy(data);
    let as_json = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data);
    for candidate in [text.as_ref(), as_json.as_str()] {
        match ContinueToken::decode(candidate) {
            Ok(token) => {
                assert_ne!(token.resource_version, 0, "rv 0 is refused");
                if !token.start.is_empty() {
                    assert!(
                        token.start.split('/').all(|s| !matches!(s, "" | "." | "..")),
                        "a start that climbs: {:?}",
                        token.start
                    );
                    let again = ContinueToken::decode(&token.encode()).expect("an encoded token decodes");
                    assert_eq!(again, token);
                } else {
                    assert_eq!(ContinueToken::decode(&token.encode()), Err(TokenError::EmptyStartKey));
                }
                let prefix = b"/registry/core/pods/ns/";
                assert!(token.start_key(prefix).starts_with(prefix));
            }
            Err(e) => assert!(e.to_string().starts_with("continue key is not valid"), "{e}"),
        }
    }
    // The same bytes as list options: rv | match | limit | continue.
    let mut parts = text.split('|');
    let rv = parts.next();
    let rv_match = parts.next();
    let limit = parts.next().and_then(|l| l.parse::<u64>().ok());
    let token = parts.next();
    let options = ListOptions { resource_version: rv, resource_version_match: rv_match, limit, continue_token: token };
    match plan(&options) {
        Ok(_) | Err(PlanError::BadRequest(_)) => {}
        Err(PlanError::Invalid(errors)) => {
            assert!(!errors.is_empty() && errors.iter().all(|e| e.field == "resourceVersionMatch"), "{errors:?}")
        }
    }
}

// --- Credentials: the token file and client certificates --------------------------

/// Quotes a CSV field as Go's encoding/csv reads it back.
fn csv_field(field: &str) -> String {
    format!("\"{}\"", field.replace('"', "\"\""))
}

/// Byte 0 even: the rest is a `--token-auth-file`. It parses or is refused
/// with a record number; a parsed file has no empty token; written back as
/// CSV (every field quoted) it parses to the same file; every token
/// authenticates as its user (plus `system:authenticated`) and a token not
/// in the file is refused, never anonymous. The input's first line is also
/// tried as an `Authorization` header: `bearer_token` gives a non-empty,
/// trimmed token or nothing. Byte 0 odd: the rest is a DER client
/// certificate: `certificate_user` never panics, and a user it names has a
/// non-empty name and no empty group.
pub fn credentials(data: &[u8]) {
    use crate::auth::authn::{bearer_token, certificate_user, AuthenticationConfig, AuthnError, TokenFile};
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 1 {
        if let Ok(user) = certificate_user(rest) {
            assert!(!user.name.is_empty(), "a certificate user with an empty name");
        }
        return;
    }
    let text = text(rest);
    if let Some(token) = text.lines().next().and_then(bearer_token) {
        assert!(!token.is_empty() && token == token.trim(), "bearer token {token:?}");
    }
    let Ok(file) = TokenFile::parse(&text) else { return };
    let mut written = String::new();
    for (token, user) in file.iter() {
        assert!(!token.is_empty(), "an empty token was kept");
        let groups = user.groups.join(",");
        written
            .push_str(&[csv_field(token), csv_field(&user.name), csv_field(&user.uid), csv_field(&groups)].join(","));
        written.push('\n');
    }
    let again = TokenFile::parse(&written).unwrap_or_else(|e| panic!("written back {written:?}: {e}"));
    assert_eq!(again, file, "written back as {written:?}");
    let config =
        AuthenticationConfig { tokens: Some(std::sync::Arc::new(file.clone())), anonymous: true, ..Default::default() };
    for (token, user) in file.iter() {
        // A token with surrounding blanks or inner spaces is not sendable as one header value.
        if token.trim() != token || token.contains(char::is_whitespace) || token.contains(['\r', '\n']) {
            continue;
        }
        let found = config.authenticate(Some(&format!("Bearer {token}")), None).expect("a listed token");
        assert_eq!(found.name, user.name);
        assert!(found.in_group(crate::auth::AUTHENTICATED_GROUP));
        let unknown = format!("{token}-not-listed");
        if file.lookup(&unknown).is_none() {
            assert_eq!(config.authenticate(Some(&format!("Bearer {unknown}")), None), Err(AuthnError::InvalidToken));
        }
    }
}

// --- Service account tokens and control-plane subresource bodies -------------------

/// Service account tokens and what the control plane's subresources decode.
/// Byte 0 picks: 0, the rest is a bearer token verified against a fixed key
/// (the RSA key of `tests/fixtures/`): never a panic, and an accepted one
/// names a service account; 1, the rest is a Protobuf Eviction and
/// TokenRequest body: 400 or a JSON object, never a panic; 2, the rest is a
/// PEM key file: a key or an error; 3, the rest is JSON claims: signed with
/// the key, they verify (the signature and the issuer are never what
/// refuses them).
pub fn service_account_token(data: &[u8]) {
    use crate::auth::serviceaccount::{Claims, ServiceAccountTokens, TokenError, USER_PREFIX};
    static TOKENS: OnceLock<ServiceAccountTokens> = OnceLock::new();
    const ISSUER: &str = "https://fuzz.example";
    let tokens = TOKENS.get_or_init(|| {
        let key = include_bytes!("../tests/fixtures/service-account-rsa.key");
        ServiceAccountTokens::from_pem(key, &[], ISSUER.into(), Vec::new()).expect("the fixture key loads")
    });
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 4 {
        0 => {
            if let Ok(claims) = tokens.verify(&text(rest), 1_900_000_000, &[]) {
                assert!(claims.sub.starts_with(USER_PREFIX), "accepted a token for {:?}", claims.sub);
            }
        }
        1 => {
            for decoded in [
                crate::api::handlers::review::protobuf_eviction(rest),
                crate::api::handlers::review::protobuf_token_request(rest),
            ] {
                if let Err(e) = decoded {
                    assert_eq!(e.code(), 400, "{e:?}");
                }
            }
        }
        2 => {
            let _ = ServiceAccountTokens::from_pem(rest, &[rest.to_vec()], ISSUER.into(), Vec::new());
        }
        _ => {
            let Ok(mut claims) = serde_json::from_slice::<Claims>(rest) else { return };
            claims.iss = ISSUER.into();
            let token = tokens.sign(&claims).expect("signing never fails with a loaded key");
            let verified = tokens.verify(&token, claims.nbf, &claims.aud);
            assert!(!matches!(verified, Err(TokenError::Signature | TokenError::NotOurs)), "{verified:?} for {token}");
        }
    }
}

// --- PATCH bodies ------------------------------------------------------------------

/// PATCH bodies: byte 0 picks the patch type (JSON, merge, strategic), byte 1
/// the object (a Pod or a Deployment with merge lists, maps and scalars);
/// the rest is the patch. Never panics; errors are 400 or 422 (413 for too
/// many JSON-patch operations); a merge patch applied twice gives what it
/// gave once (RFC 7386 is idempotent); pruning the unknown fields of any
/// result leaves none.
pub fn patch(data: &[u8]) {
    use crate::patch::{apply, PatchError, PatchType};
    use crate::types::schema;
    let (selector, object, body) = match data {
        [a, b, rest @ ..] => (*a, *b, rest),
        _ => (0, 0, data),
    };
    let kind = [PatchType::Json, PatchType::Merge, PatchType::Strategic][usize::from(selector) % 3];
    let (original, shape) = if object % 2 == 0 {
        (
            json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "labels": {"a": "b"}, "finalizers": ["x", "y"]},
                   "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "args": ["1"]},
                                           {"name": "d", "env": [{"name": "E", "value": "v"}]}],
                            "volumes": [{"name": "v", "emptyDir": {}}]}}),
            schema::root_shape("", "v1", "Pod"),
        )
    } else {
        (
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                            "template": {"spec": {"containers": [{"name": "c"}]}}}}),
            schema::root_shape("apps", "v1", "Deployment"),
        )
    };
    let Some(shape) = shape else { panic!("no root shape for the fuzzed kinds") };
    match apply(kind, &original, body, Some(shape)) {
        Err(PatchError::BadRequest(m)) | Err(PatchError::DoesNotApply(m)) => {
            assert!(!m.is_empty(), "an empty patch error message")
        }
        Err(PatchError::TooManyOperations { got, max }) => assert!(got > max),
        Ok(mut patched) => {
            if kind == PatchType::Merge {
                let again =
                    apply(kind, &patched, body, Some(shape)).expect("a merge patch that applied once applies twice");
                assert_eq!(again, patched, "merge patch is not idempotent");
            }
            schema::unknown_fields(&mut patched, shape, true);
            assert!(schema::unknown_fields(&mut patched, shape, false).is_empty(), "pruning left unknown fields");
        }
    }
}

// --- Representations ---------------------------------------------------------------

/// The other formats: the input as a CBOR body and as a YAML body decodes
/// or is a 400, never a panic; as JSON (when it is a JSON object), it round
/// trips through CBOR exactly and through YAML exactly, and when the
/// protobuf encoder takes it (as a ConfigMap, whatever its kind says) our
/// decoder reads the envelope back without error.
pub fn representations(data: &[u8]) {
    use crate::api::{cbor, protobuf_encode, yaml};
    for (name, result) in [("cbor", cbor::decode_object(data)), ("yaml", yaml::decode_object(data))] {
        if let Err(e) = result {
            assert_eq!(e.code(), 400, "{name}: {e:?}");
        }
    }
    let Ok(mut object) = serde_json::from_slice::<Map<String, Value>>(data) else { return };
    let value = Value::Object(object.clone());
    let cbor_bytes = cbor::encode_value(&value);
    assert_eq!(cbor::decode_object(&cbor_bytes).map(Value::Object).ok(), Some(value.clone()), "CBOR round trip");
    if let Ok(text) = yaml::encode_value(&value) {
        assert_eq!(
            yaml::decode_object(text.as_bytes()).map(Value::Object).ok(),
            Some(value.clone()),
            "YAML round trip of {text}"
        );
    }
    object.insert("kind".into(), json!("ConfigMap"));
    object.insert("apiVersion".into(), json!("v1"));
    let json = serde_json::to_vec(&object).expect("a JSON object serializes");
    if let Ok(envelope) = protobuf_encode::encode_object_json(&json) {
        let decoded = protobuf::decode_object(&envelope, "ConfigMap");
        assert!(decoded.is_ok(), "our own envelope does not decode: {decoded:?}");
    }
}

// --- Custom resources ------------------------------------------------------------

/// A JSON document `{"crd": DEFINITION, "object": OBJECT}` (any other JSON is
/// used as both): reading the definition never panics; a definition that
/// serves anything validates and has one storage version; every served
/// version's schema prunes the object idempotently, keeping its `apiVersion`,
/// `kind` and `metadata`, and validates it without panicking; every field
/// error has a field and a message.
pub fn custom_resource(data: &[u8]) {
    use crate::types::{crd, crd_schema};
    let Ok(input) = serde_json::from_slice::<Value>(data) else { return };
    let (mut definition, object) = match (input.get("crd"), input.get("object")) {
        (Some(d), Some(o)) => (d.clone(), o.clone()),
        _ => (input.clone(), input.clone()),
    };
    let errors = crd::validate(&definition);
    assert!(errors.iter().all(|e| !e.field.is_empty()), "{errors:?}");
    crd::set_defaults(&mut definition);
    crd::add_stored_version(&mut definition);
    crd::set_status(&mut definition, registry(), "2024-01-01T00:00:00Z");
    let served = crd::served_resources(&definition);
    if !served.is_empty() {
        assert!(crd::validate(&definition).is_empty());
        assert!(crd::storage_version(&definition).is_some());
    }
    let mut copy = registry().clone();
    let name = definition.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string();
    copy.set_definition(&name, served.clone());
    for info in &served {
        let Some(schema) = info.custom.as_ref().and_then(|c| c.schema.as_ref()) else { continue };
        let mut once = object.clone();
        crd_schema::prune_and_default(&mut once, schema);
        let mut twice = once.clone();
        crd_schema::prune_and_default(&mut twice, schema);
        assert_eq!(once, twice, "pruning is not idempotent");
        if let (Value::Object(before), Value::Object(after)) = (&object, &once) {
            for kept in ["apiVersion", "kind", "metadata"] {
                assert_eq!(before.get(kept), after.get(kept), "{kept} was pruned");
            }
        }
        for error in crd_schema::validate(&once, schema) {
            assert!(!error.message.is_empty(), "{error:?}");
        }
    }
    copy.remove_definition(&name);
    assert_eq!(copy.len(), registry().len());
}

// --- Server-side apply -------------------------------------------------------------

/// FieldsV1 and applied configurations (the body is JSON): never panics; a
/// FieldsV1 that decodes encodes back to a set that decodes the same; an
/// object's recorded managedFields decode; an apply over a Pod either
/// conflicts or yields an object whose managedFields decode and on which the
/// same apply by the same manager changes nothing.
pub fn fieldmanager(data: &[u8]) {
    use crate::fieldmanager::{self, fieldset, ApplyError, Write};
    use crate::types::schema;
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    if let Ok(set) = fieldset::from_fields_v1(&value) {
        let encoded = fieldset::to_fields_v1(&set);
        assert_eq!(fieldset::from_fields_v1(&encoded).as_ref(), Ok(&set), "FieldsV1 does not round-trip");
    }
    let Value::Object(config) = value else { return };
    let write = Write {
        manager: "fuzz",
        api_version: "v1",
        subresource: "",
        shape: schema::root_shape("", "v1", "Pod"),
        status_subresource: true,
        now: "2026-01-01T00:00:00Z",
    };
    let mut live = match json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
                       "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}})
    {
        Value::Object(live) => live,
        _ => return,
    };
    fieldmanager::update(None, &mut live, &Write { manager: "creator", ..write.clone() });
    let mut updated = config.clone();
    fieldmanager::update(Some(&live), &mut updated, &write);
    let _ = fieldmanager::decode(&updated);
    let mut config = config;
    if let Some(Value::Object(meta)) = config.get_mut("metadata") {
        meta.shift_remove("managedFields");
    }
    match fieldmanager::apply(Some(&live), &config, false, &write) {
        Err(ApplyError::Conflicts(conflicts)) => assert!(!conflicts.is_empty(), "an empty conflict list"),
        Ok(applied) => {
            assert!(
                applied.get("metadata").and_then(|m| m.get("managedFields")).is_none()
                    || !fieldmanager::decode(&applied).is_empty(),
                "recorded managedFields do not decode"
            );
            let again = fieldmanager::apply(Some(&applied), &config, false, &write).expect("re-applying conflicts");
            assert_eq!(again, applied, "applying the same configuration twice changed the object");
        }
    }
}

// --- The typed layer ----------------------------------------------------------------

/// The built-in resources the typed layer handles, in registry order.
fn typed_resources() -> Vec<&'static crate::types::registry::ResourceInfo> {
    registry().iter().filter(|info| crate::strategy::handles(info)).collect()
}

/// Runs a body through the typed layer as a create would: byte 0 picks the
/// built-in resource unless the body's `apiVersion` and `kind` name one, the
/// rest is a JSON body. Returns the resource and the
/// object that would be stored when the layer accepts it, `None` when the
/// body is not a JSON object or the layer refuses it. Never panics.
pub fn typed_layer_accepted(data: &[u8]) -> Option<(&'static crate::types::registry::ResourceInfo, Value)> {
    let (selector, body) = match data {
        [a, rest @ ..] => (*a as usize, rest),
        [] => return None,
    };
    let resources = typed_resources();
    let mut object = object::decode_body(Some("application/json"), body, "").ok()?;
    // The body's own kind when it names one the layer handles (so seeds stay
    // meaningful whatever the registry's order), else byte 0's pick.
    let named = object.get("kind").and_then(Value::as_str).and_then(|kind| {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        resources.iter().copied().find(|info| info.kind == kind && info.api_version() == api_version)
    });
    let info = match named {
        Some(info) => info,
        None => *resources.get(selector % resources.len().max(1))?,
    };
    object::check_type_meta(&mut object, info).ok()?;
    crate::strategy::decode_and_default(info, &mut object).ok()?;
    {
        let meta = object::metadata_mut(&mut object);
        if meta.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
            meta.insert("name".into(), json!("fuzzed"));
        }
        meta.insert("uid".into(), json!("00000000-0000-4000-8000-000000000000"));
        meta.insert("creationTimestamp".into(), json!("2026-01-01T00:00:00Z"));
        // As the create handler sets it.
        if info.has_generation {
            meta.insert("generation".into(), json!(1));
        }
        if info.namespaced {
            meta.insert("namespace".into(), json!("default"));
        }
    }
    let context = crate::strategy::Context { now: "2026-01-01T00:00:00Z", subresource: None, user: None };
    crate::strategy::create(info, &mut object, &context).ok()?;
    crate::strategy::finish(info, &mut object);
    Some((info, Value::Object(object)))
}

/// The typed layer: never panics on any body; what it accepts, it accepts
/// again unchanged (decoding, defaulting and ordering are idempotent, so an
/// update that sends back what was read changes nothing), and an update
/// of the accepted object by itself is accepted.
pub fn typed_layer(data: &[u8]) {
    let Some((info, accepted)) = typed_layer_accepted(data) else { return };
    let Value::Object(stored) = accepted else { panic!("the typed layer stored a non-object") };
    let mut again = stored.clone();
    let decoded = crate::strategy::decode_and_default(info, &mut again);
    assert!(decoded.is_ok(), "an accepted {} does not decode again: {decoded:?}\n{stored:?}", info.kind);
    let context = crate::strategy::Context { now: "2026-01-01T00:00:01Z", subresource: None, user: None };
    let updated = crate::strategy::update(info, &mut again, &stored, &context);
    assert!(updated.is_ok(), "an accepted {} cannot be written back: {updated:?}\n{stored:?}", info.kind);
    crate::strategy::finish(info, &mut again);
    assert_eq!(
        serde_json::to_string(&again).ok(),
        serde_json::to_string(&stored).ok(),
        "the typed layer is not idempotent for {}",
        info.kind
    );
}

// --- Admission webhooks ----------------------------------------------------------

/// A webhook's answer (the bytes after the first) as a v1 or v1beta1,
/// mutating or validating AdmissionReview: read, its patch applied to a
/// ConfigMap, its status worded as a denial; and the input as a stored
/// configuration and as a matchCondition expression, matched against a
/// request. Nothing panics; a denial is a 4xx or 5xx with kube's prefix; an
/// applied patch leaves a JSON object.
pub fn admission_review(data: &[u8]) {
    use crate::strategy::admission::webhook::{self, Attributes, Operation};
    let (selector, body) = match data {
        [a, rest @ ..] => (*a, rest),
        [] => (0, data),
    };
    let mutating = selector % 2 == 0;
    let version = if selector & 2 == 0 { "v1" } else { "v1beta1" };
    if let Ok(answer) = webhook::read_answer(body, "uid-1", mutating, version) {
        assert!(mutating || answer.patch.is_none(), "a validating answer with a patch");
        let mut object =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        if let Some(patch) = &answer.patch {
            if webhook::apply_patch(&mut object, patch).is_ok() {
                assert!(object.is_object(), "a patch left a non-object");
            }
        }
        let denial = webhook::denial("w", answer.status.as_ref());
        assert!((400..600).contains(&denial.code), "denial code {}", denial.code);
        assert!(denial.message.starts_with("admission webhook \"w\" denied the request"));
    }
    let user = crate::auth::UserInfo::default();
    let object = json!({"metadata": {"name": "c", "labels": {"a": "b"}}});
    let attrs = Attributes {
        operation: Operation::Create,
        group: "",
        version: "v1",
        kind: "ConfigMap",
        resource: "configmaps",
        subresource: "",
        namespace: "default",
        name: "c",
        object: Some(&object),
        old_object: None,
        namespace_labels: None,
        dry_run: false,
        user: &user,
        options: json!({}),
        cel: webhook::CelLimits::default(),
    };
    if let Ok(config) = serde_json::from_slice::<Value>(body) {
        for hook in webhook::parse_configuration("c", mutating, &config) {
            let _ = hook.matches(&attrs);
            let _ = webhook::request_url(&hook);
        }
    }
    let expression = text(body);
    let conditions = json!({"webhooks": [{
        "name": "w", "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
        "matchConditions": [{"name": "m", "expression": expression}],
    }]});
    for hook in webhook::parse_configuration("c", mutating, &conditions) {
        let _ = hook.matches(&attrs);
    }
}
