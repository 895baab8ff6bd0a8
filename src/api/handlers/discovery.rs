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
    let registry = backend.registry();
    let ok = |body: Bytes| Ok(respond(StatusCode::OK, "application/json", body));
    match route {
        Route::CoreVersions | Route::Groups => {
            let core = matches!(route, Route::CoreVersions);
            match negotiate::for_discovery(head.accept.as_deref())? {
                Representation::AggregatedDiscovery { version } => {
                    let body = json(&discovery::aggregated_discovery(registry, core, &version));
                    let mut response = respond(StatusCode::OK, "application/json", body);
                    let content_type = format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
                    if let Ok(v) = http::HeaderValue::from_str(&content_type) {
                        response.headers_mut().insert(http::header::CONTENT_TYPE, v);
                    }
                    Ok(response)
                }
                _ if core => ok(json(&discovery::api_versions())),
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
            Some(doc) => ok(doc),
            None => Err(ApiError::PathNotFound),
        },
        _ => Err(ApiError::PathNotFound),
    }
}
