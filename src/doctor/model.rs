//! The selected model: chosen, installed (file and manifest agree) and loadable (a whisper.cpp
//! ggml file whose header makes sense; for Moonshine, every file at its pinned size and the
//! ONNX Runtime library with its pinned SHA-256), without loading it.

use super::Finding;
use crate::engine::models::{GgmlHeader, ModelDir, whisper_model};

const NAME: &str = "model";

pub fn model(models: &ModelDir, engine: &str, model: &str) -> Finding {
    let install =
        |id: &str| format!("verbatim models download {id} && verbatim models select {id}");
    if model.is_empty() {
        return Finding::fail(NAME, "no model is selected", install("tiny.en"));
    }
    #[cfg(feature = "moonshine")]
    if engine == crate::engine::moonshine::MOONSHINE_ENGINE {
        return moonshine(models, model);
    }
    if !engine.is_empty() && engine != "whisper" {
        return Finding::fail(
            NAME,
            format!("the selected engine '{engine}' is not one this build has"),
            install(model),
        );
    }
    if !cfg!(feature = "whisper") {
        return Finding::fail(
            NAME,
            "this build has no whisper engine (built without the `whisper` feature)",
            "build with the default features: cargo build --release",
        );
    }
    let Some(spec) = whisper_model(model) else {
        return Finding::fail(
            NAME,
            format!("the selected model '{model}' is not in the catalog"),
            install("tiny.en"),
        );
    };
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
        return Finding::fail(NAME, detail, format!("verbatim models download {model}"));
    }
    match GgmlHeader::read(&path) {
        Ok(_) => {
            let megabytes = std::fs::metadata(&path).map_or(0, |m| m.len()) / 1_000_000;
            Finding::ok(
                NAME,
                format!(
                    "{model} at {} ({megabytes} MB, a valid ggml header)",
                    path.display()
                ),
            )
        }
        Err(problem) => Finding::fail(
            NAME,
            format!("{} cannot be loaded: {problem}", path.display()),
            format!("verbatim models remove {model} && verbatim models download {model}"),
        ),
    }
}

/// A Moonshine model: its files at their pinned sizes, and the ONNX Runtime library it opens
/// (its SHA-256 checked: a damaged library would crash the server when loaded).
#[cfg(feature = "moonshine")]
fn moonshine(models: &ModelDir, model: &str) -> Finding {
    use crate::engine::moonshine::{self, catalog::RUNTIME, moonshine_model, runtime};
    let reinstall = format!("verbatim models remove {model} && verbatim models download {model}");
    let Some(spec) = moonshine_model(model) else {
        return Finding::fail(
            NAME,
            format!("the selected model '{model}' is not in the catalog"),
            "verbatim models select moonshine-tiny",
        );
    };
    let folder = moonshine::folder(models, spec);
    if let Some(file) = spec
        .files
        .iter()
        .find(|f| !runtime::has_size(&folder.join(f.name), f.size))
    {
        return Finding::fail(
            NAME,
            format!(
                "{model} is selected but {} is missing or incomplete",
                folder.join(file.name).display()
            ),
            format!("verbatim models download {model}"),
        );
    }
    let library = runtime::library_path(models);
    match crate::engine::models::sha256_file(&library) {
        Ok(sha256) if sha256 == RUNTIME.sha256 => Finding::ok(
            NAME,
            format!(
                "{model} in {}, ONNX Runtime at {} (checksum verified)",
                folder.display(),
                library.display()
            ),
        ),
        Ok(_) => Finding::fail(
            NAME,
            format!("{} does not match its pinned SHA-256", library.display()),
            format!(
                "rm -r {} && verbatim models download {model}",
                library.parent().unwrap_or(&library).display()
            ),
        ),
        Err(err) => Finding::fail(
            NAME,
            format!(
                "the ONNX Runtime library {} cannot be read: {err}",
                library.display()
            ),
            reinstall,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn nothing_selected_or_not_installed_fails_with_the_command_to_run() {
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let none = model(&models, "", "");
        assert_eq!(none.status, Status::Fail);
        assert!(
            none.fix
                .unwrap()
                .contains("verbatim models download tiny.en")
        );
        if cfg!(feature = "whisper") {
            let missing = model(&models, "whisper", "base");
            assert_eq!(missing.status, Status::Fail);
            assert_eq!(missing.fix.unwrap(), "verbatim models download base");
        }
    }

    #[cfg(feature = "moonshine")]
    #[test]
    fn a_moonshine_model_needs_its_files_and_an_intact_runtime_library() {
        use crate::engine::moonshine::{catalog::RUNTIME, folder, moonshine_model, runtime};
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let missing = model(&models, "moonshine", "moonshine-tiny");
        assert_eq!(missing.status, Status::Fail);
        assert_eq!(
            missing.fix.unwrap(),
            "verbatim models download moonshine-tiny"
        );
        let tiny = moonshine_model("moonshine-tiny").unwrap();
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
        let damaged = model(&models, "moonshine", "moonshine-tiny");
        assert_eq!(damaged.status, Status::Fail, "{damaged:?}");
        assert!(damaged.detail.contains("pinned SHA-256"), "{damaged:?}");
        let unknown = model(&models, "moonshine", "moonshine-huge");
        assert_eq!(unknown.status, Status::Fail);
    }
}
