//! PATCH bodies applied to an object: RFC 6902 JSON patch
//! (`application/json-patch+json`), RFC 7386 JSON merge patch
//! (`application/merge-patch+json`) and Kubernetes strategic merge patch
//! (`application/strategic-merge-patch+json`, `strategic.rs`), which reads its
//! merge keys and strategies from the schema facts (`types::schema`).
//!
//! Invariant: pure functions, no I/O; the input object is never modified (a
//! failed patch changes nothing) and no input panics. Errors say which of
//! kube-apiserver's answers applies: 400 for a malformed patch, 422 for a
//! patch that does not apply (a failed `test`, a missing path).

pub mod strategic;

use crate::types::schema::Shape;
use serde_json::Value;

/// Most operations in one JSON patch, as kube-apiserver bounds them
/// (`maxJSONPatchOperations`); more are 413.
pub const JSON_PATCH_OPERATIONS_MAX: usize = 10_000;

/// The patch media types, by their `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    /// Server-side apply: recognised, not served yet (415).
    Apply,
}

impl PatchType {
    /// The patch type of a media type (parameters already removed).
    pub fn from_media_type(media_type: &str) -> Option<PatchType> {
        match media_type {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Why a patch could not be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch is malformed (400 BadRequest).
    #[error("{0}")]
    BadRequest(String),
    /// The patch is well formed but does not apply to this object (422).
    #[error("{0}")]
    DoesNotApply(String),
    /// More than [`JSON_PATCH_OPERATIONS_MAX`] operations (413).
    #[error("The allowed maximum operations in a JSON patch is {max}, got {got}")]
    TooManyOperations { max: usize, got: usize },
}

/// Applies `patch` (the request body) of type `kind` to `original`. `shape`
/// is the object's schema (strategic merge patch needs it; `None` treats
/// every field as having no patch metadata).
pub fn apply(kind: PatchType, original: &Value, patch: &[u8], shape: Option<Shape>) -> Result<Value, PatchError> {
    match kind {
        PatchType::Json => json_patch(original, patch),
        PatchType::Merge => merge_patch(original, patch),
        PatchType::Strategic => {
            let patch: Value = serde_json::from_slice(patch).map_err(|e| PatchError::BadRequest(e.to_string()))?;
            strategic::strategic_merge(original, &patch, shape)
        }
        PatchType::Apply => Err(PatchError::BadRequest("apply patches are not supported".into())),
    }
}

/// RFC 6902.
fn json_patch(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    let operations: Vec<json_patch::PatchOperation> =
        serde_json::from_slice(patch).map_err(|e| PatchError::BadRequest(e.to_string()))?;
    if operations.len() > JSON_PATCH_OPERATIONS_MAX {
        return Err(PatchError::TooManyOperations { max: JSON_PATCH_OPERATIONS_MAX, got: operations.len() });
    }
    let mut doc = original.clone();
    json_patch::patch(&mut doc, &operations).map_err(|e| {
        let message = match &e.kind {
            // evanphx/json-patch's wording, which kube-apiserver passes on.
            json_patch::PatchErrorKind::TestFailed => format!("testing value {} failed: test failed", e.path),
            _ => e.to_string(),
        };
        PatchError::DoesNotApply(message)
    })?;
    Ok(doc)
}

/// RFC 7386.
fn merge_patch(original: &Value, patch: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(patch).map_err(|e| PatchError::BadRequest(e.to_string()))?;
    let mut doc = original.clone();
    json_patch::merge(&mut doc, &patch);
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_operations_and_test() {
        let pod = json!({"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "c"}]}});
        let patch = br#"[{"op":"test","path":"/metadata/labels/a","value":"1"},
            {"op":"add","path":"/metadata/labels/b","value":"2"},
            {"op":"replace","path":"/spec/containers/0/name","value":"d"},
            {"op":"remove","path":"/metadata/labels/a"}]"#;
        let out = apply(PatchType::Json, &pod, patch, None).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"b": "2"}));
        assert_eq!(out["spec"]["containers"][0]["name"], "d");
        let failed = apply(PatchType::Json, &pod, br#"[{"op":"test","path":"/metadata/name","value":"q"}]"#, None);
        assert_eq!(failed, Err(PatchError::DoesNotApply("testing value /metadata/name failed: test failed".into())));
        let missing = apply(PatchType::Json, &pod, br#"[{"op":"remove","path":"/spec/nope"}]"#, None);
        assert!(matches!(missing, Err(PatchError::DoesNotApply(_))));
        assert!(matches!(apply(PatchType::Json, &pod, b"{}", None), Err(PatchError::BadRequest(_))));
        assert!(matches!(
            apply(PatchType::Json, &pod, br#"[{"op":"jump","path":"/"}]"#, None),
            Err(PatchError::BadRequest(_))
        ));
        let many =
            format!("[{}]", vec![r#"{"op":"test","path":"","value":null}"#; JSON_PATCH_OPERATIONS_MAX + 1].join(","));
        assert!(matches!(
            apply(PatchType::Json, &pod, many.as_bytes(), None),
            Err(PatchError::TooManyOperations { .. })
        ));
    }

    #[test]
    fn merge_patch_rfc7386() {
        let doc = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        let out = apply(PatchType::Merge, &doc, br#"{"a":"z","c":{"f":null},"l":[3]}"#, None).unwrap();
        assert_eq!(out, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
        assert!(matches!(apply(PatchType::Merge, &doc, b"{", None), Err(PatchError::BadRequest(_))));
    }

    #[test]
    fn media_types() {
        assert_eq!(PatchType::from_media_type("application/merge-patch+json"), Some(PatchType::Merge));
        assert_eq!(PatchType::from_media_type("application/json"), None);
    }
}
