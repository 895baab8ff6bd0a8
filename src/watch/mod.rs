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
//!
//! Bookmarks and timeouts (kube-apiserver's cacher, `nextBookmarkTime`): a
//! watcher with bookmarks gets one every `bookmark_frequency_ms` (kube: a
//! minute) and one [`PRE_TIMEOUT_BOOKMARK_MS`] before its deadline, each at
//! the shard's current revision (every shard applies every entry, so this
//! is the server's resourceVersion, whatever was written), and only above
//! the revision the watch started from (kube's cache watcher sends none at
//! or below it). A bookmark the queue cannot take is dropped, as kube's
//! `nonblockingAdd` drops it; it never closes the watcher. The watch is
//! closed at its deadline, not before. Both times are kept in one ordered
//! set per hub (`wakeups`: one entry per watcher, at the earlier of its next
//! bookmark and its deadline), so a tick costs the watchers that are due,
//! not every watcher, and an idle watch keeps no timer of its own.

pub mod queue;

use crate::cache::{encode_stored, CachedObject};
use crate::log::{Entry, Operation, Revision};
use crate::store::FieldIndex;
use crate::types::key::group_resource;
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
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

/// How long before its deadline a watch with bookmarks gets its last one
/// (kube-apiserver's cache watcher: the deadline less 2 s), so that a client
/// resumes from close to where the watch ended.
pub const PRE_TIMEOUT_BOOKMARK_MS: u64 = 2_000;

/// What a bookmark of this watch looks like: its kind's bookmark object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookmarkSpec {
    /// Shared with the watch's initial-events-end bookmark.
    pub shape: Arc<BookmarkShape>,
}

/// A kind's bookmark object, as kube-apiserver sends it: the zero value of
/// the kind's type (what its encoder writes for a new empty object) with
/// only `metadata.resourceVersion` set, and for the end of a streaming
/// list's initial events the annotation `k8s.io/initial-events-end`. Kept
/// as the text before the resourceVersion's digits and after its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookmarkShape {
    /// Up to and including `"resourceVersion":"`.
    head: Box<str>,
    /// From the end of `metadata` (`}`) to the end of the object.
    tail: Box<str>,
}

/// The member a bookmark's metadata holds, with a placeholder for the digits.
const RESOURCE_VERSION_MARK: &str = "\"resourceVersion\":\"0\"}";

impl BookmarkShape {
    /// The shape of the bookmark whose object, at resourceVersion "0", is
    /// `zero` (JSON whose `metadata` holds only `"resourceVersion":"0"`);
    /// anything else gets the bare form (kind, apiVersion, metadata).
    pub fn from_zero_object(kind: &str, api_version: &str, zero: &str) -> BookmarkShape {
        match zero.find(RESOURCE_VERSION_MARK) {
            Some(at) if zero.matches(RESOURCE_VERSION_MARK).count() == 1 => {
                let digits = at + RESOURCE_VERSION_MARK.len() - 3;
                BookmarkShape { head: zero[..digits].into(), tail: zero[digits + 2..].into() }
            }
            _ => BookmarkShape::bare(kind, api_version),
        }
    }

    /// Only kind, apiVersion and metadata.resourceVersion.
    pub fn bare(kind: &str, api_version: &str) -> BookmarkShape {
        let head = format!(
            "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{{\"resourceVersion\":\"",
            serde_json::to_string(kind).unwrap_or_default(),
            serde_json::to_string(api_version).unwrap_or_default(),
        );
        BookmarkShape { head: head.into(), tail: "}}".into() }
    }

    /// The bookmark object at `revision`.
    pub fn object(&self, revision: Revision, initial_events_end: bool) -> Bytes {
        let annotations =
            if initial_events_end { ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" } else { "" };
        Bytes::from(format!("{}{}\"{annotations}{}", self.head, revision.0, self.tail))
    }
}

/// A bookmark object: only kind, apiVersion and metadata.resourceVersion
/// (and, for the end of a streaming list's initial events, its annotation).
pub fn bookmark_object(kind: &str, api_version: &str, revision: Revision, initial_events_end: bool) -> Bytes {
    BookmarkShape::bare(kind, api_version).object(revision, initial_events_end)
}

/// When a watcher's next bookmark is due (kube's `nextBookmarkTime`): a
/// bookmark frequency from `now`, or [`PRE_TIMEOUT_BOOKMARK_MS`] before the
/// deadline if that is sooner; `u64::MAX` (none) once that time is past
/// (`or_now`: a time equal to `now` still counts, as at registration).
fn next_bookmark_ms(now_ms: u64, deadline_ms: u64, frequency_ms: u64, or_now: bool) -> u64 {
    let mut at = now_ms.saturating_add(frequency_ms);
    if deadline_ms != u64::MAX {
        at = at.min(deadline_ms.saturating_sub(PRE_TIMEOUT_BOOKMARK_MS));
    }
    if at < now_ms || (at == now_ms && !or_now) {
        u64::MAX
    } else {
        at
    }
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
    /// The revision the watch started from (after its replay): bookmarks
    /// are sent only above it, as kube's cache watcher sends them.
    started: Revision,
    /// When its next bookmark is due (`u64::MAX`: none, or no bookmarks).
    next_bookmark_ms: u64,
    /// When the watch's time is up ([`WatchHub::close_at`]; `u64::MAX`: never).
    closes_at_ms: u64,
}

impl Watcher {
    /// Its entry in the hub's `wakeups` (`u64::MAX`: none).
    fn wake_ms(&self) -> u64 {
        self.next_bookmark_ms.min(self.closes_at_ms)
    }
}

/// What one [`WatchHub::tick`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Bookmarks queued.
    pub bookmarks: usize,
    /// Watchers closed because their time was up.
    pub closed: usize,
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
    /// How often a watcher with bookmarks gets one (kube's `bookmarkFrequency`).
    bookmark_frequency_ms: u64,
    /// Every watcher's next wake-up (a bookmark due or its time up), in time
    /// order: one entry per watcher that has one, at [`Watcher::wake_ms`].
    wakeups: BTreeSet<(u64, WatchId)>,
}

/// kube-apiserver's bookmark frequency (`defaultBookmarkFrequency`).
pub const BOOKMARK_FREQUENCY_MS_DEFAULT: u64 = 60_000;

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
            bookmark_frequency_ms: BOOKMARK_FREQUENCY_MS_DEFAULT,
            wakeups: BTreeSet::new(),
        }
    }

    /// Sets how often a watcher with bookmarks gets one.
    pub fn with_bookmark_frequency_ms(mut self, frequency_ms: u64) -> WatchHub {
        self.bookmark_frequency_ms = frequency_ms.max(1);
        self
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
        // Where bookmarks start: after the last event replayed to it, as
        // kube's cache watcher raises its resourceVersion with each event of
        // its interval (entries of other collections do not count).
        let mut started = after;
        for kept in self.history.iter().filter(|h| h.entry.revision > after) {
            let encoded = EncodedEntry::new(&kept.entry, fields);
            if let Some(event) = encoded.event_for(&selection) {
                if !sink.offer(event) {
                    self.closed_slow += 1;
                    return Ok(None);
                }
                self.events_dispatched += 1;
                started = kept.entry.revision;
            }
            delivered = kept.entry.revision;
        }
        let id = WatchId(self.next_id);
        self.next_id += 1;
        let after = delivered.max(after);
        self.file(id, &mut selection.prefix, indexed_by.as_deref());
        let next_bookmark_ms = match bookmarks {
            Some(_) => next_bookmark_ms(now_ms, u64::MAX, self.bookmark_frequency_ms, true),
            None => u64::MAX,
        };
        let watcher = Box::new(Watcher {
            selection,
            bookmarks,
            indexed_by,
            sink,
            after,
            started,
            next_bookmark_ms,
            closes_at_ms: u64::MAX,
        });
        self.schedule(id, &watcher);
        self.watchers.insert(id, watcher);
        Ok(Some(id))
    }

    fn schedule(&mut self, id: WatchId, watcher: &Watcher) {
        let at = watcher.wake_ms();
        if at != u64::MAX {
            self.wakeups.insert((at, id));
        }
    }

    fn unschedule(&mut self, id: WatchId, watcher: &Watcher) {
        let at = watcher.wake_ms();
        if at != u64::MAX {
            self.wakeups.remove(&(at, id));
        }
    }

    /// When the next watcher is due a bookmark or its end (`None`: no one).
    pub fn next_wake_ms(&self) -> Option<u64> {
        self.wakeups.first().map(|(at, _)| *at)
    }

    /// Sets the watcher's deadline, `at_ms` (given at `now_ms`): it is closed
    /// at the first [`WatchHub::tick`] from then on (its queue's reader gets
    /// what is queued, then the end), and with bookmarks it gets one
    /// [`PRE_TIMEOUT_BOOKMARK_MS`] before. A watch's timeout, kept here
    /// rather than as a timer per watch.
    pub fn close_at(&mut self, id: WatchId, at_ms: u64, now_ms: u64) {
        let frequency_ms = self.bookmark_frequency_ms;
        let Some(mut watcher) = self.watchers.remove(&id) else { return };
        self.unschedule(id, &watcher);
        watcher.closes_at_ms = at_ms;
        if watcher.bookmarks.is_some() {
            watcher.next_bookmark_ms = next_bookmark_ms(now_ms, at_ms, frequency_ms, true);
        }
        self.schedule(id, &watcher);
        self.watchers.insert(id, watcher);
    }

    /// Runs the watchers due at `now_ms`: closes those whose time is up and
    /// sends a bookmark to those due one (at the current revision, if it is
    /// above the revision the watch started from), then schedules their
    /// next one. Costs the due watchers only.
    pub fn tick(&mut self, now_ms: u64) -> Tick {
        let mut tick = Tick::default();
        let applied = self.applied;
        let frequency_ms = self.bookmark_frequency_ms;
        while let Some(&(at, id)) = self.wakeups.first() {
            if at > now_ms {
                break;
            }
            self.wakeups.pop_first();
            let Some(watcher) = self.watchers.get_mut(&id) else { continue };
            if watcher.closes_at_ms <= now_ms {
                watcher.closes_at_ms = u64::MAX;
                watcher.next_bookmark_ms = u64::MAX;
                self.remove(id);
                tick.closed += 1;
                continue;
            }
            if watcher.next_bookmark_ms <= now_ms {
                // A registered watcher has been offered every entry up to `applied`.
                watcher.after = watcher.after.max(applied);
                let progressed = applied > watcher.started;
                if let Some(spec) = watcher.bookmarks.as_ref().filter(|_| progressed) {
                    let object = spec.shape.object(applied, false);
                    let event = WatchEvent { event_type: EventType::Bookmark, revision: applied, object, source: None };
                    // Refused (queue full, reader gone): dropped, never waited for.
                    if watcher.sink.offer(event) {
                        tick.bookmarks += 1;
                    }
                }
                watcher.next_bookmark_ms = next_bookmark_ms(now_ms, watcher.closes_at_ms, frequency_ms, false);
            }
            let at = watcher.wake_ms();
            if at != u64::MAX {
                self.wakeups.insert((at, id));
            }
        }
        tick
    }

    fn remove(&mut self, id: WatchId) {
        if let Some(watcher) = self.watchers.remove(&id) {
            self.unschedule(id, &watcher);
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
            bookmarks: Some(BookmarkSpec { shape: Arc::new(BookmarkShape::bare("Pod", "v1")) }),
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

    /// kube's cacher: a bookmark every frequency at the current revision,
    /// again at the same revision when nothing changed since, but never at
    /// or below the revision the watch started from.
    #[test]
    fn bookmarks_come_every_frequency_at_the_current_revision_above_the_start() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000).with_bookmark_frequency_ms(1000);
        let sink = Collect::default();
        let seen = sink.0.clone();
        hub.start(web_only(), Box::new(sink), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        // Entries the watcher does not select still advance the revision.
        hub.dispatch(&[log.put("a", "db"), log.put("b", "db")], 0, &fields);
        // A second watcher starts at the current revision, after the writes.
        let late = Collect::default();
        let late_seen = late.0.clone();
        hub.start(web_only(), Box::new(late), Revision(2), 300, &fields).unwrap();
        assert_eq!(hub.next_wake_ms(), Some(1000));
        assert_eq!(hub.tick(999), Tick::default(), "before the frequency");
        assert_eq!(hub.tick(1000).bookmarks, 1);
        assert_eq!(seen.borrow().last().map(|e| (e.0, e.1)), Some((EventType::Bookmark, 2)));
        assert_eq!(hub.next_wake_ms(), Some(1300), "the late watcher's first is due");
        assert_eq!(hub.tick(1300).bookmarks, 0, "nothing above where the late watcher started");
        // Nothing changed: the same revision again, a frequency later.
        assert_eq!(hub.tick(2000).bookmarks, 1);
        hub.dispatch(&[log.put("c", "db")], 2100, &fields);
        assert_eq!(hub.tick(2300).bookmarks, 1, "the late watcher, now that the revision moved");
        assert_eq!(hub.tick(3000).bookmarks, 1);
        let revisions = |seen: &Rc<RefCell<Vec<(EventType, u64, String)>>>| -> Vec<u64> {
            seen.borrow().iter().filter(|e| e.0 == EventType::Bookmark).map(|e| e.1).collect()
        };
        assert_eq!(revisions(&seen), [2, 2, 3]);
        assert_eq!(revisions(&late_seen), [3]);
        let object: serde_json::Value =
            serde_json::from_slice(&bookmark_object("Pod", "v1", Revision(9), true)).unwrap();
        assert_eq!(
            object,
            serde_json::json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9", "annotations": {"k8s.io/initial-events-end": "true"}}})
        );
        hub.stop(WatchId(1));
        hub.stop(WatchId(2));
        assert_eq!(hub.next_wake_ms(), None, "a stopped watcher leaves no wake-up");
    }

    /// The bookmark 2 s before the deadline, then the watch stays open (and
    /// gets events) until the deadline itself.
    #[test]
    fn a_bookmark_comes_two_seconds_before_the_deadline_and_the_watch_lasts_until_it() {
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000);
        let (sender, receiver) = queue::watch_queue(queue::QueueBounds { events_max: 10, bytes_max: 1 << 20 });
        let id = hub.start(web_only(), Box::new(sender), Revision(0), 0, &fields).unwrap().unwrap();
        hub.close_at(id, 10_000, 0);
        // Without bookmarks: only the deadline.
        let mut plain = web_only();
        plain.bookmarks = None;
        let quiet = Collect::default();
        let quiet_seen = quiet.0.clone();
        let other = hub.start(plain, Box::new(quiet), Revision(0), 0, &fields).unwrap().unwrap();
        hub.close_at(other, 10_000, 0);
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        hub.dispatch(&[log.put("a", "db")], 1_000, &fields);
        assert_eq!(hub.next_wake_ms(), Some(8_000));
        assert_eq!(hub.tick(7_999), Tick::default());
        assert_eq!(hub.tick(8_000), Tick { bookmarks: 1, closed: 0 });
        assert_eq!(hub.next_wake_ms(), Some(10_000), "no other bookmark: only the deadline is left");
        hub.dispatch(&[log.put("b", "web")], 9_000, &fields);
        assert_eq!(hub.tick(9_999), Tick::default());
        assert_eq!(hub.stats().watchers, 2, "open until the deadline");
        assert_eq!(hub.tick(10_000), Tick { bookmarks: 0, closed: 2 });
        assert_eq!(hub.stats().closed_slow, 0, "a timeout is not a slow watcher");
        assert!(hub.wakeups.is_empty() && hub.index.is_empty());
        let events: Vec<(EventType, u64)> = futures_lite::future::block_on(futures_util::StreamExt::collect::<Vec<_>>(
            futures_util::StreamExt::map(receiver, |e| (e.event_type, e.revision.0)),
        ));
        assert_eq!(events, [(EventType::Bookmark, 1), (EventType::Added, 2)]);
        assert_eq!(quiet_seen.borrow().iter().map(|e| e.0).collect::<Vec<_>>(), [EventType::Added]);
    }

    /// kube's `nextBookmarkTime` at the edges: a deadline within 2 s of the
    /// start gets no bookmark (exactly 2 s: one at once), and a bookmark
    /// the queue cannot take is dropped, the watcher kept.
    #[test]
    fn short_deadlines_and_full_queues() {
        assert_eq!(next_bookmark_ms(5_000, 6_000, 60_000, true), u64::MAX);
        assert_eq!(next_bookmark_ms(5_000, 7_000, 60_000, true), 5_000);
        assert_eq!(next_bookmark_ms(5_000, 7_000, 60_000, false), u64::MAX);
        assert_eq!(next_bookmark_ms(5_000, u64::MAX, 60_000, false), 65_000);
        let fields: Vec<ResourceInfo> = Vec::new();
        let mut hub = WatchHub::new(Revision(0), 60_000, 1000).with_bookmark_frequency_ms(1000);
        let full = Collect(Rc::default(), 1);
        let full_seen = full.0.clone();
        hub.start(web_only(), Box::new(full), Revision(0), 0, &fields).unwrap();
        let mut log = Log { revision: 0, current: BTreeMap::new() };
        hub.dispatch(&[log.put("a", "web")], 0, &fields);
        assert_eq!(hub.tick(1000), Tick::default(), "refused");
        assert_eq!((hub.stats().watchers, hub.stats().closed_slow), (1, 0));
        assert_eq!(full_seen.borrow().len(), 1);
        assert_eq!(hub.next_wake_ms(), Some(2000));
    }

    #[test]
    fn bookmark_shapes_put_the_revision_in_the_zero_object() {
        let zero = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"0"},"spec":{"containers":null},"status":{}}"#;
        let shape = BookmarkShape::from_zero_object("Pod", "v1", zero);
        assert_eq!(
            &shape.object(Revision(42), false)[..],
            br#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"42"},"spec":{"containers":null},"status":{}}"#
        );
        assert_eq!(
            &shape.object(Revision(7), true)[..],
            br#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}"#
        );
        // Not of the expected form: the bare bookmark.
        let odd = BookmarkShape::from_zero_object("Pod", "v1", r#"{"metadata":{"name":"x"}}"#);
        assert_eq!(odd, BookmarkShape::bare("Pod", "v1"));
        assert_eq!(
            &odd.object(Revision(3), false)[..],
            br#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"3"}}"#
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
