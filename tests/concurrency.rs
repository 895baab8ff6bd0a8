//! Concurrent clients against the real binary, over several connections (so
//! several shards accept them): optimistic concurrency must be exact — every
//! read-modify-write that was acknowledged is counted once, none is lost — and
//! every acknowledged create survives a SIGKILL. Bounded by counts, not time.

mod common;

use common::{configmap, resource_version, Server};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const THREADS: usize = 6;
const INCREMENTS_PER_THREAD: u64 = 25;
const CREATES_PER_THREAD: usize = 30;

#[test]
fn concurrent_read_modify_write_loses_no_update() {
    let mut s = Server::start();
    let r = s.post_json(CM, &configmap("counter", &[("n", "0")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let conflicts = Arc::new(AtomicU64::new(0));

    thread::scope(|scope| {
        for t in 0..THREADS {
            let s = &s;
            let conflicts = conflicts.clone();
            scope.spawn(move || {
                // Creates with distinct names, spread over connections.
                for i in 0..CREATES_PER_THREAD {
                    let r = s.post_json(CM, &configmap(&format!("t{t}-{i}"), &[("i", &i.to_string())]));
                    assert_eq!(r.status, 201, "create t{t}-{i}: {}", r.text());
                }
                // Increments with the resourceVersion read: a 409 means retry.
                let mut done = 0;
                while done < INCREMENTS_PER_THREAD {
                    let current = s.get_ok(&format!("{CM}/counter"));
                    let n: u64 = current["data"]["n"].as_str().unwrap().parse().unwrap();
                    let mut next = current.clone();
                    next["data"]["n"] = json!((n + 1).to_string());
                    let r = s.put_json(&format!("{CM}/counter"), &next);
                    match r.status {
                        200 => {
                            assert_ne!(resource_version(&r.json()), resource_version(&current));
                            done += 1;
                        }
                        409 => {
                            assert_eq!(r.json()["reason"], "Conflict");
                            conflicts.fetch_add(1, Ordering::Relaxed);
                        }
                        other => panic!("update answered {other}: {}", r.text()),
                    }
                }
            });
        }
    });

    let expected = THREADS as u64 * INCREMENTS_PER_THREAD;
    let counter = s.get_ok(&format!("{CM}/counter"));
    assert_eq!(counter["data"]["n"], json!(expected.to_string()), "an acknowledged update was lost");
    eprintln!("{} conflicts retried", conflicts.load(Ordering::Relaxed));

    let list = s.get_ok(CM);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), THREADS * CREATES_PER_THREAD + 1);
    // The list is in key order and its resourceVersion covers every item.
    let list_rv: u64 = list["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    let names: Vec<&str> = items.iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for item in items {
        let rv: u64 = resource_version(item).parse().unwrap();
        assert!(rv <= list_rv, "item newer than its list: {item}");
    }

    // Every acknowledged object survives SIGKILL with the same version.
    let before: Vec<Value> = items.clone();
    s.kill();
    s.restart();
    let after = s.get_ok(CM);
    assert_eq!(after["items"].as_array().unwrap(), &before);
}
