//! Continue tokens, byte for byte as kube-apiserver writes and reads them
//! (`k8s.io/apiserver/pkg/storage` `EncodeContinue` / `DecodeContinue`).
//!
//! A token is base64 (URL alphabet, no padding) of the JSON
//! `{"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key>"}`, fields in that
//! order, the string escaped as Go's `encoding/json` escapes it (`"`, `\`,
//! control characters, `<`, `>`, `&`, U+2028 and U+2029; other non-ASCII
//! as it is). `start` is where the next page starts (inclusive), relative
//! to the key prefix of the collection listed: the last key served followed
//! by a NUL, so the next page starts strictly after it. A namespaced list's
//! prefix is its namespace's, so the relative key is `name\0`; a list of
//! every namespace's has `namespace/name\0`; a cluster-scoped one `name\0`.
//! Relative keys are the same in Shardline's key layout and in kube's
//! (`api::kube_storage`), so a token kube-apiserver wrote continues here and
//! one written here continues on kube-apiserver.
//!
//! `rv` is the revision every page is read at; a negative one (kube writes
//! -1, in the 410 for a token whose revision left the history) asks for the
//! latest revision, from that key on: an inconsistent continuation.
//!
//! Decoding is kube's, in its order: base64, then JSON (`encoding/json`
//! into Go's struct: keys matched exactly or case-insensitively, unknown
//! keys and `null` ignored, invalid UTF-8 and lone surrogates become
//! U+FFFD), then the version, `rv` not 0, `start` not empty, and `start`
//! clean as a path (Go's `path.Clean` would not change "/" + start): it
//! cannot climb out of the prefix, and the result is the prefix plus the
//! cleaned key. Every refusal carries Go's words (`TokenError`'s display);
//! base64 and JSON errors print as Go's `CorruptInputError`, `SyntaxError`
//! and `UnmarshalTypeError` do (the syntax check is Go's scanner, state by
//! state, so its messages are Go's).
//!
//! Invariant: decoding never panics on any input (fuzzed: `fuzzing::continue_token`);
//! a token decodes to a start inside the prefix it is joined to; a decoded
//! token with a non-empty start encodes to a token that decodes to it again.

use crate::log::Revision;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::fmt::Write as _;

/// kube's only token version.
const TOKEN_VERSION: &str = "meta.k8s.io/v1";
/// Longest token accepted, in characters (Shardline's bound; kube has none
/// but the request line's). A start key is at most a few hundred bytes (a
/// 63-character namespace, a 253-character name), about 600 characters of
/// token; anything longer is refused before it is decoded.
pub const TOKEN_CHARS_MAX: usize = 2048;

/// One continue token: kube's `continueToken` struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinueToken {
    /// kube's `rv`: the revision every page is read at; negative for the
    /// latest (never 0 once decoded).
    pub resource_version: i64,
    /// kube's `start`: the first key of the next page (inclusive), relative
    /// to the collection's key prefix.
    pub start: String,
}

/// Why a token was refused. The display is kube's error text; the list
/// handler prefixes it with "invalid continue token: " (a 400 BadRequest).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("continue key is not valid: the token is longer than {TOKEN_CHARS_MAX} characters")]
    TooLong,
    /// Go's `base64.CorruptInputError`.
    #[error("continue key is not valid: illegal base64 data at input byte {0}")]
    Base64(usize),
    /// A JSON syntax or type error, as Go's `encoding/json` prints it.
    #[error("continue key is not valid: {0}")]
    Json(String),
    #[error("continue key is not valid: server does not recognize this encoded version {0}")]
    UnrecognizedVersion(String),
    /// kube's `ErrInvalidStartRV`: `rv` missing or 0.
    #[error("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")]
    InvalidStartResourceVersion,
    /// kube's `ErrEmptyStartKey`.
    #[error("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")]
    EmptyStartKey,
    /// A start that `path.Clean` would change (`..`, `.`, `//`, a trailing
    /// `/`): the start as the token gave it.
    #[error("continue key is not valid: {0}")]
    NotClean(String),
}

impl ContinueToken {
    /// kube's `EncodeContinue(lastKey + "\x00", keyPrefix, rv)`: the token
    /// for the page after `last_key`. `None` when the key is not under the
    /// prefix (kube's "the key and key prefix do not match").
    pub fn after(last_key: &[u8], prefix: &[u8], revision: Revision) -> Option<ContinueToken> {
        let relative = last_key.strip_prefix(prefix)?;
        let mut start = String::from_utf8_lossy(relative).into_owned();
        start.push('\0');
        Some(ContinueToken { resource_version: i64::try_from(revision.0).unwrap_or(i64::MAX), start })
    }

    /// The revision the pages are read at; `None` for the latest (rv < 0).
    pub fn revision(&self) -> Option<Revision> {
        u64::try_from(self.resource_version).ok().filter(|rv| *rv > 0).map(Revision)
    }

    /// The first key of the next page: the prefix and the start (kube's
    /// `keyPrefix + cleaned[1:]`).
    pub fn start_key(&self, prefix: &[u8]) -> Vec<u8> {
        let mut key = Vec::with_capacity(prefix.len() + self.start.len());
        key.extend_from_slice(prefix);
        key.extend_from_slice(self.start.as_bytes());
        key
    }

    /// The token's text: base64 (URL, no padding) of the JSON Go writes.
    pub fn encode(&self) -> String {
        let mut json = String::with_capacity(48 + self.start.len());
        let _ = write!(json, "{{\"v\":\"{TOKEN_VERSION}\",\"rv\":{},\"start\":", self.resource_version);
        go_json_string(&mut json, &self.start);
        json.push('}');
        URL_SAFE_NO_PAD.encode(json)
    }

    /// kube's `DecodeContinue`, with the start left relative to the prefix.
    pub fn decode(text: &str) -> Result<ContinueToken, TokenError> {
        if text.len() > TOKEN_CHARS_MAX {
            return Err(TokenError::TooLong);
        }
        let data = go_base64_raw_url(text.as_bytes()).map_err(TokenError::Base64)?;
        let fields = go_json::unmarshal(&data).map_err(TokenError::Json)?;
        if fields.v != TOKEN_VERSION {
            return Err(TokenError::UnrecognizedVersion(fields.v));
        }
        if fields.rv == 0 {
            return Err(TokenError::InvalidStartResourceVersion);
        }
        if fields.start.is_empty() {
            return Err(TokenError::EmptyStartKey);
        }
        // kube's traversal defence: "/" + start must be what path.Clean makes
        // of it, so joined to the prefix it stays under the prefix.
        let rooted = fields.start.strip_prefix('/').unwrap_or(&fields.start);
        if !is_clean_rooted(rooted) {
            return Err(TokenError::NotClean(fields.start));
        }
        Ok(ContinueToken { resource_version: fields.rv, start: rooted.to_string() })
    }
}

/// Whether "/" + `rest` is its own `path.Clean`: the root alone, or
/// segments none of which is empty, `.` or `..`.
fn is_clean_rooted(rest: &str) -> bool {
    rest.is_empty() || rest.split('/').all(|segment| !matches!(segment, "" | "." | ".."))
}

/// Appends `text` as Go's `encoding/json` writes a string (HTML escaping on,
/// as `json.Marshal`): short escapes for `"`, `\`, `\b`, `\f`, `\n`, `\r`,
/// `\t`; `\u00XX` (lower-case hex) for other control characters and for
/// `<`, `>`, `&`; `\u2028`, `\u2029`; everything else as it is.
fn go_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '<' | '>' | '&' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `base64.RawURLEncoding.DecodeString`: `\r` and `\n` are skipped
/// anywhere, `=` is an illegal character, a lone last character is
/// illegal, and the spare bits of the last character are not checked. The
/// error is the index Go's `CorruptInputError` reports.
fn go_base64_raw_url(src: &[u8]) -> Result<Vec<u8>, usize> {
    fn value(c: u8) -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'-' => Some(62),
            b'_' => Some(63),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(src.len() * 3 / 4 + 3);
    let mut at = 0usize;
    loop {
        // One quantum of up to four characters (Go's `decodeQuantum`).
        let mut quantum = [0u8; 4];
        let mut taken = 0usize;
        while taken < 4 {
            let Some(&c) = src.get(at) else { break };
            at += 1;
            if let Some(v) = value(c) {
                quantum[taken] = v;
                taken += 1;
            } else if c != b'\n' && c != b'\r' {
                return Err(at - 1);
            }
        }
        match taken {
            0 => return Ok(out),
            1 => return Err(at - 1),
            _ => {}
        }
        let bits = u32::from(quantum[0]) << 18
            | u32::from(quantum[1]) << 12
            | u32::from(quantum[2]) << 6
            | u32::from(quantum[3]);
        let bytes = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        out.extend_from_slice(&bytes[..taken - 1]);
        if taken < 4 {
            return Ok(out);
        }
    }
}

/// What Go's `encoding/json` makes of a token's JSON: the checks of its
/// scanner (syntax, with its messages) and of its decoder into kube's
/// struct `continueToken {v string; rv int64; start string}`.
mod go_json {
    /// The fields decoded; absent or `null` ones are Go's zero values.
    #[derive(Debug, Default)]
    pub struct Fields {
        pub v: String,
        pub rv: i64,
        pub start: String,
    }

    /// `json.Unmarshal(data, &continueToken{})`: the fields, or the message
    /// Go's error prints.
    pub fn unmarshal(data: &[u8]) -> Result<Fields, String> {
        check_valid(data)?;
        let mut reader = Reader { data, at: 0 };
        let mut fields = Fields::default();
        let mut first_error: Option<String> = None;
        reader.skip_space();
        match reader.peek() {
            b'{' => reader.object(&mut fields, &mut first_error),
            // null: Go leaves the struct as it is.
            b'n' => {}
            other => {
                first_error = Some(format!(
                    "json: cannot unmarshal {} into Go value of type storage.continueToken",
                    kind_of(other)
                ))
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(fields),
        }
    }

    /// The word Go's `UnmarshalTypeError` uses for a value starting with `c`.
    fn kind_of(c: u8) -> &'static str {
        match c {
            b'{' => "object",
            b'[' => "array",
            b'"' => "string",
            b't' | b'f' => "bool",
            b'n' => "null",
            _ => "number",
        }
    }

    /// Reads JSON `check_valid` accepted: never out of bounds on such input,
    /// and bounded by `get` on any other.
    struct Reader<'a> {
        data: &'a [u8],
        at: usize,
    }

    impl Reader<'_> {
        fn peek(&self) -> u8 {
            self.data.get(self.at).copied().unwrap_or(0)
        }

        fn skip_space(&mut self) {
            while matches!(self.peek(), b' ' | b'\t' | b'\r' | b'\n') {
                self.at += 1;
            }
        }

        /// The top-level object, into `fields`; the first type error is kept
        /// and the rest decoded anyway (Go's `saveError`).
        fn object(&mut self, fields: &mut Fields, first_error: &mut Option<String>) {
            self.at += 1; // '{'
            loop {
                self.skip_space();
                if self.peek() != b'"' {
                    self.at += 1; // '}'
                    return;
                }
                let key = self.string();
                self.skip_space();
                self.at += 1; // ':'
                self.skip_space();
                let field = match fold(&key).as_str() {
                    "V" => Some(("v", "string")),
                    "RV" => Some(("rv", "int64")),
                    "START" => Some(("start", "string")),
                    _ => None,
                };
                let c = self.peek();
                match field {
                    None => self.skip_value(),
                    Some(_) if c == b'n' => self.at += 4,
                    Some((name, "int64")) if c == b'-' || c.is_ascii_digit() => {
                        let number = self.number();
                        match number.parse::<i64>() {
                            Ok(rv) => fields.rv = rv,
                            Err(_) => save(first_error, &format!("number {number}"), name, "int64"),
                        }
                    }
                    Some((name, "string")) if c == b'"' => {
                        let value = self.string();
                        if name == "v" {
                            fields.v = value;
                        } else {
                            fields.start = value;
                        }
                    }
                    Some((name, ty)) => {
                        save(first_error, kind_of(c), name, ty);
                        self.skip_value();
                    }
                }
                self.skip_space();
                if self.peek() == b',' {
                    self.at += 1;
                } else {
                    self.at += 1; // '}'
                    return;
                }
            }
        }

        /// The text of a number literal.
        fn number(&mut self) -> String {
            let from = self.at;
            while matches!(self.peek(), b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                self.at += 1;
            }
            String::from_utf8_lossy(&self.data[from..self.at.min(self.data.len())]).into_owned()
        }

        /// Skips one value (nested ones included) without recursion.
        fn skip_value(&mut self) {
            let mut depth = 0usize;
            loop {
                self.skip_space();
                match self.peek() {
                    b'"' => {
                        self.string();
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        self.at += 1;
                        continue;
                    }
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        self.at += 1;
                    }
                    0 => return,
                    _ => {
                        while !matches!(self.peek(), b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | 0) {
                            self.at += 1;
                        }
                    }
                }
                if depth == 0 {
                    return;
                }
                self.skip_space();
                if matches!(self.peek(), b',' | b':') {
                    self.at += 1;
                }
            }
        }

        /// A string literal, unquoted as Go's `unquote` does: escapes
        /// resolved, a valid surrogate pair joined, a lone surrogate and
        /// every byte of invalid UTF-8 made U+FFFD.
        fn string(&mut self) -> String {
            self.at += 1; // '"'
            let mut raw = Vec::new();
            loop {
                match self.peek() {
                    b'"' => {
                        self.at += 1;
                        break;
                    }
                    0 if self.at >= self.data.len() => break,
                    b'\\' => {
                        let escape = self.data.get(self.at + 1).copied().unwrap_or(0);
                        self.at += 2;
                        let c = match escape {
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'u' => {
                                let first = self.hex4();
                                match first {
                                    0xd800..=0xdbff if self.data.get(self.at..self.at + 2) == Some(&b"\\u"[..]) => {
                                        let save = self.at;
                                        self.at += 2;
                                        let second = self.hex4();
                                        if (0xdc00..=0xdfff).contains(&second) {
                                            let joined = 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
                                            char::from_u32(joined).unwrap_or('\u{fffd}')
                                        } else {
                                            self.at = save;
                                            '\u{fffd}'
                                        }
                                    }
                                    _ => char::from_u32(first).unwrap_or('\u{fffd}'),
                                }
                            }
                            other => char::from(other),
                        };
                        let mut buf = [0u8; 4];
                        raw.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    byte => {
                        raw.push(byte);
                        self.at += 1;
                    }
                }
            }
            // Go replaces each byte of an ill-formed sequence, one by one.
            let mut text = String::with_capacity(raw.len());
            for chunk in raw.utf8_chunks() {
                text.push_str(chunk.valid());
                for _ in chunk.invalid() {
                    text.push('\u{fffd}');
                }
            }
            text
        }

        /// Four hexadecimal digits after `\u`.
        fn hex4(&mut self) -> u32 {
            let mut value = 0u32;
            for _ in 0..4 {
                let digit = char::from(self.peek()).to_digit(16).unwrap_or(0);
                value = value * 16 + digit;
                self.at += 1;
            }
            value
        }
    }

    /// Go's `foldName` as far as kube's three names need: ASCII upper-cased,
    /// and U+017F (long s), whose simple folding is `S`.
    fn fold(key: &str) -> String {
        key.chars().map(|c| if c == '\u{17f}' { 'S' } else { c.to_ascii_uppercase() }).collect()
    }

    /// Keeps the first type error, worded as Go's `UnmarshalTypeError`.
    fn save(first_error: &mut Option<String>, value: &str, field: &str, ty: &str) {
        if first_error.is_none() {
            *first_error =
                Some(format!("json: cannot unmarshal {value} into Go struct field continueToken.{field} of type {ty}"));
        }
    }

    /// Where Go's scanner is, between bytes.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Step {
        BeginValueOrEmpty,
        BeginValue,
        BeginStringOrEmpty,
        BeginString,
        EndValue,
        EndTop,
        InString,
        InStringEscape,
        /// In `\u`, with this many hexadecimal digits read.
        InStringEscapeU(u8),
        Negative,
        Digits,
        Zero,
        Dot,
        DotDigits,
        Exponent,
        ExponentSign,
        ExponentDigits,
        /// In a literal: which one, and how many of its bytes were read.
        Literal(&'static [u8], usize),
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Parse {
        ObjectKey,
        ObjectValue,
        ArrayValue,
    }

    /// Go's `checkValid`: the scanner over every byte, then its end of
    /// input. The error is Go's `SyntaxError` text.
    fn check_valid(data: &[u8]) -> Result<(), String> {
        let mut scanner = Scanner { step: Step::BeginValue, stack: Vec::new() };
        for &c in data {
            scanner.step(c)?;
        }
        if scanner.step == Step::EndTop {
            return Ok(());
        }
        scanner.step(b' ')?;
        if scanner.step == Step::EndTop {
            return Ok(());
        }
        Err("unexpected end of JSON input".into())
    }

    struct Scanner {
        step: Step,
        stack: Vec<Parse>,
    }

    fn is_space(c: u8) -> bool {
        matches!(c, b' ' | b'\t' | b'\r' | b'\n')
    }

    /// Go's `quoteChar`: a byte as its error message shows it.
    fn quote_char(c: u8) -> String {
        match c {
            b'\'' => "'\\''".into(),
            b'"' => "'\"'".into(),
            0x07 => "'\\a'".into(),
            0x08 => "'\\b'".into(),
            0x0c => "'\\f'".into(),
            b'\n' => "'\\n'".into(),
            b'\r' => "'\\r'".into(),
            b'\t' => "'\\t'".into(),
            0x0b => "'\\v'".into(),
            b'\\' => "'\\\\'".into(),
            0x00..=0x1f | 0x7f => format!("'\\x{c:02x}'"),
            // Go quotes the byte as the rune of that number: U+0080..U+00A0
            // and the soft hyphen are not printable.
            0x80..=0xa0 | 0xad => format!("'\\u{:04x}'", c),
            c => format!("'{}'", char::from(c)),
        }
    }

    fn invalid(c: u8, context: &str) -> Result<(), String> {
        Err(format!("invalid character {} {context}", quote_char(c)))
    }

    impl Scanner {
        fn step(&mut self, c: u8) -> Result<(), String> {
            match self.step {
                Step::BeginValueOrEmpty => {
                    if is_space(c) {
                        return Ok(());
                    }
                    if c == b']' {
                        return self.end_value(c);
                    }
                    self.begin_value(c)
                }
                Step::BeginValue => self.begin_value(c),
                Step::BeginStringOrEmpty => {
                    if is_space(c) {
                        return Ok(());
                    }
                    if c == b'}' {
                        if let Some(top) = self.stack.last_mut() {
                            *top = Parse::ObjectValue;
                        }
                        return self.end_value(c);
                    }
                    self.begin_string(c)
                }
                Step::BeginString => self.begin_string(c),
                Step::EndValue => self.end_value(c),
                Step::EndTop => {
                    if is_space(c) {
                        Ok(())
                    } else {
                        invalid(c, "after top-level value")
                    }
                }
                Step::InString => {
                    match c {
                        b'"' => self.step = Step::EndValue,
                        b'\\' => self.step = Step::InStringEscape,
                        0x00..=0x1f => return invalid(c, "in string literal"),
                        _ => {}
                    }
                    Ok(())
                }
                Step::InStringEscape => match c {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                        self.step = Step::InString;
                        Ok(())
                    }
                    b'u' => {
                        self.step = Step::InStringEscapeU(0);
                        Ok(())
                    }
                    _ => invalid(c, "in string escape code"),
                },
                Step::InStringEscapeU(read) => {
                    if !c.is_ascii_hexdigit() {
                        return invalid(c, "in \\u hexadecimal character escape");
                    }
                    self.step = if read == 3 { Step::InString } else { Step::InStringEscapeU(read + 1) };
                    Ok(())
                }
                Step::Negative => match c {
                    b'0' => {
                        self.step = Step::Zero;
                        Ok(())
                    }
                    b'1'..=b'9' => {
                        self.step = Step::Digits;
                        Ok(())
                    }
                    _ => invalid(c, "in numeric literal"),
                },
                Step::Digits if c.is_ascii_digit() => Ok(()),
                Step::Digits | Step::Zero => match c {
                    b'.' => {
                        self.step = Step::Dot;
                        Ok(())
                    }
                    b'e' | b'E' => {
                        self.step = Step::Exponent;
                        Ok(())
                    }
                    _ => self.end_value(c),
                },
                Step::Dot => {
                    if c.is_ascii_digit() {
                        self.step = Step::DotDigits;
                        Ok(())
                    } else {
                        invalid(c, "after decimal point in numeric literal")
                    }
                }
                Step::DotDigits => match c {
                    b'0'..=b'9' => Ok(()),
                    b'e' | b'E' => {
                        self.step = Step::Exponent;
                        Ok(())
                    }
                    _ => self.end_value(c),
                },
                Step::Exponent if c == b'+' || c == b'-' => {
                    self.step = Step::ExponentSign;
                    Ok(())
                }
                Step::Exponent | Step::ExponentSign => {
                    if c.is_ascii_digit() {
                        self.step = Step::ExponentDigits;
                        Ok(())
                    } else {
                        invalid(c, "in exponent of numeric literal")
                    }
                }
                Step::ExponentDigits => {
                    if c.is_ascii_digit() {
                        Ok(())
                    } else {
                        self.end_value(c)
                    }
                }
                Step::Literal(word, read) => {
                    let expected = word[read];
                    if c != expected {
                        let name = String::from_utf8_lossy(word);
                        return invalid(c, &format!("in literal {name} (expecting '{}')", char::from(expected)));
                    }
                    self.step = if read + 1 == word.len() { Step::EndValue } else { Step::Literal(word, read + 1) };
                    Ok(())
                }
            }
        }

        fn begin_value(&mut self, c: u8) -> Result<(), String> {
            if is_space(c) {
                self.step = Step::BeginValue;
                return Ok(());
            }
            self.step = match c {
                b'{' => {
                    self.stack.push(Parse::ObjectKey);
                    Step::BeginStringOrEmpty
                }
                b'[' => {
                    self.stack.push(Parse::ArrayValue);
                    Step::BeginValueOrEmpty
                }
                b'"' => Step::InString,
                b'-' => Step::Negative,
                b'0' => Step::Zero,
                b'1'..=b'9' => Step::Digits,
                b't' => Step::Literal(b"true", 1),
                b'f' => Step::Literal(b"false", 1),
                b'n' => Step::Literal(b"null", 1),
                _ => return invalid(c, "looking for beginning of value"),
            };
            Ok(())
        }

        fn begin_string(&mut self, c: u8) -> Result<(), String> {
            if is_space(c) {
                self.step = Step::BeginString;
                return Ok(());
            }
            if c == b'"' {
                self.step = Step::InString;
                return Ok(());
            }
            invalid(c, "looking for beginning of object key string")
        }

        fn end_value(&mut self, c: u8) -> Result<(), String> {
            let Some(top) = self.stack.last_mut() else {
                self.step = Step::EndTop;
                return self.step(c);
            };
            if is_space(c) {
                self.step = Step::EndValue;
                return Ok(());
            }
            match *top {
                Parse::ObjectKey if c == b':' => {
                    *top = Parse::ObjectValue;
                    self.step = Step::BeginValue;
                    Ok(())
                }
                Parse::ObjectKey => invalid(c, "after object key"),
                Parse::ObjectValue if c == b',' => {
                    *top = Parse::ObjectKey;
                    self.step = Step::BeginString;
                    Ok(())
                }
                Parse::ObjectValue if c == b'}' => {
                    self.pop();
                    Ok(())
                }
                Parse::ObjectValue => invalid(c, "after object key:value pair"),
                Parse::ArrayValue if c == b',' => {
                    self.step = Step::BeginValue;
                    Ok(())
                }
                Parse::ArrayValue if c == b']' => {
                    self.pop();
                    Ok(())
                }
                Parse::ArrayValue => invalid(c, "after array element"),
            }
        }

        fn pop(&mut self) {
            self.stack.pop();
            self.step = if self.stack.is_empty() { Step::EndTop } else { Step::EndValue };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(json: &str) -> String {
        URL_SAFE_NO_PAD.encode(json)
    }

    fn refused(json: &str) -> String {
        ContinueToken::decode(&b64(json)).unwrap_err().to_string()
    }

    #[test]
    fn encodes_the_bytes_kube_writes() {
        // kube's EncodeContinue("web-7\x00", ...) at revision 1234: the JSON
        // Go's json.Marshal writes for its struct, then RawURLEncoding.
        let token = ContinueToken { resource_version: 1234, start: "web-7\0".into() };
        let json = r#"{"v":"meta.k8s.io/v1","rv":1234,"start":"web-7\u0000"}"#;
        assert_eq!(token.encode(), b64(json));
        assert_eq!(token.encode(), "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNCwic3RhcnQiOiJ3ZWItN1x1MDAwMCJ9");
        // Go's escapes: HTML characters, control characters (\b and \f short
        // since Go 1.22), quotes, backslashes, U+2028; other non-ASCII raw.
        let odd = ContinueToken { resource_version: -1, start: "a<b>&\"\\\u{1}\u{8}\u{c}\n\t\u{2028}é\0".into() };
        let json = r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"a\u003cb\u003e\u0026\"\\\u0001\b\f\n\t\u2028é\u0000"}"#;
        assert_eq!(odd.encode(), b64(json));
    }

    #[test]
    fn after_strips_the_prefix_and_appends_nul() {
        let prefix = b"/registry/core/configmaps/default/";
        let token = ContinueToken::after(b"/registry/core/configmaps/default/cm-3", prefix, Revision(42)).unwrap();
        assert_eq!(token, ContinueToken { resource_version: 42, start: "cm-3\0".into() });
        assert_eq!(token.revision(), Some(Revision(42)));
        assert_eq!(token.start_key(prefix), b"/registry/core/configmaps/default/cm-3\0");
        // Every namespace: the start keeps the namespace.
        let all = ContinueToken::after(b"/registry/core/pods/ns/p", b"/registry/core/pods/", Revision(1)).unwrap();
        assert_eq!(all.start, "ns/p\0");
        assert_eq!(ContinueToken::after(b"/registry/core/pods/ns/p", prefix, Revision(1)), None);
    }

    #[test]
    fn round_trips() {
        for start in ["web-7\0", "ns/name\0", "x", "a<&>\u{2029}ü\0"] {
            for rv in [1, 1234, i64::MAX, -1, i64::MIN] {
                let token = ContinueToken { resource_version: rv, start: start.into() };
                let text = token.encode();
                assert!(text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "{text}");
                assert_eq!(ContinueToken::decode(&text), Ok(token));
            }
        }
    }

    #[test]
    fn decodes_what_kube_writes() {
        // kube-apiserver's token for pods after "default/web-0" at 9000
        // (a list of every namespace).
        let kube = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTAwMCwic3RhcnQiOiJkZWZhdWx0L3dlYi0wXHUwMDAwIn0";
        let token = ContinueToken::decode(kube).unwrap();
        assert_eq!(token, ContinueToken { resource_version: 9000, start: "default/web-0\0".into() });
        assert_eq!(token.start_key(b"/registry/core/pods/"), b"/registry/core/pods/default/web-0\0");
        // The 410's inconsistent continuation.
        let latest = ContinueToken::decode(&b64(r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"b\u0000"}"#)).unwrap();
        assert_eq!(latest.revision(), None);
        // What Go's decoder accepts: any key case, unknown keys, null, spaces,
        // a leading slash (cleaned away), newlines in the base64.
        let loose =
            r#" { "RV" : 7 , "extra": [1, {"x": null}], "V":"meta.k8s.io/v1", "ſtart":"/a\u0000", "v2":null } "#;
        let token = ContinueToken::decode(&b64(loose)).unwrap();
        assert_eq!(token, ContinueToken { resource_version: 7, start: "a\0".into() });
        let mut wrapped = b64(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"k"}"#);
        wrapped.insert(5, '\n');
        wrapped.insert(9, '\r');
        assert_eq!(ContinueToken::decode(&wrapped).unwrap().start, "k");
        // Escapes, surrogates, and invalid UTF-8 as Go unquotes them.
        let escaped = r#"{"v":"meta.k8s.io/v1","rv":3,"start":"\u00e9\ud83d\ude00\ud800x\/y"}"#;
        assert_eq!(ContinueToken::decode(&b64(escaped)).unwrap().start, "é😀\u{fffd}x/y");
        let not_a_pair = r#"{"v":"meta.k8s.io/v1","rv":3,"start":"\ud800\ndc00\udc00"}"#;
        assert_eq!(ContinueToken::decode(&b64(not_a_pair)).unwrap().start, "\u{fffd}\ndc00\u{fffd}");
        let mut raw = br#"{"v":"meta.k8s.io/v1","rv":3,"start":"a"#.to_vec();
        raw.extend_from_slice(&[0xf0, 0x9f, 0x98, b'"', b'}']);
        assert_eq!(ContinueToken::decode(&URL_SAFE_NO_PAD.encode(raw)).unwrap().start, "a\u{fffd}\u{fffd}\u{fffd}");
    }

    #[test]
    fn refuses_with_kubes_words() {
        let v = "continue key is not valid";
        assert_eq!(
            refused(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
            format!("{v}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        );
        assert_eq!(
            refused(r#"{"v":"meta.k8s.io/v1","start":"a"}"#),
            format!("{v}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        );
        assert_eq!(
            refused(r#"{"v":"meta.k8s.io/v1","rv":5,"start":""}"#),
            format!("{v}: encoded start key empty (version meta.k8s.io/v1)")
        );
        assert_eq!(
            refused(r#"{"v":"meta.k8s.io/v2","rv":5,"start":"a"}"#),
            format!("{v}: server does not recognize this encoded version meta.k8s.io/v2")
        );
        assert_eq!(refused("null"), format!("{v}: server does not recognize this encoded version "));
        for traversal in ["../secrets/x", "a/../../b", "a//b", "a/./b", "a/", ".", "..", "a/.."] {
            let json = format!(r#"{{"v":"meta.k8s.io/v1","rv":5,"start":"{traversal}"}}"#);
            assert_eq!(refused(&json), format!("{v}: {traversal}"), "{traversal}");
        }
        // Base64 as Go reports it: the index of the first bad character.
        let go = |at: usize| format!("{v}: illegal base64 data at input byte {at}");
        assert_eq!(ContinueToken::decode("%%%").unwrap_err().to_string(), go(0));
        assert_eq!(ContinueToken::decode("eyJ2=").unwrap_err().to_string(), go(4));
        assert_eq!(ContinueToken::decode("eyJ2I").unwrap_err().to_string(), go(4));
        assert_eq!(ContinueToken::decode("ab+c").unwrap_err().to_string(), go(2));
        assert_eq!(ContinueToken::decode(&"A".repeat(TOKEN_CHARS_MAX + 1)), Err(TokenError::TooLong));
    }

    #[test]
    fn json_errors_are_gos() {
        let v = "continue key is not valid";
        let cases = [
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            (r#"{"v""#, "unexpected end of JSON input"),
            ("garbage", "invalid character 'g' looking for beginning of value"),
            ("{]", "invalid character ']' looking for beginning of object key string"),
            (r#"{"v" 1}"#, "invalid character '1' after object key"),
            (r#"{"v":1 "rv"}"#, "invalid character '\"' after object key:value pair"),
            (r#"{"v":1}x"#, "invalid character 'x' after top-level value"),
            ("[1 2]", "invalid character '2' after array element"),
            ("tru", "invalid character ' ' in literal true (expecting 'e')"),
            ("nul!", "invalid character '!' in literal null (expecting 'l')"),
            ("-", "invalid character ' ' in numeric literal"),
            ("1.", "invalid character ' ' after decimal point in numeric literal"),
            ("1e+x", "invalid character 'x' in exponent of numeric literal"),
            ("\"a\u{1}\"", "invalid character '\\x01' in string literal"),
            (r#""\q""#, "invalid character 'q' in string escape code"),
            (r#""\u12g4""#, "invalid character 'g' in \\u hexadecimal character escape"),
            ("\u{e9}", "invalid character 'Ã' looking for beginning of value"),
            ("'", "invalid character '\\'' looking for beginning of value"),
            ("\n\t}", "invalid character '}' looking for beginning of value"),
            ("[]", "json: cannot unmarshal array into Go value of type storage.continueToken"),
            ("\"x\"", "json: cannot unmarshal string into Go value of type storage.continueToken"),
            ("12", "json: cannot unmarshal number into Go value of type storage.continueToken"),
            ("true", "json: cannot unmarshal bool into Go value of type storage.continueToken"),
            (
                r#"{"v":"meta.k8s.io/v1","rv":"5","start":"a"}"#,
                "json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
            ),
            (
                r#"{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}"#,
                "json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64",
            ),
            (
                r#"{"rv":9223372036854775808}"#,
                "json: cannot unmarshal number 9223372036854775808 into Go struct field continueToken.rv of type int64",
            ),
            (r#"{"v":2,"rv":[]}"#, "json: cannot unmarshal number into Go struct field continueToken.v of type string"),
            (
                r#"{"start":{"a":[1]},"v":2}"#,
                "json: cannot unmarshal object into Go struct field continueToken.start of type string",
            ),
        ];
        for (json, go) in cases {
            let data = URL_SAFE_NO_PAD.encode(json.as_bytes());
            assert_eq!(ContinueToken::decode(&data).unwrap_err().to_string(), format!("{v}: {go}"), "{json:?}");
        }
        // A byte Go shows by its rune number.
        let data = URL_SAFE_NO_PAD.encode([0xff, b'x']);
        assert_eq!(
            ContinueToken::decode(&data).unwrap_err().to_string(),
            format!("{v}: invalid character 'ÿ' looking for beginning of value")
        );
        let data = URL_SAFE_NO_PAD.encode([0x85]);
        assert_eq!(
            ContinueToken::decode(&data).unwrap_err().to_string(),
            format!("{v}: invalid character '\\u0085' looking for beginning of value")
        );
    }

    #[test]
    fn every_truncation_is_refused_or_a_prefix_of_the_token() {
        let token = ContinueToken { resource_version: 1234, start: "web-7\0".into() };
        let text = token.encode();
        for n in 0..text.len() {
            if let Ok(decoded) = ContinueToken::decode(&text[..n]) {
                panic!("truncated to {n} decoded to {decoded:?}");
            }
        }
    }
}
