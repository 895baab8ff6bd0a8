//! StorageObjectInUseProtection: a new PersistentVolumeClaim gets the
//! `kubernetes.io/pvc-protection` finalizer and a new PersistentVolume the
//! `kubernetes.io/pv-protection` one, so neither goes away while in use; the
//! protection controllers of kube-controller-manager remove them when it is
//! safe (without them, a deleted claim or volume stays Terminating until its
//! finalizer is removed by hand: docs/admission.md).
// plugin/pkg/admission/storage/storageobjectinuseprotection/admission.go: admitPV, admitPVC
// (fixture: tests/fixtures/kube-v1.36/lists/core_v1_persistentvolumeclaims.json)

use super::Object;
use serde_json::{json, Value};

pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";

/// The finalizer a new object of this core resource gets, if any.
pub fn finalizer_for(resource: &str) -> Option<&'static str> {
    match resource {
        "persistentvolumeclaims" => Some(PVC_PROTECTION_FINALIZER),
        "persistentvolumes" => Some(PV_PROTECTION_FINALIZER),
        _ => None,
    }
}

pub fn admit(object: &mut Object, finalizer: &str) {
    let Some(meta) = super::map_mut(object, &["metadata"]) else { return };
    let mut finalizers: Vec<Value> = meta.get("finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
    if !finalizers.iter().any(|f| f.as_str() == Some(finalizer)) {
        finalizers.push(json!(finalizer));
        meta.insert("finalizers".into(), Value::Array(finalizers));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_and_volumes_get_their_finalizer_once() {
        let mut claim =
            json!({"metadata": {"name": "data", "finalizers": ["example.com/x"]}}).as_object().cloned().unwrap();
        admit(&mut claim, finalizer_for("persistentvolumeclaims").unwrap());
        admit(&mut claim, PVC_PROTECTION_FINALIZER);
        assert_eq!(claim["metadata"]["finalizers"], json!(["example.com/x", "kubernetes.io/pvc-protection"]));
        let mut volume = Object::new();
        admit(&mut volume, finalizer_for("persistentvolumes").unwrap());
        assert_eq!(volume["metadata"]["finalizers"], json!(["kubernetes.io/pv-protection"]));
        assert_eq!(finalizer_for("pods"), None);
    }
}
