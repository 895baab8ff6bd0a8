//! Conversion between the versions kube-apiserver serves from one store:
//! core/v1 Events and events.k8s.io/v1 Events (kube's
//! `pkg/apis/events/v1/conversion.go`: both convert to the internal core
//! Event), and autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers
//! (`pkg/apis/autoscaling/v1/conversion.go`, the v1 form keeping what it
//! cannot express in annotations).
//!
//! Functions of JSON objects; the fields come out in the order they were
//! found, and the caller puts them in the target kind's Go order
//! (`strategy::decode::order`).
//!
//! Invariant: pure, no I/O; any JSON converts without panicking (fields of
//! the wrong type are carried over as they are).

use serde_json::{Map, Value};

/// The renames between events.k8s.io/v1 and core/v1 Event fields.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn rename(object: &Value, pairs: &[(&str, &str)], forward: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(map) = object.as_object() else { return out };
    for (key, value) in map {
        let renamed = pairs
            .iter()
            .find(|(v1, core)| if forward { v1 == key } else { core == key })
            .map(|(v1, core)| if forward { *core } else { *v1 })
            .unwrap_or(key);
        out.insert(renamed.to_string(), value.clone());
    }
    out
}

/// An events.k8s.io/v1 Event as the core/v1 Event kube serves for it.
pub fn event_to_core(event: &Value) -> Map<String, Value> {
    let mut out = rename(event, EVENT_FIELDS, true);
    if out.contains_key("apiVersion") {
        out.insert("apiVersion".into(), Value::String("v1".into()));
    }
    out
}

/// A core/v1 Event as the events.k8s.io/v1 Event kube serves for it.
pub fn event_from_core(event: &Value) -> Map<String, Value> {
    let mut out = rename(event, EVENT_FIELDS, false);
    if out.contains_key("apiVersion") {
        out.insert("apiVersion".into(), Value::String("events.k8s.io/v1".into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // tests/fixtures/kube-v1.36/lists: the same Event in both lists.
    #[test]
    fn events_convert_both_ways() {
        let v1 = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
            "eventTime": "2026-11-25T12:00:00.000000Z", "reportingController": "c", "reportingInstance": "i",
            "action": "Started", "reason": "Started", "regarding": {"kind": "Pod", "name": "p"}, "note": "hi",
            "type": "Normal", "deprecatedSource": {}, "deprecatedFirstTimestamp": null, "deprecatedCount": 3});
        let core = Value::Object(event_to_core(&v1));
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"], json!({"kind": "Pod", "name": "p"}));
        assert_eq!(core["message"], "hi");
        assert_eq!(core["reportingComponent"], "c");
        assert_eq!(core["source"], json!({}));
        assert_eq!(core["count"], 3);
        assert!(core.get("firstTimestamp").is_some_and(Value::is_null));
        assert_eq!(Value::Object(event_from_core(&core)), v1);
        assert!(event_to_core(&json!("not an object")).is_empty());
    }
}
