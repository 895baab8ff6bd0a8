//! HTTP connections to a target: HTTP/1.1 or HTTP/2 (TLS with ALPN, or h2c prior knowledge on
//! plain HTTP), TLS with a CA or explicitly without verification, bearer-token or client
//! certificate authentication. hyper 1 connections driven on the tokio runtime.
//!
//! One `Conn` is one TCP connection. HTTP/2 connections are cloned to multiplex many streams
//! (watches) over one socket; HTTP/1.1 connections carry one request at a time.
//!
//! `WatchConns` hands out watch streams the way Go's and hyper's pooling clients do: at most the
//! server's `SETTINGS_MAX_CONCURRENT_STREAMS` (and the scenario's `streams_per_connection`) on one
//! connection, a new connection when every open one is full. The server's setting is read from
//! its first SETTINGS frame (`SettingsTap`, a pass-through on the connection's reads).
//! Invariant: a `WatchConns` never has more streams open on a connection than the server's
//! first SETTINGS allowed (streams over the limit would wait in the HTTP/2 layer forever, since
//! watches do not end).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// The largest HTTP/2 frame loadgen accepts (its `SETTINGS_MAX_FRAME_SIZE`; RFC 9113's default
/// is 16 KiB). A server may then send a batch of watch events as one DATA frame instead of
/// many: each frame costs the HTTP/2 layer a decode, a flow-control update and a wake of the
/// watcher, and the connection's read buffer is sized to the frame being read, so larger frames
/// also mean fewer, larger socket reads. A frame is held whole before it is handed on: the cost
/// is up to this much memory per connection.
pub const H2_FRAME_BYTES_MAX: u32 = 1 << 20;

/// How long a new HTTP/2 connection waits for the server's first SETTINGS frame (a server sends
/// it at once, as the first frame of its connection preface).
const SETTINGS_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// With the server's `SETTINGS_MAX_CONCURRENT_STREAMS` from its first SETTINGS frame (None:
    /// the server set no limit).
    H2(http2::SendRequest<Full<Bytes>>, Option<u32>),
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
        if h2 {
            let (tx, rx) = oneshot::channel();
            let io = TokioIo::new(SettingsTap { io, frame: Vec::new(), report: Some(tx) });
            let (send, conn) = http2::Builder::new(TokioExecutor::new())
                .initial_stream_window_size(1 << 20)
                .initial_connection_window_size(16 << 20)
                .max_frame_size(H2_FRAME_BYTES_MAX)
                .handshake(io)
                .await
                .context("HTTP/2 handshake")?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let max_streams = match tokio::time::timeout(SETTINGS_TIMEOUT, rx).await {
                Ok(Ok(Ok(max))) => max,
                Ok(Ok(Err(what))) => bail!("HTTP/2: {what}"),
                Ok(Err(_)) => bail!("HTTP/2: the connection closed before the server's SETTINGS frame"),
                Err(_) => bail!("HTTP/2: no SETTINGS frame from the server within {SETTINGS_TIMEOUT:?}"),
            };
            Ok(Conn::H2(send, max_streams))
        } else {
            let io = TokioIo::new(io);
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
            Conn::H2(s, _) => {
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
            Conn::H2(s, max) => Some(Conn::H2(s.clone(), *max)),
        }
    }

    pub fn is_closed(&self) -> bool {
        match self {
            Conn::H1(s) => s.is_closed(),
            Conn::H2(s, _) => s.is_closed(),
        }
    }

    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` on this connection (HTTP/2; None: no
    /// limit, or HTTP/1.1).
    pub fn max_concurrent_streams(&self) -> Option<u32> {
        match self {
            Conn::H1(_) => None,
            Conn::H2(_, max) => *max,
        }
    }
}

/// The server's first SETTINGS frame as it goes by on a connection's reads:
/// `Ok(SETTINGS_MAX_CONCURRENT_STREAMS)` or what was wrong with the frame.
type SettingsReport = Result<Option<u32>, String>;

/// The largest first SETTINGS frame the tap reads (RFC 9113 defines 7 settings of 6 bytes; the
/// rest is room for extensions); a larger one is reported as malformed.
const SETTINGS_FRAME_BYTES_MAX: usize = 9 + 6 * 64;

/// A pass-through on a connection that reads the server's first HTTP/2 frame (its SETTINGS, as
/// RFC 9113 §3.4 requires) and reports `SETTINGS_MAX_CONCURRENT_STREAMS` once. After that, reads
/// and writes go straight through.
struct SettingsTap<T> {
    io: T,
    /// The first frame's bytes so far.
    frame: Vec<u8>,
    report: Option<oneshot::Sender<SettingsReport>>,
}

impl<T> SettingsTap<T> {
    fn inspect(&mut self, read: &[u8]) {
        if read.is_empty() {
            // End of stream before the frame: the receiver sees the sender dropped.
            self.report = None;
            return;
        }
        let take = read.len().min(SETTINGS_FRAME_BYTES_MAX - self.frame.len());
        self.frame.extend_from_slice(&read[..take]);
        if let Some(result) = parse_first_settings(&self.frame) {
            if let Some(tx) = self.report.take() {
                let _ = tx.send(result);
            }
            self.frame = Vec::new();
        }
    }
}

/// Reads the first frame a server sent: None while incomplete, else its
/// `SETTINGS_MAX_CONCURRENT_STREAMS` (Ok(None) when the frame does not set it).
fn parse_first_settings(b: &[u8]) -> Option<SettingsReport> {
    const SETTINGS: u8 = 0x4;
    const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    if b.len() < 9 {
        return None;
    }
    let len = (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]);
    if b[3] != SETTINGS {
        return Some(Err(format!("the server's first frame is of type {}, not SETTINGS", b[3])));
    }
    if len % 6 != 0 || 9 + len > SETTINGS_FRAME_BYTES_MAX {
        return Some(Err(format!("the server's first SETTINGS frame has a bad length {len}")));
    }
    if b.len() < 9 + len {
        return None;
    }
    let mut max = None;
    for entry in b[9..9 + len].chunks_exact(6) {
        if u16::from_be_bytes([entry[0], entry[1]]) == MAX_CONCURRENT_STREAMS {
            // The last value of a setting wins (RFC 9113 §6.5).
            max = Some(u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]));
        }
    }
    Some(Ok(max))
}

impl<T: AsyncRead + Unpin> AsyncRead for SettingsTap<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut me.io).poll_read(cx, buf);
        if me.report.is_some() {
            if let Poll::Ready(Ok(())) = &r {
                me.inspect(&buf.filled()[before..]);
            }
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SettingsTap<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Where watches get their connections: HTTP/2 streams packed onto shared connections up to the
/// server's and the scenario's per-connection limit, or (HTTP/1.1) one connection each.
pub struct WatchConns {
    endpoint: Endpoint,
    multiplex: bool,
    /// The scenario's `connection.streams_per_connection`.
    streams_wanted: usize,
    open: tokio::sync::Mutex<Vec<Shared>>,
    opened: AtomicU64,
    /// The lowest `SETTINGS_MAX_CONCURRENT_STREAMS` any server connection announced
    /// (`u64::MAX`: none seen, or no limit).
    server_max: AtomicU64,
}

/// One shared HTTP/2 connection and its count of leased streams.
struct Shared {
    conn: Conn,
    leased: Arc<AtomicUsize>,
    limit: usize,
}

/// A watch's connection: a stream slot on a shared HTTP/2 connection (given back when dropped),
/// or its own connection.
pub struct Lease {
    pub conn: Conn,
    slot: Option<Arc<AtomicUsize>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(s) = &self.slot {
            s.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl WatchConns {
    pub fn new(endpoint: Endpoint, multiplex: bool, streams_wanted: usize) -> WatchConns {
        WatchConns {
            endpoint,
            multiplex,
            streams_wanted: streams_wanted.max(1),
            open: tokio::sync::Mutex::new(Vec::new()),
            opened: AtomicU64::new(0),
            server_max: AtomicU64::new(u64::MAX),
        }
    }

    /// A connection for one watch: a free stream slot on an open connection, else a new one.
    pub async fn lease(&self) -> Result<Lease> {
        if !self.multiplex {
            let conn = self.endpoint.connect().await?;
            self.opened.fetch_add(1, Ordering::Relaxed);
            return Ok(Lease { conn, slot: None });
        }
        let mut open = self.open.lock().await;
        open.retain(|s| !s.conn.is_closed());
        if let Some(s) = open.iter().find(|s| s.leased.load(Ordering::Relaxed) < s.limit) {
            if let Some(conn) = s.conn.try_clone() {
                s.leased.fetch_add(1, Ordering::Relaxed);
                return Ok(Lease { conn, slot: Some(s.leased.clone()) });
            }
        }
        let conn = self.endpoint.connect().await?;
        self.opened.fetch_add(1, Ordering::Relaxed);
        let limit = match conn.max_concurrent_streams() {
            Some(max) => {
                self.server_max.fetch_min(u64::from(max), Ordering::Relaxed);
                self.streams_wanted.min(max as usize)
            }
            None => self.streams_wanted,
        };
        if limit == 0 {
            bail!("the server allows no stream on a connection (SETTINGS_MAX_CONCURRENT_STREAMS = 0)");
        }
        // (An HTTP/1.1 connection does not clone: the watch keeps it alone.)
        let Some(clone) = conn.try_clone() else { return Ok(Lease { conn, slot: None }) };
        let leased = Arc::new(AtomicUsize::new(1));
        open.push(Shared { conn, leased: leased.clone(), limit });
        Ok(Lease { conn: clone, slot: Some(leased) })
    }

    /// Connections opened for watches so far (reconnections included).
    pub fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// The lowest `SETTINGS_MAX_CONCURRENT_STREAMS` a server connection announced, if any.
    pub fn server_max_concurrent_streams(&self) -> Option<u64> {
        Some(self.server_max.load(Ordering::Relaxed)).filter(|&m| m != u64::MAX)
    }

    /// The streams per connection used: the scenario's, lowered to the server's limit.
    pub fn streams_per_connection(&self) -> u64 {
        let wanted = self.streams_wanted as u64;
        if !self.multiplex {
            return 1;
        }
        self.server_max_concurrent_streams().map_or(wanted, |m| m.min(wanted))
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

    fn settings(entries: &[(u16, u32)]) -> Vec<u8> {
        let len = entries.len() * 6;
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, 0x4, 0, 0, 0, 0, 0];
        for (id, v) in entries {
            f.extend_from_slice(&id.to_be_bytes());
            f.extend_from_slice(&v.to_be_bytes());
        }
        f
    }

    #[test]
    fn reads_max_concurrent_streams_from_the_first_settings_frame() {
        // INITIAL_WINDOW_SIZE, MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE.
        let f = settings(&[(0x4, 65_535), (0x3, 100), (0x5, 16_384)]);
        assert_eq!(parse_first_settings(&f), Some(Ok(Some(100))));
        // Incomplete at every cut before the end.
        for cut in 0..f.len() {
            assert_eq!(parse_first_settings(&f[..cut]), None, "cut at {cut}");
        }
        // No limit announced; the last value of a repeated setting wins.
        assert_eq!(parse_first_settings(&settings(&[(0x4, 1)])), Some(Ok(None)));
        assert_eq!(parse_first_settings(&settings(&[(0x3, 10), (0x3, 7)])), Some(Ok(Some(7))));
        // Not SETTINGS, or a length that is not whole entries.
        let mut ping = settings(&[]);
        ping[3] = 0x6;
        assert!(matches!(parse_first_settings(&ping), Some(Err(_))));
        let mut odd = settings(&[(0x3, 1)]);
        odd[2] = 5;
        assert!(matches!(parse_first_settings(&odd), Some(Err(_))));
    }

    #[tokio::test]
    async fn the_tap_reports_once_across_split_reads_and_passes_bytes_through() {
        use tokio::io::AsyncReadExt;
        let mut wire = settings(&[(0x3, 10)]);
        wire.extend_from_slice(b"rest of the stream");
        let (tx, rx) = oneshot::channel();
        // A reader that hands out 2 bytes at a time.
        let (client, mut server) = tokio::io::duplex(2);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(&wire).await.unwrap();
        });
        let mut tap = SettingsTap { io: client, frame: Vec::new(), report: Some(tx) };
        let mut got = Vec::new();
        tap.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(rx.await.unwrap(), Ok(Some(10)));
        assert!(got.ends_with(b"rest of the stream") && got.len() == 9 + 6 + 18);
        assert!(tap.report.is_none() && tap.frame.is_empty());
    }
}
