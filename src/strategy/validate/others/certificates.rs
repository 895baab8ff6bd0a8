//! CertificateSigningRequest validation with kube-apiserver v1.36's words
//! (`pkg/apis/certificates/validation/validation.go`:
//! `validateCertificateSigningRequest`, `ValidateSignerName`): the request
//! is a PEM `CERTIFICATE REQUEST` block holding a PKCS#10 request, at least
//! one usage and every usage known and listed once, the signer name a
//! `domain/path` with a dotted DNS domain, not the legacy signer, and an
//! expiration of at least ten minutes.
//!
//! Not Go's words: when the PEM block decodes but its DER is not a
//! certificate request, kube prints Go's `encoding/asn1` error; here it is
//! `asn1: structure error: ` and x509-parser's description. The request's
//! bytes (`[]byte` printed by `%#v`) are written `[]byte{...}`.
//!
//! Invariant: no input panics; a mistyped field reads as absent.

use super::common::*;
use crate::types::validation::{self, FieldError};
use base64::Engine;
use serde_json::Value;
use x509_parser::prelude::FromDer;

/// `allValidUsages`, sorted as `sets.List` prints them.
const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";

pub fn certificate_signing_request(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    // `request` is []byte: base64 in JSON (decoding already refused bad base64).
    let request = spec
        .get("request")
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default();
    if let Err(message) = parse_csr(&request) {
        errs.push(FieldError::invalid_bare("spec.request", "[]byte{...}", &message));
    }
    let usages = list(spec, "usages");
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", "usages must be provided"));
    }
    let mut seen = Vec::new();
    for (i, usage) in usages.iter().enumerate() {
        let usage = usage.as_str().unwrap_or_default();
        let field = format!("spec.usages[{i}]");
        if !USAGES.contains(&usage) {
            errs.push(not_supported(&field, usage, USAGES));
        }
        if seen.contains(&usage) {
            errs.push(FieldError::duplicate(&field, usage));
        }
        seen.push(usage);
    }
    let signer = text(spec, "signerName");
    errs.extend(signer_name("spec.signerName", signer));
    if signer == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    }
    if let Some(seconds) = int(spec, "expirationSeconds").filter(|s| *s < 600) {
        errs.push(invalid_raw(
            "spec.expirationSeconds",
            &seconds.to_string(),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs
}

/// `ParseCSR`: the first PEM block, of type `CERTIFICATE REQUEST`, holding a
/// DER PKCS#10 request with nothing after it.
fn parse_csr(bytes: &[u8]) -> Result<(), String> {
    const NOT_A_REQUEST: &str = "PEM block type must be CERTIFICATE REQUEST";
    let mut reader = bytes;
    // pem.Decode takes the first block whatever its type.
    let der = match rustls_pemfile::read_one(&mut reader) {
        Ok(Some(rustls_pemfile::Item::Csr(der))) => der,
        _ => return Err(NOT_A_REQUEST.into()),
    };
    match x509_parser::certification_request::X509CertificationRequest::from_der(der.as_ref()) {
        Ok((&[], _)) => Ok(()),
        Ok(_) => Err("asn1: syntax error: trailing data".into()),
        Err(e) => Err(format!("asn1: structure error: {e}")),
    }
}

/// `ValidateSignerName`: `domain/path`, the domain DNS labels with a dot,
/// the path a valid path segment, 253 characters at most in all.
pub fn signer_name(field: &str, signer: &str) -> Vec<FieldError> {
    if signer.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let segments: Vec<&str> = signer.split('/').collect();
    if segments.len() != 2 {
        return vec![FieldError::invalid(
            field,
            signer,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    }
    let (domain, path) = (segments[0], segments[1]);
    let mut errs = Vec::new();
    if domain.len() > validation::DNS1123_SUBDOMAIN_MAX_LEN {
        errs.push(FieldError::too_long(field, validation::DNS1123_SUBDOMAIN_MAX_LEN));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let messages = validation::is_dns1123_label(label);
        if !messages.is_empty() {
            for message in messages {
                let message = format!("validating label {}: {message}", validation::go_quote(label));
                errs.push(FieldError::invalid(field, domain, &message));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            field,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for message in validation::is_valid_path_segment_name(path) {
        errs.push(FieldError::invalid(field, path, &message));
    }
    let path_max = validation::DNS1123_SUBDOMAIN_MAX_LEN.saturating_sub(domain.len() + 1);
    if path.len() > path_max {
        errs.push(FieldError::too_long(field, path_max));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A P-256 request for CN=all-resources (tests/all_resources.rs).
    const CSR: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIU01Ib0NBUUF3R0RFV01CUUdBMVVFQXd3TllXeHNMWEpsYzI5MWNtTmxjekJaTUJNR0J5cUdTTTQ5QWdFRwpDQ3FHU000OUF3RUhBMElBQkFMeWdIcmZxNUV5OG1jYWt6WWlvNkZGbkdsWUdQQ3kyY2ZIMkFnbnJoWUR5SFMrClRRRkdKc3pkNU9tTW9NU0QrMWl4R1dtdEwyL0RjejJPWDZpQ0pJU2dBREFLQmdncWhrak9QUVFEQWdOSUFEQkYKQWlCQVBENkpRbDNKUHgvVloxOWY1K0RBOWhaSmE1SnZLcjBTTXVpRWZCRVBQQUloQU5Ta2h0ZDFaQ0FoTzYzUgoyMjg3WUZ5WjJvRDRhTWhqaGUrSFo0NUVCTjR3Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";

    fn messages(spec: Value) -> Vec<String> {
        let object = json!({"spec": spec});
        certificate_signing_request(object.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn a_valid_request_passes() {
        let spec = json!({"request": CSR, "signerName": "example.com/signer", "usages": ["digital signature", "client auth"],
            "expirationSeconds": 600});
        assert_eq!(messages(spec), Vec::<String>::new());
    }

    #[test]
    fn the_request_must_be_a_pem_certificate_request() {
        let not_pem = json!({"request": b64("hello"), "signerName": "example.com/s", "usages": ["any"]});
        assert_eq!(
            messages(not_pem),
            ["spec.request: Invalid value: []byte{...}: PEM block type must be CERTIFICATE REQUEST"]
        );
        let certificate = b64("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n");
        assert_eq!(
            messages(json!({"request": certificate, "signerName": "example.com/s", "usages": ["any"]})),
            ["spec.request: Invalid value: []byte{...}: PEM block type must be CERTIFICATE REQUEST"]
        );
        let garbage = b64("-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n");
        let got = messages(json!({"request": garbage, "signerName": "example.com/s", "usages": ["any"]}));
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with("spec.request: Invalid value: []byte{...}: asn1: "), "{got:?}");
        assert_eq!(
            messages(json!({"signerName": "example.com/s", "usages": ["any"]})),
            ["spec.request: Invalid value: []byte{...}: PEM block type must be CERTIFICATE REQUEST"]
        );
    }

    #[test]
    fn usages_are_required_known_and_unique() {
        assert_eq!(
            messages(json!({"request": CSR, "signerName": "example.com/s"})),
            ["spec.usages: Required value: usages must be provided"]
        );
        let got = messages(json!({"request": CSR, "signerName": "example.com/s", "usages": ["any", "flying", "any"]}));
        assert_eq!(got.len(), 2);
        assert!(got[0].starts_with(
            "spec.usages[1]: Unsupported value: \"flying\": supported values: \"any\", \"cert sign\", \"client auth\""
        ));
        assert_eq!(got[1], "spec.usages[2]: Duplicate value: \"any\"");
    }

    #[test]
    fn signer_names_and_expiration() {
        let with = |signer: &str| messages(json!({"request": CSR, "signerName": signer, "usages": ["any"]}));
        assert_eq!(with(""), ["spec.signerName: Required value"]);
        assert_eq!(
            with("signer"),
            ["spec.signerName: Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'"]
        );
        assert_eq!(
            with("localhost/s"),
            ["spec.signerName: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots"]
        );
        assert_eq!(
            with("Example.com/s")[0],
            "spec.signerName: Invalid value: \"Example.com\": validating label \"Example\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        );
        assert_eq!(with("example.com/.."), ["spec.signerName: Invalid value: \"..\": may not be '..'"]);
        assert_eq!(
            with(LEGACY_SIGNER),
            ["spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version"]
        );
        assert_eq!(
            messages(json!({"request": CSR, "signerName": "example.com/s", "usages": ["any"], "expirationSeconds": 599})),
            ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"]
        );
    }
}
