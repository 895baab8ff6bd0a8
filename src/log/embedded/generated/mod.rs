//! FlatBuffers code generated from `proto/log.fbs` by flatc 25.12.19.
//!
//! `log_generated.rs` is produced by `tools/regen-flatbuffers.sh`, which builds
//! flatc from the `flatc-fork` crate (crates.io only) and must be re-run after any
//! change to the schema; do not edit it by hand. `record.rs` and `snapshot.rs` are
//! the only users: they read records in place with `flatbuffers::root` (verified),
//! never trusting an unverified buffer.

#[allow(
    unused_imports,
    dead_code,
    unsafe_op_in_unsafe_fn,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    deprecated,
    mismatched_lifetime_syntaxes,
    clippy::all
)]
#[rustfmt::skip]
mod log_generated;

pub(crate) use log_generated::shardline::log::{Record, RecordArgs, RecordKind, SnapshotHeader, SnapshotHeaderArgs};
