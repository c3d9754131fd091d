//! The engine stage, on the blocking thread that holds the engine slot: voice activity
//! detection finds the chunks of speech (switched off, the whole audio is one chunk), and the
//! engine transcribes them; audio without speech never reaches the engine.

use std::ops::Range;
use std::time::{Duration, Instant};

use crate::audio::vad::{frame_scores, plan_chunks};
use crate::engine::{Engine, EngineError, EngineOutput, EngineRequest, LanguageChoice, ModelSpec};

/// What one engine call is made of, besides the audio.
pub(super) struct EngineCall {
    pub engine: std::sync::Arc<dyn Engine>,
    pub model: &'static ModelSpec,
    /// Voice activity detection first.
    pub vad: bool,
    pub language: LanguageChoice,
    pub task: crate::engine::Task,
    pub initial_prompt: Option<String>,
}

/// What the engine stage heard, and how long its two steps took.
pub(super) struct Heard {
    pub output: Result<EngineOutput, EngineError>,
    pub vad: Duration,
    pub engine: Duration,
}

/// The chunks of `samples` to transcribe: the speech, or everything when `vad` is off.
pub fn chunks_to_transcribe(samples: &[f32], vad: bool) -> Vec<Range<usize>> {
    if vad {
        plan_chunks(&frame_scores(samples), samples.len())
    } else {
        vec![0..samples.len()]
    }
}

impl EngineCall {
    /// Runs the stage on `samples` (blocking).
    pub fn run(self, samples: &[f32]) -> Heard {
        let started = Instant::now();
        let chunks = chunks_to_transcribe(samples, self.vad);
        let vad = started.elapsed();
        if chunks.is_empty() {
            return Heard {
                output: Ok(self.nothing_heard()),
                vad,
                engine: Duration::ZERO,
            };
        }
        let started = Instant::now();
        let output = self.engine.transcribe(
            self.model.id,
            &EngineRequest {
                samples,
                chunks,
                trimmed_to_speech: self.vad,
                language: self.language,
                task: self.task,
                initial_prompt: self.initial_prompt,
            },
        );
        Heard {
            output,
            vad,
            engine: started.elapsed(),
        }
    }

    /// The answer for audio without speech: no text, and the language the engine would have
    /// named without hearing anything (English for English-only models, else the one given).
    fn nothing_heard(&self) -> EngineOutput {
        let language = match &self.language {
            _ if !self.model.multilingual() => Some("en".to_string()),
            LanguageChoice::Exact(code) => Some(code.to_ascii_lowercase()),
            LanguageChoice::Auto | LanguageChoice::Shortlist(_) => None,
        };
        EngineOutput {
            language,
            ..EngineOutput::default()
        }
    }
}
