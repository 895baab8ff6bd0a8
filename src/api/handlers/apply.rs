//! Server-side apply (PATCH with `application/apply-patch+yaml` or
//! `application/apply-patch+cbor`) and the field manager of every write: who
//! a write's manager is (`fieldManager`, or the user agent's name as
//! kube-apiserver derives it), the validation of `fieldManager` and `force`,
//! and the apply itself: the configuration is merged into the current object
//! by `crate::fieldmanager` (creating the object when absent), and the result
//! goes through POST's or PUT's write path, re-applied after a concurrent
//! write. Conflicts answer 409 with the fields and their managers.

use super::create::create_object_tracked;
use super::update::replace_current_tracked;
use super::{modified, read_current, Resolved};
use crate::api::field_validation;
use crate::api::object::{media_type, meta_str, timestamp, Object};
use crate::api::status::{ApiError, Cause, Target};
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::fieldmanager::{self, ApplyError, Write};
use crate::types::schema::{self, Shape};
use http::{Response, StatusCode};
use serde_json::{json, Value};

/// kube-apiserver's bound on a field manager's name.
pub const FIELD_MANAGER_CHARS_MAX: usize = 128;

/// The manager of one write, owning what `fieldmanager::Write` borrows.
pub struct Manager {
    pub name: String,
    api_version: String,
    subresource: String,
    shape: Option<Shape>,
    status_subresource: bool,
    now: String,
}

impl Manager {
    pub fn of(backend: &impl Backend, head: &RequestHead, resolved: &Resolved) -> Manager {
        let info = &resolved.info;
        let name = match head.params.field_manager.as_deref() {
            Some(name) if !name.is_empty() => name.to_string(),
            // kube-apiserver names the manager after the user agent's product.
            _ => head.user_agent.as_deref().unwrap_or("").split('/').next().unwrap_or("").chars().take(128).collect(),
        };
        Manager {
            name,
            api_version: info.api_version(),
            subresource: resolved.subresource.clone().unwrap_or_default(),
            shape: schema::root_shape(&info.group, &info.version, &info.kind),
            status_subresource: info.subresources.iter().any(|s| s == "status"),
            now: timestamp(backend.now()),
        }
    }

    pub fn write(&self) -> Write<'_> {
        Write {
            manager: &self.name,
            api_version: &self.api_version,
            subresource: &self.subresource,
            shape: self.shape,
            status_subresource: self.status_subresource,
            now: &self.now,
        }
    }
}

fn options_invalid(kind: &str, causes: Vec<Cause>) -> ApiError {
    ApiError::Invalid { kind: kind.into(), target: Target::new("meta.k8s.io", "", ""), causes }
}

/// kube-apiserver's checks of `fieldManager` (and, for PATCH, `force`) on
/// the options of a write (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
pub fn validate_options(head: &RequestHead, options_kind: &str) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let manager = head.params.field_manager.as_deref().unwrap_or("");
    if options_kind == "PatchOptions" {
        let apply = is_apply(head);
        if !apply && head.params.force.is_some() {
            causes.push(Cause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: may not be specified for non-apply patch".into(),
                field: "force".into(),
            });
        }
        if apply && manager.is_empty() {
            causes.push(Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: is required for apply patch".into(),
                field: "fieldManager".into(),
            });
        }
    }
    if manager.len() > FIELD_MANAGER_CHARS_MAX {
        causes.push(Cause {
            reason: "FieldValueTooLong".into(),
            message: format!("Too long: may not be more than {FIELD_MANAGER_CHARS_MAX} bytes"),
            field: "fieldManager".into(),
        });
    }
    for (i, c) in manager.chars().enumerate() {
        if c.is_control() {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: {manager:?}: invalid character U+{:04X} (at position {i})", c as u32),
                field: "fieldManager".into(),
            });
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(options_invalid(options_kind, causes))
    }
}

/// The request is a server-side apply.
pub fn is_apply(head: &RequestHead) -> bool {
    matches!(
        media_type(head.content_type.as_deref()).as_str(),
        "application/apply-patch+yaml" | "application/apply-patch+cbor"
    )
}

fn decode_config(head: &RequestHead, body: &[u8]) -> Result<Object, ApiError> {
    let mut config = match media_type(head.content_type.as_deref()).as_str() {
        "application/apply-patch+cbor" => crate::api::cbor::decode_object(body)?,
        _ => crate::api::yaml::decode_object(body)?,
    };
    match config.get("metadata").and_then(|m| m.get("managedFields")) {
        None | Some(Value::Null) => {}
        Some(_) => return Err(ApiError::BadRequest("metadata.managedFields must be nil".into())),
    }
    if let Some(Value::Object(meta)) = config.get_mut("metadata") {
        meta.shift_remove("managedFields");
    }
    Ok(config)
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
    body: &[u8],
) -> Result<Response<ResponseBody>, ApiError> {
    if resolved.subresource.as_deref() == Some("scale") {
        return Err(ApiError::UnsupportedPatchType {
            got: media_type(head.content_type.as_deref()),
            accepted: super::patch::ACCEPTED.to_vec(),
        });
    }
    let directive = field_validation::directive(head, "PatchOptions")?;
    let info = &resolved.info;
    let mut config = decode_config(head, body)?;
    let expected = info.api_version();
    let version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
    if version != expected {
        return Err(ApiError::BadRequest(format!(
            "Incorrect version specified in apply patch. Specified patch version: {version}, expected: {expected}"
        )));
    }
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    if kind != info.kind {
        return Err(ApiError::BadRequest(format!(
            "Incorrect kind specified in apply patch. Specified patch kind: {kind}, expected: {}",
            info.kind
        )));
    }
    let url_name = resolved.name.clone().unwrap_or_default();
    {
        let meta = config.entry("metadata").or_insert_with(|| json!({}));
        let Value::Object(meta) = meta else {
            return Err(ApiError::BadRequest("metadata must be an object".into()));
        };
        let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            meta.insert("name".into(), json!(url_name));
        } else if name != url_name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({name}) does not match the name on the URL ({url_name})"
            )));
        }
        if info.namespaced {
            let namespace = resolved.namespace.clone().unwrap_or_default();
            match meta.get("namespace").and_then(Value::as_str) {
                None | Some("") => {
                    meta.insert("namespace".into(), json!(namespace));
                }
                Some(given) if given != namespace => {
                    return Err(ApiError::BadRequest(
                        "the namespace of the provided object does not match the namespace sent on the request".into(),
                    ))
                }
                Some(_) => {}
            }
        }
    }
    let force = head.params.force.unwrap_or(false);
    let manager = Manager::of(backend, head, resolved);
    let key = resolved.key(&url_name);
    let retry = meta_str(&config, "resourceVersion").is_empty();
    for _ in 0..backend.config().patch_conflict_attempts_max.max(1) {
        let current = read_current(backend, &key, backend.committed_revision()).await?;
        let live: Option<Object> = match &current {
            Some(current) => {
                let stored: Object = serde_json::from_slice(&current.json)
                    .map_err(|e| ApiError::Internal(format!("stored object does not decode: {e}")))?;
                // Applied to the object as the request's version shows it.
                Some(crate::strategy::served_form(info, &stored).unwrap_or(stored))
            }
            None => None,
        };
        let mut object =
            fieldmanager::apply(live.as_ref(), &config, force, &manager.write()).map_err(conflict_error)?;
        let problems = field_validation::problems(&mut object, info, None);
        let warnings = field_validation::decide(directive, problems, ApiError::BadRequest)?;
        let response = match &current {
            None => {
                if !retry {
                    return Err(ApiError::NotFound(resolved.target()));
                }
                match create_object_tracked(backend, head, resolved, object, false).await {
                    Ok(bytes) => {
                        respond(StatusCode::CREATED, "application/json", super::versions::convert(info, &bytes))
                    }
                    Err(ApiError::AlreadyExists(_)) => continue,
                    Err(e) => return Err(e),
                }
            }
            Some(current) => {
                let carried = meta_str(&object, "resourceVersion").to_string();
                if !carried.is_empty() && carried != current.mod_revision.0.to_string() {
                    return Err(modified(resolved));
                }
                match replace_current_tracked(backend, head, resolved, current, object, retry, false).await? {
                    Some(bytes) => respond(StatusCode::OK, "application/json", super::versions::convert(info, &bytes)),
                    None => continue,
                }
            }
        };
        let mut response = response;
        field_validation::add_warnings(&mut response, &warnings);
        return Ok(response);
    }
    Err(modified(resolved))
}

fn conflict_error(e: ApplyError) -> ApiError {
    match e {
        ApplyError::Conflicts(conflicts) => ApiError::ApplyConflict {
            message: fieldmanager::conflict_message(&conflicts),
            causes: conflicts
                .iter()
                .map(|c| Cause {
                    reason: "FieldManagerConflict".into(),
                    message: format!("conflict with {}", c.manager),
                    field: c.path.clone(),
                })
                .collect(),
        },
    }
}
