//! Snapshot files: `snapshot-{revision:020}.snap`, every live key at a revision.
//!
//! Layout: one frame holding a `SnapshotHeader` (revision, record count, format
//! version), then one `Record` frame per live key in key order (kind Put,
//! `revision` = the key's mod revision). Every frame carries its CRC.
//!
//! Invariants:
//! - a snapshot is only ever visible under its final name complete and durable:
//!   it is written to `*.snap.tmp`, synced, renamed, and the directory synced;
//! - a snapshot is valid only if the header, exactly `record_count` records with
//!   strictly increasing keys and revisions <= the header's, and nothing but
//!   zero padding after them all check out; anything else is `LogError::Corrupt`.

use super::record::{
    decode_record, decode_snapshot_header, encode_record, encode_snapshot_header, push_frame, read_frame, FrameRead,
    SnapshotHeaderFields, SNAPSHOT_FORMAT_VERSION,
};
use super::segment::BlockWriter;
use crate::log::{KeyValue, LogDirectory, LogError, LogFile, Operation, Revision};
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;

const SNAPSHOT_PREFIX: &str = "snapshot-";
const SNAPSHOT_SUFFIX: &str = ".snap";
const TEMPORARY_SUFFIX: &str = ".tmp";
/// Snapshot bytes buffered before a (non-syncing) write.
const SNAPSHOT_CHUNK_BYTES: usize = 1024 * 1024;

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

/// Writes and publishes the snapshot of `live` (sorted by key) at `revision`;
/// returns its file name once it is durable under that name.
pub async fn write_snapshot<D: LogDirectory>(
    dir: &D,
    revision: Revision,
    live: &[KeyValue],
) -> Result<String, LogError> {
    let temporary = temporary_name(revision);
    let file = dir.open(&temporary).await?;
    file.truncate(0).await?;
    let mut writer = BlockWriter::new(file, temporary.clone(), &[], 0)?;
    let mut builder = FlatBufferBuilder::new();
    let mut frame = Vec::new();
    let header =
        SnapshotHeaderFields { revision, record_count: live.len() as u64, format_version: SNAPSHOT_FORMAT_VERSION };
    push_frame(&mut frame, encode_snapshot_header(&mut builder, header));
    writer.stage(&frame);
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
        writer.stage(&frame);
        if writer.buffered_bytes() >= SNAPSHOT_CHUNK_BYTES {
            writer.flush(false).await?;
        }
    }
    writer.flush(false).await?;
    writer.truncate(writer.valid_len()).await?;
    writer.sync().await?;
    writer.close().await?;
    let name = snapshot_name(revision);
    dir.rename(&temporary, &name).await?;
    dir.sync_directory().await?;
    Ok(name)
}

/// Reads the snapshot `name` whose whole contents are `data`.
pub fn read_snapshot(name: &str, data: &Bytes) -> Result<(Revision, Vec<KeyValue>), LogError> {
    let corrupt =
        |offset: usize, reason: String| LogError::Corrupt { path: name.to_string(), offset: offset as u64, reason };
    let (header, mut offset) = match read_frame(data, 0) {
        FrameRead::Frame { payload, next_offset } => {
            let bytes = data.get(payload).unwrap_or_default();
            let header = decode_snapshot_header(bytes).map_err(|e| corrupt(0, e.to_string()))?;
            (header, next_offset)
        }
        FrameRead::End => return Err(corrupt(0, "empty snapshot".to_string())),
        FrameRead::Invalid(reason) => return Err(corrupt(0, reason)),
    };
    if header.format_version != SNAPSHOT_FORMAT_VERSION {
        return Err(corrupt(0, format!("unknown snapshot format {}", header.format_version)));
    }
    if parse_snapshot_name(name).is_some_and(|named| named != header.revision) {
        return Err(corrupt(0, "revision differs from the file name".to_string()));
    }
    let mut live: Vec<KeyValue> = Vec::new();
    for _ in 0..header.record_count {
        let (payload, next_offset) = match read_frame(data, offset) {
            FrameRead::Frame { payload, next_offset } => (payload, next_offset),
            FrameRead::End => return Err(corrupt(offset, "fewer records than the header says".to_string())),
            FrameRead::Invalid(reason) => return Err(corrupt(offset, reason)),
        };
        let record = decode_record(data, payload).map_err(|e| corrupt(offset, e.to_string()))?;
        let Operation::Put(value) = record.operation else {
            return Err(corrupt(offset, "delete record in a snapshot".to_string()));
        };
        if record.revision > header.revision
            || record.create_revision > record.revision
            || record.create_revision == Revision::ZERO
        {
            return Err(corrupt(offset, "record revisions out of range".to_string()));
        }
        if live.last().is_some_and(|last| last.key >= record.key) {
            return Err(corrupt(offset, "keys not strictly increasing".to_string()));
        }
        live.push(KeyValue {
            key: record.key,
            value,
            create_revision: record.create_revision,
            mod_revision: record.revision,
        });
        offset = next_offset;
    }
    if read_frame(data, offset) != FrameRead::End {
        return Err(corrupt(offset, "data after the last record".to_string()));
    }
    Ok((header.revision, live))
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
