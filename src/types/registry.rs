//! The registry of resources the server serves: group, version, resource, kind,
//! scope, short names, verbs, field-selector fields.
//!
//! Built-in types come from the committed table in `generated/builtin.rs`
//! (derived from the Kubernetes OpenAPI documents by `tools/gen-tables`).
//! Custom resources are added at run time from CustomResourceDefinitions with
//! [`Registry::set_definition`] (one entry per served version; see `crd.rs`).
//!
//! Invariant: one entry per (group, version, resource); lookups never
//! allocate. A CustomResourceDefinition contributes one entry per served
//! version ([`Registry::set_definition`]), all with the same storage.
//! Invariant: built-in entries cannot be replaced or removed.
//! Invariant: [`Registry::iter`] and [`Registry::group_versions`] list in
//! discovery order: groups by kube-apiserver's priority (core first), then
//! resources by name.

use std::cmp::Ordering;

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
    /// A custom resource version's facts (schema, printer columns, storage
    /// version); `None` for built-in resources.
    pub custom: Option<std::sync::Arc<super::crd::CustomVersion>>,
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

    /// Where this resource's objects are kept, when another resource's store
    /// holds them (events.k8s.io/v1 Events are core Events:
    /// `types::conversion`). Custom resources are always their own.
    pub fn stored_as(&self) -> Option<super::conversion::StoredAs> {
        if self.custom.is_some() {
            return None;
        }
        super::conversion::stored_as(&self.group, &self.version, &self.resource)
    }

    /// The (group, resource) of the keys this resource's objects are kept
    /// under: its own, or the shared store's.
    pub fn storage_group_resource(&self) -> (&str, &str) {
        match self.stored_as() {
            Some(stored) => (stored.group, stored.resource),
            None => (self.group.as_str(), self.resource.as_str()),
        }
    }
}

/// The subresources every resource may serve, with the verbs discovery lists
/// for them (the same for `status` and `scale`).
pub const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

impl ResourceInfo {
    /// The kind a subresource's requests and responses carry, as
    /// `(group, version, kind)`: the resource's own kind for `status`,
    /// `autoscaling/v1 Scale` for `scale`. `None` if the resource does not
    /// serve the subresource.
    pub fn subresource_response_kind<'a>(&'a self, subresource: &str) -> Option<(&'a str, &'a str, &'a str)> {
        if !self.subresources.iter().any(|s| s == subresource) {
            return None;
        }
        match subresource {
            "status" => Some((self.group.as_str(), self.version.as_str(), self.kind.as_str())),
            "scale" => Some(("autoscaling", "v1", "Scale")),
            _ => control_plane_subresource(&self.group, &self.resource, subresource)
                .map(|s| (s.response_group, s.response_version, s.response_kind)),
        }
    }

    /// The verbs discovery lists for a subresource: `get`, `patch`,
    /// `update` for `status` and `scale`, kube's own list for the control
    /// plane's subresources (`create` for `pods/binding`, ...).
    pub fn subresource_verbs(&self, subresource: &str) -> &'static [&'static str] {
        match control_plane_subresource(&self.group, &self.resource, subresource) {
            Some(s) if self.custom.is_none() => s.verbs,
            _ => SUBRESOURCE_VERBS,
        }
    }

    /// Whether the resource supports `verb` (`get`, `list`, `watch`, ...).
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// A subresource of a built-in resource that is not a view of the stored
/// object (`status`, `scale`) but an action of the control plane: the
/// scheduler's `pods/binding`, `pods/eviction`, `serviceaccounts/token`,
/// the kubelet's `pods/log`, ... Served by their own handlers
/// (`api/handlers/subresource.rs`), listed in discovery as kube lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlPlaneSubresource {
    pub group: &'static str,
    pub resource: &'static str,
    pub subresource: &'static str,
    pub response_group: &'static str,
    pub response_version: &'static str,
    pub response_kind: &'static str,
    pub verbs: &'static [&'static str],
}

const fn special(
    group: &'static str,
    resource: &'static str,
    subresource: &'static str,
    response: (&'static str, &'static str, &'static str),
    verbs: &'static [&'static str],
) -> ControlPlaneSubresource {
    ControlPlaneSubresource {
        group,
        resource,
        subresource,
        response_group: response.0,
        response_version: response.1,
        response_kind: response.2,
        verbs,
    }
}

const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// kube-apiserver v1.36's control-plane subresources (its discovery:
/// `generated/kube_resources.tsv`).
pub static CONTROL_PLANE_SUBRESOURCES: &[ControlPlaneSubresource] = &[
    special("", "namespaces", "finalize", ("", "v1", "Namespace"), &["update"]),
    special("", "nodes", "proxy", ("", "v1", "NodeProxyOptions"), PROXY_VERBS),
    special("", "pods", "attach", ("", "v1", "PodAttachOptions"), &["create", "get"]),
    special("", "pods", "binding", ("", "v1", "Binding"), &["create"]),
    special("", "pods", "ephemeralcontainers", ("", "v1", "Pod"), &["get", "patch", "update"]),
    special("", "pods", "eviction", ("policy", "v1", "Eviction"), &["create"]),
    special("", "pods", "exec", ("", "v1", "PodExecOptions"), &["create", "get"]),
    special("", "pods", "log", ("", "v1", "Pod"), &["get"]),
    special("", "pods", "portforward", ("", "v1", "PodPortForwardOptions"), &["create", "get"]),
    special("", "pods", "proxy", ("", "v1", "PodProxyOptions"), PROXY_VERBS),
    special("", "pods", "resize", ("", "v1", "Pod"), &["get", "patch", "update"]),
    special("", "serviceaccounts", "token", ("authentication.k8s.io", "v1", "TokenRequest"), &["create"]),
    special("", "services", "proxy", ("", "v1", "ServiceProxyOptions"), PROXY_VERBS),
    special(
        "certificates.k8s.io",
        "certificatesigningrequests",
        "approval",
        ("certificates.k8s.io", "v1", "CertificateSigningRequest"),
        &["get", "patch", "update"],
    ),
];

/// The control-plane subresource `group`/`resource`/`subresource`, if it is one.
pub fn control_plane_subresource(
    group: &str,
    resource: &str,
    subresource: &str,
) -> Option<&'static ControlPlaneSubresource> {
    CONTROL_PLANE_SUBRESOURCES
        .iter()
        .find(|s| s.group == group && s.resource == resource && s.subresource == subresource)
}

/// The review APIs kube-apiserver v1.36 serves: create-only virtual
/// resources, not stored (served by `api/handlers/review.rs`, not from the
/// registry), listed in discovery: (group, version, resource, namespaced, kind).
pub static REVIEW_RESOURCES: &[(&str, &str, &str, bool, &str)] = &[
    ("authentication.k8s.io", "v1", "selfsubjectreviews", false, "SelfSubjectReview"),
    ("authentication.k8s.io", "v1", "tokenreviews", false, "TokenReview"),
    ("authorization.k8s.io", "v1", "localsubjectaccessreviews", true, "LocalSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews", false, "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "selfsubjectrulesreviews", false, "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "v1", "subjectaccessreviews", false, "SubjectAccessReview"),
];

/// [`REVIEW_RESOURCES`] as discovery lists them (verb `create` only).
pub fn review_resources() -> &'static [ResourceInfo] {
    static INFOS: std::sync::OnceLock<Vec<ResourceInfo>> = std::sync::OnceLock::new();
    INFOS.get_or_init(|| {
        REVIEW_RESOURCES
            .iter()
            .map(|(group, version, resource, namespaced, kind)| ResourceInfo {
                group: group.to_string(),
                version: version.to_string(),
                resource: resource.to_string(),
                singular: kind.to_lowercase(),
                kind: kind.to_string(),
                list_kind: String::new(),
                namespaced: *namespaced,
                short_names: Vec::new(),
                categories: Vec::new(),
                verbs: vec!["create".into()],
                selectable_fields: Vec::new(),
                allow_create_on_update: false,
                has_generation: false,
                subresources: Vec::new(),
                custom: None,
            })
            .collect()
    })
}

/// One row of the generated built-in table (`generated/builtin.rs`).
#[derive(Clone, Copy, Debug)]
pub struct BuiltinResource {
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub list_kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub verbs: &'static [&'static str],
    pub selectable_fields: &'static [&'static str],
    pub allow_create_on_update: bool,
    pub has_generation: bool,
    pub subresources: &'static [&'static str],
}

impl BuiltinResource {
    pub fn to_resource_info(&self) -> ResourceInfo {
        let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ResourceInfo {
            group: self.group.to_string(),
            version: self.version.to_string(),
            resource: self.resource.to_string(),
            singular: self.singular.to_string(),
            kind: self.kind.to_string(),
            list_kind: self.list_kind.to_string(),
            namespaced: self.namespaced,
            short_names: strings(self.short_names),
            categories: strings(self.categories),
            verbs: strings(self.verbs),
            selectable_fields: strings(self.selectable_fields),
            allow_create_on_update: self.allow_create_on_update,
            has_generation: self.has_generation,
            subresources: {
                let mut subresources = strings(self.subresources);
                subresources.extend(
                    CONTROL_PLANE_SUBRESOURCES
                        .iter()
                        .filter(|s| s.group == self.group && s.resource == self.resource)
                        .map(|s| s.subresource.to_string()),
                );
                subresources
            },
            custom: None,
        }
    }
}

/// The built-in table as compiled in.
pub fn builtin_resources() -> &'static [BuiltinResource] {
    super::generated::builtin::BUILTIN_RESOURCES
}

fn is_builtin(group: &str, resource: &str) -> bool {
    builtin_resources().iter().any(|b| b.group == group && b.resource == resource)
}

/// kube-apiserver's group priorities (`GroupPriorityMinimum` of its
/// APIServices), highest first in discovery. Groups not listed (custom
/// resources) get [`CUSTOM_GROUP_PRIORITY`].
const GROUP_PRIORITY: &[(&str, u32)] = &[
    ("", 18000),
    ("apiregistration.k8s.io", 18000),
    ("apps", 17800),
    ("events.k8s.io", 17750),
    ("authentication.k8s.io", 17700),
    ("authorization.k8s.io", 17600),
    ("autoscaling", 17500),
    ("batch", 17400),
    ("certificates.k8s.io", 17300),
    ("networking.k8s.io", 17200),
    ("policy", 17100),
    ("rbac.authorization.k8s.io", 17000),
    ("storage.k8s.io", 16800),
    ("admissionregistration.k8s.io", 16700),
    ("apiextensions.k8s.io", 16700),
    ("scheduling.k8s.io", 16600),
    ("coordination.k8s.io", 16500),
    ("node.k8s.io", 16300),
    ("discovery.k8s.io", 16200),
    ("flowcontrol.apiserver.k8s.io", 16100),
    ("resource.k8s.io", 15900),
];

/// The priority kube-apiserver gives the groups of CustomResourceDefinitions.
pub const CUSTOM_GROUP_PRIORITY: u32 = 1000;

/// Discovery priority of a group: higher is listed first.
pub fn group_priority(group: &str) -> u32 {
    GROUP_PRIORITY.iter().find(|(g, _)| *g == group).map_or(CUSTOM_GROUP_PRIORITY, |(_, p)| *p)
}

/// Discovery order of groups: core first, then by priority, then by name.
pub fn compare_groups(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => group_priority(b).cmp(&group_priority(a)).then_with(|| a.cmp(b)),
    }
}

/// Kubernetes' version order, most preferred first: GA before beta before
/// alpha, higher numbers first; versions of another shape last, by name.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u32, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 || rest.starts_with('0') {
            return None;
        }
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((2, major, 0));
        }
        let (stage, num) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) || num.starts_with('0') {
            return None;
        }
        Some((stage, major, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        // Stage first (GA, beta, alpha), then major, then minor; all descending.
        (Some(x), Some(y)) => y.0.cmp(&x.0).then(y.1.cmp(&x.1)).then(y.2.cmp(&x.2)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// A served group-version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupVersion {
    /// Empty for the legacy core group.
    pub group: String,
    pub version: String,
}

impl GroupVersion {
    /// `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The path of the group-version under the server root: `api/v1` or
    /// `apis/apps/v1` (no leading slash, as the OpenAPI v3 index names it).
    pub fn path(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }
}

/// Why a resource cannot be added to or removed from the registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("resource {resource}.{group} is built in and cannot be replaced or removed")]
    Builtin { group: String, resource: String },
    #[error("invalid resource {resource:?} in group {group:?}: {reason}")]
    Invalid { group: String, resource: String, reason: &'static str },
}

/// The resources the server serves. Owned and cheap to share behind an `Arc`;
/// cloning copies the entries.
#[derive(Clone, Debug)]
pub struct Registry {
    /// Entries in discovery order.
    entries: Vec<ResourceInfo>,
    /// Indexes into `entries`, sorted by (group, version, resource).
    by_gvr: Vec<usize>,
    /// Indexes into `entries`, sorted by (group, version, kind).
    by_gvk: Vec<usize>,
}

impl Registry {
    /// The registry of built-in resources only.
    pub fn builtin() -> Registry {
        let entries = builtin_resources().iter().map(BuiltinResource::to_resource_info).collect();
        let mut registry = Registry { entries, by_gvr: Vec::new(), by_gvk: Vec::new() };
        registry.reindex();
        registry
    }

    fn reindex(&mut self) {
        self.entries.sort_by(|a, b| {
            compare_groups(&a.group, &b.group)
                .then_with(|| compare_versions(&a.version, &b.version))
                .then_with(|| a.resource.cmp(&b.resource))
        });
        let gvr = |r: &ResourceInfo| (r.group.clone(), r.version.clone(), r.resource.clone());
        let gvk = |r: &ResourceInfo| (r.group.clone(), r.version.clone(), r.kind.clone());
        let mut by_gvr: Vec<usize> = (0..self.entries.len()).collect();
        by_gvr.sort_by_key(|i| gvr(&self.entries[*i]));
        let mut by_gvk: Vec<usize> = (0..self.entries.len()).collect();
        by_gvk.sort_by_key(|i| gvk(&self.entries[*i]));
        self.by_gvr = by_gvr;
        self.by_gvk = by_gvk;
    }

    /// The resource served at `/apis/{group}/{version}/{resource}` (group empty
    /// for `/api/v1`).
    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<&ResourceInfo> {
        let key = (group, version, resource);
        self.by_gvr
            .binary_search_by(|i| {
                let e = &self.entries[*i];
                (e.group.as_str(), e.version.as_str(), e.resource.as_str()).cmp(&key)
            })
            .ok()
            .map(|pos| &self.entries[self.by_gvr[pos]])
    }

    /// The resource whose objects have this group, version and kind.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<&ResourceInfo> {
        let key = (group, version, kind);
        self.by_gvk
            .binary_search_by(|i| {
                let e = &self.entries[*i];
                (e.group.as_str(), e.version.as_str(), e.kind.as_str()).cmp(&key)
            })
            .ok()
            .map(|pos| &self.entries[self.by_gvk[pos]])
    }

    /// The resource of `group` (any version) that `name` names, as kubectl
    /// resolves it: plural, singular, or short name, case-insensitively.
    pub fn by_name_or_short_name(&self, group: &str, name: &str) -> Option<&ResourceInfo> {
        let in_group = || self.entries.iter().filter(move |e| e.group == group);
        in_group()
            .find(|e| e.resource.eq_ignore_ascii_case(name))
            .or_else(|| in_group().find(|e| e.singular.eq_ignore_ascii_case(name)))
            .or_else(|| in_group().find(|e| e.short_names.iter().any(|s| s.eq_ignore_ascii_case(name))))
    }

    /// Every resource, in discovery order.
    pub fn iter(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.entries.iter()
    }

    /// The resources of one group-version, by resource name.
    pub fn resources_of<'a>(&'a self, group: &'a str, version: &'a str) -> impl Iterator<Item = &'a ResourceInfo> + 'a {
        self.entries.iter().filter(move |e| e.group == group && e.version == version)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every served group-version in discovery order: core `v1` first, then
    /// groups by kube-apiserver's priority, versions most preferred first.
    pub fn group_versions(&self) -> Vec<GroupVersion> {
        let mut out: Vec<GroupVersion> = Vec::new();
        for e in &self.entries {
            if !out.iter().any(|gv| gv.group == e.group && gv.version == e.version) {
                out.push(GroupVersion { group: e.group.clone(), version: e.version.clone() });
            }
        }
        out
    }

    /// Adds a custom resource, or replaces the entry with the same (group,
    /// resource), returning the replaced entry. Built-in resources cannot be
    /// replaced.
    pub fn insert(&mut self, info: ResourceInfo) -> Result<Option<ResourceInfo>, RegistryError> {
        let invalid =
            |reason| RegistryError::Invalid { group: info.group.clone(), resource: info.resource.clone(), reason };
        if info.resource.is_empty() || info.resource.contains('/') {
            return Err(invalid("resource must be non-empty and contain no '/'"));
        }
        if info.version.is_empty() || info.kind.is_empty() || info.list_kind.is_empty() {
            return Err(invalid("version, kind and list kind must be non-empty"));
        }
        if is_builtin(&info.group, &info.resource) {
            return Err(RegistryError::Builtin { group: info.group, resource: info.resource });
        }
        let old = self
            .entries
            .iter()
            .position(|e| e.group == info.group && e.resource == info.resource)
            .map(|i| self.entries.remove(i));
        self.entries.push(info);
        self.reindex();
        Ok(old)
    }

    /// Serves the resources of the definition named `definition` (one per
    /// served version, from `crd::served_resources`), replacing what it served
    /// before. Entries that would replace a built-in resource or another
    /// definition's resource are skipped (their names were not accepted).
    pub fn set_definition(&mut self, definition: &str, resources: Vec<ResourceInfo>) {
        self.entries.retain(|e| e.custom.as_ref().is_none_or(|c| c.definition != definition));
        for info in resources {
            let taken = self.entries.iter().any(|e| {
                e.group == info.group
                    && e.resource == info.resource
                    && e.custom.as_ref().is_none_or(|c| c.definition != definition)
            });
            if !taken && !info.resource.is_empty() && !info.resource.contains('/') && !info.version.is_empty() {
                self.entries.push(info);
            }
        }
        self.reindex();
    }

    /// Stops serving the resources of the definition named `definition`.
    pub fn remove_definition(&mut self, definition: &str) {
        self.entries.retain(|e| e.custom.as_ref().is_none_or(|c| c.definition != definition));
        self.reindex();
    }

    /// Removes a custom resource, returning it.
    pub fn remove(&mut self, group: &str, resource: &str) -> Result<Option<ResourceInfo>, RegistryError> {
        if is_builtin(group, resource) {
            return Err(RegistryError::Builtin { group: group.to_string(), resource: resource.to_string() });
        }
        let old = self
            .entries
            .iter()
            .position(|e| e.group == group && e.resource == resource)
            .map(|i| self.entries.remove(i));
        self.reindex();
        Ok(old)
    }

    /// This registry without the given (group, version, resource) entries,
    /// built-in or not (`--runtime-config` disabling what the server serves).
    pub fn without(mut self, disabled: &[(String, String, String)]) -> Registry {
        self.entries.retain(|e| !disabled.iter().any(|(g, v, r)| *g == e.group && *v == e.version && *r == e.resource));
        self.reindex();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

    /// The create-only review APIs kube serves, which are not stored
    /// resources (served by their own handlers, not from the registry).
    const REVIEWS: &[&str] = &[
        "selfsubjectreviews",
        "tokenreviews",
        "localsubjectaccessreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
        "subjectaccessreviews",
    ];

    /// (group, version, resource, namespaced, kind, verbs) of every resource
    /// kube-apiserver v1.36 serves (`generated/kube_resources.tsv`, derived
    /// from its OpenAPI documents), subresources and review APIs left out.
    fn kube_resources() -> Vec<(String, String, String, bool, String, Vec<String>)> {
        include_str!("generated/kube_resources.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let (group, version) = f[0].rsplit_once('/').unwrap_or(("", f[0]));
                (!f[1].contains('/') && !REVIEWS.contains(&f[1])).then(|| {
                    (
                        group.to_string(),
                        version.to_string(),
                        f[1].to_string(),
                        f[2] == "true",
                        f[3].to_string(),
                        f[4].split(',').map(str::to_string).collect(),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn every_resource_kube_serves_is_present_with_kind_scope_and_verbs() {
        let r = Registry::builtin();
        let expected = kube_resources();
        assert_eq!(expected.len(), 62);
        assert_eq!(r.len(), expected.len());
        for (group, version, resource, namespaced, kind, verbs) in &expected {
            let info = r.lookup(group, version, resource).unwrap_or_else(|| panic!("{resource}"));
            assert_eq!(&info.kind, kind);
            if info.has_verb("list") {
                assert_eq!(info.list_kind, format!("{kind}List"));
            } else {
                assert_eq!(info.list_kind, "");
            }
            assert_eq!(info.singular, kind.to_lowercase());
            assert_eq!(info.namespaced, *namespaced, "{resource}");
            assert_eq!(&info.verbs, verbs, "{resource}");
            assert_eq!(r.by_kind(group, version, kind).map(|i| &i.resource), Some(&info.resource));
        }
        // Most resources have every verb; namespaces lack deletecollection.
        let all = r.iter().filter(|i| i.verbs == ALL_VERBS).count();
        assert_eq!(all, expected.len() - 3);
    }

    #[test]
    fn facts_from_the_hand_kept_table() {
        let r = Registry::builtin();
        let pods = r.lookup("", "v1", "pods").expect("pods");
        assert_eq!(pods.short_names, ["po"]);
        assert_eq!(pods.categories, ["all"]);
        assert!(pods.selectable_fields.iter().any(|f| f == "spec.nodeName"));
        assert!(pods.has_generation);
        assert_eq!(
            pods.subresources,
            [
                "status",
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize"
            ]
        );
        assert_eq!(pods.subresource_response_kind("eviction"), Some(("policy", "v1", "Eviction")));
        assert_eq!(pods.subresource_verbs("binding"), ["create"]);
        assert_eq!(pods.subresource_verbs("status"), ["get", "patch", "update"]);
        let deploy = r.lookup("apps", "v1", "deployments").expect("deployments");
        assert_eq!(deploy.subresources, ["scale", "status"]);
        assert_eq!(deploy.subresource_response_kind("scale"), Some(("autoscaling", "v1", "Scale")));
        assert_eq!(deploy.subresource_response_kind("status"), Some(("apps", "v1", "Deployment")));
        assert_eq!(deploy.subresource_response_kind("exec"), None);
        let crd = r.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions").expect("crd");
        assert_eq!(crd.short_names, ["crd", "crds"]);
        assert_eq!(crd.categories, ["api-extensions"]);
        for resource in ["endpoints", "events"] {
            assert!(r.lookup("", "v1", resource).is_some_and(|i| i.allow_create_on_update));
        }
        assert!(!pods.allow_create_on_update);
        assert!(r.lookup("coordination.k8s.io", "v1", "leases").is_some_and(|i| i.allow_create_on_update));
        assert!(!r.lookup("", "v1", "configmaps").is_some_and(|i| i.has_generation));
    }

    #[test]
    fn namespaces_are_cluster_scoped() {
        let r = Registry::builtin();
        assert_eq!(r.lookup("", "v1", "namespaces").map(|i| i.namespaced), Some(false));
    }

    #[test]
    fn unknown_lookups_return_none() {
        let r = Registry::builtin();
        assert!(r.lookup("", "v1", "widgets").is_none());
        assert!(r.lookup("apps", "v1", "pods").is_none());
        assert!(r.lookup("", "v2", "pods").is_none());
        assert!(r.by_kind("", "v1", "Deployment").is_none());
        assert!(r.by_name_or_short_name("", "deploy").is_none());
    }

    #[test]
    fn short_and_singular_names_resolve() {
        let r = Registry::builtin();
        for (group, name, resource) in [
            ("", "po", "pods"),
            ("", "pod", "pods"),
            ("", "Pods", "pods"),
            ("", "svc", "services"),
            ("apps", "deploy", "deployments"),
            ("apiextensions.k8s.io", "crds", "customresourcedefinitions"),
        ] {
            assert_eq!(r.by_name_or_short_name(group, name).map(|i| i.resource.as_str()), Some(resource));
        }
    }

    #[test]
    fn group_versions_follow_kube_priority() {
        let r = Registry::builtin();
        let gvs: Vec<String> = r.group_versions().iter().map(GroupVersion::api_version).collect();
        assert_eq!(
            gvs,
            [
                "v1",
                "apiregistration.k8s.io/v1",
                "apps/v1",
                "events.k8s.io/v1",
                "autoscaling/v2",
                "autoscaling/v1",
                "batch/v1",
                "certificates.k8s.io/v1",
                "networking.k8s.io/v1",
                "policy/v1",
                "rbac.authorization.k8s.io/v1",
                "storage.k8s.io/v1",
                "admissionregistration.k8s.io/v1",
                "apiextensions.k8s.io/v1",
                "scheduling.k8s.io/v1",
                "coordination.k8s.io/v1",
                "node.k8s.io/v1",
                "discovery.k8s.io/v1",
                "flowcontrol.apiserver.k8s.io/v1",
                "resource.k8s.io/v1",
            ]
        );
    }

    fn widget(group: &str, version: &str) -> ResourceInfo {
        ResourceInfo {
            group: group.into(),
            version: version.into(),
            resource: "widgets".into(),
            singular: "widget".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            namespaced: true,
            short_names: vec!["wd".into()],
            categories: vec!["all".into()],
            verbs: ALL_VERBS.iter().map(|v| v.to_string()).collect(),
            selectable_fields: vec![],
            allow_create_on_update: false,
            has_generation: true,
            subresources: vec!["status".into()],
            custom: None,
        }
    }

    #[test]
    fn custom_resources_can_be_inserted_replaced_and_removed() {
        let mut r = Registry::builtin();
        assert_eq!(r.insert(widget("example.com", "v1beta1")), Ok(None));
        assert!(r.lookup("example.com", "v1beta1", "widgets").is_some());
        assert!(r.by_kind("example.com", "v1beta1", "Widget").is_some());
        let old = r.insert(widget("example.com", "v1")).expect("replace");
        assert_eq!(old.map(|o| o.version), Some("v1beta1".to_string()));
        assert!(r.lookup("example.com", "v1beta1", "widgets").is_none());
        assert!(r.lookup("example.com", "v1", "widgets").is_some());
        // Custom groups come after every built-in group.
        assert_eq!(r.group_versions().last().map(GroupVersion::api_version), Some("example.com/v1".into()));
        assert_eq!(r.remove("example.com", "widgets").map(|o| o.is_some()), Ok(true));
        assert!(r.lookup("example.com", "v1", "widgets").is_none());
        assert_eq!(r.len(), kube_resources().len());
    }

    #[test]
    fn builtins_cannot_be_replaced_or_removed() {
        let mut r = Registry::builtin();
        let mut pods = widget("", "v1");
        pods.resource = "pods".into();
        assert!(matches!(r.insert(pods), Err(RegistryError::Builtin { .. })));
        assert!(matches!(r.remove("", "pods"), Err(RegistryError::Builtin { .. })));
        let mut bad = widget("example.com", "v1");
        bad.resource = "a/b".into();
        assert!(matches!(r.insert(bad), Err(RegistryError::Invalid { .. })));
        assert!(r.lookup("", "v1", "pods").is_some());
    }

    #[test]
    fn version_order_is_kube_aware() {
        let mut versions = vec!["v1alpha1", "v2", "v1beta2", "foo", "v1", "v1beta1", "v10", "v2alpha1"];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(versions, ["v10", "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "foo"]);
    }
}
