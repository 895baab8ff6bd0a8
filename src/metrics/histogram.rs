//! Fixed-bucket histograms, as Prometheus defines them: a count per bucket
//! (observations at most its upper bound, `le`), their sum and their count.
//!
//! Values are integers in a histogram's own unit (nanoseconds for
//! durations, items or entries for sizes), so observing is integer work
//! only; the text format shows them divided by [`Buckets::scale`] (seconds).
//!
//! [`Histogram`] is plain counters, owned by one shard and merged with the
//! other shards' at scrape time; [`AtomicHistogram`] is the same in atomics,
//! for what is observed off the shards (the etcd log's thread) or by one
//! shard for all (the embedded log on shard 0).
//!
//! Invariant: a histogram's bucket set is fixed when it is made (a `'static`
//! slice of increasing bounds), so its memory and its series never grow;
//! counts are kept per bucket and made cumulative only when rendered.

use std::sync::atomic::{AtomicU64, Ordering};

/// A histogram's upper bounds, increasing, in its unit; `+Inf` is implied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buckets {
    pub bounds: &'static [u64],
    /// Units per rendered unit: 1e9 for nanoseconds shown as seconds, 1 for
    /// counts.
    pub scale: u64,
}

impl Buckets {
    /// The index of the bucket `value` falls in (`bounds.len()` is `+Inf`).
    /// Linear: the sets are short and most observations land in the first
    /// buckets.
    pub fn index(&self, value: u64) -> usize {
        self.bounds.iter().position(|&bound| value <= bound).unwrap_or(self.bounds.len())
    }

    /// A bound or sum in the rendered unit, as the text format writes it
    /// (`0.005`, `1`, `60`).
    pub fn show(&self, value: u64) -> String {
        if self.scale == 1 {
            value.to_string()
        } else {
            (value as f64 / self.scale as f64).to_string()
        }
    }
}

/// Plain counters: one shard's observations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    buckets: Buckets,
    /// Observations per bucket (not cumulative); the last is `+Inf`.
    counts: Box<[u64]>,
    /// Sum of the observed values, in the histogram's unit.
    sum: u64,
}

impl Histogram {
    pub fn new(buckets: Buckets) -> Histogram {
        Histogram { buckets, counts: vec![0; buckets.bounds.len() + 1].into_boxed_slice(), sum: 0 }
    }

    pub fn observe(&mut self, value: u64) {
        let index = self.buckets.index(value);
        self.counts[index] += 1;
        self.sum = self.sum.saturating_add(value);
    }

    /// Adds another shard's counts of the same buckets (a histogram of other
    /// buckets is a bug in the caller, and is left out).
    pub fn merge(&mut self, other: &Histogram) {
        debug_assert_eq!(self.buckets, other.buckets);
        if self.buckets != other.buckets {
            return;
        }
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.sum = self.sum.saturating_add(other.sum);
    }

    pub fn buckets(&self) -> Buckets {
        self.buckets
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// `(le, observations at most le)` for every bound and then `+Inf`, as
    /// the text format's `_bucket` lines carry them (cumulative).
    pub fn cumulative(&self) -> impl Iterator<Item = (Option<u64>, u64)> + '_ {
        let bounds = self.buckets.bounds.iter().map(|&b| Some(b)).chain(std::iter::once(None));
        bounds.zip(self.counts.iter().scan(0u64, |total, &n| {
            *total += n;
            Some(*total)
        }))
    }
}

/// The same counters as atomics, shared by every thread that observes.
/// A scrape concurrent with observations may see a sum a few observations
/// ahead of or behind the buckets (each counter is exact on its own).
#[derive(Debug)]
pub struct AtomicHistogram {
    buckets: Buckets,
    counts: Box<[AtomicU64]>,
    sum: AtomicU64,
}

impl AtomicHistogram {
    pub fn new(buckets: Buckets) -> AtomicHistogram {
        AtomicHistogram {
            buckets,
            counts: (0..=buckets.bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, value: u64) {
        self.counts[self.buckets.index(value)].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(value, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Histogram {
        Histogram {
            buckets: self.buckets,
            counts: self.counts.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECONDS: Buckets =
        Buckets { bounds: &[5_000_000, 25_000_000, 1_000_000_000, 60_000_000_000], scale: 1_000_000_000 };
    const ITEMS: Buckets = Buckets { bounds: &[0, 1, 10], scale: 1 };

    #[test]
    fn an_observation_lands_in_the_first_bucket_whose_bound_holds_it() {
        assert_eq!(SECONDS.index(0), 0);
        assert_eq!(SECONDS.index(5_000_000), 0, "le is inclusive");
        assert_eq!(SECONDS.index(5_000_001), 1);
        assert_eq!(SECONDS.index(60_000_000_000), 3);
        assert_eq!(SECONDS.index(60_000_000_001), 4, "past the last bound: +Inf");
        assert_eq!(SECONDS.index(u64::MAX), 4);
        assert_eq!(ITEMS.index(0), 0);
        assert_eq!(ITEMS.index(2), 2);
    }

    #[test]
    fn buckets_render_cumulative_with_sum_and_count() {
        let mut h = Histogram::new(SECONDS);
        for ns in [1_000_000, 4_000_000, 30_000_000, 90_000_000_000] {
            h.observe(ns);
        }
        let buckets: Vec<_> = h.cumulative().collect();
        assert_eq!(
            buckets,
            vec![
                (Some(5_000_000), 2),
                (Some(25_000_000), 2),
                (Some(1_000_000_000), 3),
                (Some(60_000_000_000), 3),
                (None, 4)
            ]
        );
        assert_eq!(h.count(), 4);
        assert_eq!(h.sum(), 90_035_000_000);
        assert_eq!(SECONDS.show(h.sum()), "90.035");
        assert_eq!(SECONDS.show(5_000_000), "0.005");
        assert_eq!(SECONDS.show(60_000_000_000), "60");
        assert_eq!(ITEMS.show(10), "10");
    }

    #[test]
    fn shards_merge_into_the_sum_of_their_counts() {
        let mut a = Histogram::new(ITEMS);
        let mut b = Histogram::new(ITEMS);
        a.observe(0);
        a.observe(5);
        b.observe(5);
        b.observe(500);
        a.merge(&b);
        assert_eq!(a.cumulative().map(|(_, n)| n).collect::<Vec<_>>(), vec![1, 1, 3, 4]);
        assert_eq!(a.sum(), 510);
    }

    #[test]
    fn the_atomic_histogram_counts_what_the_plain_one_does() {
        let atomic = AtomicHistogram::new(SECONDS);
        let mut plain = Histogram::new(SECONDS);
        for ns in [0, 7_000_000, 2_000_000_000, u64::MAX / 4] {
            atomic.observe(ns);
            plain.observe(ns);
        }
        assert_eq!(atomic.snapshot(), plain);
    }
}
