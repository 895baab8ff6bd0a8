//! TLS for the listener: rustls with ALPN `h2` and `http/1.1`, from PEM files
//! or a certificate generated at start-up (`--tls-self-signed`).
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
}

/// The rustls server configuration for `tls`, or `None` for plain HTTP.
pub fn server_config(tls: &TlsConfig) -> Result<Option<Arc<rustls::ServerConfig>>, TlsError> {
    let (certs, key) = match tls {
        TlsConfig::None => return Ok(None),
        TlsConfig::Files { cert, key } => (read_certs(cert)?, read_key(key)?),
        TlsConfig::SelfSigned => self_signed()?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
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
