//! gen-tables: derives Shardline's committed type tables from the Kubernetes
//! OpenAPI v3 documents (`../shared/k8s-openapi/v3`).
//!
//! Usage: `cargo run -p gen-tables -- <openapi-v3-dir> <out-dir>`, normally
//! `cargo run -p gen-tables -- ../shared/k8s-openapi/v3 src/types/generated`.
//!
//! Writes, into `<out-dir>`:
//! - `builtin.rs`: the static table of built-in resources (kind, list kind,
//!   scope, verbs, subresources from OpenAPI; short names, categories,
//!   field-selector fields and write behaviour from the hand-kept [`FACTS`]);
//! - `openapi/<gv>.json.gz`: one OpenAPI v3 document per served group-version,
//!   filtered to the served resources and the schemas they reference;
//! - `openapi_documents.rs`: the index of those documents with content hashes;
//! - `schema.rs`: the schema facts of every definition those documents keep
//!   (field -> shape, patch strategy and merge key, list type and map keys,
//!   map type, required fields) and each kind's root definition, for strategic
//!   merge patch, field validation and (later) server-side apply. Facts only:
//!   no descriptions, defaults or enums.
//!
//! Invariant: the output is a pure function of the input files and the tables
//! in this file (sorted JSON keys, fixed gzip header), so regenerating without
//! changes gives byte-identical files. The generator panics on any surprise in
//! the input: it runs by hand, never in the server.

use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A served group-version: OpenAPI file stem, group, version, and the
/// resources served from it, in the order the table lists them.
struct ServedGroupVersion {
    file_stem: &'static str,
    group: &'static str,
    version: &'static str,
    resources: &'static [&'static str],
}

/// What Shardline serves, in discovery order (core first, then kube-apiserver's
/// group priority order).
const SERVED: &[ServedGroupVersion] = &[
    ServedGroupVersion {
        file_stem: "api__v1",
        group: "",
        version: "v1",
        resources: &[
            "namespaces",
            "pods",
            "services",
            "endpoints",
            "configmaps",
            "secrets",
            "nodes",
            "events",
            "serviceaccounts",
            "persistentvolumes",
            "persistentvolumeclaims",
            "podtemplates",
            "replicationcontrollers",
            "resourcequotas",
            "limitranges",
            "componentstatuses",
            "bindings",
        ],
    },
    ServedGroupVersion {
        file_stem: "apis__apiregistration.k8s.io__v1",
        group: "apiregistration.k8s.io",
        version: "v1",
        resources: &["apiservices"],
    },
    ServedGroupVersion {
        file_stem: "apis__apps__v1",
        group: "apps",
        version: "v1",
        resources: &["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions"],
    },
    ServedGroupVersion {
        file_stem: "apis__events.k8s.io__v1",
        group: "events.k8s.io",
        version: "v1",
        resources: &["events"],
    },
    ServedGroupVersion {
        file_stem: "apis__autoscaling__v2",
        group: "autoscaling",
        version: "v2",
        resources: &["horizontalpodautoscalers"],
    },
    ServedGroupVersion {
        file_stem: "apis__autoscaling__v1",
        group: "autoscaling",
        version: "v1",
        resources: &["horizontalpodautoscalers"],
    },
    ServedGroupVersion {
        file_stem: "apis__batch__v1",
        group: "batch",
        version: "v1",
        resources: &["jobs", "cronjobs"],
    },
    ServedGroupVersion {
        file_stem: "apis__certificates.k8s.io__v1",
        group: "certificates.k8s.io",
        version: "v1",
        resources: &["certificatesigningrequests"],
    },
    ServedGroupVersion {
        file_stem: "apis__networking.k8s.io__v1",
        group: "networking.k8s.io",
        version: "v1",
        resources: &["ingresses", "ingressclasses", "networkpolicies", "servicecidrs", "ipaddresses"],
    },
    ServedGroupVersion {
        file_stem: "apis__policy__v1",
        group: "policy",
        version: "v1",
        resources: &["poddisruptionbudgets"],
    },
    ServedGroupVersion {
        file_stem: "apis__rbac.authorization.k8s.io__v1",
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resources: &["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
    },
    ServedGroupVersion {
        file_stem: "apis__storage.k8s.io__v1",
        group: "storage.k8s.io",
        version: "v1",
        resources: &[
            "storageclasses",
            "csidrivers",
            "csinodes",
            "csistoragecapacities",
            "volumeattachments",
            "volumeattributesclasses",
        ],
    },
    ServedGroupVersion {
        file_stem: "apis__admissionregistration.k8s.io__v1",
        group: "admissionregistration.k8s.io",
        version: "v1",
        resources: &[
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
            "validatingadmissionpolicies",
            "validatingadmissionpolicybindings",
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
        ],
    },
    ServedGroupVersion {
        file_stem: "apis__apiextensions.k8s.io__v1",
        group: "apiextensions.k8s.io",
        version: "v1",
        resources: &["customresourcedefinitions"],
    },
    ServedGroupVersion {
        file_stem: "apis__scheduling.k8s.io__v1",
        group: "scheduling.k8s.io",
        version: "v1",
        resources: &["priorityclasses"],
    },
    ServedGroupVersion {
        file_stem: "apis__coordination.k8s.io__v1",
        group: "coordination.k8s.io",
        version: "v1",
        resources: &["leases"],
    },
    ServedGroupVersion {
        file_stem: "apis__node.k8s.io__v1",
        group: "node.k8s.io",
        version: "v1",
        resources: &["runtimeclasses"],
    },
    ServedGroupVersion {
        file_stem: "apis__discovery.k8s.io__v1",
        group: "discovery.k8s.io",
        version: "v1",
        resources: &["endpointslices"],
    },
    ServedGroupVersion {
        file_stem: "apis__flowcontrol.apiserver.k8s.io__v1",
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1",
        resources: &["flowschemas", "prioritylevelconfigurations"],
    },
    ServedGroupVersion {
        file_stem: "apis__resource.k8s.io__v1",
        group: "resource.k8s.io",
        version: "v1",
        resources: &["deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"],
    },
];

/// Subresources Shardline serves. Others in OpenAPI (exec, log, proxy,
/// binding, eviction, token, finalize, ...) need a kubelet or side effects the
/// server does not have, so they are neither listed in discovery nor kept in
/// the OpenAPI documents.
const SERVED_SUBRESOURCES: &[&str] = &["status", "scale"];

/// Facts about a resource that OpenAPI does not carry.
struct Fact {
    group: &'static str,
    resource: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    /// Field-selector fields besides metadata.name and metadata.namespace.
    selectable_fields: &'static [&'static str],
    allow_create_on_update: bool,
    has_generation: bool,
}

const fn fact(group: &'static str, resource: &'static str) -> Fact {
    Fact {
        group,
        resource,
        short_names: &[],
        categories: &[],
        selectable_fields: &[],
        allow_create_on_update: false,
        has_generation: false,
    }
}

/// The hand-kept facts table (kube-apiserver's registry strategies and
/// field-label conversion functions).
const FACTS: &[Fact] = &[
    Fact { short_names: &["ns"], selectable_fields: &["status.phase"], ..fact("", "namespaces") },
    Fact {
        short_names: &["po"],
        categories: &["all"],
        selectable_fields: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        has_generation: true,
        ..fact("", "pods")
    },
    Fact { short_names: &["svc"], categories: &["all"], ..fact("", "services") },
    Fact { short_names: &["ep"], allow_create_on_update: true, ..fact("", "endpoints") },
    Fact { short_names: &["cm"], ..fact("", "configmaps") },
    Fact { selectable_fields: &["type"], ..fact("", "secrets") },
    Fact { short_names: &["no"], selectable_fields: &["spec.unschedulable"], ..fact("", "nodes") },
    Fact {
        short_names: &["ev"],
        selectable_fields: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        allow_create_on_update: true,
        ..fact("", "events")
    },
    Fact { short_names: &["sa"], ..fact("", "serviceaccounts") },
    Fact { short_names: &["pv"], ..fact("", "persistentvolumes") },
    Fact { short_names: &["pvc"], ..fact("", "persistentvolumeclaims") },
    Fact { short_names: &["deploy"], categories: &["all"], has_generation: true, ..fact("apps", "deployments") },
    Fact {
        short_names: &["rs"],
        categories: &["all"],
        selectable_fields: &["status.replicas"],
        has_generation: true,
        ..fact("apps", "replicasets")
    },
    Fact { short_names: &["sts"], categories: &["all"], has_generation: true, ..fact("apps", "statefulsets") },
    Fact { short_names: &["ds"], categories: &["all"], has_generation: true, ..fact("apps", "daemonsets") },
    Fact {
        categories: &["all"],
        selectable_fields: &["status.successful"],
        has_generation: true,
        ..fact("batch", "jobs")
    },
    Fact { short_names: &["cj"], categories: &["all"], has_generation: true, ..fact("batch", "cronjobs") },
    Fact { allow_create_on_update: true, ..fact("coordination.k8s.io", "leases") },
    Fact { allow_create_on_update: true, ..fact("rbac.authorization.k8s.io", "roles") },
    Fact { allow_create_on_update: true, ..fact("rbac.authorization.k8s.io", "rolebindings") },
    Fact { allow_create_on_update: true, ..fact("rbac.authorization.k8s.io", "clusterroles") },
    Fact { allow_create_on_update: true, ..fact("rbac.authorization.k8s.io", "clusterrolebindings") },
    Fact { ..fact("", "podtemplates") },
    Fact {
        short_names: &["rc"],
        categories: &["all"],
        selectable_fields: &["status.replicas"],
        has_generation: true,
        ..fact("", "replicationcontrollers")
    },
    Fact { short_names: &["quota"], ..fact("", "resourcequotas") },
    Fact { short_names: &["limits"], allow_create_on_update: true, ..fact("", "limitranges") },
    Fact { short_names: &["cs"], ..fact("", "componentstatuses") },
    Fact { ..fact("", "bindings") },
    Fact { categories: &["api-extensions"], ..fact("apiregistration.k8s.io", "apiservices") },
    Fact { ..fact("apps", "controllerrevisions") },
    Fact {
        short_names: &["ev"],
        selectable_fields: &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
        allow_create_on_update: true,
        ..fact("events.k8s.io", "events")
    },
    Fact { short_names: &["hpa"], categories: &["all"], ..fact("autoscaling", "horizontalpodautoscalers") },
    Fact {
        short_names: &["csr"],
        selectable_fields: &["spec.signerName"],
        ..fact("certificates.k8s.io", "certificatesigningrequests")
    },
    Fact { short_names: &["ing"], has_generation: true, ..fact("networking.k8s.io", "ingresses") },
    Fact { has_generation: true, ..fact("networking.k8s.io", "ingressclasses") },
    Fact { short_names: &["netpol"], has_generation: true, ..fact("networking.k8s.io", "networkpolicies") },
    Fact { ..fact("networking.k8s.io", "servicecidrs") },
    Fact { short_names: &["ip"], ..fact("networking.k8s.io", "ipaddresses") },
    Fact { short_names: &["pdb"], has_generation: true, ..fact("policy", "poddisruptionbudgets") },
    Fact { short_names: &["sc"], ..fact("storage.k8s.io", "storageclasses") },
    Fact { ..fact("storage.k8s.io", "csidrivers") },
    Fact { ..fact("storage.k8s.io", "csinodes") },
    Fact { ..fact("storage.k8s.io", "csistoragecapacities") },
    Fact { ..fact("storage.k8s.io", "volumeattachments") },
    Fact { short_names: &["vac"], ..fact("storage.k8s.io", "volumeattributesclasses") },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "mutatingwebhookconfigurations")
    },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "validatingwebhookconfigurations")
    },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "validatingadmissionpolicies")
    },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "validatingadmissionpolicybindings")
    },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "mutatingadmissionpolicies")
    },
    Fact {
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("admissionregistration.k8s.io", "mutatingadmissionpolicybindings")
    },
    Fact { short_names: &["pc"], has_generation: true, ..fact("scheduling.k8s.io", "priorityclasses") },
    Fact { allow_create_on_update: true, ..fact("node.k8s.io", "runtimeclasses") },
    // pkg/registry/discovery/endpointslice/strategy.go: "POST is needed to create one".
    Fact { has_generation: true, ..fact("discovery.k8s.io", "endpointslices") },
    Fact { has_generation: true, ..fact("flowcontrol.apiserver.k8s.io", "flowschemas") },
    Fact { has_generation: true, ..fact("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") },
    Fact { has_generation: true, ..fact("resource.k8s.io", "deviceclasses") },
    Fact { ..fact("resource.k8s.io", "resourceclaims") },
    Fact { ..fact("resource.k8s.io", "resourceclaimtemplates") },
    Fact {
        selectable_fields: &["spec.nodeName", "spec.driver"],
        has_generation: true,
        ..fact("resource.k8s.io", "resourceslices")
    },
    Fact {
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        has_generation: true,
        ..fact("apiextensions.k8s.io", "customresourcedefinitions")
    },
];

/// One resource as derived from OpenAPI.
#[derive(Default, Debug)]
struct Derived {
    kind: Option<String>,
    list_kind: Option<String>,
    namespaced: bool,
    verbs: BTreeSet<String>,
    /// subresource -> (response group, version, kind, verbs)
    subresources: BTreeMap<String, (String, String, String, BTreeSet<String>)>,
}

/// A path split into its resource parts.
struct ParsedPath {
    namespaced: bool,
    resource: String,
    subresource: Option<String>,
}

fn parse_path(path: &str, prefix: &str) -> Option<ParsedPath> {
    let rest = path.strip_prefix(prefix)?;
    let rest = rest.strip_prefix("watch/").unwrap_or(rest);
    let (namespaced, rest) = match rest.strip_prefix("namespaces/{namespace}/") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        [resource] if !resource.is_empty() => {
            Some(ParsedPath { namespaced, resource: resource.to_string(), subresource: None })
        }
        [resource, "{name}"] => Some(ParsedPath { namespaced, resource: resource.to_string(), subresource: None }),
        [resource, "{name}", sub] | [resource, "{name}", sub, "{path}"] => {
            Some(ParsedPath { namespaced, resource: resource.to_string(), subresource: Some(sub.to_string()) })
        }
        _ => None,
    }
}

fn verb_for_action(action: &str) -> Option<&'static str> {
    match action {
        "get" => Some("get"),
        "list" => Some("list"),
        "watch" | "watchlist" => Some("watch"),
        "post" => Some("create"),
        "put" => Some("update"),
        "patch" => Some("patch"),
        "delete" => Some("delete"),
        "deletecollection" => Some("deletecollection"),
        "connect" => None,
        other => panic!("unknown x-kubernetes-action {other}"),
    }
}

const METHODS: &[&str] = &["get", "put", "post", "patch", "delete", "head", "options"];

fn gvk_of(op: &Value) -> Option<(String, String, String)> {
    let g = op.get("x-kubernetes-group-version-kind")?;
    Some((
        g.get("group")?.as_str()?.to_string(),
        g.get("version")?.as_str()?.to_string(),
        g.get("kind")?.as_str()?.to_string(),
    ))
}

fn api_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}/")
    } else {
        format!("/apis/{group}/{version}/")
    }
}

/// Derives every resource of one document.
fn derive(doc: &Value, gv: &ServedGroupVersion) -> BTreeMap<String, Derived> {
    let prefix = api_prefix(gv.group, gv.version);
    let schemas = &doc["components"]["schemas"];
    let paths = doc["paths"].as_object().expect("paths");
    let mut out: BTreeMap<String, Derived> = BTreeMap::new();
    for (path, item) in paths {
        let Some(parsed) = parse_path(path, &prefix) else {
            continue;
        };
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let Some(action) = op.get("x-kubernetes-action").and_then(Value::as_str) else {
                continue;
            };
            let Some(verb) = verb_for_action(action) else {
                continue;
            };
            let Some((g, v, k)) = gvk_of(op) else {
                continue;
            };
            let entry = out.entry(parsed.resource.clone()).or_default();
            match &parsed.subresource {
                None => {
                    entry.namespaced |= parsed.namespaced;
                    entry.verbs.insert(verb.to_string());
                    if action == "list" {
                        let list_ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                            .as_str()
                            .expect("list response schema");
                        let name = list_ref.trim_start_matches("#/components/schemas/");
                        let list_gvk = &schemas[name]["x-kubernetes-group-version-kind"][0];
                        let list_kind = list_gvk["kind"].as_str().expect("list kind");
                        entry.list_kind = Some(list_kind.to_string());
                    }
                    match &entry.kind {
                        None => entry.kind = Some(k),
                        Some(prev) => assert_eq!(prev, &k, "{path}: kind mismatch"),
                    }
                    assert_eq!((g.as_str(), v.as_str()), (gv.group, gv.version), "{path}");
                }
                Some(sub) => {
                    let s = entry
                        .subresources
                        .entry(sub.clone())
                        .or_insert_with(|| (g.clone(), v.clone(), k.clone(), BTreeSet::new()));
                    assert_eq!((&s.0, &s.1, &s.2), (&g, &v, &k), "{path}: subresource kind");
                    s.3.insert(verb.to_string());
                }
            }
        }
    }
    out
}

/// Repairs two artifacts of the normalisation of the input documents: an
/// operation's `responses` wrapped in `{"ArbitraryKeys": {...}}`, and a schema
/// split into `{"SchemaProps", "SwaggerSchemaProps", "ArbitraryKeys"}` (seen
/// where a property is itself named `properties` or `paths`).
fn normalise(v: &mut Value, parent_key: Option<&str>) {
    match v {
        Value::Object(map) => {
            if parent_key == Some("responses") && map.len() == 1 {
                if let Some(Value::Object(inner)) = map.remove("ArbitraryKeys") {
                    *map = inner;
                }
            }
            let split_keys = ["SchemaProps", "SwaggerSchemaProps", "ArbitraryKeys"];
            if map.contains_key("SchemaProps") && map.keys().all(|k| split_keys.contains(&k.as_str())) {
                let mut merged = Map::new();
                for key in split_keys {
                    if let Some(Value::Object(part)) = map.remove(key) {
                        for (k, val) in part {
                            assert!(merged.insert(k, val).is_none(), "duplicate key in split schema");
                        }
                    }
                }
                *map = merged;
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if let Some(child) = map.get_mut(&k) {
                    normalise(child, Some(&k));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                normalise(item, parent_key);
            }
        }
        _ => {}
    }
}

/// Rebuilds a value with object keys in sorted order, whatever map type
/// serde_json was compiled with.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut out = Map::new();
            for (k, val) in entries {
                out.insert(k.clone(), canonical(val));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                // A schema property may itself be named `$ref` (JSONSchemaProps).
                if let (true, Some(r)) = (k == "$ref", val.as_str()) {
                    let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
                    out.insert(name.to_string());
                } else {
                    collect_refs(val, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

/// The filtered document for one group-version.
fn filter_document(doc: &Value, gv: &ServedGroupVersion) -> Value {
    let prefix = api_prefix(gv.group, gv.version);
    let paths = doc["paths"].as_object().expect("paths");
    let mut kept = Map::new();
    for (path, item) in paths {
        let keep = if path == &prefix {
            true // the group-version's own APIResourceList
        } else if let Some(p) = parse_path(path, &prefix) {
            gv.resources.contains(&p.resource.as_str())
                && p.subresource.as_deref().is_none_or(|s| SERVED_SUBRESOURCES.contains(&s))
        } else {
            false
        };
        if keep {
            kept.insert(path.clone(), item.clone());
        }
    }
    let all_schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let mut wanted = BTreeSet::new();
    collect_refs(&Value::Object(kept.clone()), &mut wanted);
    let mut done: BTreeSet<String> = BTreeSet::new();
    while let Some(name) = wanted.iter().find(|n| !done.contains(*n)).cloned() {
        let schema = all_schemas.get(&name).unwrap_or_else(|| panic!("missing schema {name}"));
        collect_refs(schema, &mut wanted);
        done.insert(name);
    }
    let mut schemas = Map::new();
    for name in &done {
        schemas.insert(name.clone(), all_schemas[name].clone());
    }
    let mut components = Map::new();
    components.insert("schemas".into(), Value::Object(schemas));
    if let Some(sec) = doc["components"].get("securitySchemes") {
        components.insert("securitySchemes".into(), sec.clone());
    }
    let mut out = Map::new();
    out.insert("components".into(), Value::Object(components));
    out.insert("info".into(), doc["info"].clone());
    out.insert("openapi".into(), doc["openapi"].clone());
    out.insert("paths".into(), Value::Object(kept));
    if let Some(sec) = doc.get("security") {
        out.insert("security".into(), sec.clone());
    }
    canonical(&Value::Object(out))
}

/// FNV-1a 128 of the bytes, as 32 upper-case hex digits.
fn content_hash(bytes: &[u8]) -> String {
    let mut hash: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in bytes {
        hash ^= u128::from(*b);
        hash = hash.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    format!("{hash:032X}")
}

fn rust_str_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

fn write_file(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    println!("wrote {} ({} bytes)", path.display(), bytes.len());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: gen-tables <openapi-v3-dir> <out-dir>");
        std::process::exit(2);
    }
    let input = PathBuf::from(&args[1]);
    let out_dir = PathBuf::from(&args[2]);
    std::fs::create_dir_all(out_dir.join("openapi")).expect("create out dir");

    let mut table = String::new();
    table.push_str(
        "//! The built-in resource table. GENERATED by `tools/gen-tables` from the\n\
         //! Kubernetes OpenAPI v3 documents and the generator's facts table; do not\n\
         //! edit by hand (see docs/types.md).\n\n\
         use crate::types::registry::BuiltinResource;\n\n\
         /// Every built-in resource, in discovery order.\n\
         pub static BUILTIN_RESOURCES: &[BuiltinResource] = &[\n",
    );
    let mut documents = String::new();
    documents.push_str(
        "//! The committed OpenAPI v3 documents, one per served group-version.\n\
         //! GENERATED by `tools/gen-tables`; do not edit by hand (see docs/types.md).\n\n\
         use crate::types::openapi::OpenApiDocument;\n\n\
         /// Every served group-version's document, in discovery order.\n\
         pub static OPENAPI_V3_DOCUMENTS: &[OpenApiDocument] = &[\n",
    );

    let mut facts_used: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut all_schemas: BTreeMap<String, Value> = BTreeMap::new();
    for gv in SERVED {
        let file = input.join(format!("{}.json", gv.file_stem));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let mut doc: Value = serde_json::from_str(&text).expect("parse OpenAPI document");
        normalise(&mut doc, None);
        let derived = derive(&doc, gv);

        for resource in gv.resources {
            let d = derived.get(*resource).unwrap_or_else(|| panic!("{resource} not found in {}", gv.file_stem));
            let f = FACTS
                .iter()
                .find(|f| f.group == gv.group && f.resource == *resource)
                .unwrap_or_else(|| panic!("no facts for {resource}"));
            facts_used.insert((f.group, f.resource));
            let kind = d.kind.clone().expect("kind");
            // A resource without `list` (core `bindings`, create only) has no
            // list kind.
            let list_kind = match &d.list_kind {
                Some(list_kind) => list_kind.clone(),
                None => {
                    assert!(!d.verbs.contains("list"), "{resource}: list without a list kind");
                    String::new()
                }
            };
            assert!(list_kind.is_empty() || list_kind == format!("{kind}List"), "{resource}: list kind");
            let mut verbs: Vec<String> = d.verbs.iter().cloned().collect();
            verbs.sort();
            let mut subresources = Vec::new();
            for (name, (g, v, k, sub_verbs)) in &d.subresources {
                if !SERVED_SUBRESOURCES.contains(&name.as_str()) {
                    continue;
                }
                // The registry records only the subresource's name; discovery
                // derives kind and verbs by rule. Check the rule holds.
                let expect_gvk = match name.as_str() {
                    "status" => (gv.group.to_string(), gv.version.to_string(), kind.clone()),
                    "scale" => ("autoscaling".into(), "v1".into(), "Scale".into()),
                    other => panic!("no rule for subresource {other}"),
                };
                assert_eq!((g.clone(), v.clone(), k.clone()), expect_gvk, "{resource}/{name}");
                let got: Vec<&str> = sub_verbs.iter().map(String::as_str).collect();
                assert_eq!(got, ["get", "patch", "update"], "{resource}/{name} verbs");
                subresources.push(name.clone());
            }
            let strs = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            let singular = kind.to_lowercase();
            writeln!(table, "    BuiltinResource {{").ok();
            writeln!(table, "        group: {:?},", gv.group).ok();
            writeln!(table, "        version: {:?},", gv.version).ok();
            writeln!(table, "        resource: {:?},", resource).ok();
            writeln!(table, "        singular: {singular:?},").ok();
            writeln!(table, "        kind: {kind:?},").ok();
            writeln!(table, "        list_kind: {list_kind:?},").ok();
            writeln!(table, "        namespaced: {},", d.namespaced).ok();
            writeln!(table, "        short_names: {},", rust_str_list(&strs(f.short_names))).ok();
            writeln!(table, "        categories: {},", rust_str_list(&strs(f.categories))).ok();
            writeln!(table, "        verbs: {},", rust_str_list(&verbs)).ok();
            writeln!(table, "        selectable_fields: {},", rust_str_list(&strs(f.selectable_fields))).ok();
            writeln!(table, "        allow_create_on_update: {},", f.allow_create_on_update).ok();
            writeln!(table, "        has_generation: {},", f.has_generation).ok();
            writeln!(table, "        subresources: {},", rust_str_list(&subresources)).ok();
            writeln!(table, "    }},").ok();
        }

        let filtered = filter_document(&doc, gv);
        for (name, schema) in filtered["components"]["schemas"].as_object().expect("schemas") {
            // Shared definitions (DeleteOptions, WatchEvent) list the kinds
            // of each document's group-version: keep the union.
            const GVK: &str = "x-kubernetes-group-version-kind";
            match all_schemas.get_mut(name) {
                None => {
                    all_schemas.insert(name.clone(), schema.clone());
                }
                Some(prev) => {
                    let (mut a, mut b) = (prev.clone(), schema.clone());
                    let kinds_a = a.as_object_mut().and_then(|m| m.remove(GVK));
                    let kinds_b = b.as_object_mut().and_then(|m| m.remove(GVK));
                    assert_eq!(a, b, "{name} differs between documents");
                    let mut kinds: Vec<Value> = Vec::new();
                    for k in
                        [kinds_a, kinds_b].into_iter().flatten().flat_map(|k| k.as_array().cloned().unwrap_or_default())
                    {
                        if !kinds.contains(&k) {
                            kinds.push(k);
                        }
                    }
                    if !kinds.is_empty() {
                        prev[GVK] = Value::Array(kinds);
                    }
                }
            }
        }
        let json = serde_json::to_vec(&filtered).expect("serialize");
        let hash = content_hash(&json);
        let mut enc = GzEncoder::new(Vec::new(), Compression::best());
        enc.write_all(&json).expect("gzip");
        let gz = enc.finish().expect("gzip");
        let gz_name = format!("{}.json.gz", gv.file_stem);
        write_file(&out_dir.join("openapi").join(&gz_name), &gz);
        let url_path = if gv.group.is_empty() {
            format!("api/{}", gv.version)
        } else {
            format!("apis/{}/{}", gv.group, gv.version)
        };
        writeln!(documents, "    OpenApiDocument {{").ok();
        writeln!(documents, "        path: {url_path:?},").ok();
        writeln!(documents, "        hash: {hash:?},").ok();
        writeln!(documents, "        json_len: {},", json.len()).ok();
        writeln!(documents, "        gzip: include_bytes!(\"openapi/{gz_name}\"),").ok();
        writeln!(documents, "    }},").ok();
    }
    assert_eq!(facts_used.len(), FACTS.len(), "facts for a resource that is not served");
    table.push_str("];\n");
    documents.push_str("];\n");
    let rust_files = [out_dir.join("builtin.rs"), out_dir.join("openapi_documents.rs"), out_dir.join("schema.rs")];
    write_file(&rust_files[0], table.as_bytes());
    write_file(&rust_files[1], documents.as_bytes());
    write_file(&rust_files[2], schema_table(&all_schemas).as_bytes());
    write_file(&out_dir.join("kube_resources.tsv"), kube_resources(&input).as_bytes());
    // The tables are read in review: format them as the rest of the code.
    let status = std::process::Command::new("rustfmt")
        .args(["--edition", "2021"])
        .args(&rust_files)
        .status()
        .expect("run rustfmt (install it with `rustup component add rustfmt`)");
    assert!(status.success(), "rustfmt failed");
}

/// Every resource and subresource of every group-version document in the
/// input, as kube-apiserver serves them, served by Shardline or not: one
/// line per (group, version, resource[/subresource]) with its scope, kind
/// and discovery verbs. A connect operation's verb follows its HTTP method
/// (GET is `get`, POST `create`, PUT `update`, PATCH `patch`, DELETE
/// `delete`), as kube's discovery lists them.
fn kube_resources(input: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(input)
        .expect("read input dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.matches("__").count() == 2 || n == "api__v1.json")
        })
        .collect();
    files.sort();
    let mut lines: Vec<(String, String, String, String)> = Vec::new();
    for file in files {
        let stem = file.file_stem().and_then(|s| s.to_str()).expect("stem").to_string();
        let parts: Vec<&str> = stem.split("__").collect();
        let (group, version) = match parts.as_slice() {
            ["api", v] => (String::new(), v.to_string()),
            ["apis", g, v] => (g.to_string(), v.to_string()),
            _ => panic!("unexpected file {stem}"),
        };
        let text = std::fs::read_to_string(&file).expect("read");
        let mut doc: Value = serde_json::from_str(&text).expect("parse");
        normalise(&mut doc, None);
        let prefix = api_prefix(&group, &version);
        // (resource, subresource) -> (namespaced, kind, verbs)
        let mut found: BTreeMap<(String, String), (bool, String, BTreeSet<&'static str>)> = BTreeMap::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            let Some(parsed) = parse_path(path, &prefix) else { continue };
            for method in METHODS {
                let Some(op) = item.get(*method) else { continue };
                let Some(action) = op.get("x-kubernetes-action").and_then(Value::as_str) else { continue };
                let verb = match (action, *method) {
                    ("connect", "get") => "get",
                    ("connect", "post") => "create",
                    ("connect", "put") => "update",
                    ("connect", "patch") => "patch",
                    ("connect", "delete") => "delete",
                    ("connect", _) => continue,
                    (other, _) => match verb_for_action(other) {
                        Some(v) => v,
                        None => continue,
                    },
                };
                let Some((g, v, k)) = gvk_of(op) else { continue };
                let kind = if g.is_empty() || (g == group && v == version) { k } else { format!("{g}/{v}.{k}") };
                let entry = found
                    .entry((parsed.resource.clone(), parsed.subresource.clone().unwrap_or_default()))
                    .or_insert_with(|| (false, kind, BTreeSet::new()));
                entry.0 |= parsed.namespaced;
                entry.2.insert(verb);
            }
        }
        for ((resource, sub), (namespaced, kind, verbs)) in found {
            let name = if sub.is_empty() { resource } else { format!("{resource}/{sub}") };
            let gv = if group.is_empty() { version.clone() } else { format!("{group}/{version}") };
            let verbs: Vec<&str> = verbs.into_iter().collect();
            lines.push((gv, name, format!("{namespaced}\t{kind}"), verbs.join(",")));
        }
    }
    let mut out = String::from(
        "# Every resource and subresource kube-apiserver v1.36 serves, derived by tools/gen-tables\n\
         # from the OpenAPI v3 documents (../shared/k8s-openapi/v3). GENERATED; do not edit.\n\
         # group-version\tresource[/subresource]\tnamespaced\tkind\tverbs\n",
    );
    for (gv, name, scope_kind, verbs) in lines {
        writeln!(out, "{gv}\t{name}\t{scope_kind}\t{verbs}").ok();
    }
    out
}

/// A definition whose instances are objects with named fields (the others
/// are scalars or free-form values and are inlined as shapes).
fn is_object_definition(schema: &Value) -> bool {
    schema.get("properties").is_some_and(|p| p.as_object().is_some_and(|m| !m.is_empty()))
}

/// The name a schema refers to, directly or through `allOf: [{$ref}]`.
fn referenced(schema: &Value) -> Option<&str> {
    let r = schema.get("$ref").or_else(|| schema.get("allOf").and_then(|a| a.get(0)).and_then(|a| a.get("$ref")))?;
    Some(r.as_str()?.trim_start_matches("#/components/schemas/"))
}

/// The Rust expression of a schema's shape (`Shape::...`).
fn shape_expr(schema: &Value, defs: &BTreeMap<String, Value>, index: &BTreeMap<&str, usize>) -> String {
    if schema.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool) == Some(true) {
        return "Shape::PreserveUnknown".into();
    }
    if let Some(name) = referenced(schema) {
        let def = defs.get(name).unwrap_or_else(|| panic!("missing definition {name}"));
        if is_object_definition(def) {
            return format!("Shape::Object({})", index[name]);
        }
        return shape_expr(def, defs, index);
    }
    if let Some(one_of) = schema.get("oneOf").and_then(Value::as_array) {
        let types: Vec<&str> = one_of.iter().filter_map(|t| t.get("type").and_then(Value::as_str)).collect();
        return match types.as_slice() {
            ["integer", "string"] | ["string", "integer"] => "Shape::IntOrString".into(),
            ["string", "number"] | ["number", "string"] => "Shape::Quantity".into(),
            other => panic!("unexpected oneOf {other:?}"),
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if schema.get("format").and_then(Value::as_str) == Some("int-or-string") => {
            "Shape::IntOrString".into()
        }
        Some("string") => "Shape::String".into(),
        Some("integer") => "Shape::Integer".into(),
        Some("number") => "Shape::Number".into(),
        Some("boolean") => "Shape::Boolean".into(),
        Some("array") => {
            let items = schema.get("items").expect("array without items");
            format!("Shape::Array(&{})", shape_expr(items, defs, index))
        }
        Some("object") => match schema.get("additionalProperties") {
            Some(Value::Bool(true)) => "Shape::Map(&Shape::Raw)".into(),
            Some(Value::Bool(false)) | None => {
                assert!(schema.get("properties").is_none(), "inline object schema");
                "Shape::Raw".into()
            }
            Some(values) => format!("Shape::Map(&{})", shape_expr(values, defs, index)),
        },
        None if schema.as_object().is_some_and(|m| m.is_empty()) => "Shape::Raw".into(),
        other => panic!("unexpected schema type {other:?}: {schema}"),
    }
}

fn str_ext<'a>(schema: &'a Value, key: &str) -> &'a str {
    schema.get(key).map(|v| v.as_str().unwrap_or_else(|| panic!("{key} is not a string"))).unwrap_or("")
}

fn str_list(schema: &Value, key: &str) -> Vec<String> {
    schema
        .get(key)
        .map(|v| {
            v.as_array()
                .unwrap_or_else(|| panic!("{key} is not a list"))
                .iter()
                .map(|s| s.as_str().expect("string").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `generated/schema.rs`: every kept definition's fields and extensions, and
/// each (group, version, kind)'s root definition.
fn schema_table(defs: &BTreeMap<String, Value>) -> String {
    let index: BTreeMap<&str, usize> = defs.keys().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut out = String::new();
    out.push_str(
        "//! Schema facts of every definition the served OpenAPI documents keep.\n\
         //! GENERATED by `tools/gen-tables`; do not edit by hand (see docs/types.md).\n\n\
         use crate::types::schema::{Definition, Field, Root, Shape};\n\n\
         /// Every definition, sorted by name; `Shape::Object(i)` is `DEFINITIONS[i]`.\n\
         pub static DEFINITIONS: &[Definition] = &[\n",
    );
    let mut roots: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for (i, (name, def)) in defs.iter().enumerate() {
        for gvk in def.get("x-kubernetes-group-version-kind").and_then(Value::as_array).into_iter().flatten() {
            let key = (
                gvk["group"].as_str().expect("group").to_string(),
                gvk["version"].as_str().expect("version").to_string(),
                gvk["kind"].as_str().expect("kind").to_string(),
            );
            if let Some(prev) = roots.insert(key.clone(), i) {
                panic!("{key:?} is the kind of two definitions ({prev} and {i})");
            }
        }
        writeln!(out, "    Definition {{").ok();
        writeln!(out, "        name: {name:?},").ok();
        writeln!(out, "        object: {},", is_object_definition(def)).ok();
        writeln!(out, "        map_type: {:?},", str_ext(def, "x-kubernetes-map-type")).ok();
        writeln!(out, "        required: {},", rust_str_list(&str_list(def, "required"))).ok();
        writeln!(out, "        fields: &[").ok();
        if let Some(props) = def.get("properties").and_then(Value::as_object) {
            let mut names: Vec<&String> = props.keys().collect();
            names.sort();
            for field in names {
                let p = &props[field];
                let mut line = format!("Field {{ name: {field:?}, shape: &{}", shape_expr(p, defs, &index));
                for (ext, rust) in [
                    ("x-kubernetes-patch-strategy", "patch_strategy"),
                    ("x-kubernetes-patch-merge-key", "patch_merge_key"),
                    ("x-kubernetes-list-type", "list_type"),
                    ("x-kubernetes-map-type", "map_type"),
                ] {
                    let v = str_ext(p, ext);
                    if !v.is_empty() {
                        write!(line, ", {rust}: {v:?}").ok();
                    }
                }
                let keys = str_list(p, "x-kubernetes-list-map-keys");
                if !keys.is_empty() {
                    write!(line, ", list_map_keys: {}", rust_str_list(&keys)).ok();
                }
                line.push_str(", ..Field::PLAIN },");
                writeln!(out, "            {line}").ok();
            }
        }
        writeln!(out, "        ],").ok();
        writeln!(out, "    }},").ok();
    }
    out.push_str("];\n\n/// Each (group, version, kind)'s definition, sorted.\npub static ROOTS: &[Root] = &[\n");
    for ((g, v, k), i) in &roots {
        writeln!(out, "    Root {{ group: {g:?}, version: {v:?}, kind: {k:?}, definition: {i} }},").ok();
    }
    out.push_str("];\n");
    out
}
