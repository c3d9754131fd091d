//! Error objects for request heads the HTTP layer refuses.
//!
//! hyper answers a request head it cannot parse on its own, before any route sees it: a bare
//! `400 Bad Request`, `431 Request Header Fields Too Large` or `414 URI Too Long` with an empty
//! body, then it closes the connection. [`HeadErrors`] wraps a connection's socket and replaces
//! that bare answer with the contract's Error object (and the headers every answer carries).
//!
//! The bare answer is recognised by its shape, which no answer of the API has: one of those
//! three status lines, `content-length: 0`, no `content-type`, written alone. Every answer the
//! routes give with those statuses is a JSON Error object.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::api::{ApiError, HeadProblem};

/// A socket whose bare parse-error answers from hyper are rewritten as Error objects.
pub struct HeadErrors<T> {
    inner: T,
    /// The rewritten answer still to be written, and how much of it has been.
    pending: Vec<u8>,
    written: usize,
}

impl<T> HeadErrors<T> {
    pub fn new(inner: T) -> HeadErrors<T> {
        HeadErrors {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

/// The problem a bare answer from hyper reports, if `bytes` is one.
fn bare_answer(bytes: &[u8]) -> Option<HeadProblem> {
    const ANSWERS: [(&[u8], HeadProblem); 3] = [
        (b"HTTP/1.1 400 Bad Request\r\n", HeadProblem::Unreadable),
        (
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            HeadProblem::HeadersTooLarge,
        ),
        (b"HTTP/1.1 414 URI Too Long\r\n", HeadProblem::UriTooLong),
    ];
    let (_, problem) = ANSWERS
        .iter()
        .find(|(status_line, _)| bytes.starts_with(status_line))?;
    let head = std::str::from_utf8(bytes).ok()?.to_ascii_lowercase();
    let head_only = head.find("\r\n\r\n") == Some(head.len() - 4);
    let empty = head.contains("\r\ncontent-length: 0\r\n");
    let untyped = !head.contains("\r\ncontent-type:");
    (head_only && empty && untyped).then_some(*problem)
}

/// The full answer for `problem`: the Error object with the headers every answer carries.
fn error_answer(problem: HeadProblem) -> Vec<u8> {
    let error = ApiError::MalformedHead(problem);
    let body = serde_json::to_vec(&error.body()).expect("an error body serializes");
    let status = error.status();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

impl<T: AsyncWrite + Unpin> HeadErrors<T> {
    /// Writes what is left of a rewritten answer; ready once it is all written.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let rest = &self.pending[self.written..];
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, rest))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        Poll::Ready(Ok(()))
    }

    fn write_one(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(problem) = bare_answer(buf) {
            self.pending = error_answer(problem);
            self.written = 0;
            // The bytes are taken; the rewrite goes out now or on the next flush.
            if let Poll::Ready(Err(err)) = self.drain(cx) {
                return Poll::Ready(Err(err));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for HeadErrors<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for HeadErrors<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write_one(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        if first.starts_with(b"HTTP/1.1 4") {
            // A head alone is small: look at it whole.
            let whole: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
            return self.write_one(cx, &whole);
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_bare_answers_are_recognised() {
        let bare = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n";
        assert_eq!(bare_answer(bare), Some(HeadProblem::Unreadable));
        let too_large =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(bare_answer(too_large), Some(HeadProblem::HeadersTooLarge));
        // An answer of the API: typed, with a body.
        let api = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(bare_answer(api), None);
        // A head and its body in one write.
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\nmore";
        assert_eq!(bare_answer(with_body), None);
        assert_eq!(
            bare_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
    }

    #[test]
    fn the_rewritten_answer_is_the_error_object() {
        let answer = String::from_utf8(error_answer(HeadProblem::UriTooLong)).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["code"], "uri_too_long");
    }
}
