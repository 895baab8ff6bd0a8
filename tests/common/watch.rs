//! A watch stream read over a plain HTTP/1.1 connection, one JSON event per
//! line of the chunked body (the tests that check event order by hand).

use super::Server;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A watch over HTTP/1.1 (20 s read timeout), decoded one JSON event per line.
pub struct Watch {
    reader: BufReader<TcpStream>,
    pending: Vec<u8>,
}

impl Watch {
    pub fn open(s: &Server, path: &str) -> Watch {
        let mut stream = TcpStream::connect(s.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{path}: {line}");
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
        }
        Watch { reader, pending: Vec::new() }
    }

    pub fn next(&mut self) -> Value {
        self.try_next().expect("the watch ended")
    }

    /// The next event, or None when the server ended the stream (the last
    /// chunk, or the connection closed or reset between events, as when the
    /// server was killed). A read timeout still fails the test.
    pub fn try_next(&mut self) -> Option<Value> {
        loop {
            if let Some(newline) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=newline).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let mut size_line = String::new();
            let read = match self.reader.read_line(&mut size_line) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => 0,
                Err(e) => panic!("reading the watch: {e}"),
            };
            if read == 0 {
                assert!(self.pending.is_empty(), "the stream ended inside an event");
                return None;
            }
            let size = usize::from_str_radix(size_line.trim(), 16).unwrap();
            if size == 0 {
                assert!(self.pending.is_empty(), "the stream ended inside an event");
                return None;
            }
            let mut chunk = vec![0u8; size + 2];
            match self.reader.read_exact(&mut chunk) {
                Ok(()) => {}
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof) =>
                {
                    // The server went away inside a chunk: what was cut is not an event.
                    return None;
                }
                Err(e) => panic!("reading the watch: {e}"),
            }
            self.pending.extend_from_slice(&chunk[..size]);
        }
    }

    /// The next event as (type, name, resourceVersion).
    pub fn next_event(&mut self) -> (String, String, u64) {
        let event = self.next();
        let object = &event["object"];
        (
            event["type"].as_str().unwrap().to_string(),
            object["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            object["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap(),
        )
    }
}
