//! One conformance suite, two backends: the API behaviour Kubernetes clients
//! rely on, written once against a `Backend` and run on the embedded log
//! (`embedded::NAME`) and on the etcd log (`etcd::NAME`: one etcd member of
//! its own plus Shardline with `--log etcd`).
//!
//! Owns: create/get/update/delete status codes and Status bodies (201, 200,
//! 404, 409 AlreadyExists, 409 Conflict, 422), generateName, label and field
//! selectors, pagination at one snapshot while writes happen, lists at a
//! resourceVersion (Exact, NotOlderThan), 410 Expired past the history
//! window, watches from a resourceVersion (ordered, no gaps, no repeats,
//! resumed after a disconnect), bookmarks and streaming lists, finalizers,
//! namespace deletion, PATCH (merge, JSON, strategic), server-side apply,
//! dryRun, kubectl apply/get/delete end to end, and kill -9 then restart
//! (every acknowledged write kept, resourceVersions never going back). On etcd, every write's
//! resourceVersion is also checked against the key's mod_revision in etcd.
//!
//! Behaviour only one log has (durability of the embedded log across kill -9,
//! etcd faults, several instances) stays in its own test file.

mod common;

use common::etcd::{shardline_on, Etcd};
use common::http::Response;
use common::watch::Watch;
use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CM: &str = "/api/v1/namespaces/default/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Backend {
    Embedded,
    Etcd,
}

/// A Shardline on one backend. Fields drop in order: the server stops before
/// its etcd does. (`s` is public to the suite for `kill`/`restart`.)
struct Env {
    s: Server,
    etcd: Option<Etcd>,
}

impl std::ops::Deref for Env {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.s
    }
}

impl Env {
    fn start(backend: Backend, extra: &[&str]) -> Env {
        match backend {
            Backend::Embedded => Env {
                s: Server::start_with(Launch {
                    extra_args: extra.iter().map(|a| a.to_string()).collect(),
                    ..Launch::default()
                }),
                etcd: None,
            },
            Backend::Etcd => {
                let etcd = Etcd::start();
                Env { s: shardline_on(&etcd, extra), etcd: Some(etcd) }
            }
        }
    }

    /// On etcd: the key's mod_revision is the object's resourceVersion (or the
    /// key is absent for `None`). Nothing to check on the embedded log.
    #[track_caller]
    fn assert_stored(&self, key_suffix: &str, expected: Option<u64>) {
        if let Some(etcd) = &self.etcd {
            assert_eq!(etcd.mod_revision(key_suffix), expected, "etcd's mod_revision of {key_suffix}");
        }
    }

    fn patch(&self, path: &str, content_type: &str, body: &str) -> Response {
        self.s.request(
            "PATCH",
            path,
            &[("Content-Type", content_type), ("Accept", "application/json")],
            Some(body.as_bytes()),
        )
    }

    fn create(&self, collection: &str, body: &Value) -> Value {
        let r = self.post_json(collection, body);
        assert_eq!(r.status, 201, "POST {collection}: {}", r.text());
        r.json()
    }

    /// The collection's current resourceVersion (a list at "most recent").
    fn current_rv(&self) -> u64 {
        rv(&self.get_ok(CM))
    }
}

/// Generates `embedded::NAME` and `etcd::NAME` for each test function
/// `NAME(Backend)` of this file.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $( #[test] fn $name() { super::$name(super::Backend::Embedded) } )*
        }
        mod etcd {
            $( #[test] fn $name() { super::$name(super::Backend::Etcd) } )*
        }
    };
}

on_both_backends!(
    crud_status_codes_and_status_bodies,
    generate_name_gets_a_unique_suffix,
    list_with_label_and_field_selectors,
    pages_are_one_snapshot_while_writes_happen,
    list_at_a_resource_version_exact_and_not_older_than,
    revisions_older_than_the_history_are_410_expired,
    watch_is_ordered_gap_free_and_resumable_from_the_last_resource_version,
    bookmarks_and_streaming_lists,
    finalizers_hold_a_deleted_object_until_cleared,
    deleting_a_namespace_deletes_its_contents,
    patch_merge_json_and_strategic,
    server_side_apply_managers_and_conflicts,
    dry_run_writes_nothing,
    kubectl_apply_get_delete,
    kill_9_and_restart_keep_every_acknowledged_write,
);

// ----- helpers -----

#[track_caller]
fn rv(obj: &Value) -> u64 {
    resource_version(obj).parse().unwrap_or_else(|e| panic!("resourceVersion is not a number ({e}): {obj}"))
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("items: {list}"))
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn continue_token(list: &Value) -> Option<String> {
    list["metadata"]["continue"].as_str().filter(|t| !t.is_empty()).map(str::to_string)
}

fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `path?k=v&...` with every value percent-encoded.
fn url(path: &str, params: &[(&str, &str)]) -> String {
    if params.is_empty() {
        return path.to_string();
    }
    let query: Vec<String> = params.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
    format!("{path}?{}", query.join("&"))
}

fn labelled(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"v": "0"}})
}

fn pod(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}})
}

/// Polls `done` every 50 ms for at most `limit`.
#[track_caller]
fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ----- the suite -----

fn crud_status_codes_and_status_bodies(backend: Backend) {
    let s = Env::start(backend, &[]);
    let path = format!("{CM}/settings");

    // 201 with server-set metadata; GET returns exactly what create acknowledged.
    let created = s.create(CM, &configmap("settings", &[("a", "1")]));
    assert!(created["metadata"]["uid"].as_str().is_some_and(|u| !u.is_empty()), "{created}");
    assert!(created["metadata"]["creationTimestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{created}");
    let rv1 = rv(&created);
    s.assert_stored("/configmaps/default/settings", Some(rv1));
    assert_eq!(s.get_ok(&path), created);

    // 200 on update with the current resourceVersion; a later resourceVersion.
    let mut update = created.clone();
    update["data"]["a"] = json!("2");
    let r = s.put_json(&path, &update);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();
    let rv2 = rv(&updated);
    assert!(rv2 > rv1, "{rv2} > {rv1}");
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(updated["metadata"]["creationTimestamp"], created["metadata"]["creationTimestamp"]);
    s.assert_stored("/configmaps/default/settings", Some(rv2));

    // An update that changes nothing writes nothing: same resourceVersion.
    let r = s.put_json(&path, &updated);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), updated, "a no-op update answers the stored object");
    s.assert_stored("/configmaps/default/settings", Some(rv2));
    // GET at resourceVersion=0 (any) and at rv1 (not older than): the current object.
    for at in ["0".to_string(), rv1.to_string()] {
        assert_eq!(s.get_ok(&format!("{path}?resourceVersion={at}")), updated, "resourceVersion={at}");
    }

    // 409 Conflict on a stale resourceVersion; nothing written.
    let mut stale = created.clone();
    stale["data"]["a"] = json!("3");
    let status = assert_status(&s.put_json(&path, &stale), 409, "Conflict");
    assert_eq!(
        status["message"],
        "Operation cannot be fulfilled on configmaps \"settings\": the object has been modified; \
         please apply your changes to the latest version and try again"
    );
    assert_eq!(status["details"]["name"], "settings");
    assert_eq!(s.get_ok(&path), updated);
    s.assert_stored("/configmaps/default/settings", Some(rv2));

    // 409 AlreadyExists on a second create.
    let status = assert_status(&s.post_json(CM, &configmap("settings", &[])), 409, "AlreadyExists");
    assert_eq!(status["message"], "configmaps \"settings\" already exists");
    assert_eq!(status["details"]["name"], "settings");
    assert_eq!(status["details"]["kind"], "configmaps");

    // 422 Invalid with a cause at metadata.name; nothing stored.
    let status = assert_status(&s.post_json(CM, &configmap("Bad_Name", &[])), 422, "Invalid");
    let causes = status["details"]["causes"].as_array().expect("details.causes");
    assert!(causes.iter().any(|c| c["field"] == "metadata.name"), "{status}");
    s.assert_stored("/configmaps/default/Bad_Name", None);

    // 404 for a namespace that does not exist.
    let status =
        assert_status(&s.post_json("/api/v1/namespaces/nope/configmaps", &configmap("c", &[])), 404, "NotFound");
    assert_eq!(status["message"], "namespaces \"nope\" not found");

    // The list shows the current version.
    let list = s.get_ok(CM);
    assert_eq!(list["kind"], "ConfigMapList");
    assert!(rv(&list) >= rv2);
    let item = list["items"].as_array().unwrap().iter().find(|i| i["metadata"]["name"] == "settings").unwrap();
    assert_eq!(rv(item), rv2);

    // DELETE: 200, then 404 NotFound in kube's words, for GET and DELETE.
    let r = s.delete(&path);
    assert_eq!(r.status, 200, "{}", r.text());
    let status = assert_status(&s.get(&path), 404, "NotFound");
    assert_eq!(status["message"], "configmaps \"settings\" not found");
    assert_eq!(status["details"]["name"], "settings");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_status(&s.delete(&path), 404, "NotFound");
    s.assert_stored("/configmaps/default/settings", None);
    // A PUT of a deleted object with its old resourceVersion: 409 or 404 in
    // kube (it creates only without one); here it must not resurrect silently.
    let r = s.put_json(&path, &updated);
    assert!(r.status == 404 || r.status == 409, "{} {}", r.status, r.text());
    assert_status(&s.get(&path), 404, "NotFound");
}

fn generate_name_gets_a_unique_suffix(backend: Backend) {
    let s = Env::start(backend, &[]);
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}});
    let a = s.create(CM, &body);
    let b = s.create(CM, &body);
    let name_a = a["metadata"]["name"].as_str().expect("generated name");
    let name_b = b["metadata"]["name"].as_str().expect("generated name");
    for name in [name_a, name_b] {
        assert!(name.starts_with("gen-") && name.len() == 9, "kube adds 5 random characters: {name}");
    }
    assert_ne!(name_a, name_b);
    assert_eq!(a["metadata"]["generateName"], "gen-");
    assert_eq!(s.get_ok(&format!("{CM}/{name_a}"))["metadata"]["uid"], a["metadata"]["uid"]);
    s.assert_stored(&format!("/configmaps/default/{name_b}"), Some(rv(&b)));
}

fn list_with_label_and_field_selectors(backend: Backend) {
    let s = Env::start(backend, &[]);
    s.create(CM, &labelled("front", json!({"app": "web", "tier": "front"})));
    s.create(CM, &labelled("back", json!({"app": "web", "tier": "back"})));
    s.create(CM, &labelled("db", json!({"app": "db"})));
    s.create("/api/v1/namespaces", &json!({"metadata": {"name": "other"}}));
    s.create("/api/v1/namespaces/other/configmaps", &labelled("elsewhere", json!({"app": "web"})));

    for (selector, expected) in [
        ("app=web", vec!["back", "front"]),
        ("app==web,tier=back", vec!["back"]),
        ("app!=web", vec!["db"]),
        ("tier in (front,middle)", vec!["front"]),
        ("tier notin (front)", vec!["back", "db"]),
        ("tier", vec!["back", "front"]),
        ("!tier", vec!["db"]),
    ] {
        let list = s.get_ok(&url(CM, &[("labelSelector", selector)]));
        assert_eq!(names(&list), expected, "labelSelector={selector}");
    }
    for (selector, expected) in [
        ("metadata.name=db", vec!["db"]),
        ("metadata.name!=db", vec!["back", "front"]),
        ("metadata.namespace=default", vec!["back", "db", "front"]),
    ] {
        let list = s.get_ok(&url(CM, &[("fieldSelector", selector)]));
        assert_eq!(names(&list), expected, "fieldSelector={selector}");
    }
    // Across namespaces, both selectors together.
    let list = s.get_ok(&url(
        "/api/v1/configmaps",
        &[("labelSelector", "app=web"), ("fieldSelector", "metadata.namespace=other")],
    ));
    assert_eq!(names(&list), ["elsewhere"]);
    // Pods by node, as kubelets list them.
    for (name, node) in [("p1", "n1"), ("p2", "n2"), ("p3", "n1")] {
        s.create(PODS, &pod(name, node));
    }
    assert_eq!(names(&s.get_ok(&url(PODS, &[("fieldSelector", "spec.nodeName=n1")]))), ["p1", "p3"]);
    assert_eq!(names(&s.get_ok(&url("/api/v1/pods", &[("fieldSelector", "spec.nodeName=n2")]))), ["p2"]);
    // Unsupported field and malformed label selectors: 400.
    assert_status(&s.get(&url(CM, &[("fieldSelector", "data.v=0")])), 400, "BadRequest");
    assert_status(&s.get(&url(CM, &[("labelSelector", "app in (web")])), 400, "BadRequest");
}

fn pages_are_one_snapshot_while_writes_happen(backend: Backend) {
    let s = Env::start(backend, &[]);
    let original: Vec<String> = (0..20).map(|i| format!("p-{i:02}")).collect();
    for name in &original {
        s.create(CM, &configmap(name, &[("v", "0")]));
    }
    let first = s.get_ok(&url(CM, &[("limit", "3")]));
    let snapshot = rv(&first);
    assert_eq!(first["metadata"]["remainingItemCount"], 17, "{}", first["metadata"]);
    let mut pages = vec![first];
    let mut round = 0;
    while let Some(token) = continue_token(pages.last().unwrap()) {
        // Between pages: an object not yet listed is updated, one is deleted,
        // one is created inside the unlisted range, and a listed one changes.
        round += 1;
        let later = format!("p-{:02}", (3 * round + 2).min(19));
        let r = s.put_json(&format!("{CM}/{later}"), &configmap(&later, &[("v", "changed")]));
        assert!(r.status == 200 || r.status == 404, "{}", r.text());
        let doomed = format!("p-{:02}", (3 * round + 4).min(19));
        let r = s.delete(&format!("{CM}/{doomed}"));
        assert!(r.status == 200 || r.status == 404, "{}", r.text());
        s.create(CM, &configmap(&format!("p-{:02}a", 3 * round + 1), &[("v", "new")]));
        let r = s.put_json(&format!("{CM}/p-00"), &configmap("p-00", &[("v", &round.to_string())]));
        assert_eq!(r.status, 200, "{}", r.text());
        let page = s.get_ok(&url(CM, &[("limit", "3"), ("continue", &token)]));
        pages.push(page);
        assert!(round < 20, "the continue sequence does not end");
    }
    for page in &pages {
        assert_eq!(rv(page), snapshot, "every page is served at the first page's resourceVersion");
    }
    let seen: Vec<String> = pages.iter().flat_map(names).collect();
    assert_eq!(seen, original, "every object of the snapshot exactly once, in order; nothing written later");
    for page in &pages {
        for item in page["items"].as_array().unwrap() {
            assert_eq!(item["data"]["v"], "0", "the object as of the snapshot: {item}");
        }
    }
    // The union is exactly the list at that revision; a fresh list sees the writes.
    let exact = s.get_ok(&url(CM, &[("resourceVersion", &snapshot.to_string()), ("resourceVersionMatch", "Exact")]));
    assert_eq!(names(&exact), original);
    assert_ne!(names(&s.get_ok(CM)), original);
}

fn list_at_a_resource_version_exact_and_not_older_than(backend: Backend) {
    let s = Env::start(backend, &[]);
    let a1 = rv(&s.create(CM, &configmap("a", &[("v", "1")])));
    let b1 = rv(&s.create(CM, &configmap("b", &[("v", "1")])));
    let r = s.put_json(&format!("{CM}/a"), &configmap("a", &[("v", "2")]));
    assert_eq!(r.status, 200, "{}", r.text());
    let a2 = rv(&r.json());
    assert_eq!(s.delete(&format!("{CM}/b")).status, 200);
    let c1 = rv(&s.create(CM, &configmap("c", &[("v", "1")])));

    let at = |revision: u64, extra: &[(&str, &str)]| {
        let text = revision.to_string();
        let mut params = vec![("resourceVersion", text.as_str()), ("resourceVersionMatch", "Exact")];
        params.extend_from_slice(extra);
        s.get_ok(&url(CM, &params))
    };
    let state = |list: &Value| -> Vec<(String, String)> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["metadata"]["name"].as_str().unwrap().into(), i["data"]["v"].as_str().unwrap().into()))
            .collect()
    };
    let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
    for (revision, expected) in [
        (a1, vec![pair("a", "1")]),
        (b1, vec![pair("a", "1"), pair("b", "1")]),
        (a2, vec![pair("a", "2"), pair("b", "1")]),
        (c1, vec![pair("a", "2"), pair("c", "1")]),
    ] {
        for extra in [&[][..], &[("limit", "1")][..]] {
            let list = at(revision, extra);
            assert_eq!(rv(&list), revision, "Exact serves that revision: {list}");
            let mut items = state(&list);
            // With limit=1, follow the pages (at the same revision).
            let mut token = continue_token(&list);
            while let Some(t) = token {
                let page = s.get_ok(&url(CM, &[("limit", "1"), ("continue", &t)]));
                assert_eq!(rv(&page), revision);
                items.extend(state(&page));
                token = continue_token(&page);
            }
            assert_eq!(items, expected, "state at {revision} {extra:?}");
        }
    }
    // NotOlderThan an old revision: the current state, at a revision not older.
    let list = s.get_ok(&url(CM, &[("resourceVersion", &a1.to_string()), ("resourceVersionMatch", "NotOlderThan")]));
    assert_eq!(state(&list), [pair("a", "2"), pair("c", "1")]);
    assert!(rv(&list) >= c1);
    // resourceVersion=0: any revision, served; Exact needs a resourceVersion.
    assert_eq!(s.get(&url(CM, &[("resourceVersion", "0")])).status, 200);
    assert_status(&s.get(&url(CM, &[("resourceVersionMatch", "Exact")])), 422, "Invalid");
    assert_status(&s.get(&url(CM, &[("resourceVersion", "x")])), 400, "BadRequest");
}

fn revisions_older_than_the_history_are_410_expired(backend: Backend) {
    // A short history window: both logs keep history in memory for this long,
    // so the same 410s hold whatever etcd itself still holds.
    let s = Env::start(backend, &["--history-window", "1s"]);
    let x1 = rv(&s.create(CM, &configmap("x", &[("v", "1")])));
    s.create(CM, &configmap("y", &[]));
    let first = s.get_ok(&url(CM, &[("limit", "1")]));
    let token = continue_token(&first).expect("a continue token");
    let r = s.put_json(&format!("{CM}/x"), &configmap("x", &[("v", "2")]));
    assert_eq!(r.status, 200, "{}", r.text());
    std::thread::sleep(Duration::from_millis(1600));
    // History is trimmed as entries arrive.
    s.create(CM, &configmap("z", &[]));

    let old = x1.to_string();
    for params in [
        &[("resourceVersion", old.as_str()), ("resourceVersionMatch", "Exact")][..],
        &[("resourceVersion", old.as_str()), ("limit", "10")][..],
    ] {
        let status = assert_status(&s.get(&url(CM, params)), 410, "Expired");
        assert_eq!(status["message"], "The resourceVersion for the provided list is too old.", "{params:?}: {status}");
    }
    let status = assert_status(&s.get(&url(CM, &[("limit", "1"), ("continue", &token)])), 410, "Expired");
    assert!(continue_token(&status).is_some(), "the 410 carries a fresh continue token: {status}");
    // NotOlderThan is still served, from the current state.
    let list = s.get_ok(&url(CM, &[("resourceVersion", &old), ("resourceVersionMatch", "NotOlderThan")]));
    assert_eq!(names(&list), ["x", "y", "z"]);
    // A watch from before the history: one ERROR event (410 Expired), then the end.
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={}", x1 - 1));
    let error = w.try_next().expect("an ERROR event");
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["kind"], "Status");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert!(w.try_next().is_none(), "the stream ends after the error");
}

/// (type, name, resourceVersion) of a watch event.
fn event_of(event: &Value) -> (String, String, u64) {
    (
        event["type"].as_str().unwrap().to_string(),
        event["object"]["metadata"]["name"].as_str().unwrap_or_default().to_string(),
        rv(&event["object"]),
    )
}

fn watch_is_ordered_gap_free_and_resumable_from_the_last_resource_version(backend: Backend) {
    let s = Env::start(backend, &[]);
    let start = rv(&s.create(CM, &configmap("base", &[("v", "0")])));
    let mut w = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={start}"));

    // Creates, updates and deletes, acknowledged one after the other; the
    // deletions' revisions are learnt from the event and checked for order.
    let mut expected: Vec<(String, String, Option<u64>)> = Vec::new();
    let mut write = |i: usize| {
        let name = format!("w{i:02}");
        expected.push(("ADDED".into(), name.clone(), Some(rv(&s.create(CM, &configmap(&name, &[("i", "0")]))))));
        if i % 3 == 0 {
            let r = s.put_json(&format!("{CM}/base"), &configmap("base", &[("v", &(i + 1).to_string())]));
            assert_eq!(r.status, 200, "{}", r.text());
            expected.push(("MODIFIED".into(), "base".into(), Some(rv(&r.json()))));
        }
        if i % 4 == 1 {
            assert_eq!(s.delete(&format!("{CM}/{name}")).status, 200);
            expected.push(("DELETED".into(), name, None));
        }
    };
    for i in 0..12 {
        write(i);
    }
    // Read some, disconnect, write more, resume from the last resourceVersion seen.
    let mut seen: Vec<(String, String, u64)> = (0..7).map(|_| event_of(&w.next())).collect();
    drop(w);
    for i in 12..24 {
        write(i);
    }
    let last = seen.last().unwrap().2;
    let mut w = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={last}"));
    while seen.len() < expected.len() {
        seen.push(event_of(&w.next()));
    }
    assert!(seen.windows(2).all(|p| p[0].2 < p[1].2), "revisions strictly increase: {seen:?}");
    assert!(seen[0].2 > start, "nothing at or before the watch's resourceVersion");
    let shape: Vec<(&str, &str)> = seen.iter().map(|(t, n, _)| (t.as_str(), n.as_str())).collect();
    let wanted: Vec<(&str, &str)> = expected.iter().map(|(t, n, _)| (t.as_str(), n.as_str())).collect();
    assert_eq!(shape, wanted, "every write once, in order, across the reconnect");
    for ((_, _, got), (_, name, want)) in seen.iter().zip(&expected) {
        if let Some(want) = want {
            assert_eq!(got, want, "{name}: the event carries the acknowledged resourceVersion");
        }
    }
    // Nothing more: a fresh write is the very next event.
    let extra = rv(&s.create(CM, &configmap("extra", &[])));
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "extra".into(), extra));
    // A watch of one object from the start sees only that object's changes.
    let mut one =
        Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={start}&fieldSelector=metadata.name%3Dbase"));
    let base: Vec<_> = expected.iter().filter(|(_, n, _)| n == "base").collect();
    for (kind, _, revision) in base {
        assert_eq!(event_of(&one.next()), (kind.clone(), "base".into(), revision.unwrap()));
    }
}

fn bookmarks_and_streaming_lists(backend: Backend) {
    let s = Env::start(backend, &["--watch-bookmark-interval", "1s"]);
    let s2 = rv(&{
        s.create(CM, &configmap("s1", &[]));
        s.create(CM, &configmap("s2", &[]))
    });
    // Streaming list: the state as ADDED, then the initial-events-end bookmark.
    let mut w = Watch::open(
        &s,
        &format!(
            "{CM}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true\
             &resourceVersionMatch=NotOlderThan&resourceVersion="
        ),
    );
    let initial: Vec<(String, String)> = (0..2)
        .map(|_| {
            let (t, n, _) = event_of(&w.next());
            (t, n)
        })
        .collect();
    assert_eq!(initial, [("ADDED".to_string(), "s1".to_string()), ("ADDED".to_string(), "s2".to_string())]);
    let end = w.next();
    assert_eq!(end["type"], "BOOKMARK", "{end}");
    assert_eq!(end["object"]["kind"], "ConfigMap");
    assert_eq!(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true", "{end}");
    let end_rv = rv(&end["object"]);
    assert!(end_rv >= s2, "the initial state covers every acknowledged write: {end_rv} < {s2}");
    // Then live changes, and periodic bookmarks past them that never go back.
    let s3 = rv(&s.create(CM, &configmap("s3", &[])));
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "s3".into(), s3));
    assert!(s3 > end_rv);
    let elsewhere = rv(&s.create("/api/v1/namespaces", &json!({"metadata": {"name": "elsewhere"}})));
    let bookmark = w.next();
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    let at = rv(&bookmark["object"]);
    assert!(at >= elsewhere && at > s3, "the bookmark covers progress past the last event: {at}");
    assert!(bookmark["object"]["metadata"].get("annotations").is_none(), "{bookmark}");

    // Without allowWatchBookmarks no bookmark is sent: the next event is a change.
    let mut plain = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={at}"));
    std::thread::sleep(Duration::from_millis(1500));
    let s4 = rv(&s.create(CM, &configmap("s4", &[])));
    assert_eq!(event_of(&plain.next()), ("ADDED".into(), "s4".into(), s4));
}

fn held_configmap(name: &str, finalizers: &[&str]) -> Value {
    let mut cm = configmap(name, &[("k", "v")]);
    cm["metadata"]["finalizers"] = json!(finalizers);
    cm
}

fn finalizers_hold_a_deleted_object_until_cleared(backend: Backend) {
    let s = Env::start(backend, &[]);
    let path = format!("{CM}/held");
    let created = rv(&s.create(CM, &held_configmap("held", &["example.com/one", "example.com/two"])));
    let mut w =
        Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={created}&fieldSelector=metadata.name%3Dheld"));

    // DELETE marks it: 200 with the object, which stays with a deletionTimestamp.
    let r = s.delete(&path);
    assert_eq!(r.status, 200, "{}", r.text());
    let marked = r.json();
    assert!(marked["metadata"]["deletionTimestamp"].is_string(), "{marked}");
    let got = s.get_ok(&path);
    assert_eq!(got["metadata"]["deletionTimestamp"], marked["metadata"]["deletionTimestamp"]);
    let event = w.next();
    assert_eq!(event["type"], "MODIFIED", "{event}");
    assert!(event["object"]["metadata"]["deletionTimestamp"].is_string(), "{event}");
    s.assert_stored("/configmaps/default/held", Some(rv(&got)));

    // One finalizer removed (JSON patch): still there.
    let r = s.patch(&path, "application/json-patch+json", r#"[{"op":"remove","path":"/metadata/finalizers/1"}]"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.get_ok(&path)["metadata"]["finalizers"], json!(["example.com/one"]));
    let event = w.next();
    assert_eq!(event["type"], "MODIFIED", "{event}");
    // No new finalizers while deleting: 422.
    let r = s.patch(&path, "application/merge-patch+json", r#"{"metadata":{"finalizers":["example.com/one","new"]}}"#);
    assert_status(&r, 422, "Invalid");

    // The last one cleared: the object is gone, and watchers see DELETED.
    let r = s.patch(&path, "application/merge-patch+json", r#"{"metadata":{"finalizers":null}}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_status(&s.get(&path), 404, "NotFound");
    let event = w.next();
    assert_eq!(event["type"], "DELETED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "held");
    s.assert_stored("/configmaps/default/held", None);
}

fn deleting_a_namespace_deletes_its_contents(backend: Backend) {
    let s = Env::start(backend, &[]);
    s.create("/api/v1/namespaces", &json!({"metadata": {"name": "demo"}}));
    let cms = "/api/v1/namespaces/demo/configmaps";
    s.create(cms, &configmap("plain", &[]));
    s.create(cms, &held_configmap("held", &["example.com/wait"]));
    s.create("/api/v1/namespaces/demo/secrets", &json!({"metadata": {"name": "s"}, "data": {"k": "dg=="}}));

    let r = s.delete("/api/v1/namespaces/demo");
    assert_eq!(r.status, 200, "{}", r.text());
    // The held object keeps the namespace Terminating; new content is refused.
    wait_until(Duration::from_secs(30), "plain configmap and secret removed", || {
        s.get(&format!("{cms}/plain")).status == 404 && s.get("/api/v1/namespaces/demo/secrets/s").status == 404
    });
    let ns = s.get_ok("/api/v1/namespaces/demo");
    assert_eq!(ns["status"]["phase"], "Terminating", "{ns}");
    assert!(ns["metadata"]["deletionTimestamp"].is_string(), "{ns}");
    let refused = assert_status(&s.post_json(cms, &configmap("new", &[])), 403, "Forbidden");
    assert!(refused["message"].as_str().unwrap().contains("because it is being terminated"), "{refused}");
    wait_until(Duration::from_secs(30), "held configmap marked deleted", || {
        s.get_ok(&format!("{cms}/held"))["metadata"]["deletionTimestamp"].is_string()
    });

    // Its finalizer cleared, the object goes, then the namespace.
    let r = s.patch(&format!("{cms}/held"), "application/merge-patch+json", r#"{"metadata":{"finalizers":null}}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    wait_until(Duration::from_secs(30), "namespace removed", || s.get("/api/v1/namespaces/demo").status == 404);
    assert!(names(&s.get_ok(cms)).is_empty());
    s.assert_stored("/namespaces/demo", None);
    // The protected namespaces stay.
    assert_status(&s.delete("/api/v1/namespaces/default"), 403, "Forbidden");
}

fn deployment(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}
        }
    })
}

fn containers(d: &Value) -> Vec<(String, String)> {
    d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().into(), c["image"].as_str().unwrap().into()))
        .collect()
}

fn patch_merge_json_and_strategic(backend: Backend) {
    let s = Env::start(backend, &[]);
    let path = format!("{CM}/c");
    let created = rv(&s.create(CM, &configmap("c", &[("a", "1")])));

    // Merge patch adds; JSON patch replaces and removes.
    let r = s.patch(&path, "application/merge-patch+json", r#"{"data":{"b":"2"}}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let merged = r.json();
    assert_eq!(merged["data"], json!({"a": "1", "b": "2"}));
    assert!(rv(&merged) > created);
    s.assert_stored("/configmaps/default/c", Some(rv(&merged)));
    let r = s.patch(
        &path,
        "application/json-patch+json",
        r#"[{"op":"replace","path":"/data/a","value":"x"},{"op":"remove","path":"/data/b"}]"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"], json!({"a": "x"}));
    // A patch carrying a stale resourceVersion: 409 Conflict.
    let stale = format!(r#"{{"metadata":{{"resourceVersion":"{created}"}},"data":{{"a":"y"}}}}"#);
    assert_status(&s.patch(&path, "application/merge-patch+json", &stale), 409, "Conflict");
    assert_eq!(s.get_ok(&path)["data"]["a"], "x");
    // A JSON patch that does not apply: 422; a malformed one: 400; missing object: 404.
    let r = s.patch(&path, "application/json-patch+json", r#"[{"op":"test","path":"/data/a","value":"no"}]"#);
    assert_status(&r, 422, "Invalid");
    assert_status(&s.patch(&path, "application/json-patch+json", "[{"), 400, "BadRequest");
    assert_status(&s.patch(&format!("{CM}/missing"), "application/merge-patch+json", "{}"), 404, "NotFound");

    // Strategic merge patch merges containers by name; a merge patch replaces the list.
    s.create(DEPLOYMENTS, &deployment(json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}])));
    let web = format!("{DEPLOYMENTS}/web");
    let r = s.patch(
        &web,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"z"},{"name":"c","image":"w"}]}}}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let pair = |n: &str, i: &str| (n.to_string(), i.to_string());
    assert_eq!(containers(&r.json()), [pair("a", "x"), pair("b", "z"), pair("c", "w")]);
    let r = s.patch(
        &web,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(containers(&r.json()), [pair("b", "z"), pair("c", "w")]);
    let r = s.patch(
        &web,
        "application/merge-patch+json",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"v"}]}}}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(containers(&s.get_ok(&web)), [pair("only", "v")]);
}

fn server_side_apply_managers_and_conflicts(backend: Backend) {
    let s = Env::start(backend, &[]);
    let path = format!("{CM}/web");
    let apply = |body: &str, query: &str| {
        s.request(
            "PATCH",
            &format!("{path}?{query}"),
            &[("Content-Type", "application/apply-patch+yaml"), ("Accept", "application/json")],
            Some(body.as_bytes()),
        )
    };
    let yaml = |v: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: \"{v}\"\n");

    // fieldManager is required for apply.
    let st = assert_status(&apply(&yaml("1"), ""), 422, "Invalid");
    assert!(st["message"].as_str().unwrap().contains("fieldManager: Required value"), "{st}");
    // Apply creates (201) with an Apply entry for its manager.
    let r = apply(&yaml("1"), "fieldManager=alice");
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!((entry["manager"].as_str(), entry["operation"].as_str()), (Some("alice"), Some("Apply")), "{entry}");
    assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:a": {}}}));
    s.assert_stored("/configmaps/default/web", Some(rv(&created)));
    // The same configuration again by its owner: 200.
    assert_eq!(apply(&yaml("1"), "fieldManager=alice").status, 200);

    // Another manager changing alice's field: 409 Conflict with the field named.
    let st = assert_status(&apply(&yaml("2"), "fieldManager=bob"), 409, "Conflict");
    assert_eq!(st["message"], "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
    assert_eq!(st["details"]["causes"][0]["reason"], "FieldManagerConflict");
    assert_eq!(s.get_ok(&path)["data"]["a"], "1", "a conflict writes nothing");
    // Forced: bob takes the field.
    let r = apply(&yaml("2"), "fieldManager=bob&force=true");
    assert_eq!(r.status, 200, "{}", r.text());
    let forced = r.json();
    assert_eq!(forced["data"]["a"], "2");
    let managers: Vec<&str> = forced["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["bob"], "alice lost her only field: {forced}");
    s.assert_stored("/configmaps/default/web", Some(rv(&forced)));
}

fn dry_run_writes_nothing(backend: Backend) {
    let s = Env::start(backend, &[]);
    s.create(CM, &configmap("keep", &[("a", "1")]));
    let before = s.current_rv();
    let mut w = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={before}"));
    let stored_before = s.etcd.as_ref().map(|e| e.mod_revision("/configmaps/default/keep"));

    let r = s.post_json(&format!("{CM}?dryRun=All"), &configmap("ghost", &[("a", "1")]));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["name"], "ghost");
    let mut changed = s.get_ok(&format!("{CM}/keep"));
    changed["data"]["a"] = json!("2");
    let r = s.put_json(&format!("{CM}/keep?dryRun=All"), &changed);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["data"]["a"], "2", "the response is what would be stored");
    let r = s.patch(&format!("{CM}/keep?dryRun=All"), "application/merge-patch+json", r#"{"data":{"a":"3"}}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let r = s.request("DELETE", &format!("{CM}/keep?dryRun=All"), &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.text());
    // An unsupported dryRun value: 422, as kube-apiserver answers.
    assert_status(&s.post_json(&format!("{CM}?dryRun=Some"), &configmap("bad", &[])), 422, "Invalid");

    assert_eq!(s.current_rv(), before, "dry-run writes append nothing to the log");
    assert_eq!(s.get_ok(&format!("{CM}/keep"))["data"]["a"], "1");
    assert_status(&s.get(&format!("{CM}/ghost")), 404, "NotFound");
    s.assert_stored("/configmaps/default/ghost", None);
    if let (Some(etcd), Some(b)) = (&s.etcd, stored_before) {
        assert_eq!(etcd.mod_revision("/configmaps/default/keep"), b, "etcd's key is untouched");
    }
    // The first event a watcher sees is the next real write.
    let real = rv(&s.create(CM, &configmap("real", &[])));
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "real".into(), real));
}

fn kubectl_apply_get_delete(backend: Backend) {
    let s = Env::start(backend, &[]);
    let file = s.dir.path().join("app.yaml");
    let manifest = |v: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels:\n    tier: web\ndata:\n  v: \"{v}\"\n---\n\
             apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 2\n  selector:\n    \
             matchLabels:\n      app: app\n  template:\n    metadata:\n      labels:\n        app: app\n    spec:\n      \
             containers:\n      - name: c\n        image: nginx:{v}\n"
        )
    };
    let file_arg = file.to_str().unwrap();
    std::fs::write(&file, manifest("1")).unwrap();
    let out = s.kubectl_ok(&["apply", "-f", file_arg]);
    assert!(out.stdout.contains("configmap/app created"), "{}", out.stdout);
    assert!(out.stdout.contains("deployment.apps/app created"), "{}", out.stdout);
    let cm = s.kubectl_ok(&["get", "configmap", "app", "-o", "json"]).json();
    assert_eq!(cm["data"]["v"], "1");
    s.assert_stored("/configmaps/default/app", Some(rv(&cm)));

    std::fs::write(&file, manifest("2")).unwrap();
    let out = s.kubectl_ok(&["apply", "-f", file_arg]);
    assert!(out.stdout.contains("configmap/app configured"), "{}", out.stdout);
    assert!(out.stdout.contains("deployment.apps/app configured"), "{}", out.stdout);
    let out = s.kubectl_ok(&["apply", "-f", file_arg]);
    assert!(out.stdout.contains("configmap/app unchanged"), "{}", out.stdout);
    let d = s.kubectl_ok(&["get", "deployment", "app", "-o", "json"]).json();
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:2");
    let table = s.kubectl_ok(&["get", "configmaps", "-l", "tier=web"]);
    let first_column: Vec<&str> = table.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(first_column, ["NAME", "app"], "{}", table.stdout);
    // A stale replace is refused with Conflict.
    let mut stale = cm.clone();
    stale["data"]["v"] = json!("stale");
    let stale_file = s.dir.path().join("stale.json");
    std::fs::write(&stale_file, serde_json::to_vec(&stale).unwrap()).unwrap();
    let out = s.kubectl(&["replace", "-f", stale_file.to_str().unwrap()]);
    assert!(!out.status.success() && out.stderr.contains("the object has been modified"), "{}", out.stderr);

    let out = s.kubectl_ok(&["delete", "-f", file_arg]);
    assert!(out.stdout.contains("configmap \"app\" deleted"), "{}", out.stdout);
    let out = s.kubectl(&["get", "configmap", "app"]);
    assert!(!out.status.success(), "{}", out.stdout);
    assert!(out.stderr.contains("NotFound") && out.stderr.contains("\"app\" not found"), "{}", out.stderr);
    s.assert_stored("/configmaps/default/app", None);
}

fn kill_9_and_restart_keep_every_acknowledged_write(backend: Backend) {
    let mut s = Env::start(backend, &[]);
    let mut acknowledged = Vec::new();
    for i in 0..10 {
        acknowledged.push(s.create(CM, &configmap(&format!("k-{i}"), &[("i", &i.to_string())])));
    }
    let r = s.put_json(&format!("{CM}/k-3"), &configmap("k-3", &[("i", "changed")]));
    assert_eq!(r.status, 200, "{}", r.text());
    acknowledged[3] = r.json();
    assert_eq!(s.delete(&format!("{CM}/k-7")).status, 200);
    acknowledged.remove(7);
    let before = s.current_rv();

    s.s.kill();
    s.s.restart();
    // Every acknowledged object, byte for byte, with its resourceVersion.
    let list = s.get_ok(CM);
    // A typed list's items carry no kind and apiVersion (kube's JSON): compare without them.
    let without_type_meta = |objects: &[Value]| -> Vec<Value> {
        objects
            .iter()
            .map(|o| {
                let mut o = o.clone();
                if let Some(map) = o.as_object_mut() {
                    map.shift_remove("kind");
                    map.shift_remove("apiVersion");
                }
                o
            })
            .collect()
    };
    assert_eq!(
        list["items"].as_array().unwrap(),
        &without_type_meta(&acknowledged),
        "the state after kill -9 and restart"
    );
    assert!(rv(&list) >= before, "the resourceVersion does not go back: {} < {before}", rv(&list));
    assert_status(&s.get(&format!("{CM}/k-7")), 404, "NotFound");
    // New writes continue the history; a stale update is still a Conflict.
    let next = rv(&s.create(CM, &configmap("after", &[])));
    assert!(next > before, "{next} > {before}");
    let mut stale = acknowledged[2].clone();
    stale["metadata"]["resourceVersion"] = json!(rv(&acknowledged[0]).to_string());
    assert_status(&s.put_json(&format!("{CM}/k-2"), &stale), 409, "Conflict");
    let mut w = Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={next}"));
    let last = rv(&s.create(CM, &configmap("watched", &[])));
    assert_eq!(event_of(&w.next()), ("ADDED".into(), "watched".into(), last));
}
