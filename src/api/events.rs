//! Streamed transcription answers (server-sent events), shared by `/v1/transcribe*` and the
//! OpenAI-compatible routes, each with its own events.
//!
//! The transcription runs in its own task and reports segments as the engine decodes them. The
//! answer starts with the first report: a failure before any segment (a busy queue, audio that
//! cannot be decoded) is still an ordinary error answer with its status; one after it is an
//! event of the stream. A client that leaves drops the stream, which stops the transcription
//! (its engine at the next step) and frees its slot.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use tokio::sync::mpsc;

use super::ApiError;
use super::upload::Spooled;
use crate::transcribe::{Audio, Planned, TimedText, TranscribeError, Transcript};

/// What a running transcription reports.
pub enum Report {
    /// Segments just decoded, post-processed, in order.
    Segments(Vec<TimedText>),
    /// The end: the transcript, or why there is none.
    Finished(Result<Transcript, TranscribeError>),
}

/// How often an idle stream sends a comment, so clients and proxies keep the connection while
/// a long stretch without speech is decoded.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Whether a request asks for a streamed answer: the `stream` option, else an `Accept` header
/// naming `text/event-stream`.
pub fn wants_stream(option: Option<bool>, accept: Option<&str>) -> bool {
    option.unwrap_or_else(|| {
        accept.is_some_and(|accept| {
            accept
                .split(',')
                .any(|kind| kind.split(';').next().unwrap_or("").trim() == "text/event-stream")
        })
    })
}

/// Runs `planned` on `audio` and answers with the events `render` makes of each report.
/// `spooled` (the uploaded file, if any) is kept until the transcription ends.
pub async fn stream(
    planned: Planned,
    audio: Audio,
    spooled: Option<Spooled>,
    mut render: impl FnMut(Report) -> Vec<Event> + Send + 'static,
) -> Result<Response, ApiError> {
    let (reports, mut received) = mpsc::unbounded_channel();
    let segments = reports.clone();
    let on_segments = Box::new(move |timed: &[TimedText]| {
        let _ = segments.send(Report::Segments(timed.to_vec()));
    });
    let task = tokio::spawn(async move {
        let finished = planned.run_streaming(audio, Some(on_segments)).await;
        drop(spooled);
        let _ = reports.send(Report::Finished(finished));
    });
    let running = AbortOnDrop(task);
    let first = match received.recv().await {
        Some(Report::Finished(Err(err))) => return Err(err.into()),
        Some(first) => first,
        None => return Err(ApiError::internal("transcription stopped", "no report")),
    };
    let events = stream::unfold(
        (Some(first), received, running),
        |(next, mut received, running)| async move {
            let report = match next {
                Some(report) => report,
                None => received.recv().await?,
            };
            Some((report, (None, received, running)))
        },
    )
    .flat_map(move |report| stream::iter(render(report).into_iter().map(Ok::<_, Infallible>)));
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

/// A data-only event carrying `value` as JSON.
pub fn json_event(value: &impl serde::Serialize) -> Event {
    Event::default().data(serde_json::to_string(value).unwrap_or_else(|_| "{}".into()))
}

/// An event named `name` carrying `value` as JSON.
pub fn named_event(name: &str, value: &impl serde::Serialize) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(value).unwrap_or_else(|_| "{}".into()))
}

/// Aborts the transcription's task when the stream (or the request waiting for its first
/// report) is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_decides_else_the_accept_header() {
        assert!(wants_stream(Some(true), None));
        assert!(!wants_stream(Some(false), Some("text/event-stream")));
        assert!(wants_stream(
            None,
            Some("application/json;q=0.5, text/event-stream; q=1")
        ));
        assert!(!wants_stream(None, Some("application/json")));
        assert!(!wants_stream(None, None));
    }
}
