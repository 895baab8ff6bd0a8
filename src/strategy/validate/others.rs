//! Validation of the kinds outside the core group (apps, batch, rbac,
//! coordination, ...).

use crate::strategy::Object;
use crate::types::validation::FieldError;

pub fn create(_group: &str, _kind: &str, _object: &Object) -> Vec<FieldError> {
    Vec::new()
}

pub fn update(
    _group: &str,
    _kind: &str,
    _object: &Object,
    _old: &Object,
    _subresource: Option<&str>,
) -> Vec<FieldError> {
    Vec::new()
}
