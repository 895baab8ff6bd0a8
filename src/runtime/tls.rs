//! TLS for the listener: rustls with ALPN `h2` and `http/1.1`, from PEM files
//! or a certificate generated at start-up (`--tls-self-signed`).
//!
//! With `--client-ca-file`, clients may present a certificate: rustls
//! verifies it against that CA bundle (client authentication is optional,
//! so token and anonymous requests still connect; a certificate that does
//! not verify fails the handshake), and the runtime reads its subject into
//! the user (`auth::authn::certificate_user`).
//!
//! Invariant: the server configuration is built once, before any executor
//! starts, and shared read-only by every shard.

use crate::config::TlsConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::BufReader;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("reading {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} holds no PEM certificate")]
    NoCertificate { path: String },
    #[error("{path} holds no PEM private key")]
    NoKey { path: String },
    #[error("generating a self-signed certificate: {0}")]
    Generate(String),
    #[error("TLS configuration: {0}")]
    Config(String),
    #[error("--client-ca-file needs TLS (--tls-cert/--tls-key or --tls-self-signed)")]
    ClientCaWithoutTls,
}

/// The rustls server configuration for `tls`, or `None` for plain HTTP.
pub fn server_config(tls: &TlsConfig) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    server_config_with_client_ca(tls, None)
}

/// As [`server_config`], verifying optional client certificates against
/// the PEM CA bundle at `client_ca`.
pub fn server_config_with_client_ca(
    tls: &TlsConfig,
    client_ca: Option<&std::path::Path>,
) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    let (certs, key) = match tls {
        TlsConfig::None if client_ca.is_some() => return Err(TlsError::ClientCaWithoutTls),
        TlsConfig::None => return Ok(None),
        TlsConfig::Files { cert, key } => (read_certs(cert)?, read_key(key)?),
        TlsConfig::SelfSigned => self_signed()?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for ca in read_certs(path)? {
                roots.add(ca).map_err(|e| TlsError::Config(format!("{}: {e}", path.display())))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}

fn read_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| TlsError::Read { path: shown.clone(), source })?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<_, _>>()
        .map_err(|source| TlsError::Read { path: shown.clone(), source })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate { path: shown });
    }
    Ok(certs)
}

fn read_key(path: &std::path::Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| TlsError::Read { path: shown.clone(), source })?;
    rustls_pemfile::private_key(&mut BufReader::new(file))
        .map_err(|source| TlsError::Read { path: shown.clone(), source })?
        .ok_or(TlsError::NoKey { path: shown })
}

fn self_signed() -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    let generated = rcgen::generate_simple_self_signed(names).map_err(|e| TlsError::Generate(e.to_string()))?;
    let cert = generated.cert.der().clone();
    let key = PrivateKeyDer::try_from(generated.signing_key.serialize_der())
        .map_err(|e| TlsError::Generate(e.to_string()))?;
    Ok((vec![cert], key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_config_offers_h2_and_http1() {
        let config = server_config(&TlsConfig::SelfSigned).unwrap().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert!(server_config(&TlsConfig::None).unwrap().is_none());
    }

    #[test]
    fn missing_files_are_errors() {
        let tls = TlsConfig::Files { cert: "/nonexistent/c.pem".into(), key: "/nonexistent/k.pem".into() };
        assert!(matches!(server_config(&tls), Err(TlsError::Read { .. })));
    }
}
