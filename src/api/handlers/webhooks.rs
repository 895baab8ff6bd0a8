//! The admission webhooks' I/O (kube's MutatingAdmissionWebhook and
//! ValidatingAdmissionWebhook): for a write, the webhooks the stored
//! configurations register that match it (`strategy::admission::webhook`,
//! read from this shard's index, `Backend::admission_webhooks`), each called
//! through `Backend::call_webhook` with an `AdmissionReview`, and its answer
//! applied as kube-apiserver applies it: a mutating webhook's JSONPatch
//! changes the object (one more round for `reinvocationPolicy: IfNeeded`
//! webhooks when a later one changed it), a validating webhook's denial
//! refuses the write, warnings become `Warning` headers, and a failed call
//! refuses or is ignored by the webhook's `failurePolicy`.
//!
//! `clientConfig.service` is resolved as kube-apiserver with
//! `--enable-aggregator-routing` resolves it: the Service must exist, its
//! port must be declared, and the webhook is called at a ready endpoint
//! address of its EndpointSlices (the port of the same name), verified as
//! `NAME.NAMESPACE.svc`.
//!
//! Invariant: with `--upstream` (join mode) nothing is called here: the
//! upstream kube-apiserver admits the writes it is forwarded. Every call is
//! bounded by the webhook's `timeoutSeconds` (at most
//! `admission_webhook_timeout_max`) and its answer by
//! `admission_webhook_response_bytes_max`; at most
//! `admission_webhook_parallel_max` validating webhooks are called at once.

use super::read_current;
use super::Resolved;
use crate::api::backend::{WebhookAnswer, WebhookCall};
use crate::api::status::ApiError;
use crate::api::{Backend, RequestHead};
use crate::strategy::admission::policy;
use crate::strategy::admission::webhook::{self, Answer, Attributes, Match, Operation, PatchFailure, Webhook};
use crate::strategy::Object;
use crate::types::key::{collection_prefix, ObjectKey, ShardId};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// What a webhook call came to, before the failure policy.
enum Outcome {
    Answered(Answer),
    /// kube's `ErrCallingWebhook` reason (the failure policy decides).
    CallFailed(String),
    /// Refused whatever the failure policy.
    Refused(ApiError),
}

/// The request's facts every webhook is asked about.
struct Request<'a> {
    head: &'a RequestHead,
    resolved: &'a Resolved,
    name: &'a str,
    operation: Operation,
    namespace_labels: Option<Map<String, Value>>,
    options: Value,
    cel: webhook::CelLimits,
}

impl Request<'_> {
    /// kube's 403 for a match condition that failed to evaluate
    /// (`apierrors.NewForbidden(resource, name, err)`).
    fn forbidden(&self, message: String) -> ApiError {
        let info = &self.resolved.info;
        ApiError::Forbidden { target: crate::api::status::Target::new(&info.group, &info.resource, self.name), message }
    }

    fn attributes<'b>(&'b self, object: Option<&'b Value>, old: Option<&'b Value>) -> Attributes<'b> {
        let info = &self.resolved.info;
        Attributes {
            operation: self.operation,
            group: &info.group,
            version: &info.version,
            kind: &info.kind,
            resource: &info.resource,
            subresource: self.resolved.subresource.as_deref().unwrap_or(""),
            namespace: self.resolved.namespace.as_deref().unwrap_or(""),
            name: self.name,
            object,
            old_object: old,
            namespace_labels: self.namespace_labels.as_ref(),
            dry_run: self.head.params.dry_run_all,
            user: &self.head.user,
            options: self.options.clone(),
            cel: self.cel,
        }
    }
}

/// Whether this server calls these webhooks: not in join mode, and not
/// when the plugin is disabled (`--disable-admission-plugins`).
fn active(backend: &impl Backend, plugin: crate::strategy::admission::Plugin) -> bool {
    let config = backend.config();
    config.upstream.is_none() && config.admission_plugins.enabled(plugin)
}

const MUTATING: crate::strategy::admission::Plugin = crate::strategy::admission::Plugin::MutatingAdmissionWebhook;
const POLICY: crate::strategy::admission::Plugin = crate::strategy::admission::Plugin::ValidatingAdmissionPolicy;
const VALIDATING: crate::strategy::admission::Plugin = crate::strategy::admission::Plugin::ValidatingAdmissionWebhook;

fn cel_limits(backend: &impl Backend) -> webhook::CelLimits {
    let config = backend.config();
    webhook::CelLimits {
        expression_bytes_max: config.admission_cel_expression_bytes_max,
        operators_max: config.admission_cel_operators_max,
        stack_bytes: config.admission_cel_stack_bytes,
    }
}

/// The options object kube passes to admission for this request.
fn options(head: &RequestHead, operation: Operation) -> Value {
    let params = &head.params;
    let mut extra = Map::new();
    if let Some(validation) = &params.field_validation {
        extra.insert("fieldValidation".into(), json!(validation));
    }
    let kind = match operation {
        Operation::Create => "CreateOptions",
        Operation::Update if head.method == http::Method::PATCH => {
            if let Some(force) = params.force {
                extra.insert("force".into(), json!(force));
            }
            "PatchOptions"
        }
        Operation::Update => "UpdateOptions",
        Operation::Delete => {
            extra.remove("fieldValidation");
            if let Some(policy) = &params.propagation_policy {
                extra.insert("propagationPolicy".into(), json!(policy));
            }
            if let Some(grace) = params.grace_period_seconds {
                extra.insert("gracePeriodSeconds".into(), json!(grace));
            }
            return webhook::options("DeleteOptions", params.dry_run_all, None, extra);
        }
        Operation::Connect => "ConnectOptions",
    };
    webhook::options(kind, params.dry_run_all, params.field_manager.as_deref(), extra)
}

/// The labels a namespaceSelector is matched against: the request's
/// namespace's (a missing namespace has none; the write is refused later),
/// or a Namespace's own.
async fn namespace_labels(
    backend: &impl Backend,
    resolved: &Resolved,
    object: Option<&Object>,
    old: Option<&Object>,
) -> Result<Option<Map<String, Value>>, ApiError> {
    let labels_of = |o: &Object| {
        o.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object).cloned().unwrap_or_default()
    };
    if resolved.info.group.is_empty() && resolved.info.resource == "namespaces" {
        return Ok(object.or(old).map(labels_of));
    }
    let namespace = resolved.namespace.as_deref().unwrap_or("");
    if namespace.is_empty() {
        return Ok(None);
    }
    let key = ObjectKey::new("", "namespaces", "", namespace);
    let found = read_current(backend, &key, backend.committed_revision()).await?;
    let object = found.and_then(|o| serde_json::from_slice::<Object>(&o.json).ok());
    Ok(Some(object.as_ref().map(labels_of).unwrap_or_default()))
}

fn add_warnings(head: &RequestHead, warnings: &[String]) {
    let mut all = head.warnings.borrow_mut();
    for warning in warnings {
        if !all.contains(warning) {
            all.push(warning.clone());
        }
    }
}

/// kube's 500 for a failed call under `failurePolicy: Fail`.
fn failed(webhook: &Webhook, reason: &str) -> ApiError {
    ApiError::Internal(webhook::calling_error(&webhook.name, reason))
}

/// Calls one webhook with the review of `attrs`.
async fn call(backend: &impl Backend, hook: &Webhook, attrs: &Attributes<'_>) -> Outcome {
    if attrs.dry_run {
        match webhook::dry_run_allowed(hook) {
            Ok(()) => {}
            Err(true) => return Outcome::CallFailed("Webhook SideEffects is nil".into()),
            Err(false) => return Outcome::Refused(ApiError::BadRequest(webhook::dry_run_unsupported(&hook.name))),
        }
    }
    let Some(version) = hook.review_version else {
        return Outcome::CallFailed("webhook does not accept known AdmissionReview versions (v1, v1beta1)".into());
    };
    let uid = crate::api::object::new_uid(rand::random());
    let review = webhook::review(attrs, &uid, version);
    let body = match serde_json::to_vec(&review) {
        Ok(body) => body,
        Err(e) => return Outcome::CallFailed(format!("could not create admission objects: {e}")),
    };
    let target = match target(backend, hook).await {
        Ok(target) => target,
        Err(reason) => return Outcome::CallFailed(format!("failed to call webhook: {reason}")),
    };
    let config = backend.config();
    let timeout =
        std::time::Duration::from_secs(u64::from(hook.timeout_seconds)).min(config.admission_webhook_timeout_max);
    let call = WebhookCall {
        url: target.url,
        host: target.host,
        port: target.port,
        address: target.address,
        server_name: target.server_name,
        path_and_query: target.path_and_query,
        body,
        ca_bundle: hook.client.ca_bundle.clone(),
        timeout,
        response_bytes_max: config.admission_webhook_response_bytes_max,
    };
    match backend.call_webhook(call).await {
        Ok(WebhookAnswer { code, body }) if (200..300).contains(&code) => {
            match webhook::read_answer(&body, &uid, hook.mutating, version) {
                Ok(answer) => Outcome::Answered(answer),
                Err(reason) => Outcome::CallFailed(reason),
            }
        }
        Ok(WebhookAnswer { code, body }) => {
            Outcome::CallFailed(format!("failed to call webhook: {}", http_error(code, &body)))
        }
        Err(reason) => Outcome::CallFailed(format!("failed to call webhook: {reason}")),
    }
}

/// client-go's error for a non-2xx answer: the Status it carries, or the
/// generic server response error.
fn http_error(code: u16, body: &[u8]) -> String {
    if let Ok(status) = serde_json::from_slice::<Value>(body) {
        if status["kind"] == "Status" {
            if let Some(message) = status["message"].as_str() {
                return message.to_string();
            }
        }
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(1024)]).trim().to_string();
    match code {
        500..=599 if !text.is_empty() => {
            format!("an error on the server ({text:?}) has prevented the request from succeeding")
        }
        _ => format!("the server responded with the status code {code} but did not return more information"),
    }
}

/// Where a call goes.
struct Target {
    url: String,
    host: String,
    port: u16,
    address: Option<std::net::IpAddr>,
    server_name: String,
    path_and_query: String,
}

/// The URL's host, port and path; a Service reference resolved to one of
/// its ready endpoints (kube's aggregator routing).
async fn target(backend: &impl Backend, hook: &Webhook) -> Result<Target, String> {
    let url = webhook::request_url(hook).ok_or_else(|| "no clientConfig.url or clientConfig.service".to_string())?;
    let uri: http::Uri = url.parse().map_err(|e| format!("parse {url:?}: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!("Post {url:?}: unsupported protocol scheme {:?}", uri.scheme_str().unwrap_or("")));
    }
    let host = uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']').to_string();
    let port = uri.port_u16().unwrap_or(443);
    let path_and_query = uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    let mut target = Target { url: url.clone(), server_name: host.clone(), host, port, address: None, path_and_query };
    if let (None, Some(service)) = (&hook.client.url, &hook.client.service) {
        let (address, port) = resolve_service(backend, service).await.map_err(|e| format!("Post {url:?}: {e}"))?;
        target.address = Some(address);
        target.port = port;
    }
    Ok(target)
}

/// kube's `ResolveEndpoint`: the Service, its port, and a ready endpoint of
/// its EndpointSlices (the first, in name order) with the port's name.
async fn resolve_service(
    backend: &impl Backend,
    service: &webhook::ServiceReference,
) -> Result<(std::net::IpAddr, u16), String> {
    let key = ObjectKey::new("", "services", &service.namespace, &service.name);
    let found = read_current(backend, &key, backend.committed_revision()).await.map_err(|e| e.message())?;
    let Some(svc) = found.and_then(|o| serde_json::from_slice::<Value>(&o.json).ok()) else {
        return Err(format!("service {:?} not found", service.name));
    };
    let kind = svc["spec"]["type"].as_str().unwrap_or("ClusterIP");
    if !matches!(kind, "ClusterIP" | "NodePort" | "LoadBalancer") {
        return Err(format!("unsupported service type {kind:?}"));
    }
    let ports = svc["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let Some(port) = ports.iter().find(|p| p["port"].as_u64() == Some(u64::from(service.port))) else {
        return Err(format!("no service port {} found for service {:?}", service.port, service.name));
    };
    let port_name = port["name"].as_str().unwrap_or("");
    let prefix = collection_prefix("discovery.k8s.io", "endpointslices", Some(&service.namespace));
    let revision = backend.committed_revision();
    let limit = backend.config().admission_list_objects_max;
    let mut slices = Vec::new();
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let objects = backend
            .on_shard(ShardId(shard), revision, move |store| store.list(prefix.as_bytes(), None, limit))
            .await
            .map_err(|e| e.to_string())?;
        slices.extend(objects);
    }
    slices.sort_by(|a, b| a.key.cmp(&b.key));
    for slice in slices.iter().filter_map(|o| serde_json::from_slice::<Value>(&o.json).ok()) {
        if slice["metadata"]["labels"]["kubernetes.io/service-name"].as_str() != Some(service.name.as_str()) {
            continue;
        }
        let Some(port) = slice["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"].as_str().unwrap_or("") == port_name)
            .and_then(|p| p["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok())
        else {
            continue;
        };
        for endpoint in slice["endpoints"].as_array().into_iter().flatten() {
            // kube treats an endpoint without a ready condition as ready.
            if endpoint["conditions"]["ready"].as_bool() == Some(false) {
                continue;
            }
            if let Some(address) = endpoint["addresses"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find_map(|a| a.parse().ok())
            {
                return Ok((address, port));
            }
        }
    }
    Err(format!("no endpoints available for service {:?}", service.name))
}

/// The mutating webhooks over `object` (kube's MutatingAdmissionWebhook,
/// after the in-tree mutating plugins): in order, each matching webhook's
/// patch applied; then one more round for the `IfNeeded` webhooks a later
/// webhook's change came after. The object is decoded and defaulted again
/// after every change, as kube decodes each patched object.
pub async fn mutate(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    object: &mut Object,
    old: Option<&Object>,
) -> Result<(), ApiError> {
    if !active(backend, MUTATING) {
        return Ok(());
    }
    let index = backend.admission_webhooks().await;
    let hooks: Vec<&Webhook> = index.mutating().collect();
    if hooks.is_empty() {
        return Ok(());
    }
    let operation = if old.is_some() { Operation::Update } else { Operation::Create };
    let request = Request {
        head,
        resolved,
        name,
        operation,
        namespace_labels: namespace_labels(backend, resolved, Some(object), old).await?,
        options: options(head, operation),
        cel: cel_limits(backend),
    };
    let old_value = old.map(|o| Value::Object(o.clone()));
    let mut current = Value::Object(std::mem::take(object));
    let result = mutate_rounds(backend, &request, &hooks, &mut current, old_value.as_ref()).await;
    if let Value::Object(map) = current {
        *object = map;
    }
    result
}

async fn mutate_rounds(
    backend: &impl Backend,
    request: &Request<'_>,
    hooks: &[&Webhook],
    current: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    // kube's reinvocation context: the IfNeeded webhooks called so far, and
    // those a later change requires to be called again.
    let mut invoked: Vec<usize> = Vec::new();
    let mut reinvoke: BTreeSet<usize> = BTreeSet::new();
    for round in 0..2 {
        for (i, hook) in hooks.iter().enumerate() {
            if round == 1 && !reinvoke.contains(&i) {
                continue;
            }
            let outcome = {
                let attrs = request.attributes(Some(&*current), old);
                match hook.matches(&attrs) {
                    Match::No => continue,
                    Match::Error(e) => return Err(ApiError::Internal(e)),
                    Match::Refused(e) => return Err(request.forbidden(e)),
                    Match::Yes => {}
                }
                call(backend, hook, &attrs).await
            };
            let answer = match outcome {
                Outcome::Answered(answer) => answer,
                Outcome::Refused(error) => return Err(error),
                Outcome::CallFailed(_) if hook.ignore_failures => continue,
                Outcome::CallFailed(reason) => return Err(failed(hook, &reason)),
            };
            add_warnings(request.head, &answer.warnings);
            if !answer.allowed {
                return Err(denied(hook, answer.status.as_ref()));
            }
            let mut changed = false;
            if let Some(patch) = &answer.patch {
                changed = match webhook::apply_patch(current, patch) {
                    Ok(changed) => changed,
                    Err(PatchFailure::Undecodable(_)) if hook.ignore_failures => false,
                    Err(PatchFailure::Undecodable(reason)) => return Err(failed(hook, &reason)),
                    Err(PatchFailure::DoesNotApply(reason)) => return Err(ApiError::Internal(reason)),
                };
            }
            if changed {
                typecheck(request, current)?;
                if round == 0 {
                    reinvoke.extend(invoked.iter().copied());
                }
            }
            if round == 0 && hook.reinvoke_if_needed {
                invoked.push(i);
            }
        }
        if reinvoke.is_empty() {
            break;
        }
    }
    Ok(())
}

/// A patched object decodes and is defaulted as the request's kind (kube
/// decodes each webhook's result into its Go type, without strictness:
/// unknown fields are dropped, a custom resource pruned and defaulted by its
/// schema; a value that does not fit its field is kube's 500).
fn typecheck(request: &Request<'_>, current: &mut Value) -> Result<(), ApiError> {
    let Value::Object(map) = current else {
        return Err(ApiError::Internal("the patched object is not a JSON object".into()));
    };
    let _dropped = crate::api::field_validation::problems(map, &request.resolved.info, None);
    crate::strategy::decode_and_default(&request.resolved.info, map)
        .map_err(|r| ApiError::Internal(super::rejection(&request.resolved.info, request.name, r).message()))
}

fn denied(hook: &Webhook, status: Option<&Value>) -> ApiError {
    let denial = webhook::denial(&hook.name, status);
    ApiError::WebhookDenied {
        code: denial.code,
        reason: denial.reason,
        message: denial.message,
        details: denial.details,
    }
}

/// The validating webhooks over the object as it will be stored (`None`
/// for a delete) and the stored one: every matching webhook called (at most
/// `admission_webhook_parallel_max` at once), any denial or failure under
/// `failurePolicy: Fail` refuses (the first, in the webhooks' order).
pub async fn validate(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    operation: Operation,
    object: Option<&Object>,
    old: Option<&Object>,
) -> Result<(), ApiError> {
    let (policies_on, webhooks_on) = (active(backend, POLICY), active(backend, VALIDATING));
    if !policies_on && !webhooks_on {
        return Ok(());
    }
    let index = backend.admission_webhooks().await;
    let hooks: Vec<&Webhook> = if webhooks_on { index.validating().collect() } else { Vec::new() };
    let bindings =
        if policies_on && !is_admission_configuration(resolved) { index.policy_bindings() } else { Vec::new() };
    if hooks.is_empty() && bindings.is_empty() {
        return Ok(());
    }
    let request = Request {
        head,
        resolved,
        name,
        operation,
        namespace_labels: namespace_labels(backend, resolved, object, old).await?,
        options: options(head, operation),
        cel: cel_limits(backend),
    };
    let object = object.map(|o| Value::Object(o.clone()));
    let old = old.map(|o| Value::Object(o.clone()));
    let attrs = request.attributes(object.as_ref(), old.as_ref());
    // kube's order: ValidatingAdmissionPolicy, then the validating webhooks.
    if !bindings.is_empty() {
        validate_policies(backend, &request, &attrs, &bindings).await?;
    }
    let mut matching = Vec::new();
    for hook in hooks {
        match hook.matches(&attrs) {
            Match::No => {}
            Match::Error(e) => return Err(ApiError::Internal(e)),
            Match::Refused(e) => return Err(request.forbidden(e)),
            Match::Yes => matching.push(hook),
        }
    }
    let parallel = backend.config().admission_webhook_parallel_max.max(1);
    for batch in matching.chunks(parallel) {
        let outcomes = futures_util::future::join_all(batch.iter().map(|hook| call(backend, hook, &attrs))).await;
        let mut first_error = None;
        for (hook, outcome) in batch.iter().zip(outcomes) {
            let error = match outcome {
                Outcome::Answered(answer) => {
                    add_warnings(head, &answer.warnings);
                    if answer.allowed {
                        continue;
                    }
                    denied(hook, answer.status.as_ref())
                }
                Outcome::Refused(error) => error,
                Outcome::CallFailed(_) if hook.ignore_failures => continue,
                Outcome::CallFailed(reason) => failed(hook, &reason),
            };
            first_error.get_or_insert(error);
        }
        if let Some(error) = first_error {
            return Err(error);
        }
    }
    Ok(())
}

/// kube's `IsExemptAdmissionConfigurationResource`: admission's own
/// configuration is never admitted by policies or webhooks.
fn is_admission_configuration(resolved: &Resolved) -> bool {
    resolved.info.group == webhook::GROUP
        && [
            webhook::MUTATING,
            webhook::VALIDATING,
            webhook::POLICIES,
            webhook::BINDINGS,
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
        ]
        .contains(&resolved.info.resource.as_str())
}

/// A binding's params: one object, every object its selector picks, or
/// why there are none (kube's `CollectParams`).
async fn collect_params(
    backend: &impl Backend,
    policy: &policy::Policy,
    binding: &policy::Binding,
    request_namespace: &str,
) -> Result<Vec<Value>, String> {
    let wanted = policy::params_wanted(policy, binding);
    if wanted == policy::ParamsWanted::None {
        return Ok(vec![Value::Null]);
    }
    if let policy::ParamsWanted::Misconfigured(why) = wanted {
        return Err(why);
    }
    let Some((api_version, kind)) = &policy.param_kind else { return Ok(vec![Value::Null]) };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version.as_str()));
    let registry = backend.registry();
    let Some(info) = registry.by_kind(group, version, kind).cloned() else {
        return Err(format!("failed to find resource referenced by paramKind: '{api_version}, Kind={kind}'"));
    };
    let namespace_of = |given: &Option<String>| -> Result<String, String> {
        if !info.namespaced {
            return Ok(String::new());
        }
        match given.as_deref().filter(|n| !n.is_empty()).unwrap_or(request_namespace) {
            "" => Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into()),
            ns => Ok(ns.to_string()),
        }
    };
    let found: Vec<Value> = match wanted {
        policy::ParamsWanted::Named { name, namespace } => {
            let namespace = namespace_of(&namespace)?;
            let (g, r) = info.storage_group_resource();
            let key = ObjectKey::new(g, r, &namespace, &name);
            let object = read_current(backend, &key, backend.committed_revision()).await.map_err(|e| e.to_string())?;
            object.and_then(|o| serde_json::from_slice::<Value>(&o.json).ok()).into_iter().collect()
        }
        policy::ParamsWanted::Selected { selector, namespace } => {
            let namespace = namespace_of(&namespace)?;
            let namespace = (!namespace.is_empty()).then_some(namespace);
            let objects = super::delete::list_current(backend, &info, namespace.as_deref(), None)
                .await
                .map_err(|e| e.to_string())?;
            let mut picked = Vec::new();
            for o in objects {
                let Ok(value) = serde_json::from_slice::<Value>(&o.json) else { continue };
                let labels = value.pointer("/metadata/labels").and_then(Value::as_object);
                if webhook::selector_matches(&selector, labels)? {
                    picked.push(value);
                }
            }
            picked
        }
        _ => Vec::new(),
    };
    if found.is_empty() {
        let deny = binding.param_ref.as_ref().is_none_or(|p| p.deny_when_missing);
        if deny {
            return Err("no params found for policy binding with `Deny` parameterNotFoundAction".into());
        }
    }
    // A param object carries its kind (kube's `wrappedParam`).
    Ok(found
        .into_iter()
        .map(|mut p| {
            if let Some(o) = p.as_object_mut() {
                o.entry("apiVersion").or_insert_with(|| json!(api_version));
                o.entry("kind").or_insert_with(|| json!(kind));
            }
            p
        })
        .collect())
}

/// kube's ValidatingAdmissionPolicy plugin over one request: every binding
/// whose policy and own resources match, evaluated with its params; the
/// first `Deny` denial refuses (kube's `admission.NewForbidden` with the
/// validation's reason and code), `Warn` denials become warnings.
async fn validate_policies(
    backend: &impl Backend,
    request: &Request<'_>,
    attrs: &Attributes<'_>,
    bindings: &[(&policy::Policy, &policy::Binding)],
) -> Result<(), ApiError> {
    let null = Value::Null;
    let request_variable = policy::request_variable(attrs);
    let namespace = attrs.namespace;
    let is_namespace = attrs.group.is_empty() && attrs.resource == "namespaces";
    let namespace_object = if namespace.is_empty() || is_namespace {
        Value::Null
    } else {
        let key = ObjectKey::new("", "namespaces", "", namespace);
        let found = read_current(backend, &key, backend.committed_revision()).await?;
        policy::namespace_variable(found.and_then(|o| serde_json::from_slice::<Value>(&o.json).ok()).as_ref())
    };
    let mut denial: Option<(String, String, String, String)> = None; // policy, binding, message, reason
    let mut warnings = Vec::new();
    for (policy, binding) in bindings {
        let configuration_error = |message: String| {
            (!policy.ignore_failures).then(|| policy::Decision { deny: true, message, reason: String::new() })
        };
        let Some(constraints) = &policy.match_constraints else { continue };
        // A configuration error denies under `Fail`; under `Ignore` the
        // binding is passed over.
        let mut decisions = Vec::new();
        match constraints.matches(attrs) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(e) => match configuration_error(format!("failed to configure policy: {e}")) {
                Some(d) => decisions.push(d),
                None => continue,
            },
        }
        if decisions.is_empty() {
            if let Some(resources) = &binding.match_resources {
                match resources.matches(attrs) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(e) => match configuration_error(format!("failed to configure binding: {e}")) {
                        Some(d) => decisions.push(d),
                        None => continue,
                    },
                }
            }
        }
        if decisions.is_empty() {
            match collect_params(backend, policy, binding, namespace).await {
                Err(e) => match configuration_error(format!("failed to configure binding: {e}")) {
                    Some(d) => decisions.push(d),
                    None => continue,
                },
                Ok(params) => {
                    for params in &params {
                        let inputs = policy::Inputs {
                            object: attrs.object.unwrap_or(&null),
                            old_object: attrs.old_object.unwrap_or(&null),
                            request: &request_variable,
                            params,
                            namespace_object: &namespace_object,
                        };
                        decisions.extend(policy::evaluate(policy, &inputs, &request.cel));
                    }
                }
            }
        }
        for decision in decisions.into_iter().filter(|d| d.deny) {
            for action in &binding.actions {
                match action.as_str() {
                    "Deny" if denial.is_none() => {
                        denial = Some((
                            policy.name.clone(),
                            binding.name.clone(),
                            decision.message.clone(),
                            decision.reason.clone(),
                        ));
                    }
                    "Warn" => warnings.push(policy::warning(&policy.name, &binding.name, &decision.message)),
                    _ => {}
                }
            }
        }
    }
    add_warnings(request.head, &warnings);
    let Some((policy_name, binding_name, message, reason)) = denial else { return Ok(()) };
    let inner = policy::denial_message(&policy_name, &binding_name, &message);
    let info = &request.resolved.info;
    let resource =
        if info.group.is_empty() { info.resource.clone() } else { format!("{}.{}", info.resource, info.group) };
    let text = if request.name.is_empty() {
        format!("{resource} is forbidden: {inner}")
    } else {
        format!("{resource} {:?} is forbidden: {inner}", request.name)
    };
    let reason = if reason.is_empty() { "Invalid".to_string() } else { reason };
    let mut details = Map::new();
    if !request.name.is_empty() {
        details.insert("name".into(), json!(request.name));
    }
    if !info.group.is_empty() {
        details.insert("group".into(), json!(info.group));
    }
    details.insert("kind".into(), json!(info.resource));
    details.insert("causes".into(), json!([{"message": inner}]));
    Err(ApiError::WebhookDenied {
        code: policy::reason_code(&reason),
        reason,
        message: text,
        details: Some(Value::Object(details)),
    })
}

/// The webhooks of a delete: the mutating ones are called as kube's delete
/// handler calls them (with neither object: a non-empty objectSelector
/// never matches; a patch is kube's 500, there being no object to change),
/// then the validating ones with the stored object as `oldObject`.
pub async fn admit_delete(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    old: &Object,
) -> Result<(), ApiError> {
    if !active(backend, MUTATING) && !active(backend, VALIDATING) && !active(backend, POLICY) {
        return Ok(());
    }
    let index = backend.admission_webhooks().await;
    if index.is_empty() {
        return Ok(());
    }
    let operation = Operation::Delete;
    let request = Request {
        head,
        resolved,
        name,
        operation,
        namespace_labels: namespace_labels(backend, resolved, None, Some(old)).await?,
        options: options(head, operation),
        cel: cel_limits(backend),
    };
    for hook in index.mutating().filter(|_| active(backend, MUTATING)) {
        let attrs = request.attributes(None, None);
        match hook.matches(&attrs) {
            Match::No => continue,
            Match::Error(e) => return Err(ApiError::Internal(e)),
            Match::Refused(e) => return Err(request.forbidden(e)),
            Match::Yes => {}
        }
        match call(backend, hook, &attrs).await {
            Outcome::Answered(answer) => {
                add_warnings(head, &answer.warnings);
                if !answer.allowed {
                    return Err(denied(hook, answer.status.as_ref()));
                }
                let patches = answer
                    .patch
                    .as_deref()
                    .and_then(|p| serde_json::from_slice::<Vec<Value>>(p).ok())
                    .is_some_and(|p| !p.is_empty());
                if patches {
                    return Err(ApiError::Internal(format!(
                        "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                        hook.name
                    )));
                }
            }
            Outcome::Refused(error) => return Err(error),
            Outcome::CallFailed(_) if hook.ignore_failures => {}
            Outcome::CallFailed(reason) => return Err(failed(hook, &reason)),
        }
    }
    validate(backend, head, resolved, name, operation, None, Some(old)).await
}

#[cfg(test)]
mod tests {
    use crate::api::backend::WebhookAnswer;
    use crate::api::testing::{send_json, MemoryBackend};
    use crate::config::Config;
    use base64::Engine;
    use serde_json::{json, Value};
    use std::cell::RefCell;
    use std::rc::Rc;

    fn backend() -> Rc<MemoryBackend> {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        Rc::new(MemoryBackend::new(config, 2))
    }

    /// Serves webhook calls by path with `answer(path, request) -> response`;
    /// returns the paths called, in order.
    fn serve(backend: &MemoryBackend, answer: fn(&str, &Value) -> Value) -> Rc<RefCell<Vec<String>>> {
        let called: Rc<RefCell<Vec<String>>> = Rc::default();
        let record = called.clone();
        backend.serve_webhooks(Box::new(move |call| {
            let review: Value = serde_json::from_slice(&call.body).map_err(|e| e.to_string())?;
            let path = call.path_and_query.split('?').next().unwrap_or("").to_string();
            record.borrow_mut().push(path.clone());
            let mut response = answer(&path, &review["request"]);
            response["uid"] = review["request"]["uid"].clone();
            let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
            Ok(WebhookAnswer { code: 200, body: serde_json::to_vec(&body).unwrap() })
        }));
        called
    }

    fn patch(operations: Value) -> Value {
        let encoded = base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&operations).unwrap());
        json!({"allowed": true, "patchType": "JSONPatch", "patch": encoded})
    }

    fn hook(name: &str, path: &str, extra: Value) -> Value {
        let mut hook = json!({
            "name": name,
            "clientConfig": {"url": format!("https://127.0.0.1:9443{path}")},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"],
        });
        for (k, v) in extra.as_object().unwrap() {
            hook[k] = v.clone();
        }
        hook
    }

    fn register(backend: &Rc<MemoryBackend>, mutating: bool, name: &str, hooks: Vec<Value>) {
        let (resource, kind) = if mutating {
            ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration")
        } else {
            ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration")
        };
        let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "webhooks": hooks});
        let path = format!("/apis/admissionregistration.k8s.io/v1/{resource}");
        let answer = send_json(backend, "POST", &path, Some(config));
        assert_eq!(answer.code, 201, "{}", answer.body);
    }

    fn create(backend: &Rc<MemoryBackend>, name: &str) -> (u16, Value) {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}});
        let answer = send_json(backend, "POST", "/api/v1/namespaces/default/configmaps", Some(cm));
        (answer.code, answer.body)
    }

    /// Adds its label when it is missing.
    fn labeller(path: &str, request: &Value) -> Value {
        let label = path.trim_start_matches('/');
        let labels = &request["object"]["metadata"]["labels"];
        if labels.get(label).is_some() {
            return json!({"allowed": true});
        }
        if labels.is_object() {
            patch(json!([{"op": "add", "path": format!("/metadata/labels/{label}"), "value": "yes"}]))
        } else {
            patch(json!([{"op": "add", "path": "/metadata/labels", "value": {label: "yes"}}]))
        }
    }

    #[test]
    fn if_needed_webhooks_are_called_again_after_a_later_change() {
        for (policy, first_calls) in [("IfNeeded", 2), ("Never", 1)] {
            let backend = backend();
            let called = serve(&backend, labeller);
            register(
                &backend,
                true,
                "a",
                vec![hook("first.example.com", "/first", json!({"reinvocationPolicy": policy}))],
            );
            register(&backend, true, "b", vec![hook("second.example.com", "/second", json!({}))]);
            let (code, body) = create(&backend, "one");
            assert_eq!(code, 201, "{body}");
            assert_eq!(body["metadata"]["labels"], json!({"first": "yes", "second": "yes"}));
            let calls = called.borrow();
            assert_eq!(calls.iter().filter(|p| *p == "/first").count(), first_calls, "{policy}: {calls:?}");
            assert_eq!(calls.iter().filter(|p| *p == "/second").count(), 1, "{calls:?}");
        }
    }

    #[test]
    fn fields_a_patch_adds_that_the_kind_lacks_are_dropped() {
        let backend = backend();
        serve(&backend, |_, _| {
            patch(
                json!([{"op": "add", "path": "/spec", "value": {"x": 1}}, {"op": "add", "path": "/data/b", "value": "2"}]),
            )
        });
        register(&backend, true, "adder", vec![hook("add.example.com", "/add", json!({}))]);
        let (code, body) = create(&backend, "one");
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["data"], json!({"a": "1", "b": "2"}));
        assert!(body.get("spec").is_none(), "a ConfigMap has no spec: {body}");
    }

    #[test]
    fn what_a_patch_adds_is_defaulted_as_the_kind() {
        let backend = backend();
        serve(&backend, |_, _| {
            patch(
                json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "sidecar", "image": "busybox:1.36"}}]),
            )
        });
        let mut pods = hook("sidecar.example.com", "/inject", json!({}));
        pods["rules"][0]["resources"] = json!(["pods"]);
        register(&backend, true, "injector", vec![pods]);
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}});
        let answer = send_json(&backend, "POST", "/api/v1/namespaces/default/pods", Some(pod));
        assert_eq!(answer.code, 201, "{}", answer.body);
        let sidecar = &answer.body["spec"]["containers"][1];
        assert_eq!(sidecar["name"], "sidecar");
        assert_eq!(sidecar["imagePullPolicy"], "IfNotPresent", "{sidecar}");
        assert_eq!(sidecar["terminationMessagePath"], "/dev/termination-log", "{sidecar}");
        assert_eq!(sidecar["terminationMessagePolicy"], "File", "{sidecar}");
    }

    #[test]
    fn a_patch_that_breaks_the_type_is_refused_and_nothing_is_stored() {
        let backend = backend();
        serve(&backend, |_, _| patch(json!([{"op": "replace", "path": "/data/a", "value": 5}])));
        register(&backend, true, "breaker", vec![hook("break.example.com", "/break", json!({}))]);
        let (code, body) = create(&backend, "one");
        assert_eq!(code, 500, "{body}");
        assert_eq!(body["reason"], "InternalError");
        let answer = send_json(&backend, "GET", "/api/v1/namespaces/default/configmaps/one", None);
        assert_eq!(answer.code, 404);
    }

    #[test]
    fn validating_refusals_and_warnings_are_kubes() {
        let backend = backend();
        serve(&backend, |path, _| match path {
            "/warn" => json!({"allowed": true, "warnings": ["be careful"]}),
            "/deny-a" => json!({"allowed": false, "status": {"message": "first"}}),
            _ => json!({"allowed": false, "status": {"code": 422, "reason": "Invalid", "message": "second"}}),
        });
        register(&backend, false, "a", vec![hook("warn.example.com", "/warn", json!({}))]);
        let (code, _) = create(&backend, "warned");
        assert_eq!(code, 201);
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "again"}});
        let answer = send_json(&backend, "POST", "/api/v1/namespaces/default/configmaps", Some(cm));
        assert_eq!(answer.warnings, ["299 - \"be careful\""]);
        register(
            &backend,
            false,
            "b",
            vec![hook("deny-a.example.com", "/deny-a", json!({})), hook("deny-b.example.com", "/deny-b", json!({}))],
        );
        let (code, body) = create(&backend, "refused");
        assert_eq!(code, 400, "a denial without a code is 400: {body}");
        assert_eq!(body["message"], "admission webhook \"deny-a.example.com\" denied the request: first");
        assert!(body.get("reason").is_none(), "{body}");
    }

    #[test]
    fn unreachable_webhooks_follow_their_failure_policy() {
        let backend = backend();
        register(&backend, false, "a", vec![hook("ignored.example.com", "/x", json!({"failurePolicy": "Ignore"}))]);
        assert_eq!(create(&backend, "one").0, 201);
        register(&backend, false, "b", vec![hook("failing.example.com", "/x", json!({}))]);
        let (code, body) = create(&backend, "two");
        assert_eq!(code, 500);
        assert_eq!(
            body["message"],
            "Internal error occurred: failed calling webhook \"failing.example.com\": failed to call webhook: \
             Post \"https://127.0.0.1:9443/x?timeout=10s\": dial tcp 127.0.0.1:9443: connect: connection refused"
        );
        send_json(&backend, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/b", None);
        assert_eq!(create(&backend, "three").0, 201);
        // matchConditions: false skips the (unreachable) webhook; an error
        // under Fail is kube's 403 for the object.
        let skip = json!({"matchConditions": [{"name": "never", "expression": "object.metadata.name == 'x'"}]});
        register(&backend, true, "c", vec![hook("conditional.example.com", "/x", skip)]);
        assert_eq!(create(&backend, "four").0, 201);
        let broken = json!({"matchConditions": [{"name": "broken", "expression": "object.spec.missing"}]});
        register(&backend, true, "d", vec![hook("broken.example.com", "/x", broken)]);
        let (code, body) = create(&backend, "five");
        assert_eq!(code, 403, "{body}");
        assert!(body["message"].as_str().unwrap().starts_with("configmaps \"five\" is forbidden: "), "{body}");
    }

    #[test]
    fn join_mode_and_disabled_plugins_call_no_webhook() {
        let config = || Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        assert!(super::active(&*Rc::new(MemoryBackend::new(config(), 1)), super::VALIDATING));
        // Join mode: writes are forwarded and the upstream admits them.
        let mut joined = config();
        joined.upstream = Some(crate::config::Upstream { url: "https://10.0.0.1:6443".into(), ..Default::default() });
        let backend = MemoryBackend::new(joined, 1);
        assert!(!super::active(&backend, super::MUTATING) && !super::active(&backend, super::VALIDATING));
        let mut disabled = config();
        disabled.admission_plugins =
            crate::strategy::admission::Plugins::from_flags("", "ValidatingAdmissionWebhook").unwrap();
        let backend = MemoryBackend::new(disabled, 1);
        assert!(super::active(&backend, super::MUTATING));
        assert!(!super::active(&backend, super::VALIDATING));
    }
}
