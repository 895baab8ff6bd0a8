//! Allocation of what must be unique across the cluster (Service cluster IPs
//! from `--service-cluster-ip-range`, node ports from
//! `--service-node-port-range`): the pure part, which parses the ranges,
//! picks candidates in kube's order, and says what a Service write must claim
//! and release; the API layer (`api/handlers/allocate.rs`) writes the claims
//! to the log.
//!
//! kube-apiserver's service REST (`pkg/registry/core/service/storage/alloc.go`,
//! `storage.go`) does this in its `beginCreate`/`beginUpdate` hooks and
//! `afterDelete`; the allocators are `pkg/registry/core/service/ipallocator`
//! (one `networking.k8s.io/v1` IPAddress per IP, named by the IP) and
//! `portallocator` (a bitmap). Shardline keeps one claim object per allocated
//! value (see [`Claimable::key`]), so a claim is a conditional create in the
//! log and uniqueness is the log's.
//!
//! Invariant: no I/O, no clock, no randomness of its own (the caller passes
//! random numbers); no input panics.

use super::Object;
use crate::types::key::ObjectKey;
use crate::types::validation::{FieldError, FieldErrorType};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// `--service-cluster-ip-range`'s default: cmd/kube-apiserver's
/// `DefaultServiceIPCIDR` (pkg/kubeapiserver/options/options.go).
pub const DEFAULT_SERVICE_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";
/// `--service-node-port-range`'s default: `DefaultServiceNodePortRange`
/// (base 30000, size 2768), printed as kube prints a PortRange.
pub const DEFAULT_SERVICE_NODE_PORT_RANGE: &str = "30000-32767";

/// The IPAddress labels kube's ipallocator sets (ipallocator.go: createIPAddress).
pub const LABEL_IP_FAMILY: &str = "ipaddress.kubernetes.io/ip-family";
pub const LABEL_MANAGED_BY: &str = "ipaddress.kubernetes.io/managed-by";
/// ipallocator.go: `ControllerName`.
pub const MANAGED_BY_IPALLOCATOR: &str = "ipallocator.k8s.io";

/// The resource of node port claims: a key per allocated port, never served
/// (kube keeps one bitmap, `/registry/ranges/servicenodeports`).
pub const NODE_PORT_CLAIMS: &str = "servicenodeports";

// ----- the ranges -----

/// A service CIDR (`10.0.0.0/24`, `fd00::/108`): kube's `net.IPNet`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceIpRange {
    /// The network address (host bits cleared), as an integer.
    network: u128,
    prefix_len: u8,
    ipv6: bool,
}

impl ServiceIpRange {
    fn bits(&self) -> u8 {
        if self.ipv6 {
            128
        } else {
            32
        }
    }

    fn host_bits(&self) -> u8 {
        self.bits() - self.prefix_len
    }

    /// The kube family name (`IPv4`, `IPv6`).
    pub fn family(&self) -> &'static str {
        if self.ipv6 {
            "IPv6"
        } else {
            "IPv4"
        }
    }

    /// The broadcast address (all host bits set).
    fn broadcast(&self) -> u128 {
        let host = self.host_bits();
        let mask = if host >= 128 { u128::MAX } else { (1u128 << host) - 1 };
        self.network | mask
    }

    /// The first address handed out: the network's `.0` is never used
    /// (ipallocator.go: NewIPAllocator, `prefix.Masked().Addr().Next()`).
    pub fn first(&self) -> u128 {
        self.network.saturating_add(1)
    }

    /// The last address handed out: the broadcast address is not used for
    /// IPv4; IPv6 has none (ipallocator.go: NewIPAllocator).
    pub fn last(&self) -> u128 {
        if self.ipv6 {
            self.broadcast()
        } else {
            self.broadcast().saturating_sub(1)
        }
    }

    /// Addresses that can be handed out (ipallocator.go: hostsPerNetwork).
    pub fn size(&self) -> u128 {
        if self.last() < self.first() {
            0
        } else {
            self.last() - self.first() + 1
        }
    }

    /// The size of the lower sub-range kept for static (requested) addresses,
    /// KEP-3070 (ipallocator/bitmap.go: calculateRangeOffset):
    /// `min(max(16, cidrSize/16), 256)`, 0 for a CIDR of 16 addresses or fewer.
    pub fn range_offset(&self) -> u128 {
        let cidr_size: u128 = if self.host_bits() >= 127 { u128::MAX } else { 1u128 << self.host_bits() };
        if cidr_size <= 16 {
            return 0;
        }
        (cidr_size / 16).clamp(16, 256)
    }

    /// The address the `kubernetes` Service gets: the first one
    /// (pkg/controlplane/services.go: ServiceIPRange, `GetIndexedIP(cidr, 1)`).
    pub fn kubernetes_service_ip(&self) -> u128 {
        self.first()
    }

    /// True when `ip` is an address of this range that can be allocated: in the
    /// prefix, not the network address nor (IPv4) the broadcast address
    /// (pkg/api/servicecidr: PrefixContainsIP).
    pub fn contains(&self, ip: u128) -> bool {
        ip >= self.first() && ip <= self.last()
    }

    /// Parses an address of this range's family.
    pub fn parse_ip(&self, text: &str) -> Option<u128> {
        match (IpAddr::from_str(text).ok()?, self.ipv6) {
            (IpAddr::V4(v4), false) => Some(u128::from(u32::from(v4))),
            (IpAddr::V6(v6), true) => Some(u128::from(v6)),
            _ => None,
        }
    }

    /// The canonical text of an address (Go's `net.IP.String()`, which is the
    /// IPAddress object's name).
    pub fn format_ip(&self, ip: u128) -> String {
        if self.ipv6 {
            std::net::Ipv6Addr::from(ip).to_string()
        } else {
            std::net::Ipv4Addr::from(u32::try_from(ip).unwrap_or(u32::MAX)).to_string()
        }
    }

    /// The network address: what a dry-run allocation answers
    /// (ipallocator.go: allocateNextService, `a.CIDR().IP`).
    pub fn network_ip(&self) -> String {
        self.format_ip(self.network)
    }
}

impl FromStr for ServiceIpRange {
    type Err = String;

    /// One CIDR; as kube-apiserver, an IPv4 range may hold at most 2^20
    /// addresses (cmd/kube-apiserver/app/options/validation.go:
    /// validateMaxCIDRRange) and an IPv6 one at most 2^64 (ipallocator.go:
    /// NewIPAllocator).
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.contains(',') {
            return Err("dual-stack --service-cluster-ip-range is not supported; give one CIDR".into());
        }
        let (address, prefix) = text.split_once('/').ok_or_else(|| format!("invalid CIDR address: {text}"))?;
        let address = IpAddr::from_str(address).map_err(|_| format!("invalid CIDR address: {text}"))?;
        let prefix_len: u8 = prefix.parse().map_err(|_| format!("invalid CIDR address: {text}"))?;
        let (value, bits, ipv6) = match address {
            IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32u8, false),
            IpAddr::V6(v6) => (u128::from(v6), 128u8, true),
        };
        if prefix_len > bits {
            return Err(format!("invalid CIDR address: {text}"));
        }
        if !ipv6 && bits - prefix_len > 20 {
            return Err(
                "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"
                    .into(),
            );
        }
        if ipv6 && prefix_len < 64 {
            return Err(format!("shortest allowed prefix length for service CIDR is 64, got {prefix_len}"));
        }
        let host = bits - prefix_len;
        let mask = if host >= 128 { u128::MAX } else { (1u128 << host) - 1 };
        let range = ServiceIpRange { network: value & !mask, prefix_len, ipv6 };
        if range.size() == 0 {
            return Err(format!("--service-cluster-ip-range {text} holds no assignable address"));
        }
        Ok(range)
    }
}

impl fmt::Display for ServiceIpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.format_ip(self.network), self.prefix_len)
    }
}

/// A node port range (`30000-32767`): kube's `utilnet.PortRange`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodePortRange {
    pub base: u16,
    /// Number of ports, at least 1.
    pub size: u32,
}

impl NodePortRange {
    pub fn contains(&self, port: i64) -> bool {
        port >= i64::from(self.base) && port < i64::from(self.base) + i64::from(self.size)
    }

    /// The lower sub-range kept for requested ports (portallocator/allocator.go:
    /// calculateRangeOffset): `min(max(16, size/32), 128)`, 0 for 16 ports or fewer.
    pub fn range_offset(&self) -> u32 {
        if self.size <= 16 {
            return 0;
        }
        (self.size / 32).clamp(16, 128)
    }
}

impl FromStr for NodePortRange {
    type Err = String;

    /// kube's `PortRange.Set`: `30000-32767`, `30000+2767` or one port.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bad = || format!("unable to parse port range: {text}");
        let port = |s: &str| s.trim().parse::<u16>().map_err(|_| bad());
        let (low, high) = if let Some((a, b)) = text.split_once('-') {
            (port(a)?, port(b)?)
        } else if let Some((a, n)) = text.split_once('+') {
            let low = port(a)?;
            (low, low.checked_add(port(n)?).ok_or_else(bad)?)
        } else {
            let p = port(text)?;
            (p, p)
        };
        if high < low || low == 0 {
            return Err(bad());
        }
        Ok(NodePortRange { base: low, size: u32::from(high - low) + 1 })
    }
}

impl fmt::Display for NodePortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // utilnet.PortRange.String: "base-(base+size-1)".
        write!(f, "{}-{}", self.base, u32::from(self.base) + self.size - 1)
    }
}

/// Both ranges, as `Config` holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranges {
    pub cluster_ip: ServiceIpRange,
    pub node_port: NodePortRange,
}

impl Default for Ranges {
    fn default() -> Self {
        Ranges {
            cluster_ip: ServiceIpRange { network: 0x0a00_0000, prefix_len: 24, ipv6: false },
            node_port: NodePortRange { base: 30000, size: 2768 },
        }
    }
}

// ----- picking -----

/// kube's dynamic pick (ipallocator.go: allocateNextService; the bitmap's
/// randomScanStrategyWithOffset): a random start in the upper sub-range
/// `[offset, size)`, scanning forward and wrapping inside it, then the same in
/// the lower sub-range `[0, offset)`. Returns an index into the range.
fn pick_index(size: u128, offset: u128, used: &dyn Fn(u128) -> bool, random: [u64; 2]) -> Option<u128> {
    let offset = offset.min(size);
    let scan = |start: u128, len: u128, random: u64| -> Option<u128> {
        if len == 0 {
            return None;
        }
        let first = u128::from(random) % len;
        (0..len).map(|step| start + (first + step) % len).find(|&index| !used(index))
    };
    scan(offset, size - offset, random[0]).or_else(|| scan(0, offset, random[1]))
}

/// A free cluster IP, or `None` when the range is full. The `kubernetes`
/// Service's address is never picked: kube's bootstrap controller holds it.
pub fn pick_ip(range: &ServiceIpRange, used: &dyn Fn(u128) -> bool, random: [u64; 2]) -> Option<u128> {
    let first = range.first();
    let reserved = range.kubernetes_service_ip();
    let taken = |index: u128| {
        let ip = first + index;
        ip == reserved || used(ip)
    };
    pick_index(range.size(), range.range_offset(), &taken, random).map(|index| first + index)
}

/// A free node port, or `None` when the range is full.
pub fn pick_port(range: &NodePortRange, used: &dyn Fn(u16) -> bool, random: [u64; 2]) -> Option<u16> {
    let base = u128::from(range.base);
    let taken = |index: u128| u16::try_from(base + index).map_or(true, used);
    pick_index(u128::from(range.size), u128::from(range.range_offset()), &taken, random)
        .and_then(|index| u16::try_from(base + index).ok())
}

// ----- claims -----

/// One allocated value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Claimable {
    /// A cluster IP, in canonical text.
    Ip(String),
    NodePort(u16),
}

impl Claimable {
    /// The key of its claim: kube's IPAddress object for an IP
    /// (`networking.k8s.io/ipaddresses/<ip>`, the key the resource will have
    /// once it is served) and an unserved `servicenodeports/<port>` key for a
    /// node port.
    pub fn key(&self) -> ObjectKey {
        match self {
            Claimable::Ip(ip) => ObjectKey::new("networking.k8s.io", "ipaddresses", "", ip),
            Claimable::NodePort(port) => ObjectKey::new("", NODE_PORT_CLAIMS, "", &port.to_string()),
        }
    }

    /// The claim object written for `parent` (namespace, name) at `now`.
    /// An IP's is the IPAddress kube's ipallocator creates (ipallocator.go:
    /// createIPAddress, with `serviceToRef`).
    pub fn claim_object(&self, family: &str, parent: (&str, &str), now: &str, uid: &str) -> Object {
        let parent_ref = json!({"resource": "services", "namespace": parent.0, "name": parent.1});
        let value = match self {
            Claimable::Ip(ip) => json!({
                "kind": "IPAddress",
                "apiVersion": "networking.k8s.io/v1",
                "metadata": {
                    "name": ip,
                    "uid": uid,
                    "creationTimestamp": now,
                    "labels": {LABEL_IP_FAMILY: family, LABEL_MANAGED_BY: MANAGED_BY_IPALLOCATOR},
                    "managedFields": [{
                        "manager": "kube-apiserver",
                        "operation": "Update",
                        "apiVersion": "networking.k8s.io/v1",
                        "time": now,
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {
                            "f:metadata": {"f:labels": {
                                ".": {},
                                format!("f:{LABEL_IP_FAMILY}"): {},
                                format!("f:{LABEL_MANAGED_BY}"): {}
                            }},
                            "f:spec": {"f:parentRef": {".": {}, "f:name": {}, "f:namespace": {}, "f:resource": {}}}
                        }
                    }]
                },
                "spec": {"parentRef": parent_ref}
            }),
            Claimable::NodePort(port) => json!({
                "metadata": {"name": port.to_string(), "uid": uid, "creationTimestamp": now},
                "spec": {"parentRef": parent_ref}
            }),
        };
        match value {
            Value::Object(map) => map,
            _ => Object::new(),
        }
    }

    /// The value of the claim named `name` in the collection of `like`.
    pub fn from_name(like: &Claimable, name: &str) -> Option<Claimable> {
        match like {
            Claimable::Ip(_) => Some(Claimable::Ip(name.to_string())),
            Claimable::NodePort(_) => name.parse().ok().map(Claimable::NodePort),
        }
    }
}

/// The Service (namespace, name) a claim object names, and when it was made.
pub fn claim_parent(claim: &Object) -> Option<(String, String)> {
    let parent = claim.get("spec")?.get("parentRef")?;
    let text = |field: &str| parent.get(field).and_then(Value::as_str).unwrap_or("").to_string();
    Some((text("namespace"), text("name")))
}

// ----- the Service's fields -----

fn spec(service: &Object) -> Option<&serde_json::Map<String, Value>> {
    service.get("spec").and_then(Value::as_object)
}

fn spec_str<'a>(service: &'a Object, field: &str) -> &'a str {
    spec(service).and_then(|s| s.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// `spec.type`, `ClusterIP` when absent (pkg/apis/core/v1/defaults.go: SetDefaults_Service).
pub fn service_type(service: &Object) -> &str {
    match spec_str(service, "type") {
        "" => "ClusterIP",
        t => t,
    }
}

fn cluster_ips(service: &Object) -> Vec<String> {
    spec(service)
        .and_then(|s| s.get("clusterIPs"))
        .and_then(Value::as_array)
        .map(|ips| ips.iter().map(|ip| ip.as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

fn ports(service: &Object) -> Vec<&serde_json::Map<String, Value>> {
    spec(service)
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .map(|ports| ports.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

fn int(map: &serde_json::Map<String, Value>, field: &str) -> i64 {
    map.get(field).and_then(Value::as_i64).unwrap_or(0)
}

fn health_check_node_port(service: &Object) -> i64 {
    spec(service).map_or(0, |s| int(s, "healthCheckNodePort"))
}

fn has_selector(service: &Object) -> bool {
    spec(service).and_then(|s| s.get("selector")).and_then(Value::as_object).is_some_and(|s| !s.is_empty())
}

/// storage.go: needsClusterIP.
pub fn needs_cluster_ip(service: &Object) -> bool {
    service_type(service) != "ExternalName"
}

/// storage.go: needsNodePort.
pub fn needs_node_port(service: &Object) -> bool {
    matches!(service_type(service), "NodePort" | "LoadBalancer")
}

/// pkg/api/service: NeedsHealthCheck (storage.go: needsHCNodePort).
pub fn needs_health_check(service: &Object) -> bool {
    service_type(service) == "LoadBalancer" && spec_str(service, "externalTrafficPolicy") == "Local"
}

/// alloc.go: shouldAllocateNodePorts (`allocateLoadBalancerNodePorts`
/// defaults to true for LoadBalancer Services).
fn should_allocate_node_ports(service: &Object) -> bool {
    match service_type(service) {
        "NodePort" => true,
        "LoadBalancer" => {
            spec(service).and_then(|s| s.get("allocateLoadBalancerNodePorts")).and_then(Value::as_bool) != Some(false)
        }
        _ => false,
    }
}

fn is_headless(service: &Object) -> bool {
    spec_str(service, "clusterIP") == "None" || cluster_ips(service).first().is_some_and(|ip| ip == "None")
}

/// alloc.go: collectServiceNodePorts.
fn node_port_numbers(service: &Object) -> Vec<i64> {
    ports(service).iter().map(|p| int(p, "nodePort")).filter(|&p| p != 0).collect()
}

/// Go's `%v` of a `[]string`, as field errors print `spec.clusterIPs`.
fn go_string_slice(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| crate::types::validation::go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// `field: Invalid value: <raw>: <detail>` with a value Go prints unquoted.
fn invalid_raw(field: &str, raw: &str, detail: &str) -> FieldError {
    FieldError::new(field, FieldErrorType::Invalid, None, &format!("{raw}: {detail}"))
}

/// The ServiceSpec fields in the Go struct's order (pkg/apis/core/types.go),
/// so a field the allocation adds lands where kube prints it.
const SERVICE_SPEC_ORDER: [&str; 20] = [
    "ports",
    "selector",
    "clusterIP",
    "clusterIPs",
    "type",
    "externalIPs",
    "sessionAffinity",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "externalName",
    "externalTrafficPolicy",
    "healthCheckNodePort",
    "publishNotReadyAddresses",
    "sessionAffinityConfig",
    "ipFamilies",
    "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts",
    "loadBalancerClass",
    "internalTrafficPolicy",
    "trafficDistribution",
];

const SERVICE_PORT_ORDER: [&str; 6] = ["name", "protocol", "appProtocol", "port", "targetPort", "nodePort"];

/// Sets `map[field]`, inserting it before the first present field that
/// follows it in `order` (keeps kube's order whatever else is there).
fn set_ordered(map: &mut serde_json::Map<String, Value>, order: &[&str], field: &str, value: Value) {
    if let Some(slot) = map.get_mut(field) {
        *slot = value;
        return;
    }
    let rank = order.iter().position(|f| *f == field).unwrap_or(order.len());
    let position =
        map.keys().position(|k| order.iter().position(|f| f == k).is_some_and(|r| r > rank)).unwrap_or(map.len());
    map.shift_insert(position, field.to_string(), value);
}

fn set_spec(service: &mut Object, field: &str, value: Value) {
    if !service.get("spec").is_some_and(Value::is_object) {
        service.insert("spec".into(), json!({}));
    }
    if let Some(Value::Object(spec)) = service.get_mut("spec") {
        set_ordered(spec, &SERVICE_SPEC_ORDER, field, value);
    }
}

fn set_node_port(service: &mut Object, index: usize, port: u16) {
    let port_entry = service
        .get_mut("spec")
        .and_then(|s| s.get_mut("ports"))
        .and_then(Value::as_array_mut)
        .and_then(|ports| ports.get_mut(index));
    if let Some(Value::Object(p)) = port_entry {
        set_ordered(p, &SERVICE_PORT_ORDER, "nodePort", json!(port));
    }
}

// ----- before validation -----

/// Whether `info` is the Service resource itself (not its status).
pub fn is_service(group: &str, resource: &str, subresource: Option<&str>) -> bool {
    group.is_empty() && resource == "services" && subresource.is_none()
}

/// What kube's service REST does to a new or updated Service before
/// validation: keeps the values it allocated when an update leaves them out
/// (storage.go: patchAllocatedValues, for a PUT of the same manifest) and
/// keeps `clusterIP` and `clusterIPs` in step (storage.go: normalizeClusterIPs).
pub fn prepare(service: &mut Object, old: Option<&Object>) {
    if let Some(old) = old {
        patch_allocated_values(service, old);
    }
    normalize_cluster_ips(service, old);
}

fn patch_allocated_values(service: &mut Object, old: &Object) {
    if needs_cluster_ip(old) && needs_cluster_ip(service) {
        if spec_str(service, "clusterIP").is_empty() && !spec_str(old, "clusterIP").is_empty() {
            set_spec(service, "clusterIP", json!(spec_str(old, "clusterIP")));
        }
        let old_ips = cluster_ips(old);
        if cluster_ips(service).is_empty() && !old_ips.is_empty() {
            set_spec(service, "clusterIPs", json!(old_ips));
        }
    }
    if needs_node_port(old) && needs_node_port(service) {
        let new_numbers = node_port_numbers(service);
        // Ports in both versions cannot be patched in again for another port.
        let used: Vec<i64> = node_port_numbers(old).into_iter().filter(|p| new_numbers.contains(p)).collect();
        let by_name: BTreeMap<String, i64> = ports(old)
            .iter()
            .map(|p| (p.get("name").and_then(Value::as_str).unwrap_or("").to_string(), int(p, "nodePort")))
            .collect();
        let patches: Vec<(usize, u16)> = ports(service)
            .iter()
            .enumerate()
            .filter(|(_, p)| int(p, "nodePort") == 0)
            .filter_map(|(i, p)| {
                let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                let old_value = by_name.get(name).copied().unwrap_or(0);
                (old_value != 0 && !used.contains(&old_value)).then_some((i, u16::try_from(old_value).ok()?))
            })
            .collect();
        for (index, port) in patches {
            set_node_port(service, index, port);
        }
    }
    if needs_health_check(old) && needs_health_check(service) && health_check_node_port(service) == 0 {
        let old_port = health_check_node_port(old);
        if old_port != 0 {
            set_spec(service, "healthCheckNodePort", json!(old_port));
        }
    }
}

fn normalize_cluster_ips(service: &mut Object, old: Option<&Object>) {
    let ip = spec_str(service, "clusterIP").to_string();
    let ips = cluster_ips(service);
    let Some(old) = old else {
        // A client that sets only the singular field (an old client).
        if !ip.is_empty() && ips.is_empty() {
            set_spec(service, "clusterIPs", json!([ip]));
        }
        return;
    };
    let old_ip = spec_str(old, "clusterIP").to_string();
    let old_ips = cluster_ips(old);
    let mut ips = ips;
    if !old_ips.is_empty() && ips.is_empty() && old_ip == ip {
        set_spec(service, "clusterIPs", json!(old_ips));
        ips = old_ips.clone();
    }
    if old_ip != ip {
        if !old_ip.is_empty() && ip.is_empty() {
            if ips == old_ips {
                if let Some(s) = service.get_mut("spec").and_then(Value::as_object_mut) {
                    s.shift_remove("clusterIPs");
                }
            }
        } else if ips == old_ips {
            set_spec(service, "clusterIPs", json!([ip]));
        }
    }
}

// ----- the plan -----

/// Where an allocated value goes in the Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `spec.clusterIP` and `spec.clusterIPs[0]`.
    ClusterIp,
    /// `spec.ports[i].nodePort` for each index (ports sharing a port number
    /// share one node port: alloc.go initNodePorts).
    NodePort(Vec<usize>),
    /// `spec.healthCheckNodePort`.
    HealthCheckNodePort,
}

/// One value a write needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    pub slot: Slot,
    /// The value the client asked for; `None` for any free one.
    pub requested: Option<Claimable>,
    /// The field an error about a requested value names, and Go's `%v` of the
    /// value there (`[]string{"10.0.0.5"}`, `30080`).
    pub field: String,
    pub shown: String,
}

/// What a Service write claims before its append and releases after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub needs: Vec<Need>,
    /// Values the stored version held that the new one gives up: released
    /// once the write is committed (kube's ReleaseDeferred).
    pub release: Vec<Claimable>,
}

/// A refusal of a requested value, in kube's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 422 Invalid with this cause.
    Invalid(FieldError),
    /// 500 Internal error with this message (kube's NewInternalError).
    Internal(String),
}

impl Need {
    /// The refusal when the requested value is already allocated
    /// (ipallocator ErrAllocated, portallocator ErrAllocated).
    pub fn already_allocated(&self) -> Refusal {
        match (&self.slot, &self.requested) {
            (Slot::ClusterIp, Some(Claimable::Ip(ip))) => Refusal::Invalid(invalid_raw(
                &self.field,
                &self.shown,
                &format!("failed to allocate IP {ip}: provided IP is already allocated"),
            )),
            (Slot::HealthCheckNodePort, _) => Refusal::Internal(format!(
                "failed to allocate requested HealthCheck NodePort {}: provided port is already allocated",
                self.shown
            )),
            _ => Refusal::Invalid(invalid_raw(&self.field, &self.shown, "provided port is already allocated")),
        }
    }

    /// The refusal when no value is free (ErrFull).
    pub fn range_full(&self) -> Refusal {
        Refusal::Internal(match self.slot {
            Slot::ClusterIp => "failed to allocate a serviceIP: range is full".into(),
            Slot::NodePort(_) => "failed to allocate a nodePort: range is full".into(),
            Slot::HealthCheckNodePort => "failed to allocate a HealthCheck NodePort 0: range is full".into(),
        })
    }
}

/// The plan of a create (alloc.go: allocateCreate): fills `ipFamilies` and
/// `ipFamilyPolicy` (initIPFamilyFields) and lists the cluster IP and node
/// ports to claim. A requested value out of range is refused here; `dry_run`
/// checks as kube's dry-run allocators do.
pub fn plan_create(ranges: &Ranges, service: &mut Object, dry_run: bool) -> Result<Plan, Refusal> {
    init_ip_family_fields(ranges, service, None)?;
    let mut plan = Plan::default();
    if let Some(need) = cluster_ip_need(ranges, service, dry_run)? {
        plan.needs.push(need);
    }
    if needs_node_port(service) {
        plan.needs.extend(node_port_needs(ranges, service, &[], dry_run)?);
    }
    if needs_health_check(service) {
        plan.needs.push(health_check_need(ranges, service, dry_run)?);
    }
    Ok(plan)
}

/// The plan of an update (alloc.go: allocateUpdate), against the stored
/// version `old`.
pub fn plan_update(ranges: &Ranges, service: &mut Object, old: &Object, dry_run: bool) -> Result<Plan, Refusal> {
    init_ip_family_fields(ranges, service, Some(old))?;
    let mut plan = Plan::default();
    // Cluster IPs (alloc.go: updateClusterIPs; one family, so no upgrade or
    // downgrade between single- and dual-stack).
    // A stored Service without any cluster IP (ExternalName, or written
    // before Shardline allocated) gets one when it needs it.
    let old_has_ip = !cluster_ips(old).is_empty() || !spec_str(old, "clusterIP").is_empty();
    if (!needs_cluster_ip(old) || !old_has_ip) && needs_cluster_ip(service) {
        if let Some(need) = cluster_ip_need(ranges, service, dry_run)? {
            plan.needs.push(need);
        }
    } else if needs_cluster_ip(old) && !is_headless(old) && !needs_cluster_ip(service) {
        plan.release.extend(held_ips(ranges, old));
    }
    // Node ports (alloc.go: txnUpdateNodePorts).
    let old_numbers = node_port_numbers(old);
    if needs_node_port(old) && matches!(service_type(service), "ExternalName" | "ClusterIP") {
        plan.release.extend(old_numbers.iter().filter_map(|&p| u16::try_from(p).ok()).map(Claimable::NodePort));
    }
    if needs_node_port(service) {
        plan.needs.extend(node_port_needs(ranges, service, &old_numbers, dry_run)?);
        let new_numbers = node_port_numbers(service);
        plan.release.extend(
            old_numbers
                .iter()
                .filter(|p| !new_numbers.contains(p))
                .filter_map(|&p| u16::try_from(p).ok())
                .map(Claimable::NodePort),
        );
    }
    // Health check node port (alloc.go: updateHealthCheckNodePort).
    match (needs_health_check(old), needs_health_check(service)) {
        (false, true) => plan.needs.push(health_check_need(ranges, service, dry_run)?),
        (true, false) => {
            if let Ok(port) = u16::try_from(health_check_node_port(old)) {
                if port != 0 {
                    plan.release.push(Claimable::NodePort(port));
                }
            }
        }
        _ => {}
    }
    plan.release.sort();
    plan.release.dedup();
    Ok(plan)
}

/// What a deleted Service held (alloc.go: releaseAllocatedResources).
pub fn held(ranges: &Ranges, service: &Object) -> Vec<Claimable> {
    let mut values = Vec::new();
    if needs_cluster_ip(service) && !is_headless(service) {
        values.extend(held_ips(ranges, service));
    }
    values
        .extend(node_port_numbers(service).into_iter().filter_map(|p| u16::try_from(p).ok()).map(Claimable::NodePort));
    if needs_health_check(service) {
        if let Ok(port) = u16::try_from(health_check_node_port(service)) {
            if port != 0 {
                values.push(Claimable::NodePort(port));
            }
        }
    }
    values.sort();
    values.dedup();
    values
}

/// True when the stored `service` holds `value` (a claim whose parent does
/// not hold it was left behind by a failed write).
pub fn holds(ranges: &Ranges, service: &Object, value: &Claimable) -> bool {
    held(ranges, service).contains(value)
}

fn held_ips(ranges: &Ranges, service: &Object) -> Vec<Claimable> {
    let mut ips = cluster_ips(service);
    if ips.is_empty() && !spec_str(service, "clusterIP").is_empty() {
        ips.push(spec_str(service, "clusterIP").to_string());
    }
    ips.iter()
        .filter_map(|ip| ranges.cluster_ip.parse_ip(ip))
        .map(|ip| Claimable::Ip(ranges.cluster_ip.format_ip(ip)))
        .collect()
}

/// alloc.go: initIPFamilyFields, for a cluster of one family.
fn init_ip_family_fields(ranges: &Ranges, service: &mut Object, old: Option<&Object>) -> Result<(), Refusal> {
    if service_type(service) == "ExternalName" {
        return Ok(());
    }
    let primary = ranges.cluster_ip.family();
    let headless_selectorless = spec_str(service, "clusterIP") == "None" && !has_selector(service);
    if spec_str(service, "ipFamilyPolicy").is_empty() {
        let policy = match old.map(|o| spec_str(o, "ipFamilyPolicy")).filter(|p| !p.is_empty()) {
            Some(old_policy) => old_policy.to_string(),
            // Headless and selectorless: dual-stack by default.
            None if headless_selectorless => "RequireDualStack".to_string(),
            None => "SingleStack".to_string(),
        };
        set_spec(service, "ipFamilyPolicy", json!(policy));
    }
    let policy = spec_str(service, "ipFamilyPolicy").to_string();
    let mut families: Vec<String> = spec(service)
        .and_then(|s| s.get("ipFamilies"))
        .and_then(Value::as_array)
        .map(|f| f.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default();
    let ips = cluster_ips(service);
    // Infer a family from each cluster IP that has none.
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i >= families.len() {
            let family = match IpAddr::from_str(ip) {
                Ok(IpAddr::V6(_)) => "IPv6",
                Ok(IpAddr::V4(_)) => "IPv4",
                Err(_) => "unknown",
            };
            if family != primary {
                return Err(Refusal::Invalid(invalid_raw(
                    &format!("spec.clusterIPs[{i}]"),
                    &go_string_slice(&ips),
                    &format!("{family} is not configured on this cluster"),
                )));
            }
            families.push(family.to_string());
        }
    }
    if headless_selectorless {
        if families.is_empty() {
            families.push(primary.to_string());
        }
        if families.len() < 2 && policy != "SingleStack" {
            let other = if families.first().map(String::as_str) == Some("IPv4") { "IPv6" } else { "IPv4" };
            families.push(other.to_string());
        }
        set_spec(service, "ipFamilies", json!(families));
        return Ok(());
    }
    if policy == "RequireDualStack" {
        return Err(Refusal::Invalid(FieldError::invalid(
            "spec.ipFamilyPolicy",
            &policy,
            "this cluster is not configured for dual-stack services",
        )));
    }
    if let Some((i, family)) = families.iter().enumerate().find(|(_, f)| f.as_str() != primary) {
        return Err(Refusal::Invalid(FieldError::invalid(
            &format!("spec.ipFamilies[{i}]"),
            family,
            "not configured on this cluster",
        )));
    }
    if families.is_empty() {
        families.push(primary.to_string());
    }
    set_spec(service, "ipFamilies", json!(families));
    Ok(())
}

/// alloc.go: allocClusterIPs (one family).
fn cluster_ip_need(ranges: &Ranges, service: &Object, dry_run: bool) -> Result<Option<Need>, Refusal> {
    if !needs_cluster_ip(service) || is_headless(service) {
        return Ok(None);
    }
    let ips = cluster_ips(service);
    let shown = go_string_slice(&ips);
    let field = "spec.clusterIPs".to_string();
    let requested = match ips.first().map(String::as_str).filter(|ip| !ip.is_empty()) {
        None => None,
        Some(text) => {
            let range = &ranges.cluster_ip;
            let refuse = |detail: String| {
                Refusal::Invalid(invalid_raw(&field, &shown, &format!("failed to allocate IP {text}: {detail}")))
            };
            let Some(ip) = range.parse_ip(text) else {
                return Err(Refusal::Internal(format!(
                    "failed to parse service IP {}",
                    crate::types::validation::go_quote(text)
                )));
            };
            if !range.contains(ip) {
                // The dry-run allocator checks its own range (ErrNotInRange);
                // the real one finds no ServiceCIDR (ErrMismatchedNetwork).
                return Err(refuse(if dry_run {
                    format!("provided IP {text} is not in the valid range")
                } else {
                    "the provided network does not match the current range".into()
                }));
            }
            Some(Claimable::Ip(range.format_ip(ip)))
        }
    };
    Ok(Some(Need { slot: Slot::ClusterIp, requested, field, shown }))
}

/// alloc.go: initNodePorts (create, `old` empty) and updateNodePorts (update:
/// ports the stored version already holds are not claimed again).
fn node_port_needs(ranges: &Ranges, service: &Object, old: &[i64], dry_run: bool) -> Result<Vec<Need>, Refusal> {
    let allocate = should_allocate_node_ports(service);
    let ports = ports(service);
    let mut needs: Vec<Need> = Vec::new();
    // Service port number -> index of its need.
    let mut by_port: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, p) in ports.iter().enumerate() {
        let node_port = int(p, "nodePort");
        if node_port == 0 && !allocate {
            continue;
        }
        let field = format!("spec.ports[{i}].nodePort");
        if node_port != 0 {
            if old.contains(&node_port) || needs.iter().any(|n| n.shown == node_port.to_string()) {
                continue;
            }
            if !dry_run && !ranges.node_port.contains(node_port) {
                return Err(Refusal::Invalid(invalid_raw(
                    &field,
                    &node_port.to_string(),
                    &format!(
                        "provided port is not in the valid range. The range of valid ports is {}",
                        ranges.node_port
                    ),
                )));
            }
            let Ok(port) = u16::try_from(node_port) else { continue };
            needs.push(Need {
                slot: Slot::NodePort(vec![i]),
                requested: Some(Claimable::NodePort(port)),
                field,
                shown: node_port.to_string(),
            });
            by_port.entry(int(p, "port")).or_insert(needs.len() - 1);
            continue;
        }
        // No node port given: share the one of the same service port, if any.
        match by_port.get(&int(p, "port")) {
            Some(&index) => {
                if let Some(Need { slot: Slot::NodePort(indexes), .. }) = needs.get_mut(index) {
                    indexes.push(i);
                }
            }
            None => {
                needs.push(Need { slot: Slot::NodePort(vec![i]), requested: None, field, shown: "0".into() });
                by_port.insert(int(p, "port"), needs.len() - 1);
            }
        }
    }
    Ok(needs)
}

/// alloc.go: allocHealthCheckNodePort.
fn health_check_need(ranges: &Ranges, service: &Object, dry_run: bool) -> Result<Need, Refusal> {
    let port = health_check_node_port(service);
    let field = "spec.healthCheckNodePort".to_string();
    if port == 0 {
        return Ok(Need { slot: Slot::HealthCheckNodePort, requested: None, field, shown: "0".into() });
    }
    if !dry_run && !ranges.node_port.contains(port) {
        return Err(Refusal::Internal(format!(
            "failed to allocate requested HealthCheck NodePort {port}: provided port is not in the valid range. \
             The range of valid ports is {}",
            ranges.node_port
        )));
    }
    let value = u16::try_from(port).map_err(|_| Refusal::Internal(format!("invalid port {port}")))?;
    Ok(Need {
        slot: Slot::HealthCheckNodePort,
        requested: Some(Claimable::NodePort(value)),
        field,
        shown: port.to_string(),
    })
}

/// Writes the allocated `value` of `need` into the Service.
pub fn fill(service: &mut Object, need: &Need, value: &str) {
    match &need.slot {
        Slot::ClusterIp => {
            set_spec(service, "clusterIP", json!(value));
            let mut ips = cluster_ips(service);
            match ips.first_mut() {
                Some(first) => *first = value.to_string(),
                None => ips.push(value.to_string()),
            }
            set_spec(service, "clusterIPs", json!(ips));
        }
        Slot::NodePort(indexes) => {
            if let Ok(port) = value.parse::<u16>() {
                for &index in indexes {
                    set_node_port(service, index, port);
                }
            }
        }
        Slot::HealthCheckNodePort => {
            if let Ok(port) = value.parse::<u16>() {
                set_spec(service, "healthCheckNodePort", json!(port));
            }
        }
    }
}

/// The dummy port a dry-run answers for a dynamic node port
/// (portallocator/operation.go: AllocateNext with dryRun): one past the
/// highest port this write already took, 32769 when none.
pub fn dry_run_port(taken: &[u16]) -> u16 {
    taken.iter().copied().max().unwrap_or(32768).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn range(text: &str) -> ServiceIpRange {
        text.parse().unwrap()
    }

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    fn ranges() -> Ranges {
        Ranges::default()
    }

    #[test]
    fn defaults_are_kube_apiserver_s() {
        let defaults = Ranges::default();
        assert_eq!(DEFAULT_SERVICE_CLUSTER_IP_RANGE.parse::<ServiceIpRange>(), Ok(defaults.cluster_ip));
        assert_eq!(DEFAULT_SERVICE_NODE_PORT_RANGE.parse::<NodePortRange>(), Ok(defaults.node_port));
        assert_eq!(defaults.node_port.to_string(), "30000-32767");
        assert_eq!(defaults.cluster_ip.to_string(), "10.0.0.0/24");
    }

    #[test]
    fn ranges_parse_as_kube_parses_them() {
        let r = range("10.96.5.7/16");
        assert_eq!(r.to_string(), "10.96.0.0/16", "host bits are cleared");
        assert_eq!(r.format_ip(r.first()), "10.96.0.1");
        assert_eq!(r.format_ip(r.last()), "10.96.255.254");
        assert_eq!(r.size(), 65534);
        assert!("10.0.0.0/8".parse::<ServiceIpRange>().unwrap_err().contains("mask must be >= 12"));
        assert!("10.0.0.0/33".parse::<ServiceIpRange>().is_err());
        assert!("10.0.0.0".parse::<ServiceIpRange>().is_err());
        assert!("10.0.0.0/24,fd00::/108".parse::<ServiceIpRange>().is_err());
        assert!("fd00::/48".parse::<ServiceIpRange>().is_err());
        let v6 = range("fd00::/108");
        assert_eq!(v6.family(), "IPv6");
        assert_eq!(v6.format_ip(v6.last()), "fd00::f:ffff", "IPv6 has no broadcast address");
        assert_eq!("30000+2767".parse::<NodePortRange>().unwrap().to_string(), "30000-32767");
        assert_eq!("8080".parse::<NodePortRange>().unwrap().size, 1);
        for bad in ["", "a-b", "32767-30000", "30000-70000", "0-10"] {
            assert!(bad.parse::<NodePortRange>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn network_broadcast_and_kubernetes_address_are_never_picked() {
        // A /29 has 6 assignable addresses, .1 to .6; .1 is the kubernetes Service's.
        let r = range("10.0.0.0/29");
        assert_eq!(r.range_offset(), 0, "no static sub-range below 17 addresses");
        assert_eq!(r.format_ip(r.kubernetes_service_ip()), "10.0.0.1");
        assert!(!r.contains(r.parse_ip("10.0.0.0").unwrap()), "network address");
        assert!(!r.contains(r.parse_ip("10.0.0.7").unwrap()), "broadcast address");
        let mut used = BTreeSet::new();
        for seed in 0..5u64 {
            let ip = pick_ip(&r, &|ip| used.contains(&ip), [seed * 7919, seed]).expect("a free address");
            assert!(used.insert(ip));
        }
        let picked: Vec<String> = used.iter().map(|&ip| r.format_ip(ip)).collect();
        assert_eq!(picked, ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]);
        // Exhausted: the reserved .1 is not handed out.
        assert_eq!(pick_ip(&r, &|ip| used.contains(&ip), [1, 2]), None);
    }

    #[test]
    fn dynamic_picks_prefer_the_upper_sub_range_and_are_random() {
        let r = range("10.0.0.0/24");
        assert_eq!(r.range_offset(), 16);
        let lower_end = r.first() + 16;
        let mut seen = BTreeSet::new();
        for seed in 0..200u64 {
            let ip = pick_ip(&r, &|_| false, [seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), seed]).unwrap();
            assert!(ip >= lower_end && ip <= r.last(), "{} is in the upper sub-range", r.format_ip(ip));
            seen.insert(ip);
        }
        assert!(seen.len() > 100, "picks spread over the range ({} distinct)", seen.len());
        // Upper sub-range full: the lower one is used, still never .1.
        let ip = pick_ip(&r, &|ip| ip >= lower_end, [3, 4]).unwrap();
        assert!(ip > r.first() && ip < lower_end);
    }

    #[test]
    fn node_ports_pick_within_the_range_until_full() {
        let r: NodePortRange = "30000-30019".parse().unwrap();
        assert_eq!(r.range_offset(), 16);
        assert_eq!(NodePortRange { base: 30000, size: 2768 }.range_offset(), 86);
        let mut used = BTreeSet::new();
        for seed in 0..20u64 {
            let port = pick_port(&r, &|p| used.contains(&p), [seed, seed + 1]).unwrap();
            assert!(r.contains(i64::from(port)));
            assert!(used.insert(port));
        }
        assert_eq!(pick_port(&r, &|p| used.contains(&p), [0, 0]), None);
    }

    #[test]
    fn create_plans_a_cluster_ip_and_fills_families() {
        let mut svc = object(json!({"spec": {"ports": [{"port": 80}], "selector": {"app": "a"}, "type": "ClusterIP"}}));
        let plan = plan_create(&ranges(), &mut svc, false).unwrap();
        assert_eq!(plan.needs.len(), 1);
        assert_eq!(plan.needs[0].slot, Slot::ClusterIp);
        assert_eq!(plan.needs[0].requested, None);
        fill(&mut svc, &plan.needs[0], "10.0.0.42");
        let keys: Vec<&String> = svc["spec"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["ports", "selector", "clusterIP", "clusterIPs", "type", "ipFamilies", "ipFamilyPolicy"]);
        assert_eq!(svc["spec"]["clusterIPs"], json!(["10.0.0.42"]));
        assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(svc["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    }

    #[test]
    fn headless_and_external_name_services_get_no_ip() {
        let mut headless =
            object(json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"], "selector": {"app": "a"}}}));
        assert!(plan_create(&ranges(), &mut headless, false).unwrap().needs.is_empty());
        assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(headless["spec"]["ipFamilyPolicy"], json!("SingleStack"));
        let mut selectorless = object(json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}}));
        assert!(plan_create(&ranges(), &mut selectorless, false).unwrap().needs.is_empty());
        assert_eq!(selectorless["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
        assert_eq!(selectorless["spec"]["ipFamilyPolicy"], json!("RequireDualStack"));
        let mut external = object(json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}));
        assert!(plan_create(&ranges(), &mut external, false).unwrap().needs.is_empty());
        assert!(external["spec"].get("ipFamilies").is_none());
    }

    #[test]
    fn requested_values_out_of_range_are_refused_in_kube_s_words() {
        let mut svc = object(json!({"spec": {"clusterIP": "10.1.0.5", "clusterIPs": ["10.1.0.5"]}}));
        let Err(Refusal::Invalid(e)) = plan_create(&ranges(), &mut svc, false) else { panic!("refused") };
        assert_eq!(
            e.to_string(),
            "spec.clusterIPs: Invalid value: []string{\"10.1.0.5\"}: failed to allocate IP 10.1.0.5: \
             the provided network does not match the current range"
        );
        let mut svc = object(json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 40000}]}}));
        let Err(Refusal::Invalid(e)) = plan_create(&ranges(), &mut svc, false) else { panic!("refused") };
        assert_eq!(
            e.to_string(),
            "spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. \
             The range of valid ports is 30000-32767"
        );
        let mut v6 = object(json!({"spec": {"clusterIP": "fd00::5", "clusterIPs": ["fd00::5"]}}));
        let Err(Refusal::Invalid(e)) = plan_create(&ranges(), &mut v6, false) else { panic!("refused") };
        assert_eq!(e.field, "spec.clusterIPs[0]");
        assert!(e.to_string().ends_with("IPv6 is not configured on this cluster"), "{e}");
    }

    #[test]
    fn already_allocated_errors_match_kube() {
        let mut svc = object(json!({"spec": {"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"], "type": "NodePort",
            "ports": [{"port": 80, "nodePort": 30080}]}}));
        let plan = plan_create(&ranges(), &mut svc, false).unwrap();
        let messages: Vec<String> = plan
            .needs
            .iter()
            .map(|n| match n.already_allocated() {
                Refusal::Invalid(e) => e.to_string(),
                Refusal::Internal(m) => m,
            })
            .collect();
        assert_eq!(
            messages,
            [
                "spec.clusterIPs: Invalid value: []string{\"10.0.0.5\"}: failed to allocate IP 10.0.0.5: provided IP is already allocated",
                "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated",
            ]
        );
        assert_eq!(
            plan.needs[0].range_full(),
            Refusal::Internal("failed to allocate a serviceIP: range is full".into())
        );
    }

    #[test]
    fn node_ports_are_shared_by_ports_of_one_number_and_health_check_is_planned() {
        let mut svc = object(json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [
            {"name": "tcp", "protocol": "TCP", "port": 53}, {"name": "udp", "protocol": "UDP", "port": 53},
            {"name": "web", "port": 80, "nodePort": 30080}]}}));
        let plan = plan_create(&ranges(), &mut svc, false).unwrap();
        let slots: Vec<&Slot> = plan.needs.iter().map(|n| &n.slot).collect();
        assert_eq!(
            slots,
            [&Slot::ClusterIp, &Slot::NodePort(vec![0, 1]), &Slot::NodePort(vec![2]), &Slot::HealthCheckNodePort]
        );
        fill(&mut svc, &plan.needs[1], "31000");
        assert_eq!(svc["spec"]["ports"][1]["nodePort"], json!(31000));
        let port_keys: Vec<&String> = svc["spec"]["ports"][0].as_object().unwrap().keys().collect();
        assert_eq!(port_keys, ["name", "protocol", "port", "nodePort"]);
        // allocateLoadBalancerNodePorts: false allocates none (requests are kept).
        let mut lb = object(json!({"spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
            "ports": [{"port": 80}]}}));
        assert_eq!(plan_create(&ranges(), &mut lb, false).unwrap().needs.len(), 1);
    }

    #[test]
    fn updates_keep_allocated_values_and_release_what_a_type_change_drops() {
        let old = object(json!({"spec": {"ports": [{"name": "web", "port": 80, "nodePort": 30080}],
            "clusterIP": "10.0.0.9", "clusterIPs": ["10.0.0.9"], "type": "NodePort",
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}}));
        // The same manifest again (no clusterIP, no nodePort): nothing to do.
        let mut again = object(json!({"spec": {"ports": [{"name": "web", "port": 80}], "type": "NodePort"}}));
        prepare(&mut again, Some(&old));
        let plan = plan_update(&ranges(), &mut again, &old, false).unwrap();
        assert_eq!(plan, Plan::default());
        assert_eq!(again["spec"], old["spec"], "the stored values are kept");
        // To ClusterIP: the node port goes.
        let mut cluster_ip = object(json!({"spec": {"ports": [{"name": "web", "port": 80}], "type": "ClusterIP"}}));
        prepare(&mut cluster_ip, Some(&old));
        let plan = plan_update(&ranges(), &mut cluster_ip, &old, false).unwrap();
        assert!(plan.needs.is_empty());
        assert_eq!(plan.release, [Claimable::NodePort(30080)]);
        assert_eq!(cluster_ip["spec"]["clusterIP"], json!("10.0.0.9"));
        // Back to NodePort: a new port is needed.
        let plan = plan_update(&ranges(), &mut again.clone(), &cluster_ip, false).unwrap();
        assert!(plan.release.is_empty());
        // (`again` still names 30080: requested.)
        assert_eq!(plan.needs[0].requested, Some(Claimable::NodePort(30080)));
        // A Service stored without an IP (before allocation existed) gets one.
        let bare = object(json!({"spec": {"ports": [{"port": 80}], "type": "ClusterIP"}}));
        let mut put = bare.clone();
        let plan = plan_update(&ranges(), &mut put, &bare, false).unwrap();
        assert_eq!(plan.needs.len(), 1);
        assert_eq!(plan.needs[0].slot, Slot::ClusterIp);
        // To ExternalName: the IP goes too.
        let mut external = object(json!({"spec": {"type": "ExternalName", "externalName": "x.example"}}));
        let plan = plan_update(&ranges(), &mut external, &old, false).unwrap();
        assert_eq!(plan.release, [Claimable::Ip("10.0.0.9".into()), Claimable::NodePort(30080)]);
    }

    #[test]
    fn a_deleted_service_releases_what_it_held() {
        let svc = object(json!({"spec": {"ports": [{"port": 80, "nodePort": 30080}, {"port": 81, "nodePort": 30081}],
            "clusterIP": "10.0.0.9", "clusterIPs": ["10.0.0.9"], "type": "LoadBalancer",
            "externalTrafficPolicy": "Local", "healthCheckNodePort": 30999}}));
        assert_eq!(
            held(&ranges(), &svc),
            [
                Claimable::Ip("10.0.0.9".into()),
                Claimable::NodePort(30080),
                Claimable::NodePort(30081),
                Claimable::NodePort(30999)
            ]
        );
        assert!(holds(&ranges(), &svc, &Claimable::NodePort(30999)));
        assert!(!holds(&ranges(), &svc, &Claimable::NodePort(30998)));
        let headless = object(json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}}));
        assert!(held(&ranges(), &headless).is_empty());
    }

    #[test]
    fn claims_are_kube_s_ip_address_objects() {
        let claim = Claimable::Ip("10.0.0.7".into());
        assert_eq!(&claim.key().encode()[..], b"/registry/networking.k8s.io/ipaddresses//10.0.0.7");
        let object = claim.claim_object("IPv4", ("ns", "web"), "2026-01-01T00:00:00Z", "u");
        assert_eq!(object["spec"]["parentRef"], json!({"resource": "services", "namespace": "ns", "name": "web"}));
        assert_eq!(object["metadata"]["labels"][LABEL_MANAGED_BY], json!("ipallocator.k8s.io"));
        assert_eq!(claim_parent(&object), Some(("ns".into(), "web".into())));
        let port = Claimable::NodePort(30080);
        assert_eq!(&port.key().encode()[..], b"/registry/core/servicenodeports//30080");
        assert_eq!(Claimable::from_name(&port, "30081"), Some(Claimable::NodePort(30081)));
        assert_eq!(dry_run_port(&[]), 32769);
        assert_eq!(dry_run_port(&[30080]), 30081);
    }

    #[test]
    fn malformed_services_do_not_panic() {
        for body in [
            json!({}),
            json!({"spec": 5}),
            json!({"spec": {"ports": "x", "clusterIPs": [1, null], "type": 3}}),
            json!({"spec": {"type": "NodePort", "ports": [{"nodePort": 99999999999i64}, 7]}}),
        ] {
            let mut svc = object(body);
            let _ = plan_create(&ranges(), &mut svc, false);
            let old = svc.clone();
            let _ = plan_update(&ranges(), &mut svc, &old, true);
            let _ = held(&ranges(), &svc);
        }
    }
}
