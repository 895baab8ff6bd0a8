//! Tests of the embedded log as a whole, over [`MemoryDirectory`]: unit tests
//! of each behaviour, and a model-based property test (random rounds of
//! concurrent appends and snapshots, crashes at random points, reopen) checked
//! against a `BTreeMap` model.

use super::record::{read_frame, FrameRead};
use super::segment::scan_segment;
use super::testing::MemoryDirectory;
use super::*;
use futures_lite::future::{block_on, poll_once};
use proptest::prelude::*;

fn options() -> LogOptions {
    LogOptions {
        segment_bytes_max: 16 * 1024,
        snapshot_every_records: 5,
        batch_records_max: 64,
        batch_bytes_max: 64 * 1024,
        record_bytes_max: 8 * 1024,
        tail_entries_max: 1_000_000,
        // Small, so that merges run in several key ranges.
        snapshot_merge_bytes_max: 1024,
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn put(key: &str, value: &str, precondition: Precondition) -> Proposal {
    Proposal { key: b(key), precondition, operation: Operation::Put(b(value)) }
}

fn delete(key: &str, precondition: Precondition) -> Proposal {
    Proposal { key: b(key), precondition, operation: Operation::Delete }
}

fn open(dir: &MemoryDirectory) -> (EmbeddedLog<MemoryDirectory>, Recovered) {
    block_on(EmbeddedLog::open(dir.clone(), options())).unwrap()
}

#[test]
fn appends_survive_reopen() {
    let dir = MemoryDirectory::new();
    let (log, recovered) = open(&dir);
    assert_eq!(recovered, Recovered { revision: Revision::ZERO, live: vec![] });
    block_on(async {
        let a = log.append(put("a", "1", Precondition::Absent)).await.unwrap();
        assert_eq!((a.revision, a.create_revision, a.previous), (Revision(1), Revision(1), None));
        let b2 = log.append(put("b", "2", Precondition::None)).await.unwrap();
        assert_eq!(b2.revision, Revision(2));
        // The log keeps no values: the writer hands in the one it read.
        let known = KnownValue { mod_revision: Revision(1), value: b("1") };
        let a2 = log.append_known(put("a", "3", Precondition::ModRevision(Revision(1))), Some(known)).await.unwrap();
        assert_eq!(a2.create_revision, Revision(1));
        assert_eq!(
            a2.previous,
            Some(PreviousValue { mod_revision: Revision(1), create_revision: Revision(1), value: b("1") })
        );
        // Without it (or with a value of another revision) the previous value is empty.
        let stale = KnownValue { mod_revision: Revision(1), value: b("2") };
        let d = log.append_known(delete("b", Precondition::None), Some(stale)).await.unwrap();
        assert_eq!((d.revision, d.create_revision), (Revision(4), Revision(2)));
        assert_eq!(
            d.previous,
            Some(PreviousValue { mod_revision: Revision(2), create_revision: Revision(2), value: Bytes::new() })
        );
        log.close().await.unwrap();
    });
    let (_log, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(4));
    assert_eq!(
        recovered.live,
        vec![KeyValue {
            key: b("a"),
            value: b("3"),
            create_revision: Revision(1),
            mod_revision: Revision(3),
            cached: Bytes::new()
        }]
    );
}

#[test]
fn precondition_conflicts_change_nothing() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    block_on(async {
        log.append(put("a", "1", Precondition::None)).await.unwrap();
        assert_eq!(
            log.append(put("a", "2", Precondition::Absent)).await,
            Err(AppendError::Conflict { current: Some(Revision(1)) })
        );
        assert_eq!(
            log.append(put("a", "2", Precondition::ModRevision(Revision(7)))).await,
            Err(AppendError::Conflict { current: Some(Revision(1)) })
        );
        assert_eq!(
            log.append(put("x", "2", Precondition::ModRevision(Revision(1)))).await,
            Err(AppendError::Conflict { current: None })
        );
        assert_eq!(log.append(delete("x", Precondition::None)).await, Err(AppendError::Conflict { current: None }));
        assert_eq!(log.committed_revision(), Revision(1));
        let next = log.append(delete("a", Precondition::ModRevision(Revision(1)))).await.unwrap();
        assert_eq!(next.revision, Revision(2));
    });
}

#[test]
fn too_large_records_are_refused() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    let big = "x".repeat(options().record_bytes_max);
    let result = block_on(log.append(put("k", &big, Precondition::None)));
    assert!(
        matches!(result, Err(AppendError::TooLarge { limit_bytes, .. }) if limit_bytes == options().record_bytes_max)
    );
    // Just under the fast-path bound but over the exact frame size.
    let near = "x".repeat(options().record_bytes_max - 8 - 1);
    let result = block_on(log.append(put("k", &near, Precondition::None)));
    assert!(matches!(result, Err(AppendError::TooLarge { .. })), "{result:?}");
    assert_eq!(log.committed_revision(), Revision::ZERO);
    assert!(block_on(log.append(put("k", "small", Precondition::None))).is_ok());
}

#[test]
fn concurrent_appends_share_one_sync() {
    let dir = MemoryDirectory::new();
    dir.set_io_yields(true);
    let (log, _) = open(&dir);
    let before = dir.sync_count();
    let results = block_on(futures_util::future::join_all(
        (0..10).map(|i| log.append(put(&format!("k{i}"), "v", Precondition::Absent))),
    ));
    assert_eq!(dir.sync_count() - before, 1, "one batch, one sync");
    let revisions: Vec<u64> = results.into_iter().map(|r| r.unwrap().revision.0).collect();
    assert_eq!(revisions, (1..=10).collect::<Vec<_>>());

    // batch_records_max bounds a batch.
    let dir = MemoryDirectory::new();
    dir.set_io_yields(true);
    let (log, _) = block_on(EmbeddedLog::open(dir.clone(), LogOptions { batch_records_max: 4, ..options() })).unwrap();
    let before = dir.sync_count();
    let results = block_on(futures_util::future::join_all(
        (0..10).map(|i| log.append(put(&format!("k{i}"), "v", Precondition::None))),
    ));
    assert!(results.iter().all(|r| r.is_ok()));
    assert_eq!(dir.sync_count() - before, 3);
}

#[test]
fn conflicting_appends_in_one_batch_are_ordered() {
    let dir = MemoryDirectory::new();
    dir.set_io_yields(true);
    let (log, _) = open(&dir);
    let results = block_on(futures_util::future::join_all(
        (0..3).map(|i| log.append(put("same", &format!("v{i}"), Precondition::Absent))),
    ));
    assert_eq!(results[0].as_ref().map(|e| e.revision), Ok(Revision(1)));
    assert_eq!(results[1], Err(AppendError::Conflict { current: Some(Revision(1)) }));
    assert_eq!(results[2], Err(AppendError::Conflict { current: Some(Revision(1)) }));
}

#[test]
fn failed_sync_makes_the_log_unavailable() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    block_on(log.append(put("a", "1", Precondition::None))).unwrap();
    dir.fail_next_sync();
    let failed = block_on(log.append(put("b", "2", Precondition::None)));
    assert!(matches!(failed, Err(AppendError::Unavailable(_))), "{failed:?}");
    assert_eq!(log.committed_revision(), Revision(1));
    assert!(log.read_committed(Revision::ZERO, 10).unwrap().len() == 1);
    let later = block_on(log.append(put("c", "3", Precondition::None)));
    assert!(matches!(later, Err(AppendError::Unavailable(_))));
    assert!(matches!(block_on(log.wait_committed(Revision(1))), Err(LogError::Closed)));
    block_on(log.close()).unwrap();
    // The synced entry survives any crash.
    dir.crash(3);
    let (_, recovered) = open(&dir);
    assert!(recovered.revision >= Revision(1));
}

#[test]
fn failed_write_makes_the_log_unavailable() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    dir.fail_next_write();
    assert!(matches!(block_on(log.append(put("a", "1", Precondition::None))), Err(AppendError::Unavailable(_))));
    assert_eq!(log.committed_revision(), Revision::ZERO);
}

#[test]
fn torn_tail_is_truncated_and_appends_continue() {
    for seed in 0..40 {
        let dir = MemoryDirectory::new();
        dir.set_io_yields(true);
        let (log, _) = open(&dir);
        block_on(log.append(put("a", "acked", Precondition::None))).unwrap();
        // Start a batch and stop it mid-write.
        let mut pending = Box::pin(log.append(put("b", &"z".repeat(5000), Precondition::None)));
        for _ in 0..(seed % 4) {
            let _ = block_on(poll_once(&mut pending));
        }
        drop(pending);
        drop(log);
        dir.crash(seed);
        let (log, recovered) = open(&dir);
        assert!(recovered.revision == Revision(1) || recovered.revision == Revision(2));
        // The torn tail and old padding were cut off (so stale frames past it
        // can never be read as data after later appends).
        let last = segments(&dir).pop().unwrap();
        let contents = Bytes::from(dir.contents(&last).unwrap());
        let scan = scan_segment(&last, &contents, true).unwrap();
        assert_eq!(scan.valid_len, contents.len() as u64);
        assert_eq!(recovered.live[0].value, b("acked"));
        let next = block_on(log.append(put("c", "after", Precondition::None))).unwrap();
        assert_eq!(next.revision, recovered.revision.next());
        block_on(log.close()).unwrap();
        let (_, again) = open(&dir);
        assert_eq!(again.revision, next.revision);
    }
}

#[test]
fn frames_after_a_torn_frame_are_never_replayed() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    fill(&log, 3, 10);
    drop(log);
    let name = segment_name(Revision(1));
    let mut data = dir.contents(&name).unwrap();
    let second = match read_frame(&data, 0) {
        FrameRead::Frame { next_offset, .. } => next_offset,
        other => panic!("{other:?}"),
    };
    data[second + FRAME_HEADER_BYTES + 2] ^= 0xff;
    dir.overwrite(&name, data);
    let (log, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(1), "frame 3 is valid but follows a torn one");
    let next = block_on(log.append(put("x", "y", Precondition::None))).unwrap();
    assert_eq!(next.revision, Revision(2));
    drop(log);
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(2));
}

fn fill(log: &EmbeddedLog<MemoryDirectory>, count: usize, value_bytes: usize) {
    block_on(async {
        for i in 0..count {
            log.append(put(&format!("k{}", i % 7), &"v".repeat(value_bytes), Precondition::None)).await.unwrap();
        }
    });
}

fn segments(dir: &MemoryDirectory) -> Vec<String> {
    block_on(dir.list()).unwrap().into_iter().filter(|n| parse_segment_name(n).is_some()).collect()
}

#[test]
fn segments_rotate() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    fill(&log, 20, 3000);
    let names = segments(&dir);
    assert!(names.len() >= 4, "{names:?}");
    for name in &names {
        assert!(dir.contents(name).unwrap().len() as u64 <= options().segment_bytes_max + 4096);
    }
    drop(log);
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(20));
}

#[test]
fn corruption_before_the_last_segment_is_an_error() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    fill(&log, 20, 3000);
    drop(log);
    let first = segments(&dir)[0].clone();
    let mut data = dir.contents(&first).unwrap();
    data[100] ^= 0xff;
    dir.overwrite(&first, data);
    let result = block_on(EmbeddedLog::open(dir.clone(), options()));
    assert!(matches!(result, Err(LogError::Corrupt { ref path, .. }) if *path == first));
}

#[test]
fn a_missing_segment_is_a_revision_gap() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    fill(&log, 20, 3000);
    drop(log);
    let names = segments(&dir);
    block_on(dir.remove(&names[1])).unwrap();
    let result = block_on(EmbeddedLog::open(dir.clone(), options()));
    assert!(matches!(result, Err(LogError::Corrupt { ref reason, .. }) if reason.contains("gap")), "{result:?}");
}

#[test]
fn snapshots_cover_and_delete_old_segments() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    fill(&log, 20, 3000);
    let before = segments(&dir).len();
    assert!(block_on(log.snapshot_if_due()).unwrap());
    assert!(!block_on(log.snapshot_if_due()).unwrap(), "not due again yet");
    let after = segments(&dir);
    assert_eq!(after.len(), 1, "only the segment being written is left of {before}");
    fill(&log, 3, 10);
    drop(log);
    let (log, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(23));
    assert_eq!(recovered.live.len(), 7);
    fill(&log, 10, 3000);
    assert!(block_on(log.snapshot_if_due()).unwrap());
    let snapshots: Vec<String> =
        block_on(dir.list()).unwrap().into_iter().filter(|n| parse_snapshot_name(n).is_some()).collect();
    assert_eq!(snapshots, vec![snapshot::snapshot_name(Revision(33))]);
    drop(log);
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(33));
}

/// Keys and values of many sizes, created, replaced and deleted, with the
/// model of the state after each append.
fn churn(log: &EmbeddedLog<MemoryDirectory>, model: &mut BTreeMap<Bytes, (Bytes, Revision, Revision)>, rounds: usize) {
    block_on(async {
        for i in 0..rounds {
            let key = b(&format!("/key/{:03}", (i * 7) % 23));
            let current = model.get(&key).cloned();
            if i % 5 == 4 {
                if let Some((_, _, modified)) = current {
                    let entry = log.append(delete(&String::from_utf8_lossy(&key), Precondition::ModRevision(modified)));
                    entry.await.unwrap();
                    model.remove(&key);
                    continue;
                }
            }
            let value = Bytes::from(vec![b'a' + (i % 26) as u8; (i * 131) % 2500]);
            let proposal = Proposal {
                key: key.clone(),
                precondition: Precondition::None,
                operation: Operation::Put(value.clone()),
            };
            let entry = log.append(proposal).await.unwrap();
            let created = current.map_or(entry.revision, |(_, created, _)| created);
            model.insert(key, (value, created, entry.revision));
        }
    });
}

fn live_of_model(model: &BTreeMap<Bytes, (Bytes, Revision, Revision)>) -> Vec<KeyValue> {
    model
        .iter()
        .map(|(key, (value, created, modified))| KeyValue {
            key: key.clone(),
            value: value.clone(),
            create_revision: *created,
            mod_revision: *modified,
            cached: Bytes::new(),
        })
        .collect()
}

#[test]
fn merged_snapshots_hold_exactly_the_live_state_in_any_number_of_ranges() {
    for merge_bytes_max in [1, 700, 5000, 1 << 20] {
        let dir = MemoryDirectory::new();
        let options = LogOptions { snapshot_merge_bytes_max: merge_bytes_max, ..options() };
        let (log, _) = block_on(EmbeddedLog::open(dir.clone(), options.clone())).unwrap();
        let mut model = BTreeMap::new();
        // Several snapshots, each merging the previous one with its segments.
        for _ in 0..4 {
            churn(&log, &mut model, 40);
            assert!(block_on(log.snapshot_if_due()).unwrap());
            let snapshot = snapshot::snapshot_name(log.committed_revision());
            let data = Bytes::from(dir.contents(&snapshot).unwrap());
            let (revision, live) = snapshot::read_snapshot(&snapshot, &data).unwrap();
            assert_eq!(revision, log.committed_revision());
            assert_eq!(live, live_of_model(&model), "budget {merge_bytes_max}");
        }
        churn(&log, &mut model, 7);
        drop(log);
        let (_, recovered) = block_on(EmbeddedLog::open(dir.clone(), options)).unwrap();
        assert_eq!(recovered.live, live_of_model(&model), "budget {merge_bytes_max}");
    }
}

#[test]
fn a_crash_at_any_point_of_a_snapshot_merge_loses_nothing() {
    // Find how many polls a merge takes, then crash after each prefix of them.
    let polls_needed = {
        let dir = MemoryDirectory::new();
        dir.set_io_yields(true);
        let (log, _) = open(&dir);
        let mut model = BTreeMap::new();
        churn(&log, &mut model, 60);
        let mut snapshot = Box::pin(log.snapshot_if_due());
        let mut polls = 0;
        loop {
            polls += 1;
            if let Some(result) = block_on(poll_once(&mut snapshot)) {
                assert!(result.unwrap());
                break polls;
            }
        }
    };
    assert!(polls_needed > 10, "the merge yields on its reads and writes ({polls_needed} polls)");
    for crash_after in 0..=polls_needed {
        for seed in [1u64, 2, 3] {
            let dir = MemoryDirectory::new();
            dir.set_io_yields(true);
            let (log, _) = open(&dir);
            let mut model = BTreeMap::new();
            churn(&log, &mut model, 60);
            // A first snapshot, so that the one interrupted is a merge with a base.
            assert!(block_on(log.snapshot_if_due()).unwrap());
            churn(&log, &mut model, 30);
            let mut snapshot = Box::pin(log.snapshot_if_due());
            for _ in 0..crash_after {
                if block_on(poll_once(&mut snapshot)).is_some() {
                    break;
                }
            }
            drop(snapshot);
            drop(log);
            dir.crash(seed);
            let (log, recovered) = open(&dir);
            assert_eq!(recovered.revision, Revision(90), "after {crash_after} polls, seed {seed}");
            assert_eq!(recovered.live, live_of_model(&model), "after {crash_after} polls, seed {seed}");
            // Recovery after it: appends and the next merge work.
            churn(&log, &mut model, 10);
            assert!(block_on(log.snapshot_if_due()).unwrap());
            drop(log);
            let (_, recovered) = open(&dir);
            assert_eq!(recovered.live, live_of_model(&model), "after {crash_after} polls, seed {seed}");
        }
    }
}

#[test]
fn a_format_1_snapshot_is_still_read_and_merged() {
    // Format 1: records right after the header frame.
    let dir = MemoryDirectory::new();
    let live = vec![
        KeyValue {
            key: b("/a"),
            value: b("1"),
            create_revision: Revision(1),
            mod_revision: Revision(1),
            cached: Bytes::new(),
        },
        KeyValue {
            key: b("/b"),
            value: b("2"),
            create_revision: Revision(2),
            mod_revision: Revision(3),
            cached: Bytes::new(),
        },
    ];
    let mut builder = flatbuffers::FlatBufferBuilder::new();
    let mut data = Vec::new();
    let header = record::SnapshotHeaderFields {
        revision: Revision(3),
        record_count: 2,
        format_version: record::SNAPSHOT_FORMAT_VERSION_1,
    };
    record::push_frame(&mut data, record::encode_snapshot_header(&mut builder, header));
    for kv in &live {
        let payload = record::encode_record(
            &mut builder,
            kv.mod_revision,
            &kv.key,
            &Operation::Put(kv.value.clone()),
            kv.create_revision,
        );
        record::push_frame(&mut data, payload);
    }
    let name = snapshot::snapshot_name(Revision(3));
    block_on(async {
        dir.open(&name).await.unwrap();
        dir.sync_directory().await.unwrap();
    });
    dir.overwrite(&name, data);
    let (log, recovered) = open(&dir);
    assert_eq!((recovered.revision, &recovered.live), (Revision(3), &live));
    let mut model: BTreeMap<Bytes, (Bytes, Revision, Revision)> =
        live.iter().map(|kv| (kv.key.clone(), (kv.value.clone(), kv.create_revision, kv.mod_revision))).collect();
    churn(&log, &mut model, 12);
    assert!(block_on(log.snapshot_if_due()).unwrap());
    drop(log);
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.live, live_of_model(&model));
}

#[test]
fn a_clean_close_leaves_one_snapshot_that_the_next_start_reads_alone() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    let mut model = BTreeMap::new();
    churn(&log, &mut model, 30);
    block_on(log.close()).unwrap();
    let names = block_on(dir.list()).unwrap();
    assert_eq!(names, vec![snapshot::snapshot_name(Revision(30))], "the snapshot covers every segment");
    let (log, recovered) = open(&dir);
    assert_eq!((recovered.revision, recovered.live), (Revision(30), live_of_model(&model)));
    churn(&log, &mut model, 5);
    drop(log);
    let (_, recovered) = open(&dir);
    assert_eq!((recovered.revision, recovered.live), (Revision(35), live_of_model(&model)));
}

#[test]
fn tail_reads_release_and_backpressure() {
    let dir = MemoryDirectory::new();
    let (log, _) = block_on(EmbeddedLog::open(dir.clone(), LogOptions { tail_entries_max: 3, ..options() })).unwrap();
    fill(&log, 3, 1);
    let entries = log.read_committed(Revision::ZERO, 10).unwrap();
    assert_eq!(entries.iter().map(|e| e.revision.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(log.read_committed(Revision(1), 1).unwrap()[0].revision, Revision(2));
    assert!(log.read_committed(Revision(3), 10).unwrap().is_empty());
    let mut fourth = Box::pin(log.append(put("k", "4", Precondition::None)));
    assert!(block_on(poll_once(&mut fourth)).is_none(), "waits for release");
    assert!(block_on(poll_once(&mut fourth)).is_none());
    log.release(Revision(2));
    assert_eq!(block_on(fourth).unwrap().revision, Revision(4));
    assert!(matches!(log.read_committed(Revision(1), 10), Err(LogError::Compacted { .. })));
    assert_eq!(log.read_committed(Revision(2), 10).unwrap().len(), 2);
}

#[test]
fn wait_committed_and_close() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    let mut waiting = Box::pin(log.wait_committed(Revision::ZERO));
    assert!(block_on(poll_once(&mut waiting)).is_none());
    fill(&log, 1, 1);
    assert!(block_on(waiting).is_ok());
    let mut later = Box::pin(log.wait_committed(Revision(1)));
    assert!(block_on(poll_once(&mut later)).is_none());
    block_on(log.close()).unwrap();
    assert!(matches!(block_on(later), Err(LogError::Closed)));
    assert!(matches!(block_on(log.append(put("a", "1", Precondition::None))), Err(AppendError::Unavailable(_))));
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.revision, Revision(1));
}

#[test]
fn a_dropped_leader_hands_its_batch_on() {
    let dir = MemoryDirectory::new();
    dir.set_io_yields(true);
    let (log, _) = open(&dir);
    let mut leader = Box::pin(log.append(put("a", "1", Precondition::None)));
    let mut follower = Box::pin(log.append(put("b", "2", Precondition::None)));
    for _ in 0..3 {
        assert!(block_on(poll_once(&mut leader)).is_none());
        let _ = block_on(poll_once(&mut follower));
    }
    drop(leader); // mid-write: the batch holding "a" is in flight
    let entry = block_on(follower).unwrap();
    let committed = log.committed_revision();
    assert!(committed >= entry.revision);
    block_on(log.close()).unwrap();
    let (_, recovered) = open(&dir);
    assert_eq!(recovered.revision, committed);
    assert!(recovered.live.iter().any(|kv| kv.key == b("b")));
}

// ---------------------------------------------------------------------------
// Model-based test.

#[derive(Clone, Debug)]
enum CondSpec {
    None,
    Absent,
    Current,
    Stale,
}

#[derive(Clone, Debug)]
struct OpSpec {
    key: u8,
    delete: bool,
    value_bytes: usize,
    cond: CondSpec,
}

#[derive(Clone, Debug)]
struct Round {
    ops: Vec<OpSpec>,
    snapshot: bool,
    /// Stop driving after this many polls, then crash with this seed.
    crash: Option<(usize, u64)>,
    /// Close and reopen cleanly after the round.
    reopen: bool,
}

fn op_strategy() -> impl Strategy<Value = OpSpec> {
    let size = prop_oneof![
        6 => 0usize..64,
        3 => 200usize..1500,
        2 => 3000usize..6000, // rotation-sized
        1 => 9000usize..9500, // too large
    ];
    let cond =
        prop_oneof![Just(CondSpec::None), Just(CondSpec::Absent), Just(CondSpec::Current), Just(CondSpec::Stale),];
    (0u8..4, prop::bool::weighted(0.25), size, cond).prop_map(|(key, delete, value_bytes, cond)| OpSpec {
        key,
        delete,
        value_bytes,
        cond,
    })
}

fn round_strategy() -> impl Strategy<Value = Round> {
    (
        prop::collection::vec(op_strategy(), 1..7),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.3, (0usize..40, any::<u64>())),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(ops, snapshot, crash, reopen)| Round { ops, snapshot, crash, reopen })
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ModelKey {
    value: Bytes,
    create_revision: Revision,
    mod_revision: Revision,
}

type ModelState = BTreeMap<Bytes, ModelKey>;

/// What the log must answer to one append, given the state before it.
fn simulate(
    state: &mut ModelState,
    last: &mut Revision,
    proposal: &Proposal,
    known: &Option<KnownValue>,
) -> Result<Entry, AppendError> {
    if let Operation::Put(value) = &proposal.operation {
        if value.len() > 8000 {
            return Err(AppendError::TooLarge { size_bytes: 0, limit_bytes: 0 });
        }
    }
    let current = state.get(&proposal.key).cloned();
    let current_revision = current.as_ref().map(|c| c.mod_revision);
    let holds = match proposal.precondition {
        Precondition::None => true,
        Precondition::Absent => current.is_none(),
        Precondition::ModRevision(r) => current_revision == Some(r),
    };
    if !holds || (proposal.operation == Operation::Delete && current.is_none()) {
        return Err(AppendError::Conflict { current: current_revision });
    }
    let revision = last.next();
    *last = revision;
    let create_revision = current.as_ref().map_or(revision, |c| c.create_revision);
    match &proposal.operation {
        Operation::Put(value) => {
            state.insert(
                proposal.key.clone(),
                ModelKey { value: value.clone(), create_revision, mod_revision: revision },
            );
        }
        Operation::Delete => {
            state.remove(&proposal.key);
        }
    }
    Ok(Entry {
        revision,
        key: proposal.key.clone(),
        operation: proposal.operation.clone(),
        create_revision,
        // The writer's value, when it is of the revision replaced.
        previous: current.map(|c| PreviousValue {
            mod_revision: c.mod_revision,
            create_revision: c.create_revision,
            value: known
                .as_ref()
                .filter(|k| k.mod_revision == c.mod_revision)
                .map(|k| k.value.clone())
                .unwrap_or_default(),
        }),
    })
}

fn same_outcome(actual: &Result<Entry, AppendError>, expected: &Result<Entry, AppendError>) -> bool {
    match (actual, expected) {
        (Err(AppendError::TooLarge { .. }), Err(AppendError::TooLarge { .. })) => true,
        _ => actual == expected,
    }
}

enum Outcome {
    Append(Result<Entry, AppendError>),
    Snapshot(Result<bool, LogError>),
}

type BoxedOutcome<'a> = Pin<Box<dyn Future<Output = Outcome> + 'a>>;

/// Polls the futures round-robin (noop waker: every wake-up in the log is
/// in-process) until all finish or `budget` polls are spent.
fn drive(futures: &mut [Option<BoxedOutcome<'_>>], results: &mut [Option<Outcome>], budget: usize) -> bool {
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut polls = 0;
    loop {
        let mut pending = false;
        for (future, result) in futures.iter_mut().zip(results.iter_mut()) {
            if let Some(f) = future {
                if polls >= budget {
                    return false;
                }
                polls += 1;
                match f.as_mut().poll(&mut cx) {
                    Poll::Ready(outcome) => {
                        *result = Some(outcome);
                        *future = None;
                    }
                    Poll::Pending => pending = true,
                }
            }
        }
        if !pending {
            return true;
        }
    }
}

fn live_of(state: &ModelState) -> Vec<KeyValue> {
    state
        .iter()
        .map(|(key, k)| KeyValue {
            key: key.clone(),
            value: k.value.clone(),
            create_revision: k.create_revision,
            mod_revision: k.mod_revision,
            cached: Bytes::new(),
        })
        .collect()
}

fn run_model(rounds: Vec<Round>, alignment: u64) -> Result<(), TestCaseError> {
    let dir = MemoryDirectory::with_alignment(alignment);
    dir.set_io_yields(true);
    let (mut log, recovered) = open(&dir);
    prop_assert_eq!(recovered.revision, Revision::ZERO);
    // Model states by revision: states[r] is the state at revision r.
    let mut states: Vec<ModelState> = vec![ModelState::new()];
    let keys = ["/a", "/b/c", "/d", "/eeeeeeeeeeeeeeeeeeeeeeeeeee"];
    for (round_number, round) in rounds.into_iter().enumerate() {
        let last_committed = Revision(states.len() as u64 - 1);
        let mut state = states[last_committed.0 as usize].clone();
        let proposals: Vec<(Proposal, Option<KnownValue>)> = round
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| {
                let key = Bytes::from_static(keys[op.key as usize].as_bytes());
                let current = state.get(&key).map(|k| k.mod_revision);
                let precondition = match op.cond {
                    CondSpec::None => Precondition::None,
                    CondSpec::Absent => Precondition::Absent,
                    CondSpec::Current => current.map_or(Precondition::Absent, Precondition::ModRevision),
                    CondSpec::Stale => Precondition::ModRevision(Revision(current.map_or(1, |r| r.0 + 1))),
                };
                let operation = if op.delete {
                    Operation::Delete
                } else {
                    let fill = b'a' + ((round_number + i) % 26) as u8;
                    Operation::Put(Bytes::from(vec![fill; op.value_bytes]))
                };
                // What the writer read before the round (stale once an
                // earlier append of the round changed the key).
                let known =
                    state.get(&key).map(|k| KnownValue { mod_revision: k.mod_revision, value: k.value.clone() });
                (Proposal { key, precondition, operation }, known)
            })
            .collect();
        // The expected outcome of each, in order.
        let mut last = last_committed;
        let mut expected = Vec::new();
        for (proposal, known) in &proposals {
            expected.push(simulate(&mut state, &mut last, proposal, known));
        }
        // Rebuild states for each newly assigned revision.
        let mut replay = states[last_committed.0 as usize].clone();
        for entry in expected.iter().flatten() {
            {
                match &entry.operation {
                    Operation::Put(value) => {
                        replay.insert(
                            entry.key.clone(),
                            ModelKey {
                                value: value.clone(),
                                create_revision: entry.create_revision,
                                mod_revision: entry.revision,
                            },
                        );
                    }
                    Operation::Delete => {
                        replay.remove(&entry.key);
                    }
                }
                states.push(replay.clone());
            }
        }
        let assigned_last = Revision(states.len() as u64 - 1);

        let log_ref = &log;
        let mut futures: Vec<Option<BoxedOutcome<'_>>> = proposals
            .iter()
            .cloned()
            .map(|(p, known)| {
                Some(Box::pin(async move { Outcome::Append(log_ref.append_known(p, known).await) }) as BoxedOutcome<'_>)
            })
            .collect();
        if round.snapshot {
            futures.push(Some(Box::pin(async move { Outcome::Snapshot(log_ref.snapshot_if_due().await) })));
        }
        let mut results: Vec<Option<Outcome>> = futures.iter().map(|_| None).collect();
        let budget = round.crash.map_or(1_000_000, |(polls, _)| polls);
        let finished = drive(&mut futures, &mut results, budget);
        if round.crash.is_none() {
            prop_assert!(finished, "round did not finish: deadlock");
        }
        drop(futures);
        let mut max_acked = last_committed;
        for (i, result) in results.iter().enumerate() {
            match result {
                Some(Outcome::Append(actual)) => {
                    prop_assert!(
                        same_outcome(actual, &expected[i]),
                        "append {} of round {}: got {:?}, expected {:?}",
                        i,
                        round_number,
                        actual,
                        expected[i]
                    );
                    if let Ok(entry) = actual {
                        max_acked = max_acked.max(entry.revision);
                    }
                }
                Some(Outcome::Snapshot(result)) => {
                    prop_assert!(result.is_ok(), "snapshot failed: {:?}", result);
                }
                None => {}
            }
        }
        if let Some((_, seed)) = round.crash {
            drop(log);
            dir.crash(seed);
            let (reopened, recovered) = block_on(EmbeddedLog::open(dir.clone(), options()))
                .map_err(|e| TestCaseError::fail(format!("reopen after crash: {e}")))?;
            prop_assert!(recovered.revision >= max_acked, "lost acknowledged entries");
            prop_assert!(recovered.revision <= assigned_last, "replayed an entry never assigned");
            prop_assert_eq!(&recovered.live, &live_of(&states[recovered.revision.0 as usize]));
            states.truncate(recovered.revision.0 as usize + 1);
            log = reopened;
        } else {
            prop_assert_eq!(log.committed_revision(), assigned_last);
            // The tail holds exactly this round's entries.
            let tail =
                log.read_committed(last_committed, usize::MAX).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let acked: Vec<Entry> = expected.iter().filter_map(|r| r.clone().ok()).collect();
            prop_assert_eq!(tail, acked);
            log.release(log.committed_revision());
            if round.reopen {
                block_on(log.close()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                drop(log);
                let (reopened, recovered) = open(&dir);
                prop_assert_eq!(recovered.revision, assigned_last);
                prop_assert_eq!(&recovered.live, &live_of(&states[assigned_last.0 as usize]));
                log = reopened;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn model_random_rounds_with_crashes(rounds in prop::collection::vec(round_strategy(), 1..16)) {
        run_model(rounds, 4096)?;
    }

    #[test]
    fn model_random_rounds_small_blocks(rounds in prop::collection::vec(round_strategy(), 1..16)) {
        run_model(rounds, 512)?;
    }
}

/// A test annotator: `len=N` of the value, counting the records it is asked about.
struct LengthNotes {
    asked: Cell<u64>,
}

impl SnapshotAnnotator for LengthNotes {
    fn annotate(&self, _key: &[u8], value: &[u8], cached: &[u8]) -> Option<Vec<u8>> {
        self.asked.set(self.asked.get() + 1);
        let note = format!("len={}", value.len()).into_bytes();
        (cached != note.as_slice()).then_some(note)
    }
}

/// Snapshots keep what the annotator gives for every record (segment records
/// and base records alike), recovery hands it back beside the value, and a
/// record whose bytes are current is copied as it is; a snapshot without
/// them is rewritten at close even with nothing new; without an annotator
/// the bytes a snapshot has survive later merges.
#[test]
fn snapshots_keep_the_annotators_bytes() {
    let dir = MemoryDirectory::new();
    let (log, _) = open(&dir);
    block_on(async {
        for (key, value) in [("a", "1"), ("b", "22"), ("c", "333")] {
            log.append(put(key, value, Precondition::Absent)).await.unwrap();
        }
        // A snapshot before any annotator: no bytes.
        log.close().await.unwrap();
    });
    let (log, recovered) = open(&dir);
    assert!(recovered.live.iter().all(|kv| kv.cached.is_empty()));
    let snapshot = snapshot::snapshot_name(Revision(3));
    let written = block_on(dir.read_all(&snapshot)).unwrap();
    // Closed without an annotator and nothing new: the snapshot stays.
    block_on(log.close()).unwrap();
    assert_eq!(block_on(dir.read_all(&snapshot)).unwrap(), written);
    // With one, it is rewritten at the same revision, once.
    let (log, _) = open(&dir);
    let notes = Rc::new(LengthNotes { asked: Cell::new(0) });
    log.set_annotator(notes.clone());
    block_on(log.close()).unwrap();
    assert_eq!(notes.asked.get(), 3);
    assert_eq!(block_on(dir.list()).unwrap(), vec![snapshot.clone()]);
    let (log, recovered) = open(&dir);
    let cached: Vec<&[u8]> = recovered.live.iter().map(|kv| &kv.cached[..]).collect();
    assert_eq!(cached, vec![&b"len=1"[..], b"len=2", b"len=3"]);
    let notes = Rc::new(LengthNotes { asked: Cell::new(0) });
    log.set_annotator(notes.clone());
    block_on(log.close()).unwrap();
    assert_eq!(notes.asked.get(), 0, "annotated: not rewritten");
    let (log, _) = open(&dir);
    log.set_annotator(notes.clone());
    block_on(async {
        log.append(put("b", "4444", Precondition::None)).await.unwrap();
        log.append(delete("c", Precondition::None)).await.unwrap();
        log.append(put("d", "55555", Precondition::Absent)).await.unwrap();
        log.close().await.unwrap();
    });
    assert_eq!(notes.asked.get(), 3, "a, b and d: one question per record written");
    let (log, recovered) = open(&dir);
    let seen: Vec<(&[u8], &[u8], &[u8])> =
        recovered.live.iter().map(|kv| (&kv.key[..], &kv.value[..], &kv.cached[..])).collect();
    assert_eq!(
        seen,
        vec![(&b"a"[..], &b"1"[..], &b"len=1"[..]), (b"b", b"4444", b"len=4"), (b"d", b"55555", b"len=5")]
    );
    // Without an annotator, the next merge copies the records (bytes kept).
    block_on(async {
        log.append(put("e", "6", Precondition::Absent)).await.unwrap();
        log.close().await.unwrap();
    });
    let (_log, recovered) = open(&dir);
    let cached: Vec<&[u8]> = recovered.live.iter().map(|kv| &kv.cached[..]).collect();
    assert_eq!(cached, vec![&b"len=1"[..], b"len=4", b"len=5", b""]);
}
