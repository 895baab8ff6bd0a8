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
    let needs = plugins::needs(plugins, &attrs, object);
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
    head.warnings.borrow_mut().append(&mut admitted.warnings);
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
    if let Some(account) = &needs.service_account {
        inputs.service_account = get(backend, ObjectKey::new("", "serviceaccounts", attrs.namespace, account)).await?;
    }
    Ok(inputs)
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
