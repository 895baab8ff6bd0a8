//! The log: the single order of every change, and the source of resourceVersions.
//!
//! Every committed entry gets the next [`Revision`]; that revision is the
//! object's `metadata.resourceVersion`, exactly as etcd's revision is in
//! Kubernetes. Appends are conditional (compare the key's current mod revision,
//! or its absence), like an etcd transaction on `mod_revision`.
//!
//! This module holds the vocabulary shared by every log (this file), and the
//! embedded durable log (`embedded/`). The embedded log does its file I/O through
//! the [`LogDirectory`] trait, which `runtime/` implements on glommio DMA files
//! and tests implement in memory, so nothing here touches glommio.
//!
//! Invariants:
//! - revisions of committed entries are strictly increasing (by exactly one in
//!   the embedded log; the etcd log has gaps where other keys changed);
//! - an append is reported committed only once it is durable;
//! - a key's mod revision is the revision of the last entry that wrote it.

use bytes::Bytes;
use std::fmt;

pub mod embedded;

/// A position in the log; the Kubernetes resourceVersion. `Revision(0)` means
/// "before any entry".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Revision(pub u64);

impl Revision {
    pub const ZERO: Revision = Revision(0);
    pub fn next(self) -> Revision {
        Revision(self.0 + 1)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What an append requires of the key's current state, checked atomically
/// with the append (an etcd `Compare` on `mod_revision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// No condition.
    None,
    /// The key must not exist (create).
    Absent,
    /// The key must exist with exactly this mod revision.
    ModRevision(Revision),
}

/// The change an entry makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Set the key's value (the object's storage encoding).
    Put(Bytes),
    /// Remove the key.
    Delete,
}

/// A requested change, not yet ordered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub key: Bytes,
    pub precondition: Precondition,
    pub operation: Operation,
}

/// The state of a key just before an entry changed it (etcd's `prev_kv`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviousValue {
    pub mod_revision: Revision,
    pub create_revision: Revision,
    pub value: Bytes,
}

/// A committed change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub revision: Revision,
    pub key: Bytes,
    pub operation: Operation,
    /// For a put: the revision that created the key (equal to `revision` when
    /// this entry created it). For a delete: the deleted key's create revision.
    pub create_revision: Revision,
    /// The key's previous state, if it existed.
    pub previous: Option<PreviousValue>,
}

/// A key's value as a writer read it at `mod_revision`, handed to the log with
/// an append: the embedded log keeps no values in memory, so the entry's
/// `previous` value (etcd's `prev_kv`, which watchers need) comes from the
/// writer. It may be the stored form or the served JSON of that version (with
/// its resourceVersion): consumers set the resourceVersion themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownValue {
    pub mod_revision: Revision,
    pub value: Bytes,
}

/// One live key in a consistent state read (recovery, etcd range reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    pub key: Bytes,
    pub value: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    /// What a snapshot kept beside the value for the cache (see
    /// [`SnapshotAnnotator`]): opaque to the log, empty when there is none
    /// (always, from etcd).
    pub cached: Bytes,
}

/// What the embedded log asks, for each record it writes into a snapshot,
/// so that a restart loads objects without parsing them: the `cached` bytes
/// to keep beside the value (`runtime/` implements it with
/// `cache::snapshot_hint`; the log never reads them).
pub trait SnapshotAnnotator {
    /// The bytes to keep with `value` at `key`, given those the record has
    /// (`cached`, maybe empty); `None` keeps the record as it is.
    fn annotate(&self, key: &[u8], value: &[u8], cached: &[u8]) -> Option<Vec<u8>>;
}

/// Why an append was refused. A refused append changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// The precondition did not hold; `current` is the key's mod revision now
    /// (`None` when the key does not exist).
    #[error("precondition failed: current mod revision is {current:?}")]
    Conflict { current: Option<Revision> },
    /// The record is larger than `log_record_bytes_max`.
    #[error("record of {size_bytes} bytes exceeds the limit of {limit_bytes} bytes")]
    TooLarge { size_bytes: usize, limit_bytes: usize },
    /// The log cannot accept writes (closed, or a write to disk failed).
    #[error("log unavailable: {0}")]
    Unavailable(String),
}

/// Errors of opening, recovering or writing the log's files.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("log I/O error on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("log data corrupt in {path} at byte {offset}: {reason}")]
    Corrupt { path: String, offset: u64, reason: String },
    #[error("log closed")]
    Closed,
    /// A read of committed entries after `after` asked for entries the
    /// in-memory tail has already dropped (it holds only revisions > `oldest_after`).
    #[error("entries after revision {after} were released; the tail starts after {oldest_after}")]
    Compacted { after: Revision, oldest_after: Revision },
}

/// The files of a log, as the embedded log needs them. `runtime/` implements it
/// on glommio DMA files; tests implement it in memory with injected crashes.
///
/// Futures are not `Send`: a log lives on one core.
#[allow(async_fn_in_trait)]
pub trait LogDirectory {
    type File: LogFile;
    /// Names of the files in the directory (no sub-directories), in any order.
    async fn list(&self) -> Result<Vec<String>, LogError>;
    /// Opens (creating if absent) a file for reading and writing.
    async fn open(&self, name: &str) -> Result<Self::File, LogError>;
    /// Reads a whole file.
    async fn read_all(&self, name: &str) -> Result<Vec<u8>, LogError>;
    /// The size of a file in bytes.
    async fn file_size(&self, name: &str) -> Result<u64, LogError> {
        Ok(self.read_all(name).await?.len() as u64)
    }
    /// Appends to `out` up to `len` bytes of a file from `offset` (fewer at its
    /// end, none past it). Recovery and snapshots read files in large pieces
    /// through it, so that no file has to fit in memory at once. The default
    /// reads the whole file; implementations read only the range.
    async fn read_at(&self, name: &str, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), LogError> {
        let data = self.read_all(name).await?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(data.len());
        let end = start.saturating_add(len).min(data.len());
        out.extend_from_slice(&data[start..end]);
        Ok(())
    }
    /// Removes a file.
    async fn remove(&self, name: &str) -> Result<(), LogError>;
    /// Atomically renames a file (used to publish a finished snapshot).
    async fn rename(&self, from: &str, to: &str) -> Result<(), LogError>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    async fn sync_directory(&self) -> Result<(), LogError>;
}

/// One open log file.
#[allow(async_fn_in_trait)]
pub trait LogFile {
    /// Writes `data` at `offset`. Both are multiples of [`LogFile::alignment`].
    async fn write_at(&self, offset: u64, data: &[u8]) -> Result<(), LogError>;
    /// Makes every completed write durable (fdatasync).
    async fn sync(&self) -> Result<(), LogError>;
    /// Truncates or extends the file to `len` bytes.
    async fn truncate(&self, len: u64) -> Result<(), LogError>;
    /// Closes the file.
    async fn close(self) -> Result<(), LogError>;
    /// The block size writes must be aligned to (4096 for O_DIRECT files).
    fn alignment(&self) -> u64;
}
