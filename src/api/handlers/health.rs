//! /livez, /readyz, /healthz: `ok` when every check passes; `?verbose` lists
//! each check as `[+]name ok` / `[-]name failed`; `?exclude=name` skips one;
//! `/livez/NAME` runs one check (404 for an unknown name).

use crate::api::route::HealthKind;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use bytes::Bytes;
use http::{Response, StatusCode};

pub fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    kind: &HealthKind,
    check: Option<&str>,
) -> Response<ResponseBody> {
    let mut checks = vec![crate::api::HealthCheck { name: "ping", ok: true, detail: String::new() }];
    checks.extend(backend.health_checks());
    if let Some(name) = check {
        return match checks.iter().find(|c| c.name == name) {
            Some(c) if c.ok => respond(StatusCode::OK, "text/plain; charset=utf-8", Bytes::from_static(b"ok")),
            Some(c) => respond(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain; charset=utf-8",
                Bytes::from(format!("internal server error: {}\n", c.detail)),
            ),
            None => {
                respond(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", Bytes::from_static(b"404 page not found\n"))
            }
        };
    }
    let mut text = String::new();
    let mut all_ok = true;
    for c in &checks {
        if head.params.exclude.iter().any(|e| e == c.name) {
            text.push_str(&format!("[+]{} excluded: ok\n", c.name));
            continue;
        }
        if c.ok {
            text.push_str(&format!("[+]{} ok\n", c.name));
        } else {
            all_ok = false;
            text.push_str(&format!("[-]{} failed: reason withheld\n", c.name));
        }
    }
    let unknown: Vec<&String> =
        head.params.exclude.iter().filter(|e| !checks.iter().any(|c| c.name == e.as_str())).collect();
    if !unknown.is_empty() {
        let names: Vec<String> = unknown.iter().map(|n| format!("{n:?}")).collect();
        text.push_str(&format!("warn: some health checks cannot be excluded: no matches for {}\n", names.join(",")));
    }
    let code = if all_ok { StatusCode::OK } else { StatusCode::INTERNAL_SERVER_ERROR };
    if all_ok {
        text.push_str(&format!("{} check passed\n", kind.name()));
    } else {
        text.push_str(&format!("{} check failed\n", kind.name()));
    }
    if head.params.verbose || !all_ok {
        respond(code, "text/plain; charset=utf-8", Bytes::from(text))
    } else {
        respond(code, "text/plain; charset=utf-8", Bytes::from_static(b"ok"))
    }
}
