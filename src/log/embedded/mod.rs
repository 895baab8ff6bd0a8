//! The embedded durable log: a write-ahead log of FlatBuffers records in
//! segment files, periodic snapshots, and the in-memory state they imply.
//!
//! [`EmbeddedLog`] owns, for one directory: the key index (key -> mod revision,
//! create revision; no values) used for preconditions; the group commit of
//! appends; segment rotation; snapshots (merged from the files, `merge.rs`)
//! and the deletion of the segments they cover; recovery; and the in-memory
//! tail of committed entries that subscribers read and release.
//!
//! No value is kept in memory: a snapshot is the previous snapshot merged with
//! the segments since it, streamed from disk, and an entry's `previous` value
//! (which watchers need) is the one the writer read at the key's mod revision
//! and handed in with the append ([`EmbeddedLog::append_known`]). All of it runs on one thread
//! (`Rc`/`RefCell`, futures are not `Send`); file I/O goes through
//! [`LogDirectory`] so this module never sees glommio.
//!
//! Group commit: appends enqueue their proposal; one of them at a time is the
//! *leader*, which takes a batch from the queue (checking preconditions and
//! assigning revisions in queue order), writes it with one aligned `write_at`
//! and one `sync`, then commits it and hands leadership to a waiting caller.
//! Appends arriving while a batch is on disk form the next batch. If a leader's
//! future is dropped mid-batch, leadership passes to another waiter, which
//! rewrites the same bytes (writes are idempotent) before committing.
//!
//! Invariants:
//! - `index` is exactly the key revisions at `committed_revision()`; the batch being
//!   written lives in `InFlight::overlay` until it is durable;
//! - an entry is reported committed (Ok, tail, `wait_committed`) only after the
//!   write and sync of its batch succeeded; a failed write or sync fails the log
//!   for good (every pending and later append gets `Unavailable`);
//! - at most one leader writes at a time (`State::writer_busy`);
//! - committed revisions increase by exactly one; recovery refuses (Corrupt)
//!   any gap, and any invalid frame that is not the torn tail of the last segment.

mod generated;
pub(crate) mod merge;
pub(crate) mod notify;
pub mod record;
pub mod segment;
pub(crate) mod snapshot;
pub mod stream;
pub mod testing;
#[cfg(test)]
mod tests;

use self::merge::{write_merged_snapshot, MergePlan};
use self::notify::Notify;
use self::record::decode_record;
use self::record::{encode_record, push_frame, FRAME_HEADER_BYTES};
use self::segment::{parse_segment_name, segment_name, BlockWriter};
use self::snapshot::{is_temporary_snapshot, parse_snapshot_name, SnapshotReader};
use self::stream::{FrameStream, StreamItem, READ_CHUNK_BYTES};
use crate::config::Config;
use crate::log::{
    AppendError, Entry, KeyValue, KnownValue, LogDirectory, LogError, LogFile, Operation, Precondition, PreviousValue,
    Proposal, Revision, SnapshotAnnotator,
};
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// The limits of one embedded log (see `config.rs` for what each bounds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// A segment is closed and a new one started before it would pass this size.
    pub segment_bytes_max: u64,
    /// `snapshot_if_due` writes a snapshot after this many committed records.
    pub snapshot_every_records: u64,
    /// Most records written by one group commit.
    pub batch_records_max: usize,
    /// Most bytes written by one group commit (a single record may exceed it).
    pub batch_bytes_max: usize,
    /// Largest frame (header + record) accepted.
    pub record_bytes_max: usize,
    /// Appends wait while this many entries are committed-but-unreleased or pending.
    pub tail_entries_max: usize,
    /// Most bytes of changed records a snapshot merge holds at once.
    pub snapshot_merge_bytes_max: usize,
}

impl LogOptions {
    pub fn from_config(config: &Config) -> LogOptions {
        LogOptions {
            segment_bytes_max: config.log_segment_bytes_max,
            snapshot_every_records: config.log_snapshot_every_records,
            batch_records_max: config.log_batch_records_max,
            batch_bytes_max: config.log_batch_bytes_max,
            record_bytes_max: config.log_record_bytes_max,
            tail_entries_max: config.log_tail_entries_max,
            snapshot_merge_bytes_max: config.log_snapshot_merge_bytes_max,
        }
    }
}

/// The state found by [`EmbeddedLog::open`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The last committed revision (0 for an empty log).
    pub revision: Revision,
    /// Every live key at `revision`, sorted by key. Keys and values are slices
    /// of the pieces the files were read in (no copy): they keep those pieces
    /// alive, so a holder copies what it keeps for long and drops the rest.
    pub live: Vec<KeyValue>,
}

/// What the index keeps per key: what preconditions and entries need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KeyState {
    mod_revision: Revision,
    create_revision: Revision,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Status {
    Open,
    /// `close` was called: no new appends; admitted ones are still written.
    Closing,
    Closed,
    /// A write or sync failed; nothing more is written.
    Failed(String),
}

/// What became of one append.
enum Phase {
    Queued,
    InBatch,
    Done(Option<Result<Entry, AppendError>>),
}

struct Slot {
    phase: Phase,
    /// This waiter is asked to become the leader.
    lead_offered: bool,
    /// The append's future was dropped; never offer it the lead.
    abandoned: bool,
    waker: Option<Waker>,
}

type SlotRef = Rc<RefCell<Slot>>;

impl Slot {
    fn finish(&mut self, result: Result<Entry, AppendError>) {
        self.phase = Phase::Done(Some(result));
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
    fn offer_lead(&mut self) {
        self.lead_offered = true;
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

struct Queued {
    id: u64,
    proposal: Proposal,
    /// The value the writer read at the key's mod revision, if it knows it.
    known: Option<KnownValue>,
    slot: SlotRef,
}

/// The batch being written: revisions assigned, not yet durable.
struct InFlight {
    entries: Vec<(SlotRef, Entry)>,
    frames: Vec<u8>,
    /// `frames` were handed to the segment writer (after any rotation).
    staged: bool,
    /// Key states as of the end of this batch (None: deleted).
    overlay: HashMap<Bytes, Option<KeyState>>,
}

struct State {
    /// Every live key's revisions (keys copied: never slices of a read buffer).
    index: HashMap<Box<[u8]>, KeyState>,
    last_assigned: Revision,
    queue: VecDeque<Queued>,
    in_flight: Option<InFlight>,
    writer_busy: bool,
    status: Status,
    /// Committed entries with revision > `tail_after`, oldest first.
    tail: VecDeque<Entry>,
    tail_after: Revision,
    /// Every segment file (first revision, name), ascending; the last is written.
    segments: Vec<(Revision, String)>,
    /// Published snapshots (revision, name), ascending.
    snapshots: Vec<(Revision, String)>,
    last_snapshot_revision: Revision,
    /// Records of the newest snapshot that carry no `cached` bytes (it was
    /// written without an annotator): `close` rewrites it, even with nothing
    /// new, once an annotator is set, so the next start loads without parsing.
    unannotated_records: u64,
    snapshot_running: bool,
    next_id: u64,
}

impl State {
    fn current(&self, key: &Bytes) -> Option<KeyState> {
        if let Some(in_flight) = &self.in_flight {
            if let Some(state) = in_flight.overlay.get(key) {
                return *state;
            }
        }
        self.index.get(&key[..]).copied()
    }

    fn pending_entries(&self) -> usize {
        self.tail.len() + self.queue.len() + self.in_flight.as_ref().map_or(0, |f| f.entries.len())
    }

    fn unavailable(&self) -> Option<AppendError> {
        match &self.status {
            Status::Open => None,
            Status::Closing | Status::Closed => Some(AppendError::Unavailable("log closed".into())),
            Status::Failed(reason) => Some(AppendError::Unavailable(reason.clone())),
        }
    }
}

/// The embedded durable log over one [`LogDirectory`]. See the module doc.
pub struct EmbeddedLog<D: LogDirectory> {
    dir: D,
    options: LogOptions,
    state: RefCell<State>,
    /// The segment being written. Only the leader (or `close`, once idle)
    /// touches it, so its borrow may be held across the writer's own I/O.
    writer: RefCell<Option<BlockWriter<D::File>>>,
    committed: Cell<Revision>,
    committed_changed: Notify,
    capacity_changed: Notify,
    idle_changed: Notify,
    builder: RefCell<FlatBufferBuilder<'static>>,
    /// What snapshot records carry for the cache (`set_annotator`), if set.
    annotator: RefCell<Option<Rc<dyn SnapshotAnnotator>>>,
}

impl<D: LogDirectory> std::fmt::Debug for EmbeddedLog<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("EmbeddedLog")
            .field("committed", &self.committed.get())
            .field("status", &state.status)
            .field("keys", &state.index.len())
            .field("segments", &state.segments.len())
            .finish()
    }
}

enum SlotEvent {
    Lead,
    Done(Result<Entry, AppendError>),
}

/// Waits for an append's slot to be offered the lead or finished.
struct SlotWait<'a> {
    slot: &'a SlotRef,
}

impl Future for SlotWait<'_> {
    type Output = SlotEvent;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<SlotEvent> {
        let mut slot = self.slot.borrow_mut();
        if std::mem::take(&mut slot.lead_offered) {
            return Poll::Ready(SlotEvent::Lead);
        }
        if let Phase::Done(result) = &mut slot.phase {
            if let Some(result) = result.take() {
                return Poll::Ready(SlotEvent::Done(result));
            }
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Cleans up after an append whose future is dropped before it finished.
struct AppendGuard<'a, D: LogDirectory> {
    log: &'a EmbeddedLog<D>,
    id: u64,
    slot: SlotRef,
}

impl<D: LogDirectory> Drop for AppendGuard<'_, D> {
    fn drop(&mut self) {
        let (queued, offered) = {
            let mut slot = self.slot.borrow_mut();
            slot.abandoned = true;
            slot.waker = None;
            (matches!(slot.phase, Phase::Queued), std::mem::take(&mut slot.lead_offered))
        };
        if queued {
            // Not yet ordered: the append simply never happens.
            self.log.state.borrow_mut().queue.retain(|queued| queued.id != self.id);
            self.log.capacity_changed.notify_all();
        }
        if offered {
            self.log.hand_off();
        }
    }
}

/// Passes leadership on if a leader's future is dropped mid-batch.
struct LeaderGuard<'a, D: LogDirectory> {
    log: &'a EmbeddedLog<D>,
    armed: bool,
}

impl<D: LogDirectory> Drop for LeaderGuard<'_, D> {
    fn drop(&mut self) {
        if self.armed {
            self.log.hand_off();
        }
    }
}

/// Resets the snapshot flag however `snapshot_if_due` ends.
struct SnapshotGuard<'a, D: LogDirectory> {
    log: &'a EmbeddedLog<D>,
}

impl<D: LogDirectory> Drop for SnapshotGuard<'_, D> {
    fn drop(&mut self) {
        self.log.state.borrow_mut().snapshot_running = false;
        self.log.idle_changed.notify_all();
    }
}

enum Prepared {
    /// Nothing queued and nothing in flight.
    Nothing,
    /// Only refusals (conflicts, too large) were resolved.
    Resolved,
    /// `State::in_flight` holds a batch to write.
    Ready,
}

fn corrupt(path: &str, offset: u64, reason: impl Into<String>) -> LogError {
    LogError::Corrupt { path: path.to_string(), offset, reason: reason.into() }
}

/// Every record of the snapshot `name`, read in large pieces and checked,
/// and how many carry no `cached` bytes.
async fn read_whole_snapshot<D: LogDirectory>(dir: &D, name: &str) -> Result<(Revision, Vec<KeyValue>, u64), LogError> {
    let mut reader = SnapshotReader::open(dir, name).await?;
    let mut live = Vec::with_capacity(usize::try_from(reader.record_count()).unwrap_or(0).min(1 << 24));
    let mut unannotated = 0;
    while let Some(record) = reader.next().await? {
        let record = record.record;
        unannotated += u64::from(record.cached.is_empty());
        let Operation::Put(value) = record.operation else { continue };
        live.push(KeyValue {
            key: record.key,
            value,
            create_revision: record.create_revision,
            mod_revision: record.revision,
            cached: record.cached,
        });
    }
    Ok((reader.revision(), live, unannotated))
}

/// `base` (sorted by key) with `changed` applied: a key's newest state
/// replaces (Some) or removes (None) it. Sorted by key.
fn merge_sorted(base: Vec<KeyValue>, changed: BTreeMap<Bytes, Option<KeyValue>>) -> Vec<KeyValue> {
    if changed.is_empty() {
        return base;
    }
    let mut out = Vec::with_capacity(base.len() + changed.len());
    let mut changes = changed.into_iter().peekable();
    for kv in base {
        // Keys created after the snapshot that sort before this one.
        while let Some((_, state)) = changes.next_if(|(key, _)| key[..] < kv.key[..]) {
            out.extend(state);
        }
        // A change of this key replaces (put) or removes (delete) it.
        if let Some((_, state)) = changes.next_if(|(key, _)| key[..] == kv.key[..]) {
            out.extend(state);
            continue;
        }
        out.push(kv);
    }
    out.extend(changes.filter_map(|(_, state)| state));
    out
}

impl<D: LogDirectory> EmbeddedLog<D> {
    /// Recovers the log in `dir` (creating it if empty): the newest valid
    /// snapshot, then every later segment; a torn tail of the last segment is
    /// truncated away. Gaps and invalid frames elsewhere are `Corrupt`.
    pub async fn open(dir: D, options: LogOptions) -> Result<(Self, Recovered), LogError> {
        let names = dir.list().await?;
        let mut segments: Vec<(Revision, String)> = Vec::new();
        let mut snapshots: Vec<(Revision, String)> = Vec::new();
        let mut garbage: Vec<String> = Vec::new();
        for name in names {
            if let Some(first) = parse_segment_name(&name) {
                segments.push((first, name));
            } else if let Some(revision) = parse_snapshot_name(&name) {
                snapshots.push((revision, name));
            } else if is_temporary_snapshot(&name) {
                garbage.push(name);
            }
        }
        segments.sort();
        snapshots.sort();

        // The newest snapshot that reads back whole, read in large pieces;
        // its records come sorted by key.
        let mut base = Revision::ZERO;
        let mut live: Vec<KeyValue> = Vec::new();
        let mut unannotated_records = 0;
        for (_, name) in snapshots.iter().rev() {
            if let Ok((revision, records, unannotated)) = read_whole_snapshot(&dir, name).await {
                base = revision;
                live = records;
                unannotated_records = unannotated;
                break;
            }
        }
        // Older snapshots are superseded.
        let (stale_snapshots, kept_snapshots): (Vec<_>, Vec<_>) =
            snapshots.into_iter().partition(|(revision, _)| *revision < base);
        garbage.extend(stale_snapshots.into_iter().map(|(_, name)| name));

        // Segments entirely covered by the snapshot: the next segment starts
        // at or before base + 1.
        let first_needed = segments.iter().rposition(|(first, _)| *first <= base.next()).unwrap_or(0);
        let replay: Vec<(Revision, String)> = segments.split_off(first_needed);
        garbage.extend(segments.into_iter().map(|(_, name)| name));

        // Every key the segments change after the snapshot: its newest state.
        let mut changed: BTreeMap<Bytes, Option<KeyValue>> = BTreeMap::new();
        let mut previous: Option<Revision> = None;
        let mut last_segment: Option<(String, u64)> = None;
        for (position, (first, name)) in replay.iter().enumerate() {
            let is_last = position + 1 == replay.len();
            let mut stream = FrameStream::open(&dir, name, READ_CHUNK_BYTES).await?;
            let mut records_in_segment = 0u64;
            let valid_len = loop {
                let (data, payload, offset) = match stream.next().await? {
                    StreamItem::Frame { data, payload, offset, .. } => (data, payload, offset),
                    StreamItem::End { offset } => break offset,
                    // A torn tail is expected only at the end of the last segment.
                    StreamItem::Invalid { offset, .. } if is_last => break offset,
                    StreamItem::Invalid { offset, reason } => return Err(corrupt(name, offset, reason)),
                };
                let record = decode_record(&data, payload).map_err(|e| corrupt(name, offset, e.to_string()))?;
                if records_in_segment == 0 && record.revision != *first {
                    return Err(corrupt(
                        name,
                        0,
                        format!("first record has revision {}, the name says {}", record.revision, first),
                    ));
                }
                records_in_segment += 1;
                match previous {
                    Some(p) if record.revision != p.next() => {
                        return Err(corrupt(name, offset, format!("revision gap: {} follows {}", record.revision, p)));
                    }
                    None if record.revision > base.next() => {
                        return Err(corrupt(
                            name,
                            offset,
                            format!("revision gap: log resumes at {} after {}", record.revision, base),
                        ));
                    }
                    _ => {}
                }
                previous = Some(record.revision);
                if record.revision <= base {
                    continue;
                }
                match record.operation {
                    Operation::Put(value) => {
                        if record.create_revision == Revision::ZERO || record.create_revision > record.revision {
                            return Err(corrupt(name, offset, "create revision out of range"));
                        }
                        let key = record.key.clone();
                        let kv = KeyValue {
                            key: record.key,
                            value,
                            create_revision: record.create_revision,
                            mod_revision: record.revision,
                            cached: Bytes::new(),
                        };
                        changed.insert(key, Some(kv));
                    }
                    Operation::Delete => {
                        changed.insert(record.key, None);
                    }
                }
            };
            if records_in_segment == 0 {
                if !is_last {
                    return Err(corrupt(name, 0, "empty segment before the last"));
                }
                let expected = previous.unwrap_or(base).next();
                if *first != expected {
                    return Err(corrupt(name, 0, format!("empty last segment starts at {first}, expected {expected}")));
                }
            }
            if is_last {
                last_segment = Some((name.clone(), valid_len));
            }
        }
        if previous.is_some_and(|p| p < base) {
            return Err(corrupt(
                replay.last().map_or("", |(_, name)| name.as_str()),
                0,
                format!("segments end before the snapshot revision {base}"),
            ));
        }
        let revision = previous.map_or(base, |p| p.max(base));
        let live = merge_sorted(live, changed);

        for name in &garbage {
            dir.remove(name).await?;
        }
        let mut directory_dirty = !garbage.is_empty();
        let mut segment_list = replay;
        let writer = match last_segment {
            Some((name, valid_len)) => {
                let file = dir.open(&name).await?;
                let size = dir.file_size(&name).await?;
                if size != valid_len {
                    // Cut the torn tail (and old padding) so it can never be
                    // mistaken for data after later appends.
                    file.truncate(valid_len).await?;
                    file.sync().await?;
                }
                // The writer needs the partial last block only.
                let alignment = file.alignment().max(1);
                let block_start = valid_len - valid_len % alignment;
                let mut block = vec![0u8; block_start as usize];
                dir.read_at(&name, block_start, (valid_len - block_start) as usize, &mut block).await?;
                BlockWriter::new(file, name, &block, valid_len)?
            }
            None => {
                let first = revision.next();
                let name = segment_name(first);
                let file = dir.open(&name).await?;
                directory_dirty = true;
                segment_list.push((first, name.clone()));
                BlockWriter::new(file, name, &[], 0)?
            }
        };
        if directory_dirty {
            dir.sync_directory().await?;
        }

        let index: HashMap<Box<[u8]>, KeyState> = live
            .iter()
            .map(|kv| {
                let state = KeyState { mod_revision: kv.mod_revision, create_revision: kv.create_revision };
                (Box::<[u8]>::from(&kv.key[..]), state)
            })
            .collect();
        let log = EmbeddedLog {
            dir,
            options,
            state: RefCell::new(State {
                index,
                last_assigned: revision,
                queue: VecDeque::new(),
                in_flight: None,
                writer_busy: false,
                status: Status::Open,
                tail: VecDeque::new(),
                tail_after: revision,
                segments: segment_list,
                snapshots: kept_snapshots,
                last_snapshot_revision: base,
                unannotated_records,
                snapshot_running: false,
                next_id: 0,
            }),
            writer: RefCell::new(Some(writer)),
            committed: Cell::new(revision),
            committed_changed: Notify::default(),
            capacity_changed: Notify::default(),
            idle_changed: Notify::default(),
            builder: RefCell::new(FlatBufferBuilder::new()),
            annotator: RefCell::new(None),
        };
        Ok((log, Recovered { revision, live }))
    }

    /// Orders and persists `proposal`. Durable when Ok. The precondition is
    /// checked against the key's state including every earlier ordered entry;
    /// deleting an absent key is a `Conflict { current: None }`.
    ///
    /// The log keeps no values: the entry's `previous` value is empty. Writers
    /// that replace or delete a key use [`EmbeddedLog::append_known`].
    pub async fn append(&self, proposal: Proposal) -> Result<Entry, AppendError> {
        self.append_known(proposal, None).await
    }

    /// [`EmbeddedLog::append`], with the value the writer read at the key's
    /// mod revision: when the key still has that mod revision as the entry is
    /// ordered, the entry's `previous` carries it (otherwise its value is
    /// empty; with a `ModRevision` precondition that cannot happen unless the
    /// writer had no value for that revision).
    pub async fn append_known(&self, proposal: Proposal, known: Option<KnownValue>) -> Result<Entry, AppendError> {
        if let Some(error) = self.state.borrow().unavailable() {
            return Err(error);
        }
        let payload_bytes = proposal.key.len()
            + match &proposal.operation {
                Operation::Put(value) => value.len(),
                Operation::Delete => 0,
            };
        if payload_bytes + FRAME_HEADER_BYTES > self.options.record_bytes_max {
            return Err(AppendError::TooLarge {
                size_bytes: payload_bytes + FRAME_HEADER_BYTES,
                limit_bytes: self.options.record_bytes_max,
            });
        }
        // Backpressure: wait for subscribers to release the tail.
        let tail_entries_max = self.options.tail_entries_max.max(1);
        self.capacity_changed
            .wait_until(|| {
                let state = self.state.borrow();
                state.status != Status::Open || state.pending_entries() < tail_entries_max
            })
            .await;
        let (id, slot) = {
            let mut state = self.state.borrow_mut();
            if let Some(error) = state.unavailable() {
                return Err(error);
            }
            let id = state.next_id;
            state.next_id += 1;
            let slot = Rc::new(RefCell::new(Slot {
                phase: Phase::Queued,
                lead_offered: !state.writer_busy,
                abandoned: false,
                waker: None,
            }));
            state.writer_busy = true;
            state.queue.push_back(Queued { id, proposal, known, slot: slot.clone() });
            (id, slot)
        };
        let _guard = AppendGuard { log: self, id, slot: slot.clone() };
        loop {
            match (SlotWait { slot: &slot }).await {
                SlotEvent::Done(result) => return result,
                SlotEvent::Lead => self.lead(|| matches!(slot.borrow().phase, Phase::Done(_))).await,
            }
        }
    }

    /// Every later snapshot offers its records to `annotator` and keeps the
    /// bytes it gives (`KeyValue::cached` after a restart).
    pub fn set_annotator(&self, annotator: Rc<dyn SnapshotAnnotator>) {
        *self.annotator.borrow_mut() = Some(annotator);
    }

    /// The last durable revision.
    pub fn committed_revision(&self) -> Revision {
        self.committed.get()
    }

    /// Resolves once `committed_revision() > after`; `Err(Closed)` if the log
    /// is closed (or failed) first.
    pub async fn wait_committed(&self, after: Revision) -> Result<(), LogError> {
        self.committed_changed
            .wait_until(|| {
                self.committed.get() > after || matches!(self.state.borrow().status, Status::Closed | Status::Failed(_))
            })
            .await;
        if self.committed.get() > after {
            Ok(())
        } else {
            Err(LogError::Closed)
        }
    }

    /// Committed entries with revision > `after`, oldest first, at most
    /// `max_entries`. `Err(Compacted)` if the tail no longer holds `after + 1`.
    pub fn read_committed(&self, after: Revision, max_entries: usize) -> Result<Vec<Entry>, LogError> {
        let state = self.state.borrow();
        if after < state.tail_after {
            return Err(LogError::Compacted { after, oldest_after: state.tail_after });
        }
        let skip = usize::try_from(after.0 - state.tail_after.0).unwrap_or(usize::MAX);
        Ok(state.tail.iter().skip(skip).take(max_entries).cloned().collect())
    }

    /// The subscriber consumed everything <= `up_to`; the tail drops it.
    pub fn release(&self, up_to: Revision) {
        let up_to = up_to.min(self.committed.get());
        let mut state = self.state.borrow_mut();
        while state.tail.front().is_some_and(|e| e.revision <= up_to) {
            state.tail.pop_front();
        }
        if up_to > state.tail_after {
            state.tail_after = up_to;
        }
        drop(state);
        self.capacity_changed.notify_all();
    }

    /// Writes a snapshot if `snapshot_every_records` records were committed
    /// since the last one, then deletes the segments and snapshots it covers.
    /// Returns whether a snapshot was written.
    ///
    /// The snapshot is the previous one merged with the segments since it,
    /// streamed from disk (`merge.rs`): no value is held beyond the merge's
    /// budget, and appends go on meanwhile.
    pub async fn snapshot_if_due(&self) -> Result<bool, LogError> {
        self.snapshot(self.options.snapshot_every_records).await
    }

    /// Writes a snapshot if at least `every_records` (and at least one)
    /// records were committed since the last one.
    async fn snapshot(&self, every_records: u64) -> Result<bool, LogError> {
        let plan = {
            let mut state = self.state.borrow_mut();
            match state.status {
                Status::Closed | Status::Failed(_) => return Err(LogError::Closed),
                Status::Open | Status::Closing => {}
            }
            let revision = self.committed.get();
            let since = revision.0 - state.last_snapshot_revision.0.min(revision.0);
            // At close, a snapshot without the annotator's bytes is rewritten
            // at its own revision (same name: the rename replaces it).
            let annotate = every_records <= 1
                && state.unannotated_records > 0
                && revision == state.last_snapshot_revision
                && self.annotator.borrow().is_some();
            if state.snapshot_running
                || (!annotate && (revision <= state.last_snapshot_revision || since < every_records))
            {
                return Ok(false);
            }
            state.snapshot_running = true;
            let base = state.snapshots.last().cloned();
            let after = base.as_ref().map_or(Revision::ZERO, |(r, _)| *r);
            // The segments holding (after, revision]: from the last one that
            // starts at or before after + 1, through the last that starts at
            // or before revision.
            let first = state.segments.iter().rposition(|(first, _)| *first <= after.next()).unwrap_or(0);
            let segments: Vec<String> = state.segments[first..]
                .iter()
                .filter(|(first, _)| *first <= revision)
                .map(|(_, name)| name.clone())
                .collect();
            let mut plan = MergePlan::new(revision, base, segments, state.index.len() as u64);
            plan.merge_bytes_max = self.options.snapshot_merge_bytes_max;
            plan
        };
        let _guard = SnapshotGuard { log: self };
        let revision = plan.revision;
        let annotator = self.annotator.borrow().clone();
        let name = write_merged_snapshot(&self.dir, &plan, annotator.as_deref()).await?;
        drop(plan);
        let doomed: Vec<String> = {
            let mut state = self.state.borrow_mut();
            state.last_snapshot_revision = revision;
            if annotator.is_some() {
                state.unannotated_records = 0;
            }
            let mut doomed = Vec::new();
            // Never the last segment: it is being written.
            while state.segments.len() > 1 && state.segments[1].0 <= revision.next() {
                doomed.push(state.segments.remove(0).1);
            }
            let older: Vec<(Revision, String)> = state.snapshots.drain(..).filter(|(r, _)| *r < revision).collect();
            doomed.extend(older.into_iter().map(|(_, n)| n));
            state.snapshots.push((revision, name));
            doomed
        };
        for name in &doomed {
            self.dir.remove(name).await?;
        }
        if !doomed.is_empty() {
            self.dir.sync_directory().await?;
        }
        Ok(true)
    }

    /// Writes every admitted append, syncs, writes a snapshot of everything
    /// committed (if anything is newer than the last one), closes the
    /// segment, and refuses later appends with `Unavailable`. Waiters of
    /// `wait_committed` get `Closed`.
    pub async fn close(&self) -> Result<(), LogError> {
        {
            let mut state = self.state.borrow_mut();
            match state.status {
                Status::Closed => return Ok(()),
                Status::Open => state.status = Status::Closing,
                Status::Closing | Status::Failed(_) => {}
            }
        }
        self.capacity_changed.notify_all();
        // Become the leader once the current one is done, and drain the queue.
        self.idle_changed.wait_until(|| !self.state.borrow().writer_busy).await;
        self.state.borrow_mut().writer_busy = true;
        self.lead(|| {
            let state = self.state.borrow();
            state.queue.is_empty() && state.in_flight.is_none()
        })
        .await;
        self.idle_changed
            .wait_until(|| {
                let state = self.state.borrow();
                !state.writer_busy && !state.snapshot_running
            })
            .await;
        // A snapshot of everything, so that the next start reads it alone
        // (compressed) instead of replaying the segments. The segments stay
        // if it fails: nothing is lost, the next start replays them.
        let snapshot =
            if matches!(self.state.borrow().status, Status::Failed(_)) { Ok(false) } else { self.snapshot(1).await };
        let writer = self.writer.borrow_mut().take();
        let failed = matches!(self.state.borrow().status, Status::Failed(_));
        let result = match writer {
            Some(writer) if !failed => match writer.sync().await {
                Ok(()) => writer.close().await,
                Err(e) => Err(e),
            },
            Some(writer) => writer.close().await,
            None => Ok(()),
        };
        // A snapshot of everything covers the last segment too: the next
        // start then reads the snapshot alone (it starts a new segment).
        let covered = {
            let mut state = self.state.borrow_mut();
            if result.is_ok() && snapshot.is_ok() && state.last_snapshot_revision == self.committed.get() {
                state.segments.drain(..).map(|(_, name)| name).collect()
            } else {
                Vec::new()
            }
        };
        let mut removed = Ok(());
        for name in &covered {
            removed = removed.and(self.dir.remove(name).await);
        }
        if !covered.is_empty() {
            removed = removed.and(self.dir.sync_directory().await);
        }
        self.state.borrow_mut().status = Status::Closed;
        self.committed_changed.notify_all();
        self.capacity_changed.notify_all();
        snapshot.and(result).and(removed)
    }

    /// Runs batches until `done()` (or the log fails / runs out of work), then
    /// hands leadership on. The caller holds the lead (`writer_busy`).
    async fn lead(&self, done: impl Fn() -> bool) {
        let mut guard = LeaderGuard { log: self, armed: true };
        // Let appends issued in the same scheduler tick join this batch.
        futures_lite::future::yield_now().await;
        loop {
            if matches!(self.state.borrow().status, Status::Failed(_)) || done() {
                break;
            }
            match self.prepare_batch() {
                Prepared::Nothing => break,
                Prepared::Resolved => continue,
                Prepared::Ready => {}
            }
            match self.write_in_flight().await {
                Ok(()) => self.commit_in_flight(),
                Err(error) => {
                    self.fail(error.to_string());
                    break;
                }
            }
        }
        guard.armed = false;
        self.hand_off();
    }

    /// Takes the next batch from the queue into `in_flight` (unless a batch is
    /// already there), resolving refused proposals on the way.
    fn prepare_batch(&self) -> Prepared {
        let mut state = self.state.borrow_mut();
        if state.in_flight.is_some() {
            return Prepared::Ready;
        }
        if state.queue.is_empty() {
            return Prepared::Nothing;
        }
        let mut builder = self.builder.borrow_mut();
        let mut batch = InFlight { entries: Vec::new(), frames: Vec::new(), staged: false, overlay: HashMap::new() };
        let records_max = self.options.batch_records_max.max(1);
        while batch.entries.len() < records_max {
            let Some(front) = state.queue.front() else {
                break;
            };
            let key = front.proposal.key.clone();
            let current = match batch.overlay.get(&key) {
                Some(overlaid) => *overlaid,
                None => state.current(&key),
            };
            let current_revision = current.as_ref().map(|c| c.mod_revision);
            let holds = match front.proposal.precondition {
                Precondition::None => true,
                Precondition::Absent => current.is_none(),
                Precondition::ModRevision(expected) => current_revision == Some(expected),
            };
            let deletes_nothing = matches!(front.proposal.operation, Operation::Delete) && current.is_none();
            if !holds || deletes_nothing {
                if let Some(queued) = state.queue.pop_front() {
                    queued.slot.borrow_mut().finish(Err(AppendError::Conflict { current: current_revision }));
                }
                continue;
            }
            let revision = state.last_assigned.next();
            let create_revision = match (&front.proposal.operation, &current) {
                (Operation::Put(_), None) => revision,
                (_, Some(current)) => current.create_revision,
                (Operation::Delete, None) => revision, // unreachable: refused above
            };
            let frame_start = batch.frames.len();
            let payload = encode_record(&mut builder, revision, &key, &front.proposal.operation, create_revision);
            let frame_bytes = payload.len() + FRAME_HEADER_BYTES;
            if frame_bytes > self.options.record_bytes_max {
                if let Some(queued) = state.queue.pop_front() {
                    queued.slot.borrow_mut().finish(Err(AppendError::TooLarge {
                        size_bytes: frame_bytes,
                        limit_bytes: self.options.record_bytes_max,
                    }));
                }
                continue;
            }
            if !batch.entries.is_empty() && frame_start + frame_bytes > self.options.batch_bytes_max {
                break;
            }
            push_frame(&mut batch.frames, payload);
            let Some(queued) = state.queue.pop_front() else {
                break;
            };
            state.last_assigned = revision;
            let operation = queued.proposal.operation;
            let known = queued.known;
            let next_state = match operation {
                Operation::Put(_) => Some(KeyState { mod_revision: revision, create_revision }),
                Operation::Delete => None,
            };
            let entry = Entry {
                revision,
                key: key.clone(),
                operation,
                create_revision,
                previous: current.map(|c| PreviousValue {
                    mod_revision: c.mod_revision,
                    create_revision: c.create_revision,
                    value: known.filter(|k| k.mod_revision == c.mod_revision).map(|k| k.value).unwrap_or_default(),
                }),
            };
            batch.overlay.insert(key, next_state);
            queued.slot.borrow_mut().phase = Phase::InBatch;
            batch.entries.push((queued.slot, entry));
        }
        if batch.entries.is_empty() {
            drop(state);
            self.capacity_changed.notify_all();
            return Prepared::Resolved;
        }
        state.in_flight = Some(batch);
        Prepared::Ready
    }

    /// Rotates if needed, stages the in-flight frames, writes and syncs them.
    /// Safe to re-run after an interruption: every step is idempotent.
    #[allow(clippy::await_holding_refcell_ref)] // only the leader touches `writer`
    async fn write_in_flight(&self) -> Result<(), LogError> {
        let (staged, first, frames_bytes) = {
            let state = self.state.borrow();
            let Some(batch) = &state.in_flight else {
                return Ok(());
            };
            let first = batch.entries.first().map_or(Revision::ZERO, |(_, e)| e.revision);
            (batch.staged, first, batch.frames.len() as u64)
        };
        if !staged {
            let needs_rotation = {
                let writer = self.writer.borrow();
                let writer = writer.as_ref().ok_or(LogError::Closed)?;
                writer.valid_len() > 0 && writer.valid_len() + frames_bytes > self.options.segment_bytes_max
            };
            if needs_rotation {
                self.rotate(first).await?;
            }
            let mut state = self.state.borrow_mut();
            let mut writer = self.writer.borrow_mut();
            let writer = writer.as_mut().ok_or(LogError::Closed)?;
            if let Some(batch) = state.in_flight.as_mut() {
                writer.stage(&batch.frames);
                batch.frames = Vec::new();
                batch.staged = true;
            }
        }
        let mut writer = self.writer.borrow_mut();
        let writer = writer.as_mut().ok_or(LogError::Closed)?;
        writer.flush(true).await
    }

    /// Starts segment `first` (durably created) and closes the previous one.
    #[allow(clippy::await_holding_refcell_ref)] // only the leader touches `writer`
    async fn rotate(&self, first: Revision) -> Result<(), LogError> {
        let name = segment_name(first);
        let file = self.dir.open(&name).await?;
        self.dir.sync_directory().await?;
        let writer = BlockWriter::new(file, name.clone(), &[], 0)?;
        let old = self.writer.borrow_mut().replace(writer);
        self.state.borrow_mut().segments.push((first, name));
        if let Some(old) = old {
            old.close().await?;
        }
        Ok(())
    }

    /// The in-flight batch is durable: apply it, publish it, answer callers.
    fn commit_in_flight(&self) {
        let mut state = self.state.borrow_mut();
        let Some(batch) = state.in_flight.take() else {
            return;
        };
        let mut last = self.committed.get();
        for (slot, entry) in batch.entries {
            let key_state = KeyState { mod_revision: entry.revision, create_revision: entry.create_revision };
            match &entry.operation {
                Operation::Put(_) => match state.index.get_mut(&entry.key[..]) {
                    Some(existing) => *existing = key_state,
                    None => {
                        state.index.insert(Box::from(&entry.key[..]), key_state);
                    }
                },
                Operation::Delete => {
                    state.index.remove(&entry.key[..]);
                }
            }
            last = entry.revision;
            state.tail.push_back(entry.clone());
            slot.borrow_mut().finish(Ok(entry));
        }
        self.committed.set(last);
        drop(state);
        self.committed_changed.notify_all();
    }

    /// A write or sync failed: nothing pending may ever be reported committed.
    fn fail(&self, reason: String) {
        let mut state = self.state.borrow_mut();
        let message = format!("log write failed: {reason}");
        state.status = Status::Failed(message.clone());
        if let Some(batch) = state.in_flight.take() {
            for (slot, _) in batch.entries {
                slot.borrow_mut().finish(Err(AppendError::Unavailable(message.clone())));
            }
        }
        for queued in state.queue.drain(..) {
            queued.slot.borrow_mut().finish(Err(AppendError::Unavailable(message.clone())));
        }
        drop(state);
        self.committed_changed.notify_all();
        self.capacity_changed.notify_all();
    }

    /// Offers the lead to a live waiter (one of the in-flight batch first, then
    /// the head of the queue), or marks the writer idle.
    fn hand_off(&self) {
        let mut state = self.state.borrow_mut();
        if !matches!(state.status, Status::Failed(_)) {
            let in_flight = state
                .in_flight
                .iter()
                .flat_map(|batch| batch.entries.iter())
                .map(|(slot, _)| slot)
                .find(|slot| !slot.borrow().abandoned);
            let candidate = in_flight.or_else(|| state.queue.front().map(|q| &q.slot));
            if let Some(slot) = candidate {
                slot.borrow_mut().offer_lead();
                return;
            }
        }
        state.writer_busy = false;
        drop(state);
        self.idle_changed.notify_all();
    }
}
