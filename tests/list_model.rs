//! Model-based test of paginated lists: random creates, updates and deletes
//! interleaved with paginated lists at random limits (and whole lists
//! streamed in small rounds), over 1 to 4 shards, through the real handlers
//! (`api::handle`) on the in-process backend. Checked against a model that
//! keeps the collection's state at every revision: every page of a sequence
//! carries the first page's resourceVersion, the union of the pages equals
//! the model's state at that revision, nothing is missing or repeated, and
//! `remainingItemCount` counts what the later pages hold. With a small
//! history byte budget (`history_bytes_max`) a continuation may instead be
//! 410 Expired (with a fresh continue token); what came before it is still
//! exact.

use bytes::Bytes;
use futures_lite::future::block_on;
use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardline::api::testing::MemoryBackend;
use shardline::config::Config;
use std::collections::BTreeMap;
use std::rc::Rc;

const CM: &str = "/api/v1/namespaces/default/configmaps";

fn request(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body.map(|b| Bytes::from(serde_json::to_vec(&b).unwrap())).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", "application/json")
        .body(Full::new(bytes))
        .unwrap();
    block_on(async {
        let response = shardline::api::handle(backend, request).await;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    })
}

#[derive(Clone, Debug)]
enum Op {
    Create(u8),
    Update(u8),
    Delete(u8),
    /// A paginated list with this limit; `writes` ops run between pages.
    Paged {
        limit: u8,
        writes: Vec<(u8, u8)>,
    },
    /// A whole list (streamed in rounds).
    Whole,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..16).prop_map(Op::Create),
        2 => (0u8..16).prop_map(Op::Update),
        2 => (0u8..16).prop_map(Op::Delete),
        2 => (1u8..6, proptest::collection::vec((0u8..3, 0u8..16), 0..6)).prop_map(|(limit, writes)| Op::Paged { limit, writes }),
        1 => Just(Op::Whole),
    ]
}

/// The model: the collection (name -> resourceVersion) after each revision.
struct Model {
    states: BTreeMap<u64, BTreeMap<String, u64>>,
}

impl Model {
    fn at(&self, revision: u64) -> BTreeMap<String, u64> {
        self.states.range(..=revision).next_back().map(|(_, s)| s.clone()).unwrap_or_default()
    }

    fn record(&mut self, revision: u64, state: BTreeMap<String, u64>) {
        self.states.insert(revision, state);
    }
}

fn write(backend: &Rc<MemoryBackend>, model: &mut Model, kind: u8, index: u8) {
    let name = format!("cm-{index:02}");
    let mut state = model.at(u64::MAX);
    let (status, body) = match kind % 3 {
        0 => request(backend, "POST", CM, Some(json!({"metadata": {"name": name}, "data": {"v": "0"}}))),
        1 => request(
            backend,
            "PUT",
            &format!("{CM}/{name}"),
            Some(json!({"metadata": {"name": name}, "data": {"v": index.to_string() + "x"}})),
        ),
        _ => request(backend, "DELETE", &format!("{CM}/{name}"), None),
    };
    let exists = state.contains_key(&name);
    match (kind % 3, exists) {
        (0, false) => {
            assert_eq!(status, 201, "{body}");
            let rv: u64 = body["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
            state.insert(name, rv);
            model.record(rv, state);
        }
        (0, true) => assert_eq!(status, 409, "{body}"),
        (1, true) => {
            assert_eq!(status, 200, "{body}");
            let rv: u64 = body["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
            let changed = rv != state[&name];
            state.insert(name, rv);
            if changed {
                model.record(rv, state);
            }
        }
        (1, false) | (2, false) => assert_eq!(status, 404, "{body}"),
        (2, true) => {
            assert_eq!(status, 200, "{body}");
            state.remove(&name);
            // The delete's revision is the next one the backend assigned.
            let (_, list) = request(backend, "GET", CM, None);
            let rv: u64 = list["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
            model.record(rv, state);
        }
        _ => unreachable!(),
    }
}

fn items(list: &Value) -> Vec<(String, u64)> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_string(),
                i["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn pages_are_one_consistent_snapshot(
        ops in proptest::collection::vec(op(), 1..60),
        shards in 1u16..5,
        budget in proptest::option::of(0usize..3000),
    ) {
        let mut config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), shards);
        config.list_stream_batch_objects = 3;
        if let Some(bytes) = budget {
            config.history_bytes_max = bytes;
        }
        let backend = Rc::new(MemoryBackend::new(config, shards));
        let mut model = Model { states: BTreeMap::new() };
        model.record(1, BTreeMap::new());
        for op in ops {
            match op {
                Op::Create(i) => write(&backend, &mut model, 0, i),
                Op::Update(i) => write(&backend, &mut model, 1, i),
                Op::Delete(i) => write(&backend, &mut model, 2, i),
                Op::Whole => {
                    let (status, list) = request(&backend, "GET", CM, None);
                    prop_assert_eq!(status, 200);
                    let rv: u64 = list["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
                    let expected: Vec<(String, u64)> = model.at(rv).into_iter().collect();
                    prop_assert_eq!(items(&list), expected);
                }
                Op::Paged { limit, writes } => {
                    let mut writes = writes.into_iter();
                    let (status, first) = request(&backend, "GET", &format!("{CM}?limit={limit}"), None);
                    prop_assert_eq!(status, 200, "{}", first);
                    let rv = first["metadata"]["resourceVersion"].as_str().unwrap().to_string();
                    let expected: Vec<(String, u64)> = model.at(rv.parse().unwrap()).into_iter().collect();
                    let mut seen = items(&first);
                    let mut page = first;
                    let mut expired = false;
                    loop {
                        prop_assert!(page["items"].as_array().unwrap().len() <= limit as usize);
                        let token = page["metadata"]["continue"].as_str().unwrap_or("").to_string();
                        let remaining = page["metadata"]["remainingItemCount"].as_u64();
                        if token.is_empty() {
                            prop_assert!(remaining.is_none(), "remainingItemCount on the last page");
                            break;
                        }
                        prop_assert_eq!(remaining, Some((expected.len() - seen.len()) as u64));
                        if let Some((kind, index)) = writes.next() {
                            write(&backend, &mut model, kind, index);
                        }
                        let (status, next) = request(&backend, "GET", &format!("{CM}?limit={limit}&continue={token}"), None);
                        if status == 410 && budget.is_some() {
                            // The budget dropped a version this snapshot needs.
                            prop_assert_eq!(&next["reason"], "Expired");
                            prop_assert!(next["metadata"]["continue"].as_str().is_some_and(|t| !t.is_empty()));
                            prop_assert_eq!(&seen[..], &expected[..seen.len()], "pages before the 410 at {}", rv);
                            expired = true;
                            break;
                        }
                        prop_assert_eq!(status, 200, "{}", next);
                        prop_assert_eq!(next["metadata"]["resourceVersion"].as_str().unwrap(), rv.as_str());
                        seen.extend(items(&next));
                        page = next;
                    }
                    if !expired {
                        prop_assert_eq!(seen, expected, "pages at {}", rv);
                    }
                }
            }
        }
    }
}
