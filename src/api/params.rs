//! Query parameters, parsed the way kube-apiserver reads them.
//!
//! Real clients send odd but valid query strings (kube-rs sends `?&limit=500`):
//! empty pairs are skipped; unknown parameters are ignored, as kube-apiserver
//! ignores them. Invalid values of known parameters are 400 BadRequest.
//!
//! Invariant: never panics on any input.

use super::status::ApiError;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params {
    pub pretty: bool,
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

fn parse_bool(name: &str, value: &str) -> Result<bool, ApiError> {
    match value {
        "" | "true" | "1" | "True" | "TRUE" | "t" | "T" => Ok(true),
        "false" | "0" | "False" | "FALSE" | "f" | "F" => Ok(false),
        _ => {
            Err(ApiError::BadRequest(format!("invalid value {value:?} for query parameter {name}: expected a boolean")))
        }
    }
}

fn parse_u64(name: &str, value: &str) -> Result<u64, ApiError> {
    value.parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "invalid value {value:?} for query parameter {name}: expected a non-negative integer"
        ))
    })
}

impl Params {
    pub fn parse(query: Option<&str>) -> Result<Params, ApiError> {
        let mut p = Params::default();
        let Some(query) = query else { return Ok(p) };
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if name.is_empty() {
                continue;
            }
            let value = value.into_owned();
            match name.as_ref() {
                "pretty" => p.pretty = parse_bool("pretty", &value)?,
                "watch" => p.watch = parse_bool("watch", &value)?,
                "labelSelector" => p.label_selector = Some(value),
                "fieldSelector" => p.field_selector = Some(value),
                "resourceVersion" => p.resource_version = Some(value),
                "resourceVersionMatch" => p.resource_version_match = Some(value),
                "limit" => {
                    // kube-apiserver reads limit as int64; 0 and negatives mean no limit.
                    let n: i64 = value.parse().map_err(|_| {
                        ApiError::BadRequest(format!("invalid value {value:?} for query parameter limit"))
                    })?;
                    p.limit = if n > 0 { Some(n as u64) } else { None };
                }
                "continue" => p.continue_token = Some(value),
                "timeoutSeconds" => p.timeout_seconds = Some(parse_u64("timeoutSeconds", &value)?),
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
                "gracePeriodSeconds" => {
                    p.grace_period_seconds = Some(value.parse().map_err(|_| {
                        ApiError::BadRequest(format!("invalid value {value:?} for query parameter gracePeriodSeconds"))
                    })?)
                }
                "includeObject" => p.include_object = Some(value),
                // kube's health handlers look for the key only: `verbose=false` is verbose too.
                "verbose" => p.verbose = true,
                "allowWatchBookmarks" => p.allow_watch_bookmarks = parse_bool("allowWatchBookmarks", &value)?,
                "sendInitialEvents" => p.send_initial_events = Some(parse_bool("sendInitialEvents", &value)?),
                "exclude" => p.exclude.push(value),
                "force" => p.force = Some(parse_bool("force", &value)?),
                _ => {}
            }
        }
        Ok(p)
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
    fn bad_values_are_bad_requests() {
        assert_eq!(Params::parse(Some("limit=abc")).unwrap_err().code(), 400);
        assert_eq!(Params::parse(Some("watch=maybe")).unwrap_err().code(), 400);
        assert_eq!(Params::parse(Some("dryRun=Some")).unwrap().dry_run_unsupported.as_deref(), Some("Some"));
        assert_eq!(Params::parse(Some("limit=0")).unwrap().limit, None);
        assert!(Params::parse(Some("exclude=etcd&exclude=log&verbose")).unwrap().verbose);
    }
}
