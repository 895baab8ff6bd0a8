//! HTTP connections to a target: HTTP/1.1 or HTTP/2 (TLS with ALPN, or h2c prior knowledge on
//! plain HTTP), TLS with a CA or explicitly without verification, bearer-token or client
//! certificate authentication. hyper 1 connections driven on the tokio runtime.
//!
//! One `Conn` is one TCP connection. HTTP/2 connections are cloned to multiplex many streams
//! (watches) over one socket; HTTP/1.1 connections carry one request at a time.

use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;

/// How to reach and authenticate to a server.
#[derive(Clone, Default, Debug)]
pub struct ClientOptions {
    pub token: Option<String>,
    pub ca_file: Option<String>,
    pub client_cert_file: Option<String>,
    pub client_key_file: Option<String>,
    pub insecure_skip_tls_verify: bool,
    pub http2: bool,
}

/// A server address with everything needed to open connections to it.
#[derive(Clone)]
pub struct Endpoint {
    pub base: String,
    host: String,
    port: u16,
    authority: String,
    scheme: &'static str,
    tls: Option<Arc<rustls::ClientConfig>>,
    http2: bool,
    authorization: Option<HeaderValue>,
}

/// One connection.
pub enum Conn {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

impl Endpoint {
    pub fn new(url: &str, opts: &ClientOptions) -> Result<Endpoint> {
        let uri: Uri = url.parse().with_context(|| format!("bad URL {url:?}"))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => bail!("URL {url:?} must start with http:// or https://"),
        };
        let host = uri.host().ok_or_else(|| anyhow!("URL {url:?} has no host"))?.trim_matches(['[', ']']).to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = uri.authority().map(|a| a.to_string()).unwrap_or_else(|| host.clone());
        let tls = if https { Some(Arc::new(tls_config(opts)?)) } else { None };
        let authorization = match &opts.token {
            Some(t) => {
                Some(HeaderValue::from_str(&format!("Bearer {t}")).context("token is not a valid header value")?)
            }
            None => None,
        };
        Ok(Endpoint {
            base: format!("{}://{}", if https { "https" } else { "http" }, authority),
            host,
            port,
            authority,
            scheme: if https { "https" } else { "http" },
            tls,
            http2: opts.http2,
            authorization,
        })
    }

    /// Opens one connection (TCP, then TLS when https, then the HTTP handshake).
    pub async fn connect(&self) -> Result<Conn> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .with_context(|| format!("connect to {}:{}", self.host, self.port))?;
        tcp.set_nodelay(true)?;
        match &self.tls {
            None => self.handshake(tcp, self.http2).await,
            Some(cfg) => {
                let name = ServerName::try_from(self.host.clone()).context("server name")?;
                let tls =
                    tokio_rustls::TlsConnector::from(cfg.clone()).connect(name, tcp).await.context("TLS handshake")?;
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                if self.http2 && !h2 {
                    bail!("the server did not offer h2 in ALPN");
                }
                self.handshake(tls, h2).await
            }
        }
    }

    async fn handshake<T>(&self, io: T, h2: bool) -> Result<Conn>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let io = TokioIo::new(io);
        if h2 {
            let (send, conn) = http2::Builder::new(TokioExecutor::new())
                .initial_stream_window_size(1 << 20)
                .initial_connection_window_size(16 << 20)
                .handshake(io)
                .await
                .context("HTTP/2 handshake")?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok(Conn::H2(send))
        } else {
            let (send, conn) = http1::handshake(io).await.context("HTTP/1.1 handshake")?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok(Conn::H1(send))
        }
    }

    /// Builds a request for `path_and_query` (absolute URI for HTTP/2, Host header for HTTP/1.1).
    pub fn request(
        &self,
        method: Method,
        path_and_query: &str,
        accept: &str,
        body: Option<(Bytes, &str)>,
    ) -> Request<Full<Bytes>> {
        let uri = format!("{}://{}{}", self.scheme, self.authority, path_and_query);
        let mut b = Request::builder().method(method).uri(uri).header(http::header::ACCEPT, accept);
        if !self.http2 || self.tls.is_none() {
            b = b.header(http::header::HOST, &self.authority);
        }
        if let Some(a) = &self.authorization {
            b = b.header(http::header::AUTHORIZATION, a.clone());
        }
        let body = match body {
            Some((bytes, content_type)) => {
                b = b.header(http::header::CONTENT_TYPE, content_type);
                bytes
            }
            None => Bytes::new(),
        };
        b.body(Full::new(body)).expect("request parts are valid")
    }
}

impl Conn {
    pub async fn send(&mut self, mut req: Request<Full<Bytes>>) -> Result<Response<Incoming>> {
        match self {
            Conn::H1(s) => {
                // HTTP/1.1 wants the origin form.
                let pq = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
                *req.uri_mut() = pq.parse()?;
                s.ready().await.context("connection closed")?;
                Ok(s.send_request(req).await?)
            }
            Conn::H2(s) => {
                req.headers_mut().remove(http::header::HOST);
                s.ready().await.context("connection closed")?;
                Ok(s.send_request(req).await?)
            }
        }
    }

    /// Another handle on the same connection (HTTP/2 only: a new stream each request).
    pub fn try_clone(&self) -> Option<Conn> {
        match self {
            Conn::H1(_) => None,
            Conn::H2(s) => Some(Conn::H2(s.clone())),
        }
    }

    pub fn is_closed(&self) -> bool {
        match self {
            Conn::H1(s) => s.is_closed(),
            Conn::H2(s) => s.is_closed(),
        }
    }
}

/// Reads a whole response body.
pub async fn read_body(resp: Response<Incoming>) -> Result<Bytes> {
    Ok(resp.into_body().collect().await.context("reading the response body")?.to_bytes())
}

fn tls_config(opts: &ClientOptions) -> Result<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder =
        rustls::ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
    let builder = if opts.insecure_skip_tls_verify {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
    } else {
        let ca = opts.ca_file.as_ref().ok_or_else(|| anyhow!("https needs --ca FILE or --insecure-skip-tls-verify"))?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in read_certs(ca)? {
            roots.add(cert).context("adding the CA certificate")?;
        }
        builder.with_root_certificates(roots)
    };
    let mut cfg = match (&opts.client_cert_file, &opts.client_key_file) {
        (Some(cert), Some(key)) => {
            let key = rustls_pemfile::private_key(&mut std::io::BufReader::new(
                std::fs::File::open(key).with_context(|| format!("open {key}"))?,
            ))?
            .ok_or_else(|| anyhow!("no private key in {key}"))?;
            builder.with_client_auth_cert(read_certs(cert)?, key)?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => bail!("--client-cert and --client-key go together"),
    };
    cfg.alpn_protocols = if opts.http2 { vec![b"h2".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    Ok(cfg)
}

fn read_certs(path: &str) -> Result<Vec<CertificateDer<'static>>> {
    let f = std::fs::File::open(path).with_context(|| format!("open {path}"))?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut std::io::BufReader::new(f)).collect::<Result<_, _>>()?;
    if certs.is_empty() {
        bail!("no certificate in {path}");
    }
    Ok(certs)
}

/// `--insecure-skip-tls-verify`: accepts any server certificate (signatures are still checked).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_parses_urls() {
        let e = Endpoint::new("http://127.0.0.1:8080", &ClientOptions::default()).unwrap();
        assert_eq!(e.port, 8080);
        assert_eq!(e.base, "http://127.0.0.1:8080");
        let r = e.request(Method::GET, "/api/v1/pods?limit=1", "application/json", None);
        assert_eq!(r.uri().to_string(), "http://127.0.0.1:8080/api/v1/pods?limit=1");
        assert!(Endpoint::new("ftp://x", &ClientOptions::default()).is_err());
        // https without a CA and without an explicit skip is refused.
        assert!(Endpoint::new("https://localhost:6443", &ClientOptions::default()).is_err());
        let insecure =
            ClientOptions { insecure_skip_tls_verify: true, token: Some("abc".into()), ..Default::default() };
        let e = Endpoint::new("https://localhost:6443", &insecure).unwrap();
        let r = e.request(Method::GET, "/", "*/*", None);
        assert_eq!(r.headers()[http::header::AUTHORIZATION], "Bearer abc");
    }
}
