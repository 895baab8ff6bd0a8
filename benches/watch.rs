//! Criterion benchmarks of watch fan-out: dispatching one committed entry to
//! 10,000 and 50,000 registered watchers on one shard, with 1% of them
//! matching (watchers spread over 100 namespaces, the entry in one) and 100%
//! matching (every watcher watches the whole resource). The object is encoded
//! once; each matching watcher gets a handle to the same bytes.
//!
//! Node watchers: 10,000 and 50,000 kubelet-style watchers, each watching
//! its own node's pods (`fieldSelector=spec.nodeName=node-N`), and one pod
//! event on node-17: `indexed` files them by the trigger value, so only one
//! is asked; `unindexed` is the same watchers without the trigger index
//! (every one is asked), i.e. the hub before the trigger index.
//!
//! Run: `cargo bench --bench watch`. Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use shardline::cache::CachedObject;
use shardline::log::{Entry, Operation, Revision};
use shardline::types::key::{collection_prefix, ObjectKey};
use shardline::types::registry::Registry;
use shardline::watch::{EventSink, WatchEvent, WatchFilter, WatchHub};
use std::cell::Cell;
use std::rc::Rc;

/// Counts what it is offered, as a queue with room would accept it.
struct Count(Rc<Cell<u64>>);
impl EventSink for Count {
    fn offer(&mut self, _event: WatchEvent) -> bool {
        self.0.set(self.0.get() + 1);
        true
    }
}

fn hub(watchers: usize, namespaces: usize, delivered: &Rc<Cell<u64>>, registry: &Registry) -> WatchHub {
    let mut hub = WatchHub::new(Revision(0), 300_000, 100_000);
    for i in 0..watchers {
        let namespace = if namespaces == 0 { None } else { Some(format!("ns-{}", i % namespaces)) };
        let filter = WatchFilter {
            prefix: Bytes::from(collection_prefix("", "pods", namespace.as_deref())),
            matches: None,
            bookmarks: None,
            name: None,
            trigger: None,
        };
        let _ = hub.start(filter, Box::new(Count(delivered.clone())), Revision(0), 0, registry);
    }
    hub
}

fn node_hub(watchers: usize, indexed: bool, delivered: &Rc<Cell<u64>>, registry: &Registry) -> WatchHub {
    let mut hub = WatchHub::new(Revision(0), 300_000, 100_000);
    for i in 0..watchers {
        let node = format!("node-{i}");
        let wanted = node.clone();
        let filter = WatchFilter {
            prefix: Bytes::from(collection_prefix("", "pods", None)),
            matches: Some(Box::new(move |o: &CachedObject| o.meta().field("spec.nodeName") == Some(wanted.as_str()))),
            bookmarks: None,
            name: None,
            trigger: indexed.then_some(node),
        };
        let _ = hub.start(filter, Box::new(Count(delivered.clone())), Revision(0), 0, registry);
    }
    hub
}

fn pod_on_node_17(revision: u64) -> Entry {
    let value = Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"p{revision}","namespace":"ns-7","uid":"u","labels":{{"app":"web"}}}},"spec":{{"nodeName":"node-17"}}}}"#
    ));
    Entry {
        revision: Revision(revision),
        key: ObjectKey::new("", "pods", "ns-7", &format!("p{revision}")).encode(),
        operation: Operation::Put(value),
        create_revision: Revision(revision),
        previous: None,
    }
}

fn entry(revision: u64) -> Entry {
    let value = Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"p","namespace":"ns-7","uid":"u","labels":{{"app":"web"}}}},"spec":{{"nodeName":"n{revision}"}}}}"#
    ));
    Entry {
        revision: Revision(revision),
        key: ObjectKey::new("", "pods", "ns-7", "p").encode(),
        operation: Operation::Put(value),
        create_revision: Revision(1),
        previous: None,
    }
}

fn bench_dispatch(c: &mut Criterion) {
    let registry = Registry::builtin();
    let mut group = c.benchmark_group("watch");
    for watchers in [10_000usize, 50_000] {
        for (label, namespaces) in [("1pct", 100usize), ("100pct", 0usize)] {
            let delivered = Rc::new(Cell::new(0u64));
            let mut hub = hub(watchers, namespaces, &delivered, &registry);
            let matching = if namespaces == 0 { watchers } else { watchers / namespaces };
            group.throughput(Throughput::Elements(matching as u64));
            let mut revision = 0u64;
            group.bench_function(format!("dispatch_one_event_{watchers}_watchers_{label}"), |b| {
                b.iter_batched(
                    || {
                        revision += 1;
                        entry(revision)
                    },
                    |e| hub.dispatch(std::slice::from_ref(&e), 0, &registry),
                    BatchSize::SmallInput,
                )
            });
            assert!(delivered.get() > 0);
        }
    }
    for watchers in [10_000usize, 50_000] {
        for (label, indexed) in [("indexed", true), ("unindexed", false)] {
            let delivered = Rc::new(Cell::new(0u64));
            let mut hub = node_hub(watchers, indexed, &delivered, &registry);
            group.throughput(Throughput::Elements(1));
            let mut revision = 0u64;
            group.bench_function(format!("dispatch_one_pod_event_{watchers}_node_watchers_{label}"), |b| {
                b.iter_batched(
                    || {
                        revision += 1;
                        pod_on_node_17(revision)
                    },
                    |e| hub.dispatch(std::slice::from_ref(&e), 0, &registry),
                    BatchSize::SmallInput,
                )
            });
            // Exactly node-17's watcher got every event.
            assert_eq!(delivered.get(), revision);
        }
    }
    group.finish();
}

criterion_group!(benches, bench_dispatch);
criterion_main!(benches);
