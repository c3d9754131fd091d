//! `GET /v1/status` (always public) and `GET /v1/models`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::app::App;
use crate::wire::{API_VERSION, ModelList, Status};

pub async fn status(State(_app): State<Arc<App>>) -> Json<Status> {
    // No engine is loaded in this build of the service yet: the status says so.
    Json(Status {
        status: "no_model".into(),
        engine: None,
        model: None,
        api_version: API_VERSION.into(),
        supports_workflow_dictation: true,
        supports_streaming: false,
        supports_translation: false,
    })
}

pub async fn models(State(_app): State<Arc<App>>) -> Json<ModelList> {
    Json(ModelList { models: Vec::new() })
}
