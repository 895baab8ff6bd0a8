//! Create and update rules of the core (`v1`) group's kinds.

use crate::strategy::{Context, Object, Rejection};

pub fn prepare_for_create(_kind: &str, _object: &mut Object, _context: &Context) {}

pub fn prepare_for_update(
    _kind: &str,
    _object: &mut Object,
    _old: &Object,
    _context: &Context,
) -> Result<(), Rejection> {
    Ok(())
}
