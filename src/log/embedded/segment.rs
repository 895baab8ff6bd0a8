//! Segment files: `segment-{first_revision:020}.wal`, a run of record frames.
//!
//! Writing: [`BlockWriter`] keeps the partial last block of a file in memory;
//! each flush rewrites from the start of that block, zero-padded to the block
//! end, so every `write_at` is aligned (O_DIRECT) and re-running an interrupted
//! flush is harmless (it writes the same bytes again).
//!
//! Reading: [`scan_segment`] walks the frames. In the last segment the first
//! invalid frame is a torn tail (expected after a crash) and ends the data; in
//! an earlier segment it is corruption.
//!
//! Invariants:
//! - bytes before `valid_len()` are exactly the frames handed to `stage`, in order;
//! - a flush reports success only after `write_at` and `sync` both succeeded;
//! - the records of a segment have consecutive revisions, the first one equal
//!   to the revision in the file name (checked by recovery).

use super::record::{decode_record, read_frame, DecodedRecord, FrameRead};
use crate::log::{LogError, LogFile, Revision};
use bytes::Bytes;

const SEGMENT_PREFIX: &str = "segment-";
const SEGMENT_SUFFIX: &str = ".wal";

/// The file name of the segment whose first record has `first` as revision.
pub fn segment_name(first: Revision) -> String {
    format!("{SEGMENT_PREFIX}{:020}{SEGMENT_SUFFIX}", first.0)
}

/// The first revision named by a segment file name, if it is one.
pub fn parse_segment_name(name: &str) -> Option<Revision> {
    let digits = name.strip_prefix(SEGMENT_PREFIX)?.strip_suffix(SEGMENT_SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(Revision)
}

/// Aligned appends to one file, keeping the partial last block in memory.
pub struct BlockWriter<F: LogFile> {
    file: F,
    alignment: usize,
    /// File offset of `buf[0]`; always a multiple of `alignment`.
    block_start: u64,
    /// The partial last block plus staged bytes, possibly followed by the zero
    /// padding of an interrupted flush (past `buf_valid_bytes`).
    buf: Vec<u8>,
    buf_valid_bytes: usize,
}

impl<F: LogFile> BlockWriter<F> {
    /// A writer appending after the first `valid_len` bytes of `file` (called
    /// `name` in errors), whose contents are `existing` (at least `valid_len`
    /// bytes; only the last partial block is kept).
    pub fn new(file: F, name: String, existing: &[u8], valid_len: u64) -> Result<Self, LogError> {
        let alignment = usize::try_from(file.alignment()).unwrap_or(4096).max(1);
        let valid = usize::try_from(valid_len).map_err(|_| LogError::Corrupt {
            path: name.clone(),
            offset: valid_len,
            reason: "file too large".to_string(),
        })?;
        let block_start = valid - valid % alignment;
        let tail = existing.get(block_start..valid).ok_or_else(|| LogError::Corrupt {
            path: name.clone(),
            offset: valid_len,
            reason: "valid length past the data".to_string(),
        })?;
        Ok(BlockWriter {
            file,
            alignment,
            block_start: block_start as u64,
            buf: tail.to_vec(),
            buf_valid_bytes: tail.len(),
        })
    }

    /// Bytes of valid data in the file once staged bytes are flushed.
    pub fn valid_len(&self) -> u64 {
        self.block_start + self.buf_valid_bytes as u64
    }

    /// Bytes staged but not yet flushed (plus the kept partial block).
    pub fn buffered_bytes(&self) -> usize {
        self.buf_valid_bytes
    }

    /// Adds bytes to be written by the next flush.
    pub fn stage(&mut self, bytes: &[u8]) {
        self.buf.truncate(self.buf_valid_bytes);
        self.buf.extend_from_slice(bytes);
        self.buf_valid_bytes = self.buf.len();
    }

    /// Writes everything staged (from the start of the partial block, zero
    /// padded) and, if `sync`, makes it durable. Idempotent if interrupted.
    pub async fn flush(&mut self, sync: bool) -> Result<(), LogError> {
        self.buf.truncate(self.buf_valid_bytes);
        if self.buf.is_empty() {
            if sync {
                self.file.sync().await?;
            }
            return Ok(());
        }
        let padded = self.buf.len().div_ceil(self.alignment) * self.alignment;
        self.buf.resize(padded, 0);
        self.file.write_at(self.block_start, &self.buf).await?;
        if sync {
            self.file.sync().await?;
        }
        self.buf.truncate(self.buf_valid_bytes);
        let keep_from = self.buf_valid_bytes - self.buf_valid_bytes % self.alignment;
        self.buf.drain(..keep_from);
        self.block_start += keep_from as u64;
        self.buf_valid_bytes = self.buf.len();
        Ok(())
    }

    pub async fn sync(&self) -> Result<(), LogError> {
        self.file.sync().await
    }

    /// The file's block size.
    pub fn alignment(&self) -> usize {
        self.alignment
    }

    /// Writes `data` (whole blocks) at `offset` directly, bypassing the
    /// staged bytes: for a header written once the rest of the file is known.
    pub async fn write_direct(&self, offset: u64, data: &[u8]) -> Result<(), LogError> {
        self.file.write_at(offset, data).await
    }

    pub async fn truncate(&self, len: u64) -> Result<(), LogError> {
        self.file.truncate(len).await
    }

    pub async fn close(self) -> Result<(), LogError> {
        self.file.close().await
    }
}

/// The frames of one segment file as recovery sees them.
#[derive(Debug)]
pub struct SegmentScan {
    pub records: Vec<DecodedRecord>,
    /// Bytes of valid frames from the start of the file.
    pub valid_len: u64,
}

/// Reads every valid frame of `data` (the whole file `name`). An invalid frame
/// is a torn tail when `is_last`, corruption otherwise; a frame whose CRC holds
/// but whose record does not decode is always corruption.
pub fn scan_segment(name: &str, data: &Bytes, is_last: bool) -> Result<SegmentScan, LogError> {
    let mut records = Vec::new();
    let mut offset = 0usize;
    loop {
        match read_frame(data, offset) {
            FrameRead::Frame { payload, next_offset } => {
                let record = decode_record(data, payload).map_err(|e| LogError::Corrupt {
                    path: name.to_string(),
                    offset: offset as u64,
                    reason: e.to_string(),
                })?;
                records.push(record);
                offset = next_offset;
            }
            FrameRead::End => return Ok(SegmentScan { records, valid_len: offset as u64 }),
            FrameRead::Invalid(reason) => {
                if is_last {
                    return Ok(SegmentScan { records, valid_len: offset as u64 });
                }
                return Err(LogError::Corrupt { path: name.to_string(), offset: offset as u64, reason });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort_by_revision() {
        let name = segment_name(Revision(42));
        assert_eq!(name, "segment-00000000000000000042.wal");
        assert_eq!(parse_segment_name(&name), Some(Revision(42)));
        assert_eq!(parse_segment_name("segment-42.wal"), None);
        assert_eq!(parse_segment_name("snapshot-00000000000000000042.snap"), None);
        assert!(segment_name(Revision(9)) < segment_name(Revision(10)));
    }
}
