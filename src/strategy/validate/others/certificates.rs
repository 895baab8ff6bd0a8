//! CertificateSigningRequest validation with kube-apiserver v1.36's words
//! (`pkg/apis/certificates/validation/validation.go`:
//! `validateCertificateSigningRequest`, `ValidateSignerName`): the request
//! is a PEM `CERTIFICATE REQUEST` block holding a PKCS#10 request, at least
//! one usage and every usage known and listed once, the signer name a
//! `domain/path` with a dotted DNS domain, not the legacy signer, and an
//! expiration of at least ten minutes; the status conditions (a type and a
//! status, True only for Approved, Denied and Failed, not both Approved and
//! Denied, no type twice) and the issued certificate (CERTIFICATE PEM blocks
//! without headers, each holding X.509 certificates); on update, no
//! Approved, Denied or Failed condition removed, Approved and Denied set
//! only through `approval`, the certificate set only through `status` and
//! never changed once set; what the stored object already broke is
//! tolerated (`getValidationOptions`).
//!
//! Not Go's words: when a PEM block decodes but its DER is not a certificate
//! request (or certificate), kube prints Go's `encoding/asn1` (or
//! `crypto/x509`) error; here it is `asn1: structure error: ` and
//! x509-parser's description (`x509: malformed certificate`). The request's
//! signature is not checked (kube's `CheckSignature`). The request's bytes
//! (`[]byte` printed by `%#v`) are written `[]byte{...}`.
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

/// What an update tolerates because the stored object already has it
/// (kube's `certificateValidationOptions`); everything is strict on create.
#[derive(Clone, Copy, Default)]
pub struct Tolerated {
    legacy_signer: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
    approved_and_denied: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
}

impl Tolerated {
    /// `getValidationOptions(new, old)`.
    pub fn for_update(object: &Fields, old: &Fields) -> Tolerated {
        let empty = Fields::new();
        let old_spec = obj(old, "spec").unwrap_or(&empty);
        let usages = strings(old_spec, "usages");
        let types: Vec<&str> = conditions_of(old).iter().map(|c| text(c, "type")).collect();
        let certificate = |o: &Fields| obj(o, "status").map(|s| text(s, "certificate").to_string()).unwrap_or_default();
        Tolerated {
            legacy_signer: text(old_spec, "signerName") == LEGACY_SIGNER,
            unknown_usages: usages.iter().any(|u| !USAGES.contains(u)),
            duplicate_usages: usages.iter().enumerate().any(|(i, u)| usages[..i].contains(u)),
            approved_and_denied: types.contains(&"Approved") && types.contains(&"Denied"),
            duplicate_condition_types: types.iter().enumerate().any(|(i, t)| types[..i].contains(t)),
            empty_condition_type: types.contains(&""),
            arbitrary_certificate: certificate(object) == certificate(old)
                || validate_certificate(&base64_bytes(&certificate(old))).is_err(),
        }
    }
}

fn base64_bytes(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default()
}

fn conditions_of(object: &Fields) -> Vec<&Fields> {
    obj(object, "status")
        .map(|s| list(s, "conditions"))
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_object)
        .collect()
}

/// `ValidateCertificateSigningRequestCreate`.
pub fn certificate_signing_request(object: &Fields) -> Vec<FieldError> {
    validate(object, Tolerated::default())
}

/// `validateCertificateSigningRequest` with what `tolerated` allows.
fn validate(object: &Fields, tolerated: Tolerated) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    // `request` is []byte: base64 in JSON (decoding already refused bad base64).
    let request = spec.get("request").and_then(Value::as_str).map(base64_bytes).unwrap_or_default();
    if let Err(message) = parse_csr(&request) {
        errs.push(FieldError::invalid_bare("spec.request", "[]byte{...}", &message));
    }
    let usages = list(spec, "usages");
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    let usages: Vec<&str> = usages.iter().map(|u| u.as_str().unwrap_or_default()).collect();
    if !tolerated.unknown_usages {
        for (i, usage) in usages.iter().enumerate() {
            if !USAGES.contains(usage) {
                errs.push(not_supported(&format!("spec.usages[{i}]"), usage, USAGES));
            }
        }
    }
    if !tolerated.duplicate_usages {
        for (i, usage) in usages.iter().enumerate() {
            if usages[..i].contains(usage) {
                errs.push(FieldError::duplicate(&format!("spec.usages[{i}]"), usage));
            }
        }
    }
    let signer = text(spec, "signerName");
    if !tolerated.legacy_signer && signer == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(signer_name("spec.signerName", signer));
    }
    if let Some(seconds) = int(spec, "expirationSeconds").filter(|s| *s < 600) {
        errs.push(invalid_raw(
            "spec.expirationSeconds",
            &seconds.to_string(),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs.extend(conditions(object, tolerated));
    if !tolerated.arbitrary_certificate {
        let certificate = obj(object, "status").map(|s| text(s, "certificate")).unwrap_or("");
        if let Err(message) = validate_certificate(&base64_bytes(certificate)) {
            errs.push(FieldError::invalid("status.certificate", "<certificate data>", &message));
        }
    }
    errs
}

/// `validateConditions`.
fn conditions(object: &Fields, tolerated: Tolerated) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (mut approved, mut denied) = (false, false);
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions_of(object).into_iter().enumerate() {
        let kind = text(condition, "type");
        let at = format!("status.conditions[{i}]");
        if !tolerated.empty_condition_type && kind.is_empty() {
            errs.push(FieldError::required(&format!("{at}.type"), ""));
        }
        let allowed: &[&str] =
            if ["Approved", "Denied", "Failed"].contains(&kind) { &["True"] } else { &["False", "True", "Unknown"] };
        match text(condition, "status") {
            "" => errs.push(FieldError::required(&format!("{at}.status"), "")),
            status if !allowed.contains(&status) => errs.push(not_supported(&format!("{at}.status"), status, allowed)),
            _ => {}
        }
        if !tolerated.approved_and_denied {
            let exclusive = match kind {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if exclusive {
                errs.push(FieldError::invalid(
                    "status.conditions",
                    kind,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !tolerated.duplicate_condition_types {
            if seen.contains(&kind) {
                errs.push(FieldError::duplicate(&format!("{at}.type"), kind));
            }
            seen.push(kind);
        }
    }
    errs
}

/// `validateCertificateSigningRequestUpdate` for an update of the resource
/// (`approval` false: Approved and Denied may not change; `status`:
/// whether the certificate may be set).
pub fn certificate_signing_request_update(object: &Fields, old: &Fields, status: bool) -> Vec<FieldError> {
    let mut errs = validate(object, Tolerated::for_update(object, old));
    let of_type = |o: &Fields, t: &str| -> Vec<Fields> {
        conditions_of(o).into_iter().filter(|c| text(c, "type") == t).cloned().collect()
    };
    for t in ["Approved", "Denied", "Failed"] {
        if of_type(object, t).len() < of_type(old, t).len() {
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {}", validation::go_quote(t)),
            ));
        }
    }
    for t in ["Approved", "Denied"] {
        let (new, before) = (of_type(object, t), of_type(old, t));
        if new.len() > before.len() {
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not add a condition of type {}", validation::go_quote(t)),
            ));
        } else if new.len() == before.len() && new != before {
            // kube appends a diff of the two condition lists (cmp's text).
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not modify a condition of type {}\n...", validation::go_quote(t)),
            ));
        }
    }
    let certificate = |o: &Fields| obj(o, "status").map(|s| text(s, "certificate").to_string()).unwrap_or_default();
    let (new, before) = (certificate(object), certificate(old));
    if new != before {
        if !status {
            errs.push(FieldError::forbidden("status.certificate", "updates may not set certificate content"));
        } else if !before.is_empty() {
            errs.push(FieldError::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
    }
    errs
}

/// The PEM blocks of `data` as Go's `pem.Decode` finds them, one at a time:
/// (type, whether it has headers, the decoded bytes, the rest); `None` when
/// no further block decodes.
fn pem_block(data: &[u8]) -> Option<(String, bool, Vec<u8>, &[u8])> {
    let text = std::str::from_utf8(data).ok()?;
    let mut from = 0;
    while let Some(found) = text[from..].find("-----BEGIN ") {
        let start = from + found;
        from = start + 1;
        // The BEGIN line must start a line.
        if start > 0 && !text[..start].ends_with('\n') {
            continue;
        }
        let after = &text[start + "-----BEGIN ".len()..];
        let Some(type_end) = after.find("-----") else { continue };
        let kind = &after[..type_end];
        let body_start = start + "-----BEGIN ".len() + type_end + 5;
        let end_marker = format!("-----END {kind}-----");
        let Some(end) = text[body_start..].find(&end_marker) else { continue };
        let body = &text[body_start..body_start + end];
        let (headers, content) = match body.find("\n\n").or_else(|| body.find("\r\n\r\n")) {
            Some(split) if body[..split].contains(':') => (true, &body[split..]),
            _ => (false, body),
        };
        let encoded: String = content.chars().filter(|c| !c.is_whitespace()).collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded) else { continue };
        let rest_start = body_start + end + end_marker.len();
        return Some((kind.to_string(), headers, bytes, &data[rest_start..]));
    }
    None
}

/// `validateCertificate`: empty, or CERTIFICATE blocks without headers,
/// each holding one or more DER certificates.
fn validate_certificate(mut data: &[u8]) -> Result<(), String> {
    if data.is_empty() {
        return Ok(());
    }
    let mut blocks = 0;
    while let Some((kind, headers, der, rest)) = pem_block(data) {
        if kind != "CERTIFICATE" {
            return Err(format!("only CERTIFICATE PEM blocks are allowed, found {}", validation::go_quote(&kind)));
        }
        if headers {
            return Err("no PEM block headers are permitted".into());
        }
        blocks += 1;
        let mut remaining = der.as_slice();
        if remaining.is_empty() {
            return Err("found CERTIFICATE PEM block containing 0 certificates".into());
        }
        while !remaining.is_empty() {
            match x509_parser::parse_x509_certificate(remaining) {
                Ok((rest, _)) => remaining = rest,
                Err(_) => return Err("x509: malformed certificate".into()),
            }
        }
        data = rest;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// `ParseCSR`: the first PEM block, of type `CERTIFICATE REQUEST`, holding a
/// DER PKCS#10 request with nothing after it.
fn parse_csr(bytes: &[u8]) -> Result<(), String> {
    const NOT_A_REQUEST: &str = "PEM block type must be CERTIFICATE REQUEST";
    // pem.Decode takes the first block whatever its type.
    let der = match pem_block(bytes) {
        Some((kind, _, der, _)) if kind == "CERTIFICATE REQUEST" => der,
        _ => return Err(NOT_A_REQUEST.into()),
    };
    match x509_parser::certification_request::X509CertificationRequest::from_der(&der) {
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
        assert_eq!(messages(json!({"request": CSR, "signerName": "example.com/s"})), ["spec.usages: Required value"]);
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

    fn csr(status: Value) -> Fields {
        json!({"spec": {"request": CSR, "signerName": "example.com/s", "usages": ["any"]}, "status": status})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn strings_of(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn status_conditions() {
        let got = strings_of(certificate_signing_request(&csr(json!({"conditions": [
            {"type": "Approved", "status": "False"}, {"type": "", "status": ""}, {"type": "Denied", "status": "True"},
            {"type": "Custom", "status": "Maybe"}, {"type": "Custom", "status": "True"}]}))));
        assert_eq!(
            got,
            [
                "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\"",
                "status.conditions[1].type: Required value",
                "status.conditions[1].status: Required value",
                "status.conditions: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive",
                "status.conditions[3].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.conditions[4].type: Duplicate value: \"Custom\"",
            ]
        );
    }

    #[test]
    fn issued_certificates() {
        let pem = rcgen::generate_simple_self_signed(vec!["node-1".to_string()]).unwrap().cert.pem();
        let with = |text: &str| csr(json!({"certificate": base64::engine::general_purpose::STANDARD.encode(text)}));
        assert!(certificate_signing_request(&with(&pem)).is_empty());
        assert!(certificate_signing_request(&with(&format!("{pem}{pem}"))).is_empty());
        let bad = |text: &str| strings_of(certificate_signing_request(&with(text)));
        assert_eq!(
            bad("no pem here"),
            ["status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"]
        );
        assert_eq!(
            bad("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n"),
            ["status.certificate: Invalid value: \"<certificate data>\": only CERTIFICATE PEM blocks are allowed, found \"PRIVATE KEY\""]
        );
        assert_eq!(
            bad("-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nMAA=\n-----END CERTIFICATE-----\n"),
            ["status.certificate: Invalid value: \"<certificate data>\": no PEM block headers are permitted"]
        );
        assert_eq!(
            bad("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n"),
            ["status.certificate: Invalid value: \"<certificate data>\": x509: malformed certificate"]
        );
    }

    #[test]
    fn updates_keep_approval_and_certificates() {
        let pem = base64::engine::general_purpose::STANDARD
            .encode(rcgen::generate_simple_self_signed(vec!["n".to_string()]).unwrap().cert.pem());
        let approved = csr(json!({"conditions": [{"type": "Approved", "status": "True", "reason": "ok"}]}));
        let pending = csr(json!({}));
        // Approval is the approval subresource's; the status subresource may issue.
        assert_eq!(
            strings_of(certificate_signing_request_update(&approved, &pending, true)),
            ["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
        );
        assert_eq!(
            strings_of(certificate_signing_request_update(&pending, &approved, true)),
            ["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
        );
        let mut issued = approved.clone();
        issued["status"]["certificate"] = json!(pem);
        assert!(certificate_signing_request_update(&issued, &approved, true).is_empty());
        assert_eq!(
            strings_of(certificate_signing_request_update(&issued, &approved, false)),
            ["status.certificate: Forbidden: updates may not set certificate content"]
        );
        let mut reissued = issued.clone();
        reissued["status"]["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode("junk"));
        assert_eq!(
            strings_of(certificate_signing_request_update(&reissued, &issued, true)),
            [
                "status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block",
                "status.certificate: Forbidden: updates may not modify existing certificate content",
            ]
        );
        // What the stored object already broke is tolerated.
        let mut legacy = pending.clone();
        legacy["spec"]["signerName"] = json!(LEGACY_SIGNER);
        legacy["spec"]["usages"] = json!(["any", "any", "flying"]);
        assert!(certificate_signing_request_update(&legacy, &legacy, false).is_empty());
        assert_eq!(certificate_signing_request(&legacy).len(), 3);
    }
}
