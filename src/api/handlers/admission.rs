//! The admission plugins' I/O: reads, through the `Backend`, the objects the
//! pure plugins (`strategy::admission`) ask for (the namespace, its
//! LimitRanges and ResourceQuotas, the PriorityClasses and StorageClasses, a
//! ServiceAccount), runs the mutating pass before the registry strategy and
//! the validating pass after it, as kube-apiserver's handlers do, records the
//! plugins' warnings for the response, and writes the ResourceQuotas' new
//! `status.used` before the object is stored.
//!
//! Invariant: objects are read by their keys (`ObjectKey` and collection
//! prefixes), so a plugin works as soon as its resource is stored, whether or
//! not it is served; every list is bounded by `admission_list_objects_max`.
//! Invariant: quota usage is written only for writes that will be stored
//! (never on dry-run), each quota conditional on the version read; a
//! concurrent change re-reads and re-checks.

use super::{append_error, backend_error, read_current, Resolved};
use crate::api::object::{order_fields, storage_value};
use crate::api::status::ApiError;
use crate::api::{Backend, RequestHead};
use crate::log::{AppendError, Operation as LogOperation, Precondition, Proposal, Revision};
use crate::strategy::admission::{self as plugins, Attributes, Inputs, Needs, Operation};
use crate::strategy::Object;
use crate::types::key::{collection_prefix, ObjectKey, ShardId};

/// Attempts at writing the quotas' usage when other writers change them
/// between the read and the conditional append; each attempt re-reads the
/// namespace's quotas and re-checks. kube-apiserver's quota evaluator
/// retries its batch the same way.
const QUOTA_UPDATE_ATTEMPTS_MAX: usize = 8;

/// What the mutating pass read, carried to the validating pass.
pub struct Admission {
    operation: Operation,
    inputs: Inputs,
}

fn attributes<'a>(head: &RequestHead, resolved: &'a Resolved, name: &'a str, operation: Operation) -> Attributes<'a> {
    Attributes {
        operation,
        group: &resolved.info.group,
        resource: &resolved.info.resource,
        subresource: resolved.subresource.as_deref(),
        namespace: resolved.namespace.as_deref().unwrap_or(""),
        name,
        dry_run: head.params.dry_run_all,
    }
}

/// The mutating pass over `object` (a create when `old` is `None`).
pub async fn mutate(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    object: &mut Object,
    old: Option<&Object>,
) -> Result<Admission, ApiError> {
    let operation = if old.is_some() { Operation::Update } else { Operation::Create };
    let plugins = &backend.config().admission_plugins;
    let attrs = attributes(head, resolved, name, operation);
    let needs = plugins::needs(plugins, &attrs, object, old);
    let inputs = read(backend, &attrs, &needs).await?;
    plugins::mutate(plugins, &attrs, object, old, &inputs).map_err(|r| super::rejection(&resolved.info, name, r))?;
    Ok(Admission { operation, inputs })
}

/// The validating pass over the object as it will be stored; records the
/// warnings and, unless this is a dry run, writes the quotas' usage.
pub async fn validate(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    name: &str,
    admission: Admission,
    object: &Object,
    old: Option<&Object>,
) -> Result<(), ApiError> {
    let plugins = &backend.config().admission_plugins;
    let attrs = attributes(head, resolved, name, admission.operation);
    let refused = |r| super::rejection(&resolved.info, name, r);
    let mut inputs = admission.inputs;
    let mut admitted = plugins::validate(plugins, &attrs, object, old, &inputs).map_err(refused)?;
    {
        // A write retried after a conflict is admitted again: warn once.
        let mut warnings = head.warnings.borrow_mut();
        for warning in admitted.warnings.drain(..) {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    if attrs.dry_run {
        return Ok(());
    }
    for _ in 0..QUOTA_UPDATE_ATTEMPTS_MAX {
        if write_quotas(backend, &admitted.quota_updates).await? {
            return Ok(());
        }
        // Another writer changed a quota: read them again and re-check.
        let namespace = attrs.namespace;
        inputs.resource_quotas =
            list(backend, "", "resourcequotas", namespace).await?.into_iter().map(|(o, _)| o).collect();
        admitted.quota_updates =
            plugins::quota::admit(&attrs, object, old, &inputs.resource_quotas).map_err(refused)?;
    }
    Err(ApiError::Conflict {
        target: crate::api::status::Target::new("", "resourcequotas", ""),
        message: "the quota usage kept changing; please retry".into(),
    })
}

/// Appends each quota's new status, conditional on the version read.
/// `Ok(false)` when one of them changed meanwhile (those before it are
/// written: usage may be overcounted until the quota controller recounts, as
/// in kube-apiserver when a write fails after admission).
async fn write_quotas(backend: &impl Backend, quotas: &[Object]) -> Result<bool, ApiError> {
    for quota in quotas {
        let namespace = plugins::text(quota, &["metadata", "namespace"]);
        let name = plugins::text(quota, &["metadata", "name"]);
        let key = ObjectKey::new("", "resourcequotas", namespace, name);
        let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else {
            return Ok(false);
        };
        let read_version = plugins::text(quota, &["metadata", "resourceVersion"]);
        if current.mod_revision.0.to_string() != read_version {
            return Ok(false);
        }
        let proposal = Proposal {
            key: key.encode(),
            precondition: Precondition::ModRevision(current.mod_revision),
            operation: LogOperation::Put(storage_value(&order_fields(quota.clone()))?),
        };
        match backend.append(proposal).await {
            Ok(_) => {}
            Err(AppendError::Conflict { .. }) => return Ok(false),
            Err(e) => return Err(append_error(e)),
        }
    }
    Ok(true)
}

/// Reads what the plugins asked for.
async fn read(backend: &impl Backend, attrs: &Attributes<'_>, needs: &Needs) -> Result<Inputs, ApiError> {
    let mut inputs = Inputs { name_suffix: crate::api::object::generated_suffix(rand::random()), ..Inputs::default() };
    if !needs.any() {
        return Ok(inputs);
    }
    let objects = |found: Vec<(Object, Revision)>| found.into_iter().map(|(o, _)| o).collect::<Vec<_>>();
    if needs.namespace {
        inputs.namespace = get(backend, ObjectKey::new("", "namespaces", "", attrs.namespace)).await?;
    }
    if needs.priority_classes {
        inputs.priority_classes = objects(list(backend, "scheduling.k8s.io", "priorityclasses", "").await?);
    }
    if needs.limit_ranges {
        inputs.limit_ranges = objects(list(backend, "", "limitranges", attrs.namespace).await?);
    }
    if needs.storage_classes {
        inputs.storage_classes = objects(list(backend, "storage.k8s.io", "storageclasses", "").await?);
    }
    if needs.resource_quotas {
        inputs.resource_quotas = objects(list(backend, "", "resourcequotas", attrs.namespace).await?);
    }
    if needs.ingress_classes {
        inputs.ingress_classes = objects(list(backend, "networking.k8s.io", "ingressclasses", "").await?);
    }
    if let Some(node) = &needs.node {
        inputs.node = get(backend, ObjectKey::new("", "nodes", "", node)).await?;
    }
    if let Some(class) = &needs.runtime_class {
        inputs.runtime_class = get(backend, ObjectKey::new("node.k8s.io", "runtimeclasses", "", class)).await?;
    }
    if needs.namespace_pods {
        // The namespace's own name: its pods live under it.
        let (pods, total) = pods_of(backend, attrs.name).await?;
        inputs.namespace_pods = pods;
        inputs.namespace_pods_total = total;
    }
    if let Some(account) = &needs.service_account {
        inputs.service_account = get(backend, ObjectKey::new("", "serviceaccounts", attrs.namespace, account)).await?;
    }
    Ok(inputs)
}

/// The first pods of a namespace (at most
/// `podsecurity::NAMESPACE_PODS_CHECKED_MAX`, spread over the shards) and
/// how many it holds.
async fn pods_of(backend: &impl Backend, namespace: &str) -> Result<(Vec<Object>, usize), ApiError> {
    let prefix = collection_prefix("", "pods", Some(namespace));
    let revision = backend.committed_revision();
    let per_shard = plugins::podsecurity::NAMESPACE_PODS_CHECKED_MAX / usize::from(backend.shard_count().max(1));
    let (mut pods, mut total) = (Vec::new(), 0);
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let (found, count) = backend
            .on_shard(ShardId(shard), revision, move |store| {
                let count = store.count_at(prefix.as_bytes(), store.applied(), std::ops::Bound::Unbounded).unwrap_or(0);
                (store.list(prefix.as_bytes(), None, per_shard), count)
            })
            .await
            .map_err(backend_error)?;
        pods.extend(found.iter().filter_map(|o| serde_json::from_slice::<Object>(&o.json).ok()));
        total += count;
    }
    Ok((pods, total))
}

async fn get(backend: &impl Backend, key: ObjectKey) -> Result<Option<Object>, ApiError> {
    let found = read_current(backend, &key, backend.committed_revision()).await?;
    Ok(found.and_then(|o| serde_json::from_slice(&o.json).ok()))
}

/// The current objects of a collection in `namespace` (`""`: cluster-scoped),
/// in name order, each with its mod revision; at most
/// `admission_list_objects_max`, past which the write is refused (503).
async fn list(
    backend: &impl Backend,
    group: &str,
    resource: &str,
    namespace: &str,
) -> Result<Vec<(Object, Revision)>, ApiError> {
    let limit = backend.config().admission_list_objects_max;
    let prefix = collection_prefix(group, resource, Some(namespace));
    let revision = backend.committed_revision();
    let mut found = Vec::new();
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let objects = backend
            .on_shard(ShardId(shard), revision, move |store| store.list(prefix.as_bytes(), None, limit + 1))
            .await
            .map_err(backend_error)?;
        found.extend(objects);
        if found.len() > limit {
            return Err(ApiError::ServiceUnavailable(format!(
                "admission: more than {limit} {resource} to read in {namespace:?}"
            )));
        }
    }
    found.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(found.into_iter().filter_map(|o| Some((serde_json::from_slice(&o.json).ok()?, o.mod_revision))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;
    use bytes::Bytes;
    use futures_lite::future::block_on;
    use serde_json::{json, Value};
    use std::rc::Rc;

    fn backend() -> Rc<MemoryBackend> {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        Rc::new(MemoryBackend::new(config, 2))
    }

    /// Sends a request; returns the status, the body and the Warning headers.
    fn request(
        backend: &Rc<MemoryBackend>,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value, Vec<String>) {
        let answer = crate::api::testing::send_json(backend, method, path, body);
        (answer.code, answer.body, answer.warnings)
    }

    /// Stores an object of a resource that is not served (yet) by its key,
    /// as kube-controller-manager or a later version of Shardline would.
    fn store(backend: &Rc<MemoryBackend>, resource: &str, namespace: &str, object: Value) {
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        let key = ObjectKey::new("", resource, namespace, &name).encode();
        let value = Bytes::from(serde_json::to_vec(&object).unwrap());
        let proposal = Proposal { key, precondition: Precondition::Absent, operation: LogOperation::Put(value) };
        block_on(backend.append(proposal)).expect("stored");
    }

    fn get(backend: &Rc<MemoryBackend>, resource: &str, namespace: &str, name: &str) -> Value {
        let key = ObjectKey::new("", resource, namespace, name);
        let found = block_on(read_current(backend.as_ref(), &key, backend.committed_revision())).unwrap().unwrap();
        serde_json::from_slice(&found.json).unwrap()
    }

    fn pod(name: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
    }

    #[test]
    fn quota_usage_is_recorded_and_enforced() {
        let backend = backend();
        store(
            &backend,
            "resourcequotas",
            "default",
            json!({
                "kind": "ResourceQuota", "apiVersion": "v1",
                "metadata": {"name": "counts", "namespace": "default"},
                "spec": {"hard": {"configmaps": "1"}},
                "status": {"hard": {"configmaps": "1"}, "used": {"configmaps": "0"}}
            }),
        );
        let cms = "/api/v1/namespaces/default/configmaps";
        let (code, body, _) =
            request(&backend, "POST", &format!("{cms}?dryRun=All"), Some(json!({"metadata": {"name": "dry"}})));
        assert_eq!(code, 201, "{body}");
        assert_eq!(
            get(&backend, "resourcequotas", "default", "counts")["status"]["used"]["configmaps"],
            "0",
            "dry run"
        );
        let (code, body, _) = request(&backend, "POST", cms, Some(json!({"metadata": {"name": "a"}})));
        assert_eq!(code, 201, "{body}");
        assert_eq!(get(&backend, "resourcequotas", "default", "counts")["status"]["used"]["configmaps"], "1");
        let (code, body, _) = request(&backend, "POST", cms, Some(json!({"metadata": {"name": "b"}})));
        assert_eq!(code, 403, "{body}");
        assert_eq!(
            body["message"],
            "configmaps \"b\" is forbidden: exceeded quota: counts, requested: configmaps=1, used: configmaps=1, \
             limited: configmaps=1"
        );
        assert_eq!(request(&backend, "GET", &format!("{cms}/b"), None).0, 404, "nothing stored");
    }

    #[test]
    fn limit_ranges_default_pod_resources() {
        let backend = backend();
        // tests/fixtures/kube-v1.36/lists/core_v1_limitranges.json
        store(
            &backend,
            "limitranges",
            "default",
            json!({
                "kind": "LimitRange", "apiVersion": "v1",
                "metadata": {"name": "limits", "namespace": "default"},
                "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}}]}
            }),
        );
        let (code, body, _) = request(&backend, "POST", "/api/v1/namespaces/default/pods", Some(pod("web")));
        assert_eq!(code, 201, "{body}");
        assert_eq!(
            body["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}})
        );
        assert_eq!(
            body["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            "LimitRanger plugin set: cpu request for container app; cpu limit for container app"
        );
    }

    #[test]
    fn pod_security_warnings_reach_the_response() {
        let backend = backend();
        let ns = json!({"metadata": {"name": "secure", "labels": {"pod-security.kubernetes.io/warn": "baseline"}}});
        assert_eq!(request(&backend, "POST", "/api/v1/namespaces", Some(ns)).0, 201);
        let mut privileged = pod("priv");
        privileged["spec"]["hostNetwork"] = json!(true);
        let (code, body, warnings) = request(&backend, "POST", "/api/v1/namespaces/secure/pods", Some(privileged));
        assert_eq!(code, 201, "{body}");
        assert_eq!(
            warnings,
            ["299 - \"would violate PodSecurity \\\"baseline:latest\\\": host namespaces (hostNetwork=true)\""]
        );
    }
}
