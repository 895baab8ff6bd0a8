//! One log record: its FlatBuffers payload and its on-disk frame.
//!
//! A frame is `[u32 LE payload length][u32 LE crc32c(payload)][payload]`; the
//! payload is a verified `Record` flatbuffer (`proto/log.fbs`). Reading never
//! copies: payloads are verified in place and keys/values come back as
//! [`Bytes::slice_ref`] slices of the buffer the file was read into.
//!
//! Invariants:
//! - a frame is valid only if it is complete and its CRC matches; a zero length
//!   word is the end of the data (the zero padding of the last block);
//! - a record that verifies carries a non-zero revision and a key;
//! - decoding untrusted bytes never panics: every failure is a [`RecordError`].

use super::generated::{Record, RecordArgs, RecordKind, SnapshotHeader, SnapshotHeaderArgs};
use crate::log::{Operation, Revision};
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;

/// Bytes of the frame header: length word plus CRC word.
pub const FRAME_HEADER_BYTES: usize = 8;

/// Why a CRC-valid payload is not a usable record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("payload is not a valid flatbuffer: {0}")]
    InvalidFlatbuffer(String),
    #[error("record has no key")]
    MissingKey,
    #[error("record has revision 0")]
    ZeroRevision,
    #[error("unknown record kind {0}")]
    UnknownKind(u8),
}

/// A record read back from a segment or a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedRecord {
    /// In a segment: the entry's revision. In a snapshot: the key's mod revision.
    pub revision: Revision,
    pub key: Bytes,
    pub operation: Operation,
    pub create_revision: Revision,
    /// In a snapshot: what the cache recorded about the value (opaque here;
    /// empty when the record has none). A slice of the buffer, as `key`.
    pub cached: Bytes,
}

/// The outcome of reading one frame at an offset.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameRead {
    /// A complete frame with a matching CRC; `payload` is the byte range of the
    /// payload in the buffer, `next_offset` where the following frame starts.
    Frame { payload: std::ops::Range<usize>, next_offset: usize },
    /// The data ends cleanly here: end of buffer or a zero length word.
    End,
    /// Something that is not a complete valid frame starts here.
    Invalid(String),
}

/// Reads the frame starting at `offset` of `data`.
pub fn read_frame(data: &[u8], offset: usize) -> FrameRead {
    let rest = match data.get(offset..) {
        Some(rest) => rest,
        None => return FrameRead::Invalid(format!("offset {offset} past end")),
    };
    if rest.is_empty() {
        return FrameRead::End;
    }
    if rest.len() < 4 {
        // Fewer bytes than a length word: only zero padding may be left.
        return if rest.iter().all(|b| *b == 0) {
            FrameRead::End
        } else {
            FrameRead::Invalid("short frame header".to_string())
        };
    }
    let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
    if len == 0 {
        return FrameRead::End;
    }
    if rest.len() < FRAME_HEADER_BYTES {
        return FrameRead::Invalid("short frame header".to_string());
    }
    let crc = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
    let payload_start = offset + FRAME_HEADER_BYTES;
    let payload_end = match payload_start.checked_add(len) {
        Some(end) if end <= data.len() => end,
        _ => return FrameRead::Invalid(format!("frame of {len} bytes runs past the end")),
    };
    let payload = &data[payload_start..payload_end];
    if crc32c::crc32c(payload) != crc {
        return FrameRead::Invalid("crc mismatch".to_string());
    }
    FrameRead::Frame { payload: payload_start..payload_end, next_offset: payload_end }
}

/// Appends one frame holding `payload` to `out`.
pub fn push_frame(out: &mut Vec<u8>, payload: &[u8]) {
    // Payloads are bounded by record_bytes_max, far below 4 GiB; saturate anyway
    // so a bug can only produce an invalid frame, never a wrong one.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// Encodes a `Record` payload into `builder` (reset first) and returns it.
pub fn encode_record<'b>(
    builder: &'b mut FlatBufferBuilder<'static>,
    revision: Revision,
    key: &[u8],
    operation: &Operation,
    create_revision: Revision,
) -> &'b [u8] {
    encode_record_cached(builder, revision, key, operation, create_revision, &[])
}

/// [`encode_record`] with a snapshot record's `cached` bytes (none written
/// when empty, so such a record is byte for byte what `encode_record` makes).
pub fn encode_record_cached<'b>(
    builder: &'b mut FlatBufferBuilder<'static>,
    revision: Revision,
    key: &[u8],
    operation: &Operation,
    create_revision: Revision,
    cached: &[u8],
) -> &'b [u8] {
    builder.reset();
    let cached = (!cached.is_empty()).then(|| builder.create_vector(cached));
    let key = builder.create_vector(key);
    let (kind, value) = match operation {
        Operation::Put(value) => (RecordKind::Put, Some(builder.create_vector(&value[..]))),
        Operation::Delete => (RecordKind::Delete, None),
    };
    let record = Record::create(
        builder,
        &RecordArgs { revision: revision.0, key: Some(key), kind, value, create_revision: create_revision.0, cached },
    );
    builder.finish_minimal(record);
    builder.finished_data()
}

/// Decodes the `Record` in `data[payload]`, verifying it; key and value are
/// slices of `data`.
pub fn decode_record(data: &Bytes, payload: std::ops::Range<usize>) -> Result<DecodedRecord, RecordError> {
    let bytes = data.get(payload).ok_or_else(|| RecordError::InvalidFlatbuffer("payload out of range".to_string()))?;
    let record = flatbuffers::root::<Record>(bytes).map_err(|e| RecordError::InvalidFlatbuffer(e.to_string()))?;
    if record.revision() == 0 {
        return Err(RecordError::ZeroRevision);
    }
    let key = record.key().ok_or(RecordError::MissingKey)?;
    let key = data.slice_ref(key.bytes());
    let operation = match record.kind() {
        RecordKind::Put => Operation::Put(match record.value() {
            Some(value) => data.slice_ref(value.bytes()),
            None => Bytes::new(),
        }),
        RecordKind::Delete => Operation::Delete,
        other => return Err(RecordError::UnknownKind(other.0)),
    };
    let cached = record.cached().map_or_else(Bytes::new, |cached| data.slice_ref(cached.bytes()));
    Ok(DecodedRecord {
        revision: Revision(record.revision()),
        key,
        operation,
        create_revision: Revision(record.create_revision()),
        cached,
    })
}

/// The header of a snapshot file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotHeaderFields {
    pub revision: Revision,
    pub record_count: u64,
    pub format_version: u32,
}

/// The snapshot format this code writes: 2, whose records come in LZ4
/// blocks from [`SNAPSHOT_RECORDS_OFFSET`] on (the header's block is written
/// last, once the record count is known). Format 1 (plain record frames right
/// after the header) is still read.
pub const SNAPSHOT_FORMAT_VERSION: u32 = 2;
/// The first snapshot format, still read.
pub const SNAPSHOT_FORMAT_VERSION_1: u32 = 1;
/// Where a format-2 snapshot's blocks start: the header has this first block
/// to itself, zero padded.
pub const SNAPSHOT_RECORDS_OFFSET: usize = 4096;

/// Encodes a `SnapshotHeader` payload into `builder` (reset first).
pub fn encode_snapshot_header<'b>(
    builder: &'b mut FlatBufferBuilder<'static>,
    header: SnapshotHeaderFields,
) -> &'b [u8] {
    builder.reset();
    let root = SnapshotHeader::create(
        builder,
        &SnapshotHeaderArgs {
            revision: header.revision.0,
            record_count: header.record_count,
            format_version: header.format_version,
        },
    );
    builder.finish_minimal(root);
    builder.finished_data()
}

/// Decodes a verified `SnapshotHeader` payload.
pub fn decode_snapshot_header(payload: &[u8]) -> Result<SnapshotHeaderFields, RecordError> {
    let header =
        flatbuffers::root::<SnapshotHeader>(payload).map_err(|e| RecordError::InvalidFlatbuffer(e.to_string()))?;
    Ok(SnapshotHeaderFields {
        revision: Revision(header.revision()),
        record_count: header.record_count(),
        format_version: header.format_version(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(revision: u64, key: &[u8], operation: &Operation, create: u64) -> Vec<u8> {
        let mut builder = FlatBufferBuilder::new();
        let payload = encode_record(&mut builder, Revision(revision), key, operation, Revision(create));
        let mut out = Vec::new();
        push_frame(&mut out, payload);
        out
    }

    #[test]
    fn round_trips_put_and_delete_in_place() {
        let mut data = framed(7, b"/pods/a", &Operation::Put(Bytes::from_static(b"v1")), 3);
        data.extend(framed(8, b"/pods/a", &Operation::Delete, 3));
        let data = Bytes::from(data);
        let FrameRead::Frame { payload, next_offset } = read_frame(&data, 0) else { panic!("first frame") };
        let first = decode_record(&data, payload).unwrap();
        assert_eq!(first.revision, Revision(7));
        assert_eq!(first.create_revision, Revision(3));
        assert_eq!(&first.key[..], b"/pods/a");
        let Operation::Put(value) = &first.operation else { panic!("put") };
        assert_eq!(&value[..], b"v1");
        // Zero copy: the value points into the read buffer.
        let range = data.as_ptr() as usize..data.as_ptr() as usize + data.len();
        assert!(range.contains(&(value.as_ptr() as usize)));
        let FrameRead::Frame { payload, next_offset: end } = read_frame(&data, next_offset) else {
            panic!("second frame")
        };
        let second = decode_record(&data, payload).unwrap();
        assert_eq!(second.operation, Operation::Delete);
        assert_eq!(read_frame(&data, end), FrameRead::End);
    }

    /// `cached` round-trips; a record without it is the old encoding exactly.
    #[test]
    fn cached_bytes_round_trip_and_are_optional() {
        let mut builder = FlatBufferBuilder::new();
        let put = Operation::Put(Bytes::from_static(b"{}"));
        let plain = encode_record(&mut builder, Revision(4), b"/k", &put, Revision(2)).to_vec();
        let empty = encode_record_cached(&mut builder, Revision(4), b"/k", &put, Revision(2), &[]).to_vec();
        assert_eq!(plain, empty);
        let with = encode_record_cached(&mut builder, Revision(4), b"/k", &put, Revision(2), b"hint").to_vec();
        let len = with.len();
        let data = Bytes::from(with);
        let decoded = decode_record(&data, 0..len).unwrap();
        assert_eq!((&decoded.cached[..], &decoded.key[..]), (&b"hint"[..], &b"/k"[..]));
        assert_eq!(decoded.operation, put);
        let data = Bytes::from(plain);
        assert!(decode_record(&data, 0..data.len()).unwrap().cached.is_empty());
    }

    #[test]
    fn zero_padding_and_empty_end_the_data() {
        let mut data = framed(1, b"k", &Operation::Put(Bytes::new()), 1);
        let len = data.len();
        assert_eq!(read_frame(&data, len), FrameRead::End);
        data.extend_from_slice(&[0u8; 100]);
        assert_eq!(read_frame(&data, len), FrameRead::End);
        assert_eq!(read_frame(&[0u8, 0], 0), FrameRead::End);
    }

    #[test]
    fn crc_mismatch_and_short_frames_are_invalid() {
        let data = framed(1, b"key", &Operation::Put(Bytes::from_static(b"value")), 1);
        for i in FRAME_HEADER_BYTES..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x40;
            assert!(matches!(read_frame(&bad, 0), FrameRead::Invalid(_)), "byte {i}");
        }
        for cut in 1..data.len() {
            assert!(matches!(read_frame(&data[..cut], 0), FrameRead::Invalid(_)), "cut {cut}");
        }
        let mut bad_crc = data.clone();
        bad_crc[4] ^= 1;
        assert!(matches!(read_frame(&bad_crc, 0), FrameRead::Invalid(_)));
    }

    #[test]
    fn garbage_with_valid_crc_is_a_record_error_not_a_panic() {
        for seed in 0u8..=255 {
            let payload: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(seed).wrapping_add(seed)).collect();
            let mut out = Vec::new();
            push_frame(&mut out, &payload);
            let data = Bytes::from(out);
            if let FrameRead::Frame { payload, .. } = read_frame(&data, 0) {
                let _ = decode_record(&data, payload);
            }
        }
    }

    #[test]
    fn snapshot_header_round_trips() {
        let mut builder = FlatBufferBuilder::new();
        let fields =
            SnapshotHeaderFields { revision: Revision(42), record_count: 9, format_version: SNAPSHOT_FORMAT_VERSION };
        let payload = encode_snapshot_header(&mut builder, fields).to_vec();
        assert_eq!(decode_snapshot_header(&payload).unwrap(), fields);
    }
}
