//! Create and update rules per kind (kube's `PrepareForCreate`,
//! `PrepareForUpdate`, and the update checks that are not validation): the
//! status a create starts with, what an update of the resource or of its
//! status subresource keeps from the stored object, and when
//! `metadata.generation` moves. One file per group, as `defaults/`.

pub mod core;
mod others;

use super::{Context, Object, Rejection};
use crate::types::registry::ResourceInfo;

/// kube's `PrepareForCreate` for `info`'s kind.
pub fn prepare_for_create(info: &ResourceInfo, object: &mut Object, context: &Context) {
    match info.group.as_str() {
        "" => core::prepare_for_create(&info.kind, object, context),
        group => others::prepare_for_create(group, &info.kind, object, context),
    }
}

/// kube's `PrepareForUpdate` for `info`'s kind; `old` is the stored version.
pub fn prepare_for_update(
    info: &ResourceInfo,
    object: &mut Object,
    old: &Object,
    context: &Context,
) -> Result<(), Rejection> {
    match info.group.as_str() {
        "" => core::prepare_for_update(&info.kind, object, old, context),
        group => others::prepare_for_update(group, &info.kind, object, old, context),
    }
}
