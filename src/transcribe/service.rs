//! The transcription service: resolves the engine and model (contract's override rules),
//! decodes on a blocking thread, waits for a free slot (bounded queue), runs the engine,
//! then normalises numbers and applies corrections.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Semaphore;

use super::corrections::{Correction, apply_corrections};
use super::numbers::normalize_numbers;
use super::options::{ResponseFormat, TranscribeOptions};
use crate::api::ApiError;
use crate::audio::decode::{DecodeError, decode_file};
use crate::engine::{Engine, EngineError, EngineRequest, ModelOffer, Task};
use crate::store::{Store, preferences};

/// The Transcription result object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptionResult {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub duration: f64,
    pub processing_time: f64,
    pub engine: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<SegmentOut>>,
    /// The engine's text before numbers and corrections (kept in history, not sent).
    #[serde(skip)]
    pub raw_text: String,
    /// Where the time went (sent as the `Server-Timing` header, not in the body).
    #[serde(skip)]
    pub stages: StageTimes,
}

/// Wall time of each step of one transcription.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes {
    /// Reading and resampling the audio (zero for samples already in memory).
    pub decode: Duration,
    /// Waiting for a free engine slot.
    pub queue: Duration,
    /// The engine call, measured around it on the blocking thread that runs it.
    pub engine: Duration,
    /// Number normalization, corrections and segment conversion.
    pub post: Duration,
}

impl StageTimes {
    /// Decode, inference and post-processing: the `processing_time` (queueing not counted).
    pub fn busy(&self) -> Duration {
        self.decode + self.engine + self.post
    }

    /// The `Server-Timing` header value (W3C Server Timing): milliseconds per stage.
    pub fn server_timing(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "decode;dur={:.3}, queue;dur={:.3}, engine;dur={:.3}, post;dur={:.3}",
            ms(self.decode),
            ms(self.queue),
            ms(self.engine),
            ms(self.post)
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentOut {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

/// The engine and model a request runs on.
#[derive(Clone)]
pub struct Resolved {
    pub engine: Arc<dyn Engine>,
    pub offer: ModelOffer,
}

/// Runs transcriptions with a bounded number in flight and a bounded queue behind them.
pub struct Transcriber {
    engines: Vec<Arc<dyn Engine>>,
    slots: Semaphore,
    waiting: AtomicUsize,
    max_waiting: usize,
}

/// Requests allowed to wait for a slot before new ones get 503.
pub const DEFAULT_QUEUE: usize = 16;

impl Transcriber {
    /// `slots`: transcriptions run at once (each holds one decoder state).
    pub fn new(engines: Vec<Arc<dyn Engine>>, slots: usize, max_waiting: usize) -> Transcriber {
        Transcriber {
            engines,
            slots: Semaphore::new(slots.max(1)),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    pub fn engines(&self) -> &[Arc<dyn Engine>] {
        &self.engines
    }

    fn engine(&self, id: &str) -> Option<&Arc<dyn Engine>> {
        self.engines.iter().find(|e| e.id() == id)
    }

    /// The selection stored in the preferences, if it names an engine of this build.
    pub fn selected(&self, store: &Store) -> Result<Option<Resolved>, ApiError> {
        let engine_id = store.pref_text(&preferences::SELECTED_ENGINE)?;
        let model_id = store.pref_text(&preferences::SELECTED_MODEL)?;
        let Some(engine) = self.engine(&engine_id) else {
            return Ok(None);
        };
        Ok(engine.offer(&model_id).map(|offer| Resolved {
            engine: engine.clone(),
            offer,
        }))
    }

    /// The contract's engine/model override rules.
    pub fn resolve(
        &self,
        store: &Store,
        engine: Option<&str>,
        model: Option<&str>,
    ) -> Result<Resolved, ApiError> {
        let unknown_engine = |e: &str| ApiError::BadRequest(format!("Unknown engine '{e}'"));
        match (engine, model) {
            (None, None) => self.selected(store)?.ok_or_else(|| {
                ApiError::ServiceUnavailable("No engine selected. Select an engine first.".into())
            }),
            (Some(e), None) => {
                let engine = self.engine(e).ok_or_else(|| unknown_engine(e))?;
                if let Some(selected) = self.selected(store)?
                    && selected.engine.id() == engine.id()
                {
                    return Ok(selected);
                }
                let models = engine.models();
                let offer = models
                    .iter()
                    .find(|m| m.downloaded)
                    .or(models.first())
                    .cloned()
                    .ok_or_else(|| ApiError::BadRequest(format!("Engine '{e}' offers no model")))?;
                Ok(Resolved {
                    engine: engine.clone(),
                    offer,
                })
            }
            (None, Some(m)) => {
                let offering: Vec<_> = self
                    .engines
                    .iter()
                    .filter_map(|engine| {
                        engine.offer(m).map(|offer| Resolved {
                            engine: engine.clone(),
                            offer,
                        })
                    })
                    .collect();
                match offering.as_slice() {
                    [] => Err(ApiError::BadRequest(format!("Unknown model '{m}'"))),
                    [one] => Ok(one.clone()),
                    many => Err(ApiError::BadRequest(format!(
                        "Ambiguous model id '{m}' -- matches engines: {}. Specify 'engine' too.",
                        many.iter()
                            .map(|r| r.engine.id())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))),
                }
            }
            (Some(e), Some(m)) => {
                let engine = self.engine(e).ok_or_else(|| unknown_engine(e))?;
                let offer = engine.offer(m).ok_or_else(|| {
                    ApiError::BadRequest(format!("Model '{m}' is not offered by engine '{e}'"))
                })?;
                Ok(Resolved {
                    engine: engine.clone(),
                    offer,
                })
            }
        }
    }

    /// Everything before decoding: options, resolution, capability checks. `await_download`
    /// lets a request on a model without weights through (the caller fetches them first).
    pub fn plan(
        &self,
        store: &Store,
        options: &TranscribeOptions,
        await_download: bool,
    ) -> Result<Resolved, ApiError> {
        options.validate()?;
        let resolved = self.resolve(store, options.engine.as_deref(), options.model.as_deref())?;
        let spec = resolved.offer.spec;
        if options.task == Some(Task::Translate) && !spec.multilingual() {
            return Err(ApiError::BadRequest(format!(
                "Model '{}' cannot translate: it is English-only. Use a multilingual model such as 'base'.",
                spec.id
            )));
        }
        if options.target_language.is_some() {
            return Err(ApiError::NotImplemented(
                "Target-language translation needs a translation provider; none is configured on this host"
                    .into(),
            ));
        }
        if !resolved.offer.downloaded && !await_download {
            return Err(not_configured(resolved.engine.id()));
        }
        Ok(resolved)
    }

    /// Transcribes the audio file at `path` (`hint`: extension or MIME subtype).
    pub async fn transcribe(
        &self,
        resolved: &Resolved,
        path: &Path,
        hint: Option<String>,
        options: &TranscribeOptions,
        post: PostProcessing,
    ) -> Result<TranscriptionResult, ApiError> {
        let decode_started = Instant::now();
        let owned_path = path.to_path_buf();
        let decoded =
            tokio::task::spawn_blocking(move || decode_file(&owned_path, hint.as_deref()))
                .await
                .map_err(|e| ApiError::internal("audio decoding stopped", e))?
                .map_err(decode_error)?;
        let decode_time = decode_started.elapsed();
        self.transcribe_samples(
            resolved,
            decoded.samples,
            decoded.duration_secs,
            decode_time,
            options,
            post,
        )
        .await
    }

    /// Transcribes 16 kHz mono samples already in memory (captured or decoded); `prior_work`
    /// is time already spent on them (decoding), counted in `processing_time`.
    pub async fn transcribe_samples(
        &self,
        resolved: &Resolved,
        samples: Vec<f32>,
        duration_secs: f64,
        prior_work: Duration,
        options: &TranscribeOptions,
        post: PostProcessing,
    ) -> Result<TranscriptionResult, ApiError> {
        let queued = Instant::now();
        let _permit = self.acquire_slot().await?;
        let queue = queued.elapsed();
        let engine = resolved.engine.clone();
        let model = resolved.offer.spec.id;
        let language = options.language_choice();
        let task = options.task.unwrap_or(Task::Transcribe);
        let initial_prompt = post.initial_prompt(options.prompt.as_deref());
        let (output, engine_time) = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let output = engine.transcribe(
                model,
                &EngineRequest {
                    samples: &samples,
                    language,
                    task,
                    initial_prompt,
                },
            );
            (output, started.elapsed())
        })
        .await
        .map_err(|e| ApiError::internal("the engine stopped", e))?;
        let output = output.map_err(|e| engine_error(e, resolved.engine.id()))?;
        let post_started = Instant::now();

        let english =
            output.language.as_deref().is_none_or(|l| l == "en") || task == Task::Translate;
        let finish = |text: &str| post.apply(text, english, options);
        let text = finish(&output.text);
        let segments = (options.response_format == ResponseFormat::VerboseJson).then(|| {
            output
                .segments
                .iter()
                .map(|s| SegmentOut {
                    start: round_ms(s.start),
                    end: round_ms(s.end),
                    text: finish(&s.text),
                })
                .collect()
        });
        let stages = StageTimes {
            decode: prior_work,
            queue,
            engine: engine_time,
            post: post_started.elapsed(),
        };
        Ok(TranscriptionResult {
            text,
            language: output.language,
            duration: round_ms(duration_secs),
            processing_time: round_ms(
                output
                    .processing_time
                    .unwrap_or(stages.busy().as_secs_f64()),
            ),
            engine: resolved.engine.id().into(),
            model: Some(model.into()),
            segments,
            raw_text: output.text,
            stages,
        })
    }

    async fn acquire_slot(&self) -> Result<tokio::sync::SemaphorePermit<'_>, ApiError> {
        if let Ok(permit) = self.slots.try_acquire() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::EngineBusy {
                retry_after_secs: 5,
            });
        }
        let permit = self.slots.acquire().await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        permit.map_err(|e| ApiError::internal("transcription queue closed", e))
    }
}

/// The 409 for an engine whose weights are missing.
pub fn not_configured(engine: &str) -> ApiError {
    ApiError::Conflict(format!(
        "Engine '{engine}' is not configured (missing API key or downloaded weights). Pass ?await_download=1 to wait for the download."
    ))
}

/// Text steps after the engine, with the dictionary they use.
#[derive(Debug, Clone, Default)]
pub struct PostProcessing {
    pub normalize_numbers_default: bool,
    pub corrections: Vec<Correction>,
    pub recognition_terms: Vec<String>,
}

impl PostProcessing {
    /// The number preference and the enabled dictionary (terms and corrections).
    pub fn from_store(store: &Store) -> Result<PostProcessing, ApiError> {
        Ok(PostProcessing {
            normalize_numbers_default: store.pref_bool(&preferences::NORMALIZE_NUMBERS)?,
            corrections: store.enabled_corrections()?,
            recognition_terms: store.enabled_terms()?.into_iter().map(|t| t.term).collect(),
        })
    }

    /// The request prompt joined (newline) with the enabled recognition terms.
    pub fn initial_prompt(&self, prompt: Option<&str>) -> Option<String> {
        let terms = self.recognition_terms.join(", ");
        match (prompt.filter(|p| !p.trim().is_empty()), terms.is_empty()) {
            (None, true) => None,
            (Some(p), true) => Some(p.to_string()),
            (None, false) => Some(terms),
            (Some(p), false) => Some(format!("{p}\n{terms}")),
        }
    }

    fn apply(&self, text: &str, english: bool, options: &TranscribeOptions) -> String {
        let mut text = text.to_string();
        if english
            && options
                .normalize_numbers
                .unwrap_or(self.normalize_numbers_default)
        {
            text = normalize_numbers(&text);
        }
        if options.apply_corrections.unwrap_or(true) && !self.corrections.is_empty() {
            text = apply_corrections(&text, &self.corrections);
        }
        text
    }
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn decode_error(err: DecodeError) -> ApiError {
    match err {
        DecodeError::Io(e) => ApiError::internal("could not read the spooled audio", e),
        other => ApiError::BadRequest(other.to_string()),
    }
}

fn engine_error(err: EngineError, engine: &str) -> ApiError {
    match err {
        EngineError::UnknownLanguage(code) => {
            ApiError::BadRequest(format!("Unknown language code '{code}'"))
        }
        EngineError::UnknownModel(model) => {
            ApiError::BadRequest(format!("Unknown model '{model}'"))
        }
        EngineError::NotInstalled { .. } => not_configured(engine),
        EngineError::Load { .. } | EngineError::Failed(_) | EngineError::NotInBuild(_) => {
            ApiError::internal("transcription failed", &err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::catalog::whisper_model;
    use crate::engine::{EngineOutput, ModelOffer};

    /// An engine offering fixed models; transcription waits until `release` is closed.
    struct Gate {
        id: &'static str,
        models: Vec<&'static str>,
        release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
    }

    impl Engine for Gate {
        fn id(&self) -> &'static str {
            self.id
        }
        fn models(&self) -> Vec<ModelOffer> {
            self.models
                .iter()
                .map(|id| ModelOffer {
                    spec: whisper_model(id).unwrap(),
                    downloaded: true,
                    loaded: false,
                })
                .collect()
        }
        fn transcribe(&self, _: &str, _: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            let _ = self.release.lock().unwrap().recv();
            Ok(EngineOutput {
                text: String::new(),
                language: None,
                segments: vec![],
                processing_time: None,
            })
        }
    }

    fn gate(
        id: &'static str,
        models: Vec<&'static str>,
    ) -> (Arc<dyn Engine>, std::sync::mpsc::Sender<()>) {
        let (tx, rx) = std::sync::mpsc::channel();
        (
            Arc::new(Gate {
                id,
                models,
                release: std::sync::Mutex::new(rx),
            }),
            tx,
        )
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_model_offered_by_two_engines_is_ambiguous_without_an_engine() {
        let (_dir, store) = store();
        let (a, _) = gate("whisper", vec!["tiny", "base"]);
        let (b, _) = gate("other", vec!["base"]);
        let t = Transcriber::new(vec![a, b], 1, 1);
        let err = t.resolve(&store, None, Some("base")).err().unwrap();
        assert_eq!(
            err.message(),
            "Ambiguous model id 'base' -- matches engines: whisper, other. Specify 'engine' too."
        );
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("transcribe_ambiguous_model", err.body());
        });
        let picked = t.resolve(&store, Some("other"), Some("base")).ok().unwrap();
        assert_eq!(picked.engine.id(), "other");
        let only = t.resolve(&store, None, Some("tiny")).ok().unwrap();
        assert_eq!(only.engine.id(), "whisper");
        // Engine alone: its first downloaded model when it is not the selected engine.
        let first = t.resolve(&store, Some("other"), None).ok().unwrap();
        assert_eq!(first.offer.spec.id, "base");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn past_the_queue_requests_get_503_with_retry_after() {
        let (_dir, store) = store();
        let (engine, release) = gate("whisper", vec!["tiny"]);
        let t = Arc::new(Transcriber::new(vec![engine], 1, 1));
        let resolved = t.resolve(&store, None, Some("tiny")).ok().unwrap();
        let audio = tempfile::NamedTempFile::new().unwrap();
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/audio/speech_16k_mono_s16.wav"
            ),
            audio.path(),
        )
        .unwrap();
        let run = |t: Arc<Transcriber>, r: Resolved, path: std::path::PathBuf| async move {
            t.transcribe(
                &r,
                &path,
                None,
                &TranscribeOptions::default(),
                PostProcessing::default(),
            )
            .await
        };
        // One runs, one waits in the queue of one...
        let first = tokio::spawn(run(t.clone(), resolved.clone(), audio.path().into()));
        while t.slots.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let second = tokio::spawn(run(t.clone(), resolved.clone(), audio.path().into()));
        while t.waiting.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        // ...and the next is refused at once.
        let third = run(t.clone(), resolved.clone(), audio.path().into()).await;
        assert_eq!(
            third,
            Err(ApiError::EngineBusy {
                retry_after_secs: 5
            })
        );
        release.send(()).unwrap();
        release.send(()).unwrap();
        assert!(first.await.unwrap().is_ok());
        assert!(second.await.unwrap().is_ok());
    }

    #[test]
    fn the_prompt_is_joined_with_the_terms_by_a_newline() {
        let mut post = PostProcessing::default();
        assert_eq!(
            post.initial_prompt(Some("Meeting notes")),
            Some("Meeting notes".into())
        );
        assert_eq!(post.initial_prompt(Some("  ")), None);
        post.recognition_terms = vec!["Verbatim".into(), "Kubernetes".into()];
        assert_eq!(
            post.initial_prompt(None),
            Some("Verbatim, Kubernetes".into())
        );
        assert_eq!(
            post.initial_prompt(Some("Meeting notes")),
            Some("Meeting notes\nVerbatim, Kubernetes".into())
        );
    }

    #[test]
    fn numbers_are_normalised_for_english_only_and_corrections_run_last() {
        let post = PostProcessing {
            normalize_numbers_default: true,
            corrections: vec![Correction {
                original: "25".into(),
                replacement: "twenty-five".into(),
                case_sensitive: false,
            }],
            recognition_terms: vec![],
        };
        let mut options = TranscribeOptions::default();
        assert_eq!(
            post.apply("twenty five cats", true, &options),
            "twenty-five cats"
        );
        assert_eq!(
            post.apply("twenty five cats", false, &options),
            "twenty five cats"
        );
        options.apply_corrections = Some(false);
        assert_eq!(post.apply("twenty five cats", true, &options), "25 cats");
        options.normalize_numbers = Some(false);
        assert_eq!(
            post.apply("twenty five cats", true, &options),
            "twenty five cats"
        );
    }
}
