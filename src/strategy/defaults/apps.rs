//! Defaults of the `apps` group's kinds.

use crate::strategy::Object;

pub fn apply(_kind: &str, _object: &mut Object) {}
