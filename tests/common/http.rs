//! A minimal HTTP/1.1 client over `std::net::TcpStream`, for integration tests only.
//!
//! It owns the wire: the tests that use it need to see exactly what the server
//! sent (status line, headers, `Content-Length` or `Transfer-Encoding: chunked`
//! framing) and to send several requests on one connection (keep-alive).
//! Invariants: every read and write is bounded by a timeout, so a server that
//! stops answering fails the test instead of hanging it; a response body is read
//! by its framing only (never "until the socket closes" unless the response has
//! neither a length nor chunking, as HTTP/1.1 says).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

/// Upper bound for any single read or write on a test connection.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// True when the body arrived with `Transfer-Encoding: chunked`.
    pub chunked: bool,
}

impl Response {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON; panics with the body when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "response body is not JSON ({e}); status {} headers {:?} body: {}",
                self.status,
                self.headers,
                truncate(&self.text(), 2000)
            )
        })
    }
}

/// Shortens long bodies for panic messages.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        s.to_string()
    } else {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    }
}

/// One client connection; requests on it reuse the socket (keep-alive).
pub struct Conn {
    reader: BufReader<TcpStream>,
    host: String,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn { reader: BufReader::new(stream), host: addr.to_string() })
    }

    /// The local address of this connection (to tell two connections apart).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.reader.get_ref().local_addr()
    }

    /// Sends one request and reads its response. `headers` are added after
    /// `Host`; `Content-Length` is added when `body` is `Some`.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> io::Result<Response> {
        let head = request_head(&self.host, method, path, headers, body.map(|b| b.len()));
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        if let Some(b) = body {
            stream.write_all(b)?;
        }
        stream.flush()?;
        read_response(&mut self.reader, method == "HEAD")
    }

    /// Sends a request whose body is written from another thread while this one
    /// reads the response. For bodies the server may refuse before reading them
    /// (413): a blocking write would otherwise never get to read the answer.
    /// Write errors after the server has answered are expected and ignored.
    pub fn request_streaming_body(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> io::Result<Response> {
        let head = request_head(&self.host, method, path, headers, Some(body.len()));
        let mut writer = self.reader.get_ref().try_clone()?;
        let handle = std::thread::spawn(move || -> io::Result<()> {
            writer.write_all(head.as_bytes())?;
            for chunk in body.chunks(64 * 1024) {
                writer.write_all(chunk)?;
            }
            writer.flush()
        });
        let response = read_response(&mut self.reader, method == "HEAD");
        // Unblock the writer if the server stopped reading, then reap it.
        let _ = self.reader.get_ref().shutdown(Shutdown::Both);
        let _ = handle.join();
        response
    }

    /// True when the server has closed this connection (EOF on a read that
    /// waits at most `wait`). Used to check keep-alive behaviour.
    pub fn is_closed_by_peer(&mut self, wait: Duration) -> io::Result<bool> {
        let stream = self.reader.get_ref();
        stream.set_read_timeout(Some(wait))?;
        let result = match self.reader.fill_buf() {
            Ok(buf) => Ok(buf.is_empty()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut => Ok(false),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(true),
            Err(e) => Err(e),
        };
        self.reader.get_ref().set_read_timeout(Some(IO_TIMEOUT))?;
        result
    }
}

fn request_head(host: &str, method: &str, path: &str, headers: &[(&str, &str)], body_len: Option<usize>) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(len) = body_len {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = Vec::new();
    let n = reader.take(64 * 1024).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed before a full response"));
    }
    if line.last() != Some(&b'\n') {
        return Err(invalid("response line longer than 64 KiB or cut short".into()));
    }
    while matches!(line.last(), Some(b'\n') | Some(b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|e| invalid(format!("response line is not UTF-8: {e}")))
}

/// Reads one response (skipping interim 1xx responses) by its framing.
fn read_response(reader: &mut impl BufRead, head_request: bool) -> io::Result<Response> {
    loop {
        let status_line = read_line(reader)?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_string();
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid(format!("bad status line {status_line:?}")))?;
        if !version.starts_with("HTTP/1.") {
            return Err(invalid(format!("bad status line {status_line:?}")));
        }
        let mut headers = Vec::new();
        loop {
            let line = read_line(reader)?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').ok_or_else(|| invalid(format!("bad header line {line:?}")))?;
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        if (100..200).contains(&status) {
            continue;
        }
        let mut response = Response { status, version, headers, body: Vec::new(), chunked: false };
        if head_request || status == 204 || status == 304 {
            return Ok(response);
        }
        let chunked =
            response.header("transfer-encoding").map(|v| v.to_ascii_lowercase().contains("chunked")).unwrap_or(false);
        if chunked {
            response.chunked = true;
            response.body = read_chunked(reader)?;
        } else if let Some(len) = response.header("content-length") {
            let len: usize = len.parse().map_err(|_| invalid(format!("bad Content-Length {len:?}")))?;
            let mut body = vec![0; len];
            reader.read_exact(&mut body)?;
            response.body = body;
        } else {
            reader.read_to_end(&mut response.body)?;
        }
        return Ok(response);
    }
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader)?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size =
            usize::from_str_radix(size_text, 16).map_err(|_| invalid(format!("bad chunk size line {line:?}")))?;
        if size == 0 {
            // Trailers, then an empty line.
            while !read_line(reader)?.is_empty() {}
            return Ok(body);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let crlf = read_line(reader)?;
        if !crlf.is_empty() {
            return Err(invalid("chunk not followed by CRLF".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chunked_and_length_framed_responses_back_to_back() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\n\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n\
HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}";
        let mut reader = BufReader::new(&wire[..]);
        let first = read_response(&mut reader, false).unwrap();
        assert_eq!(first.status, 200);
        assert!(first.chunked);
        assert_eq!(first.body, b"abcde");
        let second = read_response(&mut reader, false).unwrap();
        assert_eq!(second.status, 404);
        assert!(!second.chunked);
        assert_eq!(second.body, b"{}");
        assert!(read_response(&mut reader, false).is_err());
    }
}
