//! The whisper engine's row of the registry: the ggml catalog, one weights file per model from
//! the model server, and the check `doctor` runs on it (its ggml header read, not loaded).

use std::sync::Arc;

use super::WhisperEngine;
use crate::engine::models::catalog::{WHISPER_ENGINE, WHISPER_MODELS};
use crate::engine::models::{GgmlHeader, ModelDir, download};
use crate::engine::registry::{DownloadSource, EngineKind, ModelCheck, ModelProblem};
use crate::engine::{Engine, ModelSpec};

pub const KIND: EngineKind = EngineKind {
    id: WHISPER_ENGINE,
    about: "whisper.cpp with a Whisper model",
    credit: ("OpenAI", "https://github.com/openai/whisper"),
    models: || WHISPER_MODELS.iter().collect(),
    download_source: DownloadSource::ModelServer,
    is_installed: |models, spec| models.is_installed(spec),
    install_path: |models, spec| models.weights_path(spec),
    remove: |models, spec| models.remove(spec),
    download: |models, spec, base_url, progress| download(base_url, spec, models, progress),
    check,
    unavailable: || None,
    build: |models, threads| -> Arc<dyn Engine> { Arc::new(WhisperEngine::new(models, threads)) },
};

/// Installed (file and manifest agree) and loadable: a ggml file whose header makes sense.
fn check(models: &ModelDir, spec: &'static ModelSpec) -> ModelCheck {
    let model = spec.id;
    let path = models.weights_path(spec);
    if !models.is_installed(spec) {
        let detail = if path.is_file() {
            format!(
                "{} is there but has no matching manifest (an interrupted install?)",
                path.display()
            )
        } else {
            format!(
                "{model} is selected but not installed in {}",
                models.path().display()
            )
        };
        return Err(ModelProblem {
            detail,
            fix: format!("verbatim models download {model}"),
        });
    }
    match GgmlHeader::read(&path) {
        Ok(_) => {
            let megabytes = std::fs::metadata(&path).map_or(0, |m| m.len()) / 1_000_000;
            Ok(format!(
                "{model} at {} ({megabytes} MB, a valid ggml header)",
                path.display()
            ))
        }
        Err(problem) => Err(ModelProblem {
            detail: format!("{} cannot be loaded: {problem}", path.display()),
            fix: format!("verbatim models remove {model} && verbatim models download {model}"),
        }),
    }
}
