//! Write forwarding (`--upstream URL`, issue 16): an instance that joins a
//! Kubernetes cluster's etcd serves reads itself and sends every mutating
//! request to the cluster's kube-apiserver on behalf of its caller.
//!
//! What it owns: which requests are forwarded ([`is_forwarded`]: POST, PUT,
//! PATCH and DELETE of a resource path, so creates, updates, both kinds of
//! patch and server-side apply, deletes, deletecollection and subresources;
//! never a read, never a connection upgrade), the headers sent upstream
//! ([`upstream_headers`]: the caller's end-to-end headers without its
//! credentials or hop-by-hop headers, plus `Impersonate-User`,
//! `-Group`, `-Uid` and `-Extra-*` naming the authenticated user, as
//! kube's own proxies impersonate), which of the upstream's response
//! headers are returned ([`returned_header`]), the errors a client sees
//! when the upstream cannot answer ([`forward_error`]: kube's failed
//! proxy, 503 ServiceUnavailable "error trying to reach service: ..."; 504
//! past `upstream_request_timeout`), and [`serve`], which sends the request
//! through [`Backend::forward`] and, after a successful write, waits until
//! this instance's etcd watch has delivered it (a consistent read's wait:
//! etcd's revision after the write's answer, bounded by
//! `resource_version_wait`, else 504 with Retry-After), so a read that
//! follows on this instance sees the write.
//!
//! Aggregated APIs ([`aggregated_group_version`], [`is_aggregated`]): a
//! request of any verb under `/apis/GROUP/VERSION` that this instance does
//! not serve itself, where the mirrored state holds the APIService
//! `VERSION.GROUP` naming a service, goes to the upstream too, which
//! proxies it to that service as kube-apiserver's aggregator does.
//!
//! The HTTP client is the runtime's (`runtime/upstream.rs`); this file does
//! no I/O. The upstream authorizes the forwarded request as the caller: the
//! local authorizers are not asked (their answer would be the upstream's
//! at best), so a 403 is the upstream's own Status, unchanged.

use super::route::Route;
use super::status::ApiError;
use super::{full, Backend, ResponseBody};
use crate::auth::impersonation::{EXTRA_HEADER_PREFIX, GROUP_HEADER, UID_HEADER, USER_HEADER};
use crate::auth::UserInfo;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode};
use std::time::Duration;

/// One request for the upstream: what `runtime/upstream.rs` sends.
#[derive(Clone, Debug)]
pub struct ForwardRequest {
    pub method: Method,
    /// The caller's path and query, unchanged (appended to the upstream URL).
    pub path_and_query: String,
    /// [`upstream_headers`]; the runtime adds its own credentials.
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Whether the answer's body is handed over as it arrives
    /// ([`ForwardResponse::stream`]) rather than whole: an aggregated API's
    /// reads, whose watches run for minutes.
    pub streamed: bool,
}

/// The upstream's answer: its head, and its body whole or as it arrives.
#[derive(Debug)]
pub struct ForwardResponse {
    pub status: u16,
    pub headers: HeaderMap,
    /// The whole body (empty when the request was [`ForwardRequest::streamed`]).
    pub body: Bytes,
    /// For a streamed request, the body's pieces in order as the upstream
    /// sends them, then the end of the channel; an `Err` ends the body
    /// broken (the upstream failed mid-body). Dropping the receiver (the
    /// client went away) ends the upstream request. Bounded: the upstream
    /// is read no faster than the client takes the pieces.
    pub stream: Option<flume::Receiver<Result<Bytes, String>>>,
}

/// Why the upstream gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForwardError {
    /// No `--upstream` (a backend that forwards nothing).
    #[error("no upstream is configured")]
    NoUpstream,
    /// Connecting, TLS, or the exchange failed.
    #[error("{0}")]
    Unreachable(String),
    /// No whole answer within `upstream_request_timeout`.
    #[error("the upstream did not answer within {0:?}")]
    TimedOut(Duration),
    /// The answer's body is over `upstream_response_bytes_max`.
    #[error("the upstream's response is larger than {limit_bytes} bytes")]
    ResponseTooLarge { limit_bytes: usize },
}

/// Whether a request goes to the upstream: every mutating method on a
/// resource path (creates, updates, patches of every type including
/// server-side apply, deletes, deletecollection, subresources such as
/// `status`, `scale`, `binding`, `eviction` and `serviceaccounts/token`, and
/// the review APIs, which the upstream answers for the caller). Reads,
/// discovery, health and metrics are served here; a connection upgrade
/// (`exec`, `attach`, `portforward` over SPDY or WebSocket) is not
/// forwarded (this proxy carries whole requests only).
pub fn is_forwarded(method: &Method, route: &Route, headers: &HeaderMap) -> bool {
    let mutating = matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
    let upgrade = headers.contains_key(header::UPGRADE);
    mutating && !upgrade && matches!(route, Route::Resource(_))
}

/// The group and version of a path under `/apis/GROUP/VERSION` (the
/// group-version's discovery document or anything below it).
pub fn aggregated_group_version(path: &str) -> Option<(&str, &str)> {
    let mut segments = path.strip_prefix("/apis/")?.split('/');
    let group = segments.next().filter(|g| !g.is_empty())?;
    let version = segments.next().filter(|v| !v.is_empty())?;
    Some((group, version))
}

/// Whether `path` is an aggregated API's: a group-version the registry does
/// not serve whose APIService (`VERSION.GROUP`, read at the commit point)
/// names a service (`spec.service` set; a local APIService has none). Built-in
/// groups and custom resources' never read the store here.
pub async fn is_aggregated(backend: &impl Backend, path: &str) -> bool {
    let Some((group, version)) = aggregated_group_version(path) else { return false };
    if backend.registry().resources_of(group, version).next().is_some() {
        return false;
    }
    let key =
        crate::types::key::ObjectKey::new("apiregistration.k8s.io", "apiservices", "", &format!("{version}.{group}"));
    let Ok(Some(current)) = super::handlers::read_current(backend, &key, backend.committed_revision()).await else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&current.json)
        .is_ok_and(|o| o.pointer("/spec/service").is_some_and(|s| s.is_object()))
}

/// Request headers never passed upstream: hop-by-hop headers (RFC 9110
/// 7.6.1; hyper writes its own `Host` and `Content-Length`; the body was
/// read here already, so no `Expect: 100-continue`), the caller's
/// credentials (the upstream sees this instance's, impersonating the
/// caller), the caller's own impersonation (already resolved into the user
/// named in ours), and the front-proxy identity headers, which only an
/// authenticating proxy may set.
fn dropped_request_header(name: &HeaderName) -> bool {
    let name = name.as_str();
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | "expect"
            | "authorization"
    ) || name.starts_with("impersonate-")
        || name.starts_with("x-remote-")
}

/// The headers sent upstream for `user`'s request: the caller's end-to-end
/// headers (Content-Type, Accept, Accept-Encoding, User-Agent, ...), then
/// `Impersonate-User`, one `Impersonate-Group` per group, `Impersonate-Uid`
/// when there is one, and one `Impersonate-Extra-KEY` per extra value (the
/// key percent-encoded as client-go's impersonating transport encodes it).
/// A value that is not a valid header value (a control character in a
/// name) is an error: the request is refused rather than sent as someone
/// else.
pub fn upstream_headers(incoming: &HeaderMap, user: &UserInfo) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    for (name, value) in incoming.iter().filter(|(name, _)| !dropped_request_header(name)) {
        headers.append(name.clone(), value.clone());
    }
    // A `Connection` header names more hop-by-hop headers.
    for named in incoming.get_all(header::CONNECTION).iter().filter_map(|v| v.to_str().ok()) {
        for token in named.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if let Ok(name) = HeaderName::from_bytes(token.to_ascii_lowercase().as_bytes()) {
                headers.remove(name);
            }
        }
    }
    let value = |v: &str| HeaderValue::from_str(v).map_err(|_| format!("{v:?} cannot be sent in a header"));
    headers.insert(HeaderName::from_static(USER_HEADER), value(&user.name)?);
    for group in &user.groups {
        headers.append(HeaderName::from_static(GROUP_HEADER), value(group)?);
    }
    if !user.uid.is_empty() {
        headers.insert(HeaderName::from_static(UID_HEADER), value(&user.uid)?);
    }
    for (key, values) in &user.extra {
        let name = format!("{EXTRA_HEADER_PREFIX}{}", escape_header_key(key));
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("extra key {key:?}"))?;
        for v in values {
            headers.append(name.clone(), value(v)?);
        }
    }
    Ok(headers)
}

/// An extra key as a header name's suffix: every byte that is not a token
/// character of RFC 7230 (or is `%`) as `%XX`, as client-go's
/// `headerKeyEscape` (kube-apiserver reads it back with `PathUnescape`).
fn escape_header_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for byte in key.bytes() {
        let token = byte.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&byte);
        if token {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The upstream response headers returned to the caller: what describes
/// the body (Content-Type, Content-Encoding), kube's `Warning`s,
/// `Retry-After` (a 429 or 503 of the upstream's), `Audit-Id` (to find the
/// write in the cluster's audit log) and the priority-and-fairness uids.
/// Hop-by-hop and framing headers are the local server's own.
pub fn returned_header(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "content-type"
            | "content-encoding"
            | "warning"
            | "retry-after"
            | "audit-id"
            | "cache-control"
            | "x-kubernetes-pf-flowschema-uid"
            | "x-kubernetes-pf-prioritylevel-uid"
    )
}

/// The Status a client gets when the upstream gave no answer: kube's
/// failed proxy (`errors.NewServiceUnavailable("error trying to reach
/// service: ...")`, 503), or a 504 Timeout with Retry-After when it did
/// not answer in time (the write's outcome is then unknown, as for a
/// kube-apiserver request that times out).
pub fn forward_error(error: ForwardError) -> ApiError {
    match error {
        ForwardError::TimedOut(limit) => ApiError::Timeout {
            message: format!(
                "Timeout: request did not complete within requested timeout - the upstream did not answer within {limit:?}"
            ),
            retry_after_seconds: 1,
        },
        other => ApiError::ServiceUnavailable(format!("error trying to reach service: {other}")),
    }
}

/// Forwards one request (already authenticated, impersonation resolved,
/// admitted, its body read within `request_body_bytes_max`) and returns
/// the upstream's status, returned headers and body unchanged; after a
/// 2xx, first waits until this instance has applied etcd's revision (so
/// a read that follows here sees the write).
pub async fn serve(
    backend: &impl Backend,
    method: &Method,
    path_and_query: &str,
    incoming: &HeaderMap,
    user: &UserInfo,
    body: Bytes,
) -> Result<Response<ResponseBody>, ApiError> {
    let headers = upstream_headers(incoming, user).map_err(ApiError::BadRequest)?;
    let mutating = matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
    // Only an aggregated API's reads come here unmutating; they stream (a
    // watch of the service's resources), as kube's aggregator proxies them.
    let streamed = !mutating;
    let request =
        ForwardRequest { method: method.clone(), path_and_query: path_and_query.to_string(), headers, body, streamed };
    let answer = backend.forward(request).await.map_err(forward_error)?;
    if mutating && (200..300).contains(&answer.status) {
        // etcd's revision now includes the write; a consistent read's wait
        // (bounded, 504 with Retry-After past `resource_version_wait`).
        let revision = backend.consistent_revision().await.map_err(super::handlers::backend_error)?;
        backend.await_applied(revision).await;
    }
    let body = match answer.stream {
        Some(pieces) => streamed_body(pieces),
        None => full(answer.body),
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    for (name, value) in answer.headers.iter().filter(|(name, _)| returned_header(name)) {
        response.headers_mut().append(name.clone(), value.clone());
    }
    Ok(response)
}

/// A response body of the pieces an upstream sends as they arrive.
fn streamed_body(pieces: flume::Receiver<Result<Bytes, String>>) -> ResponseBody {
    use futures_util::StreamExt;
    let frames = pieces.into_stream().map(|piece| match piece {
        Ok(data) => Ok(http_body::Frame::data(data)),
        Err(reason) => Err(super::BodyError::from(format!("the upstream's answer broke off: {reason}"))),
    });
    ResponseBody::new(http_body_util::StreamBody::new(frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_paths_name_their_group_and_version() {
        assert_eq!(aggregated_group_version("/apis/metrics.k8s.io/v1beta1"), Some(("metrics.k8s.io", "v1beta1")));
        assert_eq!(
            aggregated_group_version("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods"),
            Some(("metrics.k8s.io", "v1beta1"))
        );
        assert_eq!(aggregated_group_version("/apis/metrics.k8s.io"), None);
        assert_eq!(aggregated_group_version("/apis/metrics.k8s.io/"), None);
        assert_eq!(aggregated_group_version("/apis"), None);
        assert_eq!(aggregated_group_version("/api/v1/pods"), None);
    }

    fn resource() -> Route {
        super::super::route::parse("/api/v1/namespaces/default/configmaps/x")
    }

    #[test]
    fn mutating_requests_on_resources_are_forwarded_and_reads_are_not() {
        let none = HeaderMap::new();
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_forwarded(&method, &resource(), &none), "{method}");
        }
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_forwarded(&method, &resource(), &none), "{method}");
        }
        let collection = super::super::route::parse("/apis/apps/v1/namespaces/default/deployments");
        assert!(is_forwarded(&Method::DELETE, &collection, &none), "deletecollection");
        let status = super::super::route::parse("/apis/apps/v1/namespaces/default/deployments/d/status");
        assert!(is_forwarded(&Method::PATCH, &status, &none), "a subresource");
        let review = super::super::route::parse("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
        assert!(is_forwarded(&Method::POST, &review, &none), "the review APIs");
        for path in ["/readyz", "/metrics", "/api/v1", "/apis"] {
            let route = super::super::route::parse(path);
            assert!(!is_forwarded(&Method::POST, &route, &none), "{path}");
        }
        let mut upgrade = HeaderMap::new();
        upgrade.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
        let exec = super::super::route::parse("/api/v1/namespaces/default/pods/p/exec");
        assert!(!is_forwarded(&Method::POST, &exec, &upgrade), "a connection upgrade stays");
    }

    fn alice() -> UserInfo {
        let mut user = UserInfo::authenticated("alice".into(), "uid-1".into(), vec!["dev".into()]);
        user.extra.insert("scopes.example.com/view".into(), vec!["a".into(), "b".into()]);
        user.extra.insert("authentication.kubernetes.io/credential-id".into(), vec!["X509SHA256=ab".into()]);
        user
    }

    #[test]
    fn the_caller_is_impersonated_and_its_credentials_stay_here() {
        let mut incoming = HeaderMap::new();
        incoming.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer secret"));
        incoming.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/apply-patch+yaml"));
        incoming.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        incoming.insert(header::USER_AGENT, HeaderValue::from_static("kubectl/v1.36"));
        incoming.insert(header::HOST, HeaderValue::from_static("joiner:6443"));
        incoming.insert(header::CONTENT_LENGTH, HeaderValue::from_static("12"));
        incoming.insert(header::CONNECTION, HeaderValue::from_static("keep-alive, x-hop"));
        incoming.insert("x-hop", HeaderValue::from_static("1"));
        incoming.insert("impersonate-user", HeaderValue::from_static("mallory"));
        incoming.insert("impersonate-group", HeaderValue::from_static("system:masters"));
        incoming.insert("x-remote-user", HeaderValue::from_static("mallory"));
        incoming.insert(header::EXPECT, HeaderValue::from_static("100-continue"));
        let headers = upstream_headers(&incoming, &alice()).unwrap();
        let all = |name: &str| -> Vec<&str> { headers.get_all(name).iter().map(|v| v.to_str().unwrap()).collect() };
        assert_eq!(all("impersonate-user"), ["alice"]);
        assert_eq!(all("impersonate-group"), ["dev", "system:authenticated"]);
        assert_eq!(all("impersonate-uid"), ["uid-1"]);
        assert_eq!(all("impersonate-extra-scopes.example.com%2Fview"), ["a", "b"]);
        assert_eq!(all("impersonate-extra-authentication.kubernetes.io%2Fcredential-id"), ["X509SHA256=ab"]);
        assert_eq!(all("content-type"), ["application/apply-patch+yaml"]);
        assert_eq!(all("accept"), ["application/json"]);
        assert_eq!(all("user-agent"), ["kubectl/v1.36"]);
        for gone in ["authorization", "host", "content-length", "connection", "x-hop", "x-remote-user", "expect"] {
            assert!(all(gone).is_empty(), "{gone} is not sent upstream");
        }
        // What the upstream reads back is the caller, exactly.
        let read = crate::auth::impersonation::Impersonation::from_headers(
            headers.iter().map(|(n, v)| (n.as_str(), v.to_str().unwrap())),
        )
        .unwrap()
        .unwrap();
        assert_eq!(read.user_info(), alice());
    }

    #[test]
    fn anonymous_callers_are_impersonated_as_anonymous() {
        let headers = upstream_headers(&HeaderMap::new(), &UserInfo::anonymous()).unwrap();
        assert_eq!(headers.get("impersonate-user").unwrap(), "system:anonymous");
        assert_eq!(headers.get_all("impersonate-group").iter().count(), 1);
        assert!(headers.get("impersonate-uid").is_none(), "no uid, no header");
    }

    #[test]
    fn a_name_that_is_no_header_value_is_refused() {
        let user = UserInfo::authenticated("bad\nname".into(), String::new(), vec![]);
        assert!(upstream_headers(&HeaderMap::new(), &user).is_err());
    }

    #[test]
    fn what_comes_back_and_what_a_failed_upstream_answers() {
        for kept in ["content-type", "warning", "retry-after", "audit-id", "content-encoding"] {
            assert!(returned_header(&HeaderName::from_static(kept)), "{kept}");
        }
        for local in ["content-length", "transfer-encoding", "connection", "date", "set-cookie"] {
            assert!(!returned_header(&HeaderName::from_static(local)), "{local}");
        }
        let down = forward_error(ForwardError::Unreachable("connection refused".into()));
        assert_eq!((down.code(), down.reason()), (503, "ServiceUnavailable"));
        assert_eq!(down.message(), "error trying to reach service: connection refused");
        let slow = forward_error(ForwardError::TimedOut(Duration::from_secs(60)));
        assert_eq!((slow.code(), slow.reason(), slow.retry_after_seconds()), (504, "Timeout", Some(1)));
        assert_eq!(escape_header_key("a/b c%"), "a%2Fb%20c%25");
    }
}
