//! Authentication: who sent a request. Bearer tokens from a static token
//! file (kube-apiserver's `--token-auth-file` CSV: `token,user,uid,"g1,g2"`),
//! client certificates already verified by TLS against `--client-ca-file`
//! (CN is the user, each O a group), and anonymous requests when
//! `--anonymous-auth` is on.
//!
//! Invariant: credentials that are present but wrong (an unknown bearer
//! token) are refused (401), never downgraded to anonymous, as
//! kube-apiserver's union authenticator does; with no token file configured
//! a bearer token is not a credential at all (kube ignores it too), unless
//! it is a service account token of this server's issuer
//! (`serviceaccount.rs`, checked first by `api::pipeline`, which can read
//! the bound objects). Parsing takes text and bytes: the files are read by
//! `main`/`runtime`.

use super::UserInfo;
use std::collections::HashMap;

/// Why a token file was refused at start-up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
    #[error("token file record {record} must have at least 3 columns (token, user name, user uid), found {found}")]
    TooFewColumns { record: usize, found: usize },
    #[error("token file record {record}: {reason}")]
    Malformed { record: usize, reason: &'static str },
}

/// Why a request's credentials were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthnError {
    #[error("invalid bearer token")]
    InvalidToken,
    #[error("anonymous requests are not allowed")]
    AnonymousDisabled,
}

/// The parsed token file: token to user. Its `Debug` never prints tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenFile({} tokens)", self.tokens.len())
    }
}

impl TokenFile {
    /// Parses kube-apiserver's token file: CSV records `token,user,uid` with
    /// an optional fourth column of comma-separated groups (quoted). Empty
    /// lines are skipped; a record with an empty token is skipped (as kube
    /// does, with a warning); a later duplicate token replaces an earlier one.
    pub fn parse(text: &str) -> Result<TokenFile, TokenFileError> {
        let mut tokens = HashMap::new();
        for (index, record) in csv_records(text).enumerate() {
            let record_number = index + 1;
            let fields = record.map_err(|reason| TokenFileError::Malformed { record: record_number, reason })?;
            if fields.len() < 3 {
                return Err(TokenFileError::TooFewColumns { record: record_number, found: fields.len() });
            }
            if fields[0].is_empty() {
                continue;
            }
            let groups = match fields.get(3) {
                Some(g) if !g.is_empty() => g.split(',').map(str::to_string).collect(),
                _ => Vec::new(),
            };
            tokens.insert(
                fields[0].clone(),
                UserInfo { name: fields[1].clone(), uid: fields[2].clone(), groups, extra: Default::default() },
            );
        }
        Ok(TokenFile { tokens })
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.tokens.get(token)
    }

    /// Every token and its user, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &UserInfo)> {
        self.tokens.iter().map(|(t, u)| (t.as_str(), u))
    }
}

/// CSV records (RFC 4180 as Go's encoding/csv reads it: quoted fields with
/// `""` escapes, CRLF or LF line ends, empty lines skipped).
fn csv_records(text: &str) -> impl Iterator<Item = Result<Vec<String>, &'static str>> + '_ {
    let mut chars = text.chars().peekable();
    std::iter::from_fn(move || loop {
        chars.peek()?;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted_field = false;
        let mut at_field_start = true;
        loop {
            match chars.next() {
                None | Some('\n') => {
                    break;
                }
                Some('\r') if chars.peek() == Some(&'\n') => {}
                Some('"') if at_field_start => {
                    quoted_field = true;
                    at_field_start = false;
                    loop {
                        match chars.next() {
                            None => return Some(Err("a quoted field is not closed")),
                            Some('"') if chars.peek() == Some(&'"') => {
                                chars.next();
                                field.push('"');
                            }
                            Some('"') => break,
                            Some(c) => field.push(c),
                        }
                    }
                    if !matches!(chars.peek(), None | Some(',') | Some('\n') | Some('\r')) {
                        return Some(Err("extraneous text after a quoted field"));
                    }
                }
                Some(',') => {
                    fields.push(std::mem::take(&mut field));
                    quoted_field = false;
                    at_field_start = true;
                }
                Some('"') if !quoted_field => return Some(Err("a bare quote in an unquoted field")),
                Some(c) => {
                    field.push(c);
                    at_field_start = false;
                }
            }
        }
        if fields.is_empty() && field.is_empty() && !quoted_field {
            // An empty line.
            continue;
        }
        fields.push(field);
        return Some(Ok(fields));
    })
}

/// The authentication settings (`--token-auth-file`, `--client-ca-file`,
/// `--anonymous-auth`), parsed at start-up.
#[derive(Clone, Debug)]
pub struct AuthenticationConfig {
    /// `None`: no token authenticator (bearer tokens are ignored).
    pub tokens: Option<std::sync::Arc<TokenFile>>,
    /// PEM CA bundle that client certificates must chain to (TLS only).
    pub client_ca_file: Option<std::path::PathBuf>,
    /// Requests without credentials are `system:anonymous` (kube's default:
    /// on); off, they get 401.
    pub anonymous: bool,
    /// The service account token issuer and verifier
    /// (`--service-account-signing-key-file`, `--service-account-key-file`,
    /// `--service-account-issuer`); `None` serves no TokenRequest. Its
    /// tokens are checked before the token file (`api::pipeline`, which
    /// also checks the bound objects).
    pub service_accounts: Option<std::sync::Arc<super::serviceaccount::ServiceAccountTokens>>,
}

impl Default for AuthenticationConfig {
    fn default() -> AuthenticationConfig {
        AuthenticationConfig { tokens: None, client_ca_file: None, anonymous: true, service_accounts: None }
    }
}

impl AuthenticationConfig {
    /// Authenticates one request from its `Authorization` header and the
    /// identity of its connection's verified client certificate, in
    /// kube-apiserver's order: certificate, then bearer token, then
    /// anonymous.
    pub fn authenticate(
        &self,
        authorization: Option<&str>,
        client_certificate: Option<&UserInfo>,
    ) -> Result<UserInfo, AuthnError> {
        if let Some(user) = client_certificate {
            return Ok(UserInfo::authenticated(user.name.clone(), user.uid.clone(), user.groups.clone()));
        }
        if let (Some(tokens), Some(token)) = (&self.tokens, authorization.and_then(bearer_token)) {
            return match tokens.lookup(token) {
                Some(user) => Ok(UserInfo::authenticated(user.name.clone(), user.uid.clone(), user.groups.clone())),
                None => Err(AuthnError::InvalidToken),
            };
        }
        if self.anonymous {
            Ok(UserInfo::anonymous())
        } else {
            Err(AuthnError::AnonymousDisabled)
        }
    }
}

/// The token of an `Authorization: Bearer TOKEN` header; `None` for other
/// schemes and empty tokens (kube treats both as no token).
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim();
    (!token.is_empty()).then_some(token)
}

/// Why a client certificate names no user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertificateError {
    #[error("the client certificate is not valid DER X.509: {0}")]
    Parse(String),
    #[error("the client certificate's subject has no common name")]
    NoCommonName,
}

/// The user a client certificate names: its subject's common name (CN) is
/// the user, each organization (O) a group, as kube-apiserver's x509
/// authenticator reads it. The chain was verified by TLS before this.
pub fn certificate_user(der: &[u8]) -> Result<UserInfo, CertificateError> {
    use x509_parser::prelude::{FromDer, X509Certificate};
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| CertificateError::Parse(e.to_string()))?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .filter(|cn| !cn.is_empty())
        .ok_or(CertificateError::NoCommonName)?
        .to_string();
    let groups = subject.iter_organization().filter_map(|o| o.as_str().ok()).map(str::to_string).collect();
    Ok(UserInfo { name, uid: String::new(), groups, extra: Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP};

    #[test]
    fn token_files_parse_as_kube_apiservers() {
        let text = "t1,alice,uid-1,\"dev,ops\"\r\n\nt2,bob,uid-2\n,ghost,uid-3\n\"t\"\"4\",carol,uid-4,\n";
        let file = TokenFile::parse(text).unwrap();
        assert_eq!(file.len(), 3);
        let alice = file.lookup("t1").unwrap();
        assert_eq!((alice.name.as_str(), alice.uid.as_str()), ("alice", "uid-1"));
        assert_eq!(alice.groups, ["dev", "ops"]);
        assert!(file.lookup("t2").unwrap().groups.is_empty());
        assert_eq!(file.lookup("t\"4").unwrap().name, "carol");
        assert!(file.lookup("").is_none());
        assert_eq!(TokenFile::parse("a,b\n"), Err(TokenFileError::TooFewColumns { record: 1, found: 2 }));
        assert!(matches!(TokenFile::parse("\"a,b,c\n"), Err(TokenFileError::Malformed { record: 1, .. })));
        assert!(matches!(TokenFile::parse("a\"b,c,d\n"), Err(TokenFileError::Malformed { .. })));
        assert!(TokenFile::parse("").unwrap().is_empty());
        assert!(!format!("{file:?}").contains("t1"), "Debug must not print tokens");
    }

    #[test]
    fn authentication_order_and_failures() {
        let tokens = TokenFile::parse("good,alice,1,dev\n").unwrap();
        let mut config = AuthenticationConfig { tokens: Some(std::sync::Arc::new(tokens)), ..Default::default() };
        let alice = config.authenticate(Some("Bearer good"), None).unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.groups, ["dev", AUTHENTICATED_GROUP]);
        assert_eq!(config.authenticate(Some("Bearer bad"), None), Err(AuthnError::InvalidToken));
        // No credentials, or another scheme: anonymous when enabled.
        let anonymous = config.authenticate(None, None).unwrap();
        assert_eq!(anonymous.groups, [UNAUTHENTICATED_GROUP]);
        assert_eq!(config.authenticate(Some("Basic abc"), None).unwrap().name, "system:anonymous");
        // A certificate comes first.
        let cert = UserInfo { name: "carol".into(), groups: vec!["ops".into()], ..Default::default() };
        assert_eq!(config.authenticate(Some("Bearer bad"), Some(&cert)).unwrap().groups, ["ops", AUTHENTICATED_GROUP]);
        config.anonymous = false;
        assert_eq!(config.authenticate(None, None), Err(AuthnError::AnonymousDisabled));
        // Without a token file, a bearer token is not a credential.
        let plain = AuthenticationConfig::default();
        assert_eq!(plain.authenticate(Some("Bearer anything"), None).unwrap().name, "system:anonymous");
    }

    #[test]
    fn certificates_name_their_user_and_groups() {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "dave");
        params.distinguished_name.push(rcgen::DnType::OrganizationName, "team-a");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let user = certificate_user(cert.der()).unwrap();
        assert_eq!(user.name, "dave");
        assert_eq!(user.groups, ["team-a"]);
        assert!(matches!(certificate_user(b"not a certificate"), Err(CertificateError::Parse(_))));
        let mut nameless = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        nameless.distinguished_name = rcgen::DistinguishedName::new();
        let empty = nameless.self_signed(&key).unwrap();
        assert_eq!(certificate_user(empty.der()), Err(CertificateError::NoCommonName));
        // openssl's `-subj "/CN=dave/O=team-a/O=team-b"` (a fuzz seed, after its mode byte):
        // every O is a group, in order.
        let seed = include_bytes!("../../fuzz/corpus/credentials/cert-00");
        let user = certificate_user(&seed[1..]).unwrap();
        assert_eq!(
            (user.name.as_str(), user.groups.as_slice()),
            ("dave", &["team-a".to_string(), "team-b".to_string()][..])
        );
    }
}
