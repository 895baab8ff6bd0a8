//! kube-rs `watcher` + `reflector` against the real binary: the reflector's
//! store must end identical to the server's state (names and
//! resourceVersions) after a stream of random creates, updates and deletes,
//! with a plain list-then-watch and with streaming lists (sendInitialEvents).

mod common;

use common::Server;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::{Client, Config};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const WRITES: usize = 10_000;
const NAMES: u64 = 40;

fn client(server: &Server) -> Client {
    let url: http::Uri = format!("http://{}", server.addr).parse().expect("server URL");
    Client::try_from(Config::new(url)).expect("kube client")
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

async fn run(streaming: bool, seed: u64) {
    let server = Server::start();
    let client = client(&server);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // Some state before the watch starts.
    for i in 0..5 {
        let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": format!("cm-{i}")}})).unwrap();
        api.create(&PostParams::default(), &cm).await.expect("create");
    }
    let config = if streaming { watcher::Config::default().streaming_lists() } else { watcher::Config::default() };
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(api.clone(), config)).applied_objects();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(item) = stream.next().await {
            if let Err(e) = item {
                eprintln!("watcher error (it retries): {e}");
            }
        }
    });
    reader.wait_until_ready().await.expect("the reflector becomes ready");

    let mut rng = Rng(seed);
    for _ in 0..WRITES {
        let name = format!("cm-{}", rng.next() % NAMES);
        match rng.next() % 3 {
            0 => {
                let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
                let _ = api.create(&PostParams::default(), &cm).await;
            }
            1 => {
                if let Ok(mut cm) = api.get(&name).await {
                    cm.data.get_or_insert_with(Default::default).insert("n".into(), rng.next().to_string());
                    let _ = api.replace(&name, &PostParams::default(), &cm).await;
                }
            }
            _ => {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
        }
    }
    let expected: BTreeMap<String, String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|c| (c.metadata.name.unwrap(), c.metadata.resource_version.unwrap()))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen: BTreeMap<String, String> = reader
            .state()
            .iter()
            .map(|c| (c.metadata.name.clone().unwrap(), c.metadata.resource_version.clone().unwrap()))
            .collect();
        if seen == expected {
            break;
        }
        assert!(Instant::now() < deadline, "the reflector's store never matched the server (streaming={streaming}, seed={seed}):\nseen {seen:?}\nexpected {expected:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn reflector_follows_the_server_through_random_writes() {
    run(false, 0x5eed_0001).await;
}

#[tokio::test(flavor = "current_thread")]
async fn reflector_with_streaming_lists_follows_the_server() {
    run(true, 0x5eed_0002).await;
}
