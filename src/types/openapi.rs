//! OpenAPI documents (temporary minimal version; replaced by the types work).
use bytes::Bytes;
pub fn openapi_v3_index() -> Bytes { Bytes::from_static(b"{\"paths\":{}}") }
pub fn openapi_v3_document(_path: &str) -> Option<Bytes> { None }
