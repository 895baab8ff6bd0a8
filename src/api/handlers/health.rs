//! /livez, /readyz, /healthz as kube-apiserver's `healthz` package serves
//! them: `ok` when every check passes; `?verbose` (any value: kube looks
//! only for the key) lists each check as `[+]name ok` and ends with `NAME
//! check passed`; a failure is always verbose (`[-]name failed: reason
//! withheld`, then `NAME check failed`, 500); `?exclude=name` (repeatable)
//! skips a check (`[+]name excluded: ok`), and names that match no check are
//! listed once each, sorted and quoted, in a `warn:` line; `/readyz/NAME`
//! (and `/livez/NAME`, `/healthz/NAME`) runs one check: `ok`, or 500
//! `internal server error: REASON` (404 for an unknown name). Every answer
//! is `text/plain; charset=utf-8` with `X-Content-Type-Options: nosniff`.
//!
//! The checks, in kube's order and under kube's names, from the backend's own
//! (`Backend::health_checks`):
//! - `ping`: the server answers (all three);
//! - `log`: the durable log accepts writes (all three);
//! - `etcd`: kube's name for the storage check, the same state as `log`
//!   (the embedded log or etcd behind it; all three);
//! - `etcd-readiness`: the same, on /readyz only, as kube's;
//! - `informer-sync`: on /readyz only, as kube's (which passes once the
//!   server's own shared informers have synced). Here the caches the server
//!   answers from are each shard's state loaded from the log (objects, the
//!   registry with the custom resources' definitions, the RBAC index, the
//!   Node graph, the garbage collector's graph): it passes once every shard
//!   has loaded it, and fails while one is loading again after the log reset
//!   its state (the backend's `informer-sync`). A shard binds its listener
//!   only after loading, but a request can reach a loaded shard while
//!   another still loads, and reads that need that one wait;
//! - `poststarthook/start-system-namespaces-controller`: the default
//!   namespaces exist (the backend's `bootstrap-namespaces`; all three);
//! - `shutdown`: on /readyz only, failing once shutdown has begun, so a
//!   terminating server is not ready while it is still live (as kube's).
//!
//! Other backend checks are listed after these under their own names.

use crate::api::route::HealthKind;
use crate::api::{respond, Backend, HealthCheck, RequestHead, ResponseBody};
use bytes::Bytes;
use http::{Response, StatusCode};

/// The backend's check that kube names `poststarthook/start-system-namespaces-controller`.
const BACKEND_NAMESPACES: &str = "bootstrap-namespaces";
const SYSTEM_NAMESPACES: &str = "poststarthook/start-system-namespaces-controller";
/// kube's readiness check that the caches requests are served from are synced.
const INFORMER_SYNC: &str = "informer-sync";

/// The checks of `kind`, named and ordered as kube-apiserver's.
pub fn checks_of(kind: &HealthKind, backend: Vec<HealthCheck>) -> Vec<HealthCheck> {
    let ready = matches!(kind, HealthKind::Readyz);
    let take = |name: &str| backend.iter().find(|c| c.name == name).cloned();
    let mut checks = vec![HealthCheck { name: "ping", ok: true, detail: String::new() }];
    if let Some(log) = take("log") {
        checks.push(log.clone());
        checks.push(HealthCheck { name: "etcd", ..log.clone() });
        if ready {
            checks.push(HealthCheck { name: "etcd-readiness", ..log });
        }
    }
    if ready {
        checks.extend(take(INFORMER_SYNC));
    }
    if let Some(namespaces) = take(BACKEND_NAMESPACES) {
        checks.push(HealthCheck { name: SYSTEM_NAMESPACES, ..namespaces });
    }
    for other in backend
        .iter()
        .filter(|c| !matches!(c.name, "log" | "shutdown" | "etcd-lag" | INFORMER_SYNC | BACKEND_NAMESPACES))
    {
        checks.push(other.clone());
    }
    // Behind etcd: not ready (send clients elsewhere), but alive.
    if ready {
        checks.extend(take("etcd-lag"));
    }
    if ready {
        checks.extend(take("shutdown"));
    }
    checks
}

/// A plain-text answer with the headers kube's health handlers set.
fn text(code: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = respond(code, "text/plain; charset=utf-8", body);
    response.headers_mut().insert("x-content-type-options", http::HeaderValue::from_static("nosniff"));
    response
}

pub fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    kind: &HealthKind,
    check: Option<&str>,
) -> Response<ResponseBody> {
    let checks = checks_of(kind, backend.health_checks());
    if let Some(name) = check {
        return match checks.iter().find(|c| c.name == name) {
            Some(c) if c.ok => text(StatusCode::OK, Bytes::from_static(b"ok")),
            Some(c) => {
                text(StatusCode::INTERNAL_SERVER_ERROR, Bytes::from(format!("internal server error: {}\n", c.detail)))
            }
            None => text(StatusCode::NOT_FOUND, Bytes::from_static(b"404 page not found\n")),
        };
    }
    let mut out = String::new();
    let mut all_ok = true;
    for c in &checks {
        if head.params.exclude.iter().any(|e| e == c.name) {
            out.push_str(&format!("[+]{} excluded: ok\n", c.name));
            continue;
        }
        if c.ok {
            out.push_str(&format!("[+]{} ok\n", c.name));
        } else {
            all_ok = false;
            out.push_str(&format!("[-]{} failed: reason withheld\n", c.name));
        }
    }
    // kube keeps the names in a set and lists what is left of it, sorted.
    let unknown: std::collections::BTreeSet<&String> =
        head.params.exclude.iter().filter(|e| !checks.iter().any(|c| c.name == e.as_str())).collect();
    if !unknown.is_empty() {
        let names: Vec<String> = unknown.iter().map(|n| format!("{n:?}")).collect();
        out.push_str(&format!("warn: some health checks cannot be excluded: no matches for {}\n", names.join(",")));
    }
    let code = if all_ok { StatusCode::OK } else { StatusCode::INTERNAL_SERVER_ERROR };
    if all_ok {
        out.push_str(&format!("{} check passed\n", kind.name()));
    } else {
        out.push_str(&format!("{} check failed\n", kind.name()));
    }
    if head.params.verbose || !all_ok {
        text(code, Bytes::from(out))
    } else {
        text(code, Bytes::from_static(b"ok"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend(log: bool, namespaces: bool, shutting_down: bool) -> Vec<HealthCheck> {
        vec![
            HealthCheck { name: "log", ok: log, detail: "the log is not accepting writes".into() },
            HealthCheck { name: INFORMER_SYNC, ok: true, detail: String::new() },
            HealthCheck { name: BACKEND_NAMESPACES, ok: namespaces, detail: "not yet".into() },
            HealthCheck { name: "shutdown", ok: !shutting_down, detail: "shutting down".into() },
        ]
    }

    fn names(checks: &[HealthCheck]) -> Vec<&'static str> {
        checks.iter().map(|c| c.name).collect()
    }

    #[test]
    fn checks_are_named_and_ordered_as_kube_apiservers() {
        let all = backend(true, true, false);
        assert_eq!(names(&checks_of(&HealthKind::Livez, all.clone())), ["ping", "log", "etcd", SYSTEM_NAMESPACES]);
        assert_eq!(names(&checks_of(&HealthKind::Healthz, all.clone())), ["ping", "log", "etcd", SYSTEM_NAMESPACES]);
        assert_eq!(
            names(&checks_of(&HealthKind::Readyz, all)),
            ["ping", "log", "etcd", "etcd-readiness", INFORMER_SYNC, SYSTEM_NAMESPACES, "shutdown"]
        );
    }

    #[test]
    fn storage_failure_fails_every_storage_check_and_shutdown_only_readyz() {
        let failed: Vec<&str> = checks_of(&HealthKind::Readyz, backend(false, true, false))
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name)
            .collect();
        assert_eq!(failed, ["log", "etcd", "etcd-readiness"]);
        assert!(checks_of(&HealthKind::Livez, backend(true, true, true)).iter().all(|c| c.ok));
        let ready = checks_of(&HealthKind::Readyz, backend(true, true, true));
        assert_eq!(ready.iter().filter(|c| !c.ok).map(|c| c.name).collect::<Vec<_>>(), ["shutdown"]);
    }

    #[test]
    fn a_shard_still_loading_fails_informer_sync_on_readyz_only() {
        let mut checks = backend(true, true, false);
        checks[1].ok = false;
        let failed =
            |kind| checks_of(&kind, checks.clone()).iter().filter(|c| !c.ok).map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(failed(HealthKind::Readyz), [INFORMER_SYNC]);
        assert!(failed(HealthKind::Livez).is_empty() && failed(HealthKind::Healthz).is_empty());
        // A backend without the check (the in-process test backend) lists none.
        let without: Vec<HealthCheck> = checks.into_iter().filter(|c| c.name != INFORMER_SYNC).collect();
        assert!(!names(&checks_of(&HealthKind::Readyz, without)).contains(&INFORMER_SYNC));
    }
}
