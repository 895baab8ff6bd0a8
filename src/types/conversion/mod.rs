//! Conversion between the versions kube-apiserver serves from one store.
//!
//! Shared stores: a group/version/resource whose objects are another
//! resource's, kept under that resource's keys in its version
//! ([`stored_as`]). kube-apiserver has one: events.k8s.io/v1 Events are core
//! Events (`/registry/events/NS/NAME`), written and read through
//! `pkg/apis/events/v1/conversion.go` (both convert to the internal core
//! Event, whose JSON names are core/v1's). A write through the served
//! version is converted to the stored one ([`to_storage`]) after the typed
//! layer ran, a read converted back ([`from_storage`]), and a field selector's
//! labels renamed to the stored object's ([`stored_field_label`]).
//! The other is autoscaling/v1 HorizontalPodAutoscalers, kept as
//! autoscaling/v2 ones (kube's storage version; the same keys, since the
//! group is the same), converted as `pkg/apis/autoscaling/v1/conversion.go`
//! does ([`autoscaling`]: v1's CPU target a v2 metric, the rest of v2 in
//! v1's annotations).
//!
//! Functions of JSON objects; the fields come out in the order they were
//! found, and the caller puts them in the target kind's Go order and drops
//! what the target's Go encoder omits (`strategy::decode::normalize`).
//!
//! Invariant: pure, no I/O; any JSON converts without panicking (fields of
//! the wrong type are carried over as they are); converting to the stored
//! version and back gives the object again.

pub mod autoscaling;

use serde_json::{Map, Value};

/// Where the objects of a served group/version/resource are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredAs {
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    pub kind: &'static str,
}

/// The served (group, version, resource) kept as another resource's objects.
const SHARED_STORES: &[((&str, &str, &str), StoredAs)] = &[
    (("events.k8s.io", "v1", "events"), StoredAs { group: "", version: "v1", resource: "events", kind: "Event" }),
    (
        ("autoscaling", "v1", "horizontalpodautoscalers"),
        StoredAs {
            group: "autoscaling",
            version: "v2",
            resource: "horizontalpodautoscalers",
            kind: "HorizontalPodAutoscaler",
        },
    ),
];

/// The resource whose store holds the objects of (group, version, resource),
/// when it is not its own.
pub fn stored_as(group: &str, version: &str, resource: &str) -> Option<StoredAs> {
    SHARED_STORES.iter().find(|((g, v, r), _)| *g == group && *v == version && *r == resource).map(|(_, s)| *s)
}

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

/// An object of the served (group, version, kind) as its store keeps it;
/// `None` when that version is its own store.
pub fn to_storage(group: &str, version: &str, kind: &str, object: &Value) -> Option<Map<String, Value>> {
    match (group, version, kind) {
        ("events.k8s.io", "v1", "Event") => Some(event_to_core(object)),
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => Some(autoscaling::to_v2(object)),
        _ => None,
    }
}

/// A stored object as the served (group, version, kind) shows it; `None`
/// when that version is its own store.
pub fn from_storage(group: &str, version: &str, kind: &str, object: &Value) -> Option<Map<String, Value>> {
    match (group, version, kind) {
        ("events.k8s.io", "v1", "Event") => Some(event_from_core(object)),
        // An object an older build kept as written through v1 is served as it is.
        ("autoscaling", "v1", "HorizontalPodAutoscaler")
            if object.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") =>
        {
            object.as_object().cloned()
        }
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => Some(autoscaling::to_v1(object)),
        _ => None,
    }
}

/// The annotations of the served (group, version, kind) that conversion
/// reads fields from (kube reads them when it decodes the request, so a
/// status write takes them from the request, not from the stored object).
pub fn round_trip_annotations(group: &str, version: &str, kind: &str) -> &'static [&'static str] {
    match (group, version, kind) {
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => &autoscaling::ROUND_TRIP_ANNOTATIONS,
        _ => &[],
    }
}

/// A field selector's label of the served (group, version, resource) as the
/// stored object's selectable field (kube's field label conversion: a
/// `regarding.name=x` on events.k8s.io selects core `involvedObject.name`).
pub fn stored_field_label(group: &str, version: &str, resource: &str, label: &str) -> String {
    if (group, version, resource) == ("events.k8s.io", "v1", "events") {
        if let Some(rest) = label.strip_prefix("regarding.") {
            return format!("involvedObject.{rest}");
        }
        if label == "reportingController" {
            return "reportingComponent".into();
        }
    }
    label.to_string()
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

    #[test]
    fn events_and_v1_hpas_share_a_store() {
        let stored = stored_as("events.k8s.io", "v1", "events").unwrap();
        assert_eq!((stored.group, stored.version, stored.resource, stored.kind), ("", "v1", "events", "Event"));
        assert_eq!(stored_as("", "v1", "events"), None);
        let hpa = stored_as("autoscaling", "v1", "horizontalpodautoscalers").unwrap();
        assert_eq!((hpa.group, hpa.version, hpa.resource), ("autoscaling", "v2", "horizontalpodautoscalers"));
        assert_eq!(stored_as("autoscaling", "v2", "horizontalpodautoscalers"), None);
        assert_eq!(
            to_storage(
                "autoscaling",
                "v1",
                "HorizontalPodAutoscaler",
                &serde_json::json!({"apiVersion": "autoscaling/v1"})
            )
            .unwrap()["apiVersion"],
            "autoscaling/v2"
        );
        assert!(to_storage("", "v1", "Event", &json!({})).is_none());
        assert!(from_storage("apps", "v1", "Deployment", &json!({})).is_none());
    }

    #[test]
    fn field_labels_name_the_core_fields() {
        let label = |l: &str| stored_field_label("events.k8s.io", "v1", "events", l);
        assert_eq!(label("regarding.name"), "involvedObject.name");
        assert_eq!(label("regarding.fieldPath"), "involvedObject.fieldPath");
        assert_eq!(label("reportingController"), "reportingComponent");
        assert_eq!(label("reason"), "reason");
        assert_eq!(label("metadata.name"), "metadata.name");
        assert_eq!(stored_field_label("", "v1", "events", "reportingController"), "reportingController");
    }
}
