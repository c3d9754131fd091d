//! The OpenAI-compatible routes, `POST /v1/audio/transcriptions` and `/v1/audio/translations`,
//! on the one transcription path with the same auth, defences, limits and queue as the rest of
//! the API. `model` picks an installed model by id; `whisper-1` or any other name uses the
//! selected one. Errors are the Error object with OpenAI's `type` beside `code` and `message`
//! (added by [`typed_errors`] to every error answer under `/v1/audio/`).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::events::{self, Report, json_event};
use super::transcribe::{header_text, words};
use super::upload::read_form;
use super::{ApiError, blocking};
use crate::app::App;
use crate::engine::Task;
use crate::engine::models::languages::WHISPER_LANGUAGES;
use crate::transcribe::{Caller, TimedText, Transcript};
use crate::wire::openai::{
    OpenAiFormat, OpenAiSegment, OpenAiStreamEvent, OpenAiTranscription,
    OpenAiVerboseTranscription, Usage,
};
use crate::wire::subtitles;
use crate::wire::transcription::{ResponseFormat, TranscribeOptions, TranscriptionSegment};
use crate::wire::{ErrorBody, parse_bool_word};

/// The routes, for the protected part of the API.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/audio/transcriptions", post(transcriptions))
        .route("/v1/audio/translations", post(translations))
}

async fn transcriptions(
    State(app): State<Arc<App>>,
    request: Request,
) -> Result<Response, ApiError> {
    transcribe(app, request, Task::Transcribe).await
}

async fn translations(State(app): State<Arc<App>>, request: Request) -> Result<Response, ApiError> {
    transcribe(app, request, Task::Translate).await
}

/// What an OpenAI request asks for, besides the audio.
#[derive(Default)]
struct Asked {
    options: TranscribeOptions,
    format: OpenAiFormat,
    stream: bool,
    model: Option<String>,
}

impl Asked {
    /// One form field, named as OpenAI names it (`timestamp_granularities[]` with or without
    /// its brackets). Fields the task does not take, and unknown ones, are ignored.
    fn set(&mut self, name: &str, value: &str, task: Task) -> Result<(), ApiError> {
        let transcribing = task == Task::Transcribe;
        match name.trim_end_matches("[]") {
            "model" => self.model = Some(value.trim().to_string()).filter(|m| !m.is_empty()),
            "prompt" => self.options.set_form_field("prompt", value)?,
            "response_format" => self.format = OpenAiFormat::parse(value)?,
            "temperature" => check_temperature(value)?,
            "stream" => {
                self.stream = parse_bool_word(value).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "Invalid 'stream' value '{}': use true or false.",
                        crate::wire::echo(value.trim())
                    ))
                })?;
            }
            "language" if transcribing => self.options.set_form_field("language", value)?,
            "timestamp_granularities" if transcribing => self
                .options
                .set_form_field("timestamp_granularities", value)?,
            _ => {}
        }
        Ok(())
    }
}

/// Whisper decodes greedily at temperature 0 here, so the value is checked and not used.
fn check_temperature(value: &str) -> Result<(), ApiError> {
    match value.trim().parse::<f64>() {
        Ok(t) if (0.0..=1.0).contains(&t) => Ok(()),
        _ => Err(ApiError::BadRequest(format!(
            "Invalid 'temperature' value '{}': use a number from 0 to 1.",
            crate::wire::echo(value.trim())
        ))),
    }
}

async fn transcribe(app: Arc<App>, request: Request, task: Task) -> Result<Response, ApiError> {
    let content_type = header_text(request.headers(), header::CONTENT_TYPE).unwrap_or_default();
    if !content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Err(ApiError::UnsupportedMediaType(
            "Send the audio as multipart/form-data, in a part named 'file'.".into(),
        ));
    }
    let multipart = Multipart::from_request(request, &()).await.map_err(|e| {
        ApiError::BadRequest(format!("Invalid multipart form data: {}", e.body_text()))
    })?;
    let mut asked = Asked::default();
    let spooled = read_form(multipart, |name, value| asked.set(name, value, task)).await?;
    let Asked {
        mut options,
        format,
        stream,
        model,
    } = asked;
    options.model = installed(&app, model).await?;
    options.task = Some(task);
    if format == OpenAiFormat::VerboseJson {
        options.response_format = ResponseFormat::VerboseJson;
    }
    let planned = app
        .transcriber
        .plan(options.clone(), false, Caller::Api)
        .await?;
    let audio = spooled.audio();
    if stream {
        let mut said_anything = false;
        return events::stream(planned, audio, Some(spooled), move |report| {
            stream_events(report, &mut said_anything)
        })
        .await;
    }
    let transcript = planned.run(audio).await?;
    drop(spooled);
    Ok(render(transcript, format, &options))
}

/// The model id when an engine has it installed; any other name means the selected model.
async fn installed(app: &Arc<App>, model: Option<String>) -> Result<Option<String>, ApiError> {
    let Some(model) = model else {
        return Ok(None);
    };
    blocking(app, move |app| {
        Ok(app.transcriber.installed(&model).then_some(model))
    })
    .await
}

/// The events of a streamed answer: a delta per segment (the deltas join into the text as
/// decoded), then the whole text.
fn stream_events(report: Report, said_anything: &mut bool) -> Vec<axum::response::sse::Event> {
    match report {
        Report::Segments(segments) => segments
            .into_iter()
            .filter(|s| !s.text.trim().is_empty())
            .map(|s| {
                let delta = if *said_anything {
                    format!(" {}", s.text.trim())
                } else {
                    s.text.trim().to_string()
                };
                *said_anything = true;
                json_event(&OpenAiStreamEvent::Delta { delta })
            })
            .collect(),
        Report::Finished(finished) => match *finished {
            Ok(transcript) => vec![json_event(&OpenAiStreamEvent::Done {
                text: transcript.text,
                usage: Usage::of_audio(transcript.duration),
            })],
            Err(err) => {
                let err = ApiError::from(err);
                vec![json_event(&typed(err.body(), err.status()))]
            }
        },
    }
}

/// The answer in the asked format.
fn render(transcript: Transcript, format: OpenAiFormat, options: &TranscribeOptions) -> Response {
    let plain = |text: String, kind: &'static str| {
        (
            [(header::CONTENT_TYPE, HeaderValue::from_static(kind))],
            text,
        )
            .into_response()
    };
    let usage = Usage::of_audio(transcript.duration);
    match format {
        OpenAiFormat::Json => Json(OpenAiTranscription {
            text: transcript.text,
            usage,
        })
        .into_response(),
        OpenAiFormat::Text => plain(transcript.text + "\n", "text/plain; charset=utf-8"),
        OpenAiFormat::Srt => plain(
            subtitles::srt(&cues(&transcript.segments)),
            "text/plain; charset=utf-8",
        ),
        OpenAiFormat::Vtt => plain(
            subtitles::vtt(&cues(&transcript.segments)),
            "text/vtt; charset=utf-8",
        ),
        OpenAiFormat::VerboseJson => Json(verbose(transcript, options, usage)).into_response(),
    }
}

fn cues(segments: &[TimedText]) -> Vec<TranscriptionSegment> {
    segments
        .iter()
        .map(|s| TranscriptionSegment {
            start: s.start,
            end: s.end,
            text: s.text.clone(),
        })
        .collect()
}

fn verbose(
    transcript: Transcript,
    options: &TranscribeOptions,
    usage: Usage,
) -> OpenAiVerboseTranscription {
    let translating = options.task == Some(Task::Translate);
    let words = words(&transcript, options);
    let segments = transcript
        .segments
        .into_iter()
        .enumerate()
        .map(|(id, s)| {
            let detail = s.detail.unwrap_or_default();
            OpenAiSegment {
                id,
                seek: (s.start * 100.0).round() as u64,
                start: s.start,
                end: s.end,
                text: s.text,
                tokens: detail.tokens,
                temperature: detail.temperature,
                avg_logprob: detail.avg_logprob,
                compression_ratio: detail.compression_ratio,
                no_speech_prob: detail.no_speech_prob,
            }
        })
        .collect();
    let language = if translating {
        "english".to_string()
    } else {
        language_name(transcript.language.as_deref())
    };
    OpenAiVerboseTranscription {
        task: if translating {
            "translate"
        } else {
            "transcribe"
        }
        .into(),
        language,
        duration: transcript.duration,
        text: transcript.text,
        segments,
        words,
        usage,
    }
}

/// A language code's English name in lower case, as OpenAI writes it (`english`); the code
/// itself when whisper does not know it, `unknown` without one.
fn language_name(code: Option<&str>) -> String {
    let Some(code) = code else {
        return "unknown".into();
    };
    WHISPER_LANGUAGES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map_or_else(|| code.to_string(), |(_, name)| name.to_ascii_lowercase())
}

/// OpenAI's error type for a status.
fn error_type(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED => "authentication_error",
        s if s.is_server_error() => "server_error",
        _ => "invalid_request_error",
    }
}

fn typed(mut body: ErrorBody, status: StatusCode) -> ErrorBody {
    body.error.kind = Some(error_type(status).into());
    body
}

/// The largest error body [`typed_errors`] rewrites (error bodies are a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Adds OpenAI's `type` to every error answer under `/v1/audio/`, whichever layer made it
/// (token, Host and Origin checks, body limits, the routes themselves).
pub async fn typed_errors(request: Request, next: Next) -> Response {
    let openai = request.uri().path().starts_with("/v1/audio/");
    let response = next.run(request).await;
    let status = response.status();
    if !openai || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return ApiError::internal("error answer", "unreadable error body").into_response();
    };
    let Ok(error) = serde_json::from_slice::<ErrorBody>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let typed = serde_json::to_vec(&typed(error, status)).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(typed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_after_the_first_delta_is_an_error_with_its_type() {
        let mut said_anything = false;
        let render = move |report| stream_events(report, &mut said_anything);
        let body = super::super::events::testing::failing_stream_body(
            TranscribeOptions::default(),
            render,
        )
        .await;
        assert_eq!(
            body,
            "data: {\"type\":\"transcript.text.delta\",\"delta\":\"first\"}\n\n\
             data: {\"error\":{\"code\":\"internal_error\",\
             \"message\":\"Internal error: transcription failed\",\"type\":\"server_error\"}}\n\n"
        );
    }

    #[test]
    fn error_types_follow_openai() {
        assert_eq!(error_type(StatusCode::UNAUTHORIZED), "authentication_error");
        assert_eq!(error_type(StatusCode::SERVICE_UNAVAILABLE), "server_error");
        assert_eq!(
            error_type(StatusCode::INTERNAL_SERVER_ERROR),
            "server_error"
        );
        for status in [400, 403, 404, 408, 413, 415] {
            let status = StatusCode::from_u16(status).unwrap();
            assert_eq!(error_type(status), "invalid_request_error");
        }
    }

    #[test]
    fn languages_are_named_as_openai_names_them() {
        assert_eq!(language_name(Some("en")), "english");
        assert_eq!(language_name(Some("DE")), "german");
        assert_eq!(language_name(Some("xx")), "xx");
        assert_eq!(language_name(None), "unknown");
    }

    #[test]
    fn openai_field_names_are_read_and_others_ignored() {
        let mut asked = Asked::default();
        for (name, value) in [
            ("model", "whisper-1"),
            ("timestamp_granularities[]", "word"),
            ("timestamp_granularities[]", "segment"),
            ("response_format", "verbose_json"),
            ("temperature", "0.2"),
            ("stream", "true"),
            ("chunking_strategy", "auto"),
            ("language", "en"),
        ] {
            asked.set(name, value, Task::Transcribe).unwrap();
        }
        assert_eq!(asked.model.as_deref(), Some("whisper-1"));
        assert_eq!(asked.options.timestamp_granularities.len(), 2);
        assert!(asked.stream);
        assert_eq!(asked.options.language.as_deref(), Some("en"));
        // A translation takes no language or granularities.
        let mut translation = Asked::default();
        translation.set("language", "de", Task::Translate).unwrap();
        assert_eq!(translation.options.language, None);
        let err = asked
            .set("temperature", "1.5", Task::Transcribe)
            .unwrap_err();
        assert_eq!(
            err.message(),
            "Invalid 'temperature' value '1.5': use a number from 0 to 1."
        );
    }
}
