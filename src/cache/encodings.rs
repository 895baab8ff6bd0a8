//! The per-format encodings of one object version, built on first use and
//! kept within a byte budget.
//!
//! JSON is built when a shard applies an entry (every client reads it); the
//! other representations (protobuf, CBOR, YAML, and the metadata-only
//! `PartialObjectMetadata` in JSON and protobuf) are built from the JSON on
//! first use, by an encoder the caller passes (the encoders live in `api/`,
//! which knows the wire formats; this file only keeps their results), and
//! the `Bytes` are then shared by every GET, list page and watcher, as
//! Kubernetes' `cachingObject` shares its serializations.
//!
//! What they may hold is bounded: every kept encoding counts its bytes
//! against a [`DerivedBudget`] (the process's is set from
//! `--derived-encodings-bytes-max`); one that would pass it is served but not
//! kept, so the next request builds it again. Kept bytes are released when
//! the object version goes (the last handle dropped). An object that never
//! had another format costs one empty slot (two words).
//!
//! Invariants: no I/O; while an encoding is kept its builder does not run
//! again for that object version, even when several cores ask at once (the
//! build runs under the object's lock); a failed build (an object that has no
//! protobuf schema, say) is kept like a success, so it is not retried per
//! request; the budget's count is exactly the bytes kept. `encodings_built`
//! counts every build, by format.

use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
/// caching, at most one per object version while it is kept, however many
/// requests read it.
pub fn encodings_built(format: Format) -> u64 {
    BUILT[format.index()].load(Ordering::Relaxed)
}

/// The bytes derived encodings may keep, and the bytes they keep: shared by
/// every core (atomics only).
#[derive(Debug)]
pub struct DerivedBudget {
    held_bytes: AtomicU64,
    bytes_max: AtomicU64,
    /// Builds served but not kept because the budget was full.
    not_kept: AtomicU64,
}

impl DerivedBudget {
    pub const fn new(bytes_max: u64) -> DerivedBudget {
        DerivedBudget {
            held_bytes: AtomicU64::new(0),
            bytes_max: AtomicU64::new(bytes_max),
            not_kept: AtomicU64::new(0),
        }
    }

    pub fn held_bytes(&self) -> u64 {
        self.held_bytes.load(Ordering::Relaxed)
    }

    pub fn bytes_max(&self) -> u64 {
        self.bytes_max.load(Ordering::Relaxed)
    }

    pub fn not_kept(&self) -> u64 {
        self.not_kept.load(Ordering::Relaxed)
    }

    /// Counts `bytes` as kept if they fit.
    fn reserve(&self, bytes: u64) -> bool {
        let max = self.bytes_max();
        let fits = self
            .held_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes).filter(|total| *total <= max)
            })
            .is_ok();
        if !fits {
            self.not_kept.fetch_add(1, Ordering::Relaxed);
        }
        fits
    }

    fn release(&self, bytes: u64) {
        self.held_bytes.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The process's budget (unbounded until the runtime sets it from the
/// configuration).
static PROCESS_BUDGET: DerivedBudget = DerivedBudget::new(u64::MAX);

/// Sets the process's derived-encodings budget (`--derived-encodings-bytes-max`).
pub fn set_derived_bytes_max(bytes_max: u64) {
    PROCESS_BUDGET.bytes_max.store(bytes_max, Ordering::Relaxed);
}

/// Bytes the process's derived encodings keep now.
pub fn derived_bytes_held() -> u64 {
    PROCESS_BUDGET.held_bytes()
}

/// The process's derived-encodings budget.
pub fn derived_bytes_max() -> u64 {
    PROCESS_BUDGET.bytes_max()
}

/// Builds served but not kept because the process's budget was full.
pub fn derived_not_kept() -> u64 {
    PROCESS_BUDGET.not_kept()
}

fn encoded_bytes(encoded: &Encoded) -> u64 {
    match encoded {
        Ok(bytes) => bytes.len() as u64,
        Err(reason) => reason.len() as u64,
    }
}

/// The encodings one object version keeps, and the budget they count against.
#[derive(Debug)]
struct Kept {
    slots: [Option<Encoded>; COUNT],
    bytes: u64,
    budget: &'static DerivedBudget,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// The lazily built encodings of one object version.
#[derive(Debug, Default)]
pub struct Encodings {
    kept: Mutex<Option<Box<Kept>>>,
}

impl Encodings {
    /// The `format` encoding, built by `build` from the object's JSON the
    /// first time it is asked for; every later call returns a handle to the
    /// same bytes while the process's budget keeps them.
    pub fn get_or_build(&self, format: Format, json: &[u8], build: impl FnOnce(&[u8]) -> Encoded) -> Encoded {
        self.get_or_build_within(&PROCESS_BUDGET, format, json, build)
    }

    /// [`Encodings::get_or_build`] counting against `budget` (the first
    /// budget an object's encodings count against is theirs for good).
    pub fn get_or_build_within(
        &self,
        budget: &'static DerivedBudget,
        format: Format,
        json: &[u8],
        build: impl FnOnce(&[u8]) -> Encoded,
    ) -> Encoded {
        let mut kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(found) = kept.as_ref().and_then(|k| k.slots[format.index()].clone()) {
            return found;
        }
        BUILT[format.index()].fetch_add(1, Ordering::Relaxed);
        let encoded = build(json);
        let size = encoded_bytes(&encoded);
        let budget = kept.as_ref().map_or(budget, |k| k.budget);
        if budget.reserve(size) {
            let kept = kept.get_or_insert_with(|| Box::new(Kept { slots: Default::default(), bytes: 0, budget }));
            kept.slots[format.index()] = Some(encoded.clone());
            kept.bytes += size;
        }
        encoded
    }

    /// The encoding if it was built and is kept.
    pub fn get(&self, format: Format) -> Option<Encoded> {
        let kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.as_ref().and_then(|k| k.slots[format.index()].clone())
    }

    /// Bytes of the encodings kept.
    pub fn bytes(&self) -> u64 {
        let kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.as_ref().map_or(0, |k| k.bytes)
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
        assert_eq!(encodings.bytes(), 2);
        // A failure is remembered, not retried.
        let failing = |_: &[u8]| {
            calls.set(calls.get() + 1);
            Err("no schema".to_string())
        };
        assert!(encodings.get_or_build(Format::Protobuf, b"{}", failing).is_err());
        assert!(encodings.get_or_build(Format::Protobuf, b"{}", failing).is_err());
        assert_eq!(calls.get(), 2);
    }

    /// Past the budget an encoding is served but not kept (built again next
    /// time); kept bytes are counted exactly and released with the object.
    #[test]
    fn the_budget_bounds_what_is_kept() {
        let budget: &'static DerivedBudget = Box::leak(Box::new(DerivedBudget::new(10)));
        let build = |json: &[u8]| Ok(Bytes::from(json.to_vec()));
        let first = Encodings::default();
        assert_eq!(first.get_or_build_within(budget, Format::Cbor, b"123456", build).unwrap().len(), 6);
        assert_eq!(budget.held_bytes(), 6);
        let second = Encodings::default();
        let calls = Cell::new(0);
        let counting = |json: &[u8]| {
            calls.set(calls.get() + 1);
            Ok(Bytes::from(json.to_vec()))
        };
        assert!(second.get_or_build_within(budget, Format::Cbor, b"12345", counting).is_ok());
        assert!(second.get_or_build_within(budget, Format::Cbor, b"12345", counting).is_ok());
        assert_eq!(calls.get(), 2, "not kept: 6 + 5 > 10");
        assert!(second.get(Format::Cbor).is_none());
        assert_eq!((budget.held_bytes(), budget.not_kept()), (6, 2));
        assert!(second.get_or_build_within(budget, Format::Yaml, b"1234", build).is_ok());
        assert_eq!(budget.held_bytes(), 10);
        drop(first);
        assert_eq!(budget.held_bytes(), 4, "released with the object");
        assert!(second.get_or_build_within(budget, Format::Cbor, b"12345", counting).is_ok());
        assert_eq!((calls.get(), second.bytes(), budget.held_bytes()), (3, 9, 9));
        drop(second);
        assert_eq!(budget.held_bytes(), 0);
    }
}
