//! `GET /v1/settings/export` and `POST /v1/settings/import`.

use std::io::BufReader;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use tokio::sync::Semaphore;

use super::json;
use super::{ApiError, blocking};
use crate::app::App;
use crate::backup::{self, Backup, DocumentError, HttpRegistry, PluginSource};
use crate::store::PrefValue;
use crate::store::preferences::PLUGIN_REGISTRY_URL;
use crate::wire::{ImportSummary, SettingsDocument};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/settings/export", get(export))
        .route("/v1/settings/import", post(import))
}

async fn export(State(app): State<Arc<App>>) -> Result<Json<SettingsDocument>, ApiError> {
    let document = blocking(&app, |app| Ok(backup::export(&app.store)?.to_json())).await?;
    Ok(Json(document))
}

/// 400 for a document that cannot be imported; `detail` names the first problem.
fn invalid(detail: impl std::fmt::Display) -> ApiError {
    ApiError::BadRequest(format!(
        "The document is not a valid Verbatim settings backup. {detail}"
    ))
}

/// One import is read and merged at a time: the backup it builds in memory (about 2 to 3 times
/// the document for history and dictionary entries) is the largest thing a request holds.
static IMPORTS: Semaphore = Semaphore::const_new(1);

/// The body is spooled to a file as it arrives (up to 64 MiB), then read as it streams from
/// there on a blocking thread: the document is never held whole in memory, parsed or not.
async fn import(
    State(app): State<Arc<App>>,
    request: Request,
) -> Result<Json<ImportSummary>, ApiError> {
    json::require_json(
        request.headers(),
        "Send the backup with Content-Type: application/json.",
    )?;
    let body = json::spool(&app, request.into_body()).await?;
    let _turn = IMPORTS
        .acquire()
        .await
        .expect("the import semaphore is never closed");
    let summary = blocking(&app, move |app| {
        let backup = Backup::from_reader(BufReader::new(body)).map_err(|err| match err {
            DocumentError::Malformed(err) => invalid(format!("The JSON is malformed: {err}.")),
            DocumentError::Invalid(problem) => invalid(problem),
        })?;
        let registry = match app.store.pref(&PLUGIN_REGISTRY_URL)? {
            PrefValue::Text(url) => HttpRegistry::new(&url),
            _ => None,
        };
        let source = registry.as_ref().map(|r| r as &dyn PluginSource);
        Ok(backup::import(&app.store, &backup, source)?)
    })
    .await?;
    Ok(Json(summary))
}
