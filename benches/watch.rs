//! Criterion benchmarks of watch fan-out: dispatching one committed entry to
//! 10,000 and 50,000 registered watchers on one shard, with 1% of them
//! matching (watchers spread over 100 namespaces, the entry in one) and 100%
//! matching (every watcher watches the whole resource). The object is encoded
//! once; each matching watcher gets a handle to the same bytes.
//!
//! Run: `cargo bench --bench watch`. Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
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
        };
        let _ = hub.start(filter, Box::new(Count(delivered.clone())), Revision(0), 0, registry);
    }
    hub
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
    group.finish();
}

criterion_group!(benches, bench_dispatch);
criterion_main!(benches);
