//! What the server knows about Kubernetes resources: the registry of built-in
//! types (`registry`), object keys (`key`), name validation (`validation`), and
//! the discovery (`discovery`) and OpenAPI (`openapi`) documents derived from
//! the committed tables in `generated/`.
//!
//! Invariant: no I/O. Tables are compiled in (`generated/`), produced by the
//! generator in `tools/gen-tables` from `../shared/k8s-openapi`, and committed;
//! the build never reads `../shared`.
//! Invariant: nothing here knows HTTP or `metav1.Status`: functions return
//! documents and field errors, the API layer sends them.

pub mod discovery;
mod generated;
pub mod key;
pub mod openapi;
pub mod registry;
pub mod selector;
pub mod validation;
