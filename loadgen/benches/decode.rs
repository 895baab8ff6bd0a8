//! The watch receive path's cost per event, on one core, without the network: the bytes of
//! real Shardline pod events (`shardline-pod-event.json`, captured from a watch, with the
//! resourceVersion, stamp and padding filled in per event) in the body chunks a watch client
//! gets, through the previous receive path and the current one:
//!
//! * `previous`: the path before `decode.rs` (copied here to compare in one run): every chunk
//!   appended to a `BytesMut`, newlines found byte by byte, a substring search for the type,
//!   resourceVersion, deletionTimestamp and stamp, a `Vec` per event, a clock read and a shared
//!   counter update per event;
//! * `scan`: `decode::Lines` (events as slices of the chunk; only split events copied) and
//!   `decode::scan_kube_event` (a structural scan), one clock read and counter update per chunk.
//!
//! Both record every timed event in a `metrics::Latency` histogram, as a watcher does. Chunk
//! shapes: one event per chunk (a watcher getting one event per write), and 64 events coalesced
//! by the server (`watch_frame_events_max`) cut into 16 KiB HTTP/2 DATA frames, so events split
//! across frames. Event sizes: 1.8 KB (the captured pod without padding) and 2.8 KB (the pod
//! loadgen's informers scenario writes, `pod_bytes = 1500`). Throughput is events per second.
//!
//! `cargo bench -p loadgen --bench decode`
//!
//! Instructions per event, repeatable on a busy machine: with `DECODE_PATH=previous|scan`
//! (and `DECODE_SHAPE=one_per_chunk|h2_data_frames`, `DECODE_ROUNDS=N`, 2.8 KB events) the
//! binary runs that path N times over the 64 events and exits, for `valgrind --tool=callgrind`;
//! per event = (instructions at N = 300 − at N = 100) / (200 × 64), which cancels start-up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use loadgen::decode::{scan_kube_event, Lines};
use loadgen::metrics::Latency;
use loadgen::target::{decode_kube_event, Seen};

const TEMPLATE: &str = include_str!("shardline-pod-event.json");
/// HTTP/2's default SETTINGS_MAX_FRAME_SIZE.
const DATA_FRAME_BYTES: usize = 16_384;
const EVENTS: usize = 64;

fn unix_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// `EVENTS` watch events (newline-terminated) with padding `pad` bytes long.
fn events(pad: usize) -> Vec<Vec<u8>> {
    let stamp = unix_ns();
    (0..EVENTS)
        .map(|i| {
            let e = TEMPLATE
                .trim_end()
                .replace("\"RV\"", &format!("\"{}\"", 1000 + i))
                .replace("\"STAMP\"", &format!("\"{}\"", stamp + i as u64))
                .replace("PADDING", &"x".repeat(pad));
            let mut b = e.into_bytes();
            b.push(b'\n');
            b
        })
        .collect()
}

fn one_per_chunk(events: &[Vec<u8>]) -> Vec<Bytes> {
    events.iter().map(|e| Bytes::copy_from_slice(e)).collect()
}

fn coalesced_in_data_frames(events: &[Vec<u8>]) -> Vec<Bytes> {
    let all = Bytes::from(events.concat());
    (0..all.len()).step_by(DATA_FRAME_BYTES).map(|at| all.slice(at..(at + DATA_FRAME_BYTES).min(all.len()))).collect()
}

/// The receive path before `decode.rs`, as it was in `run.rs` and `target.rs`.
mod previous {
    use super::*;

    fn scan(line: &[u8]) -> Option<Seen> {
        let rest = line.strip_prefix(b"{\"type\":\"")?;
        let end = memchr::memchr(b'"', rest)?;
        let kind = &rest[..end];
        let string_after = |key: &[u8]| -> Option<u64> {
            let at = memchr::memmem::find(line, key)? + key.len();
            let len = memchr::memchr(b'"', &line[at..])?;
            std::str::from_utf8(&line[at..at + len]).ok()?.parse().ok()
        };
        let revision = string_after(b"\"resourceVersion\":\"");
        match kind {
            b"ADDED" | b"MODIFIED" => Some(Seen {
                stamp_ns: if memchr::memmem::find(line, b"\"deletionTimestamp\":").is_some() {
                    None
                } else {
                    string_after(b"\"loadgen.shardline.dev/sent-unix-ns\":\"")
                },
                mine: true,
                revision,
                error: None,
            }),
            b"DELETED" => Some(Seen { stamp_ns: None, mine: true, revision, error: None }),
            b"BOOKMARK" => Some(Seen { revision, ..Default::default() }),
            _ => None,
        }
    }

    fn parse_watch_line(line: &[u8]) -> anyhow::Result<Vec<Seen>> {
        match scan(line) {
            Some(s) => Ok(vec![s]),
            None => Ok(vec![decode_kube_event(line)?]),
        }
    }

    pub fn receive(chunks: &[Bytes], events: &AtomicU64, local: &mut Latency) {
        let mut buf = BytesMut::new();
        for data in chunks {
            buf.extend_from_slice(data);
            while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
                let line = buf.split_to(pos + 1);
                let line = &line[..pos];
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let seen = parse_watch_line(line).expect("valid event");
                let now = unix_ns();
                for s in seen {
                    if s.mine {
                        events.fetch_add(1, Ordering::Relaxed);
                        if let Some(stamp) = s.stamp_ns {
                            local.record(Duration::from_nanos(now.saturating_sub(stamp)));
                        }
                    }
                }
            }
        }
    }
}

fn scan_receive(chunks: &[Bytes], events: &AtomicU64, local: &mut Latency) {
    let mut lines = Lines::default();
    for data in chunks {
        let now = unix_ns();
        let mut n = 0;
        lines
            .feed(data, |line| {
                let s = scan_kube_event(line).expect("usual event");
                if s.mine {
                    n += 1;
                    if let Some(stamp) = s.stamp_ns {
                        local.record(Duration::from_nanos(now.saturating_sub(stamp)));
                    }
                }
            })
            .expect("events within bounds");
        events.fetch_add(n, Ordering::Relaxed);
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("watch_receive");
    g.throughput(Throughput::Elements(EVENTS as u64));
    for (size, pad) in [("1.8KB", 0), ("2.8KB", 1008)] {
        let evs = events(pad);
        for (shape, chunks) in
            [("one_per_chunk", one_per_chunk(&evs)), ("h2_data_frames", coalesced_in_data_frames(&evs))]
        {
            let counter = AtomicU64::new(0);
            let mut local = Latency::default();
            // Both paths read the same events the same way.
            previous::receive(&chunks, &counter, &mut local);
            scan_receive(&chunks, &counter, &mut local);
            assert_eq!(counter.load(Ordering::Relaxed), 2 * EVENTS as u64);
            assert_eq!(local.len(), 2 * EVENTS as u64);
            let id = format!("{size}/{shape}");
            g.bench_with_input(BenchmarkId::new("previous", &id), &chunks, |b, chunks| {
                b.iter(|| previous::receive(chunks, &counter, &mut local))
            });
            g.bench_with_input(BenchmarkId::new("scan", &id), &chunks, |b, chunks| {
                b.iter(|| scan_receive(chunks, &counter, &mut local))
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}

/// One path, `DECODE_ROUNDS` times, without criterion (for callgrind).
fn rounds(path: &str) {
    let shape = std::env::var("DECODE_SHAPE").unwrap_or_else(|_| "h2_data_frames".into());
    let n: usize = std::env::var("DECODE_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(100);
    let evs = events(1008);
    let chunks = match shape.as_str() {
        "one_per_chunk" => one_per_chunk(&evs),
        "h2_data_frames" => coalesced_in_data_frames(&evs),
        other => panic!("DECODE_SHAPE {other:?}: one_per_chunk or h2_data_frames"),
    };
    let counter = AtomicU64::new(0);
    let mut local = Latency::default();
    for _ in 0..n {
        match path {
            "previous" => previous::receive(&chunks, &counter, &mut local),
            "scan" => scan_receive(&chunks, &counter, &mut local),
            other => panic!("DECODE_PATH {other:?}: previous or scan"),
        }
    }
    assert_eq!(counter.load(Ordering::Relaxed), (n * EVENTS) as u64);
    println!("{path} {shape}: {} events, {} timed", counter.load(Ordering::Relaxed), local.len());
}

fn main() {
    if let Ok(path) = std::env::var("DECODE_PATH") {
        rounds(&path);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
