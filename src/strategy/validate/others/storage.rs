//! CSINode and CSIStorageCapacity validation with kube-apiserver v1.36's
//! words (`pkg/apis/storage/validation/validation.go`: `ValidateCSINode`,
//! `ValidateCSINodeUpdate`, `ValidateCSIStorageCapacity`,
//! `ValidateCSIStorageCapacityUpdate`): each driver a CSI driver name, listed
//! once, with a node ID of at most 256 characters (the longer limit kube
//! allows since CSINodeLongerID), a non-negative allocatable count and unique
//! qualified topology keys, the rest of a driver (name, node ID, topology
//! keys) fixed;
//! a capacity's node topology a label selector, its class name a DNS
//! subdomain and its quantities non-negative, topology and class fixed.
//! A driver's `allocatable` may change (MutableCSINodeAllocatableCount, on by
//! default since v1.35). Read at kubernetes/kubernetes master of 2026 (the
//! gate's two branches; the v1.36 gate table says it is on).
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, FieldError};
use serde_json::Value;

/// `csiNodeIDLongerMaxLength`.
const CSI_NODE_ID_MAX_LEN: usize = 256;

/// kube's `ValidateCSIDriverName`.
pub fn csi_driver_name(name: &str, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(field, ""));
    }
    if name.len() > 63 {
        errs.push(FieldError::too_long(field, 63));
    }
    for message in validation::is_dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(field, name, &message));
    }
    errs
}

pub fn csi_node(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, driver) in list(spec, "drivers").iter().enumerate() {
        let path = format!("spec.drivers[{i}]");
        let driver = driver.as_object().unwrap_or(&empty);
        let name = text(driver, "name");
        errs.extend(csi_driver_name(name, &format!("{path}.name")));
        let node_id = text(driver, "nodeID");
        let id_path = format!("{path}.nodeID");
        if node_id.is_empty() {
            errs.push(FieldError::required(&id_path, ""));
        }
        if node_id.len() > CSI_NODE_ID_MAX_LEN {
            errs.push(FieldError::invalid(
                &id_path,
                node_id,
                &format!("must be {CSI_NODE_ID_MAX_LEN} characters or less"),
            ));
        }
        if let Some(count) = obj(driver, "allocatable").and_then(|a| int(a, "count")).filter(|c| *c < 0) {
            errs.push(invalid_raw(
                &format!("{path}.allocatable.count"),
                &count.to_string(),
                "must be greater than or equal to 0",
            ));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(&format!("{path}.name"), name));
        }
        names.push(name);
        let mut keys: Vec<&str> = Vec::new();
        for key in list(driver, "topologyKeys") {
            let key = key.as_str().unwrap_or_default();
            if key.is_empty() {
                errs.push(FieldError::required(&path, ""));
            }
            if keys.contains(&key) {
                errs.push(FieldError::duplicate(&path, key));
            }
            keys.push(key);
            for message in validation::is_qualified_name(key) {
                errs.push(FieldError::invalid(&path, key, &message));
            }
        }
    }
    errs
}

/// `ValidateCSINodeUpdate`: a driver present before (by name) is unchanged
/// but for `allocatable` (MutableCSINodeAllocatableCount, on since v1.35):
/// kube compares the whole driver and prints it, allocatable cleared, at
/// `spec.drivers`.
pub fn csi_node_update(object: &Fields, old: &Fields) -> Vec<FieldError> {
    let drivers = |o: &Fields| -> Vec<Fields> {
        obj(o, "spec")
            .map(|s| list(s, "drivers"))
            .unwrap_or_default()
            .iter()
            .filter_map(|d| d.as_object().cloned())
            .collect()
    };
    let (new_drivers, old_drivers) = (drivers(object), drivers(old));
    // nil and empty lists are equal to apiequality.Semantic.
    fn keys(driver: &Fields) -> Option<&Vec<Value>> {
        driver.get("topologyKeys").and_then(Value::as_array).filter(|a| !a.is_empty())
    }
    let mut errs = Vec::new();
    for old_driver in &old_drivers {
        for new_driver in &new_drivers {
            if text(old_driver, "name") != text(new_driver, "name") {
                continue;
            }
            if text(new_driver, "nodeID") != text(old_driver, "nodeID") || keys(new_driver) != keys(old_driver) {
                let shown = format!(
                    "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{}, Allocatable:(*storage.VolumeNodeResources)(nil)}}",
                    validation::go_quote(text(new_driver, "name")),
                    validation::go_quote(text(new_driver, "nodeID")),
                    go_string_slice(new_driver.get("topologyKeys").and_then(Value::as_array)),
                );
                errs.push(FieldError::invalid_bare("spec.drivers", &shown, IMMUTABLE));
            }
        }
    }
    errs
}

pub fn csi_storage_capacity(object: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(topology) = obj(object, "nodeTopology") {
        errs.extend(validate_label_selector(topology, "nodeTopology"));
    }
    let class = text(object, "storageClassName");
    for message in validation::is_dns1123_subdomain(class) {
        errs.push(FieldError::invalid("storageClassName", class, &message));
    }
    for field in ["capacity", "maximumVolumeSize"] {
        if let Some(quantity) = object.get(field).and_then(Value::as_str) {
            if quantity.starts_with('-') && crate::strategy::quantity::canonical(quantity).is_ok_and(|c| c != "0") {
                errs.push(FieldError::invalid(field, quantity, "must be greater than or equal to 0"));
            }
        }
    }
    errs
}

/// `ValidateCSIStorageCapacityUpdate`: node topology and class are fixed.
pub fn csi_storage_capacity_update(object: &Fields, old: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if object.get("nodeTopology") != old.get("nodeTopology") {
        errs.push(FieldError::invalid_bare("nodeTopology", &go_label_selector(obj(object, "nodeTopology")), IMMUTABLE));
    }
    if text(object, "storageClassName") != text(old, "storageClassName") {
        errs.push(FieldError::invalid("storageClassName", text(object, "storageClassName"), IMMUTABLE));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn csi_nodes() {
        let valid = fields(json!({"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1",
            "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 8}}]}}));
        assert!(messages(csi_node(&valid)).is_empty());
        assert_eq!(
            messages(csi_node(&fields(json!({"spec": {"drivers": [
                {"name": "csi.example.com", "nodeID": "", "allocatable": {"count": -1}, "topologyKeys": ["a", "a", ""]},
                {"name": "csi.example.com", "nodeID": "x".repeat(257)},
                {"name": "Bad_Driver", "nodeID": "n"}]}})))),
            [
                "spec.drivers[0].nodeID: Required value".to_string(),
                "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0".into(),
                "spec.drivers[0]: Duplicate value: \"a\"".into(),
                "spec.drivers[0]: Required value".into(),
                "spec.drivers[0]: Invalid value: \"\": name part must be non-empty".into(),
                "spec.drivers[0]: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into(),
                format!("spec.drivers[1].nodeID: Invalid value: \"{}\": must be 256 characters or less", "x".repeat(257)),
                "spec.drivers[1].name: Duplicate value: \"csi.example.com\"".into(),
                "spec.drivers[2].name: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
            ]
        );
        let changed = fields(json!({"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n2",
            "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 8}}]}}));
        assert_eq!(
            messages(csi_node_update(&changed, &valid)),
            ["spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"csi.example.com\", NodeID:\"n2\", TopologyKeys:[]string{\"topology.example.com/zone\"}, Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"]
        );
        assert!(csi_node_update(&valid, &valid).is_empty());
        // The allocatable count may change; an empty key list is no list.
        let resized = fields(json!({"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1",
            "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 16}}]}}));
        assert!(csi_node_update(&resized, &valid).is_empty());
        let bare = fields(json!({"spec": {"drivers": [{"name": "d.example.com", "nodeID": "n"}]}}));
        let empty_keys =
            fields(json!({"spec": {"drivers": [{"name": "d.example.com", "nodeID": "n", "topologyKeys": []}]}}));
        assert!(csi_node_update(&empty_keys, &bare).is_empty());
        let keyed =
            fields(json!({"spec": {"drivers": [{"name": "d.example.com", "nodeID": "n", "topologyKeys": ["k"]}]}}));
        assert_eq!(
            messages(csi_node_update(&bare, &keyed)),
            ["spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"d.example.com\", NodeID:\"n\", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"]
        );
    }

    #[test]
    fn csi_storage_capacities() {
        let valid = fields(
            json!({"storageClassName": "fast", "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}}),
        );
        assert!(messages(csi_storage_capacity(&valid)).is_empty());
        assert_eq!(
            messages(csi_storage_capacity(&fields(json!({"storageClassName": "Fast", "capacity": "-1",
                "maximumVolumeSize": "-0"})))),
            [
                "storageClassName: Invalid value: \"Fast\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "capacity: Invalid value: \"-1\": must be greater than or equal to 0",
            ]
        );
        let moved = fields(json!({"storageClassName": "slow", "capacity": "10Gi", "nodeTopology": {}}));
        assert_eq!(
            messages(csi_storage_capacity_update(&moved, &valid)),
            [
                "nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable",
            ]
        );
    }
}
