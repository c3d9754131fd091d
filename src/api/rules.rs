//! `GET /v1/rules`, `PUT /v1/rules/toggle?id=` and their exact aliases under `/v1/profiles`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::Serialize;
use uuid::Uuid;

use super::query::Query;
use super::{ApiError, blocking};
use crate::app::App;
use crate::store::Workflow;
use crate::wire;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/rules", get(list))
        .route("/v1/profiles", get(list))
        .route("/v1/rules/toggle", put(toggle))
        .route("/v1/profiles/toggle", put(toggle))
}

/// A workflow as the rules routes show it.
#[derive(Serialize, Clone)]
struct Rule {
    #[serde(serialize_with = "wire::upper_uuid")]
    id: Uuid,
    name: String,
    is_enabled: bool,
    priority: i64,
    bundle_identifiers: Vec<String>,
    url_patterns: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_language: Option<String>,
    language_mode: &'static str,
    language_hints: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    translation_target_language: Option<String>,
}

impl From<Workflow> for Rule {
    fn from(w: Workflow) -> Rule {
        Rule {
            id: w.id,
            name: w.name,
            is_enabled: w.enabled,
            priority: w.priority,
            bundle_identifiers: w.bundle_identifiers,
            url_patterns: w.url_patterns,
            input_language: w.input_language,
            language_mode: w.extra.language_mode.as_str(),
            language_hints: w.extra.language_hints,
            translation_target_language: w.translation_target_language,
        }
    }
}

/// The same list under both names, for clients of either.
#[derive(Serialize)]
struct RuleList {
    rules: Vec<Rule>,
    profiles: Vec<Rule>,
}

#[derive(Serialize)]
struct Toggled {
    #[serde(serialize_with = "wire::upper_uuid")]
    id: Uuid,
    name: String,
    rule_name: String,
    profile_name: String,
    is_enabled: bool,
}

async fn list(State(app): State<Arc<App>>) -> Result<Json<RuleList>, ApiError> {
    let workflows = blocking(&app, |app| Ok(app.store.workflows()?)).await?;
    let rules: Vec<Rule> = workflows.into_iter().map(Rule::from).collect();
    Ok(Json(RuleList {
        profiles: rules.clone(),
        rules,
    }))
}

async fn toggle(State(app): State<Arc<App>>, uri: Uri) -> Result<Json<Toggled>, ApiError> {
    let id = Query::of(&uri).id()?;
    let toggled = blocking(&app, move |app| Ok(app.store.toggle_workflow(&id)?)).await?;
    let workflow = toggled.ok_or_else(|| ApiError::NotFound("Rule not found".into()))?;
    Ok(Json(Toggled {
        id: workflow.id,
        rule_name: workflow.name.clone(),
        profile_name: workflow.name.clone(),
        name: workflow.name,
        is_enabled: workflow.enabled,
    }))
}
