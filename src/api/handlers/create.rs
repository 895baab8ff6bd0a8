//! POST: create an object. Server-set fields as kube-apiserver sets them
//! (uid, creationTimestamp, generation, generateName), name validation, the
//! namespace must exist, and the append is conditional on the key's absence
//! so a concurrent create of the same name answers 409 AlreadyExists.

use super::{append_error, read_current, Resolved};
use crate::api::object::{
    self, check_type_meta, decode_body, generated_suffix, metadata_mut, new_uid, order_fields, storage_value,
    timestamp, Object,
};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::log::{AppendError, Operation, Precondition, Proposal, Revision};
use crate::types::key::ObjectKey;
use crate::types::validation;
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{json, Value};

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    // The response in the negotiated representation (JSON unless asked otherwise).
    let representation = crate::api::encode::for_write(head, &resolved.info)?;
    crate::api::encode::reencode(serve_json(backend, head, resolved, body).await?, &representation, &resolved.info)
        .await
}

async fn serve_json(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    let mut object = decode_body(head.content_type.as_deref(), body, &resolved.info.kind)?;
    check_type_meta(&mut object, &resolved.info)?;
    let warnings = crate::api::field_validation::check_body(head, &resolved.info, "CreateOptions", &mut object, body)?;
    let created = create_object(backend, head, resolved, object).await?;
    let created = super::versions::convert(&resolved.info, &created);
    let mut response = respond(StatusCode::CREATED, "application/json", created);
    crate::api::field_validation::add_warnings(&mut response, &warnings);
    Ok(response)
}

/// Checks the object's namespace against the request's; fills it in.
pub fn apply_namespace(object: &mut Object, resolved: &Resolved) -> Result<(), ApiError> {
    let namespace = resolved.namespace.clone().unwrap_or_default();
    let meta = metadata_mut(object);
    let given = meta.get("namespace").and_then(Value::as_str).unwrap_or("").to_string();
    if resolved.info.namespaced {
        if !given.is_empty() && given != namespace {
            return Err(ApiError::BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request".into(),
            ));
        }
        meta.insert("namespace".into(), json!(namespace));
    } else {
        meta.shift_remove("namespace");
    }
    Ok(())
}

/// Status causes for field errors.
pub fn causes(errors: Vec<validation::FieldError>) -> Vec<Cause> {
    errors
        .into_iter()
        .map(|e| Cause { reason: e.reason.cause_reason().to_string(), message: e.body(), field: e.field.clone() })
        .collect()
}

/// Validation of the name, generateName, labels, annotations and owner
/// references of an object of this resource.
pub fn metadata_causes(resolved: &Resolved, object: &Object) -> Result<Vec<Cause>, ApiError> {
    let meta = object::metadata(object);
    let text = |field: &str| meta.get(field).and_then(Value::as_str).unwrap_or("").to_string();
    let rule = validation::name_rule(&resolved.info.group, &resolved.info.resource);
    let mut errors = validation::validate_object_name(rule, &text("name"), &text("generateName"));
    errors.extend(validation::validate_labels(string_pairs(meta, "labels")?));
    errors.extend(validation::validate_annotations(string_pairs(meta, "annotations")?));
    if let Some(references) = meta.get("ownerReferences").and_then(Value::as_array) {
        errors.extend(validation::validate_owner_references(references));
    }
    Ok(causes(errors))
}

/// A metadata map of strings (labels, annotations) as pairs; other shapes are
/// a decoding error, as kube-apiserver reports them.
fn string_pairs<'a>(meta: &'a Object, field: &str) -> Result<Vec<(&'a str, &'a str)>, ApiError> {
    match meta.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.as_str(), s.as_str())),
                _ => Err(ApiError::BadRequest(format!(
                    "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{field} of type string",
                    json_type(v)
                ))),
            })
            .collect(),
        Some(other) => Err(ApiError::BadRequest(format!(
            "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{field} of type map[string]string",
            json_type(other)
        ))),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Creates `object` (already type-checked); returns the stored encoding.
/// The writer's manager is recorded in `managedFields` (an Update).
pub async fn create_object(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    object: Object,
) -> Result<Bytes, ApiError> {
    create_object_tracked(backend, head, resolved, object, true).await
}

/// `create_object`; `track` false when the caller (server-side apply) has
/// already set `managedFields`.
pub async fn create_object_tracked(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    mut object: Object,
    track: bool,
) -> Result<Bytes, ApiError> {
    let info = &resolved.info;
    let body_name = object::meta_str(&object, "name").to_string();
    crate::strategy::decode_and_default(info, &mut object).map_err(|r| super::rejection(info, &body_name, r))?;
    apply_namespace(&mut object, resolved)?;
    let now = timestamp(backend.now());
    let name = {
        let meta = metadata_mut(&mut object);
        let mut name = meta.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        if name.is_empty() {
            let prefix = meta.get("generateName").and_then(Value::as_str).unwrap_or("").to_string();
            if prefix.is_empty() {
                return Err(object::invalid(
                    info,
                    "",
                    vec![Cause {
                        reason: "FieldValueRequired".into(),
                        message: "metadata.name: Required value: name or generateName is required".into(),
                        field: "metadata.name".into(),
                    }],
                ));
            }
            name = format!("{prefix}{}", generated_suffix(rand::random()));
            meta.insert("name".into(), json!(name));
        }
        meta.insert("uid".into(), json!(new_uid(rand::random())));
        meta.insert("creationTimestamp".into(), json!(now));
        for server_only in ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] {
            meta.shift_remove(server_only);
        }
        if info.has_generation {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.shift_remove("generation");
        }
        name
    };
    // kube records the writer's fields right after decoding and defaulting,
    // before admission and the create rules change the object (so what the
    // server sets is nobody's); custom resources after their own preparation.
    let early = crate::strategy::records_fields_at_decode(info);
    // A built-in kind's metadata errors are reported with its spec's, after
    // the mutating admission plugins, as kube's `Validate` lists
    // ObjectMeta's errors first in one list; custom resources (and
    // definitions, whose rules are `types/crd.rs`) are refused here.
    let metadata_errors = metadata_causes(resolved, &object)?;
    if !metadata_errors.is_empty() && !crate::strategy::handles(info) {
        return Err(object::invalid(info, &name, metadata_errors));
    }
    if track && early {
        // Compared with the kind's Go zero value, as kube's field manager does.
        let manager = super::apply::Manager::of(backend, head, resolved);
        crate::fieldmanager::update(Some(&crate::strategy::zero(info)), &mut object, &manager.write());
    }
    if info.subresources.iter().any(|s| s == "status") && !info.group.is_empty() {
        // The status subresource owns status: a create starts it empty, as the
        // registries of these types reset it. The core kinds' create status
        // (a Pod's phase and QoS class, a Namespace's phase and finalizer, a
        // Node's kept status, ...) is their strategy's: strategy/rules/core.
        object.insert("status".into(), json!({}));
    }
    // The mutating admission plugins, before the strategy (kube's order).
    let admission = super::admission::mutate(backend, head, resolved, &name, &mut object, None).await?;
    super::allocate::prepare(resolved, &mut object, None);
    crate::strategy::create(info, &mut object, &super::strategy_context(&now, resolved, head))
        .map_err(|r| super::rejection_after(info, &name, metadata_errors.clone(), r))?;
    if !metadata_errors.is_empty() {
        return Err(object::invalid(info, &name, metadata_errors));
    }
    super::custom::prepare(backend, resolved, &mut object, true)?;
    if track && !early {
        let manager = super::apply::Manager::of(backend, head, resolved);
        crate::fieldmanager::update(None, &mut object, &manager.write());
    }
    let mut object = order_fields(object);
    super::check_escalation(backend, head, resolved, &name, &object).await?;
    let namespace = resolved.namespace.clone().unwrap_or_default();
    if info.namespaced {
        let namespace_key = ObjectKey::new("", "namespaces", "", &namespace);
        let Some(ns) = read_current(backend, &namespace_key, backend.committed_revision()).await? else {
            return Err(ApiError::NotFound(Target::new("", "namespaces", &namespace)));
        };
        // kube's namespace lifecycle admission: no new content in a Terminating namespace.
        let terminating = serde_json::from_slice::<Value>(&ns.json)
            .is_ok_and(|v| v["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()));
        let lifecycle = crate::strategy::admission::Plugin::NamespaceLifecycle;
        if terminating && backend.config().admission_plugins.enabled(lifecycle) {
            return Err(ApiError::NamespaceTerminating {
                target: Target::new(&info.group, &info.resource, &name),
                namespace: namespace.clone(),
            });
        }
    }
    // The validating admission plugins (and quota usage), after the strategy.
    super::admission::validate(backend, head, resolved, &name, admission, &object, None).await?;
    // Service cluster IPs and node ports: claimed now, reverted if the write fails.
    let claims = super::allocate::create(backend, head, resolved, &mut object).await?;
    crate::strategy::finish(info, &mut object);
    // A resource kept in another's store is written in that kind's form.
    super::versions::to_storage(info, &mut object);
    if head.params.dry_run_all {
        return serde_json::to_vec(&object).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()));
    }
    let key = resolved.key(&name);
    let appended = match storage_value(&object) {
        Ok(value) => backend
            .append(Proposal {
                key: key.encode(),
                precondition: Precondition::Absent,
                operation: Operation::Put(value),
            })
            .await
            .map_err(|e| match e {
                AppendError::Conflict { .. } => {
                    ApiError::AlreadyExists(Target::new(&info.group, &info.resource, &name))
                }
                e => append_error(e),
            }),
        Err(e) => Err(e),
    };
    let entry = match appended {
        Ok(entry) => entry,
        Err(e) => {
            claims.revert(backend).await;
            return Err(e);
        }
    };
    stored_after(backend, &key, entry.revision, &object).await
}

/// The encoding of the version this request wrote (`revision`), read from the
/// owner once it has applied it. If the object was already changed again, the
/// owner still holds this version in its history window; if it was already
/// deleted and the window passed, the written object is encoded here.
pub async fn stored_after(
    backend: &impl Backend,
    key: &ObjectKey,
    revision: Revision,
    written: &Object,
) -> Result<Bytes, ApiError> {
    let encoded = key.encode();
    let shard = key.shard(backend.shard_count());
    let version = backend
        .on_shard(shard, revision, move |store| store.get_at(&encoded, revision))
        .await
        .map_err(super::backend_error)?;
    match version {
        Ok(Some(object)) if object.mod_revision == revision => Ok(object.json.clone()),
        _ => {
            let mut copy = written.clone();
            crate::cache::set_resource_version(metadata_mut(&mut copy), revision);
            serde_json::to_vec(&copy).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
        }
    }
}
