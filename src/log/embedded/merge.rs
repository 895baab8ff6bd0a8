//! A snapshot written from files, not from memory: the previous snapshot
//! merged with the segment records after it, streamed from disk.
//!
//! The log keeps no values in memory (its index holds revisions only), so the
//! snapshot at revision R is built from what is durable: the previous snapshot
//! at B (sorted by key) and the records of (B, R] in the segments. The newest
//! record of each key changed in (B, R] replaces (put) or removes (delete) the
//! key's record in the previous snapshot; every other record is copied as it
//! is. Frames are copied byte for byte: a segment's put record (revision = the
//! entry's, which is the key's mod revision) is already a snapshot record.
//!
//! Memory is bounded by `merge_bytes_max`: a first pass over the segments
//! finds the newest record of each changed key (keys and sizes, plus the
//! frames while they fit in the budget). If they do not fit, the changed keys
//! are cut into key ranges whose frames fit, and each range re-reads the
//! segments for its frames before the merge writes it: more sequential reads,
//! never more memory (a single record larger than the budget is one range).
//!
//! With a [`SnapshotAnnotator`] (the runtime's, from the cache), each record
//! written is first offered to it: a record it has new `cached` bytes for
//! (a segment's, which has none; a base record from before annotations, or
//! made for other selectable fields) is re-encoded with them, any other is
//! copied as it is. The value, key and revisions never change.
//!
//! Invariants:
//! - the output holds exactly the live keys at R, in key order (checked
//!   against the caller's key count before it is published);
//! - the records of (B, R] are consecutive and end at R, or the merge is
//!   `Corrupt` and nothing is published;
//! - records after R (appends during the merge) are never read into it.

use super::record::{decode_record, encode_record_cached, push_frame, DecodedRecord, FRAME_HEADER_BYTES};
use super::snapshot::{SnapshotReader, SnapshotRecord, SnapshotWriter};
use super::stream::{FrameStream, StreamItem, READ_CHUNK_BYTES};
use crate::log::{LogDirectory, LogError, Operation, Revision, SnapshotAnnotator};
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;
use std::collections::BTreeMap;

/// What a merge reads and writes.
#[derive(Clone, Debug)]
pub struct MergePlan {
    /// The snapshot to write.
    pub revision: Revision,
    /// The previous snapshot (its revision and name), if any.
    pub base: Option<(Revision, String)>,
    /// The segments holding the records after the base up to `revision`, in
    /// order (the first may start before the base, the last may go past
    /// `revision`).
    pub segments: Vec<String>,
    /// Live keys at `revision` (the log's index size then): the output must
    /// hold exactly this many records.
    pub live_keys: u64,
    /// Most bytes of changed records held at once.
    pub merge_bytes_max: usize,
    /// Bytes per sequential read.
    pub read_chunk_bytes: usize,
}

impl MergePlan {
    pub fn new(revision: Revision, base: Option<(Revision, String)>, segments: Vec<String>, live_keys: u64) -> Self {
        MergePlan {
            revision,
            base,
            segments,
            live_keys,
            merge_bytes_max: 64 * 1024 * 1024,
            read_chunk_bytes: READ_CHUNK_BYTES,
        }
    }
}

/// The newest record of one key changed in (base, revision].
struct Change {
    revision: Revision,
    is_put: bool,
    frame_bytes: usize,
    /// The frame, once read (always None for a delete).
    frame: Option<Bytes>,
}

fn corrupt(name: &str, offset: u64, reason: impl Into<String>) -> LogError {
    LogError::Corrupt { path: name.to_string(), offset, reason: reason.into() }
}

/// Calls `visit(key, revision, is_put, frame)` for every record of (base, revision]
/// in the plan's segments, in order, checking that they are consecutive and
/// reach `revision`.
async fn scan_changes<D: LogDirectory>(
    dir: &D,
    plan: &MergePlan,
    mut visit: impl FnMut(&Bytes, Revision, bool, &[u8]),
) -> Result<(), LogError> {
    let base = plan.base.as_ref().map_or(Revision::ZERO, |(r, _)| *r);
    let mut last = base;
    for name in &plan.segments {
        if last >= plan.revision {
            break;
        }
        let mut stream = FrameStream::open(dir, name, plan.read_chunk_bytes).await?;
        // Past `revision` the last segment may be mid-write: only the records
        // up to it count (End or Invalid after them ends the scan).
        while let StreamItem::Frame { data, frame, payload, offset } = stream.next().await? {
            let record = decode_record(&data, payload).map_err(|e| corrupt(name, offset, e.to_string()))?;
            if record.revision <= base {
                continue;
            }
            if record.revision != last.next() {
                return Err(corrupt(name, offset, format!("revision gap: {} follows {}", record.revision, last)));
            }
            last = record.revision;
            let is_put = matches!(record.operation, Operation::Put(_));
            visit(&record.key, record.revision, is_put, &data[frame]);
            if last == plan.revision {
                break;
            }
        }
    }
    if last != plan.revision {
        let name = plan.segments.last().map_or("", String::as_str);
        return Err(corrupt(
            name,
            0,
            format!("segments end at {last}, before the snapshot revision {}", plan.revision),
        ));
    }
    Ok(())
}

/// Writes record frames into a snapshot, through the annotator if there is one.
struct Output<'d, 'a, D: LogDirectory> {
    out: SnapshotWriter<'d, D>,
    annotator: Option<&'a dyn SnapshotAnnotator>,
    builder: FlatBufferBuilder<'static>,
    frame: Vec<u8>,
    /// Records re-encoded with new `cached` bytes.
    annotated: u64,
}

impl<D: LogDirectory> Output<'_, '_, D> {
    /// Pushes `frame` (whose decoded record is `record`), annotated.
    async fn push(&mut self, frame: &[u8], record: &DecodedRecord) -> Result<(), LogError> {
        let cached = match (self.annotator, &record.operation) {
            (Some(annotator), Operation::Put(value)) => annotator.annotate(&record.key, value, &record.cached),
            _ => None,
        };
        let Some(cached) = cached else {
            return self.out.push_frame(frame).await;
        };
        let payload = encode_record_cached(
            &mut self.builder,
            record.revision,
            &record.key,
            &record.operation,
            record.create_revision,
            &cached,
        );
        self.frame.clear();
        push_frame(&mut self.frame, payload);
        self.annotated += 1;
        self.out.push_frame(&self.frame).await
    }

    /// Pushes a whole frame read from a segment (decoded here).
    async fn push_raw(&mut self, name: &str, frame: Bytes) -> Result<(), LogError> {
        if self.annotator.is_none() {
            return self.out.push_frame(&frame).await;
        }
        let record =
            decode_record(&frame, FRAME_HEADER_BYTES..frame.len()).map_err(|e| corrupt(name, 0, e.to_string()))?;
        self.push(&frame, &record).await
    }
}

/// Writes the snapshot at `plan.revision` by merging; returns its name once it
/// is durable under it. Records go through `annotator` (see the module doc).
pub async fn write_merged_snapshot<D: LogDirectory>(
    dir: &D,
    plan: &MergePlan,
    annotator: Option<&dyn SnapshotAnnotator>,
) -> Result<String, LogError> {
    let budget = plan.merge_bytes_max.max(1);
    // Pass 1: the newest record of every changed key, frames while they fit.
    let mut changes: BTreeMap<Bytes, Change> = BTreeMap::new();
    let mut held_bytes = 0usize;
    let mut holding = true;
    scan_changes(dir, plan, |key, revision, is_put, frame| {
        let kept = if is_put && holding { Some(Bytes::copy_from_slice(frame)) } else { None };
        let change = Change { revision, is_put, frame_bytes: if is_put { frame.len() } else { 0 }, frame: kept };
        held_bytes += change.frame.as_ref().map_or(0, |f| f.len());
        if let Some(old) = changes.get_mut(&key[..]) {
            held_bytes -= old.frame.as_ref().map_or(0, |f| f.len());
            *old = change;
        } else {
            changes.insert(Bytes::copy_from_slice(key), change);
        }
        if holding && held_bytes > budget {
            // Too much to hold: drop the frames, read them by key range later.
            holding = false;
            held_bytes = 0;
            for change in changes.values_mut() {
                change.frame = None;
            }
        }
    })
    .await?;

    // Key ranges whose frames fit in the budget (one range if all are held).
    let keys: Vec<Bytes> = changes.keys().cloned().collect();
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    if holding {
        ranges.push(0..keys.len());
    } else {
        let mut start = 0;
        let mut bytes = 0usize;
        for (i, key) in keys.iter().enumerate() {
            let size = changes.get(key).map_or(0, |c| c.frame_bytes);
            if i > start && bytes + size > budget {
                ranges.push(start..i);
                start = i;
                bytes = 0;
            }
            bytes += size;
        }
        ranges.push(start..keys.len());
    }

    let mut base = match &plan.base {
        Some((revision, name)) => {
            let reader = SnapshotReader::open_with_chunk(dir, name, plan.read_chunk_bytes).await?;
            if reader.revision() != *revision {
                return Err(corrupt(name, 0, format!("holds revision {}, expected {revision}", reader.revision())));
            }
            Some(reader)
        }
        None => None,
    };
    let mut next_base: Option<SnapshotRecord> = match base.as_mut() {
        Some(reader) => reader.next().await?,
        None => None,
    };
    let out = SnapshotWriter::begin(dir, plan.revision).await?;
    let mut out = Output { out, annotator, builder: FlatBufferBuilder::new(), frame: Vec::new(), annotated: 0 };
    for range in ranges {
        if range.is_empty() {
            continue;
        }
        if !holding {
            let (first, last) = (keys[range.start].clone(), keys[range.end - 1].clone());
            scan_changes(dir, plan, |key, revision, is_put, frame| {
                if !is_put || key[..] < first[..] || key[..] > last[..] {
                    return;
                }
                if let Some(change) = changes.get_mut(&key[..]) {
                    if change.revision == revision {
                        change.frame = Some(Bytes::copy_from_slice(frame));
                    }
                }
            })
            .await?;
        }
        for key in &keys[range] {
            // Unchanged keys of the base before this one, as they are.
            while let Some(record) = next_base.as_ref().filter(|r| r.record.key[..] < key[..]) {
                out.push(&record.data[record.frame.clone()], &record.record).await?;
                next_base = next_record(&mut base).await?;
            }
            if next_base.as_ref().is_some_and(|r| r.record.key[..] == key[..]) {
                next_base = next_record(&mut base).await?;
            }
            let Some(change) = changes.get_mut(&key[..]) else { continue };
            if change.is_put {
                let frame = change.frame.take().ok_or_else(|| {
                    corrupt(out_name(plan), 0, format!("the record at {} was not found again", change.revision))
                })?;
                out.push_raw(out_name(plan), frame).await?;
            }
        }
    }
    while let Some(record) = next_base {
        out.push(&record.data[record.frame.clone()], &record.record).await?;
        next_base = next_record(&mut base).await?;
    }
    if out.out.records() != plan.live_keys {
        return Err(corrupt(
            out_name(plan),
            0,
            format!("the merge holds {} keys, the log {}: not published", out.out.records(), plan.live_keys),
        ));
    }
    out.out.finish().await
}

fn out_name(plan: &MergePlan) -> &str {
    plan.segments.last().map_or("", String::as_str)
}

async fn next_record<D: LogDirectory>(
    base: &mut Option<SnapshotReader<'_, D>>,
) -> Result<Option<SnapshotRecord>, LogError> {
    match base.as_mut() {
        Some(reader) => reader.next().await,
        None => Ok(None),
    }
}
