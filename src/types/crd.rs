//! CustomResourceDefinitions (`apiextensions.k8s.io/v1`) read as the server
//! needs them: the resources a definition serves (one [`ResourceInfo`] per
//! served version, each with its [`CustomVersion`] facts: schema, printer
//! columns, storage version, scale paths), the checks kube-apiserver applies
//! to a definition before storing it, and the `status` it reports
//! (`acceptedNames`, the `NamesAccepted` and `Established` conditions,
//! `storedVersions`).
//!
//! Invariant: no I/O; any JSON value is read without panicking (a value that
//! is not a valid definition serves nothing). Versions convert by changing
//! `apiVersion` only (the `None` conversion strategy; no webhooks).

use super::registry::{Registry, ResourceInfo};
use super::validation::FieldError;
use serde_json::{json, Value};
use std::sync::Arc;

/// The group and resource of CustomResourceDefinitions themselves.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";
pub const CRD_RESOURCE: &str = "customresourcedefinitions";

/// Where `/scale` reads and writes a custom resource's replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// `.spec.replicas`, as declared (a JSONPath of field names).
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
}

/// The facts of one served version of a custom resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomVersion {
    /// The definition's name (`widgets.example.com`).
    pub definition: String,
    /// The version objects are stored in (`storage: true`).
    pub storage_version: String,
    /// `schema.openAPIV3Schema`, if given.
    pub schema: Option<Value>,
    /// `additionalPrinterColumns`, as declared.
    pub printer_columns: Vec<Value>,
    pub scale: Option<ScalePaths>,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(value: &Value, pointer: &str) -> Vec<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn versions(crd: &Value) -> &[Value] {
    crd.pointer("/spec/versions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The storage version of a definition, if exactly one is marked.
pub fn storage_version(crd: &Value) -> Option<String> {
    let marked: Vec<&Value> =
        versions(crd).iter().filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true)).collect();
    match marked.as_slice() {
        [one] => Some(text(one, "/name").to_string()),
        _ => None,
    }
}

/// The resources a stored definition serves: one per served version. Empty
/// if the definition is not valid or its names were not accepted.
pub fn served_resources(crd: &Value) -> Vec<ResourceInfo> {
    if !validate(crd).is_empty() || !names_accepted(crd) {
        return Vec::new();
    }
    let Some(storage) = storage_version(crd) else { return Vec::new() };
    let definition = text(crd, "/metadata/name").to_string();
    let group = text(crd, "/spec/group").to_string();
    let plural = text(crd, "/spec/names/plural").to_string();
    let kind = text(crd, "/spec/names/kind").to_string();
    let singular = match text(crd, "/spec/names/singular") {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    let list_kind = match text(crd, "/spec/names/listKind") {
        "" => format!("{kind}List"),
        s => s.to_string(),
    };
    let namespaced = text(crd, "/spec/scope") == "Namespaced";
    let verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
    let mut out = Vec::new();
    for version in versions(crd) {
        if version.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let mut subresources = Vec::new();
        let scale = version.pointer("/subresources/scale").filter(|s| s.is_object()).map(|s| ScalePaths {
            spec_replicas_path: text(s, "/specReplicasPath").to_string(),
            status_replicas_path: text(s, "/statusReplicasPath").to_string(),
            label_selector_path: s.get("labelSelectorPath").and_then(Value::as_str).map(str::to_string),
        });
        if scale.is_some() {
            subresources.push("scale".to_string());
        }
        if version.pointer("/subresources/status").is_some_and(Value::is_object) {
            subresources.push("status".to_string());
        }
        let selectable_fields = version
            .get("selectableFields")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(|p| p.trim_start_matches('.').to_string())
                    .collect()
            })
            .unwrap_or_default();
        out.push(ResourceInfo {
            group: group.clone(),
            version: text(version, "/name").to_string(),
            resource: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            list_kind: list_kind.clone(),
            namespaced,
            short_names: strings(crd, "/spec/names/shortNames"),
            categories: strings(crd, "/spec/names/categories"),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            selectable_fields,
            allow_create_on_update: false,
            has_generation: true,
            subresources,
            custom: Some(Arc::new(CustomVersion {
                definition: definition.clone(),
                storage_version: storage.clone(),
                schema: version.pointer("/schema/openAPIV3Schema").cloned(),
                printer_columns: version
                    .get("additionalPrinterColumns")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                scale,
            })),
        });
    }
    out
}

/// Whether the stored definition's status says its names were accepted.
fn names_accepted(crd: &Value) -> bool {
    crd.pointer("/status/conditions").and_then(Value::as_array).is_some_and(|conditions| {
        conditions.iter().any(|c| text(c, "/type") == "NamesAccepted" && text(c, "/status") == "True")
    })
}

/// kube-apiserver's checks of a definition's spec (the subset Shardline
/// relies on to serve it), as field errors.
pub fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    if group.is_empty() {
        errors.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        errors.push(FieldError::invalid("spec.group", group, "should be a domain with at least one dot"));
    }
    if plural.is_empty() {
        errors.push(FieldError::required("spec.names.plural", ""));
    } else if plural != plural.to_lowercase() || plural.contains('/') || plural.contains('.') {
        errors.push(FieldError::invalid("spec.names.plural", plural, "a lowercase RFC 1123 label is required"));
    }
    if text(crd, "/spec/names/kind").is_empty() {
        errors.push(FieldError::required("spec.names.kind", ""));
    }
    if !group.is_empty() && !plural.is_empty() {
        errors.extend(super::validation::validate_crd_name(text(crd, "/metadata/name"), plural, group));
    }
    match text(crd, "/spec/scope") {
        "Namespaced" | "Cluster" => {}
        other => errors.push(FieldError::new(
            "spec.scope",
            super::validation::FieldErrorType::NotSupported,
            Some(other),
            "supported values: \"Cluster\", \"Namespaced\"",
        )),
    }
    let all = versions(crd);
    if all.is_empty() {
        errors.push(FieldError::invalid(
            "spec.versions",
            "null",
            "must have exactly one version marked as storage version",
        ));
    } else if storage_version(crd).is_none() {
        errors.push(FieldError::invalid(
            "spec.versions",
            &serde_json::to_string(all).unwrap_or_default(),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, version) in all.iter().enumerate() {
        if text(version, "/name").is_empty() {
            errors.push(FieldError::required(&format!("spec.versions[{i}].name"), ""));
        }
        for (j, column) in version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let path = text(column, "/jsonPath");
            if super::jsonpath::JsonPath::parse(path).is_err() {
                errors.push(FieldError::invalid(
                    &format!("spec.versions[{i}].additionalPrinterColumns[{j}].JSONPath"),
                    path,
                    "must be a simple json path",
                ));
            }
        }
    }
    if !all.is_empty() && !all.iter().any(|v| v.get("served").and_then(Value::as_bool) == Some(true)) {
        errors.push(FieldError::invalid("spec.versions", "", "must have at least one served version"));
    }
    errors
}

/// Sets the status kube-apiserver's controllers give a definition:
/// `acceptedNames` and `NamesAccepted` (unless another definition or a
/// built-in resource already uses the plural or kind in this group),
/// `Established`, and the storage version in `storedVersions`. A condition
/// whose status is unchanged keeps its `lastTransitionTime`.
pub fn set_status(crd: &mut Value, registry: &Registry, now: &str) {
    let name = text(crd, "/metadata/name").to_string();
    let group = text(crd, "/spec/group").to_string();
    let plural = text(crd, "/spec/names/plural").to_string();
    let kind = text(crd, "/spec/names/kind").to_string();
    let conflict = registry.iter().find(|r| {
        r.group == group
            && (r.resource == plural || r.kind == kind)
            && r.custom.as_ref().is_none_or(|c| c.definition != name)
    });
    let previous: Vec<Value> = crd.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    let condition = |type_: &str, status: bool, reason: &str, message: &str| {
        let status = if status { "True" } else { "False" };
        let since = previous
            .iter()
            .find(|c| text(c, "/type") == type_ && text(c, "/status") == status)
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| json!(now));
        json!({"type": type_, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
    };
    let (names, established) = match conflict {
        Some(other) if other.resource == plural => (
            condition("NamesAccepted", false, "PluralConflict", &format!("{plural:?} is already in use")),
            condition("Established", false, "NotAccepted", "not all names are accepted"),
        ),
        Some(_) => (
            condition("NamesAccepted", false, "KindConflict", &format!("{kind:?} is already in use")),
            condition("Established", false, "NotAccepted", "not all names are accepted"),
        ),
        None => (
            condition("NamesAccepted", true, "NoConflicts", "no conflicts found"),
            condition("Established", true, "InitialNamesAccepted", "the initial names have been accepted"),
        ),
    };
    let mut accepted = serde_json::Map::new();
    if conflict.is_none() {
        let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
        accepted.insert("plural".into(), json!(plural));
        let singular = text(&names, "/singular");
        accepted.insert(
            "singular".into(),
            json!(if singular.is_empty() { kind.to_lowercase() } else { singular.to_string() }),
        );
        for list in ["shortNames", "categories"] {
            if let Some(v) = names.get(list).filter(|v| v.as_array().is_some_and(|a| !a.is_empty())) {
                accepted.insert(list.into(), v.clone());
            }
        }
        accepted.insert("kind".into(), json!(kind));
        let list_kind = text(&names, "/listKind");
        accepted.insert(
            "listKind".into(),
            json!(if list_kind.is_empty() { format!("{kind}List") } else { list_kind.to_string() }),
        );
    }
    let mut stored: Vec<String> = strings(crd, "/status/storedVersions");
    if let Some(storage) = storage_version(crd) {
        if !stored.contains(&storage) {
            stored.push(storage);
        }
    }
    if let Some(map) = crd.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"conditions": [names, established], "acceptedNames": accepted, "storedVersions": stored}),
        );
    }
}

/// Fills in what kube-apiserver defaults in a definition's spec:
/// `names.singular` and `names.listKind`, and `conversion.strategy: None`.
pub fn set_defaults(crd: &mut Value) {
    let kind = text(crd, "/spec/names/kind").to_string();
    if let Some(names) = crd.pointer_mut("/spec/names").and_then(Value::as_object_mut) {
        if names.get("singular").and_then(Value::as_str).unwrap_or("").is_empty() && !kind.is_empty() {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names.get("listKind").and_then(Value::as_str).unwrap_or("").is_empty() && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) {
        if !spec.contains_key("conversion") {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
    }
}

/// Keeps `registry` in step with one committed change to a key: if the key is
/// a CustomResourceDefinition's, serves what the new value defines (`None`:
/// deleted, serves nothing). Returns whether the registry changed. Every
/// shard calls this for every committed entry, so each keeps its own copy.
/// Whether a log key is a CustomResourceDefinition's.
pub fn is_definition_key(key: &[u8]) -> bool {
    // The cheap test first: a restart asks this of every key.
    super::key::group_resource(key).is_some_and(|(group, resource)| group == CRD_GROUP && resource == CRD_RESOURCE)
        && super::key::ObjectKey::decode(key).is_some()
}

pub fn apply_to_registry(registry: &mut Registry, key: &[u8], value: Option<&[u8]>) -> bool {
    let Some(key) = super::key::ObjectKey::decode(key) else { return false };
    if key.group != CRD_GROUP || key.resource != CRD_RESOURCE {
        return false;
    }
    match value.and_then(|v| serde_json::from_slice::<Value>(v).ok()) {
        Some(crd) => registry.set_definition(&key.name, served_resources(&crd)),
        None => registry.remove_definition(&key.name),
    }
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn widget_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                     "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]},
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1alpha1", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn a_valid_definition_is_accepted_and_serves_its_served_versions() {
        let mut crd = widget_crd();
        assert!(validate(&crd).is_empty(), "{:?}", validate(&crd));
        // Not yet accepted: serves nothing.
        assert!(served_resources(&crd).is_empty());
        set_defaults(&mut crd);
        set_status(&mut crd, &Registry::builtin(), "2026-01-01T00:00:00Z");
        assert_eq!(crd.pointer("/status/conditions/0/type"), Some(&json!("NamesAccepted")));
        assert_eq!(crd.pointer("/status/conditions/1/reason"), Some(&json!("InitialNamesAccepted")));
        assert_eq!(crd.pointer("/status/storedVersions"), Some(&json!(["v1"])));
        assert_eq!(crd.pointer("/status/acceptedNames/listKind"), Some(&json!("WidgetList")));
        let served = served_resources(&crd);
        let versions: Vec<&str> = served.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        assert_eq!(served[0].subresources, ["scale", "status"]);
        assert!(served[1].subresources.is_empty());
        assert_eq!(served[0].singular, "widget");
        let custom = served[1].custom.as_ref().expect("custom");
        assert_eq!(custom.storage_version, "v1");
        assert_eq!(custom.definition, "widgets.example.com");
        let mut registry = Registry::builtin();
        registry.set_definition("widgets.example.com", served);
        assert!(registry.lookup("example.com", "v1beta1", "widgets").is_some());
        // A second definition of the same plural in the group is refused its names.
        let mut other = widget_crd();
        other["metadata"]["name"] = json!("widgets.example.com");
        other["spec"]["names"]["kind"] = json!("Gadget");
        let mut renamed = other.clone();
        renamed["metadata"]["name"] = json!("other.example.com");
        set_status(&mut renamed, &registry, "now");
        assert_eq!(renamed.pointer("/status/conditions/0/reason"), Some(&json!("PluralConflict")));
        assert_eq!(renamed.pointer("/status/conditions/1/status"), Some(&json!("False")));
        assert!(served_resources(&renamed).is_empty());
        // The definition itself is no conflict, and keeps its transition times.
        set_status(&mut crd, &registry, "later");
        assert_eq!(crd.pointer("/status/conditions/0/lastTransitionTime"), Some(&json!("2026-01-01T00:00:00Z")));
    }

    #[test]
    fn invalid_definitions_are_reported() {
        let mut crd = widget_crd();
        crd["metadata"]["name"] = json!("wrong");
        crd["spec"]["versions"][1]["storage"] = json!(true);
        crd["spec"]["scope"] = json!("Galaxy");
        let fields: Vec<String> = validate(&crd).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["metadata.name", "spec.scope", "spec.versions"]);
        for odd in [json!(null), json!([]), json!({"spec": 3}), json!({"spec": {"versions": [1, null]}})] {
            assert!(!validate(&odd).is_empty());
            assert!(served_resources(&odd).is_empty());
        }
    }
}
