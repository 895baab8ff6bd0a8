//! The kubelet's and the proxies' subresources: `pods/log`, `pods/exec`,
//! `pods/attach`, `pods/portforward`, `pods/proxy`, `services/proxy` and
//! `nodes/proxy`. Shardline runs no kubelet connection and proxies nothing;
//! these answer what kube-apiserver answers when no kubelet or endpoint can
//! be reached, after the checks kube makes first (the object exists, the
//! container is valid, the pod has a node, an IP, the service endpoints):
//!
//! - `pods/log` of a pod with no node: 200 with an empty body (kube's
//!   `LogLocation` gives no location); with a node, 500 (kube's failed
//!   kubelet request);
//! - `pods/exec`, `attach`, `portforward` of a pod with no node: 400
//!   `pod NAME does not have a host assigned`; exec and attach of a
//!   completed pod: 400; with a node, 500;
//! - `pods/proxy` of a pod without an IP: 400 `address not allowed`;
//!   `services/proxy` without endpoints: 503 `no endpoints available for
//!   service "NAME"`; `nodes/proxy` of a node without an address: 500
//!   `no preferred addresses found; known addresses: []`; otherwise 503.
//!
//! Invariant: nothing here opens a connection; every answer is a Status.

use super::{read_current, Resolved};
use crate::api::object::Object;
use crate::api::status::{ApiError, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
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

/// kube's `validateContainer`: the container asked for, or the only one.
fn container(pod: &Object, name: &str, asked: Option<String>) -> Result<String, ApiError> {
    let spec = pod.get("spec").cloned().unwrap_or(Value::Null);
    let names = |list: &str| -> Vec<String> {
        spec.get(list)
            .and_then(Value::as_array)
            .map(|c| c.iter().map(|c| text(c, &["name"]).to_string()).collect())
            .unwrap_or_default()
    };
    let containers = names("containers");
    let all: Vec<String> =
        [names("initContainers"), containers.clone(), names("ephemeralContainers")].into_iter().flatten().collect();
    match asked.filter(|a| !a.is_empty()) {
        Some(asked) if all.contains(&asked) => Ok(asked),
        Some(asked) => Err(ApiError::BadRequest(format!("container {asked} is not valid for pod {name}"))),
        None if containers.len() == 1 => Ok(containers[0].clone()),
        None if containers.is_empty() => {
            Err(ApiError::BadRequest(format!("a container name must be specified for pod {name}")))
        }
        None => Err(ApiError::BadRequest(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            containers.join(" ")
        ))),
    }
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
            let addresses = node.get("status").and_then(|s| s.get("addresses")).and_then(Value::as_array);
            if addresses.is_none_or(|a| a.is_empty()) {
                return Err(ApiError::Internal("no preferred addresses found; known addresses: []".into()));
            }
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
            let pod = read(backend, "pods", &namespace, &name).await?;
            let asked = query_value(head, "container");
            let container = if sub == "portforward" { String::new() } else { container(&pod, &name, asked)? };
            let node = pod.get("spec").map(|s| text(s, &["nodeName"]).to_string()).unwrap_or_default();
            let phase = pod.get("status").map(|s| text(s, &["phase"])).unwrap_or("");
            if sub == "log" {
                if node.is_empty() {
                    // kube's LogLocation gives no location: an empty stream.
                    return Ok(respond(StatusCode::OK, "text/plain", Bytes::new()));
                }
                read(backend, "nodes", "", &node).await?;
                return Err(ApiError::Internal(format!(
                    "Get \"https://{node}:10250/containerLogs/{namespace}/{name}/{container}\": {NO_CONNECTION}"
                )));
            }
            if node.is_empty() {
                return Err(ApiError::BadRequest(format!("pod {name} does not have a host assigned")));
            }
            if matches!(sub, "exec" | "attach") && matches!(phase, "Succeeded" | "Failed") {
                return Err(ApiError::BadRequest(format!(
                    "cannot {sub} into a container in a completed pod; current phase is {phase}"
                )));
            }
            read(backend, "nodes", "", &node).await?;
            Err(ApiError::Internal(format!("error dialing the kubelet of node {node:?}: {NO_CONNECTION}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn proxy_ids_name_their_object() {
        assert_eq!(proxied_name("web"), "web");
        assert_eq!(proxied_name("web:8080"), "web");
        assert_eq!(proxied_name("https:web:443"), "web");
    }

    #[test]
    fn containers_are_chosen_as_kube_chooses_them() {
        let one: Object = serde_json::from_value(json!({"spec": {"containers": [{"name": "app"}]}})).unwrap();
        assert_eq!(container(&one, "p", None).unwrap(), "app");
        assert_eq!(
            container(&one, "p", Some("nope".into())).unwrap_err().message(),
            "container nope is not valid for pod p"
        );
        let two: Object = serde_json::from_value(
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}], "initContainers": [{"name": "i"}]}}),
        )
        .unwrap();
        assert_eq!(
            container(&two, "p", None).unwrap_err().message(),
            "a container name must be specified for pod p, choose one of: [a b]"
        );
        assert_eq!(container(&two, "p", Some("i".into())).unwrap(), "i");
    }
}
