//! When recent revisions were committed, as one shard learned it: the
//! instant the log made each batch durable (or the etcd watch delivered it),
//! so a watch event handed to its connection can be timed from its commit.
//!
//! Invariant: bounded (`metrics_commit_times_max` batches, the oldest go
//! first); batches are recorded in increasing revision order; the time is an
//! argument (no clock is read here).

use crate::log::Revision;
use std::collections::VecDeque;
use std::time::Instant;

/// When a revision was committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitTime {
    /// The instant its batch was committed.
    At(Instant),
    /// Older than the recorded batches: committed before this instant (the
    /// oldest batch recorded), so a latency from it is a lower bound.
    Before(Instant),
    /// Not recorded: no batch yet, or a revision past the newest batch.
    Unknown,
}

/// The last batches' revisions and commit instants.
#[derive(Debug)]
pub struct CommitClock {
    /// (last revision of a batch, when it was committed), increasing.
    batches: VecDeque<(Revision, Instant)>,
    batches_max: usize,
}

impl CommitClock {
    pub fn new(batches_max: usize) -> CommitClock {
        CommitClock { batches: VecDeque::new(), batches_max: batches_max.max(1) }
    }

    /// A batch whose last revision is `last` was committed at `at`. A batch
    /// not after the newest one (a log that started over) clears the clock.
    pub fn committed(&mut self, last: Revision, at: Instant) {
        if self.batches.back().is_some_and(|(newest, _)| *newest >= last) {
            self.batches.clear();
        }
        if self.batches.len() == self.batches_max {
            self.batches.pop_front();
        }
        self.batches.push_back((last, at));
    }

    /// When `revision` was committed: its batch is the first whose last
    /// revision is at or after it. The newest batch is checked first (a watch
    /// that keeps up asks for it).
    pub fn commit_time(&self, revision: Revision) -> CommitTime {
        let Some(&(newest, newest_at)) = self.batches.back() else { return CommitTime::Unknown };
        if revision > newest {
            return CommitTime::Unknown;
        }
        let count = self.batches.len();
        if count >= 2 && revision > self.batches[count - 2].0 {
            return CommitTime::At(newest_at);
        }
        let first = self.batches.partition_point(|(last, _)| *last < revision);
        if first == 0 {
            let (oldest, oldest_at) = self.batches[0];
            // The oldest batch's own start is not known: only its last
            // revision is certainly in it.
            return if revision == oldest { CommitTime::At(oldest_at) } else { CommitTime::Before(oldest_at) };
        }
        CommitTime::At(self.batches[first].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_revision_takes_the_commit_time_of_its_batch() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut clock = CommitClock::new(3);
        assert_eq!(clock.commit_time(Revision(1)), CommitTime::Unknown);
        clock.committed(Revision(10), at(1));
        clock.committed(Revision(12), at(2));
        clock.committed(Revision(20), at(3));
        assert_eq!(clock.commit_time(Revision(11)), CommitTime::At(at(2)));
        assert_eq!(clock.commit_time(Revision(12)), CommitTime::At(at(2)));
        assert_eq!(clock.commit_time(Revision(13)), CommitTime::At(at(3)));
        assert_eq!(clock.commit_time(Revision(20)), CommitTime::At(at(3)));
        assert_eq!(clock.commit_time(Revision(10)), CommitTime::At(at(1)));
        assert_eq!(clock.commit_time(Revision(9)), CommitTime::Before(at(1)));
        assert_eq!(clock.commit_time(Revision(21)), CommitTime::Unknown);
        // Bounded: the oldest batch goes first.
        clock.committed(Revision(30), at(4));
        assert_eq!(clock.commit_time(Revision(11)), CommitTime::Before(at(2)));
        assert_eq!(clock.commit_time(Revision(25)), CommitTime::At(at(4)));
    }

    #[test]
    fn a_log_that_starts_over_clears_the_clock() {
        let t0 = Instant::now();
        let mut clock = CommitClock::new(8);
        clock.committed(Revision(100), t0);
        clock.committed(Revision(5), t0 + Duration::from_millis(1));
        assert_eq!(clock.commit_time(Revision(5)), CommitTime::At(t0 + Duration::from_millis(1)));
        assert_eq!(clock.commit_time(Revision(50)), CommitTime::Unknown);
    }
}
