//! `POST /v1/transcribe` (multipart form or raw audio body) and `POST /v1/transcribe/local-file`.
//! Uploads are spooled to a temporary file as they arrive, never held whole in memory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, Multipart, Query, Request, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

use super::ApiError;
use super::json::JsonBody;
use super::limits::body_read_error;
use crate::app::App;
use crate::audio::decode::open_regular;
use crate::transcribe::{Audio, Job, Origin, TranscribeError, Transcript};
use crate::wire::parse_bool_word;
use crate::wire::transcription::{
    FieldError, LocalFileRequest, ResponseFormat, TranscribeOptions, Transcription,
    TranscriptionSegment, TranscriptionWord,
};

#[derive(Debug, Deserialize)]
pub struct TranscribeQuery {
    await_download: Option<String>,
}

impl TranscribeQuery {
    /// Absent means no; any value but the contract's boolean words is a 400.
    fn await_download(&self) -> Result<bool, ApiError> {
        match self.await_download.as_deref() {
            None => Ok(false),
            Some(value) => parse_bool_word(value).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "Invalid 'await_download' query parameter '{value}': use 1 or 0 (true or false)."
                ))
            }),
        }
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

/// File extensions the local-file route accepts.
const LOCAL_EXTENSIONS: &[&str] = &[
    "wav", "mp3", "m4a", "flac", "aac", "ogg", "wma", "mp4", "mov", "mkv", "avi",
];

pub async fn upload(
    State(app): State<Arc<App>>,
    Query(query): Query<TranscribeQuery>,
    request: Request,
) -> Result<Transcribed, ApiError> {
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("multipart/form-data") {
        let multipart = Multipart::from_request(request, &()).await.map_err(|e| {
            ApiError::BadRequest(format!("Invalid multipart form data: {}", e.body_text()))
        })?;
        multipart_upload(&app, multipart, query.await_download()?).await
    } else {
        raw_upload(&app, &content_type, request, query.await_download()?).await
    }
}

async fn multipart_upload(
    app: &App,
    mut multipart: Multipart,
    await_download: bool,
) -> Result<Transcribed, ApiError> {
    let mut options = TranscribeOptions::default();
    let mut spooled: Option<(tempfile::NamedTempFile, Option<String>)> = None;
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            let hint = field
                .file_name()
                .and_then(|f| Path::new(f).extension())
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .or_else(|| field.content_type().and_then(hint_from_mime));
            let file = spool_file()?;
            let mut out = tokio::fs::File::from_std(file.reopen().map_err(spool_error)?);
            while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                out.write_all(&chunk).await.map_err(spool_error)?;
            }
            out.flush().await.map_err(spool_error)?;
            spooled = Some((file, hint));
        } else {
            let value = field.text().await.map_err(multipart_error)?;
            options.set_form_field(&name, &value)?;
        }
    }
    let (file, hint) = spooled
        .ok_or_else(|| ApiError::BadRequest("Missing 'file' part in multipart form data".into()))?;
    ensure_not_empty(tokio::fs::metadata(file.path()).await)?;
    let job = Job {
        audio: Audio::File {
            path: file.path().to_path_buf(),
            hint,
        },
        options: options.clone(),
        await_download,
        origin: Origin::Api,
    };
    Ok(Transcribed(app.transcriber.run(job).await?, options))
}

async fn raw_upload(
    app: &App,
    content_type: &str,
    request: Request,
    await_download: bool,
) -> Result<Transcribed, ApiError> {
    let headers = request.headers();
    let options = TranscribeOptions::from_headers(|name| {
        headers.get(name).map(|v| v.to_str().map_err(drop))
    })?;
    let hint = raw_format_hint(content_type)?;
    // Everything that needs no audio is checked before the body is read.
    let planned = app
        .transcriber
        .plan(options.clone(), await_download, Origin::Api)
        .await?;
    let file = spool_file()?;
    let mut out = tokio::fs::File::from_std(file.reopen().map_err(spool_error)?);
    let mut stream = request.into_body().into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| body_read_error(&e))?;
        out.write_all(&chunk).await.map_err(spool_error)?;
    }
    out.flush().await.map_err(spool_error)?;
    ensure_not_empty(tokio::fs::metadata(file.path()).await)?;
    let audio = Audio::File {
        path: file.path().to_path_buf(),
        hint,
    };
    Ok(Transcribed(planned.run(audio).await?, options))
}

pub async fn local_file(
    State(app): State<Arc<App>>,
    Query(query): Query<TranscribeQuery>,
    JsonBody(body): JsonBody<LocalFileRequest>,
) -> Result<Transcribed, ApiError> {
    let await_download = query.await_download()?;
    let path = PathBuf::from(&body.path);
    let options = body.options()?;
    options.validate()?;
    let (file, extension) = tokio::task::spawn_blocking(move || open_local_file(&path))
        .await
        .map_err(|e| ApiError::internal("opening the audio file stopped", e))??;
    let job = Job {
        audio: Audio::Opened {
            file,
            hint: Some(extension),
        },
        options: options.clone(),
        await_download,
        origin: Origin::Api,
    };
    Ok(Transcribed(app.transcriber.run(job).await?, options))
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
        .filter(|e| LOCAL_EXTENSIONS.contains(&e.as_str()))
        .ok_or_else(|| ApiError::BadRequest("Unsupported audio format".into()))?;
    let file = opened.map_err(|_| {
        ApiError::BadRequest("The file is not readable by the Verbatim server process".into())
    })?;
    ensure_not_empty(file.metadata())?;
    Ok((file, extension))
}

/// The Transcription object of a transcript (`segments` with `verbose_json` only, `words`
/// when asked for too).
fn transcription(transcript: Transcript, options: &TranscribeOptions) -> Transcription {
    let verbose = options.response_format == ResponseFormat::VerboseJson;
    let words = options.wants_words().then(|| {
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
    });
    Transcription {
        text: transcript.text,
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

/// The audio format named by a raw body's `Content-Type`; None means sniff.
fn raw_format_hint(content_type: &str) -> Result<Option<String>, ApiError> {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    if mime.is_empty() || mime == "application/octet-stream" {
        return Ok(None);
    }
    hint_from_mime(mime)
        .map(Some)
        .ok_or_else(|| ApiError::BadRequest(format!("Unsupported audio format '{mime}'")))
}

fn hint_from_mime(mime: &str) -> Option<String> {
    let subtype = mime.trim().to_ascii_lowercase();
    let subtype = subtype
        .strip_prefix("audio/")
        .or_else(|| subtype.strip_prefix("video/"))?;
    let hint = match subtype {
        "wav" | "x-wav" | "wave" | "vnd.wave" => "wav",
        "mpeg" | "mp3" | "mpeg3" | "x-mpeg-3" => "mp3",
        "mp4" | "m4a" | "x-m4a" | "quicktime" => "m4a",
        "flac" | "x-flac" => "flac",
        "ogg" | "vorbis" => "ogg",
        "aac" | "x-aac" => "aac",
        _ => return None,
    };
    Some(hint.to_string())
}

/// 400 for an empty file (its metadata, read from the opened handle).
fn ensure_not_empty(meta: std::io::Result<std::fs::Metadata>) -> Result<(), ApiError> {
    match meta {
        Ok(meta) if meta.len() > 0 => Ok(()),
        Ok(_) => Err(ApiError::BadRequest("No audio data provided".into())),
        Err(e) => Err(ApiError::internal("could not read the audio file", e)),
    }
}

fn spool_file() -> Result<tempfile::NamedTempFile, ApiError> {
    tempfile::Builder::new()
        .prefix("verbatim-upload-")
        .tempfile()
        .map_err(spool_error)
}

fn spool_error(err: std::io::Error) -> ApiError {
    ApiError::internal("could not spool the upload", err)
}

/// A body over the limit or too slow is said so (413, 408); anything else is a bad form.
fn multipart_error(err: axum::extract::multipart::MultipartError) -> ApiError {
    match body_read_error(&err) {
        ApiError::BadRequest(_) => {
            ApiError::BadRequest(format!("Invalid multipart form data: {}", err.body_text()))
        }
        limit => limit,
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
            | E::Audio(_) => ApiError::BadRequest(err.to_string()),
            E::NoTranslationProvider => ApiError::NotImplemented(err.to_string()),
            E::NoEngineSelected | E::DownloadFailed { .. } => {
                ApiError::ServiceUnavailable(err.to_string())
            }
            E::NotConfigured(_) => ApiError::Conflict(err.to_string()),
            E::Busy { retry_after_secs } => ApiError::EngineBusy { retry_after_secs },
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
        let err = t.plan(options, false, Origin::Api).await.err().unwrap();
        let err = ApiError::from(err);
        assert_eq!(
            err.message(),
            "Ambiguous model id 'base' -- matches engines: whisper, other. Specify 'engine' too."
        );
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("transcribe_ambiguous_model", err.body());
        });
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
