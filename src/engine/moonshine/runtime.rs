//! ONNX Runtime, opened at run time from the models folder (`onnxruntime-1.31.1/`), once per
//! process: ort allows one environment, and a library once loaded stays. Until the library is
//! installed every Moonshine request says so; after installing it, the next request opens it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;

use super::catalog::{RUNTIME, RUNTIME_FOLDER};
use crate::engine::EngineError;
use crate::engine::models::ModelDir;

static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();
/// Held while the library is being opened, so two requests never race to open it.
static OPENING: Mutex<()> = Mutex::new(());

/// Where the library lives in `models`.
pub fn library_path(models: &ModelDir) -> PathBuf {
    models.path().join(RUNTIME_FOLDER).join(RUNTIME.name)
}

/// The library is in place with its pinned size.
pub fn is_installed(models: &ModelDir) -> bool {
    has_size(&library_path(models), RUNTIME.size)
}

pub fn has_size(path: &Path, size: u64) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == size)
}

/// The process's ONNX Runtime environment, opening the library on first use.
pub fn environment(models: &ModelDir) -> Result<&'static Environment, EngineError> {
    if let Some(environment) = ENVIRONMENT.get() {
        return Ok(environment);
    }
    let _opening = OPENING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(environment) = ENVIRONMENT.get() {
        return Ok(environment);
    }
    let path = library_path(models);
    if !is_installed(models) {
        return Err(EngineError::NotInstalled {
            model: format!("ONNX Runtime ({RUNTIME_FOLDER})"),
            path,
        });
    }
    let load = |cause: String| EngineError::Load {
        path: path.clone(),
        cause,
    };
    let builder = ort::init_from(&path).map_err(|err| load(err.to_string()))?;
    let environment = builder
        .with_name("verbatim")
        .build()
        .map_err(|err| load(err.to_string()))?;
    tracing::info!("opened ONNX Runtime from {}", path.display());
    Ok(ENVIRONMENT.get_or_init(|| environment))
}
