//! Validation of every served built-in kind with kube-apiserver's rules and
//! words (`field.Error`s: FieldValueRequired, FieldValueInvalid, ...), for
//! create and for update (immutable fields). One file per group.

pub mod core;
mod others;

use super::Object;
use crate::types::validation::FieldError;

/// kube's `Validate` for a new object of (group, kind).
pub fn create(group: &str, kind: &str, object: &Object) -> Vec<FieldError> {
    match group {
        "" => core::create(kind, object),
        _ => others::create(group, kind, object),
    }
}

/// kube's `ValidateUpdate` (or `ValidateStatusUpdate` when `subresource` is
/// `status`) of `object` replacing `old`.
pub fn update(group: &str, kind: &str, object: &Object, old: &Object, subresource: Option<&str>) -> Vec<FieldError> {
    match group {
        "" => core::update(kind, object, old, subresource),
        _ => others::update(group, kind, object, old, subresource),
    }
}
