//! The CronJob schedule parser kube-apiserver validates with: robfig/cron
//! v3's `ParseStandard` (five fields minute, hour, day of month, month, day
//! of week; `@` descriptors; an optional `TZ=`/`CRON_TZ=` prefix), returning
//! its error texts, which kube puts in the `spec.schedule` cause.
//!
//! Invariant: pure; no input panics (bounds are checked, numbers saturate).

use crate::types::validation::go_quote;

/// One field's bounds and names (robfig/cron v3 `bounds`).
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DAYS_OF_MONTH: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)],
};

/// `cron.ParseStandard(spec)`: `Ok` or the library's error text.
pub fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_string());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // The zone itself is loaded from the time zone database by the
        // library; its name is checked by the caller's timeZone rules.
        let Some(space) = spec.find(' ') else {
            return Err(format!(
                "provided bad location {}: unknown time zone",
                spec.split_once('=').map_or("", |p| p.1)
            ));
        };
        spec = spec.get(space..).unwrap_or("").trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    for (field, bounds) in fields.iter().zip([&MINUTES, &HOURS, &DAYS_OF_MONTH, &MONTHS, &DAYS_OF_WEEK]) {
        for range in field.split(',').filter(|r| !r.is_empty()) {
            check_range(range, bounds)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), String> {
    match spec {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => Ok(()),
        _ => match spec.strip_prefix("@every ") {
            Some(duration) => parse_duration(duration).map_err(|e| format!("failed to parse duration {spec}: {e}")),
            None => Err(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// Go's `strconv.Atoi` then robfig's non-negative check (`mustParseInt`).
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            go_quote(expr)
        ));
    }
    let Ok(number) = expr.parse::<i64>() else {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
            go_quote(expr)
        ));
    };
    if number < 0 {
        return Err(format!("negative number ({number}) not allowed: {expr}"));
    }
    Ok(number.unsigned_abs())
}

fn parse_int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    match bounds.names.iter().find(|(name, _)| *name == lower) {
        Some((_, value)) => Ok(*value),
        None => must_parse_int(expr),
    }
}

// robfig/cron v3 getRange
fn check_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step.first().copied().unwrap_or("").split('-').collect();
    let single = low_and_high.len() == 1;
    let first = low_and_high.first().copied().unwrap_or("");
    let (start, mut end) = if first == "*" || first == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = parse_int_or_name(first, bounds)?;
        match low_and_high.as_slice() {
            [_] => (start, start),
            [_, high] => (start, parse_int_or_name(high, bounds)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.as_slice() {
        [_] => 1,
        [_, step] => {
            let step = must_parse_int(step)?;
            if single {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// Go's `time.ParseDuration` acceptance, with its error texts.
fn parse_duration(text: &str) -> Result<(), String> {
    let quoted = go_quote(text);
    let mut rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(format!("time: invalid duration {quoted}"));
    }
    while !rest.is_empty() {
        let number_len = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let number = rest.get(..number_len).unwrap_or("");
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(format!("time: invalid duration {quoted}"));
        }
        rest = rest.get(number_len..).unwrap_or("");
        let unit_len = rest.chars().take_while(|c| !c.is_ascii_digit() && *c != '.').map(char::len_utf8).sum();
        let unit = rest.get(..unit_len).unwrap_or("");
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {quoted}"));
        }
        if !matches!(unit, "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return Err(format!("time: unknown unit {} in duration {quoted}", go_quote(unit)));
        }
        rest = rest.get(unit_len..).unwrap_or("");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // github.com/robfig/cron/v3 parser.go: ParseStandard's accepted forms.
    #[test]
    fn valid_schedules() {
        for spec in [
            "0 3 * * *",
            "*/5 * * * *",
            "0 0 1 jan,jul mon-fri",
            "15 10-20/2 * * 0",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 3 * * *",
            "0 0 ? * SUN",
        ] {
            assert_eq!(parse_standard(spec), Ok(()), "{spec}");
        }
    }

    // The library's error texts, which kube returns in the cause.
    #[test]
    fn invalid_schedules() {
        let cases = [
            ("", "empty spec string"),
            ("* * *", "expected exactly 5 fields, found 3: [* * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
            ("*/0 * * * *", "step of range should be a positive number: */0"),
            ("x * * * *", r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            ("* * * * 7", "end of range (7) above maximum (6): 7"),
            ("@sometimes", "unrecognized descriptor: @sometimes"),
            ("@every 5", r#"failed to parse duration @every 5: time: missing unit in duration "5""#),
        ];
        for (spec, expected) in cases {
            assert_eq!(parse_standard(spec), Err(expected.to_string()), "{spec}");
        }
    }
}
