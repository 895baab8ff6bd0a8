//! Reads the process's own counters for the `process_*` metrics:
//! `/proc/self/stat` (CPU time, memory, start), `/proc/stat` (boot time),
//! the entries of `/proc/self/fd`, and `RLIMIT_NOFILE`. Parsing is
//! `metrics::process`'s; this file only reads.
//!
//! Invariant: a file that cannot be read or parsed leaves the metrics out
//! (`None`), never fails the scrape.

use crate::metrics::process::{parse_boot_time, parse_stat, ProcessStats};

/// The counters now (a few small reads of procfs, on the scraping core).
pub fn read() -> Option<ProcessStats> {
    let stat = parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let boot_time = parse_boot_time(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
    // SAFETY: sysconf reads a system constant and touches no memory of ours.
    let (clock_ticks, page_bytes) = unsafe { (libc::sysconf(libc::_SC_CLK_TCK), libc::sysconf(libc::_SC_PAGESIZE)) };
    let mut files = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass and reads nothing else.
    let max_fds = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut files) } == 0 { files.rlim_cur } else { 0 };
    Some(ProcessStats::from_stat(
        &stat,
        u64::try_from(clock_ticks).ok()?,
        u64::try_from(page_bytes).ok()?,
        boot_time,
        open_fds,
        max_fds,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_reads_its_own_counters() {
        let stats = super::read().expect("procfs is mounted where the tests run");
        assert!(stats.resident_memory_bytes > 0);
        assert!(stats.virtual_memory_bytes >= stats.resident_memory_bytes);
        assert!(stats.open_fds >= 3, "stdin, stdout, stderr at least");
        assert!(stats.max_fds >= stats.open_fds);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        assert!(stats.start_time_seconds > 1.0e9 && stats.start_time_seconds <= now + 1.0, "{stats:?}");
    }
}
