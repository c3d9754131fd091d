//! The models of the transcriber's engines as the page manages them: select one, download one
//! (sharing a download already running, which goes on if nobody waits), follow downloads,
//! remove one (unloaded first).

use std::sync::Arc;

use super::run::blocking;
use super::{TranscribeError, Transcriber};
use crate::engine::models::DownloadProgress;
use crate::engine::{Engine, ModelSpec, catalog};
use crate::store::{PrefValue, preferences};

impl Transcriber {
    /// The engine offering model `id`, and its catalog entry.
    fn offering(&self, id: &str) -> Result<(Arc<dyn Engine>, &'static ModelSpec), TranscribeError> {
        self.engines()
            .iter()
            .find_map(|engine| engine.offer(id).map(|offer| (engine.clone(), offer.spec)))
            .ok_or_else(|| TranscribeError::UnknownModel(id.to_string()))
    }

    /// Selects model `id` and its engine for requests that name none (as `verbatim models
    /// select` does). A model that is not downloaded is refused and the selection kept: a
    /// selection nothing can transcribe with only fails later. Writes the store: off the async
    /// workers.
    pub fn select_model(&self, id: &str) -> Result<&'static ModelSpec, TranscribeError> {
        let (engine, spec) = self.offering(id)?;
        if !engine.offer(id).is_some_and(|offer| offer.downloaded) {
            return Err(TranscribeError::NotDownloaded { model: spec.id });
        }
        self.store().set_pref(
            &preferences::SELECTED_ENGINE,
            &PrefValue::Text(spec.engine.into()),
        )?;
        self.store().set_pref(
            &preferences::SELECTED_MODEL,
            &PrefValue::Text(spec.id.into()),
        )?;
        Ok(spec)
    }

    /// Downloads model `id` (from the preferences' download source), or waits for the download
    /// of it already running.
    pub async fn download_model(&self, id: &str) -> Result<&'static ModelSpec, TranscribeError> {
        let (engine, spec) = self.offering(id)?;
        self.fetch(engine, spec).await?;
        Ok(spec)
    }

    /// Fetches `spec` through `engine`, sharing a download of it already running.
    pub(super) async fn fetch(
        &self,
        engine: Arc<dyn Engine>,
        spec: &'static ModelSpec,
    ) -> Result<(), TranscribeError> {
        if let Some(why) = crate::engine::registry::unavailable(spec) {
            return Err(TranscribeError::Unavailable {
                model: spec.id,
                why,
            });
        }
        let store = self.store().clone();
        let base_url = blocking("reading the preferences", move || {
            Ok(super::download_base_url(&store, spec)?)
        })
        .await?;
        self.downloads()
            .ensure(engine, spec, self.models(), &base_url)
            .await
            .map_err(|cause| TranscribeError::DownloadFailed {
                model: spec.id,
                cause,
            })
    }

    /// The downloads running now.
    pub fn downloads_running(&self) -> Vec<DownloadProgress> {
        self.downloads().running()
    }

    /// Unloads model `id` and deletes its files; false when it was not installed (the caller
    /// refuses a model being downloaded). Touches files: off the async workers.
    pub fn remove_model(&self, id: &str) -> Result<Removed, TranscribeError> {
        let (engine, spec) = self.offering(id)?;
        engine.unload(spec.id);
        let removed = catalog::remove(self.models(), spec)
            .map_err(|e| TranscribeError::internal("could not remove the model's files", e))?;
        let was_selected = self.store().pref_text(&preferences::SELECTED_MODEL)? == spec.id;
        let mut selected = None;
        if removed && was_selected {
            // The selection moves to another installed model, so that requests naming none
            // still have one; with none left, it stays, and says what to download.
            let other = self
                .engines()
                .iter()
                .flat_map(|engine| engine.models())
                .find(|offer| offer.downloaded && offer.spec.id != spec.id);
            if let Some(other) = other {
                selected = Some(self.select_model(other.spec.id)?.id);
            }
        }
        Ok(Removed {
            spec,
            removed,
            selected,
        })
    }
}

/// What removing a model did.
pub struct Removed {
    pub spec: &'static ModelSpec,
    /// Its files were there, and are gone.
    pub removed: bool,
    /// It was the selected model: the installed model selected instead, if any.
    pub selected: Option<&'static str>,
}
