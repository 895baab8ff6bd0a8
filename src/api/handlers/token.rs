//! `serviceaccounts/token` (TokenRequest, `authentication.k8s.io/v1`): a
//! signed, time-bound token for a service account, optionally bound to a
//! pod, a secret or a node, as kube-apiserver's `TokenREST` issues it
//! (`kubectl create token`, the kubelet's projected volumes); and the
//! authentication of such tokens ([`authenticate`]): the signature, issuer,
//! time and audiences (`auth::serviceaccount`), then the service account
//! and the bound objects, which must still exist with the uids the token
//! names (a deleted pod's tokens are refused).
//!
//! Invariant: a token is only issued for a service account that exists,
//! bound to an object that exists (and whose uid matches the reference's
//! when it gives one); its lifetime is within [10 min, 2^32 s] and at most
//! `--service-account-max-token-expiration`.

use super::{read_current, Resolved};
use crate::api::object::{decode_body, metadata, Object};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::auth::serviceaccount::{self, Claims, KubernetesClaims, Ref, ServiceAccountTokens, TokenError};
use crate::auth::UserInfo;
use crate::types::key::ObjectKey;
use base64::Engine;
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};
use std::time::UNIX_EPOCH;

/// The extra keys kube gives a service account token's user.
pub const EXTRA_POD_NAME: &str = "authentication.kubernetes.io/pod-name";
pub const EXTRA_POD_UID: &str = "authentication.kubernetes.io/pod-uid";
pub const EXTRA_NODE_NAME: &str = "authentication.kubernetes.io/node-name";
pub const EXTRA_NODE_UID: &str = "authentication.kubernetes.io/node-uid";
pub const EXTRA_CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

fn unix_now(backend: &impl Backend) -> i64 {
    backend.now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// The current object `namespace/name` of `resource` (core group), parsed.
async fn read_object(
    backend: &impl Backend,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<Object>, ApiError> {
    let key = ObjectKey::new("", resource, namespace, name);
    let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else { return Ok(None) };
    serde_json::from_slice(&current.json)
        .map(Some)
        .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))
}

fn uid_of(object: &Object) -> String {
    metadata(object).get("uid").and_then(Value::as_str).unwrap_or("").to_string()
}

/// Deleted, or being deleted for longer than the leeway, before `now`.
fn deleted_before(object: &Object, now: i64) -> bool {
    let Some(when) = metadata(object).get("deletionTimestamp").and_then(Value::as_str) else { return false };
    time::OffsetDateTime::parse(when, &time::format_description::well_known::Rfc3339)
        .is_ok_and(|t| t.unix_timestamp() < now - serviceaccount::LEEWAY_SECONDS)
}

/// The label kube's legacy token cleaner sets on a Secret whose token it
/// invalidated (`LegacyTokenInvalidatedLabelKey`).
pub const LEGACY_TOKEN_INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

/// Authenticates a legacy (Secret-based) service account token, as kube's
/// legacy validator does with its lookups on: the Secret exists, is not
/// being deleted, and holds this very token; the service account exists
/// with the uid the token names; the use is recorded on the Secret
/// ([`record_legacy_token_use`]); a Secret the legacy token cleaner marked
/// invalid refuses it. A legacy token has no
/// audience: it is good for the API audiences only. `Ok(None)`: not one.
async fn authenticate_legacy(
    backend: &impl Backend,
    tokens: &ServiceAccountTokens,
    token: &str,
    audiences: &[String],
) -> Result<Option<(UserInfo, Vec<String>)>, String> {
    let claims = match tokens.verify_legacy(token) {
        Ok(claims) => claims,
        Err(TokenError::NotOurs) => return Ok(None),
        Err(TokenError::Malformed(why)) => return Err(why),
        Err(e) => return Err(e.to_string()),
    };
    let implicit = &tokens.api_audiences;
    let wanted: &[String] = if audiences.is_empty() { implicit } else { audiences };
    let accepted: Vec<String> = implicit.iter().filter(|a| wanted.contains(a)).cloned().collect();
    if accepted.is_empty() && !implicit.is_empty() {
        return Err(format!("token audiences {implicit:?} is invalid for the target audiences {wanted:?}"));
    }
    let namespace = claims.namespace.as_str();
    let invalidated = || "Token has been invalidated".to_string();
    let secret = read_object(backend, "secrets", namespace, &claims.secret_name)
        .await
        .map_err(|e| e.message())?
        .ok_or_else(invalidated)?;
    if metadata(&secret).get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(invalidated());
    }
    let stored = secret
        .get("data")
        .and_then(|d| d.get("token"))
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
    if stored.as_deref() != Some(token.as_bytes()) {
        return Err("Token does not match server's copy".into());
    }
    let name = &claims.service_account_name;
    let account = read_object(backend, "serviceaccounts", namespace, name)
        .await
        .map_err(|e| e.message())?
        .ok_or_else(|| format!("serviceaccounts {name:?} not found"))?;
    if metadata(&account).get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(format!("ServiceAccount {namespace}/{name} has been deleted"));
    }
    if uid_of(&account) != claims.service_account_uid {
        return Err(format!(
            "ServiceAccount UID ({}) does not match claim ({})",
            uid_of(&account),
            claims.service_account_uid
        ));
    }
    // Use of an invalidated token is recorded too, as kube does, then refused.
    record_legacy_token_use(backend, &secret).await;
    if label_of(&secret, LEGACY_TOKEN_INVALID_SINCE).is_some_and(|since| !since.is_empty()) {
        let secret_name = &claims.secret_name;
        return Err(format!(
            "the token in secret {namespace}/{secret_name} for service account {namespace}/{name} has been marked \
             invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the \
             '{LEGACY_TOKEN_INVALID_SINCE}' label from the secret to temporarily allow use of this token"
        ));
    }
    let user = UserInfo::authenticated(
        serviceaccount::user_name(namespace, name),
        claims.service_account_uid.clone(),
        serviceaccount::groups(namespace),
    );
    Ok(Some((user, accepted)))
}

fn label_of<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    metadata(object).get("labels").and_then(|l| l.get(key)).and_then(Value::as_str)
}

/// The label kube's legacy validator keeps on the Secret of a legacy token
/// that was used: the UTC date of the last use (`LastUsedLabelKey`).
pub const LEGACY_TOKEN_LAST_USED: &str = "kubernetes.io/legacy-token-last-used";

/// Records that the legacy token of `secret` was used today, as kube's
/// legacy validator does: unless the Secret's last-used label already says
/// today or tomorrow (UTC), a merge patch sets it to today's date, made as
/// kube-apiserver itself (`system:apiserver`); an instance that forwards its
/// writes (`--upstream`) sends that patch to the upstream as its own
/// identity. A failed patch is logged and never refuses the request (so a
/// token keeps working when the label cannot be written).
async fn record_legacy_token_use(backend: &impl Backend, secret: &Object) {
    let now = backend.now();
    let today = crate::api::object::timestamp(now).get(..10).unwrap_or_default().to_string();
    let next_day = now + std::time::Duration::from_secs(24 * 60 * 60);
    let tomorrow = crate::api::object::timestamp(next_day).get(..10).unwrap_or_default().to_string();
    let last_used = label_of(secret, LEGACY_TOKEN_LAST_USED);
    if last_used == Some(today.as_str()) || last_used == Some(tomorrow.as_str()) {
        return;
    }
    let meta = metadata(secret);
    let field = |name: &str| meta.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    let (namespace, name) = (field("namespace"), field("name"));
    let patch = json!({"kind": "Secret", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": namespace, "uid": field("uid"),
                     "labels": {LEGACY_TOKEN_LAST_USED: today}}});
    let body = Bytes::from(patch.to_string());
    const MERGE_PATCH: &str = "application/merge-patch+json";
    let outcome: Result<u16, String> = if backend.config().upstream.is_some() {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(MERGE_PATCH));
        headers.insert(http::header::ACCEPT, http::HeaderValue::from_static("application/json"));
        let request = crate::api::forward::ForwardRequest {
            method: http::Method::PATCH,
            path_and_query: format!("/api/v1/namespaces/{namespace}/secrets/{name}"),
            headers,
            body,
            streamed: false,
        };
        backend.forward(request).await.map(|answer| answer.status).map_err(|e| e.to_string())
    } else {
        let key = ObjectKey::new("", "secrets", &namespace, &name);
        match super::garbage::resolved_for_key(&backend.registry(), &key.encode()) {
            Some(resolved) => {
                let head = crate::api::system_objects::system_request(http::Method::PATCH, MERGE_PATCH);
                Box::pin(super::patch::serve(backend, &head, &resolved, &body))
                    .await
                    .map(|response| response.status().as_u16())
                    .map_err(|e| e.message())
            }
            None => Err("secrets are not served".into()),
        }
    };
    match outcome {
        Ok(status) if (200..300).contains(&status) => {}
        Ok(status) => eprintln!("shardline: labelling legacy token secret {namespace}/{name} as used: status {status}"),
        Err(e) => eprintln!("shardline: labelling legacy token secret {namespace}/{name} as used: {e}"),
    }
}

/// Authenticates a bearer token as a service account token of this server.
/// `Ok(None)`: not one (another authenticator may own it); `Err`: it is one
/// but is refused, with kube's reason. `audiences` empty means the API
/// audiences. Answers the user and the audiences the token was accepted for.
pub async fn authenticate(
    backend: &impl Backend,
    tokens: &ServiceAccountTokens,
    token: &str,
    audiences: &[String],
) -> Result<Option<(UserInfo, Vec<String>)>, String> {
    let now = unix_now(backend);
    let claims = match tokens.verify(token, now, audiences) {
        Ok(claims) => claims,
        Err(TokenError::NotOurs) => return authenticate_legacy(backend, tokens, token, audiences).await,
        Err(e) => return Err(e.to_string()),
    };
    let k = &claims.kubernetes;
    let namespace = k.namespace.as_str();
    let read = |resource: &'static str, name: String| async move {
        read_object(backend, resource, namespace, &name).await.map_err(|e| e.message())
    };
    let account = read("serviceaccounts", k.serviceaccount.name.clone())
        .await?
        .ok_or_else(|| format!("serviceaccounts {:?} not found", k.serviceaccount.name))?;
    if deleted_before(&account, now) {
        return Err(format!("service account {namespace}/{} has been deleted", k.serviceaccount.name));
    }
    if uid_of(&account) != k.serviceaccount.uid {
        return Err(format!(
            "service account UID ({}) does not match claim ({})",
            uid_of(&account),
            k.serviceaccount.uid
        ));
    }
    let invalidated = || "service account token has been invalidated".to_string();
    if let Some(secret) = &k.secret {
        let stored = read("secrets", secret.name.clone()).await?.ok_or_else(invalidated)?;
        if deleted_before(&stored, now) {
            return Err(invalidated());
        }
        if uid_of(&stored) != secret.uid {
            return Err(format!(
                "secret UID ({}) does not match service account secret ref claim ({})",
                uid_of(&stored),
                secret.uid
            ));
        }
    }
    let mut extra = std::collections::BTreeMap::new();
    if let Some(pod) = &k.pod {
        let stored = read("pods", pod.name.clone()).await?.ok_or_else(invalidated)?;
        if deleted_before(&stored, now) {
            return Err(invalidated());
        }
        if uid_of(&stored) != pod.uid {
            return Err(format!(
                "pod UID ({}) does not match service account pod ref claim ({})",
                uid_of(&stored),
                pod.uid
            ));
        }
        extra.insert(EXTRA_POD_NAME.to_string(), vec![pod.name.clone()]);
        extra.insert(EXTRA_POD_UID.to_string(), vec![pod.uid.clone()]);
    }
    if let Some(node) = &k.node {
        // A node bound directly must exist; one named beside a pod is
        // informational (kube checks it only for node-bound tokens).
        if k.pod.is_none() {
            let stored = read_object(backend, "nodes", "", &node.name).await.map_err(|e| e.message())?;
            let stored = stored.ok_or_else(invalidated)?;
            if uid_of(&stored) != node.uid {
                return Err(format!(
                    "node UID ({}) does not match service account node ref claim ({})",
                    uid_of(&stored),
                    node.uid
                ));
            }
        }
        extra.insert(EXTRA_NODE_NAME.to_string(), vec![node.name.clone()]);
        extra.insert(EXTRA_NODE_UID.to_string(), vec![node.uid.clone()]);
    }
    if !claims.jti.is_empty() {
        extra.insert(EXTRA_CREDENTIAL_ID.to_string(), vec![format!("JTI={}", claims.jti)]);
    }
    let mut user = UserInfo::authenticated(
        serviceaccount::user_name(namespace, &k.serviceaccount.name),
        k.serviceaccount.uid.clone(),
        serviceaccount::groups(namespace),
    );
    user.extra = extra;
    let wanted: &[String] = if audiences.is_empty() { &tokens.api_audiences } else { audiences };
    let accepted = wanted.iter().filter(|a| claims.aud.contains(a)).cloned().collect();
    Ok(Some((user, accepted)))
}

fn invalid(name: &str, field: &str, reason: &str, message: String) -> ApiError {
    ApiError::Invalid {
        kind: "TokenRequest".into(),
        target: Target::new("authentication.k8s.io", "", name),
        causes: vec![Cause { reason: reason.into(), message, field: field.into() }],
    }
}

/// The TokenRequest body as JSON: JSON, YAML or CBOR through the common
/// decoder, Protobuf read field by field (its schema is not in the table of
/// stored kinds).
fn read_request(content_type: Option<&str>, body: &[u8]) -> Result<Object, ApiError> {
    if crate::api::object::media_type(content_type) == "application/vnd.kubernetes.protobuf" {
        return super::review::protobuf_token_request(body);
    }
    decode_body(content_type, body, "TokenRequest")
}

/// POST `serviceaccounts/NAME/token`.
pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let Some(tokens) = backend.config().authentication.service_accounts.clone() else {
        return Err(ApiError::PathNotFound);
    };
    let request = read_request(head.content_type.as_deref(), body)?;
    let api_version = request.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if !matches!(api_version, "" | "authentication.k8s.io/v1") {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({api_version}) does not match the expected API version (authentication.k8s.io/v1)"
        )));
    }
    let spec = request.get("spec").cloned().unwrap_or(json!({}));
    let mut expiration = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => serviceaccount::EXPIRATION_SECONDS_DEFAULT,
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::BadRequest(format!(
                "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: json: cannot unmarshal {v} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64"
            ))
        })?,
    };
    if expiration < serviceaccount::EXPIRATION_SECONDS_MIN {
        return Err(invalid(
            &name,
            "spec.expirationSeconds",
            "FieldValueInvalid",
            format!("Invalid value: {expiration}: may not specify a duration less than 10 minutes"),
        ));
    }
    if expiration > serviceaccount::EXPIRATION_SECONDS_MAX {
        return Err(invalid(
            &name,
            "spec.expirationSeconds",
            "FieldValueInvalid",
            format!("Invalid value: {expiration}: may not specify a duration larger than 2^32 seconds"),
        ));
    }
    if let Some(max) = backend.config().service_account_max_token_expiration {
        expiration = expiration.min((max.as_secs() as i64).max(serviceaccount::EXPIRATION_SECONDS_MIN));
    }
    let mut audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences = tokens.api_audiences.clone();
    }
    let account = read_object(backend, "serviceaccounts", &namespace, &name)
        .await?
        .ok_or_else(|| ApiError::NotFound(Target::new("", "serviceaccounts", &name)))?;
    let mut k = KubernetesClaims {
        namespace: namespace.clone(),
        serviceaccount: Ref { name: name.clone(), uid: uid_of(&account) },
        ..Default::default()
    };
    let bound = spec.get("boundObjectRef").filter(|b| b.is_object()).cloned();
    if let Some(reference) = &bound {
        let text = |f: &str| reference.get(f).and_then(Value::as_str).unwrap_or("").to_string();
        let (kind, ref_version, ref_name, ref_uid) = (text("kind"), text("apiVersion"), text("name"), text("uid"));
        let (group, version) = ref_version.rsplit_once('/').unwrap_or(("", &ref_version));
        let (resource, namespace_of) = match (group, kind.as_str()) {
            ("", "Pod") => ("pods", namespace.as_str()),
            ("", "Secret") => ("secrets", namespace.as_str()),
            ("", "Node") => ("nodes", ""),
            _ => {
                return Err(ApiError::BadRequest(format!(
                    "cannot bind token to object of type {group}/{version}, Kind={kind}"
                )))
            }
        };
        let object = read_object(backend, resource, namespace_of, &ref_name)
            .await?
            .ok_or_else(|| ApiError::NotFound(Target::new("", resource, &ref_name)))?;
        let uid = uid_of(&object);
        if kind == "Pod" {
            let runs_as = object
                .get("spec")
                .and_then(|s| s.get("serviceAccountName"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if runs_as != name {
                return Err(ApiError::BadRequest(format!(
                    "cannot bind token for serviceaccount {name:?} to pod running with serviceaccount {runs_as:?}"
                )));
            }
        }
        if !ref_uid.is_empty() && ref_uid != uid {
            return Err(ApiError::Conflict {
                target: Target::new(group, &kind, &ref_name),
                message: format!(
                    "the UID in the bound object reference ({ref_uid}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                ),
            });
        }
        let this = Some(Ref { name: ref_name.clone(), uid });
        match kind.as_str() {
            "Pod" => {
                // The pod's node is named too (kube's ServiceAccountTokenPodNodeInfo).
                let node_name = object
                    .get("spec")
                    .and_then(|s| s.get("nodeName"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if !node_name.is_empty() {
                    if let Some(node) = read_object(backend, "nodes", "", &node_name).await? {
                        k.node = Some(Ref { name: node_name, uid: uid_of(&node) });
                    }
                }
                k.pod = this;
            }
            "Secret" => k.secret = this,
            _ => k.node = this,
        }
    }
    let now = unix_now(backend);
    let claims = Claims {
        aud: audiences.clone(),
        exp: now + expiration,
        iat: now,
        iss: tokens.issuer.clone(),
        jti: crate::api::object::new_uid(rand::random()),
        kubernetes: k,
        nbf: now,
        sub: serviceaccount::user_name(&namespace, &name),
    };
    let token = tokens.sign(&claims).map_err(|e| ApiError::Internal(format!("failed to generate token: {e}")))?;
    let expires = time::OffsetDateTime::from_unix_timestamp(claims.exp)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default();
    let mut out_spec = json!({"audiences": audiences, "expirationSeconds": expiration});
    if let Some(reference) = bound {
        out_spec["boundObjectRef"] = reference;
    }
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
        "spec": out_spec,
        "status": {"token": token, "expirationTimestamp": expires},
    });
    Ok(respond(StatusCode::CREATED, "application/json", Bytes::from(answer.to_string())))
}

/// The service account issuer's discovery documents, as kube-apiserver
/// serves them: `/.well-known/openid-configuration` and `/openid/v1/jwks`
/// (`application/jwk-set+json`). 404 without an issuer.
pub fn issuer_document(
    backend: &impl Backend,
    route: &crate::api::route::Route,
) -> Result<Response<ResponseBody>, ApiError> {
    let tokens = backend.config().authentication.service_accounts.as_ref().ok_or(ApiError::PathNotFound)?;
    let (content_type, document) = match route {
        crate::api::route::Route::OpenIdKeys => ("application/jwk-set+json", tokens.jwks()),
        _ => ("application/json", tokens.openid_configuration()),
    };
    Ok(respond(StatusCode::OK, content_type, Bytes::from(document.to_string())))
}
