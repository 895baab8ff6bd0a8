//! DefaultStorageClass: a new PersistentVolumeClaim that names no storage
//! class (neither `spec.storageClassName`, even empty, nor the beta
//! annotation) gets the default StorageClass: the one annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` (or the beta
//! annotation); of several, the newest (then the first by name).
// plugin/pkg/admission/storage/storageclass/setdefault/admission.go: Admit
// pkg/volume/util/storageclass.go: GetDefaultClass, IsDefaultAnnotation

use super::{Attributes, Object, Operation};
use serde_json::json;

const IS_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
const BETA_IS_DEFAULT_CLASS: &str = "storageclass.beta.kubernetes.io/is-default-class";
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// Whether the plugin acts on this write.
pub fn applies(attributes: &Attributes, claim: &Object) -> bool {
    attributes.operation == Operation::Create
        && attributes.group.is_empty()
        && attributes.resource == "persistentvolumeclaims"
        && attributes.subresource.is_none()
        && super::field(claim, &["spec", "storageClassName"]).is_none()
        && super::field(claim, &["metadata", "annotations", BETA_STORAGE_CLASS]).is_none()
}

/// The default class's name, if any.
pub fn default_class(classes: &[Object]) -> Option<String> {
    newest_default(classes, &[IS_DEFAULT_CLASS, BETA_IS_DEFAULT_CLASS])
}

/// The newest of the classes annotated `"true"` under one of `keys` (of
/// several created in the same second, the first by name).
pub fn newest_default(classes: &[Object], keys: &[&str]) -> Option<String> {
    classes
        .iter()
        .filter(|c| keys.iter().any(|key| super::text(c, &["metadata", "annotations", key]) == "true"))
        .map(|c| (super::text(c, &["metadata", "creationTimestamp"]), super::text(c, &["metadata", "name"])))
        // RFC 3339 at second precision sorts as text.
        .max_by(|a, b| a.0.cmp(b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, name)| name.to_string())
}

pub fn admit(claim: &mut Object, classes: &[Object]) {
    let Some(name) = default_class(classes) else { return };
    if let Some(spec) = super::map_mut(claim, &["spec"]) {
        if !spec.contains_key("storageClassName") {
            spec.insert("storageClassName".into(), json!(name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, created: &str, default: Option<&str>) -> Object {
        let annotations = match default {
            Some(v) => json!({ IS_DEFAULT_CLASS: v }),
            None => json!({}),
        };
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn attributes() -> Attributes<'static> {
        Attributes {
            operation: Operation::Create,
            group: "",
            resource: "persistentvolumeclaims",
            subresource: None,
            namespace: "ns",
            name: "data",
            dry_run: false,
        }
    }

    #[test]
    fn a_claim_without_a_class_gets_the_newest_default() {
        let classes = [
            class("standard", "2026-01-01T00:00:00Z", None),
            class("old", "2026-01-01T00:00:00Z", Some("true")),
            class("new", "2026-02-01T00:00:00Z", Some("true")),
            class("off", "2026-03-01T00:00:00Z", Some("false")),
        ];
        let mut claim = json!({"spec": {"accessModes": ["ReadWriteOnce"]}}).as_object().cloned().unwrap();
        assert!(applies(&attributes(), &claim));
        admit(&mut claim, &classes);
        assert_eq!(claim["spec"]["storageClassName"], "new");
    }

    #[test]
    fn a_named_or_empty_class_is_kept() {
        for spec in [json!({"storageClassName": ""}), json!({"storageClassName": "fast"})] {
            let claim = json!({ "spec": spec }).as_object().cloned().unwrap();
            assert!(!applies(&attributes(), &claim));
        }
        let beta =
            json!({"metadata": {"annotations": {BETA_STORAGE_CLASS: "x"}}, "spec": {}}).as_object().cloned().unwrap();
        assert!(!applies(&attributes(), &beta));
        let mut claim = json!({"spec": {}}).as_object().cloned().unwrap();
        admit(&mut claim, &[class("standard", "2026-01-01T00:00:00Z", None)]);
        assert!(claim["spec"].get("storageClassName").is_none(), "no default class: unchanged");
    }
}
