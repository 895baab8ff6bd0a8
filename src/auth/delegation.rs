//! Delegated authentication and authorization (with `--upstream`, issue 16):
//! what this server cannot decide itself is asked of the cluster's
//! kube-apiserver, as an aggregated API server asks its kube-apiserver.
//!
//! What it owns, without I/O: the TokenReview sent for a bearer token no
//! local authenticator accepts ([`token_review_body`], [`token_review_user`]:
//! `status.authenticated` and `status.user` to a [`UserInfo`]); the
//! SubjectAccessReview sent when every local authorizer has no opinion
//! ([`subject_access_review_body`]: the user, groups, uid, extra and the
//! request's attributes, field selector included, so the cluster's Node
//! authorizer sees a kubelet's `spec.nodeName`; [`access_decision`]:
//! `status.allowed` and `status.reason`); and the caches of both answers
//! ([`TtlCache`]: a bounded map whose entries expire, kept per shard by the
//! runtime, the time passed in). The runtime sends the reviews
//! (`Backend::forward`, as this server's own upstream identity, which needs
//! `create` on `tokenreviews` and `subjectaccessreviews`, kube's
//! `system:auth-delegator`) and `api/pipeline.rs` decides when.

use super::{Attributes, UserInfo};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The TokenReview path on the upstream.
pub const TOKEN_REVIEW_PATH: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
/// The SubjectAccessReview path on the upstream.
pub const SUBJECT_ACCESS_REVIEW_PATH: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/// The body of a TokenReview for `token` (the API's audiences: none named).
pub fn token_review_body(token: &str) -> Vec<u8> {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}});
    serde_json::to_vec(&review).unwrap_or_default()
}

/// The user a TokenReview's answer names: `Ok(Some)` when authenticated,
/// `Ok(None)` when the upstream refused the token, `Err` when the answer is
/// no TokenReview (an error Status: the token is then refused, not cached).
pub fn token_review_user(status_code: u16, body: &[u8]) -> Result<Option<UserInfo>, String> {
    if !(200..300).contains(&status_code) {
        return Err(format!("the upstream answered the TokenReview with {status_code}: {}", snippet(body)));
    }
    let review: Value = serde_json::from_slice(body).map_err(|e| format!("the TokenReview's answer: {e}"))?;
    let status = &review["status"];
    if status["authenticated"].as_bool() != Some(true) {
        return Ok(None);
    }
    let user = &status["user"];
    let name = user["username"].as_str().unwrap_or("");
    if name.is_empty() {
        return Err("the TokenReview's answer is authenticated but names no user".into());
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
    };
    let extra =
        user["extra"].as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect()).unwrap_or_default();
    Ok(Some(UserInfo {
        name: name.to_string(),
        uid: user["uid"].as_str().unwrap_or("").to_string(),
        groups: strings(&user["groups"]),
        extra,
    }))
}

/// The body of a SubjectAccessReview asking whether `user` may do what
/// `attributes` describe. Also the cache key of its answer (the same
/// question gives the same text).
pub fn subject_access_review_body(user: &UserInfo, attributes: &Attributes) -> String {
    let mut spec = Map::new();
    spec.insert("user".into(), json!(user.name));
    spec.insert("groups".into(), json!(user.groups));
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
    if attributes.resource_request {
        let mut resource = json!({
            "namespace": attributes.namespace,
            "verb": attributes.verb,
            "group": attributes.api_group,
            "version": attributes.api_version,
            "resource": attributes.resource,
            "subresource": attributes.subresource,
            "name": attributes.name,
        });
        if !attributes.field_selector.is_empty() {
            let requirements: Vec<Value> = attributes
                .field_selector
                .iter()
                .map(|(key, value)| json!({"key": key, "operator": "In", "values": [value]}))
                .collect();
            resource["fieldSelector"] = json!({"requirements": requirements});
        }
        spec.insert("resourceAttributes".into(), resource);
    } else {
        spec.insert("nonResourceAttributes".into(), json!({"path": attributes.path, "verb": attributes.verb}));
    }
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}).to_string()
}

/// The upstream's decision: allowed or not, and its reason (appended to the
/// 403's message, as kube appends a webhook authorizer's reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// A SubjectAccessReview's answer; `Err` when it is no SubjectAccessReview
/// (kube answers an authorizer's error with 500; it is not cached).
pub fn access_decision(status_code: u16, body: &[u8]) -> Result<Decision, String> {
    if !(200..300).contains(&status_code) {
        return Err(format!("the upstream answered the SubjectAccessReview with {status_code}: {}", snippet(body)));
    }
    let review: Value = serde_json::from_slice(body).map_err(|e| format!("the SubjectAccessReview's answer: {e}"))?;
    let status = &review["status"];
    let allowed = status["allowed"].as_bool().unwrap_or(false) && status["denied"].as_bool() != Some(true);
    Ok(Decision { allowed, reason: status["reason"].as_str().unwrap_or("").to_string() })
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    text.chars().take(200).collect()
}

/// A bounded map whose entries expire: at most `entries_max` entries; when
/// full, the expired ones are dropped, and if none was, the new entry is
/// not kept (the answer is still used, only not remembered). The caller
/// passes the time, so the cache does no I/O and tests need no clock.
#[derive(Debug)]
pub struct TtlCache<V> {
    entries: HashMap<String, (Instant, V)>,
    entries_max: usize,
}

impl<V: Clone> TtlCache<V> {
    pub fn new(entries_max: usize) -> TtlCache<V> {
        TtlCache { entries: HashMap::new(), entries_max }
    }

    /// The value kept for `key`, unless it expired by `now`.
    pub fn get(&self, key: &str, now: Instant) -> Option<V> {
        self.entries.get(key).filter(|(expires, _)| *expires > now).map(|(_, v)| v.clone())
    }

    /// Keeps `value` for `ttl` from `now` (a zero TTL keeps nothing).
    pub fn insert(&mut self, key: String, value: V, ttl: Duration, now: Instant) {
        if ttl.is_zero() || self.entries_max == 0 {
            return;
        }
        if self.entries.len() >= self.entries_max && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (expires, _)| *expires > now);
            if self.entries.len() >= self.entries_max {
                return;
            }
        }
        self.entries.insert(key, (now + ttl, value));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One shard's caches of the upstream's answers: users by the SHA-256 of
/// their token (a refused token as `None`), decisions by the review's text.
#[derive(Debug)]
pub struct Caches {
    pub tokens: TtlCache<Option<UserInfo>>,
    pub decisions: TtlCache<Decision>,
}

impl Caches {
    pub fn new(entries_max: usize) -> Caches {
        Caches { tokens: TtlCache::new(entries_max), decisions: TtlCache::new(entries_max) }
    }
}

/// The cache key of a token: its SHA-256, hex (the cache never holds tokens).
pub fn token_key(token: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_review_answer_names_the_user_or_refuses() {
        let body = token_review_body("abc");
        let sent: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(sent["spec"]["token"], "abc");
        assert_eq!(sent["kind"], "TokenReview");
        let answer = br#"{"kind":"TokenReview","status":{"authenticated":true,"user":{"username":"carol","uid":"c-1",
            "groups":["readers","system:authenticated"],"extra":{"scopes":["a"]}}}}"#;
        let user = token_review_user(201, answer).unwrap().unwrap();
        assert_eq!(user.name, "carol");
        assert_eq!(user.uid, "c-1");
        assert_eq!(user.groups, ["readers", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["a"]);
        assert_eq!(token_review_user(201, br#"{"status":{"authenticated":false,"error":"bad"}}"#), Ok(None));
        assert!(token_review_user(403, br#"{"kind":"Status"}"#).is_err(), "an error is not a refusal");
        assert!(token_review_user(201, br#"{"status":{"authenticated":true,"user":{}}}"#).is_err());
    }

    #[test]
    fn a_subject_access_review_carries_the_user_and_the_request() {
        let mut user = UserInfo::authenticated("system:node:n1".into(), "u".into(), vec!["system:nodes".into()]);
        user.extra.insert("k".into(), vec!["v".into()]);
        let attributes = Attributes {
            verb: "list".into(),
            resource_request: true,
            api_version: "v1".into(),
            resource: "pods".into(),
            field_selector: vec![("spec.nodeName".into(), "n1".into())],
            ..Attributes::default()
        };
        let sent: Value = serde_json::from_str(&subject_access_review_body(&user, &attributes)).unwrap();
        let spec = &sent["spec"];
        assert_eq!(spec["user"], "system:node:n1");
        assert_eq!(spec["groups"], json!(["system:nodes", "system:authenticated"]));
        assert_eq!(spec["uid"], "u");
        assert_eq!(spec["extra"], json!({"k": ["v"]}));
        assert_eq!(spec["resourceAttributes"]["verb"], "list");
        assert_eq!(spec["resourceAttributes"]["resource"], "pods");
        assert_eq!(
            spec["resourceAttributes"]["fieldSelector"],
            json!({"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]})
        );
        let path = Attributes { verb: "get".into(), path: "/healthz".into(), ..Attributes::default() };
        let sent: Value = serde_json::from_str(&subject_access_review_body(&user, &path)).unwrap();
        assert_eq!(sent["spec"]["nonResourceAttributes"], json!({"path": "/healthz", "verb": "get"}));
        assert!(sent["spec"].get("resourceAttributes").is_none());

        let allowed = access_decision(201, br#"{"status":{"allowed":true}}"#).unwrap();
        assert_eq!(allowed, Decision { allowed: true, reason: String::new() });
        let denied = access_decision(201, br#"{"status":{"allowed":false,"reason":"no relationship"}}"#).unwrap();
        assert_eq!(denied, Decision { allowed: false, reason: "no relationship".into() });
        assert!(!access_decision(201, br#"{"status":{"allowed":true,"denied":true}}"#).unwrap().allowed);
        assert!(access_decision(500, b"{}").is_err());
    }

    #[test]
    fn cached_answers_expire_and_the_cache_is_bounded() {
        let start = Instant::now();
        let mut cache = TtlCache::new(2);
        cache.insert("a".into(), 1, Duration::from_secs(10), start);
        assert_eq!(cache.get("a", start + Duration::from_secs(9)), Some(1));
        assert_eq!(cache.get("a", start + Duration::from_secs(10)), None, "expired");
        cache.insert("b".into(), 2, Duration::from_secs(1), start);
        cache.insert("c".into(), 3, Duration::from_secs(10), start);
        assert_eq!(cache.len(), 2, "full: c is not kept");
        assert_eq!(cache.get("c", start), None);
        cache.insert("c".into(), 3, Duration::from_secs(10), start + Duration::from_secs(2));
        assert_eq!(cache.get("c", start + Duration::from_secs(2)), Some(3), "b expired and made room");
        cache.insert("z".into(), 0, Duration::ZERO, start);
        assert_eq!(cache.get("z", start), None, "a zero TTL keeps nothing");
        assert_eq!(token_key("t"), token_key("t"));
        assert_ne!(token_key("t"), token_key("u"));
        assert_eq!(token_key("t").len(), 64);
    }
}
