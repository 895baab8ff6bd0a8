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
//! `--derived-encodings-bytes-max`). When a new one would pass it, the oldest
//! encodings this core kept are dropped first (each core remembers, in the
//! order it kept them, weak handles to what it kept: no queue is shared
//! between cores); if that does not make room (the other cores hold the
//! budget), the new one is served but not kept, so the next request builds it
//! again. Kept bytes are released when the object version goes (the last
//! handle dropped) or when dropped for room. An object that never had another
//! format costs one empty slot (two words).
//!
//! Invariants: no I/O; while an encoding is kept its builder does not run
//! again for that object version, even when several cores ask at once (the
//! build runs under the object's lock; dropping another object's encoding
//! only tries its lock, so two builders never wait for each other); a failed
//! build (an object that has no protobuf schema, say) is kept like a success,
//! so it is not retried per request; the budget's count is exactly the bytes
//! kept. `encodings_built` counts every build, by format.

use bytes::Bytes;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The most kept encodings one build drops to make room for itself: bounds
/// the work a request does for the budget.
const EVICTIONS_PER_BUILD_MAX: usize = 64;
/// A core's record of what it kept is compacted (dead handles removed) when
/// it reaches this length, then at twice its live length.
const KEPT_ORDER_COMPACT_AT: usize = 4096;

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
    /// Kept encodings dropped, oldest first, to make room for newer ones.
    evicted: AtomicU64,
}

impl DerivedBudget {
    pub const fn new(bytes_max: u64) -> DerivedBudget {
        DerivedBudget {
            held_bytes: AtomicU64::new(0),
            bytes_max: AtomicU64::new(bytes_max),
            not_kept: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
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

    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Counts `bytes` as kept if they fit.
    fn try_reserve(&self, bytes: u64) -> bool {
        let max = self.bytes_max();
        self.held_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes).filter(|total| *total <= max)
            })
            .is_ok()
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

/// Kept encodings dropped (oldest first) to make room in the process's budget.
pub fn derived_evicted() -> u64 {
    PROCESS_BUDGET.evicted()
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

impl Kept {
    /// Drops the `format` encoding, releasing its bytes; returns whether one was kept.
    fn drop_slot(&mut self, format: usize) -> bool {
        let Some(encoded) = self.slots[format].take() else { return false };
        let size = encoded_bytes(&encoded);
        self.bytes -= size;
        self.budget.release(size);
        true
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// The lock and slots of one object version's encodings, made on the first
/// build: weak handles to it are how a core finds what it kept.
#[derive(Debug)]
struct Slots {
    kept: Mutex<Kept>,
}

/// What one core kept, oldest first: a weak handle to the object's slots and
/// the format, per kept encoding, for each budget it kept under.
struct KeptOrder {
    budget: &'static DerivedBudget,
    order: VecDeque<(Weak<Slots>, usize)>,
    compact_at: usize,
}

thread_local! {
    static KEPT_ORDER: RefCell<Vec<KeptOrder>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this core's order for `budget`.
fn with_order<R>(budget: &'static DerivedBudget, f: impl FnOnce(&mut KeptOrder) -> R) -> R {
    KEPT_ORDER.with(|orders| {
        let mut orders = orders.borrow_mut();
        let index = match orders.iter().position(|o| std::ptr::eq(o.budget, budget)) {
            Some(index) => index,
            None => {
                orders.push(KeptOrder { budget, order: VecDeque::new(), compact_at: KEPT_ORDER_COMPACT_AT });
                orders.len() - 1
            }
        };
        f(&mut orders[index])
    })
}

impl KeptOrder {
    fn remember(&mut self, slots: &Arc<Slots>, format: usize) {
        self.order.push_back((Arc::downgrade(slots), format));
        // Handles of versions gone since are removed from the front as
        // they come, and everywhere once the record doubles.
        while self.order.front().is_some_and(|(weak, _)| weak.strong_count() == 0) {
            self.order.pop_front();
        }
        if self.order.len() >= self.compact_at {
            self.order.retain(|(weak, _)| weak.strong_count() > 0);
            self.compact_at = (2 * self.order.len()).max(KEPT_ORDER_COMPACT_AT);
        }
    }

    /// Drops the oldest encodings this core kept (never `own`'s: its lock is
    /// held by the caller) until `bytes` fit in the budget; false when they
    /// still do not.
    fn make_room(&mut self, own: &Arc<Slots>, bytes: u64) -> bool {
        let mut skipped = Vec::new();
        let mut evictions = 0;
        let mut fits = false;
        while evictions < EVICTIONS_PER_BUILD_MAX {
            let Some((weak, format)) = self.order.pop_front() else { break };
            let Some(slots) = weak.upgrade() else { continue };
            if Arc::ptr_eq(&slots, own) {
                skipped.push((weak, format));
                continue;
            }
            // Another core may be building for that object: leave it.
            let Ok(mut kept) = slots.kept.try_lock() else {
                skipped.push((weak, format));
                continue;
            };
            if kept.drop_slot(format) {
                evictions += 1;
                self.budget.evicted.fetch_add(1, Ordering::Relaxed);
            }
            drop(kept);
            if self.budget.try_reserve(bytes) {
                fits = true;
                break;
            }
        }
        // What could not be dropped now stays the oldest.
        for entry in skipped.into_iter().rev() {
            self.order.push_front(entry);
        }
        fits
    }
}

/// The lazily built encodings of one object version.
#[derive(Debug, Default)]
pub struct Encodings {
    slots: OnceLock<Arc<Slots>>,
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
        let slots = self
            .slots
            .get_or_init(|| Arc::new(Slots { kept: Mutex::new(Kept { slots: Default::default(), bytes: 0, budget }) }));
        let mut kept = slots.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let index = format.index();
        if let Some(found) = kept.slots[index].clone() {
            return found;
        }
        BUILT[index].fetch_add(1, Ordering::Relaxed);
        let encoded = build(json);
        let size = encoded_bytes(&encoded);
        let budget = kept.budget;
        // Nothing is dropped for what could never fit.
        let fits = budget.try_reserve(size)
            || (size <= budget.bytes_max() && with_order(budget, |order| order.make_room(slots, size)));
        if fits {
            kept.slots[index] = Some(encoded.clone());
            kept.bytes += size;
            with_order(budget, |order| order.remember(slots, index));
        } else {
            budget.not_kept.fetch_add(1, Ordering::Relaxed);
        }
        encoded
    }

    /// The encoding if it was built and is kept.
    pub fn get(&self, format: Format) -> Option<Encoded> {
        let slots = self.slots.get()?;
        let kept = slots.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.slots[format.index()].clone()
    }

    /// Bytes of the encodings kept.
    pub fn bytes(&self) -> u64 {
        let Some(slots) = self.slots.get() else { return 0 };
        let kept = slots.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.bytes
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

    /// Past the budget the oldest encodings this core kept are dropped for
    /// a new one; kept bytes are counted exactly and released with the
    /// object or when dropped.
    #[test]
    fn the_oldest_kept_go_first_past_the_budget() {
        let budget: &'static DerivedBudget = Box::leak(Box::new(DerivedBudget::new(10)));
        let build = |json: &[u8]| Ok(Bytes::from(json.to_vec()));
        let first = Encodings::default();
        let second = Encodings::default();
        assert_eq!(first.get_or_build_within(budget, Format::Cbor, b"1234", build).unwrap().len(), 4);
        assert_eq!(second.get_or_build_within(budget, Format::Cbor, b"12345", build).unwrap().len(), 5);
        assert_eq!(budget.held_bytes(), 9);
        // A third needs 3 bytes more than are free: the oldest (first's) goes.
        let third = Encodings::default();
        assert!(third.get_or_build_within(budget, Format::Yaml, b"1234", build).is_ok());
        assert_eq!((first.get(Format::Cbor), first.bytes()), (None, 0));
        assert!(second.get(Format::Cbor).is_some() && third.get(Format::Yaml).is_some());
        assert_eq!((budget.held_bytes(), budget.evicted(), budget.not_kept()), (9, 1, 0));
        // Asked again, the dropped one is built again and kept, dropping
        // the next oldest (second's).
        let calls = Cell::new(0);
        let counting = |json: &[u8]| {
            calls.set(calls.get() + 1);
            Ok(Bytes::from(json.to_vec()))
        };
        assert!(first.get_or_build_within(budget, Format::Cbor, b"1234", counting).is_ok());
        assert!(first.get_or_build_within(budget, Format::Cbor, b"1234", counting).is_ok());
        assert_eq!(calls.get(), 1, "kept again after one build");
        assert!(second.get(Format::Cbor).is_none());
        assert_eq!((budget.held_bytes(), budget.evicted()), (8, 2));
        // Bigger than the whole budget: served, not kept, nothing dropped.
        assert!(second.get_or_build_within(budget, Format::Protobuf, b"12345678901", counting).is_ok());
        assert_eq!((budget.not_kept(), budget.held_bytes()), (1, 8));
        // An object never drops its own encodings (its lock is held) for room.
        let alone: &'static DerivedBudget = Box::leak(Box::new(DerivedBudget::new(6)));
        let only = Encodings::default();
        assert!(only.get_or_build_within(alone, Format::Cbor, b"1234", build).is_ok());
        assert!(only.get_or_build_within(alone, Format::Yaml, b"1234", build).is_ok());
        assert_eq!((only.bytes(), alone.not_kept(), alone.evicted()), (4, 1, 0));
        drop(only);
        assert_eq!(alone.held_bytes(), 0, "released with the object");
        drop((first, second, third));
        assert_eq!(budget.held_bytes(), 0);
    }

    /// A core drops only what it kept itself: what another core holds is
    /// not reached (no queue is shared), so past the budget the new one is
    /// served and not kept.
    #[test]
    fn a_core_drops_only_what_it_kept() {
        let budget: &'static DerivedBudget = Box::leak(Box::new(DerivedBudget::new(10)));
        let held = std::thread::spawn(move || {
            let other = Encodings::default();
            other.get_or_build_within(budget, Format::Cbor, b"1234567890", |j| Ok(Bytes::from(j.to_vec()))).unwrap();
            other
        })
        .join()
        .unwrap();
        let mine = Encodings::default();
        assert!(mine.get_or_build_within(budget, Format::Cbor, b"12", |j| Ok(Bytes::from(j.to_vec()))).is_ok());
        assert_eq!((mine.bytes(), held.bytes(), budget.not_kept(), budget.evicted()), (0, 10, 1, 0));
        drop(held);
        assert!(mine.get_or_build_within(budget, Format::Cbor, b"12", |j| Ok(Bytes::from(j.to_vec()))).is_ok());
        assert_eq!((mine.bytes(), budget.held_bytes()), (2, 2));
    }

    /// Handles of versions gone are removed, so a core's record stays
    /// proportional to what it keeps.
    #[test]
    fn the_record_of_what_was_kept_forgets_the_dead() {
        let budget: &'static DerivedBudget = Box::leak(Box::new(DerivedBudget::new(u64::MAX)));
        for _ in 0..3 * KEPT_ORDER_COMPACT_AT {
            let gone = Encodings::default();
            gone.get_or_build_within(budget, Format::Cbor, b"x", |j| Ok(Bytes::from(j.to_vec()))).unwrap();
        }
        let live = with_order(budget, |order| order.order.len());
        assert!(live <= 1, "{live} handles kept for versions that are gone");
    }
}
