//! The Moonshine engine's row of the registry: its catalog, one folder per model plus the ONNX
//! Runtime library they share, fetched from the package registries, and the check `doctor` runs
//! (every file at its pinned size, the library at its pinned SHA-256).

use std::io;
use std::sync::Arc;

use super::catalog::{MOONSHINE_ENGINE, MOONSHINE_MODELS, RUNTIME, moonshine_model};
use super::{MoonshineEngine, folder, install, is_installed, runtime};
use crate::engine::models::ModelDir;
use crate::engine::models::fetch::DownloadError;
use crate::engine::registry::{DownloadSource, EngineKind, ModelCheck, ModelProblem};
use crate::engine::{Engine, ModelSpec};

pub const KIND: EngineKind = EngineKind {
    id: MOONSHINE_ENGINE,
    about: "Moonshine on ONNX Runtime (English)",
    credit: (
        "Useful Sensors",
        "https://github.com/usefulsensors/moonshine",
    ),
    models: || MOONSHINE_MODELS.iter().map(|m| &m.spec).collect(),
    download_source: DownloadSource::PackageRegistries,
    is_installed: |models, spec| moonshine_model(spec.id).is_some_and(|m| is_installed(models, m)),
    install_path: |models, spec| models.path().join(spec.id),
    remove,
    download,
    check,
    unavailable: runtime::host_problem,
    build: |models, threads| -> Arc<dyn Engine> { Arc::new(MoonshineEngine::new(models, threads)) },
};

/// Deletes the model's folder (the ONNX Runtime library, shared by every Moonshine model,
/// stays).
fn remove(models: &ModelDir, spec: &ModelSpec) -> io::Result<bool> {
    match std::fs::remove_dir_all(models.path().join(spec.id)) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

fn download(
    models: &ModelDir,
    spec: &'static ModelSpec,
    base_url: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DownloadError> {
    let model = moonshine_model(spec.id).ok_or_else(|| DownloadError::Io {
        dir: models.path().display().to_string(),
        cause: format!("'{}' is not a Moonshine model", spec.id),
    })?;
    install::download(models, model, base_url, progress)
}

/// Its files at their pinned sizes, and the ONNX Runtime library it opens (its SHA-256
/// checked: a damaged library would crash the server when loaded).
fn check(models: &ModelDir, spec: &'static ModelSpec) -> ModelCheck {
    let model = spec.id;
    let problem = |detail: String, fix: String| Err(ModelProblem { detail, fix });
    let Some(moonshine) = moonshine_model(model) else {
        return problem(
            format!("the selected model '{model}' is not in the catalog"),
            "verbatim models select moonshine-tiny".into(),
        );
    };
    let folder = folder(models, moonshine);
    if let Some(file) = moonshine
        .files
        .iter()
        .find(|f| !runtime::has_size(&folder.join(f.name), f.size))
    {
        return problem(
            format!(
                "{model} is selected but {} is missing or incomplete",
                folder.join(file.name).display()
            ),
            format!("verbatim models download {model}"),
        );
    }
    let library = runtime::library_path(models);
    match crate::engine::models::sha256_file(&library) {
        Ok(sha256) if sha256 == RUNTIME.sha256 => Ok(format!(
            "{model} in {}, ONNX Runtime at {} (checksum verified)",
            folder.display(),
            library.display()
        )),
        Ok(_) => problem(
            format!("{} does not match its pinned SHA-256", library.display()),
            format!(
                "rm -r {} && verbatim models download {model}",
                library.parent().unwrap_or(&library).display()
            ),
        ),
        Err(err) => problem(
            format!(
                "the ONNX Runtime library {} cannot be read: {err}",
                library.display()
            ),
            format!("verbatim models remove {model} && verbatim models download {model}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::moonshine::catalog::RUNTIME;

    #[test]
    fn a_model_needs_its_files_and_an_intact_runtime_library() {
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let tiny = moonshine_model("moonshine-tiny").unwrap();
        let missing = check(&models, &tiny.spec).unwrap_err();
        assert_eq!(missing.fix, "verbatim models download moonshine-tiny");
        for file in &tiny.files {
            let path = folder(&models, tiny).join(file.name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::File::create(path)
                .unwrap()
                .set_len(file.size)
                .unwrap();
        }
        let library = runtime::library_path(&models);
        std::fs::create_dir_all(library.parent().unwrap()).unwrap();
        std::fs::File::create(&library)
            .unwrap()
            .set_len(RUNTIME.size)
            .unwrap();
        let damaged = check(&models, &tiny.spec).unwrap_err();
        assert!(damaged.detail.contains("pinned SHA-256"), "{damaged:?}");
    }
}
