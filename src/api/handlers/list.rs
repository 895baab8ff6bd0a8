//! LIST of a collection: every shard returns its matching objects in key
//! order at one revision, and the serving shard merges them (k-way merge) and
//! writes the list by concatenating the cached encodings.
//!
//! Every shard reads its part as of the same revision (the commit point when
//! the request arrived) from its version history, so the list is one
//! consistent snapshot even while writes continue. This is the plain form;
//! limit/continue and the resourceVersion rules come with the list issue.

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
            store
                .list_at(prefix.as_bytes(), revision, None, LIST_SHARD_OBJECTS_MAX)
                .map(|objects| filter(objects, &labels, &fields))
        }));
    }
    let mut runs = Vec::with_capacity(per_shard.len());
    for call in futures_util::future::join_all(per_shard).await {
        // The commit point is always inside every shard's history window.
        let run = call.map_err(backend_error)?.map_err(|compacted| {
            ApiError::Internal(format!("revision {revision} left the history window (compacted at {compacted})"))
        })?;
        runs.push(run);
    }
    let objects = merge(runs);
    match representation {
        Representation::Table { version } => {
            Ok(respond(StatusCode::OK, "application/json", table::build(&version, &objects, revision, None)))
        }
        _ => {
            let frames = list_frames(&resolved.info.list_kind, &resolved.info.api_version(), revision.0, &objects);
            let mut response = http::Response::new(stream_body(frames));
            response
                .headers_mut()
                .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
            Ok(response)
        }
    }
}

/// A body sent as it is produced (HTTP/1.1 chunked encoding), one frame per
/// piece: the cached encodings go to the socket without being copied.
pub fn stream_body(frames: Vec<Bytes>) -> ResponseBody {
    let stream = futures_util::stream::iter(frames.into_iter().map(|b| Ok(http_body::Frame::data(b))));
    http_body_util::combinators::UnsyncBoxBody::new(http_body_util::StreamBody::new(stream))
}

fn filter(objects: Vec<Arc<CachedObject>>, labels: &Selector, fields: &Selector) -> Vec<Arc<CachedObject>> {
    objects.into_iter().filter(|o| labels.matches(|k| o.meta.label(k)) && fields.matches(|k| o.meta.field(k))).collect()
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

/// The list document as frames: a header, each item's cached encoding
/// (shared, not copied) preceded by a separator, and the closing bytes.
pub fn list_frames(list_kind: &str, api_version: &str, revision: u64, objects: &[Arc<CachedObject>]) -> Vec<Bytes> {
    let mut frames = Vec::with_capacity(objects.len() * 2 + 2);
    let mut head = BytesMut::with_capacity(128);
    head.put_slice(b"{\"kind\":");
    head.put_slice(serde_json::to_string(list_kind).unwrap_or_default().as_bytes());
    head.put_slice(b",\"apiVersion\":");
    head.put_slice(serde_json::to_string(api_version).unwrap_or_default().as_bytes());
    head.put_slice(format!(",\"metadata\":{{\"resourceVersion\":\"{revision}\"}},\"items\":[").as_bytes());
    frames.push(head.freeze());
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            frames.push(Bytes::from_static(b","));
        }
        frames.push(object.json.clone());
    }
    frames.push(Bytes::from_static(b"]}"));
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::encode_stored;
    use crate::log::Revision;

    fn object(namespace: &str, name: &str) -> Arc<CachedObject> {
        let key = crate::types::key::ObjectKey::new("", "pods", namespace, name).encode();
        let value =
            format!(r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","namespace":"{namespace}"}}}}"#);
        encode_stored(key, value.as_bytes(), Revision(1), Revision(1), &[]).unwrap()
    }

    #[test]
    fn merge_interleaves_sorted_runs() {
        let a = vec![object("a", "1"), object("b", "1")];
        let b = vec![object("a", "2"), object("c", "0")];
        let merged: Vec<String> =
            merge(vec![a, vec![], b]).iter().map(|o| format!("{}/{}", o.meta.namespace, o.meta.name)).collect();
        assert_eq!(merged, ["a/1", "a/2", "b/1", "c/0"]);
    }

    #[test]
    fn list_frames_form_one_json_document_sharing_item_bytes() {
        let objects = vec![object("a", "1"), object("a", "2")];
        let frames = list_frames("PodList", "v1", 7, &objects);
        let joined: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        let list: serde_json::Value = serde_json::from_slice(&joined).unwrap();
        assert_eq!(list["kind"], "PodList");
        assert_eq!(list["metadata"]["resourceVersion"], "7");
        assert_eq!(list["items"].as_array().unwrap().len(), 2);
        // The item frames are the cached encodings themselves, not copies.
        assert_eq!(frames[1].as_ptr(), objects[0].json.as_ptr());
        let empty: Vec<u8> = list_frames("PodList", "v1", 7, &[]).iter().flat_map(|f| f.to_vec()).collect();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&empty).unwrap()["items"], serde_json::json!([]));
    }
}
