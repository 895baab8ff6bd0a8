//! Who may do what, against the real binary: bearer tokens from a
//! `--token-auth-file`, 401 versus anonymous per `--anonymous-auth`, RBAC
//! from Roles and bindings stored in the server (namespaced Role, cluster
//! binding, `resourceNames`), kube-apiserver's 403 messages, `kubectl auth
//! can-i` and `whoami`, a role change seen by the next request on every core,
//! and in-flight limits answering 429 with Retry-After.

mod common;

use common::{assert_status, configmap, Launch, Server};
use serde_json::{json, Value};
use std::io::Write;

const TOKENS: &str = "admin-token,admin,uid-admin,system:masters\n\
                      alice-token,alice,uid-alice,\"dev,qa\"\n\
                      bob-token,bob,uid-bob,readers\n\
                      carol-token,carol,uid-carol\n";

/// A server with the token file above and `extra` flags (the directory
/// holding the token file lives as long as the server).
fn rbac_server(extra: &[&str]) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir, extra, None);
    (s, dir)
}

fn start(dir: &tempfile::TempDir, extra: &[&str], pki: Option<&common::tls::TestPki>) -> Server {
    start_sharded(dir, extra, pki, None)
}

fn start_sharded(
    dir: &tempfile::TempDir,
    extra: &[&str],
    pki: Option<&common::tls::TestPki>,
    shards: Option<u16>,
) -> Server {
    let tokens = dir.path().join("tokens.csv");
    std::fs::File::create(&tokens).unwrap().write_all(TOKENS.as_bytes()).unwrap();
    let mut args = vec!["--token-auth-file".to_string(), tokens.display().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    if let Some(pki) = pki {
        args.extend(pki.server_args());
    }
    Server::start_with(Launch {
        extra_args: args,
        readyz_token: Some("admin-token".into()),
        tls_client: pki.map(|p| (p.client_config(None), p.ca_file.clone())),
        shards,
        ..Launch::default()
    })
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn get_as(s: &Server, token: &str, path: &str) -> common::http::Response {
    let auth = bearer(token);
    s.request("GET", path, &[("Accept", "application/json"), ("Authorization", &auth)], None)
}

fn send_as(s: &Server, token: &str, method: &str, path: &str, body: &Value) -> common::http::Response {
    let auth = bearer(token);
    let bytes = serde_json::to_vec(body).unwrap();
    s.request(
        method,
        path,
        &[("Content-Type", "application/json"), ("Accept", "application/json"), ("Authorization", &auth)],
        Some(&bytes),
    )
}

fn admin_create(s: &Server, path: &str, body: Value) {
    let r = send_as(s, "admin-token", "POST", path, &body);
    assert_eq!(r.status, 201, "POST {path}: {}", r.text());
}

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

fn setup_namespaces(s: &Server) {
    for ns in ["team", "other"] {
        admin_create(s, "/api/v1/namespaces", json!({"metadata": {"name": ns}}));
        for name in ["only", "second"] {
            admin_create(s, &format!("/api/v1/namespaces/{ns}/configmaps"), configmap(name, &[]));
        }
    }
}

#[test]
fn namespaced_roles_cluster_bindings_and_resource_names() {
    let (s, _dir) = rbac_server(&["--authorization-mode", "RBAC"]);
    setup_namespaces(&s);
    // Before any binding, alice may list nothing: kube-apiserver's 403.
    let r = get_as(&s, "alice-token", "/api/v1/namespaces/team/configmaps");
    let status = assert_status(&r, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    assert_eq!(status["details"]["kind"], "configmaps");

    // A namespaced Role: list and watch in its namespace, 403 elsewhere.
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/roles"),
        json!({"metadata": {"name": "cm-reader"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]}),
    );
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/rolebindings"),
        json!({"metadata": {"name": "alice-reads"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
               "roleRef": {"kind": "Role", "name": "cm-reader", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    let list = get_as(&s, "alice-token", "/api/v1/namespaces/team/configmaps");
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(list.json()["items"].as_array().unwrap().len(), 2);
    let watch = get_as(&s, "alice-token", "/api/v1/namespaces/team/configmaps?watch=1&timeoutSeconds=1");
    assert_eq!(watch.status, 200, "{}", watch.text());
    assert!(watch.text().contains("\"ADDED\""), "{}", watch.text());
    assert_status(&get_as(&s, "alice-token", "/api/v1/namespaces/other/configmaps"), 403, "Forbidden");
    assert_status(
        &get_as(&s, "alice-token", "/api/v1/namespaces/other/configmaps?watch=1&timeoutSeconds=1"),
        403,
        "Forbidden",
    );
    let status = assert_status(&get_as(&s, "alice-token", "/api/v1/configmaps"), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" at the cluster scope"
    );
    // Writing is not granted.
    let r = send_as(&s, "alice-token", "POST", "/api/v1/namespaces/team/configmaps", &configmap("new", &[]));
    assert_status(&r, 403, "Forbidden");

    // A ClusterRoleBinding to a group grants the list in every namespace.
    admin_create(
        &s,
        &format!("{RBAC}/clusterroles"),
        json!({"metadata": {"name": "cm-lister"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
    );
    admin_create(
        &s,
        &format!("{RBAC}/clusterrolebindings"),
        json!({"metadata": {"name": "readers-list"},
               "subjects": [{"kind": "Group", "name": "readers", "apiGroup": "rbac.authorization.k8s.io"}],
               "roleRef": {"kind": "ClusterRole", "name": "cm-lister", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    let all = get_as(&s, "bob-token", "/api/v1/configmaps");
    assert_eq!(all.status, 200, "{}", all.text());
    let all = all.json();
    let namespaces: std::collections::BTreeSet<&str> =
        all["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["namespace"].as_str()).collect();
    assert!(namespaces.contains("team") && namespaces.contains("other"), "{all}");
    assert_status(&get_as(&s, "bob-token", "/api/v1/namespaces/team/configmaps/only"), 403, "Forbidden");

    // resourceNames: one object only, for get and for a single-object watch.
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/roles"),
        json!({"metadata": {"name": "only-one"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["only"], "verbs": ["get", "watch", "list"]}]}),
    );
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/rolebindings"),
        json!({"metadata": {"name": "carol-one"},
               "subjects": [{"kind": "User", "name": "carol"}],
               "roleRef": {"kind": "Role", "name": "only-one", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    assert_eq!(get_as(&s, "carol-token", "/api/v1/namespaces/team/configmaps/only").status, 200);
    let status =
        assert_status(&get_as(&s, "carol-token", "/api/v1/namespaces/team/configmaps/second"), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"second\" is forbidden: User \"carol\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    assert_eq!(status["details"]["name"], "second");
    let one = get_as(
        &s,
        "carol-token",
        "/api/v1/namespaces/team/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Donly",
    );
    assert_eq!(one.status, 200, "{}", one.text());
    assert_status(&get_as(&s, "carol-token", "/api/v1/namespaces/team/configmaps"), 403, "Forbidden");

    // Non-resource URLs: the bootstrap system:discovery role lets every
    // authenticated user read discovery; /metrics is not granted.
    assert_eq!(get_as(&s, "carol-token", "/apis").status, 200);
    let status = assert_status(&get_as(&s, "carol-token", "/metrics"), 403, "Forbidden");
    assert_eq!(status["message"], "forbidden: User \"carol\" cannot get path \"/metrics\"");
    // Anonymous requests may read /healthz (system:public-info-viewer), nothing else.
    assert_eq!(s.get("/healthz").status, 200);
    assert_status(&s.get("/api/v1/namespaces/team/configmaps"), 403, "Forbidden");
}

#[test]
fn kubectl_auth_can_i_and_whoami_match_the_bindings() {
    // kubectl sends bearer tokens only over TLS.
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let s = start(&dir, &["--authorization-mode", "RBAC"], Some(&pki));
    let admin = |args: &[&str]| {
        let out = s.kubectl_as("admin", "admin-token", args);
        assert!(out.status.success(), "{args:?}: {}", out.stderr);
    };
    admin(&["create", "namespace", "team"]);
    admin(&["create", "namespace", "other"]);
    admin(&["create", "configmap", "only", "-n", "team"]);
    admin(&["create", "configmap", "only", "-n", "other"]);
    s.kubectl_as(
        "admin",
        "admin-token",
        &["create", "role", "cm-reader", "-n", "team", "--verb=get,list,watch", "--resource=configmaps"],
    );
    let out = s.kubectl_as(
        "admin",
        "admin-token",
        &["create", "rolebinding", "alice-reads", "-n", "team", "--role=cm-reader", "--user=alice"],
    );
    assert!(out.status.success(), "{}", out.stderr);
    let can_i = |args: &[&str]| {
        let mut all = vec!["auth", "can-i"];
        all.extend_from_slice(args);
        let out = s.kubectl_as("alice", "alice-token", &all);
        (out.status.success(), out.stdout.trim().to_string(), out.stderr)
    };
    assert_eq!(can_i(&["list", "configmaps", "-n", "team"]).1, "yes");
    assert!(can_i(&["list", "configmaps", "-n", "team"]).0);
    let (ok, answer, stderr) = can_i(&["list", "configmaps", "-n", "other"]);
    assert!(!ok, "can-i answers no with exit status 1");
    assert_eq!(answer, "no", "{stderr}");
    assert_eq!(can_i(&["delete", "configmaps", "-n", "team"]).1, "no");
    assert_eq!(can_i(&["get", "/healthz"]).1, "yes");
    // The answers match what the server does.
    let allowed = s.kubectl_as("alice", "alice-token", &["get", "configmaps", "-n", "team"]);
    assert!(allowed.status.success(), "{}", allowed.stderr);
    let denied = s.kubectl_as("alice", "alice-token", &["get", "configmaps", "-n", "other"]);
    assert!(!denied.status.success());
    assert!(
        denied.stderr.contains(
            "User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"other\""
        ),
        "{}",
        denied.stderr
    );
    // can-i --list: the rules that apply in the namespace.
    let list = s.kubectl_as("alice", "alice-token", &["auth", "can-i", "--list", "-n", "team"]);
    assert!(list.status.success(), "{}", list.stderr);
    let line = list.stdout.lines().find(|l| l.starts_with("configmaps ")).unwrap_or_else(|| panic!("{}", list.stdout));
    assert!(line.contains("[get list watch]"), "{line}");
    assert!(list.stdout.contains("selfsubjectaccessreviews.authorization.k8s.io"), "{}", list.stdout);
    let other = s.kubectl_as("alice", "alice-token", &["auth", "can-i", "--list", "-n", "other"]);
    assert!(!other.stdout.lines().any(|l| l.starts_with("configmaps ")), "{}", other.stdout);
    // whoami: user, uid and groups (system:authenticated added).
    let who = s.kubectl_as("alice", "alice-token", &["auth", "whoami", "-o", "json"]);
    assert!(who.status.success(), "{}", who.stderr);
    let who: Value = serde_json::from_str(&who.stdout).unwrap();
    assert_eq!(who["status"]["userInfo"]["username"], "alice");
    assert_eq!(who["status"]["userInfo"]["uid"], "uid-alice");
    assert_eq!(who["status"]["userInfo"]["groups"], json!(["dev", "qa", "system:authenticated"]));
}

/// A role change is seen by the very next request, whichever core serves
/// it: each request opens a fresh connection (the kernel spreads them over
/// the shards' listeners), and each shard waits only for itself to apply
/// the commit point before reading its own index.
#[test]
fn a_role_change_takes_effect_for_the_next_request_on_every_core() {
    let (s, _dir) = rbac_server(&["--authorization-mode", "RBAC"]);
    setup_namespaces(&s);
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/roles"),
        json!({"metadata": {"name": "cm-reader"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
    );
    let binding = json!({"metadata": {"name": "alice-reads"},
        "subjects": [{"kind": "User", "name": "alice"}],
        "roleRef": {"kind": "Role", "name": "cm-reader", "apiGroup": "rbac.authorization.k8s.io"}});
    let path = "/api/v1/namespaces/team/configmaps";
    for round in 0..5 {
        admin_create(&s, &format!("{RBAC}/namespaces/team/rolebindings"), binding.clone());
        for i in 0..8 {
            let r = get_as(&s, "alice-token", path);
            assert_eq!(r.status, 200, "round {round} request {i} after the grant: {}", r.text());
        }
        let r = s.request(
            "DELETE",
            &format!("{RBAC}/namespaces/team/rolebindings/alice-reads"),
            &[("Authorization", "Bearer admin-token")],
            None,
        );
        assert_eq!(r.status, 200, "{}", r.text());
        for _ in 0..8 {
            assert_status(&get_as(&s, "alice-token", path), 403, "Forbidden");
        }
    }
}

#[test]
fn wrong_tokens_are_401_and_no_credentials_follow_anonymous_auth() {
    // AlwaysAllow (the default), anonymous on (the default).
    let (s, _dir) = rbac_server(&[]);
    assert_eq!(s.get("/api/v1/namespaces/default/configmaps").status, 200, "anonymous is allowed");
    assert_eq!(get_as(&s, "alice-token", "/api/v1/namespaces/default/configmaps").status, 200);
    let status =
        assert_status(&get_as(&s, "wrong-token", "/api/v1/namespaces/default/configmaps"), 401, "Unauthorized");
    assert_eq!(status["message"], "Unauthorized");
    // A SelfSubjectReview names the anonymous user.
    let who = s.post_json("/apis/authentication.k8s.io/v1/selfsubjectreviews", &json!({}));
    assert_eq!(who.status, 201, "{}", who.text());
    assert_eq!(who.json()["status"]["userInfo"]["username"], "system:anonymous");
    assert_eq!(who.json()["status"]["userInfo"]["groups"], json!(["system:unauthenticated"]));
    drop(s);

    let (s, _dir) = rbac_server(&["--anonymous-auth=false"]);
    assert_status(&s.get("/api/v1/namespaces/default/configmaps"), 401, "Unauthorized");
    assert_status(&s.get("/healthz"), 401, "Unauthorized");
    assert_eq!(get_as(&s, "bob-token", "/api/v1/namespaces/default/configmaps").status, 200);
    assert_status(&get_as(&s, "wrong-token", "/api/v1/namespaces/default/configmaps"), 401, "Unauthorized");
}

/// Sends a GET on a fresh connection and reads only the status line and
/// headers (a watch's body stays open while the stream is kept).
fn open_stream(s: &Server, path: &str, token: &str) -> (std::net::TcpStream, String) {
    use std::io::{BufRead, BufReader};
    let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 2 {
        line.clear();
    }
    (stream, status)
}

/// Open watches past `--watches-per-user-max` (per user, on a shard) and
/// reads past `--max-requests-inflight` get 429 with Retry-After; a closed
/// watch frees its slot; /metrics counts the refusals.
#[test]
fn past_the_in_flight_and_per_user_watch_limits_requests_get_429_with_retry_after() {
    // One shard (the count across shards: the next test).
    let dir = tempfile::tempdir().unwrap();
    let s = start_sharded(
        &dir,
        &["--watches-per-user-max", "2", "--max-requests-inflight", "1", "--resource-version-wait", "4s"],
        None,
        Some(1),
    );
    let path = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30";
    let mut open = Vec::new();
    for _ in 0..2 {
        let (stream, status) = open_stream(&s, path, "alice-token");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        open.push(stream);
    }
    let r = get_as(&s, "alice-token", path);
    let status = assert_status(&r, 429, "TooManyRequests");
    assert_eq!(r.header("retry-after"), Some("1"), "{:?}", r.headers);
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    assert_eq!(status["message"], "Too many requests, please try again later.");
    // Another user has their own budget; watches do not take read slots.
    let (_bob, status) = open_stream(&s, path, "bob-token");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(get_as(&s, "bob-token", "/api/v1/namespaces/default/configmaps").status, 200);
    // Closing a watch frees its slot (once the server notices the close).
    drop(open.pop());
    // The release reaches the counting shard by message: until it has, a new
    // watch is still refused (and counted as refused).
    let mut refused_while_releasing = 0;
    let reopened = (0..200).find_map(|_| {
        let (stream, status) = open_stream(&s, path, "alice-token");
        if status.starts_with("HTTP/1.1 200") {
            return Some(stream);
        }
        refused_while_releasing += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
        None
    });
    assert!(reopened.is_some(), "the closed watch's slot was never released");

    // A read waiting for a resourceVersion not reached holds the only read
    // slot; another read meanwhile gets 429.
    let far = "/api/v1/namespaces/default/configmaps?resourceVersion=99999999&resourceVersionMatch=NotOlderThan";
    let mut waiting = std::net::TcpStream::connect(s.addr).unwrap();
    write!(waiting, "GET {far} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bob-token\r\n\r\n").unwrap();
    let refused = (0..100).find_map(|_| {
        let r = get_as(&s, "carol-token", "/api/v1/namespaces/default/configmaps");
        if r.status == 429 {
            return Some(r);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        None
    });
    let refused = refused.expect("no 429 while the only read slot was held");
    assert_eq!(refused.header("retry-after"), Some("1"));
    drop(waiting);
    let metrics = get_as(&s, "admin-token", "/metrics").text();
    assert!(metrics.contains("shardline_requests_rejected_total{class=\"watch\"} 1"), "{metrics}");
    assert!(metrics.contains("shardline_requests_in_flight_max{class=\"readonly\"} 1"), "{metrics}");
    assert!(!metrics.contains("shardline_requests_rejected_total{class=\"readonly\"} 0"), "{metrics}");
}

/// `--watches-per-user-max` holds across shards: with two shards, whichever
/// core accepts each connection, a user gets exactly the limit of watches
/// (a per-shard count would admit up to twice as many); closing one lets
/// exactly one more open; /metrics shows the limit.
#[test]
fn the_per_user_watch_limit_holds_across_shards() {
    let dir = tempfile::tempdir().unwrap();
    let s = start_sharded(&dir, &["--watches-per-user-max", "3"], None, Some(2));
    let path = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=60";
    let mut open = Vec::new();
    let mut refused = 0;
    // Each on its own connection, so the kernel spreads them over both shards.
    for _ in 0..12 {
        let (stream, status) = open_stream(&s, path, "alice-token");
        if status.starts_with("HTTP/1.1 200") {
            open.push(stream);
        } else {
            assert!(status.starts_with("HTTP/1.1 429"), "{status}");
            refused += 1;
        }
    }
    assert_eq!((open.len(), refused), (3, 9), "alice's watches across both shards");
    // Bob has his own budget.
    let (_bob, status) = open_stream(&s, path, "bob-token");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // A closed watch frees one place, wherever it was counted.
    drop(open.pop());
    // The release reaches the counting shard by message: until it has, a new
    // watch is still refused (and counted as refused).
    let mut refused_while_releasing = 0;
    let reopened = (0..200).find_map(|_| {
        let (stream, status) = open_stream(&s, path, "alice-token");
        if status.starts_with("HTTP/1.1 200") {
            return Some(stream);
        }
        refused_while_releasing += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
        None
    });
    open.push(reopened.expect("the closed watch's place was never released"));
    for _ in 0..4 {
        let (_, status) = open_stream(&s, path, "alice-token");
        assert!(status.starts_with("HTTP/1.1 429"), "only one place was freed: {status}");
    }
    let metrics = get_as(&s, "admin-token", "/metrics").text();
    assert!(metrics.contains("shardline_watches_per_user_max 3"), "{metrics}");
    let rejected = 9 + refused_while_releasing + 4;
    assert!(
        metrics.contains(&format!("shardline_requests_rejected_total{{class=\"watch\"}} {rejected}")),
        "{rejected} refused: {metrics}"
    );
    assert!(metrics.contains("shardline_http2_max_streams_per_connection 1000"), "{metrics}");
    assert!(metrics.contains("shardline_retry_after_seconds 1"), "{metrics}");
}

/// A client certificate signed by `--client-ca-file` names its user (CN)
/// and groups (O values; rcgen writes one O per certificate, so one here);
/// RBAC applies to them; without one the client is
/// anonymous; a certificate from another CA is refused.
#[test]
fn a_client_certificate_identifies_its_user_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let ca = pki.ca_file.display().to_string();
    let s = start(&dir, &["--authorization-mode", "RBAC", "--client-ca-file", &ca], Some(&pki));
    let with_cert = pki.client_config(Some(pki.client_cert("dave", &["team-a"])));
    let review = br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let json = [("Content-Type", "application/json"), ("Accept", "application/json")];
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let (code, body) = common::tls::request(s.addr, &with_cert, "POST", path, &json, review).unwrap();
    assert_eq!(code, 201, "{body}");
    let who: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(who["status"]["userInfo"]["username"], "dave", "{who}");
    assert_eq!(who["status"]["userInfo"]["groups"], json!(["team-a", "system:authenticated"]));

    // RBAC sees the certificate's groups.
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let (code, body) = common::tls::request(s.addr, &with_cert, "GET", configmaps, &json, b"").unwrap();
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert!(status["message"].as_str().unwrap().contains("User \"dave\" cannot list"), "{body}");
    let binding = json!({"metadata": {"name": "team-a-view"},
        "subjects": [{"kind": "Group", "name": "team-a"}],
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}});
    let admin = [("Content-Type", "application/json"), ("Authorization", "Bearer admin-token")];
    let anonymous = pki.client_config(None);
    let bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    let (code, body) =
        common::tls::request(s.addr, &anonymous, "POST", bindings, &admin, binding.to_string().as_bytes()).unwrap();
    assert_eq!(code, 201, "{body}");
    let (code, body) = common::tls::request(s.addr, &with_cert, "GET", configmaps, &json, b"").unwrap();
    assert_eq!(code, 200, "the aggregated view role grants the list: {body}");
    // No certificate: anonymous, not allowed.
    let (code, body) = common::tls::request(s.addr, &anonymous, "GET", configmaps, &json, b"").unwrap();
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("system:anonymous"), "{body}");
    // A certificate from another CA is refused in the handshake.
    let other_dir = tempfile::tempdir().unwrap();
    let stranger = common::tls::TestPki::new(other_dir.path());
    let foreign = pki.client_config(Some(stranger.client_cert("mallory", &["system:masters"])));
    let result = common::tls::request(s.addr, &foreign, "GET", configmaps, &json, b"");
    assert!(result.is_err() || matches!(result, Ok((0, _))), "{result:?}");
}

/// Roles and bindings are objects in the log: after a restart every shard
/// rebuilds its index from the recovered state, and the bootstrap policy is
/// not written over an operator's change to it.
#[test]
fn rbac_survives_a_restart_and_an_open_watch_outlives_its_revoked_permission() {
    let (mut s, _dir) = rbac_server(&["--authorization-mode", "RBAC"]);
    setup_namespaces(&s);
    admin_create(
        &s,
        &format!("{RBAC}/namespaces/team/rolebindings"),
        json!({"metadata": {"name": "alice-views"},
               "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    // An operator narrows a bootstrap role: anonymous may no longer read /version.
    let r = send_as(
        &s,
        "admin-token",
        "PUT",
        &format!("{RBAC}/clusterroles/system:public-info-viewer"),
        &json!({"metadata": {"name": "system:public-info-viewer"},
                "rules": [{"nonResourceURLs": ["/healthz", "/livez", "/readyz"], "verbs": ["get"]}]}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_status(&s.get("/version"), 403, "Forbidden");
    s.terminate();
    s.restart();
    assert_eq!(get_as(&s, "alice-token", "/api/v1/namespaces/team/configmaps").status, 200);
    assert_status(&get_as(&s, "alice-token", "/api/v1/namespaces/other/configmaps"), 403, "Forbidden");
    assert_status(&s.get("/version"), 403, "Forbidden");
    assert_eq!(s.get("/healthz").status, 200);

    // A watch is authorized when it starts (as by kube-apiserver): revoking
    // the permission refuses the next request but does not close it.
    let (mut watch, status) =
        open_stream(&s, "/api/v1/namespaces/team/configmaps?watch=1&timeoutSeconds=20", "alice-token");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let r = s.request(
        "DELETE",
        &format!("{RBAC}/namespaces/team/rolebindings/alice-views"),
        &[("Authorization", "Bearer admin-token")],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_status(&get_as(&s, "alice-token", "/api/v1/namespaces/team/configmaps"), 403, "Forbidden");
    admin_create(&s, "/api/v1/namespaces/team/configmaps", configmap("after-revocation", &[]));
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    while !seen.contains("after-revocation") {
        let n = std::io::Read::read(&mut watch, &mut buffer).expect("the open watch keeps streaming");
        assert!(n > 0, "the watch ended before the new object: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
}

#[test]
fn roles_and_bindings_cannot_grant_more_than_their_author_holds() {
    let (s, _dir) = rbac_server(&["--authorization-mode", "RBAC"]);
    setup_namespaces(&s);
    let roles = format!("{RBAC}/namespaces/team/roles");
    let bindings = format!("{RBAC}/namespaces/team/rolebindings");
    let role = |name: &str, resource: &str, verbs: &[&str]| json!({"metadata": {"name": name}, "rules": [{"apiGroups": [""], "resources": [resource], "verbs": verbs}]});
    let binding = |name: &str, role: &str| {
        json!({"metadata": {"name": name},
               "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
               "roleRef": {"kind": "Role", "name": role, "apiGroup": "rbac.authorization.k8s.io"}})
    };
    // alice manages RBAC in "team" and may read and create configmaps there.
    admin_create(
        &s,
        &roles,
        json!({"metadata": {"name": "manager"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "create"]},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
             "verbs": ["get", "create", "update", "patch"]}]}),
    );
    admin_create(
        &s,
        &bindings,
        json!({"metadata": {"name": "alice-manager"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"kind": "Role", "name": "manager", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    admin_create(&s, &roles, role("secrets-all", "secrets", &["*"]));

    // Within what she holds: allowed.
    let r = send_as(&s, "alice-token", "POST", &roles, &role("cm-reader", "configmaps", &["get", "list"]));
    assert_eq!(r.status, 201, "{}", r.text());
    let r = send_as(&s, "alice-token", "POST", &bindings, &binding("bob-reads", "cm-reader"));
    assert_eq!(r.status, 201, "{}", r.text());

    // Beyond it: 403 naming what is not held; nothing stored.
    let r = send_as(&s, "alice-token", "POST", &roles, &role("cm-deleter", "configmaps", &["delete"]));
    let status = assert_status(&r, 403, "Forbidden");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with("roles.rbac.authorization.k8s.io \"cm-deleter\" is forbidden: user \"alice\""),
        "{message}"
    );
    assert!(message.contains("attempting to grant RBAC permissions not currently held"), "{message}");
    assert!(message.contains("Verbs:[\"delete\"]"), "{message}");
    assert_eq!(get_as(&s, "admin-token", &format!("{roles}/cm-deleter")).status, 404);
    // A binding to a role wider than hers, and a patch widening her own role.
    let r = send_as(&s, "alice-token", "POST", &bindings, &binding("bob-secrets", "secrets-all"));
    assert_status(&r, 403, "Forbidden");
    let auth = bearer("alice-token");
    let patch =
        serde_json::to_vec(&json!({"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]}))
            .unwrap();
    let r = s.request(
        "PATCH",
        &format!("{roles}/cm-reader"),
        &[("Content-Type", "application/merge-patch+json"), ("Authorization", &auth)],
        Some(&patch),
    );
    assert_status(&r, 403, "Forbidden");
    let stored = get_as(&s, "admin-token", &format!("{roles}/cm-reader")).json();
    assert_eq!(stored["rules"][0]["verbs"], json!(["get", "list"]), "the refused patch changed nothing");
    // `bind` on that one role, and `escalate` on roles, let her past.
    admin_create(
        &s,
        &roles,
        json!({"metadata": {"name": "binder"}, "rules": [
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["bind"],
             "resourceNames": ["secrets-all"]},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]}),
    );
    admin_create(
        &s,
        &bindings,
        json!({"metadata": {"name": "alice-binder"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"kind": "Role", "name": "binder", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    let r = send_as(&s, "alice-token", "POST", &bindings, &binding("bob-secrets", "secrets-all"));
    assert_eq!(r.status, 201, "{}", r.text());
    let r = send_as(&s, "alice-token", "POST", &roles, &role("cm-deleter", "configmaps", &["delete"]));
    assert_eq!(r.status, 201, "{}", r.text());
}

/// `kubectl --as/--as-group` (the `Impersonate-*` headers): refused with
/// kube-apiserver's 403 naming the requester until it may `impersonate`;
/// then the request runs as the impersonated user, whose own permissions
/// apply, in `system:authenticated`.
#[test]
fn kubectl_as_impersonates_only_with_the_impersonate_permission() {
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::TestPki::new(dir.path());
    let s = start(&dir, &["--authorization-mode", "RBAC"], Some(&pki));
    let admin = |args: &[&str]| {
        let out = s.kubectl_as("admin", "admin-token", args);
        assert!(out.status.success(), "{args:?}: {}", out.stderr);
    };
    admin(&["create", "namespace", "team"]);
    admin(&["create", "configmap", "only", "-n", "team"]);
    let alice = |args: &[&str]| s.kubectl_as("alice", "alice-token", args);
    // Refusals checked over HTTP (kubectl reports a refused discovery
    // request as "Forbidden: unknown").
    let client = pki.client_config(None);
    let as_headers = |headers: &[(&str, &str)]| {
        let mut all = vec![("Accept", "application/json"), ("Authorization", "Bearer alice-token")];
        all.extend_from_slice(headers);
        let (code, body) =
            common::tls::request(s.addr, &client, "GET", "/api/v1/namespaces/team/configmaps", &all, b"").unwrap();
        common::http::Response {
            status: code,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into_bytes(),
            chunked: false,
        }
    };
    let status = assert_status(&as_headers(&[("Impersonate-User", "bob")]), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    assert_status(&as_headers(&[("Impersonate-Group", "readers")]), 500, "InternalError");
    tls_admin_create(
        &s,
        &client,
        &format!("{RBAC}/clusterroles"),
        json!({"metadata": {"name": "impersonate-bob"},
               "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]},
                         {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"], "resourceNames": ["readers"]}]}),
    );
    tls_admin_create(
        &s,
        &client,
        &format!("{RBAC}/clusterrolebindings"),
        json!({"metadata": {"name": "alice-impersonates"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
               "roleRef": {"kind": "ClusterRole", "name": "impersonate-bob", "apiGroup": "rbac.authorization.k8s.io"}}),
    );
    let who = alice(&["--as", "bob", "--as-group", "readers", "auth", "whoami", "-o", "json"]);
    assert!(who.status.success(), "{}", who.stderr);
    let who: Value = serde_json::from_str(&who.stdout).unwrap();
    assert_eq!(who["status"]["userInfo"]["username"], "bob");
    assert_eq!(who["status"]["userInfo"]["groups"], json!(["readers", "system:authenticated"]));
    // bob's own permissions apply: none yet.
    let status = assert_status(&as_headers(&[("Impersonate-User", "bob")]), 403, "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    admin(&["create", "role", "cm-reader", "-n", "team", "--verb=get,list,watch", "--resource=configmaps"]);
    admin(&["create", "rolebinding", "bob-reads", "-n", "team", "--role=cm-reader", "--user=bob"]);
    let as_bob = alice(&["--as", "bob", "get", "configmaps", "-n", "team"]);
    assert!(as_bob.status.success(), "{}", as_bob.stderr);
    // Another user or group is still refused.
    let status = assert_status(&as_headers(&[("Impersonate-User", "carol")]), 403, "Forbidden");
    assert!(status["message"].as_str().unwrap().contains("cannot impersonate resource \"users\""), "{status}");
    let status = assert_status(
        &as_headers(&[("Impersonate-User", "bob"), ("Impersonate-Group", "system:masters")]),
        403,
        "Forbidden",
    );
    assert_eq!(
        status["message"],
        "groups \"system:masters\" is forbidden: User \"alice\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
    );
}

fn tls_admin_create(s: &Server, client: &std::sync::Arc<rustls::ClientConfig>, path: &str, body: Value) {
    let headers = [("Content-Type", "application/json"), ("Authorization", "Bearer admin-token")];
    let (code, text) =
        common::tls::request(s.addr, client, "POST", path, &headers, body.to_string().as_bytes()).unwrap();
    assert_eq!(code, 201, "POST {path}: {text}");
}
