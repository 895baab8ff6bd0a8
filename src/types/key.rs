//! Object keys: which object a log entry is about, and which shard owns it.
//!
//! A key is `/registry/{group}/{resource}/{namespace}/{name}` (group `core` for
//! the legacy group; namespace empty for cluster-scoped objects). Byte order of
//! keys is list order: by resource, then namespace, then name, as etcd orders
//! Kubernetes' keys. Names and namespaces never contain `/`, so the encoding is
//! unambiguous.
//!
//! Invariant: a key is owned by exactly one shard, chosen by a stable hash of
//! the key bytes (FNV-1a), independent of process, platform and build.

use bytes::Bytes;
use std::fmt;

/// Index of a shard (one per pinned core).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardId(pub u16);

impl fmt::Display for ShardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

const KEY_ROOT: &str = "/registry/";

/// The identity of one object.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// API group; empty for the legacy core group.
    pub group: String,
    /// Plural resource name, e.g. `pods`.
    pub resource: String,
    /// Namespace; empty for cluster-scoped resources.
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(group: &str, resource: &str, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey {
            group: group.to_string(),
            resource: resource.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// The key's bytes in the log.
    pub fn encode(&self) -> Bytes {
        let mut s = collection_prefix(&self.group, &self.resource, Some(&self.namespace));
        s.push_str(&self.name);
        Bytes::from(s)
    }

    /// Parses a key written by [`ObjectKey::encode`].
    pub fn decode(bytes: &[u8]) -> Option<ObjectKey> {
        let s = std::str::from_utf8(bytes).ok()?;
        let rest = s.strip_prefix(KEY_ROOT)?;
        let mut parts = rest.splitn(4, '/');
        let group = parts.next()?;
        let resource = parts.next()?;
        let namespace = parts.next()?;
        let name = parts.next()?;
        // `encode` writes the core group as `core`, never as empty: accepting
        // an empty group would give one key two byte forms (and two shards).
        if group.is_empty() || name.is_empty() || name.contains('/') || resource.is_empty() {
            return None;
        }
        let group = if group == "core" { "" } else { group };
        Some(ObjectKey::new(group, resource, namespace, name))
    }

    /// The shard that owns this key among `shard_count` shards.
    pub fn shard(&self, shard_count: u16) -> ShardId {
        shard_for_key(&self.encode(), shard_count)
    }
}

/// The (group, resource) of an encoded key without allocating; group is
/// empty for the core group. `None` when the bytes are not a key.
pub fn group_resource(key: &[u8]) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(KEY_ROOT.as_bytes())?;
    let mut parts = rest.splitn(3, |b| *b == b'/');
    let group = std::str::from_utf8(parts.next()?).ok()?;
    let resource = std::str::from_utf8(parts.next()?).ok()?;
    parts.next()?;
    let group = if group == "core" { "" } else { group };
    Some((group, resource))
}

/// The prefix every key of a collection starts with. `namespace: None` is every
/// namespace; `Some("")` is the cluster-scoped collection.
pub fn collection_prefix(group: &str, resource: &str, namespace: Option<&str>) -> String {
    let group = if group.is_empty() { "core" } else { group };
    let mut s = String::with_capacity(64);
    s.push_str(KEY_ROOT);
    s.push_str(group);
    s.push('/');
    s.push_str(resource);
    s.push('/');
    if let Some(ns) = namespace {
        s.push_str(ns);
        s.push('/');
    }
    s
}

/// Stable owner of a key: FNV-1a 64 of its bytes, modulo the shard count.
pub fn shard_for_key(key: &[u8], shard_count: u16) -> ShardId {
    assert!(shard_count > 0, "shard_count must be positive");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    ShardId((hash % u64::from(shard_count)) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        for key in [
            ObjectKey::new("", "pods", "default", "web-0"),
            ObjectKey::new("apps", "deployments", "kube-system", "dns"),
            ObjectKey::new("", "namespaces", "", "default"),
        ] {
            assert_eq!(ObjectKey::decode(&key.encode()), Some(key));
        }
        assert_eq!(ObjectKey::decode(b"/registry/core/pods/ns/"), None);
        assert_eq!(ObjectKey::decode(b"/other/core/pods/ns/x"), None);
        assert_eq!(ObjectKey::decode(b"/registry/core/pods"), None);
    }

    /// Found by the `object_key` fuzz target: `/registry//pods/ns/x` decoded
    /// to the core-group key, whose encoding is `/registry/core/pods/ns/x`.
    #[test]
    fn only_the_canonical_byte_form_decodes() {
        assert_eq!(ObjectKey::decode(b"/registry//pods/ns/x"), None);
        let key = ObjectKey::decode(b"/registry/core/pods/ns/x").unwrap();
        assert_eq!(key.group, "");
        assert_eq!(&key.encode()[..], b"/registry/core/pods/ns/x");
    }

    #[test]
    fn group_resource_reads_keys_in_place() {
        assert_eq!(group_resource(&ObjectKey::new("", "pods", "ns", "a").encode()), Some(("", "pods")));
        assert_eq!(
            group_resource(&ObjectKey::new("apps", "deployments", "", "a").encode()),
            Some(("apps", "deployments"))
        );
        assert_eq!(group_resource(b"/registry/core/pods"), None);
        assert_eq!(group_resource(b"/other/core/pods/ns/a"), None);
    }

    #[test]
    fn key_order_is_resource_namespace_name() {
        let a = ObjectKey::new("", "pods", "a", "z").encode();
        let b = ObjectKey::new("", "pods", "b", "a").encode();
        assert!(a < b);
        let prefix = collection_prefix("", "pods", Some("a"));
        assert!(a.starts_with(prefix.as_bytes()));
        assert!(!b.starts_with(prefix.as_bytes()));
    }

    #[test]
    fn shard_choice_is_stable_and_in_range() {
        let key = ObjectKey::new("", "pods", "default", "web-0");
        // FNV-1a is fixed: this value must never change between builds.
        assert_eq!(shard_for_key(b"", 7), ShardId((0xcbf2_9ce4_8422_2325u64 % 7) as u16));
        for n in 1..8 {
            assert!(key.shard(n).0 < n);
            assert_eq!(key.shard(n), key.shard(n));
        }
    }
}
