//! The per-format encodings of one object version, each built at most once.
//!
//! JSON is built when a shard applies an entry (every client reads it); the
//! other representations (protobuf, CBOR, YAML, and the metadata-only
//! `PartialObjectMetadata` in JSON and protobuf) are built from the JSON on
//! first use, by an encoder the caller passes (the encoders live in `api/`,
//! which knows the wire formats; this file only keeps their results), and
//! the `Bytes` are then shared by every GET, list page and watcher, as
//! Kubernetes' `cachingObject` shares its serializations.
//!
//! Invariants: no I/O; a format's builder runs at most once per object version
//! (`OnceLock`), even when several cores ask at once; a failed build (an
//! object that has no protobuf schema, say) is remembered too, so it is not
//! retried per request. `encodings_built` counts every build, by format.

use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// A representation kept beside the JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `application/vnd.kubernetes.protobuf`: the whole `k8s\0` envelope.
    Protobuf,
    /// `application/cbor`: one self-described data item.
    Cbor,
    /// `application/yaml`: one document.
    Yaml,
    /// The YAML document indented as an element of a list's `items:`, so a
    /// YAML list page is its head, the items' cached bytes and its tail.
    YamlListItem,
    /// The object's `PartialObjectMetadata` (meta.k8s.io/v1) as JSON: a copy
    /// of its metadata behind a fixed head (`api/metadata.rs`).
    MetadataJson,
    /// The same in protobuf: the `k8s\0` envelope of a
    /// `PartialObjectMetadata` message (its `ObjectMeta`).
    MetadataProtobuf,
}

impl Format {
    const ALL: [Format; COUNT] = [
        Format::Protobuf,
        Format::Cbor,
        Format::Yaml,
        Format::YamlListItem,
        Format::MetadataJson,
        Format::MetadataProtobuf,
    ];

    fn index(self) -> usize {
        match self {
            Format::Protobuf => 0,
            Format::Cbor => 1,
            Format::Yaml => 2,
            Format::YamlListItem => 3,
            Format::MetadataJson => 4,
            Format::MetadataProtobuf => 5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Protobuf => "protobuf",
            Format::Cbor => "cbor",
            Format::Yaml => "yaml",
            Format::YamlListItem => "yaml-list-item",
            Format::MetadataJson => "metadata-json",
            Format::MetadataProtobuf => "metadata-protobuf",
        }
    }

    pub fn all() -> [Format; COUNT] {
        Format::ALL
    }
}

/// How many formats are kept beside the JSON.
const COUNT: usize = 6;

/// The result of one build: the bytes, or why the object has none in this
/// format (kept as text; the caller turns it into its own error).
pub type Encoded = Result<Bytes, String>;

/// Builds done since the process started, by format (`Format::index`).
static BUILT: [AtomicU64; COUNT] = [const { AtomicU64::new(0) }; COUNT];

/// How many encodings of `format` have been built in this process: with
/// caching, at most one per object version, however many requests read it.
pub fn encodings_built(format: Format) -> u64 {
    BUILT[format.index()].load(Ordering::Relaxed)
}

/// The lazily built encodings of one object version.
#[derive(Debug, Default)]
pub struct Encodings {
    slots: [OnceLock<Encoded>; COUNT],
}

impl Encodings {
    /// The `format` encoding, built by `build` from the object's JSON the
    /// first time it is asked for; every later call returns a handle to the
    /// same bytes.
    pub fn get_or_build(&self, format: Format, json: &[u8], build: impl FnOnce(&[u8]) -> Encoded) -> Encoded {
        self.slots[format.index()]
            .get_or_init(|| {
                BUILT[format.index()].fetch_add(1, Ordering::Relaxed);
                build(json)
            })
            .clone()
    }

    /// The encoding if it was already built.
    pub fn get(&self, format: Format) -> Option<&Encoded> {
        self.slots[format.index()].get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn each_format_is_built_once_and_shared() {
        let encodings = Encodings::default();
        let calls = Cell::new(0);
        let build = |json: &[u8]| {
            calls.set(calls.get() + 1);
            Ok(Bytes::from(json.to_vec()))
        };
        let before = encodings_built(Format::Cbor);
        let first = encodings.get_or_build(Format::Cbor, b"{}", build).unwrap();
        let second = encodings.get_or_build(Format::Cbor, b"{}", build).unwrap();
        assert_eq!(calls.get(), 1);
        assert_eq!(first.as_ptr(), second.as_ptr(), "the same bytes, not a copy");
        assert!(encodings_built(Format::Cbor) > before);
        assert!(encodings.get(Format::Yaml).is_none());
        // A failure is remembered, not retried.
        let failing = |_: &[u8]| {
            calls.set(calls.get() + 1);
            Err("no schema".to_string())
        };
        assert!(encodings.get_or_build(Format::Protobuf, b"{}", failing).is_err());
        assert!(encodings.get_or_build(Format::Protobuf, b"{}", failing).is_err());
        assert_eq!(calls.get(), 2);
    }
}
