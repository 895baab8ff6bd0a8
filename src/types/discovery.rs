//! Discovery documents (temporary minimal version; replaced by the types work).
use super::registry::Registry;
use serde_json::{json, Value};
pub fn api_versions() -> Value { json!({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":""}]}) }
pub fn api_group_list(_r: &Registry) -> Value { json!({"kind":"APIGroupList","apiVersion":"v1","groups":[]}) }
pub fn api_group(_r: &Registry, _g: &str) -> Option<Value> { None }
pub fn api_resource_list(_r: &Registry, _g: &str, _v: &str) -> Option<Value> { None }
pub fn aggregated_discovery(_r: &Registry, _core: bool, _v: &str) -> Value { json!({}) }
pub fn version_info() -> Value { json!({"major":"1","minor":"36","gitVersion":"v1.36.0"}) }
