//! The scheduler's bind: POST of a `Binding` to `pods/NAME/binding` or to
//! the legacy `bindings` collection of a namespace, as kube-apiserver's
//! `BindingREST` serves it. The pod gets `spec.nodeName` (the Binding's
//! target), the Binding's annotations merged into its own, and a
//! `PodScheduled=True` condition; the answer is a `Success` Status (201).
//!
//! Also the read-modify-write loop the control-plane subresources share
//! ([`guaranteed_update`]): kube's `GuaranteedUpdate`, which bypasses the
//! kind's update strategy (a bind changes `spec.nodeName`, which a PUT of
//! the pod may not).
//!
//! Invariant: a pod already bound, being deleted, or with scheduling gates
//! is never changed (409 Conflict on `pods/binding`, kube's wording); the
//! Binding's `metadata.uid` and `metadata.resourceVersion`, when given, are
//! preconditions on the pod.

use super::{append_read_modify_write, modified, read_current, Resolved};
use crate::api::object::{decode_body, metadata, metadata_mut, order_fields, storage_value, Object};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::log::{Operation, Precondition, Proposal};
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};

/// Attempts of a read-modify-write that loses to other writers before 409.
const UPDATE_ATTEMPTS_MAX: usize = 16;

/// Preconditions on the stored object (kube's `storage.Preconditions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

impl Preconditions {
    fn given(&self) -> bool {
        self.uid.is_some() || self.resource_version.is_some()
    }

    /// kube's precondition failure (409 on the object), or `Ok`.
    pub fn check(&self, resolved: &Resolved, current: &crate::cache::CachedObject) -> Result<(), ApiError> {
        if let Some(uid) = &self.uid {
            if *uid != current.meta().uid() {
                return Err(ApiError::Conflict {
                    target: resolved.target(),
                    message: format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        current.meta().uid()
                    ),
                });
            }
        }
        if let Some(rv) = &self.resource_version {
            if *rv != current.mod_revision.0.to_string() {
                return Err(ApiError::Conflict {
                    target: resolved.target(),
                    message: format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                        current.mod_revision
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Reads the object `resolved` names, lets `change` modify it, and writes it
/// back conditionally on what was read, again on a lost race (never when a
/// precondition was given: that is 409). `change` returning `Ok(false)`
/// leaves the object as it is. Answers the stored JSON. No update strategy
/// runs: the caller's change is the whole rule, as with kube's
/// `GuaranteedUpdate`.
pub async fn guaranteed_update<F>(
    backend: &impl Backend,
    resolved: &Resolved,
    preconditions: &Preconditions,
    dry_run: bool,
    mut change: F,
) -> Result<Bytes, ApiError>
where
    F: FnMut(&mut Object) -> Result<bool, ApiError>,
{
    let name = resolved.name.clone().unwrap_or_default();
    let key = resolved.key(&name);
    for _ in 0..UPDATE_ATTEMPTS_MAX {
        let current = read_current(backend, &key, backend.committed_revision())
            .await?
            .ok_or_else(|| ApiError::NotFound(resolved.target()))?;
        preconditions.check(resolved, &current)?;
        let mut object: Object = serde_json::from_slice(&current.json)
            .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
        if !change(&mut object)? {
            return Ok(current.json.clone());
        }
        let mut object = order_fields(object);
        crate::strategy::finish(&resolved.info, &mut object);
        if dry_run {
            crate::cache::set_resource_version(metadata_mut(&mut object), current.mod_revision);
            return serde_json::to_vec(&object).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()));
        }
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::ModRevision(current.mod_revision),
            operation: Operation::Put(storage_value(&object)?),
        };
        let Some(entry) = append_read_modify_write(backend, proposal, !preconditions.given(), resolved).await? else {
            continue;
        };
        return super::create::stored_after(backend, &key, entry.revision, &object).await;
    }
    Err(modified(resolved))
}

/// The `Success` Status a create of a Binding or an Eviction answers (201).
pub fn created_status() -> Response<ResponseBody> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    respond(StatusCode::CREATED, "application/json", Bytes::from(body.to_string()))
}

/// POST `pods/NAME/binding` (`resolved` names the pod) or the `bindings`
/// collection (`resolved` names the collection; the pod is the Binding's name).
pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let registry = backend.registry();
    let pods = registry.lookup("", "v1", "pods").ok_or(ApiError::PathNotFound)?.clone();
    let bindings = registry.lookup("", "v1", "bindings").ok_or(ApiError::PathNotFound)?.clone();
    let mut binding = decode_body(head.content_type.as_deref(), body, "Binding")?;
    crate::api::object::check_type_meta(&mut binding, &bindings)?;
    let body_name = metadata(&binding).get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let name = match (&resolved.name, resolved.subresource.as_deref()) {
        (Some(url_name), Some("binding")) => {
            if *url_name != body_name {
                return Err(ApiError::BadRequest("name in URL does not match name in Binding object".into()));
            }
            url_name.clone()
        }
        _ if body_name.is_empty() => {
            return Err(crate::api::object::invalid(
                &bindings,
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: name or generateName is required".into(),
                    field: "metadata.name".into(),
                }],
            ))
        }
        _ => body_name,
    };
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let given_namespace = metadata(&binding).get("namespace").and_then(Value::as_str).unwrap_or("");
    if !given_namespace.is_empty() && given_namespace != namespace {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request".into(),
        ));
    }
    let node = validate(&binding).map_err(|causes| crate::api::object::invalid(&bindings, &name, causes))?;
    let annotations: Vec<(String, String)> = metadata(&binding)
        .get("annotations")
        .and_then(Value::as_object)
        .map(|a| a.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default();
    let text = |field: &str| {
        metadata(&binding).get(field).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
    };
    let preconditions = Preconditions { uid: text("uid"), resource_version: text("resourceVersion") };
    let pod = Resolved {
        info: pods,
        namespace: Some(namespace),
        name: Some(name.clone()),
        subresource: Some("binding".into()),
    };
    let now = crate::api::object::timestamp(backend.now());
    let conflict = |message: String| ApiError::Conflict { target: Target::new("", "pods/binding", &name), message };
    guaranteed_update(backend, &pod, &preconditions, head.params.dry_run_all, |object| {
        bind(object, &name, &node, &annotations, &now).map_err(conflict)?;
        Ok(true)
    })
    .await
    .map_err(|e| match e {
        // kube's pod key is `pods`, not the subresource, in a not-found.
        ApiError::NotFound(_) => ApiError::NotFound(Target::new("", "pods", &name)),
        ApiError::Conflict { message, .. } if message.starts_with("Precondition failed") => {
            ApiError::Conflict { target: Target::new("", "pods", &name), message }
        }
        other => other,
    })?;
    Ok(created_status())
}

/// kube's `ValidatePodBinding`: the target names a node (its kind, when
/// given, is `Node`). Answers the node's name.
fn validate(binding: &Object) -> Result<String, Vec<Cause>> {
    let target = binding.get("target").cloned().unwrap_or(Value::Null);
    let kind = target.get("kind").and_then(Value::as_str).unwrap_or("");
    let node = target.get("name").and_then(Value::as_str).unwrap_or("");
    let mut causes = Vec::new();
    if !kind.is_empty() && kind != "Node" {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!("Unsupported value: {kind:?}: supported values: \"Node\", \"<empty>\""),
            field: "target.kind".into(),
        });
    }
    if node.is_empty() {
        causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: "target.name".into(),
        });
    }
    if causes.is_empty() {
        Ok(node.to_string())
    } else {
        Err(causes)
    }
}

/// The bind itself on the stored pod: kube's `setPodNodeAndMetadata`.
/// `Err` carries the conflict's message.
pub fn bind(
    pod: &mut Object,
    name: &str,
    node: &str,
    annotations: &[(String, String)],
    now: &str,
) -> Result<(), String> {
    if metadata(pod).get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(format!("pod {name} is being deleted, cannot be assigned to a host"));
    }
    let spec = pod.get("spec").cloned().unwrap_or(Value::Null);
    let bound = spec.get("nodeName").and_then(Value::as_str).unwrap_or("");
    if !bound.is_empty() {
        return Err(format!("pod {name} is already assigned to node {bound:?}"));
    }
    if spec.get("schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty()) {
        return Err(format!("pod {name} has non-empty .spec.schedulingGates"));
    }
    if !pod.get("spec").is_some_and(Value::is_object) {
        pod.insert("spec".into(), json!({}));
    }
    if let Some(Value::Object(spec)) = pod.get_mut("spec") {
        spec.insert("nodeName".into(), json!(node));
    }
    if !annotations.is_empty() {
        let meta = metadata_mut(pod);
        if !meta.get("annotations").is_some_and(Value::is_object) {
            meta.insert("annotations".into(), json!({}));
        }
        if let Some(Value::Object(map)) = meta.get_mut("annotations") {
            for (k, v) in annotations {
                map.insert(k.clone(), json!(v));
            }
        }
    }
    set_condition(pod, "PodScheduled", "True", now);
    Ok(())
}

/// kube's `UpdatePodCondition`: the condition replaces the one of its type;
/// its `lastTransitionTime` is now when it is new or its status changed,
/// the old one otherwise.
pub fn set_condition(pod: &mut Object, kind: &str, status: &str, now: &str) {
    if !pod.get("status").is_some_and(Value::is_object) {
        pod.insert("status".into(), json!({}));
    }
    let Some(Value::Object(pod_status)) = pod.get_mut("status") else { return };
    if !pod_status.get("conditions").is_some_and(Value::is_array) {
        pod_status.insert("conditions".into(), json!([]));
    }
    let Some(Value::Array(conditions)) = pod_status.get_mut("conditions") else { return };
    let mut condition = json!({"type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": now});
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            if existing["status"] == status {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: Value) -> Object {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_bind_sets_the_node_the_condition_and_the_annotations() {
        let mut p = pod(json!({"metadata": {"name": "p", "annotations": {"a": "1"}},
            "spec": {"containers": []},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "lastProbeTime": null, "lastTransitionTime": "2020-01-01T00:00:00Z", "reason": "Unschedulable"}]}}));
        bind(&mut p, "p", "node-1", &[("b".into(), "2".into())], "2030-01-01T00:00:00Z").unwrap();
        assert_eq!(p["spec"]["nodeName"], "node-1");
        assert_eq!(p["metadata"]["annotations"], json!({"a": "1", "b": "2"}));
        assert_eq!(
            p["status"]["conditions"],
            json!([{"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                "lastTransitionTime": "2030-01-01T00:00:00Z"}])
        );
        assert_eq!(
            bind(&mut p, "p", "node-2", &[], "2031-01-01T00:00:00Z"),
            Err("pod p is already assigned to node \"node-1\"".into())
        );
    }

    #[test]
    fn refused_binds() {
        let mut gated = pod(json!({"metadata": {"name": "g"}, "spec": {"schedulingGates": [{"name": "x"}]}}));
        assert_eq!(bind(&mut gated, "g", "n", &[], "t"), Err("pod g has non-empty .spec.schedulingGates".into()));
        let mut deleting = pod(json!({"metadata": {"name": "d", "deletionTimestamp": "2030-01-01T00:00:00Z"}}));
        assert_eq!(
            bind(&mut deleting, "d", "n", &[], "t"),
            Err("pod d is being deleted, cannot be assigned to a host".into())
        );
        // A pod with no spec at all still binds (bad input never panics).
        let mut bare = pod(json!({"metadata": {"name": "b"}, "spec": 3}));
        bind(&mut bare, "b", "n", &[], "t").unwrap();
        assert_eq!(bare["status"]["conditions"][0]["status"], "True");
        assert!(validate(&pod(json!({"target": {"kind": "Pod"}}))).unwrap_err().len() == 2);
        assert_eq!(validate(&pod(json!({"target": {"name": "n"}}))), Ok("n".into()));
    }

    #[test]
    fn a_condition_keeps_its_transition_time_when_its_status_stays() {
        let mut p = pod(json!({"status": {"conditions": [{"type": "PodScheduled", "status": "True",
            "lastTransitionTime": "old"}]}}));
        set_condition(&mut p, "PodScheduled", "True", "new");
        assert_eq!(p["status"]["conditions"][0]["lastTransitionTime"], "old");
        set_condition(&mut p, "Ready", "False", "new");
        assert_eq!(p["status"]["conditions"][1]["lastTransitionTime"], "new");
    }
}
