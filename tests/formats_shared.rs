//! Encode once: an object version's protobuf, CBOR and YAML bytes are built
//! at most once and shared by every watcher of the event (and every list
//! page and get, which read the same `CachedObject`).

use bytes::Bytes;
use shardline::api::encode;
use shardline::api::negotiate::Representation;
use shardline::log::{Entry, Operation, Revision};
use shardline::store::FieldIndex;
use shardline::types::key::ObjectKey;
use shardline::watch::{EventSink, WatchEvent, WatchFilter, WatchHub};
use std::cell::RefCell;
use std::rc::Rc;

struct Collect(Rc<RefCell<Vec<WatchEvent>>>);

impl EventSink for Collect {
    fn offer(&mut self, event: WatchEvent) -> bool {
        self.0.borrow_mut().push(event);
        true
    }
}

struct NoFields;

impl FieldIndex for NoFields {
    fn selectable_fields(&self, _group: &str, _resource: &str) -> &[String] {
        &[]
    }
}

#[test]
fn every_watcher_of_an_event_shares_one_encoding_per_format() {
    let mut hub = WatchHub::new(Revision(0), 60_000, 1_000);
    let prefix = Bytes::from(ObjectKey::new("", "configmaps", "ns", "").encode().to_vec());
    let sinks: Vec<Rc<RefCell<Vec<WatchEvent>>>> = (0..3).map(|_| Rc::default()).collect();
    for sink in &sinks {
        let filter = WatchFilter { prefix: prefix.clone(), matches: None, bookmarks: None, name: None, trigger: None };
        hub.start(filter, Box::new(Collect(sink.clone())), Revision(0), 0, &NoFields).unwrap();
    }
    let key = ObjectKey::new("", "configmaps", "ns", "a").encode();
    let value = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}"#;
    let entry = Entry {
        revision: Revision(1),
        key,
        operation: Operation::Put(Bytes::from_static(value)),
        create_revision: Revision(1),
        previous: None,
    };
    hub.dispatch(&[entry], 0, &NoFields);
    for representation in [Representation::Protobuf, Representation::Cbor] {
        let frames: Vec<Vec<Bytes>> = sinks
            .iter()
            .map(|sink| {
                let event = sink.borrow()[0].clone();
                encode::watch_event(&representation, "ADDED", event.source.as_deref(), &event.object).unwrap()
            })
            .collect();
        // The object part of every watcher's frame is the same allocation.
        let object = |f: &Vec<Bytes>| f.last().unwrap().as_ptr();
        assert_eq!(object(&frames[0]), object(&frames[1]), "{representation:?}");
        assert_eq!(object(&frames[1]), object(&frames[2]), "{representation:?}");
    }
    let sources: Vec<_> = sinks.iter().map(|s| s.borrow()[0].source.clone().unwrap()).collect();
    assert!(std::sync::Arc::ptr_eq(&sources[0], &sources[2]), "one cached object per event on a shard");
    assert!(sources[0].encodings.get(shardline::cache::Format::Protobuf).is_some());
    assert!(sources[0].encodings.get(shardline::cache::Format::Yaml).is_none(), "built only when asked for");
}
