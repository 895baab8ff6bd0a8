//! The shape of a JSON answer's bytes, as kube-apiserver's serializers write
//! them: an object, list, Status or discovery document goes through Go's
//! `json.Encoder`, so it ends in a newline; when the request asks for
//! `pretty` (Go's `ParseBool` of the first value), or sends none and its
//! User-Agent starts with `curl`, `Wget` or `Mozilla/5.0` (kube's
//! `isPrettyPrint`), it is `json.MarshalIndent(obj, "", "  ")` instead:
//! two-space indents, `": "` after keys, empty objects and arrays as `{}` and
//! `[]`, and no final newline. Watch streams are neither (their frames carry
//! their own newlines). `/version` is always indented (kube's
//! `WriteRawJSON`).
//!
//! The encoded bytes are shared by every reader (encoded once), so the
//! reshaping happens on the way out, frame by frame: `Indent` is a streaming
//! re-indenter over compact JSON. A pretty answer is never gzipped (the
//! handlers are told the client takes no gzip), so its bytes can be reshaped;
//! a gzipped compact answer keeps its bytes as they are, without the newline.
//!
//! Invariant: `Indent` never panics and only inserts whitespace outside
//! strings; fed any split of the same bytes it writes the same output.

use super::{BodyError, ResponseBody};
use bytes::Bytes;
use http::{header, Response};
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

/// kube's `isPrettyPrint`: the `pretty` parameter when given non-empty, else
/// whether the User-Agent is a person's tool.
pub fn wanted(pretty_param: Option<bool>, user_agent: Option<&str>) -> bool {
    match pretty_param {
        Some(pretty) => pretty,
        None => user_agent
            .is_some_and(|ua| ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/5.0")),
    }
}

/// A streaming `json.Indent(dst, src, "", "  ")` over compact JSON
/// (whitespace outside strings in the input is dropped).
#[derive(Default)]
pub struct Indent {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// An `{` or `[` was written and its newline is held until the next
    /// byte shows whether the value is empty.
    pending_open: bool,
}

impl Indent {
    fn newline(&self, out: &mut Vec<u8>) {
        out.push(b'\n');
        for _ in 0..self.depth {
            out.extend_from_slice(b"  ");
        }
    }

    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.reserve(input.len() + input.len() / 4);
        for &b in input {
            if self.in_string {
                out.push(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                continue;
            }
            if self.pending_open {
                self.pending_open = false;
                if b == b'}' || b == b']' {
                    // An empty object or array stays `{}` / `[]`.
                    self.depth = self.depth.saturating_sub(1);
                    out.push(b);
                    continue;
                }
                self.newline(out);
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    out.push(b);
                }
                b'{' | b'[' => {
                    out.push(b);
                    self.depth += 1;
                    self.pending_open = true;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.newline(out);
                    out.push(b);
                }
                b',' => {
                    out.push(b);
                    self.newline(out);
                }
                b':' => out.extend_from_slice(b": "),
                _ => out.push(b),
            }
        }
    }
}

/// What a body's bytes go through on the way out.
enum Shape {
    Indent(Indent),
    /// Append one `\n` at the end (`json.Encoder`'s).
    Newline {
        written: bool,
    },
}

/// A body reshaped frame by frame.
struct Shaped {
    inner: ResponseBody,
    shape: Shape,
    done: bool,
}

impl Body for Shaped {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => match &mut this.shape {
                    Shape::Indent(indent) => {
                        let mut out = Vec::new();
                        indent.push(&data, &mut out);
                        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
                    }
                    Shape::Newline { .. } => Poll::Ready(Some(Ok(Frame::data(data)))),
                },
                Err(frame) => Poll::Ready(Some(Ok(frame))),
            },
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => {
                this.done = true;
                match &mut this.shape {
                    Shape::Newline { written: written @ false } => {
                        *written = true;
                        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"\n")))))
                    }
                    _ => Poll::Ready(None),
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        match self.shape {
            // The indented length is known only once written.
            Shape::Indent(_) => SizeHint::default(),
            Shape::Newline { .. } => {
                let inner = self.inner.size_hint();
                match inner.exact() {
                    Some(n) => SizeHint::with_exact(n + 1),
                    None => SizeHint::default(),
                }
            }
        }
    }
}

/// Whether a response is a serializer's JSON document (an object, a list, a
/// Status, a Table, a discovery document), not a stream or another format.
fn is_serialized_json(response: &Response<ResponseBody>) -> bool {
    let status = response.status();
    if status == http::StatusCode::NO_CONTENT
        || status == http::StatusCode::NOT_MODIFIED
        || response.body().size_hint().exact() == Some(0)
    {
        return false;
    }
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t == "application/json" || t.starts_with("application/json;"));
    json && !response.headers().contains_key(header::CONTENT_ENCODING)
}

/// Gives a serialized JSON answer kube's shape: indented when `pretty`, else
/// ending in a newline.
pub fn shape(response: Response<ResponseBody>, pretty: bool) -> Response<ResponseBody> {
    if !is_serialized_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let shape = if pretty { Shape::Indent(Indent::default()) } else { Shape::Newline { written: false } };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, ResponseBody::new(Shaped { inner: body, shape, done: false }))
}

/// Indents a JSON answer whatever the request asked (`/version`).
pub fn indented(response: Response<ResponseBody>) -> Response<ResponseBody> {
    if !is_serialized_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(
        parts,
        ResponseBody::new(Shaped { inner: body, shape: Shape::Indent(Indent::default()), done: false }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indent(input: &str) -> String {
        let mut out = Vec::new();
        Indent::default().push(input.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn indents_as_go_marshal_indent() {
        assert_eq!(indent(r#"{"a":1,"b":[1,2],"c":{},"d":[],"e":{"f":"x"}}"#), "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": [],\n  \"e\": {\n    \"f\": \"x\"\n  }\n}");
        // Strings keep their bytes, escapes and structural characters included.
        assert_eq!(indent(r#"{"k":"a,\"b\":{[c]}\\"}"#), "{\n  \"k\": \"a,\\\"b\\\":{[c]}\\\\\"\n}");
        assert_eq!(indent("[]"), "[]");
        assert_eq!(indent("\"s\""), "\"s\"");
    }

    #[test]
    fn any_split_gives_the_same_bytes() {
        let input = r#"{"kind":"List","items":[{"metadata":{"name":"a\"b"},"data":{}},{"x":[]}],"n":null}"#;
        let whole = indent(input);
        for cut in 0..input.len() {
            let mut indent = Indent::default();
            let mut out = Vec::new();
            indent.push(&input.as_bytes()[..cut], &mut out);
            indent.push(&input.as_bytes()[cut..], &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), whole, "cut at {cut}");
        }
        // It is the same document.
        let a: serde_json::Value = serde_json::from_str(input).unwrap();
        let b: serde_json::Value = serde_json::from_str(&whole).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn who_gets_pretty_json() {
        assert!(wanted(None, Some("curl/8.5.0")));
        assert!(wanted(None, Some("Wget/1.21")));
        assert!(wanted(None, Some("Mozilla/5.0 (X11)")));
        assert!(!wanted(None, Some("kubectl/v1.36.0 (linux/amd64) kubernetes/abc")));
        assert!(!wanted(None, None));
        assert!(!wanted(Some(false), Some("curl/8.5.0")));
        assert!(wanted(Some(true), Some("kube-rs/5")));
    }
}
