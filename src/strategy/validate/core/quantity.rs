//! `resource.Quantity` values for comparison (requests against limits, a
//! claim's growth, negative or zero checks): a parsed quantity is its value
//! in nano-units, rounded up, as kube keeps at most nine decimal places.
//!
//! [`go_value`] renders a `resource.Quantity` passed by value to
//! `field.Invalid`, which Go prints with `%#v` (its `String` has a pointer
//! receiver): `resource.Quantity{i:resource.int64Amount{value:500,
//! scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m",
//! Format:"DecimalSI"}`, as `ParseQuantity` builds it.
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

/// A quantity as Go's `%#v` prints the value `ParseQuantity` returns for
/// `text` (an int64 amount with its scale, the text cached when it is
/// canonical; the big-decimal slow path with its pointer written `...`).
/// `stringed`: the caller's message called `String()` on that same value
/// (as LimitRange's do), which caches the text in it.
pub fn go_value(text: &str, stringed: bool) -> String {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let num = rest[..digits_len].trim_start_matches('0');
    let num = if num.is_empty() { "0" } else { num };
    let after = &rest[digits_len..];
    let (denom, suffix) = match after.strip_prefix('.') {
        Some(frac) => {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            (&frac[..n], &frac[n..])
        }
        None => ("", after),
    };
    let (format, exponent): (&str, i64) = match suffix {
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].iter().position(|s| *s == suffix).unwrap_or(0);
            ("BinarySI", 10 * (power as i64 + 1))
        }
        _ => match suffix_scale(suffix) {
            Some((_, e)) if suffix.starts_with(['e', 'E']) => ("DecimalExponent", e),
            Some((_, e)) => ("DecimalSI", e),
            None => ("DecimalSI", 0),
        },
    };
    let slow = |format: &str| {
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:0, scale:0}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(...)}}, s:{}, Format:{}}}",
            crate::types::validation::go_quote(if stringed { text } else { "" }),
            crate::types::validation::go_quote(format)
        )
    };
    let (mut scale, mantissa, precision) = if format == "BinarySI" {
        if denom.is_empty() {
            let precision = 15 - num.len() as i64 - (exponent as f32 * 3.0 / 10.0) as i64 - 1;
            (0, 1i64 << exponent.min(62), precision)
        } else {
            (0, 1, -1)
        }
    } else {
        (exponent, 1, 18 - (num.len() + denom.len()) as i64)
    };
    if precision < 0 {
        return slow(format);
    }
    scale -= denom.len() as i64;
    if scale < -9 {
        return slow(format);
    }
    let shifted = format!("{num}{denom}");
    let Ok(value) = shifted.parse::<i64>() else { return slow(format) };
    let Some(mut result) = value.checked_mul(mantissa) else { return slow(format) };
    if negative {
        result = -result;
    }
    let canonical = if format == "BinarySI" {
        exponent % 10 == 0 && value & 0x07 != 0
    } else {
        scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
    };
    format!(
        "resource.Quantity{{i:resource.int64Amount{{value:{result}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{}, Format:{}}}",
        crate::types::validation::go_quote(if canonical || stringed { text } else { "" }),
        crate::types::validation::go_quote(format)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_as_go_prints_them() {
        // The form kube's errors show (a Node's "8Gi" hugepages: not canonical, no text).
        assert_eq!(
            go_value("0", false),
            r#"resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}"#
        );
        assert_eq!(
            go_value("500m", false),
            r#"resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}"#
        );
        assert_eq!(
            go_value("1Gi", false),
            r#"resource.Quantity{i:resource.int64Amount{value:1073741824, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1Gi", Format:"BinarySI"}"#
        );
        assert!(
            go_value("8Gi", false).contains("value:8589934592, scale:0}")
                && go_value("8Gi", false).contains(r#"s:"", "#)
        );
        assert!(go_value("-1", false).contains("value:-1, scale:0") && go_value("-1", false).contains(r#"s:"-1""#));
        assert!(go_value("1.5", false).contains("value:15, scale:-1") && go_value("1.5", false).contains(r#"s:"""#));
        assert!(
            go_value("1e3", false).contains("value:1, scale:3")
                && go_value("1e3", false).contains(r#"Format:"DecimalExponent""#)
        );
        assert!(go_value("1k", false).contains("value:1, scale:3") && go_value("1k", false).contains(r#"s:"1k""#));
        assert!(go_value("123456789012345678901", false).contains("(*inf.Dec)(...)"));
        assert!(go_value("", false).contains("value:0"));
        assert!(go_value("0", true).contains(r#"s:"0""#));
    }

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
