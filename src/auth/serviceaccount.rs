//! Service account tokens: the JWTs `serviceaccounts/token` (TokenRequest)
//! issues and the authenticator accepts, as kube-apiserver's
//! `pkg/serviceaccount` makes and checks them.
//!
//! A token is a JWS in compact form, signed RS256 with an RSA key
//! (`--service-account-signing-key-file`) or ES256 with a P-256 key (the
//! key generated at start-up when no file is given: `ring` cannot generate
//! RSA keys). Its header names the key (`kid`: kube's base64url SHA-256 of
//! the public key's DER SubjectPublicKeyInfo); its claims are kube's: `aud`,
//! `exp`, `iat`, `iss`, `jti`, `kubernetes.io` (namespace, service account,
//! bound pod, secret or node), `nbf`, `sub`
//! (`system:serviceaccount:NS:NAME`).
//!
//! Legacy tokens (the `kubernetes.io/service-account-token` Secrets'
//! tokens, issuer `kubernetes/serviceaccount`, flat
//! `kubernetes.io/serviceaccount/*` claims, no audience and no expiry:
//! kube's `pkg/serviceaccount/legacy.go`) are verified by
//! [`ServiceAccountTokens::verify_legacy`] against the same keys; that the
//! Secret still holds the token and the service account its uid is the API
//! layer's check.
//!
//! Verification ([`ServiceAccountTokens::verify`]) checks the signature
//! against the signing key and every `--service-account-key-file` key, the
//! issuer, the time window and the audiences; that the service account and
//! the bound object still exist with the same uid is the API layer's check
//! (it needs the store: `api::pipeline`).
//!
//! Architecture invariant: no file I/O here (`main` reads the key files and
//! hands in their PEM text); a malformed token or key is an error, never a
//! panic.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::signature::{self, KeyPair};
use serde::{Deserialize, Serialize};

/// kube's prefix of a service account's user name.
pub const USER_PREFIX: &str = "system:serviceaccount:";
/// The group of every service account.
pub const ALL_GROUP: &str = "system:serviceaccounts";
/// The smallest `expirationSeconds` a TokenRequest may ask for (kube: 10 minutes).
pub const EXPIRATION_SECONDS_MIN: i64 = 600;
/// The largest `expirationSeconds` a TokenRequest may ask for (kube: 2^32).
pub const EXPIRATION_SECONDS_MAX: i64 = 1 << 32;
/// A TokenRequest's default `expirationSeconds` (kube: one hour).
pub const EXPIRATION_SECONDS_DEFAULT: i64 = 3600;
/// Clock skew tolerated on `nbf` and `exp` (go-jose's `DefaultLeeway`).
pub const LEEWAY_SECONDS: i64 = 60;
/// The issuer when `--service-account-issuer` is not given.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// Why a key could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("no private key found (PEM \"RSA PRIVATE KEY\" or \"PRIVATE KEY\")")]
    NoPrivateKey,
    #[error("no public key found (PEM \"PUBLIC KEY\", \"CERTIFICATE\" or a private key)")]
    NoPublicKey,
    #[error("unsupported key: {0}")]
    Unsupported(String),
    #[error("the PEM text is malformed: {0}")]
    Pem(String),
}

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWT, or not one of this issuer: another authenticator may own it.
    #[error("not a service account token of this issuer")]
    NotOurs,
    #[error("invalid signature")]
    Signature,
    #[error("malformed token: {0}")]
    Malformed(String),
    #[error("service account token has expired")]
    Expired,
    #[error("service account token is not valid yet")]
    NotValidYet,
    #[error("token audiences {token:?} is invalid for the target audiences {wanted:?}")]
    Audience { token: Vec<String>, wanted: Vec<String> },
}

/// The issuer of legacy (Secret-based) service account tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// A legacy token's claims (kube's `legacyPrivateClaims` beside `iss`/`sub`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyClaims {
    pub iss: String,
    #[serde(default)]
    pub sub: String,
    #[serde(rename = "kubernetes.io/serviceaccount/namespace", default)]
    pub namespace: String,
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name", default)]
    pub secret_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name", default)]
    pub service_account_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid", default)]
    pub service_account_uid: String,
}

/// A `kubernetes.io` object reference claim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

/// The private `kubernetes.io` claim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesClaims {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<Ref>,
    #[serde(default)]
    pub serviceaccount: Ref,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnafter: Option<i64>,
}

/// A token's claims, in kube's (alphabetical, go-jose) order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// One audience is written as a string, several as an array (go-jose).
    #[serde(serialize_with = "audiences_out", deserialize_with = "audiences_in")]
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub iss: String,
    #[serde(default)]
    pub jti: String,
    #[serde(rename = "kubernetes.io", default)]
    pub kubernetes: KubernetesClaims,
    pub nbf: i64,
    pub sub: String,
}

fn audiences_out<S: serde::Serializer>(aud: &[String], s: S) -> Result<S::Ok, S::Error> {
    if aud.len() == 1 {
        s.serialize_str(&aud[0])
    } else {
        aud.serialize(s)
    }
}

fn audiences_in<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(a) => vec![a],
        OneOrMany::Many(a) => a,
    })
}

/// The user name of a service account.
pub fn user_name(namespace: &str, name: &str) -> String {
    format!("{USER_PREFIX}{namespace}:{name}")
}

/// The groups of a service account's user (before `system:authenticated`).
pub fn groups(namespace: &str) -> Vec<String> {
    vec![ALL_GROUP.to_string(), format!("{ALL_GROUP}:{namespace}")]
}

enum Signer {
    Rsa(signature::RsaKeyPair),
    Ecdsa(signature::EcdsaKeyPair),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum PublicKey {
    /// PKCS#1 RSAPublicKey DER.
    Rsa(Vec<u8>),
    /// An uncompressed P-256 point.
    EcP256(Vec<u8>),
}

/// The token issuer and verifier of this server.
pub struct ServiceAccountTokens {
    signer: Signer,
    signing_kid: String,
    /// Keys tokens may be signed with (the signing key first), with their `kid`.
    verifiers: Vec<(String, PublicKey)>,
    /// `--service-account-issuer`: the `iss` of issued tokens and the only
    /// one accepted.
    pub issuer: String,
    /// `--api-audiences`: a TokenRequest's default audiences, and what a
    /// bearer token must be meant for.
    pub api_audiences: Vec<String>,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ServiceAccountTokens(issuer {:?}, kid {}, {} keys)",
            self.issuer,
            self.signing_kid,
            self.verifiers.len()
        )
    }
}

/// DER length octets.
fn der_length(len: usize, out: &mut Vec<u8>) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len.to_be_bytes().iter().copied().skip_while(|b| *b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
}

fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    der_length(content.len(), &mut out);
    out.extend_from_slice(content);
    out
}

const OID_RSA: &[u8] = &[0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

impl PublicKey {
    /// The DER SubjectPublicKeyInfo.
    fn spki(&self) -> Vec<u8> {
        let (algorithm, key) = match self {
            PublicKey::Rsa(k) => ([OID_RSA, &[0x05, 0x00]].concat(), k),
            PublicKey::EcP256(k) => ([OID_EC_PUBLIC_KEY, OID_P256].concat(), k),
        };
        let mut bits = vec![0u8];
        bits.extend_from_slice(key);
        der(0x30, &[der(0x30, &algorithm), der(0x03, &bits)].concat())
    }

    /// kube's key id: base64url SHA-256 of the DER SubjectPublicKeyInfo.
    fn kid(&self) -> String {
        URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &self.spki()))
    }

    fn from_spki(der: &[u8]) -> Result<PublicKey, KeyError> {
        use x509_parser::prelude::FromDer;
        let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(der)
            .map_err(|e| KeyError::Pem(format!("a public key does not parse: {e}")))?;
        let key = spki.subject_public_key.data.to_vec();
        let algorithm = spki.algorithm.algorithm.to_id_string();
        match algorithm.as_str() {
            "1.2.840.113549.1.1.1" => Ok(PublicKey::Rsa(key)),
            "1.2.840.10045.2.1" => {
                let curve = spki.algorithm.parameters.as_ref().and_then(|p| p.as_oid().ok()).map(|o| o.to_id_string());
                if curve.as_deref() == Some("1.2.840.10045.3.1.7") {
                    Ok(PublicKey::EcP256(key))
                } else {
                    Err(KeyError::Unsupported(format!("elliptic curve {curve:?} (only P-256)")))
                }
            }
            other => Err(KeyError::Unsupported(format!("public key algorithm {other}"))),
        }
    }

    fn verify(&self, message: &[u8], sig: &[u8], alg: &str) -> bool {
        match (self, alg) {
            (PublicKey::Rsa(k), "RS256") => {
                signature::UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, k)
                    .verify(message, sig)
                    .is_ok()
            }
            (PublicKey::EcP256(k), "ES256") => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, k).verify(message, sig).is_ok()
            }
            _ => false,
        }
    }
}

/// The modulus and exponent of a PKCS#1 RSAPublicKey (`SEQUENCE { INTEGER
/// n, INTEGER e }`), without leading zero bytes; `None` when malformed.
fn rsa_modulus_and_exponent(der: &[u8]) -> Option<(&[u8], &[u8])> {
    fn element(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = bytes.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (first as usize, rest)
        } else {
            let count = (first & 0x7f) as usize;
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let len = rest[..count].iter().fold(0usize, |acc, b| (acc << 8) | *b as usize);
            (len, &rest[count..])
        };
        (rest.len() >= len).then(|| (&rest[..len], &rest[len..]))
    }
    let (sequence, _) = element(der, 0x30)?;
    let (n, rest) = element(sequence, 0x02)?;
    let (e, _) = element(rest, 0x02)?;
    fn strip(i: &[u8]) -> &[u8] {
        let zeros = i.iter().take_while(|b| **b == 0).count().min(i.len().saturating_sub(1));
        &i[zeros..]
    }
    Some((strip(n), strip(e)))
}

fn pem_items(pem: &[u8]) -> Result<Vec<rustls_pemfile::Item>, KeyError> {
    rustls_pemfile::read_all(&mut &pem[..]).collect::<Result<Vec<_>, _>>().map_err(|e| KeyError::Pem(e.to_string()))
}

fn signer_of(item: &rustls_pemfile::Item) -> Option<Result<Signer, KeyError>> {
    let rng = ring::rand::SystemRandom::new();
    match item {
        rustls_pemfile::Item::Pkcs1Key(k) => Some(
            signature::RsaKeyPair::from_der(k.secret_pkcs1_der())
                .map(Signer::Rsa)
                .map_err(|e| KeyError::Unsupported(format!("RSA key: {e}"))),
        ),
        rustls_pemfile::Item::Pkcs8Key(k) => {
            let der = k.secret_pkcs8_der();
            if let Ok(rsa) = signature::RsaKeyPair::from_pkcs8(der) {
                return Some(Ok(Signer::Rsa(rsa)));
            }
            Some(
                signature::EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
                    .map(Signer::Ecdsa)
                    .map_err(|e| KeyError::Unsupported(format!("PKCS#8 key (RSA or P-256 only): {e}"))),
            )
        }
        rustls_pemfile::Item::Sec1Key(_) => Some(Err(KeyError::Unsupported(
            "an \"EC PRIVATE KEY\" (convert it with `openssl pkcs8 -topk8 -nocrypt`)".into(),
        ))),
        _ => None,
    }
}

impl Signer {
    fn public_key(&self) -> PublicKey {
        match self {
            Signer::Rsa(k) => PublicKey::Rsa(k.public_key().as_ref().to_vec()),
            Signer::Ecdsa(k) => PublicKey::EcP256(k.public_key().as_ref().to_vec()),
        }
    }

    fn alg(&self) -> &'static str {
        match self {
            Signer::Rsa(_) => "RS256",
            Signer::Ecdsa(_) => "ES256",
        }
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, KeyError> {
        let rng = ring::rand::SystemRandom::new();
        match self {
            Signer::Rsa(k) => {
                let mut sig = vec![0; k.public().modulus_len()];
                k.sign(&signature::RSA_PKCS1_SHA256, &rng, message, &mut sig)
                    .map_err(|_| KeyError::Unsupported("RSA signing failed".into()))?;
                Ok(sig)
            }
            Signer::Ecdsa(k) => k
                .sign(&rng, message)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| KeyError::Unsupported("ECDSA signing failed".into())),
        }
    }
}

impl ServiceAccountTokens {
    fn new(signer: Signer, extra_keys: Vec<PublicKey>, issuer: String, api_audiences: Vec<String>) -> Self {
        let public = signer.public_key();
        let signing_kid = public.kid();
        let mut verifiers = vec![(signing_kid.clone(), public)];
        for key in extra_keys {
            if !verifiers.iter().any(|(_, k)| *k == key) {
                verifiers.push((key.kid(), key));
            }
        }
        let api_audiences = if api_audiences.is_empty() { vec![issuer.clone()] } else { api_audiences };
        ServiceAccountTokens { signer, signing_kid, verifiers, issuer, api_audiences }
    }

    /// From `--service-account-signing-key-file` (PEM: PKCS#1 RSA, or
    /// PKCS#8 RSA or P-256) and the `--service-account-key-file`s (PEM
    /// public keys, certificates or private keys, several per file).
    /// `api_audiences` empty means the issuer, as kube defaults them.
    pub fn from_pem(
        signing_key: &[u8],
        verification_keys: &[Vec<u8>],
        issuer: String,
        api_audiences: Vec<String>,
    ) -> Result<Self, KeyError> {
        let signer = pem_items(signing_key)?.iter().find_map(signer_of).ok_or(KeyError::NoPrivateKey)??;
        let keys = verification_keys_of(verification_keys)?;
        Ok(Self::new(signer, keys, issuer, api_audiences))
    }

    /// A P-256 key generated now (ES256 tokens), for a server started
    /// without `--service-account-signing-key-file`: its tokens stop
    /// verifying when the server restarts.
    pub fn generated(issuer: String, api_audiences: Vec<String>) -> Result<Self, KeyError> {
        Self::generated_with(&[], issuer, api_audiences)
    }

    /// [`Self::generated`], also verifying tokens signed with the
    /// `--service-account-key-file` keys (a read tier beside a cluster
    /// verifies the cluster's tokens without its signing key).
    pub fn generated_with(
        verification_keys: &[Vec<u8>],
        issuer: String,
        api_audiences: Vec<String>,
    ) -> Result<Self, KeyError> {
        let keys = verification_keys_of(verification_keys)?;
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| KeyError::Unsupported("generating a P-256 key failed".into()))?;
        let key =
            signature::EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
                .map_err(|_| KeyError::Unsupported("the generated key does not load".into()))?;
        Ok(Self::new(Signer::Ecdsa(key), keys, issuer, api_audiences))
    }

    /// The OIDC discovery document of the issuer
    /// (`/.well-known/openid-configuration`), as kube-apiserver writes it.
    pub fn openid_configuration(&self) -> serde_json::Value {
        let mut algorithms: Vec<&str> = Vec::new();
        for (_, key) in &self.verifiers {
            let alg = match key {
                PublicKey::Rsa(_) => "RS256",
                PublicKey::EcP256(_) => "ES256",
            };
            if !algorithms.contains(&alg) {
                algorithms.push(alg);
            }
        }
        serde_json::json!({
            "issuer": self.issuer,
            "jwks_uri": format!("{}/openid/v1/jwks", self.issuer.trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algorithms,
        })
    }

    /// The verification keys as a JWK set (`/openid/v1/jwks`).
    pub fn jwks(&self) -> serde_json::Value {
        let keys: Vec<serde_json::Value> = self
            .verifiers
            .iter()
            .filter_map(|(kid, key)| match key {
                PublicKey::Rsa(der) => {
                    let (n, e) = rsa_modulus_and_exponent(der)?;
                    Some(serde_json::json!({"use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                        "n": URL_SAFE_NO_PAD.encode(n), "e": URL_SAFE_NO_PAD.encode(e)}))
                }
                PublicKey::EcP256(point) if point.len() == 65 => Some(serde_json::json!({"use": "sig", "kty": "EC",
                    "kid": kid, "crv": "P-256", "alg": "ES256",
                    "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])})),
                PublicKey::EcP256(_) => None,
            })
            .collect();
        serde_json::json!({"keys": keys})
    }

    /// The JWS algorithm of issued tokens (`RS256` or `ES256`).
    pub fn algorithm(&self) -> &'static str {
        self.signer.alg()
    }

    /// A signed legacy token carrying `claims` (kube-controller-manager's
    /// tokens controller made these; used by tests and tools).
    pub fn sign_legacy(&self, claims: &LegacyClaims) -> Result<String, KeyError> {
        self.sign_serialized(&serde_json::to_vec(claims).map_err(|e| KeyError::Unsupported(e.to_string()))?)
    }

    fn sign_serialized(&self, claims: &[u8]) -> Result<String, KeyError> {
        let header = serde_json::json!({"alg": self.signer.alg(), "kid": self.signing_kid});
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims));
        let sig = self.signer.sign(signing_input.as_bytes())?;
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }

    /// The claims of a legacy token signed by one of the keys, checked as
    /// kube's legacy validator checks them before its lookups (every claim
    /// present, `sub` naming the same account). [`TokenError::NotOurs`]
    /// when it is not a JWT of the legacy issuer.
    pub fn verify_legacy(&self, token: &str) -> Result<LegacyClaims, TokenError> {
        let raw = self.verified_payload(token, |iss| iss == LEGACY_ISSUER)?;
        let claims: LegacyClaims =
            serde_json::from_value(raw).map_err(|e| TokenError::Malformed(format!("claims do not decode: {e}")))?;
        let missing = |what: &str| Err(TokenError::Malformed(format!("{what} claim is missing")));
        if claims.sub.is_empty() {
            return missing("sub");
        }
        if claims.namespace.is_empty() {
            return missing("namespace");
        }
        if claims.secret_name.is_empty() {
            return missing("secretName");
        }
        if claims.service_account_name.is_empty() {
            return missing("serviceAccountName");
        }
        if claims.service_account_uid.is_empty() {
            return missing("serviceAccountUID");
        }
        if claims.sub != user_name(&claims.namespace, &claims.service_account_name) {
            return Err(TokenError::Malformed("sub claim is invalid".into()));
        }
        Ok(claims)
    }

    /// The payload of a compact JWS whose `iss` passes `issuer` and whose
    /// signature one of the keys verifies.
    fn verified_payload(&self, token: &str, issuer: impl Fn(&str) -> bool) -> Result<serde_json::Value, TokenError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(sig), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::NotOurs);
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::NotOurs);
        let header: serde_json::Value = serde_json::from_slice(&decode(header)?).map_err(|_| TokenError::NotOurs)?;
        let raw: serde_json::Value = serde_json::from_slice(&decode(payload)?).map_err(|_| TokenError::NotOurs)?;
        if !raw.get("iss").and_then(|i| i.as_str()).is_some_and(&issuer) {
            return Err(TokenError::NotOurs);
        }
        let alg = header.get("alg").and_then(|a| a.as_str()).unwrap_or("");
        let sig = decode(sig).map_err(|_| TokenError::Signature)?;
        let message = &token.as_bytes()[..token.len() - token.rsplit('.').next().map_or(0, |s| s.len() + 1)];
        if !self.verifiers.iter().any(|(_, key)| key.verify(message, &sig, alg)) {
            return Err(TokenError::Signature);
        }
        Ok(raw)
    }

    /// A signed token carrying `claims`.
    pub fn sign(&self, claims: &Claims) -> Result<String, KeyError> {
        self.sign_serialized(&serde_json::to_vec(claims).map_err(|e| KeyError::Unsupported(e.to_string()))?)
    }

    /// The claims of a token this server may have issued: signature, issuer,
    /// time window (`now` in Unix seconds, with kube's leeway) and
    /// audiences (`wanted`: empty means the API audiences; one in common is
    /// enough). [`TokenError::NotOurs`] when it is not a JWT of this issuer.
    pub fn verify(&self, token: &str, now: i64, wanted: &[String]) -> Result<Claims, TokenError> {
        let raw = self.verified_payload(token, |iss| iss == self.issuer)?;
        let claims: Claims =
            serde_json::from_value(raw).map_err(|e| TokenError::Malformed(format!("claims do not decode: {e}")))?;
        if now > claims.exp.saturating_add(LEEWAY_SECONDS) {
            return Err(TokenError::Expired);
        }
        if now.saturating_add(LEEWAY_SECONDS) < claims.nbf {
            return Err(TokenError::NotValidYet);
        }
        let wanted = if wanted.is_empty() { &self.api_audiences[..] } else { wanted };
        if !claims.aud.iter().any(|a| wanted.contains(a)) {
            return Err(TokenError::Audience { token: claims.aud.clone(), wanted: wanted.to_vec() });
        }
        if !claims.sub.starts_with(USER_PREFIX) || claims.kubernetes.serviceaccount.name.is_empty() {
            return Err(TokenError::Malformed("the token names no service account".into()));
        }
        Ok(claims)
    }
}

/// The public keys of `--service-account-key-file`s (PEM public keys,
/// certificates or private keys, several per file; each file must hold one).
fn verification_keys_of(files: &[Vec<u8>]) -> Result<Vec<PublicKey>, KeyError> {
    let mut keys = Vec::new();
    for pem in files {
        let before = keys.len();
        for item in pem_items(pem)? {
            match &item {
                rustls_pemfile::Item::SubjectPublicKeyInfo(spki) => keys.push(PublicKey::from_spki(spki.as_ref())?),
                rustls_pemfile::Item::X509Certificate(cert) => {
                    use x509_parser::prelude::{FromDer, X509Certificate};
                    let (_, cert) = X509Certificate::from_der(cert.as_ref())
                        .map_err(|e| KeyError::Pem(format!("a certificate does not parse: {e}")))?;
                    keys.push(PublicKey::from_spki(cert.public_key().raw)?);
                }
                other => {
                    if let Some(signer) = signer_of(other) {
                        keys.push(signer?.public_key());
                    }
                }
            }
        }
        if keys.len() == before {
            return Err(KeyError::NoPublicKey);
        }
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(now: i64, aud: &[&str]) -> Claims {
        Claims {
            aud: aud.iter().map(|a| a.to_string()).collect(),
            exp: now + 3600,
            iat: now,
            iss: "https://issuer".into(),
            jti: "j".into(),
            kubernetes: KubernetesClaims {
                namespace: "team".into(),
                pod: Some(Ref { name: "p".into(), uid: "pu".into() }),
                serviceaccount: Ref { name: "robot".into(), uid: "su".into() },
                ..Default::default()
            },
            nbf: now,
            sub: user_name("team", "robot"),
        }
    }

    #[test]
    fn generated_keys_sign_and_verify_es256() {
        let tokens = ServiceAccountTokens::generated("https://issuer".into(), vec![]).unwrap();
        assert_eq!(tokens.api_audiences, ["https://issuer"], "the API audiences default to the issuer");
        let now = 1_900_000_000;
        let token = tokens.sign(&claims(now, &["https://issuer"])).unwrap();
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"].as_str().unwrap().len(), 43);
        let payload: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').nth(1).unwrap()).unwrap()).unwrap();
        assert_eq!(payload["aud"], "https://issuer", "one audience is a string, as go-jose writes it");
        assert_eq!(payload["kubernetes.io"]["pod"]["name"], "p");
        let back = tokens.verify(&token, now + 10, &[]).unwrap();
        assert_eq!(back, claims(now, &["https://issuer"]));
        assert_eq!(tokens.verify(&token, now + 3600 + LEEWAY_SECONDS + 1, &[]), Err(TokenError::Expired));
        assert_eq!(tokens.verify(&token, now - LEEWAY_SECONDS - 1, &[]), Err(TokenError::NotValidYet));
        assert!(matches!(tokens.verify(&token, now, &["other".into()]), Err(TokenError::Audience { .. })));
        // A flipped signature byte, another server's key, garbage.
        let mut forged = token.clone().into_bytes();
        let last = forged.len() - 2;
        forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(tokens.verify(std::str::from_utf8(&forged).unwrap(), now, &[]), Err(TokenError::Signature));
        let other = ServiceAccountTokens::generated("https://issuer".into(), vec![]).unwrap();
        assert_eq!(other.verify(&token, now, &[]), Err(TokenError::Signature));
        assert_eq!(tokens.verify("abc", now, &[]), Err(TokenError::NotOurs));
        assert_eq!(tokens.verify("a.b.c", now, &[]), Err(TokenError::NotOurs));
        let foreign = ServiceAccountTokens::generated("https://elsewhere".into(), vec![]).unwrap();
        let mut c = claims(now, &["x"]);
        c.iss = "https://elsewhere".into();
        assert_eq!(tokens.verify(&foreign.sign(&c).unwrap(), now, &[]), Err(TokenError::NotOurs));
    }

    #[test]
    fn legacy_tokens_verify_with_the_same_keys_and_need_every_claim() {
        let tokens = ServiceAccountTokens::generated("https://issuer".into(), vec![]).unwrap();
        let legacy = LegacyClaims {
            iss: LEGACY_ISSUER.into(),
            sub: user_name("team", "robot"),
            namespace: "team".into(),
            secret_name: "robot-token".into(),
            service_account_name: "robot".into(),
            service_account_uid: "su".into(),
        };
        let token = tokens.sign_legacy(&legacy).unwrap();
        let payload: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').nth(1).unwrap()).unwrap()).unwrap();
        assert_eq!(payload["kubernetes.io/serviceaccount/secret.name"], "robot-token");
        assert_eq!(tokens.verify_legacy(&token), Ok(legacy.clone()));
        // Not a token of the new issuer, and the reverse.
        assert_eq!(tokens.verify(&token, 0, &[]), Err(TokenError::NotOurs));
        let new = tokens.sign(&claims(0, &["https://issuer"])).unwrap();
        assert_eq!(tokens.verify_legacy(&new), Err(TokenError::NotOurs));
        let other = ServiceAccountTokens::generated("https://issuer".into(), vec![]).unwrap();
        assert_eq!(other.verify_legacy(&token), Err(TokenError::Signature));
        let without_uid = LegacyClaims { service_account_uid: String::new(), ..legacy.clone() };
        assert_eq!(
            tokens.verify_legacy(&tokens.sign_legacy(&without_uid).unwrap()),
            Err(TokenError::Malformed("serviceAccountUID claim is missing".into()))
        );
        let other_sub = LegacyClaims { sub: user_name("team", "someone"), ..legacy };
        assert_eq!(
            tokens.verify_legacy(&tokens.sign_legacy(&other_sub).unwrap()),
            Err(TokenError::Malformed("sub claim is invalid".into()))
        );
    }

    #[test]
    fn key_ids_are_kubes() {
        // The SubjectPublicKeyInfo built here parses back to the same key.
        let tokens = ServiceAccountTokens::generated("i".into(), vec![]).unwrap();
        let public = tokens.signer.public_key();
        assert_eq!(PublicKey::from_spki(&public.spki()).unwrap(), public);
        assert_eq!(tokens.signing_kid, public.kid());
        assert!(matches!(
            ServiceAccountTokens::from_pem(b"nothing", &[], "i".into(), vec![]),
            Err(KeyError::NoPrivateKey)
        ));
        let rcgen_key = rcgen::KeyPair::generate().unwrap();
        let pem = rcgen_key.serialize_pem();
        let from_file = ServiceAccountTokens::from_pem(
            pem.as_bytes(),
            &[rcgen_key.public_key_pem().into_bytes()],
            "i".into(),
            vec!["api".into()],
        )
        .unwrap();
        assert_eq!(from_file.verifiers.len(), 1, "the same key given twice is one key");
        let jwks = from_file.jwks();
        assert_eq!(jwks["keys"][0]["kty"], "EC");
        assert_eq!(jwks["keys"][0]["kid"].as_str(), Some(from_file.signing_kid.as_str()));
        assert_eq!(URL_SAFE_NO_PAD.decode(jwks["keys"][0]["x"].as_str().unwrap()).unwrap().len(), 32);
        assert_eq!(from_file.openid_configuration()["jwks_uri"], "i/openid/v1/jwks");
        // A PKCS#1 RSAPublicKey: n = 0x00c5 (a leading zero dropped), e = 65537.
        let pkcs1 = [0x30, 0x09, 0x02, 0x02, 0x00, 0xc5, 0x02, 0x03, 0x01, 0x00, 0x01];
        assert_eq!(rsa_modulus_and_exponent(&pkcs1), Some((&[0xc5][..], &[0x01, 0x00, 0x01][..])));
        assert_eq!(rsa_modulus_and_exponent(&pkcs1[..5]), None);
        let token = from_file.sign(&Claims { iss: "i".into(), ..claims(0, &["api"]) }).unwrap();
        assert!(from_file.verify(&token, 10, &[]).is_ok());
    }
}
