//! Services (`ValidateService`, `ValidateServiceUpdate`,
//! `ValidateServiceStatusUpdate`) and Endpoints (`ValidateEndpoints`), from
//! `pkg/apis/core/validation/validation.go`.
//!
//! On create the cluster IPs and IP families are not allocated yet when
//! this runs (kube allocates before validating; here allocation follows),
//! so the rules tying them together apply only to what the client set.

use super::pod::port_num_or_name;
use super::util::*;
use crate::types::validation::{
    is_valid_cidr, is_valid_ip, is_valid_port_num, parse_ip_sloppy, validate_labels_at, FieldError, FieldErrorType,
    INVALID_CIDR_MSG, INVALID_IP_MSG,
};
use serde_json::{Map, Value};
use std::collections::HashSet;

type Errs = Vec<FieldError>;

const SERVICE_TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

fn spec_of(object: &Map<String, Value>) -> &Value {
    static EMPTY: Value = Value::Null;
    object.get("spec").unwrap_or(&EMPTY)
}

/// The cluster IPs as kube's strategy normalizes them: `clusterIPs`, or
/// `[clusterIP]` when only `clusterIP` is set.
fn cluster_ips(spec: &Value) -> Vec<Value> {
    let ips = list(spec, "clusterIPs");
    let ip = text(spec, "clusterIP");
    if ips.is_empty() && !ip.is_empty() {
        vec![Value::String(ip.to_string())]
    } else {
        ips.to_vec()
    }
}

fn is_headless(spec: &Value) -> bool {
    let ips = cluster_ips(spec);
    ips.len() == 1 && ips.first().and_then(Value::as_str) == Some("None")
}

/// kube's `ValidateService`.
pub fn create(object: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let kind = text(spec, "type");
    let headless = is_headless(spec);
    let ports = list(spec, "ports");
    let mut errs = Errs::new();
    if ports.is_empty() && !headless && kind != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    errs.extend(type_rules(spec, kind, headless));
    let mut names: HashSet<&str> = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        errs.extend(service_port(port, ports.len() > 1, &mut names, &index("spec.ports", i)));
    }
    if spec.get("selector").is_some_and(Value::is_object) {
        errs.extend(validate_labels_at("spec.selector", string_map(spec, "selector")));
    }
    errs.extend(session_affinity(spec));
    errs.extend(cluster_ips_related(spec, kind));
    for (i, ip) in list(spec, "externalIPs").iter().enumerate() {
        let ip = ip.as_str().unwrap_or("");
        let field = index("spec.externalIPs", i);
        if is_valid_ip(ip) {
            errs.extend(non_special_ip(ip, &field));
        } else {
            errs.push(FieldError::invalid(&field, ip, INVALID_IP_MSG));
        }
    }
    if !kind.is_empty() && !SERVICE_TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("spec.type", kind, SERVICE_TYPES));
    }
    errs.extend(node_port_rules(ports, kind));
    errs.extend(load_balancer_rules(object, spec, kind));
    errs.extend(traffic_policies(spec, kind));
    errs
}

/// The `switch service.Spec.Type` block of `ValidateService`.
fn type_rules(spec: &Value, kind: &str, headless: bool) -> Errs {
    let mut errs = Errs::new();
    match kind {
        "LoadBalancer" | "NodePort" if headless => {
            let msg = format!("may not be set to 'None' for {kind} services");
            errs.push(FieldError::invalid("spec.clusterIPs[0]", "None", &msg));
        }
        "ExternalName" => {
            if !cluster_ips(spec).is_empty() {
                errs.push(FieldError::forbidden("spec.clusterIPs", "may not be set for ExternalName services"));
            }
            if !list(spec, "ipFamilies").is_empty() {
                errs.push(FieldError::forbidden("spec.ipFamilies", "may not be set for ExternalName services"));
            }
            if has(spec, "ipFamilyPolicy") {
                errs.push(FieldError::forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
            }
            let name = text(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required("spec.externalName", ""));
            } else {
                errs.extend(dns1123_subdomain("spec.externalName", cname));
            }
        }
        _ => {}
    }
    errs
}

/// kube's `validateServicePort`.
fn service_port<'a>(port: &'a Value, require_name: bool, names: &mut HashSet<&'a str>, path: &str) -> Errs {
    let mut errs = Errs::new();
    let name = text(port, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&child(path, "name"), ""));
    } else if !name.is_empty() {
        errs.extend(dns1123_label(&child(path, "name"), name));
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&child(path, "name"), name));
        }
    }
    let number = int(port, "port").unwrap_or(0);
    errs.extend(is_valid_port_num(number).iter().map(|m| invalid_int(&child(path, "port"), number, m)));
    // An empty protocol is defaulted to TCP, an absent, 0 or "" targetPort
    // to the port (SetDefaults_Service).
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str).filter(|p| !p.is_empty()) {
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(&child(path, "protocol"), protocol, PROTOCOLS));
        }
    }
    let target = port.get("targetPort").filter(|t| t.as_i64() != Some(0) && t.as_str() != Some(""));
    if target.is_some() {
        errs.extend(port_num_or_name(target, &child(path, "targetPort")));
    }
    if let Some(app_protocol) = port.get("appProtocol").and_then(Value::as_str) {
        errs.extend(qualified_name(&child(path, "appProtocol"), app_protocol));
    }
    errs
}

/// sessionAffinity and sessionAffinityConfig.
fn session_affinity(spec: &Value) -> Errs {
    let mut errs = Errs::new();
    // An empty sessionAffinity is defaulted to None.
    let affinity = spec.get("sessionAffinity").and_then(Value::as_str);
    match affinity {
        Some(a) if !a.is_empty() && a != "ClientIP" && a != "None" => {
            errs.push(FieldError::not_supported("spec.sessionAffinity", a, &["ClientIP", "None"]))
        }
        _ => {}
    }
    let config_path = "spec.sessionAffinityConfig";
    match affinity {
        Some("ClientIP") => {
            // A missing config or timeout is defaulted to 10800 seconds
            // (SetDefaults_Service), so only the range is checked.
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds").and_then(Value::as_i64);
            if let Some(t) = timeout.filter(|t| *t <= 0 || *t > 86400) {
                errs.push(invalid_int(
                    "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    t,
                    "must be greater than 0 and less than 86400",
                ));
            }
        }
        Some("None") if has(spec, "sessionAffinityConfig") => {
            errs.push(FieldError::forbidden(config_path, "must not be set when session affinity is None"));
        }
        _ => {}
    }
    errs
}

/// kube's `ValidateServiceClusterIPsRelatedFields`.
fn cluster_ips_related(spec: &Value, kind: &str) -> Errs {
    if kind == "ExternalName" {
        return Vec::new();
    }
    let mut errs = Errs::new();
    let ips = cluster_ips(spec);
    let ip = text(spec, "clusterIP");
    if !ip.is_empty() {
        if ips.first().and_then(Value::as_str) != Some(ip) {
            errs.push(FieldError::invalid_bare(
                "spec.clusterIPs",
                &go_string_slice(&ips),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid_bare(
            "spec.clusterIPs",
            &go_string_slice(&ips),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, family) in list(spec, "ipFamilies").iter().enumerate() {
        let family = family.as_str().unwrap_or("");
        let field = index("spec.ipFamilies", i);
        if family != "IPv4" && family != "IPv6" {
            errs.push(FieldError::not_supported(&field, family, &["IPv4", "IPv6"]));
        }
        if !seen.insert(family) {
            errs.push(FieldError::duplicate(&field, family));
        }
    }
    const POLICIES: &[&str] = &["PreferDualStack", "RequireDualStack", "SingleStack"];
    if let Some(policy) = spec.get("ipFamilyPolicy").and_then(Value::as_str) {
        if !POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported("spec.ipFamilyPolicy", policy, POLICIES));
        }
    }
    let mut invalid = false;
    for (i, value) in ips.iter().enumerate() {
        let value = value.as_str().unwrap_or("");
        if i == 0 && value == "None" {
            if ips.len() > 1 {
                invalid = true;
                errs.push(FieldError::invalid_bare(
                    "spec.clusterIPs",
                    &go_string_slice(&ips),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        if !is_valid_ip(value) {
            invalid = true;
            errs.push(FieldError::invalid(&index("spec.clusterIPs", i), value, INVALID_IP_MSG));
        }
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid_bare("spec.clusterIPs", &go_string_slice(&ips), "may only hold up to 2 values"));
    }
    if invalid {
        return errs;
    }
    errs.extend(dual_stack_and_families(spec, &ips));
    errs
}

/// Two cluster IPs must be one of each family, and each must match its
/// `ipFamilies` entry.
fn dual_stack_and_families(spec: &Value, ips: &[Value]) -> Errs {
    let mut errs = Errs::new();
    let is_v6 = |v: &Value| v.as_str().and_then(parse_ip_sloppy).is_some_and(|ip| ip.is_ipv6());
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|v| is_v6(v)).count();
        if v6 != 1 || ips.len() != 2 {
            errs.push(FieldError::invalid_bare(
                "spec.clusterIPs",
                &go_string_slice(ips),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if is_headless(spec) {
        return errs;
    }
    for (i, (ip, family)) in ips.iter().zip(list(spec, "ipFamilies")).enumerate() {
        let value = ip.as_str().unwrap_or("");
        let field = index("spec.clusterIPs", i);
        match family.as_str() {
            Some("IPv4") if is_v6(ip) => {
                let msg = format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`");
                errs.push(FieldError::invalid(&field, value, &msg));
            }
            Some("IPv6") if !is_v6(ip) => {
                let msg = format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`");
                errs.push(FieldError::invalid(&field, value, &msg));
            }
            _ => {}
        }
    }
    errs
}

/// kube's `ValidateNonSpecialIP`.
pub(super) fn non_special_ip(ip: &str, field: &str) -> Errs {
    let Some(addr) = parse_ip_sloppy(ip) else {
        return vec![FieldError::invalid(field, ip, "must be a valid IP address")];
    };
    let mut errs = Errs::new();
    let (unspecified, loopback, link_local, link_local_multicast) = match addr {
        std::net::IpAddr::V4(a) => {
            let o = a.octets();
            (a.is_unspecified(), a.is_loopback(), a.is_link_local(), o[0] == 224 && o[1] == 0 && o[2] == 0)
        }
        std::net::IpAddr::V6(a) => {
            let s = a.segments();
            let mapped = a.to_ipv4_mapped();
            (
                a.is_unspecified() || mapped.is_some_and(|m| m.is_unspecified()),
                a.is_loopback() || mapped.is_some_and(|m| m.is_loopback()),
                (s[0] & 0xffc0) == 0xfe80 || mapped.is_some_and(|m| m.is_link_local()),
                (s[0] & 0xff0f) == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(field, ip, &format!("may not be unspecified ({ip})")));
    }
    if loopback {
        errs.push(FieldError::invalid(field, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
    }
    if link_local {
        errs.push(FieldError::invalid(field, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            field,
            ip,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// nodePort only outside ClusterIP, each in range, no duplicate
/// (protocol, nodePort) or (protocol, port).
fn node_port_rules(ports: &[Value], kind: &str) -> Errs {
    let mut errs = Errs::new();
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if int(port, "nodePort").unwrap_or(0) != 0 {
                errs.push(FieldError::forbidden(
                    &child(&index("spec.ports", i), "nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let protocol = |p: &Value| p.get("protocol").and_then(Value::as_str).unwrap_or("TCP").to_string();
    let mut node_ports: HashSet<(String, i64)> = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = int(port, "nodePort").unwrap_or(0);
        if node_port != 0 && !node_ports.insert((protocol(port), node_port)) {
            let field = child(&index("spec.ports", i), "nodePort");
            errs.push(FieldError::with_bare_value(&field, FieldErrorType::Duplicate, &node_port.to_string(), ""));
        }
    }
    let mut seen: HashSet<(String, i64)> = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let number = int(port, "port").unwrap_or(0);
        let proto = protocol(port);
        if !seen.insert((proto.clone(), number)) {
            // kube prints the (protocol, port) key as Go's %#v of a ServicePort.
            let key = format!(
                "core.ServicePort{{Name:\"\", Protocol:\"{proto}\", AppProtocol:(*string)(nil), Port:{number}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}"
            );
            errs.push(FieldError::with_bare_value(&index("spec.ports", i), FieldErrorType::Duplicate, &key, ""));
        }
    }
    errs
}

/// loadBalancerSourceRanges, allocateLoadBalancerNodePorts,
/// loadBalancerClass.
fn load_balancer_rules(object: &Map<String, Value>, spec: &Value, kind: &str) -> Errs {
    let mut errs = Errs::new();
    let lb = kind == "LoadBalancer";
    let ranges = list(spec, "loadBalancerSourceRanges");
    let only_lb = "may only be used when `type` is 'LoadBalancer'";
    if !ranges.is_empty() {
        let field = "spec.LoadBalancerSourceRanges";
        if !lb {
            errs.push(FieldError::forbidden(field, only_lb));
        }
        for (i, range) in ranges.iter().enumerate() {
            let value = range.as_str().unwrap_or("").trim();
            if !is_valid_cidr(value) {
                errs.push(FieldError::invalid(&index(field, i), value, INVALID_CIDR_MSG));
            }
        }
    } else if let Some(value) = object
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get("service.beta.kubernetes.io/load-balancer-source-ranges"))
        .and_then(Value::as_str)
    {
        let field = "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]";
        if !lb {
            errs.push(FieldError::forbidden(field, only_lb));
        }
        let value = value.trim();
        if !value.is_empty() {
            for cidr in value.split(',').map(str::trim) {
                if !is_valid_cidr(cidr) {
                    errs.push(FieldError::invalid(field, cidr, INVALID_CIDR_MSG));
                }
            }
        }
    }
    if has(spec, "allocateLoadBalancerNodePorts") && !lb {
        errs.push(FieldError::forbidden("spec.allocateLoadBalancerNodePorts", only_lb));
    }
    if let Some(class) = spec.get("loadBalancerClass").and_then(Value::as_str) {
        if lb {
            errs.extend(qualified_name("spec.loadBalancerClass", class));
        } else {
            errs.push(FieldError::forbidden("spec.loadBalancerClass", only_lb));
        }
    }
    errs
}

/// externalTrafficPolicy, healthCheckNodePort, internalTrafficPolicy,
/// trafficDistribution.
fn traffic_policies(spec: &Value, kind: &str) -> Errs {
    let mut errs = Errs::new();
    let external = kind == "NodePort" || kind == "LoadBalancer" || !list(spec, "externalIPs").is_empty();
    let policy = text(spec, "externalTrafficPolicy");
    if !external {
        if !policy.is_empty() {
            errs.push(FieldError::invalid(
                "spec.externalTrafficPolicy",
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if !policy.is_empty() && policy != "Cluster" && policy != "Local" {
        errs.push(FieldError::not_supported("spec.externalTrafficPolicy", policy, &["Cluster", "Local"]));
    }
    let health = int(spec, "healthCheckNodePort").unwrap_or(0);
    let needs_health_check = kind == "LoadBalancer" && policy == "Local";
    if !needs_health_check && health != 0 {
        errs.push(invalid_int(
            "spec.healthCheckNodePort",
            health,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ));
    } else if needs_health_check && health != 0 {
        errs.extend(is_valid_port_num(health).iter().map(|m| invalid_int("spec.healthCheckNodePort", health, m)));
    }
    if let Some(internal) = spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        if internal != "Cluster" && internal != "Local" {
            errs.push(FieldError::not_supported("spec.internalTrafficPolicy", internal, &["Cluster", "Local"]));
        }
    }
    // PreferSameTrafficDistribution is on: three values.
    if let Some(distribution) = spec.get("trafficDistribution").and_then(Value::as_str) {
        const DISTRIBUTIONS: &[&str] = &["PreferClose", "PreferSameZone", "PreferSameNode"];
        if !DISTRIBUTIONS.contains(&distribution) {
            errs.push(FieldError::not_supported("spec.trafficDistribution", distribution, DISTRIBUTIONS));
        }
    }
    errs
}

/// kube's `ValidateServiceUpdate`: cluster IPs and families may not change
/// once set (except through ExternalName or to/from headless), the load
/// balancer class and the health check node port stay, then
/// `ValidateService`. A cluster IP left out of the new object is kept from
/// the old one, as kube's service REST does before validating.
pub fn update(object: &Map<String, Value>, old: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let old_spec = spec_of(old);
    let mut errs = Errs::new();
    let external_name = text(spec, "type") == "ExternalName" || text(old_spec, "type") == "ExternalName";
    if !external_name {
        let mut ips = cluster_ips(spec);
        let old_ips = cluster_ips(old_spec);
        if ips.is_empty() {
            ips = old_ips.clone();
        }
        errs.extend(cluster_ip_changes(spec, &ips, &old_ips));
    }
    let lb = text(spec, "type") == "LoadBalancer" && text(old_spec, "type") == "LoadBalancer";
    if lb && spec.get("loadBalancerClass") != old_spec.get("loadBalancerClass") {
        errs.push(FieldError::invalid_bare(
            "spec.loadBalancerClass",
            &go_value(spec.get("loadBalancerClass")),
            "may not change once set",
        ));
    }
    let health_checked = |s: &Value| text(s, "type") == "LoadBalancer" && text(s, "externalTrafficPolicy") == "Local";
    if health_checked(spec) && health_checked(old_spec) {
        let new_port = int(spec, "healthCheckNodePort").unwrap_or(0);
        if new_port != 0 && new_port != int(old_spec, "healthCheckNodePort").unwrap_or(0) {
            errs.push(FieldError::forbidden("spec.healthCheckNodePort", "field is immutable"));
        }
    }
    errs.extend(create(object));
    errs
}

/// kube's `validateUpgradeDowngradeClusterIPs` (the common cases).
fn cluster_ip_changes(spec: &Value, ips: &[Value], old_ips: &[Value]) -> Errs {
    let headless = |v: &[Value]| v.len() == 1 && v.first().and_then(Value::as_str) == Some("None");
    if headless(ips) && headless(old_ips) {
        return Vec::new();
    }
    let shown = go_string_slice(ips);
    let changed = "may not change once set";
    let mut errs = Errs::new();
    if ips.len() == old_ips.len() {
        for (i, (new, old)) in ips.iter().zip(old_ips).enumerate() {
            if new != old {
                errs.push(FieldError::invalid_bare(&index("spec.clusterIPs", i), &shown, changed));
            }
        }
    } else if ips.len() < old_ips.len() {
        if ips.first().is_some_and(|first| Some(first) != old_ips.first()) {
            errs.push(FieldError::invalid_bare("spec.clusterIPs[0]", &shown, changed));
        }
        if ips.len() == 1 && text(spec, "ipFamilyPolicy") != "SingleStack" {
            errs.push(FieldError::invalid_bare(
                "spec.ipFamilyPolicy",
                &go_value(spec.get("ipFamilyPolicy")),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
    } else if !old_ips.is_empty() && ips.first() != old_ips.first() {
        errs.push(FieldError::invalid_bare("spec.clusterIPs[0]", &shown, changed));
    }
    errs
}

/// kube's `ValidateServiceStatusUpdate` (`ValidateLoadBalancerStatus`).
pub fn status_update(object: &Map<String, Value>) -> Errs {
    let spec = spec_of(object);
    let ingress =
        object.get("status").map(|s| s.pointer("/loadBalancer/ingress")).and_then(|v| v.and_then(Value::as_array));
    let ingress = ingress.map(Vec::as_slice).unwrap_or(&[]);
    let path = "status.loadBalancer.ingress";
    if text(spec, "type") != "LoadBalancer" && !ingress.is_empty() {
        return vec![FieldError::forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'")];
    }
    let mut errs = Errs::new();
    for (i, entry) in ingress.iter().enumerate() {
        let entry_path = index(path, i);
        let ip = text(entry, "ip");
        if !ip.is_empty() && !is_valid_ip(ip) {
            errs.push(FieldError::invalid(&child(&entry_path, "ip"), ip, INVALID_IP_MSG));
        }
        match entry.get("ipMode").and_then(Value::as_str) {
            None if !ip.is_empty() => {
                errs.push(FieldError::required(&child(&entry_path, "ipMode"), "must be specified when `ip` is set"))
            }
            Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
                &child(&entry_path, "ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(mode) if mode != "Proxy" && mode != "VIP" => {
                errs.push(FieldError::not_supported(&child(&entry_path, "ipMode"), mode, &["Proxy", "VIP"]))
            }
            _ => {}
        }
        let hostname = text(entry, "hostname");
        if !hostname.is_empty() {
            errs.extend(dns1123_subdomain(&child(&entry_path, "hostname"), hostname));
            if parse_ip_sloppy(hostname).is_some() {
                errs.push(FieldError::invalid(
                    &child(&entry_path, "hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// kube's `ValidateEndpoints` (create and update alike).
pub fn endpoints(object: &Map<String, Value>) -> Errs {
    let mut errs = Errs::new();
    let subsets = object.get("subsets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for (i, subset) in subsets.iter().enumerate() {
        let path = index("subsets", i);
        let addresses = list(subset, "addresses");
        let not_ready = list(subset, "notReadyAddresses");
        if addresses.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(&path, "must specify `addresses` or `notReadyAddresses`"));
        }
        for (field, items) in [("addresses", addresses), ("notReadyAddresses", not_ready)] {
            for (j, address) in items.iter().enumerate() {
                errs.extend(endpoint_address(address, &index(&child(&path, field), j)));
            }
        }
        let ports = list(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            errs.extend(endpoint_port(port, ports.len() > 1, &index(&child(&path, "ports"), j)));
        }
    }
    errs
}

fn endpoint_address(address: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let ip = text(address, "ip");
    let ip_path = child(path, "ip");
    if !is_valid_ip(ip) {
        errs.push(FieldError::invalid(&ip_path, ip, INVALID_IP_MSG));
    }
    let hostname = text(address, "hostname");
    if !hostname.is_empty() {
        errs.extend(dns1123_label(&child(path, "hostname"), hostname));
    }
    if let Some(node) = address.get("nodeName").and_then(Value::as_str) {
        errs.extend(dns1123_subdomain(&child(path, "nodeName"), node));
    }
    errs.extend(non_special_ip(ip, &ip_path));
    errs
}

fn endpoint_port(port: &Value, require_name: bool, path: &str) -> Errs {
    let mut errs = Errs::new();
    let name = text(port, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&child(path, "name"), ""));
    } else if !name.is_empty() {
        errs.extend(dns1123_label(&child(path, "name"), name));
    }
    let number = int(port, "port").unwrap_or(0);
    errs.extend(is_valid_port_num(number).iter().map(|m| invalid_int(&child(path, "port"), number, m)));
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str).filter(|p| !p.is_empty()) {
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(&child(path, "protocol"), protocol, PROTOCOLS));
        }
    }
    if let Some(app_protocol) = port.get("appProtocol").and_then(Value::as_str) {
        errs.extend(qualified_name(&child(path, "appProtocol"), app_protocol));
    }
    errs
}
