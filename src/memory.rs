//! The process's own memory accounting: a counting global allocator (the
//! heap bytes and allocations in use) and the resident set size, for
//! `/metrics` and for tests that hold memory per watch stream to a bound.
//!
//! [`CountingAllocator`] wraps the system allocator and counts, per thread,
//! the usable size (`malloc_usable_size`: what the allocator really set aside,
//! size-class rounding included) of every allocation made minus every one
//! freed. Each thread writes only its own counter slot (a plain load and
//! store, no locked instruction, its own cache line), so counting costs no
//! contention between shards; a reader sums the slots. Memory freed on
//! another thread than the one that allocated it makes one slot go down and
//! another up: only the sum means something, and it is exact.
//!
//! The binary installs it (`#[global_allocator]` in `main.rs`); in a process
//! that does not (unit tests, benches), [`heap`] is `None`.
//!
//! Invariants: the allocator itself never allocates (the slots are statics,
//! the thread's slot number a const thread-local without destructor); a
//! thread past the slots shares one overflow slot, updated atomically.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering::Relaxed};

/// Counter slots for threads (shards, the log, etcd's runtime, helpers).
/// A thread keeps its slot until the process ends; threads past this many
/// share the overflow slot.
const SLOTS: usize = 128;

/// One thread's counts, alone on its cache line.
#[repr(align(64))]
struct Slot {
    bytes: AtomicI64,
    allocations: AtomicI64,
}

impl Slot {
    const fn new() -> Slot {
        Slot { bytes: AtomicI64::new(0), allocations: AtomicI64::new(0) }
    }
}

static THREAD_SLOTS: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];
static OVERFLOW: Slot = Slot::new();
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
/// Set by the first allocation through [`CountingAllocator`].
static INSTALLED: AtomicBool = AtomicBool::new(false);

const UNASSIGNED: usize = usize::MAX;

thread_local! {
    /// This thread's slot (an index into `THREAD_SLOTS`, `SLOTS` for the
    /// overflow slot). Const and without destructor: usable from the
    /// allocator, and until the thread's very end.
    static MY_SLOT: Cell<usize> = const { Cell::new(UNASSIGNED) };
}

fn record(bytes: i64, allocations: i64) {
    let index = MY_SLOT
        .try_with(|mine| {
            if mine.get() == UNASSIGNED {
                let claimed = NEXT_SLOT.fetch_add(1, Relaxed);
                mine.set(claimed.min(SLOTS));
            }
            mine.get()
        })
        .unwrap_or(SLOTS);
    match THREAD_SLOTS.get(index) {
        // Only this thread writes its slot: a plain read-modify-write.
        Some(slot) => {
            slot.bytes.store(slot.bytes.load(Relaxed) + bytes, Relaxed);
            slot.allocations.store(slot.allocations.load(Relaxed) + allocations, Relaxed);
        }
        None => {
            OVERFLOW.bytes.fetch_add(bytes, Relaxed);
            OVERFLOW.allocations.fetch_add(allocations, Relaxed);
        }
    }
}

fn usable(ptr: *mut u8) -> i64 {
    // SAFETY: `ptr` came from the system allocator (glibc malloc,
    // posix_memalign or realloc) and has not been freed.
    unsafe { libc::malloc_usable_size(ptr.cast()) as i64 }
}

/// The system allocator, counting what is in use. See the module doc.
pub struct CountingAllocator;

// SAFETY: every call is forwarded to `System` unchanged; counting only reads
// the returned block's usable size and writes statics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            INSTALLED.store(true, Relaxed);
            record(usable(ptr), 1);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            INSTALLED.store(true, Relaxed);
            record(usable(ptr), 1);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(-usable(ptr), -1);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = usable(ptr);
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            record(usable(moved) - before, 0);
        }
        moved
    }
}

/// Heap memory in use, as the counting allocator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapStats {
    /// Usable bytes of the blocks allocated and not freed.
    pub bytes: u64,
    /// Blocks allocated and not freed.
    pub allocations: u64,
}

fn sum() -> (i64, i64) {
    THREAD_SLOTS
        .iter()
        .chain(std::iter::once(&OVERFLOW))
        .fold((0, 0), |(b, a), s| (b + s.bytes.load(Relaxed), a + s.allocations.load(Relaxed)))
}

/// The heap in use now; `None` when [`CountingAllocator`] is not this
/// process's global allocator.
pub fn heap() -> Option<HeapStats> {
    if !INSTALLED.load(Relaxed) {
        return None;
    }
    let (bytes, allocations) = sum();
    Some(HeapStats { bytes: bytes.max(0) as u64, allocations: allocations.max(0) as u64 })
}

/// The process's resident set size in bytes (`/proc/self/statm`), if readable.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|p| *p > 0).unwrap_or(4096))
}

/// The accounting as Prometheus gauges, appended to `/metrics`.
pub fn write_metrics(out: &mut String) {
    use std::fmt::Write;
    let mut gauge = |name: &str, help: &str, value: u64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}");
    };
    if let Some(heap) = heap() {
        gauge(
            "shardline_memory_heap_bytes",
            "Heap bytes in use (usable size of live allocations, counted by the server's allocator).",
            heap.bytes,
        );
        gauge("shardline_memory_heap_allocations", "Live heap allocations.", heap.allocations);
    }
    if let Some(resident) = resident_bytes() {
        gauge("shardline_memory_resident_bytes", "Resident set size of the process.", resident);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts are process-wide: the tests that call the allocator take turns.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The allocator is not installed in unit tests; calling it directly
    /// still counts, on this thread's slot.
    #[test]
    fn allocations_are_counted_by_usable_size_and_freed_to_zero() {
        let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let before = sum();
        let layout = Layout::from_size_align(1000, 8).unwrap();
        // SAFETY: a valid non-zero layout; the block is freed with it below.
        let ptr = unsafe { CountingAllocator.alloc(layout) };
        assert!(!ptr.is_null());
        let (bytes, allocations) = sum();
        assert_eq!(allocations - before.1, 1);
        assert!((1000..1100).contains(&(bytes - before.0)), "{}", bytes - before.0);
        // SAFETY: `ptr` is live, allocated with `layout`.
        let grown = unsafe { CountingAllocator.realloc(ptr, layout, 5000) };
        assert!(!grown.is_null());
        let (bytes, allocations) = sum();
        assert_eq!(allocations - before.1, 1, "a realloc is one block still");
        assert!((5000..5100).contains(&(bytes - before.0)), "{}", bytes - before.0);
        // SAFETY: `grown` is live, allocated with size 5000 and align 8.
        unsafe { CountingAllocator.dealloc(grown, Layout::from_size_align(5000, 8).unwrap()) };
        assert_eq!(sum(), before);
        assert!(heap().is_some(), "the direct calls marked the allocator installed");
    }

    #[test]
    fn a_block_freed_on_another_thread_still_sums_to_zero() {
        let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let before = sum();
        let layout = Layout::from_size_align(256, 16).unwrap();
        // SAFETY: a valid non-zero layout; freed with it on the other thread.
        let ptr = unsafe { CountingAllocator.alloc(layout) } as usize;
        std::thread::spawn(move || {
            // SAFETY: the block is live and allocated with `layout`.
            unsafe { CountingAllocator.dealloc(ptr as *mut u8, layout) }
        })
        .join()
        .unwrap();
        assert_eq!(sum(), before);
    }

    #[test]
    fn the_resident_set_is_read() {
        assert!(resident_bytes().is_some_and(|b| b > 0));
        let mut out = String::new();
        write_metrics(&mut out);
        assert!(out.contains("shardline_memory_resident_bytes "), "{out}");
    }
}
