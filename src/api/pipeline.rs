//! The request pipeline's stages before a handler, in kube-apiserver's
//! order: authentication (who: [`authenticate`], then [`impersonate`] for
//! `Impersonate-*` headers), authorization (may they:
//! [`authorize`] on the request's [`attributes`]), then overload protection
//! ([`admit`]: in-flight limits for reads and mutations, watches per user).
//! Admission and validation stay in the handlers, which receive the user
//! in `RequestHead::user`.
//!
//! Invariant: a refused request is an `ApiError` (401 Unauthorized, 403
//! Forbidden with kube-apiserver's message, 429 TooManyRequests with
//! Retry-After) before any handler or shard is asked anything; with no
//! authentication or authorization flags every request passes as
//! `system:anonymous` under AlwaysAllow, as before the pipeline existed.
//! The authorization check reads only this core's RBAC index.

use super::params::Params;
use super::route::{ResourcePath, Route};
use super::status::{ApiError, Target};
use super::Backend;
use crate::auth::authz::{self, AuthorizationMode};
use crate::auth::{Attributes, UserInfo};
use http::Method;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The identity of a connection's verified TLS client certificate, put in
/// each request's extensions by the runtime.
#[derive(Clone, Debug)]
pub struct ClientCertificateUser(pub UserInfo);

/// Authentication: the `Authorization` header and the connection's client
/// certificate to a user; 401 when credentials are present but wrong, or
/// absent while anonymous requests are off.
pub async fn authenticate(
    backend: &impl Backend,
    authorization: Option<&str>,
    certificate: Option<&ClientCertificateUser>,
) -> Result<UserInfo, ApiError> {
    // A service account token of this server's issuer (after a client
    // certificate, before the token file): its signature, time and
    // audiences, then its service account and bound objects, which are
    // read from the store (one to three reads per request).
    let service_accounts = &backend.config().authentication.service_accounts;
    if let (None, Some(tokens), Some(token)) =
        (certificate, service_accounts, authorization.and_then(crate::auth::authn::bearer_token))
    {
        match super::handlers::token::authenticate(backend, tokens, token, &[]).await {
            Ok(Some((user, _))) => return Ok(user),
            Ok(None) => {}
            // With an upstream, a token of this issuer's name that does not
            // verify here may be the cluster's own: the upstream decides.
            Err(_) if delegating(backend) => {}
            Err(_) => return Err(ApiError::Unauthorized),
        }
    }
    // With an upstream, a bearer token no local authenticator accepts is
    // reviewed there (TokenReview), as a delegating API server does.
    if let (true, None, Some(token)) =
        (delegating(backend), certificate, authorization.and_then(crate::auth::authn::bearer_token))
    {
        let file = backend.config().authentication.tokens.as_ref();
        if let Some(user) = file.and_then(|tokens| tokens.lookup(token)) {
            return Ok(UserInfo::authenticated(user.name.clone(), user.uid.clone(), user.groups.clone()));
        }
        return delegated_user(backend, token).await;
    }
    backend
        .config()
        .authentication
        .authenticate(authorization, certificate.map(|c| &c.0))
        .map_err(|_| ApiError::Unauthorized)
}

/// Impersonation (after authentication, before authorization, as in
/// kube-apiserver): the `Impersonate-*` headers' identity once the
/// requester passed every `impersonate` check ([`crate::auth::impersonation`]),
/// else 403 naming the requester; the requester itself when no header asks.
pub async fn impersonate<'a>(
    backend: &impl Backend,
    requester: UserInfo,
    headers: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<UserInfo, ApiError> {
    let asked = match crate::auth::impersonation::Impersonation::from_headers(headers) {
        Ok(None) => return Ok(requester),
        Ok(Some(asked)) => asked,
        Err(message) => return Err(ApiError::Internal(message)),
    };
    for check in asked.checks() {
        authorize(backend, &requester, &check).await?;
    }
    Ok(asked.user_info())
}

/// kube-apiserver's request info: what a request asks, from its method,
/// path and query (a list or watch with `fieldSelector=metadata.name=X`
/// names X, so `resourceNames` rules apply to single-object watches).
pub fn attributes(method: &Method, path: &str, route: &Route, params: &Params) -> Attributes {
    let Route::Resource(resource) = route else {
        return Attributes {
            verb: method.as_str().to_ascii_lowercase(),
            resource_request: false,
            path: path.to_string(),
            ..Attributes::default()
        };
    };
    let ResourcePath { group, version, resource: plural, namespace, name, subresource, legacy_watch } = resource;
    let collection = name.is_none();
    let verb = match *method {
        Method::GET | Method::HEAD if params.watch || *legacy_watch => "watch",
        Method::GET | Method::HEAD if collection => "list",
        Method::GET | Method::HEAD => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if collection => "deletecollection",
        Method::DELETE => "delete",
        _ => "",
    };
    let mut name = name.clone().unwrap_or_default();
    let mut field_selector = Vec::new();
    if verb == "list" || verb == "watch" {
        if let Some(selector) =
            params.field_selector.as_deref().and_then(|s| crate::types::selector::parse_field_selector(s).ok())
        {
            field_selector = selector
                .requirements
                .iter()
                .filter(|r| r.operator == crate::types::selector::Operator::Equals)
                .map(|r| (r.key.clone(), r.value.clone()))
                .collect();
        }
    }
    if name.is_empty() && (verb == "list" || verb == "watch") {
        if let Some(selector) =
            params.field_selector.as_deref().and_then(|s| crate::types::selector::parse_field_selector(s).ok())
        {
            if let Some(r) = selector
                .requirements
                .iter()
                .find(|r| r.key == "metadata.name" && r.operator == crate::types::selector::Operator::Equals)
            {
                name = r.value.clone();
            }
        }
    }
    // A namespace is its own namespace (kube: /api/v1/namespaces/NAME).
    let namespace = match namespace {
        Some(ns) => ns.clone(),
        None if group.is_empty() && plural == "namespaces" => name.clone(),
        None => String::new(),
    };
    Attributes {
        verb: verb.to_string(),
        resource_request: true,
        api_group: group.clone(),
        api_version: version.clone(),
        resource: plural.clone(),
        subresource: subresource.clone().unwrap_or_default(),
        namespace,
        name,
        path: path.to_string(),
        field_selector,
    }
}

/// Authorization: 403 with kube-apiserver's message unless allowed. In RBAC
/// mode this reads this core's index once it has applied the commit point.
pub async fn authorize(backend: &impl Backend, user: &UserInfo, attributes: &Attributes) -> Result<(), ApiError> {
    let mode = backend.config().authorization_mode;
    if mode == AuthorizationMode::AlwaysAllow || user.in_group(crate::auth::MASTERS_GROUP) {
        return Ok(());
    }
    let index = backend.rbac_index().await;
    let graph = if mode.has_node() { Some(backend.node_graph().await) } else { None };
    match authz::decide(mode, &index, graph.as_deref(), user, attributes) {
        crate::auth::node::Decision::Allow => Ok(()),
        crate::auth::node::Decision::NoOpinion(reason) => {
            // No local authorizer allows it: with an upstream, it decides
            // (SubjectAccessReview), and its reason is the 403's.
            let reason = if delegating(backend) {
                let decision = delegated_decision(backend, user, attributes).await?;
                if decision.allowed {
                    return Ok(());
                }
                if decision.reason.is_empty() {
                    reason
                } else {
                    decision.reason
                }
            } else {
                reason
            };
            let mut error = forbidden(user, attributes);
            if !reason.is_empty() {
                if let ApiError::Forbidden { message, .. } = &mut error {
                    message.push_str(": ");
                    message.push_str(&reason);
                }
            }
            Err(error)
        }
    }
}

/// A second authorization a handler asks for, as kube's pod subresources'
/// `ensureAuthorizedForVerb` does (a websocket GET to `pods/exec`,
/// `attach` or `portforward` must also be allowed `create`, kube's
/// `AuthorizePodWebsocketUpgradeCreatePermission`, on by default since
/// 1.35): the request's attributes with another verb; a refusal is 403
/// `RESOURCE "NAME" is forbidden: REASON` (kube's `NewForbidden` with the
/// authorizer's reason, often empty).
pub async fn authorize_verb(
    backend: &impl Backend,
    user: &UserInfo,
    attributes: &Attributes,
    verb: &str,
) -> Result<(), ApiError> {
    let mode = backend.config().authorization_mode;
    if attributes.verb == verb || mode == AuthorizationMode::AlwaysAllow || user.in_group(crate::auth::MASTERS_GROUP) {
        return Ok(());
    }
    let attributes = Attributes { verb: verb.to_string(), ..attributes.clone() };
    let index = backend.rbac_index().await;
    let graph = if mode.has_node() { Some(backend.node_graph().await) } else { None };
    match authz::decide(mode, &index, graph.as_deref(), user, &attributes) {
        crate::auth::node::Decision::Allow => Ok(()),
        crate::auth::node::Decision::NoOpinion(reason) => {
            // As `authorize`: with an upstream, its SubjectAccessReview decides.
            let reason = if delegating(backend) {
                let decision = delegated_decision(backend, user, &attributes).await?;
                if decision.allowed {
                    return Ok(());
                }
                if decision.reason.is_empty() {
                    reason
                } else {
                    decision.reason
                }
            } else {
                reason
            };
            Err(ApiError::Forbidden {
                target: Target::new(&attributes.api_group, &attributes.resource, &attributes.name),
                message: reason,
            })
        }
    }
}

/// Whether what this server cannot decide is asked of `--upstream`.
fn delegating(backend: &impl Backend) -> bool {
    backend.config().upstream.is_some()
}

/// A review POSTed to the upstream as this server's own identity.
async fn review(
    backend: &impl Backend,
    path: &str,
    body: Vec<u8>,
) -> Result<super::forward::ForwardResponse, super::forward::ForwardError> {
    let mut headers = http::HeaderMap::new();
    let json = http::HeaderValue::from_static("application/json");
    headers.insert(http::header::CONTENT_TYPE, json.clone());
    headers.insert(http::header::ACCEPT, json);
    let request = super::forward::ForwardRequest {
        method: Method::POST,
        path_and_query: path.to_string(),
        headers,
        body: body.into(),
        streamed: false,
    };
    backend.forward(request).await
}

/// The user the upstream's TokenReview names for `token` (cached per shard
/// for `upstream_token_review_ttl`, refusals too); 401 when it refuses the
/// token or cannot be asked (an unanswered review is not cached).
async fn delegated_user(backend: &impl Backend, token: &str) -> Result<UserInfo, ApiError> {
    use crate::auth::delegation;
    let key = delegation::token_key(token);
    let caches = backend.delegation_caches();
    if let Some(cached) = caches.and_then(|c| c.borrow().tokens.get(&key, std::time::Instant::now())) {
        return cached.ok_or(ApiError::Unauthorized);
    }
    let answer = review(backend, delegation::TOKEN_REVIEW_PATH, delegation::token_review_body(token)).await;
    let user = match answer.map_err(|e| e.to_string()).and_then(|a| delegation::token_review_user(a.status, &a.body)) {
        Ok(user) => user,
        Err(reason) => {
            eprintln!("shardline: a delegated TokenReview failed: {reason}");
            return Err(ApiError::Unauthorized);
        }
    };
    if let Some(caches) = caches {
        let ttl = backend.config().upstream_token_review_ttl;
        caches.borrow_mut().tokens.insert(key, user.clone(), ttl, std::time::Instant::now());
    }
    user.ok_or(ApiError::Unauthorized)
}

/// The upstream's SubjectAccessReview decision (cached per shard, allowed
/// and denied for their own TTLs); an unanswered review is kube's answer to
/// an authorizer's error, 500, and is not cached.
async fn delegated_decision(
    backend: &impl Backend,
    user: &UserInfo,
    attributes: &Attributes,
) -> Result<crate::auth::delegation::Decision, ApiError> {
    use crate::auth::delegation;
    let body = delegation::subject_access_review_body(user, attributes);
    let caches = backend.delegation_caches();
    if let Some(cached) = caches.and_then(|c| c.borrow().decisions.get(&body, std::time::Instant::now())) {
        return Ok(cached);
    }
    let answer = review(backend, delegation::SUBJECT_ACCESS_REVIEW_PATH, body.clone().into_bytes()).await;
    let decision = answer
        .map_err(|e| e.to_string())
        .and_then(|a| delegation::access_decision(a.status, &a.body))
        .map_err(|reason| ApiError::Internal(format!("the upstream's SubjectAccessReview failed: {reason}")))?;
    if let Some(caches) = caches {
        let config = backend.config();
        let ttl = if decision.allowed { config.upstream_authorized_ttl } else { config.upstream_unauthorized_ttl };
        caches.borrow_mut().decisions.insert(body, decision.clone(), ttl, std::time::Instant::now());
    }
    Ok(decision)
}

/// The 403 for a refused request.
pub fn forbidden(user: &UserInfo, attributes: &Attributes) -> ApiError {
    let target = if attributes.resource_request {
        Target::new(&attributes.api_group, &attributes.resource, &attributes.name)
    } else {
        Target::default()
    };
    ApiError::Forbidden { target, message: attributes.forbidden_message(user) }
}

/// What kind of request an in-flight slot is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestClass {
    ReadOnly,
    Mutating,
    /// Long-running: counted apart, limited per user.
    Watch,
    /// Health checks and /metrics: never refused, so probes answer under load.
    Exempt,
}

impl RequestClass {
    pub fn of(attributes: &Attributes, route: &Route) -> RequestClass {
        match route {
            Route::Health { .. } | Route::Metrics => return RequestClass::Exempt,
            _ => {}
        }
        match attributes.verb.as_str() {
            "watch" => RequestClass::Watch,
            "create" | "update" | "patch" | "delete" | "deletecollection" | "post" | "put" => RequestClass::Mutating,
            _ => RequestClass::ReadOnly,
        }
    }
}

/// Requests in flight across every shard, and how many were refused.
/// Shared by every core (atomics only).
#[derive(Debug, Default)]
pub struct InFlight {
    pub reads: AtomicU64,
    pub mutations: AtomicU64,
    pub watches: AtomicU64,
    pub rejected_reads: AtomicU64,
    pub rejected_mutations: AtomicU64,
    pub rejected_watches: AtomicU64,
}

/// Holds one in-flight slot until dropped (when the response body ends).
pub struct InFlightGuard {
    counters: Arc<InFlight>,
    class: RequestClass,
    /// A watch's place in its user's count (kept on one shard for the whole
    /// server), released with it.
    _user_watch: Option<Box<dyn std::any::Any>>,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if let Some(counter) = self.counters.counter(self.class) {
            counter.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl InFlight {
    fn counter(&self, class: RequestClass) -> Option<&AtomicU64> {
        match class {
            RequestClass::ReadOnly => Some(&self.reads),
            RequestClass::Mutating => Some(&self.mutations),
            RequestClass::Watch => Some(&self.watches),
            RequestClass::Exempt => None,
        }
    }

    /// Takes a slot of `class` if fewer than `limit` are taken (`None`: no limit).
    fn try_acquire(self: &Arc<Self>, class: RequestClass, limit: Option<usize>) -> Result<InFlightGuard, ()> {
        if let (Some(counter), Some(limit)) = (self.counter(class), limit) {
            let taken = counter.fetch_add(1, Ordering::AcqRel);
            if taken >= limit as u64 {
                counter.fetch_sub(1, Ordering::AcqRel);
                let rejected = match class {
                    RequestClass::ReadOnly => &self.rejected_reads,
                    RequestClass::Mutating => &self.rejected_mutations,
                    _ => &self.rejected_watches,
                };
                rejected.fetch_add(1, Ordering::Relaxed);
                return Err(());
            }
        } else if let Some(counter) = self.counter(class) {
            counter.fetch_add(1, Ordering::AcqRel);
        }
        Ok(InFlightGuard { counters: self.clone(), class, _user_watch: None })
    }
}

/// Overload protection: a slot for the request, or 429 with Retry-After.
/// Reads and mutations have their own limits across the server; a watch
/// is limited per user across the server instead, since it is long-running
/// (its count lives on the shard owning the user name: one cross-core
/// message when a watch opens on another shard, none for reads and writes).
/// Nothing of the request has been read yet: its body is read only once
/// it is admitted.
pub async fn admit(
    backend: &impl Backend,
    class: RequestClass,
    user: &UserInfo,
) -> Result<Option<InFlightGuard>, ApiError> {
    let config = backend.config();
    let too_many = || ApiError::TooManyRequests { retry_after_seconds: config.overload_retry_after_seconds };
    let Some(counters) = backend.in_flight() else { return Ok(None) };
    let limit = match class {
        RequestClass::ReadOnly => Some(config.max_requests_inflight),
        RequestClass::Mutating => Some(config.max_mutating_requests_inflight),
        RequestClass::Watch | RequestClass::Exempt => None,
    };
    let mut guard = counters.try_acquire(class, limit).map_err(|()| too_many())?;
    if class == RequestClass::Watch {
        match backend.open_user_watch(&user.name, config.watches_per_user_max).await {
            Some(user_watch) => guard._user_watch = Some(user_watch),
            None => {
                counters.rejected_watches.fetch_add(1, Ordering::Relaxed);
                return Err(too_many());
            }
        }
    }
    Ok(Some(guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: Method, path: &str) -> Attributes {
        let uri: http::Uri = path.parse().unwrap();
        let params = Params::parse(uri.query()).unwrap();
        attributes(&method, uri.path(), &super::super::route::parse(uri.path()), &params)
    }

    #[test]
    fn request_info_as_kube_apiserver_derives_it() {
        let a = attrs(Method::GET, "/api/v1/namespaces/team/pods");
        assert_eq!((a.verb.as_str(), a.namespace.as_str(), a.resource.as_str()), ("list", "team", "pods"));
        assert!(a.resource_request);
        let a = attrs(Method::GET, "/api/v1/namespaces/team/configmaps?watch=1&fieldSelector=metadata.name%3Donly");
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "only"));
        let a = attrs(Method::GET, "/api/v1/watch/namespaces/team/configmaps/only");
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "only"));
        let a = attrs(Method::DELETE, "/apis/apps/v1/namespaces/team/deployments");
        assert_eq!((a.verb.as_str(), a.api_group.as_str()), ("deletecollection", "apps"));
        let a = attrs(Method::PUT, "/apis/apps/v1/namespaces/team/deployments/web/scale");
        assert_eq!((a.verb.as_str(), a.subresource.as_str(), a.name.as_str()), ("update", "scale", "web"));
        let a = attrs(Method::GET, "/api/v1/namespaces/team");
        assert_eq!((a.resource.as_str(), a.namespace.as_str(), a.name.as_str()), ("namespaces", "team", "team"));
        let a = attrs(Method::GET, "/api/v1/pods");
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", ""));
        let a = attrs(Method::GET, "/healthz");
        assert!(!a.resource_request);
        assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", "/healthz"));
        assert!(!attrs(Method::GET, "/apis/apps/v1").resource_request);
    }

    #[test]
    fn in_flight_slots_are_bounded_and_released() {
        let counters = Arc::new(InFlight::default());
        let first = counters.try_acquire(RequestClass::Mutating, Some(2)).unwrap();
        let _second = counters.try_acquire(RequestClass::Mutating, Some(2)).unwrap();
        assert!(counters.try_acquire(RequestClass::Mutating, Some(2)).is_err());
        assert_eq!(counters.rejected_mutations.load(Ordering::Relaxed), 1);
        // Reads have their own budget.
        assert!(counters.try_acquire(RequestClass::ReadOnly, Some(1)).is_ok());
        drop(first);
        assert!(counters.try_acquire(RequestClass::Mutating, Some(2)).is_ok());
        assert_eq!(counters.mutations.load(Ordering::Relaxed), 1, "the guard above was dropped at once");
    }
}
