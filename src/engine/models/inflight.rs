//! Downloads started by the server (requests with `?await_download=1`, the page): one download
//! per model at a time, shared by every request waiting for it, with its progress.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::catalog::ModelSpec;
use super::folder::ModelDir;
use crate::engine::Engine;

type Outcome = Option<Result<(), String>>;

/// A download running now: its outcome once known, and how far it got.
struct Running {
    outcome: watch::Receiver<Outcome>,
    progress: Arc<Mutex<(u64, u64)>>,
}

/// How far the download of a model got (bytes, or the engine's own steps).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    pub id: &'static str,
    pub done: u64,
    pub total: u64,
}

#[derive(Default)]
pub struct Downloads {
    in_flight: Arc<Mutex<HashMap<&'static str, Running>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Downloads {
    /// The downloads running now, by model id.
    pub fn running(&self) -> Vec<Progress> {
        let mut running: Vec<Progress> = lock(&self.in_flight)
            .iter()
            .map(|(id, running)| {
                let (done, total) = *lock(&running.progress);
                Progress { id, done, total }
            })
            .collect();
        running.sort_by_key(|p| p.id);
        running
    }

    /// Downloads `spec` unless a download of it is already running; waits for the outcome.
    /// The download goes on when the caller stops waiting.
    pub async fn ensure(
        &self,
        engine: Arc<dyn Engine>,
        spec: &'static ModelSpec,
        models: &ModelDir,
        base_url: &str,
    ) -> Result<(), String> {
        let mut outcome = {
            let mut in_flight = lock(&self.in_flight);
            match in_flight.get(spec.id) {
                Some(running) => running.outcome.clone(),
                None => {
                    let (done, outcome) = watch::channel(None);
                    let progress = Arc::new(Mutex::new((0, 0)));
                    in_flight.insert(
                        spec.id,
                        Running {
                            outcome: outcome.clone(),
                            progress: progress.clone(),
                        },
                    );
                    let (models, base_url) = (models.clone(), base_url.to_string());
                    let registry = self.in_flight.clone();
                    tokio::task::spawn_blocking(move || {
                        tracing::info!("downloading model {} from {base_url}", spec.id);
                        let mut report = |done, total| *lock(&progress) = (done, total);
                        let result = engine.download(spec, &models, &base_url, &mut report);
                        match &result {
                            Ok(()) => tracing::info!("model {} downloaded", spec.id),
                            Err(e) => tracing::warn!("model {} download failed: {e}", spec.id),
                        }
                        lock(&registry).remove(spec.id);
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
