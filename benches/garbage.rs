//! Criterion benchmark of what the garbage collector adds to shard 0's apply
//! loop: `garbage::Graph::apply` over 10,000 committed pod entries, plain
//! (no ownerReferences: the common case, a byte search and two map
//! lookups) and owned by a ReplicaSet (parsed, indexed), beside the store's
//! own apply of the same entries (what every shard already does per entry).
//!
//! Run: `cargo bench --bench garbage`. Results and the exact command go to
//! docs/benchmarks.md; these are measurements, never pass/fail tests.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use shardline::api::handlers::garbage::Graph;
use shardline::log::{Entry, Operation, Revision};
use shardline::store::ShardStore;
use shardline::types::key::{ObjectKey, ShardId};
use shardline::types::registry::Registry;
use std::hint::black_box;

const PODS: u64 = 10_000;

fn pod(namespace: &str, name: &str, owned: bool) -> Bytes {
    let owner = if owned {
        r#","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c","uid":"0d9e2c1e-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}]"#
    } else {
        ""
    };
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"{namespace}","uid":"6f1c2c1e-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web","tier":"front"}}{owner}}},"spec":{{"nodeName":"node-1","containers":[{{"name":"c","image":"registry.example/app:1.0"}}]}},"status":{{"phase":"Running"}}}}"#
    ))
}

fn entries(owned: bool) -> Vec<Entry> {
    (1..=PODS)
        .map(|i| {
            let namespace = format!("ns-{}", i % 10);
            let name = format!("pod-{i:06}");
            Entry {
                revision: Revision(i),
                key: ObjectKey::new("", "pods", &namespace, &name).encode(),
                operation: Operation::Put(pod(&namespace, &name, owned)),
                create_revision: Revision(i),
                previous: None,
            }
        })
        .collect()
}

fn apply(graph: &mut Graph, entries: &[Entry], registry: &Registry) {
    for entry in entries {
        let value = match &entry.operation {
            Operation::Put(v) => Some(v.as_ref()),
            Operation::Delete => None,
        };
        graph.apply(&entry.key, value, registry);
    }
    black_box(graph.take_pending());
}

fn bench_graph(c: &mut Criterion) {
    let registry = Registry::builtin();
    let plain = entries(false);
    let owned = entries(true);
    let mut group = c.benchmark_group("garbage");
    group.throughput(Throughput::Elements(PODS));
    group.bench_function("store_apply_10k_pods", |b| {
        b.iter_batched(
            || ShardStore::new(ShardId(0), 1, 300_000),
            |mut store| {
                store.apply(black_box(&plain), 0, &registry);
                store
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("graph_apply_10k_plain_pods", |b| {
        b.iter_batched(
            Graph::default,
            |mut graph| {
                apply(&mut graph, black_box(&plain), &registry);
                graph
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("graph_apply_10k_owned_pods_new", |b| {
        b.iter_batched(
            Graph::default,
            |mut graph| {
                apply(&mut graph, black_box(&owned), &registry);
                graph
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("graph_apply_10k_owned_pods_updated", |b| {
        b.iter_batched(
            || {
                let mut graph = Graph::default();
                apply(&mut graph, &owned, &registry);
                graph
            },
            |mut graph| {
                apply(&mut graph, black_box(&owned), &registry);
                graph
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_graph);
criterion_main!(benches);
