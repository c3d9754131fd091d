//! Streamed transcription answers (server-sent events), shared by `/v1/transcribe*` and the
//! OpenAI-compatible routes, each with its own events, and the live events of dictation and
//! Recorder sessions.
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
use crate::transcribe::{
    Audio, Planned, Progress, ProgressSink, TimedText, TranscribeError, Transcript,
};

/// What a running transcription reports.
pub enum Report {
    /// Segments just decoded, post-processed, in order.
    Segments(Vec<TimedText>),
    /// The end: the transcript, or why there is none.
    Finished(Box<Result<Transcript, TranscribeError>>),
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
    let on_segments: ProgressSink = Box::new(move |progress| {
        if let Progress::Segments(timed) = progress {
            let _ = segments.send(Report::Segments(timed.to_vec()));
        }
    });
    let task = tokio::spawn(async move {
        let finished = planned.run_streaming(audio, Some(on_segments)).await;
        drop(spooled);
        let _ = reports.send(Report::Finished(Box::new(finished)));
    });
    let running = AbortOnDrop(task);
    let first = match received.recv().await {
        Some(Report::Finished(finished)) if finished.is_err() => {
            return Err(finished.err().map_or_else(
                || ApiError::internal("transcription stopped", "no error"),
                ApiError::from,
            ));
        }
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

/// The live events of a service's sessions (`GET /v1/dictation/events`,
/// `GET /v1/recorder/events`) as server-sent events from now on, each named by its `type`.
pub fn session_events(hub: &crate::session_events::EventHub) -> Response {
    let subscription = hub.subscribe();
    let stream = stream::unfold(subscription, |mut subscription| async move {
        let event = subscription.next().await?;
        let sse = Event::default()
            .event(event.kind())
            .data(event.data.to_string());
        Some((Ok::<_, Infallible>(sse), subscription))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

#[cfg(test)]
pub(super) mod testing {
    //! Streams of the transcription path's test engines, for the routes' renderers.

    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::transcribe::testing::{SecondChunk, transcriber};
    use crate::transcribe::{Caller, Transcriber};
    use crate::wire::transcription::TranscribeOptions;

    /// A transcriber over a [`SecondChunk`] engine; its call and cancel counts.
    pub fn second_chunk(
        fails: bool,
    ) -> (
        tempfile::TempDir,
        Arc<Transcriber>,
        Arc<AtomicUsize>,
        Arc<AtomicUsize>,
    ) {
        let (calls, cancelled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let engine = Arc::new(SecondChunk {
            fails,
            calls: calls.clone(),
            cancelled: cancelled.clone(),
        });
        let (dir, t) = transcriber(vec![engine], 1);
        (dir, t, calls, cancelled)
    }

    /// Plans `options` (tiny.en, no voice activity detection) on `t`.
    pub async fn planned(t: &Arc<Transcriber>, options: TranscribeOptions) -> Planned {
        let options = TranscribeOptions {
            model: Some("tiny.en".into()),
            vad: Some(false),
            ..options
        };
        t.plan(options, false, Caller::Api).await.ok().unwrap()
    }

    /// 70 s of audio: three chunks without voice activity detection.
    pub fn seventy_seconds() -> Audio {
        Audio::Samples(vec![0.01; 16_000 * 70])
    }

    /// The whole body of a stream whose engine hears the first chunk and fails on the second,
    /// rendered by `render`.
    pub async fn failing_stream_body(
        options: TranscribeOptions,
        render: impl FnMut(Report) -> Vec<Event> + Send + 'static,
    ) -> String {
        use http_body_util::BodyExt;
        let (_dir, t, _, _) = second_chunk(true);
        let planned = planned(&t, options).await;
        let response = stream(planned, seventy_seconds(), None, render)
            .await
            .unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::testing::{planned, second_chunk, seventy_seconds};
    use super::*;
    use crate::wire::transcription::TranscribeOptions;

    fn render(report: Report) -> Vec<Event> {
        match report {
            Report::Segments(segments) => segments
                .iter()
                .map(|s| Event::default().data(s.text.clone()))
                .collect(),
            Report::Finished(_) => vec![Event::default().data("done")],
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_leaving_mid_stream_stops_the_engine_and_frees_the_slot() {
        let (_dir, t, calls, cancelled) = second_chunk(false);
        // 70 s without voice activity detection: three chunks, the second never ends.
        let options = TranscribeOptions::default;
        let response = stream(
            planned(&t, options()).await,
            seventy_seconds(),
            None,
            render,
        )
        .await
        .unwrap();
        let mut body = response.into_body().into_data_stream();
        let first = body.next().await.unwrap().unwrap();
        assert_eq!(&first[..], b"data: first\n\n");
        // The client reads the first segment and leaves while the second chunk is heard.
        while calls.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(body);
        tokio::time::timeout(Duration::from_secs(10), async {
            while cancelled.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the engine was not stopped");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let again = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let planned = planned(&t, options()).await;
                if let Ok(response) = stream(planned, Audio::Samples(vec![]), None, render).await {
                    return response;
                }
            }
        })
        .await
        .expect("the slot was not given back");
        assert_eq!(again.status(), axum::http::StatusCode::OK);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_before_any_segment_is_an_ordinary_error_answer() {
        let (_dir, t, _, _) = second_chunk(false);
        let audio = Audio::File {
            path: "/nonexistent/clip.wav".into(),
            hint: None,
        };
        let planned = planned(&t, TranscribeOptions::default()).await;
        let err = stream(planned, audio, None, render).await.err().unwrap();
        assert_eq!(err.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    }

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
