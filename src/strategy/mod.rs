//! The typed layer: every built-in kind's rules between decoding and the log,
//! as kube-apiserver's registry strategies hold them. A write goes through
//! [`create`] or [`update`], whatever its entry point (POST, PUT, the PATCH
//! types, server-side apply, subresources, dry-run), in kube's order:
//!
//! 1. decode (`decode.rs`): every field's JSON type checked against the kind's
//!    schema (Go's `json: cannot unmarshal ...` wording), nulls dropped and
//!    quantities made canonical, as a decode into the Go type and back does;
//! 2. default (`defaults/`): the `SetDefaults_*` functions and `+default`
//!    markers of kube-apiserver v1.36, field for field;
//! 3. prepare (`rules.rs`): create and update rules: status reset or kept,
//!    `metadata.generation`, fields the server derives;
//! 4. validate (`validate/`): kube's validation, as `FieldError`s (422);
//! 5. allocate (`allocate.rs`): what needs state in the log (Service cluster
//!    IPs, node ports) is planned here and written by the API layer;
//! 6. order (`decode.rs`): fields in kube's (Go struct) order, so the stored
//!    bytes are the bytes kube-apiserver would store.
//!
//! Admission plugins that change objects from other objects' state
//! (`admission.rs`) are pure functions over what the API layer reads for them.
//!
//! Invariant: no I/O, no clock (the time is in [`Context`]), no HTTP; every
//! input, however malformed, gives `Ok` or a [`Rejection`], never a panic.
//! Invariant: custom resources and definitions are not handled here (their
//! schema-driven path is `api/handlers/custom.rs`); every other served
//! resource is.

pub mod admission;
pub mod allocate;
pub mod cel;
pub mod connect;
pub mod decode;
pub mod defaults;
pub mod quantity;
pub mod rules;
pub mod subresources;
pub mod validate;

#[cfg(test)]
mod create_fields_tests;

use crate::types::registry::ResourceInfo;
use crate::types::validation::FieldError;
use serde_json::{Map, Value};

/// A JSON object, in document order.
pub type Object = Map<String, Value>;

/// What a step needs besides the object.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The request time, RFC 3339 at second precision (`metav1.Time`).
    pub now: &'a str,
    /// The subresource written (`status`, `scale`), `None` for the resource.
    pub subresource: Option<&'a str>,
    /// Who asks (kube's `genericapirequest.UserFrom`): a
    /// CertificateSigningRequest records its requester. `None` where no
    /// request is behind the write (tests, fuzzing).
    pub user: Option<&'a crate::auth::UserInfo>,
}

/// Why a write is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The body does not decode into the kind's type: Go's decoding error
    /// (`json: cannot unmarshal string into Go struct field ...`). The API
    /// layer wraps it (400 for a body, 422 `patch` for a patched object).
    Decode(String),
    /// Validation failed: 422 Invalid with these causes.
    Invalid(Vec<FieldError>),
    /// A rule refuses the write outright: 403 Forbidden with this message.
    Forbidden(String),
}

/// Whether the typed layer owns this resource's objects (a built-in kind).
pub fn handles(info: &ResourceInfo) -> bool {
    info.custom.is_none() && !is_definition(info)
}

/// CustomResourceDefinitions: built in, but their rules are
/// `types::crd`'s (called from the API layer's custom resource path); the
/// typed layer gives them their defaults at decode and their Go form.
fn is_definition(info: &ResourceInfo) -> bool {
    info.group == crate::types::crd::CRD_GROUP && info.resource == crate::types::crd::CRD_RESOURCE
}

/// Whether a write's fields are recorded in `managedFields` right after
/// decoding and defaulting (kube's order, against [`zero`] or the stored
/// object): every built-in kind; custom resources are recorded after their
/// own preparation.
pub fn records_fields_at_decode(info: &ResourceInfo) -> bool {
    handles(info) || is_definition(info)
}

/// Decoding and defaulting of a new body (or a patched object): what kube's
/// codec does before any strategy runs.
pub fn decode_and_default(info: &ResourceInfo, object: &mut Object) -> Result<(), Rejection> {
    if is_definition(info) {
        // apiextensions' SetObjectDefaults_CustomResourceDefinition.
        let mut value = serde_json::Value::Object(std::mem::take(object));
        crate::types::crd::set_defaults(&mut value);
        if let serde_json::Value::Object(map) = value {
            *object = map;
        }
        return Ok(());
    }
    if !handles(info) {
        return Ok(());
    }
    decode::check(&info.group, &info.version, &info.kind, object).map_err(Rejection::Decode)?;
    defaults::apply(&info.group, &info.kind, object);
    Ok(())
}

/// The create rules and validation of a decoded, defaulted object whose
/// server-set metadata (name, uid, creationTimestamp) is in place.
pub fn create(info: &ResourceInfo, object: &mut Object, context: &Context) -> Result<(), Rejection> {
    if !handles(info) {
        return Ok(());
    }
    rules::prepare_for_create(info, object, context);
    let errors = match stored_form(info, object).filter(|_| validates_stored_form(info)) {
        // kube validates the stored (internal) form with the request's
        // version in hand: events.k8s.io/v1 is strict (`ValidateEventCreate`).
        Some(stored) => validate::core::served_as_create(&info.group, &info.kind, &stored),
        None => validate::create(&info.group, &info.kind, object),
    };
    if !errors.is_empty() {
        return Err(Rejection::Invalid(errors));
    }
    Ok(())
}

/// The update rules and validation of a decoded, defaulted new version
/// against the stored one (`old`), whose server-owned metadata the caller
/// has already carried over.
pub fn update(info: &ResourceInfo, object: &mut Object, old: &Object, context: &Context) -> Result<(), Rejection> {
    if !handles(info) {
        return Ok(());
    }
    if let Some(subresource) = context.subresource.filter(|s| subresources::serves(&info.group, &info.kind, s)) {
        subresources::prepare_for_update(&info.kind, subresource, object, old, context);
        let errors = subresources::validate_update(&info.kind, subresource, object, old);
        if !errors.is_empty() {
            return Err(Rejection::Invalid(errors));
        }
        return Ok(());
    }
    rules::prepare_for_update(info, object, old, context)?;
    let stored_forms = || Some((stored_form(info, object)?, stored_form(info, old)?));
    let errors = match stored_forms().filter(|_| validates_stored_form(info)) {
        Some((stored, stored_old)) => validate::core::served_as_update(&info.group, &info.kind, &stored, &stored_old),
        None => validate::update(&info.group, &info.kind, object, old, context.subresource),
    };
    if !errors.is_empty() {
        return Err(Rejection::Invalid(errors));
    }
    Ok(())
}

/// The last step before the log: fields in kube's order (the Go form,
/// CustomResourceDefinitions' too).
pub fn finish(info: &ResourceInfo, object: &mut Object) {
    if records_fields_at_decode(info) {
        decode::order(&info.group, &info.version, &info.kind, object);
    }
}

/// An object of `info`'s version as the shared store it is kept in holds
/// it (`types::conversion`), in that kind's Go form; `None` when the
/// resource is its own store.
pub fn stored_form(info: &ResourceInfo, object: &Object) -> Option<Object> {
    let stored = info.stored_as()?;
    let value = Value::Object(object.clone());
    let mut converted = crate::types::conversion::to_storage(&info.group, &info.version, &info.kind, &value)?;
    // What kube's decode from storage would default (an autoscaling/v2
    // behavior restored from v1's annotation gets its unset rules filled),
    // so the stored bytes are what kube serves for the object.
    defaults::apply(stored.group, stored.kind, &mut converted);
    decode::normalize(stored.group, stored.version, stored.kind, &mut converted);
    Some(converted)
}

/// Whether a resource kept in another's store is validated in the stored
/// kind's form (events.k8s.io/v1 Events by the core Event's rules, kube's
/// `ValidateEvent` taking the request's version); the HorizontalPodAutoscaler
/// rules read the fields both versions share, so v1 is validated as written.
fn validates_stored_form(info: &ResourceInfo) -> bool {
    info.stored_as().is_some_and(|stored| stored.group.is_empty())
}

/// A stored object as `info`'s version shows it, in that kind's Go form;
/// `None` when the resource is its own store.
pub fn served_form(info: &ResourceInfo, stored: &Object) -> Option<Object> {
    info.stored_as()?;
    let value = Value::Object(stored.clone());
    let mut converted = crate::types::conversion::from_storage(&info.group, &info.version, &info.kind, &value)?;
    decode::normalize(&info.group, &info.version, &info.kind, &mut converted);
    Some(converted)
}

/// The Go zero value of the kind as kube's JSON encodes it (`{"kind": ...,
/// "apiVersion": ..., "metadata": {}, "spec": {"containers": null}, ...}`):
/// what kube's field manager compares a create against, so fields every
/// object of the kind has are nobody's (no `.` entry in `managedFields`).
pub fn zero(info: &ResourceInfo) -> Object {
    let mut object = Object::new();
    object.insert("kind".into(), Value::String(info.kind.clone()));
    object.insert("apiVersion".into(), Value::String(info.api_version()));
    object.insert("metadata".into(), Value::Object(Object::new()));
    decode::order(&info.group, &info.version, &info.kind, &mut object);
    object
}
