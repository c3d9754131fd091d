//! JSON request bodies: `Content-Type: application/json` required (415), the body read within
//! the 256 MiB limit with bounded memory (past 1 MiB it is spooled to an unnamed file in the
//! data folder), parsed with serde_json's nesting limit; every failure is an [`ApiError`].

use std::io::{BufReader, Seek, Write};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;

use super::ApiError;
use super::security::body_read_error;
use crate::app::App;

/// Bodies up to this size stay in memory; larger ones go to a temporary file.
const IN_MEMORY_BYTES: usize = 1024 * 1024;

/// A request body read to the end, in memory or in a temporary file.
pub struct Spooled {
    content: Content,
    /// The first byte that is not JSON whitespace, if any.
    first_byte: Option<u8>,
}

enum Content {
    Memory(Vec<u8>),
    File(std::fs::File),
}

/// Why a body could not be parsed as JSON.
#[derive(Debug)]
pub enum JsonError {
    /// Not JSON at all (syntax, truncated, nested too deep).
    Malformed(serde_json::Error),
    /// JSON of the wrong shape; the path names the field.
    Shape(serde_path_to_error::Error<serde_json::Error>),
}

/// A deserialized JSON body. Rejections are the contract's Error object, never plain text.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned + Send + 'static> FromRequest<Arc<App>> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &Arc<App>) -> Result<Self, ApiError> {
        require_json(
            request.headers(),
            "Send a JSON body with Content-Type: application/json.",
        )?;
        let body = read(app, request.into_body()).await?;
        match body.first_byte {
            Some(b'{') => {}
            None => {
                return Err(ApiError::BadRequest(
                    "The request body is empty: send a JSON object".into(),
                ));
            }
            Some(_) => {
                return Err(ApiError::BadRequest(
                    "Invalid request body: expected a JSON object".into(),
                ));
            }
        }
        match parse::<T>(body).await {
            Ok(value) => Ok(JsonBody(value)),
            Err(JsonError::Malformed(err)) => Err(ApiError::BadRequest(format!(
                "The request body is not valid JSON: {err}"
            ))),
            Err(JsonError::Shape(err)) => Err(ApiError::BadRequest(shape_message(&err))),
        }
    }
}

fn shape_message(err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = err.path().to_string();
    if path == "." {
        format!("Invalid request body: {}", err.inner())
    } else {
        format!("Invalid request body: {path}: {}", err.inner())
    }
}

/// 415 unless the body is declared as JSON (`application/json`, any parameters, or a
/// `+json` type).
pub fn require_json(headers: &HeaderMap, message: &str) -> Result<(), ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|media| media == "application/json" || media.ends_with("+json"));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(message.into()))
    }
}

/// Reads the whole body (already limited to 256 MiB by the body-limit middleware), keeping
/// at most [`IN_MEMORY_BYTES`] in memory.
pub async fn read(app: &App, body: Body) -> Result<Spooled, ApiError> {
    let mut body = body;
    let mut buffer: Vec<u8> = Vec::new();
    let mut file: Option<std::fs::File> = None;
    let mut first_byte = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|err| body_read_error(&err))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if first_byte.is_none() {
            first_byte = data
                .iter()
                .copied()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        }
        buffer.extend_from_slice(&data);
        if buffer.len() >= IN_MEMORY_BYTES {
            let spool = match file.take() {
                Some(spool) => spool,
                None => spool_file(app)?,
            };
            let chunk = std::mem::take(&mut buffer);
            file = Some(write_blocking(spool, chunk).await?);
        }
    }
    let content = match file {
        None => Content::Memory(buffer),
        Some(spool) => {
            let mut spool = write_blocking(spool, buffer).await?;
            spool
                .rewind()
                .map_err(|e| ApiError::internal("could not read the request body back", e))?;
            Content::File(spool)
        }
    };
    Ok(Spooled {
        content,
        first_byte,
    })
}

/// An unnamed temporary file in the data folder (owner-only, removed when closed).
fn spool_file(app: &App) -> Result<std::fs::File, ApiError> {
    tempfile::tempfile_in(app.data_dir.root())
        .map_err(|e| ApiError::internal("could not store the request body", e))
}

async fn write_blocking(
    mut file: std::fs::File,
    chunk: Vec<u8>,
) -> Result<std::fs::File, ApiError> {
    tokio::task::spawn_blocking(move || file.write_all(&chunk).map(|()| file))
        .await
        .map_err(|e| ApiError::internal("could not store the request body", e))?
        .map_err(|e| ApiError::internal("could not store the request body", e))
}

/// Parses a read body; a spooled one on a blocking thread.
pub async fn parse<T: DeserializeOwned + Send + 'static>(body: Spooled) -> Result<T, JsonError> {
    match body.content {
        Content::Memory(bytes) => deserialize(serde_json::Deserializer::from_slice(&bytes)),
        Content::File(file) => tokio::task::spawn_blocking(move || {
            deserialize(serde_json::Deserializer::from_reader(BufReader::new(file)))
        })
        .await
        .unwrap_or_else(|join| std::panic::resume_unwind(join.into_panic())),
    }
}

fn deserialize<'de, R, T>(mut de: serde_json::Deserializer<R>) -> Result<T, JsonError>
where
    R: serde_json::de::Read<'de>,
    T: DeserializeOwned,
{
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        if err.inner().is_data() {
            JsonError::Shape(err)
        } else {
            JsonError::Malformed(err.into_inner())
        }
    })?;
    de.end().map_err(JsonError::Malformed)?;
    Ok(value)
}
