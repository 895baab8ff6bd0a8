//! Defaults of the `rbac.authorization.k8s.io` group's kinds.

use crate::strategy::Object;

pub fn apply(_kind: &str, _object: &mut Object) {}
