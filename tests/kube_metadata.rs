//! kube-rs' metadata-only client against the real binary: a reflector fed
//! by `metadata_watcher` (which lists with `Api::list_metadata` and watches
//! with `watch_metadata`: `Accept: application/json;as=PartialObjectMetadata
//! [List];g=meta.k8s.io;v=v1`) must end with a store equal to the server's
//! state (names, resourceVersions, labels) after seeded random creates,
//! updates, label changes and deletes; and `Api::list_metadata` must list
//! what `Api::list` lists. For config maps and for a custom resource, with a
//! plain list-then-watch and with streaming lists (sendInitialEvents and the
//! initial-events-end bookmark).

#![allow(deprecated)] // kube-rs 5 calls `metadata_watcher` deprecated in favour of Api<PartialObjectMeta<K>>; both run the same requests.

mod common;

use common::Server;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{metadata_watcher, reflector, watcher, WatchStreamExt};
use kube::{Client, Config, Resource};
use serde::de::DeserializeOwned;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

const WRITES: usize = 1_500;
const NAMES: u64 = 30;

fn client(server: &Server) -> Client {
    let url: http::Uri = format!("http://{}", server.addr).parse().expect("server URL");
    Client::try_from(Config::new(url)).expect("kube client")
}

/// A small deterministic generator (xorshift), so a failure replays from its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What a store must agree on per object: resourceVersion and labels.
type State = BTreeMap<String, (String, BTreeMap<String, String>)>;

fn state_of<'a>(metas: impl Iterator<Item = &'a kube::core::ObjectMeta>) -> State {
    metas
        .map(|m| {
            (
                m.name.clone().unwrap_or_default(),
                (m.resource_version.clone().unwrap_or_default(), m.labels.clone().unwrap_or_default()),
            )
        })
        .collect()
}

/// The object a write creates or replaces, with `n` in its content.
trait Writable: Resource + Clone + DeserializeOwned + serde::Serialize + Debug + Send + Sync + 'static {
    fn make(name: &str, n: u64) -> Self;
    fn change(&mut self, n: u64);
}

impl Writable for ConfigMap {
    fn make(name: &str, n: u64) -> Self {
        serde_json::from_value(json!({"metadata": {"name": name}, "data": {"n": n.to_string()}})).unwrap()
    }
    fn change(&mut self, n: u64) {
        self.data.get_or_insert_with(Default::default).insert("n".into(), n.to_string());
    }
}

impl Writable for DynamicObject {
    fn make(name: &str, n: u64) -> Self {
        serde_json::from_value(
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"n": n}}),
        )
        .unwrap()
    }
    fn change(&mut self, n: u64) {
        self.data["spec"] = json!({"n": n});
    }
}

async fn run<K>(server: &Server, api: Api<K>, writer: Writer<PartialObjectMeta<K>>, streaming: bool, seed: u64)
where
    K: Writable,
    K::DynamicType: Clone + Eq + std::hash::Hash,
{
    // Some state before the watch starts.
    for i in 0..5 {
        api.create(&PostParams::default(), &K::make(&format!("o-{i}"), i)).await.expect("create");
    }
    let config = if streaming { watcher::Config::default().streaming_lists() } else { watcher::Config::default() };
    let reader = writer.as_reader();
    let stream = reflector(writer, metadata_watcher(api.clone(), config)).applied_objects();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(item) = stream.next().await {
            if let Err(e) = item {
                eprintln!("metadata watcher error (it retries): {e}");
            }
        }
    });
    reader.wait_until_ready().await.expect("the reflector becomes ready");

    let mut rng = Rng(seed);
    for _ in 0..WRITES {
        let name = format!("o-{}", rng.next() % NAMES);
        let n = rng.next();
        match rng.next() % 4 {
            0 => {
                let _ = api.create(&PostParams::default(), &K::make(&name, n)).await;
            }
            1 => {
                if let Ok(mut object) = api.get(&name).await {
                    object.change(n);
                    let _ = api.replace(&name, &PostParams::default(), &object).await;
                }
            }
            2 => {
                // A label change through a metadata-only patch (kube-rs' `patch_metadata`).
                let labels = json!({"metadata": {"labels": {"tier": format!("t{}", n % 3)}}});
                let _ = api.patch_metadata(&name, &PatchParams::default(), &Patch::Merge(&labels)).await;
            }
            _ => {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
        }
    }
    let full = api.list(&ListParams::default()).await.expect("list");
    let expected = state_of(full.items.iter().map(|o| o.meta()));
    // list_metadata lists what list lists.
    let listed = api.list_metadata(&ListParams::default()).await.expect("list_metadata");
    assert_eq!(listed.types.kind, "PartialObjectMetadataList");
    assert_eq!(state_of(listed.items.iter().map(|o| &o.metadata)), expected, "list_metadata and list differ");
    assert_eq!(listed.metadata.resource_version, full.metadata.resource_version);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = state_of(reader.state().iter().map(|o| &o.metadata));
        if seen == expected {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the metadata reflector's store never matched the server (streaming={streaming}, seed={seed:#x}):\nseen {seen:?}\nexpected {expected:?}\nserver stderr:\n{}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The store holds PartialObjectMetadata, not the objects.
    assert!(reader.state().iter().all(|o| o.types.as_ref().is_some_and(|t| t.kind == "PartialObjectMetadata")));
    task.abort();
}

async fn config_maps(streaming: bool, seed: u64) {
    let server = Server::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&server), "default");
    run(&server, api, Writer::default(), streaming, seed).await;
}

async fn widgets(streaming: bool, seed: u64) {
    let server = Server::start();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let r = server.post_json("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &crd);
    assert_eq!(r.status, 201, "{}", r.text());
    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let api: Api<DynamicObject> = Api::namespaced_with(client(&server), "default", &resource);
    run(&server, api, Writer::new(resource.clone()), streaming, seed).await;
}

#[tokio::test(flavor = "current_thread")]
async fn metadata_reflector_follows_config_maps() {
    config_maps(false, 0x3e7a_0001).await;
}

#[tokio::test(flavor = "current_thread")]
async fn metadata_reflector_with_streaming_lists_follows_config_maps() {
    config_maps(true, 0x3e7a_0002).await;
}

#[tokio::test(flavor = "current_thread")]
async fn metadata_reflector_follows_a_custom_resource() {
    widgets(false, 0x3e7a_0003).await;
}

#[tokio::test(flavor = "current_thread")]
async fn metadata_reflector_with_streaming_lists_follows_a_custom_resource() {
    widgets(true, 0x3e7a_0004).await;
}
