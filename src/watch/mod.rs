//! Watchers on one shard: which committed entries each watcher sees, as which
//! event, and the recent history a watch resumes from.
//!
//! Every shard sees every committed entry in revision order (`store/`); the
//! hub of the shard holding a watcher's connection turns entries into events
//! for it. An entry's object is encoded once per shard for all its watchers;
//! each watcher gets handles to the same bytes.
//!
//! Event rules (kube-apiserver's): with `p` = the previous state matched the
//! watcher's filter and `c` = the new state matches it, a put is ADDED when
//! `!p && c`, MODIFIED when `p && c`, DELETED when `p && !c` (the object left
//! the selection: it carries the previous state at the put's resourceVersion,
//! as kube's cache watcher sends it); a delete is DELETED when `p`, carrying
//! the last state at the deletion's resourceVersion.
//!
//! Matching is indexed: a watcher is filed under the object key of a
//! single-object watch, else under its collection prefix; a watcher whose
//! field selector requires an exact value of its resource's trigger field
//! (pods' `spec.nodeName`, as kube-apiserver's cacher indexes them) is filed
//! under that value too. An entry visits only the watchers filed under its
//! resource, namespace or object key, and of the triggered ones only those
//! filed under the trigger value of its new or previous state (so a pod that
//! moves away from a node still reaches that node's watchers, as DELETED).
//!
//! Invariants: no I/O; events reach a watcher in revision order with no gap
//! and no duplicate (entries are dispatched in order, and a resumed watcher
//! only gets entries after its start revision); a watcher whose queue is full
//! is closed and counted, never waited for; history is bounded by time,
//! count and bytes (`history_bytes_max`: each kept entry's key, value and
//! previous value, which every shard's hub shares), the oldest entries
//! leaving first, and a start older than it is refused (410).

pub mod queue;

use crate::cache::{encode_stored, CachedObject};
use crate::log::{Entry, Operation, Revision};
use crate::store::FieldIndex;
use crate::types::key::group_resource;
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

/// Identity of a watcher on its shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatchId(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
}

impl EventType {
    /// The start of the event's JSON document, up to the object.
    pub fn frame_prefix(self) -> &'static [u8] {
        match self {
            EventType::Added => b"{\"type\":\"ADDED\",\"object\":",
            EventType::Modified => b"{\"type\":\"MODIFIED\",\"object\":",
            EventType::Deleted => b"{\"type\":\"DELETED\",\"object\":",
            EventType::Bookmark => b"{\"type\":\"BOOKMARK\",\"object\":",
        }
    }
}

/// The end of every event document: one JSON document per line.
pub const FRAME_SUFFIX: &[u8] = b"}\n";

/// One event for one watcher: the type and the object's encoded bytes (shared
/// with every other watcher of the same event).
#[derive(Clone, Debug)]
pub struct WatchEvent {
    pub event_type: EventType,
    pub revision: Revision,
    pub object: Bytes,
    /// The cached object `object` is the JSON of (`None` for bookmarks):
    /// its other encodings are built once and shared by every watcher.
    pub source: Option<Arc<CachedObject>>,
}

/// Where a watcher's events go. `offer` must not wait: `false` means the
/// watcher cannot take more (queue full, or the client went away) and it is
/// closed.
pub trait EventSink {
    fn offer(&mut self, event: WatchEvent) -> bool;
}

/// What a watcher watches.
pub struct WatchFilter {
    /// Key prefix of the collection (resource, and namespace if any).
    pub prefix: Bytes,
    /// Label and field selectors; `None` matches everything.
    pub matches: Option<Box<dyn Fn(&CachedObject) -> bool>>,
    /// Periodic bookmarks (`allowWatchBookmarks=true`): the object's kind and
    /// apiVersion, and how often.
    pub bookmarks: Option<BookmarkSpec>,
    /// A single object's name (a `/watch/.../NAME` path or a
    /// `metadata.name=` field selector): the watcher is indexed by its key.
    pub name: Option<String>,
    /// The value the field selector requires of the resource's trigger field
    /// ([`trigger_field`]): the watcher is indexed by it. `matches` must
    /// require it too (the index only narrows who is asked).
    pub trigger: Option<String>,
}

/// The field of a resource whose exact value indexes watchers, as
/// kube-apiserver's cacher has one trigger (IndexerFunc) per resource:
/// pods by `spec.nodeName`, so each kubelet's watch is asked only about
/// the pods of its node.
pub fn trigger_field(group: &str, resource: &str) -> Option<&'static str> {
    match (group, resource) {
        ("", "pods") => Some("spec.nodeName"),
        _ => None,
    }
}

/// The key a watcher is indexed under: the object's key for a
/// single-object watch, else the collection prefix.
fn index_key(prefix: &Bytes, name: Option<&str>) -> Bytes {
    match name {
        Some(name) => {
            let mut key = prefix.to_vec();
            key.extend_from_slice(name.as_bytes());
            Bytes::from(key)
        }
        None => prefix.clone(),
    }
}

/// The index keys an entry's watchers can be under: the resource's
/// collection (every namespace), the namespace's collection, the object.
fn index_keys(key: &[u8]) -> [&[u8]; 3] {
    let mut slashes = key.iter().enumerate().filter(|(_, b)| **b == b'/').map(|(i, _)| i);
    // `/registry/{group}/{resource}/{namespace}/{name}`: slashes 0,9,g,r,ns.
    let resource_end = slashes.nth(3).map(|i| i + 1).unwrap_or(key.len());
    let namespace_end = slashes.next().map(|i| i + 1).unwrap_or(key.len());
    [&key[..resource_end], &key[..namespace_end], key]
}

/// What a bookmark of this watch looks like, and how often one is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookmarkSpec {
    /// Shared with the watch's response body (its final bookmark).
    pub kind: Arc<str>,
    pub api_version: Arc<str>,
    pub interval_ms: u64,
}

/// A bookmark object: only kind, apiVersion and metadata.resourceVersion
/// (and, for the end of a streaming list's initial events, its annotation).
pub fn bookmark_object(kind: &str, api_version: &str, revision: Revision, initial_events_end: bool) -> Bytes {
    let annotations = if initial_events_end { ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" } else { "" };
    Bytes::from(format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{{\"resourceVersion\":\"{}\"{annotations}}}}}",
        serde_json::to_string(kind).unwrap_or_default(),
        serde_json::to_string(api_version).unwrap_or_default(),
        revision.0
    ))
}

/// What a registered watcher selects: its collection and predicate.
struct Selection {
    prefix: Bytes,
    matches: Option<Box<Predicate>>,
}

/// A watcher's label and field selectors, as [`WatchFilter::matches`] has them.
type Predicate = dyn Fn(&CachedObject) -> bool;

impl Selection {
    fn accepts(&self, key: &[u8], object: Option<&CachedObject>) -> bool {
        key.starts_with(&self.prefix) && object.is_some_and(|o| self.matches.as_ref().is_none_or(|m| m(o)))
    }
}

/// A watcher's name (single-object watch) and trigger value, for the index.
/// Most watchers have neither, and keep nothing.
struct IndexedBy {
    name: Option<String>,
    trigger: Option<String>,
}

/// A registered watcher. Compact, since an idle watch is mostly this: the
/// rare parts (`indexed_by`) are boxed apart.
struct Watcher {
    selection: Selection,
    bookmarks: Option<BookmarkSpec>,
    indexed_by: Option<Box<IndexedBy>>,
    sink: Box<dyn EventSink>,
    /// Events at or before this revision were already delivered (or are part
    /// of the initial state the client was sent).
    after: Revision,
    /// When the last bookmark went out (or the watch started).
    bookmarked_at_ms: u64,
    /// The revision of the last bookmark: bookmarks never go backwards.
    bookmarked: Revision,
    /// When the watch's time is up ([`WatchHub::close_at`]; `u64::MAX`: never).
    closes_at_ms: u64,
}

/// A committed entry kept for resumption.
struct HistoryEntry {
    entry: Entry,
    at_ms: u64,
}

/// The bytes a kept entry holds: its key, value and previous value.
fn entry_bytes(entry: &Entry) -> usize {
    let value = match &entry.operation {
        Operation::Put(value) => value.len(),
        Operation::Delete => 0,
    };
    entry.key.len() + value + entry.previous.as_ref().map_or(0, |p| p.value.len())
}

/// Why a watch could not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The history no longer holds every entry after the requested revision.
    #[error("too old resource version: {requested} ({oldest})")]
    TooOld { requested: Revision, oldest: Revision },
}

/// Counters for /metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HubStats {
    pub watchers: usize,
    /// Watchers closed because their queue was full (or their client gone).
    pub closed_slow: u64,
    pub history_entries: usize,
    /// Bytes the history's entries hold (keys, values, previous values).
    pub history_bytes: usize,
    /// Events offered to watchers and accepted (history replays included;
    /// bookmarks and initial state not).
    pub events_dispatched: u64,
    /// ADDED events of watches' initial state (unset or "0" resourceVersion,
    /// sendInitialEvents=true), counted by [`WatchHub::count_initial_events`].
    pub initial_events_sent: u64,
}

pub struct WatchHub {
    /// Boxed: the map's nodes are half empty on average, and an idle
    /// watcher should cost its own size, not twice it.
    watchers: BTreeMap<WatchId, Box<Watcher>>,
    /// Watchers by index key (collection prefix, or object key): an entry
    /// only visits the watchers that can match it.
    index: HashMap<Bytes, Vec<WatchId>>,
    /// Watchers with a trigger value, by index key and then by the value.
    triggered: HashMap<Bytes, HashMap<String, Vec<WatchId>>>,
    /// Candidates of the entry being dispatched (kept to reuse its memory).
    candidates: Vec<WatchId>,
    next_id: u64,
    history: VecDeque<HistoryEntry>,
    /// The revision before the oldest entry history can replay.
    history_start: Revision,
    applied: Revision,
    history_window_ms: u64,
    history_entries_max: usize,
    history_bytes: usize,
    history_bytes_max: usize,
    closed_slow: u64,
    events_dispatched: u64,
    initial_events_sent: u64,
}

impl WatchHub {
    pub fn new(applied: Revision, history_window_ms: u64, history_entries_max: usize) -> WatchHub {
        WatchHub {
            watchers: BTreeMap::new(),
            index: HashMap::new(),
            triggered: HashMap::new(),
            candidates: Vec::new(),
            next_id: 1,
            history: VecDeque::new(),
            history_start: applied,
            applied,
            history_window_ms,
            history_entries_max: history_entries_max.max(1),
            history_bytes: 0,
            history_bytes_max: usize::MAX,
            closed_slow: 0,
            events_dispatched: 0,
            initial_events_sent: 0,
        }
    }

    /// Bounds the bytes of the entries kept for resumption.
    pub fn with_history_bytes_max(mut self, history_bytes_max: usize) -> WatchHub {
        self.history_bytes_max = history_bytes_max;
        self
    }

    pub fn stats(&self) -> HubStats {
        HubStats {
            watchers: self.watchers.len(),
            closed_slow: self.closed_slow,
            history_entries: self.history.len(),
            history_bytes: self.history_bytes,
            events_dispatched: self.events_dispatched,
            initial_events_sent: self.initial_events_sent,
        }
    }

    /// Counts events of a watch's initial state (sent by the API layer).
    pub fn count_initial_events(&mut self, count: u64) {
        self.initial_events_sent += count;
    }

    /// Files a watcher in the index: under its trigger value when it has one
    /// (and is not a single-object watch), else under its index key.
    fn file(&mut self, id: WatchId, prefix: &mut Bytes, by: Option<&IndexedBy>) {
        let (name, trigger) = by.map_or((None, None), |b| (b.name.as_deref(), b.trigger.as_ref()));
        // Watchers of one collection share one copy of its prefix: the
        // index's key (a clone of a shared `Bytes` is a count, not a copy).
        if name.is_none() {
            let filed = match trigger {
                None => self.index.get_key_value(&prefix[..]).map(|(k, _)| k),
                Some(_) => self.triggered.get_key_value(&prefix[..]).map(|(k, _)| k),
            };
            if let Some(key) = filed {
                *prefix = key.clone();
            }
        }
        let key = index_key(prefix, name);
        match (name, trigger) {
            (None, Some(value)) => self.triggered.entry(key).or_default().entry(value.clone()).or_default().push(id),
            _ => self.index.entry(key).or_default().push(id),
        }
    }

    fn unfile(&mut self, id: WatchId, prefix: &Bytes, by: Option<&IndexedBy>) {
        let (name, trigger) = by.map_or((None, None), |b| (b.name.as_deref(), b.trigger.as_ref()));
        let key = index_key(prefix, name);
        match (name, trigger) {
            (None, Some(value)) => {
                if let Some(by_value) = self.triggered.get_mut(&key) {
                    if let Some(ids) = by_value.get_mut(value) {
                        ids.retain(|i| *i != id);
                        if ids.is_empty() {
                            by_value.remove(value);
                        }
                    }
                    if by_value.is_empty() {
                        self.triggered.remove(&key);
                    }
                }
            }
            _ => {
                if let Some(ids) = self.index.get_mut(&key) {
                    ids.retain(|i| *i != id);
                    if ids.is_empty() {
                        self.index.remove(&key);
                    }
                }
            }
        }
    }

    /// The oldest revision a watch may start after.
    pub fn oldest_start(&self) -> Revision {
        self.history_start
    }

    /// Registers a watcher that has seen everything up to `after`, replaying
    /// the history after it. A watcher closed during the replay (its queue is
    /// smaller than the backlog) is not registered; the client resumes.
    pub fn start(
        &mut self,
        filter: WatchFilter,
        mut sink: Box<dyn EventSink>,
        after: Revision,
        now_ms: u64,
        fields: &dyn FieldIndex,
    ) -> Result<Option<WatchId>, StartError> {
        if after < self.history_start {
            return Err(StartError::TooOld { requested: after, oldest: self.history_start });
        }
        let WatchFilter { prefix, matches, bookmarks, name, trigger } = filter;
        let mut selection = Selection { prefix, matches };
        let indexed_by = (name.is_some() || trigger.is_some()).then(|| Box::new(IndexedBy { name, trigger }));
        let mut delivered = after;
        for kept in self.history.iter().filter(|h| h.entry.revision > after) {
            let encoded = EncodedEntry::new(&kept.entry, fields);
            if let Some(event) = encoded.event_for(&selection) {
                if !sink.offer(event) {
                    self.closed_slow += 1;
                    return Ok(None);
                }
                self.events_dispatched += 1;
            }
            delivered = kept.entry.revision;
        }
        let id = WatchId(self.next_id);
        self.next_id += 1;
        let after = delivered.max(after);
        self.file(id, &mut selection.prefix, indexed_by.as_deref());
        self.watchers.insert(
            id,
            Box::new(Watcher {
                selection,
                bookmarks,
                indexed_by,
                sink,
                after,
                bookmarked_at_ms: now_ms,
                bookmarked: after,
                closes_at_ms: u64::MAX,
            }),
        );
        Ok(Some(id))
    }

    /// Sends a bookmark to every watcher that asked for them and has had none
    /// for its interval, at the revision up to which it has seen every entry.
    /// Returns how many were sent.
    pub fn bookmark_tick(&mut self, now_ms: u64) -> usize {
        let mut sent = 0;
        let mut closed = Vec::new();
        let applied = self.applied;
        for (id, watcher) in self.watchers.iter_mut() {
            // A registered watcher has been offered every entry up to `applied`.
            watcher.after = watcher.after.max(applied);
            let Some(spec) = &watcher.bookmarks else { continue };
            if now_ms.saturating_sub(watcher.bookmarked_at_ms) < spec.interval_ms || watcher.after <= watcher.bookmarked
            {
                continue;
            }
            let object = bookmark_object(&spec.kind, &spec.api_version, watcher.after, false);
            let event = WatchEvent { event_type: EventType::Bookmark, revision: watcher.after, object, source: None };
            if watcher.sink.offer(event) {
                watcher.bookmarked_at_ms = now_ms;
                watcher.bookmarked = watcher.after;
                sent += 1;
            } else {
                closed.push(*id);
            }
        }
        for id in closed {
            self.remove(id);
            self.closed_slow += 1;
        }
        sent
    }

    /// Closes the watcher at `at_ms` (at the first [`WatchHub::close_expired`]
    /// from then on): its queue's reader gets what is queued, then the end.
    /// A watch's timeout, kept here rather than as a timer per watch.
    pub fn close_at(&mut self, id: WatchId, at_ms: u64) {
        if let Some(watcher) = self.watchers.get_mut(&id) {
            watcher.closes_at_ms = at_ms;
        }
    }

    /// Closes the watchers whose time is up at `now_ms`; returns how many.
    pub fn close_expired(&mut self, now_ms: u64) -> usize {
        let expired: Vec<WatchId> =
            self.watchers.iter().filter(|(_, w)| w.closes_at_ms <= now_ms).map(|(id, _)| *id).collect();
        for id in &expired {
            self.remove(*id);
        }
        expired.len()
    }

    fn remove(&mut self, id: WatchId) {
        if let Some(watcher) = self.watchers.remove(&id) {
            self.unfile(id, &watcher.selection.prefix, watcher.indexed_by.as_deref());
        }
    }

    pub fn stop(&mut self, id: WatchId) {
        self.remove(id);
    }

    /// Records committed entries (in revision order) and delivers their
    /// events. Returns how many watchers were closed for being full.
    pub fn dispatch(&mut self, entries: &[Entry], now_ms: u64, fields: &dyn FieldIndex) -> usize {
        let mut closed = Vec::new();
        let mut closed_total = 0;
        for entry in entries {
            debug_assert!(entry.revision > self.applied, "entries out of order");
            self.applied = entry.revision;
            self.history_bytes += entry_bytes(entry);
            self.history.push_back(HistoryEntry { entry: entry.clone(), at_ms: now_ms });
            let mut candidates = std::mem::take(&mut self.candidates);
            candidates.clear();
            let mut encoded: Option<EncodedEntry> = None;
            for index_key in index_keys(&entry.key) {
                if let Some(ids) = self.index.get(index_key) {
                    candidates.extend_from_slice(ids);
                }
                if let Some(by_value) = self.triggered.get(index_key) {
                    // The trigger values of the new and the previous state.
                    let encoded = encoded.get_or_insert_with(|| EncodedEntry::new(entry, fields));
                    let (current, previous) = encoded.trigger_values();
                    for value in [current, previous.filter(|p| Some(*p) != current)].into_iter().flatten() {
                        if let Some(ids) = by_value.get(value) {
                            candidates.extend_from_slice(ids);
                        }
                    }
                }
            }
            if candidates.is_empty() {
                self.candidates = candidates;
                continue;
            }
            // Encoded once for every candidate watcher.
            let encoded = encoded.unwrap_or_else(|| EncodedEntry::new(entry, fields));
            for id in candidates.iter().copied() {
                let Some(watcher) = self.watchers.get_mut(&id) else { continue };
                if entry.revision <= watcher.after {
                    continue;
                }
                if let Some(event) = encoded.event_for(&watcher.selection) {
                    if !watcher.sink.offer(event) {
                        closed.push(id);
                        continue;
                    }
                    self.events_dispatched += 1;
                }
                watcher.after = entry.revision;
            }
            self.candidates = candidates;
            for id in closed.drain(..) {
                self.remove(id);
                self.closed_slow += 1;
                closed_total += 1;
            }
        }
        self.trim(now_ms);
        closed_total
    }

    fn trim(&mut self, now_ms: u64) {
        while let Some(front) = self.history.front() {
            let too_old = now_ms.saturating_sub(front.at_ms) >= self.history_window_ms;
            if !too_old
                && self.history.len() <= self.history_entries_max
                && self.history_bytes <= self.history_bytes_max
            {
                break;
            }
            if let Some(gone) = self.history.pop_front() {
                self.history_bytes -= entry_bytes(&gone.entry);
                self.history_start = gone.entry.revision;
            }
        }
    }
}

/// An entry's object states, encoded once for every watcher of the shard.
struct EncodedEntry<'a> {
    entry: &'a Entry,
    selectable: &'a [String],
    previous: Option<Arc<CachedObject>>,
    current: Option<Arc<CachedObject>>,
    /// The previous state at this entry's revision: what a watcher whose
    /// selection the object leaves gets as DELETED. Encoded on first use.
    left: std::cell::OnceCell<Option<Arc<CachedObject>>>,
    /// The resource's trigger field, if it has one.
    trigger: Option<&'static str>,
}

impl<'a> EncodedEntry<'a> {
    fn new(entry: &'a Entry, fields: &'a dyn FieldIndex) -> EncodedEntry<'a> {
        let resource = group_resource(&entry.key);
        let selectable = resource.map(|(g, r)| fields.selectable_fields(g, r)).unwrap_or(&[]);
        let trigger = resource.and_then(|(g, r)| trigger_field(g, r));
        let previous = entry.previous.as_ref().and_then(|p| {
            encode_stored(entry.key.clone(), &p.value, p.mod_revision, p.create_revision, selectable).ok()
        });
        let current = match &entry.operation {
            Operation::Put(value) => {
                encode_stored(entry.key.clone(), value, entry.revision, entry.create_revision, selectable).ok()
            }
            // A deleted object is sent in its last state at the deletion's revision.
            Operation::Delete => entry.previous.as_ref().and_then(|p| {
                encode_stored(entry.key.clone(), &p.value, entry.revision, p.create_revision, selectable).ok()
            }),
        };
        EncodedEntry { entry, selectable, previous, current, left: std::cell::OnceCell::new(), trigger }
    }

    /// The object a watcher gets when the object leaves its selection by a
    /// put: the previous content with the new resourceVersion, as kube's
    /// cache watcher sends it (`convertToWatchEvent`).
    fn left(&self) -> Option<&Arc<CachedObject>> {
        self.left
            .get_or_init(|| {
                let p = self.entry.previous.as_ref()?;
                encode_stored(self.entry.key.clone(), &p.value, self.entry.revision, p.create_revision, self.selectable)
                    .ok()
            })
            .as_ref()
    }

    /// The trigger field's value in the new state and in the previous one.
    fn trigger_values(&self) -> (Option<&str>, Option<&str>) {
        let Some(field) = self.trigger else { return (None, None) };
        let current = self.current.as_deref().and_then(|o| o.meta().field(field));
        let previous = self.previous.as_deref().and_then(|o| o.meta().field(field));
        (current, previous)
    }

    fn event_for(&self, filter: &Selection) -> Option<WatchEvent> {
        if !self.entry.key.starts_with(&filter.prefix) {
            return None;
        }
        let was = filter.accepts(&self.entry.key, self.previous.as_deref());
        let is_put = matches!(self.entry.operation, Operation::Put(_));
        let now = is_put && filter.accepts(&self.entry.key, self.current.as_deref());
        let event_type = match (was, now, is_put) {
            (false, true, _) => EventType::Added,
            (true, true, _) => EventType::Modified,
            (true, false, _) => EventType::Deleted,
            (false, false, _) => return None,
        };
        let sent = if is_put && event_type == EventType::Deleted { self.left()? } else { self.current.as_ref()? };
        let object = sent.json.clone();
        Some(WatchEvent { event_type, revision: self.entry.revision, object, source: Some(sent.clone()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::PreviousValue;
    use crate::types::key::ObjectKey;
    use crate::types::registry::ResourceInfo;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Clone, Default)]
    struct Collect(Rc<RefCell<Vec<(EventType, u64, String)>>>, usize);

    impl EventSink for Collect {
        fn offer(&mut self, event: WatchEvent) -> bool {
            if self.1 > 0 && self.0.borrow().len() >= self.1 {
                return false;
            }
            let v: serde_json::Value = serde_json::from_slice(&event.object).unwrap();
            // Every event's object is at the event's resourceVersion.
            assert_eq!(v["metadata"]["resourceVersion"], event.revision.0.to_string(), "{v}");
            let label = v["metadata"]["labels"]["app"].as_str().unwrap_or("").to_string();
            self.0.borrow_mut().push((event.event_type, event.revision.0, label));
            true
        }
    }

    fn value(name: &str, app: &str) -> Bytes {
        Bytes::from(format!(r#"{{"metadata":{{"name":"{name}","namespace":"ns","labels":{{"app":"{app}"}}}}}}"#))
    }

    struct Log {
        revision: u64,
        current: BTreeMap<String, (u64, u64, Bytes)>,
    }

    impl Log {
        fn put(&mut self, name: &str, app: &str) -> Entry {
            self.write(name, value(name, app))
        }

        fn write(&mut self, name: &str, value: Bytes) -> Entry {
            self.revision += 1;
            let previous = self.current.get(name).map(|(m, c, v)| PreviousValue {
                mod_revision: Revision(*m),
                create_revision: Revision(*c),
                value: v.clone(),
            });
            let created = previous.as_ref().map(|p| p.create_revision.0).unwrap_or(self.revision);
            self.current.insert(name.into(), (self.revision, created, value.clone()));
            Entry {
                revision: Revision(self.revision),
                key: ObjectKey::new("", "pods", "ns", name).encode(),
                operation: Operation::Put(value),
                create_revision: Revision(created),
                previous,
            }
        }

        fn delete(&mut self, name: &str) -> Entry {
            self.revision += 1;
            let (m, c, v) = self.current.remove(name).unwrap();
            Entry {
                revision: Revision(self.revision),
                key: ObjectKey::new("", "pods", "ns", name).encode(),
                operation: Operation::Delete,
                create_revision: Revision(c),
                previous: Some(PreviousValue { mod_revision: Revision(m), create_revision: Revision(c), value: v }),
            }
        }
    }

    fn web_only() -> WatchFilter {
        WatchFilter {
            prefix: Bytes::from(crate::types::key::collection_prefix("", "pods", Some("ns"))),
            matches: Some(Box::new(|o: &CachedObject| o.meta().label("app") == Some("web"))),
            bookmarks: Some(BookmarkSpec { kind: "Pod".into(), api_version: "v1".into(), interval_ms: 1000 }),
            name: None,
            trigger: None,
        }
    }

    #[test]
    fn selector_transitions_are_added_and_deleted() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let sink = Collect::default();
        let seen = sink.0.clone();
        hub.start(web_only(), Box::new(sink), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        let entries = vec![
            log.put("a", "db"),  // 1: not selected
            log.put("a", "web"), // 2: enters -> ADDED
            log.put("a", "web"), // 3: MODIFIED
            log.put("a", "db"),  // 4: leaves -> DELETED (previous state, new resourceVersion)
            log.put("b", "web"), // 5: ADDED
            log.delete("b"),     // 6: DELETED (last state)
            log.delete("a"),     // 7: not selected before: nothing
        ];
        hub.dispatch(&entries, 0, &fields);
        assert_eq!(
            *seen.borrow(),
            vec![
                (EventType::Added, 2, "web".to_string()),
                (EventType::Modified, 3, "web".to_string()),
                (EventType::Deleted, 4, "web".to_string()),
                (EventType::Added, 5, "web".to_string()),
                (EventType::Deleted, 6, "web".to_string()),
            ]
        );
    }

    #[test]
    fn resumes_from_history_without_gaps_or_duplicates_and_refuses_too_old() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 1_000, 1000);
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        let first: Vec<Entry> = (0..5).map(|i| log.put(&format!("p{i}"), "web")).collect();
        hub.dispatch(&first, 0, &fields);
        let sink = Collect::default();
        let seen = sink.0.clone();
        hub.start(web_only(), Box::new(sink), Revision(2), 0, &fields).unwrap();
        let more = vec![log.put("p0", "web"), log.put("p9", "web")];
        hub.dispatch(&more, 10, &fields);
        let revisions: Vec<u64> = seen.borrow().iter().map(|e| e.1).collect();
        assert_eq!(revisions, [3, 4, 5, 6, 7]);
        // Time passes: history before the window is gone, and starts there are refused.
        hub.dispatch(&[log.put("p8", "web")], 5_000, &fields);
        assert_eq!(
            hub.start(web_only(), Box::new(Collect::default()), Revision(2), 0, &fields).unwrap_err(),
            StartError::TooOld { requested: Revision(2), oldest: Revision(7) }
        );
        assert!(hub.start(web_only(), Box::new(Collect::default()), Revision(7), 0, &fields).unwrap().is_some());
    }

    /// Past the byte budget the oldest entries leave first, and a watch
    /// that needed them is refused while later starts replay exactly.
    #[test]
    fn the_history_budget_drops_the_oldest_entries_first() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        let entries: Vec<Entry> = (0..4).map(|i| log.put(&format!("p{i}"), "web")).collect();
        let size = entry_bytes(&entries[0]);
        assert!(entries.iter().all(|e| entry_bytes(e) == size));
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000).with_history_bytes_max(2 * size);
        hub.dispatch(&entries, 0, &fields);
        assert_eq!((hub.stats().history_entries, hub.stats().history_bytes), (2, 2 * size));
        assert_eq!(
            hub.start(web_only(), Box::new(Collect::default()), Revision(1), 0, &fields).unwrap_err(),
            StartError::TooOld { requested: Revision(1), oldest: Revision(2) }
        );
        let sink = Collect::default();
        let seen = sink.0.clone();
        hub.start(web_only(), Box::new(sink), Revision(2), 0, &fields).unwrap();
        assert_eq!(seen.borrow().iter().map(|e| e.1).collect::<Vec<_>>(), [3, 4]);
    }

    #[test]
    fn bookmarks_follow_progress_at_their_interval_and_never_go_backwards() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let sink = Collect::default();
        let seen = sink.0.clone();
        hub.start(web_only(), Box::new(sink), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        // Entries the watcher does not select still advance its progress.
        hub.dispatch(&[log.put("a", "db"), log.put("b", "db")], 0, &fields);
        assert_eq!(hub.bookmark_tick(500), 0, "before the interval");
        assert_eq!(hub.bookmark_tick(1000), 1);
        assert_eq!(seen.borrow().last().map(|e| (e.0, e.1)), Some((EventType::Bookmark, 2)));
        assert_eq!(hub.bookmark_tick(5000), 0, "no progress, no bookmark");
        hub.dispatch(&[log.put("c", "web")], 5000, &fields);
        assert_eq!(hub.bookmark_tick(6000), 1);
        let revisions: Vec<u64> = seen.borrow().iter().filter(|e| e.0 == EventType::Bookmark).map(|e| e.1).collect();
        assert_eq!(revisions, [2, 3]);
        let object: serde_json::Value =
            serde_json::from_slice(&bookmark_object("Pod", "v1", Revision(9), true)).unwrap();
        assert_eq!(
            object,
            serde_json::json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9", "annotations": {"k8s.io/initial-events-end": "true"}}})
        );
    }

    #[test]
    fn index_keys_cover_resource_namespace_and_object() {
        let key = ObjectKey::new("apps", "deployments", "ns", "web").encode();
        let keys = index_keys(&key);
        assert_eq!(keys[0], b"/registry/apps/deployments/");
        assert_eq!(keys[1], b"/registry/apps/deployments/ns/");
        assert_eq!(keys[2], &key[..]);
        let cluster = ObjectKey::new("", "namespaces", "", "default").encode();
        assert_eq!(
            index_keys(&cluster)[1],
            crate::types::key::collection_prefix("", "namespaces", Some("")).as_bytes()
        );
        // Watchers of other collections and other objects are never visited.
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let other = Collect::default();
        let other_seen = other.0.clone();
        let filter = WatchFilter {
            prefix: Bytes::from(crate::types::key::collection_prefix("", "pods", Some("ns"))),
            matches: Some(Box::new(|_: &CachedObject| panic!("a watcher of another object was asked"))),
            bookmarks: None,
            name: Some("other".into()),
            trigger: None,
        };
        hub.start(filter, Box::new(other), Revision(0), 0, &fields).unwrap();
        let named = Collect::default();
        let named_seen = named.0.clone();
        let filter = WatchFilter {
            prefix: Bytes::from(crate::types::key::collection_prefix("", "pods", Some("ns"))),
            matches: None,
            bookmarks: None,
            name: Some("a".into()),
            trigger: None,
        };
        hub.start(filter, Box::new(named), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        hub.dispatch(&[log.put("a", "web"), log.put("b", "web")], 0, &fields);
        assert_eq!(named_seen.borrow().len(), 1);
        assert!(other_seen.borrow().is_empty());
        hub.stop(WatchId(1));
        hub.stop(WatchId(2));
        assert!(hub.index.is_empty());
    }

    #[test]
    fn a_watcher_is_closed_when_its_time_is_up_and_its_queue_ends() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let (sender, receiver) = queue::watch_queue(queue::QueueBounds { events_max: 10, bytes_max: 1 << 20 });
        let id = hub.start(web_only(), Box::new(sender), Revision(0), 0, &fields).unwrap().unwrap();
        let other = hub.start(web_only(), Box::new(Collect::default()), Revision(0), 0, &fields).unwrap().unwrap();
        hub.close_at(id, 5_000);
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        hub.dispatch(&[log.put("a", "web")], 1_000, &fields);
        assert_eq!(hub.close_expired(4_999), 0, "not yet");
        assert_eq!(hub.close_expired(5_000), 1);
        assert_eq!(hub.stats().watchers, 1);
        assert_eq!(hub.stats().closed_slow, 0, "a timeout is not a slow watcher");
        // The reader gets the event queued before, then the end.
        let events: Vec<u64> = futures_lite::future::block_on(futures_util::StreamExt::collect::<Vec<_>>(
            futures_util::StreamExt::map(receiver, |e| e.revision.0),
        ));
        assert_eq!(events, [1]);
        hub.stop(other);
        assert!(hub.index.is_empty());
    }

    #[test]
    fn a_full_watcher_is_closed_and_others_continue() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let slow = Collect(Rc::default(), 2);
        let fast = Collect::default();
        let fast_seen = fast.0.clone();
        hub.start(web_only(), Box::new(slow), Revision(0), 0, &fields).unwrap();
        hub.start(web_only(), Box::new(fast), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        let entries: Vec<Entry> = (0..5).map(|i| log.put(&format!("p{i}"), "web")).collect();
        hub.dispatch(&entries, 0, &fields);
        assert_eq!(fast_seen.borrow().len(), 5);
        assert_eq!(hub.stats().watchers, 1);
        assert_eq!(hub.stats().closed_slow, 1);
    }

    /// A pod on a node (`None`: not scheduled); its `app` label names the
    /// node too, so the collecting sink records where it was.
    fn pod_on(name: &str, node: Option<&str>) -> Bytes {
        let spec = node.map(|n| format!(r#","spec":{{"nodeName":"{n}"}}"#)).unwrap_or_default();
        let app = node.unwrap_or("none");
        Bytes::from(format!(r#"{{"metadata":{{"name":"{name}","namespace":"ns","labels":{{"app":"{app}"}}}}{spec}}}"#))
    }

    fn node_watcher(node: &str, panic_if_asked: bool) -> WatchFilter {
        let wanted = node.to_string();
        WatchFilter {
            prefix: Bytes::from(crate::types::key::collection_prefix("", "pods", None)),
            matches: Some(Box::new(move |o: &CachedObject| {
                assert!(!panic_if_asked, "a watcher of another node was asked");
                o.meta().field("spec.nodeName") == Some(wanted.as_str())
            })),
            bookmarks: None,
            name: None,
            trigger: Some(node.to_string()),
        }
    }

    #[test]
    fn trigger_index_offers_pods_to_the_watchers_of_their_new_and_previous_node() {
        let registry = crate::types::registry::Registry::builtin();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let mut seen = Vec::new();
        for node in ["n1", "n2", "n3"] {
            let sink = Collect::default();
            seen.push(sink.0.clone());
            hub.start(node_watcher(node, false), Box::new(sink), Revision(0), 0, &registry).unwrap();
        }
        // Never asked: no pod is ever on n9.
        hub.start(node_watcher("n9", true), Box::new(Collect::default()), Revision(0), 0, &registry).unwrap();
        // Unscheduled pods: the scheduler's `spec.nodeName=` watch.
        let unscheduled = Collect::default();
        let unscheduled_seen = unscheduled.0.clone();
        hub.start(node_watcher("", false), Box::new(unscheduled), Revision(0), 0, &registry).unwrap();
        // A watcher without a trigger sees every pod event.
        let all = Collect::default();
        let all_seen = all.0.clone();
        let mut every = node_watcher("-", false);
        every.matches = None;
        every.trigger = None;
        hub.start(every, Box::new(all), Revision(0), 0, &registry).unwrap();
        assert_eq!(hub.triggered.values().map(|v| v.len()).sum::<usize>(), 5);

        let mut log = Log { revision: 0, current: BTreeMap::new() };
        let entries = vec![
            log.write("p", pod_on("p", Some("n1"))), // 1: n1 ADDED
            log.write("p", pod_on("p", Some("n1"))), // 2: n1 MODIFIED
            log.write("p", pod_on("p", Some("n2"))), // 3: moves: n1 DELETED, n2 ADDED
            log.write("p", pod_on("p", None)),       // 4: unscheduled: n2 DELETED, "" ADDED
            log.write("p", pod_on("p", Some("n3"))), // 5: "" DELETED, n3 ADDED
            log.write("q", pod_on("q", Some("n1"))), // 6: n1 ADDED
            log.delete("p"),                         // 7: n3 DELETED
        ];
        hub.dispatch(&entries, 0, &registry);
        let events = |i: usize| seen[i].borrow().iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
        use EventType::*;
        assert_eq!(events(0), [(Added, 1), (Modified, 2), (Deleted, 3), (Added, 6)]);
        assert_eq!(events(1), [(Added, 3), (Deleted, 4)]);
        assert_eq!(events(2), [(Added, 5), (Deleted, 7)]);
        // A pod without spec.nodeName has it empty, as Kubernetes' pod fields do.
        let unscheduled = unscheduled_seen.borrow().iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
        assert_eq!(unscheduled, [(Added, 4), (Deleted, 5)]);
        assert_eq!(all_seen.borrow().len(), 7);
        // The DELETED event for the node a pod left carries its previous
        // state (at the move's resourceVersion, which `Collect` checks).
        assert_eq!(seen[0].borrow()[2].2, "n1");
        for id in 1..=6 {
            hub.stop(WatchId(id));
        }
        assert!(hub.triggered.is_empty() && hub.index.is_empty());
        assert_eq!(hub.stats().events_dispatched, 4 + 2 + 2 + 2 + 7);
    }
}
