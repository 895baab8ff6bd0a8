//! `/metrics`' memory gauges: the bytes the server holds per kind of memory
//! (live object JSON, superseded versions, derived encodings, metadata and
//! index, watch history), per shard where memory is per shard, and the
//! budgets that bound them (`--history-bytes-max`,
//! `--derived-encodings-bytes-max`).
//!
//! The counts are the stores', hubs' and cache's own accounting
//! (`store::MemoryStats`, `watch::HubStats::history_bytes`,
//! `cache::derived_bytes_held`), not the allocator's: JSON and encodings
//! exactly, structures by their sizes.

use super::backend_error;
use crate::api::status::ApiError;
use crate::api::Backend;
use crate::types::key::ShardId;
use std::fmt::Write;

/// Appends the memory gauges to a `/metrics` body.
pub async fn write(out: &mut String, backend: &impl Backend) -> Result<(), ApiError> {
    let mut samples: Vec<(String, u64)> = Vec::new();
    let mut compacted = Vec::new();
    let watch = backend.watch_stats();
    for shard in 0..backend.shard_count() {
        let (memory, revision) = backend
            .on_shard(ShardId(shard), crate::log::Revision::ZERO, |store| (store.memory(), store.compacted()))
            .await
            .map_err(backend_error)?;
        let history = watch.get(usize::from(shard)).map_or(0, |s| s.history_bytes);
        for (kind, bytes) in [
            ("live_json", memory.live_json_bytes),
            ("superseded_json", memory.superseded_json_bytes),
            ("metadata", memory.metadata_bytes),
            ("watch_history", history),
        ] {
            samples.push((format!("{{kind=\"{kind}\",shard=\"{shard}\"}}"), bytes as u64));
        }
        compacted.push((format!("{{shard=\"{shard}\"}}"), revision.0));
    }
    samples.push(("{kind=\"derived_encodings\"}".into(), crate::cache::derived_bytes_held()));
    let config = backend.config();
    let mut family = |name: &str, kind: &str, help: &str, samples: &[(String, u64)]| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    family(
        "shardline_memory_bytes",
        "gauge",
        "Bytes held, by kind: live_json (current objects' JSON), superseded_json (history versions' JSON), \
         metadata (keys, index, version chains, objects' metadata spans), watch_history (entries kept for \
         watch resumption; each shard's hub shares them), per shard; derived_encodings (protobuf, CBOR, YAML \
         kept), process-wide.",
        &samples,
    );
    family(
        "shardline_shard_compacted_revision",
        "gauge",
        "Oldest revision each shard still reads exactly (older ones get 410).",
        &compacted,
    );
    family(
        "shardline_history_bytes_max",
        "gauge",
        "History budget (--history-bytes-max): superseded versions across shards, and watch history.",
        &[(String::new(), config.history_bytes_max as u64)],
    );
    family(
        "shardline_derived_encodings_bytes_max",
        "gauge",
        "Derived encodings budget (--derived-encodings-bytes-max).",
        &[(String::new(), config.derived_encodings_bytes_max as u64)],
    );
    family(
        "shardline_derived_encodings_not_kept_total",
        "counter",
        "Encodings served but not kept because the derived encodings budget was full.",
        &[(String::new(), crate::cache::encodings::derived_not_kept())],
    );
    family(
        "shardline_storage_decode_errors_total",
        "counter",
        "Values read from etcd that could not be decoded in the storage layout (--storage-layout) and were skipped; each is logged with its key.",
        &[(String::new(), crate::api::kube_storage::decode_errors())],
    );
    family(
        "shardline_derived_encodings_evicted_total",
        "counter",
        "Kept encodings dropped, oldest first, to make room in the derived encodings budget.",
        &[(String::new(), crate::cache::encodings::derived_evicted())],
    );
    Ok(())
}
