//! A connection's socket whose writes fail once the client has stopped reading for
//! [`WRITE_STALL_TIMEOUT`]: a response nobody reads ends its connection instead of holding it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How long a write may wait for the client to make room.
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// `inner` with a deadline on every write that cannot proceed.
pub struct StallGuard<T> {
    inner: T,
    limit: Duration,
    /// Running while a write waits; dropped as soon as one proceeds.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> StallGuard<T> {
    pub fn new(inner: T, limit: Duration) -> StallGuard<T> {
        StallGuard {
            inner,
            limit,
            stalled: None,
        }
    }

    /// Passes on a write's outcome; a write that waits starts (or goes on with) the deadline.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        outcome: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if outcome.is_ready() {
            self.stalled = None;
            return outcome;
        }
        let limit = self.limit;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        ready!(stalled.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client stopped reading the response",
        )))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallGuard<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallGuard<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let outcome = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, outcome)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let outcome = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_write_the_reader_never_makes_room_for_fails_after_the_timeout() {
        let (server, mut client) = tokio::io::duplex(1024);
        let mut guarded = StallGuard::new(server, WRITE_STALL_TIMEOUT);
        let started = tokio::time::Instant::now();
        let err = guarded.write_all(&[7u8; 4096]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), WRITE_STALL_TIMEOUT);

        // A reader that keeps reading, however slowly, is never cut off.
        let (server, mut client2) = tokio::io::duplex(1024);
        let mut guarded = StallGuard::new(server, WRITE_STALL_TIMEOUT);
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let mut total = 0;
            while total < 8192 {
                tokio::time::sleep(Duration::from_secs(20)).await;
                total += client2.read(&mut buf).await.unwrap();
            }
        });
        guarded.write_all(&[7u8; 8192]).await.unwrap();
        reader.await.unwrap();
        let mut buf = [0u8; 1024];
        assert_eq!(client.read(&mut buf).await.unwrap(), 1024);
    }
}
