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
        loop {
            if let Some(newline) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=newline).collect();
                return serde_json::from_slice(&line).unwrap();
            }
            let mut size_line = String::new();
            self.reader.read_line(&mut size_line).unwrap();
            let size = usize::from_str_radix(size_line.trim(), 16).unwrap();
            assert!(size > 0, "the watch ended");
            let mut chunk = vec![0u8; size + 2];
            self.reader.read_exact(&mut chunk).unwrap();
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
