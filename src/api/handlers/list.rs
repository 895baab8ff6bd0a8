//! LIST of a collection, exactly as the specification describes it.
//!
//! The options (resourceVersion, resourceVersionMatch, limit, continue) pick
//! a snapshot revision (`list::plan`); every shard returns its matching
//! objects in key order as of that revision from its version history, and
//! the serving shard merges them (k-way merge). Every page of a continue
//! sequence is read at the first page's revision, however many writes happen
//! in between.
//!
//! Memory: a page holds at most `limit` (capped by `list_page_objects_max`)
//! handles; a list without `limit` is streamed in rounds of
//! `list_stream_batch_objects` per shard, so its extra memory does not grow
//! with the collection. Items are written as the cached encodings themselves,
//! one body frame each, never re-serialized or copied.

use super::{backend_error, table, Resolved};
use crate::api::negotiate::{self, Representation};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, BodyError, RequestHead, ResponseBody};
use crate::cache::CachedObject;
use crate::list::continue_token::ContinueToken;
use crate::list::{self as lists, Consistency, ListOptions, PlanError};
use crate::log::Revision;
use crate::types::key::ShardId;
use crate::types::selector::{parse_field_selector, parse_label_selector, Selector};
use bytes::{BufMut, Bytes, BytesMut};
use http::{Response, StatusCode};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

/// The label and field selectors of a request, parsed once.
#[derive(Clone, Debug, Default)]
pub struct Selectors {
    pub labels: Selector,
    pub fields: Selector,
}

impl Selectors {
    /// Parses and checks the selectors against the resource's fields.
    pub fn parse(head: &RequestHead, resolved: &Resolved) -> Result<Selectors, ApiError> {
        let labels = parse_label_selector(head.params.label_selector.as_deref().unwrap_or(""))
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let fields = parse_field_selector(head.params.field_selector.as_deref().unwrap_or(""))
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
        for requirement in &fields.requirements {
            let known = requirement.key == "metadata.name"
                || requirement.key == "metadata.namespace"
                || resolved.info.selectable_fields.iter().any(|f| *f == requirement.key);
            if !known {
                return Err(ApiError::BadRequest(format!("field label not supported: {}", requirement.key)));
            }
            if !matches!(
                requirement.operator,
                crate::types::selector::Operator::Equals | crate::types::selector::Operator::NotEquals
            ) {
                return Err(ApiError::BadRequest(format!("invalid field selector operator for {}", requirement.key)));
            }
        }
        // A resource kept in another's store selects on the stored object's
        // fields (kube's field label conversion).
        let mut fields = fields;
        if resolved.info.stored_as().is_some() {
            let info = &resolved.info;
            for requirement in &mut fields.requirements {
                requirement.key = crate::types::conversion::stored_field_label(
                    &info.group,
                    &info.version,
                    &info.resource,
                    &requirement.key,
                );
            }
        }
        Ok(Selectors { labels, fields })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, object: &CachedObject) -> bool {
        self.labels.matches(|k| object.meta().label(k)) && self.fields.matches(|k| object.meta().field(k))
    }
}

fn plan_error(e: PlanError) -> ApiError {
    match e {
        PlanError::BadRequest(message) => ApiError::BadRequest(message),
        PlanError::Invalid(errors) => ApiError::Invalid {
            kind: "ListOptions".into(),
            target: Target::new("meta.k8s.io", "", ""),
            causes: errors
                .into_iter()
                .map(|e| Cause { reason: e.reason.into(), message: e.detail, field: e.field.into() })
                .collect(),
        },
    }
}

/// Waits (bounded by `resource_version_wait`) until the log has reached
/// `revision`; 504 "Too large resource version" otherwise.
pub async fn wait_for(backend: &impl Backend, revision: Revision) -> Result<(), ApiError> {
    backend
        .wait_for_revision(revision, backend.config().resource_version_wait)
        .await
        .map_err(|current| ApiError::TooLargeResourceVersion { requested: revision.0, current: current.0 })
}

/// kube-apiserver's 410 for a list at a resourceVersion older than the history.
const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";
/// kube-apiserver's 410 for a continue token whose revision left the history
/// (etcd3 `handleCompactedErrorForPaging`'s `inconsistentContinue`); its
/// Status carries a token for the same key at rv -1 (the latest revision).
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// Where a round of reads starts: after the last key of the previous round,
/// or at a continue token's start key (inclusive); unbounded from the prefix.
pub(super) fn after(cursor: Option<Bytes>) -> Bound<Bytes> {
    cursor.map_or(Bound::Unbounded, Bound::Excluded)
}

fn as_slice(start: &Bound<Bytes>) -> Bound<&[u8]> {
    match start {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// One round of reads: each shard's first `per_shard` matching objects from
/// `start` at `revision`. `Err(compacted)` when a shard no longer holds that
/// revision.
pub(super) async fn fetch<B: Backend>(
    backend: &B,
    prefix: &Arc<str>,
    revision: Revision,
    start: Bound<Bytes>,
    per_shard: usize,
    selectors: &Arc<Selectors>,
) -> Result<Result<Vec<Vec<Arc<CachedObject>>>, Revision>, ApiError> {
    let mut calls = Vec::with_capacity(backend.shard_count() as usize);
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let selectors = selectors.clone();
        let start = start.clone();
        calls.push(backend.on_shard(ShardId(shard), revision, move |store| {
            let matches = |o: &CachedObject| selectors.matches(o);
            store.list_matching_at(prefix.as_bytes(), revision, as_slice(&start), per_shard, &matches)
        }));
    }
    let mut runs = Vec::with_capacity(calls.len());
    for call in futures_util::future::join_all(calls).await {
        match call.map_err(backend_error)? {
            Ok(run) => runs.push(run),
            Err(compacted) => return Ok(Err(compacted)),
        }
    }
    Ok(Ok(runs))
}

/// Objects under `prefix` at `revision` from `start`, on every shard.
async fn count_after<B: Backend>(
    backend: &B,
    prefix: &Arc<str>,
    revision: Revision,
    start: Bound<Bytes>,
) -> Result<Option<usize>, ApiError> {
    let mut total = 0usize;
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let start = start.clone();
        let count = backend
            .on_shard(ShardId(shard), revision, move |store| {
                store.count_at(prefix.as_bytes(), revision, as_slice(&start))
            })
            .await
            .map_err(backend_error)?;
        match count {
            Ok(n) => total += n,
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(total))
}

pub async fn serve<B: Backend + 'static>(
    shared: &Rc<B>,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let builtin = crate::api::protobuf_encode::has_schema(&resolved.info.api_version(), &resolved.info.kind);
    let representation = negotiate::choose(head.accept.as_deref(), negotiate::Offer::objects(builtin))?;
    let gzip_ok = crate::api::encode::accepts_gzip(head.accept_encoding.as_deref());
    let selectors = Arc::new(Selectors::parse(head, resolved)?);
    let options = ListOptions {
        resource_version: head.params.resource_version.as_deref(),
        resource_version_match: head.params.resource_version_match.as_deref(),
        limit: head.params.limit,
        continue_token: head.params.continue_token.as_deref(),
    };
    let plan = lists::plan(&options).map_err(plan_error)?;
    let prefix: Arc<str> = resolved.collection_prefix().into();
    // The token the 410 carries when the token's revision left the history:
    // the same start at rv -1 (kube's inconsistent continuation).
    let mut inconsistent: Option<ContinueToken> = None;
    let (revision, start) = match plan.consistency {
        Consistency::MostRecent => (backend.consistent_revision().await.map_err(backend_error)?, Bound::Unbounded),
        Consistency::Any => (backend.committed_revision(), Bound::Unbounded),
        Consistency::NotOlderThan(n) => {
            wait_for(backend, n).await?;
            (backend.committed_revision(), Bound::Unbounded)
        }
        Consistency::Exact(n) => {
            wait_for(backend, n).await?;
            (n, Bound::Unbounded)
        }
        Consistency::Continue(token) => {
            // The start is relative to this collection's prefix and clean
            // (`ContinueToken::decode`), so it cannot reach outside it; a
            // token of another collection continues this one from the same
            // relative key, as on kube-apiserver.
            let start = Bound::Included(Bytes::from(token.start_key(prefix.as_bytes())));
            let revision = match token.revision() {
                // A revision this instance has not reached (a first page from
                // a server ahead of it): waited for, as kube's watch cache
                // waits, then 504 "Too large resource version".
                Some(n) => {
                    wait_for(backend, n).await?;
                    n
                }
                // rv < 0: the latest revision, from the token's key on.
                None => backend.consistent_revision().await.map_err(backend_error)?,
            };
            inconsistent = Some(ContinueToken { resource_version: -1, start: token.start });
            (revision, start)
        }
    };
    let config = backend.config();
    let table = match &representation {
        Representation::Table { version } => Some(table::TableRequest::new(version, &head.params, &resolved.info)?),
        _ => None,
    };
    // Tables are for people: bounded to one page even without a limit.
    let limit = match (plan.limit, &table) {
        (Some(limit), _) => Some(limit.min(config.list_page_objects_max)),
        (None, Some(_)) => Some(config.list_page_objects_max),
        (None, None) => None,
    };
    let expired = |_compacted: Revision| {
        if let Some(fresh) = &inconsistent {
            ApiError::Expired { message: CONTINUE_EXPIRED.into(), continue_token: Some(fresh.encode()) }
        } else {
            // etcd's answer through kube-apiserver (storage/etcd3's
            // `interpretListError` on ErrCompacted).
            ApiError::Expired { message: LIST_EXPIRED.into(), continue_token: None }
        }
    };
    let other_format = !matches!(representation, Representation::Json | Representation::Table { .. });
    // `as=PartialObjectMetadata` on a list: kube-apiserver's transform refuses it (406) once the list is read.
    let asks_for_one_object = matches!(&representation, Representation::Metadata(m) if !m.list);
    let Some(limit) = limit else {
        if other_format {
            // Protobuf needs the whole length up front: read every round (handles, not copies), then assemble.
            let objects = read_all(backend, &prefix, revision, start, &selectors).await?.map_err(expired)?;
            if asks_for_one_object {
                return Err(crate::api::metadata::is_a_list(&resolved.info));
            }
            crate::api::instrument::list_returned(backend, &resolved.info, objects.len());
            let objects = super::versions::convert_objects(&resolved.info, objects);
            let frames = crate::api::encode::list_frames(
                &representation,
                resolved.info.custom.is_none(),
                &resolved.info.list_kind,
                &resolved.info.api_version(),
                revision.0,
                None,
                None,
                &objects,
            )?;
            return Ok(crate::api::encode::respond_frames(
                frames,
                crate::api::encode::content_type(&representation),
                gzip_ok,
            ));
        }
        return stream_list(shared.clone(), resolved, prefix, revision, start, selectors, expired, gzip_ok).await;
    };
    // One page: each shard's first limit+1 matches decide whether more remain.
    let runs = fetch(backend, &prefix, revision, start.clone(), limit.saturating_add(1), &selectors)
        .await?
        .map_err(expired)?;
    let mut page = lists::merge(runs, limit.saturating_add(1));
    let more = page.len() > limit;
    page.truncate(limit);
    crate::api::instrument::list_returned(backend, &resolved.info, page.len());
    let continue_token = match (more, page.last()) {
        (true, Some(last)) => match ContinueToken::after(&last.key, prefix.as_bytes(), revision) {
            Some(token) => Some(token.encode()),
            // Never: every key read lies under the prefix. kube's words if it did not.
            None => {
                return Err(ApiError::Unknown(format!(
                    "unable to encode next field: the key and key prefix do not match {prefix} {}",
                    String::from_utf8_lossy(&last.key)
                )))
            }
        },
        _ => None,
    };
    let remaining = if more && selectors.is_empty() {
        count_after(backend, &prefix, revision, start).await?.map(|n| n.saturating_sub(page.len()))
    } else {
        None
    };
    let page = match table {
        Some(_) => page,
        None => super::versions::convert_objects(&resolved.info, page),
    };
    let body = match table {
        Some(table) => table.list(&page, revision, continue_token.as_deref(), remaining, backend.now()),
        None if asks_for_one_object => return Err(crate::api::metadata::is_a_list(&resolved.info)),
        None if other_format => {
            let frames = crate::api::encode::list_frames(
                &representation,
                resolved.info.custom.is_none(),
                &resolved.info.list_kind,
                &resolved.info.api_version(),
                revision.0,
                continue_token.as_deref(),
                remaining,
                &page,
            )?;
            return Ok(crate::api::encode::respond_frames(
                frames,
                crate::api::encode::content_type(&representation),
                gzip_ok,
            ));
        }
        None => {
            let frames = page_frames_of(
                resolved.info.custom.is_none(),
                &resolved.info.list_kind,
                &resolved.info.api_version(),
                revision.0,
                continue_token.as_deref(),
                remaining,
                &page,
            );
            let frames = super::versions::convert_item_frames(&resolved.info, frames);
            return Ok(crate::api::encode::respond_frames(frames, "application/json", gzip_ok));
        }
    };
    Ok(respond(StatusCode::OK, "application/json", body))
}

/// Every matching object at `revision` from `start`, read in rounds of
/// `list_stream_batch_objects` per shard (handles to cached objects).
async fn read_all<B: Backend>(
    backend: &B,
    prefix: &Arc<str>,
    revision: Revision,
    start: Bound<Bytes>,
    selectors: &Arc<Selectors>,
) -> Result<Result<Vec<Arc<CachedObject>>, Revision>, ApiError> {
    let batch = backend.config().list_stream_batch_objects.max(1);
    let mut objects = Vec::new();
    let mut cursor: Option<Bytes> = None;
    loop {
        let from = if cursor.is_some() { after(cursor.clone()) } else { start.clone() };
        let runs = match fetch(backend, prefix, revision, from, batch, selectors).await? {
            Ok(runs) => runs,
            Err(compacted) => return Ok(Err(compacted)),
        };
        let round = lists::merge(runs, batch);
        let done = round.len() < batch;
        cursor = round.last().map(|o| o.key.clone());
        objects.extend(round);
        if done {
            return Ok(Ok(objects));
        }
    }
}

/// A whole collection (from `start`: a continue token without `limit` reads
/// the rest) without `limit`: the first round is read before the response
/// starts (so an expired revision is still a 410), the rest while the body
/// is being sent.
#[allow(clippy::too_many_arguments)]
async fn stream_list<B: Backend + 'static>(
    shared: Rc<B>,
    resolved: &Resolved,
    prefix: Arc<str>,
    revision: Revision,
    start: Bound<Bytes>,
    selectors: Arc<Selectors>,
    expired: impl Fn(Revision) -> ApiError,
    gzip_ok: bool,
) -> Result<Response<ResponseBody>, ApiError> {
    let batch = shared.config().list_stream_batch_objects.max(1);
    let first = fetch(&*shared, &prefix, revision, start, batch, &selectors).await?.map_err(expired)?;
    // A list that ends within its first round and is small is not worth compressing
    // (kube-apiserver's threshold); anything else is compressed as it streams.
    let ends_in_first_round = first.iter().all(|run| run.len() < batch);
    let first_bytes: usize = first.iter().flatten().map(|o| o.json.len()).sum();
    let gzip_ok = gzip_ok && !(ends_in_first_round && first_bytes <= crate::api::encode::GZIP_THRESHOLD_BYTES);
    let head = if resolved.info.custom.is_none() {
        list_head(&resolved.info.list_kind, &resolved.info.api_version(), revision.0, None, None)
    } else {
        unstructured_list_head(&resolved.info.api_version())
    };
    let tail = if resolved.info.custom.is_none() {
        Bytes::from_static(b"]}")
    } else {
        unstructured_list_tail(&resolved.info.list_kind, revision.0, None, None)
    };
    struct Round<B> {
        backend: Rc<B>,
        prefix: Arc<str>,
        selectors: Arc<Selectors>,
        revision: Revision,
        batch: usize,
        pending: Option<Vec<Vec<Arc<CachedObject>>>>,
        cursor: Option<Bytes>,
        first_item: bool,
        done: bool,
        info: crate::types::registry::ResourceInfo,
        /// Items sent so far (the list's size, recorded when it ends).
        items: usize,
        /// The closing bytes.
        tail: Bytes,
    }
    let state = Round {
        backend: shared,
        prefix,
        selectors,
        revision,
        batch,
        pending: Some(first),
        cursor: None,
        first_item: true,
        done: false,
        info: resolved.info.clone(),
        items: 0,
        tail,
    };
    let rounds = futures_util::stream::unfold(state, |mut state| async move {
        if state.done {
            return None;
        }
        let runs = match state.pending.take() {
            Some(runs) => runs,
            None => {
                let fetched = fetch(
                    &*state.backend,
                    &state.prefix,
                    state.revision,
                    after(state.cursor.clone()),
                    state.batch,
                    &state.selectors,
                )
                .await;
                match fetched {
                    Ok(Ok(runs)) => runs,
                    // The snapshot left the window mid-stream, or a shard went
                    // away: end the body with an error (the client sees a
                    // broken response, never a wrong one).
                    Ok(Err(compacted)) => {
                        state.done = true;
                        let error: BodyError =
                            format!("list snapshot {} expired mid-stream (compacted {compacted})", state.revision)
                                .into();
                        return Some((Err(error), state));
                    }
                    Err(e) => {
                        state.done = true;
                        return Some((Err(BodyError::from(e.to_string())), state));
                    }
                }
            }
        };
        let merged = super::versions::convert_objects(&state.info, lists::merge(runs, state.batch));
        let mut frames = Vec::with_capacity(merged.len() * 2 + 1);
        let typed = state.info.custom.is_none();
        for object in &merged {
            match typed.then(|| without_type_meta(&object.json)).flatten() {
                Some(rest) => {
                    frames.push(Bytes::from_static(if state.first_item { b"{" } else { b",{" }));
                    frames.push(rest);
                }
                None => {
                    if !state.first_item {
                        frames.push(Bytes::from_static(b","));
                    }
                    frames.push(super::versions::convert(&state.info, &object.json));
                }
            }
            state.first_item = false;
        }
        state.items += merged.len();
        if merged.len() < state.batch {
            frames.push(state.tail.clone());
            state.done = true;
            crate::api::instrument::list_returned(&*state.backend, &state.info, state.items);
        } else {
            state.cursor = merged.last().map(|o| o.key.clone());
        }
        Some((Ok(frames), state))
    });
    use futures_util::StreamExt;
    let head_stream = futures_util::stream::iter(std::iter::once(Ok::<Vec<Bytes>, BodyError>(vec![head])));
    let frames = head_stream.chain(rounds).flat_map(|round| {
        let frames: Vec<Result<http_body::Frame<Bytes>, BodyError>> = match round {
            Ok(frames) => frames.into_iter().map(|b| Ok(http_body::Frame::data(b))).collect(),
            Err(e) => vec![Err(e)],
        };
        futures_util::stream::iter(frames)
    });
    let mut response = if gzip_ok {
        // Compressed as it streams: the server still holds one round at a time.
        let body = ResponseBody::new(http_body_util::StreamBody::new(crate::api::encode::gzip_stream(frames)));
        let mut response = Response::new(body);
        response.headers_mut().insert(http::header::CONTENT_ENCODING, http::HeaderValue::from_static("gzip"));
        response
    } else {
        Response::new(ResponseBody::new(http_body_util::StreamBody::new(frames)))
    };
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    Ok(response)
}

/// A body sent as it is produced (HTTP/1.1 chunked encoding), one frame per
/// piece: the cached encodings go to the socket without being copied.
pub fn stream_body(frames: Vec<Bytes>) -> ResponseBody {
    let stream = futures_util::stream::iter(frames.into_iter().map(|b| Ok::<_, BodyError>(http_body::Frame::data(b))));
    ResponseBody::new(http_body_util::StreamBody::new(stream))
}

/// Merges runs that are each sorted by key into one sorted run.
pub fn merge(runs: Vec<Vec<Arc<CachedObject>>>) -> Vec<Arc<CachedObject>> {
    lists::merge(runs, usize::MAX)
}

/// `{"kind":..,"apiVersion":..,"metadata":{..},"items":[`
fn list_head(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
) -> Bytes {
    let mut head = BytesMut::with_capacity(128);
    head.put_slice(b"{\"kind\":");
    head.put_slice(serde_json::to_string(list_kind).unwrap_or_default().as_bytes());
    head.put_slice(b",\"apiVersion\":");
    head.put_slice(serde_json::to_string(api_version).unwrap_or_default().as_bytes());
    head.put_slice(format!(",\"metadata\":{{\"resourceVersion\":\"{revision}\"").as_bytes());
    if let Some(token) = continue_token {
        head.put_slice(b",\"continue\":");
        head.put_slice(serde_json::to_string(token).unwrap_or_default().as_bytes());
    }
    if let Some(n) = remaining {
        head.put_slice(format!(",\"remainingItemCount\":{n}").as_bytes());
    }
    head.put_slice(b"},\"items\":[");
    head.freeze()
}

/// A page of a built-in kind as frames: the head, each item's cached
/// encoding (shared, not copied) preceded by a separator, and the closing
/// bytes (see [`page_frames_of`]).
pub fn page_frames(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    objects: &[Arc<CachedObject>],
) -> Vec<Bytes> {
    page_frames_of(true, list_kind, api_version, revision, continue_token, remaining, objects)
}

/// A page as frames. Items of a built-in (`typed`) kind are written as
/// kube-apiserver writes a typed list's items: without their own `kind` and
/// `apiVersion` (the list says them), the cached bytes after those two
/// members behind a `{` (still a slice, not a copy). A custom resource's list
/// is kube's unstructured list: its members in key order (`apiVersion`,
/// `items`, `kind`, `metadata` with `continue` always present), each item
/// whole.
pub fn page_frames_of(
    typed: bool,
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    objects: &[Arc<CachedObject>],
) -> Vec<Bytes> {
    let mut frames = Vec::with_capacity(objects.len() * 2 + 2);
    frames.push(if typed {
        list_head(list_kind, api_version, revision, continue_token, remaining)
    } else {
        unstructured_list_head(api_version)
    });
    for (i, object) in objects.iter().enumerate() {
        match typed.then(|| without_type_meta(&object.json)).flatten() {
            Some(rest) => {
                frames.push(Bytes::from_static(if i == 0 { b"{" } else { b",{" }));
                frames.push(rest);
            }
            None => {
                if i > 0 {
                    frames.push(Bytes::from_static(b","));
                }
                frames.push(object.json.clone());
            }
        }
    }
    frames.push(if typed {
        Bytes::from_static(b"]}")
    } else {
        unstructured_list_tail(list_kind, revision, continue_token, remaining)
    });
    frames
}

/// `{"apiVersion":..,"items":[`: an unstructured list's head.
fn unstructured_list_head(api_version: &str) -> Bytes {
    let version = serde_json::to_string(api_version).unwrap_or_default();
    Bytes::from(format!("{{\"apiVersion\":{version},\"items\":["))
}

/// `],"kind":..,"metadata":{"continue":..,"remainingItemCount":..,"resourceVersion":..}}`:
/// an unstructured list's tail, its metadata's members in key order.
fn unstructured_list_tail(
    list_kind: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
) -> Bytes {
    let kind = serde_json::to_string(list_kind).unwrap_or_default();
    let token = serde_json::to_string(continue_token.unwrap_or("")).unwrap_or_default();
    let remaining = remaining.map(|n| format!(",\"remainingItemCount\":{n}")).unwrap_or_default();
    Bytes::from(format!(
        "],\"kind\":{kind},\"metadata\":{{\"continue\":{token}{remaining},\"resourceVersion\":\"{revision}\"}}}}"
    ))
}

/// The members of a typed object's JSON after its leading `"kind"` and
/// `"apiVersion"` (kube's field order puts them first), as a slice of the
/// same bytes; `None` when the object does not start with exactly those two
/// (then it is written whole).
pub fn without_type_meta(json: &Bytes) -> Option<Bytes> {
    let plain_string_end = |from: usize| -> Option<usize> {
        let rest = json.get(from..)?;
        let end = rest.iter().position(|b| *b == b'"' || *b == b'\\')?;
        (rest[end] == b'"').then_some(from + end)
    };
    let kind = b"{\"kind\":\"".len();
    if !json.starts_with(b"{\"kind\":\"") {
        return None;
    }
    let kind_end = plain_string_end(kind)?;
    let api_version = kind_end + 1;
    if !json.get(api_version..)?.starts_with(b",\"apiVersion\":\"") {
        return None;
    }
    let version_end = plain_string_end(api_version + b",\"apiVersion\":\"".len())?;
    let after = version_end + 1;
    (json.get(after) == Some(&b',')).then(|| json.slice(after + 1..))
}

/// A whole list as frames (no continue token).
pub fn list_frames(list_kind: &str, api_version: &str, revision: u64, objects: &[Arc<CachedObject>]) -> Vec<Bytes> {
    page_frames(list_kind, api_version, revision, None, None, objects)
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
            merge(vec![a, vec![], b]).iter().map(|o| format!("{}/{}", o.meta().namespace(), o.meta().name())).collect();
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
        // Items carry no kind and apiVersion (kube's typed lists); their
        // frames are slices of the cached encodings, not copies.
        assert!(list["items"][0].get("kind").is_none() && list["items"][0].get("apiVersion").is_none());
        assert_eq!(list["items"][1]["metadata"]["name"], "2");
        let json = &objects[0].json;
        assert!(json.as_ptr_range().contains(&frames[2].as_ptr()), "a slice of the cached bytes");
        assert_eq!(&frames[1][..], b"{");
        // Custom resources' items keep theirs.
        let custom = page_frames_of(false, "WidgetList", "example.com/v1", 7, None, None, &objects);
        assert_eq!(custom[1].as_ptr(), objects[0].json.as_ptr());
        let empty: Vec<u8> = list_frames("PodList", "v1", 7, &[]).iter().flat_map(|f| f.to_vec()).collect();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&empty).unwrap()["items"], serde_json::json!([]));
    }
}
