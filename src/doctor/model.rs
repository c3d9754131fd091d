//! The selected model: chosen, installed (file and manifest agree) and loadable (a whisper.cpp
//! ggml file whose header makes sense; for Moonshine, every file at its pinned size and the
//! ONNX Runtime library with its pinned SHA-256), without loading it.

use std::io::Read;
use std::path::Path;

use super::Finding;
use crate::engine::models::{ModelDir, whisper_model};

const NAME: &str = "model";
/// `ggml` as whisper.cpp writes it (little-endian).
const GGML_MAGIC: u32 = 0x6767_6d6c;

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
    match ggml_header(&path) {
        Ok(()) => {
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

/// Checks the magic number and the hyper-parameters whisper.cpp reads first: vocabulary size,
/// audio and text context, mel bands.
fn ggml_header(path: &Path) -> Result<(), String> {
    let mut header = [0u8; 4 * 12];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut header))
        .map_err(|e| format!("its header cannot be read ({e})"))?;
    let word = |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().unwrap());
    if word(0) != GGML_MAGIC {
        return Err("it is not a ggml file".into());
    }
    let (n_vocab, n_audio_ctx, n_text_ctx, n_mels) = (word(1), word(2), word(6), word(10));
    let plausible = (51_000..=52_000).contains(&n_vocab)
        && n_audio_ctx == 1500
        && n_text_ctx == 448
        && matches!(n_mels, 80 | 128);
    if !plausible {
        return Err(format!(
            "its header does not describe a Whisper model (vocabulary {n_vocab}, mel bands {n_mels})"
        ));
    }
    Ok(())
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

    #[test]
    fn a_header_that_is_not_whispers_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("m.bin");
        std::fs::write(&path, [0u8; 64]).unwrap();
        assert!(ggml_header(&path).unwrap_err().contains("not a ggml file"));
        let mut header: Vec<u8> = [GGML_MAGIC, 51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        std::fs::write(&path, &header).unwrap();
        ggml_header(&path).unwrap();
        header[40..44].copy_from_slice(&7u32.to_le_bytes());
        std::fs::write(&path, &header).unwrap();
        assert!(ggml_header(&path).is_err());
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
