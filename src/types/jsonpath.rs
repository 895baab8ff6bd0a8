//! The JSONPath subset of a custom resource's `additionalPrinterColumns`
//! (`jsonPath: .status.replicas`): field steps (`.name`, `['name']`), array
//! indices (`[0]`, `[-1]`), wildcards (`[*]`, `.*`) and equality filters
//! (`[?(@.type=="Ready")]`, `!=`). Written from the Kubernetes JSONPath
//! documentation; kube-apiserver accepts only "simple" paths for printer
//! columns, which this covers.
//!
//! Invariant: no I/O; parsing refuses what it does not understand instead of
//! guessing, and evaluation never panics (a step that does not apply yields
//! no result).

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    Filter { path: Vec<Step>, equal: bool, literal: Value },
}

/// A parsed path.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `.a.b[0]`, optionally wrapped in `{...}` as kubectl writes it.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let mut s = text.trim();
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            s = inner.trim();
        }
        s = s.strip_prefix('$').unwrap_or(s);
        if s.is_empty() || !(s.starts_with('.') || s.starts_with('[')) {
            return Err(format!("invalid JSONPath {text:?}: it must start with '.'"));
        }
        let steps = parse_steps(s).map_err(|e| format!("invalid JSONPath {text:?}: {e}"))?;
        Ok(JsonPath { steps })
    }

    /// Every value the path reaches, in document order.
    pub fn evaluate<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        evaluate(&self.steps, root)
    }
}

fn parse_steps(s: &str) -> Result<Vec<Step>, String> {
    let bytes = s.as_bytes();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                i += 1;
                let start = i;
                while i < bytes.len() && bytes[i] != b'.' && bytes[i] != b'[' {
                    i += 1;
                }
                let name = &s[start..i];
                if name.is_empty() {
                    return Err("empty field name".into());
                }
                steps.push(if name == "*" { Step::Wildcard } else { Step::Field(name.to_string()) });
            }
            b'[' => {
                let end = matching_bracket(s, i).ok_or("unclosed '['")?;
                let inner = s[i + 1..end].trim();
                steps.push(parse_bracket(inner)?);
                i = end + 1;
            }
            other => return Err(format!("unexpected {:?}", other as char)),
        }
    }
    Ok(steps)
}

/// The index of the `]` closing the `[` at `open`, skipping quoted text.
fn matching_bracket(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for (i, c) in s[open..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<&str> {
    let s = s.trim();
    (s.len() >= 2 && (s.starts_with('\'') && s.ends_with('\'') || s.starts_with('"') && s.ends_with('"')))
        .then(|| &s[1..s.len() - 1])
}

fn parse_bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if let Some(name) = unquote(inner) {
        return Ok(Step::Field(name.to_string()));
    }
    if let Ok(index) = inner.parse::<i64>() {
        return Ok(Step::Index(index));
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        let (left, right, equal) = if let Some((l, r)) = filter.split_once("==") {
            (l, r, true)
        } else if let Some((l, r)) = filter.split_once("!=") {
            (l, r, false)
        } else {
            return Err(format!("unsupported filter {filter:?}"));
        };
        let path = left.trim().strip_prefix('@').ok_or("a filter must start with '@'")?;
        let path = if path.is_empty() { Vec::new() } else { parse_steps(path)? };
        let right = right.trim();
        let literal = match unquote(right) {
            Some(text) => Value::String(text.to_string()),
            None => serde_json::from_str::<Value>(right).map_err(|_| format!("invalid literal {right:?}"))?,
        };
        return Ok(Step::Filter { path, equal, literal });
    }
    Err(format!("unsupported subscript [{inner}]"))
}

fn evaluate<'a>(steps: &[Step], root: &'a Value) -> Vec<&'a Value> {
    let mut current = vec![root];
    for step in steps {
        let mut next = Vec::new();
        for value in current {
            match step {
                Step::Field(name) => next.extend(value.get(name.as_str())),
                Step::Index(index) => {
                    if let Some(items) = value.as_array() {
                        let at = if *index < 0 { items.len() as i64 + index } else { *index };
                        if at >= 0 {
                            next.extend(items.get(at as usize));
                        }
                    }
                }
                Step::Wildcard => match value {
                    Value::Array(items) => next.extend(items.iter()),
                    Value::Object(map) => next.extend(map.values()),
                    _ => {}
                },
                Step::Filter { path, equal, literal } => {
                    if let Some(items) = value.as_array() {
                        for item in items {
                            let found = evaluate(path, item);
                            let matches = found.first().is_some_and(|v| literal_eq(v, literal));
                            if matches == *equal && (!found.is_empty() || !*equal) {
                                next.push(item);
                            }
                        }
                    }
                }
            }
        }
        current = next;
    }
    current
}

fn literal_eq(value: &Value, literal: &Value) -> bool {
    match (value, literal) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(path: &str, v: &Value) -> Vec<Value> {
        JsonPath::parse(path).unwrap().evaluate(v).into_iter().cloned().collect()
    }

    #[test]
    fn fields_indices_wildcards_and_filters() {
        let v = json!({
            "spec": {"replicas": 3, "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Synced", "status": "False"},
            ]},
            "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
        });
        assert_eq!(eval(".spec.replicas", &v), vec![json!(3)]);
        assert_eq!(eval("{.spec.replicas}", &v), vec![json!(3)]);
        assert_eq!(eval("$.spec.replicas", &v), vec![json!(3)]);
        assert_eq!(eval(".spec.containers[1].image", &v), vec![json!("y")]);
        assert_eq!(eval(".spec.containers[-1].name", &v), vec![json!("b")]);
        assert_eq!(eval(".spec.containers[*].name", &v), vec![json!("a"), json!("b")]);
        assert_eq!(eval(".status.conditions[?(@.type==\"Ready\")].status", &v), vec![json!("True")]);
        assert_eq!(eval(".status.conditions[?(@.type!='Ready')].type", &v), vec![json!("Synced")]);
        assert_eq!(eval(".metadata.labels['app.kubernetes.io/name']", &v), vec![json!("web")]);
        assert!(eval(".spec.missing.deeper", &v).is_empty());
        assert!(eval(".spec.containers[7]", &v).is_empty());
        assert!(eval(".spec.replicas[0]", &v).is_empty());
    }

    proptest::proptest! {
        /// Any text parses or is refused, and any parsed path evaluates,
        /// without panicking.
        #[test]
        fn never_panics(text in "[.\\[\\]'\"?@()=!*$ {}a-z0-9é-]{0,24}") {
            if let Ok(path) = JsonPath::parse(&text) {
                let v = json!({"a": [{"b": 1}, {"b": "x"}], "b": {"c": null}, "é": [[1, 2], []]});
                let _ = path.evaluate(&v);
            }
        }
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        for bad in ["", "spec.replicas", ".spec..x", ".a[", ".a[?(@.x > 1)]", ".a[foo]", ".a[?(x==1)]"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
