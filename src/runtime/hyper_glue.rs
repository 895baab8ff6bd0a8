//! The adapter that lets hyper 1.x run on glommio: I/O (hyper's `Read` /
//! `Write` over futures' `AsyncRead` / `AsyncWrite`), an executor for HTTP/2
//! stream tasks (spawned on the local executor), and a timer.
//!
//! hyper's `Sleep` must be `Send + Sync`, and glommio's timer is neither. The
//! timer here keeps only atomics in the `Sleep` (a fired flag, a cancelled
//! flag, two `AtomicWaker`s) and runs the glommio timer in a local task that
//! flips the flag: sound without any `unsafe impl Send`.
//!
//! Plain TCP connections write through an outbox (`TcpIo`): hyper's writes
//! are copied into it and a sender task per connection sends them, so what
//! many HTTP/2 streams write in one pass leaves in one `send`.
//!
//! Reads copy through one buffer per thread (safe code cannot hand hyper's
//! uninitialized buffer to a futures-io reader), not one per connection.
//!
//! Invariant: everything here runs on the executor that accepted the
//! connection; nothing crosses cores. An outbox is bounded
//! (`connection_outbox_bytes_max`): past it, hyper's writes wait.

use futures_lite::{AsyncRead, AsyncWrite};
use futures_util::task::AtomicWaker;
use hyper::rt::{Executor, ReadBufCursor, Sleep, Timer};
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Bytes read per `poll_read` when hyper's buffer is larger.
const READ_CHUNK_BYTES: usize = 16 * 1024;

thread_local! {
    /// The read buffer of every connection of this shard's thread: a read
    /// copies through it and is done with it before returning, so one per
    /// thread serves them all (an idle connection keeps none).
    static READ_SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0u8; READ_CHUNK_BYTES].into_boxed_slice());
}

/// Reads from `reader` into hyper's buffer. Safe code cannot hand hyper's
/// uninitialized buffer to a futures-io reader: the bytes go through an
/// initialized scratch buffer (the thread's) and are copied.
fn read_into<R: AsyncRead + Unpin>(
    reader: &mut R,
    cx: &mut Context<'_>,
    mut buf: ReadBufCursor<'_>,
) -> Poll<io::Result<()>> {
    let mut read = |scratch: &mut [u8]| {
        let want = buf.remaining().min(scratch.len());
        match Pin::new(&mut *reader).poll_read(cx, &mut scratch[..want]) {
            Poll::Ready(Ok(n)) => {
                buf.put_slice(&scratch[..n]);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    };
    READ_SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => read(&mut scratch),
        // Not expected (a read does not read through another connection);
        // a buffer of its own then.
        Err(_) => read(&mut vec![0u8; READ_CHUNK_BYTES]),
    })
}

/// hyper I/O over a futures-io stream (glommio TCP or a rustls stream on it).
pub struct HyperIo<T> {
    inner: T,
}

impl<T> HyperIo<T> {
    pub fn new(inner: T) -> HyperIo<T> {
        HyperIo { inner }
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for HyperIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        read_into(&mut self.get_mut().inner, cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for HyperIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

/// Capacity an idle connection's outbox keeps (a burst's larger buffer is freed).
const OUTBOX_KEEP_BYTES: usize = 64 * 1024;

/// hyper I/O over a plain glommio TCP stream that coalesces writes: what
/// hyper writes is copied into the connection's outbox (up to
/// `outbox_bytes_max`) and sent by the connection's own sender task, which
/// runs after the task that wrote. HTTP/2 writes each DATA frame of 256
/// bytes or more with its own flush (one `sendmsg` per frame); through the
/// outbox, the frames that the connection's streams produce in one pass of
/// the run queue (500 watch streams of one client, say) leave in one
/// `sendmsg`. A full outbox makes hyper wait (`Pending`), so memory stays
/// bounded; a flush returns once the bytes are in the outbox, because the
/// sender task owns sending them (and keeps running after the connection is
/// dropped until they are sent or the socket fails).
pub struct TcpIo {
    outbox: Rc<RefCell<Outbox>>,
}

struct Outbox {
    stream: glommio::net::TcpStream,
    /// Accepted bytes not sent yet; `sent` of them are sent.
    pending: Vec<u8>,
    sent: usize,
    bytes_max: usize,
    /// The write side failed: every later write reports it.
    failed: Option<io::ErrorKind>,
    /// hyper waits for room (or for the outbox to drain, on shutdown).
    writer: Option<Waker>,
    /// The sender task waits for bytes or for the socket.
    sender: Option<Waker>,
    /// The connection is gone: the sender stops once the outbox is empty.
    closed: bool,
}

impl Outbox {
    fn unsent(&self) -> usize {
        self.pending.len() - self.sent
    }

    fn accept(&mut self, bufs: &[io::IoSlice<'_>], cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if let Some(kind) = self.failed {
            return Poll::Ready(Err(kind.into()));
        }
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total == 0 {
            return Poll::Ready(Ok(0));
        }
        let room = self.bytes_max.saturating_sub(self.unsent());
        if room == 0 {
            self.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        if self.sent > 0 && self.sent == self.pending.len() {
            self.pending.clear();
            self.sent = 0;
        }
        let mut taken = 0;
        for buf in bufs {
            let n = buf.len().min(room - taken);
            self.pending.extend_from_slice(&buf[..n]);
            taken += n;
            if taken == room {
                break;
            }
        }
        if let Some(sender) = self.sender.take() {
            sender.wake();
        }
        Poll::Ready(Ok(taken))
    }
}

impl TcpIo {
    pub fn new(stream: glommio::net::TcpStream, outbox_bytes_max: usize) -> TcpIo {
        let outbox = Rc::new(RefCell::new(Outbox {
            stream,
            pending: Vec::new(),
            sent: 0,
            bytes_max: outbox_bytes_max.max(1),
            failed: None,
            writer: None,
            sender: None,
            closed: false,
        }));
        glommio::spawn_local(send_outbox(outbox.clone())).detach();
        TcpIo { outbox }
    }
}

/// The connection's sender: sends what the outbox holds, one `send` for all
/// of it when the socket takes it, waiting for the socket when it is full.
async fn send_outbox(outbox: Rc<RefCell<Outbox>>) {
    std::future::poll_fn(|cx| {
        let mut guard = outbox.borrow_mut();
        let this = &mut *guard;
        loop {
            if this.failed.is_some() || (this.closed && this.unsent() == 0) {
                if let Some(writer) = this.writer.take() {
                    writer.wake();
                }
                return Poll::Ready(());
            }
            if this.unsent() == 0 {
                this.pending.clear();
                this.sent = 0;
                // Reclaim a buffer a burst grew (the bound caps it anyway).
                if this.pending.capacity() > OUTBOX_KEEP_BYTES {
                    this.pending = Vec::new();
                }
                if let Some(writer) = this.writer.take() {
                    writer.wake();
                }
                this.sender = Some(cx.waker().clone());
                return Poll::Pending;
            }
            let (sent, pending) = (this.sent, &this.pending);
            match Pin::new(&mut this.stream).poll_write(cx, &pending[sent..]) {
                Poll::Ready(Ok(0)) => this.failed = Some(io::ErrorKind::WriteZero),
                Poll::Ready(Ok(n)) => {
                    this.sent += n;
                    // Room was made: a waiting writer may go on.
                    if let Some(writer) = this.writer.take() {
                        writer.wake();
                    }
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => this.failed = Some(e.kind()),
                // A dropped connection's last bytes get one try, not a wait
                // on a peer that may never read them.
                Poll::Pending if this.closed => return Poll::Ready(()),
                Poll::Pending => {
                    this.sender = Some(cx.waker().clone());
                    return Poll::Pending;
                }
            }
        }
    })
    .await;
}

impl Drop for TcpIo {
    fn drop(&mut self) {
        let mut outbox = self.outbox.borrow_mut();
        outbox.closed = true;
        if let Some(sender) = outbox.sender.take() {
            sender.wake();
        }
    }
}

impl hyper::rt::Read for TcpIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        read_into(&mut self.outbox.borrow_mut().stream, cx, buf)
    }
}

impl hyper::rt::Write for TcpIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.outbox.borrow_mut().accept(&[io::IoSlice::new(buf)], cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.outbox.borrow_mut().accept(bufs, cx)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// The bytes are the sender's to send: nothing to wait for.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.outbox.borrow().failed {
            Some(kind) => Poll::Ready(Err(kind.into())),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Waits until the outbox is sent, then shuts the write side down.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut outbox = self.outbox.borrow_mut();
        if let Some(kind) = outbox.failed {
            return Poll::Ready(Err(kind.into()));
        }
        if outbox.unsent() > 0 {
            outbox.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        Pin::new(&mut outbox.stream).poll_close(cx)
    }
}

/// Spawns hyper's background futures (HTTP/2 streams) on the local executor.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExecutor;

impl<F> Executor<F> for LocalExecutor
where
    F: Future + 'static,
    F::Output: 'static,
{
    /// The future is the task itself (no wrapping future): an HTTP/2
    /// stream's task lives as long as its watch.
    fn execute(&self, future: F) {
        glommio::spawn_local(future).detach();
    }
}

/// hyper's timer, backed by glommio's timer in a local task.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalTimer;

struct SleepState {
    fired: AtomicBool,
    cancelled: AtomicBool,
    /// Wakes whoever polls the `Sleep`.
    waiter: AtomicWaker,
    /// Wakes the timer task when the `Sleep` is dropped.
    timer_task: AtomicWaker,
}

pub struct LocalSleep {
    state: Arc<SleepState>,
}

impl LocalSleep {
    fn until(deadline: Instant) -> LocalSleep {
        let state = Arc::new(SleepState {
            fired: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            waiter: AtomicWaker::new(),
            timer_task: AtomicWaker::new(),
        });
        let task_state = state.clone();
        glommio::spawn_local(async move {
            let delay = deadline.saturating_duration_since(Instant::now());
            let cancelled = std::future::poll_fn(|cx| {
                task_state.timer_task.register(cx.waker());
                if task_state.cancelled.load(Ordering::Acquire) {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            });
            let timer = glommio::timer::sleep(delay);
            futures_lite::future::or(cancelled, timer).await;
            task_state.fired.store(true, Ordering::Release);
            task_state.waiter.wake();
        })
        .detach();
        LocalSleep { state }
    }
}

impl Future for LocalSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.state.waiter.register(cx.waker());
        if self.state.fired.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Sleep for LocalSleep {}

impl Drop for LocalSleep {
    fn drop(&mut self) {
        self.state.cancelled.store(true, Ordering::Release);
        self.state.timer_task.wake();
    }
}

impl Timer for LocalTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(LocalSleep::until(Instant::now() + duration))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(LocalSleep::until(deadline))
    }
}
