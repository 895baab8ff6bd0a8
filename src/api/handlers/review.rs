//! The review APIs: those that let a client ask about itself,
//! SelfSubjectAccessReview and SelfSubjectRulesReview
//! (`authorization.k8s.io/v1`, what `kubectl auth can-i` and `can-i --list`
//! send) and SelfSubjectReview (`authentication.k8s.io/v1`, `kubectl auth
//! whoami`); and those a component asks about another user:
//! SubjectAccessReview and the namespaced LocalSubjectAccessReview (the
//! user, groups and extra given in the spec) and TokenReview (is this
//! bearer token valid, and whose is it). Each is a create of a virtual
//! object: nothing is stored, the answer is the object with its `status`
//! filled in from the request's user (or the spec's), this shard's RBAC
//! index, and the authenticators.
//!
//! Bodies come as JSON or, from kubectl's typed clients, in Kubernetes'
//! protobuf envelope; the few spec fields these reviews carry are read from
//! the protobuf wire format here (the schema table covers stored kinds only).

use crate::api::route::ResourcePath;
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::auth::authz::{self, AuthorizationMode};
use crate::auth::rbac::PolicyRule;
use crate::auth::{Attributes, MASTERS_GROUP};
use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::{json, Map, Value};

const AUTHORIZATION_GROUP: &str = "authorization.k8s.io";
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// Whether `path` is one of the review collections.
pub fn serves(path: &ResourcePath) -> bool {
    if path.name.is_some() || path.subresource.is_some() {
        return false;
    }
    match (path.group.as_str(), path.resource.as_str()) {
        (AUTHORIZATION_GROUP, "localsubjectaccessreviews") => path.namespace.is_some(),
        (AUTHORIZATION_GROUP, "selfsubjectaccessreviews" | "selfsubjectrulesreviews" | "subjectaccessreviews")
        | (AUTHENTICATION_GROUP, "selfsubjectreviews" | "tokenreviews") => path.namespace.is_none(),
        _ => false,
    }
}

pub async fn serve<B: Backend + 'static>(
    shared: &std::rc::Rc<B>,
    head: &RequestHead,
    path: &ResourcePath,
    body: &Bytes,
) -> Result<Response<ResponseBody>, ApiError> {
    let backend: &B = shared;
    let kind = match path.resource.as_str() {
        "selfsubjectaccessreviews" => "SelfSubjectAccessReview",
        "selfsubjectrulesreviews" => "SelfSubjectRulesReview",
        "subjectaccessreviews" => "SubjectAccessReview",
        "localsubjectaccessreviews" => "LocalSubjectAccessReview",
        "tokenreviews" => "TokenReview",
        _ => "SelfSubjectReview",
    };
    let versions: &[&str] = match kind {
        "SelfSubjectReview" => &["v1", "v1beta1"],
        _ => &["v1"],
    };
    if !versions.contains(&path.version.as_str()) {
        return Err(ApiError::PathNotFound);
    }
    if head.method != Method::POST {
        return Err(ApiError::MethodNotAllowed {
            method: head.method.to_string(),
            target: crate::api::status::Target::new(&path.group, &path.resource, ""),
        });
    }
    let spec = read_spec(head.content_type.as_deref(), body, kind)?;
    let user = &head.user;
    let api_version = format!("{}/{}", path.group, path.version);
    let mode = backend.config().authorization_mode;
    let status = match kind {
        "TokenReview" => token_review(backend, &spec).await,
        "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            let namespace = path.namespace.as_deref();
            let (subject, attributes) = subject_access(&spec, kind, namespace)?;
            let (allowed, reason) = decide(backend, &subject, &attributes).await;
            let mut spec = spec;
            if let (Some(ns), Some(Value::Object(r))) = (namespace, spec.get_mut("resourceAttributes")) {
                r.insert("namespace".into(), json!(ns));
            }
            let mut metadata = json!({"creationTimestamp": null});
            if let Some(ns) = namespace {
                metadata["namespace"] = json!(ns);
            }
            let mut status = json!({"allowed": allowed});
            if !reason.is_empty() {
                status["reason"] = json!(reason);
            }
            let answer = json!({"kind": kind, "apiVersion": api_version, "metadata": metadata,
                "spec": Value::Object(spec), "status": status});
            return Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())));
        }
        "SelfSubjectAccessReview" => {
            let attributes = access_attributes(&spec)?;
            let (allowed, reason) = decide(backend, user, &attributes).await;
            // RBAC gives no reason for a denial (kube's authorizer answers
            // "no opinion" with an empty reason), so `kubectl auth can-i`
            // prints a bare "no"; the Node authorizer gives its own.
            let mut status = json!({"allowed": allowed});
            if !reason.is_empty() {
                status["reason"] = json!(reason);
            }
            status
        }
        "SelfSubjectRulesReview" => {
            let namespace = spec.get("namespace").and_then(Value::as_str).unwrap_or("");
            let rules = if mode == AuthorizationMode::AlwaysAllow || user.in_group(MASTERS_GROUP) {
                vec![
                    PolicyRule {
                        verbs: vec!["*".into()],
                        api_groups: vec!["*".into()],
                        resources: vec!["*".into()],
                        ..Default::default()
                    },
                    PolicyRule { verbs: vec!["*".into()], non_resource_urls: vec!["*".into()], ..Default::default() },
                ]
            } else {
                backend.rbac_index().await.rules_for(user, namespace)
            };
            let (non_resource, resource): (Vec<PolicyRule>, Vec<PolicyRule>) =
                rules.into_iter().partition(|r| !r.non_resource_urls.is_empty());
            let resource_rules: Vec<Value> = resource
                .iter()
                .map(|r| {
                    let mut rule = json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
                    if !r.resource_names.is_empty() {
                        rule["resourceNames"] = json!(r.resource_names);
                    }
                    rule
                })
                .collect();
            let non_resource_rules: Vec<Value> = non_resource
                .iter()
                .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
                .collect();
            json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false})
        }
        _ => {
            let info = user_info_json(user);
            let answer = json!({"kind": kind, "apiVersion": api_version,
                "metadata": {"creationTimestamp": null}, "status": {"userInfo": info}});
            return Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())));
        }
    };
    let answer = json!({"kind": kind, "apiVersion": api_version, "metadata": {"creationTimestamp": null},
        "spec": Value::Object(spec), "status": status});
    Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())))
}

/// kube's `UserInfo` of a review's status.
fn user_info_json(user: &crate::auth::UserInfo) -> Value {
    let mut info = json!({"username": user.name});
    if !user.uid.is_empty() {
        info["uid"] = json!(user.uid);
    }
    if !user.groups.is_empty() {
        info["groups"] = json!(user.groups);
    }
    if !user.extra.is_empty() {
        info["extra"] = json!(user.extra);
    }
    info
}

/// A TokenReview's status: the service account authenticator first, then
/// the token file, as kube-apiserver's union authenticator tries them.
async fn token_review(backend: &impl Backend, spec: &Map<String, Value>) -> Value {
    let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
    let audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let authentication = &backend.config().authentication;
    if let Some(tokens) = &authentication.service_accounts {
        match super::token::authenticate(backend, tokens, token, &audiences).await {
            Ok(Some((user, accepted))) => {
                return json!({"authenticated": true, "user": user_info_json(&user), "audiences": accepted})
            }
            Ok(None) => {}
            Err(reason) => return json!({"user": {}, "error": format!("[invalid bearer token, {reason}]")}),
        }
    }
    if let Some(user) = authentication.tokens.as_ref().and_then(|t| t.lookup(token)) {
        let user = crate::auth::UserInfo::authenticated(user.name.clone(), user.uid.clone(), user.groups.clone());
        let mut status = json!({"authenticated": true, "user": user_info_json(&user)});
        if !audiences.is_empty() {
            // A static token is good for the API audiences only (kube's
            // audience-agnostic authenticators).
            let api = authentication.service_accounts.as_ref().map(|t| t.api_audiences.clone()).unwrap_or_default();
            let accepted: Vec<String> = audiences.iter().filter(|a| api.contains(a)).cloned().collect();
            if accepted.is_empty() {
                return json!({"user": {}, "error": "token audiences is invalid for the target audiences"});
            }
            status["audiences"] = json!(accepted);
        }
        return status;
    }
    json!({"user": {}, "error": "[invalid bearer token, token lookup failed]"})
}

/// The subject and attributes a (Local)SubjectAccessReview asks about;
/// 422 or 400 as kube's validation answers.
fn subject_access(
    spec: &Map<String, Value>,
    kind: &str,
    namespace: Option<&str>,
) -> Result<(crate::auth::UserInfo, Attributes), ApiError> {
    let invalid = |field: &str, message: String| ApiError::Invalid {
        kind: kind.into(),
        target: crate::api::status::Target::new(AUTHORIZATION_GROUP, "", ""),
        causes: vec![crate::api::status::Cause { reason: "FieldValueInvalid".into(), message, field: field.into() }],
    };
    let user = spec.get("user").and_then(Value::as_str).unwrap_or("").to_string();
    let groups: Vec<String> = spec
        .get("groups")
        .and_then(Value::as_array)
        .map(|g| g.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if user.is_empty() && groups.is_empty() {
        return Err(invalid(
            "spec.user",
            "Invalid value: \"\": at least one of user or group must be specified".into(),
        ));
    }
    let mut attributes = access_attributes(spec).map_err(|e| match e {
        ApiError::Invalid { causes, .. } => ApiError::Invalid {
            kind: kind.into(),
            target: crate::api::status::Target::new(AUTHORIZATION_GROUP, "", ""),
            causes,
        },
        other => other,
    })?;
    if let Some(ns) = namespace {
        if !attributes.resource_request {
            return Err(invalid(
                "spec.nonResourceAttributes",
                "Invalid value: \"null\": disallowed on this kind of request".into(),
            ));
        }
        if attributes.namespace.is_empty() {
            attributes.namespace = ns.to_string();
        } else if attributes.namespace != ns {
            return Err(ApiError::BadRequest(format!("spec.resourceAttributes.namespace must match namespace: {ns}")));
        }
    }
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|e| {
            e.iter()
                .map(|(k, v)| {
                    let values = v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect());
                    (k.clone(), values.unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default();
    let uid = spec.get("uid").and_then(Value::as_str).unwrap_or("").to_string();
    Ok((crate::auth::UserInfo { name: user, uid, groups, extra }, attributes))
}

/// The attributes a SelfSubjectAccessReview asks about; 422 when it names
/// neither resource nor non-resource attributes.
fn access_attributes(spec: &Map<String, Value>) -> Result<Attributes, ApiError> {
    let text = |o: &Value, f: &str| o.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        return Ok(Attributes {
            verb: text(r, "verb"),
            resource_request: true,
            api_group: text(r, "group"),
            api_version: text(r, "version"),
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            namespace: text(r, "namespace"),
            name: text(r, "name"),
            path: String::new(),
            field_selector: field_selector(r),
        });
    }
    if let Some(n) = spec.get("nonResourceAttributes").filter(|v| v.is_object()) {
        return Ok(Attributes { verb: text(n, "verb"), path: text(n, "path"), ..Attributes::default() });
    }
    Err(ApiError::Invalid {
        kind: "SelfSubjectAccessReview".into(),
        target: crate::api::status::Target::new(AUTHORIZATION_GROUP, "", ""),
        causes: vec![crate::api::status::Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified"
                .into(),
            field: "spec.resourceAttributes".into(),
        }],
    })
}

/// An access review's answer: the authorizer chain of `--authorization-mode`
/// (masters, the Node authorizer over this shard's graph in `Node,RBAC`,
/// RBAC) and, when it says no, the Node authorizer's reason.
async fn decide(backend: &impl Backend, subject: &crate::auth::UserInfo, attributes: &Attributes) -> (bool, String) {
    let mode = backend.config().authorization_mode;
    if mode == AuthorizationMode::AlwaysAllow || subject.in_group(MASTERS_GROUP) {
        return (true, String::new());
    }
    let index = backend.rbac_index().await;
    let graph = if mode.has_node() { Some(backend.node_graph().await) } else { None };
    match authz::decide(mode, &index, graph.as_deref(), subject, attributes) {
        crate::auth::node::Decision::Allow => (true, String::new()),
        crate::auth::node::Decision::NoOpinion(reason) => (false, reason),
    }
}

/// A review's `resourceAttributes.fieldSelector` (kube's
/// FieldSelectorAttributes) as the equality requirements authorizers read:
/// `requirements` with operator `In` and one value, or a `rawSelector`'s
/// `key=value` terms (what a delegating server sends for a kubelet's
/// `spec.nodeName` list or watch).
fn field_selector(resource: &Value) -> Vec<(String, String)> {
    let selector = &resource["fieldSelector"];
    let mut pairs: Vec<(String, String)> = selector["requirements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["operator"] == "In")
        .filter_map(|r| match r["values"].as_array().map(Vec::as_slice) {
            Some([Value::String(value)]) => Some((r["key"].as_str()?.to_string(), value.clone())),
            _ => None,
        })
        .collect();
    if let Some(Ok(raw)) = selector["rawSelector"].as_str().map(crate::types::selector::parse_field_selector) {
        pairs.extend(
            raw.requirements
                .iter()
                .filter(|r| r.operator == crate::types::selector::Operator::Equals)
                .map(|r| (r.key.clone(), r.value.clone())),
        );
    }
    pairs
}

/// The review's `spec` in its JSON form, from a JSON or protobuf body.
fn read_spec(content_type: Option<&str>, body: &[u8], kind: &str) -> Result<Map<String, Value>, ApiError> {
    if kind == "SelfSubjectReview" {
        // It carries no spec; the body is not needed.
        return Ok(Map::new());
    }
    let media = crate::api::object::media_type(content_type);
    if media == "application/vnd.kubernetes.protobuf" && kind.starts_with("Self") {
        let envelope = crate::api::protobuf::decode_envelope(body)?;
        // metadata = 1, spec = 2 in both reviews.
        let spec = fields(envelope.raw)?.into_iter().find(|(n, _)| *n == 2).map(|(_, b)| b).unwrap_or(&[]);
        let mut out = Map::new();
        if kind == "SelfSubjectRulesReview" {
            // SelfSubjectRulesReviewSpec: namespace = 1.
            if let Some((_, ns)) = fields(spec)?.into_iter().find(|(n, _)| *n == 1) {
                out.insert("namespace".into(), json!(text(ns)?));
            }
            return Ok(out);
        }
        // SelfSubjectAccessReviewSpec: resourceAttributes = 1, nonResourceAttributes = 2.
        for (number, bytes) in fields(spec)? {
            let (name, names): (&str, &[&str]) = match number {
                1 => (
                    "resourceAttributes",
                    &["namespace", "verb", "group", "version", "resource", "subresource", "name"],
                ),
                2 => ("nonResourceAttributes", &["path", "verb"]),
                _ => continue,
            };
            let mut attributes = Map::new();
            for (n, value) in fields(bytes)? {
                if let Some(field) = names.get((n as usize).wrapping_sub(1)) {
                    attributes.insert((*field).into(), json!(text(value)?));
                }
            }
            out.insert(name.into(), Value::Object(attributes));
        }
        return Ok(out);
    }
    if media != "application/json" && !media.is_empty() {
        return Err(ApiError::UnsupportedMediaType(crate::api::negotiate::BUILTIN_MEDIA_TYPES.to_string()));
    }
    let object: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("the body of the {kind} is not valid JSON: {e}")))?;
    match object.get("spec") {
        Some(Value::Object(spec)) => Ok(spec.clone()),
        _ => Ok(Map::new()),
    }
}

fn text(bytes: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ApiError::BadRequest("a protobuf string is not UTF-8".into()))
}

/// One field of a protobuf message: a varint or a length-delimited value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Every varint and length-delimited field of one protobuf message (fixed
/// widths are skipped); a truncated or malformed message is 400.
pub fn wire_fields(bytes: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, ApiError> {
    let mut out = Vec::new();
    walk(bytes, &mut |n, w| out.push((n, w)))?;
    Ok(out)
}

/// The length-delimited fields of one protobuf message (other wire types
/// are skipped); a truncated or malformed message is 400.
fn fields(bytes: &[u8]) -> Result<Vec<(u64, &[u8])>, ApiError> {
    let mut out = Vec::new();
    walk(bytes, &mut |n, w| {
        if let Wire::Bytes(b) = w {
            out.push((n, b));
        }
    })?;
    Ok(out)
}

fn walk<'a>(mut bytes: &'a [u8], visit: &mut dyn FnMut(u64, Wire<'a>)) -> Result<(), ApiError> {
    let malformed = || ApiError::BadRequest("the protobuf body is malformed".into());
    fn varint(bytes: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = bytes.split_first()?;
            *bytes = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    while !bytes.is_empty() {
        let key = varint(&mut bytes).ok_or_else(malformed)?;
        match key & 7 {
            0 => {
                let value = varint(&mut bytes).ok_or_else(malformed)?;
                visit(key >> 3, Wire::Varint(value));
            }
            1 | 5 => {
                let width = if key & 7 == 1 { 8 } else { 4 };
                bytes = bytes.get(width..).ok_or_else(malformed)?;
            }
            2 => {
                let len = usize::try_from(varint(&mut bytes).ok_or_else(malformed)?).map_err(|_| malformed())?;
                let value = bytes.get(..len).ok_or_else(malformed)?;
                bytes = &bytes[len..];
                visit(key >> 3, Wire::Bytes(value));
            }
            _ => return Err(malformed()),
        }
    }
    Ok(())
}

/// The strings of ObjectMeta (name = 1, namespace = 3, uid = 5,
/// resourceVersion = 6) in their JSON form.
fn protobuf_meta(bytes: &[u8]) -> Result<Value, ApiError> {
    let mut meta = Map::new();
    for (number, value) in fields(bytes)? {
        let field = match number {
            1 => "name",
            3 => "namespace",
            5 => "uid",
            6 => "resourceVersion",
            _ => continue,
        };
        meta.insert(field.into(), json!(text(value)?));
    }
    Ok(Value::Object(meta))
}

/// A `policy/v1` Eviction in Kubernetes' protobuf envelope, as JSON:
/// metadata = 1, deleteOptions = 2 (gracePeriodSeconds = 1, preconditions
/// = 2 {uid = 1, resourceVersion = 2}, orphanDependents = 3,
/// propagationPolicy = 4, dryRun = 5).
pub fn protobuf_eviction(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let envelope = crate::api::protobuf::decode_envelope(body)?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!("policy/v1"));
    out.insert("kind".into(), json!("Eviction"));
    for (number, value) in wire_fields(envelope.raw)? {
        match (number, value) {
            (1, Wire::Bytes(b)) => {
                out.insert("metadata".into(), protobuf_meta(b)?);
            }
            (2, Wire::Bytes(b)) => {
                let mut options = Map::new();
                let mut dry_run = Vec::new();
                for (n, v) in wire_fields(b)? {
                    match (n, v) {
                        (1, Wire::Varint(g)) => {
                            options.insert("gracePeriodSeconds".into(), json!(g as i64));
                        }
                        (2, Wire::Bytes(p)) => {
                            let mut pre = Map::new();
                            for (pn, pv) in fields(p)? {
                                let field = if pn == 1 { "uid" } else { "resourceVersion" };
                                pre.insert(field.into(), json!(text(pv)?));
                            }
                            options.insert("preconditions".into(), Value::Object(pre));
                        }
                        (3, Wire::Varint(o)) => {
                            options.insert("orphanDependents".into(), json!(o != 0));
                        }
                        (4, Wire::Bytes(p)) => {
                            options.insert("propagationPolicy".into(), json!(text(p)?));
                        }
                        (5, Wire::Bytes(d)) => dry_run.push(json!(text(d)?)),
                        _ => {}
                    }
                }
                if !dry_run.is_empty() {
                    options.insert("dryRun".into(), Value::Array(dry_run));
                }
                out.insert("deleteOptions".into(), Value::Object(options));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// An `authentication.k8s.io/v1` TokenRequest in Kubernetes' protobuf
/// envelope, as JSON: metadata = 1, spec = 2 (audiences = 1,
/// expirationSeconds = 4, boundObjectRef = 3 {kind = 1, apiVersion = 2,
/// name = 3, uid = 4}).
pub fn protobuf_token_request(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let envelope = crate::api::protobuf::decode_envelope(body)?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
    out.insert("kind".into(), json!("TokenRequest"));
    for (number, value) in wire_fields(envelope.raw)? {
        match (number, value) {
            (1, Wire::Bytes(b)) => {
                out.insert("metadata".into(), protobuf_meta(b)?);
            }
            (2, Wire::Bytes(b)) => {
                let mut spec = Map::new();
                let mut audiences = Vec::new();
                for (n, v) in wire_fields(b)? {
                    match (n, v) {
                        (1, Wire::Bytes(a)) => audiences.push(json!(text(a)?)),
                        (4, Wire::Varint(e)) => {
                            spec.insert("expirationSeconds".into(), json!(e as i64));
                        }
                        (3, Wire::Bytes(r)) => {
                            let mut reference = Map::new();
                            for (rn, rv) in fields(r)? {
                                let field = match rn {
                                    1 => "kind",
                                    2 => "apiVersion",
                                    3 => "name",
                                    4 => "uid",
                                    _ => continue,
                                };
                                reference.insert(field.into(), json!(text(rv)?));
                            }
                            spec.insert("boundObjectRef".into(), Value::Object(reference));
                        }
                        _ => {}
                    }
                }
                spec.insert("audiences".into(), Value::Array(audiences));
                out.insert("spec".into(), Value::Object(spec));
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(fields: &[(u64, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (number, value) in fields {
            out.push(((number << 3) | 2) as u8);
            out.push(value.len() as u8);
            out.extend_from_slice(value);
        }
        out
    }

    #[test]
    fn protobuf_access_reviews_read_their_attributes() {
        let resource = message(&[(1, b"team"), (2, b"list"), (5, b"pods")]);
        let spec = message(&[(1, &resource)]);
        let review = message(&[(2, &spec)]);
        let mut body = b"k8s\0".to_vec();
        body.extend(message(&[(2, &review)]));
        let spec = read_spec(Some("application/vnd.kubernetes.protobuf"), &body, "SelfSubjectAccessReview").unwrap();
        let a = access_attributes(&spec).unwrap();
        assert_eq!((a.namespace.as_str(), a.verb.as_str(), a.resource.as_str()), ("team", "list", "pods"));
        assert!(a.resource_request);
        let mut truncated = b"k8s\0".to_vec();
        truncated.extend([0x12, 0x05, 0x12, 0x09]);
        assert!(read_spec(Some("application/vnd.kubernetes.protobuf"), &truncated, "SelfSubjectAccessReview").is_err());
        let json = br#"{"spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#;
        let a =
            access_attributes(&read_spec(Some("application/json"), json, "SelfSubjectAccessReview").unwrap()).unwrap();
        assert_eq!((a.path.as_str(), a.resource_request), ("/healthz", false));
        assert!(access_attributes(&Map::new()).is_err());
    }

    /// A varint field (wire type 0).
    fn varint_field(number: u64, value: u8) -> Vec<u8> {
        vec![(number << 3) as u8, value]
    }

    fn envelope(object: &[u8]) -> Vec<u8> {
        let mut body = b"k8s\0".to_vec();
        body.extend(message(&[(2, object)]));
        body
    }

    #[test]
    fn protobuf_evictions_and_token_requests_read_their_fields() {
        let meta = message(&[(1, b"web-0"), (3, b"team")]);
        let preconditions = message(&[(2, b"42")]);
        let mut options = varint_field(1, 30);
        options.extend(message(&[(2, &preconditions), (4, b"Foreground"), (5, b"All")]));
        let eviction = protobuf_eviction(&envelope(&message(&[(1, &meta), (2, &options)]))).unwrap();
        assert_eq!(eviction["metadata"], json!({"name": "web-0", "namespace": "team"}));
        assert_eq!(
            eviction["deleteOptions"],
            json!({"gracePeriodSeconds": 30, "preconditions": {"resourceVersion": "42"},
                "propagationPolicy": "Foreground", "dryRun": ["All"]})
        );
        let reference = message(&[(1, b"Pod"), (2, b"v1"), (3, b"runner"), (4, b"u-1")]);
        let mut spec = message(&[(1, b"api"), (1, b"vault"), (3, &reference)]);
        spec.extend(varint_field(4, 0x7f));
        let request = protobuf_token_request(&envelope(&message(&[(2, &spec)]))).unwrap();
        assert_eq!(request["spec"]["audiences"], json!(["api", "vault"]));
        assert_eq!(request["spec"]["expirationSeconds"], 127);
        assert_eq!(
            request["spec"]["boundObjectRef"],
            json!({"kind": "Pod", "apiVersion": "v1", "name": "runner", "uid": "u-1"})
        );
        // Truncated bodies are 400, never a panic.
        let mut truncated = envelope(&message(&[(2, &spec)]));
        truncated.truncate(truncated.len() - 3);
        assert!(protobuf_token_request(&truncated).is_err());
        assert!(protobuf_eviction(b"k8s\0\x12\x05\x0a").is_err());
    }

    #[test]
    fn access_reviews_read_field_selectors() {
        let spec = serde_json::json!({"resourceAttributes": {"verb": "list", "resource": "pods",
            "fieldSelector": {"requirements": [
                {"key": "spec.nodeName", "operator": "In", "values": ["n1"]},
                {"key": "metadata.name", "operator": "NotIn", "values": ["x"]},
                {"key": "spec.x", "operator": "In", "values": ["a", "b"]}]}}});
        let attributes = access_attributes(spec.as_object().unwrap()).unwrap();
        assert_eq!(attributes.field_selector, [("spec.nodeName".to_string(), "n1".to_string())]);
        let spec = serde_json::json!({"resourceAttributes": {"verb": "watch", "resource": "pods",
            "fieldSelector": {"rawSelector": "spec.nodeName=n2,status.phase!=Failed"}}});
        let attributes = access_attributes(spec.as_object().unwrap()).unwrap();
        assert_eq!(attributes.field_selector, [("spec.nodeName".to_string(), "n2".to_string())]);
    }
}
