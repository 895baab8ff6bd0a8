//! Objects read and written in a version other than the one they are kept
//! in: a custom resource in a served version other than its storage version
//! (converted by `apiVersion` alone: the `None` strategy), and a built-in
//! resource kept in another resource's store (events.k8s.io/v1 Events are
//! core/v1 Events, autoscaling/v1 HorizontalPodAutoscalers autoscaling/v2
//! ones: `types::conversion`, with the Go form of the target kind from
//! `strategy::stored_form`/`served_form`).
//!
//! Every handler reads through [`convert`] (or [`served_object`]) and
//! writes through [`to_storage`], so a write through either version is seen
//! through both, with the same resourceVersions (one key, one revision).
//!
//! Invariant: the stored bytes are shared (never copied) when the request
//! is for the stored version; a conversion never fails (what does not
//! decode is passed on as it is).

use crate::api::object::Object;
use crate::cache::CachedObject;
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;

/// Whether objects read through `info` need converting from what is stored.
pub fn needs_conversion(info: &ResourceInfo) -> bool {
    match &info.custom {
        Some(custom) => custom.storage_version != info.version,
        None => info.stored_as().is_some(),
    }
}

/// A stored encoded object as `info`'s version shows it: the same bytes
/// when no conversion is needed.
pub fn convert(info: &ResourceInfo, json: &Bytes) -> Bytes {
    if !needs_conversion(info) {
        return json.clone();
    }
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(json) else { return json.clone() };
    let converted = served_object(info, map);
    serde_json::to_vec(&converted).map(Bytes::from).unwrap_or_else(|_| json.clone())
}

/// A decoded stored object as `info`'s version shows it.
pub fn served_object(info: &ResourceInfo, mut stored: Object) -> Object {
    if info.custom.is_some() {
        if needs_conversion(info) {
            stored.insert("apiVersion".into(), Value::String(info.api_version()));
        }
        return stored;
    }
    crate::strategy::served_form(info, &stored).unwrap_or(stored)
}

/// The object to store for a write through `info` (already through the
/// typed layer and in `info`'s Go form): a built-in resource kept in another
/// resource's store gets that kind's form. Custom resources get their
/// storage version in `custom::prepare`, before their fields are recorded.
pub fn to_storage(info: &ResourceInfo, object: &mut Object) {
    if info.custom.is_none() {
        if let Some(stored) = crate::strategy::stored_form(info, object) {
            *object = stored;
        }
    }
}

/// A list page's objects as `info`'s version shows them, for a built-in
/// resource kept in another's store (the same keys and revisions, new
/// cached forms; custom resources convert their frames instead:
/// [`convert_item_frames`]). The same handles when nothing converts.
pub fn convert_objects(info: &ResourceInfo, objects: Vec<Arc<CachedObject>>) -> Vec<Arc<CachedObject>> {
    if info.custom.is_some() || info.stored_as().is_none() {
        return objects;
    }
    objects
        .into_iter()
        .map(|object| {
            let Ok(Value::Object(stored)) = serde_json::from_slice::<Value>(&object.json) else { return object };
            let mut served = served_object(info, stored);
            if let Some(Value::Object(meta)) = served.get_mut("metadata") {
                // Set again from the revision by the cache's encoder.
                meta.shift_remove("resourceVersion");
            }
            let Ok(bytes) = serde_json::to_vec(&served) else { return object };
            crate::cache::encode_stored(
                object.key.clone(),
                &bytes,
                object.mod_revision,
                object.create_revision,
                &info.selectable_fields,
            )
            .unwrap_or(object)
        })
        .collect()
}

/// The frames of a custom resource's list page (`head, item, ",", item,
/// ..., "]}"`: whole objects) with each item converted as [`convert`] does.
/// (A built-in resource's page is converted before framing:
/// [`convert_objects`].)
pub fn convert_item_frames(info: &ResourceInfo, mut frames: Vec<Bytes>) -> Vec<Bytes> {
    if info.custom.is_none() || !needs_conversion(info) || frames.len() < 3 {
        return frames;
    }
    let last = frames.len() - 1;
    for frame in &mut frames[1..last] {
        if frame.as_ref() != b"," {
            *frame = convert(info, frame);
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::registry::Registry;

    fn info(group: &str, version: &str, resource: &str) -> ResourceInfo {
        Registry::builtin().lookup(group, version, resource).unwrap().clone()
    }

    // tests/fixtures/kube-v1.36/lists: kube's answers for the same two
    // Events through core/v1 and events.k8s.io/v1, converted both ways byte
    // for byte (the list items carry no kind and apiVersion).
    #[test]
    fn kube_events_convert_both_ways_byte_for_byte() {
        let core: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/kube-v1.36/lists/core_v1_events.json")).unwrap();
        let v1: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/kube-v1.36/lists/events.k8s.io_v1_events.json"))
                .unwrap();
        let events = info("events.k8s.io", "v1", "events");
        let (core_items, v1_items) = (core["items"].as_array().unwrap(), v1["items"].as_array().unwrap());
        assert_eq!(core_items.len(), v1_items.len());
        assert!(!core_items.is_empty());
        for (stored, served) in core_items.iter().zip(v1_items) {
            let stored_bytes = Bytes::from(serde_json::to_vec(stored).unwrap());
            let served_bytes = serde_json::to_vec(served).unwrap();
            assert_eq!(
                String::from_utf8(convert(&events, &stored_bytes).to_vec()).unwrap(),
                String::from_utf8(served_bytes).unwrap()
            );
            let mut written = served.as_object().unwrap().clone();
            to_storage(&events, &mut written);
            assert_eq!(serde_json::to_string(&written).unwrap(), serde_json::to_string(stored).unwrap());
        }
        // The core resource is its own store: its bytes are shared.
        let pods = info("", "v1", "events");
        let bytes = Bytes::from_static(b"{\"kind\":\"Event\"}");
        assert!(!needs_conversion(&pods));
        assert_eq!(convert(&pods, &bytes).as_ptr(), bytes.as_ptr());
    }

    /// A core Event written the old way (no eventTime, a count, a source)
    /// shows kube's events.k8s.io/v1 form: `deprecated*` fields, empty
    /// reporting fields dropped (omitempty in events.k8s.io/v1), and back.
    #[test]
    fn legacy_core_events_show_their_deprecated_fields() {
        let events = info("events.k8s.io", "v1", "events");
        let stored = serde_json::json!({"kind": "Event", "apiVersion": "v1",
            "metadata": {"name": "p.1", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p"}, "reason": "Pulled",
            "message": "pulled", "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-11-25T12:00:00Z", "lastTimestamp": "2026-11-25T12:01:00Z", "count": 2,
            "type": "Normal", "eventTime": null, "reportingComponent": "", "reportingInstance": ""});
        let served: Value =
            serde_json::from_slice(&convert(&events, &Bytes::from(serde_json::to_vec(&stored).unwrap()))).unwrap();
        assert_eq!(
            serde_json::to_string(&served).unwrap(),
            concat!(
                r#"{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"p.1","namespace":"ns"},"#,
                r#""eventTime":null,"reason":"Pulled","#,
                r#""regarding":{"kind":"Pod","namespace":"ns","name":"p"},"note":"pulled","type":"Normal","#,
                r#""deprecatedSource":{"component":"kubelet","host":"n1"},"#,
                r#""deprecatedFirstTimestamp":"2026-11-25T12:00:00Z","#,
                r#""deprecatedLastTimestamp":"2026-11-25T12:01:00Z","deprecatedCount":2}"#
            )
        );
        let mut back = served.as_object().unwrap().clone();
        to_storage(&events, &mut back);
        assert_eq!(serde_json::to_string(&back).unwrap(), serde_json::to_string(&stored).unwrap());
    }
}
