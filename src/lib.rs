//! Shardline: a thread-per-core Kubernetes list/watch API server.
//!
//! The crate is split by concern; `docs/architecture.md` is the map. In short:
//! `runtime/` is the only module that knows glommio (executors, sockets, files,
//! cross-shard messages); `log/` orders and persists every change; `store/` and
//! `cache/` hold each shard's objects, already encoded; `types/` knows the
//! Kubernetes resources; `api/` speaks HTTP and turns every error into a
//! `metav1.Status`; `metrics/` counts and times what `/metrics` serves.
//! `fuzzing` holds the bodies of the fuzz targets in `fuzz/` (one checking
//! function per parser), shared with `tests/fuzz_smoke.rs`.

pub mod api;
pub mod auth;
pub mod cache;
pub mod config;
pub mod fieldmanager;
pub mod fuzzing;
pub mod list;
pub mod log;
pub mod memory;
pub mod metrics;
pub mod patch;
pub mod runtime;
pub mod store;
pub mod strategy;
pub mod types;
pub mod watch;
