//! `verbatim models [list] | select ID | download ID | import FILE | import-ct2 DIR | remove ID`:
//! the models the engines offer, the selection, and installing weights from a ggml file or
//! converted from a CTranslate2 model.

use std::path::PathBuf;

use serde_json::json;

use super::super::output::{print_answer, print_json, print_table_or};
use super::super::progress::bytes_bar;
use super::super::{CliError, Client, Globals};
use super::local_store::open_store;
use super::model_import::{self, Quantize};
use super::model_selection::{known, selected, store_selection};
use crate::app::model_dir;
use crate::discovery::DataDir;
use crate::engine::catalog;
use crate::wire::{ModelEntry, ModelList};
use verbatim_ct2_import::Quantization;

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

pub fn run(globals: &Globals, command: Option<ModelsCommand>) -> Result<(), CliError> {
    match command.unwrap_or_default() {
        ModelsCommand::List => list(globals),
        ModelsCommand::Select { id } => select(globals, &id),
        ModelsCommand::Download { id } => download(globals, &id),
        ModelsCommand::ImportCt2 { dir, id, quantize } => {
            let quantization = quantize.map_or(Quantization::F16, Quantization::from);
            model_import::import(globals, &dir, id.as_deref(), quantization)
        }
        ModelsCommand::Import { file, id } => {
            model_import::import_ggml(globals, &file, id.as_deref())
        }
        ModelsCommand::Remove { id, force } => remove(globals, &id, force),
    }
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
    // A first model is selected at once: on a new machine, download then transcribe.
    let selection = super::model_import::select_if_none(globals, spec)?;
    if globals.json {
        print_json(&json!({"id": spec.id, "path": path, "selected": selection.selected}));
    } else {
        println!("Downloaded {} to {}", spec.id, path.display());
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

/// A model's state in words: `not downloaded`, `downloaded` or `loaded`, then `, selected`;
/// `unavailable: <why>` for a model that cannot run on this machine.
/// (A server that does not say whether it is downloaded: `ready` or `not configured`.)
fn state(model: &ModelEntry) -> String {
    if let Some(why) = &model.unavailable {
        return format!("unavailable: {why}");
    }
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
