//! Audio uploads, shared by Verbatim's and the OpenAI-compatible transcription routes: a
//! multipart form's `file` part or a raw body is spooled to a temporary file as it arrives,
//! never held whole in memory; every other form field is text of bounded size.

use std::path::Path;

use axum::body::Body;
use axum::extract::Multipart;
use axum::extract::multipart::Field;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use super::ApiError;
use super::limits::body_read_error;
use crate::audio::decode::hint_for_mime;
use crate::transcribe::Audio;

/// The longest text field a form may carry (a prompt is a few hundred words at most).
pub const MAX_FIELD_BYTES: usize = 64 * 1024;
/// The most text all of a form's fields may carry together, however many there are (a
/// thousand repeated `language_hint` fields would otherwise all be kept).
pub const MAX_FORM_TEXT_BYTES: usize = 256 * 1024;

/// An upload spooled to a temporary file, removed when this is dropped. Only its path is
/// kept: a connection holds one descriptor for its upload while it arrives and none after
/// (see `server::descriptors`).
pub struct Spooled {
    pub file: tempfile::TempPath,
    /// The format named by the part's file name or `Content-Type`; None: sniff.
    pub hint: Option<String>,
}

impl Spooled {
    /// The audio to transcribe (the file must outlive the transcription).
    pub fn audio(&self) -> Audio {
        Audio::File {
            path: self.file.to_path_buf(),
            hint: self.hint.clone(),
        }
    }
}

/// Reads a multipart form to its end: the `file` part spooled, every other part handed to
/// `field` as `(name, text)` in order. No `file` part, or an empty one, is a 400.
pub async fn read_form(
    mut multipart: Multipart,
    mut field: impl FnMut(&str, &str) -> Result<(), ApiError>,
) -> Result<Spooled, ApiError> {
    let mut spooled = None;
    let mut text_bytes = 0;
    while let Some(part) = multipart.next_field().await.map_err(multipart_error)? {
        let name = part.name().unwrap_or_default().to_string();
        if name == "file" {
            spooled = Some(spool_part(part).await?);
        } else {
            let value = read_text(part, &name).await?;
            text_bytes += name.len() + value.len();
            if text_bytes > MAX_FORM_TEXT_BYTES {
                return Err(ApiError::BadRequest(format!(
                    "The form's text fields carry more than {} KiB together.",
                    MAX_FORM_TEXT_BYTES / 1024
                )));
            }
            field(&name, &value)?;
        }
    }
    let spooled = spooled
        .ok_or_else(|| ApiError::BadRequest("Missing 'file' part in multipart form data".into()))?;
    ensure_not_empty(tokio::fs::metadata(&*spooled.file).await)?;
    Ok(spooled)
}

async fn spool_part(mut part: Field<'_>) -> Result<Spooled, ApiError> {
    let hint = part
        .file_name()
        .and_then(|f| Path::new(f).extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .or_else(|| part.content_type().and_then(hint_from_mime));
    let (out, file) = spool_file()?;
    let mut out = tokio::fs::File::from_std(out);
    while let Some(chunk) = part.chunk().await.map_err(multipart_error)? {
        out.write_all(&chunk).await.map_err(spool_error)?;
    }
    out.flush().await.map_err(spool_error)?;
    Ok(Spooled { file, hint })
}

/// A text part, refused past [`MAX_FIELD_BYTES`] or when it is not UTF-8.
async fn read_text(mut part: Field<'_>, name: &str) -> Result<String, ApiError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = part.chunk().await.map_err(multipart_error)? {
        if bytes.len() + chunk.len() > MAX_FIELD_BYTES {
            return Err(ApiError::BadRequest(format!(
                "The form field '{}' is longer than {} KiB.",
                crate::wire::echo(name),
                MAX_FIELD_BYTES / 1024
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| {
        ApiError::BadRequest(format!(
            "The form field '{}' is not UTF-8 text.",
            crate::wire::echo(name)
        ))
    })
}

/// Spools a raw request body (the audio itself); an empty one is a 400.
pub async fn spool_body(body: Body, hint: Option<String>) -> Result<Spooled, ApiError> {
    let (out, file) = spool_file()?;
    let mut out = tokio::fs::File::from_std(out);
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| body_read_error(&e))?;
        out.write_all(&chunk).await.map_err(spool_error)?;
    }
    out.flush().await.map_err(spool_error)?;
    ensure_not_empty(out.metadata().await)?;
    Ok(Spooled { file, hint })
}

/// The audio format named by a raw body's `Content-Type`; None means sniff.
pub fn raw_format_hint(content_type: &str) -> Result<Option<String>, ApiError> {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    if mime.is_empty() || mime == "application/octet-stream" {
        return Ok(None);
    }
    hint_from_mime(mime).map(Some).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "Unsupported audio format '{}'",
            crate::wire::echo(mime)
        ))
    })
}

fn hint_from_mime(mime: &str) -> Option<String> {
    hint_for_mime(mime).map(str::to_string)
}

/// 400 for an empty file (its metadata, read from the opened handle).
pub fn ensure_not_empty(meta: std::io::Result<std::fs::Metadata>) -> Result<(), ApiError> {
    match meta {
        Ok(meta) if meta.len() > 0 => Ok(()),
        Ok(_) => Err(ApiError::BadRequest("No audio data provided".into())),
        Err(e) => Err(ApiError::internal("could not read the audio file", e)),
    }
}

/// A new temporary file: its one open descriptor, to write, and its path, which removes the
/// file when dropped.
fn spool_file() -> Result<(std::fs::File, tempfile::TempPath), ApiError> {
    tempfile::Builder::new()
        .prefix("verbatim-upload-")
        .tempfile()
        .map(tempfile::NamedTempFile::into_parts)
        .map_err(spool_error)
}

fn spool_error(err: std::io::Error) -> ApiError {
    ApiError::internal("could not spool the upload", err)
}

/// A body over the limit or too slow is said so (413, 408); anything else is a bad form.
pub fn multipart_error(err: axum::extract::multipart::MultipartError) -> ApiError {
    match body_read_error(&err) {
        ApiError::BadRequest(_) => {
            ApiError::BadRequest(format!("Invalid multipart form data: {}", err.body_text()))
        }
        limit => limit,
    }
}
