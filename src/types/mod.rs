//! What the server knows about Kubernetes resources: the registry of built-in
//! types, object keys, name validation, and the discovery and OpenAPI documents
//! derived from the committed schema tables.
//!
//! Invariant: no I/O. Tables are compiled in (`generated/`), produced by the
//! generator in `tools/gen-tables` from `../shared/k8s-openapi`.

pub mod key;
pub mod registry;
pub mod discovery;
pub mod openapi;
pub mod selector;
pub mod validation;
