//! Kubernetes name and label validation, with kube-apiserver's observable
//! error messages: DNS-1123 subdomains and labels, DNS-1035 labels, path
//! segment names, `generateName` prefixes, label keys and values, annotation
//! keys, and the field errors (`FieldError`) that become a Status's causes.
//!
//! Invariant: pure functions; messages are byte-for-byte kube's, because
//! clients and users match on them. Lengths are in bytes, as Go counts them.
//! Invariant: nothing here builds a `metav1.Status`; the API layer turns a
//! list of `FieldError`s into a 422 Invalid response (see [`invalid_message`]).

use std::fmt;

/// Maximum length of a DNS-1123 subdomain (most object names).
pub const DNS1123_SUBDOMAIN_MAX_LEN: usize = 253;
/// Maximum length of a DNS-1123 or DNS-1035 label (namespaces, services).
pub const DNS1123_LABEL_MAX_LEN: usize = 63;
/// Maximum length of the name part of a qualified name (label keys).
pub const QUALIFIED_NAME_MAX_LEN: usize = 63;
/// Maximum length of a label value.
pub const LABEL_VALUE_MAX_LEN: usize = 63;
/// Maximum length of a CronJob name: a Job name made from it gets an 11-byte
/// suffix and must stay a 63-byte label.
pub const CRONJOB_NAME_MAX_LEN: usize = 52;
/// Maximum total size of an object's annotations (keys plus values).
pub const ANNOTATIONS_BYTES_MAX: usize = 256 * 1024;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// The kind of a field error, as kube's `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldErrorType {
    Required,
    Invalid,
    TooLong,
    /// kube's `field.TooMany`: a list over its limit.
    TooMany,
    Duplicate,
    NotSupported,
    Forbidden,
    /// kube's `field.NotFound` (a reference to something absent).
    NotFound,
}

impl FieldErrorType {
    /// The words kube prints before the value (`Invalid value`).
    pub fn as_str(self) -> &'static str {
        match self {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::NotFound => "Not found",
        }
    }

    /// The `reason` of a Status cause (`FieldValueInvalid`).
    pub fn cause_reason(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::NotFound => "FieldValueNotFound",
        }
    }

    /// Whether kube prints the bad value for this type.
    fn shows_value(self) -> bool {
        !matches!(self, FieldErrorType::Required | FieldErrorType::Forbidden | FieldErrorType::TooLong)
    }
}

/// One validation failure, as kube's `field.Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the field, e.g. `metadata.name`.
    pub field: String,
    pub reason: FieldErrorType,
    /// The bad value, printed quoted; `None` prints nothing.
    pub value: Option<String>,
    /// The detail, e.g. `must be no more than 253 characters`.
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, reason: FieldErrorType, value: Option<&str>, message: &str) -> Self {
        FieldError { field: field.to_string(), reason, value: value.map(str::to_string), message: message.to_string() }
    }

    pub fn invalid(field: &str, value: &str, message: &str) -> Self {
        FieldError::new(field, FieldErrorType::Invalid, Some(value), message)
    }

    /// `field.TooMany(path, actual, max)`: `Too many: ACTUAL: must have at
    /// most MAX items`.
    pub fn too_many(field: &str, actual: usize, max: usize) -> Self {
        FieldError::with_bare_value(
            field,
            FieldErrorType::TooMany,
            &actual.to_string(),
            &format!("must have at most {max} items"),
        )
    }

    pub fn required(field: &str, message: &str) -> Self {
        FieldError::new(field, FieldErrorType::Required, None, message)
    }

    pub fn forbidden(field: &str, message: &str) -> Self {
        FieldError::new(field, FieldErrorType::Forbidden, None, message)
    }

    /// The error without its field (`Invalid value: "Foo": ...`): the
    /// `message` of a Status cause, whose `field` carries the path.
    pub fn body(&self) -> String {
        let mut s = self.reason.as_str().to_string();
        if self.reason.shows_value() {
            if let Some(value) = &self.value {
                s.push_str(": ");
                s.push_str(&go_quote(value));
            }
        }
        if !self.message.is_empty() {
            s.push_str(": ");
            s.push_str(&self.message);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// The message of kube's 422 Invalid Status: `Pod "Foo" is invalid:
/// metadata.name: Invalid value: ...`, several errors in `[a, b]`, each
/// distinct message once. `qualified_kind` is `Pod` or `Deployment.apps`.
pub fn invalid_message(qualified_kind: &str, name: &str, errors: &[FieldError]) -> String {
    let mut messages: Vec<String> = Vec::with_capacity(errors.len());
    for e in errors {
        let m = e.to_string();
        if !messages.contains(&m) {
            messages.push(m);
        }
    }
    let joined = match messages.len() {
        0 => String::new(),
        1 => messages.remove(0),
        _ => format!("[{}]", messages.join(", ")),
    };
    format!("{qualified_kind} {} is invalid: {joined}", go_quote(name))
}

/// A string quoted as Go's `%q` prints it.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// kube's `validation.MaxLenError`.
pub fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// kube's `validation.RegexError`: the message, examples, and the regex.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = msg.to_string();
    if examples.is_empty() {
        s.push_str(" (regex used for validation is '");
    } else {
        s.push_str(" (e.g. ");
        for (i, example) in examples.iter().enumerate() {
            if i > 0 {
                s.push_str(" or ");
            }
            s.push('\'');
            s.push_str(example);
            s.push_str("', ");
        }
        s.push_str("regex used for validation is '");
    }
    s.push_str(fmt);
    s.push_str("')");
    s
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first) && is_lower_alnum(last) && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1035_label(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && matches_dns1123_label(s)
}

/// Labels joined by `.`.
fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// kube's `IsDNS1123Subdomain`: the messages for `value`, empty if valid.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LEN {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LEN));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// kube's `IsWildcardDNS1123Subdomain`: `*.` then a DNS-1123 subdomain.
pub fn is_wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LEN {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LEN));
    }
    if !value.strip_prefix("*.").is_some_and(matches_dns1123_subdomain) {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &format!("\\*\\.{DNS1123_SUBDOMAIN_FMT}"),
            &["*.example.com"],
        ));
    }
    errs
}

/// kube's `IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LEN {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LEN));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // kube adds this hint when the value would be a valid subdomain.
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, &["my-name", "123-abc"]));
        }
    }
    errs
}

/// kube's `IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LEN {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LEN));
    }
    if !matches_dns1035_label(value) {
        errs.push(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, &["my-name", "abc-123"]));
    }
    errs
}

/// kube's `IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`.
pub fn is_valid_path_segment_name(value: &str) -> Vec<String> {
    for illegal in [".", ".."] {
        if value == illegal {
            return vec![format!("may not be '{illegal}'")];
        }
    }
    is_valid_path_segment_prefix(value)
}

/// kube's `IsValidPathSegmentPrefix`: no `/` or `%`.
pub fn is_valid_path_segment_prefix(value: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|illegal| value.contains(*illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

/// kube's `IsQualifiedName` (label keys, annotation keys, finalizer names):
/// an optional DNS subdomain prefix and `/`, then a 63-byte name.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for msg in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LEN {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX_LEN)));
    }
    if !matches_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

/// kube's `IsValidLabelValue`: empty, or a 63-byte qualified name part.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LEN {
        errs.push(max_len_error(LABEL_VALUE_MAX_LEN));
    }
    if !value.is_empty() && !matches_qualified_name_part(value) {
        errs.push(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, &["MyValue", "my_value", "12345"]));
    }
    errs
}

/// Which rule a resource's object names follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 subdomain, at most 253 bytes: the default.
    Dns1123Subdomain,
    /// DNS-1123 label, at most 63 bytes: namespaces.
    Dns1123Label,
    /// DNS-1035 label (starts with a letter), at most 63 bytes: services.
    Dns1035Label,
    /// Any string that is a safe path segment: not `.` or `..`, no `/` or
    /// `%`: the RBAC types.
    PathSegment,
    /// DNS-1123 subdomain of at most 52 bytes: cronjobs.
    CronJob,
    /// An IP address (`ValidateIPAddressName`, which checks a prefix the
    /// same way): networking.k8s.io IPAddresses.
    IpAddress,
}

/// The name rule kube-apiserver applies to a built-in resource's objects
/// (custom resources: [`NameRule::Dns1123Subdomain`]). Services follow
/// DNS-1035 because kube's `RelaxedServiceNameValidation` gate is off by
/// default in 1.36. CustomResourceDefinitions must also be named
/// `<spec.names.plural>.<spec.group>` ([`validate_crd_name`]).
pub fn name_rule(group: &str, resource: &str) -> NameRule {
    match (group, resource) {
        ("", "namespaces") => NameRule::Dns1123Label,
        ("", "services") => NameRule::Dns1035Label,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        // ValidateAPIService: a path segment (and `version.group`, checked
        // with the spec in strategy/validate).
        ("apiregistration.k8s.io", "apiservices") => NameRule::PathSegment,
        // ValidateCertificateRequestName accepts any name; the generic
        // registry's path-segment rule remains.
        ("certificates.k8s.io", "certificatesigningrequests") => NameRule::PathSegment,
        ("batch", "cronjobs") => NameRule::CronJob,
        ("networking.k8s.io", "ipaddresses") => NameRule::IpAddress,
        _ => NameRule::Dns1123Subdomain,
    }
}

/// kube's `maskTrailingDash`, used for `generateName` prefixes: a trailing
/// `-` (with the byte before it) is replaced by `a`, so the prefix validates
/// as a name would once the random suffix is appended.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        // Like kube, drop the dash and the byte before it; a multi-byte
        // character before the dash is invalid either way.
        let cut = name.len() - 2;
        match name.get(..cut) {
            Some(head) => format!("{head}a"),
            None => name.to_string(),
        }
    } else {
        name.to_string()
    }
}

impl NameRule {
    /// The messages for a name (`prefix: false`) or a `generateName` prefix
    /// (`prefix: true`), as kube's `ValidateNameFunc`s return them.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::PathSegment => {
                // RBAC validates prefixes with the full path-segment rule.
                is_valid_path_segment_name(name)
            }
            NameRule::IpAddress => {
                if is_valid_ip(name) {
                    Vec::new()
                } else {
                    vec![INVALID_IP_MSG.to_string()]
                }
            }
            NameRule::Dns1123Subdomain | NameRule::CronJob => {
                let masked = if prefix { mask_trailing_dash(name) } else { name.to_string() };
                is_dns1123_subdomain(&masked)
            }
            NameRule::Dns1123Label => {
                let masked = if prefix { mask_trailing_dash(name) } else { name.to_string() };
                is_dns1123_label(&masked)
            }
            NameRule::Dns1035Label => {
                let masked = if prefix { mask_trailing_dash(name) } else { name.to_string() };
                is_dns1035_label(&masked)
            }
        }
    }
}

/// kube's object-meta name checks: `metadata.generateName` if set, then
/// `metadata.name` (required unless `generateName` is set; a server that has
/// already generated the name passes it as `name`).
pub fn validate_object_name(rule: NameRule, name: &str, generate_name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !generate_name.is_empty() {
        for msg in rule.check(generate_name, true) {
            errs.push(FieldError::invalid("metadata.generateName", generate_name, &msg));
        }
    }
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required("metadata.name", "name or generateName is required"));
        }
    } else {
        for msg in rule.check(name, false) {
            errs.push(FieldError::invalid("metadata.name", name, &msg));
        }
        if rule == NameRule::CronJob && name.len() > CRONJOB_NAME_MAX_LEN {
            errs.push(FieldError::invalid("metadata.name", name, &max_len_error(CRONJOB_NAME_MAX_LEN)));
        }
    }
    errs
}

/// A namespace named in `metadata.namespace` of a namespaced object.
pub fn validate_object_namespace(namespace: &str) -> Vec<FieldError> {
    if namespace.is_empty() {
        return vec![FieldError::required("metadata.namespace", "")];
    }
    is_dns1123_label(namespace)
        .into_iter()
        .map(|msg| FieldError::invalid("metadata.namespace", namespace, &msg))
        .collect()
}

/// The extra rule for CustomResourceDefinition names.
pub fn validate_crd_name(name: &str, plural: &str, group: &str) -> Vec<FieldError> {
    if name == format!("{plural}.{group}") {
        Vec::new()
    } else {
        vec![FieldError::invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group")]
    }
}

/// kube's `ValidateLabels` for `metadata.labels` (errors carry the path
/// `metadata.labels`, with the bad key or value).
pub fn validate_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<FieldError> {
    let field = "metadata.labels";
    let mut errs = Vec::new();
    for (key, value) in labels {
        for msg in is_qualified_name(key) {
            errs.push(FieldError::invalid(field, key, &msg));
        }
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid(field, value, &msg));
        }
    }
    errs
}

/// kube's `ValidateAnnotations` for `metadata.annotations`: keys are
/// qualified names (checked lower-cased), total size at most 256 KiB.
pub fn validate_annotations<'a>(annotations: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<FieldError> {
    let field = "metadata.annotations";
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (key, value) in annotations {
        for msg in is_qualified_name(&key.to_lowercase()) {
            errs.push(FieldError::invalid(field, key, &msg));
        }
        total = total.saturating_add(key.len()).saturating_add(value.len());
    }
    if total > ANNOTATIONS_BYTES_MAX {
        errs.push(FieldError::new(
            field,
            FieldErrorType::TooLong,
            None,
            &format!("may not be more than {ANNOTATIONS_BYTES_MAX} bytes"),
        ));
    }
    errs
}

/// Go's `%#v` of a `metav1.OwnerReference` (a set pointer field is printed
/// `(...)` where Go prints its address).
fn go_owner_reference(reference: &serde_json::Value) -> String {
    let text = |field: &str| go_quote(reference.get(field).and_then(serde_json::Value::as_str).unwrap_or(""));
    let pointer = |field: &str| match reference.get(field) {
        Some(v) if !v.is_null() => "(*bool)(...)",
        _ => "(*bool)(nil)",
    };
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        text("apiVersion"),
        text("kind"),
        text("name"),
        text("uid"),
        pointer("controller"),
        pointer("blockOwnerDeletion")
    )
}

/// kube's `ValidateOwnerReferences` for `metadata.ownerReferences`
/// (apimachinery `api/validation/objectmeta.go`): each reference names an
/// apiVersion with a version, a kind, a name and a uid, and is not a core
/// Event; at most one is the controller. The errors of a reference are at
/// `metadata.ownerReferences.<field>`, without an index, as kube reports
/// them.
pub fn validate_owner_references(references: &[serde_json::Value]) -> Vec<FieldError> {
    let field = "metadata.ownerReferences";
    let text = |r: &serde_json::Value, key: &str| -> String {
        r.get(key).and_then(serde_json::Value::as_str).unwrap_or("").to_string()
    };
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    for reference in references {
        let (api_version, kind) = (text(reference, "apiVersion"), text(reference, "kind"));
        // schema.FromAPIVersionAndKind: "group/version", "version", or (for
        // "" , "/" and more than one '/') no group and no version.
        let (group, version) = match api_version.matches('/').count() {
            _ if api_version.is_empty() || api_version == "/" => ("", ""),
            0 => ("", api_version.as_str()),
            1 => api_version.split_once('/').unwrap_or(("", "")),
            _ => ("", ""),
        };
        if version.is_empty() {
            errs.push(FieldError::invalid(&format!("{field}.apiVersion"), &api_version, "version must not be empty"));
        }
        for key in ["kind", "name", "uid"] {
            let value = text(reference, key);
            if value.is_empty() {
                errs.push(FieldError::invalid(&format!("{field}.{key}"), &value, "must not be empty"));
            }
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid_bare(
                field,
                &go_owner_reference(reference),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if reference.get("controller").and_then(serde_json::Value::as_bool) == Some(true) {
            let name = format!("{kind}/{}", text(reference, "name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = references.iter().map(go_owner_reference).collect();
                    errs.push(FieldError::invalid_bare(
                        field,
                        &format!("[]v1.OwnerReference{{{}}}", all.join(", ")),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {name}"
                        ),
                    ));
                }
                None => first_controller = Some(name),
            }
        }
    }
    errs
}

/// kube's `field.ErrorList` constructors beyond [`FieldError::invalid`],
/// `required` and `forbidden` (apimachinery `util/validation/field/errors.go`).
impl FieldError {
    /// An error whose bad value is not a Go string, printed bare as Go's
    /// `%v` / `%#v` prints it (`80`, `true`, `[]string{"a"}`, `null`). Only
    /// for types that show their value (Invalid, Duplicate, NotSupported,
    /// NotFound): the value travels in the detail.
    pub fn with_bare_value(field: &str, reason: FieldErrorType, bare: &str, message: &str) -> Self {
        let detail = if message.is_empty() { bare.to_string() } else { format!("{bare}: {message}") };
        FieldError::new(field, reason, None, &detail)
    }

    /// `field.Invalid` with a bare (non-string) value, e.g. an integer.
    pub fn invalid_bare(field: &str, bare: &str, message: &str) -> Self {
        FieldError::with_bare_value(field, FieldErrorType::Invalid, bare, message)
    }

    /// `field.NotSupported`: `supported values: "a", "b"` (in the order given).
    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Self {
        FieldError::new(field, FieldErrorType::NotSupported, Some(value), &supported_values(supported))
    }

    /// `field.Duplicate` of a string value.
    pub fn duplicate(field: &str, value: &str) -> Self {
        FieldError::new(field, FieldErrorType::Duplicate, Some(value), "")
    }

    /// `field.NotFound` of a string value.
    pub fn not_found(field: &str, value: &str) -> Self {
        FieldError::new(field, FieldErrorType::NotFound, Some(value), "")
    }

    /// `field.TooLong` with a byte limit: `may not be more than N bytes`.
    pub fn too_long(field: &str, max_bytes: usize) -> Self {
        let unit = if max_bytes == 1 { "byte" } else { "bytes" };
        FieldError::new(field, FieldErrorType::TooLong, None, &format!("may not be more than {max_bytes} {unit}"))
    }
}

/// The detail of kube's `field.NotSupported`: each value quoted as Go's
/// `strconv.Quote` does, joined by `, `.
pub fn supported_values(values: &[&str]) -> String {
    if values.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("supported values: {}", quoted.join(", "))
}

/// kube's `validation.RegexError` (public form of the helper above).
pub fn regex_error_message(msg: &str, fmt: &str, examples: &[&str]) -> String {
    regex_error(msg, fmt, examples)
}

/// kube's `validation.InclusiveRangeError`.
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// kube's `validation.IsValidPortNum`: 1 to 65535.
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// kube's `validation.IsValidPortName` (IANA_SVC_NAME): at most 15 bytes of
/// `[-a-z0-9]`, at least one letter, no `--`, no hyphen at either end.
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let b = port.as_bytes();
    if b.len() > 15 {
        errs.push(max_len_error(15));
    }
    if b.is_empty() || !b.iter().all(|&c| is_lower_alnum(c) || c == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if !b.iter().any(u8::is_ascii_lowercase) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if b.first() == Some(&b'-') || b.last() == Some(&b'-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// kube's `hasChDirPrefix`.
fn ch_dir_prefix(value: &str) -> Option<&'static str> {
    if value == "." {
        Some("must not be '.'")
    } else if value == ".." {
        Some("must not be '..'")
    } else if value.starts_with("..") {
        Some("must not start with '..'")
    } else {
        None
    }
}

/// kube's `validation.IsConfigMapKey` (ConfigMap and Secret keys).
pub fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LEN {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LEN));
    }
    let ok = !value.is_empty() && value.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'));
    if !ok {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    errs.extend(ch_dir_prefix(value).map(str::to_string));
    errs
}

/// kube's `validation.IsRelaxedEnvVarName` (the RelaxedEnvironmentVariable
/// Validation gate is on by default since 1.32): printable ASCII but `=`.
pub fn is_relaxed_env_var_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.is_empty() {
        errs.push("environment variable name must be non-empty".to_string());
    }
    if value.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_string(),
        );
    }
    errs
}

/// kube's `validation.IsValidIP` (a `ParseIPSloppy` address: IPv4 may have
/// leading zeros).
pub fn is_valid_ip(value: &str) -> bool {
    parse_ip_sloppy(value).is_some()
}

/// The message of kube's `validation.IsValidIP`.
pub const INVALID_IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// The message of kube's `validation.IsValidCIDR`.
pub const INVALID_CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `netutils.ParseIPSloppy`: Go's `net.ParseIP` that also accepts IPv4
/// octets with leading zeros.
pub fn parse_ip_sloppy(value: &str) -> Option<std::net::IpAddr> {
    if value.contains(':') {
        return value.parse::<std::net::Ipv6Addr>().ok().map(std::net::IpAddr::V6);
    }
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (octet, part) in octets.iter_mut().zip(&parts) {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse::<u8>().ok()?;
    }
    Some(std::net::IpAddr::V4(std::net::Ipv4Addr::from(octets)))
}

/// kube's `validation.IsValidCIDR` (`ParseCIDRSloppy`).
pub fn is_valid_cidr(value: &str) -> bool {
    let Some((ip, bits)) = value.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_ip_sloppy(ip) else {
        return false;
    };
    let max = if addr.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|c| c.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|b| b <= max)
}

/// kube's `ValidateLabels` at any path (`spec.selector`,
/// `spec.nodeSelector`, `spec.template.metadata.labels`).
pub fn validate_labels_at<'a>(field: &str, labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels {
        for msg in is_qualified_name(key) {
            errs.push(FieldError::invalid(field, key, &msg));
        }
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid(field, value, &msg));
        }
    }
    errs
}

/// kube's `ValidateLabelName` (a qualified name at `field`).
pub fn validate_label_name(field: &str, key: &str) -> Vec<FieldError> {
    is_qualified_name(key).into_iter().map(|msg| FieldError::invalid(field, key, &msg)).collect()
}

/// apimachinery's `ValidateLabelSelector` of a decoded `LabelSelector` at
/// `field` (`spec.selector`): matchLabels as labels, each matchExpression's
/// operator, values and key.
pub fn validate_label_selector(selector: &serde_json::Value, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if selector.is_null() {
        return errs;
    }
    let labels: Vec<(&str, &str)> = selector
        .get("matchLabels")
        .and_then(serde_json::Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v))).collect())
        .unwrap_or_default();
    errs.extend(validate_labels_at(&format!("{field}.matchLabels"), labels));
    let expressions = selector.get("matchExpressions").and_then(serde_json::Value::as_array);
    for (i, expr) in expressions.map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        let path = format!("{field}.matchExpressions[{i}]");
        let values = expr.get("values").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        let operator = expr.get("operator").and_then(serde_json::Value::as_str).unwrap_or("");
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &format!("{path}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                &format!("{path}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => {
                errs.push(FieldError::invalid(&format!("{path}.operator"), other, "not a valid selector operator"))
            }
        }
        let key = expr.get("key").and_then(serde_json::Value::as_str).unwrap_or("");
        errs.extend(validate_label_name(&format!("{path}.key"), key));
        for (j, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or("");
            for msg in is_valid_label_value(value) {
                errs.push(FieldError::invalid(&format!("{path}.values[{j}]"), value, &msg));
            }
        }
    }
    errs
}

/// Tests of the helpers above (the file's first tests follow).
#[cfg(test)]
mod helper_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constructors_print_as_kube() {
        let e = FieldError::not_supported("spec.type", "Foo", &["ClusterIP", "NodePort"]);
        assert_eq!(
            e.to_string(),
            "spec.type: Unsupported value: \"Foo\": supported values: \"ClusterIP\", \"NodePort\""
        );
        assert_eq!(e.reason.cause_reason(), "FieldValueNotSupported");
        let e = FieldError::not_found("spec.containers[0].volumeMounts[0].name", "data");
        assert_eq!(e.body(), "Not found: \"data\"");
        assert_eq!(e.reason.cause_reason(), "FieldValueNotFound");
        assert_eq!(FieldError::duplicate("a", "x").to_string(), "a: Duplicate value: \"x\"");
        assert_eq!(
            FieldError::too_long("data", 1048576).to_string(),
            "data: Too long: may not be more than 1048576 bytes"
        );
        assert_eq!(FieldError::invalid_bare("p", "80", "m").to_string(), "p: Invalid value: 80: m");
        assert_eq!(
            FieldError::with_bare_value("n", FieldErrorType::Duplicate, "30080", "").to_string(),
            "n: Duplicate value: 30080"
        );
    }

    #[test]
    fn ports_keys_env_names() {
        assert!(is_valid_port_name("http").is_empty());
        assert_eq!(is_valid_port_name("8080"), ["must contain at least one letter (a-z)"]);
        assert_eq!(is_valid_port_name("-a--b-").len(), 2);
        assert_eq!(is_valid_port_name("abcdefghijklmnop"), ["must be no more than 15 characters"]);
        assert!(is_valid_port_num(65535).is_empty());
        assert_eq!(is_valid_port_num(0), ["must be between 1 and 65535, inclusive"]);
        assert!(is_config_map_key("a.b-c_D").is_empty());
        assert_eq!(is_config_map_key("..a"), ["must not start with '..'"]);
        assert_eq!(is_config_map_key("a b").len(), 1);
        assert!(is_relaxed_env_var_name("1 weird-but:ok").is_empty());
        assert_eq!(is_relaxed_env_var_name("é").len(), 1);
    }

    #[test]
    fn ips_and_cidrs() {
        assert!(is_valid_ip("10.0.0.1") && is_valid_ip("010.000.000.001") && is_valid_ip("::ffff:1.2.3.4"));
        assert!(
            !is_valid_ip("10.0.0.256") && !is_valid_ip("") && !is_valid_ip("fe80::1%eth0") && !is_valid_ip("1.2.3")
        );
        assert!(is_valid_cidr("10.244.0.0/16") && is_valid_cidr("2001:db8::/64"));
        assert!(!is_valid_cidr("10.0.0.0/33") && !is_valid_cidr("10.0.0.0") && !is_valid_cidr("x/8"));
    }

    #[test]
    fn label_selectors() {
        let ok = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]});
        assert!(validate_label_selector(&ok, "spec.selector").is_empty());
        let bad = json!({"matchLabels": {"app": "-web"}, "matchExpressions": [{"key": "t", "operator": "Exists", "values": ["x"]}]});
        let errs = validate_label_selector(&bad, "spec.selector");
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].field, "spec.selector.matchLabels");
        assert_eq!(
            errs[1].to_string(),
            "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

    #[test]
    fn subdomain_table() {
        let long = "a".repeat(254);
        let max = format!("{}.{}.{}.{}", "a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61));
        assert_eq!(max.len(), 253);
        let cases: &[(&str, &[&str])] = &[
            ("a", &[]),
            ("example.com", &[]),
            ("web-0", &[]),
            ("0abc", &[]),
            (&max, &[]),
            ("Foo", &[SUBDOMAIN_MSG]),
            ("", &[SUBDOMAIN_MSG]),
            ("-a", &[SUBDOMAIN_MSG]),
            ("a-", &[SUBDOMAIN_MSG]),
            ("a..b", &[SUBDOMAIN_MSG]),
            (".a", &[SUBDOMAIN_MSG]),
            ("a_b", &[SUBDOMAIN_MSG]),
            ("a/b", &[SUBDOMAIN_MSG]),
            ("é", &[SUBDOMAIN_MSG]),
            (&long, &["must be no more than 253 characters"]),
        ];
        for (value, want) in cases {
            assert_eq!(is_dns1123_subdomain(value), *want, "{value:?}");
        }
    }

    #[test]
    fn label_table() {
        let cases: &[(&str, &[&str])] = &[
            ("default", &[]),
            ("kube-system", &[]),
            ("123-abc", &[]),
            (&"a".repeat(63), &[]),
            (&"a".repeat(64), &["must be no more than 63 characters"]),
            ("My-Name", &[LABEL_MSG]),
            ("a.b", &["must not contain dots"]),
            ("-a", &[LABEL_MSG]),
        ];
        for (value, want) in cases {
            assert_eq!(is_dns1123_label(value), *want, "{value:?}");
        }
    }

    #[test]
    fn dns1035_table() {
        let cases: &[(&str, &[&str])] = &[
            ("my-svc", &[]),
            ("a", &[]),
            ("abc-123", &[]),
            ("1svc", &[DNS1035_MSG]),
            ("svc-", &[DNS1035_MSG]),
            ("Svc", &[DNS1035_MSG]),
            (&"a".repeat(64), &["must be no more than 63 characters"]),
        ];
        for (value, want) in cases {
            assert_eq!(is_dns1035_label(value), *want, "{value:?}");
        }
    }

    #[test]
    fn path_segment_table() {
        let cases: &[(&str, &[&str])] = &[
            ("system:admin", &[]),
            ("Cluster Admin", &[]),
            (".", &["may not be '.'"]),
            ("..", &["may not be '..'"]),
            ("a/b", &["may not contain '/'"]),
            ("a/%b", &["may not contain '/'", "may not contain '%'"]),
        ];
        for (value, want) in cases {
            assert_eq!(is_valid_path_segment_name(value), *want, "{value:?}");
        }
    }

    #[test]
    fn name_rules_by_resource() {
        assert_eq!(name_rule("", "pods"), NameRule::Dns1123Subdomain);
        assert_eq!(name_rule("", "namespaces"), NameRule::Dns1123Label);
        assert_eq!(name_rule("", "services"), NameRule::Dns1035Label);
        assert_eq!(name_rule("", "persistentvolumes"), NameRule::Dns1123Subdomain);
        assert_eq!(name_rule("rbac.authorization.k8s.io", "clusterroles"), NameRule::PathSegment);
        assert_eq!(name_rule("batch", "cronjobs"), NameRule::CronJob);
        assert_eq!(name_rule("apiregistration.k8s.io", "apiservices"), NameRule::PathSegment);
        let csr = name_rule("certificates.k8s.io", "certificatesigningrequests");
        assert!(csr.check("csr-Node:1", false).is_empty());
        assert_eq!(csr.check("a/b", false), ["may not contain '/'"]);
        assert_eq!(name_rule("example.com", "widgets"), NameRule::Dns1123Subdomain);
    }

    #[test]
    fn object_names_with_kube_causes() {
        let e = validate_object_name(NameRule::Dns1123Subdomain, "Foo", "");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].to_string(), format!("metadata.name: Invalid value: \"Foo\": {SUBDOMAIN_MSG}"));
        assert_eq!(e[0].reason.cause_reason(), "FieldValueInvalid");
        assert_eq!(e[0].body(), format!("Invalid value: \"Foo\": {SUBDOMAIN_MSG}"));

        let e = validate_object_name(NameRule::Dns1123Subdomain, "", "");
        assert_eq!(e, [FieldError::required("metadata.name", "name or generateName is required")]);
        assert_eq!(e[0].to_string(), "metadata.name: Required value: name or generateName is required");

        assert!(validate_object_name(NameRule::Dns1123Subdomain, "", "web-").is_empty());
        assert!(validate_object_name(NameRule::Dns1123Label, "", "ns-").is_empty());
        assert!(validate_object_name(NameRule::Dns1035Label, "", "svc-").is_empty());
        let e = validate_object_name(NameRule::Dns1123Subdomain, "", "Web-");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].field, "metadata.generateName");
        assert_eq!(e[0].value.as_deref(), Some("Web-"));

        let e = validate_object_name(NameRule::PathSegment, "a/b", "");
        assert_eq!(e[0].to_string(), "metadata.name: Invalid value: \"a/b\": may not contain '/'");
        // RBAC checks a generateName prefix with the full path-segment rule.
        assert_eq!(validate_object_name(NameRule::PathSegment, "", "..").len(), 1);

        let long = "a".repeat(53);
        let e = validate_object_name(NameRule::CronJob, &long, "");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].message, "must be no more than 52 characters");
        assert!(validate_object_name(NameRule::CronJob, &"a".repeat(52), "").is_empty());
    }

    #[test]
    fn generate_name_masks_trailing_dash_like_kube() {
        assert_eq!(mask_trailing_dash("abc-"), "aba");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("a-"), "a");
        assert_eq!(mask_trailing_dash("abc"), "abc");
        assert_eq!(mask_trailing_dash("é-"), "é-");
    }

    #[test]
    fn label_keys_and_values() {
        assert!(validate_labels([("app", "web"), ("example.com/tier", ""), ("a_b.c-d", "X.y_z-1")]).is_empty());
        let e = validate_labels([("-bad", "ok")]);
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].to_string(),
            "metadata.labels: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        let e = validate_labels([("/x", "ok")]);
        assert_eq!(e[0].message, "prefix part must be non-empty");
        let e = validate_labels([("a/b/c", "ok")]);
        assert!(e[0].message.starts_with("a qualified name must consist of"));
        assert!(e[0].message.ends_with("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
        let e = validate_labels([("Example.com/x", "ok")]);
        assert!(e[0].message.starts_with("prefix part a lowercase RFC 1123 subdomain"));
        let e = validate_labels([(&*"k".repeat(64), "ok")]);
        assert_eq!(e[0].message, "name part must be no more than 63 characters");
        let e = validate_labels([("k", "-v")]);
        assert!(e[0].message.starts_with("a valid label must be an empty string"));
        assert_eq!(e[0].value.as_deref(), Some("-v"));
        let value = "v".repeat(64);
        let e = validate_labels([("k", value.as_str())]);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].message, "must be no more than 63 characters");
    }

    #[test]
    fn annotations() {
        assert!(validate_annotations([("Example.com/Key", "anything at all")]).is_empty());
        let big = "x".repeat(ANNOTATIONS_BYTES_MAX);
        let e = validate_annotations([("k", big.as_str())]);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].to_string(), "metadata.annotations: Too long: may not be more than 262144 bytes");
    }

    #[test]
    fn display_formats() {
        let e = FieldError::new("spec.x", FieldErrorType::NotSupported, Some("a\"b\n"), "supported values: \"y\"");
        assert_eq!(e.to_string(), "spec.x: Unsupported value: \"a\\\"b\\n\": supported values: \"y\"");
        let e = FieldError::forbidden("spec.y", "may not be changed");
        assert_eq!(e.to_string(), "spec.y: Forbidden: may not be changed");
        let e = FieldError::new("metadata.name", FieldErrorType::Duplicate, Some("a"), "");
        assert_eq!(e.to_string(), "metadata.name: Duplicate value: \"a\"");
        assert_eq!(go_quote("é\u{1}"), "\"é\\x01\"");
    }

    #[test]
    fn invalid_status_message() {
        let errs = validate_object_name(NameRule::Dns1123Subdomain, "Foo", "");
        assert_eq!(
            invalid_message("Pod", "Foo", &errs),
            format!("Pod \"Foo\" is invalid: metadata.name: Invalid value: \"Foo\": {SUBDOMAIN_MSG}")
        );
        let two = [FieldError::required("a", ""), FieldError::required("b", ""), FieldError::required("a", "")];
        assert_eq!(
            invalid_message("Deployment.apps", "x", &two),
            "Deployment.apps \"x\" is invalid: [a: Required value, b: Required value]"
        );
    }

    #[test]
    fn namespaces_and_crd_names() {
        assert!(validate_object_namespace("default").is_empty());
        assert_eq!(validate_object_namespace("")[0].reason, FieldErrorType::Required);
        assert_eq!(validate_object_namespace("a.b")[0].message, "must not contain dots");
        assert!(validate_crd_name("widgets.example.com", "widgets", "example.com").is_empty());
        assert_eq!(
            validate_crd_name("widget.example.com", "widgets", "example.com")[0].to_string(),
            "metadata.name: Invalid value: \"widget.example.com\": must be spec.names.plural+\".\"+spec.group"
        );
    }

    /// apimachinery's `ValidateOwnerReferences`, as kube v1.36 words it
    /// (unchanged by kube PRs 132513 and 132472).
    #[test]
    fn owner_references() {
        let ok = serde_json::json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": true}]);
        assert!(validate_owner_references(ok.as_array().unwrap()).is_empty());
        let bad = serde_json::json!([
            {"apiVersion": "apps/", "kind": "", "name": "", "uid": ""},
            {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"},
        ]);
        let errs: Vec<String> =
            validate_owner_references(bad.as_array().unwrap()).iter().map(ToString::to_string).collect();
        assert_eq!(errs, vec![
            "metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:\"v1\", Kind:\"Event\", Name:\"e\", UID:\"1\", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner",
        ]);
        let two = serde_json::json!([
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": true},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": true, "blockOwnerDeletion": true},
        ]);
        let errs: Vec<String> =
            validate_owner_references(two.as_array().unwrap()).iter().map(ToString::to_string).collect();
        assert_eq!(errs, vec![
            "metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"ReplicaSet\", Name:\"a\", UID:\"1\", Controller:(*bool)(...), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:\"apps/v1\", Kind:\"ReplicaSet\", Name:\"b\", UID:\"2\", Controller:(*bool)(...), BlockOwnerDeletion:(*bool)(...)}}: Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and ReplicaSet/b",
        ]);
        // Never panics on shapes a decoder would refuse.
        let odd = serde_json::json!([1, null, {"apiVersion": 3}, {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"}]);
        assert!(!validate_owner_references(odd.as_array().unwrap()).is_empty());
    }
}
