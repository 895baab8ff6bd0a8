//! Lists as the specification defines them: which snapshot a list reads
//! (the resourceVersion / resourceVersionMatch / limit / continue table),
//! continue tokens, and merging the shards' sorted runs into pages.
//!
//! Invariants: no I/O; every page of a continue sequence is read at the
//! token's revision; a page is the first `limit` matching keys after the
//! token's key across all shards (each shard's first `limit` after that key
//! contain them all); an invalid combination of options is refused before
//! anything is read.

pub mod continue_token;

use crate::cache::CachedObject;
use crate::log::Revision;
use continue_token::{ContinueToken, TokenError};
use std::sync::Arc;

/// Which data a list (or get) must return, per the specification's tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Consistency {
    /// resourceVersion unset: a consistent read at the log's commit point.
    MostRecent,
    /// resourceVersion="0": any data; the newest is preferred.
    Any,
    /// At least as new as this revision.
    NotOlderThan(Revision),
    /// Exactly this revision (410 Gone once it has left the history window).
    Exact(Revision),
    /// The next page of a sequence started earlier.
    Continue(ContinueToken),
}

/// The list options, as given in the query string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions<'a> {
    pub resource_version: Option<&'a str>,
    pub resource_version_match: Option<&'a str>,
    pub limit: Option<u64>,
    pub continue_token: Option<&'a str>,
}

/// What a list request resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub consistency: Consistency,
    /// Items per page; `None` serves the whole collection.
    pub limit: Option<usize>,
}

/// One field error of the ListOptions (`Forbidden`, `NotSupported`), as
/// kube's `field.Error`: the field, the cause's reason, its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub reason: &'static str,
    pub detail: String,
}

/// Why the options were refused. `Invalid` becomes one 422 with every field
/// error (kube's `ValidateListOptions` reports them all, in its order),
/// `BadRequest` 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    Invalid(Vec<FieldError>),
    BadRequest(String),
}

/// A resourceVersion's revision; the 400's message otherwise.
pub fn parse_resource_version(text: &str) -> Result<Revision, String> {
    text.parse::<u64>().map(Revision).map_err(|_| format!("invalid resource version \"{text}\""))
}

/// Resolves the options per the table "resourceVersionMatch and paging
/// parameters for list".
pub fn plan(options: &ListOptions<'_>) -> Result<Plan, PlanError> {
    let rv = options.resource_version.filter(|v| !v.is_empty());
    let rv_match = options.resource_version_match.filter(|v| !v.is_empty());
    let continue_token = options.continue_token.filter(|v| !v.is_empty());
    let limit = options.limit.filter(|n| *n > 0).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    if let Some(m) = rv_match {
        // kube's ValidateListOptions: every error, in this order.
        let forbidden = |detail: &str| FieldError {
            field: "resourceVersionMatch",
            reason: "FieldValueForbidden",
            detail: format!("Forbidden: {detail}"),
        };
        let mut errors = Vec::new();
        if rv.is_none() {
            errors.push(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"));
        }
        if continue_token.is_some() {
            errors.push(forbidden("resourceVersionMatch is forbidden when continue is provided"));
        }
        if m != "Exact" && m != "NotOlderThan" {
            // kube lists "" among the supported values.
            errors.push(FieldError {
                field: "resourceVersionMatch",
                reason: "FieldValueNotSupported",
                detail: format!("Unsupported value: \"{m}\": supported values: \"Exact\", \"NotOlderThan\", \"\""),
            });
        }
        if m == "Exact" && rv == Some("0") {
            errors.push(forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
        }
        if !errors.is_empty() {
            return Err(PlanError::Invalid(errors));
        }
    }
    if let Some(token) = continue_token {
        // kube's storage decodes the token first, then refuses a
        // resourceVersion beside it (etcd3 `GetList`).
        let token = ContinueToken::decode(token)
            .map_err(|e: TokenError| PlanError::BadRequest(format!("invalid continue token: {e}")))?;
        if rv.is_some_and(|v| v != "0") {
            return Err(PlanError::BadRequest("specifying resource version is not allowed when using continue".into()));
        }
        return Ok(Plan { consistency: Consistency::Continue(token), limit });
    }
    let consistency = match rv {
        None => Consistency::MostRecent,
        // kube-apiserver serves resourceVersion=0 from its cache, whole.
        Some("0") => return Ok(Plan { consistency: Consistency::Any, limit: None }),
        Some(text) => {
            let revision = parse_resource_version(text).map_err(PlanError::BadRequest)?;
            match (rv_match, limit) {
                (Some("Exact"), _) | (None, Some(_)) => Consistency::Exact(revision),
                _ => Consistency::NotOlderThan(revision),
            }
        }
    };
    Ok(Plan { consistency, limit })
}

/// Merges runs that are each sorted by key into one sorted run of at most
/// `take` items. Shard counts are small (one per core): a linear scan of the
/// heads beats a heap here.
pub fn merge(runs: Vec<Vec<Arc<CachedObject>>>, take: usize) -> Vec<Arc<CachedObject>> {
    let total: usize = runs.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total.min(take));
    let mut positions = vec![0usize; runs.len()];
    while out.len() < take {
        let mut smallest: Option<(usize, &Arc<CachedObject>)> = None;
        for (i, run) in runs.iter().enumerate() {
            let Some(head) = run.get(positions[i]) else { continue };
            if smallest.is_none_or(|(_, best)| head.key < best.key) {
                smallest = Some((i, head));
            }
        }
        let Some((i, head)) = smallest else { break };
        out.push(head.clone());
        positions[i] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts<'a>(rv: Option<&'a str>, m: Option<&'a str>, limit: Option<u64>, c: Option<&'a str>) -> ListOptions<'a> {
        ListOptions { resource_version: rv, resource_version_match: m, limit, continue_token: c }
    }

    fn consistency(o: ListOptions<'_>) -> Consistency {
        plan(&o).unwrap().consistency
    }

    fn invalid(o: ListOptions<'_>) -> String {
        match plan(&o) {
            Err(PlanError::Invalid(errors)) => {
                errors.iter().map(|e| format!("{}: {}", e.field, e.detail)).collect::<Vec<_>>().join(", ")
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    /// Every cell of the specification's list table.
    #[test]
    fn the_list_table() {
        let token = ContinueToken { resource_version: 9, start: "b\0".into() };
        let t = token.encode();
        let t = Some(t.as_str());
        // resourceVersionMatch unset, limit unset.
        assert_eq!(consistency(opts(None, None, None, None)), Consistency::MostRecent);
        assert_eq!(consistency(opts(Some("0"), None, None, None)), Consistency::Any);
        assert_eq!(consistency(opts(Some("7"), None, None, None)), Consistency::NotOlderThan(Revision(7)));
        // unset, limit set, no continue.
        assert_eq!(
            plan(&opts(None, None, Some(5), None)).unwrap(),
            Plan { consistency: Consistency::MostRecent, limit: Some(5) }
        );
        assert_eq!(
            plan(&opts(Some("0"), None, Some(5), None)).unwrap(),
            Plan { consistency: Consistency::Any, limit: None }
        );
        assert_eq!(consistency(opts(Some("7"), None, Some(5), None)), Consistency::Exact(Revision(7)));
        // unset, limit and continue.
        assert_eq!(consistency(opts(None, None, Some(5), t)), Consistency::Continue(token.clone()));
        assert_eq!(consistency(opts(Some("0"), None, Some(5), t)), Consistency::Continue(token.clone()));
        assert_eq!(
            plan(&opts(Some("7"), None, Some(5), t)),
            Err(PlanError::BadRequest("specifying resource version is not allowed when using continue".into()))
        );
        // Exact.
        assert!(invalid(opts(None, Some("Exact"), None, None)).contains("unless resourceVersion is provided"));
        assert!(invalid(opts(Some("0"), Some("Exact"), None, None)).contains("forbidden for resourceVersion \"0\""));
        assert!(invalid(opts(Some("0"), Some("Exact"), Some(5), None)).contains("forbidden for resourceVersion \"0\""));
        assert_eq!(consistency(opts(Some("7"), Some("Exact"), None, None)), Consistency::Exact(Revision(7)));
        assert_eq!(consistency(opts(Some("7"), Some("Exact"), Some(5), None)), Consistency::Exact(Revision(7)));
        // NotOlderThan.
        assert!(invalid(opts(None, Some("NotOlderThan"), None, None)).contains("unless resourceVersion is provided"));
        assert_eq!(consistency(opts(Some("0"), Some("NotOlderThan"), None, None)), Consistency::Any);
        assert_eq!(
            consistency(opts(Some("7"), Some("NotOlderThan"), None, None)),
            Consistency::NotOlderThan(Revision(7))
        );
        assert_eq!(
            consistency(opts(Some("7"), Some("NotOlderThan"), Some(5), None)),
            Consistency::NotOlderThan(Revision(7))
        );
        // Other invalid combinations.
        assert!(invalid(opts(Some("7"), Some("Foo"), None, None)).contains("Unsupported value: \"Foo\""));
        assert!(invalid(opts(Some("7"), Some("Exact"), Some(5), t)).contains("when continue is provided"));
        // Every error at once, in kube's order.
        assert_eq!(
            invalid(opts(None, Some("Foo"), Some(5), t)),
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, \
             resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, \
             resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        );
        assert_eq!(
            invalid(opts(Some("0"), Some("Exact"), None, t)),
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, \
             resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
        );
        assert!(matches!(plan(&opts(Some("x"), None, None, None)), Err(PlanError::BadRequest(_))));
        assert_eq!(
            plan(&opts(None, None, Some(5), Some("%%%"))),
            Err(PlanError::BadRequest(
                "invalid continue token: continue key is not valid: illegal base64 data at input byte 0".into()
            ))
        );
        // A bad token is reported before a resourceVersion beside it, as kube's storage does.
        assert_eq!(
            plan(&opts(Some("7"), None, Some(5), Some("e30"))),
            Err(PlanError::BadRequest(
                "invalid continue token: continue key is not valid: server does not recognize this encoded version "
                    .into()
            ))
        );
        // Empty values are unset.
        assert_eq!(consistency(opts(Some(""), Some(""), None, Some(""))), Consistency::MostRecent);
    }
}
