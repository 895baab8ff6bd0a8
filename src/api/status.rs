//! The single mapping from every error the server can answer with to a
//! Kubernetes `metav1.Status` response.
//!
//! Invariant: handlers return [`ApiError`]; only this file decides codes,
//! reasons and message formats, so every path answers the way kube-apiserver
//! does for the same failure.

use bytes::Bytes;
use serde_json::{json, Value};

/// What the request names, for `details` and messages (`pods "x"`,
/// `deployments.apps "web"`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Target {
    pub group: String,
    /// Plural resource name (kube's `details.kind` holds the resource).
    pub resource: String,
    pub name: String,
}

impl Target {
    pub fn new(group: &str, resource: &str, name: &str) -> Target {
        Target { group: group.into(), resource: resource.into(), name: name.into() }
    }

    /// `pods` or `deployments.apps`, as kube-apiserver writes a GroupResource.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// One entry of `details.causes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, ...
    pub reason: String,
    pub message: String,
    pub field: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("not found")]
    NotFound(Target),
    /// A path the server does not serve at all (kube answers a bare 404 Status).
    #[error("path not found")]
    PathNotFound,
    #[error("already exists")]
    AlreadyExists(Target),
    /// A stale resourceVersion (or other optimistic-concurrency failure).
    #[error("conflict: {message}")]
    Conflict { target: Target, message: String },
    #[error("forbidden: {message}")]
    Forbidden { target: Target, message: String },
    /// 403 for a create in a Terminating namespace, with kube's
    /// `NamespaceTerminating` cause (namespace lifecycle admission).
    #[error("namespace {namespace} is being terminated")]
    NamespaceTerminating { target: Target, namespace: String },
    #[error("method not allowed")]
    MethodNotAllowed { method: String, target: Target },
    #[error("unsupported media type {0}")]
    UnsupportedMediaType(String),
    #[error("not acceptable")]
    NotAcceptable(String),
    /// A 406 with its own message: a conversion (`as=`) the object cannot
    /// take, as kube-apiserver's response transform words it.
    #[error("not acceptable: {0}")]
    NotAcceptableConversion(String),
    #[error("request entity too large: limit is {limit_bytes} bytes")]
    RequestEntityTooLarge { limit_bytes: usize },
    #[error("invalid")]
    Invalid { kind: String, target: Target, causes: Vec<Cause> },
    #[error("internal error: {0}")]
    Internal(String),
    /// 500 with no reason and the message as it is: an error kube-apiserver
    /// got that is not a Status (a failed dial to a kubelet, a node without
    /// an address), which its `ErrorToAPIStatus` passes on this way.
    #[error("{0}")]
    Unknown(String),
    #[error("service unavailable: {0}")]
    ServiceUnavailable(String),
    #[error("timeout: {message}")]
    Timeout { message: String, retry_after_seconds: u32 },
    /// A read for a resourceVersion the log has not reached (504, as
    /// kube-apiserver answers after waiting).
    #[error("too large resource version {requested}, current {current}")]
    TooLargeResourceVersion { requested: u64, current: u64 },
    /// 410 Gone: the requested revision left the history window. A list
    /// continuation carries a fresh continue token for an inconsistent
    /// continuation.
    #[error("expired: {message}")]
    Expired { message: String, continue_token: Option<String> },
    /// 401: credentials present but wrong, or none while anonymous requests
    /// are off (kube-apiserver's bare "Unauthorized").
    #[error("unauthorized")]
    Unauthorized,
    /// 429: over an in-flight or open-watch limit; the client retries after
    /// `retry_after_seconds`.
    #[error("too many requests")]
    TooManyRequests { retry_after_seconds: u32 },
    /// 429 with its own message and causes (an eviction a disruption budget
    /// forbids: kube's `NewTooManyRequests` plus a `DisruptionBudget` cause);
    /// `retry_after_seconds` 0 sends no Retry-After, as kube.
    #[error("too many requests: {message}")]
    TooManyRequestsBecause { message: String, causes: Vec<Cause>, retry_after_seconds: u32 },
    /// A PATCH with a `Content-Type` that is not a patch type the resource
    /// accepts (415; the message lists the accepted ones, as kube-apiserver's).
    #[error("unsupported patch type {got}")]
    UnsupportedPatchType { got: String, accepted: Vec<&'static str> },
    /// A well-formed patch that does not apply to the object (a JSON patch
    /// `test` that fails, a path that is missing): kube-apiserver answers a
    /// generic 422 whose cause carries the patch library's message.
    #[error("patch does not apply: {0}")]
    PatchDoesNotApply(String),
    /// A JSON patch with more operations than kube-apiserver allows (413).
    #[error("too many patch operations: {0}")]
    TooManyPatchOperations(String),
    /// A server-side apply whose fields other managers own (409 Conflict;
    /// the message and causes list the fields and their managers).
    #[error("apply conflict: {message}")]
    ApplyConflict { message: String, causes: Vec<Cause> },
    /// An admission webhook's refusal: its own Status (code, reason,
    /// details) with kube's message (`admission webhook "NAME" denied the
    /// request: ...`), passed on as kube's `ToStatusErr` builds it.
    #[error("{message}")]
    WebhookDenied { code: u16, reason: String, message: String, details: Option<Value> },
}

impl ApiError {
    pub fn code(&self) -> u16 {
        match self {
            ApiError::BadRequest(_) => 400,
            ApiError::NotFound(_) | ApiError::PathNotFound => 404,
            ApiError::AlreadyExists(_) | ApiError::Conflict { .. } => 409,
            ApiError::Forbidden { .. } | ApiError::NamespaceTerminating { .. } => 403,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::UnsupportedMediaType(_) => 415,
            ApiError::NotAcceptable(_) | ApiError::NotAcceptableConversion(_) => 406,
            ApiError::RequestEntityTooLarge { .. } => 413,
            ApiError::Invalid { .. } => 422,
            ApiError::Internal(_) | ApiError::Unknown(_) => 500,
            ApiError::ServiceUnavailable(_) => 503,
            ApiError::Timeout { .. } | ApiError::TooLargeResourceVersion { .. } => 504,
            ApiError::Expired { .. } => 410,
            ApiError::Unauthorized => 401,
            ApiError::TooManyRequests { .. } | ApiError::TooManyRequestsBecause { .. } => 429,
            ApiError::UnsupportedPatchType { .. } => 415,
            ApiError::PatchDoesNotApply(_) => 422,
            ApiError::TooManyPatchOperations(_) => 413,
            ApiError::ApplyConflict { .. } => 409,
            ApiError::WebhookDenied { code, .. } => *code,
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "BadRequest",
            ApiError::NotFound(_) | ApiError::PathNotFound => "NotFound",
            ApiError::AlreadyExists(_) => "AlreadyExists",
            ApiError::Conflict { .. } => "Conflict",
            ApiError::Forbidden { .. } | ApiError::NamespaceTerminating { .. } => "Forbidden",
            ApiError::MethodNotAllowed { .. } => "MethodNotAllowed",
            ApiError::UnsupportedMediaType(_) => "UnsupportedMediaType",
            ApiError::NotAcceptable(_) | ApiError::NotAcceptableConversion(_) => "NotAcceptable",
            ApiError::RequestEntityTooLarge { .. } => "RequestEntityTooLarge",
            ApiError::Invalid { .. } => "Invalid",
            ApiError::Internal(_) => "InternalError",
            // kube's StatusReasonUnknown is the empty reason.
            ApiError::Unknown(_) => "",
            ApiError::ServiceUnavailable(_) => "ServiceUnavailable",
            ApiError::Timeout { .. } | ApiError::TooLargeResourceVersion { .. } => "Timeout",
            ApiError::Expired { .. } => "Expired",
            ApiError::Unauthorized => "Unauthorized",
            ApiError::TooManyRequests { .. } | ApiError::TooManyRequestsBecause { .. } => "TooManyRequests",
            ApiError::UnsupportedPatchType { .. } => "UnsupportedMediaType",
            ApiError::PatchDoesNotApply(_) => "Invalid",
            ApiError::TooManyPatchOperations(_) => "RequestEntityTooLarge",
            ApiError::ApplyConflict { .. } => "Conflict",
            // The webhook's own reason (any text) is written by `to_status_json`.
            ApiError::WebhookDenied { .. } => "",
        }
    }

    /// Seconds for a `Retry-After` header, when the error asks clients to retry.
    pub fn retry_after_seconds(&self) -> Option<u32> {
        match self {
            ApiError::Timeout { retry_after_seconds, .. } => Some(*retry_after_seconds),
            ApiError::TooLargeResourceVersion { .. } => Some(1),
            ApiError::ServiceUnavailable(_) => Some(1),
            ApiError::TooManyRequests { retry_after_seconds } => Some(*retry_after_seconds),
            ApiError::TooManyRequestsBecause { retry_after_seconds, .. } => {
                Some(*retry_after_seconds).filter(|s| *s > 0)
            }
            _ => None,
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::BadRequest(m) => m.clone(),
            ApiError::NotFound(t) => format!("{} \"{}\" not found", t.group_resource(), t.name),
            ApiError::PathNotFound => "the server could not find the requested resource".into(),
            // kube's NewForbidden: `pods "x" is forbidden: ...`, `pods is
            // forbidden: ...` without a name, `forbidden: ...` for a path.
            ApiError::Forbidden { target, message } if target.resource.is_empty() => format!("forbidden: {message}"),
            ApiError::Forbidden { target, message } if target.name.is_empty() => {
                format!("{} is forbidden: {}", target.group_resource(), message)
            }
            ApiError::Forbidden { target, message } => {
                format!("{} \"{}\" is forbidden: {}", target.group_resource(), target.name, message)
            }
            ApiError::NamespaceTerminating { target, namespace } => ApiError::Forbidden {
                target: target.clone(),
                message: format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            }
            .message(),
            ApiError::AlreadyExists(t) => {
                format!("{} \"{}\" already exists", t.group_resource(), t.name)
            }
            ApiError::Conflict { target, message } => {
                format!("Operation cannot be fulfilled on {} \"{}\": {}", target.group_resource(), target.name, message)
            }
            ApiError::MethodNotAllowed { method, target } => {
                format!("{} is not supported on resources of kind \"{}\"", method, target.group_resource())
            }
            // Both carry the media types the server accepts, as kube-apiserver lists them.
            ApiError::UnsupportedMediaType(accepted) => {
                format!("the body of the request was in an unknown format - accepted media types include: {accepted}")
            }
            ApiError::NotAcceptable(accepted) => format!("only the following media types are accepted: {accepted}"),
            ApiError::NotAcceptableConversion(message) => message.clone(),
            ApiError::RequestEntityTooLarge { limit_bytes } => {
                format!("the request body is larger than the server's limit of {limit_bytes} bytes")
            }
            ApiError::Invalid { kind, target, causes } => {
                let list: Vec<String> = causes
                    .iter()
                    .map(|c| if c.field.is_empty() { c.message.clone() } else { format!("{}: {}", c.field, c.message) })
                    .collect();
                let joined = if list.len() == 1 { list[0].clone() } else { format!("[{}]", list.join(", ")) };
                // kube-apiserver qualifies the kind with its group: `Deployment.apps`.
                let qualified = if target.group.is_empty() { kind.clone() } else { format!("{kind}.{}", target.group) };
                format!("{} \"{}\" is invalid: {}", qualified, target.name, joined)
            }
            ApiError::Internal(m) => format!("Internal error occurred: {m}"),
            ApiError::Unknown(m) => m.clone(),
            ApiError::ServiceUnavailable(m) => m.clone(),
            ApiError::Timeout { message, .. } => message.clone(),
            ApiError::TooLargeResourceVersion { requested, current } => {
                // kube-apiserver's timeout errors read "Timeout: <message>".
                format!("Timeout: Too large resource version: {requested}, current: {current}")
            }
            ApiError::Expired { message, .. } => message.clone(),
            ApiError::Unauthorized => "Unauthorized".into(),
            ApiError::TooManyRequests { .. } => "Too many requests, please try again later.".into(),
            ApiError::TooManyRequestsBecause { message, .. } => message.clone(),
            ApiError::UnsupportedPatchType { accepted, .. } => format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
            ApiError::PatchDoesNotApply(_) => "the server rejected our request due to an error in our request".into(),
            ApiError::TooManyPatchOperations(m) => format!("Request entity too large: {m}"),
            ApiError::ApplyConflict { message, .. } => message.clone(),
            ApiError::WebhookDenied { message, .. } => message.clone(),
        }
    }

    fn details(&self) -> Option<Value> {
        let target_details = |t: &Target| {
            let mut d = serde_json::Map::new();
            if !t.name.is_empty() {
                d.insert("name".into(), json!(t.name));
            }
            if !t.group.is_empty() {
                d.insert("group".into(), json!(t.group));
            }
            if !t.resource.is_empty() {
                d.insert("kind".into(), json!(t.resource));
            }
            d
        };
        match self {
            ApiError::NotFound(t) | ApiError::AlreadyExists(t) => Some(Value::Object(target_details(t))),
            ApiError::Conflict { target, .. } | ApiError::Forbidden { target, .. } => {
                Some(Value::Object(target_details(target)))
            }
            ApiError::NamespaceTerminating { target, namespace } => {
                let mut d = target_details(target);
                let cause = json!({
                    "reason": "NamespaceTerminating",
                    "message": format!("namespace {namespace} is being terminated"),
                    "field": "metadata.namespace",
                });
                d.insert("causes".into(), json!([cause]));
                Some(Value::Object(d))
            }
            ApiError::Invalid { kind, target, causes } => {
                let mut d = target_details(target);
                d.insert("kind".into(), json!(kind));
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                d.insert("causes".into(), Value::Array(causes));
                Some(Value::Object(d))
            }
            ApiError::Timeout { retry_after_seconds, .. } | ApiError::TooManyRequests { retry_after_seconds } => {
                Some(json!({"retryAfterSeconds": retry_after_seconds}))
            }
            ApiError::TooLargeResourceVersion { .. } => Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            ApiError::PatchDoesNotApply(m) => {
                Some(json!({"causes": [{"reason": "UnexpectedServerResponse", "message": m}]}))
            }
            ApiError::TooManyRequestsBecause { causes, retry_after_seconds, .. } => {
                let mut d = serde_json::Map::new();
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| {
                        let mut cause = json!({"reason": c.reason, "message": c.message});
                        if !c.field.is_empty() {
                            cause["field"] = json!(c.field);
                        }
                        cause
                    })
                    .collect();
                if !causes.is_empty() {
                    d.insert("causes".into(), Value::Array(causes));
                }
                if *retry_after_seconds > 0 {
                    d.insert("retryAfterSeconds".into(), json!(retry_after_seconds));
                }
                Some(Value::Object(d))
            }
            ApiError::ApplyConflict { causes, .. } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                Some(json!({"causes": causes}))
            }
            ApiError::WebhookDenied { details, .. } => details.clone(),
            _ => None,
        }
    }

    /// The `Status` object as JSON bytes.
    pub fn to_status_json(&self) -> Bytes {
        let mut status = serde_json::Map::new();
        status.insert("kind".into(), json!("Status"));
        status.insert("apiVersion".into(), json!("v1"));
        let metadata = match self {
            ApiError::Expired { continue_token: Some(token), .. } => json!({"continue": token}),
            _ => json!({}),
        };
        status.insert("metadata".into(), metadata);
        status.insert("status".into(), json!("Failure"));
        status.insert("message".into(), json!(self.message()));
        match self {
            ApiError::WebhookDenied { reason, .. } if !reason.is_empty() => {
                status.insert("reason".into(), json!(reason));
            }
            _ if !self.reason().is_empty() => {
                status.insert("reason".into(), json!(self.reason()));
            }
            _ => {}
        }
        if let Some(details) = self.details() {
            status.insert("details".into(), details);
        }
        status.insert("code".into(), json!(self.code()));
        Bytes::from(serde_json::to_vec(&Value::Object(status)).unwrap_or_default())
    }
}

/// The media type and body of an error's `Status` in the representation the
/// client's Accept header asks for, as kube-apiserver's `ErrorNegotiated`
/// writes it: `application/vnd.kubernetes.protobuf` (the `k8s\0` envelope),
/// `application/yaml`, `application/cbor`, else JSON. Media ranges that ask
/// for a conversion (`as=Table`, `as=PartialObjectMetadata...`) are skipped,
/// as kube's default endpoint restrictions skip them; a Status that cannot be
/// encoded in the chosen format falls back to JSON. A 406 is encoded only in
/// a media type it names (kube negotiates it with the same serializers), and
/// never in protobuf (it only arises where protobuf is not served).
pub fn status_response_body(error: &ApiError, accept: Option<&str>) -> (&'static str, Bytes) {
    let json = error.to_status_json();
    let ranges = super::negotiate::parse_accept(accept.unwrap_or(""));
    // A 406 names the media types the route's serializers produce; kube
    // negotiates the Status with those same serializers and writes JSON when
    // none fits. A protobuf 406 only arises where protobuf is not served (a
    // custom resource), so a 406 is never protobuf.
    let offered = |media_type: &str| match self_accepted(error) {
        Some(accepted) => {
            media_type != super::protobuf_encode::MEDIA_TYPE && accepted.split(',').any(|m| m.trim() == media_type)
        }
        None => true,
    };
    for range in ranges.iter().filter(|r| r.param("as").is_none() && offered(&r.media_type)) {
        let encoded = match range.media_type.as_str() {
            "application/json" | "application/*" | "*/*" => return ("application/json", json),
            "application/vnd.kubernetes.protobuf" => {
                super::protobuf_encode::encode_object_json(&json).ok().map(|b| (super::protobuf_encode::MEDIA_TYPE, b))
            }
            "application/yaml" => super::yaml::encode_json(&json).ok().map(|b| (super::yaml::MEDIA_TYPE, b)),
            "application/cbor" => super::cbor::encode_json(&json).ok().map(|b| (super::cbor::MEDIA_TYPE, b)),
            _ => None,
        };
        if let Some(found) = encoded {
            return found;
        }
    }
    ("application/json", json)
}

/// The media types a 406 names (`None` for every other error).
fn self_accepted(error: &ApiError) -> Option<&str> {
    match error {
        ApiError::NotAcceptable(accepted) => Some(accepted),
        _ => None,
    }
}

/// The `Status` a successful delete answers with for resources that do not
/// return the deleted object.
pub fn success_status(target: &Target, uid: &str) -> Bytes {
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(target.name));
    if !target.group.is_empty() {
        details.insert("group".into(), json!(target.group));
    }
    details.insert("kind".into(), json!(target.resource));
    if !uid.is_empty() {
        details.insert("uid".into(), json!(uid));
    }
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": Value::Object(details),
    });
    Bytes::from(serde_json::to_vec(&status).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(e: &ApiError) -> Value {
        serde_json::from_slice(&e.to_status_json()).unwrap()
    }

    #[test]
    fn not_found_matches_kube_format() {
        let e = ApiError::NotFound(Target::new("apps", "deployments", "web"));
        let s = parse(&e);
        assert_eq!(s["code"], 404);
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["details"], json!({"name": "web", "group": "apps", "kind": "deployments"}));
        assert_eq!(s["kind"], "Status");
        assert_eq!(s["status"], "Failure");
    }

    #[test]
    fn conflict_and_already_exists() {
        let t = Target::new("", "pods", "a");
        let e = ApiError::Conflict {
            target: t.clone(),
            message: "the object has been modified; please apply your changes to the latest version and try again"
                .into(),
        };
        let s = parse(&e);
        assert_eq!(s["code"], 409);
        assert_eq!(s["reason"], "Conflict");
        assert!(s["message"]
            .as_str()
            .unwrap()
            .starts_with("Operation cannot be fulfilled on pods \"a\": the object has been modified"));
        let s = parse(&ApiError::AlreadyExists(t));
        assert_eq!(s["reason"], "AlreadyExists");
        assert_eq!(s["message"], "pods \"a\" already exists");
    }

    #[test]
    fn invalid_lists_causes() {
        let e = ApiError::Invalid {
            kind: "Pod".into(),
            target: Target::new("", "pods", "Bad_Name"),
            causes: vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: \"Bad_Name\": bad".into(),
                field: "metadata.name".into(),
            }],
        };
        let s = parse(&e);
        assert_eq!(s["code"], 422);
        assert_eq!(s["details"]["kind"], "Pod");
        assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(s["message"], "Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": bad");
    }

    #[test]
    fn every_variant_has_a_code_and_reason() {
        let t = Target::new("", "pods", "a");
        let all = vec![
            ApiError::BadRequest("x".into()),
            ApiError::NotFound(t.clone()),
            ApiError::PathNotFound,
            ApiError::AlreadyExists(t.clone()),
            ApiError::Conflict { target: t.clone(), message: "m".into() },
            ApiError::MethodNotAllowed { method: "PATCH".into(), target: t.clone() },
            ApiError::Forbidden { target: t.clone(), message: "m".into() },
            ApiError::UnsupportedMediaType("text/plain".into()),
            ApiError::NotAcceptable("x".into()),
            ApiError::RequestEntityTooLarge { limit_bytes: 3 },
            ApiError::Invalid { kind: "Pod".into(), target: t, causes: vec![] },
            ApiError::Internal("x".into()),
            ApiError::ServiceUnavailable("x".into()),
            ApiError::Timeout { message: "x".into(), retry_after_seconds: 1 },
            ApiError::TooLargeResourceVersion { requested: 9, current: 7 },
            ApiError::Expired { message: "too old resource version: 1 (5)".into(), continue_token: Some("t".into()) },
        ];
        let codes: Vec<u16> = all.iter().map(|e| parse(e)["code"].as_u64().unwrap() as u16).collect();
        assert_eq!(codes, [400, 404, 404, 409, 409, 405, 403, 415, 406, 413, 422, 500, 503, 504, 504, 410]);
        assert_eq!(all[13].retry_after_seconds(), Some(1));
        let too_large = parse(&all[14]);
        assert_eq!(too_large["message"], "Timeout: Too large resource version: 9, current: 7");
        assert_eq!(too_large["reason"], "Timeout");
        assert_eq!(too_large["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
        assert_eq!(too_large["details"]["retryAfterSeconds"], 1);
        assert_eq!(all[14].retry_after_seconds(), Some(1));
        let expired = parse(&all[15]);
        assert_eq!(expired["reason"], "Expired");
        assert_eq!(expired["metadata"]["continue"], "t");
    }

    #[test]
    fn an_error_that_is_no_status_has_no_reason() {
        let s = parse(&ApiError::Unknown("error dialing backend: x".into()));
        assert_eq!(s["code"], 500);
        assert_eq!(s["message"], "error dialing backend: x");
        assert!(s.get("reason").is_none(), "{s}");
        assert_eq!(s["status"], "Failure");
    }

    #[test]
    fn status_follows_the_accept_header() {
        let error = ApiError::NotFound(Target::new("", "pods", "x"));
        let (media, body) = status_response_body(&error, Some("application/vnd.kubernetes.protobuf, application/json"));
        assert_eq!(media, "application/vnd.kubernetes.protobuf");
        assert!(body.starts_with(b"k8s\x00"));
        let decoded = crate::api::protobuf::decode_object(&body, "Status").unwrap();
        assert_eq!(Value::Object(decoded), parse(&error));
        let (media, body) = status_response_body(&error, Some("application/yaml"));
        assert_eq!(media, "application/yaml");
        assert_eq!(Value::Object(crate::api::yaml::decode_object(&body).unwrap()), parse(&error));
        // A 406 of a route without protobuf (a custom resource) is not encoded in protobuf.
        let custom = ApiError::NotAcceptable(crate::api::negotiate::CUSTOM_MEDIA_TYPES.into());
        assert_eq!(status_response_body(&custom, Some("application/vnd.kubernetes.protobuf")).0, "application/json");
        let echoed = ApiError::NotAcceptable("application/vnd.kubernetes.protobuf".into());
        assert_eq!(status_response_body(&echoed, Some("application/vnd.kubernetes.protobuf")).0, "application/json");
        assert_eq!(status_response_body(&custom, Some("application/yaml")).0, "application/yaml");
        for accept in [None, Some("text/html"), Some("application/json;as=Table;g=meta.k8s.io;v=v1, */*")] {
            let (media, body) = status_response_body(&error, accept);
            assert_eq!(media, "application/json", "{accept:?}");
            assert_eq!(body, error.to_status_json());
        }
    }
}
