//! TLS for integration tests: a throw-away PKI made with rcgen (a CA, a
//! server certificate for 127.0.0.1/localhost, client certificates with a
//! CN and O values) written as PEM files, a rustls client configuration
//! trusting that CA (optionally presenting a client certificate), and one
//! HTTP/1.1 request over TLS (`Connection: close`, bounded by timeouts).

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A CA and a server certificate signed by it, as PEM files in `dir`.
pub struct TestPki {
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
    ca_issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pub ca_file: PathBuf,
    pub server_cert_file: PathBuf,
    pub server_key_file: PathBuf,
}

impl TestPki {
    pub fn new(dir: &Path) -> TestPki {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::CommonName, "shardline-test-ca");
        params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = params.clone().self_signed(&ca_key).unwrap();
        let ca_issuer = rcgen::Issuer::new(params, rcgen::KeyPair::from_pem(&ca_key.serialize_pem()).unwrap());
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).unwrap();
        let server_key = rcgen::KeyPair::generate().unwrap();
        let server_params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        let server = server_params.signed_by(&server_key, &ca_issuer).unwrap();
        let server_cert_file = dir.join("server.pem");
        let server_key_file = dir.join("server-key.pem");
        std::fs::write(&server_cert_file, server.pem()).unwrap();
        std::fs::write(&server_key_file, server_key.serialize_pem()).unwrap();
        TestPki { ca, ca_key, ca_issuer, ca_file, server_cert_file, server_key_file }
    }

    /// The `serve` flags that make the server use this PKI's certificate.
    pub fn server_args(&self) -> Vec<String> {
        vec![
            "--tls-cert".into(),
            self.server_cert_file.display().to_string(),
            "--tls-key".into(),
            self.server_key_file.display().to_string(),
        ]
    }

    /// A client certificate with this CN and O values, signed by the CA.
    pub fn client_cert(&self, cn: &str, organizations: &[&str]) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::CommonName, cn);
        for o in organizations {
            params.distinguished_name.push(rcgen::DnType::OrganizationName, *o);
        }
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca_issuer).unwrap();
        let _ = (&self.ca, &self.ca_key);
        (cert.der().clone(), PrivateKeyDer::try_from(key.serialize_der()).unwrap())
    }

    /// A client certificate like `client_cert`, written as PEM files
    /// `dir/NAME.pem` and `dir/NAME-key.pem` (for a server's flags).
    pub fn client_cert_files(&self, dir: &Path, name: &str, cn: &str, organizations: &[&str]) -> (PathBuf, PathBuf) {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::CommonName, cn);
        for o in organizations {
            params.distinguished_name.push(rcgen::DnType::OrganizationName, *o);
        }
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca_issuer).unwrap();
        let (cert_file, key_file) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}-key.pem")));
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        (cert_file, key_file)
    }

    /// A client configuration trusting the CA, presenting `client` if given.
    pub fn client_config(
        &self,
        client: Option<(CertificateDer<'static>, PrivateKeyDer<'static>)>,
    ) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca.der().clone()).unwrap();
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        let config = match client {
            Some((cert, key)) => builder.with_client_auth_cert(vec![cert], key).unwrap(),
            None => builder.with_no_client_auth(),
        };
        Arc::new(config)
    }
}

/// One request over TLS; the status code and body, or the error (a
/// refused handshake, a closed connection).
pub fn request(
    addr: SocketAddr,
    config: &Arc<rustls::ClientConfig>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(u16, String)> {
    exchange(addr, config, method, path, headers, body).map(|(status, _, body)| (status, body))
}

/// Like `request`, with the response's headers (lower-case names, in order).
pub fn exchange(
    addr: SocketAddr,
    config: &Arc<rustls::ClientConfig>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(u16, Vec<(String, String)>, String)> {
    let tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
    tcp.set_write_timeout(Some(Duration::from_secs(20)))?;
    let name = ServerName::try_from("127.0.0.1").unwrap().to_owned();
    let connection = rustls::ClientConnection::new(config.clone(), name).map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    tls.write_all(head.as_bytes())?;
    tls.write_all(body)?;
    tls.flush()?;
    let mut response = Vec::new();
    match tls.read_to_end(&mut response) {
        Ok(_) => {}
        // A peer that closes without close_notify after a complete response.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !response.is_empty() => {}
        Err(e) => return Err(e),
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_string() };
    let response_headers = head
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    Ok((status, response_headers, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}
