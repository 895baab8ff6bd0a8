//! What writes and reads of custom resources and of CustomResourceDefinitions
//! do beyond the built-in path, as kube-apiserver's apiextensions server does:
//!
//! - a definition is checked (422 with kube's field errors), defaulted, and
//!   given its status (`storedVersions`; then `acceptedNames`,
//!   `NamesAccepted` and `Established`, which kube-apiserver's controllers
//!   write right after, recorded in `managedFields` as theirs) before it is
//!   stored;
//!   deleting one deletes its objects first;
//! - a custom resource is pruned, defaulted and validated against its
//!   version's `openAPIV3Schema` (422 Invalid), and stored in the storage
//!   version (versions convert by `apiVersion` alone: the `None` strategy);
//! - custom resources have no Protobuf encoding: a Protobuf body is 415, an
//!   Accept that allows only Protobuf is 406, and Protobuf is never chosen,
//!   except for their PartialObjectMetadata (`as=`), which has one.
//!
//! Invariant: nothing here runs for built-in resources other than
//! CustomResourceDefinitions (every entry point checks `info.custom` or the
//! definition's group and resource first).

use super::{append_error, backend_error, Resolved};
use crate::api::object::{self, Object};
use crate::api::status::{ApiError, Cause};
use crate::api::{Backend, RequestHead};
use crate::log::{AppendError, Operation, Precondition, Proposal};
use crate::types::crd::{self, CRD_GROUP, CRD_RESOURCE};
use crate::types::crd_schema;
use crate::types::key::{collection_prefix, ShardId};
use crate::types::registry::ResourceInfo;
use serde_json::Value;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The patch types a custom resource accepts, as kube-apiserver's
/// apiextensions server lists them in its 415 (strategic merge patch needs
/// Go struct tags a custom resource does not have). Server-side apply
/// (`application/apply-patch+yaml`) joins the list when it is served.
pub const PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
];

pub fn is_definition(info: &ResourceInfo) -> bool {
    info.group == CRD_GROUP && info.resource == CRD_RESOURCE
}

/// The request as a custom resource's handlers see it: 415 for a Protobuf
/// body, 406 for an Accept that allows nothing but Protobuf, and Protobuf
/// ranges dropped from Accept so negotiation picks JSON. `None`: use the
/// request as it is (a built-in resource).
pub fn check_media(head: &RequestHead, info: &ResourceInfo) -> Result<Option<RequestHead>, ApiError> {
    if info.custom.is_none() {
        return Ok(None);
    }
    if let Some(content_type) = &head.content_type {
        if object::media_type(Some(content_type)) == PROTOBUF {
            return Err(ApiError::UnsupportedMediaType(content_type.clone()));
        }
    }
    let Some(accept) = head.accept.as_deref().filter(|a| !a.trim().is_empty()) else { return Ok(None) };
    // Protobuf metadata-only ranges stay: a PartialObjectMetadata has a
    // protobuf encoding whatever the object (client-go's metadata client).
    let kept: Vec<&str> = accept
        .split(',')
        .filter(|range| {
            let media = range.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            let metadata = range.split(';').skip(1).any(|p| {
                let p = p.trim();
                p == "as=PartialObjectMetadata" || p == "as=PartialObjectMetadataList"
            });
            !media.starts_with(PROTOBUF) || metadata
        })
        .collect();
    if kept.iter().all(|r| r.trim().is_empty()) {
        return Err(ApiError::NotAcceptable(accept.to_string()));
    }
    let mut head = head.clone();
    head.accept = Some(kept.join(","));
    Ok(Some(head))
}

fn field_causes(errors: Vec<crate::types::validation::FieldError>) -> Vec<Cause> {
    super::create::causes(errors)
}

fn schema_causes(errors: Vec<crd_schema::SchemaError>) -> Vec<Cause> {
    errors
        .into_iter()
        .map(|e| Cause { reason: e.cause_reason().to_string(), message: e.message, field: e.field })
        .collect()
}

/// Prepares an object of `resolved`'s resource for storage, after the
/// server-set metadata: a definition is validated, defaulted and given its
/// status; a custom resource is pruned, defaulted, validated and converted to
/// the storage version (on create, without the status its status
/// subresource owns, as kube's custom resource strategy drops it). Anything
/// else is left as it is.
pub fn prepare(
    backend: &impl Backend,
    resolved: &Resolved,
    object: &mut Object,
    creating: bool,
) -> Result<(), ApiError> {
    let info = &resolved.info;
    let name = object::meta_str(object, "name").to_string();
    if is_definition(info) {
        let mut value = Value::Object(std::mem::take(object));
        let errors = crd::validate(&value);
        if !errors.is_empty() {
            *object = value.as_object().cloned().unwrap_or_default();
            return Err(object::invalid(info, &name, field_causes(errors)));
        }
        // Defaulted at decode already (`strategy::decode_and_default`);
        // again for a body that skipped it. Then the strategy's
        // storedVersions, and what kube-apiserver's naming and establishing
        // controllers write through `/status` right after.
        crd::set_defaults(&mut value);
        crd::add_stored_version(&mut value);
        let before = value.clone();
        let now = object::timestamp(backend.now());
        crd::set_status(&mut value, &backend.registry(), &now);
        if let (Value::Object(before), Value::Object(map)) = (before, value) {
            *object = map;
            if before.get("status") != object.get("status") {
                record_controllers_status(info, before, object, &now);
            }
        }
        return Ok(());
    }
    let Some(custom) = &info.custom else { return Ok(()) };
    if creating && info.subresources.iter().any(|s| s == "status") {
        object.shift_remove("status");
    }
    if let Some(schema) = &custom.schema {
        let mut value = Value::Object(std::mem::take(object));
        crd_schema::prune_and_default(&mut value, schema);
        let errors = crd_schema::validate(&value, schema);
        if let Value::Object(map) = value {
            *object = map;
        }
        if !errors.is_empty() {
            return Err(object::invalid(info, &name, schema_causes(errors)));
        }
    }
    let storage = format!("{}/{}", info.group, custom.storage_version);
    object.insert("apiVersion".into(), Value::String(storage));
    Ok(())
}

/// The manager kube-apiserver's own controllers write as.
const CONTROLLERS_MANAGER: &str = "kube-apiserver";

/// Records the status write of kube-apiserver's naming and establishing
/// controllers (`acceptedNames`, the conditions) as theirs: an Update of
/// the `status` subresource by `kube-apiserver`, compared with the
/// definition before it in its Go form (so fields every definition has
/// carry no `.`).
fn record_controllers_status(info: &ResourceInfo, mut before: Object, object: &mut Object, now: &str) {
    crate::strategy::finish(info, &mut before);
    let api_version = format!("{CRD_GROUP}/{}", info.version);
    let write = crate::fieldmanager::Write {
        manager: CONTROLLERS_MANAGER,
        api_version: &api_version,
        subresource: "status",
        shape: crate::types::schema::root_shape(&info.group, &info.version, &info.kind),
        status_subresource: true,
        now,
    };
    crate::fieldmanager::update(Some(&before), object, &write);
}

/// Whether a custom resource changed outside `apiVersion`, `kind`,
/// `metadata` and `status` (what bumps its `metadata.generation`).
pub fn content_changed(new: &Object, old: &Object) -> bool {
    let content = |o: &Object| {
        o.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<std::collections::BTreeMap<String, Value>>()
    };
    content(new) != content(old)
}

/// Deletes every object of the definition `crd` (the stored definition
/// being deleted), as kube's `customresourcecleanup` finalizer does before
/// the definition goes away.
pub async fn delete_definition_objects(backend: &impl Backend, crd: &Object) -> Result<(), ApiError> {
    let group = crd.get("spec").and_then(|s| s.get("group")).and_then(Value::as_str).unwrap_or("");
    let plural =
        crd.get("spec").and_then(|s| s.pointer("/names/plural")).and_then(Value::as_str).unwrap_or("").to_string();
    if group.is_empty() || plural.is_empty() {
        return Ok(());
    }
    let prefix = collection_prefix(group, &plural, None);
    let revision = backend.committed_revision();
    for shard in 0..backend.shard_count() {
        let prefix = prefix.clone();
        let victims = backend
            .on_shard(ShardId(shard), revision, move |store| {
                store
                    .list(prefix.as_bytes(), None, usize::MAX)
                    .into_iter()
                    .map(|o| (o.key.clone(), o.mod_revision))
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(backend_error)?;
        for (key, mod_revision) in victims {
            let proposal =
                Proposal { key, precondition: Precondition::ModRevision(mod_revision), operation: Operation::Delete };
            match backend.append(proposal).await {
                Ok(_) | Err(AppendError::Conflict { .. }) => {}
                Err(e) => return Err(append_error(e)),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;
    use bytes::Bytes;
    use futures_lite::future::block_on;
    use http_body_util::{BodyExt, Full};
    use serde_json::{json, Value};
    use std::rc::Rc;

    fn request(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let answer = crate::api::testing::send_json(backend, method, path, body);
        (answer.code, answer.body)
    }

    /// A request with a raw body and content type: status, Warning headers, body.
    fn send(
        backend: &Rc<MemoryBackend>,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
    ) -> (u16, Vec<String>, Value) {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("Content-Type", content_type)
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        block_on(async {
            let response = crate::api::handle(backend, request).await;
            let status = response.status().as_u16();
            let warnings = response
                .headers()
                .get_all(http::header::WARNING)
                .iter()
                .map(|v| v.to_str().unwrap().to_string())
                .collect();
            let body = response.into_body().collect().await.expect("body").to_bytes();
            (status, warnings, serde_json::from_slice(&body).unwrap_or(Value::Null))
        })
    }

    /// PATCH of a custom resource: strategic merge patch is 415 with the
    /// custom resource's accepted types; JSON and merge patches apply in the
    /// requested version (not the storage one) and are pruned and validated
    /// by its schema; fieldValidation reports unknown fields against the
    /// version's schema, and a schema that preserves unknown fields has none.
    #[test]
    fn patches_and_field_validation_of_custom_resources() {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        let backend = Rc::new(MemoryBackend::new(config, 2));
        const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        const JSON: &str = "application/json";
        assert_eq!(request(&backend, "POST", CRDS, Some(definition())).0, 201);
        // Create: Warn (default) sends one Warning per unknown field and prunes it.
        let gear =
            r#"{"apiVersion":"example.com/v2","kind":"Gear","metadata":{"name":"g"},"spec":{"teeth":3,"x":1},"y":2}"#;
        let (code, warnings, created) = send(&backend, "POST", "/apis/example.com/v2/gears", JSON, gear);
        assert_eq!(code, 201, "{created}");
        assert_eq!(warnings, [r#"299 - "unknown field \"spec.x\"""#, r#"299 - "unknown field \"y\"""#]);
        assert_eq!(created["spec"], json!({"teeth": 3}));
        assert!(created.get("y").is_none());
        let strict = r#"{"apiVersion":"example.com/v2","kind":"Gear","metadata":{"name":"h"},"spec":{"x":1}}"#;
        let (code, _, status) =
            send(&backend, "POST", "/apis/example.com/v2/gears?fieldValidation=Strict", JSON, strict);
        assert_eq!(code, 400);
        assert_eq!(
            status["message"],
            r#"Gear in version "v2" cannot be handled as a Gear: strict decoding error: unknown field "spec.x""#
        );
        let (code, warnings, _) =
            send(&backend, "POST", "/apis/example.com/v2/gears?fieldValidation=Ignore", JSON, strict);
        assert_eq!((code, warnings.len()), (201, 0));
        // v1 preserves unknown fields: nothing to report, even when Strict.
        let free = r#"{"apiVersion":"example.com/v1","kind":"Gear","metadata":{"name":"f"},"spec":{"x":1}}"#;
        let (code, warnings, created) =
            send(&backend, "POST", "/apis/example.com/v1/gears?fieldValidation=Strict", JSON, free);
        assert_eq!((code, warnings.len()), (201, 0), "{created}");
        assert_eq!(created["spec"]["x"], 1);
        // Update (PUT) reports unknown fields too.
        let (_, _, current) = send(&backend, "GET", "/apis/example.com/v2/gears/g", JSON, "");
        let mut put = current.clone();
        put["spec"]["z"] = json!(1);
        let (code, warnings, updated) = send(&backend, "PUT", "/apis/example.com/v2/gears/g", JSON, &put.to_string());
        assert_eq!(code, 200, "{updated}");
        assert_eq!(warnings, [r#"299 - "unknown field \"spec.z\"""#]);
        // Strategic merge patch: 415 with kube's message.
        let (code, _, status) = send(
            &backend,
            "PATCH",
            "/apis/example.com/v2/gears/g",
            "application/strategic-merge-patch+json",
            r#"{"spec":{"teeth":4}}"#,
        );
        assert_eq!(code, 415);
        assert_eq!(status["reason"], "UnsupportedMediaType");
        assert_eq!(
            status["message"],
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
             application/apply-patch+cbor"
        );
        // Merge patch in v2 (v1 is the storage version): answered in v2, validated.
        let merge = "application/merge-patch+json";
        let (code, warnings, patched) =
            send(&backend, "PATCH", "/apis/example.com/v2/gears/g", merge, r#"{"spec":{"teeth":4,"q":1}}"#);
        assert_eq!(code, 200, "{patched}");
        assert_eq!(patched["apiVersion"], "example.com/v2");
        assert_eq!(patched["spec"], json!({"teeth": 4}));
        assert_eq!(warnings, [r#"299 - "unknown field \"spec.q\"""#]);
        let (code, _, status) = send(
            &backend,
            "PATCH",
            "/apis/example.com/v2/gears/g?fieldValidation=Strict",
            merge,
            r#"{"spec":{"q":1}}"#,
        );
        assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{status}");
        let cause = &status["details"]["causes"][0];
        assert_eq!(cause["field"], "patch");
        assert!(
            cause["message"].as_str().unwrap().ends_with(r#"strict decoding error: unknown field "spec.q""#),
            "{cause}"
        );
        // JSON patch, read back in both versions.
        let (code, _, patched) = send(
            &backend,
            "PATCH",
            "/apis/example.com/v2/gears/g",
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/spec/teeth","value":5}]"#,
        );
        assert_eq!((code, &patched["spec"]["teeth"]), (200, &json!(5)), "{patched}");
        let (_, _, v1) = send(&backend, "GET", "/apis/example.com/v1/gears/g", JSON, "");
        assert_eq!((v1["apiVersion"].as_str(), &v1["spec"]["teeth"]), (Some("example.com/v1"), &json!(5)));
        // A merge patch against the storage version works too.
        let (code, _, patched) =
            send(&backend, "PATCH", "/apis/example.com/v1/gears/g", merge, r#"{"metadata":{"labels":{"a":"b"}}}"#);
        assert_eq!((code, &patched["metadata"]["labels"]), (200, &json!({"a": "b"})), "{patched}");
    }

    fn definition() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gears.example.com"},
            "spec": {
                "group": "example.com", "scope": "Cluster",
                "names": {"plural": "gears", "kind": "Gear"},
                "versions": [
                    {"name": "v2", "served": true, "storage": false,
                     "selectableFields": [{"jsonPath": ".spec.teeth"}],
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {"teeth": {"type": "integer", "default": 12}}}}}}},
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
                ]
            }
        })
    }

    /// Through the real handlers on the in-process backend: a definition
    /// serves both versions; an object written in one reads in the other
    /// (get, paged and streamed lists); deleting the definition deletes it.
    #[test]
    fn versions_convert_by_api_version_and_deletion_cleans_up() {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        let backend = Rc::new(MemoryBackend::new(config, 2));
        const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        assert_eq!(request(&backend, "POST", CRDS, Some(definition())).0, 201);
        let gear = json!({"apiVersion": "example.com/v2", "kind": "Gear", "metadata": {"name": "g"}, "spec": {"x": 1}});
        let (code, created) = request(&backend, "POST", "/apis/example.com/v2/gears", Some(gear));
        assert_eq!(code, 201, "{created}");
        // Pruned and defaulted by v2's schema, answered in v2.
        assert_eq!(created["apiVersion"], "example.com/v2");
        assert_eq!(created["spec"], json!({"teeth": 12}));
        for version in ["v1", "v2"] {
            let want = format!("example.com/{version}");
            let (_, got) = request(&backend, "GET", &format!("/apis/example.com/{version}/gears/g"), None);
            assert_eq!(got["apiVersion"], want.as_str());
            for query in ["", "?limit=1"] {
                let (_, list) = request(&backend, "GET", &format!("/apis/example.com/{version}/gears{query}"), None);
                assert_eq!(list["apiVersion"], want.as_str());
                assert_eq!(list["items"][0]["apiVersion"], want.as_str(), "{list}");
            }
        }
        // A selectable field of v2.
        let (code, list) = request(&backend, "GET", "/apis/example.com/v2/gears?fieldSelector=spec.teeth%3D12", None);
        assert_eq!((code, list["items"].as_array().map(Vec::len)), (200, Some(1)), "{list}");
        let (_, list) = request(&backend, "GET", "/apis/example.com/v2/gears?fieldSelector=spec.teeth%3D13", None);
        assert_eq!(list["items"], json!([]));
        let (code, _) = request(&backend, "GET", "/apis/example.com/v1/gears?fieldSelector=spec.teeth%3D12", None);
        assert_eq!(code, 400, "v1 declares no selectable fields");
        let (code, _) = request(&backend, "DELETE", &format!("{CRDS}/gears.example.com"), None);
        assert_eq!(code, 200);
        assert_eq!(request(&backend, "GET", "/apis/example.com/v1/gears", None).0, 404);
        // Defined again: the old object is gone.
        assert_eq!(request(&backend, "POST", CRDS, Some(definition())).0, 201);
        let (code, list) = request(&backend, "GET", "/apis/example.com/v1/gears", None);
        assert_eq!((code, &list["items"]), (200, &json!([])));
    }
}
