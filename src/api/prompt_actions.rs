//! `GET`, `PUT` and `DELETE /v1/prompt-actions`, and `POST /v1/prompt-actions/run`: an action
//! run on a text through the chat provider (`crate::chat`). A run that cannot start (unknown
//! action 404, disabled, ambiguous or no provider set 409) is refused before the call; a call
//! that fails is 503 with the sentence that says what to check.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::json::JsonBody;
use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::cancel::Cancel;
use crate::chat::{self, Refused};
use crate::store::PromptAction;
use crate::store::prompt_actions::Put;
use crate::wire::prompt_actions::{Action, ActionList, ActionRun, Deleted, PutAction, RunAction};

/// The longest text an action runs on (the body limit is 1 MiB): a long dictation's text.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// The longest name and prompt of an action.
const MAX_NAME_CHARS: usize = 200;
const MAX_PROMPT_CHARS: usize = 20_000;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/prompt-actions", get(list).put(put).delete(delete))
        .route("/v1/prompt-actions/run", post(run))
}

/// The action as the routes show it.
pub fn action(a: PromptAction) -> Action {
    Action {
        id: a.id,
        name: a.name,
        prompt: a.prompt,
        enabled: a.enabled,
    }
}

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> ApiError {
        match refused {
            Refused::Unknown(_) => ApiError::NotFound(refused.to_string()),
            Refused::Store(cause) => ApiError::Internal { cause },
            _ => ApiError::Conflict(refused.to_string()),
        }
    }
}

async fn list(State(app): State<Arc<App>>) -> Result<Json<ActionList>, ApiError> {
    let actions = blocking(&app, |app| Ok(app.store.prompt_actions()?)).await?;
    Ok(Json(ActionList {
        count: actions.len(),
        actions: actions.into_iter().map(action).collect(),
    }))
}

async fn put(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<PutAction>,
) -> Result<Json<Action>, ApiError> {
    let id = match &body.id {
        Some(id) => Some(crate::wire::parse_uuid(id).ok_or_else(|| {
            ApiError::BadRequest("'id' must be a prompt action's id (a UUID)".into())
        })?),
        None => None,
    };
    let name = body.name.trim().to_string();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::BadRequest(format!(
            "'name' must hold 1 to {MAX_NAME_CHARS} characters"
        )));
    }
    if body.prompt.trim().is_empty() || body.prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(ApiError::BadRequest(format!(
            "'prompt' must hold 1 to {MAX_PROMPT_CHARS} characters"
        )));
    }
    let shown = crate::wire::echo(&name).to_string();
    let put = blocking(&app, move |app| {
        Ok(app
            .store
            .put_prompt_action(id, &name, &body.prompt, body.enabled)?)
    })
    .await?;
    match put {
        Put::Saved(saved) => Ok(Json(action(saved))),
        Put::NotFound => Err(ApiError::NotFound("Prompt action not found".into())),
        Put::NameTaken => Err(ApiError::Conflict(format!(
            "Another prompt action is named '{shown}': choose another name"
        ))),
    }
}

async fn delete(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Deleted>, ApiError> {
    let id = Query::of(&uri).id()?;
    if blocking(&app, move |app| Ok(app.store.delete_prompt_action(&id)?)).await? {
        Ok(Json(Deleted { deleted: true }))
    } else {
        Err(ApiError::NotFound("Prompt action not found".into()))
    }
}

async fn run(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<RunAction>,
) -> Result<Json<ActionRun>, ApiError> {
    let key = match (body.id, body.name) {
        (Some(key), None) | (None, Some(key)) => key,
        _ => {
            return Err(ApiError::BadRequest(
                "Name the action by 'id' or by 'name' (one of them)".into(),
            ));
        }
    };
    if body.text.trim().is_empty() || body.text.chars().count() > MAX_TEXT_CHARS {
        return Err(ApiError::BadRequest(format!(
            "'text' must hold 1 to {MAX_TEXT_CHARS} characters"
        )));
    }
    let ready = blocking(&app, move |app| {
        Ok(chat::prepare(&app.store, app.transcriber.chat(), &key)?)
    })
    .await?;
    // The call stops when the request does (the client left).
    let cancel = Cancel::new();
    let _stop = cancel.cancel_on_drop();
    let text = body.text;
    let ran = ready.clone();
    let reply = tokio::task::spawn_blocking(move || ran.run(&text, &cancel))
        .await
        .map_err(|e| ApiError::Internal {
            cause: format!("the prompt action stopped: {e}"),
        })?
        .map_err(|e| ApiError::ServiceUnavailable(e.to_string()))?;
    Ok(Json(ActionRun {
        text: reply.text,
        action: action(ready.action),
        model: reply.model,
        processing_time: reply.seconds,
    }))
}
