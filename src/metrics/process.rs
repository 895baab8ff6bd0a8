//! The standard `process_*` metrics, as the Prometheus client libraries
//! define them (CPU time, resident and virtual memory, open and maximum
//! file descriptors, start time), from the text of `/proc/self/stat` and
//! `/proc/stat`. Reading those files and the system's constants is the
//! runtime's (`runtime/process.rs`); this module only parses and renders.
//!
//! Invariant: parsing never panics; a malformed file gives `None`, and the
//! metrics are then left out of the scrape.

use super::text::{self, Kind};

/// The process's counters at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessStats {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: f64,
    pub resident_memory_bytes: u64,
    pub virtual_memory_bytes: u64,
    /// Entries of `/proc/self/fd`.
    pub open_fds: u64,
    /// The soft `RLIMIT_NOFILE`.
    pub max_fds: u64,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

/// What `/proc/self/stat` says, in the units the kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// User and system time, in clock ticks.
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// Clock ticks after boot at which the process started.
    pub start_ticks: u64,
    pub vsize_bytes: u64,
    pub rss_pages: u64,
}

/// Parses `/proc/self/stat` (proc(5)): the fields after the command name,
/// which is in parentheses and may itself contain spaces or parentheses.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let after_command = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after_command.split_whitespace().collect();
    // Field n of proc(5) (counted from 1, the pid) is fields[n - 3].
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        utime_ticks: field(14)?,
        stime_ticks: field(15)?,
        start_ticks: field(22)?,
        vsize_bytes: field(23)?,
        rss_pages: field(24)?,
    })
}

/// The boot time (`btime`, seconds since the epoch) from `/proc/stat`.
pub fn parse_boot_time(text: &str) -> Option<u64> {
    text.lines().find_map(|line| line.strip_prefix("btime ")).and_then(|v| v.trim().parse().ok())
}

impl ProcessStats {
    /// The metrics from the kernel's units: `clock_ticks` per second
    /// (`_SC_CLK_TCK`), `page_bytes` (`_SC_PAGESIZE`).
    pub fn from_stat(
        stat: &Stat,
        clock_ticks: u64,
        page_bytes: u64,
        boot_time_seconds: u64,
        open_fds: u64,
        max_fds: u64,
    ) -> ProcessStats {
        let ticks = clock_ticks.max(1) as f64;
        ProcessStats {
            cpu_seconds: (stat.utime_ticks + stat.stime_ticks) as f64 / ticks,
            resident_memory_bytes: stat.rss_pages.saturating_mul(page_bytes),
            virtual_memory_bytes: stat.vsize_bytes,
            open_fds,
            max_fds,
            start_time_seconds: boot_time_seconds as f64 + stat.start_ticks as f64 / ticks,
        }
    }

    /// The families, with the client libraries' names and help texts.
    pub fn render(&self, out: &mut String) {
        let families: [(&str, &str, Kind, String); 6] = [
            (
                "process_cpu_seconds_total",
                "Total user and system CPU time spent in seconds.",
                Kind::Counter,
                self.cpu_seconds.to_string(),
            ),
            ("process_open_fds", "Number of open file descriptors.", Kind::Gauge, self.open_fds.to_string()),
            ("process_max_fds", "Maximum number of open file descriptors.", Kind::Gauge, self.max_fds.to_string()),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                Kind::Gauge,
                self.virtual_memory_bytes.to_string(),
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                Kind::Gauge,
                self.resident_memory_bytes.to_string(),
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                Kind::Gauge,
                self.start_time_seconds.to_string(),
            ),
        ];
        for (name, help, kind, value) in families {
            text::header(out, name, help, kind);
            text::sample(out, name, &[], value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A real line's shape, with a command name that has spaces and parentheses.
    const STAT: &str = "4242 (shard (0) x) S 1 4242 4242 0 -1 4194560 1200 0 3 0 250 75 0 0 20 0 4 0 12345 1073741824 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        let stat = parse_stat(STAT).unwrap();
        assert_eq!(
            stat,
            Stat { utime_ticks: 250, stime_ticks: 75, start_ticks: 12345, vsize_bytes: 1073741824, rss_pages: 2048 }
        );
        let stats = ProcessStats::from_stat(&stat, 100, 4096, 1_700_000_000, 17, 20_000);
        assert_eq!(stats.cpu_seconds, 3.25);
        assert_eq!(stats.resident_memory_bytes, 8 << 20);
        assert_eq!(stats.virtual_memory_bytes, 1 << 30);
        assert_eq!(stats.start_time_seconds, 1_700_000_123.45);
    }

    #[test]
    fn malformed_files_give_nothing_and_never_panic() {
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("1 (x"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
        assert_eq!(parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 -12 13 14 15 16 17 18 19 20 21 22 23"), None);
        assert_eq!(parse_boot_time("cpu 1 2 3\nbtime 1700000000\nprocesses 5\n"), Some(1_700_000_000));
        assert_eq!(parse_boot_time("cpu 1 2 3\n"), None);
        assert_eq!(parse_boot_time("btime soon\n"), None);
    }

    #[test]
    fn rendered_as_the_client_libraries_name_them() {
        let stats = ProcessStats::from_stat(&parse_stat(STAT).unwrap(), 100, 4096, 1_700_000_000, 17, 20_000);
        let mut out = String::new();
        stats.render(&mut out);
        assert!(out.contains("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3.25\n"), "{out}");
        assert!(out.contains("\nprocess_open_fds 17\n"), "{out}");
        assert!(out.contains("\nprocess_max_fds 20000\n"), "{out}");
        assert!(out.contains("\nprocess_resident_memory_bytes 8388608\n"), "{out}");
        assert!(out.contains("\nprocess_virtual_memory_bytes 1073741824\n"), "{out}");
        assert!(out.contains("\nprocess_start_time_seconds 1700000123.45\n"), "{out}");
    }
}
