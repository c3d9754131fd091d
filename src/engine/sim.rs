//! The replay engine of sim mode: the whisper catalog with model states from the scenario,
//! transcription replayed from the recorded corpus (verbatim-sim), the scenario's latency
//! (cut short when the request is cancelled) and injected failures, and paced simulated
//! downloads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use verbatim_sim::{ModelState, Simulation};

use super::models::ModelDir;
use super::models::catalog::WHISPER_MODELS;
use super::{Engine, EngineError, EngineOutput, EngineRequest, ModelOffer, ModelSpec};
use crate::cancel::Cancel;

/// Sim mode answers as the whisper engine, so clients see the same ids as in production.
pub const ENGINE_ID: &str = "whisper";

pub struct SimEngine {
    sim: Arc<Simulation>,
    /// Models downloaded during this run (on top of the scenario's `present` ones).
    downloaded: Mutex<BTreeMap<&'static str, bool>>,
}

impl SimEngine {
    pub fn new(sim: Arc<Simulation>) -> SimEngine {
        SimEngine {
            sim,
            downloaded: Mutex::new(BTreeMap::new()),
        }
    }

    fn state(&self, model: &str) -> ModelState {
        self.sim
            .scenario
            .models
            .get(model)
            .copied()
            .unwrap_or(ModelState::Absent)
    }

    /// Waits `latency` of the simulation's clock, a slice at a time; false as soon as
    /// `cancel` is set.
    fn wait(&self, latency: Duration, cancel: &Cancel) -> bool {
        const SLICE: Duration = Duration::from_millis(20);
        let clock = &self.sim.clock;
        let deadline = clock.now() + latency;
        loop {
            if cancel.is_cancelled() {
                return false;
            }
            let now = clock.now();
            if now >= deadline {
                return true;
            }
            clock.sleep_until(deadline.min(now + SLICE));
        }
    }

    fn is_downloaded(&self, spec: &ModelSpec) -> bool {
        self.state(spec.id) == ModelState::Present
            || self
                .downloaded
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(spec.id)
    }
}

impl Engine for SimEngine {
    fn id(&self) -> &'static str {
        ENGINE_ID
    }

    fn models(&self) -> Vec<ModelOffer> {
        WHISPER_MODELS
            .iter()
            .map(|spec| ModelOffer {
                spec,
                downloaded: self.is_downloaded(spec),
                loaded: false,
            })
            .collect()
    }

    fn offer(&self, model: &str) -> Option<ModelOffer> {
        let spec = super::models::catalog::whisper_model(model)?;
        Some(ModelOffer {
            spec,
            downloaded: self.is_downloaded(spec),
            loaded: false,
        })
    }

    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError> {
        let replay = self
            .sim
            .engine
            .transcribe(model, request.samples)
            .map_err(|e| EngineError::Failed(e.to_string()))?;
        let latency = Duration::from_secs_f64(replay.processing_time.max(0.0));
        if !self.wait(latency, &request.cancel) {
            return Err(EngineError::Cancelled);
        }
        Ok(EngineOutput {
            processing_time: Some(replay.processing_time),
            text: replay.text,
            language: replay.language,
            segments: replay.segments.into_iter().map(Into::into).collect(),
        })
    }

    fn hears_whole_clips(&self) -> bool {
        true
    }

    fn download(
        &self,
        spec: &'static ModelSpec,
        _models: &ModelDir,
        _base_url: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), String> {
        match self.state(spec.id) {
            ModelState::Present => Ok(()),
            ModelState::Absent => Err(format!(
                "the scenario has no download for model '{}'",
                spec.id
            )),
            ModelState::Download { seconds } => {
                const STEPS: u64 = 10;
                for step in 1..=STEPS {
                    self.sim
                        .clock
                        .sleep(Duration::from_secs_f64(seconds.max(0.0) / STEPS as f64));
                    progress(step, STEPS);
                }
                self.downloaded
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(spec.id, true);
                Ok(())
            }
        }
    }
}
