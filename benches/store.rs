//! Criterion benchmarks of the sharded core's hot paths, without I/O:
//! applying committed entries (decode once, encode once), encoding one pod
//! (the splice fast path against the decode-and-re-encode reference), listing
//! a collection from one shard, and merging per-shard runs into one list.
//!
//! Run: `cargo bench --bench store`. Results and the exact command go to
//! docs/benchmarks.md; these are measurements, never pass/fail tests.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use shardline::api::handlers::list::{list_frames, merge};
use shardline::cache::{encode_stored, encode_stored_slow};
use shardline::log::{Entry, Operation, Revision};
use shardline::store::ShardStore;
use shardline::types::key::{collection_prefix, ObjectKey, ShardId};
use shardline::types::registry::Registry;
use std::hint::black_box;

const PODS: u64 = 10_000;

fn pod(namespace: &str, name: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"{namespace}","uid":"6f1c2c1e-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web","tier":"front"}}}},"spec":{{"nodeName":"node-1","containers":[{{"name":"c","image":"registry.example/app:1.0"}}]}},"status":{{"phase":"Running"}}}}"#
    ))
}

fn entries() -> Vec<Entry> {
    (1..=PODS)
        .map(|i| {
            let namespace = format!("ns-{}", i % 10);
            let name = format!("pod-{i:06}");
            Entry {
                revision: Revision(i),
                key: ObjectKey::new("", "pods", &namespace, &name).encode(),
                operation: Operation::Put(pod(&namespace, &name)),
                create_revision: Revision(i),
                previous: None,
            }
        })
        .collect()
}

fn bench_apply(c: &mut Criterion) {
    let registry = Registry::builtin();
    let entries = entries();
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(PODS));
    group.bench_function("apply_10k_pods", |b| {
        b.iter_batched(
            || ShardStore::new(ShardId(0), 1, 300_000),
            |mut store| {
                store.apply(black_box(&entries), 0, &registry);
                store
            },
            BatchSize::LargeInput,
        )
    });
    let mut store = ShardStore::new(ShardId(0), 1, 300_000);
    store.apply(&entries, 0, &registry);
    let prefix = collection_prefix("", "pods", None);
    group.bench_function("list_10k_pods_frames", |b| {
        b.iter(|| {
            let objects = store.list(prefix.as_bytes(), None, usize::MAX);
            black_box(list_frames("PodList", "v1", PODS, &objects))
        })
    });
    group.finish();
}

fn bench_merge(c: &mut Criterion) {
    let registry = Registry::builtin();
    let entries = entries();
    let runs: Vec<_> = (0..4u16)
        .map(|shard| {
            let mut store = ShardStore::new(ShardId(shard), 4, 300_000);
            store.apply(&entries, 0, &registry);
            store.list(collection_prefix("", "pods", None).as_bytes(), None, usize::MAX)
        })
        .collect();
    let mut group = c.benchmark_group("list");
    group.throughput(Throughput::Elements(PODS));
    group.bench_function("merge_4_shards_10k_pods", |b| {
        b.iter_batched(|| runs.clone(), |runs| black_box(merge(runs)), BatchSize::LargeInput)
    });
    group.finish();
}

fn bench_encode(c: &mut Criterion) {
    let value = pod("ns-1", "pod-000001");
    let fields: Vec<String> =
        Registry::builtin().lookup("", "v1", "pods").map(|r| r.selectable_fields.clone()).unwrap_or_default();
    let key = ObjectKey::new("", "pods", "ns-1", "pod-000001").encode();
    let mut group = c.benchmark_group("cache");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode_pod_splice", |b| {
        b.iter(|| black_box(encode_stored(key.clone(), black_box(&value), Revision(7), Revision(7), &fields)))
    });
    group.bench_function("encode_pod_reference", |b| {
        b.iter(|| black_box(encode_stored_slow(key.clone(), black_box(&value), Revision(7), Revision(7), &fields)))
    });
    group.finish();
}

criterion_group!(benches, bench_apply, bench_merge, bench_encode);
criterion_main!(benches);
