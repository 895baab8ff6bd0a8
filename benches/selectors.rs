//! Criterion benchmarks of label and field selectors (issue 7): parsing the
//! query-string forms, matching one selector against 10,000 pods, and the
//! list path filtering a collection with a selector.
//!
//! Matching uses what the list and watch paths use: the request's parsed
//! `Selectors` against each object's `ObjectMeta` (labels and selectable
//! fields read once, when the object was encoded at apply time). The
//! reference, `match_10k_pods_from_json`, is the same selector matched after
//! decoding each pod's JSON to find its labels and fields, as a server
//! without pre-parsed metadata would have to; both must count the same
//! matches (asserted).
//!
//! The pods carry 8 labels and the pods resource's selectable fields; the
//! label values are spread so that each selector below matches a known
//! share of them.
//!
//! Run: `cargo bench --bench selectors`. Results go to docs/benchmarks.md.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use shardline::api::handlers::list::Selectors;
use shardline::cache::CachedObject;
use shardline::log::{Entry, Operation, Revision};
use shardline::store::ShardStore;
use shardline::types::key::{collection_prefix, ObjectKey, ShardId};
use shardline::types::registry::Registry;
use shardline::types::selector::{parse_field_selector, parse_label_selector, Selector};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const PODS: u64 = 10_000;

const APPS: [&str; 4] = ["web", "api", "db", "cache"];
const TIERS: [&str; 3] = ["front", "back", "data"];
const ENVS: [&str; 3] = ["prod", "staging", "dev"];
const RELEASES: [&str; 3] = ["stable", "beta", "canary"];
const PHASES: [&str; 4] = ["Running", "Running", "Pending", "Succeeded"];

/// Pod `i` of about 1.3 KB, with 8 labels (9 for every tenth pod, which
/// carries `canary=true`) and its node and phase spread over the collection.
fn pod(i: u64) -> (String, String, Bytes) {
    let namespace = format!("ns-{}", i % 20);
    let name = format!("pod-{i:06}");
    let i = i as usize;
    let canary = if i.is_multiple_of(10) { r#","canary":"true""# } else { "" };
    let labels = format!(
        r#"{{"app":"{app}","tier":"{tier}","env":"{env}","release":"{release}","pod-template-hash":"{hash:x}","app.kubernetes.io/name":"{app}","app.kubernetes.io/part-of":"shop","helm.sh/chart":"{app}-1.2.3"{canary}}}"#,
        app = APPS[i % 4],
        tier = TIERS[i % 3],
        env = ENVS[i % 5 % 3],
        release = RELEASES[i % 7 % 3],
        hash = i % 50,
    );
    let env: Vec<String> = (0..8).map(|e| format!(r#"{{"name":"VARIABLE_{e:02}","value":"value-{e:02}"}}"#)).collect();
    let json = format!(
        r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"{namespace}","uid":"6f1c2c1e-0000-4000-8000-{i:012}","creationTimestamp":"2026-01-01T00:00:00Z","labels":{labels}}},"spec":{{"nodeName":"node-{node}","restartPolicy":"Always","schedulerName":"default-scheduler","serviceAccountName":"default","containers":[{{"name":"app","image":"registry.example/app:1.0","env":[{env}],"resources":{{"limits":{{"cpu":"500m","memory":"256Mi"}}}}}}]}},"status":{{"phase":"{phase}","podIP":"10.0.{a}.{b}"}}}}"#,
        node = i % 100,
        env = env.join(","),
        phase = PHASES[i / 20 % 4],
        a = i / 256 % 256,
        b = i % 256,
    );
    (namespace, name, Bytes::from(json))
}

/// One shard owning every pod, as the list path reads it.
fn store() -> ShardStore {
    let registry = Registry::builtin();
    let mut store = ShardStore::new(ShardId(0), 1, 300_000);
    let entries: Vec<Entry> = (1..=PODS)
        .map(|i| {
            let (namespace, name, value) = pod(i);
            Entry {
                revision: Revision(i),
                key: ObjectKey::new("", "pods", &namespace, &name).encode(),
                operation: Operation::Put(value),
                create_revision: Revision(i),
                previous: None,
            }
        })
        .collect();
    store.apply(&entries, 0, &registry);
    store
}

/// (name, labelSelector, fieldSelector) of typical shapes.
const SELECTORS: &[(&str, &str, &str)] = &[
    ("label_eq", "app=web", ""),
    ("label_in", "env in (prod,staging)", ""),
    ("label_notin", "release notin (canary,beta)", ""),
    ("label_exists", "canary", ""),
    ("label_not_exists", "!canary", ""),
    ("label_4_terms", "app=web,tier!=data,env in (prod,staging),!canary", ""),
    ("field_node", "", "spec.nodeName=node-17"),
    ("field_2_terms", "", "metadata.namespace=ns-7,status.phase!=Succeeded"),
    ("label_and_field", "app in (web,api)", "spec.nodeName=node-17"),
];

fn parsed(labels: &str, fields: &str) -> Selectors {
    Selectors {
        labels: parse_label_selector(labels).expect("a valid label selector"),
        fields: parse_field_selector(fields).expect("a valid field selector"),
    }
}

/// A value at a dotted path of a decoded object, as a field selector reads it.
fn field_from_json<'a>(object: &'a Value, path: &str) -> Option<&'a str> {
    path.split('.').try_fold(object, |value, part| value.get(part))?.as_str()
}

/// The reference: decode the pod, then match against the decoded document.
fn matches_from_json(selectors: &Selectors, json: &[u8]) -> bool {
    let object: Value = serde_json::from_slice(json).expect("a pod decodes");
    let labels = object.pointer("/metadata/labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    selectors.labels.matches(label) && selectors.fields.matches(|k| field_from_json(&object, k))
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("selectors/parse");
    for (name, labels, fields) in SELECTORS {
        group.bench_function(*name, |b| {
            b.iter(|| {
                let labels: Selector = parse_label_selector(black_box(labels)).unwrap();
                let fields: Selector = parse_field_selector(black_box(fields)).unwrap();
                black_box((labels, fields))
            })
        });
    }
    group.finish();
}

fn bench_match(c: &mut Criterion) {
    let store = store();
    let prefix = collection_prefix("", "pods", None);
    let pods: Vec<Arc<CachedObject>> = store.list(prefix.as_bytes(), None, usize::MAX);
    assert_eq!(pods.len() as u64, PODS);

    let mut group = c.benchmark_group("selectors/match_10k_pods");
    group.throughput(Throughput::Elements(PODS));
    for (name, labels, fields) in SELECTORS {
        let selectors = parsed(labels, fields);
        let expected = pods.iter().filter(|o| matches_from_json(&selectors, &o.json)).count();
        assert!(expected > 0 && expected < pods.len(), "{name} matches {expected} of {}", pods.len());
        eprintln!("{name}: {expected} of {PODS} pods match");
        group.bench_function(*name, |b| {
            b.iter(|| {
                let n = pods.iter().filter(|o| selectors.matches(o)).count();
                assert_eq!(n, expected);
                n
            })
        });
    }
    group.finish();

    // The reference: same selectors, metadata decoded from the JSON per pod.
    let mut group = c.benchmark_group("selectors/match_10k_pods_from_json");
    group.throughput(Throughput::Elements(PODS));
    group.sample_size(10);
    for (name, labels, fields) in
        SELECTORS.iter().filter(|(n, _, _)| ["label_eq", "label_4_terms", "field_node"].contains(n))
    {
        let selectors = parsed(labels, fields);
        let expected = pods.iter().filter(|o| selectors.matches(o)).count();
        group.bench_function(*name, |b| {
            b.iter(|| {
                let n = pods.iter().filter(|o| matches_from_json(&selectors, &o.json)).count();
                assert_eq!(n, expected);
                n
            })
        });
    }
    group.finish();

    // The list path: the shard's ordered scan at a snapshot revision with the
    // selector as its filter, for the whole collection and for a first page
    // of 500 (which stops after 500 matches, so a rare selector scans more).
    let mut group = c.benchmark_group("selectors/list_10k_pods");
    group.throughput(Throughput::Elements(PODS));
    let everything = Selectors::default();
    for (name, selectors) in [
        ("none", everything),
        ("label_eq", parsed("app=web", "")),
        ("label_4_terms", parsed("app=web,tier!=data,env in (prod,staging),!canary", "")),
        ("field_node", parsed("", "spec.nodeName=node-17")),
    ] {
        let filter = |o: &CachedObject| selectors.matches(o);
        for (limit_name, limit) in [("whole", usize::MAX), ("page_500", 500)] {
            let expected = pods.iter().filter(|o| selectors.matches(o)).count().min(limit);
            group.bench_function(format!("{name}/{limit_name}"), |b| {
                b.iter(|| {
                    let run = store
                        .list_matching_at(prefix.as_bytes(), Revision(PODS), std::ops::Bound::Unbounded, limit, &filter)
                        .unwrap();
                    assert_eq!(run.len(), expected);
                    run
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(2));
    targets = bench_parse, bench_match
}
criterion_main!(benches);
