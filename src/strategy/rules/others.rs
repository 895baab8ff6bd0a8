//! Create and update rules of the kinds outside the core group (apps, batch,
//! rbac, coordination, ...).

use crate::strategy::{Context, Object, Rejection};

pub fn prepare_for_create(_group: &str, _kind: &str, _object: &mut Object, _context: &Context) {}

pub fn prepare_for_update(
    _group: &str,
    _kind: &str,
    _object: &mut Object,
    _old: &Object,
    _context: &Context,
) -> Result<(), Rejection> {
    Ok(())
}
