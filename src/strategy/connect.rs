//! The rules of the kubelet's subresources before any connection is made, as
//! kube-apiserver's pod registry holds them (`pkg/registry/core/pod/
//! strategy.go`: `LogLocation`, `streamLocation`, `PortForwardLocation`,
//! `validateContainer`; `ValidatePodLogOptions`; the kubelet client's
//! `GetConnectionInfo`):
//!
//! - the container a request names, or the pod's only one (`validateContainer`);
//! - `pods/log`'s options: parsed as kube's query-parameter conversion
//!   parses them (400 on a number that does not parse), then validated
//!   (422 `PodLogOptions "NAME" is invalid`);
//! - where the kubelet of a node is: its preferred address (`Hostname`,
//!   `InternalDNS`, `InternalIP`, `ExternalDNS`, `ExternalIP`, kube-apiserver's
//!   default `--kubelet-preferred-address-types`) and the port it reported, else
//!   10250; and the kubelet URL kube-apiserver would ask.
//!
//! Invariant: no I/O; the API layer (`api/handlers/connect.rs`) reads the pod
//! and node, calls these and answers. No input panics.

use super::Object;
use crate::types::validation::{FieldError, FieldErrorType};
use serde_json::Value;

/// kube-apiserver's default `--kubelet-port`.
pub const KUBELET_PORT_DEFAULT: u16 = 10250;

/// kube-apiserver's default `--kubelet-preferred-address-types`, in order.
pub const PREFERRED_ADDRESS_TYPES: [&str; 5] = ["Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"];

/// Why a request is refused before any connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400 BadRequest with this message.
    BadRequest(String),
    /// 422 Invalid: `PodLogOptions "NAME" is invalid: ...`.
    InvalidLogOptions(Vec<FieldError>),
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().try_fold(v, |v, f| v.get(*f)).and_then(Value::as_str).unwrap_or("")
}

fn names(pod: &Object, list: &str) -> Vec<String> {
    pod.get("spec")
        .and_then(|s| s.get(list))
        .and_then(Value::as_array)
        .map(|c| c.iter().map(|c| text(c, &["name"]).to_string()).collect())
        .unwrap_or_default()
}

/// The node a pod is bound to (`spec.nodeName`), empty when unscheduled.
pub fn node_name(pod: &Object) -> &str {
    pod.get("spec").map(|s| text(s, &["nodeName"])).unwrap_or("")
}

/// kube's `validateContainer`: the container asked for (any init, regular
/// or ephemeral container), or the pod's only regular container. Without a
/// name and with several, the message lists every container in kube's
/// visiting order: init containers, containers, ephemeral containers.
pub fn validate_container(pod: &Object, pod_name: &str, asked: Option<&str>) -> Result<String, Refusal> {
    let containers = names(pod, "containers");
    let all: Vec<String> =
        [names(pod, "initContainers"), containers.clone(), names(pod, "ephemeralContainers")].concat();
    match asked.filter(|a| !a.is_empty()) {
        Some(asked) if all.iter().any(|c| c == asked) => Ok(asked.to_string()),
        Some(asked) => Err(Refusal::BadRequest(format!("container {asked} is not valid for pod {pod_name}"))),
        None if containers.len() == 1 => Ok(containers[0].clone()),
        None if containers.is_empty() => {
            Err(Refusal::BadRequest(format!("a container name must be specified for pod {pod_name}")))
        }
        // Go prints a []string with %s as `[a b c]`.
        None => Err(Refusal::BadRequest(format!(
            "a container name must be specified for pod {pod_name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// `PodLogOptions` as kube-apiserver decodes them from the query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    pub container: Option<String>,
    pub follow: bool,
    pub previous: bool,
    pub timestamps: bool,
    pub since_seconds: Option<i64>,
    pub since_time: Option<String>,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
}

/// Go's `strconv.ParseInt(s, 10, 64)` with its error text.
fn parse_int(s: &str) -> Result<i64, Refusal> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let syntax = || Refusal::BadRequest(format!("strconv.ParseInt: parsing {}: invalid syntax", go_quote(s)));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(syntax());
    }
    s.parse::<i64>()
        .map_err(|_| Refusal::BadRequest(format!("strconv.ParseInt: parsing {}: value out of range", go_quote(s))))
}

fn go_quote(s: &str) -> String {
    crate::types::validation::go_quote(s)
}

/// kube's query conversion of a bool: `0` and `false` (any case) are
/// false, anything else (even empty) true.
fn parse_bool(s: &str) -> bool {
    !(s == "0" || s.eq_ignore_ascii_case("false"))
}

/// Decodes and validates `pods/log`'s query (`ValidatePodLogOptions`). The
/// first value of a repeated parameter counts, as in kube's conversion.
/// `stream` is dropped: kube's `PodLogsQuerySplitStreams` gate is off.
pub fn log_options(query: &[(String, String)]) -> Result<LogOptions, Refusal> {
    let first = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let int = |name: &str| first(name).map(parse_int).transpose();
    let options = LogOptions {
        container: first("container").map(str::to_string),
        follow: first("follow").is_some_and(parse_bool),
        previous: first("previous").is_some_and(parse_bool),
        timestamps: first("timestamps").is_some_and(parse_bool),
        since_seconds: int("sinceSeconds")?,
        since_time: first("sinceTime").filter(|t| !t.is_empty()).map(str::to_string),
        tail_lines: int("tailLines")?,
        limit_bytes: int("limitBytes")?,
    };
    let mut errors = Vec::new();
    let invalid = |field: &str, value: i64, message: &str| {
        FieldError::new(field, FieldErrorType::Invalid, None, &format!("{value}: {message}"))
    };
    if let Some(n) = options.tail_lines.filter(|n| *n < 0) {
        errors.push(invalid("tailLines", n, "must be greater than or equal to 0"));
    }
    if let Some(n) = options.limit_bytes.filter(|n| *n < 1) {
        errors.push(invalid("limitBytes", n, "must be greater than 0"));
    }
    match (options.since_seconds, &options.since_time) {
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            super::subresources::ROOT_FIELD,
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(n), None) if n < 1 => errors.push(invalid("sinceSeconds", n, "must be greater than 0")),
        _ => {}
    }
    if errors.is_empty() {
        Ok(options)
    } else {
        Err(Refusal::InvalidLogOptions(errors))
    }
}

/// `host:port` as Go's `net.JoinHostPort` writes it (IPv6 in brackets).
fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// kube's `GetConnectionInfo`: the node's kubelet as `host:port`, or the
/// message of kube's `NoMatchError` when the node has no address.
pub fn kubelet_address(node: &Object) -> Result<String, String> {
    let addresses: Vec<(&str, &str)> = node
        .get("status")
        .and_then(|s| s.get("addresses"))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|a| (text(a, &["type"]), text(a, &["address"]))).collect())
        .unwrap_or_default();
    let host = PREFERRED_ADDRESS_TYPES
        .iter()
        .find_map(|t| addresses.iter().find(|(kind, _)| kind == t).map(|(_, address)| *address))
        .ok_or_else(|| {
            // Go's %v of []NodeAddress: `[{InternalIP 10.0.0.1} ...]`.
            let known: Vec<String> = addresses.iter().map(|(t, a)| format!("{{{t} {a}}}")).collect();
            format!("no preferred addresses found; known addresses: [{}]", known.join(" "))
        })?;
    let reported = node
        .get("status")
        .and_then(|s| s.get("daemonEndpoints"))
        .and_then(|d| d.get("kubeletEndpoint"))
        .and_then(|k| k.get("Port"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let port = u16::try_from(reported).ok().filter(|p| *p > 0).unwrap_or(KUBELET_PORT_DEFAULT);
    Ok(join_host_port(host, port))
}

/// The kubelet URL of a container's log (`LogLocation`), its query in
/// `url.Values.Encode` order (sorted by name).
pub fn log_url(kubelet: &str, namespace: &str, pod: &str, container: &str, options: &LogOptions) -> String {
    let mut params: Vec<(&str, String)> = Vec::new();
    if options.follow {
        params.push(("follow", "true".into()));
    }
    if let Some(n) = options.limit_bytes {
        params.push(("limitBytes", n.to_string()));
    }
    if options.previous {
        params.push(("previous", "true".into()));
    }
    if let Some(n) = options.since_seconds {
        params.push(("sinceSeconds", n.to_string()));
    }
    if let Some(t) = &options.since_time {
        params.push(("sinceTime", t.clone()));
    }
    if let Some(n) = options.tail_lines {
        params.push(("tailLines", n.to_string()));
    }
    if options.timestamps {
        params.push(("timestamps", "true".into()));
    }
    let query: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
    let path = format!("https://{kubelet}/containerLogs/{namespace}/{pod}/{container}");
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Object {
        v.as_object().cloned().unwrap_or_default()
    }

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn bad(r: Result<impl std::fmt::Debug, Refusal>) -> String {
        match r {
            Err(Refusal::BadRequest(m)) => m,
            other => panic!("not a BadRequest: {other:?}"),
        }
    }

    #[test]
    fn containers_are_chosen_as_kube_chooses_them() {
        let one = object(json!({"spec": {"containers": [{"name": "app"}]}}));
        assert_eq!(validate_container(&one, "p", None).unwrap(), "app");
        assert_eq!(validate_container(&one, "p", Some("")).unwrap(), "app");
        assert_eq!(bad(validate_container(&one, "p", Some("nope"))), "container nope is not valid for pod p");
        let two =
            object(json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}], "initContainers": [{"name": "i"}],
                                  "ephemeralContainers": [{"name": "debug"}]}}));
        assert_eq!(
            bad(validate_container(&two, "p", None)),
            "a container name must be specified for pod p, choose one of: [i a b debug]"
        );
        assert_eq!(validate_container(&two, "p", Some("i")).unwrap(), "i");
        assert_eq!(validate_container(&two, "p", Some("debug")).unwrap(), "debug");
        assert_eq!(bad(validate_container(&Object::new(), "p", None)), "a container name must be specified for pod p");
    }

    #[test]
    fn log_options_parse_and_validate_as_kube() {
        let o = log_options(&q(&[("follow", "1"), ("tailLines", "10"), ("previous", "false"), ("container", "c")]))
            .unwrap();
        assert!(o.follow && !o.previous && !o.timestamps);
        assert_eq!((o.tail_lines, o.container.as_deref()), (Some(10), Some("c")));
        assert_eq!(bad(log_options(&q(&[("tailLines", "ten")]))), "strconv.ParseInt: parsing \"ten\": invalid syntax");
        assert_eq!(
            bad(log_options(&q(&[("limitBytes", "99999999999999999999")]))),
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
        );
        let invalid = |pairs: &[(&str, &str)]| match log_options(&q(pairs)) {
            Err(Refusal::InvalidLogOptions(errors)) => errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            other => panic!("not Invalid: {other:?}"),
        };
        assert_eq!(
            invalid(&[("tailLines", "-1")]),
            ["tailLines: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(invalid(&[("limitBytes", "0")]), ["limitBytes: Invalid value: 0: must be greater than 0"]);
        assert_eq!(invalid(&[("sinceSeconds", "0")]), ["sinceSeconds: Invalid value: 0: must be greater than 0"]);
        assert_eq!(
            invalid(&[("sinceSeconds", "5"), ("sinceTime", "2026-01-01T00:00:00Z")]),
            ["[]: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"]
        );
    }

    #[test]
    fn the_kubelet_is_found_as_kube_finds_it() {
        assert_eq!(
            kubelet_address(&object(json!({"status": {}}))).unwrap_err(),
            "no preferred addresses found; known addresses: []"
        );
        let node = object(json!({"status": {"addresses": [{"type": "ExternalIP", "address": "1.2.3.4"},
                                                    {"type": "InternalIP", "address": "10.0.0.7"}]}}));
        assert_eq!(kubelet_address(&node).unwrap(), "10.0.0.7:10250");
        let node = object(json!({"status": {"addresses": [{"type": "InternalIP", "address": "fd00::7"}],
                                     "daemonEndpoints": {"kubeletEndpoint": {"Port": 10251}}}}));
        assert_eq!(kubelet_address(&node).unwrap(), "[fd00::7]:10251");
        let odd = object(json!({"status": {"addresses": [{"type": "Other", "address": "x"}]}}));
        assert_eq!(kubelet_address(&odd).unwrap_err(), "no preferred addresses found; known addresses: [{Other x}]");
    }

    #[test]
    fn log_urls_carry_kubes_query() {
        let options = LogOptions { follow: true, tail_lines: Some(5), timestamps: true, ..LogOptions::default() };
        assert_eq!(
            log_url("10.0.0.7:10250", "ns", "p", "c", &options),
            "https://10.0.0.7:10250/containerLogs/ns/p/c?follow=true&tailLines=5&timestamps=true"
        );
        assert_eq!(log_url("n:1", "ns", "p", "c", &LogOptions::default()), "https://n:1/containerLogs/ns/p/c");
    }
}
