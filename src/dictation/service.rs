//! The dictation service: drives the state machine, captures the microphone at 16 kHz on its own
//! thread, then transcribes with the session's workflow, saves the transcript to history (the
//! session id is the entry id) and inserts it. Session status is kept in SQLite.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::context::AppContext;
use super::machine::{DictationError, Effect, Event, State, apply};
use super::workflow_match::matching_workflow;
use crate::api::ApiError;
use crate::app::App;
use crate::audio::capture::Feed;
use crate::audio::resample::TARGET_RATE;
use crate::engine::Task;
use crate::recorder::service::capture_error;
use crate::store::{DictationSession, LanguageMode, NewHistoryEntry, Workflow, preferences};
use crate::transcribe::corrections::{Correction, apply_corrections};
use crate::transcribe::options::TranscribeOptions;

/// How long one read of the microphone waits.
const READ_SLICE: Duration = Duration::from_millis(20);

/// What `GET /v1/dictation/status` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub state: &'static str,
    pub is_recording: bool,
    pub active_workflow: Option<(Uuid, String)>,
}

/// What a successful start answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    pub id: Uuid,
    pub workflow: Option<(Uuid, String)>,
}

/// Dictation for one application.
#[derive(Default)]
pub struct Dictation {
    inner: tokio::sync::Mutex<Inner>,
}

struct Inner {
    state: State,
    stop: Arc<AtomicBool>,
    session: Option<Session>,
    capture: Option<JoinHandle<Vec<f32>>>,
}

impl Default for Inner {
    fn default() -> Self {
        Inner {
            state: State::Idle,
            stop: Arc::new(AtomicBool::new(false)),
            session: None,
            capture: None,
        }
    }
}

/// The active session's settings, fixed at start.
#[derive(Debug, Clone)]
struct Session {
    started_at: DateTime<Utc>,
    workflow: Option<Workflow>,
    context: AppContext,
}

fn now() -> f64 {
    Utc::now().timestamp_millis() as f64 / 1000.0
}

fn machine_error(err: DictationError) -> ApiError {
    match err {
        DictationError::NotIdle | DictationError::NotRecording => {
            ApiError::Conflict(err.to_string())
        }
        DictationError::Unexpected { .. } => ApiError::internal("dictation state", err),
    }
}

/// The workflow named by a start request, checked per the contract.
pub fn requested_workflow(app: &App, id: Uuid) -> Result<Workflow, ApiError> {
    let workflow = app
        .store
        .workflow(&id)?
        .ok_or_else(|| ApiError::NotFound("Workflow not found".into()))?;
    if !workflow.enabled {
        return Err(ApiError::Conflict("Workflow is disabled".into()));
    }
    Ok(workflow)
}

impl Dictation {
    pub async fn status(&self) -> Status {
        let inner = self.inner.lock().await;
        Status {
            state: inner.state.name(),
            is_recording: matches!(inner.state, State::Recording { .. }),
            active_workflow: inner
                .state
                .active()
                .and(inner.session.as_ref())
                .and_then(|s| s.workflow.as_ref())
                .map(|w| (w.id, w.name.clone())),
        }
    }

    /// Starts a session with `workflow` (already checked), else the workflow whose rules match
    /// the focused application. Answers once the microphone is capturing.
    pub async fn start(
        &self,
        app: &Arc<App>,
        workflow: Option<Workflow>,
    ) -> Result<Started, ApiError> {
        let mut inner = self.inner.lock().await;
        let id = Uuid::new_v4();
        let (next, _) = apply(&inner.state, Event::Start { id }, now()).map_err(machine_error)?;
        let opening = app.clone();
        let (feed, session, max_seconds) = tokio::task::spawn_blocking(move || {
            let context = opening.app_context.current();
            let workflow = match workflow {
                Some(w) => Some(w),
                None => matching_workflow(&opening.store.workflows()?, &context).cloned(),
            };
            let max_seconds = opening
                .store
                .pref_int(&preferences::MAX_DICTATION_SECONDS)?;
            let stream = opening.devices.microphone.open().map_err(capture_error)?;
            let session = Session {
                started_at: Utc::now(),
                workflow,
                context,
            };
            opening.store.insert_dictation_session(&DictationSession {
                id,
                status: "recording".into(),
                started_at: session.started_at,
                workflow_id: session.workflow.as_ref().map(|w| w.id),
                workflow_name: session.workflow.as_ref().map(|w| w.name.clone()),
                error: None,
            })?;
            Ok::<_, ApiError>((Feed::new(stream, TARGET_RATE), session, max_seconds))
        })
        .await
        .map_err(|e| ApiError::internal("opening the microphone stopped", e))??;

        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let runtime = tokio::runtime::Handle::current();
        let events = app.clone();
        let max_samples = max_seconds.max(1) as usize * TARGET_RATE as usize;
        let thread = std::thread::Builder::new()
            .name(format!("dictation-{id}"))
            .spawn(move || {
                capture(feed, &thread_stop, max_samples, |event| {
                    let events = events.clone();
                    runtime.spawn(async move {
                        let _ = events.dictation.handle(&events, event).await;
                    });
                })
            })
            .map_err(|e| ApiError::internal("could not start the capture thread", e))?;
        let workflow = session.workflow.as_ref().map(|w| (w.id, w.name.clone()));
        inner.state = next;
        inner.stop = stop;
        inner.capture = Some(thread);
        inner.session = Some(session);
        tracing::info!(%id, "dictation started");
        Ok(Started { id, workflow })
    }

    /// Stops recording and begins processing; returns the session id.
    pub async fn stop(&self, app: &Arc<App>) -> Result<Uuid, ApiError> {
        let mut inner = self.inner.lock().await;
        let State::Recording { id, .. } = inner.state else {
            return Err(machine_error(DictationError::NotRecording));
        };
        self.dispatch(app, &mut inner, Event::Stop)?;
        Ok(id)
    }

    async fn handle(&self, app: &Arc<App>, event: Event) -> Result<(), ApiError> {
        let mut inner = self.inner.lock().await;
        self.dispatch(app, &mut inner, event)
    }

    fn dispatch(&self, app: &Arc<App>, inner: &mut Inner, event: Event) -> Result<(), ApiError> {
        let (next, effects) = apply(&inner.state, event, now()).map_err(machine_error)?;
        inner.state = next;
        for effect in effects {
            match effect {
                Effect::StartCapture { .. } => {
                    unreachable!("start opens the microphone itself before committing the state")
                }
                Effect::Transcribe { id } => {
                    inner.stop.store(true, Ordering::Release);
                    app.store.set_dictation_status(&id, "processing", None)?;
                    if let (Some(thread), Some(session)) =
                        (inner.capture.take(), inner.session.clone())
                    {
                        tokio::spawn(process(app.clone(), id, thread, session));
                    }
                }
                // The transcript was written with the session's details by `process`.
                Effect::SaveHistory { id, .. } => {
                    app.store.set_dictation_status(&id, "inserting", None)?;
                }
                Effect::Insert { id, text } => {
                    let app = app.clone();
                    tokio::spawn(async move {
                        let inserting = app.clone();
                        let result = tokio::task::spawn_blocking(move || {
                            inserting
                                .inserter()
                                .insert(&text)
                                .map_err(|e| e.to_string())
                        })
                        .await
                        .unwrap_or_else(|_| Err("The text insertion stopped unexpectedly".into()));
                        if let Err(err) = app.dictation.handle(&app, Event::Inserted(result)).await
                        {
                            tracing::error!(%id, "dictation: {}", err.message());
                        }
                    });
                }
                Effect::Completed { id } => {
                    tracing::info!(%id, "dictation completed");
                    app.store.set_dictation_status(&id, "completed", None)?;
                }
                Effect::Failed { id, error } => {
                    tracing::warn!(%id, "dictation failed: {error}");
                    if let Some(thread) = inner.capture.take() {
                        inner.stop.store(true, Ordering::Release);
                        drop(thread);
                    }
                    app.store
                        .set_dictation_status(&id, "failed", Some(&error))?;
                }
            }
        }
        Ok(())
    }
}

/// Reads the microphone until stopped, the maximum length passes or the device is lost.
fn capture(
    mut feed: Feed,
    stop: &AtomicBool,
    max_samples: usize,
    post: impl Fn(Event),
) -> Vec<f32> {
    let mut samples = Vec::new();
    while !stop.load(Ordering::Acquire) {
        if let Err(err) = feed.pull(&mut samples, READ_SLICE) {
            post(Event::CaptureFailed {
                reason: err.to_string(),
            });
            return samples;
        }
        if samples.len() >= max_samples {
            post(Event::MaxLengthReached);
            break;
        }
    }
    // What the microphone captured up to the stop, not yet read.
    let _ = feed.pull(&mut samples, Duration::ZERO);
    feed.finish(&mut samples);
    samples
}

/// Transcribes what was captured and saves it to history, then hands the text on for insertion.
async fn process(app: Arc<App>, id: Uuid, thread: JoinHandle<Vec<f32>>, session: Session) {
    let result = transcribe_and_save(&app, id, thread, &session).await;
    if let Err(err) = app
        .dictation
        .handle(&app, Event::Transcribed(result.map_err(|e| e.message())))
        .await
    {
        tracing::error!(%id, "dictation: {}", err.message());
    }
}

async fn transcribe_and_save(
    app: &Arc<App>,
    id: Uuid,
    thread: JoinHandle<Vec<f32>>,
    session: &Session,
) -> Result<String, ApiError> {
    let samples = tokio::task::spawn_blocking(move || thread.join())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| ApiError::internal("capture", "the capture thread stopped unexpectedly"))?;
    let duration = samples.len() as f64 / f64::from(TARGET_RATE);
    let mut options = workflow_options(session.workflow.as_ref());
    if options.task == Some(Task::Translate)
        && !app
            .transcriber
            .selected(&app.store)?
            .is_some_and(|r| r.offer.spec.multilingual())
    {
        tracing::warn!(%id, "the workflow asks for English output but the model is English-only; not translating");
        options.task = None;
    }
    let resolved = app.transcriber.plan(&app.store, &options, false)?;
    let post = app.post_processing()?;
    let corrections = post.corrections.clone();
    let started = Instant::now();
    let result = if samples.is_empty() {
        None
    } else {
        let no_corrections = TranscribeOptions {
            apply_corrections: Some(false),
            ..options.clone()
        };
        Some(
            app.transcriber
                .transcribe_samples(
                    &resolved,
                    samples,
                    duration,
                    Duration::ZERO,
                    &no_corrections,
                    post,
                )
                .await?,
        )
    };
    let snippets: Vec<Correction> = app
        .store
        .snippets()?
        .into_iter()
        .filter(|s| s.enabled)
        .map(|s| Correction {
            original: s.trigger,
            replacement: s.text,
            case_sensitive: false,
        })
        .collect();
    let (text, raw_text, language) = match &result {
        Some(r) => {
            let expanded = apply_corrections(&r.text, &snippets);
            (
                apply_corrections(&expanded, &corrections),
                r.raw_text.clone(),
                r.language.clone(),
            )
        }
        None => (String::new(), String::new(), None),
    };
    tracing::debug!(%id, elapsed = ?started.elapsed(), "dictation transcribed");
    let entry = NewHistoryEntry {
        id: Some(id),
        text: text.trim().to_string(),
        raw_text,
        timestamp: Some(session.started_at),
        app_name: session.context.app_name.clone(),
        app_bundle_id: session.context.app_id.clone(),
        app_url: session.context.url.clone(),
        duration: (duration * 1000.0).round() / 1000.0,
        language,
        engine: resolved.engine.id().into(),
        model: Some(resolved.offer.spec.id.into()),
    };
    let saving = app.clone();
    let saved = tokio::task::spawn_blocking(move || saving.store.insert_history(&entry))
        .await
        .map_err(|e| ApiError::internal("saving the transcript stopped", e))??;
    Ok(saved.text)
}

/// Transcription options from a workflow's language settings.
fn workflow_options(workflow: Option<&Workflow>) -> TranscribeOptions {
    let mut options = TranscribeOptions::default();
    let Some(workflow) = workflow else {
        return options;
    };
    match workflow.language_mode {
        LanguageMode::Inherit | LanguageMode::Auto => {}
        LanguageMode::Exact => options.language = workflow.input_language.clone(),
        LanguageMode::Multiple => options.language_hints = workflow.language_hints.clone(),
    }
    // Whisper translates into English only; other targets are left untranslated.
    if workflow
        .translation_target_language
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("en"))
    {
        options.task = Some(Task::Translate);
    }
    options
}

/// Dictations a previous run left unfinished fail with a message saying so.
pub fn recover_interrupted(store: &crate::store::Store) -> Result<usize, crate::store::StoreError> {
    store.fail_unfinished_dictations(
        "Verbatim stopped before this dictation finished; its text, if any was transcribed, is in history.",
    )
}
