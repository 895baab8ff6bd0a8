//! `/metrics`: the server's limits and per-shard state in the Prometheus text
//! format, so operators can see what the process runs under (locked memory,
//! open files) and how full each shard is; then the latency and size
//! histograms and `process_*` metrics of `crate::metrics` (every metric is in
//! docs/metrics.md).

use super::backend_error;
use crate::api::status::ApiError;
use crate::api::{respond, Backend, ResponseBody};
use crate::types::key::ShardId;
use bytes::Bytes;
use http::{Response, StatusCode};
use std::fmt::Write;

pub async fn serve(backend: &impl Backend) -> Result<Response<ResponseBody>, ApiError> {
    let limits = backend.process_limits();
    let config = backend.config();
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, samples: &[(String, u64)]| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    gauge(
        "shardline_process_memlock_bytes",
        "RLIMIT_MEMLOCK of the process.",
        &[
            ("{limit=\"soft\"}".into(), limits.memlock_bytes_soft),
            ("{limit=\"hard\"}".into(), limits.memlock_bytes_hard),
        ],
    );
    gauge(
        "shardline_process_open_files",
        "RLIMIT_NOFILE of the process.",
        &[("{limit=\"soft\"}".into(), limits.open_files_soft), ("{limit=\"hard\"}".into(), limits.open_files_hard)],
    );
    gauge("shardline_shards", "Number of shards (pinned executors).", &[(String::new(), u64::from(config.shards))]);
    gauge(
        "shardline_io_memory_bytes",
        "io_uring registered memory per shard.",
        &[(String::new(), config.io_memory_bytes as u64)],
    );
    gauge(
        "shardline_request_body_bytes_max",
        "Largest request body accepted.",
        &[(String::new(), config.request_body_bytes_max as u64)],
    );
    gauge(
        "shardline_committed_revision",
        "The log's commit point.",
        &[(String::new(), backend.committed_revision().0)],
    );
    let mut applied = Vec::new();
    let mut live = Vec::new();
    let mut retained = Vec::new();
    for shard in 0..backend.shard_count() {
        let (revision, stats) = backend
            .on_shard(ShardId(shard), crate::log::Revision::ZERO, |store| (store.applied(), store.stats()))
            .await
            .map_err(backend_error)?;
        let label = format!("{{shard=\"{shard}\"}}");
        applied.push((label.clone(), revision.0));
        live.push((label.clone(), stats.live_objects as u64));
        retained.push((label, stats.retained_versions as u64));
    }
    gauge("shardline_shard_applied_revision", "Last revision each shard applied.", &applied);
    gauge("shardline_shard_objects", "Live objects each shard owns.", &live);
    gauge("shardline_shard_retained_versions", "Versions each shard keeps (current and history window).", &retained);
    let built: Vec<(String, u64)> = crate::cache::Format::all()
        .iter()
        .map(|f| (format!("{{format=\"{}\"}}", f.name()), crate::cache::encodings_built(*f)))
        .collect();
    gauge(
        "shardline_encodings_built",
        "Object encodings built besides JSON, by format (at most one per object version and format).",
        &built,
    );
    let watch = backend.watch_stats();
    let per_shard = |value: fn(&crate::watch::HubStats) -> u64| -> Vec<(String, u64)> {
        watch.iter().enumerate().map(|(shard, s)| (format!("{{shard=\"{shard}\"}}"), value(s))).collect()
    };
    gauge("shardline_watchers", "Watchers open on each shard.", &per_shard(|s| s.watchers as u64));
    let mut counter = |name: &str, help: &str, samples: &[(String, u64)]| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} counter");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    counter(
        "shardline_watchers_closed_slow_total",
        "Watchers closed because their queue was full (events or bytes).",
        &per_shard(|s| s.closed_slow),
    );
    counter(
        "shardline_watch_events_dispatched_total",
        "Watch events queued to watchers (history replays included).",
        &per_shard(|s| s.events_dispatched),
    );
    counter(
        "shardline_watch_initial_events_total",
        "ADDED events of watches' initial state.",
        &per_shard(|s| s.initial_events_sent),
    );
    if let Some(stats) = backend.consistent_read_stats() {
        counter(
            "shardline_etcd_consistent_reads_total",
            "Reads without resourceVersion that asked etcd for its current revision.",
            &[(String::new(), stats.requests)],
        );
        counter(
            "shardline_etcd_consistent_read_batches_total",
            "etcd reads of the current revision, each serving a batch of consistent reads.",
            &[(String::new(), stats.batches)],
        );
        counter(
            "shardline_etcd_consistent_read_fences_total",
            "Fence writes of consistent reads that were behind etcd.",
            &[(String::new(), stats.fences)],
        );
    }
    if let Some(in_flight) = backend.in_flight() {
        use std::sync::atomic::Ordering::Relaxed;
        let classes = |read: u64, mutating: u64, watch: u64| -> Vec<(String, u64)> {
            vec![
                ("{class=\"readonly\"}".into(), read),
                ("{class=\"mutating\"}".into(), mutating),
                ("{class=\"watch\"}".into(), watch),
            ]
        };
        let _ = writeln!(out, "# HELP shardline_requests_in_flight Requests being served, by class (all shards).");
        let _ = writeln!(out, "# TYPE shardline_requests_in_flight gauge");
        for (labels, value) in
            classes(in_flight.reads.load(Relaxed), in_flight.mutations.load(Relaxed), in_flight.watches.load(Relaxed))
        {
            let _ = writeln!(out, "shardline_requests_in_flight{labels} {value}");
        }
        let _ = writeln!(
            out,
            "# HELP shardline_requests_in_flight_max In-flight limits (watches: per user, across shards)."
        );
        let _ = writeln!(out, "# TYPE shardline_requests_in_flight_max gauge");
        for (labels, value) in classes(
            config.max_requests_inflight as u64,
            config.max_mutating_requests_inflight as u64,
            config.watches_per_user_max as u64,
        ) {
            let _ = writeln!(out, "shardline_requests_in_flight_max{labels} {value}");
        }
        let _ = writeln!(out, "# HELP shardline_requests_rejected_total Requests refused with 429, by class.");
        let _ = writeln!(out, "# TYPE shardline_requests_rejected_total counter");
        for (labels, value) in classes(
            in_flight.rejected_reads.load(Relaxed),
            in_flight.rejected_mutations.load(Relaxed),
            in_flight.rejected_watches.load(Relaxed),
        ) {
            let _ = writeln!(out, "shardline_requests_rejected_total{labels} {value}");
        }
    }
    // The other limits of overload protection, so a dashboard shows what
    // the refusals above are measured against.
    for (name, help, value) in [
        (
            "shardline_watches_per_user_max",
            "Open watches one user may hold across all shards before 429 (--watches-per-user-max).",
            config.watches_per_user_max as u64,
        ),
        (
            "shardline_http2_max_streams_per_connection",
            "Concurrent HTTP/2 streams (open watches) per connection (--http2-max-streams-per-connection).",
            u64::from(config.http2_max_concurrent_streams),
        ),
        (
            "shardline_retry_after_seconds",
            "Retry-After of a 429 answer.",
            u64::from(config.overload_retry_after_seconds),
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        let _ = writeln!(out, "{name} {value}");
    }
    // Latency and sizes (request durations, watch delivery, lists, the
    // log) and the process's own counters: docs/metrics.md.
    backend.gather_metrics().await.render(&mut out);
    if let Some(process) = backend.process_stats() {
        process.render(&mut out);
    }
    super::memory::write(&mut out, backend).await?;
    // Heap in use (the server's counting allocator) and resident memory.
    crate::memory::write_metrics(&mut out);
    Ok(respond(StatusCode::OK, "text/plain; version=0.0.4", Bytes::from(out)))
}
