//! Installing a model from files at hand, offline: `verbatim models import FILE` (a whisper.cpp
//! ggml file, named by its header) and `models import-ct2 DIR` (a CTranslate2 model folder
//! converted, optionally quantized). Either selects the model when no installed one is.

use serde_json::json;

use super::super::output::print_json;
use super::super::progress::bytes_bar;
use super::super::{CliError, Globals};
use super::local_store::open_store;
use super::model_selection::{known_whisper, selected, store_selection};
use crate::app::model_dir;
use crate::discovery::DataDir;
use crate::engine::catalog::{self, find_model};
use crate::engine::models::sha256_file;
use verbatim_ct2_import::{ImportOptions, Quantization, import_ct2};

/// The `--quantize` types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Quantize {
    /// 8-bit blocks: about 55% of the f16 size.
    #[value(name = "q8_0")]
    Q8_0,
    /// 5-bit blocks with a minimum: about 40% of the f16 size.
    #[value(name = "q5_1")]
    Q5_1,
}

impl From<Quantize> for Quantization {
    fn from(q: Quantize) -> Quantization {
        match q {
            Quantize::Q8_0 => Quantization::Q8_0,
            Quantize::Q5_1 => Quantization::Q5_1,
        }
    }
}

pub(super) fn import(
    globals: &Globals,
    source: &std::path::Path,
    id: Option<&str>,
    quantization: Quantization,
) -> Result<(), CliError> {
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    dir.ensure().map_err(CliError::local)?;
    let models = model_dir(&dir);
    let requested = id.map(known_whisper).transpose()?;
    let staging = models
        .path()
        .join(format!(".import-{}.part", crate::files::random_suffix()));
    std::fs::create_dir_all(models.path()).map_err(CliError::local)?;
    let bar = bytes_bar(format!("Converting {}", source.display()));
    let options = ImportOptions { quantization };
    let report = import_ct2(source, &staging, &options, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report.map_err(CliError::local)?;
    let quantized = match quantization {
        Quantization::F16 => String::new(),
        q => format!("-{}", q.name()),
    };
    let derived = format!(
        "{}{}{quantized}",
        report.size_name,
        if report.multilingual { "" } else { ".en" },
    );
    let spec = match requested {
        Some(spec) => spec,
        None => match known_whisper(&derived) {
            Ok(spec) => spec,
            Err(e) => {
                let _ = std::fs::remove_file(&staging);
                return Err(e);
            }
        },
    };
    let installed = sha256_file(&staging).and_then(|sha| {
        models.install(
            spec,
            &staging,
            &sha,
            &format!("import-ct2 {} ({})", source.display(), quantization.name()),
        )
    });
    if let Err(e) = installed {
        let _ = std::fs::remove_file(&staging);
        return Err(CliError::Local(format!(
            "cannot install the converted model: {e}"
        )));
    }
    let path = models.weights_path(spec);
    let selection = select_if_none(globals, spec)?;
    if globals.json {
        print_json(
            &json!({"id": spec.id, "path": path, "bytes": report.bytes_written, "selected": selection.selected}),
        );
    } else {
        println!(
            "Installed {} at {} ({} bytes)",
            spec.id,
            path.display(),
            report.bytes_written
        );
        println!("{}", selection.note);
    }
    Ok(())
}

/// What installing a model did to the selection.
pub(super) struct Selection {
    pub selected: bool,
    pub note: String,
}

/// Selects `spec` when no installed model is selected; otherwise says how to select it.
pub(super) fn select_if_none(
    globals: &Globals,
    spec: &'static crate::engine::ModelSpec,
) -> Result<Selection, CliError> {
    let store = open_store(globals)?;
    let current = selected(&store)?;
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let current_installed =
        find_model(&current).is_some_and(|m| catalog::is_installed(&model_dir(&dir), m));
    if current == spec.id {
        return Ok(Selection {
            selected: true,
            note: format!("{} is the selected model.", spec.id),
        });
    }
    if current_installed {
        return Ok(Selection {
            selected: false,
            note: format!(
                "{current} stays selected; to use {} instead: verbatim models select {}",
                spec.id, spec.id
            ),
        });
    }
    store_selection(&store, spec)?;
    Ok(Selection {
        selected: true,
        note: format!("Selected {} (no installed model was selected).", spec.id),
    })
}

/// `models import FILE [--id ID]`: a whisper.cpp ggml file installed as the model its header
/// names, copied through a temporary file in the models folder and checked on the way.
pub(super) fn import_ggml(
    globals: &Globals,
    file: &std::path::Path,
    id: Option<&str>,
) -> Result<(), CliError> {
    let header = crate::engine::models::GgmlHeader::read(file).map_err(|problem| {
        CliError::Local(format!("Cannot import {}: {problem}.", file.display()))
    })?;
    let spec = match (id, header.model_id()) {
        (Some(id), Some(named)) if known_whisper(id)?.id != named => {
            return Err(CliError::Local(format!(
                "{} is {named} by its header, not {id}: import it without --id, or as --id {named}",
                file.display()
            )));
        }
        (Some(id), _) => known_whisper(id)?,
        (None, Some(named)) => known_whisper(&named)?,
        (None, None) => {
            return Err(CliError::Local(format!(
                "{} is a Whisper model of a shape or weight type the catalog does not name: give its id with --id",
                file.display()
            )));
        }
    };
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    dir.ensure().map_err(CliError::local)?;
    let models = model_dir(&dir);
    std::fs::create_dir_all(models.path()).map_err(CliError::local)?;
    let staging = models
        .path()
        .join(format!(".import-{}.part", crate::files::random_suffix()));
    let copied = std::fs::copy(file, &staging)
        .and_then(|bytes| sha256_file(&staging).map(|sha| (bytes, sha)))
        .and_then(|(bytes, sha)| {
            models
                .install(spec, &staging, &sha, &format!("import {}", file.display()))
                .map(|()| bytes)
        });
    let bytes = match copied {
        Ok(bytes) => bytes,
        Err(e) => {
            let _ = std::fs::remove_file(&staging);
            return Err(CliError::Local(format!(
                "cannot install {}: {e}",
                file.display()
            )));
        }
    };
    let path = models.weights_path(spec);
    let selection = select_if_none(globals, spec)?;
    if globals.json {
        print_json(
            &json!({"id": spec.id, "path": path, "bytes": bytes, "selected": selection.selected}),
        );
    } else {
        println!(
            "Installed {} at {} ({bytes} bytes)",
            spec.id,
            path.display()
        );
        println!("{}", selection.note);
    }
    Ok(())
}
