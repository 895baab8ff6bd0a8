//! The process limits the server runs under (locked memory, open files),
//! read at start-up, printed, and kept for reporting; and the return of the
//! allocator's free memory to the kernel once start-up has loaded the state.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub soft: u64,
    pub hard: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessLimits {
    pub memlock_bytes: Limit,
    pub open_files: Limit,
}

fn get(resource: libc::__rlimit_resource_t) -> Limit {
    let mut raw = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass and reads nothing else.
    let rc = unsafe { libc::getrlimit(resource, &mut raw) };
    if rc != 0 {
        return Limit { soft: 0, hard: 0 };
    }
    Limit { soft: raw.rlim_cur, hard: raw.rlim_max }
}

/// Raises the soft open-files limit to the hard limit (watch streams need
/// descriptors), then reads both limits.
pub fn read_and_raise() -> ProcessLimits {
    let files = get(libc::RLIMIT_NOFILE);
    if files.soft < files.hard {
        let raised = libc::rlimit { rlim_cur: files.hard, rlim_max: files.hard };
        // SAFETY: setrlimit reads the struct we pass; failure leaves the limit as it was.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
    }
    ProcessLimits { memlock_bytes: get(libc::RLIMIT_MEMLOCK), open_files: get(libc::RLIMIT_NOFILE) }
}

fn show(value: u64) -> String {
    if value == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        value.to_string()
    }
}

impl fmt::Display for ProcessLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "memlock={} bytes (hard {}), open files={} (hard {})",
            show(self.memlock_bytes.soft),
            show(self.memlock_bytes.hard),
            show(self.open_files.soft),
            show(self.open_files.hard)
        )
    }
}

/// Returns the allocator's free pages to the kernel (glibc's `malloc_trim`,
/// which also releases free memory between live allocations, in every arena).
/// Called once per shard after start-up, when the log's read buffers are gone.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only inspects and releases the allocator's own free
    // memory; it takes no pointers from us and is thread-safe (arena locks).
    unsafe {
        libc::malloc_trim(0);
    }
}
