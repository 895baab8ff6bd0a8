//! The rate controller of rate-driven writers, and coordinated-omission accounting.
//!
//! Operation `i` of a run at `rate_per_s` is *intended* to start at `start + i / rate`. Writers
//! take the next `i` from a shared counter, wait until its intended time (or not at all when they
//! are already late) and send. Latency is measured from the intended time, not from the moment
//! the request actually left: when the server stalls, the operations that should have been sent
//! meanwhile are charged the stall, as a real client at that rate would see it (Gil Tene's
//! coordinated omission). The service time (from the actual send) is kept beside it.
//! Invariant: pure arithmetic on durations; no clock is read here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// When each operation of a rate-driven run should start, relative to the run's start.
#[derive(Debug)]
pub struct Schedule {
    /// None: as fast as possible (every operation is intended "now").
    interval_ns: Option<f64>,
    next: AtomicU64,
}

impl Schedule {
    pub fn new(rate_per_s: f64) -> Schedule {
        let interval_ns = if rate_per_s > 0.0 { Some(1e9 / rate_per_s) } else { None };
        Schedule { interval_ns, next: AtomicU64::new(0) }
    }

    /// Claims the next operation: its index and intended start offset (None when unpaced).
    pub fn claim(&self) -> (u64, Option<Duration>) {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i, self.intended(i))
    }

    /// The intended start offset of operation `i`.
    pub fn intended(&self, i: u64) -> Option<Duration> {
        self.interval_ns.map(|ns| Duration::from_nanos((i as f64 * ns) as u64))
    }
}

/// One operation's two latencies, from offsets relative to the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// From the intended start (or the actual send when unpaced) to completion.
    pub latency: Duration,
    /// From the actual send to completion.
    pub service: Duration,
}

/// Accounts one operation that was sent more than once (refused with 429, waited, retried):
/// the latency runs from the intended start or the *first* send (what the client saw), the
/// service time from the send of the attempt the server admitted.
pub fn timing_with_retries(
    intended: Option<Duration>,
    first_sent: Duration,
    admitted_sent: Duration,
    done: Duration,
) -> Timing {
    let latency = timing(intended, first_sent, done).latency;
    Timing { latency, service: done.saturating_sub(admitted_sent) }
}

/// Accounts one operation: intended start (None when unpaced), actual send, completion.
pub fn timing(intended: Option<Duration>, sent: Duration, done: Duration) -> Timing {
    let service = done.saturating_sub(sent);
    let from = match intended {
        // Sending early never happens (the writer waits), but an intended time after the send
        // must not make a latency shorter than the service time.
        Some(i) => i.min(sent),
        None => sent,
    };
    Timing { latency: done.saturating_sub(from), service }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn schedule_spaces_operations_evenly() {
        let s = Schedule::new(100.0);
        assert_eq!(s.claim(), (0, Some(ms(0))));
        assert_eq!(s.claim(), (1, Some(ms(10))));
        assert_eq!(s.intended(1000), Some(ms(10_000)));
        let unpaced = Schedule::new(0.0);
        assert_eq!(unpaced.claim(), (0, None));
        assert_eq!(unpaced.claim(), (1, None));
    }

    #[test]
    fn a_stall_is_charged_to_every_operation_it_delayed() {
        // Rate 100/s: operations every 10 ms. The server stalls 1 s on operation 0; one writer
        // sends the next ones as soon as it can, each answered in 1 ms.
        let s = Schedule::new(100.0);
        let (_, i0) = s.claim();
        let t0 = timing(i0, ms(0), ms(1000));
        assert_eq!(t0, Timing { latency: ms(1000), service: ms(1000) });
        let mut now = ms(1000);
        let mut latencies = Vec::new();
        for _ in 0..5 {
            let (_, intended) = s.claim();
            let t = timing(intended, now, now + ms(1));
            assert_eq!(t.service, ms(1));
            latencies.push(t.latency);
            now += ms(1);
        }
        // Operation 1 was due at 10 ms and finished at 1001 ms: 991 ms, not 1 ms.
        assert_eq!(latencies, vec![ms(991), ms(982), ms(973), ms(964), ms(955)]);
    }

    #[test]
    fn unpaced_latency_is_service_time() {
        assert_eq!(timing(None, ms(5), ms(7)), Timing { latency: ms(2), service: ms(2) });
        // An intended time after the send is clamped to the send.
        assert_eq!(timing(Some(ms(9)), ms(5), ms(7)).latency, ms(2));
    }

    #[test]
    fn a_retried_operation_is_charged_its_waits_but_its_service_time_is_the_admitted_attempt() {
        // Due at 10 ms, first sent at 12 ms, refused with 429 at 13 ms, waited 1 s, sent again
        // at 1013 ms and answered at 1015 ms.
        let t = timing_with_retries(Some(ms(10)), ms(12), ms(1013), ms(1015));
        assert_eq!(t, Timing { latency: ms(1005), service: ms(2) });
        // Unpaced: from the first send.
        let t = timing_with_retries(None, ms(12), ms(1013), ms(1015));
        assert_eq!(t, Timing { latency: ms(1003), service: ms(2) });
        // Without a retry it is `timing`.
        assert_eq!(timing_with_retries(Some(ms(3)), ms(5), ms(5), ms(9)), timing(Some(ms(3)), ms(5), ms(9)));
    }
}
