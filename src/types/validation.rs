//! Name validation (temporary minimal version; replaced by the types work).

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub value: String,
    pub message: String,
}

impl FieldError {
    pub fn reason_code(&self) -> &'static str {
        "FieldValueInvalid"
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: Invalid value: {:?}: {}", self.field, self.value, self.message)
    }
}

pub fn validate_object_name(_resource: &str, name: &str) -> Vec<FieldError> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        vec![]
    } else {
        vec![FieldError { field: "metadata.name".into(), value: name.into(), message: "a lowercase RFC 1123 subdomain".into() }]
    }
}
