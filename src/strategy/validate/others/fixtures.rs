//! The apps, batch, rbac and coordination manifests of
//! `tests/fixtures/kube-v1.36/objects.yaml`, put through the typed layer
//! (decode, default, create rules, validation) as the API layer does, and
//! compared with what kube-apiserver v1.36 stored for them
//! (`tests/fixtures/kube-v1.36/lists/*.json`): every field of `spec` (the
//! pod templates' `spec` only once the core pod template defaults are in,
//! see [`pod_template_defaults_present`]), the status a create starts with,
//! the labels kube generates for Jobs and the DaemonSet's template
//! generation annotation. Field order is not compared (maps compare as sets).

use crate::strategy::{self, Context};
use crate::types::registry::Registry;
use serde_json::{json, Map, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kube-v1.36");
const GROUPS: [&str; 4] = ["apps", "batch", "rbac.authorization.k8s.io", "coordination.k8s.io"];

fn manifests() -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/objects.yaml")).unwrap_or_default();
    text.split("\n---\n")
        .filter_map(|doc| serde_saphyr::from_str::<Value>(doc).ok())
        .filter_map(|v| v.as_object().cloned())
        .collect()
}

/// The recorded object of (group, version, resource) named `name` in the
/// manifest's namespace.
fn recorded(group: &str, version: &str, resource: &str, namespace: &str, name: &str) -> Option<Value> {
    let group_file = if group.is_empty() { "core" } else { group };
    let text = std::fs::read_to_string(format!("{FIXTURES}/lists/{group_file}_{version}_{resource}.json")).ok()?;
    let list: Value = serde_json::from_str(&text).ok()?;
    list["items"]
        .as_array()?
        .iter()
        .find(|item| {
            item["metadata"]["name"] == name && item["metadata"]["namespace"].as_str().unwrap_or("") == namespace
        })
        .cloned()
}

/// The parts compared: `spec` without the pod template's spec, the template
/// metadata, top-level content of the RBAC kinds, the status, and the
/// metadata kube generates.
fn comparable(kind: &str, object: &Value, with_pod_spec: bool) -> Value {
    let mut spec = object["spec"].clone();
    let template = match kind {
        "CronJob" => spec["jobTemplate"]["spec"].get_mut("template"),
        _ => spec.get_mut("template"),
    };
    if let (false, Some(Value::Object(template))) = (with_pod_spec, template) {
        template.shift_remove("spec");
    }
    let labels = if kind == "Job" { object["metadata"]["labels"].clone() } else { Value::Null };
    json!({
        "spec": spec,
        "rules": object["rules"], "subjects": object["subjects"], "roleRef": object["roleRef"],
        "status": object["status"],
        "labels": labels,
        "templateGeneration": object["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
    })
}

/// Whether the pod template defaults (`defaults::core::pod_template_spec`,
/// another part of the typed layer) are in: then the templates' pod specs
/// are compared too.
fn pod_template_defaults_present() -> bool {
    let mut template = json!({"spec": {"containers": [{"name": "c", "image": "i"}]}});
    crate::strategy::defaults::core::pod_template_spec(&mut template);
    template["spec"].get("restartPolicy").is_some()
}

#[test]
fn creates_match_kube_apiserver_v1_36() {
    let registry = Registry::builtin();
    let with_pod_spec = pod_template_defaults_present();
    let mut compared = Vec::new();
    for manifest in manifests() {
        let api_version = manifest.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version.as_str()));
        let kind = manifest.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        if !GROUPS.contains(&group) {
            continue;
        }
        let info = registry.by_kind(group, version, &kind).unwrap_or_else(|| panic!("{group}/{kind} is served"));
        let meta = &manifest["metadata"];
        let (namespace, name) = (meta["namespace"].as_str().unwrap_or(""), meta["name"].as_str().unwrap_or(""));
        let expected = recorded(group, version, &info.resource, namespace, name)
            .unwrap_or_else(|| panic!("{kind} {namespace}/{name} is recorded"));
        let mut object = manifest.clone();
        // What the API layer sets before the create rules: the server's
        // metadata (kube's uid, so that the Job's generated labels compare)
        // and an empty status where the status subresource owns it.
        if let Some(Value::Object(m)) = object.get_mut("metadata") {
            m.insert("uid".into(), expected["metadata"]["uid"].clone());
            m.insert("creationTimestamp".into(), expected["metadata"]["creationTimestamp"].clone());
        }
        if info.subresources.iter().any(|s| s == "status") {
            object.insert("status".into(), json!({}));
        }
        let context = Context { now: "2026-11-25T12:25:35Z", subresource: None, user: None };
        strategy::decode_and_default(info, &mut object).unwrap_or_else(|e| panic!("{kind} decodes: {e:?}"));
        strategy::create(info, &mut object, &context).unwrap_or_else(|e| panic!("{kind} is valid: {e:?}"));
        assert_eq!(
            comparable(&kind, &Value::Object(object), with_pod_spec),
            comparable(&kind, &expected, with_pod_spec),
            "{kind} {namespace}/{name} (pod specs compared: {with_pod_spec})"
        );
        compared.push(kind);
    }
    let expected_kinds = ["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Role", "RoleBinding", "Lease"];
    assert_eq!(compared, expected_kinds, "every manifest of these groups was compared");
}

/// Every path of `value`, as JSON pointers.
fn pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{prefix}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{prefix}/{i}");
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        _ => {}
    }
}

/// Defaults, create rules, validation and update of every recorded object of
/// these groups with each field replaced by a value of every JSON type: no
/// panic (the typed layer's invariant), whatever the answer.
#[test]
fn mistyped_fields_never_panic() {
    let registry = Registry::builtin();
    let replacements = [
        json!(null),
        json!(-1),
        json!(7),
        json!("x"),
        json!("150%"),
        json!(true),
        json!([]),
        json!([1]),
        json!({}),
        json!({"a": 1}),
    ];
    for manifest in manifests() {
        let api_version = manifest.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version.as_str()));
        let kind = manifest.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        let Some(info) = registry.by_kind(group, version, &kind).filter(|_| GROUPS.contains(&group)) else { continue };
        let mut base = manifest.clone();
        crate::strategy::defaults::apply(group, &kind, &mut base);
        let base = Value::Object(base);
        let mut paths = Vec::new();
        pointers(&base, String::new(), &mut paths);
        let context = Context { now: "2026-11-25T12:25:35Z", subresource: None, user: None };
        let status = Context { now: "2026-11-25T12:25:35Z", subresource: Some("status"), user: None };
        for path in &paths {
            for replacement in &replacements {
                let mut broken = base.clone();
                if let Some(slot) = broken.pointer_mut(path) {
                    *slot = replacement.clone();
                }
                let Value::Object(mut object) = broken else { continue };
                crate::strategy::defaults::apply(group, &kind, &mut object);
                let old = object.clone();
                let _ = strategy::create(info, &mut object, &context);
                let _ = strategy::update(info, &mut object.clone(), &old, &context);
                let _ = strategy::update(info, &mut object, &old, &status);
            }
        }
    }
}
