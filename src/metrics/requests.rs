//! The request metrics' labels, as kube-apiserver sets them
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go`): the
//! verb (`GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`,
//! `CONNECT`, else `other`), `dry_run`, the request's target (`group`,
//! `version`, `resource`, `subresource`, or for a non-resource request an
//! empty resource and its path as `subresource`), `scope` (`resource`,
//! `namespace`, `cluster`, or empty) and the status code.
//!
//! Invariant: every label value comes from a closed set: verbs, scopes and
//! dry-run values are enums; targets are interned once each, and only after
//! the caller checked them against the served resources (a URL segment no
//! resource has never becomes a series); codes are HTTP status codes.

use std::collections::HashMap;

/// The reported verb (kube's `cleanVerb` of `CanonicalVerb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    Get,
    List,
    Watch,
    Post,
    Put,
    Patch,
    Apply,
    Delete,
    Connect,
    Other,
}

impl Verb {
    pub fn name(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::List => "LIST",
            Verb::Watch => "WATCH",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Apply => "APPLY",
            Verb::Delete => "DELETE",
            Verb::Connect => "CONNECT",
            Verb::Other => "other",
        }
    }

    /// Long-running requests (kube's `apiserver_longrunning_requests`).
    pub fn is_long_running(self) -> bool {
        matches!(self, Verb::Watch | Verb::Connect)
    }
}

/// kube's `CleanScope` of the route: `resource` for an object (or a
/// create), `namespace` for a namespaced collection, `cluster` for a
/// cluster-wide one, empty for a non-resource request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Resource,
    Namespace,
    Cluster,
    None,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Resource => "resource",
            Scope::Namespace => "namespace",
            Scope::Cluster => "cluster",
            Scope::None => "",
        }
    }
}

/// kube's `cleanDryRun`: empty, `All`, or `invalid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DryRun {
    No,
    All,
    Invalid,
}

impl DryRun {
    pub fn name(self) -> &'static str {
        match self {
            DryRun::No => "",
            DryRun::All => "All",
            DryRun::Invalid => "invalid",
        }
    }
}

/// What a request addressed, as its labels.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    pub group: String,
    pub version: String,
    pub resource: String,
    /// The subresource; for a non-resource request, its path.
    pub subresource: String,
}

/// An interned [`Target`] of one shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId(pub u32);

/// One request series: every label but the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeriesKey {
    pub verb: Verb,
    pub dry_run: DryRun,
    pub scope: Scope,
    pub target: TargetId,
}

/// The targets one shard has seen, each with its id.
#[derive(Debug, Default)]
pub struct Targets {
    /// The four labels joined by NUL (which no URL holds) to its id.
    ids: HashMap<String, TargetId>,
    targets: Vec<Target>,
    /// Reused to build a lookup key without allocating.
    scratch: String,
}

impl Targets {
    /// The id of a target already seen, or, when `served()` says it is a
    /// served resource (or a known path), a new one; `None` otherwise.
    pub fn intern(
        &mut self,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        served: impl FnOnce() -> bool,
    ) -> Option<TargetId> {
        self.scratch.clear();
        for (i, part) in [group, version, resource, subresource].into_iter().enumerate() {
            if i > 0 {
                self.scratch.push('\0');
            }
            self.scratch.push_str(part);
        }
        if let Some(id) = self.ids.get(self.scratch.as_str()) {
            return Some(*id);
        }
        if !served() {
            return None;
        }
        let id = TargetId(self.targets.len() as u32);
        self.ids.insert(self.scratch.clone(), id);
        self.targets.push(Target {
            group: group.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
            subresource: subresource.to_string(),
        });
        Some(id)
    }

    pub fn get(&self, id: TargetId) -> Option<&Target> {
        self.targets.get(id.0 as usize)
    }

    pub fn len(&self) -> usize {
        self.targets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_interned_once_and_only_when_served() {
        let mut targets = Targets::default();
        assert_eq!(targets.intern("", "v1", "nonsense", "", || false), None);
        assert!(targets.is_empty(), "an unserved resource is not a series");
        let pods = targets.intern("", "v1", "pods", "", || true).unwrap();
        let status = targets.intern("", "v1", "pods", "status", || true).unwrap();
        assert_ne!(pods, status);
        // Seen before: the registry is not asked again.
        assert_eq!(targets.intern("", "v1", "pods", "", || panic!("asked again")), Some(pods));
        // A non-resource path is a target of its own.
        let readyz = targets.intern("", "", "", "/readyz", || true).unwrap();
        assert_ne!(readyz, pods);
        assert_eq!(targets.get(status).unwrap().subresource, "status");
        assert_eq!(targets.len(), 3);
    }
}
