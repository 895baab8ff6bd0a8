//! The kubelet's and the proxies' subresources: `pods/log`, `pods/exec`,
//! `pods/attach`, `pods/portforward`, `pods/proxy`, `services/proxy` and
//! `nodes/proxy`. Shardline runs no kubelet connection and proxies nothing;
//! these answer what kube-apiserver answers when no kubelet or endpoint can
//! be reached, after the checks kube makes first (the rules are
//! `strategy/connect.rs`: the container, the log options, the node's
//! kubelet address):
//!
//! - a websocket GET to `exec`, `attach`, `portforward` must also be
//!   allowed `create` (kube's `AuthorizePodWebsocketUpgradeCreatePermission`);
//! - `pods/log`: bad options 400 (a number that does not parse) or 422
//!   (`PodLogOptions`); a pod with no node: 204 and no body (kube's
//!   `LogLocation` gives no location);
//! - `pods/exec`, `attach`, `portforward` of a pod with no node: 400
//!   `pod NAME does not have a host assigned`;
//! - with a node: 404 when the Node is missing; else 500 with no reason
//!   (kube passes on an error that is no Status): `no preferred addresses
//!   found; known addresses: []` for a node without an address, else the
//!   failed kubelet request (`Get "https://ADDRESS:PORT/containerLogs/..."`,
//!   `error dialing backend: ...`);
//! - `pods/proxy` of a pod without an IP: 400 `address not allowed`;
//!   `services/proxy` without endpoints: 503 `no endpoints available for
//!   service "NAME"`; `nodes/proxy` of a node without an address: 500 as
//!   above; otherwise 503.
//!
//! Invariant: nothing here opens a connection; every answer is a Status.

use super::{read_current, Resolved};
use crate::api::object::Object;
use crate::api::pipeline;
use crate::api::status::{ApiError, Target};
use crate::api::{Backend, RequestHead, ResponseBody};
use crate::auth::Attributes;
use crate::strategy::connect;
use crate::types::key::ObjectKey;
use crate::types::registry::ControlPlaneSubresource;
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::Value;

/// Why nothing was reached: the end of every unreachable answer.
const NO_CONNECTION: &str = "this server does not connect to kubelets or proxy to endpoints";

async fn read(backend: &impl Backend, resource: &str, namespace: &str, name: &str) -> Result<Object, ApiError> {
    let key = ObjectKey::new("", resource, namespace, name);
    let current = read_current(backend, &key, backend.committed_revision())
        .await?
        .ok_or_else(|| ApiError::NotFound(Target::new("", resource, name)))?;
    serde_json::from_slice(&current.json).map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))
}

/// The object a proxy path names: `NAME`, `NAME:port` or `scheme:NAME:port`.
fn proxied_name(id: &str) -> &str {
    let parts: Vec<&str> = id.split(':').collect();
    if parts.len() == 3 {
        parts[1]
    } else {
        parts[0]
    }
}

fn query_value(head: &RequestHead, name: &str) -> Option<String> {
    form_urlencoded::parse(head.query.as_deref().unwrap_or("").as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().try_fold(v, |v, f| v.get(*f)).and_then(Value::as_str).unwrap_or("")
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    special: &ControlPlaneSubresource,
) -> Result<Response<ResponseBody>, ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let unreachable = || ApiError::ServiceUnavailable(format!("error trying to reach service: {NO_CONNECTION}"));
    match (special.resource, special.subresource) {
        ("services", _) => {
            read(backend, "services", &namespace, &name).await?;
            // `NAME` or `scheme:NAME:port` in the path.
            let service = proxied_name(&name).to_string();
            let endpoints = read(backend, "endpoints", &namespace, &service).await.ok();
            let has_address =
                endpoints.as_ref().and_then(|e| e.get("subsets")).and_then(Value::as_array).is_some_and(|subsets| {
                    subsets.iter().any(|s| s.get("addresses").and_then(Value::as_array).is_some_and(|a| !a.is_empty()))
                });
            if !has_address {
                return Err(ApiError::ServiceUnavailable(format!("no endpoints available for service {service:?}")));
            }
            Err(unreachable())
        }
        ("nodes", _) => {
            let node = read(backend, "nodes", "", proxied_name(&name)).await?;
            connect::kubelet_address(&node).map_err(ApiError::Unknown)?;
            Err(unreachable())
        }
        (_, "proxy") => {
            let pod_name = proxied_name(&name).to_string();
            let pod = read(backend, "pods", &namespace, &pod_name).await?;
            let ip = pod.get("status").map(|s| text(s, &["podIP"])).unwrap_or("");
            let routable = ip.parse::<std::net::IpAddr>().is_ok_and(|ip| !ip.is_unspecified() && !ip.is_loopback());
            if !routable {
                return Err(ApiError::BadRequest("address not allowed".into()));
            }
            Err(unreachable())
        }
        (_, sub) => {
            if head.method == http::Method::GET && sub != "log" {
                // kube's AuthorizePodWebsocketUpgradeCreatePermission: a
                // websocket GET needs `create` too, checked before the pod is read.
                let attributes = Attributes {
                    verb: "get".into(),
                    resource_request: true,
                    api_version: "v1".into(),
                    resource: "pods".into(),
                    subresource: sub.into(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                    ..Attributes::default()
                };
                pipeline::authorize_verb(backend, &head.user, &attributes, "create").await?;
            }
            let query: Vec<(String, String)> =
                form_urlencoded::parse(head.query.as_deref().unwrap_or("").as_bytes()).into_owned().collect();
            let log_options =
                if sub == "log" { Some(connect::log_options(&query).map_err(|r| refusal(r, &name))?) } else { None };
            let pod = read(backend, "pods", &namespace, &name).await?;
            let container = if sub == "portforward" {
                String::new()
            } else {
                let asked = match &log_options {
                    Some(options) => options.container.clone(),
                    None => query_value(head, "container"),
                };
                connect::validate_container(&pod, &name, asked.as_deref()).map_err(|r| refusal(r, &name))?
            };
            let node_name = connect::node_name(&pod).to_string();
            if node_name.is_empty() {
                if sub == "log" {
                    // kube's LogLocation gives no location: no stream, 204.
                    return Ok(no_content());
                }
                return Err(ApiError::BadRequest(format!("pod {name} does not have a host assigned")));
            }
            let node = read(backend, "nodes", "", &node_name).await?;
            let kubelet = connect::kubelet_address(&node).map_err(ApiError::Unknown)?;
            // kube would now ask the kubelet; a request it cannot send is
            // an error that is no Status (500, no reason).
            match log_options {
                Some(options) => Err(ApiError::Unknown(format!(
                    "Get \"{}\": {NO_CONNECTION}",
                    connect::log_url(&kubelet, &namespace, &name, &container, &options)
                ))),
                None => Err(ApiError::Unknown(format!("error dialing backend: dial tcp {kubelet}: {NO_CONNECTION}"))),
            }
        }
    }
}

/// kube's answer when a stream has no location: 204 without a body.
fn no_content() -> Response<ResponseBody> {
    let mut response = Response::new(crate::api::full(Bytes::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

fn refusal(refusal: connect::Refusal, name: &str) -> ApiError {
    match refusal {
        connect::Refusal::BadRequest(message) => ApiError::BadRequest(message),
        connect::Refusal::InvalidLogOptions(errors) => ApiError::Invalid {
            kind: "PodLogOptions".into(),
            target: Target::new("", "pods", name),
            causes: super::create::causes(errors),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_ids_name_their_object() {
        assert_eq!(proxied_name("web"), "web");
        assert_eq!(proxied_name("web:8080"), "web");
        assert_eq!(proxied_name("https:web:443"), "web");
    }
}
