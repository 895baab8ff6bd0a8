//! kube-apiserver's probes of the control plane's components, for
//! `componentstatuses` (kube's `pkg/registry/core/componentstatus` and
//! `pkg/probe/http`): an HTTPS `GET /healthz` to kube-scheduler and
//! kube-controller-manager at kube's addresses (127.0.0.1:10259 and
//! 127.0.0.1:10257 unless configured), without verifying the certificate
//! (kube's `InsecureSkipVerify`: the handshake's signature is still checked),
//! with kube's request headers (`User-Agent: kube-probe/1.36`, `Accept: */*`).
//!
//! The outcome as kube words it: a 2xx answer is healthy with its body (at
//! most 10 KiB) as the message; 3xx is Unknown ("Probe terminated
//! redirects, ..."; kube would first follow up to ten redirects, this probe
//! follows none); any other code is unhealthy with `HTTP probe failed with
//! statuscode: N`; a connection that fails is unhealthy with Go's error text
//! (`Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259:
//! connect: connection refused`), and one that does not answer within the
//! probe timeout (kube's 20 s) with Go's client timeout text.
//!
//! Invariant: every probe is bounded in time (`timeout`) and in what it reads
//! (headers and body); nothing here is kept between probes.

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// kube's `maxRespBodyLength`: the most of an answer's body a probe reads.
const BODY_BYTES_MAX: usize = 10 * 1024;
/// The most of an answer's head (status line and headers) a probe reads.
const HEAD_BYTES_MAX: usize = 16 * 1024;
/// kube-apiserver's prober's User-Agent (`kube-probe/MAJOR.MINOR`).
const USER_AGENT: &str = "kube-probe/1.36";

/// What a probe found: kube's condition status ("True", "False", "Unknown")
/// and message; the error is always empty for HTTP probes (kube turns every
/// failure into a message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: &'static str,
    pub message: String,
}

/// Probes `https://ADDR/healthz`, bounded by `timeout`.
pub async fn healthz(addr: SocketAddr, timeout: Duration) -> Outcome {
    let url = format!("https://{addr}/healthz");
    let attempt = async {
        match get(addr).await {
            Ok(answer) => Some(Ok(answer)),
            Err(e) => Some(Err(e)),
        }
    };
    let deadline = async {
        glommio::timer::sleep(timeout).await;
        None
    };
    match futures_lite::future::or(attempt, deadline).await {
        Some(Ok((code, body))) => outcome_of_answer(code, &body),
        Some(Err(ProbeError::Connect(e))) => Outcome {
            status: "False",
            message: format!("Get \"{url}\": dial tcp {addr}: connect: {}", go_error_text(&e)),
        },
        Some(Err(ProbeError::Transport(text))) => {
            Outcome { status: "False", message: format!("Get \"{url}\": {text}") }
        }
        None => Outcome {
            status: "False",
            message: format!(
                "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            ),
        },
    }
}

/// kube's `DoHTTPProbe` on an answer.
fn outcome_of_answer(code: u16, body: &[u8]) -> Outcome {
    let body = String::from_utf8_lossy(body).into_owned();
    match code {
        200..=299 => Outcome { status: "True", message: body },
        300..=399 => {
            Outcome { status: "Unknown", message: format!("Probe terminated redirects, Response body: {body}") }
        }
        _ => Outcome { status: "False", message: format!("HTTP probe failed with statuscode: {code}") },
    }
}

/// Go's text for a connect error (`syscall.Errno`'s strings are lower case,
/// without Rust's "(os error N)").
pub(super) fn go_error_text(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        return "connection refused".into();
    }
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text.to_string(),
    }
}

enum ProbeError {
    Connect(std::io::Error),
    Transport(String),
}

/// Go's wording for a read or write that failed after connecting.
fn transport(e: std::io::Error) -> ProbeError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ProbeError::Transport("EOF".into()),
        _ => ProbeError::Transport(go_error_text(&e)),
    }
}

/// One `GET /healthz` over TLS: the status code and the body (at most
/// [`BODY_BYTES_MAX`]).
async fn get(addr: SocketAddr) -> Result<(u16, Vec<u8>), ProbeError> {
    let tcp = glommio::net::TcpStream::connect(addr).await.map_err(|e| ProbeError::Connect(e.into()))?;
    let config = client_config().ok_or_else(|| ProbeError::Transport("tls: no client configuration".into()))?;
    let connector = futures_rustls::TlsConnector::from(config);
    let server_name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
    let mut tls = connector.connect(server_name, tcp).await.map_err(|e| {
        // Go: `remote error: tls: ...` or `tls: ...`.
        ProbeError::Transport(format!("tls: {}", e.to_string().to_lowercase()))
    })?;
    let request = format!(
        "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: {USER_AGENT}\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    tls.write_all(request.as_bytes()).await.map_err(transport)?;
    tls.flush().await.map_err(transport)?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = match tls.read(&mut buffer).await {
            Ok(n) => n,
            // A peer that closes without close_notify: what came is the answer.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() => 0,
            Err(e) => return Err(transport(e)),
        };
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if let Some(parsed) = parse(&answer) {
            if parsed.complete || answer.len() >= HEAD_BYTES_MAX + BODY_BYTES_MAX {
                return Ok((parsed.code, parsed.body));
            }
        } else if answer.len() >= HEAD_BYTES_MAX {
            return Err(ProbeError::Transport(
                "net/http: HTTP/1.x transport connection broken: header too long".into(),
            ));
        }
    }
    match parse(&answer) {
        Some(parsed) => Ok((parsed.code, parsed.body)),
        None if answer.is_empty() => Err(ProbeError::Transport("EOF".into())),
        None => {
            Err(ProbeError::Transport("net/http: HTTP/1.x transport connection broken: malformed HTTP response".into()))
        }
    }
}

/// An HTTP/1.1 answer read so far.
pub(super) struct Parsed {
    pub(super) code: u16,
    pub(super) body: Vec<u8>,
    /// The whole body is here (by Content-Length or the last chunk).
    pub(super) complete: bool,
}

/// The answer's status code and body (Content-Length, chunked, or up to the
/// end), once its head is complete; the body is cut at [`BODY_BYTES_MAX`].
fn parse(answer: &[u8]) -> Option<Parsed> {
    parse_limited(answer, BODY_BYTES_MAX)
}

/// [`parse`] with the body cut at `body_bytes_max` (the webhook client's
/// bound).
pub(super) fn parse_limited(answer: &[u8], body_bytes_max: usize) -> Option<Parsed> {
    let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&answer[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let mut parts = status_line.splitn(3, ' ');
    if !parts.next()?.starts_with("HTTP/1.") {
        return None;
    }
    let code: u16 = parts.next()?.parse().ok()?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let raw = &answer[head_end + 4..];
    let (mut body, complete) = if chunked {
        dechunk(raw, body_bytes_max)
    } else if let Some(length) = length {
        (raw[..raw.len().min(length)].to_vec(), raw.len() >= length)
    } else {
        (raw.to_vec(), false)
    };
    body.truncate(body_bytes_max);
    Some(Parsed { code, body, complete })
}

/// A chunked body's data so far, and whether its last chunk came.
fn dechunk(mut raw: &[u8], body_bytes_max: usize) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else { return (body, false) };
        let size_text = std::str::from_utf8(&raw[..line_end]).unwrap_or("");
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else { return (body, false) };
        if size == 0 {
            return (body, true);
        }
        let data = &raw[line_end + 2..];
        if data.len() < size {
            body.extend_from_slice(data);
            return (body, false);
        }
        body.extend_from_slice(&data[..size]);
        if body.len() >= body_bytes_max {
            return (body, true);
        }
        raw = data.get(size + 2..).unwrap_or(&[]);
    }
}

/// The probes' TLS client: no certificate verification (kube's
/// `InsecureSkipVerify` for these probes), handshake signatures checked.
fn client_config() -> Option<Arc<rustls::ClientConfig>> {
    thread_local! {
        static CONFIG: std::cell::OnceCell<Option<Arc<rustls::ClientConfig>>> = const { std::cell::OnceCell::new() };
    }
    CONFIG.with(|config| {
        config
            .get_or_init(|| {
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let verifier = Arc::new(AnyCertificate(provider.clone()));
                let config = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map(|b| b.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth());
                // The ring provider's defaults always build; if not, every probe says so.
                config.ok().map(|mut config| {
                    config.alpn_protocols = vec![b"http/1.1".to_vec()];
                    Arc::new(config)
                })
            })
            .clone()
    })
}

/// Accepts any server certificate; checks the handshake's signatures with
/// the provider's algorithms.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
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
    fn answers_are_worded_as_kubes_http_prober() {
        assert_eq!(outcome_of_answer(200, b"ok"), Outcome { status: "True", message: "ok".into() });
        assert_eq!(
            outcome_of_answer(500, b"[-]etcd failed"),
            Outcome { status: "False", message: "HTTP probe failed with statuscode: 500".into() }
        );
        assert_eq!(outcome_of_answer(302, b"x").status, "Unknown");
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(go_error_text(&refused), "connection refused");
        assert_eq!(go_error_text(&std::io::Error::from_raw_os_error(101)), "network is unreachable");
    }

    #[test]
    fn answers_parse_by_length_chunks_or_end() {
        let parsed = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
        assert_eq!((parsed.code, parsed.body.as_slice(), parsed.complete), (200, &b"ok"[..], true));
        let parsed = parse(
            b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((parsed.code, parsed.body.as_slice(), parsed.complete), (500, &b"abcde"[..], true));
        let parsed = parse(b"HTTP/1.0 200 OK\r\n\r\nuntil the end").unwrap();
        assert_eq!((parsed.body.as_slice(), parsed.complete), (&b"until the end"[..], false));
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n").is_none(), "head not complete");
        assert!(parse(b"SSH-2.0-OpenSSH\r\n\r\n").is_none());
        let long = format!("HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n{}", "x".repeat(20_000));
        assert_eq!(parse(long.as_bytes()).unwrap().body.len(), BODY_BYTES_MAX);
    }
}
