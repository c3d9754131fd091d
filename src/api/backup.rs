//! `GET /v1/settings/export` and `POST /v1/settings/import`.

use std::io::BufReader;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::json;
use super::{ApiError, blocking};
use crate::app::App;
use crate::backup::{self, Backup, HttpRegistry, PluginSource};
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

/// The body is spooled to a file as it arrives (up to 64 MiB), then parsed from there on a
/// blocking thread.
async fn import(
    State(app): State<Arc<App>>,
    request: Request,
) -> Result<Json<ImportSummary>, ApiError> {
    json::require_json(
        request.headers(),
        "Send the backup with Content-Type: application/json.",
    )?;
    let body = json::spool(&app, request.into_body()).await?;
    let summary = blocking(&app, move |app| {
        let document: SettingsDocument = serde_json::from_reader(BufReader::new(body))
            .map_err(|err| invalid(format!("The JSON is malformed: {err}.")))?;
        let backup = Backup::from_json(&document).map_err(invalid)?;
        drop(document);
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
