//! Criterion benchmark of the whole write path of a create, in process: the
//! request through `api::handle` (decoding, the typed layer, managedFields,
//! the log append and the apply) on the in-process backend
//! (`api::testing::MemoryBackend`), for a Pod, a Deployment and a ConfigMap.
//! It uses only the handler API, so the same file runs on an older commit
//! for a before/after comparison (docs/benchmarks.md says how).
//!
//! Run: `cargo bench --bench write_path`. Measurements, never pass/fail tests;
//! the bench asserts every create answered 201, so it cannot time refusals.
//!
//! Instruction counts, for a noisy machine: with `WRITE_PATH_CREATES=N` the
//! binary skips criterion and makes N creates of KIND (`WRITE_PATH_KIND`:
//! pod, deployment or configmap), so `valgrind --tool=callgrind` over two
//! values of N gives the instructions per create as the difference divided
//! by the difference of N (start-up cancels out).

use bytes::Bytes;
use criterion::{criterion_group, Criterion, Throughput};
use futures_lite::future::block_on;
use http_body_util::Full;
use shardline::api::testing::MemoryBackend;
use shardline::config::Config;
use std::rc::Rc;

/// The fixture's web pod (tests/fixtures/kube-v1.36/objects.yaml), as JSON.
const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-","labels":{"app":"web","tier":"front"},"annotations":{"a":"b"}},"spec":{"nodeName":"node-a","containers":[{"name":"app","image":"registry.example/web:1.2.3","command":["/bin/web"],"args":["--port=8080","--verbose"],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"containerPort":9090,"protocol":"UDP"}],"env":[{"name":"MODE","value":"prod"},{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}],"resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"1","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5},"livenessProbe":{"tcpSocket":{"port":8080},"initialDelaySeconds":10},"volumeMounts":[{"name":"conf","mountPath":"/etc/web","readOnly":true}]}],"volumes":[{"name":"conf","configMap":{"name":"cm-text"}}],"tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"}]}}"#;

const DEPLOYMENT: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"generateName":"web-","labels":{"app":"web"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"registry.example/web:1.2.3","resources":{"requests":{"cpu":"100m"}}}]}}}}"#;

const CONFIG_MAP: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"cm-"},"data":{"config.yaml":"a: 1\nb: [x, y]\n"}}"#;

fn create(backend: &Rc<MemoryBackend>, path: &str, body: &'static str) {
    let request = http::Request::builder()
        .method("POST")
        .uri(path)
        .header("Content-Type", "application/json")
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .expect("request");
    let response = block_on(shardline::api::handle(backend, request));
    assert_eq!(response.status(), 201, "{path}");
}

fn bench_creates(c: &mut Criterion) {
    let mut group = c.benchmark_group("write_path");
    group.throughput(Throughput::Elements(1));
    for (name, path, body) in CASES {
        let name = format!("create_{name}");
        let config = Config::with_defaults("127.0.0.1:0".parse().expect("addr"), "/nonexistent".into(), 1);
        let backend = Rc::new(MemoryBackend::new(config, 1));
        group.bench_function(&name, |b| b.iter(|| create(&backend, path, body)));
    }
    group.finish();
}

/// The cases: name, collection, body.
const CASES: [(&str, &str, &str); 3] = [
    ("pod", "/api/v1/namespaces/default/pods", POD),
    ("deployment", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT),
    ("configmap", "/api/v1/namespaces/default/configmaps", CONFIG_MAP),
];

criterion_group!(benches, bench_creates);

fn main() {
    if let Ok(count) = std::env::var("WRITE_PATH_CREATES") {
        let count: usize = count.parse().expect("WRITE_PATH_CREATES is a number");
        let kind = std::env::var("WRITE_PATH_KIND").unwrap_or_else(|_| "pod".into());
        let (_, path, body) = CASES.iter().find(|(name, _, _)| *name == kind).expect("a known WRITE_PATH_KIND");
        let config = Config::with_defaults("127.0.0.1:0".parse().expect("addr"), "/nonexistent".into(), 1);
        let backend = Rc::new(MemoryBackend::new(config, 1));
        for _ in 0..count {
            create(&backend, path, body);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
