//! PersistentVolumeClaimResize: a claim's storage request may grow only if
//! the claim is bound and its StorageClass (the same before and after)
//! allows volume expansion.
// plugin/pkg/admission/storage/persistentvolume/resize/admission.go: Validate, allowResize

use super::quantity::resource_list;
use super::{Attributes, Object, Operation, Rejection};
use serde_json::Value;

/// Updates of claims that grow their storage request.
pub fn applies(attributes: &Attributes, claim: &Object, old: Option<&Object>) -> bool {
    let Some(old) = old else { return false };
    let storage =
        |o: &Object| resource_list(super::field(o, &["spec", "resources", "requests"])).get("storage").copied();
    attributes.operation == Operation::Update
        && attributes.group.is_empty()
        && attributes.resource == "persistentvolumeclaims"
        && attributes.subresource.is_none()
        && match (storage(claim), storage(old)) {
            (Some(new), Some(before)) => new.nanos > before.nanos,
            (Some(_), None) => true,
            _ => false,
        }
}

/// `GetPersistentVolumeClaimClass`: the field, else the beta annotation.
fn class_of(claim: &Object) -> &str {
    super::text_opt(claim, &["spec", "storageClassName"])
        .or_else(|| super::text_opt(claim, &["metadata", "annotations", "volume.beta.kubernetes.io/storage-class"]))
        .unwrap_or("")
}

pub fn validate(claim: &Object, old: &Object, classes: &[Object]) -> Result<(), Rejection> {
    if super::text(old, &["status", "phase"]) != "Bound" {
        return Err(Rejection::Forbidden("Only bound persistent volume claims can be expanded".into()));
    }
    let (class, before) = (class_of(claim), class_of(old));
    let allowed = !class.is_empty()
        && class == before
        && classes
            .iter()
            .find(|c| super::text(c, &["metadata", "name"]) == class)
            .and_then(|c| c.get("allowVolumeExpansion"))
            .and_then(Value::as_bool)
            == Some(true);
    if !allowed {
        return Err(Rejection::Forbidden(
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must \
             support resize"
                .into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(size: &str, phase: &str) -> Object {
        json!({"spec": {"storageClassName": "standard", "resources": {"requests": {"storage": size}}}, "status": {"phase": phase}})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn only_bound_claims_of_expandable_classes_grow() {
        let attributes = Attributes {
            operation: Operation::Update,
            group: "",
            resource: "persistentvolumeclaims",
            subresource: None,
            namespace: "ns",
            name: "data",
            dry_run: false,
        };
        let (old, new) = (claim("5Gi", "Bound"), claim("10Gi", "Bound"));
        assert!(applies(&attributes, &new, Some(&old)));
        assert!(!applies(&attributes, &old, Some(&new)), "shrinking is the strategy's to refuse");
        let expandable =
            json!({"metadata": {"name": "standard"}, "allowVolumeExpansion": true}).as_object().cloned().unwrap();
        assert!(validate(&new, &old, std::slice::from_ref(&expandable)).is_ok());
        assert_eq!(
            validate(&new, &claim("5Gi", "Pending"), std::slice::from_ref(&expandable)).unwrap_err(),
            Rejection::Forbidden("Only bound persistent volume claims can be expanded".into())
        );
        assert!(validate(&new, &old, &[]).is_err(), "no class read: not allowed");
    }
}
