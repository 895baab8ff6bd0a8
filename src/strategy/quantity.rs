//! `resource.Quantity` as kube-apiserver decodes and re-encodes it: the
//! parser's accepted grammar and its three errors, and the string a decode
//! and encode round trip leaves (`1000m` -> `1`, `0.5` -> `500m`, `2048Ki` ->
//! `2Mi`, `100m` kept as written).
//!
//! Facts from apimachinery `pkg/api/resource/quantity.go` (`ParseQuantity`,
//! `parseQuantityString`, `CanonicalizeBytes`, `MarshalJSON`,
//! `UnmarshalJSON`), `amount.go` (`AsCanonicalBytes`,
//! `AsCanonicalBase1024Bytes`) and `suffix.go` (the suffix tables).
//!
//! Invariant: no input panics; values of any size are handled exactly (a
//! decimal digit string and a power-of-ten exponent, never a float).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// Why a string is not a quantity (the three errors of `quantity.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// `ErrFormatWrong`.
    Format,
    /// `ErrNumeric`.
    Numeric,
    /// `ErrSuffix`.
    Suffix,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantityError::Format => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            QuantityError::Numeric => "unable to parse numeric part of quantity",
            QuantityError::Suffix => "unable to parse quantity's suffix",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// `maxInt64Factors` of quantity.go: decimal digits an int64 always holds.
const MAX_INT64_FACTORS: i64 = 18;
/// `Nano`: the smallest scale a quantity keeps; finer values round up.
const NANO: i64 = -9;

/// The JSON string a Go decode and encode of the JSON text `raw` (a string's
/// contents, or a number's literal) leaves, as `Quantity.UnmarshalJSON` then
/// `MarshalJSON` make it.
pub fn canonical(raw: &str) -> Result<Cow<'_, str>, QuantityError> {
    // quantity.go UnmarshalJSON: surrounding white space is ignored.
    let input = raw.trim();
    if input.is_empty() {
        return Err(QuantityError::Format);
    }
    // quantity.go ParseQuantity: "0" keeps its string.
    if input == "0" {
        return Ok(Cow::Borrowed(input));
    }
    let parts = split(input)?;
    let (base, exponent, format) = interpret(parts.suffix).ok_or(QuantityError::Suffix)?;
    if let Some(kept) = fast_path_keeps_string(&parts, exponent, format)? {
        return Ok(if kept { Cow::Borrowed(input) } else { Cow::Owned(fast_path_canonical(&parts, exponent, format)) });
    }
    let mut amount = Decimal::parse(parts.value).ok_or(QuantityError::Numeric)?;
    if base == 10 {
        amount.exponent += i64::from(exponent);
    } else {
        for _ in 0..exponent {
            amount.double();
        }
    }
    amount.round_up_to_nano();
    let mut format = format;
    if format == Format::BinarySI && amount.cmp_magnitude(&Decimal::from_u64(i64::MAX as u64)) == Ordering::Greater {
        amount = Decimal { negative: amount.negative, digits: i64::MAX.to_string().into_bytes(), exponent: 0 };
    }
    // The magnitude is compared (Go negates the amount around both caps).
    if format == Format::BinarySI && !amount.is_zero() && amount.cmp_magnitude(&Decimal::from_u64(1)) == Ordering::Less
    {
        format = Format::DecimalSI;
    }
    Ok(Cow::Owned(amount.canonical(format)))
}

/// The pieces `parseQuantityString` finds.
struct Parts<'a> {
    negative: bool,
    /// The number as written, with its sign (parsed on the slow path).
    value: &'a str,
    /// Integer digits without leading zeros ("0" when none).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// quantity.go parseQuantityString.
fn split(s: &str) -> Result<Parts<'_>, QuantityError> {
    let bytes = s.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut negative = false;
    match bytes.first() {
        Some(b'-') => {
            negative = true;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && bytes.get(pos) == Some(&b'0') {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts { negative, value: "0", num: "0", denom: "", suffix: "" });
    }
    let num_start = pos;
    while pos < end && bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts { negative, value: s, num: &s[num_start..], denom: "", suffix: "" });
    }
    let num = if pos == num_start { "0" } else { &s[num_start..pos] };
    let mut denom = "";
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while pos < end && bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        denom = &s[start..pos];
        if pos >= end {
            return Ok(Parts { negative, value: s, num, denom, suffix: "" });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && bytes.get(pos).is_some_and(|c| b"eEinumkKMGTP".contains(c)) {
        pos += 1;
    }
    if pos < end && matches!(bytes.get(pos), Some(b'-' | b'+')) {
        pos += 1;
    }
    while pos < end && bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts { negative, value, num, denom, suffix: &s[suffix_start..] })
}

/// suffix.go: the suffix's base, exponent and format.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    const DECIMAL: &[(&str, i32)] =
        &[("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];
    const BINARY: &[(&str, i32)] = &[("Ki", 10), ("Mi", 20), ("Gi", 30), ("Ti", 40), ("Pi", 50), ("Ei", 60)];
    if let Some((_, e)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        return Some((10, *e, Format::DecimalSI));
    }
    if let Some((_, e)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        return Some((2, *e, Format::BinarySI));
    }
    let digits = suffix.strip_prefix(['e', 'E']).filter(|d| !d.is_empty())?;
    // Go keeps the low 32 bits of the parsed int64 (`int32(parsed)`).
    let parsed = go_parse_int(digits)?;
    Some((10, parsed as i32, Format::DecimalExponent))
}

/// Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits.
fn go_parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// quantity.go ParseQuantity's int64 fast path: `Some(true)` when it keeps
/// the input string as the encoding, `Some(false)` when it holds the value
/// as an int64 without the string, `None` when the slow path decides.
fn fast_path_keeps_string(parts: &Parts<'_>, exponent: i32, format: Format) -> Result<Option<bool>, QuantityError> {
    let (num, denom) = (parts.num.len() as i64, parts.denom.len() as i64);
    let (precision, mut scale, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSI => (MAX_INT64_FACTORS - (num + denom), i64::from(exponent), 1i64),
        Format::BinarySI if exponent >= 0 && denom == 0 => {
            let digits_of_suffix = (exponent as f32 * 3.0 / 10.0) as i64;
            (15 - num - digits_of_suffix - 1, 0, 1i64 << exponent.min(62))
        }
        Format::BinarySI => (-1, 0, 1),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale -= denom;
    if scale < NANO {
        return Ok(None);
    }
    let value = shifted_value(parts).ok_or(QuantityError::Numeric)?;
    if value.checked_mul(mantissa).is_none() {
        return Ok(None);
    }
    let keep = match format {
        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !ends_with_000(parts) && !parts.num.starts_with('0'),
    };
    Ok(Some(keep))
}

/// `num + denom` as an int64.
fn shifted_value(parts: &Parts<'_>) -> Option<i64> {
    let mut value: i64 = 0;
    for b in parts.num.bytes().chain(parts.denom.bytes()) {
        value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(value)
}

/// `strings.HasSuffix(num+denom, "000")`.
fn ends_with_000(parts: &Parts<'_>) -> bool {
    let tail: Vec<u8> = parts.num.bytes().chain(parts.denom.bytes()).rev().take(3).collect();
    tail.len() == 3 && tail.iter().all(|b| *b == b'0')
}

/// The canonical string of a value the fast path holds as an int64.
fn fast_path_canonical(parts: &Parts<'_>, exponent: i32, format: Format) -> String {
    let mut digits: Vec<u8> = parts.num.bytes().chain(parts.denom.bytes()).collect();
    let mut amount = Decimal { negative: parts.negative, digits: Vec::new(), exponent: 0 };
    match format {
        Format::BinarySI => {
            amount.digits = std::mem::take(&mut digits);
            amount.trim_leading_zeros();
            for _ in 0..exponent {
                amount.double();
            }
        }
        _ => {
            amount.digits = digits;
            amount.exponent = i64::from(exponent) - parts.denom.len() as i64;
            amount.trim_leading_zeros();
        }
    }
    amount.canonical(format)
}

/// A decimal number: `digits` (ASCII, no leading zeros; empty is zero)
/// times ten to `exponent`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    fn from_u64(n: u64) -> Decimal {
        Decimal { negative: false, digits: n.to_string().into_bytes(), exponent: 0 }
    }

    /// inf.Dec SetString of the number part: sign, digits, one dot.
    fn parse(value: &str) -> Option<Decimal> {
        let (negative, rest) = match value.as_bytes().first() {
            Some(b'-') => (true, &value[1..]),
            Some(b'+') => (false, &value[1..]),
            _ => (false, value),
        };
        let (whole, fraction) = rest.split_once('.').unwrap_or((rest, ""));
        let all = whole.bytes().chain(fraction.bytes());
        if whole.len() + fraction.len() == 0 || !all.clone().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut decimal = Decimal { negative, digits: all.collect(), exponent: -(fraction.len() as i64) };
        decimal.trim_leading_zeros();
        Some(decimal)
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    fn trim_leading_zeros(&mut self) {
        let zeros = self.digits.iter().take_while(|d| **d == b'0').count();
        self.digits.drain(..zeros);
    }

    /// Moves trailing zeros into the exponent (`removeInt64Factors(v, 10)`).
    fn trim_trailing_zeros(&mut self) {
        while self.digits.last() == Some(&b'0') {
            self.digits.pop();
            self.exponent += 1;
        }
    }

    fn double(&mut self) {
        let mut carry = 0u8;
        for d in self.digits.iter_mut().rev() {
            let v = (*d - b'0') * 2 + carry;
            *d = b'0' + v % 10;
            carry = v / 10;
        }
        if carry > 0 {
            self.digits.insert(0, b'0' + carry);
        }
    }

    /// Adds one unit in the last place to the magnitude.
    fn increment(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == b'9' {
                *d = b'0';
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, b'1');
    }

    /// `amount.Round(amount, Nano, inf.RoundUp)`: away from zero.
    fn round_up_to_nano(&mut self) {
        if self.is_zero() || self.exponent >= NANO {
            return;
        }
        let drop = usize::try_from(NANO - self.exponent).unwrap_or(usize::MAX);
        let keep = self.digits.len().saturating_sub(drop);
        let inexact = self.digits.get(keep..).is_some_and(|d| d.iter().any(|d| *d != b'0'));
        self.digits.truncate(keep);
        self.exponent = NANO;
        if inexact {
            self.increment();
        }
        self.trim_leading_zeros();
    }

    /// Compares absolute values.
    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let (a, b) = (self.digits.len() as i64 + self.exponent, other.digits.len() as i64 + other.exponent);
        if a != b {
            return a.cmp(&b);
        }
        let n = self.digits.len().max(other.digits.len());
        let digit = |d: &Decimal, i: usize| d.digits.get(i).copied().unwrap_or(b'0');
        (0..n).map(|i| digit(self, i).cmp(&digit(other, i))).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal)
    }

    /// quantity.go CanonicalizeBytes.
    fn canonical(mut self, format: Format) -> String {
        self.trim_leading_zeros();
        if self.is_zero() {
            return "0".into();
        }
        self.trim_trailing_zeros();
        let format = match format {
            Format::BinarySI if self.cmp_magnitude(&Decimal::from_u64(1024)) == Ordering::Less => Format::DecimalSI,
            Format::BinarySI if self.exponent < 0 => Format::DecimalSI,
            other => other,
        };
        let sign = if self.negative { "-" } else { "" };
        if format == Format::BinarySI {
            if let Some(text) = self.base1024(sign) {
                return text;
            }
        }
        // amount.go AsCanonicalBytes: the exponent down to a multiple of 3.
        while self.exponent % 3 != 0 {
            self.digits.push(b'0');
            self.exponent -= 1;
        }
        let number = String::from_utf8_lossy(&self.digits).into_owned();
        format!("{sign}{number}{}", decimal_suffix(self.exponent, format))
    }

    /// amount.go AsCanonicalBase1024Bytes for an integral value that fits
    /// 64 bits (BinarySI values are capped at the int64 maximum).
    fn base1024(&self, sign: &str) -> Option<String> {
        let mut value: u64 = 0;
        for d in &self.digits {
            value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        for _ in 0..self.exponent {
            value = value.checked_mul(10)?;
        }
        let mut power = 0;
        while value != 0 && value.is_multiple_of(1024) {
            value /= 1024;
            power += 1;
        }
        // suffix.go: a binary exponent without a suffix prints none.
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].get(power).copied().unwrap_or("");
        Some(format!("{sign}{value}{suffix}"))
    }
}

/// suffix.go constructBytes for base 10: an SI suffix, or `e<exponent>`.
fn decimal_suffix(exponent: i64, format: Format) -> String {
    if format == Format::DecimalExponent {
        return if exponent == 0 { String::new() } else { format!("e{exponent}") };
    }
    let suffix = match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        // 0, and exponents without an SI suffix (Go prints none).
        _ => "",
    };
    suffix.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        let cases = [
            // (input, what kube stores)
            ("0", "0"),
            ("-0", "0"),
            ("000", "0"),
            ("1", "1"),
            ("+1", "+1"),
            ("-1", "-1"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("100m", "100m"),
            ("0.5", "500m"),
            ("0.1", "100m"),
            (".5", "500m"),
            ("1.5", "1500m"),
            ("1.0", "1"),
            // A bare dot is accepted and, being canonical otherwise, kept.
            ("1.", "1."),
            ("1.500k", "1.500k"),
            ("1000", "1k"),
            ("1000k", "1M"),
            ("1100", "1100"),
            ("12e6", "12e6"),
            ("1e3", "1e3"),
            ("1E3", "1E3"),
            ("10e3", "10e3"),
            ("1000e3", "1e6"),
            ("1e-3", "1e-3"),
            ("100e-3", "100e-3"),
            ("1024Mi", "1Gi"),
            ("2048Ki", "2Mi"),
            ("128Mi", "128Mi"),
            ("100Mi", "100Mi"),
            ("1Ki", "1Ki"),
            ("1.5Gi", "1536Mi"),
            ("0.5Ki", "512"),
            ("1Gi", "1Gi"),
            ("64Mi", "64Mi"),
            ("1000Mi", "1000Mi"),
            ("1M", "1M"),
            ("1G", "1G"),
            ("250m", "250m"),
            ("0.25", "250m"),
            ("1n", "1n"),
            ("0.1n", "1n"),
            ("1.0000000001", "1000000001n"),
            ("5u", "5u"),
            ("1 ", "1"),
            (" 100m", "100m"),
            ("0.000000000001", "1n"),
            ("-0.000000000001", "-1n"),
            ("1.1Ki", "1126400m"),
            ("99999999999999999999", "99999999999999999999"),
            ("8Ei", "9223372036854775807"),
            ("1E", "1E"),
            ("1000E", "1"),
            // No SI suffix for 10^24: Go prints the digits without one.
            ("1000000E", "1"),
            // No digits at all is zero, as parseQuantityString reads it.
            ("Mi", "0"),
            (".", "0"),
            ("10Gi", "10Gi"),
            ("3", "3"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical(input).as_deref(), Ok(expected), "{input:?}");
        }
    }

    #[test]
    fn refused_as_go_refuses() {
        let format = ["", " ", "abc", "1x", "1.5.5", "1Mi5x", "1 Mi", "true", "{}"];
        for input in format {
            assert_eq!(canonical(input), Err(QuantityError::Format), "{input:?}");
        }
        for input in ["1i", "1Mb", "1kk", "1e1.5", "1mi", "1e99999999999999999999", "1e", "--1"] {
            assert!(canonical(input).is_err(), "{input:?}");
        }
        assert_eq!(canonical("1mi"), Err(QuantityError::Suffix));
        assert_eq!(canonical("1e"), Err(QuantityError::Suffix));
        assert_eq!(canonical("--1"), Err(QuantityError::Suffix));
        assert_eq!(
            QuantityError::Format.to_string(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn canonical_strings_are_stable() {
        for input in ["1", "100m", "1Gi", "2Mi", "500m", "1e3", "1536Mi", "1n", "12e6", "1k"] {
            let once = canonical(input).unwrap().into_owned();
            assert_eq!(canonical(&once).unwrap(), once, "{input}");
        }
    }
}
