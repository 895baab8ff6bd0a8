//! A pod's quality-of-service class, as kube-apiserver computes it when a
//! Pod is created (pkg/apis/core/helper/qos/qos.go: GetPodQOS ->
//! ComputePodQOS), and the resource quantity arithmetic it needs.
//!
//! Facts: only `cpu` and `memory` count (isSupportedQoSComputeResource);
//! only quantities above zero count; requests and limits are summed over
//! containers and init containers (ephemeral containers have no
//! resources); a container without both a cpu and a memory limit makes the
//! pod at best Burstable; no request and no limit at all is BestEffort;
//! Guaranteed needs every summed request equal to its summed limit and as
//! many limits as requests. When pod-level resources are set
//! (`spec.resources`, PodLevelResources, on by default since v1.34) they
//! decide instead of the containers'.

use crate::strategy::Object;
use serde_json::Value;
use std::collections::BTreeMap;

const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `Guaranteed`, `Burstable` or `BestEffort` for a (defaulted) pod spec.
pub fn pod_qos_class(spec: &Object) -> &'static str {
    let mut sums = Sums::default();
    let pod_level = spec.get("resources").and_then(Value::as_object).filter(|r| {
        ["requests", "limits"].iter().any(|k| r.get(*k).and_then(Value::as_object).is_some_and(|m| !m.is_empty()))
    });
    match pod_level {
        Some(resources) => sums.add(resources, true),
        None => {
            for list in ["containers", "initContainers"] {
                let containers = spec.get(list).and_then(Value::as_array).into_iter().flatten();
                for resources in containers.filter_map(|c| c.get("resources")).filter_map(Value::as_object) {
                    sums.add(resources, false);
                }
            }
        }
    }
    sums.class()
}

/// Summed requests and limits of the QoS resources, in nano units.
#[derive(Default)]
struct Sums {
    requests: BTreeMap<&'static str, i128>,
    limits: BTreeMap<&'static str, i128>,
    not_guaranteed: bool,
}

impl Sums {
    /// Adds one `resources` (a container's, or the pod's when `pod_level`:
    /// then an absent limits map does not by itself rule Guaranteed out).
    fn add(&mut self, resources: &Object, pod_level: bool) {
        let positive = |map: Option<&Value>| -> Vec<(&'static str, i128)> {
            let map = map.and_then(Value::as_object);
            QOS_RESOURCES
                .iter()
                .filter_map(|name| {
                    let nanos = map?.get(*name).and_then(Value::as_str).and_then(parse_quantity_nanos)?;
                    (nanos > 0).then_some((*name, nanos))
                })
                .collect()
        };
        for (name, nanos) in positive(resources.get("requests")) {
            *self.requests.entry(name).or_default() += nanos;
        }
        let limits = positive(resources.get("limits"));
        let limits_given = resources.get("limits").and_then(Value::as_object).is_some_and(|l| !l.is_empty());
        if (!pod_level || limits_given) && limits.len() < QOS_RESOURCES.len() {
            self.not_guaranteed = true;
        }
        for (name, nanos) in limits {
            *self.limits.entry(name).or_default() += nanos;
        }
    }

    fn class(&self) -> &'static str {
        if self.requests.is_empty() && self.limits.is_empty() {
            return "BestEffort";
        }
        let matching = self.requests.iter().all(|(name, request)| self.limits.get(name) == Some(request));
        if !self.not_guaranteed && matching && self.requests.len() == self.limits.len() {
            "Guaranteed"
        } else {
            "Burstable"
        }
    }
}

/// A resource quantity (`250m`, `1.5Gi`, `2e3`) in nano units, rounded up;
/// `None` when it does not parse. Values past i128 saturate.
pub fn parse_quantity_nanos(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_end = unsigned.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    // value = digits / 10^fraction_len * multiplier
    let digits: String = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return Some(if negative { i128::MIN } else { i128::MAX });
    }
    let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let (binary_shift, decimal_exponent) = suffix_scale(suffix)?;
    // nanos = mantissa * 2^shift * 10^(exponent + 9 - fraction_len)
    let exponent = decimal_exponent + 9 - i32::try_from(fraction.len()).ok()?;
    let scaled = scale(mantissa, binary_shift, exponent);
    Some(if negative { -scaled } else { scaled })
}

/// (power of two, power of ten) of a quantity suffix.
fn suffix_scale(suffix: &str) -> Option<(u32, i32)> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = binary.iter().position(|s| *s == suffix) {
        return Some((10 * (u32::try_from(i).ok()? + 1), 0));
    }
    let decimal = match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            return exponent.parse::<i32>().ok().filter(|e| e.abs() <= 1000).map(|e| (0, e));
        }
    };
    Some((0, decimal))
}

/// mantissa * 2^shift * 10^exponent, rounded up, saturating.
fn scale(mantissa: i128, shift: u32, exponent: i32) -> i128 {
    let mut value = mantissa;
    for _ in 0..shift {
        value = value.saturating_mul(2);
    }
    if exponent >= 0 {
        for _ in 0..exponent {
            value = value.saturating_mul(10);
        }
        value
    } else {
        let mut divisor: i128 = 1;
        for _ in 0..exponent.unsigned_abs() {
            divisor = match divisor.checked_mul(10) {
                Some(d) => d,
                // Below one nano: any positive value rounds up to one.
                None => return i128::from(value > 0),
            };
        }
        let quotient = value / divisor;
        if value % divisor == 0 {
            quotient
        } else {
            quotient + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities() {
        let cases = [
            ("1", Some(1_000_000_000)),
            ("250m", Some(250_000_000)),
            ("0.5", Some(500_000_000)),
            ("1Ki", Some(1_024_000_000_000)),
            ("1.5Gi", Some(1_610_612_736_000_000_000)),
            ("2e3", Some(2_000_000_000_000)),
            ("1n", Some(1)),
            ("0.1n", Some(1)),
            ("0", Some(0)),
            ("-1", Some(-1_000_000_000)),
            ("abc", None),
            ("1Zi", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_quantity_nanos(text), want, "{text}");
        }
        // Same value, different spellings.
        assert_eq!(parse_quantity_nanos("1000m"), parse_quantity_nanos("1"));
        assert_eq!(parse_quantity_nanos("1024Mi"), parse_quantity_nanos("1Gi"));
    }

    fn class(spec: Value) -> &'static str {
        pod_qos_class(spec.as_object().unwrap_or(&Object::new()))
    }

    // pkg/apis/core/helper/qos/qos.go: ComputePodQOS
    #[test]
    fn qos_classes() {
        let container = |resources: Value| json!({"name": "c", "image": "x", "resources": resources});
        let cases = [
            (json!({"containers": [container(json!({}))]}), "BestEffort"),
            // Only cpu and memory count, and only above zero.
            (
                json!({"containers": [container(json!({"requests": {"ephemeral-storage": "1Gi", "cpu": "0"}}))]}),
                "BestEffort",
            ),
            (json!({"containers": [container(json!({"requests": {"cpu": "100m"}}))]}), "Burstable"),
            (
                json!({"containers": [container(json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1000m", "memory": "1024Mi"}}))]}),
                "Guaranteed",
            ),
            (
                json!({"containers": [container(json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}))]}),
                "Burstable",
            ),
            // Every container needs both limits.
            (
                json!({"containers": [
                    container(json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})),
                    container(json!({"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}))]}),
                "Burstable",
            ),
            // Init containers count.
            (
                json!({"containers": [container(json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}))],
                    "initContainers": [container(json!({}))]}),
                "Burstable",
            ),
            // Pod-level resources decide when set.
            (
                json!({"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
                    "containers": [container(json!({}))]}),
                "Guaranteed",
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(class(spec.clone()), want, "{spec}");
        }
    }
}
