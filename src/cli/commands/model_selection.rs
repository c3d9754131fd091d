//! Model ids as people type them, and the stored selection: what `models`, `config` and the
//! imports share.

use super::super::CliError;
use crate::engine::catalog::{self, find_model};
use crate::store::{PrefValue, Store, preferences};

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
pub(super) fn known_whisper(id: &str) -> Result<&'static crate::engine::ModelSpec, CliError> {
    let spec = known(id)?;
    crate::engine::models::whisper_model(spec.id).ok_or_else(|| {
        CliError::Local(format!(
            "'{id}' is a {} model; import-ct2 installs whisper models",
            spec.engine
        ))
    })
}

/// The selected model's id, as stored.
pub(super) fn selected(store: &Store) -> Result<String, CliError> {
    store
        .pref_text(&preferences::SELECTED_MODEL)
        .map_err(CliError::local)
}

/// Stores `spec` and its engine as the selection.
pub(super) fn store_selection(
    store: &Store,
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
