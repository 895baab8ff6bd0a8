//! An in-memory [`LogDirectory`] that models what survives a crash, for unit
//! tests, property tests and the deterministic simulation (always compiled).
//!
//! Model: every file has durable bytes (as of its last `sync`) and a list of
//! unsynced writes/truncations applied on top (what reads see). The directory
//! has durable entries (as of the last `sync_directory`) and a list of unsynced
//! creations, renames and removals. [`MemoryDirectory::crash`] keeps, per file,
//! the durable bytes plus a random prefix of its unsynced writes (the next one
//! possibly torn: a prefix of it, or any subset of its 512-byte sectors),
//! optionally corrupts bytes past the durable length, and
//! keeps a random prefix of the unsynced directory operations. Handles opened
//! before a crash fail afterwards, as if their process had died.
//!
//! Invariants: synced data and synced directory entries always survive a crash;
//! unsynced ones may or may not, but only in order (prefixes); writes must be
//! aligned to [`MemoryDirectory::alignment`] exactly as O_DIRECT requires.

use crate::log::{LogDirectory, LogError, LogFile};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

type FileId = u64;

/// The unit a disk writes atomically; a torn write keeps a subset of these.
const SECTOR_BYTES: usize = 512;

#[derive(Clone, Debug)]
enum FileOp {
    Write { offset: u64, data: Vec<u8> },
    Truncate { len: u64 },
}

#[derive(Clone, Debug, Default)]
struct FileData {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<FileOp>,
}

#[derive(Clone, Debug)]
enum DirOp {
    Link { name: String, id: FileId },
    Unlink { name: String },
}

#[derive(Debug, Default)]
struct Disk {
    names: BTreeMap<String, FileId>,
    durable_names: BTreeMap<String, FileId>,
    pending_dir_ops: Vec<DirOp>,
    files: HashMap<FileId, FileData>,
    next_id: FileId,
    epoch: u64,
    alignment: u64,
    syncs: u64,
    directory_syncs: u64,
    io_yields: bool,
    fail_next_sync: bool,
    fail_next_write: bool,
}

fn apply(data: &mut Vec<u8>, op: &FileOp) {
    match op {
        FileOp::Write { offset, data: bytes } => {
            let start = *offset as usize;
            let end = start + bytes.len();
            if data.len() < end {
                data.resize(end, 0);
            }
            data[start..end].copy_from_slice(bytes);
        }
        FileOp::Truncate { len } => data.resize(*len as usize, 0),
    }
}

fn io_error(path: &str, message: &str) -> LogError {
    LogError::Io { path: path.to_string(), source: std::io::Error::other(message.to_string()) }
}

/// The in-memory directory; clones share the same "disk".
#[derive(Clone, Debug)]
pub struct MemoryDirectory {
    disk: Rc<RefCell<Disk>>,
}

impl Default for MemoryDirectory {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryDirectory {
    /// An empty directory with 4096-byte alignment.
    pub fn new() -> Self {
        Self::with_alignment(4096)
    }

    pub fn with_alignment(alignment: u64) -> Self {
        MemoryDirectory { disk: Rc::new(RefCell::new(Disk { alignment: alignment.max(1), ..Disk::default() })) }
    }

    pub fn alignment(&self) -> u64 {
        self.disk.borrow().alignment
    }

    /// Makes every write, sync and directory operation yield once before
    /// completing, as real I/O does, so concurrent appends can batch.
    pub fn set_io_yields(&self, yields: bool) {
        self.disk.borrow_mut().io_yields = yields;
    }

    /// Number of file syncs so far.
    pub fn sync_count(&self) -> u64 {
        self.disk.borrow().syncs
    }

    /// Number of directory syncs so far.
    pub fn directory_sync_count(&self) -> u64 {
        self.disk.borrow().directory_syncs
    }

    /// The next file sync fails with an I/O error (and changes nothing).
    pub fn fail_next_sync(&self) {
        self.disk.borrow_mut().fail_next_sync = true;
    }

    /// The next write fails with an I/O error (and changes nothing).
    pub fn fail_next_write(&self) {
        self.disk.borrow_mut().fail_next_write = true;
    }

    /// Current (not necessarily durable) contents of a file.
    pub fn contents(&self, name: &str) -> Option<Vec<u8>> {
        let disk = self.disk.borrow();
        let id = disk.names.get(name)?;
        disk.files.get(id).map(|f| f.current.clone())
    }

    /// Replaces a file's contents, durably (to inject corruption in tests).
    pub fn overwrite(&self, name: &str, contents: Vec<u8>) {
        let mut disk = self.disk.borrow_mut();
        if let Some(id) = disk.names.get(name).copied() {
            if let Some(file) = disk.files.get_mut(&id) {
                file.durable = contents.clone();
                file.current = contents;
                file.pending.clear();
            }
        }
    }

    /// Simulates a power loss. See the module doc for what survives. Handles
    /// opened before the crash fail from now on.
    pub fn crash(&self, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let corrupt = rng.random_bool(0.3);
        let mut disk = self.disk.borrow_mut();
        // Directory: durable entries plus a prefix of the unsynced operations.
        let kept_ops = rng.random_range(0..=disk.pending_dir_ops.len());
        let mut names = disk.durable_names.clone();
        for op in &disk.pending_dir_ops[..kept_ops] {
            match op {
                DirOp::Link { name, id } => {
                    names.insert(name.clone(), *id);
                }
                DirOp::Unlink { name } => {
                    names.remove(name);
                }
            }
        }
        // Files: durable bytes plus a prefix of the unsynced writes.
        let mut ids: Vec<FileId> = disk.files.keys().copied().collect();
        ids.sort_unstable();
        let mut files = HashMap::new();
        for id in ids {
            let Some(file) = disk.files.get(&id) else {
                continue;
            };
            let mut data = file.durable.clone();
            let durable_len = data.len();
            let kept = rng.random_range(0..=file.pending.len());
            for op in &file.pending[..kept] {
                apply(&mut data, op);
            }
            if let Some(FileOp::Write { offset, data: bytes }) = file.pending.get(kept) {
                if rng.random_bool(0.5) {
                    // A torn write: some prefix of the next write landed.
                    let cut = rng.random_range(0..=bytes.len());
                    apply(&mut data, &FileOp::Write { offset: *offset, data: bytes[..cut].to_vec() });
                } else {
                    // A torn write at sector granularity: any subset of its
                    // 512-byte sectors landed, in no particular order.
                    for (i, sector) in bytes.chunks(SECTOR_BYTES).enumerate() {
                        if rng.random_bool(0.5) {
                            apply(
                                &mut data,
                                &FileOp::Write { offset: offset + (i * SECTOR_BYTES) as u64, data: sector.to_vec() },
                            );
                        }
                    }
                }
            }
            if corrupt && data.len() > durable_len {
                for _ in 0..rng.random_range(1..=3) {
                    let at = rng.random_range(durable_len..data.len());
                    data[at] ^= rng.random_range(1..=255u8);
                }
            }
            files.insert(id, FileData { durable: data.clone(), current: data, pending: Vec::new() });
        }
        files.retain(|id, _| names.values().any(|v| v == id));
        disk.files = files;
        disk.durable_names = names.clone();
        disk.names = names;
        disk.pending_dir_ops.clear();
        disk.epoch += 1;
        disk.fail_next_sync = false;
        disk.fail_next_write = false;
    }

    fn io_yield(&self) -> MaybeYield {
        MaybeYield { pending: self.disk.borrow().io_yields }
    }
}

/// Returns `Pending` once (waking itself) when `pending`, then `Ready`.
struct MaybeYield {
    pending: bool,
}

impl Future for MaybeYield {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.pending {
            self.pending = false;
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// An open file of a [`MemoryDirectory`].
#[derive(Debug)]
pub struct MemoryFile {
    dir: MemoryDirectory,
    name: String,
    id: FileId,
    epoch: u64,
}

impl MemoryFile {
    fn check_epoch(&self, disk: &Disk) -> Result<(), LogError> {
        if disk.epoch != self.epoch {
            return Err(io_error(&self.name, "handle from before a crash"));
        }
        Ok(())
    }
}

impl LogDirectory for MemoryDirectory {
    type File = MemoryFile;

    async fn list(&self) -> Result<Vec<String>, LogError> {
        Ok(self.disk.borrow().names.keys().cloned().collect())
    }

    async fn open(&self, name: &str) -> Result<MemoryFile, LogError> {
        self.io_yield().await;
        let mut disk = self.disk.borrow_mut();
        let id = match disk.names.get(name) {
            Some(id) => *id,
            None => {
                let id = disk.next_id;
                disk.next_id += 1;
                disk.files.insert(id, FileData::default());
                disk.names.insert(name.to_string(), id);
                disk.pending_dir_ops.push(DirOp::Link { name: name.to_string(), id });
                id
            }
        };
        Ok(MemoryFile { dir: self.clone(), name: name.to_string(), id, epoch: disk.epoch })
    }

    async fn read_all(&self, name: &str) -> Result<Vec<u8>, LogError> {
        let disk = self.disk.borrow();
        let id = disk.names.get(name).ok_or_else(|| io_error(name, "no such file"))?;
        Ok(disk.files.get(id).map(|f| f.current.clone()).unwrap_or_default())
    }

    async fn file_size(&self, name: &str) -> Result<u64, LogError> {
        let disk = self.disk.borrow();
        let id = disk.names.get(name).ok_or_else(|| io_error(name, "no such file"))?;
        Ok(disk.files.get(id).map_or(0, |f| f.current.len() as u64))
    }

    async fn read_at(&self, name: &str, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), LogError> {
        // Reads yield too, so a snapshot merge interleaves with appends.
        self.io_yield().await;
        let disk = self.disk.borrow();
        let id = disk.names.get(name).ok_or_else(|| io_error(name, "no such file"))?;
        let data = disk.files.get(id).map(|f| f.current.as_slice()).unwrap_or_default();
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(data.len());
        let end = start.saturating_add(len).min(data.len());
        out.extend_from_slice(&data[start..end]);
        Ok(())
    }

    async fn remove(&self, name: &str) -> Result<(), LogError> {
        self.io_yield().await;
        let mut disk = self.disk.borrow_mut();
        if disk.names.remove(name).is_none() {
            return Err(io_error(name, "no such file"));
        }
        disk.pending_dir_ops.push(DirOp::Unlink { name: name.to_string() });
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), LogError> {
        self.io_yield().await;
        let mut disk = self.disk.borrow_mut();
        let id = disk.names.remove(from).ok_or_else(|| io_error(from, "no such file"))?;
        disk.names.insert(to.to_string(), id);
        // A rename is atomic: both halves land together, or neither.
        disk.pending_dir_ops.push(DirOp::Link { name: to.to_string(), id });
        let last = disk.pending_dir_ops.len() - 1;
        disk.pending_dir_ops.insert(last, DirOp::Unlink { name: from.to_string() });
        Ok(())
    }

    async fn sync_directory(&self) -> Result<(), LogError> {
        self.io_yield().await;
        let mut disk = self.disk.borrow_mut();
        disk.durable_names = disk.names.clone();
        disk.pending_dir_ops.clear();
        disk.directory_syncs += 1;
        Ok(())
    }
}

impl LogFile for MemoryFile {
    async fn write_at(&self, offset: u64, data: &[u8]) -> Result<(), LogError> {
        self.dir.io_yield().await;
        let mut disk = self.dir.disk.borrow_mut();
        self.check_epoch(&disk)?;
        if !offset.is_multiple_of(disk.alignment) || !(data.len() as u64).is_multiple_of(disk.alignment) {
            return Err(io_error(&self.name, "unaligned write"));
        }
        if std::mem::take(&mut disk.fail_next_write) {
            return Err(io_error(&self.name, "injected write failure"));
        }
        let file = disk.files.get_mut(&self.id).ok_or_else(|| io_error(&self.name, "file removed"))?;
        let op = FileOp::Write { offset, data: data.to_vec() };
        apply(&mut file.current, &op);
        file.pending.push(op);
        Ok(())
    }

    async fn sync(&self) -> Result<(), LogError> {
        self.dir.io_yield().await;
        let mut disk = self.dir.disk.borrow_mut();
        self.check_epoch(&disk)?;
        if std::mem::take(&mut disk.fail_next_sync) {
            return Err(io_error(&self.name, "injected sync failure"));
        }
        disk.syncs += 1;
        if let Some(file) = disk.files.get_mut(&self.id) {
            file.durable = file.current.clone();
            file.pending.clear();
        }
        Ok(())
    }

    async fn truncate(&self, len: u64) -> Result<(), LogError> {
        let mut disk = self.dir.disk.borrow_mut();
        self.check_epoch(&disk)?;
        let file = disk.files.get_mut(&self.id).ok_or_else(|| io_error(&self.name, "file removed"))?;
        let op = FileOp::Truncate { len };
        apply(&mut file.current, &op);
        file.pending.push(op);
        Ok(())
    }

    async fn close(self) -> Result<(), LogError> {
        Ok(())
    }

    fn alignment(&self) -> u64 {
        self.dir.disk.borrow().alignment
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_lite::future::block_on;

    #[test]
    fn synced_data_survives_and_unsynced_may_not() {
        let dir = MemoryDirectory::with_alignment(8);
        block_on(async {
            let file = dir.open("a").await.unwrap();
            dir.sync_directory().await.unwrap();
            file.write_at(0, b"durable!").await.unwrap();
            file.sync().await.unwrap();
            file.write_at(8, b"volatile").await.unwrap();
            assert!(file.write_at(3, b"12345678").await.is_err());
        });
        for seed in 0..50 {
            let copy = MemoryDirectory::with_alignment(8);
            {
                let mut disk = copy.disk.borrow_mut();
                let src = dir.disk.borrow();
                disk.names = src.names.clone();
                disk.durable_names = src.durable_names.clone();
                disk.files = src.files.clone();
            }
            copy.crash(seed);
            let data = copy.contents("a").unwrap();
            assert_eq!(&data[..8], b"durable!");
            assert!(data.len() <= 16);
        }
    }

    #[test]
    fn unsynced_creation_may_vanish_and_old_handles_fail() {
        let dir = MemoryDirectory::new();
        let file = block_on(dir.open("new")).unwrap();
        let mut vanished = false;
        for seed in 0..20 {
            let probe = MemoryDirectory::new();
            block_on(probe.open("new")).unwrap();
            probe.crash(seed);
            vanished |= probe.contents("new").is_none();
        }
        assert!(vanished);
        dir.crash(1);
        assert!(block_on(file.sync()).is_err());
    }
}
