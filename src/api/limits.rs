//! Request body limits: how large a body each route takes, and how fast a body must arrive.
//!
//! Size: 413 from `Content-Length` before anything is read, or as soon as a chunked body
//! crosses the route's limit. Speed: a body that falls behind the minimum rate, or pauses too
//! long, fails with 408; the connection is closed after the answer, so a client trickling a
//! body cannot hold one of the server's connection slots for as long as it likes.
//!
//! Memory: a JSON body over [`SMALL_JSON_BYTES`] (or of unknown length) waits for room in an
//! 4 MiB budget before its handler runs and holds it until the answer, so large JSON bodies
//! and what they parse into stay bounded however many clients send them; smaller ones are
//! bounded by the connection cap.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

use super::ApiError;
use crate::wire::{MAX_BODY_BYTES, MAX_IMPORT_BYTES, MAX_JSON_BYTES};

/// The routes that take bodies larger than [`MAX_JSON_BYTES`], the limit of every other route.
const LARGE_BODIES: &[(&str, u64)] = &[
    // Audio uploads.
    ("/v1/transcribe", MAX_BODY_BYTES),
    ("/v1/audio/transcriptions", MAX_BODY_BYTES),
    ("/v1/audio/translations", MAX_BODY_BYTES),
    // Settings backups.
    ("/v1/settings/import", MAX_IMPORT_BYTES),
];

/// The largest body the route at `path` takes, in bytes.
pub fn body_limit(path: &str) -> u64 {
    LARGE_BODIES
        .iter()
        .find(|(route, _)| *route == path)
        .map_or(MAX_JSON_BYTES, |&(_, limit)| limit)
}

/// Any body may take this long to arrive.
pub const BODY_GRACE: Duration = Duration::from_secs(10);
/// Past [`BODY_GRACE`], the bytes received must keep up with this rate (bytes per second):
/// `n` bytes buy `n / MIN_BODY_RATE` seconds beyond the grace period.
pub const MIN_BODY_RATE: u64 = 16 * 1024;
/// The longest pause allowed between two pieces of a body.
pub const MAX_BODY_PAUSE: Duration = Duration::from_secs(30);

/// The 408 message: what the client must do instead.
pub fn too_slow_message() -> String {
    format!(
        "The request body arrived too slowly: send it at {} KiB/s or faster, without pausing for {} seconds.",
        MIN_BODY_RATE / 1024,
        MAX_BODY_PAUSE.as_secs()
    )
}

fn too_large(limit: u64) -> ApiError {
    ApiError::PayloadTooLarge {
        limit_mib: limit.div_ceil(1024 * 1024),
    }
}

/// JSON bodies up to this size run without waiting for the budget.
pub const SMALL_JSON_BYTES: u64 = 64 * 1024;
/// Larger JSON bodies in flight at once, in units of [`SMALL_JSON_BYTES`]: 4 MiB, four
/// bodies at the 1 MiB limit (each costs up to about 20 MiB while it is parsed and handled).
const LARGE_JSON_BUDGET: usize = 64;
static LARGE_JSON: Semaphore = Semaphore::const_new(LARGE_JSON_BUDGET);
// A body at the limit can always get its units: it never waits forever.
const _: () = assert!(LARGE_JSON_BUDGET as u64 * SMALL_JSON_BYTES >= MAX_JSON_BYTES);

/// The budget units a request to a route limited to `limit` takes: none for a route with larger
/// bodies (spooled to disk), no body or a small one; else one per 64 KiB it declares, or the
/// whole limit's worth when its length is unknown.
fn large_json_units(headers: &HeaderMap, limit: u64) -> u32 {
    if limit != MAX_JSON_BYTES {
        return 0;
    }
    let declared = match content_length(headers) {
        Some(len) => len,
        None if headers.contains_key(header::TRANSFER_ENCODING) => limit,
        None => 0,
    };
    if declared <= SMALL_JSON_BYTES {
        0
    } else {
        declared.min(limit).div_ceil(SMALL_JSON_BYTES) as u32
    }
}

/// Route middleware: 413 when `Content-Length` is over the route's limit; otherwise the body is
/// wrapped so that reading it fails past the limit or when it arrives too slowly, and a large
/// JSON body first waits for room in the budget.
pub async fn limit_body(request: Request, next: Next) -> Response {
    let limit = body_limit(request.uri().path());
    if content_length(request.headers()).is_some_and(|len| len > limit) {
        return too_large(limit).into_response();
    }
    let _room = match large_json_units(request.headers(), limit) {
        0 => None,
        units => Some(
            LARGE_JSON
                .acquire_many(units)
                .await
                .expect("the budget is never closed"),
        ),
    };
    let (parts, body) = request.into_parts();
    let guarded = Body::new(GuardedBody::new(body, limit));
    next.run(Request::from_parts(parts, guarded)).await
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Maps a body read failure to the API error: over the limit is 413, too slow 408, anything
/// else (the client went away mid-body, broken chunking) 400.
pub fn body_read_error(err: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        match e.downcast_ref::<BodyError>() {
            Some(BodyError::TooLarge { limit }) => return too_large(*limit),
            Some(BodyError::TooSlow) => return ApiError::BodyTooSlow,
            _ => {}
        }
        source = e.source();
    }
    ApiError::BadRequest(format!("Could not read the request body: {err}"))
}

/// Why a guarded body stopped.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the request body is over the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("the request body arrived too slowly")]
    TooSlow,
    #[error(transparent)]
    Read(axum::Error),
}

/// A request body that fails once it crosses `limit` bytes or its deadline: [`BODY_GRACE`]
/// plus what the bytes received so far buy at [`MIN_BODY_RATE`], and at most
/// [`MAX_BODY_PAUSE`] after the last bytes. The clock starts when the handler first reads:
/// work it does before that (checks, a queue) does not count against the client.
struct GuardedBody {
    inner: Body,
    limit: u64,
    received: u64,
    /// Set at the first read.
    clock: Option<Clock>,
}

struct Clock {
    started: Instant,
    last_data: Instant,
    deadline: Pin<Box<Sleep>>,
}

impl GuardedBody {
    fn new(inner: Body, limit: u64) -> GuardedBody {
        GuardedBody {
            inner,
            limit,
            received: 0,
            clock: None,
        }
    }

    /// The clock, started on the first call.
    fn clock(&mut self) -> &mut Clock {
        self.clock.get_or_insert_with(|| {
            let now = Instant::now();
            Clock {
                started: now,
                last_data: now,
                deadline: Box::pin(tokio::time::sleep_until(now + BODY_GRACE)),
            }
        })
    }

    /// Bytes arrived: the deadline moves on.
    fn arrived(&mut self, bytes: usize) {
        self.received += bytes as u64;
        let bought = Duration::from_secs_f64(self.received as f64 / MIN_BODY_RATE as f64);
        let clock = self.clock();
        clock.last_data = Instant::now();
        let deadline = (clock.started + BODY_GRACE + bought).min(clock.last_data + MAX_BODY_PAUSE);
        clock.deadline.as_mut().reset(deadline);
    }
}

impl http_body::Body for GuardedBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        this.clock();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if this.received + data.len() as u64 > this.limit {
                        return Poll::Ready(Some(Err(BodyError::TooLarge { limit: this.limit })));
                    }
                    this.arrived(data.len());
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(err))) => Poll::Ready(Some(Err(BodyError::Read(err)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.clock().deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::TooSlow))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn only_large_json_bodies_take_from_the_budget() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(
                    header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    value.parse().unwrap(),
                );
            }
            map
        };
        let json = MAX_JSON_BYTES;
        assert_eq!(large_json_units(&headers(&[]), json), 0);
        assert_eq!(
            large_json_units(&headers(&[("content-length", "65536")]), json),
            0
        );
        assert_eq!(
            large_json_units(&headers(&[("content-length", "65537")]), json),
            2
        );
        assert_eq!(
            large_json_units(&headers(&[("content-length", "1048576")]), json),
            16
        );
        let chunked = headers(&[("transfer-encoding", "chunked")]);
        assert_eq!(large_json_units(&chunked, json), 16);
        // Uploads and imports are spooled to disk, not held.
        assert_eq!(large_json_units(&chunked, MAX_BODY_BYTES), 0);
        assert_eq!(large_json_units(&chunked, MAX_IMPORT_BYTES), 0);
    }

    #[test]
    fn uploads_and_imports_are_the_only_large_bodies() {
        assert_eq!(body_limit("/v1/transcribe"), 256 << 20);
        assert_eq!(body_limit("/v1/audio/transcriptions"), 256 << 20);
        assert_eq!(body_limit("/v1/settings/import"), 64 << 20);
        for path in ["/v1/transcribe/local-file", "/v1/dictionary/terms", "/v1/x"] {
            assert_eq!(body_limit(path), 1 << 20, "{path}");
        }
        assert_eq!(
            too_large(body_limit("/v1/settings/import")).message(),
            "Payload too large. Maximum request body size is 64 MiB."
        );
    }

    /// A body fed by hand through a channel, guarded.
    fn channel_body(limit: u64) -> (tokio::sync::mpsc::Sender<Bytes>, Body) {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv()
                .await
                .map(|b| (Ok::<_, std::io::Error>(Frame::data(b)), rx))
        });
        let inner = Body::new(http_body_util::StreamBody::new(stream));
        (tx, Body::new(GuardedBody::new(inner, limit)))
    }

    fn error_of(result: Result<http_body_util::Collected<Bytes>, axum::Error>) -> ApiError {
        body_read_error(&result.expect_err("the body fails"))
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_fails_after_the_grace_period() {
        let (tx, body) = channel_body(1 << 20);
        let feeder = tokio::spawn(async move {
            while tx.send(Bytes::from_static(b"x")).await.is_ok() {
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        });
        let started = Instant::now();
        assert_eq!(error_of(body.collect().await), ApiError::BodyTooSlow);
        // 6 bytes buy well under a millisecond past the grace period (the timer counts in ms).
        let took = started.elapsed();
        assert!(
            took >= BODY_GRACE && took < BODY_GRACE + Duration::from_millis(10),
            "{took:?}"
        );
        feeder.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_at_the_minimum_rate_arrives_and_a_long_pause_fails() {
        let (tx, body) = channel_body(1 << 20);
        let feeder = tokio::spawn(async move {
            // 40 s at exactly the minimum rate, in quarter-second pieces.
            let piece = Bytes::from(vec![b'x'; MIN_BODY_RATE as usize / 4]);
            for _ in 0..160 {
                tokio::time::sleep(Duration::from_millis(250)).await;
                tx.send(piece.clone()).await.unwrap();
            }
        });
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(collected.len() as u64, 40 * MIN_BODY_RATE);
        feeder.await.unwrap();

        // Plenty bought by a fast first megabyte, but a pause still ends at MAX_BODY_PAUSE.
        let (tx, body) = channel_body(2 << 20);
        tx.send(Bytes::from(vec![b'x'; 1 << 20])).await.unwrap();
        let started = Instant::now();
        assert_eq!(error_of(body.collect().await), ApiError::BodyTooSlow);
        let took = started.elapsed();
        assert!(
            took >= MAX_BODY_PAUSE && took < MAX_BODY_PAUSE + Duration::from_millis(10),
            "{took:?}"
        );
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_starts_when_the_handler_first_reads() {
        let (tx, body) = channel_body(1 << 20);
        // The handler works for a minute before it reads; the client then takes 5 s.
        tokio::time::sleep(Duration::from_secs(60)).await;
        let reader = tokio::spawn(body.collect());
        tokio::time::sleep(Duration::from_secs(5)).await;
        tx.send(Bytes::from_static(b"{}")).await.unwrap();
        drop(tx);
        assert_eq!(reader.await.unwrap().unwrap().to_bytes(), "{}");
    }

    #[tokio::test]
    async fn crossing_the_limit_is_413_with_the_limit_in_mib() {
        let (tx, body) = channel_body(1 << 20);
        tx.send(Bytes::from(vec![b'x'; 1 << 20])).await.unwrap();
        tx.send(Bytes::from_static(b"x")).await.unwrap();
        assert_eq!(
            error_of(body.collect().await),
            ApiError::PayloadTooLarge { limit_mib: 1 }
        );
    }
}
