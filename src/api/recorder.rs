//! The Recorder routes: `POST /v1/recorder/start?mic=&system_audio=`, `POST /v1/recorder/stop`,
//! `GET /v1/recorder/status`, `GET /v1/recorder/session?id=` and the live events,
//! `GET /v1/recorder/events`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::recorder::machine::Refused;
use crate::recorder::service::RecorderError;
use crate::wire::sessions::{RecorderSession, RecorderStatus, SessionState};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/recorder/start", post(start))
        .route("/v1/recorder/stop", post(stop))
        .route("/v1/recorder/status", get(status))
        .route("/v1/recorder/session", get(session))
        .route("/v1/recorder/events", get(events))
}

/// The Recorder sessions' live events as server-sent events, from now on.
async fn events(State(app): State<Arc<App>>) -> axum::response::Response {
    super::events::session_events(app.recorder.events())
}

impl From<RecorderError> for ApiError {
    fn from(err: RecorderError) -> Self {
        match err {
            RecorderError::Refused(refused @ Refused::NoSource) => {
                ApiError::BadRequest(refused.to_string())
            }
            RecorderError::Refused(
                refused @ (Refused::AlreadyRecording | Refused::Finalizing | Refused::NotRecording),
            ) => ApiError::Conflict(refused.to_string()),
            RecorderError::Refused(refused @ Refused::Unexpected { .. }) => {
                ApiError::internal("recorder state", refused)
            }
            RecorderError::Capture(err) => err.into(),
            RecorderError::Store(err) => err.into(),
            RecorderError::Internal(err) => err.into(),
        }
    }
}

/// A source flag: only `true`, `false`, `1` or `0` (any case); absent inherits the preference.
fn source_flag(query: &Query, name: &str) -> Result<Option<bool>, ApiError> {
    let Some(raw) = query.get(name) else {
        return Ok(None);
    };
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(Some(true)),
        "false" | "0" => Ok(Some(false)),
        _ => Err(ApiError::BadRequest(format!(
            "Invalid '{name}' query parameter"
        ))),
    }
}

async fn start(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<SessionState>, ApiError> {
    let query = Query::of(&uri);
    let mic = source_flag(&query, "mic")?;
    let system_audio = source_flag(&query, "system_audio")?;
    let id = app.recorder.start(mic, system_audio).await?;
    Ok(Json(SessionState {
        id,
        status: "recording".into(),
    }))
}

async fn stop(State(app): State<Arc<App>>) -> Result<Json<SessionState>, ApiError> {
    let id = app.recorder.stop().await?;
    Ok(Json(SessionState {
        id,
        status: "finalizing".into(),
    }))
}

async fn status(State(app): State<Arc<App>>) -> Json<RecorderStatus> {
    Json(RecorderStatus {
        recording: app.recorder.is_recording().await,
    })
}

async fn session(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<RecorderSession>, ApiError> {
    let id = Query::of(&uri).id()?;
    let session = blocking(&app, move |app| Ok(app.store.recorder_session(&id)?))
        .await?
        .ok_or_else(|| ApiError::NotFound("Recorder session not found".into()))?;
    Ok(Json(RecorderSession {
        id: session.id,
        status: session.status,
        text: session.text.filter(|t| !t.is_empty()),
        output_file: session
            .output_file
            .map(|p| p.to_string_lossy().into_owned()),
        error: session.error,
    }))
}
