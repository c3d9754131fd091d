//! The dictation routes: `POST /v1/dictation/start` (optional `{workflow_id}`),
//! `POST /v1/dictation/stop`, `GET /v1/dictation/status`,
//! `GET /v1/dictation/transcription?id=` and the live events, `GET /v1/dictation/events`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use uuid::Uuid;

use super::json::FullBody;
use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::dictation::machine::Refused;
use crate::dictation::service::{DictationError, requested_workflow};
use crate::wire;
use crate::wire::sessions::{DictationSession, DictationStarted, DictationStatus, SessionState};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/dictation/start", post(start))
        .route("/v1/dictation/stop", post(stop))
        .route("/v1/dictation/status", get(status))
        .route("/v1/dictation/transcription", get(transcription))
        .route("/v1/dictation/events", get(events))
}

/// How often an idle event stream sends a comment, so clients and proxies keep it open.
/// The dictation sessions' live events as server-sent events, from now on.
async fn events(State(app): State<Arc<App>>) -> impl axum::response::IntoResponse {
    super::events::session_events(app.dictation.events())
}

impl From<DictationError> for ApiError {
    fn from(err: DictationError) -> Self {
        match err {
            DictationError::WorkflowNotFound => ApiError::NotFound(err.to_string()),
            DictationError::WorkflowDisabled | DictationError::NoModelReady(_) => {
                ApiError::Conflict(err.to_string())
            }
            DictationError::Refused(refused @ (Refused::NotIdle | Refused::NotRecording)) => {
                ApiError::Conflict(refused.to_string())
            }
            DictationError::Refused(refused @ Refused::Unexpected { .. }) => {
                ApiError::internal("dictation state", refused)
            }
            DictationError::Capture(err) => err.into(),
            DictationError::Store(err) => err.into(),
            DictationError::Internal(err) => err.into(),
        }
    }
}

fn invalid_workflow_id() -> ApiError {
    ApiError::BadRequest("Missing or invalid 'workflow_id'".into())
}

/// The `workflow_id` of a start body: none for an empty body or one without the field; 400 for
/// a body that is not a JSON object, or a `workflow_id` that is not a UUID string.
pub fn workflow_id(body: &[u8]) -> Result<Option<Uuid>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(body).map_err(|_| invalid_workflow_id())?;
    let Value::Object(fields) = value else {
        return Err(invalid_workflow_id());
    };
    match fields.get("workflow_id") {
        None => Ok(None),
        Some(Value::String(text)) => wire::parse_uuid(text)
            .map(Some)
            .ok_or_else(invalid_workflow_id),
        Some(_) => Err(invalid_workflow_id()),
    }
}

async fn start(
    State(app): State<Arc<App>>,
    FullBody(body): FullBody,
) -> Result<Json<DictationStarted>, ApiError> {
    let workflow = match workflow_id(&body)? {
        Some(id) => Some(blocking(&app, move |app| Ok(requested_workflow(&app.store, id)?)).await?),
        None => None,
    };
    let started = app.dictation.start(workflow).await?;
    let (workflow_id, workflow_name) = started.workflow.unzip();
    Ok(Json(DictationStarted {
        id: started.id,
        status: "recording".into(),
        workflow_id,
        workflow_name,
    }))
}

async fn stop(State(app): State<Arc<App>>) -> Result<Json<SessionState>, ApiError> {
    let id = app.dictation.stop().await?;
    Ok(Json(SessionState {
        id,
        status: "stopped".into(),
    }))
}

async fn status(State(app): State<Arc<App>>) -> Result<Json<DictationStatus>, ApiError> {
    let live = app.dictation.status().await;
    let model = match live.active_model {
        Some(model) => Some(model.to_string()),
        None => {
            blocking(&app, |app| {
                Ok(app
                    .transcriber
                    .selected()?
                    .map(|r| r.offer.spec.id.to_string()))
            })
            .await?
        }
    };
    let (active_workflow_id, active_workflow) = live.active_workflow.unzip();
    Ok(Json(DictationStatus {
        state: live.state.into(),
        is_recording: live.is_recording,
        active_model: model,
        active_workflow,
        active_workflow_id,
    }))
}

async fn transcription(
    State(app): State<Arc<App>>,
    uri: Uri,
) -> Result<Json<DictationSession>, ApiError> {
    let id = Query::of(&uri).id()?;
    let (session, transcription) = blocking(&app, move |app| {
        let session = app.store.dictation_session(&id)?;
        // A session that failed after its text was saved (it could not be inserted) still
        // shows the text.
        let entry = match &session {
            Some(s) if matches!(s.status.as_str(), "completed" | "failed") => {
                app.store.history_entry(&id)?
            }
            _ => None,
        };
        Ok((session, entry))
    })
    .await?;
    let session =
        session.ok_or_else(|| ApiError::NotFound("Dictation session not found".into()))?;
    Ok(Json(DictationSession {
        id: session.id,
        // `inserting` is still processing from a client's point of view.
        status: match session.status.as_str() {
            "recording" => "recording",
            "processing" | "inserting" => "processing",
            "completed" => "completed",
            _ => "failed",
        }
        .into(),
        transcription,
        error: session.error,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_body_names_a_workflow_or_none() {
        let id = Uuid::new_v4();
        assert_eq!(workflow_id(b"").unwrap(), None);
        assert_eq!(workflow_id(b" {} ").unwrap(), None);
        let lower = format!(r#"{{"workflow_id":"{}"}}"#, id.hyphenated());
        assert_eq!(workflow_id(lower.as_bytes()).unwrap(), Some(id));
        for bad in [
            &br#"{"workflow_id":"nope"}"#[..],
            br#"{"workflow_id":7}"#,
            br#"{"workflow_id":null}"#,
            br#"[1]"#,
            b"not json",
        ] {
            assert_eq!(workflow_id(bad).unwrap_err(), invalid_workflow_id());
        }
    }
}
