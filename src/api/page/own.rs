//! The page's own routes under `/page/` (token or signed-in browser, like `/v1/`): what the
//! versioned API leaves to the CLI. Models: select, download (answered when done; progress
//! from `GET /page/downloads`), remove; the preferences a settings backup may change; the
//! token: rotate; the browser's session: sign out.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::browser_session;
use super::super::json::JsonBody;
use super::super::query::Query;
use super::super::{ApiError, blocking};
use crate::app::App;
use crate::store::preferences::{self, NOT_IN_BACKUP, Pref, PrefKind};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/page/downloads", get(downloads))
        .route("/page/models/select", post(select))
        .route("/page/models/download", post(download))
        .route("/page/models", delete(remove))
        .route("/page/token/rotate", post(rotate_token))
        .route("/page/sign-out", post(sign_out))
        .route("/page/settings", get(settings).put(set_setting))
}

/// The `id` query parameter: a model id.
fn model_id(uri: &Uri) -> Result<String, ApiError> {
    Query::of(uri)
        .get("id")
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ApiError::BadRequest("Missing 'id' query parameter (a model id)".into()))
}

/// `{downloads: [{id, done, total}]}`: the downloads running now.
async fn downloads(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({ "downloads": app.transcriber.downloads_running() }))
}

/// `POST /page/models/select?id=` → `{engine, model, downloaded: true}`; a model not downloaded
/// is 409 and the selection stays.
async fn select(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let id = model_id(&uri)?;
    let spec = blocking(&app, move |app| Ok(app.transcriber.select_model(&id)?)).await?;
    Ok(Json(
        json!({"engine": spec.engine, "model": spec.id, "downloaded": true}),
    ))
}

/// `POST /page/models/download?id=` → `{id, downloaded: true}` once the files are in place. The
/// download goes on if the client leaves.
async fn download(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let id = model_id(&uri)?;
    let spec = app.transcriber.download_model(&id).await?;
    Ok(Json(json!({"id": spec.id, "downloaded": true})))
}

/// `DELETE /page/models?id=` → `{id, removed}`, and `selected` when it was the selected model
/// and another installed one is selected instead; 409 while the model is being downloaded.
async fn remove(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let id = model_id(&uri)?;
    if app
        .transcriber
        .downloads_running()
        .iter()
        .any(|d| d.id == id)
    {
        return Err(ApiError::Conflict(format!(
            "Model '{}' is being downloaded; remove it once the download has ended",
            crate::wire::echo(&id)
        )));
    }
    let removed = blocking(&app, move |app| Ok(app.transcriber.remove_model(&id)?)).await?;
    let mut answer = json!({"id": removed.spec.id, "removed": removed.removed});
    if let Some(selected) = removed.selected {
        answer["selected"] = json!(selected);
    }
    Ok(Json(answer))
}

/// `POST /page/token/rotate` → `{rotated: true}`: a new API token (every browser is signed out,
/// this one included; clients read the new token from the discovery file).
async fn rotate_token(State(app): State<Arc<App>>) -> Result<Json<Value>, ApiError> {
    blocking(&app, |app| {
        crate::discovery::rotate_token(&app.data_dir, &app.store)
            .map_err(|e| ApiError::internal("could not rotate the token", e))
    })
    .await?;
    Ok(Json(json!({"rotated": true})))
}

/// `POST /page/sign-out` → `{signed_out}`: ends the session this browser presents (both halves)
/// and clears its cookie; false when it presented none (no token needed, or signed in with the
/// token itself).
async fn sign_out(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Response, ApiError> {
    let ended = match browser_session::presented(&headers) {
        Some(session) => {
            blocking(&app, move |app| Ok(app.store.end_web_session(&session)?)).await?
        }
        None => false,
    };
    let mut response = Json(json!({ "signed_out": ended })).into_response();
    if let Ok(cleared) = HeaderValue::from_str(&browser_session::clear_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, cleared);
    }
    Ok(response)
}

/// One preference as the settings view shows it.
fn setting(pref: &Pref, value: &preferences::PrefValue) -> Value {
    let mut shown = json!({
        "key": pref.key,
        "value": value.to_json(),
        "default": pref.default_value().to_json(),
        "help": pref.help,
        // What a settings backup may not change is changed on this machine only.
        "editable": !NOT_IN_BACKUP.contains(&pref.key),
    });
    let kind = match pref.kind {
        PrefKind::Bool(_) => json!({"kind": "bool"}),
        PrefKind::Int { min, max, .. } => json!({"kind": "int", "min": min, "max": max}),
        PrefKind::Text(_) => json!({"kind": "text"}),
        PrefKind::Choice { options, .. } => json!({"kind": "choice", "options": options}),
    };
    if let (Some(shown), Value::Object(kind)) = (shown.as_object_mut(), kind) {
        shown.extend(kind);
    }
    shown
}

/// `GET /page/settings` → `{settings: [{key, value, default, help, editable, kind, …}]}`.
async fn settings(State(app): State<Arc<App>>) -> Result<Json<Value>, ApiError> {
    let listed = blocking(&app, |app| Ok(app.store.list_prefs()?)).await?;
    let settings: Vec<Value> = listed
        .iter()
        .map(|(pref, value, _)| setting(pref, value))
        .collect();
    Ok(Json(json!({ "settings": settings })))
}

#[derive(Deserialize)]
struct SetSetting {
    key: String,
    value: Value,
}

/// `PUT /page/settings {key, value}` → the preference as shown. Checked as a settings backup's
/// preferences are; what a backup may not change (the port, token checking, download sources,
/// how dictated text is inserted, folders and devices) is 400 here too.
async fn set_setting(
    State(app): State<Arc<App>>,
    JsonBody(body): JsonBody<SetSetting>,
) -> Result<Json<Value>, ApiError> {
    let pref = preferences::find(&body.key).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if NOT_IN_BACKUP.contains(&pref.key) {
        return Err(ApiError::BadRequest(format!(
            "{} is changed on this machine only: verbatim config set {} VALUE",
            pref.key, pref.key
        )));
    }
    let value = pref
        .from_json(&body.value)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let stored = value.clone();
    blocking(&app, move |app| Ok(app.store.set_pref(pref, &stored)?)).await?;
    Ok(Json(setting(pref, &value)))
}
