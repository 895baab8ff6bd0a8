//! WATCH of a collection or of one object: `?watch=1` or the legacy
//! `/watch/` paths. The response is chunked JSON, one event document per
//! line; each event's object is the bytes the shard encoded once for all its
//! watchers, sent as its own frame.
//!
//! resourceVersion: unset or "0" sends the current state as ADDED events (a
//! list at the commit point) and then every change after it; a value starts
//! exactly after it, from the shard's history; a value older than the
//! history is an ERROR event carrying a 410 Expired Status, as
//! kube-apiserver's watch cache answers. A watch ends after `timeoutSeconds`,
//! or after a random time between `watch_timeout_min` and `_max`.
//!
//! Not yet here (the watch issue): bookmarks, `sendInitialEvents`, indexed
//! matching of watchers.

use super::list::{fetch, Selectors};
use super::Resolved;
use crate::api::status::ApiError;
use crate::api::{Backend, BodyError, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::list::merge;
use crate::types::key::collection_prefix;
use crate::watch::{EventType, StartError, WatchFilter, FRAME_SUFFIX};
use bytes::Bytes;
use futures_util::StreamExt;
use http::Response;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Rounds of the initial state read per shard at once.
const INITIAL_ROUND_OBJECTS: usize = 1000;

fn event_frames(event_type: EventType, object: Bytes) -> [Bytes; 3] {
    [Bytes::from_static(event_type.frame_prefix()), object, Bytes::from_static(FRAME_SUFFIX)]
}

pub async fn serve<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let selectors = Arc::new(Selectors::parse(head, resolved)?);
    let name = resolved.name.clone();
    let prefix: Arc<str> =
        collection_prefix(&resolved.info.group, &resolved.info.resource, resolved.namespace.as_deref()).into();
    let matches = {
        let selectors = selectors.clone();
        let name = name.clone();
        move |o: &CachedObject| selectors.matches(o) && name.as_ref().is_none_or(|n| o.meta.name == *n)
    };
    let requested = head.params.resource_version.as_deref().filter(|v| !v.is_empty());
    let (after, initial) = match requested {
        None | Some("0") => {
            // Get state and start at the most recent revision.
            let revision = backend.committed_revision();
            let mut items: Vec<Arc<CachedObject>> = Vec::new();
            let mut cursor: Option<Bytes> = None;
            loop {
                let runs = fetch(backend, &prefix, revision, cursor.clone(), INITIAL_ROUND_OBJECTS, &selectors)
                    .await?
                    .map_err(|compacted| ApiError::Expired {
                        message: format!("too old resource version: {revision} ({compacted})"),
                        continue_token: None,
                    })?;
                let round = merge(runs, INITIAL_ROUND_OBJECTS);
                let done = round.len() < INITIAL_ROUND_OBJECTS;
                cursor = round.last().map(|o| o.key.clone());
                items.extend(round.into_iter().filter(|o| name.as_ref().is_none_or(|n| o.meta.name == *n)));
                if done {
                    break;
                }
            }
            (revision, items)
        }
        Some(text) => {
            let revision = crate::list::parse_resource_version(text).map_err(|e| match e {
                crate::list::PlanError::BadRequest(m) => ApiError::BadRequest(m),
                crate::list::PlanError::Invalid { detail, .. } => ApiError::BadRequest(detail),
            })?;
            (revision, Vec::new())
        }
    };
    let filter = WatchFilter { prefix: Bytes::copy_from_slice(prefix.as_bytes()), matches: Some(Box::new(matches)) };
    let config = backend.config();
    let timeout = match head.params.timeout_seconds {
        Some(seconds) => Duration::from_secs(seconds),
        None => {
            let span = config.watch_timeout_max.saturating_sub(config.watch_timeout_min).as_millis() as u64;
            config.watch_timeout_min + Duration::from_millis(if span == 0 { 0 } else { rand::random::<u64>() % span })
        }
    };
    let stream = match backend.start_watch(filter, after).await {
        Ok(stream) => stream,
        Err(StartError::TooOld { requested, oldest }) => {
            let status = ApiError::Expired {
                message: format!("too old resource version: {requested} ({oldest})"),
                continue_token: None,
            }
            .to_status_json();
            let frames =
                vec![Bytes::from_static(b"{\"type\":\"ERROR\",\"object\":"), status, Bytes::from_static(FRAME_SUFFIX)];
            return Ok(watch_response(super::list::stream_body(frames)));
        }
    };
    let guard = stream.guard;
    let initial =
        futures_util::stream::iter(initial.into_iter().map(|o| event_frames(EventType::Added, o.json.clone())));
    let live = stream.events.map(move |event| {
        // The guard lives as long as the body: dropping the body unregisters the watcher.
        let _ = &guard;
        event_frames(event.event_type, event.object)
    });
    let frames = initial
        .chain(live)
        .flat_map(|frames| {
            futures_util::stream::iter(frames.into_iter().map(|b| Ok::<_, BodyError>(http_body::Frame::data(b))))
        })
        .take_until(backend.sleep(timeout));
    Ok(watch_response(ResponseBody::new(http_body_util::StreamBody::new(frames))))
}

fn watch_response(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
