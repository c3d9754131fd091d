//! `POST /v1/transcribe` (multipart form or raw audio body) and `POST /v1/transcribe/local-file`:
//! the Transcription object, or server-sent events (`segment`s as they are decoded, then `done`
//! or `error`) when the request asks for a stream.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri, header};
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};

use super::ApiError;
use super::events::{self, Report, named_event, wants_stream};
use super::json::JsonBody;
use super::query::Query;
use super::upload::{Spooled, ensure_not_empty, raw_format_hint, read_form, spool_body};
use crate::app::App;
use crate::audio::decode::{FILE_EXTENSIONS, open_regular};
use crate::transcribe::{Audio, Caller, Planned, TranscribeError, Transcript};
use crate::wire::parse_bool_word;
use crate::wire::transcription::{
    FieldError, LocalFileRequest, ResponseFormat, TranscribeOptions, Transcription,
    TranscriptionSegment, TranscriptionWord,
};

/// The `await_download` query parameter: absent means no; any value but the contract's
/// boolean words is a 400. Other query keys are ignored; a repeated key takes its last value.
fn await_download(uri: &Uri) -> Result<bool, ApiError> {
    match Query::of(uri).get("await_download") {
        None => Ok(false),
        Some(value) => parse_bool_word(value).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "Invalid 'await_download' query parameter '{}': use 1 or 0 (true or false).",
                crate::wire::echo(value)
            ))
        }),
    }
}

/// A transcription answer: the Transcription object, with a `Server-Timing` header saying
/// how long decoding, queueing, the engine and post-processing took.
pub struct Transcribed(Transcript, TranscribeOptions);

impl IntoResponse for Transcribed {
    fn into_response(self) -> Response {
        static SERVER_TIMING: HeaderName = HeaderName::from_static("server-timing");
        let timing = HeaderValue::from_str(&self.0.stages.server_timing());
        let mut response = Json(transcription(self.0, &self.1)).into_response();
        if let Ok(timing) = timing {
            response.headers_mut().insert(&SERVER_TIMING, timing);
        }
        response
    }
}

/// A `prompt_action` named in the query (any route), where the request's options name none.
fn action_from_query(options: &mut TranscribeOptions, uri: &Uri) {
    if options.prompt_action.is_none() {
        options.prompt_action = Query::of(uri)
            .get("prompt_action")
            .filter(|action| !action.trim().is_empty())
            .map(str::to_string);
    }
}

pub async fn upload(State(app): State<Arc<App>>, request: Request) -> Result<Response, ApiError> {
    let content_type = header_text(request.headers(), header::CONTENT_TYPE)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let accept = header_text(request.headers(), header::ACCEPT);
    let await_download = await_download(request.uri())?;
    let uri = request.uri().clone();
    if content_type.starts_with("multipart/form-data") {
        let multipart = Multipart::from_request(request, &()).await.map_err(|e| {
            ApiError::BadRequest(format!("Invalid multipart form data: {}", e.body_text()))
        })?;
        let mut options = TranscribeOptions::default();
        let spooled = read_form(multipart, |name, value| {
            Ok(options.set_form_field(name, value)?)
        })
        .await?;
        action_from_query(&mut options, &uri);
        let planned = app
            .transcriber
            .plan(options.clone(), await_download, Caller::Api)
            .await?;
        answer(planned, spooled.audio(), Some(spooled), options, accept).await
    } else {
        let headers = request.headers();
        let mut options = TranscribeOptions::from_headers(|name| {
            headers.get(name).map(|v| v.to_str().map_err(drop))
        })?;
        action_from_query(&mut options, &uri);
        let hint = raw_format_hint(&content_type)?;
        // Everything that needs no audio is checked before the body is read.
        let planned = app
            .transcriber
            .plan(options.clone(), await_download, Caller::Api)
            .await?;
        let spooled = spool_body(request.into_body(), hint).await?;
        answer(planned, spooled.audio(), Some(spooled), options, accept).await
    }
}

/// A header's value, when it is text.
pub(super) fn header_text(headers: &HeaderMap, name: HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Transcribes and answers with the Transcription object, or with events when the request
/// asks for a stream.
async fn answer(
    planned: Planned,
    audio: Audio,
    spooled: Option<Spooled>,
    options: TranscribeOptions,
    accept: Option<String>,
) -> Result<Response, ApiError> {
    if !wants_stream(options.stream, accept.as_deref()) {
        let transcript = planned.run(audio).await?;
        drop(spooled);
        return Ok(Transcribed(transcript, options).into_response());
    }
    events::stream(planned, audio, spooled, move |report| {
        stream_events(report, &options)
    })
    .await
}

/// The events of a streamed answer: a `segment` per segment, then `done` with the
/// Transcription object, or `error` with the Error object.
fn stream_events(report: Report, options: &TranscribeOptions) -> Vec<Event> {
    match report {
        Report::Segments(segments) => segments
            .into_iter()
            .map(|s| {
                let segment = TranscriptionSegment {
                    start: s.start,
                    end: s.end,
                    text: s.text,
                };
                named_event("segment", &segment)
            })
            .collect(),
        Report::Finished(finished) => match *finished {
            Ok(transcript) => vec![named_event("done", &transcription(transcript, options))],
            Err(err) => vec![named_event("error", &ApiError::from(err).body())],
        },
    }
}

pub async fn local_file(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
    JsonBody(body): JsonBody<LocalFileRequest>,
) -> Result<Response, ApiError> {
    let await_download = await_download(&uri)?;
    let path = PathBuf::from(&body.path);
    let mut options = body.options()?;
    action_from_query(&mut options, &uri);
    options.validate()?;
    let (file, extension) = tokio::task::spawn_blocking(move || open_local_file(&path))
        .await
        .map_err(|e| ApiError::internal("opening the audio file stopped", e))??;
    let planned = app
        .transcriber
        .plan(options.clone(), await_download, Caller::Api)
        .await?;
    let audio = Audio::Opened {
        file,
        hint: Some(extension),
    };
    let accept = header_text(&headers, header::ACCEPT);
    answer(planned, audio, None, options, accept).await
}

/// Opens the file a local-file request names, with the contract's checks in its order (absolute,
/// found, extension, readable, not empty). Blocking: the one `open` never waits (a FIFO swapped
/// in for the file is refused), and the checks look at the opened file, not the path again.
fn open_local_file(path: &Path) -> Result<(std::fs::File, String), ApiError> {
    if !path.is_absolute() {
        return Err(ApiError::BadRequest(
            "'path' must be an absolute path to a file on this machine".into(),
        ));
    }
    let opened = open_regular(path);
    let found = match &opened {
        Ok(_) => true,
        // Not readable by this process, but there: the extension decides the message first.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            std::fs::metadata(path).is_ok_and(|m| m.is_file())
        }
        Err(_) => false,
    };
    if !found {
        return Err(ApiError::BadRequest("File not found".into()));
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .filter(|e| FILE_EXTENSIONS.contains(&e.as_str()))
        .ok_or_else(|| ApiError::BadRequest("Unsupported audio format".into()))?;
    let file = opened.map_err(|_| {
        ApiError::BadRequest("The file is not readable by the Verbatim server process".into())
    })?;
    ensure_not_empty(file.metadata())?;
    Ok((file, extension))
}

/// The transcript's timed words, when the options ask for them.
pub(super) fn words(
    transcript: &Transcript,
    options: &TranscribeOptions,
) -> Option<Vec<TranscriptionWord>> {
    options.wants_words().then(|| {
        transcript
            .segments
            .iter()
            .flat_map(|s| &s.words)
            .map(|w| TranscriptionWord {
                word: w.word.clone(),
                start: w.start,
                end: w.end,
            })
            .collect()
    })
}

/// The Transcription object of a transcript (`segments` with `verbose_json` only, `words`
/// when asked for too).
pub(super) fn transcription(transcript: Transcript, options: &TranscribeOptions) -> Transcription {
    let verbose = options.response_format == ResponseFormat::VerboseJson;
    let words = words(&transcript, options);
    let (transcribed_text, action_processing_time, prompt_action_error) = match transcript.action {
        Some(ran) => (Some(ran.transcribed_text), Some(ran.seconds), ran.error),
        None => (None, None, None),
    };
    Transcription {
        text: transcript.text,
        transcribed_text,
        prompt_action_error,
        action_processing_time,
        language: transcript.language,
        duration: transcript.duration,
        processing_time: transcript.processing_time,
        engine: transcript.engine,
        model: Some(transcript.model.into()),
        segments: verbose.then(|| {
            transcript
                .segments
                .into_iter()
                .map(|s| TranscriptionSegment {
                    start: s.start,
                    end: s.end,
                    text: s.text,
                })
                .collect()
        }),
        words,
    }
}

impl From<FieldError> for ApiError {
    fn from(err: FieldError) -> Self {
        ApiError::BadRequest(err.0)
    }
}

impl From<TranscribeError> for ApiError {
    fn from(err: TranscribeError) -> Self {
        use TranscribeError as E;
        match err {
            E::Option(_)
            | E::UnknownEngine(_)
            | E::NoModelOffered(_)
            | E::UnknownModel(_)
            | E::AmbiguousModel { .. }
            | E::ModelNotOffered { .. }
            | E::UnknownLanguage(_)
            | E::CannotTranslate(_)
            | E::NotSupported { .. }
            | E::Audio(_) => ApiError::BadRequest(err.to_string()),
            E::NoTranslationProvider | E::Unsupported(_) => {
                ApiError::NotImplemented(err.to_string())
            }
            E::NoEngineSelected | E::DownloadFailed { .. } => {
                ApiError::ServiceUnavailable(err.to_string())
            }
            E::NotConfigured(_) | E::NotDownloaded { .. } | E::Unavailable { .. } => {
                ApiError::Conflict(err.to_string())
            }
            E::Busy { retry_after_secs } => ApiError::EngineBusy { retry_after_secs },
            E::Action(refused) => refused.into(),
            E::Store(store) => store.into(),
            E::Internal { short, detail } => ApiError::internal(short, detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcribe::testing::{gate, transcriber};

    #[tokio::test]
    async fn a_model_offered_by_two_engines_is_ambiguous_without_an_engine() {
        let (a, _) = gate("whisper", vec!["tiny", "base"]);
        let (b, _) = gate("other", vec!["base"]);
        let (_dir, t) = transcriber(vec![a, b], 1);
        let options = TranscribeOptions {
            model: Some("base".into()),
            ..TranscribeOptions::default()
        };
        let err = t.plan(options, false, Caller::Api).await.err().unwrap();
        let err = ApiError::from(err);
        assert_eq!(
            err.message(),
            "Ambiguous model id 'base' -- matches engines: whisper, other. Specify 'engine' too."
        );
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("transcribe_ambiguous_model", err.body());
        });
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_after_the_first_segment_is_an_error_event() {
        let options = TranscribeOptions::default();
        let render = move |report| stream_events(report, &TranscribeOptions::default());
        let body = super::super::events::testing::failing_stream_body(options, render).await;
        assert_eq!(
            body,
            "event: segment\ndata: {\"start\":0.0,\"end\":1.0,\"text\":\"first\"}\n\n\
             event: error\ndata: {\"error\":{\"code\":\"internal_error\",\
             \"message\":\"Internal error: transcription failed\"}}\n\n"
        );
    }

    #[test]
    fn transcription_errors_keep_the_contract_statuses() {
        use TranscribeError as E;
        let cases = [
            (E::Busy { retry_after_secs: 5 }, ApiError::EngineBusy { retry_after_secs: 5 }),
            (
                E::NoEngineSelected,
                ApiError::ServiceUnavailable("No engine selected. Select an engine first.".into()),
            ),
            (
                E::NotConfigured("whisper".into()),
                ApiError::Conflict("Engine 'whisper' is not configured (missing API key or downloaded weights). Pass ?await_download=1 to wait for the download.".into()),
            ),
            (
                E::NoTranslationProvider,
                ApiError::NotImplemented("Target-language translation needs a translation provider; none is configured on this host".into()),
            ),
            (
                E::UnknownLanguage("xx".into()),
                ApiError::BadRequest("Unknown language code 'xx'".into()),
            ),
            (
                E::internal("transcription failed", "the model file is damaged"),
                ApiError::Internal { cause: "transcription failed".into() },
            ),
        ];
        for (err, expected) in cases {
            assert_eq!(ApiError::from(err), expected);
        }
    }
}
