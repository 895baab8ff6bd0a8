//! `pods/eviction`: a delete of a pod that respects its
//! PodDisruptionBudget, as kube-apiserver's `EvictionREST` serves it
//! (`kubectl drain`, the descheduler, the cluster autoscaler).
//!
//! A terminal, pending or already deleting pod is deleted at once. Otherwise
//! the namespace's PodDisruptionBudgets whose selector matches the pod are
//! read: more than one is a 500 Status; with one whose status allows no
//! disruption (or whose controller has not observed its latest generation)
//! the answer is 429 with kube's message and a `DisruptionBudget` cause;
//! otherwise the budget's `status.disruptionsAllowed` is decremented and
//! the pod recorded in `status.disruptedPods` (a write conditional on the
//! budget's version, retried on a lost race) before the pod is deleted with
//! the Eviction's `deleteOptions`. The answer is a `Success` Status (201).
//!
//! Invariant: a budget is never decremented below zero, and a pod is never
//! deleted when its budget forbids it.

use super::binding::created_status;
use super::delete::{self, DeleteOptions};
use super::{append_read_modify_write, read_current, Resolved};
use crate::api::object::{decode_body, metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{Backend, RequestHead, ResponseBody};
use crate::log::{Operation, Precondition, Proposal};
use http::Response;
use serde_json::{json, Value};

/// kube's `MaxDisruptedPodSize`: evictions a budget may have approved that
/// its controller has not yet confirmed; past it evictions are refused.
const DISRUPTED_PODS_MAX: usize = 2000;
/// Attempts to decrement a budget that other evictions are changing.
const BUDGET_ATTEMPTS_MAX: usize = 20;

/// kube's 429 message when a disruption budget forbids an eviction.
pub const VIOLATES_BUDGET: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let eviction = read_eviction(head.content_type.as_deref(), body)?;
    let api_version = eviction.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if !matches!(api_version, "" | "policy/v1" | "policy/v1beta1") {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({api_version}) does not match the expected API version (policy/v1)"
        )));
    }
    if metadata(&eviction).get("name").and_then(Value::as_str).unwrap_or("") != name {
        return Err(ApiError::BadRequest("name in URL does not match name in Eviction object".into()));
    }
    let options = delete_options(backend, head, &eviction)?;
    let pod_resolved = Resolved { subresource: None, ..resolved.clone() };
    let pod_target = || Target::new("", "pods", &name);
    let current = read_current(backend, &pod_resolved.key(&name), backend.committed_revision())
        .await?
        .ok_or_else(|| ApiError::NotFound(pod_target()))?;
    let pod: Object = serde_json::from_slice(&current.json)
        .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
    let phase = pod.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str).unwrap_or("");
    let deleting = metadata(&pod).get("deletionTimestamp").is_some_and(|t| !t.is_null());
    let pod_version = current.mod_revision.0.to_string();
    if matches!(phase, "Succeeded" | "Failed" | "Pending") || deleting {
        // Already disrupted (or never running): no budget to check. A
        // pending pod is deleted only as it was read, so that it cannot
        // have become ready meanwhile.
        let mut options = options.clone();
        if phase == "Pending" && !deleting && options.resource_version.is_none() {
            options.resource_version = Some(pod_version);
        }
        delete::delete_object(backend, None, &pod_resolved, &options).await?;
        return Ok(created_status());
    }
    let labels: Vec<(String, String)> = metadata(&pod)
        .get("labels")
        .and_then(Value::as_object)
        .map(|l| l.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default();
    let registry = backend.registry();
    let budgets_info = registry.lookup("policy", "v1", "poddisruptionbudgets").ok_or(ApiError::PathNotFound)?.clone();
    let budgets: Vec<_> = delete::list_current(backend, &budgets_info, Some(&namespace), None)
        .await?
        .into_iter()
        .filter(|b| {
            serde_json::from_slice::<Value>(&b.json)
                .is_ok_and(|v| selector_matches(v.get("spec").and_then(|s| s.get("selector")), &labels))
        })
        .collect();
    if budgets.len() > 1 {
        return Err(ApiError::Internal(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
        ));
    }
    let mut delete_options = options.clone();
    let mut unready_pod = false;
    if let Some(budget) = budgets.first() {
        let budget_name = budget.meta().name().to_string();
        let stored: Value = serde_json::from_slice(&budget.json).unwrap_or(Value::Null);
        let status = &stored["status"];
        let number = |v: &Value| v.as_i64().unwrap_or(0);
        let always_allow = stored["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
        let enough_healthy = number(&status["currentHealthy"]) >= number(&status["desiredHealthy"])
            && number(&status["desiredHealthy"]) > 0;
        if !pod_ready(&pod) && (always_allow || enough_healthy) {
            // An unready pod does not count as healthy: no decrement, but
            // the pod must not have become ready since it was read.
            unready_pod = true;
        } else {
            let budget_resolved = delete::resolved_for(&budgets_info, budget);
            let now = crate::api::object::timestamp(backend.now());
            decrement(backend, &budget_resolved, &name, &now, options.dry_run_all).await?;
        }
        if unready_pod && delete_options.resource_version.is_none() {
            delete_options.resource_version = Some(pod_version);
        }
        return match delete::delete_object(backend, None, &pod_resolved, &delete_options).await {
            Err(ApiError::Conflict { .. }) if unready_pod && options.resource_version.is_none() => {
                Err(still_processing(&budget_name))
            }
            Err(e) => Err(e),
            Ok(_) => Ok(created_status()),
        };
    }
    delete::delete_object(backend, None, &pod_resolved, &delete_options).await?;
    Ok(created_status())
}

/// The Eviction body as JSON: JSON, YAML or CBOR through the common
/// decoder; Protobuf (`policy/v1.Eviction`: metadata = 1, deleteOptions = 2)
/// read here, the schema table holding stored kinds only.
fn read_eviction(content_type: Option<&str>, body: &[u8]) -> Result<Object, ApiError> {
    if crate::api::object::media_type(content_type) == "application/vnd.kubernetes.protobuf" {
        return super::review::protobuf_eviction(body);
    }
    decode_body(content_type, body, "Eviction")
}

/// The Eviction's `deleteOptions`, parsed and validated as a DELETE's body
/// with the request's query (`dryRun`).
fn delete_options(backend: &impl Backend, head: &RequestHead, eviction: &Object) -> Result<DeleteOptions, ApiError> {
    let options = eviction.get("deleteOptions").filter(|v| !v.is_null()).cloned().unwrap_or(json!({}));
    let body = serde_json::to_vec(&options).map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut json_head = head.clone();
    json_head.content_type = Some("application/json".into());
    json_head.params.grace_period_seconds = None;
    json_head.params.propagation_policy = None;
    let mut parsed =
        delete::parse_options(&body, &json_head, backend.config().allow_unsafe_malformed_object_deletion, false)?;
    parsed.dry_run_all |= head.params.dry_run_all;
    Ok(parsed)
}

/// kube's `IsPodReady`: the `Ready` condition is `True`.
fn pod_ready(pod: &Object) -> bool {
    pod.get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// Whether a `metav1.LabelSelector` matches `labels`. A missing or empty
/// selector matches nothing here (kube: a budget must not cover every pod
/// by accident); an unknown operator matches nothing.
pub fn selector_matches(selector: Option<&Value>, labels: &[(String, String)]) -> bool {
    let Some(selector) = selector.filter(|s| s.is_object()) else { return false };
    let label = |k: &str| labels.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    if match_labels.is_none_or(|m| m.is_empty()) && expressions.is_none_or(|e| e.is_empty()) {
        return false;
    }
    if let Some(m) = match_labels {
        if !m.iter().all(|(k, v)| label(k) == v.as_str()) {
            return false;
        }
    }
    for e in expressions.into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or("");
        let values: Vec<&str> =
            e["values"].as_array().map(|v| v.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let ok = match e["operator"].as_str().unwrap_or("") {
            "In" => label(key).is_some_and(|v| values.contains(&v)),
            "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// kube's 429 while a budget's controller has not caught up.
fn still_processing(budget: &str) -> ApiError {
    ApiError::TooManyRequestsBecause {
        message: VIOLATES_BUDGET.into(),
        causes: vec![Cause {
            reason: "DisruptionBudget".into(),
            message: format!("The disruption budget {budget} is still being processed by the server."),
            field: String::new(),
        }],
        retry_after_seconds: 10,
    }
}

/// What a budget's status allows for one more eviction of `pod`: kube's
/// `checkAndDecrement` on the stored budget. `Ok` carries the budget to
/// write (decremented, the pod recorded in `disruptedPods` at `now`).
pub fn check_and_decrement(budget: &Object, pod: &str, now: &str) -> Result<Object, ApiError> {
    let name = metadata(budget).get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let status = budget.get("status").cloned().unwrap_or(json!({}));
    let number = |v: &Value| v.as_i64().unwrap_or(0);
    let generation = metadata(budget).get("generation").and_then(Value::as_i64).unwrap_or(0);
    if number(&status["observedGeneration"]) < generation {
        return Err(still_processing(&name));
    }
    let allowed = number(&status["disruptionsAllowed"]);
    let forbidden = |message: &str| ApiError::Forbidden {
        target: Target::new("policy", "poddisruptionbudget", &name),
        message: message.into(),
    };
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    if status["disruptedPods"].as_object().is_some_and(|d| d.len() > DISRUPTED_PODS_MAX) {
        return Err(forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller"));
    }
    if allowed == 0 {
        return Err(ApiError::TooManyRequestsBecause {
            message: VIOLATES_BUDGET.into(),
            causes: vec![Cause {
                reason: "DisruptionBudget".into(),
                message: format!(
                    "The disruption budget {name} needs {} healthy pods and has {} currently",
                    number(&status["desiredHealthy"]),
                    number(&status["currentHealthy"])
                ),
                field: String::new(),
            }],
            retry_after_seconds: 0,
        });
    }
    let mut updated = budget.clone();
    if !updated.get("status").is_some_and(Value::is_object) {
        updated.insert("status".into(), json!({}));
    }
    let Some(Value::Object(new_status)) = updated.get_mut("status") else { return Ok(updated) };
    new_status.insert("disruptionsAllowed".into(), json!(allowed - 1));
    if allowed - 1 == 0 {
        // kube's UpdateDisruptionAllowedCondition.
        let observed = number(&status["observedGeneration"]);
        if !new_status.get("conditions").is_some_and(Value::is_array) {
            new_status.insert("conditions".into(), json!([]));
        }
        if let Some(Value::Array(conditions)) = new_status.get_mut("conditions") {
            let condition = json!({"type": "DisruptionAllowed", "status": "False", "observedGeneration": observed,
                "lastTransitionTime": now, "reason": "InsufficientPods", "message": ""});
            match conditions.iter_mut().find(|c| c["type"] == "DisruptionAllowed") {
                Some(existing) => {
                    let mut condition = condition;
                    if existing["status"] == "False" {
                        condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
                    }
                    *existing = condition;
                }
                None => conditions.push(condition),
            }
        }
    }
    if !new_status.get("disruptedPods").is_some_and(Value::is_object) {
        new_status.insert("disruptedPods".into(), json!({}));
    }
    if let Some(Value::Object(disrupted)) = new_status.get_mut("disruptedPods") {
        disrupted.insert(pod.to_string(), json!(now));
    }
    Ok(updated)
}

/// Decrements the budget `resolved` names for the eviction of `pod`,
/// re-reading it when another writer changed it meanwhile.
async fn decrement(
    backend: &impl Backend,
    resolved: &Resolved,
    pod: &str,
    now: &str,
    dry_run: bool,
) -> Result<(), ApiError> {
    let name = resolved.name.clone().unwrap_or_default();
    let key = resolved.key(&name);
    for _ in 0..BUDGET_ATTEMPTS_MAX {
        let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else {
            return Err(ApiError::NotFound(resolved.target()));
        };
        let stored: Object = serde_json::from_slice(&current.json)
            .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
        let mut updated = check_and_decrement(&stored, pod, now)?;
        if dry_run {
            return Ok(());
        }
        metadata_mut(&mut updated).shift_remove("resourceVersion");
        let mut updated = order_fields(updated);
        crate::strategy::finish(&resolved.info, &mut updated);
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::ModRevision(current.mod_revision),
            operation: Operation::Put(storage_value(&updated)?),
        };
        if append_read_modify_write(backend, proposal, true, resolved).await?.is_some() {
            return Ok(());
        }
    }
    Err(ApiError::Timeout {
        message: format!("couldn't update PodDisruptionBudget {name:?} due to conflicts"),
        retry_after_seconds: 10,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Object {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_budget_allows_what_its_status_allows() {
        let budget = object(json!({"metadata": {"name": "web", "generation": 2},
            "status": {"observedGeneration": 2, "disruptionsAllowed": 1, "desiredHealthy": 2, "currentHealthy": 3}}));
        let after = check_and_decrement(&budget, "p1", "2030-01-01T00:00:00Z").unwrap();
        assert_eq!(after["status"]["disruptionsAllowed"], 0);
        assert_eq!(after["status"]["disruptedPods"], json!({"p1": "2030-01-01T00:00:00Z"}));
        assert_eq!(after["status"]["conditions"][0]["reason"], "InsufficientPods");
        let refused = check_and_decrement(&after, "p2", "2030-01-01T00:00:01Z").unwrap_err();
        assert_eq!(refused.code(), 429);
        assert_eq!(refused.message(), VIOLATES_BUDGET);
        let status: Value = serde_json::from_slice(&refused.to_status_json()).unwrap();
        assert_eq!(
            status["details"]["causes"],
            json!([{"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 3 currently"}])
        );
        assert_eq!(refused.retry_after_seconds(), None);
        // A budget its controller has not observed yet: retry in 10 s.
        let stale = object(
            json!({"metadata": {"name": "web", "generation": 3}, "status": {"observedGeneration": 2, "disruptionsAllowed": 5}}),
        );
        let e = check_and_decrement(&stale, "p", "t").unwrap_err();
        assert_eq!((e.code(), e.retry_after_seconds()), (429, Some(10)));
        let negative = object(json!({"metadata": {"name": "n"}, "status": {"disruptionsAllowed": -1}}));
        assert_eq!(check_and_decrement(&negative, "p", "t").unwrap_err().code(), 403);
    }

    #[test]
    fn selectors_match_as_label_selectors_do() {
        let labels = vec![("app".to_string(), "web".to_string()), ("tier".to_string(), "a".to_string())];
        let m = |v: Value| selector_matches(Some(&v), &labels);
        assert!(m(json!({"matchLabels": {"app": "web"}})));
        assert!(!m(json!({"matchLabels": {"app": "db"}})));
        assert!(!m(json!({})), "an empty selector matches nothing");
        assert!(!selector_matches(None, &labels));
        assert!(m(json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]})));
        assert!(m(json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]})));
        assert!(!m(json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]})));
        assert!(!m(json!({"matchExpressions": [{"key": "tier", "operator": "Bogus"}]})));
    }
}
