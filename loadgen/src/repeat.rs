//! Repeated runs (`loadgen run --repeat N`): the order in which (repeat, target) runs happen,
//! and the aggregation of one measure across a target's repeats (median, min–max spread, and
//! the ratio of two targets' medians).
//!
//! Invariants: targets are interleaved (A B A B ...), never batched (A A B B), so a slow phase
//! of a shared machine hits every target alike; a measure a run did not produce (`None`, NaN)
//! is left out of its target's aggregate instead of being counted as zero.

/// The runs of `repeats` rounds over `targets` targets, as `(repeat, target)` pairs in the
/// order they run: every target once per round, in the order given, round after round.
pub fn schedule(targets: usize, repeats: usize) -> Vec<(usize, usize)> {
    (0..repeats).flat_map(|r| (0..targets).map(move |t| (r, t))).collect()
}

/// One measure of one target over its repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many repeats produced the measure.
    pub count: usize,
}

impl Spread {
    /// The spread as a share of the median, `(max - min) / median` (None when the median is 0).
    pub fn relative_range(&self) -> Option<f64> {
        (self.median != 0.0).then(|| (self.max - self.min) / self.median.abs())
    }
}

/// Median (the mean of the middle two for an even count), min and max of the values that are
/// present and finite; None when there are none.
pub fn spread(values: &[Option<f64>]) -> Option<Spread> {
    let mut v: Vec<f64> = values.iter().flatten().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Some(Spread { median, min: v[0], max: v[n - 1], count: n })
}

/// `a`'s median over `b`'s; None when either is missing or `b`'s median is 0.
pub fn ratio_of_medians(a: Option<Spread>, b: Option<Spread>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b.median != 0.0 => Some(a.median / b.median),
        _ => None,
    }
}

/// The distinct names in `names`, in order of first appearance, each with the positions where
/// it appears.
pub fn group_by_name<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        match groups.iter_mut().find(|(n, _)| n == name) {
            Some((_, positions)) => positions.push(i),
            None => groups.push((name.to_string(), vec![i])),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_interleaved_round_by_round() {
        assert_eq!(schedule(2, 3), vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
        assert_eq!(schedule(3, 1), vec![(0, 0), (0, 1), (0, 2)]);
        assert!(schedule(2, 0).is_empty());
        assert!(schedule(0, 4).is_empty());
    }

    #[test]
    fn median_and_range_of_odd_and_even_counts() {
        let s = spread(&[Some(5.0), Some(1.0), Some(3.0)]).unwrap();
        assert_eq!(s, Spread { median: 3.0, min: 1.0, max: 5.0, count: 3 });
        let s = spread(&[Some(4.0), Some(1.0), Some(10.0), Some(2.0)]).unwrap();
        assert_eq!(s, Spread { median: 3.0, min: 1.0, max: 10.0, count: 4 });
        let one = spread(&[Some(7.5)]).unwrap();
        assert_eq!((one.median, one.min, one.max, one.count), (7.5, 7.5, 7.5, 1));
        assert_eq!(one.relative_range(), Some(0.0));
        assert_eq!(s.relative_range(), Some(3.0));
    }

    #[test]
    fn missing_and_non_finite_values_are_left_out() {
        let s = spread(&[None, Some(2.0), Some(f64::NAN), Some(4.0), Some(f64::INFINITY)]).unwrap();
        assert_eq!(s, Spread { median: 3.0, min: 2.0, max: 4.0, count: 2 });
        assert_eq!(spread(&[None, None]), None);
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn ratio_is_of_the_medians_not_of_the_means() {
        // Means would be 4/2 = 2; medians are 1/2.
        let a = spread(&[Some(1.0), Some(1.0), Some(10.0)]);
        let b = spread(&[Some(2.0), Some(2.0), Some(2.0)]);
        assert_eq!(ratio_of_medians(a, b), Some(0.5));
        assert_eq!(ratio_of_medians(b, a), Some(2.0));
        assert_eq!(ratio_of_medians(a, None), None);
        assert_eq!(ratio_of_medians(a, spread(&[Some(0.0)])), None);
    }

    #[test]
    fn names_group_in_order_of_first_appearance() {
        let groups = group_by_name(["shardline", "etcd", "shardline", "etcd", "shardline"]);
        assert_eq!(groups, vec![("shardline".to_string(), vec![0, 2, 4]), ("etcd".to_string(), vec![1, 3])]);
    }
}
