//! `loadgen`: drives a Kubernetes API server (Shardline, kube-apiserver, ...) or etcd with
//! versioned scenarios (kubelets, informers, list storm, writes, mixed) and measures what
//! operators measure: write-to-watch latency, delivered events and bytes, list and write
//! latency and throughput, errors, watchers closed by the server.
//!
//! Modules: `scenario` (files, validation), `rate` (rate control, coordinated omission),
//! `metrics` (HdrHistogram, counters), `http` (connections, HTTP/2 stream limits), `target`
//! (Kubernetes and etcd operations), `decode` (the watch receive path: events split and scanned
//! without a JSON tree), `retry` (what a client does with 429 and `Retry-After`), `run` (one
//! scenario against one target), `bottleneck` (whether loadgen or the server limited a run),
//! `spawn` (local servers, CPU placement), `repeat` (interleaved repeats, median and spread), `replay` (a stand-in server
//! streaming watch events as fast as loopback carries them: loadgen's own ceiling),
//! `report` (JSON, Markdown, SVG).

pub mod bottleneck;
pub mod decode;
pub mod http;
pub mod metrics;
pub mod rate;
pub mod repeat;
pub mod replay;
pub mod report;
pub mod retry;
pub mod run;
pub mod scenario;
pub mod spawn;
pub mod target;
