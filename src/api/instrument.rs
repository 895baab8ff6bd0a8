//! Request metrics at the API's edge: a request's labels as kube-apiserver
//! derives them (`metrics.go`'s `CanonicalVerb`, `cleanVerb`,
//! `cleanDryRun` and the installer's route scope), and the record that
//! times it from its arrival until its response body ends, as
//! kube-apiserver's `InstrumentRouteFunc` times a handler until it returns.
//!
//! As in kube-apiserver: a WATCH is long-running (in
//! `apiserver_longrunning_requests` while open) and is counted and timed
//! when it ends, over its whole life; a request refused by overload
//! protection (429) is counted, not timed; requests refused by
//! authentication or authorization (401, 403), and paths that address
//! nothing (404 before any handler: an unknown path or resource), are not
//! recorded. Non-resource requests carry their path as `subresource`, with
//! the variable part of discovery and health paths written as a template
//! (`/apis/{group}`), so the label set stays bounded.
//!
//! Invariant: a request's target is a resource the registry serves (checked
//! the first time a shard sees it) or a fixed path template: what a client
//! puts in a URL never becomes a label value by itself.

use super::params::Params;
use super::route::Route;
use super::Backend;
use crate::metrics::requests::{DryRun, Scope, SeriesKey, Verb};
use crate::metrics::ShardMetrics;
use crate::types::registry::ResourceInfo;
use http::Method;
use std::rc::Rc;
use std::time::Instant;

/// Subresources kube-apiserver reports as CONNECT.
const CONNECT_SUBRESOURCES: [&str; 5] = ["log", "exec", "portforward", "attach", "proxy"];

/// A request's series on this shard, or `None` when it is not recorded (a
/// backend without metrics, a path that addresses nothing).
pub fn series(
    backend: &impl Backend,
    method: &Method,
    route: &Route,
    params: &Params,
    content_type: Option<&str>,
) -> Option<(Rc<ShardMetrics>, SeriesKey)> {
    let metrics = backend.metrics()?;
    let (target, scope, subresource, legacy_watch) = match route {
        Route::Resource(path) => {
            let subresource = path.subresource.as_deref().unwrap_or("");
            let target = metrics.target(&path.group, &path.version, &path.resource, subresource, || {
                backend
                    .registry()
                    .lookup(&path.group, &path.version, &path.resource)
                    .is_some_and(|info| subresource.is_empty() || info.subresources.iter().any(|s| s == subresource))
            })?;
            // The route's scope, as kube's installer gives it to its handlers.
            let scope = if path.name.is_some() || *method == Method::POST {
                Scope::Resource
            } else if path.namespace.is_some() {
                Scope::Namespace
            } else {
                Scope::Cluster
            };
            (target, scope, subresource, path.legacy_watch)
        }
        other => {
            let path = non_resource_path(other)?;
            (metrics.target("", "", "", path, || true)?, Scope::None, "", false)
        }
    };
    let mut verb = match *method {
        Method::GET | Method::HEAD if matches!(scope, Scope::Resource | Scope::None) => Verb::Get,
        Method::GET | Method::HEAD => Verb::List,
        Method::POST => Verb::Post,
        Method::PUT => Verb::Put,
        Method::PATCH => Verb::Patch,
        Method::DELETE => Verb::Delete,
        _ => Verb::Other,
    };
    if (*method == Method::GET && params.watch) || legacy_watch {
        verb = Verb::Watch;
    }
    if verb == Verb::Patch && content_type.is_some_and(is_apply) {
        verb = Verb::Apply;
    }
    if CONNECT_SUBRESOURCES.contains(&subresource) {
        verb = Verb::Connect;
    }
    let dry_run = if params.dry_run_unsupported.is_some() {
        DryRun::Invalid
    } else if params.dry_run_all {
        DryRun::All
    } else {
        DryRun::No
    };
    Some((metrics.clone(), SeriesKey { verb, dry_run, scope, target }))
}

/// A server-side apply body (kube reports such a PATCH as APPLY).
fn is_apply(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/apply-patch+yaml")
        || media.eq_ignore_ascii_case("application/apply-patch+cbor")
}

/// The path label of a non-resource request; variable segments as templates.
fn non_resource_path(route: &Route) -> Option<&'static str> {
    use super::route::HealthKind;
    Some(match route {
        Route::CoreVersions => "/api",
        Route::Groups => "/apis",
        Route::Group(_) => "/apis/{group}",
        Route::GroupVersion { group, .. } if group.is_empty() => "/api/{version}",
        Route::GroupVersion { .. } => "/apis/{group}/{version}",
        Route::Version => "/version",
        Route::OpenApiV2 => "/openapi/v2",
        Route::OpenApiV3Index => "/openapi/v3",
        Route::OpenApiV3(_) => "/openapi/v3/{path}",
        Route::Metrics => "/metrics",
        Route::OpenIdConfiguration => "/.well-known/openid-configuration",
        Route::OpenIdKeys => "/openid/v1/jwks",
        Route::Health { kind, check } => match (kind, check) {
            (HealthKind::Livez, None) => "/livez",
            (HealthKind::Readyz, None) => "/readyz",
            (HealthKind::Healthz, None) => "/healthz",
            (HealthKind::Livez, Some(_)) => "/livez/{check}",
            (HealthKind::Readyz, Some(_)) => "/readyz/{check}",
            (HealthKind::Healthz, Some(_)) => "/healthz/{check}",
        },
        Route::Resource(_) | Route::NotFound => return None,
    })
}

/// An admitted request being served: counted and timed when dropped, with
/// the code its response carries (held by the response body, so a streamed
/// list or a watch is timed until its body ends).
pub struct RequestRecord {
    metrics: Rc<ShardMetrics>,
    key: SeriesKey,
    received: Instant,
    code: u16,
}

impl RequestRecord {
    pub fn start(metrics: Rc<ShardMetrics>, key: SeriesKey, received: Instant) -> RequestRecord {
        metrics.request_started(key);
        RequestRecord { metrics, key, received, code: 200 }
    }

    /// The response's status code.
    pub fn set_code(&mut self, code: u16) {
        self.code = code;
    }
}

impl Drop for RequestRecord {
    fn drop(&mut self) {
        self.metrics.request_finished(self.key, self.code, self.received.elapsed());
    }
}

/// A list response of `items` items of `info`'s resource.
pub fn list_returned(backend: &impl Backend, info: &ResourceInfo, items: usize) {
    if let Some(metrics) = backend.metrics() {
        if let Some(target) = metrics.target(&info.group, &info.version, &info.resource, "", || true) {
            metrics.list_returned(target, items as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;

    fn labels(method: Method, uri: &str, content_type: Option<&str>) -> Option<(Verb, Scope, DryRun, String)> {
        let backend =
            MemoryBackend::new(Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 1), 1);
        let uri: http::Uri = uri.parse().unwrap();
        let params = Params::parse(uri.query()).unwrap();
        let route = super::super::route::parse(uri.path());
        let (metrics, key) = series(&backend, &method, &route, &params, content_type)?;
        let sample = metrics.snapshot();
        assert!(sample.requests.is_empty());
        metrics.request_finished(key, 200, std::time::Duration::ZERO);
        let target = metrics.snapshot().requests[0].target.clone();
        Some((
            key.verb,
            key.scope,
            key.dry_run,
            format!("{}/{}/{}/{}", target.group, target.version, target.resource, target.subresource),
        ))
    }

    #[test]
    fn verbs_and_scopes_as_kube_apiserver_reports_them() {
        use DryRun::No;
        let pods = || "/v1/pods/".to_string();
        assert_eq!(
            labels(Method::GET, "/api/v1/namespaces/a/pods", None),
            Some((Verb::List, Scope::Namespace, No, pods()))
        );
        assert_eq!(labels(Method::GET, "/api/v1/pods", None), Some((Verb::List, Scope::Cluster, No, pods())));
        assert_eq!(
            labels(Method::GET, "/api/v1/namespaces/a/pods/p", None),
            Some((Verb::Get, Scope::Resource, No, pods()))
        );
        assert_eq!(
            labels(Method::HEAD, "/api/v1/namespaces/a/pods/p", None),
            Some((Verb::Get, Scope::Resource, No, pods()))
        );
        assert_eq!(
            labels(Method::GET, "/api/v1/namespaces/a/pods?watch=true", None),
            Some((Verb::Watch, Scope::Namespace, No, pods()))
        );
        assert_eq!(
            labels(Method::GET, "/api/v1/watch/namespaces/a/pods", None),
            Some((Verb::Watch, Scope::Namespace, No, pods()))
        );
        // A list naming one object by field selector keeps the route's scope.
        assert_eq!(
            labels(Method::GET, "/api/v1/namespaces/a/pods?fieldSelector=metadata.name%3Dp", None),
            Some((Verb::List, Scope::Namespace, No, pods()))
        );
        assert_eq!(
            labels(Method::POST, "/api/v1/namespaces/a/pods", None),
            Some((Verb::Post, Scope::Resource, No, pods()))
        );
        assert_eq!(
            labels(Method::POST, "/api/v1/namespaces/a/pods?dryRun=All", None),
            Some((Verb::Post, Scope::Resource, DryRun::All, pods()))
        );
        assert_eq!(
            labels(Method::PUT, "/api/v1/namespaces/a/pods/p?dryRun=Some", None),
            Some((Verb::Put, Scope::Resource, DryRun::Invalid, pods()))
        );
        assert_eq!(
            labels(Method::PATCH, "/api/v1/namespaces/a/pods/p", Some("application/apply-patch+yaml; charset=utf-8")),
            Some((Verb::Apply, Scope::Resource, No, pods()))
        );
        assert_eq!(
            labels(Method::PATCH, "/api/v1/namespaces/a/pods/p", Some("application/merge-patch+json")),
            Some((Verb::Patch, Scope::Resource, No, pods()))
        );
        // deletecollection is a DELETE of the collection.
        assert_eq!(
            labels(Method::DELETE, "/api/v1/namespaces/a/pods", None),
            Some((Verb::Delete, Scope::Namespace, No, pods()))
        );
        assert_eq!(
            labels(Method::PUT, "/apis/apps/v1/namespaces/a/deployments/d/scale", None),
            Some((Verb::Put, Scope::Resource, No, "apps/v1/deployments/scale".into()))
        );
        assert_eq!(
            labels(Method::GET, "/api/v1/namespaces/a", None),
            Some((Verb::Get, Scope::Resource, No, "/v1/namespaces/".into()))
        );
    }

    #[test]
    fn non_resource_paths_are_templates_and_unknown_targets_are_not_recorded() {
        assert_eq!(
            labels(Method::GET, "/readyz", None),
            Some((Verb::Get, Scope::None, DryRun::No, "////readyz".into()))
        );
        assert_eq!(
            labels(Method::GET, "/readyz/anything-at-all", None),
            Some((Verb::Get, Scope::None, DryRun::No, "////readyz/{check}".into()))
        );
        assert_eq!(
            labels(Method::GET, "/apis/made.up/v9", None),
            Some((Verb::Get, Scope::None, DryRun::No, "////apis/{group}/{version}".into()))
        );
        assert_eq!(labels(Method::GET, "/api/v1/namespaces/a/nonsense", None), None);
        assert_eq!(labels(Method::GET, "/api/v1/namespaces/a/pods/p/nonsense", None), None);
        assert_eq!(labels(Method::GET, "/apis/made.up/v1/things", None), None);
        assert_eq!(labels(Method::GET, "/not/a/path", None), None);
    }
}
