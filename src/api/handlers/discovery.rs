//! Discovery, version and OpenAPI documents: the bytes come from `types/`
//! (built from the committed schema tables); this file negotiates and answers.
//! An instance joining a cluster (`--upstream`) adds the cluster's aggregated
//! APIs (APIServices naming a service, whose requests go to the upstream:
//! `api/forward.rs`) to `/apis` and `/apis/GROUP`, as kube's aggregator lists
//! them; their resources are the service's, which this instance does not
//! ask for, so their versions are marked `Stale` in aggregated discovery.

use crate::api::negotiate::{self, Representation};
use crate::api::route::Route;
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::types::{discovery, openapi, openapi_crd, openapi_v2};
use bytes::Bytes;
use http::{Method, Response, StatusCode};

fn json(value: &serde_json::Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// One aggregated group-version: an APIService naming a service.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregated {
    pub group: String,
    pub version: String,
    pub group_priority_minimum: i64,
    pub version_priority: i64,
}

/// The aggregated group-versions among `apiservices` (their JSON), leaving
/// out what `served` says this instance serves itself.
pub fn aggregated_of(apiservices: &[serde_json::Value], served: impl Fn(&str, &str) -> bool) -> Vec<Aggregated> {
    let mut out: Vec<Aggregated> = apiservices
        .iter()
        .filter(|o| o.pointer("/spec/service").is_some_and(|s| s.is_object()))
        .filter_map(|o| {
            let spec = o.get("spec")?;
            let group = spec.get("group")?.as_str()?.to_string();
            let version = spec.get("version")?.as_str()?.to_string();
            Some(Aggregated {
                group_priority_minimum: spec.get("groupPriorityMinimum").and_then(|v| v.as_i64()).unwrap_or(0),
                version_priority: spec.get("versionPriority").and_then(|v| v.as_i64()).unwrap_or(0),
                group,
                version,
            })
        })
        .filter(|a| !a.group.is_empty() && !served(&a.group, &a.version))
        .collect();
    // kube's order: groups by priority (highest first), versions by priority within.
    out.sort_by(|a, b| {
        (b.group_priority_minimum, &a.group, b.version_priority, &a.version).cmp(&(
            a.group_priority_minimum,
            &b.group,
            a.version_priority,
            &b.version,
        ))
    });
    out
}

/// The aggregated groups, each with its versions in order.
fn by_group(aggregated: &[Aggregated]) -> Vec<(&str, Vec<&str>)> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for a in aggregated {
        match groups.iter_mut().find(|(g, _)| *g == a.group) {
            Some((_, versions)) => versions.push(&a.version),
            None => groups.push((&a.group, vec![&a.version])),
        }
    }
    groups
}

/// An APIGroup entry of `/apis` (legacy discovery).
fn api_group_entry(group: &str, versions: &[&str]) -> serde_json::Value {
    let versions: Vec<serde_json::Value> =
        versions.iter().map(|v| serde_json::json!({"groupVersion": format!("{group}/{v}"), "version": v})).collect();
    serde_json::json!({"name": group, "versions": versions, "preferredVersion": versions[0]})
}

/// An APIGroupDiscovery entry (aggregated discovery): the resources are the
/// service's, not known here, so each version is `Stale`, as kube marks a
/// version whose service it could not ask.
fn aggregated_group_entry(group: &str, versions: &[&str]) -> serde_json::Value {
    let versions: Vec<serde_json::Value> =
        versions.iter().map(|v| serde_json::json!({"version": v, "resources": [], "freshness": "Stale"})).collect();
    serde_json::json!({"metadata": {"name": group}, "versions": versions})
}

/// The aggregated APIs of the cluster this instance joined (none when it
/// joined none).
async fn aggregated(backend: &impl Backend) -> Result<Vec<Aggregated>, ApiError> {
    if backend.config().upstream.is_none() {
        return Ok(Vec::new());
    }
    let registry = backend.registry();
    let Some(info) = registry.iter().find(|r| r.group == "apiregistration.k8s.io" && r.resource == "apiservices")
    else {
        return Ok(Vec::new());
    };
    let info = info.clone();
    let objects = super::delete::list_current(backend, &info, None, None).await?;
    let values: Vec<serde_json::Value> = objects.iter().filter_map(|o| serde_json::from_slice(&o.json).ok()).collect();
    Ok(aggregated_of(&values, |g, v| registry.resources_of(g, v).next().is_some()))
}

/// The OpenAPI v3 documents of the served custom group-versions, by path
/// (`apis/G/V`); `v2` gives each the schemas kube publishes in v2.
fn custom_documents(registry: &crate::types::registry::Registry, v2: bool) -> Vec<(String, serde_json::Value)> {
    openapi_crd::custom_group_versions(registry.iter())
        .into_iter()
        .map(|(path, resources)| (path, openapi_crd::document(&resources, v2)))
        .collect()
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    route: &Route,
) -> Result<Response<ResponseBody>, ApiError> {
    if head.method != Method::GET {
        return Err(ApiError::MethodNotAllowed { method: head.method.to_string(), target: Default::default() });
    }
    let aggregated = match route {
        Route::Groups | Route::Group(_) => aggregated(backend).await?,
        _ => Vec::new(),
    };
    let aggregated_groups = by_group(&aggregated);
    let registry = &*backend.registry();
    let ok = |body: Bytes| Ok(respond(StatusCode::OK, "application/json", body));
    match route {
        Route::CoreVersions | Route::Groups => {
            let core = matches!(route, Route::CoreVersions);
            match negotiate::for_discovery(head.accept.as_deref())? {
                Representation::AggregatedDiscovery { version } => {
                    let mut document = if core {
                        discovery::aggregated_discovery_api(registry)
                    } else {
                        discovery::aggregated_discovery_apis(registry)
                    };
                    if let Some(items) = document.get_mut("items").and_then(|i| i.as_array_mut()) {
                        items.extend(aggregated_groups.iter().map(|(g, v)| aggregated_group_entry(g, v)));
                    }
                    // v2beta1 has the same shape under another apiVersion.
                    document["apiVersion"] = serde_json::json!(format!("apidiscovery.k8s.io/{version}"));
                    let body = json(&document);
                    let mut response = respond(StatusCode::OK, "application/json", body);
                    let content_type =
                        format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
                    if let Ok(v) = http::HeaderValue::from_str(&content_type) {
                        response.headers_mut().insert(http::header::CONTENT_TYPE, v);
                    }
                    Ok(response)
                }
                _ if core => ok(json(&discovery::api_versions(&backend.config().listen.to_string()))),
                _ => {
                    let mut list = discovery::api_group_list(registry);
                    if let Some(groups) = list.get_mut("groups").and_then(|g| g.as_array_mut()) {
                        groups.extend(aggregated_groups.iter().map(|(g, v)| api_group_entry(g, v)));
                    }
                    ok(json(&list))
                }
            }
        }
        Route::Group(group) => match discovery::api_group(registry, group) {
            Some(doc) => ok(json(&doc)),
            None => match aggregated_groups.iter().find(|(g, _)| g == group) {
                Some((g, versions)) => {
                    let mut doc = serde_json::json!({"kind": "APIGroup", "apiVersion": "v1"});
                    if let (Some(doc), serde_json::Value::Object(entry)) =
                        (doc.as_object_mut(), api_group_entry(g, versions))
                    {
                        doc.extend(entry);
                    }
                    ok(json(&doc))
                }
                None => Err(ApiError::PathNotFound),
            },
        },
        Route::GroupVersion { group, version } => match discovery::api_resource_list(registry, group, version) {
            Some(doc) => ok(json(&doc)),
            None => Err(ApiError::PathNotFound),
        },
        Route::Version => ok(json(&discovery::version_info())),
        Route::OpenApiV3Index => {
            let custom = custom_documents(registry, false);
            if custom.is_empty() {
                return ok(openapi::openapi_v3_index());
            }
            let mut index: serde_json::Value = serde_json::from_slice(&openapi::openapi_v3_index()).unwrap_or_default();
            if let Some(paths) = index.get_mut("paths").and_then(|p| p.as_object_mut()) {
                for (path, doc) in &custom {
                    let hash = openapi_crd::content_hash(&json(doc));
                    let url = format!("/openapi/v3/{path}?hash={hash}");
                    paths.insert(path.clone(), serde_json::json!({"serverRelativeURL": url}));
                }
            }
            ok(json(&index))
        }
        Route::OpenApiV3(path) => {
            let (body, hash) = match (openapi::openapi_v3_document(path), openapi::openapi_v3_document_hash(path)) {
                (Some(doc), Some(hash)) => (doc, hash.to_string()),
                _ => {
                    let path = path.trim_start_matches('/');
                    let found = custom_documents(registry, false).into_iter().find(|(p, _)| p == path);
                    let Some((_, doc)) = found else { return Err(ApiError::PathNotFound) };
                    let body = json(&doc);
                    let hash = openapi_crd::content_hash(&body);
                    (body, hash)
                }
            };
            let mut response = respond(StatusCode::OK, "application/json", body);
            if let Ok(v) = http::HeaderValue::from_str(&format!("\"{hash}\"")) {
                response.headers_mut().insert(http::header::ETAG, v);
            }
            // Documents are addressed by content hash: a matching ?hash= never changes.
            let fixed = head.query.as_deref().is_some_and(|q| q.contains(&format!("hash={hash}")));
            let cache = if fixed { "public, immutable" } else { "no-cache, private" };
            response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static(cache));
            Ok(response)
        }
        Route::OpenApiV2 => {
            // kube-openapi's handler: JSON or gnostic protobuf by Accept (406
            // with an empty body for anything else), one ETag for both, gzip
            // when the client takes it.
            let Some(encoding) = openapi_v2::negotiate(head.accept.as_deref()) else {
                return Ok(respond(StatusCode::NOT_ACCEPTABLE, "text/plain", Bytes::new()));
            };
            let custom: Vec<serde_json::Value> = custom_documents(registry, true).into_iter().map(|(_, d)| d).collect();
            let document = openapi_v2::openapi_v2_with(&custom);
            let gzipped = crate::api::encode::accepts_gzip(head.accept_encoding.as_deref());
            let body = match (encoding, gzipped) {
                (openapi_v2::Encoding::Json, false) => document.json.clone(),
                (openapi_v2::Encoding::Protobuf, false) => document.protobuf.clone(),
                (openapi_v2::Encoding::Json, true) => document
                    .json_gzip
                    .get_or_init(|| crate::api::encode::gzip(std::slice::from_ref(&document.json)))
                    .clone(),
                (openapi_v2::Encoding::Protobuf, true) => document
                    .protobuf_gzip
                    .get_or_init(|| crate::api::encode::gzip(std::slice::from_ref(&document.protobuf)))
                    .clone(),
            };
            let mut response = respond(StatusCode::OK, encoding.content_type(), body);
            let headers = response.headers_mut();
            headers.insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
            if gzipped {
                headers.insert(http::header::CONTENT_ENCODING, http::HeaderValue::from_static("gzip"));
            }
            if let Ok(v) = http::HeaderValue::from_str(&format!("\"{}\"", document.etag)) {
                headers.insert(http::header::ETAG, v);
            }
            Ok(response)
        }
        _ => Err(ApiError::PathNotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregated_apis_are_the_apiservices_naming_a_service_in_kubes_order() {
        let service = json!({"namespace": "kube-system", "name": "s", "port": 443});
        let apiservice = |group: &str, version: &str, gp: i64, vp: i64, service: &serde_json::Value| {
            json!({"spec": {"group": group, "version": version, "groupPriorityMinimum": gp,
                            "versionPriority": vp, "service": service}})
        };
        let services = [
            apiservice("metrics.k8s.io", "v1beta1", 100, 100, &service),
            apiservice("custom.metrics.k8s.io", "v1beta1", 100, 100, &service),
            apiservice("custom.metrics.k8s.io", "v1beta2", 100, 200, &service),
            apiservice("apps", "v1", 17800, 15, &serde_json::Value::Null),
            apiservice("served.example", "v1", 1000, 15, &service),
        ];
        let found = aggregated_of(&services, |g, _| g == "served.example");
        let names: Vec<String> = found.iter().map(|a| format!("{}/{}", a.group, a.version)).collect();
        assert_eq!(names, ["custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1", "metrics.k8s.io/v1beta1"]);
        let groups = by_group(&found);
        assert_eq!(groups[0], ("custom.metrics.k8s.io", vec!["v1beta2", "v1beta1"]));
        let entry = api_group_entry(groups[0].0, &groups[0].1);
        assert_eq!(entry["preferredVersion"]["groupVersion"], "custom.metrics.k8s.io/v1beta2");
        assert_eq!(aggregated_group_entry("metrics.k8s.io", &["v1beta1"])["versions"][0]["freshness"], "Stale");
    }
}
