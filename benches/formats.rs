//! Criterion benchmarks of the representations (issue 5): the cost of
//! building one pod's encoding in each format (what the cache pays once per
//! object version), the assembly of a 500-item list page in each format from
//! already-cached encodings (what every list request pays), and gzip
//! throughput on a 1,000-pod JSON list (what a large list pays when the client
//! accepts gzip).
//!
//! Run: `cargo bench --bench formats -- --warm-up-time 1 --measurement-time 3`.
//! Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shardline::api::handlers::list::page_frames;
use shardline::api::negotiate::Representation;
use shardline::api::{cbor, encode, protobuf_encode, yaml};
use shardline::cache::{encode_stored, CachedObject};
use shardline::log::Revision;
use std::hint::black_box;
use std::sync::Arc;

/// A pod of about 2 KB, shaped like a real one.
fn pod(name: &str) -> Bytes {
    let env: Vec<String> =
        (0..24).map(|i| format!(r#"{{"name":"VARIABLE_{i:02}","value":"value-{i:02}-{name}"}}"#)).collect();
    Bytes::from(format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"default","uid":"6f1c2c1e-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z","labels":{{"app":"web","tier":"front","pod-template-hash":"7d4b9c"}}}},"spec":{{"nodeName":"node-17","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"default","containers":[{{"name":"app","image":"registry.example/app:1.0","ports":[{{"containerPort":8080,"protocol":"TCP"}}],"env":[{}],"resources":{{"limits":{{"cpu":"500m","memory":"256Mi"}}}}}}]}},"status":{{"phase":"Running","podIP":"10.0.3.17","startTime":"2026-01-01T00:00:05Z"}}}}"#,
        env.join(",")
    ))
}

fn cached(n: usize) -> Vec<Arc<CachedObject>> {
    (0..n)
        .map(|i| {
            let name = format!("pod-{i:05}");
            let key = Bytes::from(format!("/registry/pods/default/{name}"));
            encode_stored(key, &pod(&name), Revision(i as u64 + 1), Revision(i as u64 + 1), &[]).unwrap()
        })
        .collect()
}

fn encode_one(c: &mut Criterion) {
    let object = cached(1).remove(0);
    let json = object.json.clone();
    let mut group = c.benchmark_group("encode_pod");
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("protobuf", |b| b.iter(|| protobuf_encode::encode_object_json(black_box(&json)).unwrap()));
    group.bench_function("cbor", |b| b.iter(|| cbor::encode_json(black_box(&json)).unwrap()));
    group.bench_function("yaml", |b| b.iter(|| yaml::encode_json(black_box(&json)).unwrap()));
    group.finish();
}

fn list_page(c: &mut Criterion) {
    let objects = cached(500);
    let representations = [Representation::Protobuf, Representation::Cbor, Representation::Yaml];
    // Fill the caches first: a page request finds every item encoded.
    for representation in &representations {
        encode::list_frames(representation, true, "PodList", "v1", 9, None, None, &objects).unwrap();
    }
    let mut group = c.benchmark_group("list_page_500_pods");
    group.throughput(Throughput::Elements(objects.len() as u64));
    group.bench_function("json", |b| b.iter(|| page_frames("PodList", "v1", 9, Some("token"), Some(10), &objects)));
    for representation in representations {
        let name = format!("{representation:?}").to_lowercase();
        group.bench_function(name, |b| {
            b.iter(|| encode::list_frames(&representation, true, "PodList", "v1", 9, Some("token"), Some(10), &objects))
        });
    }
    group.finish();
}

fn gzip_list(c: &mut Criterion) {
    let objects = cached(1_000);
    let frames = page_frames("PodList", "v1", 9, None, None, &objects);
    let total: usize = frames.iter().map(Bytes::len).sum();
    let compressed = encode::gzip(&frames).len();
    eprintln!("gzip of a 1,000-pod list: {total} bytes -> {compressed} bytes");
    let mut group = c.benchmark_group("gzip");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("list_1000_pods", |b| b.iter(|| encode::gzip(black_box(&frames))));
    group.finish();
}

criterion_group!(benches, encode_one, list_page, gzip_list);
criterion_main!(benches);
