//! Criterion benchmarks of list assembly (issue 3): one 500-item page merged
//! from two shards at a snapshot revision, and a whole list of 150,000 pods
//! of about 2 KB each, streamed in rounds of 500 per shard as the server
//! does, with every frame produced (and dropped, as a socket write would
//! release it).
//!
//! Run: `cargo bench --bench list`. Setup builds the 150,000 pods once
//! (about 300 MB). Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shardline::api::handlers::list::page_frames;
use shardline::cache::CachedObject;
use shardline::list::merge;
use shardline::log::{Entry, Operation, Revision};
use shardline::store::ShardStore;
use shardline::types::key::{collection_prefix, ObjectKey, ShardId};
use shardline::types::registry::Registry;
use std::hint::black_box;
use std::sync::Arc;

const PODS: u64 = 150_000;
const SHARDS: u16 = 2;
const ROUND: usize = 500;

/// A pod of about 2 KB, shaped like a real one.
fn pod(namespace: &str, name: &str) -> Bytes {
    let env: Vec<String> =
        (0..24).map(|i| format!(r#"{{"name":"VARIABLE_{i:02}","value":"value-{i:02}-{name}"}}"#)).collect();
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"{namespace}","uid":"6f1c2c1e-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web","tier":"front","pod-template-hash":"7d4b9c"}}}},"spec":{{"nodeName":"node-17","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"default","containers":[{{"name":"app","image":"registry.example/app:1.0","env":[{}],"resources":{{"limits":{{"cpu":"500m","memory":"256Mi"}}}}}}]}},"status":{{"phase":"Running","podIP":"10.0.3.17"}}}}"#,
        env.join(",")
    ))
}

fn stores() -> Vec<ShardStore> {
    let registry = Registry::builtin();
    let mut stores: Vec<ShardStore> = (0..SHARDS).map(|s| ShardStore::new(ShardId(s), SHARDS, 300_000)).collect();
    let mut batch = Vec::with_capacity(10_000);
    for i in 1..=PODS {
        let namespace = format!("ns-{}", i % 50);
        let name = format!("pod-{i:06}");
        batch.push(Entry {
            revision: Revision(i),
            key: ObjectKey::new("", "pods", &namespace, &name).encode(),
            operation: Operation::Put(pod(&namespace, &name)),
            create_revision: Revision(i),
            previous: None,
        });
        if batch.len() == 10_000 || i == PODS {
            for store in &mut stores {
                store.apply(&batch, 0, &registry);
            }
            batch.clear();
        }
    }
    stores
}

fn round(stores: &[ShardStore], prefix: &[u8], after: Option<&[u8]>, per_shard: usize) -> Vec<Arc<CachedObject>> {
    let all = |_: &CachedObject| true;
    let runs: Vec<_> = stores
        .iter()
        .map(|s| {
            let start = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
            s.list_matching_at(prefix, Revision(PODS), start, per_shard, &all).unwrap_or_default()
        })
        .collect();
    merge(runs, per_shard)
}

fn bench_lists(c: &mut Criterion) {
    let stores = stores();
    let prefix = collection_prefix("", "pods", None);
    let bytes: usize = round(&stores, prefix.as_bytes(), None, usize::MAX).iter().map(|o| o.json.len()).sum();
    eprintln!("{PODS} pods, {} bytes encoded, {} bytes per pod", bytes, bytes as u64 / PODS);

    let mut group = c.benchmark_group("list");
    group.throughput(Throughput::Elements(ROUND as u64));
    // A page in the middle of the collection, as a continue token would ask.
    let middle = ObjectKey::new("", "pods", "ns-25", "pod-075000").encode();
    group.bench_function("page_500_of_150k_pods_2_shards", |b| {
        b.iter(|| {
            let page = round(&stores, prefix.as_bytes(), Some(&middle), ROUND + 1);
            black_box(page_frames("PodList", "v1", PODS, Some("token"), Some(74_500), &page[..ROUND.min(page.len())]))
        })
    });
    group.finish();

    let mut group = c.benchmark_group("list");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("whole_150k_pods_streamed_in_rounds", |b| {
        b.iter(|| {
            let mut after: Option<Bytes> = None;
            let mut frames = 0usize;
            loop {
                let merged = round(&stores, prefix.as_bytes(), after.as_deref(), ROUND);
                frames += merged.len();
                // Each frame is a handle to the cached bytes; dropping it is
                // what the socket write does once it has been sent.
                black_box(&merged);
                if merged.len() < ROUND {
                    break;
                }
                after = merged.last().map(|o| o.key.clone());
            }
            assert_eq!(frames as u64, PODS);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_lists);
criterion_main!(benches);
