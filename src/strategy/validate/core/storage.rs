//! PersistentVolumes and PersistentVolumeClaims
//! (`ValidatePersistentVolumeSpec`, `ValidatePersistentVolumeUpdate`,
//! `ValidatePersistentVolumeClaimSpec`,
//! `ValidatePersistentVolumeClaimUpdate` in
//! `pkg/apis/core/validation/validation.go`).

use super::pod::{csi_driver, node_selector};
use super::quantity::nano_value;
use super::util::*;
use crate::types::validation::FieldError;
use serde_json::{Map, Value};

type Errs = Vec<FieldError>;

const ACCESS_MODES: &[&str] = &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];

/// The PersistentVolumeSource kinds, in kube's check order: the JSON key,
/// and the path kube validates the source under.
const PV_SOURCES: &[(&str, &str)] = &[
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephfs"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// The names kube uses in "may not specify more than 1 volume type".
fn forbidden_name(source: &str) -> &str {
    match source {
        "cephfs" => "cephFS",
        other => other,
    }
}

/// Required fields of the sources checked only for presence.
fn required_fields(source: &str) -> &'static [&'static str] {
    match source {
        "gcePersistentDisk" => &["pdName"],
        "awsElasticBlockStore" | "cinder" | "portworxVolume" => &["volumeID"],
        "glusterfs" => &["endpoints", "path"],
        "rbd" => &["monitors", "image"],
        "quobyte" => &["volume"],
        "cephfs" => &["monitors"],
        "iscsi" => &["targetPortal", "iqn"],
        "flexVolume" => &["driver"],
        "azureFile" => &["secretName", "shareName"],
        "vsphereVolume" => &["volumePath"],
        "photonPersistentDisk" => &["pdID"],
        "azureDisk" => &["diskName", "diskURI"],
        "scaleIO" => &["gateway", "system", "volumeName"],
        "local" | "hostPath" => &["path"],
        "nfs" => &["server", "path"],
        "storageos" => &["volumeName"],
        _ => &[],
    }
}

fn spec_of(object: &Map<String, Value>) -> &Value {
    static EMPTY: Value = Value::Null;
    object.get("spec").unwrap_or(&EMPTY)
}

/// accessModes: supported values, ReadWriteOncePod alone.
fn access_modes(spec: &Value, required_detail: &str) -> Errs {
    let mut errs = Errs::new();
    let modes = list(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", required_detail));
    }
    let (mut once_pod, mut others) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.accessModes", mode, ACCESS_MODES));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            others = true;
        }
    }
    if once_pod && others {
        errs.push(FieldError::forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"));
    }
    errs
}

/// kube's `ValidatePersistentVolumeSpec` (not inline).
pub fn persistent_volume(object: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let mut errs = access_modes(spec, "");
    let capacity = obj(spec, "capacity");
    if capacity.is_empty() {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if !capacity.contains_key("storage") || capacity.len() > 1 {
        let shown: Vec<String> = capacity.iter().map(|(k, v)| format!("{k}:{}", v.as_str().unwrap_or(""))).collect();
        let bare = format!("core.ResourceList{{{}}}", shown.join(", "));
        errs.push(FieldError::with_bare_value(
            "spec.capacity",
            crate::types::validation::FieldErrorType::NotSupported,
            &bare,
            "supported values: \"storage\"",
        ));
    }
    for (name, quantity) in capacity {
        let field = key("spec.capacity", name);
        let text = quantity.as_str().unwrap_or("");
        let Some(value) = nano_value(text) else {
            continue;
        };
        // validateBasicResource prints the whole value, rounded away from
        // zero, as Quantity.Value() does.
        if value < 0 {
            let whole = value.saturating_sub(999_999_999) / 1_000_000_000;
            errs.push(invalid_int(
                &field,
                i64::try_from(whole).unwrap_or(i64::MIN),
                "must be a valid resource quantity",
            ));
        }
        if value <= 0 {
            errs.push(FieldError::invalid(&field, text, "must be greater than zero"));
        }
    }
    const POLICIES: &[&str] = &["Delete", "Recycle", "Retain"];
    let policy = text(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("spec.persistentVolumeReclaimPolicy", policy, POLICIES));
    }
    let mut affinity_set = false;
    if let Some(affinity) = spec.get("nodeAffinity").filter(|v| v.is_object()) {
        affinity_set = true;
        match affinity.get("required").filter(|v| v.is_object()) {
            Some(required) => errs.extend(node_selector(required, "spec.nodeAffinity.required")),
            None => {
                errs.push(FieldError::required("spec.nodeAffinity.required", "must specify required node constraints"))
            }
        }
    }
    errs.extend(pv_source(spec, affinity_set));
    let host_root = spec
        .pointer("/hostPath/path")
        .and_then(Value::as_str)
        .is_some_and(|p| p.trim_end_matches('/').is_empty() && !p.is_empty());
    if host_root && policy == "Recycle" {
        errs.push(FieldError::forbidden(
            "spec.persistentVolumeReclaimPolicy",
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = text(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(dns1123_subdomain("spec.storageClassName", class));
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeMode", mode, VOLUME_MODES));
        }
    }
    errs
}

/// Exactly one PersistentVolumeSource.
fn pv_source(spec: &Value, affinity_set: bool) -> Errs {
    let mut errs = Errs::new();
    let mut count = 0;
    for (source, path_name) in PV_SOURCES {
        let Some(value) = spec.get(*source).filter(|v| v.is_object()) else {
            continue;
        };
        // kube counts flexVolume without the "more than 1" check.
        if count > 0 && *source != "flexVolume" {
            errs.push(FieldError::forbidden(
                &child("spec", forbidden_name(source)),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let path = child("spec", path_name);
        if *source == "csi" {
            errs.extend(csi_driver(text(value, "driver"), &child(&path, "driver")));
            if text(value, "volumeHandle").is_empty() {
                errs.push(FieldError::required(&child(&path, "volumeHandle"), ""));
            }
            continue;
        }
        for field in required_fields(source) {
            let missing = match value.get(*field) {
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => true,
            };
            if missing {
                errs.push(FieldError::required(&child(&path, field), ""));
                if *source == "local" || *source == "hostPath" {
                    break;
                }
            }
        }
        if *source == "local" && !affinity_set {
            errs.push(FieldError::required("spec.nodeAffinity", "Local volume requires node affinity"));
        }
    }
    if count == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    errs
}

/// The source fields of a PersistentVolume's spec (what
/// `spec.persistentvolumesource` holds).
fn pv_source_fields(spec: &Value) -> Map<String, Value> {
    PV_SOURCES.iter().filter_map(|(k, _)| spec.get(*k).map(|v| (k.to_string(), v.clone()))).collect()
}

/// kube's `ValidatePersistentVolumeUpdate`.
pub fn persistent_volume_update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let old_spec = spec_of(old);
    let mut errs = persistent_volume(object);
    let mut new_source = pv_source_fields(spec);
    let old_source = pv_source_fields(old_spec);
    // A CSI controllerExpandSecretRef may be added.
    let old_has_expand = old_spec.pointer("/csi/controllerExpandSecretRef").is_some();
    if !old_has_expand {
        if let Some(Value::Object(csi)) = new_source.get_mut("csi") {
            csi.remove("controllerExpandSecretRef");
        }
    }
    let (new_source, old_source) = (Value::Object(new_source), Value::Object(old_source));
    if !semantic_eq(Some(&new_source), Some(&old_source)) {
        let diff = spec_diff(&old_source, &new_source, "spec");
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            &format!("spec.persistentvolumesource is immutable after creation\n{diff}"),
        ));
    }
    if spec.get("volumeMode") != old_spec.get("volumeMode") {
        errs.push(FieldError::invalid_bare("volumeMode", &go_value(spec.get("volumeMode")), "field is immutable"));
    }
    if has(old_spec, "nodeAffinity") && !semantic_eq(spec.get("nodeAffinity"), old_spec.get("nodeAffinity")) {
        errs.push(FieldError::invalid_bare(
            "nodeAffinity",
            &spec.get("nodeAffinity").map_or_else(|| "null".to_string(), Value::to_string),
            "field is immutable, except for updating from beta label to GA",
        ));
    }
    errs
}

/// kube's `ValidatePersistentVolumeClaimSpec` at `spec`.
pub fn claim_spec(spec: &Value) -> Errs {
    let mut errs = access_modes(spec, "at least 1 access mode is required");
    if let Some(selector) = spec.get("selector") {
        errs.extend(crate::types::validation::validate_label_selector(selector, "spec.selector"));
    }
    let storage_field = "spec.resources[storage]";
    match spec.pointer("/resources/requests/storage").and_then(Value::as_str) {
        None => errs.push(FieldError::required(storage_field, "")),
        Some(text) => match nano_value(text) {
            Some(v) if v <= 0 => errs.push(FieldError::invalid(storage_field, text, "must be greater than zero")),
            _ => {}
        },
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str).filter(|c| !c.is_empty()) {
        errs.extend(dns1123_subdomain("spec.storageClassName", class));
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeMode", mode, VOLUME_MODES));
        }
    }
    for field in ["dataSource", "dataSourceRef"] {
        if let Some(source) = spec.get(field).filter(|v| v.is_object()) {
            errs.extend(data_source(source, &child("spec", field)));
        }
    }
    if let Some(class) = spec.get("volumeAttributesClassName").and_then(Value::as_str).filter(|c| !c.is_empty()) {
        errs.extend(dns1123_subdomain("spec.volumeAttributesClassName", class));
    }
    errs
}

/// kube's `validateDataSource` / `validateDataSourceRef`.
fn data_source(source: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    for field in ["name", "kind"] {
        if text(source, field).is_empty() {
            errs.push(FieldError::required(&child(path, field), ""));
        }
    }
    let group = text(source, "apiGroup");
    let kind = text(source, "kind");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errs.push(FieldError::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() {
        errs.extend(dns1123_subdomain(&child(path, "apiGroup"), group));
    }
    errs
}

/// kube's `ValidatePersistentVolumeClaim`.
pub fn claim(object: &Map<String, Value>) -> Errs {
    claim_spec(spec_of(object))
}

/// kube's `ValidatePersistentVolumeClaimUpdate`: the spec may not change
/// except `volumeName` once (from empty), a class set from nil, and, for a
/// bound claim, `resources.requests.storage` growth.
pub fn claim_update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let old_spec = spec_of(old);
    let mut errs = claim(object);
    let mut new_clone = spec.clone();
    let mut old_clone = old_spec.clone();
    if text(old_spec, "volumeName").is_empty() {
        set_or_remove(&mut old_clone, "volumeName", spec.get("volumeName"));
    }
    if spec.get("storageClassName").is_some() && old_spec.get("storageClassName").is_none() {
        set_or_remove(&mut new_clone, "storageClassName", None);
    }
    // The claim's status is the stored one (kube's PrepareForUpdate keeps it).
    let bound = old.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str) == Some("Bound");
    if bound {
        if let Some(requests) = new_clone.pointer_mut("/resources/requests").and_then(Value::as_object_mut) {
            match old_spec.pointer("/resources/requests/storage") {
                Some(v) => requests.insert("storage".to_string(), v.clone()),
                None => requests.remove("storage"),
            };
        }
        if new_clone.get("volumeAttributesClassName").is_some() {
            let old_class = old_spec.get("volumeAttributesClassName").cloned();
            set_or_remove(&mut new_clone, "volumeAttributesClassName", old_class.as_ref());
        }
    }
    if !semantic_eq(Some(&new_clone), Some(&old_clone)) {
        let diff = spec_diff(&old_clone, &new_clone, "spec");
        errs.push(FieldError::forbidden(
            "spec",
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{diff}"
            ),
        ));
    }
    let size =
        |s: &Value| s.pointer("/resources/requests/storage").and_then(Value::as_str).and_then(nano_value).unwrap_or(0);
    if size(spec) < size(old_spec) {
        // RecoverVolumeExpansionFailure is on: shrinking is allowed down to
        // (but not to or below) the capacity in status.
        let status_capacity = old
            .get("status")
            .and_then(|s| s.pointer("/capacity/storage"))
            .and_then(Value::as_str)
            .and_then(nano_value)
            .unwrap_or(0);
        if size(spec) <= status_capacity {
            errs.push(FieldError::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
    }
    if spec.get("volumeMode") != old_spec.get("volumeMode") {
        errs.push(FieldError::invalid_bare("volumeMode", &go_value(spec.get("volumeMode")), "field is immutable"));
    }
    errs
}

fn set_or_remove(target: &mut Value, field: &str, value: Option<&Value>) {
    if let Some(o) = target.as_object_mut() {
        match value {
            Some(v) => o.insert(field.to_string(), v.clone()),
            None => o.remove(field),
        };
    }
}

/// kube's `ValidatePersistentVolumeClaimStatusUpdate` (the rules a status
/// writer hits; kube names the spec field with a capital `S`).
pub fn claim_status_update(object: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    if list(spec_of(object), "accessModes").is_empty() {
        errs.push(FieldError::required("Spec.accessModes", ""));
    }
    let status = object.get("status").cloned().unwrap_or(Value::Null);
    for (name, quantity) in obj(&status, "capacity") {
        let value = quantity.as_str().and_then(nano_value).unwrap_or(0);
        if value < 0 {
            let whole = value.saturating_sub(999_999_999) / 1_000_000_000;
            let field = key("status.capacity", name);
            errs.push(invalid_int(
                &field,
                i64::try_from(whole).unwrap_or(i64::MIN),
                "must be a valid resource quantity",
            ));
        }
    }
    errs
}
