//! Raw HTTP/1.1 tests of the Kubernetes API surface of a real `shardline` process.
//!
//! Owns: status codes and `metav1.Status` bodies for every client error the
//! first slice promises (404, 405, 409 AlreadyExists/Conflict, 400, 413, 415,
//! 422, missing namespace), server-set metadata on create/update, keep-alive,
//! query strings as kube-rs sends them, discovery shapes, /version, /openapi/v3
//! and the health endpoints. Each test starts its own server on a free loopback
//! port and stops it on drop.

mod common;

use common::{assert_status, configmap, resource_version, Server};
use serde_json::{json, Value};
use std::time::Duration;

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn create_get_update_delete_set_server_fields() {
    let s = Server::start();

    let r = s.post_json(CM, &configmap("settings", &[("a", "1")]));
    assert_eq!(r.status, 201, "create: {}", r.text());
    let created = r.json();
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["apiVersion"], "v1");
    assert_eq!(created["metadata"]["name"], "settings");
    assert_eq!(created["metadata"]["namespace"], "default");
    assert!(created["metadata"]["uid"].as_str().is_some_and(|u| u.len() >= 32), "uid: {created}");
    let ts = created["metadata"]["creationTimestamp"].as_str().expect("creationTimestamp");
    assert!(ts.len() == 20 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T', "RFC 3339 UTC seconds: {ts}");
    let rv1 = resource_version(&created);
    assert_eq!(created["data"]["a"], "1");

    // GET returns exactly what create acknowledged.
    let got = s.get_ok(&format!("{CM}/settings"));
    assert_eq!(got, created, "GET after create differs from the create response");

    // PUT with the current resourceVersion: 200, new resourceVersion, same uid.
    let mut update = created.clone();
    update["data"]["a"] = json!("2");
    let r = s.put_json(&format!("{CM}/settings"), &update);
    assert_eq!(r.status, 200, "update: {}", r.text());
    let updated = r.json();
    let rv2 = resource_version(&updated);
    assert_ne!(rv1, rv2, "update must change resourceVersion");
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(updated["metadata"]["creationTimestamp"], created["metadata"]["creationTimestamp"]);
    assert_eq!(updated["data"]["a"], "2");

    // PUT with the stale resourceVersion: 409 Conflict, object unchanged.
    let mut stale = created.clone();
    stale["data"]["a"] = json!("3");
    let status = assert_status(&s.put_json(&format!("{CM}/settings"), &stale), 409, "Conflict");
    assert!(
        status["message"].as_str().unwrap().contains("the object has been modified"),
        "Conflict message as kube-apiserver words it (kubectl and controllers match on it): {status}"
    );
    assert_eq!(s.get_ok(&format!("{CM}/settings")), updated);

    // The list shows the object with its current resourceVersion.
    let list = s.get_ok(CM);
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    resource_version(&list);
    let items = list["items"].as_array().expect("items array");
    let item = items.iter().find(|i| i["metadata"]["name"] == "settings").expect("settings in list");
    assert_eq!(resource_version(item), rv2);

    // DELETE: 200, then 404 NotFound.
    let r = s.delete(&format!("{CM}/settings"));
    assert_eq!(r.status, 200, "delete: {}", r.text());
    let status = assert_status(&s.get(&format!("{CM}/settings")), 404, "NotFound");
    assert_eq!(status["message"], "configmaps \"settings\" not found");
    assert_eq!(status["details"]["name"], "settings");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_status(&s.delete(&format!("{CM}/settings")), 404, "NotFound");
}

#[test]
fn generate_name_gets_a_unique_suffix() {
    let s = Server::start();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}});
    let a = s.post_json(CM, &body);
    let b = s.post_json(CM, &body);
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(b.status, 201, "{}", b.text());
    let (a, b) = (a.json(), b.json());
    let name_a = a["metadata"]["name"].as_str().expect("generated name");
    let name_b = b["metadata"]["name"].as_str().expect("generated name");
    assert!(name_a.starts_with("gen-") && name_a.len() > 4, "{name_a}");
    assert_ne!(name_a, name_b);
    assert_eq!(a["metadata"]["generateName"], "gen-");
    assert_eq!(s.get_ok(&format!("{CM}/{name_a}"))["metadata"]["uid"], a["metadata"]["uid"]);
}

#[test]
fn client_errors_are_status_objects_with_real_reasons() {
    let s = Server::start();
    let pods = "/api/v1/namespaces/default/pods";

    // 404 on a missing object, worded as kube-apiserver words it.
    let status = assert_status(&s.get(&format!("{pods}/x")), 404, "NotFound");
    assert_eq!(status["message"], "pods \"x\" not found");
    assert_eq!(status["details"]["name"], "x");
    assert_eq!(status["details"]["kind"], "pods");

    // 409 AlreadyExists on a second create.
    assert_eq!(s.post_json(CM, &configmap("twice", &[])).status, 201);
    let status = assert_status(&s.post_json(CM, &configmap("twice", &[])), 409, "AlreadyExists");
    assert_eq!(status["details"]["name"], "twice");

    // 400 BadRequest on malformed JSON.
    let r = s.request(
        "POST",
        CM,
        &[("Content-Type", "application/json"), ("Accept", "application/json")],
        Some(b"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {"),
    );
    assert_status(&r, 400, "BadRequest");

    // 400 BadRequest when the name in the body differs from the URL.
    let current = s.get_ok(&format!("{CM}/twice"));
    let mut renamed = current.clone();
    renamed["metadata"]["name"] = json!("other");
    assert_status(&s.put_json(&format!("{CM}/twice"), &renamed), 400, "BadRequest");
    assert_eq!(s.get_ok(&format!("{CM}/twice")), current, "a refused PUT must change nothing");
    assert_status(&s.get(&format!("{CM}/other")), 404, "NotFound");

    // 405 MethodNotAllowed: POST (create) on an item path.
    assert_status(&s.post_json(&format!("{CM}/twice"), &configmap("twice", &[])), 405, "MethodNotAllowed");

    // 415 UnsupportedMediaType for a body that is not JSON (or another accepted type).
    let r = s.request(
        "POST",
        CM,
        &[("Content-Type", "text/plain"), ("Accept", "application/json")],
        Some(serde_json::to_vec(&configmap("plain", &[])).unwrap().as_slice()),
    );
    assert_status(&r, 415, "UnsupportedMediaType");
    assert_status(&s.get(&format!("{CM}/plain")), 404, "NotFound");

    // 422 Invalid with causes for an invalid name.
    let status = assert_status(&s.post_json(CM, &configmap("Bad_Name", &[])), 422, "Invalid");
    let causes = status["details"]["causes"].as_array().expect("details.causes array");
    assert!(!causes.is_empty(), "details.causes must name what is invalid: {status}");
    assert!(causes.iter().any(|c| c["field"] == "metadata.name"), "a cause must point at metadata.name: {status}");

    // Creating in a namespace that does not exist: 404 for the namespace.
    let status =
        assert_status(&s.post_json("/api/v1/namespaces/nope/configmaps", &configmap("c", &[])), 404, "NotFound");
    assert_eq!(status["message"], "namespaces \"nope\" not found");

    // An unknown path: 404 with a Status body.
    let r = s.get("/no/such/path");
    assert_eq!(r.status, 404, "{}", r.text());
    let status = r.json();
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["code"], 404, "{status}");
    // An unknown resource in a known group version is also 404.
    assert_eq!(s.get("/api/v1/namespaces/default/widgets").status, 404);
}

#[test]
fn body_over_three_mebibytes_is_refused_with_413() {
    let s = Server::start();
    const LIMIT: usize = 3 * 1024 * 1024;

    // Just over the limit: a JSON document of 3 MiB + 1 bytes.
    let mut big = configmap("big", &[("k", "")]);
    let overhead = serde_json::to_vec(&big).unwrap().len();
    big["data"]["k"] = json!("x".repeat(LIMIT + 1 - overhead));
    let bytes = serde_json::to_vec(&big).unwrap();
    assert_eq!(bytes.len(), LIMIT + 1);
    let r = s
        .conn()
        .request_streaming_body(
            "POST",
            CM,
            &[("Content-Type", "application/json"), ("Accept", "application/json")],
            bytes,
        )
        .unwrap_or_else(|e| panic!("413 request: no response ({e}); server stderr:\n{}", s.stderr()));
    assert_status(&r, 413, "RequestEntityTooLarge");
    assert_status(&s.get(&format!("{CM}/big")), 404, "NotFound");

    // The server is still healthy, and a body well under the limit is accepted
    // (under 1 MiB of data: kube refuses a larger ConfigMap with 422).
    let mut ok = configmap("big", &[]);
    ok["data"] = json!({"k": "y".repeat(LIMIT / 4)});
    let r = s.post_json(CM, &ok);
    assert_eq!(r.status, 201, "a 768 KiB object must be accepted: {}", common::http::truncate(&r.text(), 500));
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let s = Server::start();
    let mut conn = s.conn();
    let local = conn.local_addr().unwrap();
    let accept = [("Accept", "application/json")];
    for path in ["/api", "/version", "/api/v1/namespaces", "/api/v1/namespaces/default"] {
        let r = conn
            .request("GET", path, &accept, None)
            .unwrap_or_else(|e| panic!("GET {path} on a kept-alive connection: {e}"));
        assert_eq!(r.status, 200, "GET {path}: {}", r.text());
        assert_eq!(r.version, "HTTP/1.1");
        assert!(
            !r.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")),
            "HTTP/1.1 responses must keep the connection open: {:?}",
            r.headers
        );
        r.json();
    }
    // An error response must not close the connection either.
    let r = conn.request("GET", "/api/v1/namespaces/default/pods/none", &accept, None).unwrap();
    assert_status(&r, 404, "NotFound");
    let r = conn.request("GET", "/readyz", &[], None).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(conn.local_addr().unwrap(), local, "all requests went over one socket");
    assert!(
        !conn.is_closed_by_peer(Duration::from_millis(200)).unwrap(),
        "server closed an idle kept-alive connection at once"
    );
}

#[test]
fn list_accepts_query_strings_as_kube_rs_sends_them() {
    let s = Server::start();
    for i in 0..3 {
        assert_eq!(s.post_json(CM, &configmap(&format!("cm-{i}"), &[])).status, 201);
    }
    for path in [
        format!("{CM}?&limit=500"),
        format!("{CM}?limit=500"),
        format!("{CM}?&limit=500&resourceVersion=0"),
        "/api/v1/configmaps?&limit=500".to_string(),
    ] {
        let list = s.get_ok(&path);
        assert_eq!(list["kind"], "ConfigMapList", "GET {path}: {list}");
        let names: Vec<&str> = list["items"]
            .as_array()
            .unwrap_or_else(|| panic!("GET {path}: items: {list}"))
            .iter()
            .filter_map(|i| i["metadata"]["name"].as_str())
            .filter(|n| n.starts_with("cm-"))
            .collect();
        assert_eq!(names.len(), 3, "GET {path}: {names:?}");
    }
    // Every namespace-scoped list across all namespaces includes the namespace.
    let all = s.get_ok("/api/v1/configmaps?&limit=500");
    for item in all["items"].as_array().unwrap() {
        assert!(item["metadata"]["namespace"].is_string(), "{item}");
    }
}

#[test]
fn default_namespaces_exist() {
    let s = Server::start();
    let list = s.get_ok("/api/v1/namespaces");
    assert_eq!(list["kind"], "NamespaceList");
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(names.contains(&ns), "namespace {ns} missing from {names:?}");
        let obj = s.get_ok(&format!("/api/v1/namespaces/{ns}"));
        assert_eq!(obj["kind"], "Namespace");
        resource_version(&obj);
    }
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|v| v[key] == value)
}

#[test]
fn discovery_version_and_openapi() {
    let s = Server::start();

    let api = s.get_ok("/api");
    assert_eq!(api["kind"], "APIVersions", "{api}");
    assert_eq!(api["versions"], json!(["v1"]));

    let apis = s.get_ok("/apis");
    assert_eq!(apis["kind"], "APIGroupList", "{apis}");
    for (group, version) in [
        ("apps", "apps/v1"),
        ("batch", "batch/v1"),
        ("coordination.k8s.io", "coordination.k8s.io/v1"),
        ("rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1"),
        ("apiextensions.k8s.io", "apiextensions.k8s.io/v1"),
    ] {
        let g = find(&apis["groups"], "name", group).unwrap_or_else(|| panic!("group {group} missing: {apis}"));
        assert!(find(&g["versions"], "groupVersion", version).is_some(), "{group}: {g}");
        assert_eq!(g["preferredVersion"]["groupVersion"], version, "{g}");
    }

    let core = s.get_ok("/api/v1");
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    for (name, kind, namespaced) in [
        ("pods", "Pod", true),
        ("namespaces", "Namespace", false),
        ("configmaps", "ConfigMap", true),
        ("nodes", "Node", false),
        ("persistentvolumes", "PersistentVolume", false),
        ("services", "Service", true),
    ] {
        let r = find(&core["resources"], "name", name).unwrap_or_else(|| panic!("{name} missing from /api/v1"));
        assert_eq!(r["kind"], kind);
        assert_eq!(r["namespaced"], namespaced, "{r}");
        let verbs = r["verbs"].as_array().expect("verbs");
        for verb in ["create", "delete", "get", "list", "update"] {
            assert!(verbs.contains(&json!(verb)), "{name} verbs lack {verb}: {r}");
        }
    }

    let apps = s.get_ok("/apis/apps/v1");
    assert_eq!(apps["groupVersion"], "apps/v1");
    for name in ["deployments", "replicasets", "statefulsets", "daemonsets"] {
        assert!(find(&apps["resources"], "name", name).is_some(), "{name} missing from /apis/apps/v1");
    }

    // Aggregated discovery (what kubectl and client-go ask for first).
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let r = s.request("GET", "/apis", &[("Accept", &format!("{aggregated},application/json"))], None);
    assert_eq!(r.status, 200, "{}", r.text());
    let content_type = r.header("content-type").unwrap_or_default().replace(' ', "");
    assert!(
        content_type.contains("g=apidiscovery.k8s.io") && content_type.contains("as=APIGroupDiscoveryList"),
        "client-go recognises aggregated discovery by its Content-Type, got {content_type:?}"
    );
    let body = r.json();
    assert_eq!(body["kind"], "APIGroupDiscoveryList", "{body}");
    let apps = body["items"]
        .as_array()
        .and_then(|items| items.iter().find(|g| g["metadata"]["name"] == "apps"))
        .unwrap_or_else(|| panic!("apps missing from aggregated /apis: {body}"));
    let v1 = find(&apps["versions"], "version", "v1").expect("apps v1");
    assert!(find(&v1["resources"], "resource", "deployments").is_some(), "{v1}");

    let version = s.get_ok("/version");
    let git_version = version["gitVersion"].as_str().expect("gitVersion");
    assert!(git_version.starts_with('v'), "{version}");
    assert!(version["major"].is_string() && version["minor"].is_string(), "{version}");

    let r = s.get("/openapi/v3");
    assert_eq!(r.status, 200, "{}", r.text());
    let paths = r.json();
    assert!(
        paths["paths"].get("api/v1").is_some(),
        "/openapi/v3 must list api/v1: {}",
        common::http::truncate(&paths.to_string(), 500)
    );
    assert!(paths["paths"].get("apis/apps/v1").is_some(), "/openapi/v3 must list apis/apps/v1");
}

#[test]
fn health_endpoints() {
    let s = Server::start();
    for path in ["/healthz", "/livez", "/readyz"] {
        let r = s.request("GET", path, &[], None);
        assert_eq!(r.status, 200, "GET {path}");
        assert_eq!(r.text(), "ok", "GET {path}");
    }

    // Verbose output lists each check as kube-apiserver does: "[+]name ok".
    let r = s.request("GET", "/livez?verbose", &[], None);
    assert_eq!(r.status, 200);
    let text = r.text();
    let checks: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("[+]"))
        .filter_map(|l| l.strip_suffix(" ok"))
        .map(str::to_string)
        .collect();
    assert!(!checks.is_empty(), "/livez?verbose lists no \"[+]name ok\" line:\n{text}");
    assert!(text.contains("livez check passed"), "{text}");

    let r = s.request("GET", "/readyz?verbose", &[], None);
    assert_eq!(r.status, 200);
    let ready_text = r.text();
    let ready_check = ready_text
        .lines()
        .filter_map(|l| l.strip_prefix("[+]"))
        .find_map(|l| l.strip_suffix(" ok"))
        .unwrap_or_else(|| panic!("/readyz?verbose lists no check:\n{ready_text}"))
        .to_string();

    // ?exclude=NAME: still 200, and that check is not reported as run.
    let r = s.request("GET", &format!("/readyz?verbose&exclude={ready_check}"), &[], None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(!r.text().contains(&format!("[+]{ready_check} ok")), "excluded check still ran:\n{}", r.text());
    let r = s.request("GET", &format!("/readyz?exclude={ready_check}"), &[], None);
    assert_eq!(r.status, 200);

    // /livez/NAME runs one check; an unknown one is 404.
    let r = s.request("GET", &format!("/livez/{}", checks[0]), &[], None);
    assert_eq!(r.status, 200, "/livez/{}: {}", checks[0], r.text());
    assert_eq!(s.request("GET", "/livez/no-such-check", &[], None).status, 404);
    assert_eq!(s.request("GET", "/readyz/no-such-check", &[], None).status, 404);
}

/// The health endpoints' bodies and headers exactly as kube-apiserver's
/// `healthz` package writes them, with its check names (informer-sync:
/// every shard has loaded the log's state), for every `verbose` and
/// `exclude` form.
#[test]
fn health_output_is_kube_apiservers() {
    let s = Server::start();
    let hook = "poststarthook/start-system-namespaces-controller";
    let ready = format!(
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n[+]{hook} ok\n[+]shutdown ok\n\
         readyz check passed\n"
    );
    for path in ["/readyz?verbose", "/readyz?verbose=true", "/readyz?verbose=false", "/readyz?verbose=1"] {
        let r = s.get(path);
        assert_eq!((r.status, r.text()), (200, ready.clone()), "{path}: kube looks only for the key");
        assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"), "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{path}");
    }
    let live = format!("[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]{hook} ok\nlivez check passed\n");
    assert_eq!(s.get("/livez?verbose").text(), live);
    assert_eq!(s.get("/healthz?verbose").text(), live.replace("livez", "healthz"));
    // Excluded checks are reported as such; unknown names once each, sorted and quoted.
    let r = s.get("/readyz?verbose&exclude=informer-sync&exclude=zz-none&exclude=aa-none&exclude=zz-none");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        format!(
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync excluded: ok\n[+]{hook} ok\n\
             [+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for \"aa-none\",\"zz-none\"\n\
             readyz check passed\n"
        )
    );
    // Not verbose: just "ok", whatever is excluded.
    assert_eq!(s.get("/readyz?exclude=etcd").text(), "ok");
    // One check by its path: "ok" with the same headers.
    for path in ["/readyz/informer-sync", "/readyz/etcd-readiness", "/livez/etcd", "/healthz/log"] {
        let r = s.get(path);
        assert_eq!((r.status, r.text()), (200, "ok".to_string()), "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{path}");
    }
    let r = s.get("/livez/informer-sync");
    assert_eq!((r.status, r.text()), (404, "404 page not found\n".to_string()), "informer-sync is a readiness check");
}

/// `kubectl create namespace demo` (kubectl 1.32 and later, whose typed clients
/// prefer protobuf) sends exactly these bytes with
/// `Content-Type: application/vnd.kubernetes.protobuf`: the `k8s\0` magic, then
/// a `runtime.Unknown` holding `{apiVersion: v1, kind: Namespace}` and the
/// protobuf Namespace `{metadata: {name: "demo"}}`. Captured from kubectl 1.37.1.
const KUBECTL_CREATE_NAMESPACE_DEMO_PROTOBUF: &[u8] = b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace\x12\x1c\n\x14\n\x04demo\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\n\x00\x1a\x00\"\x00";

#[test]
fn create_accepts_what_kubectl_sends() {
    let s = Server::start();

    // The typed-client namespace create: protobuf body, kubectl's query
    // parameters, an Accept that allows JSON back.
    let r = s.request(
        "POST",
        "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict&timeout=30s",
        &[
            ("Content-Type", "application/vnd.kubernetes.protobuf"),
            ("Accept", "application/vnd.kubernetes.protobuf,application/json"),
        ],
        Some(KUBECTL_CREATE_NAMESPACE_DEMO_PROTOBUF),
    );
    assert_eq!(r.status, 201, "protobuf namespace create: {}", r.text());
    let got = s.get_ok("/api/v1/namespaces/demo");
    assert_eq!(got["kind"], "Namespace");
    assert_eq!(got["metadata"]["name"], "demo");
    resource_version(&got);

    // The JSON create kubectl sends for `create -f`, with the same parameters.
    let r = s.post_json(
        "/api/v1/namespaces/demo/configmaps?fieldManager=kubectl-create&fieldValidation=Strict&timeout=30s",
        &configmap("from-kubectl", &[]),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["namespace"], "demo");
}

/// The status and scale subresources: GET .../status is the object; PUT
/// .../status changes only status; GET .../scale is an autoscaling/v1 Scale and
/// PUT .../scale sets spec.replicas (bumping generation); a stale Scale
/// resourceVersion is 409.
#[test]
fn status_and_scale_subresources() {
    let s = Server::start();
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
        "status": {"replicas": 99},
    });
    let r = s.post_json(deployments, &deployment);
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["status"], json!({}), "create resets status: {created}");

    let scale = s.get_ok(&format!("{deployments}/web/scale"));
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"]["selector"], "app=web");
    assert_eq!(scale["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);

    let mut wanted = scale.clone();
    wanted["spec"]["replicas"] = json!(5);
    let r = s.put_json(&format!("{deployments}/web/scale"), &wanted);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["replicas"], 5);
    let scaled = s.get_ok(&format!("{deployments}/web"));
    assert_eq!(scaled["spec"]["replicas"], 5);
    assert_eq!(scaled["metadata"]["generation"], 2);
    // The old Scale's resourceVersion is stale now.
    let r = s.put_json(&format!("{deployments}/web/scale"), &wanted);
    assert_status(&r, 409, "Conflict");

    // PUT .../status changes status only; PUT of the object ignores status.
    let mut with_status = scaled.clone();
    with_status["status"] = json!({"replicas": 5, "readyReplicas": 5});
    with_status["spec"]["replicas"] = json!(7);
    let r = s.put_json(&format!("{deployments}/web/status"), &with_status);
    assert_eq!(r.status, 200, "{}", r.text());
    let after = r.json();
    assert_eq!(after["status"]["readyReplicas"], 5);
    assert_eq!(after["spec"]["replicas"], 5, "a status update must not change spec");
    let mut spec_change = after.clone();
    spec_change["status"] = json!({});
    spec_change["spec"]["replicas"] = json!(1);
    let r = s.put_json(&format!("{deployments}/web"), &spec_change);
    assert_eq!(r.status, 200, "{}", r.text());
    let after = r.json();
    assert_eq!(after["status"]["readyReplicas"], 5, "an object update must not change status");
    assert_eq!(after["spec"]["replicas"], 1);
    assert_eq!(s.get_ok(&format!("{deployments}/web/status"))["kind"], "Deployment");
}

/// Deleting a namespace deletes what it holds (in the background, then the
/// namespace); the default, kube-system and
/// kube-public namespaces may not be deleted (403 Forbidden).
#[test]
fn namespace_deletion_cascades_and_protected_namespaces_stay() {
    let s = Server::start();
    let r = s.post_json("/api/v1/namespaces", &json!({"metadata": {"name": "doomed"}}));
    assert_eq!(r.status, 201, "{}", r.text());
    for name in ["a", "b"] {
        let r = s.post_json("/api/v1/namespaces/doomed/configmaps", &configmap(name, &[("k", "v")]));
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let r = s.post_json(CM, &configmap("survivor", &[]));
    assert_eq!(r.status, 201, "{}", r.text());

    let r = s.delete("/api/v1/namespaces/doomed");
    assert_eq!(r.status, 200, "{}", r.text());
    // The namespace goes Terminating; the server's namespace cleanup deletes
    // its contents, then the namespace (as kube's namespace controller does).
    assert_eq!(r.json()["status"]["phase"], "Terminating", "{}", r.text());
    s.kubectl_ok(&["wait", "--for=delete", "namespace/doomed", "--timeout=60s"]);
    assert_status(&s.get("/api/v1/namespaces/doomed"), 404, "NotFound");
    let left = s.get_ok("/api/v1/configmaps");
    // Besides the survivor, only kube-apiserver's own ConfigMap in kube-system.
    let names: Vec<&str> =
        left["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["survivor", "kube-apiserver-legacy-service-account-token-tracking"], "{left}");

    for protected in ["default", "kube-system", "kube-public"] {
        let r = s.delete(&format!("/api/v1/namespaces/{protected}"));
        let status = assert_status(&r, 403, "Forbidden");
        assert!(status["message"].as_str().unwrap().contains("may not be deleted"), "{status}");
        s.get_ok(&format!("/api/v1/namespaces/{protected}"));
    }
}

/// A list larger than the socket's buffers, read by a client with a small
/// receive window that starts late: the server's vectored sends hit a full
/// socket, fall back to waiting, and the body still arrives whole and in
/// order (chunked). (Checked to reach the fallback: making it fail breaks
/// this test.)
#[test]
fn large_list_survives_a_slow_reader() {
    use std::io::{Read, Write};
    let s = Server::start();
    let payload = "x".repeat(4000);
    const OBJECTS: usize = 1500;
    for i in 0..OBJECTS {
        let r = s.post_json(CM, &configmap(&format!("big-{i:04}"), &[("payload", &payload)]));
        assert_eq!(r.status, 201, "{}", r.text());
    }
    // A small receive buffer, set before connecting, keeps the window small,
    // so the server's socket fills long before the list is written.
    // SAFETY: creates a descriptor this test owns.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    assert!(socket >= 0);
    let small: libc::c_int = 4096;
    // SAFETY: plain socket calls on a descriptor this test owns.
    unsafe {
        let set = libc::setsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        assert_eq!(set, 0);
    }
    // SAFETY: `socket` is a fresh descriptor this test owns.
    let mut stream: std::net::TcpStream = unsafe { std::os::fd::FromRawFd::from_raw_fd(socket) };
    let address = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: s.addr.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes([127, 0, 0, 1]) },
        sin_zero: [0; 8],
    };
    // SAFETY: connect with a valid sockaddr_in of the right size.
    let connected = unsafe {
        use std::os::fd::AsRawFd;
        libc::connect(
            stream.as_raw_fd(),
            (&address as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    assert_eq!(connected, 0, "connect: {}", std::io::Error::last_os_error());
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "GET {CM} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n").unwrap();
    // Let the server fill the socket before anything is read, then read slowly.
    std::thread::sleep(Duration::from_millis(300));
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).unwrap();
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
    }
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("headers end");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    // Decode the chunked body.
    let mut body = Vec::new();
    let mut rest = &raw[split + 4..];
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap().trim(), 16).unwrap();
        rest = &rest[line_end + 2..];
        if size == 0 {
            break;
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
    assert!(body.len() > OBJECTS * 4000, "body of {} bytes", body.len());
    let list: Value = serde_json::from_slice(&body).expect("the streamed list is one JSON document");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), OBJECTS);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["metadata"]["name"], format!("big-{i:04}"));
        assert_eq!(item["data"]["payload"].as_str().unwrap().len(), 4000);
    }
}

/// The bytes of a JSON answer as kube-apiserver's serializers write them:
/// `json.Encoder`'s final newline; indented (`json.MarshalIndent`, two
/// spaces) for `pretty=true` or a person's tool (curl, Wget, a browser) that
/// says nothing; never for a watch; `/version` always indented.
#[test]
fn json_answers_are_shaped_as_kubes_serializers_shape_them() {
    let s = Server::start();
    let cm = "/api/v1/namespaces/default/configmaps";
    let r = s.post_json(cm, &json!({"metadata": {"name": "shape"}, "data": {"k": "v"}}));
    assert_eq!(r.status, 201, "{}", r.text());
    let client = [("User-Agent", "kubectl/v1.36.0 (linux/amd64) kubernetes/abcdef")];
    // A client's answer: compact, ending in one newline (object, list, Status, discovery).
    for path in [format!("{cm}/shape"), cm.to_string(), format!("{cm}/missing"), "/api/v1".to_string()] {
        let r = s.request("GET", &path, &client, None);
        let text = r.text();
        assert!(text.ends_with("}\n") && !text.ends_with("\n\n"), "{path}: {text:?}");
        assert!(!text.contains("\n "), "{path} is compact: {text}");
        let _: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    // curl with nothing said, or pretty=true: indented, without the newline.
    let curl = [("User-Agent", "curl/8.5.0")];
    let r = s.request("GET", &format!("{cm}/shape"), &curl, None);
    let text = r.text();
    assert!(
        text.starts_with(
            "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"shape\","
        ),
        "{text}"
    );
    assert!(text.ends_with("\n}"), "{text:?}");
    assert!(text.contains("\"data\": {\n    \"k\": \"v\"\n  }"), "{text}");
    let r = s.request("GET", &format!("{cm}?pretty=true"), &client, None);
    assert!(r.text().starts_with("{\n  \"kind\": \"ConfigMapList\""), "{}", r.text());
    let r = s.request("GET", &format!("{cm}/missing"), &curl, None);
    assert_eq!(r.status, 404);
    assert!(r.text().starts_with("{\n  \"kind\": \"Status\""), "{}", r.text());
    // pretty=false (or one Go cannot read) wins over the User-Agent.
    for q in ["pretty=false", "pretty=maybe"] {
        let r = s.request("GET", &format!("{cm}/shape?{q}"), &curl, None);
        assert_eq!(r.status, 200, "{q}");
        assert!(r.text().ends_with("}\n") && !r.text().contains("\n "), "{q}: {}", r.text());
    }
    // A pretty answer is not gzipped; a compact large one still may be.
    let r = s.request("GET", cm, &[("User-Agent", "Mozilla/5.0 (X11)"), ("Accept-Encoding", "gzip")], None);
    assert_eq!(r.header("Content-Encoding"), None);
    assert!(r.text().starts_with("{\n  \"kind\""), "{}", r.text());
    // A watch is not reshaped, even for curl.
    let r = s.request("GET", &format!("{cm}?watch=true&timeoutSeconds=1"), &curl, None);
    let first = r.text().lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("{\"type\":\"ADDED\""), "{first}");
    // /version is indented whoever asks.
    let r = s.request("GET", "/version", &client, None);
    assert!(r.text().starts_with("{\n  \""), "{}", r.text());
}
