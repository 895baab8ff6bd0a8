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

/// Sets what kube-apiserver's naming and establishing controllers write in
/// a definition's status (`calculateNamesAndConditions`, then the
/// establishing controller): each name of `spec.names` is accepted unless
/// another definition or a built-in resource of the group already uses it
/// (Shardline checks the plural and the kind; a refused name keeps its
/// previously accepted value, and `NamesAccepted` is False with
/// `PluralConflict` or `KindConflict`, the kind's winning as kube's later
/// check does), `categories` are taken as they are, and `acceptedNames` is
/// in Go's field order. `Established` becomes True
/// (`InitialNamesAccepted`) once the names are accepted and then stays as
/// it is; a definition never accepted is `NotAccepted`. A condition whose
/// status is unchanged keeps its `lastTransitionTime`. `storedVersions` is
/// not touched: see [`add_stored_version`].
pub fn set_status(crd: &mut Value, registry: &Registry, now: &str) {
    let name = text(crd, "/metadata/name").to_string();
    let group = text(crd, "/spec/group").to_string();
    let requested = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let plural = text(&requested, "/plural").to_string();
    let kind = text(&requested, "/kind").to_string();
    let others =
        || registry.iter().filter(|r| r.group == group && r.custom.as_ref().is_none_or(|c| c.definition != name));
    let accepted_before = crd.pointer("/status/acceptedNames").cloned().unwrap_or(json!({}));
    let fresh = |requested: &str, accepted: &str, used: &dyn Fn(&ResourceInfo) -> bool| {
        requested == accepted || !others().any(used)
    };
    let plural_ok = fresh(&plural, text(&accepted_before, "/plural"), &|r: &ResourceInfo| r.resource == plural);
    let kind_ok = fresh(&kind, text(&accepted_before, "/kind"), &|r: &ResourceInfo| r.kind == kind);
    let previous: Vec<Value> = crd.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    let condition = |type_: &str, status: &str, reason: &str, message: &str| {
        let since = previous
            .iter()
            .find(|c| text(c, "/type") == type_ && text(c, "/status") == status)
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| json!(now));
        json!({"type": type_, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
    };
    let names = match (plural_ok, kind_ok) {
        (_, false) => condition("NamesAccepted", "False", "KindConflict", &format!("{kind:?} is already in use")),
        (false, true) => {
            condition("NamesAccepted", "False", "PluralConflict", &format!("{plural:?} is already in use"))
        }
        (true, true) => condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
    };
    let old_established = previous.iter().find(|c| text(c, "/type") == "Established").cloned();
    let established = match old_established {
        Some(old) if text(&old, "/status") == "True" => old,
        _ if plural_ok && kind_ok => {
            condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
        }
        Some(old) => old,
        None => condition("Established", "False", "NotAccepted", "not all names are accepted"),
    };
    // CustomResourceDefinitionNames in Go order: plural, singular,
    // shortNames, kind, listKind, categories (all but plural and kind
    // omitted when empty, as their `omitempty` tags say).
    let mut accepted = serde_json::Map::new();
    let pick = |field: &str, ok: bool| if ok { requested.get(field) } else { accepted_before.get(field) };
    accepted.insert("plural".into(), pick("plural", plural_ok).cloned().unwrap_or(json!("")));
    for (field, ok) in
        [("singular", true), ("shortNames", true), ("kind", kind_ok), ("listKind", true), ("categories", true)]
    {
        let value = pick(field, ok).filter(|v| match v {
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => false,
        });
        match value {
            Some(v) => {
                accepted.insert(field.into(), v.clone());
            }
            None if field == "kind" => {
                accepted.insert(field.into(), json!(""));
            }
            None => {}
        }
    }
    // kube's SetCRDCondition: a condition replaces its type's in place, a
    // new type is appended.
    let mut conditions = previous.clone();
    for new in [names, established] {
        match conditions.iter_mut().find(|c| text(c, "/type") == text(&new, "/type")) {
            Some(slot) => *slot = new,
            None => conditions.push(new),
        }
    }
    let stored = crd.pointer("/status/storedVersions").cloned().unwrap_or(Value::Null);
    if let Some(map) = crd.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"conditions": conditions, "acceptedNames": accepted, "storedVersions": stored}),
        );
    }
}

/// What kube's definition strategy does to `status.storedVersions` on
/// create and update (`PrepareForCreate`, `PrepareForUpdate`): the storage
/// version is appended unless already listed.
pub fn add_stored_version(crd: &mut Value) {
    let Some(storage) = storage_version(crd) else { return };
    let mut stored: Vec<String> = strings(crd, "/status/storedVersions");
    if stored.contains(&storage) {
        return;
    }
    stored.push(storage);
    let Some(map) = crd.as_object_mut() else { return };
    let status = map.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    if let Some(status) = status.as_object_mut() {
        status.insert("storedVersions".into(), json!(stored));
    }
}

/// What kube-apiserver's apiextensions defaulting
/// (`SetObjectDefaults_CustomResourceDefinition`) fills in a definition's
/// spec when it is decoded: `names.singular` (the lower-cased kind),
/// `names.listKind` (`<kind>List`), `conversion` (`strategy: None`) when
/// absent or null, and a conversion webhook service's `port` (443).
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
        if spec.get("conversion").is_none_or(Value::is_null) {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
    }
    if let Some(service) =
        crd.pointer_mut("/spec/conversion/webhook/clientConfig/service").and_then(Value::as_object_mut)
    {
        if service.get("port").is_none_or(Value::is_null) {
            service.insert("port".into(), json!(443));
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
        add_stored_version(&mut crd);
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

    /// The definition kube-apiserver v1.36 created from `kubectl apply`
    /// (tests/fixtures/kube-v1.36/lists): its spec after defaulting and the
    /// status its strategy and controllers wrote.
    #[test]
    fn defaults_and_status_are_kube_apiserver_s() {
        let list: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/kube-v1.36/lists/apiextensions.k8s.io_v1_customresourcedefinitions.json"
        ))
        .unwrap();
        let stored = &list["items"][0];
        let applied =
            stored["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].as_str().unwrap();
        let mut crd: Value = serde_json::from_str(applied).unwrap();
        assert!(crd.pointer("/spec/conversion").is_none() && crd.pointer("/spec/names/listKind").is_none());
        set_defaults(&mut crd);
        assert_eq!(crd["spec"], stored["spec"]);
        add_stored_version(&mut crd);
        let now = stored["metadata"]["creationTimestamp"].as_str().unwrap();
        set_status(&mut crd, &Registry::builtin(), now);
        assert_eq!(crd["status"], stored["status"]);
        // In Go's field order, as kube serves them.
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&crd["status"]), keys(&stored["status"]));
        assert_eq!(keys(&crd["status"]["acceptedNames"]), keys(&stored["status"]["acceptedNames"]));
    }

    #[test]
    fn defaults_fill_a_null_conversion_and_a_webhook_port() {
        let mut crd = widget_crd();
        crd["spec"]["conversion"] = Value::Null;
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        let service = json!({"namespace": "ns", "name": "conv"});
        crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": service},
            "conversionReviewVersions": ["v1"]}});
        set_defaults(&mut crd);
        assert_eq!(crd.pointer("/spec/conversion/webhook/clientConfig/service/port"), Some(&json!(443)));
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] = json!(8443);
        set_defaults(&mut crd);
        assert_eq!(crd.pointer("/spec/conversion/webhook/clientConfig/service/port"), Some(&json!(8443)));
        // Defaulting twice changes nothing.
        let once = crd.clone();
        set_defaults(&mut crd);
        assert_eq!(crd, once);
    }

    #[test]
    fn stored_versions_grow_and_names_stay_accepted_as_kube_keeps_them() {
        let mut crd = widget_crd();
        set_defaults(&mut crd);
        add_stored_version(&mut crd);
        crd["spec"]["versions"][0]["storage"] = json!(false);
        crd["spec"]["versions"][1]["storage"] = json!(true);
        add_stored_version(&mut crd);
        add_stored_version(&mut crd);
        assert_eq!(crd.pointer("/status/storedVersions"), Some(&json!(["v1", "v1beta1"])));
        let mut registry = Registry::builtin();
        set_status(&mut crd, &registry, "t0");
        registry.set_definition("widgets.example.com", served_resources(&crd));
        let mut gadgets = widget_crd();
        gadgets["metadata"]["name"] = json!("gadgets.example.com");
        gadgets["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget", "categories": ["all"]});
        set_defaults(&mut gadgets);
        set_status(&mut gadgets, &registry, "t1");
        assert_eq!(gadgets.pointer("/status/conditions/1/reason"), Some(&json!("InitialNamesAccepted")));
        assert_eq!(
            gadgets["status"]["acceptedNames"],
            json!({"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList", "categories": ["all"]})
        );
        // Renamed to the other definition's kind: the kind is refused and
        // keeps its accepted value, the other names move, and Established
        // stays True (kube's establishing controller never reverts it).
        registry.set_definition("gadgets.example.com", served_resources(&gadgets));
        gadgets["spec"]["names"] =
            json!({"plural": "doohickeys", "singular": "doohickey", "kind": "Widget", "listKind": "DoohickeyList"});
        set_status(&mut gadgets, &registry, "t2");
        let status = &gadgets["status"];
        assert_eq!(status.pointer("/conditions/0/reason"), Some(&json!("KindConflict")));
        assert_eq!(status.pointer("/conditions/0/message"), Some(&json!("\"Widget\" is already in use")));
        assert_eq!(status.pointer("/conditions/0/lastTransitionTime"), Some(&json!("t2")));
        assert_eq!(status.pointer("/conditions/1/status"), Some(&json!("True")));
        assert_eq!(status.pointer("/conditions/1/lastTransitionTime"), Some(&json!("t1")));
        assert_eq!(
            status["acceptedNames"],
            json!({"plural": "doohickeys", "singular": "doohickey", "kind": "Gadget", "listKind": "DoohickeyList"})
        );
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
