//! Validation of the kinds served since issue 15, with kube-apiserver v1.36's
//! words (`pkg/apis/<group>/validation/validation.go`): what makes a minimal
//! object valid or invalid, and the fields an update may not change. What is
//! not checked yet is listed in docs/types.md.
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, FieldError};
use serde_json::Value;

pub fn create(group: &str, kind: &str, object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    match (group, kind) {
        ("storage.k8s.io", "StorageClass") => {
            if text(object, "provisioner").is_empty() {
                errs.push(FieldError::required("provisioner", ""));
            }
            let policy = text(object, "reclaimPolicy");
            if !["Delete", "Retain"].contains(&policy) {
                errs.push(not_supported("reclaimPolicy", policy, &["Delete", "Retain"]));
            }
            let mode = text(object, "volumeBindingMode");
            if !["Immediate", "WaitForFirstConsumer"].contains(&mode) {
                errs.push(not_supported("volumeBindingMode", mode, &["Immediate", "WaitForFirstConsumer"]));
            }
        }
        ("storage.k8s.io", "VolumeAttributesClass") => {
            if text(object, "driverName").is_empty() {
                errs.push(FieldError::required("driverName", ""));
            }
        }
        ("storage.k8s.io", "VolumeAttachment") => {
            if text(spec, "attacher").is_empty() {
                errs.push(FieldError::required("spec.attacher", ""));
            }
            let source = obj(spec, "source").unwrap_or(&empty);
            let sources = ["persistentVolumeName", "inlineVolumeSpec"]
                .iter()
                .filter(|k| source.get(**k).is_some_and(|v| !v.is_null() && v.as_str() != Some("")))
                .count();
            if sources != 1 {
                errs.push(FieldError::required(
                    "spec.source",
                    "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
                ));
            }
            if text(spec, "nodeName").is_empty() {
                errs.push(FieldError::required("spec.nodeName", ""));
            }
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            let policy = text(object, "preemptionPolicy");
            if !["PreemptLowerPriority", "Never"].contains(&policy) {
                errs.push(not_supported("preemptionPolicy", policy, &["Never", "PreemptLowerPriority"]));
            }
            // ValidatePriorityClass: user classes stay below the system ones.
            let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
            if int(object, "value").is_some_and(|v| v > 1_000_000_000) && !name.starts_with("system-") {
                errs.push(FieldError::forbidden(
                    "value",
                    "maximum allowed value of a user defined priority is 1000000000",
                ));
            }
        }
        ("autoscaling", "HorizontalPodAutoscaler") => errs.extend(horizontal_pod_autoscaler(spec)),
        ("node.k8s.io", "RuntimeClass") => {
            let handler = text(object, "handler");
            for message in validation::is_dns1123_label(handler) {
                errs.push(FieldError::invalid("handler", handler, &message));
            }
        }
        ("networking.k8s.io", "IngressClass") => {
            if text(spec, "controller").is_empty() {
                errs.push(FieldError::required("spec.controller", ""));
            }
        }
        ("networking.k8s.io", "Ingress") => errs.extend(ingress_spec(spec)),
        ("networking.k8s.io", "IPAddress") => match obj(spec, "parentRef") {
            None => errs.push(FieldError::required("spec.parentRef", "")),
            Some(parent) => {
                if text(parent, "resource").is_empty() {
                    errs.push(FieldError::required("spec.parentRef.resource", ""));
                }
                if text(parent, "name").is_empty() {
                    errs.push(FieldError::required("spec.parentRef.name", ""));
                }
            }
        },
        ("networking.k8s.io", "ServiceCIDR") => errs.extend(service_cidr(spec)),
        ("networking.k8s.io", "NetworkPolicy") => errs.extend(network_policy(spec)),
        ("discovery.k8s.io", "EndpointSlice") => {
            let address_type = text(object, "addressType");
            if address_type.is_empty() {
                errs.push(FieldError::required("addressType", ""));
            } else if !["IPv4", "IPv6", "FQDN"].contains(&address_type) {
                errs.push(not_supported("addressType", address_type, &["FQDN", "IPv4", "IPv6"]));
            }
            errs.extend(endpoint_slice_endpoints(list(object, "endpoints"), address_type));
            errs.extend(endpoint_slice_ports(list(object, "ports")));
        }
        ("policy", "PodDisruptionBudget") => errs.extend(pod_disruption_budget(spec)),
        _ => {}
    }
    errs
}

/// ValidateServiceCIDR: one CIDR, or two of different IP families, each a
/// valid CIDR.
fn service_cidr(spec: &Fields) -> Vec<FieldError> {
    let cidrs = list(spec, "cidrs");
    let rendered = || {
        format!("networking.ServiceCIDRSpec{{CIDRs:{}}}", go_string_slice(spec.get("cidrs").and_then(Value::as_array)))
    };
    if cidrs.is_empty() {
        return vec![FieldError::required("spec.cidrs", "at least one CIDR required")];
    }
    if cidrs.len() > 2 {
        return vec![FieldError::invalid_bare("spec.cidrs", &rendered(), "may only hold up to 2 values")];
    }
    let texts: Vec<&str> = cidrs.iter().map(|c| c.as_str().unwrap_or("")).collect();
    if texts.len() == 2 {
        // netutils.IsDualStackCIDRStrings: both parse, one of each family.
        let family =
            |c: &str| validation::is_valid_cidr(c).then(|| c.split('/').next().is_some_and(|ip| ip.contains(':')));
        let dual = matches!((family(texts[0]), family(texts[1])), (Some(a), Some(b)) if a != b);
        if !dual {
            return vec![FieldError::invalid_bare(
                "spec.cidrs",
                &rendered(),
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            )];
        }
    }
    let mut errs = Vec::new();
    for (i, cidr) in texts.iter().enumerate() {
        if !validation::is_valid_cidr(cidr) {
            errs.push(FieldError::invalid(&format!("spec.cidrs[{i}]"), cidr, validation::INVALID_CIDR_MSG));
        }
    }
    errs
}

/// validateEndpoints (discovery): at most 1,000 endpoints of 1 to 100
/// addresses each, of the slice's address type; node names, hostnames and
/// zone hints.
fn endpoint_slice_endpoints(endpoints: &[Value], address_type: &str) -> Vec<FieldError> {
    if endpoints.len() > 1000 {
        return vec![FieldError::too_many("endpoints", endpoints.len(), 1000)];
    }
    let mut errs = Vec::new();
    let empty = Fields::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let endpoint = endpoint.as_object().unwrap_or(&empty);
        let at = format!("endpoints[{i}]");
        let addresses = strings(endpoint, "addresses");
        if addresses.is_empty() {
            errs.push(FieldError::required(&format!("{at}.addresses"), "must contain at least 1 address"));
        } else if addresses.len() > 100 {
            errs.push(FieldError::too_many(&format!("{at}.addresses"), addresses.len(), 100));
        }
        for (j, address) in addresses.into_iter().enumerate() {
            let field = format!("{at}.addresses[{j}]");
            match address_type {
                "IPv4" | "IPv6" => {
                    let v6 = address_type == "IPv6";
                    let family = validation::parse_ip_sloppy(address).is_some_and(|ip| ip.is_ipv6() == v6);
                    if !family {
                        errs.push(FieldError::invalid(
                            &field,
                            address,
                            &format!("must be a valid {address_type} address"),
                        ));
                    }
                    errs.extend(crate::strategy::validate::core::endpoint_ip(address, &field));
                }
                "FQDN" => errs.extend(fully_qualified_domain_name(address, &field)),
                _ => {}
            }
        }
        if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
            for message in validation::is_dns1123_subdomain(node) {
                errs.push(FieldError::invalid(&format!("{at}.nodeName"), node, &message));
            }
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            for message in validation::is_dns1123_label(hostname) {
                errs.push(FieldError::invalid(&format!("{at}.hostname"), hostname, &message));
            }
        }
        if let Some(hints) = obj(endpoint, "hints") {
            let zones = list(hints, "forZones");
            if zones.len() > 8 {
                errs.push(FieldError::too_many(&format!("{at}.hints.forZones"), zones.len(), 8));
                continue;
            }
            let mut seen = std::collections::HashSet::new();
            for (j, zone) in zones.iter().enumerate() {
                let name = zone.get("name").and_then(Value::as_str).unwrap_or("");
                let field = format!("{at}.hints.forZones[{j}].name");
                if !seen.insert(name) {
                    errs.push(FieldError::duplicate(&field, name));
                }
                for message in validation::is_valid_label_value(name) {
                    errs.push(FieldError::invalid(&field, name, &message));
                }
            }
        }
    }
    errs
}

/// validatePorts (discovery): unique DNS-1123 label names, a supported
/// protocol, a qualified-name appProtocol.
fn endpoint_slice_ports(ports: &[Value]) -> Vec<FieldError> {
    if ports.len() > 20000 {
        return vec![FieldError::too_many("ports", ports.len(), 20000)];
    }
    let mut errs = Vec::new();
    let mut names = std::collections::HashSet::new();
    let empty = Fields::new();
    for (i, port) in ports.iter().enumerate() {
        let port = port.as_object().unwrap_or(&empty);
        let at = format!("ports[{i}]");
        let name = text(port, "name");
        if !name.is_empty() {
            for message in validation::is_dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), name, &message));
            }
        }
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), name));
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(&format!("{at}.protocol"), "")),
            Some(protocol) if !["SCTP", "TCP", "UDP"].contains(&protocol) => {
                errs.push(not_supported(&format!("{at}.protocol"), protocol, &["SCTP", "TCP", "UDP"]));
            }
            Some(_) => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for message in validation::is_qualified_name(app) {
                errs.push(FieldError::invalid(&format!("{at}.appProtocol"), app, &message));
            }
        }
    }
    errs
}

/// kube's `IsFullyQualifiedDomainName`.
fn fully_qualified_domain_name(name: &str, field: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let messages = validation::is_dns1123_subdomain(name);
    if !messages.is_empty() {
        return vec![FieldError::invalid(field, name, &messages.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            field,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let messages = validation::is_dns1123_label(label);
        if !messages.is_empty() {
            return vec![FieldError::invalid(field, label, &messages.join(","))];
        }
    }
    Vec::new()
}

/// ValidateIngressSpec (create and update alike: the relaxations kube keeps
/// for objects stored before a rule existed are not needed here).
fn ingress_spec(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = list(spec, "rules");
    let default_backend = obj(spec, "defaultBackend");
    if default_backend.is_none() && rules.is_empty() {
        let rendered = if spec.get("rules").is_some_and(Value::is_array) {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        errs.push(FieldError::invalid_bare("spec", rendered, "either `defaultBackend` or `rules` must be specified"));
    }
    if let Some(backend) = default_backend {
        errs.extend(ingress_backend(backend, "spec.defaultBackend"));
    }
    let empty = Fields::new();
    for (i, rule) in rules.iter().enumerate() {
        let rule = rule.as_object().unwrap_or(&empty);
        let at = format!("spec.rules[{i}]");
        let host = text(rule, "host");
        if !host.is_empty() {
            if validation::parse_ip_sloppy(host).is_some() {
                errs.push(FieldError::invalid(&format!("{at}.host"), host, "must be a DNS name, not an IP address"));
            }
            let messages = if host.contains('*') {
                validation::is_wildcard_dns1123_subdomain(host)
            } else {
                validation::is_dns1123_subdomain(host)
            };
            for message in messages {
                errs.push(FieldError::invalid(&format!("{at}.host"), host, &message));
            }
        }
        if let Some(http) = obj(rule, "http") {
            let paths = list(http, "paths");
            if paths.is_empty() {
                errs.push(FieldError::required(&format!("{at}.http.paths"), ""));
            }
            for (j, path) in paths.iter().enumerate() {
                errs.extend(ingress_path(path.as_object().unwrap_or(&empty), &format!("{at}.http.paths[{j}]")));
            }
        }
    }
    for (i, tls) in list(spec, "tls").iter().enumerate() {
        let tls = tls.as_object().unwrap_or(&empty);
        for (j, host) in strings(tls, "hosts").into_iter().enumerate() {
            let messages = if host.contains('*') {
                validation::is_wildcard_dns1123_subdomain(host)
            } else {
                validation::is_dns1123_subdomain(host)
            };
            for message in messages {
                errs.push(FieldError::invalid(&format!("spec.tls[{i}].hosts[{j}]"), host, &message));
            }
        }
        let secret = text(tls, "secretName");
        if !secret.is_empty() {
            for message in validation::is_dns1123_subdomain(secret) {
                errs.push(FieldError::invalid(&format!("spec.tls[{i}].secretName"), secret, &message));
            }
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for message in validation::is_dns1123_subdomain(class) {
            errs.push(FieldError::invalid("spec.ingressClassName", class, &message));
        }
    }
    errs
}

/// validateHTTPIngressPath.
fn ingress_path(path: &Fields, at: &str) -> Vec<FieldError> {
    let Some(path_type) = path.get("pathType").and_then(Value::as_str) else {
        return vec![FieldError::required(&format!("{at}.pathType"), "pathType must be specified")];
    };
    let mut errs = Vec::new();
    let value = text(path, "path");
    let field = format!("{at}.path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(&field, value, "must be an absolute path"));
            }
            if !value.is_empty() {
                for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(sequence) {
                        errs.push(FieldError::invalid(&field, value, &format!("must not contain '{sequence}'")));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        errs.push(FieldError::invalid(&field, value, &format!("cannot end with '{suffix}'")));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(&field, value, "must be an absolute path"));
            }
        }
        other => {
            errs.push(not_supported(&format!("{at}.pathType"), other, &["Exact", "ImplementationSpecific", "Prefix"]));
        }
    }
    let empty = Fields::new();
    errs.extend(ingress_backend(obj(path, "backend").unwrap_or(&empty), &format!("{at}.backend")));
    errs
}

/// validateIngressBackend: a service (name, and a port name or number) or
/// a resource reference, not both.
fn ingress_backend(backend: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match (obj(backend, "resource"), obj(backend, "service")) {
        (Some(_), Some(_)) => {
            errs.push(FieldError::invalid(at, "", "cannot set both resource and service backends"));
        }
        (Some(resource), None) => {
            let at = format!("{at}.resource");
            if let Some(group) = resource.get("apiGroup").and_then(Value::as_str) {
                for message in validation::is_dns1123_subdomain(group) {
                    errs.push(FieldError::invalid(&format!("{at}.apiGroup"), group, &message));
                }
            }
            for (key, word) in [("kind", "kind is required"), ("name", "name is required")] {
                let value = text(resource, key);
                if value.is_empty() {
                    errs.push(FieldError::required(&format!("{at}.{key}"), word));
                }
                for message in if value.is_empty() { Vec::new() } else { validation::is_valid_path_segment_name(value) }
                {
                    errs.push(FieldError::invalid(&format!("{at}.{key}"), value, &message));
                }
            }
        }
        (None, Some(service)) => {
            let name = text(service, "name");
            if name.is_empty() {
                errs.push(FieldError::required(&format!("{at}.service.name"), ""));
            } else {
                for message in validation::is_dns1035_label(name) {
                    errs.push(FieldError::invalid(&format!("{at}.service.name"), name, &message));
                }
            }
            let empty = Fields::new();
            let port = obj(service, "port").unwrap_or(&empty);
            let (port_name, number) = (text(port, "name"), int(port, "number").unwrap_or(0));
            match (!port_name.is_empty(), number != 0) {
                (true, true) => errs.push(FieldError::invalid(at, "", "cannot set both port name & port number")),
                (true, false) => {
                    for message in validation::is_valid_port_name(port_name) {
                        errs.push(FieldError::invalid(&format!("{at}.service.port.name"), port_name, &message));
                    }
                }
                (false, true) => {
                    for message in validation::is_valid_port_num(number) {
                        errs.push(invalid_raw(&format!("{at}.service.port.number"), &number.to_string(), &message));
                    }
                }
                (false, false) => errs.push(FieldError::required(at, "port name or number is required")),
            }
        }
        (None, None) => errs.push(FieldError::invalid(at, "", "resource or service backend is required")),
    }
    errs
}

/// ValidateNetworkPolicySpec: the pod selector, each rule's ports and
/// peers, and the policy types.
fn network_policy(spec: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let mut errs = validate_label_selector(obj(spec, "podSelector").unwrap_or(&empty), "spec.podSelector");
    for (direction, peers_key) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list(spec, direction).iter().enumerate() {
            let rule = rule.as_object().unwrap_or(&empty);
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in list(rule, "ports").iter().enumerate() {
                errs.extend(network_policy_port(port.as_object().unwrap_or(&empty), &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in list(rule, peers_key).iter().enumerate() {
                errs.extend(network_policy_peer(peer.as_object().unwrap_or(&empty), &format!("{at}.{peers_key}[{j}]")));
            }
        }
    }
    let types = list(spec, "policyTypes");
    if types.len() > 2 {
        let rendered = format!("&{}", go_string_slice(spec.get("policyTypes").and_then(Value::as_array)))
            .replace("[]string{", "[]networking.PolicyType{");
        errs.push(FieldError::invalid_bare("spec.policyTypes", &rendered, "may not specify more than two policyTypes"));
        return errs;
    }
    for (i, policy_type) in types.iter().enumerate() {
        let t = policy_type.as_str().unwrap_or("");
        if !["Ingress", "Egress"].contains(&t) {
            errs.push(not_supported(&format!("spec.policyTypes[{i}]"), t, &["Ingress", "Egress"]));
        }
    }
    errs
}

/// ValidateNetworkPolicyPort.
fn network_policy_port(port: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            errs.push(not_supported(&format!("{at}.protocol"), protocol, &["TCP", "UDP", "SCTP"]));
        }
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errs.push(invalid_raw(
                    &format!("{at}.endPort"),
                    &end.to_string(),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for message in validation::is_valid_port_name(name) {
                errs.push(FieldError::invalid(&format!("{at}.port"), name, &message));
            }
        }
        Some(number) => {
            let n = number.as_i64().unwrap_or(0);
            for message in validation::is_valid_port_num(n) {
                errs.push(invalid_raw(&format!("{at}.port"), &n.to_string(), &message));
            }
            if let Some(end) = end {
                if end < n {
                    // kube reports the port's value here, not endPort's.
                    errs.push(invalid_raw(
                        &format!("{at}.endPort"),
                        &n.to_string(),
                        "must be greater than or equal to `port`",
                    ));
                }
                for message in validation::is_valid_port_num(end) {
                    errs.push(invalid_raw(&format!("{at}.endPort"), &end.to_string(), &message));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errs.push(invalid_raw(
                    &format!("{at}.endPort"),
                    &end.to_string(),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// ValidateNetworkPolicyPeer: a pod selector, a namespace selector (both
/// together allowed), or an ipBlock alone.
fn network_policy_peer(peer: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(selector) = obj(peer, key) {
            peers += 1;
            errs.extend(validate_label_selector(selector, &format!("{at}.{key}")));
        }
    }
    let block = obj(peer, "ipBlock");
    if let Some(block) = block {
        peers += 1;
        errs.extend(ip_block(block, &format!("{at}.ipBlock")));
    }
    if peers == 0 {
        errs.push(FieldError::required(at, "must specify a peer"));
    } else if peers > 1 && block.is_some() {
        errs.push(FieldError::forbidden(at, "may not specify both ipBlock and another peer"));
    }
    errs
}

/// ValidateIPBlock: a valid CIDR, and each exception a strict subset of it.
fn ip_block(block: &Fields, at: &str) -> Vec<FieldError> {
    let cidr = text(block, "cidr");
    if cidr.is_empty() {
        return vec![FieldError::required(&format!("{at}.cidr"), "")];
    }
    let Some(outer) = network(cidr) else {
        return vec![FieldError::invalid(&format!("{at}.cidr"), cidr, validation::INVALID_CIDR_MSG)];
    };
    let mut errs = Vec::new();
    for (i, except) in strings(block, "except").into_iter().enumerate() {
        let path = format!("{at}.except[{i}]");
        match network(except) {
            None => errs.push(FieldError::invalid(&path, except, validation::INVALID_CIDR_MSG)),
            Some(inner) => {
                let contained = inner.v6 == outer.v6 && outer.contains(inner.address);
                if !contained || outer.prefix >= inner.prefix {
                    errs.push(FieldError::invalid(&path, except, "must be a strict subset of `cidr`"));
                }
            }
        }
    }
    errs
}

/// A parsed CIDR (`ParseCIDRSloppy`): its address as a 128-bit number (IPv4
/// in the low 32 bits) and prefix length.
struct Network {
    v6: bool,
    address: u128,
    prefix: u32,
}

impl Network {
    fn contains(&self, address: u128) -> bool {
        let width = if self.v6 { 128 } else { 32 };
        let host_bits = width - self.prefix;
        let mask = if host_bits >= 128 { 0 } else { !0u128 << host_bits };
        (address & mask) == (self.address & mask)
    }
}

fn network(cidr: &str) -> Option<Network> {
    if !validation::is_valid_cidr(cidr) {
        return None;
    }
    let (ip, bits) = cidr.split_once('/')?;
    let prefix: u32 = bits.parse().ok()?;
    Some(match validation::parse_ip_sloppy(ip)? {
        std::net::IpAddr::V4(v4) => Network { v6: false, address: u128::from(u32::from(v4)), prefix },
        std::net::IpAddr::V6(v6) => Network { v6: true, address: u128::from(v6), prefix },
    })
}

/// ValidatePodDisruptionBudgetSpec: at most one of minAvailable and
/// maxUnavailable, each a non-negative int or a percent up to 100%, the
/// selector, and the eviction policy. The spec in the both-set message is
/// Go's `%#v` of the struct, whose pointer fields print as addresses; they
/// are written here without one (`(*intstr.IntOrString)(...)`).
fn pod_disruption_budget(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let set = |key: &str| spec.get(key).filter(|v| !v.is_null());
    let (min, max) = (set("minAvailable"), set("maxUnavailable"));
    if min.is_some() && max.is_some() {
        let pointer = |v: Option<&Value>, ty: &str| match v {
            Some(_) => format!("(*{ty})(...)"),
            None => format!("(*{ty})(nil)"),
        };
        let rendered = format!(
            "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{}, MaxUnavailable:{}, UnhealthyPodEvictionPolicy:{}}}",
            pointer(min, "intstr.IntOrString"),
            pointer(set("selector"), "v1.LabelSelector"),
            pointer(max, "intstr.IntOrString"),
            pointer(set("unhealthyPodEvictionPolicy"), "policy.UnhealthyPodEvictionPolicyType"),
        );
        errs.push(FieldError::invalid_bare("spec", &rendered, "minAvailable and maxUnavailable cannot be both set"));
    }
    for (value, path) in [(min, "spec.minAvailable"), (max, "spec.maxUnavailable")] {
        if value.is_some() {
            errs.extend(super::apps::positive_int_or_percent(value, path));
            errs.extend(super::apps::not_more_than_100_percent(value, path));
        }
    }
    if let Some(selector) = obj(spec, "selector") {
        errs.extend(validate_label_selector(selector, "spec.selector"));
    }
    if let Some(policy) = set("unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !["IfHealthyBudget", "AlwaysAllow"].contains(&policy) {
            errs.push(not_supported("spec.unhealthyPodEvictionPolicy", policy, &["AlwaysAllow", "IfHealthyBudget"]));
        }
    }
    errs
}

pub fn update(group: &str, kind: &str, object: &Fields, old: &Fields, subresource: Option<&str>) -> Vec<FieldError> {
    if subresource == Some("status") {
        return Vec::new();
    }
    let mut errs = create(group, kind, object);
    let empty = Fields::new();
    let spec = |o: &'_ Fields| obj(o, "spec").cloned().unwrap_or_else(|| empty.clone());
    let immutable = |errs: &mut Vec<FieldError>, field: &str, new: &str, old_value: &str| {
        if new != old_value {
            errs.push(FieldError::invalid(field, new, IMMUTABLE));
        }
    };
    match (group, kind) {
        // ValidateStorageClassUpdate.
        ("storage.k8s.io", "StorageClass") => {
            if object.get("parameters") != old.get("parameters") {
                errs.push(FieldError::forbidden("parameters", "updates to parameters are forbidden."));
            }
            if text(object, "provisioner") != text(old, "provisioner") {
                errs.push(FieldError::forbidden("provisioner", "updates to provisioner are forbidden."));
            }
            if text(object, "reclaimPolicy") != text(old, "reclaimPolicy") {
                errs.push(FieldError::forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."));
            }
            immutable(
                &mut errs,
                "volumeBindingMode",
                text(object, "volumeBindingMode"),
                text(old, "volumeBindingMode"),
            );
        }
        ("storage.k8s.io", "VolumeAttributesClass") => {
            immutable(&mut errs, "driverName", text(object, "driverName"), text(old, "driverName"));
            if object.get("parameters") != old.get("parameters") {
                errs.push(FieldError::forbidden("parameters", "updates to parameters are forbidden."));
            }
        }
        // ValidatePriorityClassUpdate.
        ("scheduling.k8s.io", "PriorityClass") => {
            if int(object, "value") != int(old, "value") {
                errs.push(FieldError::forbidden("value", "may not be changed in an update."));
            }
            immutable(&mut errs, "preemptionPolicy", text(object, "preemptionPolicy"), text(old, "preemptionPolicy"));
        }
        ("node.k8s.io", "RuntimeClass") => {
            immutable(&mut errs, "handler", text(object, "handler"), text(old, "handler"));
        }
        ("networking.k8s.io", "IngressClass") => {
            let (new_spec, old_spec) = (spec(object), spec(old));
            immutable(&mut errs, "spec.controller", text(&new_spec, "controller"), text(&old_spec, "controller"));
        }
        ("discovery.k8s.io", "EndpointSlice") => {
            immutable(&mut errs, "addressType", text(object, "addressType"), text(old, "addressType"));
        }
        // ValidateServiceCIDRUpdate: the CIDRs are immutable.
        ("networking.k8s.io", "ServiceCIDR") => {
            let (new_spec, old_spec) = (spec(object), spec(old));
            if new_spec.get("cidrs") != old_spec.get("cidrs") {
                let rendered = go_string_slice(new_spec.get("cidrs").and_then(Value::as_array));
                errs.push(invalid_raw("spec.cidrs", &rendered, IMMUTABLE));
            }
        }
        // ValidateIPAddressUpdate: the parent reference is immutable.
        ("networking.k8s.io", "IPAddress") => {
            let (new_spec, old_spec) = (spec(object), spec(old));
            if new_spec.get("parentRef") != old_spec.get("parentRef") {
                errs.push(invalid_raw("spec.parentRef", &go_parent_reference(obj(&new_spec, "parentRef")), IMMUTABLE));
            }
        }
        // ValidateVolumeAttachmentUpdate: the spec is immutable (status is
        // the status subresource's).
        ("storage.k8s.io", "VolumeAttachment") => {
            if object.get("spec") != old.get("spec") {
                errs.push(FieldError::invalid_bare("spec", "storage.VolumeAttachmentSpec{...}", IMMUTABLE));
            }
        }
        _ => {}
    }
    errs
}

/// Go's `%#v` of a `*networking.ParentReference` as field.Error prints a
/// pointer (the struct it points to; `null` for nil).
fn go_parent_reference(parent: Option<&Fields>) -> String {
    let Some(p) = parent else { return "null".into() };
    let q = |key: &str| validation::go_quote(text(p, key));
    format!(
        "networking.ParentReference{{Group:{}, Resource:{}, Namespace:{}, Name:{}}}",
        q("group"),
        q("resource"),
        q("namespace"),
        q("name")
    )
}

/// ValidateHorizontalPodAutoscalerSpec (without the ScaleToZero gate, off
/// in v1.36) and its scale target reference.
fn horizontal_pod_autoscaler(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = int(spec, "minReplicas");
    if let Some(m) = min.filter(|m| *m < 1) {
        errs.push(invalid_raw("spec.minReplicas", &m.to_string(), "must be greater than or equal to 1"));
    }
    let max = int(spec, "maxReplicas").unwrap_or(0);
    if max < 1 {
        errs.push(invalid_raw("spec.maxReplicas", &max.to_string(), "must be greater than 0"));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(invalid_raw("spec.maxReplicas", &max.to_string(), "must be greater than or equal to `minReplicas`"));
    }
    let empty = Fields::new();
    let target = obj(spec, "scaleTargetRef").unwrap_or(&empty);
    for field in ["kind", "name"] {
        if text(target, field).is_empty() {
            errs.push(FieldError::required(&format!("spec.scaleTargetRef.{field}"), ""));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    fn messages(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn minimal_objects_are_valid() {
        for (group, kind, body) in [
            (
                "storage.k8s.io",
                "StorageClass",
                json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}),
            ),
            ("scheduling.k8s.io", "PriorityClass", json!({"value": 10, "preemptionPolicy": "PreemptLowerPriority"})),
            (
                "autoscaling",
                "HorizontalPodAutoscaler",
                json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "minReplicas": 1, "maxReplicas": 3}}),
            ),
            ("node.k8s.io", "RuntimeClass", json!({"handler": "runc"})),
            ("networking.k8s.io", "Ingress", json!({"spec": {"rules": [{"host": "a"}]}})),
            ("networking.k8s.io", "IPAddress", json!({"spec": {"parentRef": {"resource": "services", "name": "s"}}})),
            ("discovery.k8s.io", "EndpointSlice", json!({"addressType": "IPv4"})),
            (
                "storage.k8s.io",
                "VolumeAttachment",
                json!({"spec": {"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}}),
            ),
        ] {
            assert_eq!(messages(create(group, kind, &fields(body))), Vec::<String>::new(), "{kind}");
        }
    }

    #[test]
    fn invalid_objects_get_kube_words() {
        assert_eq!(
            messages(create(
                "autoscaling",
                "HorizontalPodAutoscaler",
                &fields(json!({"spec": {"minReplicas": 3, "maxReplicas": 2}}))
            )),
            [
                "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
                "spec.scaleTargetRef.kind: Required value",
                "spec.scaleTargetRef.name: Required value",
            ]
        );
        assert_eq!(
            messages(create(
                "storage.k8s.io",
                "StorageClass",
                &fields(json!({"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}))
            )),
            ["provisioner: Required value"]
        );
        assert_eq!(
            messages(create("discovery.k8s.io", "EndpointSlice", &fields(json!({"addressType": "IPv5"})))),
            ["addressType: Unsupported value: \"IPv5\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""]
        );
        assert_eq!(
            messages(create("networking.k8s.io", "Ingress", &fields(json!({"spec": {}})))),
            ["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]
        );
    }

    #[test]
    fn immutable_fields() {
        let old = fields(json!({"value": 10, "preemptionPolicy": "Never"}));
        let new = fields(json!({"value": 11, "preemptionPolicy": "Never"}));
        assert_eq!(
            messages(update("scheduling.k8s.io", "PriorityClass", &new, &old, None)),
            ["value: Forbidden: may not be changed in an update."]
        );
        let old = fields(
            json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "parameters": {"a": "1"}}),
        );
        let new = fields(
            json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "parameters": {"a": "2"}}),
        );
        assert_eq!(
            messages(update("storage.k8s.io", "StorageClass", &new, &old, None)),
            ["parameters: Forbidden: updates to parameters are forbidden."]
        );
        let old = fields(json!({"addressType": "IPv4"}));
        let new = fields(json!({"addressType": "IPv6"}));
        assert_eq!(
            messages(update("discovery.k8s.io", "EndpointSlice", &new, &old, None)),
            ["addressType: Invalid value: \"IPv6\": field is immutable"]
        );
        // A status write is not checked against the spec rules.
        assert!(update("discovery.k8s.io", "EndpointSlice", &new, &old, Some("status")).is_empty());

        let old = fields(json!({"spec": {"cidrs": ["10.0.0.0/24"]}}));
        let new = fields(json!({"spec": {"cidrs": ["10.1.0.0/24"]}}));
        assert_eq!(
            messages(update("networking.k8s.io", "ServiceCIDR", &new, &old, None)),
            ["spec.cidrs: Invalid value: []string{\"10.1.0.0/24\"}: field is immutable"]
        );
        let old = fields(json!({"spec": {"parentRef": {"resource": "services", "namespace": "d", "name": "a"}}}));
        let new = fields(json!({"spec": {"parentRef": {"resource": "services", "namespace": "d", "name": "b"}}}));
        assert_eq!(
            messages(update("networking.k8s.io", "IPAddress", &new, &old, None)),
            ["spec.parentRef: Invalid value: networking.ParentReference{Group:\"\", Resource:\"services\", Namespace:\"d\", Name:\"b\"}: field is immutable"]
        );
        let attachment = |pv: &str| {
            fields(json!({"spec": {"attacher": "a", "nodeName": "n", "source": {"persistentVolumeName": pv}}}))
        };
        let changed = update("storage.k8s.io", "VolumeAttachment", &attachment("b"), &attachment("a"), None);
        assert_eq!(messages(changed), ["spec: Invalid value: storage.VolumeAttachmentSpec{...}: field is immutable"]);
        assert!(update("storage.k8s.io", "VolumeAttachment", &attachment("a"), &attachment("a"), None).is_empty());
    }

    #[test]
    fn endpoint_slices() {
        let slice = |v: Value| messages(create("discovery.k8s.io", "EndpointSlice", &fields(v)));
        assert!(slice(json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"], "nodeName": "n1",
            "hints": {"forZones": [{"name": "a"}]}}], "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}))
        .is_empty());
        assert_eq!(
            slice(json!({"addressType": "IPv4",
                "endpoints": [{"addresses": []}, {"addresses": ["fd00::1", "127.0.0.1"], "hostname": "A"}],
                "ports": [{"name": "x", "protocol": "TCP"}, {"name": "x", "protocol": "ICMP"}, {"name": "y"}]})),
            [
                "endpoints[0].addresses: Required value: must contain at least 1 address",
                "endpoints[1].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address",
                "endpoints[1].addresses[1]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "endpoints[1].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "ports[1].name: Duplicate value: \"x\"",
                "ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "ports[2].protocol: Required value",
            ]
        );
        assert_eq!(
            slice(json!({"addressType": "FQDN", "endpoints": [{"addresses": ["example"]}]})),
            ["endpoints[0].addresses[0]: Invalid value: \"example\": should be a domain with at least two segments separated by dots"]
        );
        let many: Vec<Value> = (0..1001).map(|_| json!({"addresses": ["10.0.0.1"]})).collect();
        assert_eq!(
            slice(json!({"addressType": "IPv4", "endpoints": many})),
            ["endpoints: Too many: 1001: must have at most 1000 items"]
        );
    }

    #[test]
    fn ingresses() {
        let ingress = |spec: Value| messages(create("networking.k8s.io", "Ingress", &fields(json!({"spec": spec}))));
        let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
        assert!(ingress(json!({"ingressClassName": "nginx", "tls": [{"hosts": ["*.example.com"], "secretName": "tls"}],
            "rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}]}))
        .is_empty());
        assert_eq!(
            ingress(json!({"rules": [
                {"host": "10.0.0.1", "http": {"paths": [
                    {"path": "/a//b", "pathType": "Exact", "backend": backend},
                    {"path": "x", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}},
                    {"path": "/", "pathType": "Regex", "backend": {}},
                    {"path": "/", "backend": backend}]}},
                {"host": "*.*.example.com", "http": {"paths": []}}]})),
            [
                "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'",
                "spec.rules[0].http.paths[1].path: Invalid value: \"x\": must be an absolute path",
                "spec.rules[0].http.paths[1].backend: Invalid value: \"\": cannot set both port name & port number",
                "spec.rules[0].http.paths[2].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
                "spec.rules[0].http.paths[2].backend: Invalid value: \"\": resource or service backend is required",
                "spec.rules[0].http.paths[3].pathType: Required value: pathType must be specified",
                "spec.rules[1].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.rules[1].http.paths: Required value",
            ]
        );
    }

    #[test]
    fn network_policies() {
        let policy =
            |spec: Value| messages(create("networking.k8s.io", "NetworkPolicy", &fields(json!({"spec": spec}))));
        assert!(policy(json!({"podSelector": {}, "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"a": "b"}}, "namespaceSelector": {}},
                                  {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.1.0/24"]}}],
                         "ports": [{"protocol": "TCP", "port": 80, "endPort": 90}, {"port": "http"}]}]}))
        .is_empty());
        assert_eq!(
            policy(json!({"podSelector": {},
                "ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/8"]},
                                           "podSelector": {}}],
                             "ports": [{"protocol": "ICMP", "port": 70000}, {"port": 90, "endPort": 80}, {"port": "x_y", "endPort": 1}, {"endPort": 2}]}],
                "policyTypes": ["Sideways"]})),
            [
                "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: must be greater than or equal to `port`",
                "spec.ingress[0].ports[2].endPort: Invalid value: 1: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[2].port: Invalid value: \"x_y\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ingress[0].ports[3].endPort: Invalid value: 2: may not be specified when `port` is not specified",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
                "spec.policyTypes[0]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
            ]
        );
    }

    #[test]
    fn service_cidrs_pdbs_and_ip_names() {
        let cidrs =
            |c: Value| messages(create("networking.k8s.io", "ServiceCIDR", &fields(json!({"spec": {"cidrs": c}}))));
        assert!(cidrs(json!(["10.0.0.0/24", "2001:db8::/64"])).is_empty());
        assert_eq!(
            cidrs(json!(["10.0.0.0/24", "10.1.0.0/24"])),
            ["spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{\"10.0.0.0/24\", \"10.1.0.0/24\"}}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"]
        );
        assert_eq!(
            cidrs(json!(["a", "b", "c"])),
            ["spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{\"a\", \"b\", \"c\"}}: may only hold up to 2 values"]
        );
        assert_eq!(
            cidrs(json!(["10.0.0.0/33"])),
            ["spec.cidrs[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
        );
        let pdb = |spec: Value| messages(create("policy", "PodDisruptionBudget", &fields(json!({"spec": spec}))));
        assert!(pdb(json!({"minAvailable": "50%"})).is_empty());
        assert_eq!(
            pdb(json!({"minAvailable": 1, "maxUnavailable": "150%"})),
            [
                "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(...), Selector:(*v1.LabelSelector)(nil), MaxUnavailable:(*intstr.IntOrString)(...), UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set",
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
            ]
        );
        assert_eq!(
            pdb(json!({"minAvailable": -1})),
            ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            pdb(json!({"unhealthyPodEvictionPolicy": "Sometimes"})),
            ["spec.unhealthyPodEvictionPolicy: Unsupported value: \"Sometimes\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""]
        );
        use crate::types::validation::{name_rule, NameRule};
        assert_eq!(name_rule("networking.k8s.io", "ipaddresses"), NameRule::IpAddress);
        assert!(NameRule::IpAddress.check("192.168.0.1", false).is_empty());
        assert_eq!(
            NameRule::IpAddress.check("ip-1", false),
            ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
        );
    }
}
