//! Label and field selectors: parsing the query-string forms and matching
//! them against an object's labels or selectable fields.
//!
//! Grammar (as the Kubernetes API documents it): requirements separated by
//! commas; label requirements are `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k` (exists) and `!k` (does not exist); field requirements
//! are `f=v`, `f==v`, `f!=v`.
//!
//! Invariant: no I/O; parsing never panics on any input (fuzzed later).

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operator {
    Equals,
    NotEquals,
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    /// The value for `Equals`/`NotEquals`.
    pub value: String,
}

/// A conjunction of requirements. The empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub requirements: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement: {0}")]
pub struct SelectorError(pub String);

impl Selector {
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Matches using `lookup(key) -> Option<value>`.
    pub fn matches<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| {
            let value = lookup(&r.key);
            match &r.operator {
                Operator::Equals => value == Some(r.value.as_str()),
                Operator::NotEquals => value != Some(r.value.as_str()),
                Operator::In(values) => value.is_some_and(|v| values.iter().any(|x| x == v)),
                Operator::NotIn(values) => !value.is_some_and(|v| values.iter().any(|x| x == v)),
                Operator::Exists => value.is_some(),
                Operator::DoesNotExist => value.is_none(),
            }
        })
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(input: &str) -> Result<Vec<&str>, SelectorError> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(SelectorError(format!("unbalanced ')' in {input:?}")));
                }
            }
            ',' if depth == 0 => {
                parts.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(SelectorError(format!("unbalanced '(' in {input:?}")));
    }
    parts.push(&input[start..]);
    Ok(parts)
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 316 && key.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Parses a `labelSelector`.
pub fn parse_label_selector(input: &str) -> Result<Selector, SelectorError> {
    let mut requirements = Vec::new();
    if input.trim().is_empty() {
        return Ok(Selector { requirements });
    }
    for part in split_top_level(input)? {
        let part = part.trim();
        if part.is_empty() {
            return Err(SelectorError(format!("found empty requirement in {input:?}")));
        }
        requirements.push(parse_label_requirement(part)?);
    }
    Ok(Selector { requirements })
}

fn parse_label_requirement(part: &str) -> Result<Requirement, SelectorError> {
    let bad = || SelectorError(format!("{part:?} is not a valid label requirement"));
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        if !valid_key(key) {
            return Err(bad());
        }
        return Ok(Requirement { key: key.into(), operator: Operator::DoesNotExist, value: String::new() });
    }
    for (token, negate) in [(" notin ", true), (" in ", false)] {
        if let Some(index) = part.find(token) {
            let key = part[..index].trim();
            let rest = part[index + token.len()..].trim();
            let inner = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(bad)?;
            let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
            if !valid_key(key) || values.iter().any(|v| !valid_value(v)) {
                return Err(bad());
            }
            let operator = if negate { Operator::NotIn(values) } else { Operator::In(values) };
            return Ok(Requirement { key: key.into(), operator, value: String::new() });
        }
    }
    let (key, operator, value) = split_equality(part).unwrap_or((part, Operator::Exists, ""));
    let key = key.trim();
    let value = value.trim();
    if !valid_key(key) || !valid_value(value) {
        return Err(bad());
    }
    Ok(Requirement { key: key.into(), operator, value: value.into() })
}

/// Splits a requirement at its first operator, as kube's `splitTerm` does:
/// at each position, `!=`, then `==`, then `=`. A key therefore never holds
/// `=` or `!=`; everything after the operator is the value.
fn split_equality(part: &str) -> Option<(&str, Operator, &str)> {
    let bytes = part.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        // `!` and `=` are ASCII, so `i` and `i + 1` are character boundaries.
        match (b, bytes.get(i + 1)) {
            (b'!', Some(b'=')) => return Some((&part[..i], Operator::NotEquals, &part[i + 2..])),
            (b'=', Some(b'=')) => return Some((&part[..i], Operator::Equals, &part[i + 2..])),
            (b'=', _) => return Some((&part[..i], Operator::Equals, &part[i + 1..])),
            _ => {}
        }
    }
    None
}

/// Parses a `fieldSelector`. Values may contain any character but `,`; `\`
/// escapes (`\,`, `\=`, `\\`) are honoured.
pub fn parse_field_selector(input: &str) -> Result<Selector, SelectorError> {
    let mut requirements = Vec::new();
    if input.trim().is_empty() {
        return Ok(Selector { requirements });
    }
    for part in split_unescaped(input, ',') {
        let (key, operator, value) = split_equality(&part)
            .ok_or_else(|| SelectorError(format!("invalid selector: '{input}'; can't understand '{part}'")))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(SelectorError(format!("invalid selector: '{input}'")));
        }
        requirements.push(Requirement { key: key.into(), operator, value: unescape(value) });
    }
    Ok(Selector { requirements })
}

fn split_unescaped(input: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            current.push(c);
            if let Some(next) = chars.next() {
                current.push(next);
            }
        } else if c == separator {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}

fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> + 'a {
        move |k| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    }

    #[test]
    fn label_selector_forms() {
        let l = [("app", "web"), ("tier", "front")];
        for (selector, expected) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web,db)", true),
            ("app notin (web,db)", false),
            ("tier", true),
            ("!tier", false),
            ("missing", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("app in (web, db),tier", true),
        ] {
            let s = parse_label_selector(selector).unwrap();
            assert_eq!(s.matches(labels(&l)), expected, "{selector}");
        }
    }

    #[test]
    fn bad_label_selectors_are_errors() {
        for bad in ["app=", "a b=c", ",", "app in (web", "app in web", "=x", "app=w@b"] {
            if bad == "app=" {
                // An empty value is valid: it matches the empty label value.
                assert!(parse_label_selector(bad).is_ok());
                continue;
            }
            assert!(parse_label_selector(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn field_selectors() {
        let f = [("metadata.name", "a,b"), ("spec.nodeName", "n1")];
        let s = parse_field_selector(r"metadata.name=a\,b,spec.nodeName!=n2").unwrap();
        assert_eq!(s.requirements.len(), 2);
        assert!(s.matches(labels(&f)));
        assert!(parse_field_selector("nonsense").is_err());
        assert!(parse_field_selector("=x").is_err());
    }

    /// Found by the `field_selector` fuzz target: the parser split at the
    /// first `!=` or `==` anywhere before a plain `=`, so `a=b!=c` became
    /// the field `a=b`, and `a= ==b` the field `a=`, which no rendering of
    /// the selector could reproduce. kube splits at the first operator.
    #[test]
    fn field_requirements_split_at_the_first_operator() {
        let one = |input: &str| {
            let s = parse_field_selector(input).unwrap();
            assert_eq!(s.requirements.len(), 1, "{input}");
            let r = s.requirements.into_iter().next().unwrap();
            (r.key, r.operator, r.value)
        };
        assert_eq!(one("a=b!=c"), ("a".into(), Operator::Equals, "b!=c".into()));
        assert_eq!(one("a= ==b"), ("a".into(), Operator::Equals, " ==b".into()));
        assert_eq!(one("a==b=c"), ("a".into(), Operator::Equals, "b=c".into()));
        assert_eq!(one("a!==b"), ("a".into(), Operator::NotEquals, "=b".into()));
        assert_eq!(one("a!b=c"), ("a!b".into(), Operator::Equals, "c".into()));
        assert_eq!(one("é=ü"), ("é".into(), Operator::Equals, "ü".into()));
        // Label selectors keep rejecting these: keys and values have no `=`.
        assert!(parse_label_selector("a=b!=c").is_err());
        assert!(parse_label_selector("a==b==c").is_err());
    }
}
