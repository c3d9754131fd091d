//! `GET /v1/rules`, `PUT /v1/rules/toggle?id=` and their exact aliases under `/v1/profiles`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::{get, put};
use axum::{Json, Router};

use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::store::Workflow;
use crate::wire::rules::{Rule, RuleList, Toggled};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/rules", get(list))
        .route("/v1/profiles", get(list))
        .route("/v1/rules/toggle", put(toggle))
        .route("/v1/profiles/toggle", put(toggle))
}

/// A workflow as the rules routes show it.
fn rule(w: Workflow) -> Rule {
    Rule {
        id: w.id,
        name: w.name,
        is_enabled: w.enabled,
        priority: w.priority,
        bundle_identifiers: w.bundle_identifiers,
        url_patterns: w.url_patterns,
        input_language: w.input_language,
        language_mode: w.extra.language_mode.as_str().into(),
        language_hints: w.extra.language_hints,
        translation_target_language: w.translation_target_language,
        prompt_action_id: w.extra.prompt_action_id.map(|action| action.0),
    }
}

async fn list(State(app): State<Arc<App>>) -> Result<Json<RuleList>, ApiError> {
    let workflows = blocking(&app, |app| Ok(app.store.workflows()?)).await?;
    Ok(Json(RuleList::new(
        workflows.into_iter().map(rule).collect(),
    )))
}

async fn toggle(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Toggled>, ApiError> {
    let id = Query::of(&uri).id()?;
    let toggled = blocking(&app, move |app| Ok(app.store.toggle_workflow(&id)?)).await?;
    let workflow = toggled.ok_or_else(|| ApiError::NotFound("Rule not found".into()))?;
    Ok(Json(Toggled::new(
        workflow.id,
        workflow.name,
        workflow.enabled,
    )))
}
