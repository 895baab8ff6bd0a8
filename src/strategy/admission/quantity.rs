//! Resource quantities (`resource.Quantity`) as the admission plugins need
//! them: parsed exactly (to nano units), compared, added, and printed in
//! kube's canonical form, keeping the format (decimal or binary SI) of the
//! quantity a sum started from, as `Quantity.Add` does.
//!
//! Invariant: parsing never panics; a string that is not a quantity is
//! `None`, and magnitudes beyond what kube accepts (more than 2^63 units) are
//! refused rather than wrapped.

use serde_json::Value;

/// Nano units per unit.
const NANO: i128 = 1_000_000_000;
/// The largest magnitude accepted, in nano units: kube's quantities are
/// int64-scaled; anything larger is refused here (never wrapped).
const NANOS_MAX: i128 = (i64::MAX as i128) * NANO;

/// How a quantity prints (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

/// A parsed quantity: its exact value in nano units and its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    pub nanos: i128,
    pub format: Format,
}

impl Quantity {
    pub fn zero(format: Format) -> Quantity {
        Quantity { nanos: 0, format }
    }

    pub fn from_units(units: i64) -> Quantity {
        Quantity { nanos: i128::from(units) * NANO, format: Format::DecimalSI }
    }

    /// Parses kube's quantity grammar: a signed decimal number and a suffix
    /// (`n u m k M G T P E`, `Ki Mi Gi Ti Pi Ei`, or `e`/`E` and an exponent).
    // staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go: ParseQuantity
    pub fn parse(text: &str) -> Option<Quantity> {
        let text = text.trim();
        let number_end =
            text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(text.len());
        let (number, suffix) = text.split_at(number_end);
        let (format, scale) = suffix_scale(suffix)?;
        let value = parse_decimal(number)?;
        let nanos = scale.apply(value)?;
        (nanos.abs() <= NANOS_MAX).then_some(Quantity { nanos, format })
    }

    /// A JSON value holding a quantity (a string, or a number as kube
    /// also accepts).
    pub fn of(value: &Value) -> Option<Quantity> {
        match value {
            Value::String(s) => Quantity::parse(s),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    /// `Quantity.Add`: the receiver's format is kept.
    pub fn plus(self, other: Quantity) -> Quantity {
        Quantity { nanos: self.nanos.saturating_add(other.nanos), format: self.format }
    }

    /// The value in milli units, rounded up (`Quantity.MilliValue`).
    pub fn milli_value(self) -> i128 {
        ceil_div(self.nanos, 1_000_000)
    }

    /// The value in units, rounded up (`Quantity.Value`).
    pub fn value(self) -> i128 {
        ceil_div(self.nanos, NANO)
    }

    /// kube's canonical text (`Quantity.String`).
    // staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go: CanonicalizeBytes
    pub fn canonical(self) -> String {
        let integral = self.nanos % NANO == 0;
        let binary = self.format == Format::BinarySI && integral && self.nanos.abs() >= 1024 * NANO;
        if binary {
            let mut units = self.nanos / NANO;
            let mut power = 0;
            while power < BINARY_SUFFIXES.len() - 1 && units % 1024 == 0 {
                units /= 1024;
                power += 1;
            }
            return format!("{units}{}", BINARY_SUFFIXES.get(power).copied().unwrap_or(""));
        }
        if self.nanos == 0 {
            return "0".into();
        }
        // Decimal: the largest power of 1000 (from nano up) that divides exactly.
        let mut mantissa = self.nanos;
        let mut power = 0;
        while power < DECIMAL_SUFFIXES.len() - 1 && mantissa % 1000 == 0 {
            mantissa /= 1000;
            power += 1;
        }
        format!("{mantissa}{}", DECIMAL_SUFFIXES.get(power).copied().unwrap_or(""))
    }
}

/// A `ResourceList`: quantities by resource name, in name order. Entries
/// whose value is not a quantity are left out (decoding refuses them first).
pub type ResourceList = std::collections::BTreeMap<String, Quantity>;

/// The resource list at a JSON value (a map of quantities).
pub fn resource_list(value: Option<&Value>) -> ResourceList {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, q)| Some((name.clone(), Quantity::of(q)?)))
        .collect()
}

/// `addResourceList`: adds `more` into `list` (a new entry keeps its format).
pub fn add_into(list: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        list.entry(name.clone()).and_modify(|v| *v = v.plus(*q)).or_insert(*q);
    }
}

/// `maxResourceList`: each of `more`'s entries replaces a smaller one.
pub fn max_into(list: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        match list.get(name) {
            Some(v) if v.nanos >= q.nanos => {}
            _ => {
                list.insert(name.clone(), *q);
            }
        }
    }
}

/// Decimal suffixes from 10^-9 in steps of 10^3.
const DECIMAL_SUFFIXES: [&str; 16] = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E", "", "", "", "", "", ""];
const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b > 0 {
        q + 1
    } else {
        q
    }
}

/// A parsed decimal number: digits as an integer and the count of digits
/// after the point.
struct Decimal {
    digits: i128,
    fraction_digits: u32,
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if !whole.chars().chain(fraction.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Digits beyond nano precision cannot change anything kube compares;
    // a bounded count keeps the arithmetic in range.
    if whole.len() > 30 || fraction.len() > 30 {
        return None;
    }
    let mut digits: i128 = 0;
    for c in whole.chars().chain(fraction.chars()) {
        digits = digits.checked_mul(10)?.checked_add(i128::from(c.to_digit(10)?))?;
    }
    let fraction_digits = u32::try_from(fraction.len()).ok()?;
    Some(Decimal { digits: if negative { -digits } else { digits }, fraction_digits })
}

/// What a suffix multiplies by: 10^exp10 * 1024^exp1024.
struct Scale {
    exp10: i32,
    exp1024: u32,
}

impl Scale {
    /// The value in nano units, rounded up as kube rounds toward +infinity.
    fn apply(&self, value: Decimal) -> Option<i128> {
        let mut nanos = value.digits.checked_mul(1024_i128.checked_pow(self.exp1024)?)?;
        let shift = self.exp10 + 9 - i32::try_from(value.fraction_digits).ok()?;
        if shift >= 0 {
            nanos = nanos.checked_mul(10_i128.checked_pow(u32::try_from(shift).ok()?)?)?;
        } else {
            let divisor = 10_i128.checked_pow(u32::try_from(-shift).ok()?)?;
            nanos = ceil_div(nanos, divisor);
        }
        Some(nanos)
    }
}

fn suffix_scale(suffix: &str) -> Option<(Format, Scale)> {
    let decimal = |exp10| Some((Format::DecimalSI, Scale { exp10, exp1024: 0 }));
    let binary = |exp1024| Some((Format::BinarySI, Scale { exp10: 0, exp1024 }));
    match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        _ => {
            let exponent = suffix.strip_prefix('e').or_else(|| suffix.strip_prefix('E'))?;
            let exp10: i32 = exponent.parse().ok()?;
            (-30..=30).contains(&exp10).then_some((Format::DecimalExponent, Scale { exp10, exp1024: 0 }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_canonical_forms() {
        for (text, canonical) in [
            ("100m", "100m"),
            ("1000m", "1"),
            ("0.5", "500m"),
            ("1500", "1500"),
            ("2000", "2k"),
            ("64Mi", "64Mi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1Gi", "1Gi"),
            ("10", "10"),
            ("0", "0"),
        ] {
            let q = Quantity::parse(text).unwrap_or_else(|| panic!("{text} parses"));
            assert_eq!(q.canonical(), canonical, "{text}");
        }
    }

    #[test]
    fn sums_keep_the_first_format() {
        let a = Quantity::parse("64Mi").unwrap();
        let b = Quantity::parse("64Mi").unwrap();
        assert_eq!(a.plus(b).canonical(), "128Mi");
        let c = Quantity::parse("250m").unwrap().plus(Quantity::parse("1").unwrap());
        assert_eq!(c.canonical(), "1250m");
    }

    #[test]
    fn compares_exactly() {
        assert!(Quantity::parse("1").unwrap().nanos > Quantity::parse("999m").unwrap().nanos);
        assert_eq!(Quantity::parse("1Ki").unwrap().value(), 1024);
        assert_eq!(Quantity::parse("1n").unwrap().milli_value(), 1);
    }

    proptest::proptest! {
        /// Any text parses or is refused without panicking; what parses
        /// prints canonically as text that parses to the same value.
        #[test]
        fn canonical_text_round_trips(text in "[-+]?[0-9]{0,12}(\\.[0-9]{0,12})?(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[-+]?[0-9]{1,2}|E[0-9]|x)?") {
            if let Some(q) = Quantity::parse(&text) {
                let again = Quantity::parse(&q.canonical());
                proptest::prop_assert_eq!(again.map(|a| a.nanos), Some(q.nanos), "{} -> {}", text, q.canonical());
            }
        }
    }

    #[test]
    fn refuses_what_is_not_a_quantity() {
        for text in ["", "abc", "1.2.3", "1Xi", "--1", "1e999", "99999999999999999999999999999999E"] {
            assert!(Quantity::parse(text).is_none(), "{text}");
        }
    }
}
