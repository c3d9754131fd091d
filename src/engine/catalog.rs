//! The models of every engine in this build, by id: where each is looked up, whether it is
//! installed, and how it is downloaded and removed, each through its engine's row of the
//! registry.

use std::io;

use super::ModelSpec;
use super::models::ModelDir;
use super::models::fetch::DownloadError;
use super::registry::{ENGINES, EngineKind};

/// Every model of every engine, the default engine's first.
pub fn all_models() -> impl Iterator<Item = &'static ModelSpec> {
    ENGINES.iter().flat_map(|kind| (kind.models)())
}

/// The model with this id, whatever its engine.
pub fn find_model(id: &str) -> Option<&'static ModelSpec> {
    all_models().find(|m| m.id == id)
}

/// The engine kind that runs `spec`; None for a model of an engine this build lacks (only a
/// catalog outside the registry names one).
fn kind_of(spec: &ModelSpec) -> Option<&'static EngineKind> {
    super::registry::kind(spec.engine)
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
    kind_of(spec).is_some_and(|kind| (kind.is_installed)(models, spec))
}

/// Where the model is installed: whisper's weights file, or a Moonshine model's folder.
pub fn install_path(models: &ModelDir, spec: &ModelSpec) -> std::path::PathBuf {
    match kind_of(spec) {
        Some(kind) => (kind.install_path)(models, spec),
        None => models.weights_path(spec),
    }
}

/// Deletes the model's files (what its models share, such as the ONNX Runtime library of
/// every Moonshine model, stays); true when something was there.
pub fn remove(models: &ModelDir, spec: &ModelSpec) -> io::Result<bool> {
    match kind_of(spec) {
        Some(kind) => (kind.remove)(models, spec),
        None => models.remove(spec),
    }
}

/// Downloads what the model lacks from `base_url` (`transcribe::download_base_url`); refused,
/// with nothing fetched, for a model whose engine cannot run on this machine.
pub fn download_model(
    models: &ModelDir,
    spec: &'static ModelSpec,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let Some(kind) = kind_of(spec) else {
        return Err(DownloadError::NotInBuild(spec.engine));
    };
    if let Some(why) = (kind.unavailable)() {
        return Err(DownloadError::Unavailable {
            model: spec.id,
            why,
        });
    }
    (kind.download)(models, spec, base_url, progress)
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
