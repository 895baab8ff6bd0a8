//! The managedFields a create records, checked against kube-apiserver v1.36's own:
//! `strategy::zero` (the kind's Go zero value, built from the Go struct facts of
//! `tools/gen-proto-tables/go_fields.txt`) compared by `fieldmanager::update` with an
//! object kube stored (tests/fixtures/kube-v1.36/lists) must give the fields of its
//! creator's Update entry. A struct missing its facts shows as a `.` kube does not write
//! under a non-pointer struct field (`f:spec`), or a missing one under a pointer.

use crate::fieldmanager::{self, Write};
use crate::types::registry::Registry;
use crate::types::schema;
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The list fixtures whose creators' entries are compared, by file name.
const LISTS: &[&str] = &[
    "networking.k8s.io_v1_servicecidrs.json",
    "flowcontrol.apiserver.k8s.io_v1_flowschemas.json",
    "flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations.json",
    "networking.k8s.io_v1_ingresses.json",
    "networking.k8s.io_v1_ipaddresses.json",
    "networking.k8s.io_v1_networkpolicies.json",
    "policy_v1_poddisruptionbudgets.json",
    "apiregistration.k8s.io_v1_apiservices.json",
    "autoscaling_v2_horizontalpodautoscalers.json",
    "core_v1_limitranges.json",
    "core_v1_resourcequotas.json",
    "storage.k8s.io_v1_storageclasses.json",
    "discovery.k8s.io_v1_endpointslices.json",
    "apiextensions.k8s.io_v1_customresourcedefinitions.json",
];

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/kube-v1.36/lists/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The one entry of an object's managedFields that wrote its main resource,
/// when it is an Update (the create); `None` when several managers did.
fn creator_entry(object: &Object) -> Option<Object> {
    let entries = object.get("metadata")?.get("managedFields")?.as_array()?;
    let main: Vec<&Value> =
        entries.iter().filter(|e| e.get("subresource").and_then(Value::as_str).unwrap_or("").is_empty()).collect();
    match main.as_slice() {
        [only] if only.get("operation").and_then(Value::as_str) == Some("Update") => only.as_object().cloned(),
        _ => None,
    }
}

/// Mismatches between the fields `update` records for each item's create and its
/// creator's entry in kube's list `name`; also the number of items compared.
fn compare_list(registry: &Registry, name: &str) -> (usize, Vec<String>) {
    let list = fixture(name);
    let api_version = list["apiVersion"].as_str().expect("list apiVersion").to_string();
    let kind = list["kind"].as_str().expect("list kind").trim_end_matches("List").to_string();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let info = registry.by_kind(group, version, &kind).unwrap_or_else(|| panic!("{api_version} {kind} not served"));
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for item in list["items"].as_array().expect("items") {
        let stored = item.as_object().expect("item object");
        let Some(entry) = creator_entry(stored) else { continue };
        let mut created = stored.clone();
        created.shift_remove("status");
        created.insert("kind".into(), Value::String(kind.clone()));
        created.insert("apiVersion".into(), Value::String(api_version.clone()));
        if let Some(Value::Object(meta)) = created.get_mut("metadata") {
            meta.shift_remove("managedFields");
        }
        let manager = entry["manager"].as_str().expect("manager");
        let write = Write {
            manager,
            api_version: &api_version,
            subresource: "",
            shape: schema::root_shape(group, version, &kind),
            status_subresource: info.subresources.iter().any(|s| s == "status"),
            now: entry["time"].as_str().expect("time"),
        };
        fieldmanager::update(Some(&super::zero(info)), &mut created, &write);
        let recorded = created["metadata"]["managedFields"].as_array().and_then(|e| e.first()).cloned();
        compared += 1;
        let got = recorded.as_ref().and_then(|e| e.get("fieldsV1"));
        if got != entry.get("fieldsV1") {
            let name = stored["metadata"]["name"].as_str().unwrap_or("");
            mismatches.push(format!("{kind} {name}: recorded {got:?}, kube {:?}", entry.get("fieldsV1")));
        }
    }
    (compared, mismatches)
}

#[test]
fn a_create_owns_the_fields_kube_apiserver_records() {
    let registry = Registry::builtin();
    let mut mismatches = Vec::new();
    for name in LISTS {
        let (compared, found) = compare_list(&registry, name);
        assert!(compared > 0, "{name}: no item with a single creator's Update entry");
        mismatches.extend(found);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
