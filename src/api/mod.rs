//! The Kubernetes HTTP API: routing, parameters, content negotiation, one
//! handler per verb, and the single error-to-`Status` mapping.
//!
//! Architecture invariant: only `api/` knows HTTP request/response types and
//! `metav1.Status`; it reaches shards and the log only through [`Backend`],
//! so it never touches the runtime directly and can be driven in tests.

pub mod backend;
pub mod cbor;
pub mod encode;
pub mod field_validation;
pub mod forward;
pub mod handlers;
pub mod instrument;
pub mod kube_storage;
pub mod metadata;
pub mod negotiate;
pub mod object;
pub mod params;
pub mod pipeline;
pub mod pretty;
pub mod protobuf;
pub mod protobuf_encode;
pub mod route;
pub mod status;
pub mod system_objects;
pub mod testing;
pub mod yaml;

pub use backend::{Backend, BackendError, HealthCheck};

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full, Limited};
use params::Params;
use route::Route;
use status::ApiError;
use std::convert::Infallible;
use std::pin::Pin;
use std::rc::Rc;

/// Why a response body stopped early (a streamed list whose snapshot
/// expired mid-way): hyper then aborts the response.
pub type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// The body of every response: whole documents, or streams of frames. Not
/// `Send`: a response is produced on the core that serves its connection,
/// and a streamed list holds that core's handles.
pub struct ResponseBody(Pin<Box<dyn Body<Data = Bytes, Error = BodyError>>>);

impl ResponseBody {
    pub fn new(body: impl Body<Data = Bytes, Error = BodyError> + 'static) -> ResponseBody {
        ResponseBody(Box::pin(body))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BodyError>>> {
        self.0.as_mut().poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.size_hint()
    }
}

pub fn full(bytes: Bytes) -> ResponseBody {
    ResponseBody::new(Full::new(bytes).map_err(|never: Infallible| match never {}))
}

/// A response with a body and content type.
pub fn respond(code: StatusCode, content_type: &'static str, body: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(full(body));
    *response.status_mut() = code;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The Status response for an error (JSON); the only place errors become HTTP.
pub fn error_response(error: &ApiError) -> Response<ResponseBody> {
    error_response_negotiated(error, None)
}

/// The Status response for an error in the representation `accept` asks for
/// (`status::status_response_body`).
pub fn error_response_negotiated(error: &ApiError, accept: Option<&str>) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(error.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let (content_type, body) = status::status_response_body(error, accept);
    let mut response = respond(code, content_type, body);
    if let Some(seconds) = error.retry_after_seconds() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// Everything a handler needs about the request besides its body.
#[derive(Clone)]
pub struct RequestHead {
    pub method: Method,
    pub params: Params,
    pub accept: Option<String>,
    pub content_type: Option<String>,
    pub content_length: Option<u64>,
    /// The raw query string.
    pub query: Option<String>,
    /// Who sent the request (the authentication stage's result).
    pub user: crate::auth::UserInfo,
    /// `Accept-Encoding` (gzip of large get and list responses).
    pub accept_encoding: Option<String>,
    /// `User-Agent`: names the field manager of a write without `fieldManager`.
    pub user_agent: Option<String>,
    /// `Warning` headers the handlers add to the response (the admission
    /// plugins'); shared by the clones of this head.
    pub warnings: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
}

/// Serves one request. The backend is shared (`Rc`) because a streamed list
/// keeps reading from the shards after the handler has returned its head.
pub async fn handle<B, Bd>(backend: &Rc<B>, request: Request<Bd>) -> Response<ResponseBody>
where
    B: Backend + 'static,
    Bd: Body<Data = Bytes>,
    Bd::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let received = std::time::Instant::now();
    // A handle on the header's bytes (no copy), read only if the answer is an error.
    let accept = request.headers().get(header::ACCEPT).cloned();
    // The query is parsed again only when it names `pretty` (as kube's
    // `isPrettyPrint` looks), not once more for every request.
    let pretty_param = request.uri().query().filter(|q| q.contains("pretty"));
    let pretty = pretty::wanted(
        pretty_param.and_then(|q| Params::parse(Some(q)).ok()).and_then(|p| p.pretty),
        request.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()),
    );
    let mut held = Held { in_flight: None, record: None };
    match serve(backend, request, received, &mut held, pretty).await {
        // The in-flight slot and the request's record are held until the body
        // ends (a streamed list, a watch).
        Ok(response) => {
            let Held { in_flight, mut record } = held;
            if in_flight.is_none() && record.is_none() {
                return response;
            }
            if let Some(record) = &mut record {
                record.set_code(response.status().as_u16());
            }
            response.map(|body| ResponseBody::new(Guarded { body, _in_flight: in_flight, _record: record }))
        }
        Err(error) => {
            if let Some(record) = &mut held.record {
                record.set_code(error.code());
            }
            pretty::shape(error_response_negotiated(&error, accept.as_ref().and_then(|v| v.to_str().ok())), pretty)
        }
    }
}

/// What a request holds while its response is sent.
struct Held {
    in_flight: Option<pipeline::InFlightGuard>,
    record: Option<instrument::RequestRecord>,
}

async fn serve<B, Bd>(
    shared: &Rc<B>,
    request: Request<Bd>,
    received: std::time::Instant,
    held: &mut Held,
    pretty: bool,
) -> Result<Response<ResponseBody>, ApiError>
where
    B: Backend + 'static,
    Bd: Body<Data = Bytes>,
    Bd::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let backend: &B = shared;
    let (parts, body) = request.into_parts();
    let header_text =
        |name: header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    // The pipeline: authentication, authorization, overload protection;
    // then the handler (admission and validation are the handlers').
    let user = pipeline::authenticate(
        backend,
        header_text(header::AUTHORIZATION).as_deref(),
        parts.extensions.get::<pipeline::ClientCertificateUser>(),
    )
    .await?;
    let user = pipeline::impersonate(
        backend,
        user,
        parts.headers.iter().filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))),
    )
    .await?;
    let params = Params::parse(parts.uri.query())?;
    let route = route::parse(parts.uri.path());
    let attributes = pipeline::attributes(&parts.method, parts.uri.path(), &route, &params);
    // A write of an instance that forwards writes (`--upstream`) is
    // authorized by the upstream, as the caller (`forward.rs`).
    // So is every request of an aggregated API (the upstream proxies it).
    let joined = backend.config().upstream.is_some();
    let forwarded = joined
        && (forward::is_forwarded(&parts.method, &route, &parts.headers)
            || (!parts.headers.contains_key(header::UPGRADE)
                && forward::is_aggregated(backend, parts.uri.path()).await));
    if !forwarded {
        pipeline::authorize(backend, &user, &attributes).await?;
    }
    let content_type = header_text(header::CONTENT_TYPE);
    let series = instrument::series(backend, &parts.method, &route, &params, content_type.as_deref());
    let in_flight = match pipeline::admit(backend, pipeline::RequestClass::of(&attributes, &route), &user).await {
        Ok(in_flight) => in_flight,
        Err(error) => {
            if let Some((metrics, key)) = series {
                metrics.request_dropped(key, error.code());
            }
            return Err(error);
        }
    };
    held.record = series.map(|(metrics, key)| instrument::RequestRecord::start(metrics, key, received));
    let head = RequestHead {
        method: parts.method.clone(),
        params,
        accept: header_text(header::ACCEPT),
        content_type,
        content_length: header_text(header::CONTENT_LENGTH).and_then(|v| v.parse().ok()),
        query: parts.uri.query().map(str::to_string),
        user,
        // A pretty answer is reshaped on the way out: it is not gzipped.
        accept_encoding: if pretty { None } else { header_text(header::ACCEPT_ENCODING) },
        user_agent: header_text(header::USER_AGENT),
        warnings: Default::default(),
    };
    let limit = backend.config().request_body_bytes_max;
    if head.content_length.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::RequestEntityTooLarge { limit_bytes: limit });
    }
    let body = read_body(body, limit).await?;
    if forwarded {
        let path_and_query = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let response =
            Box::pin(forward::serve(backend, &parts.method, path_and_query, &parts.headers, &head.user, body)).await?;
        held.in_flight = in_flight;
        return Ok(response);
    }
    // Which answers are a serializer's JSON document (`pretty.rs`).
    enum Shaping {
        Serialized,
        Indented,
        AsIs,
    }
    let shaping = match &route {
        Route::Resource(path) if head.params.watch || path.legacy_watch => Shaping::AsIs,
        Route::Resource(_) | Route::CoreVersions | Route::Groups | Route::Group(_) | Route::GroupVersion { .. } => {
            Shaping::Serialized
        }
        Route::Version => Shaping::Indented,
        _ => Shaping::AsIs,
    };
    let response = match route {
        Route::Resource(path) if handlers::review::serves(&path) => {
            Box::pin(handlers::review::serve(shared, &head, &path, &body)).await
        }
        // Boxed: the handlers' futures are large, and the request's future
        // would carry the largest of them while it waits in the pipeline
        // (10,000 watches opening at once wait there together).
        Route::Resource(path) => Box::pin(handlers::resource(shared, &head, &path, body)).await,
        Route::Health { kind, check } => Ok(handlers::health::serve(backend, &head, &kind, check.as_deref())),
        Route::Metrics => Box::pin(handlers::metrics::serve(backend)).await,
        Route::OpenIdConfiguration | Route::OpenIdKeys => handlers::token::issuer_document(backend, &route),
        Route::NotFound => Err(ApiError::PathNotFound),
        other => {
            // Discovery lists the custom resources of every definition
            // committed so far, whichever core stored it.
            backend.await_applied(backend.committed_revision()).await;
            handlers::discovery::serve(backend, &head, &other).await
        }
    }?;
    let mut response = match shaping {
        Shaping::Serialized => pretty::shape(response, pretty),
        Shaping::Indented => pretty::indented(response),
        Shaping::AsIs => response,
    };
    field_validation::add_warnings(&mut response, &head.warnings.borrow());
    held.in_flight = in_flight;
    Ok(response)
}

/// A response body that holds its request's in-flight slot and record until
/// it ends.
struct Guarded {
    body: ResponseBody,
    _in_flight: Option<pipeline::InFlightGuard>,
    _record: Option<instrument::RequestRecord>,
}

impl Body for Guarded {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BodyError>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Reads a whole request body, at most `limit_bytes`.
async fn read_body<Bd>(body: Bd, limit_bytes: usize) -> Result<Bytes, ApiError>
where
    Bd: Body<Data = Bytes>,
    Bd::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, limit_bytes).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            Err(ApiError::RequestEntityTooLarge { limit_bytes })
        }
        Err(e) => Err(ApiError::BadRequest(format!("reading the request body failed: {e}"))),
    }
}
