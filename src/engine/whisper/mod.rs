//! The whisper engine on whisper-rs (whisper.cpp): one loaded context per model, loaded on first
//! use and kept (and a second one that aligns words by DTW, loaded for the first request for
//! words); a pool of decoder states so concurrent requests never share one. `context` loads
//! them, `run` transcribes a request's chunks, `window` fits the encoder's window to each chunk
//! of speech, `recovery` says how a rejected chunk is heard again, `tokens` reads a decoded
//! segment's tokens, figures and words.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use whisper_rs::{DtwModelPreset, WhisperContext, WhisperState};

use super::models::ModelDir;
use super::models::catalog::{WHISPER_MODELS, whisper_model};
use super::{Engine, EngineError, EngineOutput, EngineRequest, ModelOffer, Task};
use context::{Decoders, alignment_heads};
use language::Requested;

mod callbacks;
mod context;
mod decode;
mod end_again;
mod kind;
mod language;
mod log;
mod pass;
mod recovery;
mod run;
mod tokens;
mod window;
mod workers;

pub use kind::KIND;
pub use pass::Retries;
pub use recovery::{Recovery, Retry};
pub use window::{DEFAULT_FLOOR_FRAMES, EncoderWindow, FULL_WINDOW_FRAMES, WINDOW_STEP_FRAMES};

pub use super::models::catalog::WHISPER_ENGINE as ENGINE_ID;

struct Loaded {
    path: PathBuf,
    /// The model's alignment heads, when whisper.cpp has a preset for it.
    heads: Option<DtwModelPreset>,
    /// The copy every request runs on (aligning tokens with [`WordTiming::DtwAlways`]).
    plain: Arc<Decoders>,
    /// States of `plain` kept for language detection, which never run a fitted window.
    clean: Mutex<Vec<WhisperState>>,
    /// With [`WordTiming::DtwOnDemand`]: the copy that aligns tokens, loaded for the first
    /// request for words.
    aligned: Mutex<Option<Arc<Decoders>>>,
}

/// How words are timed when a request asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordTiming {
    /// DTW on a second copy of the model, loaded for the first request for words; other
    /// requests run on a copy without it, at no cost.
    DtwOnDemand,
    /// DTW on the one copy of the model every request runs on (each request pays for it).
    DtwAlways,
    /// whisper.cpp's token timestamps alone, without DTW.
    TokenTimestamps,
}

pub struct WhisperEngine {
    models: ModelDir,
    threads: usize,
    workers: usize,
    window: EncoderWindow,
    recovery: Recovery,
    timing: WordTiming,
    loaded: Mutex<HashMap<&'static str, Arc<Loaded>>>,
    /// Retries since the engine was made.
    retries: Mutex<Retries>,
}

/// Inference threads when none are configured: the CPUs this process may run on (honouring
/// its CPU affinity and cgroup quota), at least one.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Decoder states a file's chunks are shared out among: two once there are two threads to
/// split. whisper.cpp's decoder is a chain of small products that two threads share poorly;
/// two states of one thread each are faster than one of two, the texts unchanged
/// (`window_floor ... 256/w1 256/w2`, docs/journal/). The second state holds buffers of its own
/// (`examples/engine_memory`; docs/limits.md).
fn default_workers(threads: usize) -> usize {
    if threads >= 2 { 2 } else { 1 }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl WhisperEngine {
    /// `threads`: inference threads per request (0 = [`default_threads`]).
    pub fn new(models: ModelDir, threads: usize) -> WhisperEngine {
        log::install();
        let threads = if threads == 0 {
            default_threads()
        } else {
            threads
        };
        WhisperEngine {
            models,
            threads,
            workers: default_workers(threads),
            window: EncoderWindow::default(),
            recovery: Recovery::default(),
            timing: WordTiming::DtwOnDemand,
            loaded: Mutex::new(HashMap::new()),
            retries: Mutex::new(Retries::default()),
        }
    }

    /// The same engine with another encoder window for chunks of speech (benchmarks compare
    /// windows and floors; the server uses the default).
    pub fn with_window(mut self, window: EncoderWindow) -> WhisperEngine {
        self.window = window;
        self
    }

    /// The same engine hearing rejected chunks again another way (benchmarks compare them;
    /// the server uses the default).
    /// Decoder states a request's chunks are shared out among, the threads split between them.
    pub fn with_workers(mut self, workers: usize) -> WhisperEngine {
        self.workers = workers.max(1);
        self
    }

    pub fn with_recovery(mut self, recovery: Recovery) -> WhisperEngine {
        self.recovery = recovery;
        self
    }

    /// The same engine timing words another way (benchmarks compare them; the server uses
    /// [`WordTiming::DtwOnDemand`]).
    pub fn with_word_timing(mut self, timing: WordTiming) -> WhisperEngine {
        self.timing = timing;
        self
    }

    /// The retries since the engine was made: chunks heard again, passes after the first, and
    /// chunks whose loop was cut out.
    pub fn retries(&self) -> Retries {
        *lock(&self.retries)
    }

    fn load(&self, model: &str) -> Result<Arc<Loaded>, EngineError> {
        let spec = whisper_model(model).ok_or_else(|| EngineError::UnknownModel(model.into()))?;
        let mut loaded = lock(&self.loaded);
        if let Some(hit) = loaded.get(spec.id) {
            return Ok(hit.clone());
        }
        let path = self.models.weights_path(spec);
        if !self.models.is_installed(spec) {
            return Err(EngineError::NotInstalled {
                model: spec.id.into(),
                path,
            });
        }
        let heads = alignment_heads(spec.id);
        let dtw = heads
            .clone()
            .filter(|_| self.timing == WordTiming::DtwAlways);
        let plain = Arc::new(Decoders::load(&path, dtw)?);
        tracing::info!("loaded model {} from {}", spec.id, path.display());
        let entry = Arc::new(Loaded {
            path,
            heads,
            plain,
            clean: Mutex::new(Vec::new()),
            aligned: Mutex::new(None),
        });
        loaded.insert(spec.id, entry.clone());
        Ok(entry)
    }

    /// The copy of `loaded` a request runs on: for words, the one that aligns them by DTW
    /// (loaded the first time) when the model has alignment heads; else the plain one.
    fn decoders(&self, loaded: &Loaded, words: bool) -> Result<Arc<Decoders>, EngineError> {
        let heads = loaded.heads.clone();
        let Some(heads) = heads.filter(|_| words && self.timing == WordTiming::DtwOnDemand) else {
            return Ok(loaded.plain.clone());
        };
        let mut aligned = lock(&loaded.aligned);
        if let Some(hit) = aligned.as_ref() {
            return Ok(hit.clone());
        }
        let decoders = Arc::new(Decoders::load(&loaded.path, Some(heads))?);
        tracing::info!(
            "loaded a copy of {} that aligns words by DTW",
            loaded.path.display()
        );
        *aligned = Some(decoders.clone());
        Ok(decoders)
    }
}

impl Engine for WhisperEngine {
    fn id(&self) -> &'static str {
        ENGINE_ID
    }

    fn chunks_at_once(&self) -> usize {
        self.workers
    }

    /// Forgets a loaded model, with its copy that aligns words, and gives the memory back.
    fn unload(&self, model: &str) -> bool {
        crate::engine::forget_loaded(&self.loaded, model)
    }

    fn models(&self) -> Vec<ModelOffer> {
        let loaded = lock(&self.loaded);
        WHISPER_MODELS
            .iter()
            .map(|spec| ModelOffer {
                spec,
                downloaded: self.models.is_installed(spec),
                loaded: loaded.contains_key(spec.id),
            })
            .collect()
    }

    /// One model's state, without reading every other model's manifest (per-request path).
    fn hears_said_before(&self) -> bool {
        true
    }

    fn offer(&self, model: &str) -> Option<ModelOffer> {
        let spec = whisper_model(model)?;
        Some(ModelOffer {
            spec,
            downloaded: self.models.is_installed(spec),
            loaded: lock(&self.loaded).contains_key(spec.id),
        })
    }

    fn preload(&self, model: &str) -> Result<(), EngineError> {
        let loaded = self.load(model)?;
        // And one decoder state ready, as the first call would make it.
        let decoders = &loaded.plain;
        let state = decoders.state(&decoders.idle)?;
        lock(&decoders.idle).push(state);
        Ok(())
    }

    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError> {
        let loaded = self.load(model)?;
        // Calls of one transcription running side by side share the threads.
        let threads = (self.threads / request.calls_at_once.max(1)).max(1);
        let multilingual = loaded.plain.context.is_multilingual();
        let language = match language::requested(request, multilingual)? {
            Requested::Known(code) => Some(code),
            Requested::Detect(among) => {
                let first = request.chunks.first();
                match first.and_then(|range| request.samples.get(range.clone())) {
                    Some(samples) if !samples.is_empty() => {
                        let mut clean = loaded.plain.state(&loaded.clean)?;
                        let detected =
                            language::detect(&mut clean, samples, among.as_deref(), threads);
                        lock(&loaded.clean).push(clean);
                        Some(detected?)
                    }
                    _ => None,
                }
            }
        };
        let decoders = self.decoders(&loaded, request.words)?;
        let mut state = decoders.state(&decoders.idle)?;
        let settings = pass::Settings {
            language,
            threads,
            workers: self.workers,
            // The window is fitted to speech being transcribed; translation keeps the full
            // window (a fitted one turned base's German into "the most important of the world
            // is the world").
            window: if request.trimmed_to_speech && request.task == Task::Transcribe {
                self.window
            } else {
                EncoderWindow::Full
            },
            // A provisional pass is replaced by the next one: a rejected text is cut, not heard
            // again through a wider window (which made passes on 10-12 s chunks take 1.5 s).
            recovery: if request.provisional {
                Recovery::none()
            } else {
                self.recovery.clone()
            },
            first_timestamp: decoders.context.token_beg(),
            aligned: decoders.aligns,
            reading: tokens::Reading {
                first_special: decoders.context.token_eot(),
                temperature: pass::TEMPERATURE,
                words: request.words,
            },
            said_before: said_before(&decoders.context, request)?,
        };
        let result = workers::run(&mut state, &decoders, request, &settings);
        // A state whose pass was aborted half-way is not reused.
        if matches!(result, Err(EngineError::Cancelled)) {
            tracing::debug!(model, "engine call cancelled");
        } else {
            lock(&decoders.idle).push(state);
        }
        if let Ok((_, retries)) = &result {
            *lock(&self.retries) += *retries;
        }
        result.map(|(output, _)| output)
    }
}

/// The most tokens of text said before that a decode is made to read: whisper.cpp's decoder
/// holds 224 tokens of its own text, and the new text needs room after them.
const MOST_SAID_TOKENS: usize = 96;

/// The request's audio said before, its text tokenized as the decoder writes text (after a
/// space). Text longer than [`MOST_SAID_TOKENS`], or none, gives no tokens: that audio is then
/// not heard at all.
fn said_before(
    context: &WhisperContext,
    request: &EngineRequest<'_>,
) -> Result<Option<pass::Said>, EngineError> {
    let Some(said) = request.said_before.as_ref() else {
        return Ok(None);
    };
    let text = said.text.replace('\0', "");
    let text = text.trim();
    let mut tokens = if text.is_empty() {
        Vec::new()
    } else {
        context
            .tokenize(&format!(" {text}"), 4 * text.len() + 8)
            .map_err(|e| {
                EngineError::Failed(format!("cannot tokenize the text said before: {e}"))
            })?
    };
    if tokens.len() > MOST_SAID_TOKENS {
        tokens.clear();
    }
    Ok(Some(pass::Said {
        text: text.to_string(),
        tokens,
        seconds: said.samples as f64 / 16_000.0,
    }))
}
