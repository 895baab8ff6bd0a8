//! Criterion benchmarks of the embedded log (issue 7): encoding one record
//! (FlatBuffers payload and crc32c frame), a group commit of 1, 16 and 256
//! appends, and recovery of a segment of 10,000 entries.
//!
//! Group commit runs the real `EmbeddedLog` (preconditions, revision
//! assignment, record encoding, one aligned write and one sync per batch;
//! asserted) over two `LogDirectory` implementations, its futures driven by
//! `block_on`, which the log allows because it does no I/O of its own:
//! - `memory`: the log's in-memory test directory (`MemoryDirectory`), a
//!   fresh log per iteration (its crash model copies a file on every sync,
//!   so a long-lived file would measure the test double, not the log);
//! - `file`: `DirectDirectory` below, plain `std::fs` files opened with
//!   O_DIRECT, `pwrite` and `fdatasync`, in `target/tmp`. This is the
//!   durable cost on this machine's disk without glommio; the server does
//!   the same system calls through io_uring (`runtime/log_dir.rs`), which a
//!   bench cannot drive without a glommio executor, and only `runtime/` may
//!   start one. Steady state: one long-lived log, the tail released and a
//!   snapshot taken (outside the timing) as the server's log actor does.
//!
//! Recovery opens a directory holding one segment of 10,000 puts of about 1.1 KB
//! (`EmbeddedLog::open`: read, frame and CRC checks, FlatBuffers
//! verification, the key index), and `scan_segment` alone for its share.
//!
//! Run: `cargo bench --bench log`. Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flatbuffers::FlatBufferBuilder;
use futures_lite::future::block_on;
use shardline::config::Config;
use shardline::log::embedded::record::{decode_record, encode_record, push_frame, read_frame, FrameRead};
use shardline::log::embedded::segment::{scan_segment, segment_name};
use shardline::log::embedded::testing::MemoryDirectory;
use shardline::log::embedded::{EmbeddedLog, LogOptions};
use shardline::log::{LogDirectory, LogError, LogFile, Operation, Precondition, Proposal, Revision};
use shardline::types::key::ObjectKey;
use std::cell::{Cell, RefCell};
use std::hint::black_box;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

const ALIGNMENT: usize = 4096;
const RECOVERY_ENTRIES: u64 = 10_000;

/// A pod's storage form of about 1.1 KB.
fn pod_value(i: u64) -> Bytes {
    let env: Vec<String> =
        (0..16).map(|e| format!(r#"{{"name":"VARIABLE_{e:02}","value":"value-{e:02}-{i:06}"}}"#)).collect();
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"pod-{i:06}","namespace":"ns-7","uid":"6f1c2c1e-0000-4000-8000-{i:012}","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web"}}}},"spec":{{"nodeName":"node-17","containers":[{{"name":"app","image":"registry.example/app:1.0","env":[{}]}}]}},"status":{{"phase":"Running"}}}}"#,
        env.join(",")
    ))
}

fn pod_key(i: u64) -> Bytes {
    ObjectKey::new("", "pods", "ns-7", &format!("pod-{i:06}")).encode()
}

fn proposals(n: u64, values: &[Bytes]) -> Vec<Proposal> {
    (0..n)
        .map(|i| Proposal {
            key: pod_key(i),
            precondition: Precondition::None,
            operation: Operation::Put(values[i as usize].clone()),
        })
        .collect()
}

fn options() -> LogOptions {
    LogOptions {
        segment_bytes_max: 8 * 1024 * 1024,
        snapshot_every_records: 20_000,
        ..LogOptions::from_config(&Config::with_defaults("127.0.0.1:0".parse().expect("an address"), PathBuf::new(), 1))
    }
}

// --- A LogDirectory on std::fs with O_DIRECT ----------------------------------------

fn io_error(path: &Path, source: std::io::Error) -> LogError {
    LogError::Io { path: path.display().to_string(), source }
}

/// Plain files opened with O_DIRECT; `sync` is `fdatasync`, `sync_directory`
/// an `fsync` of the directory. Counts syncs so the bench can assert one per
/// group commit.
#[derive(Clone)]
struct DirectDirectory {
    path: PathBuf,
    syncs: Rc<Cell<u64>>,
}

struct DirectFile {
    path: PathBuf,
    file: std::fs::File,
    syncs: Rc<Cell<u64>>,
    /// O_DIRECT needs the memory aligned too: writes are copied into an
    /// aligned window of this buffer (one memcpy; glommio's DMA buffers are
    /// aligned already).
    bounce: RefCell<Vec<u8>>,
}

impl LogDirectory for DirectDirectory {
    type File = DirectFile;

    async fn list(&self) -> Result<Vec<String>, LogError> {
        let entries = std::fs::read_dir(&self.path).map_err(|e| io_error(&self.path, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&self.path, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    async fn open(&self, name: &str) -> Result<DirectFile, LogError> {
        let path = self.path.join(name);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .map_err(|e| io_error(&path, e))?;
        Ok(DirectFile { path, file, syncs: self.syncs.clone(), bounce: RefCell::new(Vec::new()) })
    }

    async fn read_all(&self, name: &str) -> Result<Vec<u8>, LogError> {
        let path = self.path.join(name);
        std::fs::read(&path).map_err(|e| io_error(&path, e))
    }

    async fn remove(&self, name: &str) -> Result<(), LogError> {
        let path = self.path.join(name);
        std::fs::remove_file(&path).map_err(|e| io_error(&path, e))
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), LogError> {
        let from = self.path.join(from);
        std::fs::rename(&from, self.path.join(to)).map_err(|e| io_error(&from, e))
    }

    async fn sync_directory(&self) -> Result<(), LogError> {
        let dir = std::fs::File::open(&self.path).map_err(|e| io_error(&self.path, e))?;
        dir.sync_all().map_err(|e| io_error(&self.path, e))
    }
}

impl LogFile for DirectFile {
    async fn write_at(&self, offset: u64, data: &[u8]) -> Result<(), LogError> {
        let mut bounce = self.bounce.borrow_mut();
        bounce.resize(data.len() + ALIGNMENT, 0);
        let start = bounce.as_ptr().align_offset(ALIGNMENT);
        let window = &mut bounce[start..start + data.len()];
        window.copy_from_slice(data);
        self.file.write_all_at(window, offset).map_err(|e| io_error(&self.path, e))
    }

    async fn sync(&self) -> Result<(), LogError> {
        self.syncs.set(self.syncs.get() + 1);
        self.file.sync_data().map_err(|e| io_error(&self.path, e))
    }

    async fn truncate(&self, len: u64) -> Result<(), LogError> {
        self.file.set_len(len).map_err(|e| io_error(&self.path, e))
    }

    async fn close(self) -> Result<(), LogError> {
        Ok(())
    }

    fn alignment(&self) -> u64 {
        ALIGNMENT as u64
    }
}

fn temporary_directory() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary directory under target/tmp")
}

// --- Benchmarks ---------------------------------------------------------------------

fn bench_record(c: &mut Criterion) {
    let value = pod_value(1);
    let key = pod_key(1);
    let operation = Operation::Put(value.clone());
    let mut builder = FlatBufferBuilder::new();
    let mut frame = Vec::new();
    push_frame(&mut frame, encode_record(&mut builder, Revision(7), &key, &operation, Revision(3)));
    let frame_bytes = frame.len() as u64;
    eprintln!("record frame: {frame_bytes} bytes for a {} byte value", value.len());

    let mut group = c.benchmark_group("log/record");
    group.throughput(Throughput::Bytes(frame_bytes));
    group.bench_function("encode_and_frame_put", |b| {
        b.iter(|| {
            frame.clear();
            let payload = encode_record(&mut builder, Revision(7), black_box(&key), &operation, Revision(3));
            push_frame(&mut frame, payload);
            frame.len()
        })
    });
    group.bench_function("crc32c_alone", |b| b.iter(|| crc32c::crc32c(black_box(&frame[8..]))));
    let frame = Bytes::from(frame);
    group.bench_function("read_and_decode_put", |b| {
        b.iter(|| {
            let FrameRead::Frame { payload, .. } = read_frame(black_box(&frame), 0) else { panic!("a valid frame") };
            decode_record(&frame, payload).expect("a valid record")
        })
    });
    group.finish();
}

fn bench_group_commit(c: &mut Criterion) {
    let values: Vec<Bytes> = (0..256).map(pod_value).collect();

    let mut group = c.benchmark_group("log/group_commit_memory");
    for n in [1u64, 16, 256] {
        group.throughput(Throughput::Elements(n));
        group.bench_function(format!("{n}_appends"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = MemoryDirectory::with_alignment(ALIGNMENT as u64);
                    let (log, _) = block_on(EmbeddedLog::open(dir.clone(), options())).expect("an empty log opens");
                    let batch = proposals(n, &values);
                    let syncs = dir.sync_count();
                    let start = Instant::now();
                    let results = block_on(futures_util::future::join_all(batch.into_iter().map(|p| log.append(p))));
                    total += start.elapsed();
                    assert!(results.iter().all(Result::is_ok));
                    assert_eq!(dir.sync_count() - syncs, 1, "one group commit, one sync");
                }
                total
            })
        });
    }
    group.finish();

    let tmp = temporary_directory();
    let dir = DirectDirectory { path: tmp.path().to_path_buf(), syncs: Rc::new(Cell::new(0)) };
    let (log, _) = block_on(EmbeddedLog::open(dir.clone(), options())).expect("an empty log opens");
    let mut group = c.benchmark_group("log/group_commit_file");
    group.sample_size(20);
    for n in [1u64, 16, 256] {
        group.throughput(Throughput::Elements(n));
        group.bench_function(format!("{n}_appends"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let batch = proposals(n, &values);
                    let syncs = dir.syncs.get();
                    let start = Instant::now();
                    let results = block_on(futures_util::future::join_all(batch.into_iter().map(|p| log.append(p))));
                    total += start.elapsed();
                    assert!(results.iter().all(Result::is_ok));
                    assert_eq!(dir.syncs.get() - syncs, 1, "one group commit, one fdatasync");
                    log.release(log.committed_revision());
                    block_on(log.snapshot_if_due()).expect("a snapshot");
                }
                total
            })
        });
    }
    group.finish();
    block_on(log.close()).expect("the log closes");
}

/// Fills `dir` with one segment of `RECOVERY_ENTRIES` puts of distinct keys.
fn fill<D: LogDirectory + Clone>(dir: &D) {
    let (log, _) = block_on(EmbeddedLog::open(dir.clone(), options_one_segment())).expect("an empty log opens");
    for chunk in 0..RECOVERY_ENTRIES / 250 {
        let batch = (0..250).map(|i| {
            let i = chunk * 250 + i;
            Proposal { key: pod_key(i), precondition: Precondition::Absent, operation: Operation::Put(pod_value(i)) }
        });
        let results = block_on(futures_util::future::join_all(batch.map(|p| log.append(p))));
        assert!(results.iter().all(Result::is_ok));
        log.release(log.committed_revision());
    }
    block_on(log.close()).expect("the log closes");
}

fn options_one_segment() -> LogOptions {
    LogOptions { segment_bytes_max: 64 * 1024 * 1024, snapshot_every_records: u64::MAX, ..options() }
}

/// Opens the log in `dir`, checking that it recovered every entry; the log
/// and its recovered state are returned so that dropping them is not timed.
fn recover<D: LogDirectory>(dir: D) -> (EmbeddedLog<D>, Vec<shardline::log::KeyValue>) {
    let (log, recovered) = block_on(EmbeddedLog::open(dir, options_one_segment())).expect("the log recovers");
    assert_eq!(recovered.revision, Revision(RECOVERY_ENTRIES));
    assert_eq!(recovered.live.len() as u64, RECOVERY_ENTRIES);
    (log, recovered.live)
}

fn bench_recovery(c: &mut Criterion) {
    let mut group = c.benchmark_group("log/recovery");
    group.sample_size(20);
    group.throughput(Throughput::Elements(RECOVERY_ENTRIES));

    let memory = MemoryDirectory::with_alignment(ALIGNMENT as u64);
    fill(&memory);
    let name = segment_name(Revision(1));
    let segment = Bytes::from(memory.contents(&name).expect("the segment"));
    eprintln!("segment of {RECOVERY_ENTRIES} entries: {} bytes", segment.len());
    group.bench_function("scan_segment_10k_entries", |b| {
        b.iter(|| {
            let scan = scan_segment(&name, black_box(&segment), true).expect("a clean segment");
            assert_eq!(scan.records.len() as u64, RECOVERY_ENTRIES);
            scan
        })
    });
    group.bench_function("open_10k_entries_memory", |b| b.iter_with_large_drop(|| recover(memory.clone())));
    let tmp = temporary_directory();
    let file = DirectDirectory { path: tmp.path().to_path_buf(), syncs: Rc::new(Cell::new(0)) };
    fill(&file);
    group.bench_function("open_10k_entries_file", |b| b.iter_with_large_drop(|| recover(file.clone())));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench_record, bench_group_commit, bench_recovery
}
criterion_main!(benches);
