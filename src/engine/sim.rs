//! The replay engine of sim mode, one per engine of the build (the registry's) with that
//! engine's id and catalog, model states from the scenario,
//! transcription replayed from the recorded corpus (verbatim-sim), the scenario's latency
//! (cut short when the request is cancelled) and injected failures, and paced simulated
//! downloads. Recordings hold no word times: words asked for are spread over their segment in
//! proportion to their characters (an approximation, the same on every replay); segments carry
//! no decoder figures. A model counts as loaded from its first transcription until it is
//! unloaded, as a real engine's would.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use verbatim_sim::{ModelState, Simulation};

use super::models::ModelDir;
use super::words::spread;
use super::{
    Engine, EngineError, EngineOutput, EngineRequest, ModelOffer, ModelSpec, Segment, Task,
};
use crate::cancel::Cancel;

/// The engine sim mode answers as when a scenario names none: the build's default, so that
/// clients see the same ids as in production.
pub fn default_engine() -> &'static str {
    super::registry::ENGINES
        .first()
        .map_or(super::models::catalog::WHISPER_ENGINE, |kind| kind.id)
}

pub struct SimEngine {
    sim: Arc<Simulation>,
    /// The engine it stands in for, whose catalog it offers.
    engine: &'static str,
    /// Models downloaded during this run (on top of the scenario's `present` ones).
    downloaded: Mutex<BTreeMap<&'static str, bool>>,
    /// Models that transcribed since they were last unloaded.
    loaded: Mutex<BTreeSet<&'static str>>,
}

impl SimEngine {
    /// The replay engine standing in for the build's default engine.
    pub fn new(sim: Arc<Simulation>) -> SimEngine {
        SimEngine::standing_in_for(sim, default_engine())
    }

    /// The replay engine standing in for `engine` (its id and its models).
    pub fn standing_in_for(sim: Arc<Simulation>, engine: &'static str) -> SimEngine {
        SimEngine {
            sim,
            engine,
            downloaded: Mutex::new(BTreeMap::new()),
            loaded: Mutex::new(BTreeSet::new()),
        }
    }

    fn catalog(&self) -> impl Iterator<Item = &'static ModelSpec> + '_ {
        super::catalog::all_models().filter(|spec| spec.engine == self.engine)
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
        self.state(spec.id) == ModelState::Present || lock(&self.downloaded).contains_key(spec.id)
    }

    fn is_loaded(&self, spec: &ModelSpec) -> bool {
        lock(&self.loaded).contains(spec.id)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A recorded segment, its words spread over it when `words` are asked for.
fn replayed(segment: verbatim_sim::Segment, words: bool) -> Segment {
    let mut segment = Segment::from(segment);
    if words {
        segment.words = spread(&segment.text, segment.start, segment.end);
    }
    segment
}

impl Engine for SimEngine {
    fn id(&self) -> &'static str {
        self.engine
    }

    fn models(&self) -> Vec<ModelOffer> {
        self.catalog()
            .map(|spec| ModelOffer {
                spec,
                downloaded: self.is_downloaded(spec),
                loaded: self.is_loaded(spec),
            })
            .collect()
    }

    fn offer(&self, model: &str) -> Option<ModelOffer> {
        let spec = self.catalog().find(|spec| spec.id == model)?;
        Some(ModelOffer {
            spec,
            downloaded: self.is_downloaded(spec),
            loaded: self.is_loaded(spec),
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
        if let Some(spec) = self.catalog().find(|spec| spec.id == model) {
            lock(&self.loaded).insert(spec.id);
        }
        // The recordings hold what each clip says, not its English translation; English
        // speech translates to itself.
        if request.task == Task::Translate
            && let Some(language) = replay.language.as_deref().filter(|l| *l != "en")
        {
            return Err(EngineError::Unsupported(format!(
                "Sim mode replays recorded transcriptions and has no recorded translation of \
                 this '{language}' speech. Translate with a real model."
            )));
        }
        let latency = Duration::from_secs_f64(replay.processing_time.max(0.0));
        if !self.wait(latency, &request.cancel) {
            return Err(EngineError::Cancelled);
        }
        Ok(EngineOutput {
            processing_time: Some(replay.processing_time),
            text: replay.text,
            language: replay.language,
            segments: replay
                .segments
                .into_iter()
                .map(|s| replayed(s, request.words))
                .collect(),
        })
    }

    fn hears_whole_clips(&self) -> bool {
        true
    }

    fn unload(&self, model: &str) -> bool {
        lock(&self.loaded).remove(model)
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
                lock(&self.downloaded).insert(spec.id, true);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use verbatim_sim::{Corpus, Latency, RealClock, Scenario, Simulation};

    use super::*;
    use crate::engine::{LanguageChoice, Task};

    fn engine() -> SimEngine {
        let mut scenario = Scenario::default_scenario();
        scenario.engine.latency = Latency::Fixed(0.0);
        let corpus = Arc::new(Corpus::load(&scenario.corpus_dir()).unwrap());
        let sim = Simulation::new(scenario, corpus, Arc::new(RealClock::new())).unwrap();
        SimEngine::new(Arc::new(sim))
    }

    fn hear(engine: &SimEngine, samples: &[f32], words: bool) -> EngineOutput {
        let request = EngineRequest {
            samples,
            chunks: std::iter::once(0..samples.len()).collect(),
            trimmed_to_speech: false,
            language: LanguageChoice::Auto,
            task: Task::Transcribe,
            initial_prompt: None,
            words,
            cancel: Cancel::new(),
            calls_at_once: 1,
            provisional: false,
            said_before: None,
        };
        engine.transcribe("tiny.en", &request).unwrap()
    }

    #[test]
    fn replayed_words_are_spread_over_their_segment_the_same_every_time() {
        let engine = engine();
        let clip = engine.sim.corpus.clip("en-long-minutes").unwrap();
        let heard = hear(&engine, &clip.samples, true);
        assert!(heard.segments.len() > 3, "{heard:?}");
        for segment in &heard.segments {
            let said: Vec<&str> = segment.words.iter().map(|w| w.word.as_str()).collect();
            assert_eq!(
                said.join(" "),
                segment
                    .text
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            assert_eq!(segment.words[0].start, segment.start);
            let last = segment.words.last().unwrap();
            assert!((last.end - segment.end).abs() < 1e-9, "{segment:?}");
            for pair in segment.words.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert!(pair[0].start <= pair[0].end);
            }
            // Time goes by characters: the longest word lasts longest.
            let longest = segment
                .words
                .iter()
                .max_by_key(|w| w.word.chars().count())
                .unwrap();
            let duration = |w: &crate::engine::Word| w.end - w.start;
            assert!(
                segment
                    .words
                    .iter()
                    .all(|w| duration(w) <= duration(longest) + 1e-9)
            );
            assert_eq!(segment.detail, None);
        }
        assert_eq!(hear(&engine, &clip.samples, true), heard);
        let plain = hear(&engine, &clip.samples, false);
        assert!(plain.segments.iter().all(|s| s.words.is_empty()));
        assert_eq!(plain.text, heard.text);
    }
}
