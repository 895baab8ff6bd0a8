//! WATCH of a collection or of one object: `?watch=1` or the legacy
//! `/watch/` paths. The response is chunked JSON, one event document per
//! line; each event's object is the bytes the shard encoded once for all its
//! watchers, sent as its own frame.
//!
//! resourceVersion: unset or "0" sends the current state as ADDED events (a
//! list at the commit point) and then every change after it, unless
//! `sendInitialEvents=false` (then it starts at the most recent revision
//! without the state, as kube-apiserver does for both); a value starts
//! exactly after it, from the shard's history; a value older than the
//! history is an ERROR event carrying a 410 Expired Status, as
//! kube-apiserver's watch cache answers. A watch ends after `timeoutSeconds`,
//! or after a random time between `watch_timeout_min` and `_max`.
//!
//! Bookmarks: with `allowWatchBookmarks=true` the shard's hub sends one every
//! `watch_bookmark_interval` (kube: a minute) and one two seconds before the
//! watch's timeout, at the current resourceVersion when it is above the one
//! the watch started from (`watch/`); the watch then lasts until its
//! timeout. A bookmark's object is its kind's zero value with only
//! `metadata.resourceVersion` set, as kube-apiserver sends the new empty
//! object of the type (a custom resource's: apiVersion, kind, metadata, the
//! order of an unstructured object's keys), in every representation. Streaming
//! lists: `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan`)
//! sends the state as ADDED events and then a BOOKMARK annotated
//! `k8s.io/initial-events-end: "true"`.
//!
//! `as=PartialObjectMetadata`: each event's object (bookmarks too) is its
//! PartialObjectMetadata (`api/metadata.rs`), ERROR events keep their Status.
//!
//! The initial state (resourceVersion unset or "0", or sendInitialEvents)
//! is read at one snapshot revision R and streamed in rounds of
//! `list_stream_batch_objects` per shard, as an unpaginated list is; the
//! watcher is registered at R before the first round is sent, so the live
//! events (after R) wait in its bounded queue and follow the initial state
//! with no gap and no duplicate. A queue that overflows meanwhile closes the
//! watcher (counted), and the client resumes.
//!
//! A resourceVersion the server has not reached yet is accepted, as by
//! kube-apiserver's watch cache: the watch gets only events after it (and no
//! bookmark at or before it). A streaming list (sendInitialEvents=true) must
//! first reach it: past `resource_version_wait` it is an ERROR event with a
//! 504 "Too large resource version" Status, as the cacher's
//! waitUntilFreshAndBlock answers.

use super::list::{fetch, Selectors};
use super::Resolved;
use crate::api::negotiate::{self, Representation};
use crate::api::status::ApiError;
use crate::api::status::{Cause, Target};
use crate::api::{Backend, BodyError, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::list::merge;
use crate::log::Revision;
use crate::watch::{BookmarkShape, BookmarkSpec, EventType, StartError, WatchFilter, FRAME_SUFFIX};
use bytes::Bytes;
use futures_util::StreamExt;
use http::Response;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// The bookmark object of a resource's kind: the zero value kube's encoder
/// writes for a new empty object of its type (built-in kinds: the Go
/// struct's fields without `omitempty`, `strategy::decode::order`), with
/// `metadata.resourceVersion`; a custom resource's is unstructured (its
/// keys sorted: apiVersion, kind, metadata).
pub fn bookmark_shape(info: &crate::types::registry::ResourceInfo) -> BookmarkShape {
    let api_version = info.api_version();
    if info.custom.is_some() {
        let zero = format!(
            "{{\"apiVersion\":{},\"kind\":{},\"metadata\":{{\"resourceVersion\":\"0\"}}}}",
            serde_json::Value::from(api_version.as_str()),
            serde_json::Value::from(info.kind.as_str())
        );
        return BookmarkShape::from_zero_object(&info.kind, &api_version, &zero);
    }
    let mut object = crate::api::object::Object::new();
    object.insert("kind".into(), info.kind.as_str().into());
    object.insert("apiVersion".into(), api_version.as_str().into());
    object.insert("metadata".into(), serde_json::json!({"resourceVersion": "0"}));
    crate::strategy::decode::order(&info.group, &info.version, &info.kind, &mut object);
    let zero = serde_json::to_string(&object).unwrap_or_default();
    BookmarkShape::from_zero_object(&info.kind, &api_version, &zero)
}

fn event_frames(event_type: EventType, object: Bytes) -> [Bytes; 3] {
    [Bytes::from_static(event_type.frame_prefix()), object, Bytes::from_static(FRAME_SUFFIX)]
}

/// One buffer holding `parts` in order (the parts themselves when there is
/// only one): a watch body's frames are a byte stream, so joining them
/// changes nothing the client reads, and saves a chunk header or an HTTP/2
/// DATA frame, a poll of the body and a flow-control reservation per part.
fn coalesce(parts: Vec<Bytes>) -> Bytes {
    if parts.len() == 1 {
        return parts.into_iter().next().unwrap_or_default();
    }
    let mut joined = bytes::BytesMut::with_capacity(parts.iter().map(Bytes::len).sum());
    for part in &parts {
        joined.extend_from_slice(part);
    }
    joined.freeze()
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
    if matches!(representation, Representation::Json | Representation::Table { .. }) {
        let prefix = format!("{{\"type\":\"{event_type}\",\"object\":");
        return vec![Bytes::from(prefix), json, Bytes::from_static(FRAME_SUFFIX)];
    }
    // An object that cannot be encoded (stored data its schema refuses) is left out of the stream.
    crate::api::encode::watch_event(representation, event_type, source, &json).unwrap_or_default()
}

/// Renders one event (object, bookmark) for a watcher: JSON (the event's
/// cached bytes between a prefix and a suffix, nothing kept per watch), or
/// a one-row Table, a converted custom resource, or the cached
/// protobuf/CBOR encoding.
#[derive(Clone)]
enum Render {
    Json,
    Other(Rc<RenderFn>),
}

type RenderFn = dyn Fn(EventType, Option<&CachedObject>, Bytes) -> Vec<Bytes>;

impl Render {
    fn frames(&self, event_type: EventType, source: Option<&CachedObject>, object: Bytes) -> Vec<Bytes> {
        match self {
            Render::Json => event_frames(event_type, object).to_vec(),
            Render::Other(render) => render(event_type, source, object),
        }
    }
}

/// Bookmark shapes kept per core: one per kind watched with bookmarks (a
/// handful), so 10,000 idle watches of pods share one. Past this many the
/// least recently used goes; each is a few hundred bytes.
const BOOKMARK_SHAPES_MAX: usize = 64;

thread_local! {
    /// This core's bookmark shapes by (apiVersion, kind, custom), most recently used first.
    static BOOKMARK_SHAPES: std::cell::RefCell<Vec<((String, String, bool), Arc<BookmarkShape>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// [`bookmark_shape`], shared by every watch of the kind on this core.
fn interned_bookmark_shape(info: &crate::types::registry::ResourceInfo) -> Arc<BookmarkShape> {
    let key = (info.api_version(), info.kind.clone(), info.custom.is_some());
    BOOKMARK_SHAPES.with(|shapes| {
        let mut shapes = shapes.borrow_mut();
        if let Some(found) = shapes.iter().position(|(k, _)| *k == key) {
            let entry = shapes.remove(found);
            let shape = entry.1.clone();
            shapes.insert(0, entry);
            return shape;
        }
        let shape = Arc::new(bookmark_shape(info));
        shapes.truncate(BOOKMARK_SHAPES_MAX - 1);
        shapes.insert(0, (key, shape.clone()));
        shape
    })
}

pub async fn serve<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let selectors = Arc::new(Selectors::parse(head, resolved)?);
    let name = resolved.name.clone();
    let prefix: Arc<str> = resolved.collection_prefix().into();
    let matches = {
        let selectors = selectors.clone();
        let name = name.clone();
        move |o: &CachedObject| selectors.matches(o) && name.as_ref().is_none_or(|n| o.meta().name() == n.as_str())
    };
    validate(head)?;
    let builtin = crate::api::protobuf_encode::has_schema(&resolved.info.api_version(), &resolved.info.kind);
    let representation = negotiate::choose(head.accept.as_deref(), negotiate::Offer::watch(builtin))?;
    let content_type = crate::api::encode::watch_content_type(&representation);
    // as=Table: each event's object becomes a one-row Table (see table.rs).
    let table = match &representation {
        Representation::Table { version } => {
            Some(Rc::new(super::table::TableRequest::new(version, &head.params, &resolved.info)?))
        }
        _ => None,
    };
    let requested = head.params.resource_version.as_deref().filter(|v| !v.is_empty());
    let send_initial = head.params.send_initial_events;
    let batch = backend.config().list_stream_batch_objects.max(1);
    let expired = |revision: Revision, compacted: Revision| ApiError::Expired {
        message: format!("too old resource version: {revision} ({compacted})"),
        continue_token: None,
    };
    let (after, first_round) = match (requested, send_initial) {
        // sendInitialEvents=false without a resourceVersion: "Start at Most
        // Recent"; with resourceVersion "0": "Start at Any", which is the
        // most recent here too (kube-apiserver's watch cache starts at its
        // own current revision). Neither sends the current state.
        (None, Some(false)) | (Some("0"), Some(false)) => (backend.committed_revision(), None),
        (None, _) | (Some("0"), None) | (Some(_), Some(true)) => {
            // Not older than a given revision: wait for the log to reach it.
            if let Some(text) = requested.filter(|t| *t != "0") {
                let wanted = crate::list::parse_resource_version(text).map_err(ApiError::BadRequest)?;
                // As kube-apiserver's cacher: past `resource_version_wait`
                // the watch is an ERROR event (504 "Too large resource
                // version"), once the request itself was valid.
                if let Err(e) = super::list::wait_for(backend, wanted).await {
                    return Ok(error_event(&representation, content_type, &e));
                }
            }
            // Get state and start at the most recent revision. The first
            // round is read before the response starts (an expired snapshot
            // is still a 410); the rest streams as the body is sent.
            let revision = match requested {
                // Unset: a consistent read, as a list without resourceVersion.
                None => backend.consistent_revision().await.map_err(super::backend_error)?,
                Some(_) => backend.committed_revision(),
            };
            let first = fetch(backend, &prefix, revision, std::ops::Bound::Unbounded, batch, &selectors)
                .await?
                .map_err(|compacted| expired(revision, compacted))?;
            (revision, Some(first))
        }
        // A given revision (kube-apiserver's watch cache does the same for
        // one the server has not reached yet: no wait, no error; events
        // start after it).
        (Some(text), _) => {
            let revision = crate::list::parse_resource_version(text).map_err(ApiError::BadRequest)?;
            (revision, None)
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
    // A watch that requires an exact value of the resource's trigger field
    // (a kubelet's `spec.nodeName=NODE`) is indexed by that value.
    let trigger = crate::watch::trigger_field(&resolved.info.group, &resolved.info.resource).and_then(|field| {
        selectors
            .fields
            .requirements
            .iter()
            .find(|r| r.key == field && r.operator == crate::types::selector::Operator::Equals)
            .map(|r| r.value.clone())
    });
    let config = backend.config();
    // Shared by the hub's bookmarks and the initial-events-end bookmark (and
    // by every watch of the kind on this core).
    let shape = interned_bookmark_shape(&resolved.info);
    let bookmarks = head.params.allow_watch_bookmarks.then(|| BookmarkSpec { shape: shape.clone() });
    // A watch of everything (no selector, no name) keeps no filter.
    let everything = selectors.labels.requirements.is_empty() && selectors.fields.requirements.is_empty();
    let filter = WatchFilter {
        prefix: Bytes::copy_from_slice(prefix.as_bytes()),
        matches: (!everything || name.is_some()).then(|| Box::new(matches) as Box<dyn Fn(&CachedObject) -> bool>),
        bookmarks,
        name: indexed_name,
        trigger,
    };
    let timeout = match head.params.timeout_seconds {
        Some(seconds) => Duration::from_secs(seconds),
        None => {
            let span = config.watch_timeout_max.saturating_sub(config.watch_timeout_min).as_millis() as u64;
            config.watch_timeout_min + Duration::from_millis(if span == 0 { 0 } else { rand::random::<u64>() % span })
        }
    };
    let watch_started = std::time::Instant::now();
    // The hub closes the watcher at its timeout (and sends the bookmark
    // before it): an idle watch keeps no timer.
    let stream = match backend.start_watch(filter, after, timeout).await {
        Ok(stream) => stream,
        Err(StartError::TooOld { requested, oldest }) => {
            return Ok(error_event(
                &representation,
                content_type,
                &ApiError::Expired {
                    message: format!("too old resource version: {requested} ({oldest})"),
                    continue_token: None,
                },
            ));
        }
    };
    // Column definitions go in the first event's Table only; bookmarks are
    // tabulated too, as kube-apiserver's watch encoder transforms them.
    let render = if table.is_none()
        && representation == Representation::Json
        && !super::versions::needs_conversion(&resolved.info)
    {
        Render::Json
    } else {
        let clock = shared.clone();
        let first = std::cell::Cell::new(true);
        let representation = representation.clone();
        let info = resolved.info.clone();
        Render::Other(Rc::new(
            move |event_type: EventType, source: Option<&CachedObject>, object: Bytes| match &table {
                Some(table) => {
                    event_frames(event_type, table.watch_event(&object, first.replace(false), clock.now())).to_vec()
                }
                // PartialObjectMetadata: the metadata is the same in every version.
                None if matches!(representation, Representation::Metadata(_)) => {
                    frames_in(&representation, type_name(event_type), source, object)
                }
                // Read in a version other than the stored one (a custom
                // resource's other version, a shared store's: `versions`).
                None if super::versions::needs_conversion(&info) => {
                    frames_in(&representation, type_name(event_type), None, super::versions::convert(&info, &object))
                }
                None if representation == Representation::Json => event_frames(event_type, object).to_vec(),
                None => frames_in(&representation, type_name(event_type), source, object),
            },
        ))
    };
    // The initial state at `after`, in rounds of `batch` per shard, while
    // the live events after `after` wait in the watcher's bounded queue; a
    // streaming list ends it with a bookmark (built lazily, after the
    // initial events: only the first Table has columns). Boxed apart from
    // the body, and dropped once sent.
    let initial: Option<Box<Initial>> = first_round.is_some().then(|| {
        let rounds = initial_rounds(
            shared.clone(),
            InitialRounds {
                prefix,
                selectors,
                name,
                revision: after,
                batch,
                pending: first_round,
                cursor: None,
                render: render.clone(),
            },
        );
        let to_table = render.clone();
        let initial_end = futures_util::stream::iter((send_initial == Some(true)).then_some(()))
            .map(move |()| Ok(to_table.frames(EventType::Bookmark, None, shape.object(after, true))));
        Box::new(Initial { rounds: Some(Box::pin(rounds.chain(initial_end))), frames: Vec::new().into_iter() })
    });
    // The initial state's rounds are cut at the timeout by this deadline
    // (the hub's close ends the live events, not a round being read).
    let deadline = initial.is_some().then(|| backend.sleep(timeout));
    let body = WatchBody {
        initial,
        events: Some(stream.events),
        guard: Some(stream.guard),
        deadline,
        render,
        frame_events_max: config.watch_frame_events_max.max(1),
        delivery: backend.metrics().cloned().map(|metrics| Box::new(Delivery { metrics, watch_started })),
        // as=PartialObjectMetadataList on a watch: kube-apiserver cannot
        // convert an event's object to a list, and its watch ends at the
        // first event (having sent nothing of it).
        ends_at_first_event: matches!(&representation, Representation::Metadata(m) if m.list),
    };
    Ok(watch_response(ResponseBody::new(body), content_type))
}

/// Rounds of frames of the initial state.
type Rounds = std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Vec<Bytes>, BodyError>>>>;

/// The initial state of a watch: its rounds, and the frames of the current
/// round not sent yet.
struct Initial {
    /// `None` once the watch has timed out (the current round's frames still go).
    rounds: Option<Rounds>,
    frames: std::vec::IntoIter<Bytes>,
}

/// A watch's response body: the initial state's frames, then the live
/// events (every event queued when it is polled, up to
/// `watch_frame_events_max`, as one frame: one chunk or DATA frame per
/// wake-up rather than three per event), until the deadline or the end of
/// the watcher (its bookmarks come from the hub, in its queue). An idle watch holds
/// only this struct, its queue's receiver, its guard and its deadline: what
/// it needs for the initial state is dropped once that is sent.
struct WatchBody {
    initial: Option<Box<Initial>>,
    /// The watcher's queue; `None` once the watch has ended.
    events: Option<std::pin::Pin<Box<dyn futures_util::Stream<Item = crate::watch::WatchEvent>>>>,
    /// Unregisters the watcher when dropped (with `events`).
    guard: Option<Box<dyn std::any::Any>>,
    /// While the initial state is sent: when to stop (the hub closes the
    /// watcher itself at the same time, which ends `events`).
    deadline: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>,
    render: Render,
    frame_events_max: usize,
    /// Where write-to-watch latency is recorded (`None` without metrics).
    delivery: Option<Box<Delivery>>,
    /// `as=PartialObjectMetadataList`: the body ends where its first frame would be.
    ends_at_first_event: bool,
}

/// What a watch needs to time its events from their commit.
struct Delivery {
    metrics: Rc<crate::metrics::ShardMetrics>,
    /// Events committed before the watch started are not timed.
    watch_started: std::time::Instant,
}

impl WatchBody {
    /// The watch is over: the watcher goes (with its queue).
    fn end(&mut self) {
        self.guard = None;
        self.events = None;
        self.deadline = None;
        if let Some(initial) = &mut self.initial {
            initial.rounds = None;
        }
    }
}

impl http_body::Body for WatchBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BodyError>>> {
        use std::task::Poll;
        let this = self.get_mut();
        let polled = this.poll_next_frame(cx);
        if this.ends_at_first_event {
            if let Poll::Ready(Some(Ok(_))) = polled {
                this.end();
                return Poll::Ready(None);
            }
        }
        polled
    }
}

impl WatchBody {
    fn poll_next_frame(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BodyError>>> {
        use std::task::Poll;
        let this = self;
        loop {
            if let Some(frame) = this.initial.as_mut().and_then(|i| i.frames.next()) {
                return Poll::Ready(Some(Ok(http_body::Frame::data(frame))));
            }
            if let Some(deadline) = &mut this.deadline {
                if deadline.as_mut().poll(cx).is_ready() {
                    this.end();
                }
            }
            if let Some(initial) = &mut this.initial {
                let Some(rounds) = &mut initial.rounds else {
                    this.initial = None;
                    continue;
                };
                match rounds.as_mut().poll_next(cx) {
                    Poll::Ready(Some(Ok(frames))) => initial.frames = frames.into_iter(),
                    Poll::Ready(Some(Err(e))) => {
                        this.initial = None;
                        return Poll::Ready(Some(Err(e)));
                    }
                    Poll::Ready(None) => {
                        this.initial = None;
                        this.deadline = None;
                    }
                    Poll::Pending => return Poll::Pending,
                }
                continue;
            }
            if let Some(events) = &mut this.events {
                let mut parts = Vec::new();
                let mut taken = 0;
                let mut ended = false;
                while taken < this.frame_events_max {
                    match events.as_mut().poll_next(cx) {
                        Poll::Ready(Some(event)) => {
                            taken += 1;
                            // Write-to-watch latency: each change from its commit to now.
                            if let Some(delivery) = &this.delivery {
                                if event.event_type != EventType::Bookmark {
                                    let now = std::time::Instant::now();
                                    delivery.metrics.delivered(delivery.watch_started, now, [event.revision]);
                                }
                            }
                            parts.extend(this.render.frames(event.event_type, event.source.as_deref(), event.object));
                        }
                        Poll::Ready(None) => {
                            ended = true;
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
                if ended {
                    this.end();
                }
                // An event that could not be encoded has no parts: no empty frame.
                if !parts.is_empty() {
                    return Poll::Ready(Some(Ok(http_body::Frame::data(coalesce(parts)))));
                }
                if taken > 0 || ended {
                    continue;
                }
                return Poll::Pending;
            }
            return Poll::Ready(None);
        }
    }
}

/// Where the initial state's stream is.
struct InitialRounds {
    prefix: Arc<str>,
    selectors: Arc<Selectors>,
    /// A `/watch/.../NAME` path's object.
    name: Option<String>,
    revision: Revision,
    batch: usize,
    /// A round read but not yet sent (the first); `None` with no cursor and
    /// nothing pending means there is no initial state to send.
    pending: Option<Vec<Vec<Arc<CachedObject>>>>,
    cursor: Option<Bytes>,
    /// Renders each object in the watch's representation.
    render: Render,
}

/// The initial state as ADDED events, one round of at most `batch` objects
/// per shard at a time (the watch's extra memory is one round, whatever the
/// collection's size). A snapshot that leaves the history window mid-stream
/// ends the body with an error, as a streamed list does.
fn initial_rounds<B: Backend + 'static>(
    backend: Rc<B>,
    rounds: InitialRounds,
) -> impl futures_util::Stream<Item = Result<Vec<Bytes>, BodyError>> {
    let done = rounds.pending.is_none();
    futures_util::stream::unfold((backend, rounds, done), |(backend, mut state, done)| async move {
        if done {
            return None;
        }
        let runs = match state.pending.take() {
            Some(runs) => runs,
            None => {
                match fetch(
                    &*backend,
                    &state.prefix,
                    state.revision,
                    super::list::after(state.cursor.clone()),
                    state.batch,
                    &state.selectors,
                )
                .await
                {
                    Ok(Ok(runs)) => runs,
                    Ok(Err(compacted)) => {
                        let error: BodyError = format!(
                            "watch initial state at {} expired mid-stream (compacted {compacted})",
                            state.revision
                        )
                        .into();
                        return Some((Err(error), (backend, state, true)));
                    }
                    Err(e) => return Some((Err(BodyError::from(e.to_string())), (backend, state, true))),
                }
            }
        };
        let round = merge(runs, state.batch);
        let last = round.len() < state.batch;
        state.cursor = round.last().map(|o| o.key.clone());
        let mut frames = Vec::with_capacity(round.len() * 3);
        let mut sent = 0u64;
        for object in round.iter().filter(|o| state.name.as_ref().is_none_or(|n| o.meta().name() == n.as_str())) {
            frames.extend(state.render.frames(EventType::Added, Some(object), object.json.clone()));
            sent += 1;
        }
        backend.count_initial_events(sent);
        Some((Ok(frames), (backend, state, last)))
    })
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

/// A watch that ends at once with one ERROR event carrying the Status, as
/// kube-apiserver answers a valid watch it cannot serve.
fn error_event(
    representation: &Representation,
    content_type: &'static str,
    error: &ApiError,
) -> Response<ResponseBody> {
    let frames = frames_in(representation, "ERROR", None, error.to_status_json());
    watch_response(super::list::stream_body(frames), content_type)
}

fn watch_response(body: ResponseBody, content_type: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::registry::Registry;

    fn json(bytes: &[u8]) -> serde_json::Value {
        serde_json::from_slice(bytes).unwrap()
    }

    /// A bookmark is its kind's zero value (kube-apiserver sends the new
    /// empty object of the type) with only the resourceVersion, and the
    /// same content in a Protobuf watch frame as in a JSON one.
    #[test]
    fn bookmarks_are_the_kinds_zero_value_in_json_and_protobuf_alike() {
        let registry = Registry::builtin();
        let pods = registry.lookup("", "v1", "pods").unwrap();
        let bookmark = bookmark_shape(pods).object(Revision(12), false);
        assert_eq!(
            std::str::from_utf8(&bookmark).unwrap(),
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"},"spec":{"containers":null},"status":{}}"#
        );
        let configmaps = registry.lookup("", "v1", "configmaps").unwrap();
        assert_eq!(
            json(&bookmark_shape(configmaps).object(Revision(3), true)),
            serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"resourceVersion": "3", "annotations": {"k8s.io/initial-events-end": "true"}}})
        );
        for (group, version, resource) in
            [("", "v1", "pods"), ("", "v1", "configmaps"), ("apps", "v1", "deployments"), ("", "v1", "services")]
        {
            let info = registry.lookup(group, version, resource).unwrap();
            for end in [false, true] {
                let object = bookmark_shape(info).object(Revision(41), end);
                let expected = json(&object);
                assert_eq!(expected["metadata"]["resourceVersion"], "41", "{resource}");
                let frames =
                    crate::api::encode::watch_event(&Representation::Protobuf, "BOOKMARK", None, &object).unwrap();
                let joined: Vec<u8> = frames.iter().flat_map(|f| f.to_vec()).collect();
                let start = joined.windows(4).rposition(|w| w == b"k8s\x00").unwrap();
                let mut decoded = crate::api::protobuf::decode_object(&joined[start..], &info.kind).unwrap();
                // What a Go client holds after decoding either: Protobuf has
                // no null, so a nil slice comes back absent, as Go's zero value.
                crate::strategy::decode::order(&info.group, &info.version, &info.kind, &mut decoded);
                assert_eq!(
                    serde_json::Value::Object(decoded),
                    expected,
                    "{resource}: the Protobuf bookmark's content is the JSON one's"
                );
            }
        }
    }
}
