//! Helpers of the fuzz targets that need crates the server does not depend
//! on (k8s-openapi, for what a typed client decodes).

#[path = "../typed_clients.rs"]
mod typed_clients;

pub use typed_clients::decode_typed;
