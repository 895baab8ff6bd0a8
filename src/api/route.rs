//! URL paths to what they address: discovery documents, health checks, or a
//! resource (collection, object, subresource) in a scope.
//!
//! Invariant: pure string work, never panics; whether a resource exists and
//! which scope it has is decided later against the registry.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HealthKind {
    Livez,
    Readyz,
    Healthz,
}

impl HealthKind {
    pub fn name(&self) -> &'static str {
        match self {
            HealthKind::Livez => "livez",
            HealthKind::Readyz => "readyz",
            HealthKind::Healthz => "healthz",
        }
    }
}

/// A resource path, as written (not yet checked against the registry).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub resource: String,
    /// Set for `/namespaces/{ns}/...` paths.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The legacy `/watch/` prefix was used.
    pub legacy_watch: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1`, `/apis/{group}/{version}`
    GroupVersion {
        group: String,
        version: String,
    },
    Version,
    OpenApiV3Index,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/apps/v1` (path without the prefix)
    OpenApiV3(String),
    OpenApiV2,
    Health {
        kind: HealthKind,
        check: Option<String>,
    },
    /// `/metrics` (Prometheus text format).
    Metrics,
    /// `/.well-known/openid-configuration`: the service account issuer's
    /// OIDC discovery document.
    OpenIdConfiguration,
    /// `/openid/v1/jwks`: the keys service account tokens are signed with.
    OpenIdKeys,
    Resource(ResourcePath),
    NotFound,
}

/// Parses a request path (without the query string).
pub fn parse(path: &str) -> Route {
    let trimmed = path.trim_end_matches('/');
    let segments: Vec<&str> = trimmed.split('/').skip(1).collect();
    if segments.iter().any(|s| s.is_empty()) && !trimmed.is_empty() {
        return Route::NotFound;
    }
    match segments.as_slice() {
        ["api"] => Route::CoreVersions,
        ["apis"] => Route::Groups,
        ["apis", group] => Route::Group(group.to_string()),
        ["version"] => Route::Version,
        ["openapi", "v3"] => Route::OpenApiV3Index,
        ["openapi", "v3", rest @ ..] => Route::OpenApiV3(rest.join("/")),
        ["openapi", "v2"] => Route::OpenApiV2,
        ["metrics"] => Route::Metrics,
        [".well-known", "openid-configuration"] => Route::OpenIdConfiguration,
        ["openid", "v1", "jwks"] => Route::OpenIdKeys,
        [kind @ ("livez" | "readyz" | "healthz")] => Route::Health { kind: health_kind(kind), check: None },
        [kind @ ("livez" | "readyz" | "healthz"), check] => {
            Route::Health { kind: health_kind(kind), check: Some(check.to_string()) }
        }
        [kind @ ("livez" | "readyz" | "healthz"), "poststarthook", hook] => {
            Route::Health { kind: health_kind(kind), check: Some(format!("poststarthook/{hook}")) }
        }
        ["api", version] => Route::GroupVersion { group: String::new(), version: version.to_string() },
        ["apis", group, version] => Route::GroupVersion { group: group.to_string(), version: version.to_string() },
        ["api", version, rest @ ..] => resource("", version, rest),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        _ => Route::NotFound,
    }
}

fn health_kind(name: &str) -> HealthKind {
    match name {
        "livez" => HealthKind::Livez,
        "readyz" => HealthKind::Readyz,
        _ => HealthKind::Healthz,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let (legacy_watch, rest) = match rest {
        ["watch", rest @ ..] => (true, rest),
        _ => (false, rest),
    };
    let mut p = ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        legacy_watch,
        ..ResourcePath::default()
    };
    let s = |x: &&str| Some(x.to_string());
    match rest {
        [resource] => p.resource = resource.to_string(),
        // Subresources of a namespace itself.
        ["namespaces", name, sub @ ("status" | "finalize")] => {
            p.resource = "namespaces".into();
            p.name = s(name);
            p.subresource = s(sub);
        }
        ["namespaces", ns, resource] => {
            p.namespace = s(ns);
            p.resource = resource.to_string();
        }
        ["namespaces", ns, resource, name] => {
            p.namespace = s(ns);
            p.resource = resource.to_string();
            p.name = s(name);
        }
        ["namespaces", ns, resource, name, sub] => {
            p.namespace = s(ns);
            p.resource = resource.to_string();
            p.name = s(name);
            p.subresource = s(sub);
        }
        [resource, name] => {
            p.resource = resource.to_string();
            p.name = s(name);
        }
        [resource, name, sub] => {
            p.resource = resource.to_string();
            p.name = s(name);
            p.subresource = s(sub);
        }
        // A proxy subresource's own path (`pods/NAME/proxy/healthz`): the
        // proxy target, which the proxy handlers do not reach anyway.
        ["namespaces", ns, resource, name, "proxy", _, ..] => {
            p.namespace = s(ns);
            p.resource = resource.to_string();
            p.name = s(name);
            p.subresource = Some("proxy".into());
        }
        [resource, name, "proxy", _, ..] => {
            p.resource = resource.to_string();
            p.name = s(name);
            p.subresource = Some("proxy".into());
        }
        _ => return Route::NotFound,
    }
    Route::Resource(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Route::Resource(p) => p,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn discovery_and_health_paths() {
        assert_eq!(parse("/api"), Route::CoreVersions);
        assert_eq!(parse("/api/"), Route::CoreVersions);
        assert_eq!(parse("/apis"), Route::Groups);
        assert_eq!(parse("/apis/apps"), Route::Group("apps".into()));
        assert_eq!(parse("/api/v1"), Route::GroupVersion { group: "".into(), version: "v1".into() });
        assert_eq!(parse("/apis/apps/v1"), Route::GroupVersion { group: "apps".into(), version: "v1".into() });
        assert_eq!(parse("/livez/ping"), Route::Health { kind: HealthKind::Livez, check: Some("ping".into()) });
        assert_eq!(
            parse("/readyz/poststarthook/start-system-namespaces-controller"),
            Route::Health {
                kind: HealthKind::Readyz,
                check: Some("poststarthook/start-system-namespaces-controller".into())
            }
        );
        assert_eq!(parse("/openapi/v3/apis/apps/v1"), Route::OpenApiV3("apis/apps/v1".into()));
        assert_eq!(parse("/nope"), Route::NotFound);
        assert_eq!(parse("/.well-known/openid-configuration"), Route::OpenIdConfiguration);
        assert_eq!(parse("/openid/v1/jwks"), Route::OpenIdKeys);
        assert_eq!(parse("/api//v1"), Route::NotFound);
    }

    #[test]
    fn resource_paths() {
        let p = res("/api/v1/namespaces/default/pods/web/status");
        assert_eq!(
            (p.namespace.as_deref(), p.resource.as_str(), p.name.as_deref(), p.subresource.as_deref()),
            (Some("default"), "pods", Some("web"), Some("status"))
        );
        let p = res("/api/v1/namespaces/default");
        assert_eq!((p.namespace, p.resource.as_str(), p.name.as_deref()), (None, "namespaces", Some("default")));
        let p = res("/api/v1/namespaces/default/status");
        assert_eq!(
            (p.resource.as_str(), p.name.as_deref(), p.subresource.as_deref()),
            ("namespaces", Some("default"), Some("status"))
        );
        let p = res("/api/v1/namespaces/demo/configmaps");
        assert_eq!((p.namespace.as_deref(), p.resource.as_str(), p.name), (Some("demo"), "configmaps", None));
        let p = res("/apis/apps/v1/deployments");
        assert_eq!((p.group.as_str(), p.resource.as_str(), p.namespace), ("apps", "deployments", None));
        let p = res("/api/v1/watch/namespaces/x/pods");
        assert!(p.legacy_watch);
        assert_eq!(parse("/api/v1/namespaces/a/b/c/d/e"), Route::NotFound);
        let p = res("/api/v1/namespaces/a/pods/p/proxy/metrics/x");
        assert_eq!((p.name.as_deref(), p.subresource.as_deref()), (Some("p"), Some("proxy")));
        assert_eq!(res("/api/v1/nodes/n/proxy/stats").subresource.as_deref(), Some("proxy"));
    }
}
