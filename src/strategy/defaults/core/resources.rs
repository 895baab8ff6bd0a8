//! pkg/apis/core/v1/defaults.go: SetDefaults_ResourceList, which the
//! generated defaulters run on every ResourceList of the core kinds
//! (containers' limits and requests, pod overhead, PVC and PV capacities,
//! node capacity and allocatable): every quantity finer than a milli-unit
//! is rounded up, away from zero, to milli scale (resource.Quantity.RoundUp
//! at scale -3), so `100u` is stored as `1m`.
//!
//! The rounded value is written as milli-units (`{n}m`, or `{n}e-3` for a
//! quantity written with an exponent, whose format Go keeps); the decoder's
//! canonical form (strategy/decode.rs) then spells it as kube does. Values
//! already at milli precision are left untouched.

use crate::strategy::rules::core::parse_quantity_nanos;
use crate::strategy::Object;
use serde_json::Value;

const NANOS_PER_MILLI: i128 = 1_000_000;

/// Rounds every quantity of the ResourceList at `key` of `parent`.
pub fn round_up_list(parent: &mut Object, key: &str) {
    let Some(list) = parent.get_mut(key).and_then(Value::as_object_mut) else {
        return;
    };
    for quantity in list.values_mut() {
        if let Some(rounded) = quantity.as_str().and_then(round_up_to_milli) {
            *quantity = Value::String(rounded);
        }
    }
}

/// Rounds `limits` and `requests` of a ResourceRequirements at `key`.
pub fn round_up_requirements(parent: &mut Object, key: &str) {
    if let Some(requirements) = parent.get_mut(key).and_then(Value::as_object_mut) {
        round_up_list(requirements, "limits");
        round_up_list(requirements, "requests");
    }
}

/// The milli-scale spelling of `text` when it is finer than milli; `None`
/// when it is already at milli precision or does not parse.
fn round_up_to_milli(text: &str) -> Option<String> {
    let nanos = parse_quantity_nanos(text)?;
    if nanos % NANOS_PER_MILLI == 0 || nanos.unsigned_abs() >= (i128::MAX as u128) / 2 {
        return None;
    }
    // Away from zero.
    let millis = nanos / NANOS_PER_MILLI + nanos.signum();
    let exponent_form = text.trim().rsplit_once(['e', 'E']).is_some_and(|(_, exp)| exp.parse::<i32>().is_ok());
    Some(if exponent_form { format!("{millis}e-3") } else { format!("{millis}m") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // pkg/apis/core/v1/defaults.go: SetDefaults_ResourceList (RoundUp to milli scale)
    #[test]
    fn finer_than_milli_rounds_up() {
        let cases = [
            ("100u", Some("1m")),
            ("0.0001", Some("1m")),
            ("1.0005", Some("1001m")),
            ("-100u", Some("-1m")),
            ("1e-4", Some("1e-3")),
            ("250m", None),
            ("1Gi", None),
            ("1E", None),
            ("bad", None),
        ];
        for (text, want) in cases {
            assert_eq!(round_up_to_milli(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn lists_and_requirements() {
        let mut container =
            json!({"resources": {"limits": {"cpu": "100u", "memory": "1Gi"}, "requests": {"cpu": "1n"}}})
                .as_object()
                .cloned()
                .unwrap_or_default();
        round_up_requirements(&mut container, "resources");
        assert_eq!(
            container["resources"],
            json!({"limits": {"cpu": "1m", "memory": "1Gi"}, "requests": {"cpu": "1m"}})
        );
    }
}
