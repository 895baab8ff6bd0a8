//! `loadgen replay`: a stand-in Kubernetes API server that sends watch events as fast as
//! loopback carries them, so that loadgen's own receive ceiling (events one loadgen core can
//! receive and time) can be measured apart from any real server's.
//!
//! It answers only what a watch-only scenario asks (`objects.pods = 0`, no writes or lists):
//! `GET /readyz`, the namespace list and creates, `GET /api/v1/pods?limit=1` (the current
//! resourceVersion) and `GET /api/v1/pods?watch=1&resourceVersion=N`, over HTTP/1.1 (chunked)
//! or HTTP/2 (prior knowledge, told apart by the connection preface). Anything else is a 404
//! Status. Every watch gets an endless stream of MODIFIED events of one object: a real
//! Shardline pod event (`benches/shardline-pod-event.json`, padded to `--pad-bytes`) or, for a
//! small object, a node Lease as kube-apiserver serves it. Each event carries its own
//! resourceVersion (increasing from the watch's, so loadgen's order check holds) and the stamp
//! annotation loadgen times (the Unix ns at which its batch was built, one clock read per
//! batch). Events go out in batches of about `--batch-bytes`, each one HTTP body chunk; HTTP/2
//! cuts them into DATA frames of the client's `SETTINGS_MAX_FRAME_SIZE`.
//!
//! Invariant: the bytes of every event are a complete JSON watch event on one line, as an API
//! server writes it; only the resourceVersion and stamp digits change from event to event.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use anyhow::{bail, Context as _, Result};
use bytes::{BufMut, Bytes, BytesMut};
use http::{Method, Request, Response, StatusCode};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

use crate::target::unix_ns;

/// The captured Shardline pod event (placeholders `RV`, `STAMP`, `PADDING`).
const POD_EVENT: &str = include_str!("../benches/shardline-pod-event.json");

/// A node Lease (`coordination.k8s.io/v1`) as kube-apiserver serves it to a watch, with the
/// stamp annotation loadgen times: the small object of a cluster (every kubelet renews one
/// every 10 s).
const LEASE_EVENT: &str = concat!(
    r#"{"type":"MODIFIED","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"node-0","#,
    r#""namespace":"kube-node-lease","uid":"3c0e6a5e-9a4f-4f43-a3c1-6d3f2b0b7a11","resourceVersion":"RV","#,
    r#""creationTimestamp":"2026-12-03T17:00:00Z","annotations":{"loadgen.shardline.dev/sent-unix-ns":"STAMP"},"#,
    r#""ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"node-0","uid":"0f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b"}],"#,
    r#""managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"coordination.k8s.io/v1","#,
    r#""time":"2026-12-03T17:00:10Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:ownerReferences":{".":{},"#,
    r#""k:{\"uid\":\"0f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b\"}":{}}},"f:spec":{"f:holderIdentity":{},"#,
    r#""f:leaseDurationSeconds":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"node-0","#,
    r#""leaseDurationSeconds":40,"renewTime":"2026-12-03T17:00:10.000000Z"}}}"#
);

/// Which object the watch events carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayObject {
    /// The captured Shardline pod, padded with `--pad-bytes`.
    Pod,
    /// A node Lease (~0.85 KB).
    Lease,
}

/// What `loadgen replay` serves.
#[derive(Clone, Debug, clap::Args)]
pub struct ReplayOptions {
    /// Loopback address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// The object of every event.
    #[arg(long, value_enum, default_value_t = ReplayObject::Pod)]
    pub object: ReplayObject,
    /// Padding annotation bytes of the pod (1,000 gives the 2.8 KB event of the informers
    /// scenario's `pod_bytes = 1500`; 0 the 1.8 KB captured pod).
    #[arg(long, default_value_t = 1000)]
    pub pad_bytes: usize,
    /// About this many bytes of events per body chunk (at least one event).
    #[arg(long, default_value_t = 256 << 10)]
    pub batch_bytes: usize,
}

/// Largest `--pad-bytes` and `--batch-bytes` (a batch is built in memory per stream).
pub const REPLAY_BYTES_MAX: usize = 16 << 20;

/// One watch event split around the two numbers that change.
#[derive(Clone, Debug)]
pub struct EventTemplate {
    /// Up to the resourceVersion's digits.
    head: Bytes,
    /// Between the resourceVersion and the stamp.
    middle: Bytes,
    /// After the stamp, newline included.
    tail: Bytes,
}

impl EventTemplate {
    pub fn new(object: ReplayObject, pad_bytes: usize) -> Result<EventTemplate> {
        if pad_bytes > REPLAY_BYTES_MAX {
            bail!("--pad-bytes {pad_bytes} is above {REPLAY_BYTES_MAX}");
        }
        let text = match object {
            ReplayObject::Pod => POD_EVENT
                .trim_end()
                .replacen(r#""type":"ADDED""#, r#""type":"MODIFIED""#, 1)
                .replace("PADDING", &"x".repeat(pad_bytes)),
            ReplayObject::Lease => LEASE_EVENT.to_string(),
        };
        let rv = text.find(r#""RV""#).context("no RV in the event template")? + 1;
        let stamp = text.find(r#""STAMP""#).context("no STAMP in the event template")? + 1;
        if stamp < rv {
            bail!("the event template has its stamp before its resourceVersion");
        }
        let mut tail = text[stamp + "STAMP".len()..].to_string();
        tail.push('\n');
        Ok(EventTemplate {
            head: Bytes::copy_from_slice(&text.as_bytes()[..rv]),
            middle: Bytes::copy_from_slice(&text.as_bytes()[rv + "RV".len()..stamp]),
            tail: Bytes::from(tail),
        })
    }

    /// Appends one event with these numbers (`RESOURCE_VERSION_DIGITS` and `STAMP_DIGITS`
    /// wide: a number that does not fit panics).
    pub fn write(&self, out: &mut BytesMut, resource_version: u64, stamp_ns: u64) {
        out.put_slice(&self.head);
        let at = out.len();
        out.put_bytes(b'0', RESOURCE_VERSION_DIGITS);
        fixed_decimal(&mut out[at..], resource_version);
        out.put_slice(&self.middle);
        let at = out.len();
        out.put_bytes(b'0', STAMP_DIGITS);
        fixed_decimal(&mut out[at..], stamp_ns);
        out.put_slice(&self.tail);
    }

    /// The length of every event.
    pub fn event_bytes(&self) -> usize {
        self.head.len() + self.middle.len() + self.tail.len() + RESOURCE_VERSION_DIGITS + STAMP_DIGITS
    }
}

/// Batches one watch keeps for reuse: a batch whose bytes the connection has written (it holds
/// the only reference again) is rewritten in place, its numbers only, instead of built anew.
const BATCHES_REUSED_MAX: usize = 16;

/// An endless watch body: batches of events with increasing resourceVersions. Every number has
/// a fixed width (resourceVersions from `LIST_RESOURCE_VERSION`, 13 digits; stamps, 19 digits
/// until 2286), so a batch's numbers sit at the same offsets in every batch.
struct WatchBody {
    template: EventTemplate,
    next_resource_version: u64,
    events_per_batch: usize,
    /// Batches sent, oldest first; reused once written.
    sent: std::collections::VecDeque<Bytes>,
}

/// Digits of every resourceVersion and stamp the replay writes.
const RESOURCE_VERSION_DIGITS: usize = 13;
const STAMP_DIGITS: usize = 19;

impl WatchBody {
    fn new(template: EventTemplate, from: u64, events_per_batch: usize) -> WatchBody {
        WatchBody {
            template,
            next_resource_version: from.max(LIST_RESOURCE_VERSION) + 1,
            events_per_batch,
            sent: std::collections::VecDeque::new(),
        }
    }

    /// The next batch: a written one rewritten in place, else a new one.
    fn next_batch(&mut self) -> Bytes {
        let stamp_ns = unix_ns();
        let event_bytes = self.template.event_bytes();
        let reusable = self.sent.front().is_some_and(Bytes::is_unique) || self.sent.len() >= BATCHES_REUSED_MAX;
        let oldest = if reusable { self.sent.pop_front().map(Bytes::try_into_mut) } else { None };
        let mut buf = match oldest {
            Some(Ok(mut buf)) => {
                let (head, middle) = (self.template.head.len(), self.template.middle.len());
                for event in buf.chunks_exact_mut(event_bytes) {
                    let rv = &mut event[head..head + RESOURCE_VERSION_DIGITS];
                    fixed_decimal(rv, self.next_resource_version);
                    let at = head + RESOURCE_VERSION_DIGITS + middle;
                    fixed_decimal(&mut event[at..at + STAMP_DIGITS], stamp_ns);
                    self.next_resource_version += 1;
                }
                buf
            }
            // Still being written (then the connection keeps the only other reference and
            // frees it once written), or none yet: a new batch.
            _ => {
                let mut buf = BytesMut::with_capacity(self.events_per_batch * event_bytes);
                for _ in 0..self.events_per_batch {
                    self.template.write(&mut buf, self.next_resource_version, stamp_ns);
                    self.next_resource_version += 1;
                }
                buf
            }
        };
        let batch = std::mem::take(&mut buf).freeze();
        self.sent.push_back(batch.clone());
        batch
    }
}

/// Writes `n` as exactly `out.len()` digits, leading zeros included (a number wider than that
/// panics: every event must keep its length).
fn fixed_decimal(out: &mut [u8], mut n: u64) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    assert_eq!(n, 0, "a number outgrew its width");
}

impl Body for WatchBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(Some(Ok(Frame::data(self.get_mut().next_batch()))))
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// A response body: a fixed one, or a watch.
enum Reply {
    Fixed(Option<Bytes>),
    Watch(Box<WatchBody>),
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Reply::Fixed(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Reply::Watch(w) => Pin::new(w.as_mut()).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Fixed(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Fixed(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Reply::Watch(_) => SizeHint::default(),
        }
    }
}

/// The resourceVersion every list reports (watches start after it): 13 digits, so that every
/// resourceVersion a replay sends has 13 (for the next 9·10^12 events).
const LIST_RESOURCE_VERSION: u64 = 1_000_000_000_000;

fn json(status: StatusCode, body: String) -> Response<Reply> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Reply::Fixed(Some(Bytes::from(body))))
        .expect("valid response parts")
}

fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The answer to one request.
fn answer(req: &Request<Incoming>, template: &EventTemplate, batch_bytes: usize) -> Response<Reply> {
    let path = req.uri().path();
    let query = req.uri().query().unwrap_or("");
    match (req.method(), path) {
        (&Method::GET, "/readyz") => Response::new(Reply::Fixed(Some(Bytes::from_static(b"ok")))),
        (&Method::GET, "/api/v1/namespaces") => json(
            StatusCode::OK,
            format!(
                r#"{{"kind":"NamespaceList","apiVersion":"v1","metadata":{{"resourceVersion":"{LIST_RESOURCE_VERSION}"}},"items":[]}}"#
            ),
        ),
        (&Method::POST, "/api/v1/namespaces") => {
            json(StatusCode::CREATED, r#"{"kind":"Namespace","apiVersion":"v1","metadata":{}}"#.to_string())
        }
        (&Method::GET, "/api/v1/pods") if query_value(query, "watch").is_some_and(|w| w == "1" || w == "true") => {
            let from = query_value(query, "resourceVersion").and_then(|r| r.parse::<u64>().ok()).unwrap_or(0);
            let per_event = template.event_bytes();
            let body = WatchBody::new(template.clone(), from, (batch_bytes / per_event).max(1));
            Response::builder()
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Reply::Watch(Box::new(body)))
                .expect("valid response parts")
        }
        (&Method::GET, "/api/v1/pods") => json(
            StatusCode::OK,
            format!(
                r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{LIST_RESOURCE_VERSION}"}},"items":[]}}"#
            ),
        ),
        _ => json(
            StatusCode::NOT_FOUND,
            format!(
                r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"loadgen replay serves watches only, not {} {}","reason":"NotFound","code":404}}"#,
                req.method(),
                path.replace(['"', '\\'], "")
            ),
        ),
    }
}

/// The HTTP/2 connection preface's first bytes.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

/// Serves until the process is stopped (SIGTERM by whoever started it).
pub async fn serve(opts: ReplayOptions) -> Result<()> {
    if opts.batch_bytes == 0 || opts.batch_bytes > REPLAY_BYTES_MAX {
        bail!("--batch-bytes must be 1 to {REPLAY_BYTES_MAX}");
    }
    let template = EventTemplate::new(opts.object, opts.pad_bytes)?;
    let listener = TcpListener::bind(&opts.listen).await.with_context(|| format!("listening on {}", opts.listen))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        bail!("loadgen replay listens on loopback only, not {addr}");
    }
    eprintln!(
        "loadgen replay: listening on {addr}, {:?} events of {} bytes, {} per chunk",
        opts.object,
        template.event_bytes(),
        (opts.batch_bytes / (template.event_bytes())).max(1)
    );
    loop {
        let (tcp, _) = listener.accept().await?;
        tcp.set_nodelay(true)?;
        let template = template.clone();
        let batch_bytes = opts.batch_bytes;
        tokio::spawn(async move {
            let mut first = [0u8; H2_PREFACE.len()];
            let mut seen = 0;
            // The preface may arrive in pieces: peek until it is told apart from HTTP/1.1.
            while seen < first.len() {
                match tcp.peek(&mut first).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) if first[..n] != H2_PREFACE[..n] => break,
                    Ok(n) => seen = n,
                }
            }
            let h2 = seen == first.len();
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let resp = answer(&req, &template, batch_bytes);
                async move { Ok::<_, Infallible>(resp) }
            });
            let io = TokioIo::new(tcp);
            if h2 {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .max_concurrent_streams(10_000)
                    .initial_stream_window_size(1 << 20)
                    .initial_connection_window_size(16 << 20)
                    .serve_connection(io, service)
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{scan_kube_event, Lines};

    #[test]
    fn replayed_events_are_what_the_scan_and_the_full_decode_read() {
        for (object, pad) in [(ReplayObject::Pod, 1000), (ReplayObject::Pod, 0), (ReplayObject::Lease, 0)] {
            let t = EventTemplate::new(object, pad).unwrap();
            let mut body = WatchBody::new(t.clone(), LIST_RESOURCE_VERSION + 6, 3);
            let waker = std::task::Waker::noop();
            let mut cx = Context::from_waker(waker);
            let mut seen = Vec::new();
            let mut held = Vec::new();
            for round in 0..4 {
                let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut body).poll_frame(&mut cx) else { panic!("no batch") };
                let data = frame.into_data().unwrap();
                // The first batch is written (dropped) when the second is asked for: the second
                // reuses its bytes. The second is then held ("being written"), so the third and
                // fourth are new.
                if round == 1 {
                    held.push(data.clone());
                }
                Lines::default()
                    .feed(&data, |line| {
                        let scanned = scan_kube_event(line).expect("the scan reads a replayed event");
                        assert_eq!(scanned, crate::target::decode_kube_event(line).unwrap());
                        seen.push(scanned);
                    })
                    .unwrap();
            }
            let want: Vec<u64> = (7..19).map(|r| LIST_RESOURCE_VERSION + r).collect();
            assert_eq!(seen.iter().map(|s| s.revision.unwrap()).collect::<Vec<_>>(), want, "{object:?}");
            assert_eq!(body.sent.len(), 3, "the first batch was reused, the held one was not");
            // The held batch kept its bytes while later ones were built.
            let mut kept = Vec::new();
            Lines::default().feed(&held[0], |l| kept.push(scan_kube_event(l).unwrap().revision.unwrap())).unwrap();
            assert_eq!(kept, want[3..6]);
            assert!(seen.iter().all(|s| s.mine && s.stamp_ns.is_some_and(|st| st > 1_700_000_000_000_000_000)));
            let mut one = BytesMut::new();
            t.write(&mut one, LIST_RESOURCE_VERSION, 1_234_567_890_123_456_789);
            assert_eq!(one.len(), t.event_bytes());
            assert!(std::panic::catch_unwind(|| t.write(&mut BytesMut::new(), 10 * LIST_RESOURCE_VERSION, 0)).is_err());
        }
        let pod = EventTemplate::new(ReplayObject::Pod, 1000).unwrap().event_bytes();
        let lease = EventTemplate::new(ReplayObject::Lease, 0).unwrap().event_bytes();
        assert!((2700..2900).contains(&pod), "pod event {pod} bytes");
        assert!((700..1000).contains(&lease), "lease event {lease} bytes");
    }

    #[test]
    fn query_values() {
        assert_eq!(query_value("watch=1&resourceVersion=5", "resourceVersion"), Some("5"));
        assert_eq!(query_value("watch=1&resourceVersion=5", "watch"), Some("1"));
        assert_eq!(query_value("watchx=1", "watch"), None);
    }
}
