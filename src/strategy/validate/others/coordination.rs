//! Validation of the `coordination.k8s.io` kinds with kube-apiserver v1.36's
//! rules and words (`pkg/apis/coordination/validation/validation.go`:
//! ValidateLeaseSpec).

use super::common::*;
use crate::types::validation::FieldError;

pub fn create(kind: &str, object: &Fields) -> Vec<FieldError> {
    if kind != "Lease" {
        return Vec::new();
    }
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    if let Some(duration) = int(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(invalid_raw("spec.leaseDurationSeconds", &duration.to_string(), "must be greater than 0"));
    }
    if let Some(transitions) = int(spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(invalid_raw("spec.leaseTransitions", &transitions.to_string(), "must be greater than or equal to 0"));
    }
    if !text(spec, "preferredHolder").is_empty() && text(spec, "strategy").is_empty() {
        errs.push(FieldError::forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // pkg/apis/coordination/validation/validation.go: ValidateLeaseSpec
    #[test]
    fn lease_spec() {
        let lease = |spec| json!({"spec": spec}).as_object().cloned().unwrap_or_default();
        assert!(create("Lease", &lease(json!({"holderIdentity": "a", "leaseDurationSeconds": 15}))).is_empty());
        let errs: Vec<String> =
            create("Lease", &lease(json!({"leaseDurationSeconds": 0, "leaseTransitions": -1, "preferredHolder": "b"})))
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(
            errs,
            vec![
                "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
                "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
            ]
        );
    }
}
