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
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// An address's identity: (ip, targetRef.uid).
type AddressKey = (String, String);

/// The addresses offering a port: (rank in address order, address index,
/// ready), sorted.
type Offered = Vec<(usize, usize, bool)>;

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

/// Canonicalize: `subsets` repacked (see the module doc). Ports found in
/// the same subsets are merged together before their addresses are, so the
/// cost follows the body's size, not ports times addresses.
pub fn repack_subsets(object: &mut Object) {
    let Some(subsets) = object.get("subsets").and_then(Value::as_array) else {
        return;
    };
    let list = |subset: &'_ Value, field: &str| -> Vec<Value> {
        subset.get(field).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    // Every distinct address (first occurrence kept whole), by index, and
    // each subset's addresses with their readiness (not ready trumps ready).
    let mut address_index: BTreeMap<AddressKey, usize> = BTreeMap::new();
    let mut addresses: Vec<Value> = Vec::new();
    let mut subset_states: Vec<BTreeMap<usize, bool>> = Vec::new();
    // Each distinct port (first-seen order) with the subsets offering it.
    let mut port_slot: HashMap<String, usize> = HashMap::new();
    let mut ports: Vec<(Value, BTreeSet<usize>)> = Vec::new();
    let mut port_count = 0;
    for (subset_number, subset) in subsets.iter().enumerate() {
        let mut state: BTreeMap<usize, bool> = BTreeMap::new();
        for (field, ready) in [("addresses", true), ("notReadyAddresses", false)] {
            for address in list(subset, field) {
                let index = *address_index.entry(address_key(&address)).or_insert_with(|| {
                    addresses.push(address.clone());
                    addresses.len() - 1
                });
                let was = state.entry(index).or_insert(ready);
                *was = *was && ready;
            }
        }
        subset_states.push(state);
        for port in list(subset, "ports") {
            port_count += 1;
            let slot = *port_slot.entry(port_key(&port, port_count)).or_insert_with(|| {
                ports.push((port.clone(), BTreeSet::new()));
                ports.len() - 1
            });
            if let Some((_, offering)) = ports.get_mut(slot) {
                offering.insert(subset_number);
            }
        }
    }
    // Each address's rank in (IP bytes, UID) order: LessEndpointAddress.
    let rank: HashMap<usize, usize> = address_index.values().enumerate().map(|(rank, index)| (*index, rank)).collect();
    // The addresses offering each set of subsets' ports, computed once per set.
    let mut offered_by_subsets: BTreeMap<BTreeSet<usize>, Offered> = BTreeMap::new();
    // Ports offered by the same addresses (with the same readiness) share a subset.
    let mut group_slot: BTreeMap<Offered, usize> = BTreeMap::new();
    let mut groups: Vec<(Offered, Vec<Value>)> = Vec::new();
    for (port, offering) in ports {
        let offered = offered_by_subsets
            .entry(offering.clone())
            .or_insert_with(|| {
                let mut union: BTreeMap<usize, bool> = BTreeMap::new();
                for state in offering.iter().filter_map(|i| subset_states.get(*i)) {
                    for (index, ready) in state {
                        let was = union.entry(*index).or_insert(*ready);
                        *was = *was && *ready;
                    }
                }
                let mut offered: Offered = union
                    .into_iter()
                    .map(|(index, ready)| (rank.get(&index).copied().unwrap_or(0), index, ready))
                    .collect();
                offered.sort_unstable();
                offered
            })
            .clone();
        let slot = *group_slot.entry(offered.clone()).or_insert_with(|| {
            groups.push((offered, Vec::new()));
            groups.len() - 1
        });
        if let Some((_, group_ports)) = groups.get_mut(slot) {
            group_ports.push(port);
        }
    }
    let packed: Vec<Value> = groups
        .into_iter()
        .map(|(offered, group_ports)| {
            let pick = |ready: bool| -> Vec<Value> {
                offered
                    .iter()
                    .filter(|(_, _, r)| *r == ready)
                    .filter_map(|(_, index, _)| addresses.get(*index).cloned())
                    .collect()
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

    // Many ports over many addresses in one subset: one address set, computed once.
    #[test]
    fn large_subsets_stay_cheap() {
        let addresses: Vec<Value> =
            (0..5000).rev().map(|i| json!({"ip": format!("10.{}.{}.1", i / 250, i % 250)})).collect();
        let ports: Vec<Value> = (1..=200).map(|p| json!({"port": p, "protocol": "TCP"})).collect();
        let got = repacked(json!([{"addresses": addresses, "ports": ports}]));
        assert_eq!(got.as_array().map(Vec::len), Some(1));
        assert_eq!(got[0]["ports"].as_array().map(Vec::len), Some(200));
        assert_eq!(got[0]["addresses"].as_array().map(Vec::len), Some(5000));
        assert_eq!(got[0]["addresses"][0]["ip"], "10.0.0.1");
    }

    // A subset without ports offers nothing and is dropped.
    #[test]
    fn subsets_without_ports_vanish() {
        assert_eq!(repacked(json!([{"addresses": [{"ip": "10.0.0.1"}]}])), Value::Null);
    }
}
