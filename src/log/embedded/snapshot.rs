//! Snapshot files: `snapshot-{revision:020}.snap`, every live key at a revision.
//!
//! Layout (format 2): the first 4 KiB block holds one frame with a
//! `SnapshotHeader` (revision, record count, format version), zero padded;
//! from [`SNAPSHOT_RECORDS_OFFSET`] on, block frames, each payload a `u32` LE
//! raw length and an LZ4 block of whole `Record` frames: one per live key, in
//! key order (kind Put, `revision` = the key's mod revision). Every frame, block
//! and record, carries its CRC. Objects of one kind share most of their bytes,
//! so the blocks are several times smaller than the records and a restart
//! reads that much less. The header block is written last, when the count is
//! known, so a snapshot can be written as a stream ([`SnapshotWriter`], fed by
//! the merge in `merge.rs`) without the live state in memory. Format 1 (plain
//! record frames right after the header frame) is still read. Records may
//! carry `cached` bytes (the cache's hint for the value, from the merge's
//! annotator): an optional FlatBuffers field, so format 2 is read with or
//! without them, by this code and by code that predates them.
//!
//! Invariants:
//! - a snapshot is only ever visible under its final name complete and durable:
//!   it is written to `*.snap.tmp`, synced, renamed, and the directory synced;
//! - a snapshot is valid only if the header, exactly `record_count` records with
//!   strictly increasing keys and revisions <= the header's, and nothing but
//!   zero padding after them all check out; anything else is `LogError::Corrupt`.

#[cfg(test)]
use super::record::encode_record;
use super::record::{
    decode_record, decode_snapshot_header, encode_snapshot_header, push_frame, read_frame, DecodedRecord, FrameRead,
    SnapshotHeaderFields, SNAPSHOT_FORMAT_VERSION, SNAPSHOT_FORMAT_VERSION_1, SNAPSHOT_RECORDS_OFFSET,
};
use super::segment::BlockWriter;
use super::stream::{FrameStream, StreamItem, READ_CHUNK_BYTES};
use crate::log::{KeyValue, LogDirectory, LogError, LogFile, Operation, Revision};
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;
use std::ops::Range;

const SNAPSHOT_PREFIX: &str = "snapshot-";
const SNAPSHOT_SUFFIX: &str = ".snap";
const TEMPORARY_SUFFIX: &str = ".tmp";
/// Snapshot bytes buffered before a (non-syncing) write.
const SNAPSHOT_CHUNK_BYTES: usize = 1024 * 1024;
/// Record bytes per LZ4 block (a block holds whole records, so one larger
/// record makes a larger block).
const SNAPSHOT_BLOCK_RAW_BYTES: usize = 1024 * 1024;
/// The largest raw block a reader accepts (a larger length is corruption).
const SNAPSHOT_BLOCK_RAW_BYTES_MAX: usize = 64 * 1024 * 1024;

pub fn snapshot_name(revision: Revision) -> String {
    format!("{SNAPSHOT_PREFIX}{:020}{SNAPSHOT_SUFFIX}", revision.0)
}

fn temporary_name(revision: Revision) -> String {
    format!("{}{TEMPORARY_SUFFIX}", snapshot_name(revision))
}

/// The revision named by a finished snapshot's file name, if it is one.
pub fn parse_snapshot_name(name: &str) -> Option<Revision> {
    let digits = name.strip_prefix(SNAPSHOT_PREFIX)?.strip_suffix(SNAPSHOT_SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(Revision)
}

/// Whether `name` is an unfinished snapshot left by a crash.
pub fn is_temporary_snapshot(name: &str) -> bool {
    name.strip_suffix(TEMPORARY_SUFFIX).and_then(parse_snapshot_name).is_some()
}

/// Writes a snapshot as a stream of record frames in key order; publishes it
/// (header, sync, rename, directory sync) in [`SnapshotWriter::finish`].
pub struct SnapshotWriter<'d, D: LogDirectory> {
    dir: &'d D,
    revision: Revision,
    temporary: String,
    writer: BlockWriter<D::File>,
    records: u64,
    /// Record frames of the block being filled.
    raw: Vec<u8>,
    frame: Vec<u8>,
}

impl<'d, D: LogDirectory> SnapshotWriter<'d, D> {
    /// Starts the temporary file of the snapshot at `revision`.
    pub async fn begin(dir: &'d D, revision: Revision) -> Result<SnapshotWriter<'d, D>, LogError> {
        let temporary = temporary_name(revision);
        let file = dir.open(&temporary).await?;
        file.truncate(0).await?;
        let mut writer = BlockWriter::new(file, temporary.clone(), &[], 0)?;
        if !SNAPSHOT_RECORDS_OFFSET.is_multiple_of(writer.alignment()) {
            return Err(LogError::Io {
                path: temporary,
                source: std::io::Error::other(format!(
                    "block size {} does not divide the snapshot header block",
                    writer.alignment()
                )),
            });
        }
        // The header's block, written for real by `finish`.
        writer.stage(&[0u8; SNAPSHOT_RECORDS_OFFSET]);
        Ok(SnapshotWriter { dir, revision, temporary, writer, records: 0, raw: Vec::new(), frame: Vec::new() })
    }

    /// Appends one record frame (header included), already CRC-framed; the
    /// caller keeps keys in strictly increasing order.
    pub async fn push_frame(&mut self, frame: &[u8]) -> Result<(), LogError> {
        self.raw.extend_from_slice(frame);
        self.records += 1;
        if self.raw.len() >= SNAPSHOT_BLOCK_RAW_BYTES {
            self.emit_block().await?;
        }
        Ok(())
    }

    /// Compresses the records gathered so far into one block frame.
    async fn emit_block(&mut self) -> Result<(), LogError> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let raw_len = u32::try_from(self.raw.len()).unwrap_or(u32::MAX);
        let mut payload = Vec::with_capacity(4 + lz4_flex::block::get_maximum_output_size(self.raw.len()));
        payload.extend_from_slice(&raw_len.to_le_bytes());
        payload.extend_from_slice(&lz4_flex::block::compress(&self.raw));
        self.raw.clear();
        self.frame.clear();
        push_frame(&mut self.frame, &payload);
        self.writer.stage(&self.frame);
        if self.writer.buffered_bytes() >= SNAPSHOT_CHUNK_BYTES {
            self.writer.flush(false).await?;
        }
        Ok(())
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the header, syncs, and publishes the snapshot under its final
    /// name; returns the name once that is durable.
    pub async fn finish(mut self) -> Result<String, LogError> {
        self.emit_block().await?;
        self.writer.flush(false).await?;
        let mut builder = FlatBufferBuilder::new();
        let mut block = Vec::new();
        let header = SnapshotHeaderFields {
            revision: self.revision,
            record_count: self.records,
            format_version: SNAPSHOT_FORMAT_VERSION,
        };
        push_frame(&mut block, encode_snapshot_header(&mut builder, header));
        block.resize(SNAPSHOT_RECORDS_OFFSET, 0);
        self.writer.write_direct(0, &block).await?;
        self.writer.truncate(self.writer.valid_len()).await?;
        self.writer.sync().await?;
        self.writer.close().await?;
        let name = snapshot_name(self.revision);
        self.dir.rename(&self.temporary, &name).await?;
        self.dir.sync_directory().await?;
        Ok(name)
    }
}

/// Writes and publishes the snapshot of `live` (sorted by key) at `revision`;
/// returns its file name once it is durable under that name.
#[cfg(test)]
pub async fn write_snapshot<D: LogDirectory>(
    dir: &D,
    revision: Revision,
    live: &[KeyValue],
) -> Result<String, LogError> {
    let mut writer = SnapshotWriter::begin(dir, revision).await?;
    let mut builder = FlatBufferBuilder::new();
    let mut frame = Vec::new();
    for kv in live {
        frame.clear();
        let payload = encode_record(
            &mut builder,
            kv.mod_revision,
            &kv.key,
            &Operation::Put(kv.value.clone()),
            kv.create_revision,
        );
        push_frame(&mut frame, payload);
        writer.push_frame(&frame).await?;
    }
    writer.finish().await
}

fn corrupt(name: &str, offset: u64, reason: impl Into<String>) -> LogError {
    LogError::Corrupt { path: name.to_string(), offset, reason: reason.into() }
}

/// The header frame at the start of `data` (a prefix of a snapshot file), and
/// where its records start.
fn parse_header(name: &str, data: &Bytes) -> Result<(SnapshotHeaderFields, usize), LogError> {
    let (header, after) = match read_frame(data, 0) {
        FrameRead::Frame { payload, next_offset } => {
            let bytes = data.get(payload).unwrap_or_default();
            let header = decode_snapshot_header(bytes).map_err(|e| corrupt(name, 0, e.to_string()))?;
            (header, next_offset)
        }
        FrameRead::End => return Err(corrupt(name, 0, "empty snapshot")),
        FrameRead::Invalid(reason) => return Err(corrupt(name, 0, reason)),
    };
    let records_offset = match header.format_version {
        SNAPSHOT_FORMAT_VERSION_1 => after,
        SNAPSHOT_FORMAT_VERSION if after <= SNAPSHOT_RECORDS_OFFSET => {
            // The header block's padding is zero (no CRC covers it).
            let padding = data.get(after..SNAPSHOT_RECORDS_OFFSET);
            if !padding.is_some_and(|p| p.iter().all(|b| *b == 0)) {
                return Err(corrupt(name, after as u64, "header block not zero padded"));
            }
            SNAPSHOT_RECORDS_OFFSET
        }
        other => return Err(corrupt(name, 0, format!("unknown snapshot format {other}"))),
    };
    if parse_snapshot_name(name).is_some_and(|named| named != header.revision) {
        return Err(corrupt(name, 0, "revision differs from the file name"));
    }
    Ok((header, records_offset))
}

/// The checks every snapshot record passes, in order.
struct RecordCheck {
    header: SnapshotHeaderFields,
    seen: u64,
    last_key: Option<Bytes>,
}

impl RecordCheck {
    fn check(&mut self, name: &str, offset: u64, record: &DecodedRecord) -> Result<(), LogError> {
        if !matches!(record.operation, Operation::Put(_)) {
            return Err(corrupt(name, offset, "delete record in a snapshot"));
        }
        if record.revision > self.header.revision
            || record.create_revision > record.revision
            || record.create_revision == Revision::ZERO
        {
            return Err(corrupt(name, offset, "record revisions out of range"));
        }
        if self.last_key.as_ref().is_some_and(|last| *last >= record.key) {
            return Err(corrupt(name, offset, "keys not strictly increasing"));
        }
        self.last_key = Some(record.key.clone());
        self.seen += 1;
        Ok(())
    }
}

/// The records of one format-2 block frame whose payload is `payload`
/// (at file offset `offset`): the decompressed record frames.
fn open_block(name: &str, offset: u64, payload: &[u8]) -> Result<Bytes, LogError> {
    let Some((len, compressed)) = payload.split_first_chunk::<4>() else {
        return Err(corrupt(name, offset, "block shorter than its length word"));
    };
    let raw_len = u32::from_le_bytes(*len) as usize;
    if raw_len == 0 || raw_len > SNAPSHOT_BLOCK_RAW_BYTES_MAX {
        return Err(corrupt(name, offset, format!("block of {raw_len} bytes")));
    }
    let raw = lz4_flex::block::decompress(compressed, raw_len).map_err(|e| corrupt(name, offset, e.to_string()))?;
    if raw.len() != raw_len {
        return Err(corrupt(name, offset, "block decompresses to another length"));
    }
    Ok(Bytes::from(raw))
}

/// A record frame inside a block: the block, the whole frame, the payload.
type BlockFrame = (Bytes, Range<usize>, Range<usize>);

/// Where records come from in a snapshot: plain frames (format 1) or the
/// frames inside each block (format 2).
struct Records {
    blocks: bool,
    /// The current block's records and the position of the next one.
    block: Bytes,
    block_pos: usize,
    block_offset: u64,
}

impl Records {
    fn new(format_version: u32) -> Records {
        Records {
            blocks: format_version != SNAPSHOT_FORMAT_VERSION_1,
            block: Bytes::new(),
            block_pos: 0,
            block_offset: 0,
        }
    }

    fn load(&mut self, block: Bytes, offset: u64) {
        self.block = block;
        self.block_pos = 0;
        self.block_offset = offset;
    }

    /// The next record frame of the current block (whole frame and payload
    /// ranges), if it has one left.
    fn next_in_block(&mut self, name: &str) -> Result<Option<BlockFrame>, LogError> {
        if self.block_pos >= self.block.len() {
            return Ok(None);
        }
        match read_frame(&self.block, self.block_pos) {
            FrameRead::Frame { payload, next_offset } => {
                let frame = self.block_pos..next_offset;
                self.block_pos = next_offset;
                Ok(Some((self.block.clone(), frame, payload)))
            }
            FrameRead::End => Err(corrupt(name, self.block_offset, "zero padding inside a block")),
            FrameRead::Invalid(reason) => Err(corrupt(name, self.block_offset, format!("in a block: {reason}"))),
        }
    }
}

/// Reads the snapshot `name` whose whole contents are `data`.
pub fn read_snapshot(name: &str, data: &Bytes) -> Result<(Revision, Vec<KeyValue>), LogError> {
    let (header, mut offset) = parse_header(name, data)?;
    let mut check = RecordCheck { header, seen: 0, last_key: None };
    let mut records = Records::new(header.format_version);
    let mut live: Vec<KeyValue> = Vec::new();
    while check.seen < header.record_count {
        let in_block = if records.blocks { records.next_in_block(name)? } else { None };
        let (buffer, payload, at) = match in_block {
            Some((block, _, payload)) => (block, payload, records.block_offset),
            None => {
                let (payload, next_offset) = match read_frame(data, offset) {
                    FrameRead::Frame { payload, next_offset } => (payload, next_offset),
                    FrameRead::End => return Err(corrupt(name, offset as u64, "fewer records than the header says")),
                    FrameRead::Invalid(reason) => return Err(corrupt(name, offset as u64, reason)),
                };
                let at = offset as u64;
                offset = next_offset;
                if records.blocks {
                    records.load(open_block(name, at, &data[payload])?, at);
                    continue;
                }
                (data.clone(), payload, at)
            }
        };
        let record = decode_record(&buffer, payload).map_err(|e| corrupt(name, at, e.to_string()))?;
        check.check(name, at, &record)?;
        let Operation::Put(value) = record.operation else { unreachable!("checked above") };
        live.push(KeyValue {
            key: record.key,
            value,
            create_revision: record.create_revision,
            mod_revision: record.revision,
            cached: record.cached,
        });
    }
    if records.block_pos < records.block.len() || read_frame(data, offset) != FrameRead::End {
        return Err(corrupt(name, offset as u64, "data after the last record"));
    }
    Ok((header.revision, live))
}

/// One record of a snapshot read as a stream: `data[frame]` is its whole
/// frame (to copy into another snapshot as is), `record` its decoded fields
/// (slices of `data`).
#[derive(Debug)]
pub struct SnapshotRecord {
    pub data: Bytes,
    pub frame: Range<usize>,
    pub record: DecodedRecord,
}

/// A snapshot read front to back in large pieces, each record checked as
/// [`read_snapshot`] checks it; the last `next` (None) checks the end.
pub struct SnapshotReader<'d, D: LogDirectory> {
    stream: FrameStream<'d, D>,
    check: RecordCheck,
    records: Records,
}

impl<'d, D: LogDirectory> SnapshotReader<'d, D> {
    pub async fn open(dir: &'d D, name: &str) -> Result<SnapshotReader<'d, D>, LogError> {
        Self::open_with_chunk(dir, name, READ_CHUNK_BYTES).await
    }

    pub async fn open_with_chunk(
        dir: &'d D,
        name: &str,
        chunk_bytes: usize,
    ) -> Result<SnapshotReader<'d, D>, LogError> {
        let mut first = Vec::new();
        dir.read_at(name, 0, SNAPSHOT_RECORDS_OFFSET, &mut first).await?;
        let (header, records_offset) = parse_header(name, &Bytes::from(first))?;
        let mut stream = FrameStream::open(dir, name, chunk_bytes).await?;
        stream.seek(records_offset as u64);
        let records = Records::new(header.format_version);
        Ok(SnapshotReader { stream, check: RecordCheck { header, seen: 0, last_key: None }, records })
    }

    pub fn revision(&self) -> Revision {
        self.check.header.revision
    }

    pub fn record_count(&self) -> u64 {
        self.check.header.record_count
    }

    /// The next record, or None after the last one (once the end checks out).
    pub async fn next(&mut self) -> Result<Option<SnapshotRecord>, LogError> {
        let name = self.stream.name().to_string();
        if self.check.seen == self.check.header.record_count {
            if self.records.block_pos < self.records.block.len() {
                return Err(corrupt(&name, self.records.block_offset, "data after the last record"));
            }
            return match self.stream.next().await? {
                StreamItem::End { .. } => Ok(None),
                StreamItem::Frame { offset, .. } | StreamItem::Invalid { offset, .. } => {
                    Err(corrupt(&name, offset, "data after the last record"))
                }
            };
        }
        loop {
            let in_block = if self.records.blocks { self.records.next_in_block(&name)? } else { None };
            let (data, frame, payload, offset) = match in_block {
                Some((block, frame, payload)) => (block, frame, payload, self.records.block_offset),
                None => {
                    let (data, frame, payload, offset) = match self.stream.next().await? {
                        StreamItem::Frame { data, frame, payload, offset } => (data, frame, payload, offset),
                        StreamItem::End { offset } => {
                            return Err(corrupt(&name, offset, "fewer records than the header says"))
                        }
                        StreamItem::Invalid { offset, reason } => return Err(corrupt(&name, offset, reason)),
                    };
                    if self.records.blocks {
                        let block = open_block(&name, offset, &data[payload])?;
                        self.records.load(block, offset);
                        continue;
                    }
                    (data, frame, payload, offset)
                }
            };
            let record = decode_record(&data, payload).map_err(|e| corrupt(&name, offset, e.to_string()))?;
            self.check.check(&name, offset, &record)?;
            return Ok(Some(SnapshotRecord { data, frame, record }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::embedded::testing::MemoryDirectory;
    use futures_lite::future::block_on;

    fn kv(key: &str, value: &str, create: u64, modified: u64) -> KeyValue {
        KeyValue {
            key: Bytes::copy_from_slice(key.as_bytes()),
            value: Bytes::copy_from_slice(value.as_bytes()),
            create_revision: Revision(create),
            mod_revision: Revision(modified),
            cached: Bytes::new(),
        }
    }

    #[test]
    fn snapshot_round_trips_and_is_published_atomically() {
        let dir = MemoryDirectory::new();
        let live = vec![kv("a", "1", 1, 4), kv("b", "", 2, 2), kv("c", "333", 3, 5)];
        let name = block_on(write_snapshot(&dir, Revision(5), &live)).unwrap();
        assert_eq!(name, snapshot_name(Revision(5)));
        assert_eq!(block_on(dir.list()).unwrap(), vec![name.clone()]);
        let data = Bytes::from(block_on(dir.read_all(&name)).unwrap());
        assert_eq!(read_snapshot(&name, &data).unwrap(), (Revision(5), live));
    }

    #[test]
    fn any_flipped_byte_is_detected() {
        let dir = MemoryDirectory::new();
        let live = vec![kv("a", "1", 1, 1), kv("b", "2", 2, 2)];
        let name = block_on(write_snapshot(&dir, Revision(2), &live)).unwrap();
        let data = block_on(dir.read_all(&name)).unwrap();
        for i in 0..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x10;
            assert!(read_snapshot(&name, &Bytes::from(bad)).is_err(), "byte {i}");
        }
        assert!(read_snapshot(&name, &Bytes::from(data[..data.len() - 1].to_vec())).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(parse_snapshot_name(&snapshot_name(Revision(7))), Some(Revision(7)));
        assert!(is_temporary_snapshot(&temporary_name(Revision(7))));
        assert!(!is_temporary_snapshot(&snapshot_name(Revision(7))));
    }
}
