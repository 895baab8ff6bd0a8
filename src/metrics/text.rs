//! The Prometheus text exposition format (version 0.0.4): `# HELP` and
//! `# TYPE` lines once per family, then its samples, each
//! `name{label="value",...} value`; a histogram's samples are its
//! cumulative `_bucket{le="..."}` lines (ending with `le="+Inf"`), `_sum`
//! and `_count`.
//!
//! Invariant: label values are escaped (`\\`, `\"`, `\n`) and every family's
//! samples are written together, after its header, as the format requires.

use super::histogram::Histogram;
use std::fmt::{Display, Write};

/// A metric family's kind, as `# TYPE` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// `# HELP` and `# TYPE` of a family.
pub fn header(out: &mut String, name: &str, help: &str, kind: Kind) {
    let _ = writeln!(out, "# HELP {name} {}", help.replace('\\', "\\\\").replace('\n', "\\n"));
    let _ = writeln!(out, "# TYPE {name} {}", kind.name());
}

/// One sample line.
pub fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl Display) {
    out.push_str(name);
    write_labels(out, labels, None);
    let _ = writeln!(out, " {value}");
}

/// A histogram's lines for one label set.
pub fn histogram(out: &mut String, name: &str, labels: &[(&str, &str)], histogram: &Histogram) {
    let buckets = histogram.buckets();
    for (le, count) in histogram.cumulative() {
        let le = le.map_or_else(|| "+Inf".to_string(), |bound| buckets.show(bound));
        let _ = write!(out, "{name}_bucket");
        write_labels(out, labels, Some(("le", &le)));
        let _ = writeln!(out, " {count}");
    }
    let _ = write!(out, "{name}_sum");
    write_labels(out, labels, None);
    let _ = writeln!(out, " {}", buckets.show(histogram.sum()));
    let _ = write!(out, "{name}_count");
    write_labels(out, labels, None);
    let _ = writeln!(out, " {}", histogram.count());
}

fn write_labels(out: &mut String, labels: &[(&str, &str)], extra: Option<(&str, &str)>) {
    if labels.is_empty() && extra.is_none() {
        return;
    }
    out.push('{');
    for (i, (name, value)) in labels.iter().chain(extra.iter()).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::super::histogram::{Buckets, Histogram};
    use super::*;

    #[test]
    fn a_histogram_is_cumulative_buckets_then_sum_and_count() {
        let mut h = Histogram::new(Buckets { bounds: &[5_000_000, 1_000_000_000], scale: 1_000_000_000 });
        h.observe(1_000_000);
        h.observe(2_000_000_000);
        let mut out = String::new();
        header(&mut out, "x_seconds", "A test.", Kind::Histogram);
        histogram(&mut out, "x_seconds", &[("verb", "GET")], &h);
        assert_eq!(
            out,
            "# HELP x_seconds A test.\n# TYPE x_seconds histogram\n\
             x_seconds_bucket{verb=\"GET\",le=\"0.005\"} 1\n\
             x_seconds_bucket{verb=\"GET\",le=\"1\"} 1\n\
             x_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 2\n\
             x_seconds_sum{verb=\"GET\"} 2.001\n\
             x_seconds_count{verb=\"GET\"} 2\n"
        );
    }

    #[test]
    fn label_values_are_escaped_and_empty_label_sets_omitted() {
        let mut out = String::new();
        sample(&mut out, "y", &[("path", "a\"b\\c\nd"), ("empty", "")], 3);
        sample(&mut out, "z", &[], 1.5);
        assert_eq!(out, "y{path=\"a\\\"b\\\\c\\nd\",empty=\"\"} 3\nz 1.5\n");
    }
}
