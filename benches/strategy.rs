//! Criterion benchmark of the typed layer alone (`strategy::decode_and_default`,
//! `create`, `finish`) on a parsed object, per kind: what the layer adds to
//! each write, apart from the JSON parse and the log (see `write_path` for
//! the whole path).
//!
//! Run: `cargo bench --bench strategy`. Measurements, never pass/fail tests;
//! each case asserts the layer accepted the object.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{Map, Value};
use shardline::strategy::{self, Context};
use shardline::types::registry::Registry;

const POD: &str = include_str!("../fuzz/corpus/typed_layer/pod");

fn object(text: &str) -> Map<String, Value> {
    // The corpus files start with the fuzzer's selector byte.
    let json = text.trim_start_matches(|c: char| c != '{');
    serde_json::from_str(json).expect("a JSON object")
}

fn bench_layer(c: &mut Criterion) {
    let registry = Registry::builtin();
    let mut group = c.benchmark_group("strategy");
    group.throughput(Throughput::Elements(1));
    let deployment = include_str!("../fuzz/corpus/typed_layer/deployment");
    let service = include_str!("../fuzz/corpus/typed_layer/service");
    for (name, group_name, resource, text) in [
        ("pod", "", "pods", POD),
        ("deployment", "apps", "deployments", deployment),
        ("service", "", "services", service),
    ] {
        let info = registry.iter().find(|i| i.group == group_name && i.resource == resource).expect("served").clone();
        let parsed = object(text);
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let mut o = parsed.clone();
                    let meta = o.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(meta) = meta {
                        meta.insert("uid".into(), "00000000-0000-4000-8000-000000000000".into());
                        meta.insert("namespace".into(), "default".into());
                    }
                    o
                },
                |mut o| {
                    let context = Context { now: "2026-01-01T00:00:00Z", subresource: None, user: None };
                    strategy::decode_and_default(&info, &mut o).expect("decodes");
                    strategy::create(&info, &mut o, &context).expect("valid");
                    strategy::finish(&info, &mut o);
                    o
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_layer);
criterion_main!(benches);
