//! One shard's objects: the keys it owns, in key order, with their recent
//! versions, already encoded, and what they cost in memory.
//!
//! Every committed entry reaches every shard in revision order; the owner of
//! the entry's key applies it to its objects, every shard advances its applied
//! revision (shards will also hold watchers). Superseded versions and deletion
//! tombstones are kept for the history window so exact-resourceVersion reads
//! and watch resumption can be served from memory, within two bounds: their
//! age (`history_window`) and their bytes (`history_bytes_max`, this shard's
//! share): past either, the oldest go first and the compacted revision rises.
//!
//! Memory per key: one copy of the key's bytes (made by the store, so a key
//! never pins a larger buffer it was read from; every version shares it), a
//! chain holding the current version inline and older ones only when there
//! are some, and each version's `CachedObject` (its JSON and metadata spans).
//! [`MemoryStats`] counts these bytes as they change.
//!
//! Invariants: no I/O, time comes in as an argument; entries are applied in
//! strictly increasing revision order (asserted; the embedded log has no gaps,
//! the etcd log has some); a shard stores only keys it owns; a read at a
//! revision older than `compacted` is refused, never answered from a partial
//! history; `superseded_json_bytes <= history_bytes_max` after every apply.

use crate::cache::{encode_stored_hinted, CachedObject, PreparedFields};
use crate::log::{Entry, KeyValue, Operation, Revision};
use crate::types::key::{group_resource, shard_for_key, ShardId};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};
use std::mem::size_of;
use std::ops::Bound;
use std::sync::Arc;

/// Looks up the selectable fields of the resource a key belongs to.
pub trait FieldIndex {
    fn selectable_fields(&self, group: &str, resource: &str) -> &[String];
}

impl FieldIndex for Vec<ResourceInfo> {
    fn selectable_fields(&self, group: &str, resource: &str) -> &[String] {
        self.iter()
            .find(|r| r.group == group && r.resource == resource)
            .map(|r| r.selectable_fields.as_slice())
            .unwrap_or(&[])
    }
}

/// One version of a key: the object, or a deletion.
#[derive(Clone, Debug)]
pub struct Version {
    pub revision: Revision,
    /// `None` when this version is a deletion.
    pub object: Option<Arc<CachedObject>>,
}

impl Version {
    fn json_bytes(&self) -> usize {
        self.object.as_ref().map_or(0, |o| o.json.len())
    }

    fn metadata_bytes(&self) -> usize {
        self.object.as_ref().map_or(0, |o| o.metadata_bytes())
    }
}

#[derive(Debug)]
struct VersionChain {
    /// The newest version (a deletion while its tombstone is kept).
    current: Version,
    /// Superseded versions still in the history, oldest first; `None` (no
    /// allocation) when there are none, as for most keys.
    older: Option<Box<VecDeque<Version>>>,
}

impl VersionChain {
    /// The newest version not newer than `revision`.
    fn at(&self, revision: Revision) -> Option<&Version> {
        if self.current.revision <= revision {
            return Some(&self.current);
        }
        self.older.as_ref()?.iter().rev().find(|v| v.revision <= revision)
    }

    fn oldest(&self) -> &Version {
        self.older.as_ref().and_then(|o| o.front()).unwrap_or(&self.current)
    }

    fn older_capacity(&self) -> usize {
        self.older.as_ref().map_or(0, |o| o.capacity())
    }
}

/// Statistics a shard reports (metrics, health).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub live_objects: usize,
    pub retained_versions: usize,
    pub decode_failures: u64,
}

/// What one shard's objects hold in memory, by kind, in bytes. JSON is
/// counted exactly (the bytes served); the index and metadata from the
/// structures' sizes (allocator rounding and B-tree node slack not included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// The JSON of current versions.
    pub live_json_bytes: usize,
    /// The JSON of superseded versions kept for the history (what
    /// `history_bytes_max` bounds).
    pub superseded_json_bytes: usize,
    /// Everything else: keys, the key index and version chains, each
    /// version's object and metadata spans, the history queue.
    pub metadata_bytes: usize,
}

/// A superseded version (or a deletion) waiting to leave the history.
#[derive(Debug)]
struct Superseded {
    key: Bytes,
    revision: Revision,
    /// The revision that superseded it (for a deletion, its own revision).
    /// Once it leaves, reads older than this are no longer exact.
    superseded_by: Revision,
    at_ms: u64,
}

/// The part of a key that names its resource (`/registry/GROUP/RESOURCE/`),
/// or the whole key when it has no such part.
fn resource_prefix(key: &[u8]) -> &[u8] {
    let mut slashes = 0;
    for (i, byte) in key.iter().enumerate() {
        if *byte == b'/' {
            slashes += 1;
            if slashes == 4 {
                return &key[..=i];
            }
        }
    }
    key
}

/// Index bytes of one key: its B-tree entry (key handle and chain) and the
/// key's own bytes.
fn key_bytes(key: &[u8]) -> usize {
    size_of::<Bytes>() + size_of::<VersionChain>() + key.len()
}

pub struct ShardStore {
    shard: ShardId,
    shard_count: u16,
    objects: BTreeMap<Bytes, VersionChain>,
    applied: Revision,
    /// Reads at revisions older than this are no longer exact here: some
    /// version they would need has left the history.
    compacted: Revision,
    history_window_ms: u64,
    /// This shard's share of `history_bytes_max`.
    history_bytes_max: usize,
    superseded: VecDeque<Superseded>,
    live_objects: usize,
    retained_versions: usize,
    decode_failures: u64,
    memory: MemoryStats,
}

impl ShardStore {
    pub fn new(shard: ShardId, shard_count: u16, history_window_ms: u64) -> ShardStore {
        assert!(shard.0 < shard_count, "shard {shard} out of {shard_count}");
        ShardStore {
            shard,
            shard_count,
            objects: BTreeMap::new(),
            applied: Revision::ZERO,
            compacted: Revision::ZERO,
            history_window_ms,
            history_bytes_max: usize::MAX,
            superseded: VecDeque::new(),
            live_objects: 0,
            retained_versions: 0,
            decode_failures: 0,
            memory: MemoryStats::default(),
        }
    }

    /// Bounds the JSON bytes of superseded versions this shard keeps (its
    /// share of `history_bytes_max`).
    pub fn with_history_bytes_max(mut self, history_bytes_max: usize) -> ShardStore {
        self.history_bytes_max = history_bytes_max;
        self
    }

    pub fn shard(&self) -> ShardId {
        self.shard
    }

    pub fn owns(&self, key: &[u8]) -> bool {
        shard_for_key(key, self.shard_count) == self.shard
    }

    /// The revision of the last entry applied.
    pub fn applied(&self) -> Revision {
        self.applied
    }

    /// The oldest revision this shard still answers exactly.
    pub fn compacted(&self) -> Revision {
        self.compacted
    }

    pub fn stats(&self) -> StoreStats {
        StoreStats {
            live_objects: self.live_objects,
            retained_versions: self.retained_versions,
            decode_failures: self.decode_failures,
        }
    }

    /// Bytes held, by kind.
    pub fn memory(&self) -> MemoryStats {
        let queue = self.superseded.capacity() * size_of::<Superseded>();
        MemoryStats { metadata_bytes: self.memory.metadata_bytes + queue, ..self.memory }
    }

    /// Loads a consistent state (recovery, or a range read at `revision`).
    /// Keys this shard does not own are skipped. A value whose snapshot kept
    /// the cache's hint (`KeyValue::cached`) is built from it, unparsed.
    pub fn load(&mut self, revision: Revision, live: &[KeyValue], fields: &dyn FieldIndex) {
        assert!(self.objects.is_empty(), "load into a non-empty store");
        // The selectable fields of the resource the last key belonged to:
        // keys come sorted, so a resource's objects are consecutive.
        let mut resource: Option<(&[u8], PreparedFields<'_>)> = None;
        let mut chains: Vec<(Bytes, VersionChain)> = Vec::new();
        for kv in live {
            if !self.owns(&kv.key) {
                continue;
            }
            let prefix = resource_prefix(&kv.key);
            let prepared = match &resource {
                Some((last, prepared)) if *last == prefix => prepared,
                _ => {
                    let selectable = match group_resource(&kv.key) {
                        Some((group, resource)) => fields.selectable_fields(group, resource),
                        None => &[],
                    };
                    &resource.insert((prefix, PreparedFields::new(selectable))).1
                }
            };
            // The store's own copy of the key (never a slice of a read buffer).
            let key = Bytes::copy_from_slice(&kv.key);
            let encoded =
                encode_stored_hinted(key.clone(), &kv.value, kv.mod_revision, kv.create_revision, prepared, &kv.cached);
            let Ok(object) = encoded else {
                self.decode_failures += 1;
                continue;
            };
            let version = Version { revision: kv.mod_revision, object: Some(object) };
            self.memory.live_json_bytes += version.json_bytes();
            self.memory.metadata_bytes += version.metadata_bytes() + key_bytes(&key);
            self.retained_versions += 1;
            self.live_objects += 1;
            chains.push((key, VersionChain { current: version, older: None }));
        }
        // The embedded log's state comes in key order, and the B-tree is then
        // built in one pass. Another log's need not: kube's etcd layout sorts
        // its keys (`/registry/pods/NS/NAME`, `/registry/minions/NAME`)
        // otherwise than ours (`/registry/core/pods/NS/NAME`), so the order is put right here (a stable
        // sort, linear on sorted input) rather than assumed.
        if !chains.windows(2).all(|w| w[0].0 < w[1].0) {
            chains.sort_by(|a, b| a.0.cmp(&b.0));
        }
        self.objects = chains.into_iter().collect();
        self.applied = revision;
        // History before the loaded state is unknown.
        self.compacted = revision;
    }

    /// Applies committed entries in revision order. Returns how many this
    /// shard owned.
    pub fn apply(&mut self, entries: &[Entry], now_ms: u64, fields: &dyn FieldIndex) -> usize {
        let mut owned = 0;
        for entry in entries {
            // Strictly increasing; gaps are allowed: the etcd log's revisions
            // skip what other prefixes and refused transactions never produce.
            assert!(
                entry.revision > self.applied,
                "shard {} applied {} but received {}",
                self.shard,
                self.applied,
                entry.revision
            );
            self.applied = entry.revision;
            if !self.owns(&entry.key) {
                continue;
            }
            owned += 1;
            let key = self.stored_key(&entry.key);
            let object = match &entry.operation {
                Operation::Put(value) => {
                    let object = self.encode(&key, value, entry.revision, entry.create_revision, fields, &[]);
                    if object.is_none() {
                        // Undecodable values are counted and served as absent;
                        // the entry still advances the revision.
                        continue;
                    }
                    object
                }
                Operation::Delete => None,
            };
            self.push_version(key, Version { revision: entry.revision, object }, now_ms);
        }
        self.trim(now_ms);
        owned
    }

    /// The store's own copy of `key`: the one its chain holds, or a fresh
    /// copy for a new key (never a slice of a larger buffer).
    fn stored_key(&self, key: &Bytes) -> Bytes {
        match self.objects.get_key_value(&key[..]) {
            Some((stored, _)) => stored.clone(),
            None => Bytes::copy_from_slice(key),
        }
    }

    fn encode(
        &mut self,
        key: &Bytes,
        value: &Bytes,
        mod_revision: Revision,
        create_revision: Revision,
        fields: &dyn FieldIndex,
        hint: &[u8],
    ) -> Option<Arc<CachedObject>> {
        let selectable = match group_resource(key) {
            Some((group, resource)) => fields.selectable_fields(group, resource),
            None => &[],
        };
        match encode_stored_hinted(
            key.clone(),
            value,
            mod_revision,
            create_revision,
            &PreparedFields::new(selectable),
            hint,
        ) {
            Ok(object) => Some(object),
            Err(_) => {
                self.decode_failures += 1;
                None
            }
        }
    }

    fn push_version(&mut self, key: Bytes, version: Version, now_ms: u64) {
        let is_live = version.object.is_some();
        let revision = version.revision;
        let json_bytes = version.json_bytes();
        self.memory.live_json_bytes += json_bytes;
        self.memory.metadata_bytes += version.metadata_bytes();
        self.retained_versions += 1;
        let was_live = match self.objects.get_mut(&key) {
            None => {
                self.memory.metadata_bytes += key_bytes(&key);
                self.objects.insert(key.clone(), VersionChain { current: version, older: None });
                false
            }
            Some(chain) => {
                let capacity_before = chain.older_capacity();
                let previous = std::mem::replace(&mut chain.current, version);
                let was_live = previous.object.is_some();
                self.memory.live_json_bytes -= previous.json_bytes();
                self.memory.superseded_json_bytes += previous.json_bytes();
                self.superseded.push_back(Superseded {
                    key: key.clone(),
                    revision: previous.revision,
                    superseded_by: revision,
                    at_ms: now_ms,
                });
                chain.older.get_or_insert_with(Default::default).push_back(previous);
                self.memory.metadata_bytes += (chain.older_capacity() - capacity_before) * size_of::<Version>();
                if capacity_before == 0 {
                    self.memory.metadata_bytes += size_of::<VecDeque<Version>>();
                }
                was_live
            }
        };
        if !is_live {
            // A deletion is history too: it leaves with the window.
            self.superseded.push_back(Superseded { key, revision, superseded_by: revision, at_ms: now_ms });
        }
        match (was_live, is_live) {
            (false, true) => self.live_objects += 1,
            (true, false) => self.live_objects -= 1,
            _ => {}
        }
    }

    /// Drops versions superseded (and deletions made) longer than the history
    /// window ago, then the oldest while their bytes pass the budget. Records
    /// are queued in apply order, so a chain's records come in version order
    /// and each leaving version is its chain's oldest.
    fn trim(&mut self, now_ms: u64) {
        while let Some(front) = self.superseded.front() {
            let expired = now_ms.saturating_sub(front.at_ms) >= self.history_window_ms;
            if !expired && self.memory.superseded_json_bytes <= self.history_bytes_max {
                break;
            }
            let Some(old) = self.superseded.pop_front() else { break };
            self.forget(&old);
        }
        if self.superseded.is_empty() && self.superseded.capacity() > 0 {
            self.superseded = VecDeque::new();
        }
    }

    /// Drops the version `old` names if it is still its chain's oldest.
    fn forget(&mut self, old: &Superseded) {
        let Some(chain) = self.objects.get_mut(&old.key[..]) else { return };
        if chain.oldest().revision != old.revision {
            return;
        }
        let leaving = match chain.older.as_mut() {
            Some(older) => {
                let Some(leaving) = older.pop_front() else { return };
                self.memory.superseded_json_bytes -= leaving.json_bytes();
                if older.is_empty() {
                    self.memory.metadata_bytes -=
                        older.capacity() * size_of::<Version>() + size_of::<VecDeque<Version>>();
                    chain.older = None;
                }
                leaving
            }
            // Only a deletion's tombstone leaves with no older versions.
            None if chain.current.object.is_none() => {
                let Some((key, chain)) = self.objects.remove_entry(&old.key[..]) else { return };
                self.memory.metadata_bytes -= key_bytes(&key);
                chain.current
            }
            None => return,
        };
        self.memory.metadata_bytes -= leaving.metadata_bytes();
        self.retained_versions -= 1;
        self.compacted = self.compacted.max(old.superseded_by);
    }

    /// The current version of a key, if it exists.
    pub fn get(&self, key: &[u8]) -> Option<Arc<CachedObject>> {
        self.objects.get(key)?.current.object.clone()
    }

    /// The version of a key at `revision` (the newest version not newer than
    /// it; `None` if the key did not exist then). `Err` with the compacted
    /// revision when `revision` is older than the history this shard keeps.
    pub fn get_at(&self, key: &[u8], revision: Revision) -> Result<Option<Arc<CachedObject>>, Revision> {
        if revision < self.compacted {
            return Err(self.compacted);
        }
        let Some(chain) = self.objects.get(key) else { return Ok(None) };
        Ok(chain.at(revision).and_then(|v| v.object.clone()))
    }

    /// The objects under `prefix` as they were at `revision` (the newest
    /// version of each key not newer than it; keys deleted or not yet created
    /// then are skipped), in key order, from `start` (a key after the last
    /// one served, or a continue token's start key, inclusive). `Err`
    /// with the compacted revision when `revision` is older than the history
    /// this shard keeps; at or after it, every version a read needs is
    /// retained, so a key with no version <= `revision` did not exist then.
    fn objects_at<'a>(
        &'a self,
        prefix: &'a [u8],
        revision: Revision,
        start: Bound<&[u8]>,
    ) -> Result<impl Iterator<Item = &'a Arc<CachedObject>> + 'a, Revision> {
        if revision < self.compacted {
            return Err(self.compacted);
        }
        // A start before the prefix (never given) reads from the prefix.
        let lower = match start {
            Bound::Excluded(k) if k >= prefix => Bound::Excluded(k),
            Bound::Included(k) if k >= prefix => Bound::Included(k),
            _ => Bound::Included(prefix),
        };
        Ok(self
            .objects
            .range::<[u8], _>((lower, Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .filter_map(move |(_, chain)| chain.at(revision)?.object.as_ref()))
    }

    /// Objects under `prefix` at `revision` from `start`, at most `limit`.
    pub fn list_at(
        &self,
        prefix: &[u8],
        revision: Revision,
        start: Bound<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Arc<CachedObject>>, Revision> {
        Ok(self.objects_at(prefix, revision, start)?.take(limit).cloned().collect())
    }

    /// Like [`ShardStore::list_at`], keeping only objects `matches` accepts,
    /// and stopping once `limit` of them are found: the scan's cost is the
    /// keys visited, its memory the matches returned.
    pub fn list_matching_at(
        &self,
        prefix: &[u8],
        revision: Revision,
        start: Bound<&[u8]>,
        limit: usize,
        matches: &dyn Fn(&CachedObject) -> bool,
    ) -> Result<Vec<Arc<CachedObject>>, Revision> {
        Ok(self.objects_at(prefix, revision, start)?.filter(|o| matches(o)).take(limit).cloned().collect())
    }

    /// How many objects under `prefix` existed at `revision` from `start`
    /// (for `remainingItemCount`).
    pub fn count_at(&self, prefix: &[u8], revision: Revision, start: Bound<&[u8]>) -> Result<usize, Revision> {
        Ok(self.objects_at(prefix, revision, start)?.count())
    }

    /// Current objects whose key starts with `prefix`, in key order, after
    /// `start_after` (exclusive), at most `limit`.
    pub fn list(&self, prefix: &[u8], start_after: Option<&[u8]>, limit: usize) -> Vec<Arc<CachedObject>> {
        let lower = match start_after {
            Some(k) if k >= prefix => Bound::Excluded(k),
            _ => Bound::Included(prefix),
        };
        self.objects
            .range::<[u8], _>((lower, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter_map(|(_, chain)| chain.current.object.clone())
            .take(limit)
            .collect()
    }
}

#[cfg(test)]
impl ShardStore {
    /// The memory counts recomputed from the structure (the running counts
    /// must always equal them).
    fn recount(&self) -> MemoryStats {
        let mut counted = MemoryStats::default();
        for (key, chain) in &self.objects {
            counted.metadata_bytes += key_bytes(key) + chain.current.metadata_bytes();
            counted.live_json_bytes += chain.current.json_bytes();
            if let Some(older) = &chain.older {
                counted.metadata_bytes += size_of::<VecDeque<Version>>() + older.capacity() * size_of::<Version>();
                for version in older.iter() {
                    counted.metadata_bytes += version.metadata_bytes();
                    counted.superseded_json_bytes += version.json_bytes();
                }
            }
        }
        counted.metadata_bytes += self.superseded.capacity() * size_of::<Superseded>();
        counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::PreviousValue;
    use crate::types::key::ObjectKey;

    fn pod(name: &str) -> Bytes {
        Bytes::from(format!(r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns"}}}}"#))
    }

    fn put(rev: u64, name: &str) -> Entry {
        Entry {
            revision: Revision(rev),
            key: ObjectKey::new("", "pods", "ns", name).encode(),
            operation: Operation::Put(pod(name)),
            create_revision: Revision(rev),
            previous: None,
        }
    }

    fn delete(rev: u64, name: &str, created: u64) -> Entry {
        Entry {
            revision: Revision(rev),
            key: ObjectKey::new("", "pods", "ns", name).encode(),
            operation: Operation::Delete,
            create_revision: Revision(created),
            previous: Some(PreviousValue {
                mod_revision: Revision(created),
                create_revision: Revision(created),
                value: pod(name),
            }),
        }
    }

    #[test]
    fn apply_get_list_in_key_order() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        store.apply(&[put(1, "b"), put(2, "a"), put(3, "c"), delete(4, "c", 3)], 0, &fields);
        assert_eq!(store.applied(), Revision(4));
        let prefix = crate::types::key::collection_prefix("", "pods", Some("ns"));
        let names: Vec<_> =
            store.list(prefix.as_bytes(), None, 10).iter().map(|o| o.meta().name().to_string()).collect();
        assert_eq!(names, ["a", "b"]);
        let after_a = ObjectKey::new("", "pods", "ns", "a").encode();
        let names: Vec<_> =
            store.list(prefix.as_bytes(), Some(&after_a), 10).iter().map(|o| o.meta().name().to_string()).collect();
        assert_eq!(names, ["b"]);
        assert!(store.get(&ObjectKey::new("", "pods", "ns", "c").encode()).is_none());
        assert_eq!(store.stats().live_objects, 2);
    }

    /// A state loaded out of key order (kube's etcd layout orders its keys
    /// otherwise than ours) is served in key order; found by tests/join.rs,
    /// where an assertion stopped the shard.
    #[test]
    fn a_state_loaded_out_of_key_order_is_served_in_key_order() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let kv = |name: &str, rev: u64| KeyValue {
            key: ObjectKey::new("", "pods", "ns", name).encode(),
            value: pod(name),
            create_revision: Revision(rev),
            mod_revision: Revision(rev),
            cached: Bytes::new(),
        };
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        store.load(Revision(9), &[kv("c", 3), kv("a", 1), kv("b", 2)], &fields);
        let prefix = crate::types::key::collection_prefix("", "pods", Some("ns"));
        let names: Vec<_> =
            store.list(prefix.as_bytes(), None, 10).iter().map(|o| o.meta().name().to_string()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(store.get(&ObjectKey::new("", "pods", "ns", "b").encode()).unwrap().mod_revision, Revision(2));
    }

    #[test]
    fn history_window_serves_then_forgets_old_versions() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        let key = ObjectKey::new("", "pods", "ns", "a").encode();
        store.apply(&[put(1, "a")], 0, &fields);
        let mut update = put(2, "a");
        update.create_revision = Revision(1);
        store.apply(&[update], 10, &fields);
        assert_eq!(store.get_at(&key, Revision(1)).unwrap().unwrap().mod_revision, Revision(1));
        assert_eq!(store.get_at(&key, Revision(2)).unwrap().unwrap().mod_revision, Revision(2));
        store.apply(&[put(3, "z")], 2000, &fields);
        assert_eq!(store.get_at(&key, Revision(1)).unwrap_err(), Revision(2));
        assert_eq!(store.compacted(), Revision(2));
        assert_eq!(store.stats().retained_versions, 2);
    }

    #[test]
    fn list_at_reads_a_past_revision() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        let mut update = put(3, "a");
        update.create_revision = Revision(1);
        store.apply(&[put(1, "a"), put(2, "b"), update, delete(4, "b", 2), put(5, "c")], 0, &fields);
        let prefix = crate::types::key::collection_prefix("", "pods", Some("ns"));
        let at = |r: u64| -> Vec<(String, u64)> {
            store
                .list_at(prefix.as_bytes(), Revision(r), Bound::Unbounded, 10)
                .unwrap()
                .iter()
                .map(|o| (o.meta().name().to_string(), o.mod_revision.0))
                .collect()
        };
        assert_eq!(at(1), [("a".to_string(), 1)]);
        assert_eq!(at(2), [("a".to_string(), 1), ("b".to_string(), 2)]);
        assert_eq!(at(3), [("a".to_string(), 3), ("b".to_string(), 2)]);
        assert_eq!(at(4), [("a".to_string(), 3)]);
        assert_eq!(at(5), [("a".to_string(), 3), ("c".to_string(), 5)]);
        assert_eq!(at(0), Vec::<(String, u64)>::new());
        // From a key: after it (a page's last key), at it (a continue token's
        // start, inclusive), or at the key and NUL (kube's next start).
        let names = |start: Bound<&[u8]>| -> Vec<String> {
            let run = store.list_at(prefix.as_bytes(), Revision(5), start, 10).unwrap();
            run.iter().map(|o| o.meta().name().to_string()).collect()
        };
        let a = format!("{prefix}a");
        let a_nul = format!("{prefix}a\0");
        assert_eq!(names(Bound::Excluded(a.as_bytes())), ["c"]);
        assert_eq!(names(Bound::Included(a.as_bytes())), ["a", "c"]);
        assert_eq!(names(Bound::Included(a_nul.as_bytes())), ["c"]);
        // A start before the prefix reads from the prefix; none past its end.
        assert_eq!(names(Bound::Included(b"/registry/core/a")), ["a", "c"]);
        assert_eq!(names(Bound::Included(b"/registry/core/pods/nt/")), Vec::<String>::new());
        assert_eq!(store.count_at(prefix.as_bytes(), Revision(5), Bound::Included(a.as_bytes())), Ok(2));
        // Once the window drops a's first version, revision 1 is unknown.
        store.apply(&[put(6, "z")], 5000, &fields);
        assert_eq!(store.list_at(prefix.as_bytes(), Revision(1), Bound::Unbounded, 10).unwrap_err(), store.compacted());
        assert!(store.compacted() >= Revision(3));
    }

    #[test]
    #[should_panic(expected = "applied")]
    fn a_repeated_revision_is_refused() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        store.apply(&[put(2, "a")], 0, &fields);
        store.apply(&[put(2, "b")], 0, &fields);
    }

    /// The etcd log's revisions have gaps (other keys, other writers): a read
    /// inside a gap sees the state of the last revision before it.
    #[test]
    fn gaps_are_accepted_and_reads_inside_them_see_the_earlier_state() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        store.apply(&[put(3, "a")], 0, &fields);
        store.apply(&[put(7, "a")], 0, &fields);
        assert_eq!(store.applied(), Revision(7));
        let key = ObjectKey::new("", "pods", "ns", "a").encode();
        assert_eq!(store.get_at(&key, Revision(5)).unwrap().unwrap().mod_revision, Revision(3));
        assert_eq!(store.get_at(&key, Revision(7)).unwrap().unwrap().mod_revision, Revision(7));
    }

    #[test]
    fn non_owned_keys_only_advance_the_revision() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let key = ObjectKey::new("", "pods", "ns", "a");
        let owner = key.shard(2);
        let other = ShardId(1 - owner.0);
        let mut store = ShardStore::new(other, 2, 1000);
        assert_eq!(store.apply(&[put(1, "a")], 0, &fields), 0);
        assert_eq!(store.applied(), Revision(1));
        assert!(store.get(&key.encode()).is_none());
    }

    /// The counts are exact: the served JSON's bytes, and the structures'
    /// sizes; all return to zero when every version has left.
    #[test]
    fn memory_is_counted_exactly() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut store = ShardStore::new(ShardId(0), 1, 1000);
        let served = |name: &str, rev: u64| {
            format!(r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{rev}"}}}}"#)
                .len()
        };
        store.apply(&[put(1, "a"), put(2, "bb")], 0, &fields);
        let memory = store.memory();
        assert_eq!(memory.live_json_bytes, served("a", 1) + served("bb", 2));
        assert_eq!(memory.superseded_json_bytes, 0);
        let key_a = ObjectKey::new("", "pods", "ns", "a").encode();
        let one = key_bytes(&key_a) + store.get(&key_a).unwrap().metadata_bytes();
        assert!(memory.metadata_bytes >= 2 * one, "{memory:?}");
        assert_eq!(memory, store.recount());
        let mut update = put(3, "a");
        update.create_revision = Revision(1);
        store.apply(&[update, delete(4, "bb", 2)], 10, &fields);
        let memory = store.memory();
        assert_eq!(memory.live_json_bytes, served("a", 3));
        assert_eq!(memory.superseded_json_bytes, served("a", 1) + served("bb", 2));
        assert_eq!(memory, store.recount());
        // The window passes: only the current version of a is left.
        store.apply(&[delete(5, "a", 1)], 2000, &fields);
        store.apply(&[put(6, "z")], 4000, &fields);
        let memory = store.memory();
        assert_eq!((memory.live_json_bytes, memory.superseded_json_bytes), (served("z", 6), 0));
        assert_eq!(memory, store.recount());
        assert_eq!(store.stats().retained_versions, 1);
    }

    /// Past the byte budget the oldest superseded versions leave first (before
    /// the window would drop them), the compacted revision follows, and reads
    /// that needed them are refused while newer ones are still exact.
    #[test]
    fn the_history_budget_drops_the_oldest_first() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let one = |name: &str, rev: u64| {
            let mut entry = put(rev, name);
            entry.create_revision = Revision(1);
            entry
        };
        // Room for two superseded versions of "a" (revisions 1..9 are one digit).
        let size =
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"1"}}"#.len();
        let mut store = ShardStore::new(ShardId(0), 1, 60_000).with_history_bytes_max(2 * size);
        let key = ObjectKey::new("", "pods", "ns", "a").encode();
        store.apply(&[put(1, "a"), one("a", 2), one("a", 3)], 0, &fields);
        assert_eq!(store.compacted(), Revision::ZERO);
        assert_eq!(store.get_at(&key, Revision(1)).unwrap().unwrap().mod_revision, Revision(1));
        store.apply(&[one("a", 4)], 1, &fields);
        // Version 1 left (the oldest); 2 and 3 stay.
        assert_eq!(store.memory().superseded_json_bytes, 2 * size);
        assert_eq!(store.compacted(), Revision(2));
        assert_eq!(store.get_at(&key, Revision(1)).unwrap_err(), Revision(2));
        assert_eq!(store.get_at(&key, Revision(2)).unwrap().unwrap().mod_revision, Revision(2));
        store.apply(&[one("a", 5), one("a", 6)], 2, &fields);
        assert_eq!(store.compacted(), Revision(4));
        let prefix = crate::types::key::collection_prefix("", "pods", Some("ns"));
        assert_eq!(store.list_at(prefix.as_bytes(), Revision(3), Bound::Unbounded, 10).unwrap_err(), Revision(4));
        let at4: Vec<u64> = store
            .list_at(prefix.as_bytes(), Revision(4), Bound::Unbounded, 10)
            .unwrap()
            .iter()
            .map(|o| o.mod_revision.0)
            .collect();
        assert_eq!(at4, [4]);
        assert_eq!(store.stats().retained_versions, 3);
        assert_eq!(store.memory(), store.recount());
    }

    mod model {
        //! The shard stores beside a trivial model: a `BTreeMap` per revision.
        use super::super::*;
        use crate::log::PreviousValue;
        use crate::types::key::ObjectKey;
        use proptest::prelude::*;

        #[derive(Clone, Debug)]
        enum Op {
            Put(u8),
            Delete(u8),
            Wait(u64),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => (0u8..12).prop_map(Op::Put),
                2 => (0u8..12).prop_map(Op::Delete),
                1 => (0u64..400).prop_map(Op::Wait),
            ]
        }

        fn key(k: u8) -> Bytes {
            ObjectKey::new("", "pods", if k % 2 == 0 { "even" } else { "odd" }, &format!("p{k:02}")).encode()
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
            #[test]
            fn shards_match_the_model(
                ops in proptest::collection::vec(op(), 1..120),
                shard_count in 1u16..4,
                budget in proptest::option::of(0usize..600),
            ) {
                let fields: Vec<ResourceInfo> = Vec::new();
                let window_ms = 1000;
                let mut stores: Vec<ShardStore> = (0..shard_count)
                    .map(|s| {
                        let store = ShardStore::new(ShardId(s), shard_count, window_ms);
                        match budget { Some(bytes) => store.with_history_bytes_max(bytes), None => store }
                    })
                    .collect();
                // states[r] = the model's map after revision r; times[r] = when r was applied.
                let mut states: Vec<std::collections::BTreeMap<Bytes, (u64, u64)>> = vec![Default::default()];
                let mut times = vec![0u64];
                let mut now = 0u64;
                for op in ops {
                    let mut state = states.last().cloned().unwrap_or_default();
                    let revision = Revision(states.len() as u64);
                    let entry = match op {
                        Op::Wait(ms) => { now += ms; continue; }
                        Op::Put(k) => {
                            let created = state.get(&key(k)).map(|(_, c)| *c).unwrap_or(revision.0);
                            state.insert(key(k), (revision.0, created));
                            let name = format!("p{k:02}");
                            let value = Bytes::from(format!(r#"{{"metadata":{{"name":"{name}"}}}}"#));
                            Entry { revision, key: key(k), operation: Operation::Put(value), create_revision: Revision(created), previous: None }
                        }
                        Op::Delete(k) => {
                            let Some((modified, created)) = state.remove(&key(k)) else { continue };
                            Entry { revision, key: key(k), operation: Operation::Delete, create_revision: Revision(created),
                                previous: Some(PreviousValue { mod_revision: Revision(modified), create_revision: Revision(created), value: Bytes::new() }) }
                        }
                    };
                    for store in &mut stores {
                        store.apply(std::slice::from_ref(&entry), now, &fields);
                        prop_assert_eq!(store.memory(), store.recount());
                        prop_assert!(store.memory().superseded_json_bytes <= budget.unwrap_or(usize::MAX));
                    }
                    states.push(state);
                    times.push(now);
                }
                let head = Revision(states.len() as u64 - 1);
                let prefix = crate::types::key::collection_prefix("", "pods", None);
                // Current state: get and list agree with the model on every shard.
                let mut merged: Vec<(Bytes, u64)> = Vec::new();
                for store in &stores {
                    prop_assert_eq!(store.applied(), head);
                    prop_assert!(store.compacted() <= head, "the current state is always exact");
                    for object in store.list(prefix.as_bytes(), None, usize::MAX) {
                        prop_assert!(store.owns(&object.key));
                        merged.push((object.key.clone(), object.mod_revision.0));
                    }
                }
                merged.sort();
                let expected: Vec<(Bytes, u64)> = states[head.0 as usize].iter().map(|(k, (m, _))| (k.clone(), *m)).collect();
                prop_assert_eq!(&merged, &expected);
                // Past revisions: exact inside the window, an error (never a wrong answer) outside it.
                for r in 0..=head.0 {
                    let mut at: Vec<(Bytes, u64)> = Vec::new();
                    let mut complete = true;
                    for store in &stores {
                        match store.list_at(prefix.as_bytes(), Revision(r), Bound::Unbounded, usize::MAX) {
                            Ok(objects) => at.extend(objects.iter().map(|o| (o.key.clone(), o.mod_revision.0))),
                            Err(_) => complete = false,
                        }
                    }
                    let superseded_within_window = times[r as usize + 1..].iter().all(|t| now - t < window_ms);
                    // A byte budget may refuse more, never answer wrongly.
                    if superseded_within_window && budget.is_none() {
                        prop_assert!(complete, "revision {} is inside the window", r);
                    }
                    if complete {
                        at.sort();
                        let expected: Vec<(Bytes, u64)> = states[r as usize].iter().map(|(k, (m, _))| (k.clone(), *m)).collect();
                        prop_assert_eq!(at, expected, "state at revision {}", r);
                    }
                }
            }
        }
    }
}
