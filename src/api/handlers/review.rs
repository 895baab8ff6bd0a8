//! The review APIs that let a client ask about itself: SelfSubjectAccessReview
//! and SelfSubjectRulesReview (`authorization.k8s.io/v1`, what `kubectl auth
//! can-i` and `can-i --list` send) and SelfSubjectReview
//! (`authentication.k8s.io/v1`, `kubectl auth whoami`). Each is a create of
//! a virtual object: nothing is stored, the answer is the object with its
//! `status` filled in from the request's user and this shard's RBAC index.
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
    path.namespace.is_none()
        && path.name.is_none()
        && matches!(
            (path.group.as_str(), path.resource.as_str()),
            (AUTHORIZATION_GROUP, "selfsubjectaccessreviews" | "selfsubjectrulesreviews")
                | (AUTHENTICATION_GROUP, "selfsubjectreviews")
        )
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
        _ => "SelfSubjectReview",
    };
    let versions: &[&str] = if path.group == AUTHENTICATION_GROUP { &["v1", "v1beta1"] } else { &["v1"] };
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
        "SelfSubjectAccessReview" => {
            let attributes = access_attributes(&spec)?;
            let allowed = if mode == AuthorizationMode::AlwaysAllow || user.in_group(MASTERS_GROUP) {
                true
            } else {
                authz::allows(mode, &*backend.rbac_index().await, user, &attributes)
            };
            // RBAC gives no reason for a denial (kube's authorizer answers
            // "no opinion" with an empty reason), so `kubectl auth can-i`
            // prints a bare "no".
            json!({"allowed": allowed})
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
            let mut info = json!({"username": user.name, "groups": user.groups});
            if !user.uid.is_empty() {
                info["uid"] = json!(user.uid);
            }
            let answer = json!({"kind": kind, "apiVersion": api_version,
                "metadata": {"creationTimestamp": null}, "status": {"userInfo": info}});
            return Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())));
        }
    };
    let answer = json!({"kind": kind, "apiVersion": api_version, "metadata": {"creationTimestamp": null},
        "spec": Value::Object(spec), "status": status});
    Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())))
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

/// The review's `spec` in its JSON form, from a JSON or protobuf body.
fn read_spec(content_type: Option<&str>, body: &[u8], kind: &str) -> Result<Map<String, Value>, ApiError> {
    if kind == "SelfSubjectReview" {
        // It carries no spec; the body is not needed.
        return Ok(Map::new());
    }
    let media = crate::api::object::media_type(content_type);
    if media == "application/vnd.kubernetes.protobuf" {
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
        return Err(ApiError::UnsupportedMediaType(media));
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

/// The length-delimited fields of one protobuf message (other wire types
/// are skipped); a truncated or malformed message is 400.
fn fields(mut bytes: &[u8]) -> Result<Vec<(u64, &[u8])>, ApiError> {
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
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes).ok_or_else(malformed)?;
        match key & 7 {
            0 => {
                varint(&mut bytes).ok_or_else(malformed)?;
            }
            1 | 5 => {
                let width = if key & 7 == 1 { 8 } else { 4 };
                bytes = bytes.get(width..).ok_or_else(malformed)?;
            }
            2 => {
                let len = usize::try_from(varint(&mut bytes).ok_or_else(malformed)?).map_err(|_| malformed())?;
                let value = bytes.get(..len).ok_or_else(malformed)?;
                bytes = &bytes[len..];
                out.push((key >> 3, value));
            }
            _ => return Err(malformed()),
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
}
