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
//! Bookmarks: with `allowWatchBookmarks=true` the shard sends one every
//! `watch_bookmark_interval` when the watcher has made progress. Streaming
//! lists: `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan`)
//! sends the state as ADDED events and then a BOOKMARK annotated
//! `k8s.io/initial-events-end: "true"`.
//!
//! A watch with bookmarks ends one second before its timeout with a last
//! bookmark at the highest revision it delivered.
//!
//! Not yet here (the watch issue): indexed matching of watchers, the
//! 10,000-stream HTTP/2 test, the seeded simulation.

use super::list::{fetch, Selectors};
use super::Resolved;
use crate::api::negotiate::{self, Representation};
use crate::api::status::ApiError;
use crate::api::status::{Cause, Target};
use crate::api::{Backend, BodyError, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::list::merge;
use crate::types::key::collection_prefix;
use crate::watch::{bookmark_object, BookmarkSpec, EventType, StartError, WatchFilter, FRAME_SUFFIX};
use bytes::Bytes;
use futures_util::StreamExt;
use http::Response;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// How long before its timeout a watch with bookmarks sends its last one.
const FINAL_BOOKMARK_LEAD: Duration = Duration::from_secs(1);

/// Rounds of the initial state read per shard at once.
const INITIAL_ROUND_OBJECTS: usize = 1000;

fn event_frames(event_type: EventType, object: Bytes) -> [Bytes; 3] {
    [Bytes::from_static(event_type.frame_prefix()), object, Bytes::from_static(FRAME_SUFFIX)]
}

fn type_name(event_type: EventType) -> &'static str {
    match event_type {
        EventType::Added => "ADDED",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED",
        EventType::Bookmark => "BOOKMARK",
    }
}

/// An event's frames in the negotiated representation; a non-JSON object
/// comes from its cached encoding (`source`), built once for all watchers.
fn frames_in(
    representation: &Representation,
    event_type: &str,
    source: Option<&CachedObject>,
    json: Bytes,
) -> Vec<Bytes> {
    if *representation == Representation::Json {
        let prefix = format!("{{\"type\":\"{event_type}\",\"object\":");
        return vec![Bytes::from(prefix), json, Bytes::from_static(FRAME_SUFFIX)];
    }
    // An object that cannot be encoded (stored data its schema refuses) is left out of the stream.
    crate::api::encode::watch_event(representation, event_type, source, &json).unwrap_or_default()
}

pub async fn serve<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let builtin = crate::api::protobuf_encode::has_schema(&resolved.info.api_version(), &resolved.info.kind);
    let representation = negotiate::choose(head.accept.as_deref(), negotiate::Offer::watch(builtin))?;
    let content_type = crate::api::encode::watch_content_type(&representation);
    let selectors = Arc::new(Selectors::parse(head, resolved)?);
    let name = resolved.name.clone();
    let prefix: Arc<str> =
        collection_prefix(&resolved.info.group, &resolved.info.resource, resolved.namespace.as_deref()).into();
    let matches = {
        let selectors = selectors.clone();
        let name = name.clone();
        move |o: &CachedObject| selectors.matches(o) && name.as_ref().is_none_or(|n| o.meta.name == *n)
    };
    validate(head)?;
    let requested = head.params.resource_version.as_deref().filter(|v| !v.is_empty());
    let send_initial = head.params.send_initial_events;
    let (after, initial) = match (requested, send_initial) {
        // sendInitialEvents=false: start at the requested revision (or the
        // most recent), without the current state.
        (None, Some(false)) => (backend.committed_revision(), Vec::new()),
        (None, _) | (Some("0"), None) | (Some(_), Some(true)) => {
            // Not older than a given revision: wait for the log to reach it.
            if let Some(text) = requested.filter(|t| *t != "0") {
                let wanted = crate::list::parse_resource_version(text).map_err(|e| match e {
                    crate::list::PlanError::BadRequest(m) => ApiError::BadRequest(m),
                    crate::list::PlanError::Invalid { detail, .. } => ApiError::BadRequest(detail),
                })?;
                super::list::wait_for(backend, wanted).await?;
            }
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
        (Some(text), _) => {
            let revision = crate::list::parse_resource_version(text).map_err(|e| match e {
                crate::list::PlanError::BadRequest(m) => ApiError::BadRequest(m),
                crate::list::PlanError::Invalid { detail, .. } => ApiError::BadRequest(detail),
            })?;
            (revision, Vec::new())
        }
    };
    // A single-object watch is indexed by the object's key.
    let indexed_name = name.clone().or_else(|| {
        selectors
            .fields
            .requirements
            .iter()
            .find(|r| r.key == "metadata.name" && r.operator == crate::types::selector::Operator::Equals)
            .map(|r| r.value.clone())
    });
    let config = backend.config();
    let kind = resolved.info.kind.clone();
    let api_version = resolved.info.api_version();
    let bookmarks = head.params.allow_watch_bookmarks.then(|| BookmarkSpec {
        kind: kind.clone(),
        api_version: api_version.clone(),
        interval_ms: config.watch_bookmark_interval.as_millis() as u64,
    });
    let filter = WatchFilter {
        prefix: Bytes::copy_from_slice(prefix.as_bytes()),
        matches: Some(Box::new(matches)),
        bookmarks,
        name: indexed_name,
    };
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
            let frames = frames_in(&representation, "ERROR", None, status);
            return Ok(watch_response(super::list::stream_body(frames), content_type));
        }
    };
    let guard = stream.guard;
    let mut initial_frames: Vec<Vec<Bytes>> =
        initial.into_iter().map(|o| frames_in(&representation, "ADDED", Some(&o), o.json.clone())).collect();
    if send_initial == Some(true) {
        // A streaming list ends its initial events with this bookmark.
        let bookmark = bookmark_object(&kind, &api_version, after, true);
        initial_frames.push(frames_in(&representation, "BOOKMARK", None, bookmark));
    }
    let initial = futures_util::stream::iter(initial_frames);
    // The highest revision delivered so far: the final bookmark's.
    let delivered = Rc::new(std::cell::Cell::new(after));
    let seen = delivered.clone();
    let live_representation = representation.clone();
    let live = stream.events.map(move |event| {
        // The guard lives as long as the body: dropping the body unregisters the watcher.
        let _ = &guard;
        if event.revision > seen.get() {
            seen.set(event.revision);
        }
        if live_representation == Representation::Json {
            return event_frames(event.event_type, event.object).to_vec();
        }
        frames_in(&live_representation, type_name(event.event_type), event.source.as_deref(), event.object)
    });
    // With bookmarks, the watch ends a little early with one last bookmark,
    // so the client resumes from there instead of relisting.
    let wants_bookmarks = head.params.allow_watch_bookmarks;
    let ending =
        if wants_bookmarks && timeout > FINAL_BOOKMARK_LEAD * 2 { timeout - FINAL_BOOKMARK_LEAD } else { timeout };
    let last_bookmark = futures_util::stream::iter(std::iter::once(())).filter_map(move |()| {
        let frames = wants_bookmarks.then(|| {
            let bookmark = bookmark_object(&kind, &api_version, delivered.get(), false);
            frames_in(&representation, "BOOKMARK", None, bookmark)
        });
        std::future::ready(frames)
    });
    let frames = initial.chain(live).take_until(backend.sleep(ending)).chain(last_bookmark).flat_map(|frames| {
        futures_util::stream::iter(frames.into_iter().map(|b| Ok::<_, BodyError>(http_body::Frame::data(b))))
    });
    Ok(watch_response(ResponseBody::new(http_body_util::StreamBody::new(frames)), content_type))
}

/// The watch options table: `resourceVersionMatch` only with
/// `sendInitialEvents`, and then only `NotOlderThan`; `sendInitialEvents`
/// needs `resourceVersionMatch=NotOlderThan`. Each failure is a 422 naming the
/// field, as kube-apiserver validates ListOptions for watch.
fn validate(head: &RequestHead) -> Result<(), ApiError> {
    let rv_match = head.params.resource_version_match.as_deref().filter(|m| !m.is_empty());
    let mut causes = Vec::new();
    let forbidden = |field: &str, detail: &str| Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    };
    if head.params.send_initial_events.is_some() && rv_match != Some("NotOlderThan") {
        causes.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if let Some(m) = rv_match {
        if head.params.send_initial_events.is_none() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if m != "NotOlderThan" {
            causes.push(Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!("Unsupported value: \"{m}\": supported values: \"NotOlderThan\""),
                field: "resourceVersionMatch".into(),
            });
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid { kind: "ListOptions".into(), target: Target::new("meta.k8s.io", "", ""), causes })
}

fn watch_response(body: ResponseBody, content_type: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    response
}
