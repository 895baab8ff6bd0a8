//! The admission webhook client (`Backend::call_webhook`): one HTTPS
//! `POST` of an `AdmissionReview` per call, over glommio's TCP and rustls
//! (ring), HTTP/1.1 with `Connection: close`, the server verified with the
//! webhook's `caBundle` for the URL's host (or `NAME.NAMESPACE.svc` for a
//! Service reference). No client certificate is sent (kube-apiserver sends
//! one only when its admission configuration file names one).
//!
//! Failures are worded as Go's HTTP client words them, which is what
//! kube-apiserver's `failed calling webhook` messages carry:
//! `Post "URL": dial tcp ADDR: connect: connection refused`,
//! `Post "URL": context deadline exceeded`,
//! `Post "URL": tls: failed to verify certificate: x509: certificate signed by unknown authority`.
//!
//! A URL host that is a name (not an IP literal) is resolved with the
//! system resolver on glommio's blocking pool, never on the core itself;
//! webhooks are normally registered by address (envtest, `127.0.0.1`) or by
//! Service (resolved from its EndpointSlices without DNS).
//!
//! Invariant: every call is bounded by its `timeout` (connect, handshake,
//! request and answer together) and its answer by `response_bytes_max`;
//! nothing is kept between calls.

use crate::api::backend::{WebhookAnswer, WebhookCall};
use futures_lite::{AsyncReadExt, AsyncWriteExt};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

/// kube-apiserver's User-Agent for webhook calls.
const USER_AGENT: &str = "kube-apiserver-admission";

/// Calls the webhook, bounded by `call.timeout`.
pub async fn call(call: WebhookCall) -> Result<WebhookAnswer, String> {
    let timeout = call.timeout;
    let url = call.url.clone();
    let deadline = async move {
        glommio::timer::sleep(timeout).await;
        Err(format!("Post {url:?}: context deadline exceeded"))
    };
    let attempt = async { exchange(&call).await.map_err(|e| format!("Post {:?}: {e}", call.url)) };
    futures_lite::future::or(attempt, deadline).await
}

async fn address(call: &WebhookCall) -> Result<SocketAddr, String> {
    if let Some(ip) = call.address {
        return Ok(SocketAddr::new(ip, call.port));
    }
    if let Ok(ip) = call.host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, call.port));
    }
    // The system resolver blocks: it runs on glommio's blocking pool, so a
    // slow or unreachable DNS holds this call (bounded by its timeout), not
    // the core's other requests.
    let (host, port) = (call.host.clone(), call.port);
    let resolved = glommio::executor()
        .spawn_blocking(move || {
            (host.as_str(), port)
                .to_socket_addrs()
                .map(|mut addresses| addresses.next())
                .map_err(|e| super::probe::go_error_text(&e))
        })
        .await;
    match resolved {
        Ok(Some(addr)) => Ok(addr),
        Ok(None) => Err(format!("dial tcp: lookup {}: no such host", call.host)),
        Err(e) => Err(format!("dial tcp: lookup {}: {e}", call.host)),
    }
}

async fn exchange(call: &WebhookCall) -> Result<WebhookAnswer, String> {
    let addr = address(call).await?;
    let tcp = glommio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("dial tcp {addr}: connect: {}", super::probe::go_error_text(&e.into())))?;
    let config = client_config(&call.ca_bundle)?;
    let server_name = match call.server_name.parse::<IpAddr>() {
        Ok(ip) => rustls::pki_types::ServerName::IpAddress(ip.into()),
        Err(_) => rustls::pki_types::ServerName::try_from(call.server_name.clone())
            .map_err(|_| format!("tls: invalid server name {:?}", call.server_name))?,
    };
    let connector = futures_rustls::TlsConnector::from(config);
    let mut tls = connector.connect(server_name, tcp).await.map_err(|e| tls_error(&e))?;
    let host = if call.host.contains(':') {
        format!("[{}]:{}", call.host, call.port)
    } else {
        format!("{}:{}", call.host, call.port)
    };
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\nContent-Type: application/json\r\nAccept: application/json, */*\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        call.path_and_query,
        call.body.len()
    );
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "EOF".to_string(),
        _ => super::probe::go_error_text(&e),
    };
    tls.write_all(head.as_bytes()).await.map_err(io)?;
    tls.write_all(&call.body).await.map_err(io)?;
    tls.flush().await.map_err(io)?;
    let limit = call.response_bytes_max;
    let mut answer = Vec::new();
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let n = match tls.read(&mut buffer).await {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() => 0,
            Err(e) => return Err(io(e)),
        };
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if answer.len() > limit {
            return Err(format!("the webhook's answer is larger than {limit} bytes"));
        }
        if let Some(parsed) = super::probe::parse_limited(&answer, limit) {
            if parsed.complete {
                return Ok(WebhookAnswer { code: parsed.code, body: parsed.body });
            }
        }
    }
    match super::probe::parse_limited(&answer, limit) {
        Some(parsed) => Ok(WebhookAnswer { code: parsed.code, body: parsed.body }),
        None if answer.is_empty() => Err("EOF".into()),
        None => Err("net/http: HTTP/1.x transport connection broken: malformed HTTP response".into()),
    }
}

/// Go's words for a failed handshake.
fn tls_error(e: &std::io::Error) -> String {
    let rustls_error = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority".into()
        }
        Some(rustls::Error::InvalidCertificate(
            rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. },
        )) => "tls: failed to verify certificate: x509: certificate is not valid for the requested name".into(),
        Some(rustls::Error::InvalidCertificate(
            rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. },
        )) => "tls: failed to verify certificate: x509: certificate has expired or is not yet valid".into(),
        Some(other) => format!("tls: {}", other.to_string().to_lowercase()),
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => "EOF".into(),
        None => format!("tls: {}", e.to_string().to_lowercase()),
    }
}

/// A TLS client that trusts the webhook's `caBundle` (and nothing else:
/// kube would fall back to the system's roots for an empty bundle, which
/// this server does not read).
fn client_config(ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut std::io::BufReader::new(ca_bundle)) {
        let cert = cert.map_err(|e| format!("unable to load root certificates: {e}"))?;
        roots.add(cert).map_err(|e| format!("unable to load root certificates: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
