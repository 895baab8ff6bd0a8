//! resourceVersion semantics of get and list, pagination and selectors, one
//! test per cell of the tables in "API concepts" (Kubernetes v1.25,
//! `resourceVersion` parameters, "Retrieving large results sets in chunks",
//! "410 Gone", "Unavailable resource versions").
//!
//! Owns: what get and list return for `resourceVersion` unset / "0" / N, with
//! and without `resourceVersionMatch`, `limit` and `continue`; the 422
//! rejections of invalid combinations; the 504 (with `Retry-After`) for a
//! resourceVersion the server has not reached; the 410 Expired for a
//! resourceVersion or continue token that left the history window; page
//! contents, `continue` and `remainingItemCount`; continue tokens in kube's
//! format (their JSON, hand-made ones continuing a list, rv -1, kube's words
//! for malformed ones); label and field selectors on lists.
//!
//! Each test starts its own server on a free loopback port. Tests that need a
//! short resourceVersion wait or a short history window pass
//! `--resource-version-wait` / `--history-window` (see `start_waiting` and
//! `start_short_history`). Every wait is bounded; nothing asserts on timing.
//!
//! The exact wording the server must use lives in the `expect_*` helpers near
//! the top, so a wording decision is a one-line change.

mod common;

use common::{assert_status, configmap, resource_version, Launch, Response, Server};
use serde_json::{json, Value};
use std::time::Duration;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const CM_OTHER: &str = "/api/v1/namespaces/other/configmaps";
const CM_ALL: &str = "/api/v1/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";
const NAMESPACES: &str = "/api/v1/namespaces";

/// The `--resource-version-wait` the 504 tests use.
const SHORT_WAIT: &str = "300ms";
/// The `--history-window` the 410 tests use, and how long they sleep to let
/// history leave it.
const SHORT_HISTORY: &str = "1s";
const PAST_SHORT_HISTORY: Duration = Duration::from_millis(1600);
/// Upper bound on pages fetched by one paginated walk (no test needs more).
const MAX_PAGES: usize = 50;

// ----- the wording the contract fixes -----

/// Message of the 504 for a resourceVersion the server has not reached.
/// (kube-apiserver's NewTimeoutError prefixes "Timeout: "; the contract says exactly this.)
fn expect_too_large_message(requested: u64, current: u64) -> String {
    format!("Timeout: Too large resource version: {requested}, current: {current}")
}

/// Prefix of the 410 message for an Exact list whose revision left the window.
const EXPECT_TOO_OLD_PREFIX: &str = "The resourceVersion for the provided list is too old.";
/// Substring of the 400 for resourceVersion together with continue.
const EXPECT_RV_WITH_CONTINUE: &str = "specifying resource version is not allowed when using continue";
/// The 410 for a continue token whose revision left the history (etcd3's
/// `inconsistentContinue`).
const EXPECT_CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";
/// Substring of the 400 for a field selector the type does not support.
const EXPECT_FIELD_NOT_SUPPORTED: &str = "field label not supported";

// ----- servers -----

fn start_with_args(args: &[&str]) -> Server {
    Server::start_with(Launch { extra_args: args.iter().map(|a| a.to_string()).collect(), ..Launch::default() })
}

/// A server that waits `SHORT_WAIT` for a resourceVersion it has not reached.
fn start_waiting() -> Server {
    start_with_args(&["--resource-version-wait", SHORT_WAIT])
}

/// A server that keeps superseded history for `SHORT_HISTORY` only.
fn start_short_history() -> Server {
    start_with_args(&["--history-window", SHORT_HISTORY])
}

// ----- requests -----

/// `path?k=v&...` with every value percent-encoded.
fn url(path: &str, params: &[(&str, &str)]) -> String {
    if params.is_empty() {
        return path.to_string();
    }
    let query: Vec<String> = params.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
    format!("{path}?{}", query.join("&"))
}

fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn list(s: &Server, path: &str, params: &[(&str, &str)]) -> Value {
    s.get_ok(&url(path, params))
}

#[track_caller]
fn create(s: &Server, collection: &str, body: &Value) -> Value {
    let r = s.post_json(collection, body);
    assert_eq!(r.status, 201, "create in {collection}: {}", r.text());
    r.json()
}

fn create_configmaps(s: &Server, collection: &str, names: &[&str]) {
    for name in names {
        create(s, collection, &configmap(name, &[("v", "1")]));
    }
}

/// Replaces `data.v` of a configmap (read-modify-write with its current resourceVersion).
#[track_caller]
fn update_configmap(s: &Server, collection: &str, name: &str, v: &str) -> Value {
    let mut object = s.get_ok(&format!("{collection}/{name}"));
    object["data"]["v"] = json!(v);
    let r = s.put_json(&format!("{collection}/{name}"), &object);
    assert_eq!(r.status, 200, "update {collection}/{name}: {}", r.text());
    r.json()
}

#[track_caller]
fn delete(s: &Server, path: &str) {
    let r = s.delete(path);
    assert_eq!(r.status, 200, "delete {path}: {}", r.text());
}

#[track_caller]
fn create_namespace(s: &Server, name: &str) {
    create(s, NAMESPACES, &json!({"metadata": {"name": name}}));
}

/// Writes a few objects in kube-system so that every shard applies an entry
/// (the server trims history when it applies entries). None of them shows up
/// in a default-namespace list.
fn write_elsewhere(s: &Server, tag: &str) {
    for i in 0..4 {
        create(s, "/api/v1/namespaces/kube-system/configmaps", &configmap(&format!("tick-{tag}-{i}"), &[]));
    }
}

// ----- reading lists -----

/// `metadata.resourceVersion` of a list, which must be a decimal string.
#[track_caller]
fn list_rv(list: &Value) -> u64 {
    let rv = resource_version(list);
    assert!(rv.bytes().all(|b| b.is_ascii_digit()), "list resourceVersion must be a decimal string: {rv:?}");
    rv.parse().unwrap_or_else(|e| panic!("list resourceVersion {rv:?}: {e}"))
}

#[track_caller]
fn object_rv(object: &Value) -> u64 {
    let rv = resource_version(object);
    rv.parse().unwrap_or_else(|e| panic!("object resourceVersion {rv:?} is not decimal: {e}"))
}

/// C: the current revision, from a plain list of the default-namespace configmaps.
fn current_rv(s: &Server) -> u64 {
    list_rv(&list(s, CM, &[]))
}

#[track_caller]
fn items(list: &Value) -> &Vec<Value> {
    list["items"].as_array().unwrap_or_else(|| panic!("items must be an array: {list}"))
}

fn names(list: &Value) -> Vec<String> {
    items(list).iter().map(|i| i["metadata"]["name"].as_str().unwrap_or("<no name>").to_string()).collect()
}

/// `namespace/name` of each item (for lists across namespaces).
fn keys(list: &Value) -> Vec<String> {
    items(list)
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["metadata"]["namespace"].as_str().unwrap_or(""),
                i["metadata"]["name"].as_str().unwrap_or("<no name>")
            )
        })
        .collect()
}

/// `metadata.continue` when present and non-empty.
fn continue_token(list: &Value) -> Option<String> {
    match &list["metadata"]["continue"] {
        Value::Null => None,
        Value::String(t) if t.is_empty() => None,
        Value::String(t) => Some(t.clone()),
        other => panic!("metadata.continue must be a string: {other} in {list}"),
    }
}

#[track_caller]
fn must_continue(list: &Value) -> String {
    continue_token(list).unwrap_or_else(|| panic!("expected metadata.continue on this page: {list}"))
}

fn remaining_item_count(list: &Value) -> Option<i64> {
    match &list["metadata"]["remainingItemCount"] {
        Value::Null => None,
        v => Some(v.as_i64().unwrap_or_else(|| panic!("remainingItemCount must be an integer: {v}"))),
    }
}

fn data_v(list: &Value, name: &str) -> Option<String> {
    items(list).iter().find(|i| i["metadata"]["name"] == name).and_then(|i| i["data"]["v"].as_str()).map(String::from)
}

/// Follows `continue` from `first` (already fetched) until the last page;
/// returns every page including `first`. Bounded by `MAX_PAGES`.
fn follow(s: &Server, path: &str, params: &[(&str, &str)], first: Value) -> Vec<Value> {
    let mut pages = vec![first];
    while let Some(token) = continue_token(pages.last().unwrap()) {
        assert!(pages.len() < MAX_PAGES, "more than {MAX_PAGES} pages: {:?}", pages.last());
        let mut p: Vec<(&str, &str)> = params.to_vec();
        p.push(("continue", &token));
        pages.push(list(s, path, &p));
    }
    pages
}

/// Every page of `path` with `limit` (and `params`), from the first.
fn paginate(s: &Server, path: &str, limit: usize, params: &[(&str, &str)]) -> Vec<Value> {
    let limit = limit.to_string();
    let mut p: Vec<(&str, &str)> = params.to_vec();
    p.push(("limit", &limit));
    let first = list(s, path, &p);
    follow(s, path, &p, first)
}

fn all_names(pages: &[Value]) -> Vec<String> {
    pages.iter().flat_map(names).collect()
}

// ----- error assertions -----

/// 422 Invalid naming `resourceVersionMatch` as the first cause.
#[track_caller]
fn assert_invalid_match(r: &Response) -> Value {
    let status = assert_status(r, 422, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "resourceVersionMatch", "{status}");
    status
}

/// 504 Timeout for a resourceVersion the server has not reached.
#[track_caller]
fn assert_too_large(s: &Server, r: &Response, requested: u64, current_before: u64) {
    let status = assert_status(r, 504, "Timeout");
    let current = current_rv(s);
    assert_eq!(current, current_before, "nothing was written during the test; the revision must not move");
    assert_eq!(status["message"], expect_too_large_message(requested, current), "{status}");
    assert_eq!(r.header("retry-after"), Some("1"), "Retry-After header; headers {:?}", r.headers);
    assert_eq!(status["details"]["retryAfterSeconds"], 1, "{status}");
    assert_eq!(status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge", "{status}");
}

/// Runs `request` on another thread, runs `write` on this one after a short
/// pause, and returns the request's response. For requests that ask for the
/// revision one past the current one: they must wait for the write.
fn with_write_during(
    s: &Server,
    write: impl FnOnce(&Server),
    request: impl FnOnce(&Server) -> Response + Send,
) -> Response {
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| request(s));
        std::thread::sleep(Duration::from_millis(200));
        write(s);
        waiting.join().expect("request thread panicked")
    })
}

// ======================================================================
// Collections
// ======================================================================

#[test]
fn collections_have_list_kind_api_version_and_decimal_resource_version() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a"]);
    for (path, kind, api_version) in [
        (CM_ALL, "ConfigMapList", "v1"),
        (CM, "ConfigMapList", "v1"),
        (NAMESPACES, "NamespaceList", "v1"),
        ("/apis/apps/v1/deployments", "DeploymentList", "apps/v1"),
        ("/apis/apps/v1/namespaces/default/deployments", "DeploymentList", "apps/v1"),
    ] {
        for params in [&[][..], &[("limit", "1")][..], &[("resourceVersion", "0")][..]] {
            let l = list(&s, path, params);
            assert_eq!(l["kind"], kind, "{path} {params:?}: {l}");
            assert_eq!(l["apiVersion"], api_version, "{path} {params:?}: {l}");
            list_rv(&l);
            items(&l);
        }
    }
}

#[test]
fn items_are_in_namespace_then_name_order_and_scoped_by_namespace() {
    let s = Server::start();
    create_namespace(&s, "other");
    // Created out of order, in two namespaces.
    create_configmaps(&s, CM_OTHER, &["m", "a"]);
    create_configmaps(&s, CM, &["z", "b", "m"]);
    let all = list(&s, CM_ALL, &[]);
    // kube-system holds kube-apiserver's own ConfigMap, in its place in the order.
    assert_eq!(
        keys(&all),
        [
            "default/b",
            "default/m",
            "default/z",
            "kube-system/kube-apiserver-legacy-service-account-token-tracking",
            "other/a",
            "other/m"
        ],
        "{all}"
    );
    assert_eq!(names(&list(&s, CM, &[])), ["b", "m", "z"]);
    assert_eq!(names(&list(&s, CM_OTHER, &[])), ["a", "m"]);
    // Pages follow the same order.
    let pages = paginate(&s, CM_ALL, 2, &[]);
    let paged: Vec<String> = pages.iter().flat_map(keys).collect();
    assert_eq!(paged, keys(&all));
    // Cluster-scoped: namespaces sorted by name, including the new one.
    let ns = names(&list(&s, NAMESPACES, &[]));
    let mut sorted = ns.clone();
    sorted.sort();
    assert_eq!(ns, sorted);
    assert!(ns.contains(&"other".to_string()), "{ns:?}");
    assert_eq!(all_names(&paginate(&s, NAMESPACES, 2, &[])), ns, "namespaces paginate in the same order");
}

// ======================================================================
// get: resourceVersion unset / "0" / N
// ======================================================================

/// Creates `x` (v=1) and updates it (v=2); returns (rv of the create, rv of the update).
fn object_with_two_versions(s: &Server) -> (u64, u64) {
    let created = create(s, CM, &configmap("x", &[("v", "1")]));
    let updated = update_configmap(s, CM, "x", "2");
    (object_rv(&created), object_rv(&updated))
}

#[test]
fn get_rv_unset_is_most_recent() {
    let s = Server::start();
    let (_, rv2) = object_with_two_versions(&s);
    let got = s.get_ok(&format!("{CM}/x"));
    assert_eq!(got["data"]["v"], "2");
    assert_eq!(object_rv(&got), rv2);
}

#[test]
fn get_rv_zero_is_any_and_serves_the_current_object() {
    let s = Server::start();
    let (_, rv2) = object_with_two_versions(&s);
    let got = s.get_ok(&url(&format!("{CM}/x"), &[("resourceVersion", "0")]));
    assert_eq!(got["data"]["v"], "2", "{got}");
    assert_eq!(object_rv(&got), rv2);
}

#[test]
fn get_rv_n_is_not_older_than_and_serves_the_current_object() {
    let s = Server::start();
    let (rv1, rv2) = object_with_two_versions(&s);
    let c = current_rv(&s);
    for n in [rv1, rv2, c] {
        let got = s.get_ok(&url(&format!("{CM}/x"), &[("resourceVersion", &n.to_string())]));
        assert_eq!(got["data"]["v"], "2", "rv={n}: not the object as of {n} but the current one: {got}");
        assert_eq!(object_rv(&got), rv2, "rv={n}");
    }
}

#[test]
fn get_rv_past_current_times_out_with_504_and_retry_after() {
    let s = start_waiting();
    object_with_two_versions(&s);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(&format!("{CM}/x"), &[("resourceVersion", &n.to_string())]));
    assert_too_large(&s, &r, n, c);
}

#[test]
fn get_rv_one_past_current_waits_for_the_write() {
    let s = start_with_args(&["--resource-version-wait", "20s"]);
    object_with_two_versions(&s);
    let n = (current_rv(&s) + 1).to_string();
    let r = with_write_during(
        &s,
        |s| {
            update_configmap(s, CM, "x", "3");
        },
        |s| s.get(&url(&format!("{CM}/x"), &[("resourceVersion", &n)])),
    );
    assert_eq!(r.status, 200, "the get must wait for revision {n} and then answer: {}", r.text());
    let got = r.json();
    assert_eq!(got["data"]["v"], "3", "the object as of revision {n} or later (the update): {got}");
    assert_eq!(object_rv(&got).to_string(), n);
}

#[test]
fn get_rv_not_a_number_is_bad_request() {
    let s = Server::start();
    object_with_two_versions(&s);
    assert_status(&s.get(&url(&format!("{CM}/x"), &[("resourceVersion", "abc")])), 400, "BadRequest");
}

// ======================================================================
// list, resourceVersionMatch unset, limit unset
// ======================================================================

#[test]
fn list_no_limit_rv_unset_is_most_recent() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b"]);
    let created = create(&s, CM, &configmap("c", &[("v", "1")]));
    let l = list(&s, CM, &[]);
    assert_eq!(names(&l), ["a", "b", "c"], "the object created just before must be listed");
    assert!(list_rv(&l) >= object_rv(&created), "{l}");
    let updated = update_configmap(&s, CM, "a", "2");
    let l = list(&s, CM, &[]);
    assert_eq!(data_v(&l, "a").as_deref(), Some("2"), "{l}");
    assert!(list_rv(&l) >= object_rv(&updated));
}

#[test]
fn list_no_limit_rv_zero_is_any() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b"]);
    let c = current_rv(&s);
    let l = list(&s, CM, &[("resourceVersion", "0")]);
    assert_eq!(l["kind"], "ConfigMapList");
    let rv = list_rv(&l);
    assert!(rv <= c, "rv=0 cannot serve a revision that does not exist yet: {rv} > {c}");
    for item in items(&l) {
        assert!(object_rv(item) <= rv, "an item newer than its list: {l}");
    }
    assert!(continue_token(&l).is_none(), "{l}");
}

#[test]
fn list_no_limit_rv_n_is_not_older_than() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a"]);
    let n = object_rv(&create(&s, CM, &configmap("b", &[("v", "1")])));
    update_configmap(&s, CM, "a", "2");
    for rv in [n, n - 1, current_rv(&s)] {
        let l = list(&s, CM, &[("resourceVersion", &rv.to_string())]);
        assert!(list_rv(&l) >= rv, "rv={rv}: the list must not be older than {rv}: {l}");
        if rv >= n {
            assert_eq!(names(&l), ["a", "b"], "rv={rv}: b exists at every revision >= {n}");
        }
    }
}

#[test]
fn list_no_limit_rv_past_current_times_out_with_504() {
    let s = start_waiting();
    create_configmaps(&s, CM, &["a"]);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(CM, &[("resourceVersion", &n.to_string())]));
    assert_too_large(&s, &r, n, c);
}

#[test]
fn list_no_limit_rv_one_past_current_waits_for_the_write() {
    let s = start_with_args(&["--resource-version-wait", "20s"]);
    create_configmaps(&s, CM, &["a"]);
    let n = current_rv(&s) + 1;
    let n_text = n.to_string();
    let r = with_write_during(
        &s,
        |s| create_configmaps(s, CM, &["later"]),
        |s| s.get(&url(CM, &[("resourceVersion", &n_text)])),
    );
    assert_eq!(r.status, 200, "the list must wait for revision {n}: {}", r.text());
    let l = r.json();
    assert!(list_rv(&l) >= n, "{l}");
    assert_eq!(names(&l), ["a", "later"], "{l}");
}

// ======================================================================
// list, resourceVersionMatch unset, limit=n, continue unset
// ======================================================================

#[test]
fn list_limit_rv_unset_is_most_recent_first_page() {
    let s = Server::start();
    create_configmaps(&s, CM, &["c", "a"]);
    let created = create(&s, CM, &configmap("b", &[("v", "1")]));
    let l = list(&s, CM, &[("limit", "2")]);
    assert_eq!(names(&l), ["a", "b"], "first page in name order, including the object created just before");
    assert!(list_rv(&l) >= object_rv(&created));
    must_continue(&l);
}

#[test]
fn list_limit_rv_zero_returns_the_whole_list_without_continue() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b", "c", "d", "e"]);
    let l = list(&s, CM, &[("limit", "2"), ("resourceVersion", "0")]);
    assert_eq!(names(&l), ["a", "b", "c", "d", "e"], "rv=0 with limit is served whole, as from kube-apiserver's cache");
    assert!(continue_token(&l).is_none(), "{l}");
    assert_eq!(remaining_item_count(&l), None, "{l}");
}

/// State at N: a (v=1), b (v=1). After N: a updated, b deleted, c created.
fn history_after_n(s: &Server) -> u64 {
    create_configmaps(s, CM, &["a", "b"]);
    let n = current_rv(s);
    update_configmap(s, CM, "a", "2");
    delete(s, &format!("{CM}/b"));
    create_configmaps(s, CM, &["c"]);
    assert!(current_rv(s) > n);
    n
}

#[track_caller]
fn assert_state_at_n(l: &Value, n: u64) {
    assert_eq!(names(l), ["a", "b"], "the list must show the state at {n}: {l}");
    assert_eq!(data_v(l, "a").as_deref(), Some("1"), "a as of {n}: {l}");
    assert_eq!(list_rv(l), n, "metadata.resourceVersion must be exactly {n}: {l}");
}

#[test]
fn list_limit_rv_n_is_exact() {
    let s = Server::start();
    let n = history_after_n(&s);
    let l = list(&s, CM, &[("resourceVersion", &n.to_string()), ("limit", "1000")]);
    assert_state_at_n(&l, n);
    assert!(continue_token(&l).is_none(), "{l}");
    // A page at a time, still at N.
    let first = list(&s, CM, &[("resourceVersion", &n.to_string()), ("limit", "1")]);
    assert_eq!(names(&first), ["a"]);
    assert_eq!(list_rv(&first), n);
    let pages = follow(&s, CM, &[("limit", "1")], first);
    assert_eq!(all_names(&pages), ["a", "b"]);
    for page in &pages {
        assert_eq!(list_rv(page), n, "{page}");
    }
}

#[test]
fn list_limit_rv_past_current_times_out_with_504() {
    let s = start_waiting();
    create_configmaps(&s, CM, &["a"]);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(CM, &[("resourceVersion", &n.to_string()), ("limit", "10")]));
    assert_too_large(&s, &r, n, c);
}

// ======================================================================
// list, resourceVersionMatch unset, limit=n, continue=token
// ======================================================================

/// Five objects; the first page (limit 2) and its resourceVersion; then
/// writes of every kind after it: a seen object updated, an unseen one
/// updated, one deleted, one created inside the unseen range and one after it.
fn first_page_then_writes(s: &Server) -> (Value, u64) {
    create_configmaps(s, CM, &["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    let first = list(s, CM, &[("limit", "2")]);
    let r = list_rv(&first);
    assert_eq!(names(&first), ["cm-0", "cm-1"], "{first}");
    update_configmap(s, CM, "cm-0", "2");
    update_configmap(s, CM, "cm-3", "2");
    delete(s, &format!("{CM}/cm-2"));
    create_configmaps(s, CM, &["cm-2a", "cm-5"]);
    (first, r)
}

#[test]
fn continue_rv_unset_is_exact_at_the_first_pages_revision() {
    let s = Server::start();
    let (first, r) = first_page_then_writes(&s);
    let pages = follow(&s, CM, &[("limit", "2")], first);
    let per_page: Vec<Vec<String>> = pages.iter().map(names).collect();
    assert_eq!(
        per_page,
        [vec!["cm-0", "cm-1"], vec!["cm-2", "cm-3"], vec!["cm-4"]],
        "writes after the first page must not show"
    );
    for page in &pages {
        assert_eq!(list_rv(page), r, "every page keeps the first page's resourceVersion: {page}");
    }
    assert_eq!(data_v(&pages[1], "cm-3").as_deref(), Some("1"), "cm-3 as of {r}: {}", pages[1]);
    // The union is the state at R: no repeats, nothing missing.
    let union = all_names(&pages);
    let exact = list(&s, CM, &[("resourceVersion", &r.to_string()), ("limit", "1000")]);
    assert_eq!(union, names(&exact));
    // And a fresh list sees the writes.
    assert_eq!(names(&list(&s, CM, &[])), ["cm-0", "cm-1", "cm-2a", "cm-3", "cm-4", "cm-5"]);
}

#[test]
fn continue_with_rv_zero_is_treated_as_the_continue_token() {
    let s = Server::start();
    let (first, r) = first_page_then_writes(&s);
    let token = must_continue(&first);
    let second = list(&s, CM, &[("limit", "2"), ("resourceVersion", "0"), ("continue", &token)]);
    assert_eq!(names(&second), ["cm-2", "cm-3"], "{second}");
    assert_eq!(list_rv(&second), r);
    assert_eq!(data_v(&second, "cm-3").as_deref(), Some("1"));
}

#[test]
fn continue_with_rv_n_is_bad_request() {
    let s = Server::start();
    let (first, r) = first_page_then_writes(&s);
    let token = must_continue(&first);
    for rv in [r, r + 1, 1] {
        let rv = rv.to_string();
        let status = assert_status(
            &s.get(&url(CM, &[("limit", "2"), ("resourceVersion", &rv), ("continue", &token)])),
            400,
            "BadRequest",
        );
        assert!(status["message"].as_str().unwrap().contains(EXPECT_RV_WITH_CONTINUE), "rv={rv}: {status}");
    }
}

// ======================================================================
// resourceVersionMatch=Exact
// ======================================================================

#[test]
fn match_exact_no_limit_rv_unset_is_invalid() {
    let s = Server::start();
    assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "Exact")])));
}

#[test]
fn match_exact_no_limit_rv_zero_is_invalid() {
    let s = Server::start();
    assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", "0")])));
}

#[test]
fn match_exact_no_limit_rv_n_is_exact() {
    let s = Server::start();
    let n = history_after_n(&s);
    let l = list(&s, CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", &n.to_string())]);
    assert_state_at_n(&l, n);
    assert!(continue_token(&l).is_none(), "{l}");
}

#[test]
fn match_exact_limit_rv_unset_is_invalid() {
    let s = Server::start();
    assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "Exact"), ("limit", "2")])));
}

#[test]
fn match_exact_limit_rv_zero_is_invalid() {
    let s = Server::start();
    assert_invalid_match(
        &s.get(&url(CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", "0"), ("limit", "2")])),
    );
}

#[test]
fn match_exact_limit_rv_n_is_exact() {
    let s = Server::start();
    let n = history_after_n(&s);
    let n_text = n.to_string();
    let l = list(&s, CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", &n_text), ("limit", "1000")]);
    assert_state_at_n(&l, n);
    let first = list(&s, CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", &n_text), ("limit", "1")]);
    assert_eq!(names(&first), ["a"]);
    assert_eq!(list_rv(&first), n);
    assert_eq!(remaining_item_count(&first), Some(1), "{first}");
    // Continuing drops resourceVersionMatch (it may not be combined with continue).
    let pages = follow(&s, CM, &[("limit", "1")], first);
    assert_eq!(all_names(&pages), ["a", "b"]);
}

#[test]
fn match_exact_rv_past_current_times_out_with_504() {
    let s = start_waiting();
    create_configmaps(&s, CM, &["a"]);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(CM, &[("resourceVersionMatch", "Exact"), ("resourceVersion", &n.to_string())]));
    assert_too_large(&s, &r, n, c);
}

#[test]
fn match_exact_rv_older_than_history_window_is_gone() {
    let s = start_short_history();
    let n = history_after_n(&s);
    std::thread::sleep(PAST_SHORT_HISTORY);
    write_elsewhere(&s, "trim");
    let n_text = n.to_string();
    for params in [
        &[("resourceVersionMatch", "Exact"), ("resourceVersion", n_text.as_str())][..],
        &[("resourceVersionMatch", "Exact"), ("resourceVersion", n_text.as_str()), ("limit", "10")][..],
        &[("resourceVersion", n_text.as_str()), ("limit", "10")][..],
    ] {
        let status = assert_status(&s.get(&url(CM, params)), 410, "Expired");
        let message = status["message"].as_str().unwrap();
        assert!(message.starts_with(EXPECT_TOO_OLD_PREFIX), "{params:?}: {status}");
    }
    // Not older than N is still served (from the current state).
    let l = list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &n_text)]);
    assert_eq!(names(&l), ["a", "c"]);
}

// ======================================================================
// resourceVersionMatch=NotOlderThan
// ======================================================================

#[test]
fn match_not_older_than_no_limit_rv_unset_is_invalid() {
    let s = Server::start();
    assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "NotOlderThan")])));
}

#[test]
fn match_not_older_than_limit_rv_unset_is_invalid() {
    let s = Server::start();
    assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "NotOlderThan"), ("limit", "2")])));
}

#[test]
fn match_not_older_than_no_limit_rv_zero_is_any() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b"]);
    let c = current_rv(&s);
    let l = list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", "0")]);
    assert_eq!(l["kind"], "ConfigMapList");
    assert!(list_rv(&l) <= c, "{l}");
    for item in items(&l) {
        assert!(object_rv(item) <= list_rv(&l), "an item newer than its list: {l}");
    }
}

#[test]
fn match_not_older_than_limit_rv_zero_is_any() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b", "c"]);
    let c = current_rv(&s);
    let l = list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", "0"), ("limit", "2")]);
    assert_eq!(l["kind"], "ConfigMapList");
    assert!(list_rv(&l) <= c, "{l}");
    assert!(items(&l).len() <= 3, "{l}");
    if let Some(token) = continue_token(&l) {
        // If the server pages it, the pages together are one list.
        let pages = follow(&s, CM, &[("limit", "2")], l.clone());
        assert_eq!(all_names(&pages), ["a", "b", "c"], "continued from {token}");
    }
}

#[test]
fn match_not_older_than_no_limit_rv_n_is_not_older_than() {
    let s = Server::start();
    let n = history_after_n(&s);
    for rv in [n, current_rv(&s)] {
        let l = list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &rv.to_string())]);
        assert!(list_rv(&l) >= rv, "rv={rv}: {l}");
        assert!(list_rv(&l) <= current_rv(&s), "{l}");
    }
    // Served from the newest state (the only state at or after the current revision).
    let c = current_rv(&s).to_string();
    let l = list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &c)]);
    assert_eq!(names(&l), ["a", "c"]);
}

#[test]
fn match_not_older_than_limit_rv_n_is_not_older_than() {
    let s = Server::start();
    let n = history_after_n(&s);
    for rv in [n, current_rv(&s)] {
        let rv_text = rv.to_string();
        let first =
            list(&s, CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &rv_text), ("limit", "1")]);
        let first_rv = list_rv(&first);
        assert!(first_rv >= rv, "rv={rv}: {first}");
        assert_eq!(items(&first).len(), 1, "{first}");
        let pages = follow(&s, CM, &[("limit", "1")], first);
        for page in &pages {
            assert_eq!(list_rv(page), first_rv, "pages keep the first page's revision: {page}");
        }
        let union = all_names(&pages);
        if rv == n {
            // The states at N and after: [a, b], then b deleted, then c created.
            assert!(union == ["a", "b"] || union == ["a"] || union == ["a", "c"], "state at {n} or later: {union:?}");
        } else {
            assert_eq!(union, ["a", "c"]);
        }
    }
}

#[test]
fn match_not_older_than_rv_past_current_times_out_with_504() {
    let s = start_waiting();
    create_configmaps(&s, CM, &["a"]);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(CM, &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &n.to_string())]));
    assert_too_large(&s, &r, n, c);
}

#[test]
fn match_not_older_than_limit_rv_past_current_times_out_with_504() {
    let s = start_waiting();
    create_configmaps(&s, CM, &["a"]);
    let c = current_rv(&s);
    let n = c + 1000;
    let r = s.get(&url(
        CM,
        &[("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", &n.to_string()), ("limit", "5")],
    ));
    assert_too_large(&s, &r, n, c);
}

// ======================================================================
// resourceVersionMatch: unsupported values and continue
// ======================================================================

#[test]
fn match_unsupported_value_is_invalid() {
    let s = Server::start();
    let c = current_rv(&s).to_string();
    let status = assert_invalid_match(&s.get(&url(CM, &[("resourceVersionMatch", "Foo"), ("resourceVersion", &c)])));
    assert_eq!(status["details"]["causes"][0]["reason"], "FieldValueNotSupported", "{status}");
}

#[test]
fn match_with_continue_is_invalid() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b", "c"]);
    let token = must_continue(&list(&s, CM, &[("limit", "1")]));
    for m in ["Exact", "NotOlderThan"] {
        let status = assert_invalid_match(
            &s.get(&url(CM, &[("resourceVersionMatch", m), ("limit", "1"), ("continue", &token)])),
        );
        // kube's ValidateListOptions reports every error at once: without a
        // resourceVersion, and with continue.
        assert_eq!(
            status["message"],
            "ListOptions.meta.k8s.io \"\" is invalid: [\
             resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, \
             resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]",
            "{m}"
        );
        assert_eq!(status["details"]["causes"].as_array().map(Vec::len), Some(2), "{status}");
    }
    // With resourceVersion "0" and Exact: continue, and exact with "0".
    let status = assert_invalid_match(&s.get(&url(
        CM,
        &[("resourceVersion", "0"), ("resourceVersionMatch", "Exact"), ("limit", "1"), ("continue", &token)],
    )));
    assert_eq!(
        status["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: [\
         resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, \
         resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"]"
    );
}

// ======================================================================
// Pagination
// ======================================================================

#[test]
fn pages_of_two_over_five_objects() {
    let s = Server::start();
    create_configmaps(&s, CM, &["e", "c", "a", "d", "b"]);
    let pages = paginate(&s, CM, 2, &[]);
    let per_page: Vec<Vec<String>> = pages.iter().map(names).collect();
    assert_eq!(per_page, [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
    assert!(continue_token(&pages[0]).is_some() && continue_token(&pages[1]).is_some());
    assert!(continue_token(&pages[2]).is_none(), "no continue on the last page: {}", pages[2]);
    let counts: Vec<Option<i64>> = pages.iter().map(remaining_item_count).collect();
    assert_eq!(counts, [Some(3), Some(1), None], "remainingItemCount");
    let rv = list_rv(&pages[0]);
    assert!(pages.iter().all(|p| list_rv(p) == rv));
    // A limit covering the collection exactly: one page, no continue, no count.
    let whole = list(&s, CM, &[("limit", "5")]);
    assert_eq!(names(&whole), ["a", "b", "c", "d", "e"]);
    assert!(continue_token(&whole).is_none(), "{whole}");
    assert_eq!(remaining_item_count(&whole), None, "{whole}");
}

#[test]
fn remaining_item_count_is_absent_with_selectors() {
    let s = Server::start();
    for (name, tier) in [("a", "web"), ("b", "web"), ("c", "db"), ("d", "web"), ("e", "web")] {
        create(&s, CM, &json!({"metadata": {"name": name, "labels": {"tier": tier}}}));
    }
    for selector in [("labelSelector", "tier=web"), ("fieldSelector", "metadata.name!=c")] {
        let pages = paginate(&s, CM, 2, &[selector]);
        assert_eq!(all_names(&pages), ["a", "b", "d", "e"], "{selector:?}");
        for page in &pages {
            assert_eq!(remaining_item_count(page), None, "{selector:?}: {page}");
        }
        assert!(pages.len() >= 2, "{selector:?}: limit 2 over 4 matches pages");
    }
    // Without a selector the same list does count.
    assert_eq!(remaining_item_count(&list(&s, CM, &[("limit", "2")])), Some(3));
}

#[test]
fn expired_continue_token_is_gone_with_a_fresh_inconsistent_token() {
    let s = start_short_history();
    let (first, _) = first_page_then_writes(&s);
    let token = must_continue(&first);
    std::thread::sleep(PAST_SHORT_HISTORY);
    write_elsewhere(&s, "trim");
    let r = s.get(&url(CM, &[("limit", "2"), ("continue", &token)]));
    let status = assert_status(&r, 410, "Expired");
    let fresh = status["metadata"]["continue"]
        .as_str()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| panic!("the 410 must carry a fresh continue token: {status}"))
        .to_string();
    assert_ne!(fresh, token);
    // kube's inconsistent continuation: the same start at rv -1.
    assert_eq!(token_json(&fresh), r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"cm-1\u0000"}"#);
    assert_eq!(status["message"], EXPECT_CONTINUE_EXPIRED);
    // Continuing with it returns the rest from the current state.
    let now = current_rv(&s);
    let next = list(&s, CM, &[("limit", "2"), ("continue", &fresh)]);
    let pages = follow(&s, CM, &[("limit", "2")], next);
    assert_eq!(all_names(&pages), ["cm-2a", "cm-3", "cm-4", "cm-5"], "everything after cm-1, as it is now");
    let rest: Vec<Value> = pages.iter().flat_map(|p| items(p).clone()).collect();
    let cm3 = rest.iter().find(|i| i["metadata"]["name"] == "cm-3").unwrap();
    assert_eq!(cm3["data"]["v"], "2", "the current cm-3, not the one at the first page's revision");
    for page in &pages {
        assert!(list_rv(page) >= now, "served at the current revision ({now}) or later: {page}");
    }
}

#[test]
fn malformed_continue_tokens_are_bad_request_with_kubes_words() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b", "c"]);
    let token = must_continue(&list(&s, CM, &[("limit", "1")]));
    let rv = list_rv(&list(&s, CM, &[]));
    let cases: Vec<(String, String)> = vec![
        ("%%%".into(), "illegal base64 data at input byte 0".into()),
        ("eyJ2=".into(), "illegal base64 data at input byte 4".into()),
        // One character short of the real token: a lone last character.
        (
            format!("{}A", &token[..token.len() - token.len() % 4]),
            format!("illegal base64 data at input byte {}", token.len() - token.len() % 4),
        ),
        (kube_token_json("garbage"), "invalid character 'g' looking for beginning of value".into()),
        (kube_token_json(r#"{"v":"meta.k8s.io/v1","rv":5"#), "unexpected end of JSON input".into()),
        (
            kube_token_json(r#"{"v":"meta.k8s.io/v1","rv":"5","start":"b\u0000"}"#),
            "json: cannot unmarshal string into Go struct field continueToken.rv of type int64".into(),
        ),
        (
            kube_token("meta.k8s.io/v1", 0, "b\0"),
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
        ),
        (kube_token("meta.k8s.io/v1", rv as i64, ""), "encoded start key empty (version meta.k8s.io/v1)".into()),
        (
            kube_token("meta.k8s.io/v2", rv as i64, "b\0"),
            "server does not recognize this encoded version meta.k8s.io/v2".into(),
        ),
        // kube's traversal defence: a start path.Clean would change.
        (kube_token("meta.k8s.io/v1", rv as i64, "../../secrets/default/x"), "../../secrets/default/x".into()),
        (kube_token("meta.k8s.io/v1", rv as i64, "a/../b"), "a/../b".into()),
        (kube_token("meta.k8s.io/v1", rv as i64, "a//b"), "a//b".into()),
    ];
    for (t, words) in &cases {
        let r = s.get(&url(CM, &[("limit", "1"), ("continue", t)]));
        let status = assert_status(&r, 400, "BadRequest");
        assert_eq!(status["message"], format!("invalid continue token: continue key is not valid: {words}"), "{t}");
    }
    // A bad token is refused before a resourceVersion beside it, as kube's storage does.
    let r = s.get(&url(CM, &[("limit", "1"), ("resourceVersion", "5"), ("continue", "%%%")]));
    let status = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        status["message"],
        "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"
    );
    // The real token still works.
    assert_eq!(names(&list(&s, CM, &[("limit", "1"), ("continue", &token)])), ["b"]);
}

/// Base64 (URL alphabet, no padding) of `json`, as kube's tokens are.
fn kube_token_json(json: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

/// A token as kube-apiserver's `EncodeContinue` writes it, by hand: Go's
/// JSON of `{v, rv, start}` (NUL as `\u0000`), then base64.
fn kube_token(version: &str, rv: i64, start: &str) -> String {
    let start = start.replace('\0', "\\u0000");
    kube_token_json(&format!(r#"{{"v":"{version}","rv":{rv},"start":"{start}"}}"#))
}

/// A token's JSON, decoded from its base64.
fn token_json(token: &str) -> String {
    use base64::Engine;
    let raw =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).expect("a token is base64 (URL, no padding)");
    String::from_utf8(raw).expect("a token is JSON text")
}

#[test]
fn tokens_are_kubes_json_with_the_start_relative_to_the_collection() {
    let s = Server::start();
    create_namespace(&s, "other");
    create_configmaps(&s, CM, &["a", "b", "c"]);
    create_configmaps(&s, CM_OTHER, &["d"]);
    // A namespace's list: the start is the name, then NUL.
    let page = list(&s, CM, &[("limit", "2")]);
    let rv = list_rv(&page);
    assert_eq!(token_json(&must_continue(&page)), format!(r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":"b\u0000"}}"#));
    // Every namespace's: namespace/name.
    let page = list(&s, CM_ALL, &[("limit", "1")]);
    let first = &keys(&page)[0];
    let rv = list_rv(&page);
    assert_eq!(
        token_json(&must_continue(&page)),
        format!(r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":"{first}\u0000"}}"#)
    );
    // Cluster-scoped: the name.
    let page = list(&s, NAMESPACES, &[("limit", "1")]);
    let first = names(&page)[0].clone();
    let rv = list_rv(&page);
    assert_eq!(
        token_json(&must_continue(&page)),
        format!(r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":"{first}\u0000"}}"#)
    );
    // A client following the tokens sees every object once.
    assert_eq!(all_names(&paginate(&s, CM_ALL, 1, &[])), names(&list(&s, CM_ALL, &[])));
}

#[test]
fn kubectl_follows_the_tokens() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a", "b", "c", "d", "e"]);
    let pages = s.kubectl_ok(&["get", "configmaps", "-n", "default", "--chunk-size=2", "-o", "name", "-v=6"]);
    let listed: Vec<&str> = pages.stdout.lines().filter(|l| !l.contains("kube-root-ca")).collect();
    assert_eq!(listed, ["configmap/a", "configmap/b", "configmap/c", "configmap/d", "configmap/e"], "{}", pages.stderr);
    assert!(pages.stderr.matches("continue=").count() >= 2, "kubectl asked for the next pages:\n{}", pages.stderr);
    // The table kubectl prints by default is paged the same way.
    let table = s.kubectl_ok(&["get", "configmaps", "-n", "default", "--chunk-size=2", "--no-headers"]);
    let rows: Vec<&str> = table.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(rows.iter().filter(|r| r.len() == 1).count(), 5, "{}", table.stdout);
}

#[test]
fn a_hand_made_kube_token_continues_the_list() {
    let s = Server::start();
    create_namespace(&s, "other");
    create_configmaps(&s, CM, &["a", "b", "c", "d"]);
    create_configmaps(&s, CM_OTHER, &["e"]);
    let rv = list_rv(&list(&s, CM, &[])) as i64;
    update_configmap(&s, CM, "c", "2");
    // After "b", at rv: the state at rv.
    let page = list(&s, CM, &[("limit", "1"), ("continue", &kube_token("meta.k8s.io/v1", rv, "b\0"))]);
    assert_eq!(names(&page), ["c"]);
    assert_eq!(list_rv(&page) as i64, rv);
    assert_eq!(data_v(&page, "c").as_deref(), Some("1"), "as of {rv}: {page}");
    let rest = follow(&s, CM, &[("limit", "1")], page);
    assert_eq!(all_names(&rest), ["c", "d"]);
    // A start without NUL starts at that key (inclusive), as etcd's range does.
    let page = list(&s, CM, &[("limit", "2"), ("continue", &kube_token("meta.k8s.io/v1", rv, "b"))]);
    assert_eq!(names(&page), ["b", "c"]);
    // A leading slash is cleaned away, as kube's path.Clean leaves it.
    let page = list(&s, CM, &[("limit", "2"), ("continue", &kube_token("meta.k8s.io/v1", rv, "/b\0"))]);
    assert_eq!(names(&page), ["c", "d"]);
    // Every namespace's list: namespace/name.
    let page = list(&s, CM_ALL, &[("limit", "10"), ("continue", &kube_token("meta.k8s.io/v1", rv, "default/d\0"))]);
    let after_d = keys(&page);
    assert!(after_d.contains(&"other/e".to_string()) && after_d.iter().all(|k| k.as_str() > "default/d"), "{page}");
    // A continue without limit reads the rest, at the token's revision.
    let rest = list(&s, CM, &[("continue", &kube_token("meta.k8s.io/v1", rv, "a\0"))]);
    assert_eq!(names(&rest), ["b", "c", "d"]);
    assert!(continue_token(&rest).is_none(), "{rest}");
    // rv -1: the latest revision from that key.
    let now = current_rv(&s);
    let latest = list(&s, CM, &[("limit", "1"), ("continue", &kube_token("meta.k8s.io/v1", -1, "b\0"))]);
    assert_eq!(names(&latest), ["c"]);
    assert_eq!(data_v(&latest, "c").as_deref(), Some("2"), "the current c: {latest}");
    assert!(list_rv(&latest) >= now, "{latest}");
    // Its own next token is at the revision it was served at.
    let next = must_continue(&latest);
    assert_eq!(token_json(&next), format!(r#"{{"v":"meta.k8s.io/v1","rv":{},"start":"c\u0000"}}"#, list_rv(&latest)));
}

#[test]
fn a_token_of_another_collection_continues_this_one_and_never_leaves_it() {
    let s = Server::start();
    create_namespace(&s, "other");
    create_configmaps(&s, CM, &["a", "b", "c"]);
    for name in ["b", "p2", "p3"] {
        create(&s, PODS, &pod(name, "n1"));
    }
    // kube's tokens carry a key relative to the collection: a pods token
    // on configmaps continues configmaps after the same relative key.
    let pods_token = must_continue(&list(&s, PODS, &[("limit", "1")]));
    assert_eq!(names(&list(&s, CM, &[("limit", "5"), ("continue", &pods_token)])), ["c"]);
    // A namespace's token on another namespace's list stays in that namespace.
    let page = list(&s, CM_OTHER, &[("limit", "5"), ("continue", &pods_token)]);
    assert!(items(&page).is_empty(), "{page}");
    // A start past the collection's keys is an empty page, never another collection's objects.
    let rv = list_rv(&list(&s, CM, &[])) as i64;
    let page = list(&s, CM, &[("limit", "5"), ("continue", &kube_token("meta.k8s.io/v1", rv, "\u{7f}"))]);
    assert!(items(&page).is_empty(), "{page}");
}

#[test]
fn a_token_from_the_future_waits_then_is_too_large() {
    // kube's watch cache waits for a continue token's revision (a client may
    // take its first page from a server ahead of this one), then gives up
    // with the 504 of any read past the current revision.
    let s = start_waiting();
    create_configmaps(&s, CM, &["a", "b"]);
    let current = current_rv(&s);
    let future = current + 1000;
    let r = s.get(&url(CM, &[("limit", "1"), ("continue", &kube_token("meta.k8s.io/v1", future as i64, "a\0"))]));
    assert_too_large(&s, &r, future, current);
}

#[test]
fn a_token_one_revision_ahead_waits_for_it() {
    let s = start_with_args(&["--resource-version-wait", "20s"]);
    create_configmaps(&s, CM, &["a", "b"]);
    let next = current_rv(&s) + 1;
    let token = kube_token("meta.k8s.io/v1", next as i64, "a\0");
    let r = with_write_during(
        &s,
        |s| create_configmaps(s, CM, &["c"]),
        |s| s.get(&url(CM, &[("limit", "5"), ("continue", &token)])),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let page = r.json();
    assert_eq!(list_rv(&page), next, "{page}");
    assert_eq!(names(&page), ["b", "c"], "the state at {next}: {page}");
}

#[test]
fn paginated_list_with_selectors_returns_only_matches_across_pages() {
    let s = Server::start();
    for i in 0..9 {
        let tier = if i % 3 == 0 { "db" } else { "web" };
        create(&s, CM, &json!({"metadata": {"name": format!("cm-{i}"), "labels": {"tier": tier}}}));
    }
    let pages = paginate(&s, CM, 2, &[("labelSelector", "tier=db")]);
    assert_eq!(all_names(&pages), ["cm-0", "cm-3", "cm-6"]);
    for page in &pages {
        assert!(items(page).len() <= 2, "{page}");
        for item in items(page) {
            assert_eq!(item["metadata"]["labels"]["tier"], "db", "{item}");
        }
    }
    let pages = paginate(&s, CM, 3, &[("labelSelector", "tier=web"), ("fieldSelector", "metadata.name!=cm-4")]);
    assert_eq!(all_names(&pages), ["cm-1", "cm-2", "cm-5", "cm-7", "cm-8"]);
}

// ======================================================================
// Selectors
// ======================================================================

fn labeled_configmaps(s: &Server) {
    for (name, labels) in [
        ("l-b", json!({"a": "b"})),
        ("l-none", json!({})),
        ("l-x", json!({"a": "x"})),
        ("l-y", json!({"a": "y", "other": "1"})),
    ] {
        create(s, CM, &json!({"metadata": {"name": name, "labels": labels}}));
    }
}

#[test]
fn label_selector_forms() {
    let s = Server::start();
    labeled_configmaps(&s);
    for (selector, expected) in [
        ("a=b", &["l-b"][..]),
        ("a==b", &["l-b"][..]),
        ("a!=b", &["l-none", "l-x", "l-y"][..]),
        ("a in (x,y)", &["l-x", "l-y"][..]),
        ("a notin (x)", &["l-b", "l-none", "l-y"][..]),
        ("a", &["l-b", "l-x", "l-y"][..]),
        ("!a", &["l-none"][..]),
        ("a,a!=x", &["l-b", "l-y"][..]),
        ("a=nope", &[][..]),
        // kube's set forms: `()` is the empty value; `>` and `<` compare integers.
        ("a notin ()", &["l-b", "l-none", "l-x", "l-y"][..]),
        ("a in (,b)", &["l-b"][..]),
        ("other>0", &["l-y"][..]),
        ("other<1", &[][..]),
        ("a<5", &[][..]),
    ] {
        let l = list(&s, CM, &[("labelSelector", selector)]);
        assert_eq!(names(&l), expected, "labelSelector {selector:?}");
    }
}

#[test]
fn field_selectors_on_configmaps() {
    let s = Server::start();
    create_namespace(&s, "other");
    labeled_configmaps(&s);
    create_configmaps(&s, CM_OTHER, &["l-x", "o"]);
    assert_eq!(names(&list(&s, CM, &[("fieldSelector", "metadata.name=l-x")])), ["l-x"]);
    assert_eq!(names(&list(&s, CM, &[("fieldSelector", "metadata.name!=l-x")])), ["l-b", "l-none", "l-y"]);
    assert_eq!(keys(&list(&s, CM_ALL, &[("fieldSelector", "metadata.name=l-x")])), ["default/l-x", "other/l-x"]);
    assert_eq!(
        keys(&list(&s, CM_ALL, &[("fieldSelector", "metadata.namespace=default")])),
        ["default/l-b", "default/l-none", "default/l-x", "default/l-y"]
    );
    assert_eq!(
        keys(&list(&s, CM_ALL, &[("fieldSelector", "metadata.namespace=other,metadata.name!=o")])),
        ["other/l-x"]
    );
}

fn pod(name: &str, node: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}})
}

#[test]
fn field_selectors_on_pods() {
    let s = Server::start();
    create(&s, PODS, &pod("p1", "n1"));
    create(&s, PODS, &pod("p2", "n2"));
    create(&s, PODS, &pod("p3", "n1"));
    // p2 moves to Running through the status subresource.
    let mut p2 = s.get_ok(&format!("{PODS}/p2"));
    p2["status"]["phase"] = json!("Running");
    let r = s.put_json(&format!("{PODS}/p2/status"), &p2);
    assert_eq!(r.status, 200, "status update: {}", r.text());
    assert_eq!(names(&list(&s, PODS, &[("fieldSelector", "spec.nodeName=n1")])), ["p1", "p3"]);
    assert_eq!(names(&list(&s, PODS, &[("fieldSelector", "spec.nodeName=n2")])), ["p2"]);
    assert_eq!(names(&list(&s, PODS, &[("fieldSelector", "status.phase=Pending")])), ["p1", "p3"]);
    assert_eq!(names(&list(&s, PODS, &[("fieldSelector", "status.phase=Running")])), ["p2"]);
    assert_eq!(names(&list(&s, PODS, &[("fieldSelector", "spec.nodeName=n1,status.phase=Pending")])), ["p1", "p3"]);
    assert_eq!(names(&list(&s, "/api/v1/pods", &[("fieldSelector", "spec.nodeName=n2")])), ["p2"]);
}

#[test]
fn unsupported_field_selector_is_bad_request() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a"]);
    for (path, selector) in
        [(CM, "spec.nodeName=n1"), (CM, "data.v=1"), (PODS, "spec.containers=x"), (NAMESPACES, "spec.nodeName=n1")]
    {
        let status = assert_status(&s.get(&url(path, &[("fieldSelector", selector)])), 400, "BadRequest");
        let message = status["message"].as_str().unwrap();
        assert!(message.contains(EXPECT_FIELD_NOT_SUPPORTED), "{path} {selector:?}: {status}");
    }
    // kube's fields.ParseSelector words; empty terms are skipped.
    for (selector, message) in [
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
        (r"metadata.name=a\q", r"invalid field selector: invalid escape sequence: \q"),
        ("nonsense", "invalid selector: 'nonsense'; can't understand 'nonsense'"),
    ] {
        let status = assert_status(&s.get(&url(CM, &[("fieldSelector", selector)])), 400, "BadRequest");
        assert_eq!(status["message"], message, "{selector:?}");
    }
    assert_eq!(names(&list(&s, CM, &[("fieldSelector", "metadata.name=a,,")])), ["a"]);
}

#[test]
fn malformed_label_selector_is_bad_request() {
    let s = Server::start();
    create_configmaps(&s, CM, &["a"]);
    for selector in ["a in (x", "a=b=c", "=b", "a in x", "!", "a notin", "a=(b)", "a!b"] {
        let r = s.get(&url(CM, &[("labelSelector", selector)]));
        assert_status(&r, 400, "BadRequest");
    }
    // Also with a limit (the paged path parses the selector too).
    assert_status(&s.get(&url(CM, &[("labelSelector", "a in (x"), ("limit", "1")])), 400, "BadRequest");
    // kube's words, which kubectl prints.
    for (selector, message) in [
        ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a=b,", "found '', expected: identifier after ','"),
        ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"),
    ] {
        let status = assert_status(&s.get(&url(CM, &[("labelSelector", selector)])), 400, "BadRequest");
        assert_eq!(status["message"], message, "{selector:?}");
    }
}
