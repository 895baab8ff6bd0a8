//! The watch receive path's decoding: splitting a watch body into events (`Lines`) and reading
//! the few fields loadgen needs from a Kubernetes watch event (`scan_kube_event`) without
//! building a JSON tree.
//!
//! `Lines` hands out each newline-terminated event as a slice of the received chunk (no copy);
//! only an event split across chunks (HTTP/2 DATA frames, HTTP/1.1 chunks) is copied, into one
//! buffer that keeps its capacity, so after warm-up the path allocates nothing per event.
//!
//! `scan_kube_event` walks the event's structure: it reads keys only where it expects them
//! (`type`; `object.metadata.resourceVersion`, `deletionTimestamp` and
//! `annotations[STAMP_ANNOTATION]`; `object.code` of an ERROR's Status) and skips every other
//! value (a string's end is found 16 bytes at a time with SSE2, long strings with
//! `memchr2`). A key that appears inside a string value, or at another depth, is never mistaken
//! for one of these; escaped quotes do not end a string. When the type came first, the walk
//! stops once nothing it needs can follow (after the metadata, or at `managedFields` when no
//! `"deletionTimestamp"` text follows), and the rest is only checked to end with `}`.
//!
//! Invariant: the scan never guesses. An event it cannot read exactly (a key or a type written
//! with escapes, an ERROR without a numeric code, anything malformed or truncated) is
//! `Unusual`, and the caller decodes that line fully (`target::parse_kube_event`), so the scan
//! and the full decode agree on every input (a unit test checks both on the tricky ones).

use memchr::{memchr, memchr2, memchr_iter};

use crate::target::{Seen, STAMP_ANNOTATION};

/// Longest watch event `Lines` holds while it waits for the event's end. Events are objects of
/// at most a few MiB (etcd's request limit is 1.5 MiB); a stream that sends this much without a
/// newline is broken, and holding more would only grow loadgen's memory per watcher.
pub const EVENT_BYTES_MAX: usize = 64 << 20;

/// The body of a watch split into events (newline-delimited JSON), across chunks.
#[derive(Debug, Default)]
pub struct Lines {
    /// The start of an event whose end has not arrived yet.
    carry: Vec<u8>,
}

/// An event longer than `EVENT_BYTES_MAX` without its newline.
#[derive(Debug, PartialEq, Eq)]
pub struct EventTooLarge;

impl Lines {
    /// Feeds one received chunk, calling `on_event` with every event it completes, in order
    /// (without the newline; empty and whitespace-only lines are left out).
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(&[u8])) -> Result<(), EventTooLarge> {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr(b'\n', rest) {
                None => {
                    if self.carry.len() + rest.len() > EVENT_BYTES_MAX {
                        return Err(EventTooLarge);
                    }
                    self.carry.extend_from_slice(rest);
                    return Ok(());
                }
                Some(end) => {
                    self.carry.extend_from_slice(&rest[..end]);
                    emit(&self.carry, &mut on_event);
                    self.carry.clear();
                    rest = &rest[end + 1..];
                }
            }
        }
        let mut start = 0;
        for end in memchr_iter(b'\n', rest) {
            emit(&rest[start..end], &mut on_event);
            start = end + 1;
        }
        let tail = &rest[start..];
        if tail.len() > EVENT_BYTES_MAX {
            return Err(EventTooLarge);
        }
        self.carry.extend_from_slice(tail);
        Ok(())
    }

    /// Bytes held for an event not yet complete.
    pub fn pending_bytes(&self) -> usize {
        self.carry.len()
    }
}

fn emit(line: &[u8], on_event: &mut impl FnMut(&[u8])) {
    match line.first() {
        None => {}
        Some(b) if is_ws(*b) && line.iter().all(|&b| is_ws(b)) => {}
        Some(_) => on_event(line),
    }
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Why the scan did not read an event: the caller decodes it fully instead.
#[derive(Debug, PartialEq, Eq)]
pub struct Unusual;

/// The key whose presence after `managedFields` keeps the walk going (built once).
static DELETION_TIMESTAMP: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"deletionTimestamp\""));

/// Why a walk stopped early.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The event must be decoded fully.
    Unusual,
    /// Everything the scan needs has been read (see `scan_kube_event`).
    Enough,
}

type Scan<T> = Result<T, Stop>;

/// Where a string starting at `from` ends: the first `"` or `\` at or after `from`. Most
/// strings of an object are short (keys, names): they are searched 16 bytes at a time with one
/// SSE2 compare each (x86_64 always has SSE2; elsewhere 8 bytes at a time in a register), the
/// first 64 bytes without a call; longer strings with `memchr2`'s wider vector search.
#[inline]
fn quote_or_backslash(b: &[u8], from: usize) -> Option<usize> {
    let short = from.saturating_add(64);
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline; every load reads the 16 bytes
        // b[i..i + 16], inside `b` by the loop condition (unaligned loads are allowed).
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            while i + 16 <= b.len() && i < short {
                let v = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                let hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
                if hits != 0 {
                    return Some(i + hits.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while i + 8 <= b.len() && i < short {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let q = w ^ (ONES * u64::from(b'"'));
        let s = w ^ (ONES * u64::from(b'\\'));
        // The lowest byte flagged by the zero-byte test is exact (flags above it may not be).
        let found = (q.wrapping_sub(ONES) & !q | s.wrapping_sub(ONES) & !s) & HIGHS;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i < short {
        // Fewer than 8 bytes left in the line.
        return b.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\').map(|p| i + p);
    }
    memchr2(b'"', b'\\', b.get(i..)?).map(|p| i + p)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn ws(&mut self) {
        while self.i < self.b.len() && is_ws(self.b[self.i]) {
            self.i += 1;
        }
    }

    /// The next byte that is not whitespace (compact JSON, as servers write it, has none: the
    /// first byte is checked before the loop).
    #[inline]
    fn peek(&mut self) -> Scan<u8> {
        match self.b.get(self.i) {
            Some(&c) if !is_ws(c) => Ok(c),
            _ => {
                self.ws();
                self.b.get(self.i).copied().ok_or(Stop::Unusual)
            }
        }
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Scan<()> {
        if self.peek()? != c {
            return Err(Stop::Unusual);
        }
        self.i += 1;
        Ok(())
    }

    /// Skips a string at the cursor (the cursor is at its opening quote): the value loadgen
    /// does not read, most of an event's strings, found without building a result.
    #[inline(always)]
    fn skip_string(&mut self) -> Scan<()> {
        self.i += 1;
        loop {
            let at = quote_or_backslash(self.b, self.i).ok_or(Stop::Unusual)?;
            if self.b[at] == b'"' {
                self.i = at + 1;
                return Ok(());
            }
            // The escaped byte (`\"`, `\\`, the `u` of `\uXXXX`) cannot end the string.
            self.i = at + 2;
            if self.i > self.b.len() {
                return Err(Stop::Unusual);
            }
        }
    }

    /// A string without escapes (keys, types, resourceVersions, stamps are plain); one with
    /// an escape is `Unusual`.
    #[inline(always)]
    fn plain_string(&mut self) -> Scan<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let at = quote_or_backslash(self.b, start).ok_or(Stop::Unusual)?;
        if self.b[at] != b'"' {
            return Err(Stop::Unusual);
        }
        self.i = at + 1;
        Ok(&self.b[start..at])
    }

    /// Skips one value of any kind.
    fn skip_value(&mut self) -> Scan<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => self.skip_nested(),
            _ => self.scalar().map(drop),
        }
    }

    /// A number or literal: its bytes up to the next delimiter.
    fn scalar(&mut self) -> Scan<&'a [u8]> {
        self.ws();
        let start = self.i;
        while self.i < self.b.len() && !matches!(self.b[self.i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
            if matches!(self.b[self.i], b'"' | b'{' | b'[' | b':') {
                return Err(Stop::Unusual);
            }
            self.i += 1;
        }
        if self.i == start {
            return Err(Stop::Unusual);
        }
        Ok(&self.b[start..self.i])
    }

    /// Skips an object or array, strings inside it included, by bracket depth.
    fn skip_nested(&mut self) -> Scan<()> {
        let mut depth = 0usize;
        loop {
            match *self.b.get(self.i).ok_or(Stop::Unusual)? {
                b'"' => self.skip_string()?,
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or(Stop::Unusual)?;
                    self.i += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => self.i += 1,
            }
        }
    }

    /// Walks an object, calling `on_key` with each key and the cursor at its value, which
    /// `on_key` must consume.
    fn object(&mut self, mut on_key: impl FnMut(&mut Self, &'a [u8]) -> Scan<()>) -> Scan<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            let key = self.plain_string()?;
            self.eat(b':')?;
            on_key(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Unusual),
            }
        }
    }

    /// `null`, or (false) any other value, left unread.
    fn null(&mut self) -> Scan<bool> {
        if self.peek()? == b'n' {
            let s = self.scalar()?;
            return if s == b"null" { Ok(true) } else { Err(Stop::Unusual) };
        }
        Ok(false)
    }
}

/// A run of ASCII digits as a number (None when empty, not all digits, or too large).
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

/// What the scan read from one event.
#[derive(Debug, Default)]
struct Fields<'a> {
    event_type: Option<&'a [u8]>,
    resource_version: Option<u64>,
    stamp_ns: Option<u64>,
    deleting: bool,
    code: Option<u16>,
}

/// Reads one Kubernetes watch event (`{"type":...,"object":{...}}`, fields in any order) by
/// walking its structure. `Unusual` when the event must be decoded fully instead.
///
/// When the type comes before the object (as every API server writes it), the walk stops as
/// soon as it has all it needs: at the end of the object's `metadata`, or at its `managedFields`
/// (ObjectMeta's last field in Kubernetes' order) once `resourceVersion` and `annotations` were
/// read and no `"deletionTimestamp"` appears anywhere after that point. Past where it stopped,
/// the event is only checked to end with `}`; an ERROR event is always read whole.
pub fn scan_kube_event(line: &[u8]) -> Result<Seen, Unusual> {
    let mut f = Fields::default();
    let mut c = Cursor { b: line, i: 0 };
    let mut annotations_read = false;
    let walked = c.object(|c, key| match key {
        b"type" => {
            f.event_type = Some(c.plain_string()?);
            Ok(())
        }
        b"object" => c.object(|c, key| match key {
            b"metadata" => {
                c.object(|c, key| match key {
                    b"resourceVersion" => {
                        f.resource_version = parse_u64(c.plain_string()?);
                        Ok(())
                    }
                    b"deletionTimestamp" => {
                        f.deleting = !c.null()?;
                        if f.deleting {
                            c.skip_value()?;
                        }
                        Ok(())
                    }
                    b"annotations" => {
                        annotations_read = true;
                        if c.null()? {
                            return Ok(());
                        }
                        c.object(|c, key| {
                            if key == STAMP_ANNOTATION.as_bytes() {
                                f.stamp_ns = parse_u64(c.plain_string()?);
                                Ok(())
                            } else {
                                c.skip_value()
                            }
                        })
                    }
                    b"managedFields"
                        if early_exit(f.event_type)
                            && annotations_read
                            && f.resource_version.is_some()
                            && DELETION_TIMESTAMP.find(&c.b[c.i..]).is_none() =>
                    {
                        Err(Stop::Enough)
                    }
                    _ => c.skip_value(),
                })?;
                if early_exit(f.event_type) {
                    return Err(Stop::Enough);
                }
                Ok(())
            }
            b"code" => {
                f.code = Some(std::str::from_utf8(c.scalar()?).ok().and_then(|s| s.parse().ok()).ok_or(Stop::Unusual)?);
                Ok(())
            }
            _ => c.skip_value(),
        }),
        _ => c.skip_value(),
    });
    match walked {
        Ok(()) => {
            c.ws();
            if c.i != line.len() {
                return Err(Unusual);
            }
        }
        Err(Stop::Enough) => {
            if line.iter().rev().find(|&&b| !is_ws(b)) != Some(&b'}') {
                return Err(Unusual);
            }
        }
        Err(Stop::Unusual) => return Err(Unusual),
    }
    let revision = f.resource_version;
    match f.event_type.ok_or(Unusual)? {
        b"ADDED" | b"MODIFIED" => Ok(Seen {
            // A pod being deleted gracefully still carries its last write's stamp: this event
            // is not that write's delivery, so it is counted but not timed.
            stamp_ns: if f.deleting { None } else { f.stamp_ns },
            mine: true,
            revision,
            error: None,
        }),
        b"DELETED" => Ok(Seen { stamp_ns: None, mine: true, revision, error: None }),
        b"BOOKMARK" => Ok(Seen { revision, ..Default::default() }),
        b"ERROR" => Ok(Seen { error: Some(f.code.ok_or(Unusual)?.to_string()), ..Default::default() }),
        _ => Err(Unusual),
    }
}

/// Whether the walk may stop before the event's end: the type is known and is not ERROR (an
/// ERROR's code comes after its metadata).
fn early_exit(event_type: Option<&[u8]>) -> bool {
    matches!(event_type, Some(b"ADDED" | b"MODIFIED" | b"DELETED" | b"BOOKMARK"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{decode_kube_event, parse_kube_event, pod_json, PodRef};

    fn pod(stamp: u64) -> String {
        String::from_utf8(pod_json(&PodRef::new(1, 1, 1), stamp, 400).to_vec()).unwrap()
    }

    fn with_rv(pod: &str, rv: u64) -> String {
        pod.replacen(r#""metadata":{"#, &format!(r#""metadata":{{"resourceVersion":"{rv}","#), 1)
    }

    /// Scans and decodes fully; both must agree, and the scan must not give up.
    fn both(line: &str) -> Seen {
        let scanned = scan_kube_event(line.as_bytes()).unwrap_or_else(|_| panic!("scan gave up on {line}"));
        assert_eq!(scanned, decode_kube_event(line.as_bytes()).unwrap(), "{line}");
        scanned
    }

    #[test]
    fn reads_the_usual_events() {
        let p = with_rv(&pod(7), 12);
        let s = both(&format!(r#"{{"type":"MODIFIED","object":{p}}}"#));
        assert_eq!((s.stamp_ns, s.mine, s.revision, s.error), (Some(7), true, Some(12), None));
        let s = both(&format!(r#"{{"type":"DELETED","object":{p}}}"#));
        assert_eq!((s.stamp_ns, s.mine, s.revision), (None, true, Some(12)));
        let s = both(
            r#"{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
        );
        assert_eq!((s.mine, s.revision), (false, Some(99)));
        let s = both(
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#,
        );
        assert_eq!(s.error.as_deref(), Some("410"));
        // Fields in another order, whitespace between tokens.
        let s = both(&format!("{{ \"object\" : {p} ,\r\n \"type\" : \"ADDED\" }}\r"));
        assert_eq!((s.stamp_ns, s.revision), (Some(7), Some(12)));
    }

    #[test]
    fn the_stamp_key_inside_a_value_or_elsewhere_is_not_the_stamp() {
        let key = STAMP_ANNOTATION;
        // In a label value, in another annotation's value, in a string with escaped quotes,
        // as a key at the wrong depth: none of them is the stamp.
        let p = pod(7)
            .replace(r#""app":"loadgen""#, &format!(r#""app":"\"{key}\":\"5\"""#))
            .replace(r#""spec":{"#, &format!(r#""spec":{{"{key}":"6","#));
        let s = both(&format!(r#"{{"type":"ADDED","object":{p}}}"#));
        assert_eq!(s.stamp_ns, Some(7));
        // Without the real annotation, nothing is timed even though the key text is there.
        let unstamped = p.replace(&format!(r#""{key}":"7","#), "");
        assert!(!unstamped.contains(r#"":"7""#));
        assert_eq!(both(&format!(r#"{{"type":"ADDED","object":{unstamped}}}"#)).stamp_ns, None);
        // "resourceVersion" and "deletionTimestamp" in a value or in spec count for nothing.
        let tricky = pod(7).replace(
            r#""spec":{"#,
            r#""spec":{"note":"\"resourceVersion\":\"1\",\"deletionTimestamp\":\"x\"","resourceVersion":"2","#,
        );
        let s = both(&format!(r#"{{"type":"ADDED","object":{}}}"#, with_rv(&tricky, 40)));
        assert_eq!((s.revision, s.stamp_ns), (Some(40), Some(7)));
        // Escaped backslash right before the closing quote.
        let s = both(&format!(
            r#"{{"type":"ADDED","object":{}}}"#,
            with_rv(&pod(8), 3).replace(r#""app":"loadgen""#, r#""app":"a\\""#)
        ));
        assert_eq!((s.revision, s.stamp_ns), (Some(3), Some(8)));
    }

    /// A pod as an API server writes it: managedFields last in the metadata, then spec, status.
    fn served(stamp: u64, rv: u64) -> String {
        with_rv(&pod(stamp), rv).replacen(
            r#"},"spec":{"#,
            r#","managedFields":[{"manager":"m","fieldsV1":{"f:metadata":{"f:annotations":{"f:loadgen.shardline.dev/sent-unix-ns":{}}}}}]},"spec":{"#,
            1,
        )
    }

    #[test]
    fn stops_after_the_metadata_only_when_nothing_it_needs_can_follow() {
        let p = served(7, 12);
        assert!(p.contains("managedFields"));
        let s = both(&format!(r#"{{"type":"MODIFIED","object":{p}}}"#));
        assert_eq!((s.stamp_ns, s.revision), (Some(7), Some(12)));
        // A deletionTimestamp after managedFields (not Kubernetes' order) is still read.
        let late = p.replacen(
            r#""managedFields":["#,
            r#""managedFields":[],"deletionTimestamp":"2026-11-25T10:00:00Z","x":["#,
            1,
        );
        let s = both(&format!(r#"{{"type":"MODIFIED","object":{late}}}"#));
        assert_eq!((s.stamp_ns, s.mine), (None, true));
        // The text "deletionTimestamp" in a later value only costs the early stop.
        let text = p.replacen(r#""spec":{"#, r#""spec":{"note":"\"deletionTimestamp\"","#, 1);
        assert_eq!(both(&format!(r#"{{"type":"ADDED","object":{text}}}"#)).stamp_ns, Some(7));
        // Annotations after managedFields are still read.
        let moved = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","resourceVersion":"5","managedFields":[{{"manager":"m"}}],"annotations":{{"{STAMP_ANNOTATION}":"9"}}}},"spec":{{}}}}"#
        );
        assert_eq!(both(&format!(r#"{{"type":"ADDED","object":{moved}}}"#)).stamp_ns, Some(9));
        // Type after the object: read whole.
        assert_eq!(both(&format!(r#"{{"object":{p},"type":"ADDED"}}"#)).revision, Some(12));
        // Past the early stop the event is only checked to end with '}': a line cut after the
        // metadata without its closing braces is refused, one that still ends with '}' is not
        // (the newline framing delivers whole events; the full decode would refuse it).
        let cut = format!(r#"{{"type":"ADDED","object":{}"#, &p[..p.find(r#""spec""#).unwrap() + 8]);
        assert_eq!(scan_kube_event(cut.as_bytes()), Err(Unusual));
    }

    #[test]
    fn deletion_timestamp_null_is_not_a_deletion() {
        let p = with_rv(&pod(7), 4);
        let null = p.replacen(r#""metadata":{"#, r#""metadata":{"deletionTimestamp":null,"#, 1);
        assert_eq!(both(&format!(r#"{{"type":"MODIFIED","object":{null}}}"#)).stamp_ns, Some(7));
        let set = p.replacen(r#""metadata":{"#, r#""metadata":{"deletionTimestamp":"2026-11-25T10:00:00Z","#, 1);
        let s = both(&format!(r#"{{"type":"MODIFIED","object":{set}}}"#));
        assert_eq!((s.stamp_ns, s.mine), (None, true));
    }

    #[test]
    fn unusual_events_are_left_to_the_full_decode() {
        let p = pod(7);
        for line in [
            // A key written with an escape may be "type" once unescaped.
            format!(r#"{{"typ\u0065":"ADDED","object":{p}}}"#),
            // An ERROR whose Status has no code.
            r#"{"type":"ERROR","object":{"kind":"Status","reason":"Gone"}}"#.to_string(),
            // Truncated inside the metadata, trailing garbage, not an object, an unknown type.
            format!(r#"{{"type":"ADDED","object":{}"#, &p[..p.find("loadgen.shardline.dev/padding").unwrap()]),
            format!(r#"{{"type":"ADDED","object":{p}}} x"#),
            format!(r#"{{"object":{p},"type":"ADDED"}} x"#),
            "[1,2]".to_string(),
            format!(r#"{{"type":"SOMETHING","object":{p}}}"#),
            String::new(),
            "{".into(),
            r#"{"type":"ADDED","object":{"metadata":{"annotations":{"a":"\"#.into(),
        ] {
            assert_eq!(scan_kube_event(line.as_bytes()), Err(Unusual), "{line}");
        }
        // The full decode still reads the escaped key and the code-less ERROR.
        let s = parse_kube_event(format!(r#"{{"typ\u0065":"ADDED","object":{p}}}"#).as_bytes()).unwrap();
        assert_eq!(s.stamp_ns, Some(7));
        let s = parse_kube_event(br#"{"type":"ERROR","object":{"kind":"Status","reason":"Gone"}}"#).unwrap();
        assert_eq!(s.error.as_deref(), Some("Gone"));
    }

    #[test]
    fn scan_never_panics_on_prefixes_and_byte_flips() {
        let line = format!(r#"{{"type":"MODIFIED","object":{}}}"#, with_rv(&pod(7), 5));
        let b = line.as_bytes();
        for end in 0..b.len() {
            let _ = scan_kube_event(&b[..end]);
        }
        for i in 0..b.len() {
            for x in [b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', 0xff] {
                let mut m = b.to_vec();
                m[i] = x;
                if let Ok(s) = scan_kube_event(&m) {
                    // Whatever the scan accepts, the full decode reads the same way when it
                    // can decode the line at all.
                    if let Ok(full) = decode_kube_event(&m) {
                        assert_eq!(s, full, "{}", String::from_utf8_lossy(&m));
                    }
                }
            }
        }
    }

    fn events(n: u64) -> Vec<u8> {
        let mut body = Vec::new();
        for i in 0..n {
            body.extend_from_slice(
                format!(r#"{{"type":"ADDED","object":{}}}"#, with_rv(&pod(100 + i), i + 1)).as_bytes(),
            );
            body.push(b'\n');
        }
        body
    }

    fn split_at_every(body: &[u8], cuts: &[usize]) -> Vec<Seen> {
        let mut lines = Lines::default();
        let mut seen = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([body.len()].iter()) {
            lines.feed(&body[from..cut], |e| seen.push(scan_kube_event(e).unwrap())).unwrap();
            from = cut;
        }
        assert_eq!(lines.pending_bytes(), 0);
        seen
    }

    #[test]
    fn events_split_anywhere_across_chunks_come_out_whole_and_in_order() {
        let body = events(3);
        let whole = split_at_every(&body, &[]);
        assert_eq!(whole.iter().map(|s| s.revision.unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
        // One cut anywhere, two cuts anywhere (step 7 keeps the test quick), one byte at a time.
        for a in 0..=body.len() {
            assert_eq!(split_at_every(&body, &[a]), whole, "cut at {a}");
        }
        for a in (0..=body.len()).step_by(7) {
            for b in (a..=body.len()).step_by(11) {
                assert_eq!(split_at_every(&body, &[a, b]), whole, "cuts at {a}, {b}");
            }
        }
        let bytes: Vec<usize> = (1..body.len()).collect();
        assert_eq!(split_at_every(&body, &bytes), whole);
    }

    #[test]
    fn blank_lines_are_skipped_and_oversized_events_refused() {
        let mut lines = Lines::default();
        let mut n = 0;
        lines.feed(b"\n\r\n  \n", |_| n += 1).unwrap();
        assert_eq!(n, 0);
        let mut lines = Lines::default();
        let big = vec![b'x'; EVENT_BYTES_MAX / 2 + 1];
        lines.feed(&big, |_| {}).unwrap();
        assert_eq!(lines.feed(&big, |_| {}), Err(EventTooLarge));
    }

    #[test]
    fn finds_quotes_and_backslashes_at_every_position() {
        for len in 0..150 {
            for at in 0..=len {
                let mut b = vec![b'x'; len];
                if at < len {
                    b[at] = if at % 2 == 0 { b'"' } else { b'\\' };
                }
                for from in 0..=len {
                    let want = (at < len && at >= from).then_some(at);
                    assert_eq!(quote_or_backslash(&b, from), want, "len {len}, at {at}, from {from}");
                }
            }
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1a"), None);
    }
}
