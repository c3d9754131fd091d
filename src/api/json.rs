//! Request bodies: JSON bodies (`Content-Type: application/json` required, 415) read whole within
//! the route's limit (1 MiB, see [`super::limits`]) and parsed with serde_json's nesting limit;
//! other small bodies read whole; large ones spooled to an unnamed file in the data folder.
//! Every failure is an [`ApiError`].

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use futures_util::StreamExt;
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncSeekExt, AsyncWriteExt};

use super::ApiError;
use super::limits::body_read_error;
use crate::app::App;

/// A deserialized JSON body. Rejections are the contract's Error object, never plain text.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        require_json(
            request.headers(),
            "Send a JSON body with Content-Type: application/json.",
        )?;
        let body = read_all(request.into_body()).await?;
        let first_byte = body
            .iter()
            .copied()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        match first_byte {
            Some(b'{') => parse(&body).map(JsonBody),
            None => Err(ApiError::BadRequest(
                "The request body is empty: send a JSON object".into(),
            )),
            Some(_) => Err(ApiError::BadRequest(
                "Invalid request body: expected a JSON object".into(),
            )),
        }
    }
}

/// A body read whole (within the route's limit), whatever its type.
pub struct FullBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for FullBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        read_all(request.into_body()).await.map(FullBody)
    }
}

/// Parses a JSON object; a value of the wrong shape is named by its path.
fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let malformed =
        |err| ApiError::BadRequest(format!("The request body is not valid JSON: {err}"));
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        if !err.inner().is_data() {
            return malformed(err.into_inner());
        }
        let path = err.path().to_string();
        ApiError::BadRequest(if path == "." {
            format!("Invalid request body: {}", err.inner())
        } else {
            format!("Invalid request body: {path}: {}", err.inner())
        })
    })?;
    de.end().map_err(malformed)?;
    Ok(value)
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

/// The whole body in memory; only for routes whose limit is small.
pub async fn read_all(body: Body) -> Result<Bytes, ApiError> {
    body.collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|err| body_read_error(&err))
}

/// Writes the body to an unnamed temporary file in the data folder (owner-only, removed when
/// closed) as it arrives, and returns the file rewound to its start.
pub async fn spool(app: &App, body: Body) -> Result<std::fs::File, ApiError> {
    let failed = |e: std::io::Error| ApiError::internal("could not store the request body", e);
    let folder = app.data_dir.root().to_path_buf();
    let file = tokio::task::spawn_blocking(move || tempfile::tempfile_in(folder))
        .await
        .map_err(|e| ApiError::internal("could not store the request body", e))?
        .map_err(failed)?;
    let mut file = tokio::fs::File::from_std(file);
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|err| body_read_error(&err))?;
        file.write_all(&chunk).await.map_err(failed)?;
    }
    file.flush().await.map_err(failed)?;
    file.rewind().await.map_err(failed)?;
    Ok(file.into_std().await)
}
