//! The Endpoints strategy's Canonicalize (pkg/registry/core/endpoint/
//! strategy.go), which stores subsets in their packed form
//! (pkg/api/endpoints/util.go: RepackSubsets): every (port, address) pair
//! is expanded, addresses are de-duplicated by IP and targetRef UID (a
//! not-ready occurrence wins over a ready one), ports offered by the same
//! set of addresses share one subset, and addresses are sorted by IP, then
//! targetRef UID.
//!
//! Deviation, stated: kube orders the ports of a subset, and the subsets,
//! by the MD5 of Go's debug printing of the internal structs (SortSubsets),
//! which this layer does not reproduce; they keep the order in which they
//! first appear. With one port and one address set (the common shape) the
//! result is kube's.

use crate::strategy::Object;
use serde_json::{json, Value};

/// An address's identity: (ip, targetRef.uid).
type AddressKey = (String, String);

/// The addresses offering a port, with their readiness.
type Offered = Vec<(AddressKey, bool)>;

/// A port's identity: its JSON, made unique when it has an appProtocol
/// (a `*string` in Go, compared as a pointer, so never equal to another).
fn port_key(port: &Value, index: usize) -> String {
    let unique = port.get("appProtocol").is_some_and(|p| !p.is_null());
    if unique {
        format!("{port}#{index}")
    } else {
        port.to_string()
    }
}

/// The identity of an address.
fn address_key(address: &Value) -> AddressKey {
    let ip = address.get("ip").and_then(Value::as_str).unwrap_or("").to_string();
    let uid = address.get("targetRef").and_then(|t| t.get("uid")).and_then(Value::as_str).unwrap_or("").to_string();
    (ip, uid)
}

/// Canonicalize: `subsets` repacked (see the module doc).
pub fn repack_subsets(object: &mut Object) {
    let Some(subsets) = object.get("subsets").and_then(Value::as_array) else {
        return;
    };
    // Every distinct address (first occurrence kept whole), and per port the
    // addresses offering it with their readiness, in first-seen order.
    let mut addresses: Vec<(AddressKey, Value)> = Vec::new();
    let mut ports: Vec<(String, Value, Offered)> = Vec::new();
    let mut port_index = 0;
    for subset in subsets {
        let list = |field: &str| subset.get(field).and_then(Value::as_array).cloned().unwrap_or_default();
        for port in list("ports") {
            port_index += 1;
            let key = port_key(&port, port_index);
            let slot = match ports.iter().position(|(k, _, _)| *k == key) {
                Some(slot) => slot,
                None => {
                    ports.push((key, port.clone(), Vec::new()));
                    ports.len() - 1
                }
            };
            for (field, ready) in [("addresses", true), ("notReadyAddresses", false)] {
                for address in list(field) {
                    let key = address_key(&address);
                    if !addresses.iter().any(|(k, _)| *k == key) {
                        addresses.push((key.clone(), address.clone()));
                    }
                    let Some((_, _, offered)) = ports.get_mut(slot) else { continue };
                    match offered.iter_mut().find(|(k, _)| *k == key) {
                        // Not ready trumps ready.
                        Some((_, was_ready)) => *was_ready = *was_ready && ready,
                        None => offered.push((key, ready)),
                    }
                }
            }
        }
    }
    // Ports offered by the same addresses (with the same readiness) share a subset.
    let mut groups: Vec<(Offered, Vec<Value>)> = Vec::new();
    for (_, port, mut offered) in ports {
        offered.sort();
        match groups.iter_mut().find(|(set, _)| *set == offered) {
            Some((_, group_ports)) => group_ports.push(port),
            None => groups.push((offered, vec![port])),
        }
    }
    let address_of = |key: &AddressKey| addresses.iter().find(|(k, _)| k == key).map(|(_, a)| a.clone());
    let packed: Vec<Value> = groups
        .into_iter()
        .map(|(offered, group_ports)| {
            // Sorted by IP bytes, then UID (LessEndpointAddress): `offered` is.
            let pick = |ready: bool| -> Vec<Value> {
                offered.iter().filter(|(_, r)| *r == ready).filter_map(|(k, _)| address_of(k)).collect()
            };
            let mut subset = Object::new();
            let (ready, not_ready) = (pick(true), pick(false));
            if !ready.is_empty() {
                subset.insert("addresses".into(), json!(ready));
            }
            if !not_ready.is_empty() {
                subset.insert("notReadyAddresses".into(), json!(not_ready));
            }
            subset.insert("ports".into(), json!(group_ports));
            Value::Object(subset)
        })
        .collect();
    if packed.is_empty() {
        object.shift_remove("subsets");
    } else {
        object.insert("subsets".into(), Value::Array(packed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repacked(subsets: Value) -> Value {
        let mut object = json!({"subsets": subsets}).as_object().cloned().unwrap_or_default();
        repack_subsets(&mut object);
        object.get("subsets").cloned().unwrap_or(Value::Null)
    }

    // pkg/api/endpoints/util.go: RepackSubsets sorts and de-duplicates addresses.
    #[test]
    fn addresses_sorted_and_deduplicated() {
        let got = repacked(
            json!([{"addresses": [{"ip": "10.0.0.2"}, {"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80, "protocol": "TCP"}]}]),
        );
        assert_eq!(
            got,
            json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80, "protocol": "TCP"}]}])
        );
    }

    // Subsets with the same addresses merge their ports; not ready trumps ready.
    #[test]
    fn subsets_merge_by_address_set() {
        let got = repacked(json!([
            {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}]},
            {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 443, "protocol": "TCP"}]},
            {"addresses": [{"ip": "10.0.0.3"}], "notReadyAddresses": [{"ip": "10.0.0.3"}], "ports": [{"port": 53, "protocol": "UDP"}]}
        ]));
        assert_eq!(
            got,
            json!([
                {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]},
                {"notReadyAddresses": [{"ip": "10.0.0.3"}], "ports": [{"port": 53, "protocol": "UDP"}]}
            ])
        );
    }

    // A subset without ports offers nothing and is dropped.
    #[test]
    fn subsets_without_ports_vanish() {
        assert_eq!(repacked(json!([{"addresses": [{"ip": "10.0.0.1"}]}])), Value::Null);
    }
}
