//! Discovery, version and OpenAPI documents: the bytes come from `types/`
//! (built from the committed schema tables); this file negotiates and answers.

use crate::api::negotiate::{self, Representation};
use crate::api::route::Route;
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use crate::types::{discovery, openapi};
use bytes::Bytes;
use http::{Method, Response, StatusCode};

fn json(value: &serde_json::Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

pub fn serve(backend: &impl Backend, head: &RequestHead, route: &Route) -> Result<Response<ResponseBody>, ApiError> {
    if head.method != Method::GET {
        return Err(ApiError::MethodNotAllowed { method: head.method.to_string(), target: Default::default() });
    }
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
                _ => ok(json(&discovery::api_group_list(registry))),
            }
        }
        Route::Group(group) => match discovery::api_group(registry, group) {
            Some(doc) => ok(json(&doc)),
            None => Err(ApiError::PathNotFound),
        },
        Route::GroupVersion { group, version } => match discovery::api_resource_list(registry, group, version) {
            Some(doc) => ok(json(&doc)),
            None => Err(ApiError::PathNotFound),
        },
        Route::Version => ok(json(&discovery::version_info())),
        Route::OpenApiV3Index => ok(openapi::openapi_v3_index()),
        Route::OpenApiV3(path) => match openapi::openapi_v3_document(path) {
            Some(doc) => {
                let mut response = respond(StatusCode::OK, "application/json", doc);
                if let Some(hash) = openapi::openapi_v3_document_hash(path) {
                    if let Ok(v) = http::HeaderValue::from_str(&format!("\"{hash}\"")) {
                        response.headers_mut().insert(http::header::ETAG, v);
                    }
                    // Documents are addressed by content hash: a matching ?hash= never changes.
                    let fixed = head.query.as_deref().is_some_and(|q| q.contains(&format!("hash={hash}")));
                    let cache = if fixed { "public, immutable" } else { "no-cache, private" };
                    response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static(cache));
                }
                Ok(response)
            }
            None => Err(ApiError::PathNotFound),
        },
        Route::OpenApiV2 => {
            let wants_protobuf = head.accept.as_deref().is_some_and(|a| a.contains("protobuf"));
            if wants_protobuf {
                Ok(respond(
                    StatusCode::OK,
                    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                    openapi::openapi_v2_minimal_protobuf(),
                ))
            } else {
                let doc = serde_json::json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": discovery::GIT_VERSION}, "paths": {}, "definitions": {}});
                ok(json(&doc))
            }
        }
        _ => Err(ApiError::PathNotFound),
    }
}
