//! LIST of a collection: every shard returns its matching objects in key
//! order at one revision, and the serving shard merges them (k-way merge) and
//! writes the list by concatenating the cached encodings.
//!
//! This is the plain form; limit/continue and the resourceVersion rules come
//! with the list issue.

use super::{backend_error, table, Resolved};
use crate::api::negotiate::{self, Representation};
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::types::key::{collection_prefix, ShardId};
use crate::types::selector::{parse_field_selector, parse_label_selector, Selector};
use bytes::{BufMut, Bytes, BytesMut};
use http::{Response, StatusCode};
use std::sync::Arc;

/// The plain list returns whole collections; pages (limit/continue) bound
/// this with the list issue.
const LIST_SHARD_OBJECTS_MAX: usize = usize::MAX;

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let representation = negotiate::for_objects(head.accept.as_deref(), true)?;
    let labels = parse_label_selector(head.params.label_selector.as_deref().unwrap_or(""))
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let fields = parse_field_selector(head.params.field_selector.as_deref().unwrap_or(""))
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    for requirement in &fields.requirements {
        let known = requirement.key == "metadata.name"
            || requirement.key == "metadata.namespace"
            || resolved.info.selectable_fields.iter().any(|f| *f == requirement.key);
        if !known {
            return Err(ApiError::BadRequest(format!(
                "\"{}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                requirement.key
            )));
        }
    }
    let prefix = collection_prefix(&resolved.info.group, &resolved.info.resource, resolved.namespace.as_deref());
    let revision = backend.committed_revision();
    let mut per_shard = Vec::with_capacity(backend.shard_count() as usize);
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let labels = labels.clone();
        let fields = fields.clone();
        per_shard.push(backend.on_shard(ShardId(shard), revision, move |store| {
            filter(store.list(prefix.as_bytes(), None, LIST_SHARD_OBJECTS_MAX), &labels, &fields)
        }));
    }
    let mut runs = Vec::with_capacity(per_shard.len());
    for call in futures_util::future::join_all(per_shard).await {
        runs.push(call.map_err(backend_error)?);
    }
    let objects = merge(runs);
    let body = match representation {
        Representation::Table { version } => table::build(&version, &objects, revision, None),
        _ => encode_list(&resolved.info.list_kind, &resolved.info.api_version(), revision.0, &objects),
    };
    Ok(respond(StatusCode::OK, "application/json", body))
}

fn filter(objects: Vec<Arc<CachedObject>>, labels: &Selector, fields: &Selector) -> Vec<Arc<CachedObject>> {
    objects
        .into_iter()
        .filter(|o| labels.matches(|k| o.meta.label(k)) && fields.matches(|k| o.meta.field(k)))
        .collect()
}

/// Merges runs that are each sorted by key into one sorted run.
pub fn merge(runs: Vec<Vec<Arc<CachedObject>>>) -> Vec<Arc<CachedObject>> {
    let total = runs.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    let mut cursors: Vec<_> = runs.into_iter().map(|r| r.into_iter().peekable()).collect();
    loop {
        // Shard counts are small (one per core): a linear scan of the heads
        // beats a heap here.
        let mut smallest: Option<(usize, Bytes)> = None;
        for (i, cursor) in cursors.iter_mut().enumerate() {
            if let Some(head) = cursor.peek() {
                if smallest.as_ref().is_none_or(|(_, k)| head.key < *k) {
                    smallest = Some((i, head.key.clone()));
                }
            }
        }
        match smallest.and_then(|(i, _)| cursors[i].next()) {
            Some(object) => out.push(object),
            None => break,
        }
    }
    out
}

fn encode_list(list_kind: &str, api_version: &str, revision: u64, objects: &[Arc<CachedObject>]) -> Bytes {
    let items_bytes: usize = objects.iter().map(|o| o.json.len() + 1).sum();
    let mut out = BytesMut::with_capacity(items_bytes + 128);
    out.put_slice(b"{\"kind\":");
    out.put_slice(serde_json::to_string(list_kind).unwrap_or_default().as_bytes());
    out.put_slice(b",\"apiVersion\":");
    out.put_slice(serde_json::to_string(api_version).unwrap_or_default().as_bytes());
    out.put_slice(format!(",\"metadata\":{{\"resourceVersion\":\"{revision}\"}},\"items\":[").as_bytes());
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        out.put_slice(&object.json);
    }
    out.put_slice(b"]}");
    out.freeze()
}
