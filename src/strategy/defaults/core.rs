//! Defaults of the core (`v1`) group's kinds, and of the pod template every
//! workload embeds.

use crate::strategy::Object;
use serde_json::Value;

pub fn apply(_kind: &str, _object: &mut Object) {}

/// Defaults a `PodTemplateSpec` (`spec.template` of a workload), as kube
/// defaults the pod spec inside every template.
pub fn pod_template_spec(_template: &mut Value) {}
