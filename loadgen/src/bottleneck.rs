//! Who limited a run: loadgen or the server. What loadgen can see of both while it measures:
//! its own CPU time (`getrusage`), the spawned server's CPU time (`/proc/PID/stat`), the time
//! each waited for a CPU while runnable (`/proc/PID/task/*/schedstat`: other work on the machine
//! took the CPU), and the bytes waiting unread in loadgen's own sockets (`FIONREAD` on each):
//! events the server sent that loadgen had not read yet.
//! A process's demand is its busy share plus its waiting share: what it would have used on
//! CPUs of its own.
//!
//! Invariant: the verdict says "loadgen" only from measurements (its CPUs busy while the
//! server's were not, or events waiting in its sockets); without them it says nothing.

/// loadgen's CPUs this busy (share of their time) or more: it was likely the bottleneck.
pub const LOADGEN_BUSY_SATURATED: f64 = 0.90;
/// The server's CPUs below this share were not saturated.
pub const SERVER_BUSY_SATURATED: f64 = 0.90;
/// Bytes waiting unread in loadgen's sockets (the median of the per-second samples) at or above
/// which events were lagging on loadgen's side. A client that keeps up reads a socket as soon as
/// data lands, so a sample mostly finds its queues near empty; 1 MiB is a few hundred pod events
/// (one informer connection's receive buffer on loopback holds several MiB when it lags).
pub const SOCKET_BACKLOG_BYTES_LAGGING: u64 = 1 << 20;

/// This process's CPU time so far (user + system), in seconds.
pub fn process_cpu_s() -> f64 {
    let (user, system) = process_cpu_user_system_s();
    user + system
}

/// This process's CPU time so far in user space and in the kernel, in seconds.
pub fn process_cpu_user_system_s() -> (f64, f64) {
    // SAFETY: getrusage fills a struct we own.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        (tv(u.ru_utime), tv(u.ru_stime))
    }
}

/// CPU time (user + system) of every process in `pids` so far, in seconds; None if one is gone.
pub fn pids_cpu_s(pids: &[u32]) -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut total = 0.0;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        total += stat_cpu_ticks(&stat)? as f64 / hz;
    }
    Some(total)
}

/// utime + stime from a `/proc/PID/stat` line (fields 14 and 15, after the command in parens).
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Time the threads of `pid` ("self" for this process) spent runnable but waiting for a CPU,
/// summed over threads, in seconds. A thread that exits while the list is read is skipped
/// (its time is lost with it); None only when the process itself is gone or a line is not
/// schedstat's.
pub fn run_queue_wait_s(pid: &str) -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else { continue };
        ns += stat.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e9)
}

/// `run_queue_wait_s` summed over `pids`.
pub fn pids_run_queue_wait_s(pids: &[u32]) -> Option<f64> {
    pids.iter().map(|p| run_queue_wait_s(&p.to_string())).sum()
}

/// A process waiting for a CPU this share of its CPUs' time or more was starved by other work on
/// the machine: its numbers say more about the machine than about itself.
pub const STARVED_WAITING: f64 = 0.10;

/// One process's use of its CPUs over the measured time, as shares of their time (0..1 each).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuShare {
    /// Running.
    pub busy: f64,
    /// Runnable but waiting for a CPU (taken by other work).
    pub waiting: f64,
}

impl CpuShare {
    /// What it would have used on CPUs of its own.
    pub fn demand(&self) -> f64 {
        self.busy + self.waiting
    }
}

/// Bytes received but not yet read by this process, summed over its sockets (`FIONREAD` on
/// each socket descriptor: the cost is one system call per socket of loadgen's, whatever else
/// runs on the machine); None when `/proc/self/fd` cannot be read.
pub fn socket_backlog_bytes() -> Option<u64> {
    let mut total = 0u64;
    for fd in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else { continue };
        if !target.to_str().is_some_and(|t| t.starts_with("socket:[")) {
            continue;
        }
        let Some(n) = fd.file_name().to_str().and_then(|n| n.parse::<libc::c_int>().ok()) else { continue };
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int into `unread`; the descriptor is this process's own
        // (one closed meanwhile only makes the call fail).
        if unsafe { libc::ioctl(n, libc::FIONREAD, &mut unread) } == 0 && unread > 0 {
            total += unread as u64;
        }
    }
    Some(total)
}

/// The median of `samples` (None when empty).
pub fn median(samples: &[u64]) -> Option<u64> {
    let mut s = samples.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied()
}

/// Why loadgen, not the server, limited a watch scenario: Some(reason) when loadgen's CPU demand
/// (busy + waiting for a CPU) reached saturation while the server's did not (or the server's is
/// unknown), or when events waited in its sockets.
pub fn loadgen_limited(
    loadgen: CpuShare,
    server: Option<CpuShare>,
    backlog_median_bytes: Option<u64>,
) -> Option<String> {
    let lagging = backlog_median_bytes.filter(|&b| b >= SOCKET_BACKLOG_BYTES_LAGGING);
    let saturated = loadgen.demand() >= LOADGEN_BUSY_SATURATED;
    let server_idle = server.is_none_or(|s| s.demand() < SERVER_BUSY_SATURATED);
    let pct = |v: f64| format!("{:.0} %", 100.0 * v);
    let share = |c: CpuShare| {
        if c.waiting >= STARVED_WAITING {
            format!("{} busy and {} waiting for a CPU other work held", pct(c.busy), pct(c.waiting))
        } else {
            format!("{} busy", pct(c.busy))
        }
    };
    let mut why = Vec::new();
    if saturated && server_idle {
        why.push(match server {
            Some(s) => format!("its CPUs were {} while the server's were {}", share(loadgen), share(s)),
            None => format!("its CPUs were {} (the server's CPU use is unknown)", share(loadgen)),
        });
    }
    if let Some(b) = lagging {
        why.push(format!(
            "events waited unread in its sockets ({:.1} MiB in the median second)",
            b as f64 / (1u64 << 20) as f64
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Which of the two the machine starved (waiting for a CPU at least `STARVED_WAITING`), if any.
pub fn starved(loadgen: CpuShare, server: Option<CpuShare>) -> Option<String> {
    let mut who = Vec::new();
    if loadgen.waiting >= STARVED_WAITING {
        who.push(format!("loadgen waited for a CPU {:.0} % of the time", 100.0 * loadgen.waiting));
    }
    if let Some(s) = server.filter(|s| s.waiting >= STARVED_WAITING) {
        who.push(format!("the server waited for a CPU {:.0} % of the time", 100.0 * s.waiting));
    }
    (!who.is_empty()).then(|| who.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_ticks_from_stat_even_with_spaces_in_the_name() {
        let stat = "1234 (a b) c) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1";
        assert_eq!(stat_cpu_ticks(stat), Some(300));
        assert_eq!(stat_cpu_ticks("garbage"), None);
        let me = pids_cpu_s(&[std::process::id()]).unwrap();
        assert!(me >= 0.0);
        assert_eq!(pids_cpu_s(&[u32::MAX]), None);
    }

    #[test]
    fn counts_bytes_waiting_unread_in_our_sockets() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let before = socket_backlog_bytes().unwrap();
        client.write_all(&[7u8; 3000]).unwrap();
        // Loopback delivers at once, but give the kernel a moment on a busy machine.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while socket_backlog_bytes().unwrap() < before + 3000 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(socket_backlog_bytes().unwrap() >= before + 3000);
    }

    #[test]
    fn says_loadgen_limited_only_from_measurements() {
        let c = |busy, waiting| CpuShare { busy, waiting };
        // Saturated loadgen, server with room: loadgen limited.
        let why = loadgen_limited(c(0.97, 0.0), Some(c(0.6, 0.0)), Some(0)).unwrap();
        assert!(why.contains("97 % busy") && why.contains("60 % busy"), "{why}");
        // Both saturated: the server's limit was reached, nothing to say.
        assert_eq!(loadgen_limited(c(0.97, 0.0), Some(c(0.95, 0.0)), Some(0)), None);
        // loadgen with room, server saturated: the server's limit.
        assert_eq!(loadgen_limited(c(0.5, 0.0), Some(c(0.99, 0.0)), None), None);
        // A server saturated by its demand (running + waiting) is not "idle".
        assert_eq!(loadgen_limited(c(0.95, 0.0), Some(c(0.5, 0.45)), None), None);
        // loadgen starved by other work: its demand counts, and the message says so.
        let why = loadgen_limited(c(0.3, 0.65), Some(c(0.2, 0.0)), None).unwrap();
        assert!(why.contains("30 % busy and 65 % waiting for a CPU"), "{why}");
        // Events lagging in loadgen's sockets, whatever the CPUs say.
        let why = loadgen_limited(c(0.5, 0.0), Some(c(0.99, 0.0)), Some(8 << 20)).unwrap();
        assert!(why.contains("8.0 MiB"), "{why}");
        assert_eq!(loadgen_limited(c(0.5, 0.0), Some(c(0.5, 0.0)), Some(1000)), None);
        // A server whose CPU use is unknown (not spawned) does not hide a saturated loadgen.
        assert!(loadgen_limited(c(0.95, 0.0), None, None).unwrap().contains("unknown"));
        assert_eq!(median(&[5, 1, 9]), Some(5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn says_who_the_machine_starved() {
        let c = |busy, waiting| CpuShare { busy, waiting };
        assert_eq!(starved(c(0.9, 0.0), Some(c(0.9, 0.05))), None);
        let s = starved(c(0.4, 0.5), Some(c(0.3, 0.2))).unwrap();
        assert_eq!(s, "loadgen waited for a CPU 50 % of the time, the server waited for a CPU 20 % of the time");
        assert!(run_queue_wait_s("self").is_some());
        assert!(pids_run_queue_wait_s(&[std::process::id()]).is_some());
        assert_eq!(run_queue_wait_s(&u32::MAX.to_string()), None);
    }

    #[test]
    fn threads_that_exit_while_being_read_do_not_lose_the_reading() {
        // Threads come and go while the reading runs (the test harness's others do too): every
        // reading must still succeed.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::spawn(|| {}).join().unwrap();
                }
            })
        };
        for _ in 0..2_000 {
            assert!(run_queue_wait_s("self").is_some());
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        churn.join().unwrap();
    }
}
