//! Query parameters, parsed the way kube-apiserver reads them.
//!
//! Real clients send odd but valid query strings (kube-rs sends `?&limit=500`):
//! empty pairs are skipped; unknown parameters are ignored, as kube-apiserver
//! ignores them. Values are read as apimachinery's string conversions read
//! them: the first value of a repeated parameter counts; a boolean is false
//! only for `0` and `false` (any case), anything else (`""` too) is true;
//! an integer is Go's `strconv.ParseInt`, whose error is the 400
//! BadRequest's message (`strconv.ParseInt: parsing "x": invalid syntax`).
//! `pretty` is the response writer's, not an option: Go's `ParseBool`, and
//! a value it cannot read is false, never an error.
//!
//! Invariant: never panics on any input.

use super::status::ApiError;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// `pretty`, when given non-empty: Go's `ParseBool` of it (unreadable is
    /// false). `None` leaves the choice to the User-Agent (`api::pretty`).
    pub pretty: Option<bool>,
    pub watch: bool,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
    pub limit: Option<u64>,
    pub continue_token: Option<String>,
    pub timeout_seconds: Option<u64>,
    pub dry_run_all: bool,
    /// A `dryRun` value other than `All`: writes refuse it with 422 Invalid
    /// (as kube-apiserver validates its options); reads ignore it.
    pub dry_run_unsupported: Option<String>,
    pub field_manager: Option<String>,
    pub field_validation: Option<String>,
    pub propagation_policy: Option<String>,
    pub grace_period_seconds: Option<i64>,
    pub include_object: Option<String>,
    pub verbose: bool,
    pub exclude: Vec<String>,
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`, when given (true or false).
    pub send_initial_events: Option<bool>,
    /// `force` (server-side apply takes conflicting fields).
    pub force: Option<bool>,
}

/// apimachinery's `Convert_Slice_string_To_bool`.
fn parse_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Go's `strconv.ParseBool`; `None` where it returns an error.
pub fn go_parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Go's `strconv.ParseInt(value, 10, 64)`, with its error text.
pub fn go_parse_int64(value: &str) -> Result<i64, ApiError> {
    let error = |what: &str| ApiError::BadRequest(format!("strconv.ParseInt: parsing {}: {what}", go_quote(value)));
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error("invalid syntax"));
    }
    value.parse::<i64>().map_err(|_| error("value out of range"))
}

/// Go's `strconv.Quote` for the texts a query string holds: `"`, `\\` and
/// control characters escaped, other characters as they are.
fn go_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Params {
    pub fn parse(query: Option<&str>) -> Result<Params, ApiError> {
        let mut p = Params::default();
        let Some(query) = query else { return Ok(p) };
        let mut seen: Vec<String> = Vec::new();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if name.is_empty() {
                continue;
            }
            // url.Values' first value is the one apimachinery reads.
            if name != "exclude" {
                if seen.iter().any(|n| *n == name) {
                    continue;
                }
                seen.push(name.to_string());
            }
            let value = value.into_owned();
            match name.as_ref() {
                "pretty" => p.pretty = if value.is_empty() { None } else { Some(go_parse_bool(&value) == Some(true)) },
                "watch" => p.watch = parse_bool(&value),
                "labelSelector" => p.label_selector = Some(value),
                "fieldSelector" => p.field_selector = Some(value),
                "resourceVersion" => p.resource_version = Some(value),
                "resourceVersionMatch" => p.resource_version_match = Some(value),
                "limit" => {
                    // kube-apiserver reads limit as int64; 0 and negatives mean no limit.
                    let n = go_parse_int64(&value)?;
                    p.limit = if n > 0 { Some(n as u64) } else { None };
                }
                "continue" => p.continue_token = Some(value),
                // A negative timeout ends the watch at once, as kube's timer does.
                "timeoutSeconds" => p.timeout_seconds = Some(go_parse_int64(&value)?.max(0) as u64),
                "dryRun" => {
                    if value == "All" {
                        p.dry_run_all = true;
                    } else if !value.is_empty() {
                        p.dry_run_unsupported = Some(value);
                    }
                }
                "fieldManager" => p.field_manager = Some(value),
                "fieldValidation" => p.field_validation = Some(value),
                "propagationPolicy" => p.propagation_policy = Some(value),
                "gracePeriodSeconds" => p.grace_period_seconds = Some(go_parse_int64(&value)?),
                "includeObject" => p.include_object = Some(value),
                // kube's health handlers look for the key only: `verbose=false` is verbose too.
                "verbose" => p.verbose = true,
                "allowWatchBookmarks" => p.allow_watch_bookmarks = parse_bool(&value),
                "sendInitialEvents" => p.send_initial_events = Some(parse_bool(&value)),
                "exclude" => p.exclude.push(value),
                "force" => p.force = Some(parse_bool(&value)),
                _ => {}
            }
        }
        Ok(p)
    }

    /// A boolean option of DeleteOptions read from the query (`orphanDependents`,
    /// `ignoreStoreReadErrorWithClusterBreakingPotential`), as `parse` reads its own.
    pub fn query_bool(value: &str) -> bool {
        parse_bool(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_rs_style_query() {
        let p = Params::parse(Some("&limit=500")).unwrap();
        assert_eq!(p.limit, Some(500));
        let p = Params::parse(Some("&&watch=true&resourceVersion=12&allowWatchBookmarks=true")).unwrap();
        assert!(p.watch);
        assert_eq!(p.resource_version.as_deref(), Some("12"));
    }

    #[test]
    fn selectors_are_url_decoded() {
        let p =
            Params::parse(Some("labelSelector=app%3Dweb%2Ctier%20in%20(a)&fieldSelector=metadata.name%3Dx")).unwrap();
        assert_eq!(p.label_selector.as_deref(), Some("app=web,tier in (a)"));
        assert_eq!(p.field_selector.as_deref(), Some("metadata.name=x"));
    }

    #[test]
    fn values_are_read_as_apimachinery_reads_them() {
        let message = |q: &str| match Params::parse(Some(q)).unwrap_err() {
            ApiError::BadRequest(m) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(message("limit=abc"), r#"strconv.ParseInt: parsing "abc": invalid syntax"#);
        assert_eq!(message("timeoutSeconds="), r#"strconv.ParseInt: parsing "": invalid syntax"#);
        assert_eq!(
            message("gracePeriodSeconds=99999999999999999999"),
            r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
        );
        assert_eq!(message("limit=%221%22"), r#"strconv.ParseInt: parsing "\"1\"": invalid syntax"#);
        assert_eq!(message("limit=%2B-1"), r#"strconv.ParseInt: parsing "+-1": invalid syntax"#);
        // A `+` in a query string is a space, as Go's url.ParseQuery reads it.
        assert_eq!(message("limit=+5"), r#"strconv.ParseInt: parsing " 5": invalid syntax"#);
        assert_eq!(Params::parse(Some("limit=%2B5")).unwrap().limit, Some(5));
        assert_eq!(Params::parse(Some("timeoutSeconds=-3")).unwrap().timeout_seconds, Some(0));
        // Booleans: only 0 and false (any case) are false.
        assert!(Params::parse(Some("watch=maybe")).unwrap().watch);
        assert!(Params::parse(Some("watch=")).unwrap().watch);
        assert!(!Params::parse(Some("watch=FaLsE")).unwrap().watch);
        assert!(!Params::parse(Some("watch=0")).unwrap().watch);
        assert_eq!(Params::parse(Some("sendInitialEvents=no")).unwrap().send_initial_events, Some(true));
        // The first value of a repeated parameter counts.
        assert_eq!(Params::parse(Some("limit=1&limit=2")).unwrap().limit, Some(1));
        assert_eq!(Params::parse(Some("limit=1&limit=x")).unwrap().limit, Some(1));
        // pretty is Go's ParseBool, never an error.
        assert_eq!(Params::parse(Some("pretty=maybe")).unwrap().pretty, Some(false));
        assert_eq!(Params::parse(Some("pretty=T")).unwrap().pretty, Some(true));
        assert_eq!(Params::parse(Some("pretty=")).unwrap().pretty, None);
        assert_eq!(Params::parse(Some("dryRun=Some")).unwrap().dry_run_unsupported.as_deref(), Some("Some"));
        assert_eq!(Params::parse(Some("limit=0")).unwrap().limit, None);
        assert!(Params::parse(Some("exclude=etcd&exclude=log&verbose")).unwrap().verbose);
    }
}
