//! A whole simulated world assembled from a scenario: the corpus, the replay engine and both
//! capture devices on one clock. The application takes it apart and adapts each piece to its ports.

use std::path::Path;
use std::sync::Arc;

use crate::clock::Clock;
use crate::corpus::Corpus;
use crate::corpus_error::CorpusError;
use crate::device::{DeviceKind, SimDevice};
use crate::playlist::Playlist;
use crate::replay::ReplayEngine;
use crate::scenario::{DeviceSpec, Scenario, ScenarioError};

/// A scenario or its corpus could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The corpus (clips, manifest or a recording).
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The scenario file.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// The simulated parts described by a scenario.
#[derive(Debug)]
pub struct Simulation {
    /// The scenario, for the parts the application models itself (models, app context).
    pub scenario: Scenario,
    pub corpus: Arc<Corpus>,
    /// The clock the devices run on.
    pub clock: Arc<dyn Clock>,
    /// With the scenario's latency and failures.
    pub engine: ReplayEngine,
    pub microphone: SimDevice,
    pub system_audio: SimDevice,
}

impl Simulation {
    /// Loads the scenario at `path` (the default scenario when `None`) and its corpus.
    pub fn load(path: Option<&Path>, clock: Arc<dyn Clock>) -> Result<Self, SimError> {
        let scenario = match path {
            Some(path) => Scenario::load(path)?,
            None => Scenario::default_scenario(),
        };
        let corpus = Arc::new(Corpus::load(&scenario.corpus_dir())?);
        Ok(Self::new(scenario, corpus, clock)?)
    }

    /// Assembles the parts; fails when a device plays a clip `corpus` lacks.
    pub fn new(
        scenario: Scenario,
        corpus: Arc<Corpus>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ScenarioError> {
        scenario.check_clips(&corpus)?;
        let engine = ReplayEngine::new(Arc::clone(&corpus))
            .with_latency(scenario.engine.latency)
            .with_failures(scenario.engine.fail_requests.iter().copied());
        let device = |kind, spec: &DeviceSpec| {
            let playlist = Playlist::new(&spec.items, &corpus, spec.sample_rate, spec.after)
                .expect("clip ids were checked");
            SimDevice::new(
                kind,
                spec.present,
                playlist,
                spec.faults.clone(),
                spec.playback,
                Arc::clone(&clock),
            )
        };
        let microphone = device(DeviceKind::Microphone, &scenario.microphone);
        let system_audio = device(DeviceKind::SystemAudio, &scenario.system_audio);
        Ok(Simulation {
            scenario,
            corpus,
            clock,
            engine,
            microphone,
            system_audio,
        })
    }
}
