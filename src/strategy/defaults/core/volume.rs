//! Defaults of volume sources: a pod's volumes (`SetDefaults_Volume` and the
//! per-source functions the generated defaulter calls) and a
//! PersistentVolume's source. Facts: pkg/apis/core/v1/defaults.go, and the
//! `+default` markers of staging/src/k8s.io/api/core/v1/types.go (the same
//! values appear as `default` in kube's OpenAPI v3 document for /api/v1).

use super::fields::{default_ptr, default_str, each_mut, object_mut, str_of};
use super::image::pull_policy;
use super::pod::object_field_selector;
use crate::strategy::Object;
use serde_json::{json, Value};

/// The file mode kube gives secret, configMap, downwardAPI and projected
/// volumes' files (0644): v1.SecretVolumeSourceDefaultMode and its siblings.
const DEFAULT_MODE: i64 = 0o644;

/// One hour: SetDefaults_ServiceAccountTokenProjection's expirationSeconds.
const TOKEN_EXPIRATION_SECONDS: i64 = 3600;

/// A pod volume (`spec.volumes[i]`).
pub fn pod_volume(volume: &mut Object) {
    // SetDefaults_Volume: no source at all means an emptyDir.
    if !volume.iter().any(|(key, value)| key != "name" && !value.is_null()) {
        volume.insert("emptyDir".into(), json!({}));
    }
    if let Some(image) = object_mut(volume, "image") {
        // SetDefaults_Volume (ImageVolume): pullPolicy by the reference's tag.
        if str_of(image, "pullPolicy").is_empty() {
            let policy = pull_policy(str_of(image, "reference"));
            image.insert("pullPolicy".into(), json!(policy));
        }
    }
    if let Some(host_path) = object_mut(volume, "hostPath") {
        host_path_source(host_path);
    }
    for source in ["secret", "configMap"] {
        if let Some(source) = object_mut(volume, source) {
            default_ptr(source, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward_api) = object_mut(volume, "downwardAPI") {
        default_ptr(downward_api, "defaultMode", json!(DEFAULT_MODE));
        downward_api_items(downward_api);
    }
    if let Some(projected) = object_mut(volume, "projected") {
        default_ptr(projected, "defaultMode", json!(DEFAULT_MODE));
        for source in each_mut(projected, "sources") {
            if let Some(downward_api) = object_mut(source, "downwardAPI") {
                downward_api_items(downward_api);
            }
            if let Some(token) = object_mut(source, "serviceAccountToken") {
                default_ptr(token, "expirationSeconds", json!(TOKEN_EXPIRATION_SECONDS));
            }
        }
    }
    if let Some(claim_spec) = object_mut(volume, "ephemeral")
        .and_then(|e| object_mut(e, "volumeClaimTemplate"))
        .and_then(|t| object_mut(t, "spec"))
    {
        persistent_volume_claim_spec(claim_spec);
    }
    legacy_sources(volume);
}

/// A PersistentVolume's `spec` source fields.
pub fn persistent_volume_source(spec: &mut Object) {
    if let Some(host_path) = object_mut(spec, "hostPath") {
        host_path_source(host_path);
    }
    legacy_sources(spec);
}

/// SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem.
/// Its ResourceList defaults too (SetDefaults_ResourceList on limits and requests).
pub fn persistent_volume_claim_spec(spec: &mut Object) {
    default_ptr(spec, "volumeMode", json!("Filesystem"));
    super::resources::round_up_requirements(spec, "resources");
}

/// SetDefaults_HostPathVolumeSource: type "" (HostPathUnset) when nil.
fn host_path_source(host_path: &mut Object) {
    default_ptr(host_path, "type", json!(""));
}

fn downward_api_items(downward_api: &mut Object) {
    for item in each_mut(downward_api, "items") {
        if let Some(field_ref) = object_mut(item, "fieldRef") {
            object_field_selector(field_ref);
        }
    }
}

/// The in-tree sources with `+default` markers (the same in a pod volume
/// and a PersistentVolume): iSCSI, RBD, Azure disk, ScaleIO.
fn legacy_sources(source: &mut Object) {
    if let Some(iscsi) = object_mut(source, "iscsi") {
        // ISCSIVolumeSource.ISCSIInterface +default="default"
        default_str(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = object_mut(source, "rbd") {
        // RBDVolumeSource: pool +default="rbd", user +default="admin", keyring +default="/etc/ceph/keyring"
        default_str(rbd, "pool", "rbd");
        default_str(rbd, "user", "admin");
        default_str(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(azure_disk) = object_mut(source, "azureDisk") {
        // AzureDiskVolumeSource: cachingMode +default=ReadWrite, fsType +default="ext4",
        // readOnly +default=false, kind +default=Shared (all pointers).
        default_ptr(azure_disk, "cachingMode", json!("ReadWrite"));
        default_ptr(azure_disk, "fsType", json!("ext4"));
        default_ptr(azure_disk, "readOnly", Value::Bool(false));
        default_ptr(azure_disk, "kind", json!("Shared"));
    }
    if let Some(scale_io) = object_mut(source, "scaleIO") {
        // ScaleIOVolumeSource: storageMode +default="ThinProvisioned", fsType +default="xfs"
        default_str(scale_io, "storageMode", "ThinProvisioned");
        default_str(scale_io, "fsType", "xfs");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(value: Value) -> Value {
        let mut object = value.as_object().cloned().unwrap_or_default();
        pod_volume(&mut object);
        Value::Object(object)
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Volume
    #[test]
    fn no_source_is_empty_dir() {
        assert_eq!(volume(json!({"name": "v"})), json!({"name": "v", "emptyDir": {}}));
        assert_eq!(
            volume(json!({"name": "v", "emptyDir": {"medium": "Memory"}})),
            json!({"name": "v", "emptyDir": {"medium": "Memory"}})
        );
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource,
    // SetDefaults_ServiceAccountTokenProjection, SetDefaults_ObjectFieldSelector, SetDefaults_HostPathVolumeSource
    #[test]
    fn source_defaults() {
        let cases = [
            (json!({"secret": {"secretName": "s"}}), "/secret/defaultMode", json!(420)),
            (json!({"configMap": {"name": "c", "defaultMode": 256}}), "/configMap/defaultMode", json!(256)),
            (json!({"configMap": {"name": "c"}}), "/configMap/defaultMode", json!(420)),
            (
                json!({"downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "metadata.name"}}]}}),
                "/downwardAPI/items/0/fieldRef/apiVersion",
                json!("v1"),
            ),
            (json!({"downwardAPI": {}}), "/downwardAPI/defaultMode", json!(420)),
            (
                json!({"projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}),
                "/projected/sources/0/serviceAccountToken/expirationSeconds",
                json!(3600),
            ),
            (json!({"projected": {"sources": []}}), "/projected/defaultMode", json!(420)),
            (json!({"hostPath": {"path": "/x"}}), "/hostPath/type", json!("")),
            (json!({"hostPath": {"path": "/x", "type": "Directory"}}), "/hostPath/type", json!("Directory")),
            (json!({"image": {"reference": "img:latest"}}), "/image/pullPolicy", json!("Always")),
            (json!({"image": {"reference": "img:1"}}), "/image/pullPolicy", json!("IfNotPresent")),
            (json!({"rbd": {"image": "i", "monitors": ["m"]}}), "/rbd/pool", json!("rbd")),
            (json!({"rbd": {"image": "i", "monitors": ["m"]}}), "/rbd/keyring", json!("/etc/ceph/keyring")),
            (json!({"iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}}), "/iscsi/iscsiInterface", json!("default")),
            (json!({"azureDisk": {"diskName": "d", "diskURI": "u"}}), "/azureDisk/kind", json!("Shared")),
            (
                json!({"scaleIO": {"gateway": "g", "system": "s", "secretRef": {}}}),
                "/scaleIO/storageMode",
                json!("ThinProvisioned"),
            ),
            (
                json!({"ephemeral": {"volumeClaimTemplate": {"spec": {}}}}),
                "/ephemeral/volumeClaimTemplate/spec/volumeMode",
                json!("Filesystem"),
            ),
        ];
        for (source, pointer, want) in cases {
            let mut v = source.clone();
            if let Some(o) = v.as_object_mut() {
                o.insert("name".into(), json!("v"));
            }
            assert_eq!(volume(v).pointer(pointer), Some(&want), "{source} {pointer}");
        }
    }
}
