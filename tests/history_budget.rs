//! The history byte budget through HTTP (`--history-bytes-max`): with a small
//! budget and a long history window, updates push the oldest superseded
//! versions out by bytes alone; a list at an old exact resourceVersion, or
//! continuing an old list, then gets kube's 410 Expired, and a watch from it
//! gets the 410 ERROR event, while reads and watches from recent revisions
//! are still served exactly. `/metrics` shows the bytes held within the
//! budget. The derived-encodings budget (`--derived-encodings-bytes-max`)
//! drops the oldest kept encodings for newer ones.

mod common;

use common::watch::Watch;
use common::{assert_status, configmap, resource_version, Launch, Server};
use serde_json::Value;

const CM: &str = "/api/v1/namespaces/default/configmaps";
/// The whole history budget: the stores get half each (two shards); the
/// watch history counts each update's value and previous value.
const BUDGET_BYTES: usize = 16_000;

fn url(params: &[(&str, &str)]) -> String {
    let query: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{CM}?{}", query.join("&"))
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

/// The value of each `shardline_memory_bytes` sample of `kind`.
fn memory_samples(metrics: &str, kind: &str) -> Vec<usize> {
    let prefix = format!("shardline_memory_bytes{{kind=\"{kind}\"");
    metrics.lines().filter(|l| l.starts_with(&prefix)).map(|l| l.rsplit(' ').next().unwrap().parse().unwrap()).collect()
}

#[test]
fn versions_past_the_byte_budget_are_410_while_recent_ones_are_served() {
    let s = Server::start_with(Launch {
        // The window alone would keep everything for an hour.
        extra_args: vec![
            "--history-window".into(),
            "1h".into(),
            "--history-bytes-max".into(),
            BUDGET_BYTES.to_string(),
        ],
        ..Launch::default()
    });
    let filler = "v".repeat(1000);
    let first = s.post_json(CM, &configmap("x", &[("v", &filler), ("n", "0")])).json();
    assert_eq!(s.post_json(CM, &configmap("y", &[])).status, 201);
    let old = resource_version(&first);
    let page = s.get_ok(&url(&[("limit", "1")]));
    let token = page["metadata"]["continue"].as_str().expect("a continue token").to_string();
    // Before the budget is passed, the old revision is exact.
    let at_old = s.get_ok(&url(&[("resourceVersion", &old), ("resourceVersionMatch", "Exact")]));
    assert_eq!(names(&at_old), ["x"]);

    // 40 updates of ~1 KB: far more than either half of the budget holds.
    let mut last = first;
    for n in 1..=40 {
        let r = s.put_json(&format!("{CM}/x"), &configmap("x", &[("v", &filler), ("n", &n.to_string())]));
        assert_eq!(r.status, 200, "{}", r.text());
        last = r.json();
    }
    let newest: u64 = resource_version(&last).parse().unwrap();

    // The old exact list, and the old list's continuation: 410 Expired.
    let status =
        assert_status(&s.get(&url(&[("resourceVersion", &old), ("resourceVersionMatch", "Exact")])), 410, "Expired");
    assert_eq!(status["message"], "The resourceVersion for the provided list is too old.", "{status}");
    let status = assert_status(&s.get(&url(&[("limit", "1"), ("continue", &token)])), 410, "Expired");
    assert!(status["metadata"]["continue"].as_str().is_some_and(|t| !t.is_empty()), "a fresh token: {status}");

    // A watch from the old revision: one ERROR event with a 410 Status, then the end.
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={old}"));
    let error = w.next();
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["code"], 410, "{error}");
    assert_eq!(error["object"]["reason"], "Expired", "{error}");
    assert!(error["object"]["message"].as_str().unwrap().starts_with("too old resource version"), "{error}");
    assert!(w.try_next().is_none(), "the stream ends after the error");

    // Recent revisions are still exact: the list one update back sees n=39 ...
    let previous = (newest - 1).to_string();
    let list = s.get_ok(&url(&[("resourceVersion", &previous), ("resourceVersionMatch", "Exact")]));
    assert_eq!(names(&list), ["x", "y"]);
    assert_eq!(list["items"][0]["data"]["n"], "39", "{}", list["items"][0]);
    // ... and a watch from there replays the last update, then goes on.
    let mut w = Watch::open(&s, &format!("{CM}?watch=1&resourceVersion={previous}"));
    let event = w.next();
    assert_eq!(event["type"], "MODIFIED", "{event}");
    assert_eq!(resource_version(&event["object"]), newest.to_string());
    assert_eq!(s.delete(&format!("{CM}/y")).status, 200);
    let event = w.next();
    assert_eq!((event["type"].as_str(), event["object"]["metadata"]["name"].as_str()), (Some("DELETED"), Some("y")));

    // The accounting: superseded JSON within each shard's half, watch
    // history within the budget, and the budget itself published.
    let metrics = s.get(&"/metrics".to_string()).text();
    let superseded = memory_samples(&metrics, "superseded_json");
    assert_eq!(superseded.len(), 2, "{metrics}");
    assert!(superseded.iter().all(|b| *b <= BUDGET_BYTES / 2), "{superseded:?}");
    let history = memory_samples(&metrics, "watch_history");
    assert!(history.iter().all(|b| *b > 0 && *b <= BUDGET_BYTES), "{history:?}");
    let live = memory_samples(&metrics, "live_json");
    assert!(live.iter().sum::<usize>() > filler.len(), "{live:?}");
    assert!(metrics.contains(&format!("shardline_history_bytes_max {BUDGET_BYTES}\n")), "{metrics}");
}

/// The value of the unlabelled sample of `name`.
fn counter(metrics: &str, name: &str) -> u64 {
    let prefix = format!("{name} ");
    metrics.lines().find_map(|l| l.strip_prefix(&prefix)).map_or(0, |v| v.trim().parse().unwrap())
}

/// The derived-encodings budget (`--derived-encodings-bytes-max`): protobuf
/// encodings of more objects than it holds are kept newest first (the oldest
/// dropped for room and counted), the bytes kept never pass it, and every
/// answer is still the right object.
#[test]
fn derived_encodings_past_their_budget_drop_the_oldest() {
    const DERIVED_BYTES_MAX: usize = 6_000;
    // One shard, so one core keeps them all and its oldest can be dropped.
    let s = Server::start_with(Launch {
        shards: Some(1),
        extra_args: vec!["--derived-encodings-bytes-max".into(), DERIVED_BYTES_MAX.to_string()],
        ..Launch::default()
    });
    let filler = "x".repeat(1_000);
    for i in 0..12 {
        assert_eq!(s.post_json(CM, &configmap(&format!("enc-{i:02}"), &[("v", &filler)])).status, 201);
    }
    let protobuf = [("Accept", "application/vnd.kubernetes.protobuf")];
    let mut first_answers = Vec::new();
    for i in 0..12 {
        let r = s.request("GET", &format!("{CM}/enc-{i:02}"), &protobuf, None);
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(r.body.starts_with(b"k8s\0"), "a protobuf envelope");
        let name = format!("enc-{i:02}");
        assert!(r.body.windows(name.len()).any(|w| w == name.as_bytes()), "the answer names {name}");
        first_answers.push(r.body.clone());
    }
    let metrics = s.get("/metrics").text();
    let held: usize = memory_samples(&metrics, "derived_encodings").iter().sum();
    assert!(held > 0 && held <= DERIVED_BYTES_MAX, "derived encodings hold {held} bytes of {DERIVED_BYTES_MAX}");
    let evicted = counter(&metrics, "shardline_derived_encodings_evicted_total");
    assert!(evicted >= 6, "12 encodings of ~1 KiB in a 6,000-byte budget: {evicted} dropped\n{metrics}");
    assert_eq!(counter(&metrics, "shardline_derived_encodings_not_kept_total"), 0);
    // Dropped or kept, every object answers the same bytes again.
    for (i, first) in first_answers.iter().enumerate() {
        let r = s.request("GET", &format!("{CM}/enc-{i:02}"), &protobuf, None);
        assert_eq!(&r.body, first, "enc-{i:02} answered differently once its encoding was dropped");
    }
}
