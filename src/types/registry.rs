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

/// The resources served, looked up by (group, version, resource).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    resources: Vec<ResourceInfo>,
}

impl Registry {
    /// Placeholder until the generated table lands: a few core types.
    pub fn builtin() -> Registry {
        let r = |group: &str, resource: &str, kind: &str, namespaced: bool| ResourceInfo {
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            namespaced,
            short_names: vec![],
            categories: vec![],
            verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
                .map(String::from)
                .to_vec(),
            selectable_fields: vec![],
            allow_create_on_update: false,
            has_generation: resource == "deployments" || resource == "pods",
            subresources: vec!["status".into()],
        };
        Registry {
            resources: vec![
                r("", "namespaces", "Namespace", false),
                r("", "pods", "Pod", true),
                r("", "configmaps", "ConfigMap", true),
                r("apps", "deployments", "Deployment", true),
            ],
        }
    }

    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<&ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.resource == resource)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.resources.iter()
    }
}
