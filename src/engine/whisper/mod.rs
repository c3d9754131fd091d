//! The whisper engine on whisper-rs (whisper.cpp): one loaded context per model, loaded on first
//! use and kept; a pool of decoder states so concurrent requests never share one. `run`
//! transcribes a request's chunks, `window` fits the encoder's window to each chunk of speech.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use whisper_rs::{WhisperContext, WhisperContextParameters, WhisperState};

use super::models::ModelDir;
use super::models::catalog::{WHISPER_MODELS, whisper_model};
use super::{Engine, EngineError, EngineOutput, EngineRequest, ModelOffer, Task};
use language::Requested;

mod language;
mod run;
mod window;

pub use window::{DEFAULT_FLOOR_FRAMES, EncoderWindow, FULL_WINDOW_FRAMES};

pub const ENGINE_ID: &str = "whisper";

struct Loaded {
    context: WhisperContext,
    idle: Mutex<Vec<WhisperState>>,
    /// States kept for language detection, which never run a fitted window.
    clean: Mutex<Vec<WhisperState>>,
}

impl Loaded {
    /// An idle state from `pool`, or a new one.
    fn state(&self, pool: &Mutex<Vec<WhisperState>>) -> Result<WhisperState, EngineError> {
        let popped = lock(pool).pop();
        match popped {
            Some(state) => Ok(state),
            None => self
                .context
                .create_state()
                .map_err(|e| EngineError::Failed(format!("cannot create a decoder state: {e}"))),
        }
    }
}

pub struct WhisperEngine {
    models: ModelDir,
    threads: usize,
    window: EncoderWindow,
    loaded: Mutex<HashMap<&'static str, Arc<Loaded>>>,
    /// Chunks heard again through the full window since the engine was made.
    reruns: AtomicU64,
}

/// Inference threads when none are configured: the CPUs this process may run on (honouring
/// its CPU affinity and cgroup quota), at least one.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl WhisperEngine {
    /// `threads`: inference threads per request (0 = [`default_threads`]).
    pub fn new(models: ModelDir, threads: usize) -> WhisperEngine {
        whisper_rs::install_logging_hooks();
        let threads = if threads == 0 {
            default_threads()
        } else {
            threads
        };
        WhisperEngine {
            models,
            threads,
            window: EncoderWindow::default(),
            loaded: Mutex::new(HashMap::new()),
            reruns: AtomicU64::new(0),
        }
    }

    /// The same engine with another encoder window for chunks of speech (benchmarks compare
    /// windows and floors; the server uses the default).
    pub fn with_window(mut self, window: EncoderWindow) -> WhisperEngine {
        self.window = window;
        self
    }

    /// How many chunks were heard again through the full window because the fitted one gave a
    /// doubtful text.
    pub fn reruns(&self) -> u64 {
        self.reruns.load(Ordering::Relaxed)
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
        let mut params = WhisperContextParameters::default();
        params.flash_attn(false);
        let context =
            WhisperContext::new_with_params(&path, params).map_err(|e| EngineError::Load {
                path: path.clone(),
                cause: e.to_string(),
            })?;
        tracing::info!("loaded model {} from {}", spec.id, path.display());
        let entry = Arc::new(Loaded {
            context,
            idle: Mutex::new(Vec::new()),
            clean: Mutex::new(Vec::new()),
        });
        loaded.insert(spec.id, entry.clone());
        Ok(entry)
    }

    /// Forgets a loaded model (after removal or replacement of its file).
    pub fn unload(&self, model: &str) {
        lock(&self.loaded).remove(model);
    }
}

impl Engine for WhisperEngine {
    fn id(&self) -> &'static str {
        ENGINE_ID
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
    fn offer(&self, model: &str) -> Option<ModelOffer> {
        let spec = whisper_model(model)?;
        Some(ModelOffer {
            spec,
            downloaded: self.models.is_installed(spec),
            loaded: lock(&self.loaded).contains_key(spec.id),
        })
    }

    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError> {
        let loaded = self.load(model)?;
        let language = match language::requested(request, loaded.context.is_multilingual())? {
            Requested::Known(code) => Some(code),
            Requested::Detect(among) => {
                let first = request.chunks.first();
                match first.and_then(|range| request.samples.get(range.clone())) {
                    Some(samples) if !samples.is_empty() => {
                        let mut clean = loaded.state(&loaded.clean)?;
                        let detected =
                            language::detect(&mut clean, samples, among.as_deref(), self.threads);
                        lock(&loaded.clean).push(clean);
                        Some(detected?)
                    }
                    _ => None,
                }
            }
        };
        let mut state = loaded.state(&loaded.idle)?;
        let settings = run::Settings {
            language,
            threads: self.threads,
            // The window is fitted to speech being transcribed; translation keeps the full
            // window (a fitted one turned base's German into "the most important of the world
            // is the world").
            window: if request.trimmed_to_speech && request.task == Task::Transcribe {
                self.window
            } else {
                EncoderWindow::Full
            },
        };
        let result = run::run(&mut state, request, &settings);
        // A state whose pass was aborted half-way is not reused.
        if !matches!(result, Err(EngineError::Cancelled)) {
            lock(&loaded.idle).push(state);
        }
        if let Ok((_, reruns)) = &result {
            self.reruns.fetch_add(*reruns, Ordering::Relaxed);
        }
        result.map(|(output, _)| output)
    }
}
