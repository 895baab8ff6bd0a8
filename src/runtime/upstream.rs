//! The upstream kube-apiserver client (`--upstream URL`, cargo feature
//! `etcd`): forwarded requests (`api::forward`) go out from here.
//!
//! hyper-util's pooled client over hyper-rustls (rustls with ring, HTTP/2
//! by ALPN or HTTP/1.1) runs on its own thread with its own tokio runtime,
//! as the etcd client does (`etcd_log.rs`); shards hand it requests through
//! one bounded flume channel and get each answer on a oneshot. Its
//! credentials are read once at start-up: the CA that verifies the upstream
//! (`--upstream-ca-file`, required for https), a client certificate
//! (`--upstream-client-cert-file`/`--upstream-client-key-file`) and/or a
//! bearer token (`--upstream-token-file`), which is sent as
//! `Authorization` on every request (the caller's own is never sent; the
//! caller is named in `Impersonate-*` headers).
//!
//! Every exchange is bounded: a whole answer within
//! `upstream_request_timeout`, its body within `upstream_response_bytes_max`;
//! a streamed answer (an aggregated API's read, such as a watch) has its
//! head within `upstream_request_timeout`, then its body is relayed piece
//! by piece through a channel of `upstream_stream_pieces_max` pieces, read
//! from the upstream no faster than the client takes it, until the
//! upstream ends it or the client's side of the channel is dropped.
//!
//! Architecture invariant: no tokio or hyper-client type leaves this file
//! and no glommio type enters its thread; the thread ends when every
//! sender of its channel is gone.

use super::ForwardJob;
use crate::api::forward::{ForwardError, ForwardRequest, ForwardResponse};
use crate::config::{Config, Upstream};
use bytes::Bytes;
use http::header::{HeaderValue, AUTHORIZATION};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

type HttpsClient =
    Client<hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>, Full<Bytes>>;

/// Reads the credentials and starts the client's thread; the sender is
/// where shards put forwarded requests.
pub(super) fn start(config: &Config) -> Result<flume::Sender<ForwardJob>, String> {
    let upstream = config.upstream.clone().ok_or("no --upstream")?;
    let base = base_url(&upstream.url)?;
    let tls = client_tls(&upstream, base.starts_with("https://"))?;
    let authorization = match &upstream.token_file {
        Some(path) => Some(bearer(path)?),
        None => None,
    };
    let timeout = config.upstream_request_timeout;
    let limit_bytes = config.upstream_response_bytes_max;
    let pieces_max = config.upstream_stream_pieces_max;
    let (tx, rx) = flume::bounded::<ForwardJob>(config.mesh_channel_capacity);
    std::thread::Builder::new()
        .name("upstream".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    eprintln!("shardline: starting the upstream client's runtime: {e}");
                    return;
                }
            };
            runtime.block_on(async move {
                let connector = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls)
                    .https_or_http()
                    .enable_http1()
                    .enable_http2()
                    .build();
                let client: HttpsClient = Client::builder(TokioExecutor::new()).build(connector);
                let base: Arc<str> = base.into();
                while let Ok(job) = rx.recv_async().await {
                    let (client, base, authorization) = (client.clone(), base.clone(), authorization.clone());
                    tokio::spawn(async move {
                        let limits = Limits { bytes: limit_bytes, pieces: pieces_max };
                        let exchange = exchange(&client, &base, authorization, job.request, limits);
                        let answer = match tokio::time::timeout(timeout, exchange).await {
                            Ok(answer) => answer,
                            Err(_) => Err(ForwardError::TimedOut(timeout)),
                        };
                        let _ = job.reply.send(answer);
                    });
                }
            });
        })
        .map_err(|e| format!("starting the upstream client's thread: {e}"))?;
    eprintln!("shardline: forwarding writes to {} (--upstream)", upstream.url);
    Ok(tx)
}

/// How often a relay waiting on a quiet upstream looks whether its client
/// went away.
const CLIENT_GONE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// What one answer may hold: a whole body's bytes, a streamed body's pieces.
#[derive(Clone, Copy)]
struct Limits {
    bytes: usize,
    pieces: usize,
}

/// One request and its answer: whole, or its head with the body streamed
/// by a task of its own.
async fn exchange(
    client: &HttpsClient,
    base: &str,
    authorization: Option<HeaderValue>,
    request: ForwardRequest,
    limits: Limits,
) -> Result<ForwardResponse, ForwardError> {
    let streamed = request.streamed;
    let uri: http::Uri = format!("{base}{}", request.path_and_query)
        .parse()
        .map_err(|e| ForwardError::Unreachable(format!("the upstream URL for {}: {e}", request.path_and_query)))?;
    let mut outgoing = http::Request::new(Full::new(request.body));
    *outgoing.method_mut() = request.method;
    *outgoing.uri_mut() = uri;
    *outgoing.headers_mut() = request.headers;
    if let Some(value) = authorization {
        outgoing.headers_mut().insert(AUTHORIZATION, value);
    }
    let response = client.request(outgoing).await.map_err(|e| ForwardError::Unreachable(describe(&e)))?;
    let (parts, body) = response.into_parts();
    if streamed {
        let (tx, rx) = flume::bounded(limits.pieces);
        tokio::spawn(relay(body, tx));
        return Ok(ForwardResponse {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: Bytes::new(),
            stream: Some(rx),
        });
    }
    let limit_bytes = limits.bytes;
    let body = match Limited::new(body, limit_bytes).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            return Err(ForwardError::ResponseTooLarge { limit_bytes })
        }
        Err(e) => return Err(ForwardError::Unreachable(format!("reading the upstream's answer: {e}"))),
    };
    Ok(ForwardResponse { status: parts.status.as_u16(), headers: parts.headers, body, stream: None })
}

/// Hands a streamed answer's body to the client's side piece by piece,
/// waiting while the channel is full; ends (dropping the upstream's body,
/// which ends the upstream request) when the body ends or fails, or when
/// the client's side is gone.
async fn relay(mut body: hyper::body::Incoming, pieces: flume::Sender<Result<Bytes, String>>) {
    use futures_util::future::{select, Either};
    loop {
        // A quiet upstream (a watch without events) is not read for a
        // while: look every second whether the client is still there.
        let mut next = std::pin::pin!(body.frame());
        let frame = loop {
            let tick = std::pin::pin!(tokio::time::sleep(CLIENT_GONE_CHECK));
            match select(next.as_mut(), tick).await {
                Either::Left((frame, _)) => break frame,
                Either::Right(_) if pieces.is_disconnected() => return,
                Either::Right(_) => {}
            }
        };
        let piece = match frame {
            None => return,
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) if data.is_empty() => continue,
                Ok(data) => Ok(data),
                Err(_trailers) => continue,
            },
            Some(Err(e)) => Err(describe(&e)),
        };
        let failed = piece.is_err();
        if pieces.send_async(piece).await.is_err() || failed {
            return;
        }
    }
}

/// An error and its causes, as one line (hyper's own text is "client error
/// (Connect)"; the cause says what failed).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The URL requests' paths are appended to: http or https, no query, no
/// trailing slash.
fn base_url(url: &str) -> Result<String, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("--upstream {url:?}: {e}"))?;
    match uri.scheme_str() {
        Some("https") | Some("http") => {}
        _ => return Err(format!("--upstream {url:?}: the URL must start with https:// or http://")),
    }
    if uri.host().is_none() || uri.query().is_some() {
        return Err(format!("--upstream {url:?}: a URL with a host and no query, e.g. https://10.0.0.1:6443"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// `Bearer TOKEN` from the token file's first line.
fn bearer(path: &Path) -> Result<HeaderValue, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--upstream-token-file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        return Err(format!("--upstream-token-file {}: no token in it", path.display()));
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| format!("--upstream-token-file {}: the token is not a header value", path.display()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The TLS client configuration: the upstream's CA, and the client
/// certificate when one is given.
fn client_tls(upstream: &Upstream, https: bool) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    match &upstream.ca_file {
        Some(path) => {
            for cert in read_certs(path, "--upstream-ca-file")? {
                roots.add(cert).map_err(|e| format!("--upstream-ca-file {}: {e}", path.display()))?;
            }
        }
        None if https => return Err("--upstream https://... needs --upstream-ca-file (the cluster's CA)".into()),
        None => {}
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the upstream's TLS: {e}"))?
        .with_root_certificates(roots);
    match (&upstream.client_cert_file, &upstream.client_key_file) {
        (Some(cert), Some(key)) => {
            let certs = read_certs(cert, "--upstream-client-cert-file")?;
            let key = read_key(key)?;
            builder.with_client_auth_cert(certs, key).map_err(|e| format!("the upstream client certificate: {e}"))
        }
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err("--upstream-client-cert-file and --upstream-client-key-file go together".into()),
    }
}

fn read_certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{flag} {}: no PEM certificate in it", path.display()));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let flag = "--upstream-client-key-file";
    let file = std::fs::File::open(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    rustls_pemfile::private_key(&mut BufReader::new(file))
        .map_err(|e| format!("{flag} {}: {e}", path.display()))?
        .ok_or_else(|| format!("{flag} {}: no PEM private key in it", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_are_checked() {
        assert_eq!(base_url("https://10.0.0.1:6443/").unwrap(), "https://10.0.0.1:6443");
        assert_eq!(base_url("http://127.0.0.1:8080/prefix").unwrap(), "http://127.0.0.1:8080/prefix");
        assert!(base_url("10.0.0.1:6443").is_err());
        assert!(base_url("ftp://x").is_err());
        assert!(base_url("https://x/?a=b").is_err());
        let https = Upstream { url: "https://x".into(), ..Upstream::default() };
        assert!(client_tls(&https, true).unwrap_err().contains("--upstream-ca-file"));
        let half = Upstream { client_cert_file: Some("c".into()), ..Upstream::default() };
        assert!(client_tls(&half, false).is_err());
    }
}
