//! The models of every engine in this build, by id: where each is looked up, whether it is
//! installed, and how it is downloaded and removed.

use std::io;

use super::ModelSpec;
use super::models::catalog::WHISPER_MODELS;
use super::models::fetch::DownloadError;
use super::models::{ModelDir, download};

/// Every model of every engine, whisper's first.
pub fn all_models() -> impl Iterator<Item = &'static ModelSpec> {
    let whisper = WHISPER_MODELS.iter();
    #[cfg(feature = "moonshine")]
    let whisper = whisper.chain(super::moonshine::MOONSHINE_MODELS.iter().map(|m| &m.spec));
    whisper
}

/// The model with this id, whatever its engine.
pub fn find_model(id: &str) -> Option<&'static ModelSpec> {
    all_models().find(|m| m.id == id)
}

/// The model id closest to `typed` (a typo: `tiny-en`, `Base`, `tiny.en-q8`), when one is
/// close enough to be what was meant: at most a third of its characters to change (at least
/// two), case aside.
pub fn closest_model(typed: &str) -> Option<&'static str> {
    let typed = typed.trim().to_ascii_lowercase();
    all_models()
        .map(|m| (edit_distance(&typed, m.id), m.id))
        .filter(|(distance, id)| *distance <= (id.len() / 3).max(2))
        .min()
        .map(|(_, id)| id)
}

/// Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Its files are in the models folder, complete.
pub fn is_installed(models: &ModelDir, spec: &ModelSpec) -> bool {
    #[cfg(feature = "moonshine")]
    if let Some(model) = super::moonshine::moonshine_model(spec.id) {
        return super::moonshine::is_installed(models, model);
    }
    models.is_installed(spec)
}

/// Where the model is installed: whisper's weights file, or a Moonshine model's folder.
pub fn install_path(models: &ModelDir, spec: &ModelSpec) -> std::path::PathBuf {
    #[cfg(feature = "moonshine")]
    if let Some(model) = super::moonshine::moonshine_model(spec.id) {
        return super::moonshine::folder(models, model);
    }
    models.weights_path(spec)
}

/// Deletes the model's files (the ONNX Runtime library, shared by every Moonshine model,
/// stays); true when something was there.
pub fn remove(models: &ModelDir, spec: &ModelSpec) -> io::Result<bool> {
    #[cfg(feature = "moonshine")]
    if let Some(model) = super::moonshine::moonshine_model(spec.id) {
        let folder = super::moonshine::folder(models, model);
        return match std::fs::remove_dir_all(&folder) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(err),
        };
    }
    models.remove(spec)
}

/// Downloads what the model lacks from `base_url` (`transcribe::download_base_url`).
pub fn download_model(
    models: &ModelDir,
    spec: &'static ModelSpec,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    #[cfg(feature = "moonshine")]
    if let Some(model) = super::moonshine::moonshine_model(spec.id) {
        return super::moonshine::install::download(models, model, base_url, progress);
    }
    download(base_url, spec, models, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_names_the_model_meant() {
        for (typed, meant) in [
            ("tiny-en", "tiny.en"),
            ("Tiny.En", "tiny.en"),
            ("tiny.en-q8", "tiny.en-q8_0"),
            ("bsae", "base"),
            ("smal", "small"),
        ] {
            assert_eq!(closest_model(typed), Some(meant), "{typed}");
        }
        assert_eq!(closest_model("bogus-model"), None);
        assert_eq!(closest_model(""), None);
    }
}
