//! The registry of resources the server serves: group, version, resource, kind,
//! scope, short names, verbs, field-selector fields.
//!
//! Built-in types come from the committed table in `generated/builtin.rs`
//! (derived from the Kubernetes OpenAPI documents by `tools/gen-tables`).
//! Custom resources are added at run time from CustomResourceDefinitions.
//!
//! Invariant: one entry per (group, resource); lookups never allocate.

/// Everything the API layer needs to know about one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group; empty for the legacy core group.
    pub group: String,
    /// The preferred (and only served) version.
    pub version: String,
    /// Plural, lower-case resource name (`pods`).
    pub resource: String,
    /// Singular name (`pod`).
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Verbs as discovery lists them: create, delete, deletecollection, get,
    /// list, patch, update, watch.
    pub verbs: Vec<String>,
    /// Fields usable in a field selector besides metadata.name and
    /// metadata.namespace (e.g. `spec.nodeName` for pods).
    pub selectable_fields: Vec<String>,
    /// Whether PUT of a missing object creates it (kube's AllowCreateOnUpdate).
    pub allow_create_on_update: bool,
    /// Whether the resource has a `spec` whose changes bump metadata.generation.
    pub has_generation: bool,
    /// Subresources served (`status`, `scale`, ...).
    pub subresources: Vec<String>,
}

impl ResourceInfo {
    /// `apiVersion` as written in objects: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}
