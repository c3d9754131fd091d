//! `GET /v1/status` (always public) and `GET /v1/models`. Both read the selection from the
//! store and look for model files, so they run on a blocking thread.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use super::{ApiError, blocking};
use crate::app::App;
use crate::engine::ModelSpec;
use crate::wire::{API_VERSION, ModelCapabilities, ModelEntry, ModelList, Status};

pub async fn status(State(app): State<Arc<App>>) -> Result<Json<Status>, ApiError> {
    blocking(&app, current_status).await.map(Json)
}

fn current_status(app: &App) -> Result<Status, ApiError> {
    let selected = app.transcriber.selected()?;
    let ready = selected.as_ref().is_some_and(|s| s.offer.downloaded);
    Ok(Status {
        status: if ready { "ready" } else { "no_model" }.into(),
        engine: selected.as_ref().map(|s| s.engine.id().to_string()),
        model: selected.as_ref().map(|s| s.offer.spec.id.to_string()),
        api_version: API_VERSION.into(),
        supports_workflow_dictation: true,
        // Segments are sent as each chunk is decoded (the replay engine hears whole clips).
        supports_streaming: selected
            .as_ref()
            .is_some_and(|s| !s.engine.hears_whole_clips()),
        // Whisper's translate task, into English, with a multilingual model.
        supports_translation: selected.as_ref().is_some_and(|s| s.offer.spec.translates()),
    })
}

pub async fn models(State(app): State<Arc<App>>) -> Result<Json<ModelList>, ApiError> {
    blocking(&app, model_list).await.map(Json)
}

fn model_list(app: &App) -> Result<ModelList, ApiError> {
    let selected = app.transcriber.selected()?;
    let is_selected = |engine: &str, model: &str| {
        selected
            .as_ref()
            .is_some_and(|s| s.engine.id() == engine && s.offer.spec.id == model)
    };
    let models = app
        .transcriber
        .engines()
        .iter()
        .flat_map(|engine| {
            engine.models().into_iter().map(|offer| ModelEntry {
                id: offer.spec.id.into(),
                engine: engine.id().into(),
                name: offer.spec.name.into(),
                size_description: offer.spec.size_description.into(),
                language_count: offer.spec.language_count,
                status: if offer.downloaded {
                    "ready"
                } else {
                    "not_configured"
                }
                .into(),
                selected: is_selected(engine.id(), offer.spec.id),
                downloaded: Some(offer.downloaded),
                loaded: Some(offer.loaded),
                capabilities: Some(capabilities(offer.spec)),
                unavailable: crate::engine::registry::unavailable(offer.spec),
            })
        })
        .collect();
    Ok(ModelList { models })
}

/// The contract's `capabilities` of a model.
fn capabilities(spec: &ModelSpec) -> ModelCapabilities {
    ModelCapabilities {
        languages: spec.languages().into_iter().map(String::from).collect(),
        translate: spec.translates(),
        prompt: spec.capabilities.prompt,
        word_timestamps: spec.capabilities.word_timestamps,
        live: spec.capabilities.live,
    }
}
