//! Reading a log file front to back in large pieces: [`FrameStream`] yields
//! the frames of a segment or snapshot file while holding at most one read
//! piece (plus the part of a frame that straddles two pieces) in memory.
//!
//! Recovery and snapshot merges read through it, so neither needs a whole file
//! in memory, and every read is a large sequential one (O_DIRECT in
//! `runtime/log_dir.rs`).
//!
//! Invariants:
//! - frames come out in file order, each complete and CRC-checked
//!   (`record::read_frame`); a frame is never split across two yields;
//! - the stream ends at the end of the file or at a zero length word (the
//!   padding of the last block); anything else is reported as invalid with its
//!   file offset, never skipped.

use super::record::{read_frame, FrameRead, FRAME_HEADER_BYTES};
use crate::log::{LogDirectory, LogError};
use bytes::Bytes;
use std::ops::Range;

/// Bytes read per sequential read. Large enough that the per-read cost
/// (open, submit, copy out of the DMA buffer) is small beside the transfer,
/// small enough that a merge or recovery holds little beyond its piece.
pub const READ_CHUNK_BYTES: usize = 8 * 1024 * 1024;

/// One step of a [`FrameStream`].
#[derive(Debug)]
pub enum StreamItem {
    /// A complete frame with a matching CRC: `data[frame]` is the whole frame
    /// (header included), `data[payload]` its payload, `offset` where the frame
    /// starts in the file.
    Frame { data: Bytes, frame: Range<usize>, payload: Range<usize>, offset: u64 },
    /// The data ends cleanly at `offset`.
    End { offset: u64 },
    /// Something that is not a complete valid frame starts at `offset`.
    Invalid { offset: u64, reason: String },
}

/// The frames of one file, read in pieces of `chunk_bytes`.
pub struct FrameStream<'d, D: LogDirectory> {
    dir: &'d D,
    name: String,
    size: u64,
    chunk_bytes: usize,
    /// File offset of `buf[0]`.
    base: u64,
    buf: Bytes,
    /// Position of the next frame in `buf`.
    pos: usize,
    done: bool,
}

impl<'d, D: LogDirectory> FrameStream<'d, D> {
    /// A stream over the file `name`, from its start.
    pub async fn open(dir: &'d D, name: &str, chunk_bytes: usize) -> Result<FrameStream<'d, D>, LogError> {
        let size = dir.file_size(name).await?;
        Ok(FrameStream {
            dir,
            name: name.to_string(),
            size,
            chunk_bytes: chunk_bytes.max(FRAME_HEADER_BYTES),
            base: 0,
            buf: Bytes::new(),
            pos: 0,
            done: false,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's size when the stream was opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Continues at file offset `offset` (a frame boundary the caller knows,
    /// such as the first record after a block-aligned snapshot header).
    pub fn seek(&mut self, offset: u64) {
        let end = self.base + self.buf.len() as u64;
        if offset >= self.base && offset <= end {
            self.pos = (offset - self.base) as usize;
        } else {
            self.base = offset;
            self.buf = Bytes::new();
            self.pos = 0;
        }
        self.done = false;
    }

    /// The next frame, or where the data ends.
    pub async fn next(&mut self) -> Result<StreamItem, LogError> {
        loop {
            let offset = self.base + self.pos as u64;
            if self.done {
                return Ok(StreamItem::End { offset });
            }
            let rest = self.buf.len() - self.pos;
            let file_left = self.size.saturating_sub(self.base + self.buf.len() as u64);
            // How many bytes from `pos` the next frame needs to be judged whole.
            let needed = if rest >= 4 {
                let b = &self.buf[self.pos..self.pos + 4];
                let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
                if len == 0 {
                    self.done = true;
                    return Ok(StreamItem::End { offset });
                }
                FRAME_HEADER_BYTES as u64 + len
            } else {
                FRAME_HEADER_BYTES as u64
            };
            let missing = needed.saturating_sub(rest as u64);
            // A frame longer than the rest of the file is judged invalid below
            // without reading it in.
            if missing > 0 && file_left > 0 && missing <= file_left {
                self.refill(missing as usize).await?;
                continue;
            }
            if missing > 0 && file_left > 0 && rest < 4 {
                // Not even a length word yet.
                self.refill(FRAME_HEADER_BYTES).await?;
                continue;
            }
            return Ok(match read_frame(&self.buf, self.pos) {
                FrameRead::Frame { payload, next_offset } => {
                    let frame = self.pos..next_offset;
                    self.pos = next_offset;
                    StreamItem::Frame { data: self.buf.clone(), frame, payload, offset }
                }
                FrameRead::End => {
                    self.done = true;
                    StreamItem::End { offset }
                }
                FrameRead::Invalid(reason) => {
                    self.done = true;
                    StreamItem::Invalid { offset, reason }
                }
            });
        }
    }

    /// Reads at least `missing` more bytes (a whole piece if the file has it),
    /// keeping the unread part of the current piece in front of them.
    async fn refill(&mut self, missing: usize) -> Result<(), LogError> {
        let read_from = self.base + self.buf.len() as u64;
        let want = missing.max(self.chunk_bytes);
        let rest = &self.buf[self.pos..];
        let mut next = Vec::with_capacity(rest.len() + want);
        next.extend_from_slice(rest);
        let before = next.len();
        self.dir.read_at(&self.name, read_from, want, &mut next).await?;
        if next.len() == before {
            // The file is shorter than it was: treat what we have as the end.
            self.size = read_from;
        }
        self.base += self.pos as u64;
        self.pos = 0;
        self.buf = Bytes::from(next);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::embedded::record::{encode_record, push_frame};
    use crate::log::embedded::testing::MemoryDirectory;
    use crate::log::{LogFile, Operation, Revision};
    use flatbuffers::FlatBufferBuilder;
    use futures_lite::future::block_on;

    fn file_with(dir: &MemoryDirectory, name: &str, values: &[usize]) -> Vec<u8> {
        let mut builder = FlatBufferBuilder::new();
        let mut out = Vec::new();
        for (i, len) in values.iter().enumerate() {
            let value = Bytes::from(vec![b'v'; *len]);
            let payload =
                encode_record(&mut builder, Revision(i as u64 + 1), b"k", &Operation::Put(value), Revision(1));
            push_frame(&mut out, payload);
        }
        let mut padded = out.clone();
        padded.resize(out.len().div_ceil(4096) * 4096, 0);
        block_on(async {
            let file = dir.open(name).await.unwrap();
            file.write_at(0, &padded).await.unwrap();
            file.sync().await.unwrap();
        });
        out
    }

    fn frames(dir: &MemoryDirectory, name: &str, chunk: usize) -> (Vec<(u64, usize)>, StreamItem) {
        block_on(async {
            let mut stream = FrameStream::open(dir, name, chunk).await.unwrap();
            let mut seen = Vec::new();
            loop {
                match stream.next().await.unwrap() {
                    StreamItem::Frame { frame, offset, .. } => seen.push((offset, frame.len())),
                    end => return (seen, end),
                }
            }
        })
    }

    #[test]
    fn every_piece_size_yields_the_same_frames() {
        let dir = MemoryDirectory::new();
        let data = file_with(&dir, "f", &[10, 5000, 0, 300, 9000, 1]);
        let (reference, end) = frames(&dir, "f", 1 << 20);
        assert_eq!(reference.len(), 6);
        assert!(matches!(end, StreamItem::End { offset } if offset == data.len() as u64));
        for chunk in [1, 7, 64, 100, 4096, 5000] {
            let (seen, end) = frames(&dir, "f", chunk);
            assert_eq!(seen, reference, "chunk {chunk}");
            assert!(matches!(end, StreamItem::End { offset } if offset == data.len() as u64), "chunk {chunk}");
        }
    }

    #[test]
    fn a_damaged_frame_is_invalid_at_its_offset() {
        let dir = MemoryDirectory::new();
        let data = file_with(&dir, "f", &[100, 100, 100]);
        let (reference, _) = frames(&dir, "f", 1 << 20);
        let second = reference[1].0 as usize;
        let mut bad = dir.contents("f").unwrap();
        bad[second + 20] ^= 1;
        dir.overwrite("f", bad);
        for chunk in [1, 50, 1 << 20] {
            let (seen, end) = frames(&dir, "f", chunk);
            assert_eq!(seen.len(), 1, "chunk {chunk}");
            assert!(matches!(end, StreamItem::Invalid { offset, .. } if offset == second as u64), "chunk {chunk}");
        }
        // A file cut inside a frame: the cut frame is invalid.
        dir.overwrite("f", data[..data.len() - 3].to_vec());
        let (seen, end) = frames(&dir, "f", 64);
        assert_eq!(seen.len(), 2);
        assert!(matches!(end, StreamItem::Invalid { .. }));
    }
}
