//! kube-rs (the Rust Kubernetes client) against the real binary: typed
//! clients for namespaces, config maps, pods and deployments — create, get,
//! list with selectors, replace with a stale resourceVersion, delete — and the
//! errors it decodes from Status responses. Real clients must work unmodified.

mod common;

use common::Server;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, Config};
use serde_json::json;

fn client(server: &Server) -> Client {
    let url: http::Uri = format!("http://{}", server.addr).parse().expect("server URL");
    Client::try_from(Config::new(url)).expect("kube client")
}

fn status_code(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.reason.clone()),
        other => panic!("expected an API Status error, got {other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_typed_clients_work_unmodified() {
    let server = Server::start();
    let client = client(&server);

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let listed = namespaces.list(&ListParams::default()).await.expect("list namespaces");
    let names: Vec<String> = listed.items.iter().filter_map(|n| n.metadata.name.clone()).collect();
    for expected in ["default", "kube-node-lease", "kube-public", "kube-system"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    let demo: Namespace = serde_json::from_value(json!({"metadata": {"name": "kube-rs"}})).unwrap();
    namespaces.create(&PostParams::default(), &demo).await.expect("create namespace");

    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-rs");
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "settings", "labels": {"app": "web"}},
        "data": {"mode": "fast"},
    }))
    .unwrap();
    let created = configmaps.create(&PostParams::default(), &cm).await.expect("create configmap");
    let uid = created.metadata.uid.clone().expect("uid set by the server");
    let first_version = created.metadata.resource_version.clone().expect("resourceVersion set");
    let got = configmaps.get("settings").await.expect("get configmap");
    assert_eq!(got.metadata.uid.as_deref(), Some(uid.as_str()));
    assert_eq!(got.data.unwrap()["mode"], "fast");

    // Creating it again is 409 AlreadyExists; a missing one is 404 NotFound.
    let (code, reason) = status_code(configmaps.create(&PostParams::default(), &cm).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));
    let (code, reason) = status_code(configmaps.get("absent").await.unwrap_err());
    assert_eq!((code, reason.as_str()), (404, "NotFound"));

    // Replace with the current version succeeds; with the old one it conflicts.
    let mut changed = got_again(&configmaps).await;
    changed.data.get_or_insert_with(Default::default).insert("mode".into(), "safe".into());
    let replaced = configmaps.replace("settings", &PostParams::default(), &changed).await.expect("replace");
    assert_ne!(replaced.metadata.resource_version.as_deref(), Some(first_version.as_str()));
    let mut stale = replaced.clone();
    stale.metadata.resource_version = Some(first_version);
    let (code, reason) = status_code(configmaps.replace("settings", &PostParams::default(), &stale).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    // Label and field selectors on list; kube-rs sends `?&labelSelector=...`.
    let other: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "other", "labels": {"app": "db"}}})).unwrap();
    configmaps.create(&PostParams::default(), &other).await.expect("create second configmap");
    let web = configmaps.list(&ListParams::default().labels("app=web")).await.expect("list by label");
    assert_eq!(web.items.len(), 1);
    assert_eq!(web.items[0].metadata.name.as_deref(), Some("settings"));
    let by_name = configmaps.list(&ListParams::default().fields("metadata.name=other")).await.expect("by field");
    assert_eq!(by_name.items.len(), 1);
    assert!(by_name.metadata.resource_version.is_some());

    // Typed pods and deployments, with generation set on create.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "kube-rs");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"generateName": "worker-"},
        "spec": {"containers": [{"name": "c", "image": "registry.example/app:1"}]},
    }))
    .unwrap();
    let pod = pods.create(&PostParams::default(), &pod).await.expect("create pod with generateName");
    let pod_name = pod.metadata.name.clone().expect("generated name");
    assert!(pod_name.starts_with("worker-") && pod_name.len() == "worker-".len() + 5, "{pod_name}");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "kube-rs");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }))
    .unwrap();
    let deployment = deployments.create(&PostParams::default(), &deployment).await.expect("create deployment");
    assert_eq!(deployment.metadata.generation, Some(1));

    // Invalid names are 422 Invalid.
    let bad: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "Bad_Name"}})).unwrap();
    let (code, reason) = status_code(configmaps.create(&PostParams::default(), &bad).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (422, "Invalid"));

    // Delete, then it is gone.
    pods.delete(&pod_name, &DeleteParams::default()).await.expect("delete pod");
    let (code, _) = status_code(pods.get(&pod_name).await.unwrap_err());
    assert_eq!(code, 404);
    configmaps.delete("settings", &DeleteParams::default()).await.expect("delete configmap");
    let left = configmaps.list(&ListParams::default()).await.expect("list after delete");
    let left: Vec<_> = left.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(left, ["other"]);
}

async fn got_again(configmaps: &Api<ConfigMap>) -> ConfigMap {
    configmaps.get("settings").await.expect("get configmap again")
}
