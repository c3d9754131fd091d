//! Downloads started by requests with `?await_download=1`: one download per model at a time,
//! shared by every request waiting for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::catalog::ModelSpec;
use super::folder::ModelDir;
use crate::engine::Engine;

type Outcome = Option<Result<(), String>>;

#[derive(Default)]
pub struct Downloads {
    in_flight: Arc<Mutex<HashMap<&'static str, watch::Receiver<Outcome>>>>,
}

impl Downloads {
    /// Downloads `spec` unless a download of it is already running; waits for the outcome.
    pub async fn ensure(
        &self,
        engine: Arc<dyn Engine>,
        spec: &'static ModelSpec,
        models: &ModelDir,
        base_url: &str,
    ) -> Result<(), String> {
        let mut outcome = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            match in_flight.get(spec.id) {
                Some(running) => running.clone(),
                None => {
                    let (done, outcome) = watch::channel(None);
                    in_flight.insert(spec.id, outcome.clone());
                    let (models, base_url) = (models.clone(), base_url.to_string());
                    let registry = self.in_flight.clone();
                    tokio::task::spawn_blocking(move || {
                        tracing::info!("downloading model {} from {base_url}", spec.id);
                        let result = engine.download(spec, &models, &base_url, &mut |_, _| {});
                        match &result {
                            Ok(()) => tracing::info!("model {} downloaded", spec.id),
                            Err(e) => tracing::warn!("model {} download failed: {e}", spec.id),
                        }
                        registry
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(spec.id);
                        let _ = done.send(Some(result));
                    });
                    outcome
                }
            }
        };
        let finished = outcome
            .wait_for(Option::is_some)
            .await
            .map_err(|_| "the download stopped unexpectedly".to_string())?;
        finished.clone().unwrap_or(Ok(()))
    }
}
