//! The log's files on glommio: [`GlommioLogDirectory`] implements the log's
//! `LogDirectory` / `LogFile` traits over one directory path with O_DIRECT
//! `DmaFile`s driven by io_uring.
//!
//! Invariants:
//! - every write goes through a DMA buffer at an offset and length aligned to
//!   the file's alignment (the log guarantees it; a short write is retried and
//!   never reported as success);
//! - `sync` is `fdatasync`; `sync_directory` is `fsync` of the directory, so
//!   creations, renames and removals are durable once it returns;
//! - names are plain file names inside the directory, never paths.

use crate::log::{LogDirectory, LogError, LogFile};
use glommio::io::{Directory, DmaFile, OpenOptions};
use std::path::{Path, PathBuf};

fn io_error(path: &Path, error: impl Into<std::io::Error>) -> LogError {
    LogError::Io { path: path.display().to_string(), source: error.into() }
}

/// A log directory on disk. Must be used on a glommio executor thread.
#[derive(Debug, Clone)]
pub struct GlommioLogDirectory {
    path: PathBuf,
}

impl GlommioLogDirectory {
    /// Uses the directory at `path`, creating it (and its parents) if absent.
    pub async fn new(path: impl Into<PathBuf>) -> Result<Self, LogError> {
        let path = path.into();
        std::fs::create_dir_all(&path).map_err(|e| io_error(&path, e))?;
        // glommio opens directories with `openat(-1, path)`: only absolute
        // paths work there.
        let path = std::fs::canonicalize(&path).map_err(|e| io_error(&path, e))?;
        probe_io_poll(&path).await?;
        Ok(GlommioLogDirectory { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn file_path(&self, name: &str) -> Result<PathBuf, LogError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io_error(
                &self.path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad file name {name:?}")),
            ));
        }
        Ok(self.path.join(name))
    }
}

/// Makes glommio decide whether the device supports io_uring polled I/O on a
/// file that has data. glommio 0.9 probes (once per device, cached for the
/// process) with a read at offset 0 of the first DMA file opened; on an empty
/// file (a new segment) that read succeeds without touching the device, glommio
/// concludes "pollable", and every later read fails with EOPNOTSUPP on devices
/// without polling (virtio disks). Opening a one-block file first avoids it.
async fn probe_io_poll(dir: &Path) -> Result<(), LogError> {
    const PROBE_NAME: &str = ".io-poll-probe";
    let path = dir.join(PROBE_NAME);
    std::fs::write(&path, [0u8; 4096]).map_err(|e| io_error(&path, e))?;
    let file = OpenOptions::new().read(true).dma_open(&path).await.map_err(|e| io_error(&path, e))?;
    file.close().await.map_err(|e| io_error(&path, e))?;
    std::fs::remove_file(&path).map_err(|e| io_error(&path, e))
}

/// One open O_DIRECT log file.
#[derive(Debug)]
pub struct GlommioLogFile {
    file: DmaFile,
    path: PathBuf,
}

impl LogDirectory for GlommioLogDirectory {
    type File = GlommioLogFile;

    async fn list(&self) -> Result<Vec<String>, LogError> {
        let entries = std::fs::read_dir(&self.path).map_err(|e| io_error(&self.path, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&self.path, e))?;
            let is_file = entry.file_type().map_err(|e| io_error(&self.path, e))?.is_file();
            if let (true, Some(name)) = (is_file, entry.file_name().to_str()) {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    async fn open(&self, name: &str) -> Result<GlommioLogFile, LogError> {
        let path = self.file_path(name)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .dma_open(&path)
            .await
            .map_err(|e| io_error(&path, e))?;
        Ok(GlommioLogFile { file, path })
    }

    async fn read_all(&self, name: &str) -> Result<Vec<u8>, LogError> {
        /// Read in pieces so a large segment never needs one huge DMA buffer.
        const READ_CHUNK_BYTES: u64 = 1024 * 1024;
        let path = self.file_path(name)?;
        let file = OpenOptions::new().read(true).dma_open(&path).await.map_err(|e| io_error(&path, e))?;
        let size = file.file_size().await.map_err(|e| io_error(&path, e))?;
        let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        let mut position = 0u64;
        while position < size {
            let want = (size - position).min(READ_CHUNK_BYTES) as usize;
            let read = file.read_at(position, want).await.map_err(|e| io_error(&path, e))?;
            if read.is_empty() {
                break; // the file shrank under us
            }
            data.extend_from_slice(&read);
            position += read.len() as u64;
        }
        file.close().await.map_err(|e| io_error(&path, e))?;
        Ok(data)
    }

    async fn file_size(&self, name: &str) -> Result<u64, LogError> {
        let path = self.file_path(name)?;
        std::fs::metadata(&path).map(|m| m.len()).map_err(|e| io_error(&path, e))
    }

    async fn read_at(&self, name: &str, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), LogError> {
        // Large O_DIRECT reads (glommio aligns them), copied out of the DMA
        // buffer. Recovery and snapshot merges read sequentially in pieces of
        // `log::embedded::stream::READ_CHUNK_BYTES`.
        let path = self.file_path(name)?;
        let file = OpenOptions::new().read(true).dma_open(&path).await.map_err(|e| io_error(&path, e))?;
        let size = file.file_size().await.map_err(|e| io_error(&path, e))?;
        if offset < size {
            let want = (size - offset).min(len as u64) as usize;
            out.reserve(want);
            let mut done = 0usize;
            while done < want {
                let read = file.read_at(offset + done as u64, want - done).await.map_err(|e| io_error(&path, e))?;
                if read.is_empty() {
                    break; // the file shrank under us
                }
                out.extend_from_slice(&read);
                done += read.len();
            }
        }
        file.close().await.map_err(|e| io_error(&path, e))
    }

    async fn remove(&self, name: &str) -> Result<(), LogError> {
        let path = self.file_path(name)?;
        glommio::io::remove(&path).await.map_err(|e| io_error(&path, e))
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), LogError> {
        let from_path = self.file_path(from)?;
        let to_path = self.file_path(to)?;
        glommio::io::rename(&from_path, &to_path).await.map_err(|e| io_error(&from_path, e))
    }

    async fn sync_directory(&self) -> Result<(), LogError> {
        let directory = Directory::open(&self.path).await.map_err(|e| io_error(&self.path, e))?;
        directory.sync().await.map_err(|e| io_error(&self.path, e))?;
        directory.close().await.map_err(|e| io_error(&self.path, e))
    }
}

impl LogFile for GlommioLogFile {
    async fn write_at(&self, offset: u64, data: &[u8]) -> Result<(), LogError> {
        let mut written = 0usize;
        while written < data.len() {
            let rest = &data[written..];
            let mut buffer = self.file.alloc_dma_buffer(rest.len());
            buffer.as_bytes_mut().copy_from_slice(rest);
            let count =
                self.file.write_at(buffer, offset + written as u64).await.map_err(|e| io_error(&self.path, e))?;
            if count == 0 || count as u64 % self.file.alignment() != 0 {
                return Err(io_error(
                    &self.path,
                    std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        format!("short write of {count} bytes at {}", offset + written as u64),
                    ),
                ));
            }
            written += count;
        }
        Ok(())
    }

    async fn sync(&self) -> Result<(), LogError> {
        self.file.fdatasync().await.map_err(|e| io_error(&self.path, e))
    }

    async fn truncate(&self, len: u64) -> Result<(), LogError> {
        self.file.truncate(len).await.map_err(|e| io_error(&self.path, e))
    }

    async fn close(self) -> Result<(), LogError> {
        self.file.close().await.map_err(|e| io_error(&self.path, e))
    }

    fn alignment(&self) -> u64 {
        // O_DIRECT needs at least the logical block size; 4096 covers every
        // common device and is what the log's block arithmetic assumes.
        self.file.alignment().max(4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::embedded::{EmbeddedLog, LogOptions};
    use crate::log::{Operation, Precondition, Proposal, Revision};
    use bytes::Bytes;

    fn options() -> LogOptions {
        LogOptions {
            segment_bytes_max: 64 * 1024,
            snapshot_every_records: 50,
            batch_records_max: 128,
            batch_bytes_max: 256 * 1024,
            record_bytes_max: 64 * 1024,
            tail_entries_max: 100_000,
            snapshot_merge_bytes_max: 16 * 1024,
        }
    }

    /// glommio opens directories with `openat(-1, path)`, which only works
    /// for absolute paths: a relative data dir must still sync its directory.
    #[test]
    fn relative_paths_work() {
        let temp = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let absolute = temp.path().join("log");
        let relative = absolute.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_path_buf();
        assert!(relative.is_relative());
        // cargo runs unit tests with the package root as the working directory.
        assert_eq!(std::env::current_dir().unwrap(), std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
        let executor = glommio::LocalExecutorBuilder::default().io_memory(512 * 1024).make().unwrap();
        executor.run(async move {
            let dir = GlommioLogDirectory::new(&relative).await.unwrap();
            assert!(dir.path().is_absolute());
            dir.sync_directory().await.unwrap();
            let file = dir.open("segment-00000000000000000001.wal").await.unwrap();
            file.close().await.unwrap();
            assert_eq!(dir.list().await.unwrap(), ["segment-00000000000000000001.wal"]);
        });
    }

    #[test]
    fn embedded_log_on_dma_files_survives_reopen() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("log");
        let executor = glommio::LocalExecutorBuilder::default().io_memory(512 * 1024).make().unwrap();
        executor.run(async move {
            let dir = GlommioLogDirectory::new(&path).await.unwrap();
            let (log, recovered) = EmbeddedLog::open(dir.clone(), options()).await.unwrap();
            assert_eq!(recovered.revision, Revision::ZERO);
            let appends = (0..120u64).map(|i| {
                let log = &log;
                async move {
                    log.append(Proposal {
                        key: Bytes::from(format!("/registry/pods/p{}", i % 10)),
                        precondition: Precondition::None,
                        operation: Operation::Put(Bytes::from(vec![b'x'; 700 + i as usize])),
                    })
                    .await
                    .unwrap()
                }
            });
            let entries = futures_util::future::join_all(appends).await;
            assert_eq!(entries.len(), 120);
            assert_eq!(log.committed_revision(), Revision(120));
            assert!(log.snapshot_if_due().await.unwrap());
            log.append(Proposal {
                key: Bytes::from_static(b"/registry/pods/p3"),
                precondition: Precondition::ModRevision(Revision(114)),
                operation: Operation::Delete,
            })
            .await
            .unwrap();
            log.close().await.unwrap();
            drop(log);

            let (log, recovered) = EmbeddedLog::open(dir.clone(), options()).await.unwrap();
            assert_eq!(recovered.revision, Revision(121));
            assert_eq!(recovered.live.len(), 9);
            let p9 = recovered.live.iter().find(|kv| kv.key == "/registry/pods/p9".as_bytes()).unwrap();
            assert_eq!((p9.mod_revision, p9.value.len()), (Revision(120), 700 + 119));
            let next = log
                .append(Proposal {
                    key: Bytes::from_static(b"/registry/pods/new"),
                    precondition: Precondition::Absent,
                    operation: Operation::Put(Bytes::from_static(b"{}")),
                })
                .await
                .unwrap();
            assert_eq!(next.revision, Revision(122));
            log.close().await.unwrap();
            let names = dir.list().await.unwrap();
            assert!(names.iter().any(|n| n.ends_with(".snap")), "{names:?}");
        });
    }
}
