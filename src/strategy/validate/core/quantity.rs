//! `resource.Quantity` values for comparison (requests against limits, a
//! claim's growth, negative or zero checks): a parsed quantity is its value
//! in nano-units, rounded up, as kube keeps at most nine decimal places.
//!
//! Invariant: never panics; too large values saturate, unparseable text is
//! `None` (decoding has already refused malformed quantities).

/// The value of a quantity string times 10^9, rounded up; `None` if the
/// text is not a quantity.
pub fn nano_value(text: &str) -> Option<i128> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    let number_len = rest.bytes().take_while(|c| c.is_ascii_digit() || *c == b'.').count();
    let (number, suffix) = rest.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let (binary_power, decimal_exponent) = suffix_scale(suffix)?;
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let exponent = 9 - i64::try_from(fraction.len()).ok()? + decimal_exponent;
    let magnitude = scale(digits, binary_power, exponent);
    Some(if negative { -magnitude } else { magnitude })
}

/// The suffix's (power of two, power of ten).
fn suffix_scale(suffix: &str) -> Option<(u32, i64)> {
    let decimal = |e: i64| Some((0, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => Some((10, 0)),
        "Mi" => Some((20, 0)),
        "Gi" => Some((30, 0)),
        "Ti" => Some((40, 0)),
        "Pi" => Some((50, 0)),
        "Ei" => Some((60, 0)),
        _ => {
            let exponent = suffix.strip_prefix('e').or_else(|| suffix.strip_prefix('E'))?;
            exponent.parse::<i64>().ok().filter(|e| e.abs() < 1000).and_then(decimal)
        }
    }
}

/// `digits * 2^binary_power * 10^exponent`, rounded up, saturating.
fn scale(digits: &str, binary_power: u32, exponent: i64) -> i128 {
    if digits.is_empty() {
        return 0;
    }
    if digits.len() > 38 {
        return i128::MAX;
    }
    let Ok(mantissa) = digits.parse::<i128>() else {
        return i128::MAX;
    };
    let Some(mut value) = mantissa.checked_mul(1i128 << binary_power.min(100)) else {
        return i128::MAX;
    };
    if exponent >= 0 {
        for _ in 0..exponent {
            value = match value.checked_mul(10) {
                Some(v) => v,
                None => return i128::MAX,
            };
        }
        value
    } else {
        let mut divisor: i128 = 1;
        for _ in 0..(-exponent) {
            divisor = match divisor.checked_mul(10) {
                Some(d) => d,
                // Smaller than a nano-unit: rounds up to one.
                None => return 1,
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

    #[test]
    fn quantities_in_nano_units() {
        let cases: &[(&str, Option<i128>)] = &[
            ("1", Some(1_000_000_000)),
            ("100m", Some(100_000_000)),
            ("0.1", Some(100_000_000)),
            ("1Ki", Some(1024 * 1_000_000_000)),
            ("1Gi", Some((1i128 << 30) * 1_000_000_000)),
            ("1k", Some(1_000_000_000_000)),
            ("1e3", Some(1_000_000_000_000)),
            ("1E", Some(1_000_000_000_000_000_000_000_000_000)),
            ("-1", Some(-1_000_000_000)),
            ("0", Some(0)),
            ("1n", Some(1)),
            ("0.5n", Some(1)),
            ("", None),
            ("abc", None),
            ("1Xi", None),
            ("1.2.3", None),
        ];
        for (text, want) in cases {
            assert_eq!(nano_value(text), *want, "{text}");
        }
        assert_eq!(nano_value("1Gi"), nano_value("1073741824"));
        assert!(nano_value("1G") < nano_value("1Gi"));
    }
}
