//! kube-apiserver's etcd layout and storage encodings (`--storage-layout
//! kubernetes`): where kube keeps each resource's objects in etcd and in what
//! bytes, translated to and from Shardline's own keys
//! (`/registry/{group}/{resource}/{namespace}/{name}`, `types::key`) and
//! values (the JSON an object is served as, before its resourceVersion).
//!
//! Keys. kube-apiserver keeps a resource at `/registry/{prefix}/{namespace}/{name}`
//! (namespaced) or `/registry/{prefix}/{name}` (cluster-scoped). The prefix
//! of a built-in resource is its plural name, but for the few kube renames
//! (`minions` for nodes, `services/specs`, `services/endpoints`,
//! `controllers` for replication controllers, `ingress` for ingresses);
//! the resources of the API servers kube-apiserver embeds beside its own
//! (`apiextensions.k8s.io`, `apiregistration.k8s.io`) and every custom
//! resource are at `{group}/{plural}`. The number of segments after the
//! prefix tells the scope, since names and namespaces never hold `/`. Keys no
//! served resource has (`/registry/ranges/...`, `/registry/masterleases/...`)
//! are not ours: `internal_key` answers `None` and the log ignores them.
//!
//! Values. Built-in kinds are stored as Protobuf: `k8s\0` and a
//! `runtime.Unknown` (typeMeta, raw message), decoded by the request decoder
//! (`api::protobuf`) and put in kube's JSON field order (`strategy::decode::order`),
//! which is what kube-apiserver serves for them. Custom resources,
//! CustomResourceDefinitions and APIServices are stored as JSON; definitions
//! in `apiextensions.k8s.io/v1beta1`, converted here to the v1 form the API
//! shows (kube's conversion: the top-level schema, subresources and printer
//! columns go to each version). Writing is the inverse: built-in kinds as the
//! Protobuf envelope of their (storage) version, the rest as JSON, neither
//! with a resourceVersion (kube stores none: it is the key's mod revision).
//!
//! Invariant: pure functions, no I/O; never panics on any bytes; a value
//! that cannot be decoded is an `Err` with the reason (the log counts it,
//! names its key and skips it), never a wrong object.

use crate::types::key::ObjectKey;
use crate::types::registry::builtin_resources;
use bytes::Bytes;
use serde_json::{Map, Value};

/// How Shardline's keys and values are laid out in etcd (`--storage-layout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StorageLayout {
    /// Shardline's own: its keys and JSON values as they are.
    #[default]
    Shardline,
    /// kube-apiserver's keys and storage encodings, so Shardline can read
    /// (and write) a Kubernetes cluster's etcd.
    Kubernetes,
}

impl StorageLayout {
    pub fn parse(text: &str) -> Result<StorageLayout, String> {
        match text {
            "shardline" => Ok(StorageLayout::Shardline),
            "kubernetes" => Ok(StorageLayout::Kubernetes),
            other => Err(format!("unknown storage layout {other:?} (want shardline or kubernetes)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StorageLayout::Shardline => "shardline",
            StorageLayout::Kubernetes => "kubernetes",
        }
    }
}

const KEY_ROOT: &str = "/registry/";

/// Values read from etcd that could not be decoded (skipped), process-wide.
static DECODE_ERRORS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts one value that could not be decoded (`shardline_storage_decode_errors_total`).
pub fn count_decode_error() {
    DECODE_ERRORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Values read from etcd that could not be decoded and were skipped.
pub fn decode_errors() -> u64 {
    DECODE_ERRORS.load(std::sync::atomic::Ordering::Relaxed)
}

/// (group, resource, kube's prefix) where the prefix is not the plural name.
/// The last row is Shardline's own: the node-port claims it writes, one key
/// per port (kube keeps one bitmap under `ranges/`), kept apart from
/// everything kube reads.
const RENAMED: &[(&str, &str, &str)] = &[
    ("", "nodes", "minions"),
    ("", "services", "services/specs"),
    ("", "endpoints", "services/endpoints"),
    ("", "replicationcontrollers", "controllers"),
    ("networking.k8s.io", "ingresses", "ingress"),
    ("", "servicenodeports", "shardline.io/servicenodeports"),
];

/// Groups whose resources kube keeps at `{group}/{resource}`: those of the
/// API servers embedded beside kube-apiserver's own.
const GROUP_PREFIXED: &[&str] = &["apiextensions.k8s.io", "apiregistration.k8s.io"];

/// The built-in group of a resource kept at its plural name; the core group
/// wins (`events`: core/v1 and events.k8s.io/v1 share kube's `events`).
fn builtin_group_of(resource: &str) -> Option<&'static str> {
    let mut found = None;
    for b in builtin_resources() {
        if b.resource == resource && !GROUP_PREFIXED.contains(&b.group) {
            if b.group.is_empty() {
                return Some("");
            }
            found.get_or_insert(b.group);
        }
    }
    found
}

fn is_builtin(group: &str, resource: &str) -> bool {
    builtin_resources().iter().any(|b| b.group == group && b.resource == resource)
}

/// kube's prefix (without `/registry/`) for a resource.
pub fn kube_prefix(group: &str, resource: &str) -> String {
    if let Some((_, _, prefix)) = RENAMED.iter().find(|(g, r, _)| *g == group && *r == resource) {
        return prefix.to_string();
    }
    // events.k8s.io events are core events, in kube's store as in Shardline's
    // (`types::conversion`): no key has that group, and none maps here.
    if group.is_empty() || (is_builtin(group, resource) && !GROUP_PREFIXED.contains(&group) && group != "events.k8s.io")
    {
        resource.to_string()
    } else {
        format!("{group}/{resource}")
    }
}

/// kube's etcd key (without any `--etcd-prefix`) for one of Shardline's keys;
/// `None` when the bytes are not an object key.
pub fn kube_key(internal: &[u8]) -> Option<Vec<u8>> {
    let key = ObjectKey::decode(internal)?;
    let mut out = String::with_capacity(internal.len());
    out.push_str(KEY_ROOT);
    out.push_str(&kube_prefix(&key.group, &key.resource));
    out.push('/');
    if !key.namespace.is_empty() {
        out.push_str(&key.namespace);
        out.push('/');
    }
    out.push_str(&key.name);
    Some(out.into_bytes())
}

/// Shardline's key for one of kube's etcd keys (without `--etcd-prefix`);
/// `None` for keys of nothing Shardline serves.
pub fn internal_key(kube: &[u8]) -> Option<Bytes> {
    let rest = std::str::from_utf8(kube).ok()?.strip_prefix(KEY_ROOT)?;
    let renamed = RENAMED.iter().find_map(|(group, resource, prefix)| {
        rest.strip_prefix(prefix).and_then(|t| t.strip_prefix('/')).map(|tail| (*group, resource.to_string(), tail))
    });
    let (group, resource, tail) = match renamed {
        Some((group, resource, tail)) => (group.to_string(), resource, tail),
        None => {
            let (first, after) = rest.split_once('/')?;
            if first.contains('.') {
                let (resource, tail) = after.split_once('/')?;
                (first.to_string(), resource.to_string(), tail)
            } else {
                // A renamed resource's plural is not its prefix: `/registry/nodes/x` is not a node.
                if RENAMED.iter().any(|(g, r, _)| g.is_empty() && *r == first) {
                    return None;
                }
                (builtin_group_of(first)?.to_string(), first.to_string(), after)
            }
        }
    };
    let (namespace, name) = match tail.split_once('/') {
        Some((namespace, name)) => (namespace, name),
        None => ("", tail),
    };
    if name.is_empty() || name.contains('/') || resource.is_empty() || (tail.contains('/') && namespace.is_empty()) {
        return None;
    }
    Some(ObjectKey::new(&group, &resource, namespace, name).encode())
}

/// The JSON Shardline serves for a value kube stored (without
/// `resourceVersion`, which the store sets from the key's mod revision).
pub fn decode_value(value: &[u8]) -> Result<Vec<u8>, String> {
    if value.starts_with(super::protobuf::MAGIC) {
        let mut object = super::protobuf::decode_object(value, "").map_err(|e| format!("protobuf: {e}"))?;
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        if kind.is_empty() || api_version.is_empty() {
            return Err("protobuf envelope without apiVersion or kind".into());
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        // kube's storage codec defaults what it decodes (`SetDefaults_*`:
        // a claim's `Pending` phase, a host path's empty `type`), then serves it.
        crate::strategy::defaults::apply(group, &kind, &mut object);
        crate::strategy::decode::order(group, version, &kind, &mut object);
        return serde_json::to_vec(&object).map_err(|e| e.to_string());
    }
    let parsed: Value = serde_json::from_slice(value).map_err(|e| format!("JSON: {e}"))?;
    let Value::Object(mut object) = parsed else { return Err("JSON value is not an object".into()) };
    if !object.get("metadata").is_some_and(Value::is_object) {
        return Err("object without metadata".into());
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version == "apiextensions.k8s.io/v1beta1" && kind == "CustomResourceDefinition" {
        definition_to_v1(&mut object);
        crate::strategy::decode::order("apiextensions.k8s.io", "v1", "CustomResourceDefinition", &mut object);
        return serde_json::to_vec(&object).map_err(|e| e.to_string());
    }
    // Custom resources and APIServices are served as stored.
    let end = value.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    Ok(value[..end].to_vec())
}

/// kube's conversion of a v1beta1 CustomResourceDefinition to v1: the
/// top-level schema, subresources and printer columns become each version's,
/// `version` goes (it is the first of `versions`), `JSONPath` is `jsonPath`,
/// and `preserveUnknownFields` stays only when true.
fn definition_to_v1(object: &mut Map<String, Value>) {
    object.insert("apiVersion".into(), Value::String("apiextensions.k8s.io/v1".into()));
    let Some(Value::Object(spec)) = object.get_mut("spec") else { return };
    let version = spec.remove("version");
    let validation = spec.remove("validation");
    let subresources = spec.remove("subresources");
    let columns = spec.remove("additionalPrinterColumns");
    if spec.get("preserveUnknownFields") == Some(&Value::Bool(false)) {
        spec.remove("preserveUnknownFields");
    }
    let versions = spec.entry("versions").or_insert_with(|| Value::Array(Vec::new()));
    if let (Value::Array(list), Some(Value::String(name))) = (&mut *versions, &version) {
        if list.is_empty() {
            list.push(serde_json::json!({"name": name, "served": true, "storage": true}));
        }
    }
    let Value::Array(list) = versions else { return };
    for entry in list.iter_mut() {
        let Value::Object(entry) = entry else { continue };
        if let Some(Value::Object(v)) = &validation {
            entry.entry("schema").or_insert_with(|| Value::Object(v.clone()));
        }
        if let Some(s) = &subresources {
            entry.entry("subresources").or_insert_with(|| s.clone());
        }
        if let Some(c) = &columns {
            entry.entry("additionalPrinterColumns").or_insert_with(|| c.clone());
        }
        if let Some(Value::Array(columns)) = entry.get_mut("additionalPrinterColumns") {
            for column in columns.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(path) = column.remove("JSONPath") {
                    column.insert("jsonPath".into(), path);
                }
            }
        }
    }
}

/// The bytes kube stores for a value Shardline serves as `json`: the
/// Protobuf envelope for built-in kinds, JSON otherwise; without
/// `resourceVersion`.
pub fn encode_value(json: &[u8]) -> Result<Vec<u8>, String> {
    let parsed: Value = serde_json::from_slice(json).map_err(|e| format!("JSON: {e}"))?;
    let Value::Object(mut object) = parsed else { return Err("value is not a JSON object".into()) };
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        metadata.remove("resourceVersion");
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let json_stored =
        api_version.starts_with("apiextensions.k8s.io/") || api_version.starts_with("apiregistration.k8s.io/");
    if !json_stored && super::protobuf_encode::has_schema(api_version, kind) {
        let json = serde_json::to_vec(&object).map_err(|e| e.to_string())?;
        return super::protobuf_encode::encode_object_json(&json).map(|b| b.to_vec()).map_err(|e| e.to_string());
    }
    let mut out = serde_json::to_vec(&object).map_err(|e| e.to_string())?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_both_ways() {
        let cases: &[(&str, &str)] = &[
            ("/registry/core/pods/default/web", "/registry/pods/default/web"),
            ("/registry/core/nodes//n1", "/registry/minions/n1"),
            ("/registry/core/services/ns/kubernetes", "/registry/services/specs/ns/kubernetes"),
            ("/registry/core/endpoints/ns/kubernetes", "/registry/services/endpoints/ns/kubernetes"),
            ("/registry/core/replicationcontrollers/ns/rc", "/registry/controllers/ns/rc"),
            ("/registry/networking.k8s.io/ingresses/ns/i", "/registry/ingress/ns/i"),
            ("/registry/apps/deployments/ns/d", "/registry/deployments/ns/d"),
            ("/registry/rbac.authorization.k8s.io/clusterroles//admin", "/registry/clusterroles/admin"),
            ("/registry/core/namespaces//default", "/registry/namespaces/default"),
            ("/registry/core/events/ns/e.1", "/registry/events/ns/e.1"),
            ("/registry/coordination.k8s.io/leases/kube-node-lease/n1", "/registry/leases/kube-node-lease/n1"),
            ("/registry/networking.k8s.io/ipaddresses//10.0.0.1", "/registry/ipaddresses/10.0.0.1"),
            (
                "/registry/apiextensions.k8s.io/customresourcedefinitions//widgets.example.com",
                "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
            ),
            (
                "/registry/apiregistration.k8s.io/apiservices//v1.apps",
                "/registry/apiregistration.k8s.io/apiservices/v1.apps",
            ),
            ("/registry/example.com/widgets/mirror/w1", "/registry/example.com/widgets/mirror/w1"),
            ("/registry/example.com/clusterwidgets//c1", "/registry/example.com/clusterwidgets/c1"),
            ("/registry/core/servicenodeports//30080", "/registry/shardline.io/servicenodeports/30080"),
        ];
        for (internal, kube) in cases {
            assert_eq!(kube_key(internal.as_bytes()).as_deref(), Some(kube.as_bytes()), "{internal}");
            assert_eq!(internal_key(kube.as_bytes()).as_deref(), Some(internal.as_bytes()), "{kube}");
        }
    }

    #[test]
    fn keys_of_nothing_served_are_not_ours() {
        for kube in [
            "/registry/ranges/serviceips",
            "/registry/masterleases/10.0.0.1",
            "/registry/peerserverleases/kube-system/x",
            "/registry/nodes/n1",
            "/registry/pods/",
            "/registry/pods/ns/",
            "/registry/pods//x",
            "/registry/pods/a/b/c",
            "/other/pods/ns/x",
            "/registry/example.com/widgets",
            "compact_rev_key",
        ] {
            assert_eq!(internal_key(kube.as_bytes()), None, "{kube}");
        }
    }

    /// Every built-in resource's kube prefix maps back to it (no two share one
    /// but the two Events, which kube keeps together).
    #[test]
    fn every_builtin_prefix_maps_back_to_its_resource() {
        for b in builtin_resources() {
            if b.group == "events.k8s.io" {
                continue;
            }
            let namespace = if b.namespaced { "ns" } else { "" };
            let internal = ObjectKey::new(b.group, b.resource, namespace, "x").encode();
            let kube = kube_key(&internal).unwrap();
            assert_eq!(internal_key(&kube), Some(internal.clone()), "{} {}", b.group, b.resource);
        }
    }

    #[test]
    fn garbage_never_panics() {
        for bytes in [&b""[..], b"k8s\0", b"k8s\0\x0a\xff", b"{", b"[]", b"{\"metadata\":1}", b"\xff\xfe"] {
            assert!(decode_value(bytes).is_err(), "{bytes:?}");
            let _ = internal_key(bytes);
            let _ = kube_key(bytes);
        }
    }

    #[test]
    fn a_v1beta1_definition_reads_as_v1() {
        let stored = br#"{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","version":"v1","names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced","validation":{"openAPIV3Schema":{"type":"object"}},"subresources":{"status":{}},"additionalPrinterColumns":[{"name":"Color","type":"string","JSONPath":".spec.color"}],"versions":[{"name":"v1","served":true,"storage":true}],"conversion":{"strategy":"None"},"preserveUnknownFields":false}}
"#;
        let v1: Value = serde_json::from_slice(&decode_value(stored).unwrap()).unwrap();
        assert_eq!(v1["apiVersion"], "apiextensions.k8s.io/v1");
        let spec = &v1["spec"];
        assert!(spec.get("version").is_none() && spec.get("validation").is_none());
        assert!(spec.get("preserveUnknownFields").is_none());
        assert_eq!(spec["versions"][0]["schema"]["openAPIV3Schema"]["type"], "object");
        assert_eq!(spec["versions"][0]["subresources"], serde_json::json!({"status": {}}));
        assert_eq!(spec["versions"][0]["additionalPrinterColumns"][0]["jsonPath"], ".spec.color");
    }

    #[test]
    fn built_in_kinds_round_trip_through_protobuf() {
        let pod = br#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","resourceVersion":"7","creationTimestamp":"2026-11-25T12:23:15Z"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#;
        let stored = encode_value(pod).unwrap();
        assert!(stored.starts_with(b"k8s\0"));
        let served: Value = serde_json::from_slice(&decode_value(&stored).unwrap()).unwrap();
        assert_eq!(served["metadata"]["name"], "p");
        assert!(served["metadata"].get("resourceVersion").is_none(), "kube stores no resourceVersion");
        assert_eq!(served["spec"]["containers"][0]["image"], "nginx");
        // Custom resources stay JSON.
        let widget = br#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":"3"},"spec":{"size":2}}"#;
        let stored = encode_value(widget).unwrap();
        assert!(stored.starts_with(b"{") && stored.ends_with(b"\n"));
        assert_eq!(
            decode_value(&stored).unwrap(),
            br#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2}}"#
        );
    }
}
