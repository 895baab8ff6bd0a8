//! Label and field selectors: parsing the query-string forms and matching
//! them against an object's labels or selectable fields.
//!
//! Grammar (as the Kubernetes API documents it): requirements separated by
//! commas; label requirements are `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k` (exists) and `!k` (does not exist); field requirements
//! are `f=v`, `f==v`, `f!=v`.
//!
//! Label selectors follow kube's `labels.Parse` (lexer, grammar, `>`/`<`,
//! error words); field selectors kube's `fields.ParseSelector`.
//!
//! Invariant: no I/O; parsing never panics on any input (fuzzed later).

use crate::types::validation::{go_quote, is_qualified_name, is_valid_label_value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operator {
    Equals,
    NotEquals,
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    /// `k>N` (label selectors only): the label's value, an integer, above N.
    GreaterThan(i64),
    /// `k<N`: the label's value, an integer, below N.
    LessThan(i64),
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

/// A selector that does not parse, with kube's message (the whole Status
/// message of the 400).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
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
                Operator::GreaterThan(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
                Operator::LessThan(n) => value.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
            }
        })
    }
}

/// Parses a `labelSelector` as kube's `labels.Parse` does: a lexer over the
/// bytes (whitespace is ` `, `\t`, `\r`, `\n`; a NUL byte ends the input, as
/// Go's lexer reads it), a recursive descent over its tokens, then kube's
/// requirement checks (`NewRequirement`): label keys are qualified names,
/// values label values, `>`/`<` take one integer. Errors are kube's words:
/// `unable to parse requirement: found '', expected: ',' or ')'`,
/// `unable to parse requirement: <nil>: Invalid value: "A@": ...`, and
/// `found ',', expected: !, identifier, or 'end of string'` outside one.
pub fn parse_label_selector(input: &str) -> Result<Selector, SelectorError> {
    let tokens = lex_label_selector(input);
    let mut parser = LabelParser { tokens, position: 0 };
    let mut requirements = Vec::new();
    loop {
        let (token, literal) = parser.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::DoesNotExist => {
                let requirement =
                    parser.requirement().map_err(|e| SelectorError(format!("unable to parse requirement: {e}")))?;
                requirements.push(requirement);
                let (token, literal) = parser.consume(Context::Values);
                match token {
                    Token::EndOfString => break,
                    Token::Comma => {
                        let (next, literal) = parser.lookahead(Context::Values);
                        if next != Token::Identifier && next != Token::DoesNotExist {
                            return Err(SelectorError(format!("found '{literal}', expected: identifier after ','")));
                        }
                    }
                    _ => return Err(SelectorError(format!("found '{literal}', expected: ',' or 'end of string'"))),
                }
            }
            Token::EndOfString => break,
            _ => return Err(SelectorError(format!("found '{literal}', expected: !, identifier, or 'end of string'"))),
        }
    }
    // kube sorts by key for a deterministic selector; matching does not care.
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Selector { requirements })
}

/// The tokens of kube's label selector lexer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// A token literal's token, for those that are not identifiers.
fn literal_token(literal: &[u8]) -> Option<Token> {
    Some(match literal {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_selector_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the input into tokens, ending with `EndOfString`. Tokens split at
/// ASCII bytes only, so every literal is valid UTF-8.
fn lex_label_selector(input: &str) -> Vec<(Token, String)> {
    let bytes = input.as_bytes();
    // Go's lexer reads a NUL byte as the end of the input.
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let bytes = &bytes[..end];
    let text = |from: usize, to: usize| String::from_utf8_lossy(&bytes[from..to]).into_owned();
    let mut tokens = Vec::new();
    let mut pos = 0;
    loop {
        while pos < bytes.len() && is_selector_whitespace(bytes[pos]) {
            pos += 1;
        }
        if pos == bytes.len() {
            tokens.push((Token::EndOfString, String::new()));
            return tokens;
        }
        let start = pos;
        if is_special_symbol(bytes[pos]) {
            // The longest run of symbols that is a token (`!=`, `==`).
            let mut last: Option<(Token, usize)> = None;
            while pos < bytes.len() && is_special_symbol(bytes[pos]) {
                match literal_token(&bytes[start..=pos]) {
                    Some(token) => last = Some((token, pos + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                pos += 1;
            }
            match last {
                Some((token, to)) => {
                    pos = to;
                    tokens.push((token, text(start, to)));
                }
                None => tokens.push((Token::Error, format!("error expected: keyword found '{}'", text(start, pos)))),
            }
        } else {
            while pos < bytes.len() && !is_special_symbol(bytes[pos]) && !is_selector_whitespace(bytes[pos]) {
                pos += 1;
            }
            let literal = text(start, pos);
            let token = literal_token(literal.as_bytes()).unwrap_or(Token::Identifier);
            tokens.push((token, literal));
        }
    }
}

/// Where the parser is: `in` and `notin` are identifiers among values
/// (`a in (in)`) and keys, operators only after a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct LabelParser {
    tokens: Vec<(Token, String)>,
    position: usize,
}

impl LabelParser {
    fn at(&self, position: usize, context: Context) -> (Token, String) {
        // The last token is always EndOfString; reading past it reads it again.
        let (token, literal) = self.tokens[position.min(self.tokens.len() - 1)].clone();
        match token {
            Token::In | Token::NotIn if context == Context::Values => (Token::Identifier, literal),
            _ => (token, literal),
        }
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        self.at(self.position, context)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.at(self.position, context);
        self.position += 1;
        item
    }

    /// `[!] KEY [ (in|notin) ( VALUES ) | (=|==|!=|>|<) VALUE ]`.
    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut token, mut key) = self.consume(Context::Values);
        let mut does_not_exist = false;
        if token == Token::DoesNotExist {
            does_not_exist = true;
            (token, key) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{key}', expected: identifier"));
        }
        let key_errors = is_qualified_name(&key);
        if !key_errors.is_empty() {
            // kube checks the key with the parser's path, which is nil here.
            return Err(format!("<nil>: Invalid value: {}: {}", go_quote(&key), key_errors.join("; ")));
        }
        let (next, _) = self.lookahead(Context::Values);
        if does_not_exist || next == Token::EndOfString || next == Token::Comma {
            let operator = if does_not_exist { Operator::DoesNotExist } else { Operator::Exists };
            return Ok(Requirement { key, operator, value: String::new() });
        }
        let (token, literal) = self.consume(Context::KeyAndOperator);
        let values = match token {
            Token::In | Token::NotIn => self.value_set()?,
            Token::Equals | Token::DoubleEquals | Token::NotEquals | Token::GreaterThan | Token::LessThan => {
                vec![self.exact_value()?]
            }
            _ => return Err(format!("found '{literal}', expected: in, notin, =, ==, !=, gt, lt")),
        };
        // kube's NewRequirement: the operator's own rule, then each value.
        let mut errors = Vec::new();
        let mut integer = 0i64;
        if matches!(token, Token::GreaterThan | Token::LessThan) {
            match values[0].parse::<i64>() {
                Ok(n) => integer = n,
                Err(_) => errors.push(format!(
                    "values[0]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                    go_quote(&values[0])
                )),
            }
        }
        for (i, value) in values.iter().enumerate() {
            let value_errors = is_valid_label_value(value);
            if !value_errors.is_empty() {
                errors.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    go_quote(value),
                    value_errors.join("; ")
                ));
            }
        }
        errors.dedup();
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
        let value = if values.len() == 1 { values[0].clone() } else { String::new() };
        let operator = match token {
            Token::In => Operator::In(values),
            Token::NotIn => Operator::NotIn(values),
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan(integer),
            Token::LessThan => Operator::LessThan(integer),
            _ => Operator::Equals,
        };
        Ok(Requirement { key, operator, value })
    }

    /// `( VALUES )`: a sorted set of possibly empty values (`()` is `{""}`).
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        let mut values = std::collections::BTreeSet::new();
        match token {
            Token::Identifier | Token::Comma => loop {
                let (token, literal) = self.consume(Context::Values);
                match token {
                    Token::Identifier => {
                        values.insert(literal);
                        let (next, literal) = self.lookahead(Context::Values);
                        match next {
                            Token::Comma => continue,
                            Token::ClosedPar => {
                                self.consume(Context::Values);
                                break;
                            }
                            _ => return Err(format!("found '{literal}', expected: ',' or ')'")),
                        }
                    }
                    Token::Comma => {
                        // `(,`, `,,` and `,)` name the empty value.
                        if values.is_empty() {
                            values.insert(String::new());
                        }
                        let (next, _) = self.lookahead(Context::Values);
                        if next == Token::ClosedPar {
                            values.insert(String::new());
                            self.consume(Context::Values);
                            break;
                        }
                        if next == Token::Comma {
                            values.insert(String::new());
                        }
                    }
                    _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
                }
            },
            Token::ClosedPar => {
                self.consume(Context::Values);
                values.insert(String::new());
            }
            _ => return Err(format!("found '{literal}', expected: ',', ')' or identifier")),
        }
        Ok(values.into_iter().collect())
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; none is the empty value.
    fn exact_value(&mut self) -> Result<String, String> {
        let (token, _) = self.lookahead(Context::Values);
        if token == Token::EndOfString || token == Token::Comma {
            return Ok(String::new());
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            return Ok(literal);
        }
        Err(format!("found '{literal}', expected: identifier"))
    }
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

/// Parses a `fieldSelector` as kube's `fields.ParseSelector` does: terms
/// split at unescaped commas (empty ones skipped, the rest sorted, so the
/// first error is kube's), each at its leftmost operator (`!=`, `==`, `=`),
/// the field taken as written (no trimming) and the value unescaped (`\\`,
/// `\,`, `\=`; any other escape, a trailing `\` or a bare `,` or `=` is an
/// error in kube's words).
pub fn parse_field_selector(input: &str) -> Result<Selector, SelectorError> {
    let mut parts = split_unescaped(input, ',');
    parts.sort();
    let mut requirements = Vec::new();
    for part in parts.iter().filter(|p| !p.is_empty()) {
        let (key, operator, value) = split_equality(part)
            .ok_or_else(|| SelectorError(format!("invalid selector: '{input}'; can't understand '{part}'")))?;
        requirements.push(Requirement { key: key.into(), operator, value: unescape(value)? });
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

/// kube's `fields.UnescapeValue`. Its message prints the unescaped rune as
/// Go's `%v` prints a rune: its number (`=` is 61).
fn unescape(value: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next @ ('\\' | ',' | '=')) => out.push(next),
                Some(next) => {
                    return Err(SelectorError(format!("invalid field selector: invalid escape sequence: \\{next}")))
                }
                None => return Err(SelectorError("invalid field selector: invalid escape sequence: \\".into())),
            },
            ',' | '=' => {
                return Err(SelectorError(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )))
            }
            c => out.push(c),
        }
    }
    Ok(out)
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
    fn kube_grammar_corners() {
        let l = [("app", "web"), ("in", "x"), ("n", "7"), ("s", "abc")];
        for (selector, expected) in [
            ("n>6", true),
            ("n > 7", false),
            ("n<8,app", true),
            ("s>1", false),
            ("missing<9", false),
            ("in in (in,x)", true),
            ("app in (,web)", true),
            ("app in ()", false),
            ("app notin ()", true),
            ("!missing,app==web", true),
            ("  app  =  web  ", true),
            ("app\t=\nweb", true),
            ("app=web\0,garbage(", true),
            ("app in(web)", true),
        ] {
            let s = parse_label_selector(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}"));
            assert_eq!(s.matches(labels(&l)), expected, "{selector:?}");
        }
    }

    /// The messages kube-apiserver's 400 carries for each kind of mistake
    /// (`labels.Parse`'s words, checked against its source).
    #[test]
    fn kube_error_words() {
        let qualified = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let label = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', \
and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for \
validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        for (selector, message) in [
            ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'".to_string()),
            ("a in b", "unable to parse requirement: found 'b' expected: '('".to_string()),
            ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".to_string()),
            (",", "found ',', expected: !, identifier, or 'end of string'".to_string()),
            ("a=b,", "found '', expected: identifier after ','".to_string()),
            ("a=b)", "found ')', expected: ',' or 'end of string'".to_string()),
            ("!", "unable to parse requirement: found '', expected: identifier".to_string()),
            ("a===b", "unable to parse requirement: found '=', expected: identifier".to_string()),
            ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'".to_string()),
            ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".to_string()),
            ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier".to_string()),
            ("A@", format!("unable to parse requirement: <nil>: Invalid value: \"A@\": {qualified}")),
            ("a=w@b", format!("unable to parse requirement: values[0][a]: Invalid value: \"w@b\": {label}")),
            (
                "a>x",
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
                    .to_string(),
            ),
            (
                "a in (x@,y@)",
                format!(
                    "unable to parse requirement: [values[0][a]: Invalid value: \"x@\": {label}, values[1][a]: Invalid value: \"y@\": {label}]"
                ),
            ),
        ] {
            assert_eq!(parse_label_selector(selector).unwrap_err().0, message, "{selector:?}");
        }
    }

    #[test]
    fn field_selectors() {
        let f = [("metadata.name", "a,b"), ("spec.nodeName", "n1")];
        let s = parse_field_selector(r"metadata.name=a\,b,spec.nodeName!=n2").unwrap();
        assert_eq!(s.requirements.len(), 2);
        assert!(s.matches(labels(&f)));
        assert!(parse_field_selector("nonsense").is_err());
        // An empty field parses; the resource's field labels refuse it.
        assert_eq!(parse_field_selector("=x").unwrap().requirements[0].key, "");
    }

    /// kube splits a term at its leftmost operator; what follows is the
    /// value, which may hold `=` or `,` only escaped. (Found first by the
    /// `field_selector` fuzz target, when the parser split at a later `!=`.)
    #[test]
    fn field_requirements_split_at_the_first_operator() {
        let one = |input: &str| {
            let s = parse_field_selector(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(s.requirements.len(), 1, "{input}");
            let r = s.requirements.into_iter().next().unwrap();
            (r.key, r.operator, r.value)
        };
        assert_eq!(one(r"a=b!\=c"), ("a".into(), Operator::Equals, "b!=c".into()));
        assert_eq!(one("a= !b"), ("a".into(), Operator::Equals, " !b".into()));
        assert_eq!(one("a!b=c"), ("a!b".into(), Operator::Equals, "c".into()));
        assert_eq!(one("é=ü"), ("é".into(), Operator::Equals, "ü".into()));
        assert_eq!(one(" spec.nodeName =x"), (" spec.nodeName ".into(), Operator::Equals, "x".into()));
        // Label selectors keep rejecting these: keys and values have no `=`.
        assert!(parse_label_selector("a=b!=c").is_err());
        assert!(parse_label_selector("a==b==c").is_err());
    }

    #[test]
    fn field_selector_kube_words() {
        assert_eq!(parse_field_selector("a=b,,c!=d,").unwrap().requirements.len(), 2, "empty terms are skipped");
        for (input, message) in [
            ("a=b=c", "invalid field selector: unescaped character in value: 61"),
            ("a==b==c", "invalid field selector: unescaped character in value: 61"),
            ("a!==b", "invalid field selector: unescaped character in value: 61"),
            (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
            (r"a=b\", r"invalid field selector: invalid escape sequence: \"),
            ("b=1,nonsense", "invalid selector: 'b=1,nonsense'; can't understand 'nonsense'"),
            // Sorted first: `a` comes before `z=\q`.
            (r"z=\q,a", "invalid selector: 'z=\\q,a'; can't understand 'a'"),
        ] {
            assert_eq!(parse_field_selector(input).unwrap_err().0, message, "{input:?}");
        }
    }
}
