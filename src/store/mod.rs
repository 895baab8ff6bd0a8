//! One shard's objects: the keys it owns, in key order, with their recent
//! versions, already encoded.
//!
//! Every committed entry reaches every shard in revision order; the owner of
//! the entry's key applies it to its objects, every shard advances its applied
//! revision (shards will also hold watchers). Superseded versions and deletion
//! tombstones are kept for the history window so exact-resourceVersion reads
//! and watch resumption can be served from memory.
//!
//! Invariants: no I/O, time comes in as an argument; entries are applied in
//! strictly increasing revision order (asserted; the embedded log has no gaps,
//! the etcd log has some); a shard stores
//! only keys it owns.

use crate::cache::{encode_stored, CachedObject};
use crate::log::{Entry, KeyValue, Operation, Revision};
use crate::types::key::{group_resource, shard_for_key, ShardId};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};
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

#[derive(Default, Debug)]
struct VersionChain {
    /// Oldest first; the last one is current.
    versions: VecDeque<Version>,
}

impl VersionChain {
    fn current(&self) -> Option<&Version> {
        self.versions.back()
    }
}

/// Statistics a shard reports (metrics, health).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub live_objects: usize,
    pub retained_versions: usize,
    pub decode_failures: u64,
}

/// A superseded version (or a deletion) waiting to leave the history window.
#[derive(Debug)]
struct Superseded {
    key: Bytes,
    revision: Revision,
    /// The revision that superseded it (for a deletion, its own revision).
    /// Once it leaves, reads older than this are no longer exact.
    superseded_by: Revision,
    at_ms: u64,
}

pub struct ShardStore {
    shard: ShardId,
    shard_count: u16,
    objects: BTreeMap<Bytes, VersionChain>,
    applied: Revision,
    /// Reads at revisions older than this are no longer exact here: some
    /// version they would need has left the history window.
    compacted: Revision,
    history_window_ms: u64,
    superseded: VecDeque<Superseded>,
    live_objects: usize,
    retained_versions: usize,
    decode_failures: u64,
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
            superseded: VecDeque::new(),
            live_objects: 0,
            retained_versions: 0,
            decode_failures: 0,
        }
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

    /// Loads a consistent state (recovery, or a range read at `revision`).
    /// Keys this shard does not own are skipped.
    pub fn load(&mut self, revision: Revision, live: &[KeyValue], fields: &dyn FieldIndex) {
        assert!(self.objects.is_empty(), "load into a non-empty store");
        for kv in live {
            if !self.owns(&kv.key) {
                continue;
            }
            if let Some(object) = self.encode(&kv.key, &kv.value, kv.mod_revision, kv.create_revision, fields) {
                self.push_version(kv.key.clone(), Version { revision: kv.mod_revision, object: Some(object) }, 0);
            }
        }
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
            let object = match &entry.operation {
                Operation::Put(value) => {
                    let object = self.encode(&entry.key, value, entry.revision, entry.create_revision, fields);
                    if object.is_none() {
                        // Undecodable values are counted and served as absent;
                        // the entry still advances the revision.
                        continue;
                    }
                    object
                }
                Operation::Delete => None,
            };
            self.push_version(entry.key.clone(), Version { revision: entry.revision, object }, now_ms);
        }
        self.trim(now_ms);
        owned
    }

    fn encode(
        &mut self,
        key: &Bytes,
        value: &Bytes,
        mod_revision: Revision,
        create_revision: Revision,
        fields: &dyn FieldIndex,
    ) -> Option<Arc<CachedObject>> {
        let selectable = match group_resource(key) {
            Some((group, resource)) => fields.selectable_fields(group, resource),
            None => &[],
        };
        match encode_stored(key.clone(), value, mod_revision, create_revision, selectable) {
            Ok(object) => Some(object),
            Err(_) => {
                self.decode_failures += 1;
                None
            }
        }
    }

    fn push_version(&mut self, key: Bytes, version: Version, now_ms: u64) {
        let chain = self.objects.entry(key.clone()).or_default();
        let was_live = chain.current().is_some_and(|v| v.object.is_some());
        let is_live = version.object.is_some();
        if let Some(previous) = chain.current() {
            self.superseded.push_back(Superseded {
                key: key.clone(),
                revision: previous.revision,
                superseded_by: version.revision,
                at_ms: now_ms,
            });
        }
        if !is_live {
            // A deletion is history too: it leaves with the window.
            self.superseded.push_back(Superseded {
                key,
                revision: version.revision,
                superseded_by: version.revision,
                at_ms: now_ms,
            });
        }
        chain.versions.push_back(version);
        self.retained_versions += 1;
        match (was_live, is_live) {
            (false, true) => self.live_objects += 1,
            (true, false) => self.live_objects -= 1,
            _ => {}
        }
    }

    /// Drops versions superseded (and deletions made) longer than the history
    /// window ago. Records are queued in apply order, so a chain's records come
    /// in version order and each expiring version is its chain's oldest.
    fn trim(&mut self, now_ms: u64) {
        while let Some(front) = self.superseded.front() {
            if now_ms.saturating_sub(front.at_ms) < self.history_window_ms {
                break;
            }
            let Some(old) = self.superseded.pop_front() else { break };
            let Some(chain) = self.objects.get_mut(&old.key) else { continue };
            let Some(oldest) = chain.versions.front() else { continue };
            let expired = oldest.revision == old.revision && (chain.versions.len() > 1 || oldest.object.is_none());
            if expired {
                chain.versions.pop_front();
                self.retained_versions -= 1;
                self.compacted = self.compacted.max(old.superseded_by);
                if chain.versions.is_empty() {
                    self.objects.remove(&old.key);
                }
            }
        }
    }

    /// The current version of a key, if it exists.
    pub fn get(&self, key: &[u8]) -> Option<Arc<CachedObject>> {
        self.objects.get(key)?.current()?.object.clone()
    }

    /// The version of a key at `revision` (the newest version not newer than
    /// it; `None` if the key did not exist then). `Err` with the compacted
    /// revision when `revision` is older than the history this shard keeps.
    pub fn get_at(&self, key: &[u8], revision: Revision) -> Result<Option<Arc<CachedObject>>, Revision> {
        if revision < self.compacted {
            return Err(self.compacted);
        }
        let Some(chain) = self.objects.get(key) else { return Ok(None) };
        Ok(chain.versions.iter().rev().find(|v| v.revision <= revision).and_then(|v| v.object.clone()))
    }

    /// The objects under `prefix` as they were at `revision` (the newest
    /// version of each key not newer than it; keys deleted or not yet created
    /// then are skipped), in key order, after `start_after` (exclusive). `Err`
    /// with the compacted revision when `revision` is older than the history
    /// this shard keeps; at or after it, every version a read needs is
    /// retained, so a key with no version <= `revision` did not exist then.
    fn objects_at<'a>(
        &'a self,
        prefix: &'a [u8],
        revision: Revision,
        start_after: Option<&[u8]>,
    ) -> Result<impl Iterator<Item = &'a Arc<CachedObject>> + 'a, Revision> {
        if revision < self.compacted {
            return Err(self.compacted);
        }
        let lower = match start_after {
            Some(k) if k >= prefix => Bound::Excluded(Bytes::copy_from_slice(k)),
            _ => Bound::Included(Bytes::copy_from_slice(prefix)),
        };
        Ok(self.objects.range((lower, Bound::Unbounded)).take_while(move |(k, _)| k.starts_with(prefix)).filter_map(
            move |(_, chain)| chain.versions.iter().rev().find(|v| v.revision <= revision)?.object.as_ref(),
        ))
    }

    /// Objects under `prefix` at `revision` after `start_after`, at most `limit`.
    pub fn list_at(
        &self,
        prefix: &[u8],
        revision: Revision,
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Arc<CachedObject>>, Revision> {
        Ok(self.objects_at(prefix, revision, start_after)?.take(limit).cloned().collect())
    }

    /// Like [`ShardStore::list_at`], keeping only objects `matches` accepts,
    /// and stopping once `limit` of them are found: the scan's cost is the
    /// keys visited, its memory the matches returned.
    pub fn list_matching_at(
        &self,
        prefix: &[u8],
        revision: Revision,
        start_after: Option<&[u8]>,
        limit: usize,
        matches: &dyn Fn(&CachedObject) -> bool,
    ) -> Result<Vec<Arc<CachedObject>>, Revision> {
        Ok(self.objects_at(prefix, revision, start_after)?.filter(|o| matches(o)).take(limit).cloned().collect())
    }

    /// How many objects under `prefix` existed at `revision` after
    /// `start_after` (for `remainingItemCount`).
    pub fn count_at(&self, prefix: &[u8], revision: Revision, start_after: Option<&[u8]>) -> Result<usize, Revision> {
        Ok(self.objects_at(prefix, revision, start_after)?.count())
    }

    /// Current objects whose key starts with `prefix`, in key order, after
    /// `start_after` (exclusive), at most `limit`.
    pub fn list(&self, prefix: &[u8], start_after: Option<&[u8]>, limit: usize) -> Vec<Arc<CachedObject>> {
        let lower = match start_after {
            Some(k) if k >= prefix => Bound::Excluded(Bytes::copy_from_slice(k)),
            _ => Bound::Included(Bytes::copy_from_slice(prefix)),
        };
        self.objects
            .range((lower, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter_map(|(_, chain)| chain.current()?.object.clone())
            .take(limit)
            .collect()
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
        let names: Vec<_> = store.list(prefix.as_bytes(), None, 10).iter().map(|o| o.meta.name.clone()).collect();
        assert_eq!(names, ["a", "b"]);
        let after_a = ObjectKey::new("", "pods", "ns", "a").encode();
        let names: Vec<_> =
            store.list(prefix.as_bytes(), Some(&after_a), 10).iter().map(|o| o.meta.name.clone()).collect();
        assert_eq!(names, ["b"]);
        assert!(store.get(&ObjectKey::new("", "pods", "ns", "c").encode()).is_none());
        assert_eq!(store.stats().live_objects, 2);
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
                .list_at(prefix.as_bytes(), Revision(r), None, 10)
                .unwrap()
                .iter()
                .map(|o| (o.meta.name.clone(), o.mod_revision.0))
                .collect()
        };
        assert_eq!(at(1), [("a".to_string(), 1)]);
        assert_eq!(at(2), [("a".to_string(), 1), ("b".to_string(), 2)]);
        assert_eq!(at(3), [("a".to_string(), 3), ("b".to_string(), 2)]);
        assert_eq!(at(4), [("a".to_string(), 3)]);
        assert_eq!(at(5), [("a".to_string(), 3), ("c".to_string(), 5)]);
        assert_eq!(at(0), Vec::<(String, u64)>::new());
        // Once the window drops a's first version, revision 1 is unknown.
        store.apply(&[put(6, "z")], 5000, &fields);
        assert_eq!(store.list_at(prefix.as_bytes(), Revision(1), None, 10).unwrap_err(), store.compacted());
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
            fn shards_match_the_model(ops in proptest::collection::vec(op(), 1..120), shard_count in 1u16..4) {
                let fields: Vec<ResourceInfo> = Vec::new();
                let window_ms = 1000;
                let mut stores: Vec<ShardStore> =
                    (0..shard_count).map(|s| ShardStore::new(ShardId(s), shard_count, window_ms)).collect();
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
                        match store.list_at(prefix.as_bytes(), Revision(r), None, usize::MAX) {
                            Ok(objects) => at.extend(objects.iter().map(|o| (o.key.clone(), o.mod_revision.0))),
                            Err(_) => complete = false,
                        }
                    }
                    let superseded_within_window = times[r as usize + 1..].iter().all(|t| now - t < window_ms);
                    if superseded_within_window {
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
