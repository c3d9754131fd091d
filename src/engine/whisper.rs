//! The whisper engine on whisper-rs (whisper.cpp): one loaded context per model, loaded on first
//! use and kept; a pool of decoder states so concurrent requests never share one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState,
};

use super::models::ModelDir;
use super::models::catalog::{WHISPER_MODELS, whisper_model};
use super::{
    Engine, EngineError, EngineOutput, EngineRequest, LanguageChoice, ModelOffer, Segment, Task,
};

pub const ENGINE_ID: &str = "whisper";

struct Loaded {
    context: WhisperContext,
    idle: Mutex<Vec<WhisperState>>,
}

pub struct WhisperEngine {
    models: ModelDir,
    threads: usize,
    loaded: Mutex<HashMap<&'static str, Arc<Loaded>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl WhisperEngine {
    /// `threads`: inference threads per request (0 = the number of physical cores).
    pub fn new(models: ModelDir, threads: usize) -> WhisperEngine {
        whisper_rs::install_logging_hooks();
        let threads = if threads == 0 {
            num_cpus::get_physical().max(1)
        } else {
            threads
        };
        WhisperEngine {
            models,
            threads,
            loaded: Mutex::new(HashMap::new()),
        }
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
        let multilingual = loaded.context.is_multilingual();
        let popped = lock(&loaded.idle).pop();
        let mut state = match popped {
            Some(state) => state,
            None => loaded
                .context
                .create_state()
                .map_err(|e| EngineError::Failed(format!("cannot create a decoder state: {e}")))?,
        };
        let result = run(&mut state, request, multilingual, self.threads);
        lock(&loaded.idle).push(state);
        result
    }
}

/// whisper.cpp's markers for stretches without speech (`[BLANK_AUDIO]`, `[ Silence ]`): not
/// words anyone said, so silence transcribes to empty text.
fn is_non_speech_marker(text: &str) -> bool {
    let inner = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    inner.is_some_and(|t| {
        t.chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
    })
}

/// A language code whisper knows, checked without handing odd bytes to C.
fn language_id(code: &str) -> Option<i32> {
    if code.is_empty() || code.len() > 8 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    whisper_rs::get_lang_id(&code.to_ascii_lowercase())
}

fn run(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    multilingual: bool,
    threads: usize,
) -> Result<EngineOutput, EngineError> {
    let failed = |e: whisper_rs::WhisperError| EngineError::Failed(e.to_string());
    // The language to decode with; None means detect.
    let language: Option<String> = if !multilingual {
        Some("en".into())
    } else {
        match &request.language {
            LanguageChoice::Auto => None,
            LanguageChoice::Exact(code) => {
                language_id(code).ok_or_else(|| EngineError::UnknownLanguage(code.clone()))?;
                Some(code.to_ascii_lowercase())
            }
            LanguageChoice::Shortlist(codes) => {
                let ids = codes
                    .iter()
                    .map(|c| language_id(c).ok_or_else(|| EngineError::UnknownLanguage(c.clone())))
                    .collect::<Result<Vec<_>, _>>()?;
                state.pcm_to_mel(request.samples, threads).map_err(failed)?;
                let (_, probabilities) = state.lang_detect(0, threads).map_err(failed)?;
                ids.iter()
                    .zip(codes)
                    .max_by(|(a, _), (b, _)| {
                        let p =
                            |id: &&i32| probabilities.get(**id as usize).copied().unwrap_or(0.0);
                        p(a).total_cmp(&p(b))
                    })
                    .map(|(_, code)| code.to_ascii_lowercase())
            }
        }
    };

    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    params.set_n_threads(threads as i32);
    params.set_language(Some(language.as_deref().unwrap_or("auto")));
    params.set_translate(request.task == Task::Translate);
    params.set_no_context(true);
    params.set_print_special(false);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    // No temperature fallback: it samples at random from the pooled state's generator, so the
    // same audio could read differently from one request to the next.
    params.set_temperature(0.0);
    params.set_temperature_inc(0.0);
    let prompt = request
        .initial_prompt
        .as_deref()
        .map(|p| p.replace('\0', ""));
    if let Some(prompt) = prompt.as_deref().filter(|p| !p.trim().is_empty()) {
        params.set_initial_prompt(prompt);
    }
    state.full(params, request.samples).map_err(failed)?;

    let mut segments = Vec::new();
    for segment in state.as_iter() {
        let text = segment.to_str_lossy().map_err(failed)?.trim().to_string();
        if text.is_empty() || is_non_speech_marker(&text) {
            continue;
        }
        segments.push(Segment {
            start: segment.start_timestamp() as f64 / 100.0,
            end: segment.end_timestamp() as f64 / 100.0,
            text,
        });
    }
    let text = segments
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let language = language
        .or_else(|| whisper_rs::get_lang_str(state.full_lang_id_from_state()).map(str::to_string));
    Ok(EngineOutput {
        text,
        language,
        segments,
        processing_time: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn bracketed_markers_are_not_speech() {
        assert!(super::is_non_speech_marker("[BLANK_AUDIO]"));
        assert!(super::is_non_speech_marker("[ Silence ]"));
        assert!(!super::is_non_speech_marker("[1] Hello"));
        assert!(!super::is_non_speech_marker("Hello [laughs]"));
    }
}
