//! The adapter that lets hyper 1.x run on glommio: I/O (hyper's `Read` /
//! `Write` over futures' `AsyncRead` / `AsyncWrite`), an executor for HTTP/2
//! stream tasks (spawned on the local executor), and a timer.
//!
//! hyper's `Sleep` must be `Send + Sync`, and glommio's timer is neither. The
//! timer here keeps only atomics in the `Sleep` (a fired flag, a cancelled
//! flag, two `AtomicWaker`s) and runs the glommio timer in a local task that
//! flips the flag: sound without any `unsafe impl Send`.
//!
//! Invariant: everything here runs on the executor that accepted the
//! connection; nothing crosses cores.

use futures_lite::{AsyncRead, AsyncWrite};
use futures_util::task::AtomicWaker;
use hyper::rt::{Executor, ReadBufCursor, Sleep, Timer};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Bytes read per `poll_read` when hyper's buffer is larger.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// hyper I/O over a futures-io stream (glommio TCP or a rustls stream on it).
pub struct HyperIo<T> {
    inner: T,
    scratch: Box<[u8]>,
}

impl<T> HyperIo<T> {
    pub fn new(inner: T) -> HyperIo<T> {
        HyperIo { inner, scratch: vec![0u8; READ_CHUNK_BYTES].into_boxed_slice() }
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for HyperIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Safe code cannot hand hyper's uninitialized buffer to a futures-io
        // reader; read into an initialized scratch buffer and copy.
        let want = buf.remaining().min(this.scratch.len());
        match Pin::new(&mut this.inner).poll_read(cx, &mut this.scratch[..want]) {
            Poll::Ready(Ok(n)) => {
                buf.put_slice(&this.scratch[..n]);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
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

/// Largest number of slices one `sendmsg` takes (Linux's `UIO_MAXIOV`).
const WRITEV_SLICES_MAX: usize = 1024;

/// hyper I/O over a plain glommio TCP stream, with vectored writes: a list's
/// frames (a head, then each item's cached bytes) leave in one `sendmsg`
/// without being copied into a buffer first. glommio's stream has no
/// vectored write of its own, so this tries a non-blocking `sendmsg` on the
/// socket directly and, when the socket is full, falls back to glommio's
/// write of the first slice, which waits for the socket; until that write
/// completes, every write goes through glommio, so the two paths never
/// interleave.
pub struct TcpIo {
    inner: HyperIo<glommio::net::TcpStream>,
    /// A write through glommio is in flight: finish it before any `sendmsg`.
    fallback_pending: bool,
}

impl TcpIo {
    pub fn new(stream: glommio::net::TcpStream) -> TcpIo {
        TcpIo { inner: HyperIo::new(stream), fallback_pending: false }
    }
}

impl hyper::rt::Read for TcpIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for TcpIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.fallback_pending = result.is_pending();
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(first) = bufs.iter().find(|b| !b.is_empty()) else { return Poll::Ready(Ok(0)) };
        if !this.fallback_pending {
            use std::os::fd::AsRawFd;
            let fd = this.inner.inner.as_raw_fd();
            // SAFETY: an all-zero msghdr is valid (no name, no control data).
            let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
            // `IoSlice` is ABI-compatible with `iovec` on Unix (std documents it).
            message.msg_iov = bufs.as_ptr().cast::<libc::iovec>().cast_mut();
            message.msg_iovlen = bufs.len().min(WRITEV_SLICES_MAX);
            // SAFETY: `message` points at `bufs`, which outlives the call.
            // glommio's sockets are blocking; MSG_DONTWAIT makes this one
            // call non-blocking, as glommio's own sends are.
            let written = unsafe { libc::sendmsg(fd, &message, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
            if written >= 0 {
                return Poll::Ready(Ok(written as usize));
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::WouldBlock && error.kind() != io::ErrorKind::Interrupted {
                return Poll::Ready(Err(error));
            }
        }
        // The socket is full: glommio's write waits for it.
        let result = Pin::new(&mut this.inner).poll_write(cx, first);
        this.fallback_pending = result.is_pending();
        result
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Spawns hyper's background futures (HTTP/2 streams) on the local executor.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExecutor;

impl<F> Executor<F> for LocalExecutor
where
    F: Future + 'static,
{
    fn execute(&self, future: F) {
        glommio::spawn_local(async move {
            future.await;
        })
        .detach();
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
