//! Validation of the core (`v1`) group's kinds, and of the pod template
//! every workload embeds.

use crate::strategy::Object;
use crate::types::validation::FieldError;
use serde_json::Value;

pub fn create(_kind: &str, _object: &Object) -> Vec<FieldError> {
    Vec::new()
}

pub fn update(_kind: &str, _object: &Object, _old: &Object, _subresource: Option<&str>) -> Vec<FieldError> {
    Vec::new()
}

/// kube's `ValidatePodTemplateSpec` of `template` at `path`
/// (`spec.template`), for the workloads that embed one.
pub fn pod_template_spec(_template: &Value, _path: &str) -> Vec<FieldError> {
    Vec::new()
}
