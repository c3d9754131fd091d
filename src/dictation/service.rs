//! The dictation service: drives the state machine, captures the microphone at 16 kHz on its own
//! thread and transcribes while the person speaks (each chunk of speech as soon as a short pause
//! ends it, with the session's workflow and profile: the profile's engine and model), so at stop
//! only the last words remain; then saves the transcript to history (the session id is the
//! entry id) and inserts it. ActiveDictation status is kept in SQLite.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

use super::context::{AppContext, AppContextSource};
use super::insert::{self, Inserter, InserterChoice};
use super::live_insert::LiveInsertion;
use super::machine::{Effect, Event, Refused, State, apply};
use super::rule_match::matching_rule;
use super::transcript::{LiveTranscription, session_options, transcribe_and_save};
use crate::audio::capture::{AudioSource, CaptureError, Feed};
use crate::audio::resample::TARGET_RATE;
use crate::session::{self, Capture, Driven, Driver, Internal, Live};
use crate::session_events::EventHub;
use crate::store::{DictationSession, Profile, Store, StoreError, Workflow, preferences};
use crate::transcribe::{
    Audio, Caller, Dictated, LiveAudio, Planned, Progress, ProgressSink, TranscribeError,
    Transcriber,
};

/// How long one read of the microphone waits.
const READ_SLICE: Duration = Duration::from_millis(20);

/// Why dictation refused or failed a request.
#[derive(Debug, thiserror::Error)]
pub enum DictationError {
    /// The workflow a start names does not exist.
    #[error("Workflow not found")]
    WorkflowNotFound,
    /// The workflow a start names is disabled.
    #[error("Workflow is disabled")]
    WorkflowDisabled,
    /// The state machine refused the request (not idle, not recording).
    #[error(transparent)]
    Refused(#[from] Refused),
    /// No model can transcribe what would be captured (checked before the microphone opens).
    #[error("No model is ready: {0}")]
    NoModelReady(String),
    /// The microphone is missing or could not be opened.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Internal(#[from] Internal),
}

/// What `GET /v1/dictation/status` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub state: &'static str,
    pub is_recording: bool,
    pub active_workflow: Option<(Uuid, String)>,
    /// The model the active session transcribes with (its profile's, else the selected one).
    pub active_model: Option<&'static str>,
}

/// What a successful start answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    pub id: Uuid,
    pub workflow: Option<(Uuid, String)>,
}

/// Dictation for one application.
pub struct Dictation {
    store: Arc<Store>,
    microphone: Arc<dyn AudioSource>,
    app_context: Arc<dyn AppContextSource>,
    insertion: InserterChoice,
    transcriber: Arc<Transcriber>,
    driver: Driver<Dictation>,
    events: EventHub,
}

/// The active session's settings, fixed at start.
#[derive(Debug, Clone)]
pub struct ActiveDictation {
    pub(super) started_at: DateTime<Utc>,
    pub(super) workflow: Option<Workflow>,
    /// The model the session's options resolved to at start.
    pub(super) model: &'static str,
    /// The transcription running while the session records; taken once, when it is awaited.
    pub(super) transcription: LiveTranscription,
    /// When the session stopped, and when its text was ready.
    pub(super) clock: Arc<std::sync::Mutex<Clock>>,
    /// With `dictationLiveInsertion`: the pieces inserted as they are transcribed; taken once,
    /// when the insertion is due.
    live_insertion: Arc<std::sync::Mutex<Option<LiveInsertion>>>,
}

/// The moments a session's figures are measured from.
#[derive(Debug, Default)]
pub(super) struct Clock {
    stopped: Option<Instant>,
    text_ready: Option<(Duration, String)>,
}

/// What a session is set up with before the microphone opens.
struct Setup {
    workflow: Option<Workflow>,
    profile: Option<Profile>,
    context: AppContext,
}

/// The workflow named by a start request, checked per the contract.
pub fn requested_workflow(store: &Store, id: Uuid) -> Result<Workflow, DictationError> {
    let workflow = store
        .workflow(&id)?
        .ok_or(DictationError::WorkflowNotFound)?;
    if !workflow.enabled {
        return Err(DictationError::WorkflowDisabled);
    }
    Ok(workflow)
}

impl Driven for Dictation {
    const NAME: &'static str = "dictation";
    type State = State;
    type Event = Event;
    type Effect = Effect;
    type Refused = Refused;
    const NOT_RECORDING: Refused = Refused::NotRecording;
    type Captured = Vec<f32>;
    type Session = ActiveDictation;
    type Error = DictationError;

    fn driver(&self) -> &Driver<Self> {
        &self.driver
    }

    fn apply(state: &State, event: Event, now: f64) -> Result<(State, Vec<Effect>), Refused> {
        apply(state, event, now)
    }

    fn recording(state: &State) -> Option<Uuid> {
        match state {
            State::Recording { id, .. } => Some(*id),
            _ => None,
        }
    }

    fn carry_out(
        self: &Arc<Self>,
        live: &mut Live<Self>,
        effect: Effect,
    ) -> Result<(), DictationError> {
        match effect {
            Effect::StartCapture { .. } => {
                unreachable!("start opens the microphone itself before committing the state")
            }
            Effect::Transcribe { id } => {
                let thread = live.stop_capture();
                if let Some(session) = &live.session {
                    lock(&session.clock).stopped = Some(Instant::now());
                }
                self.publish("dictation.stopped", &id, json!({}));
                self.store.set_dictation_status(&id, "processing", None)?;
                if let (Some(thread), Some(session)) = (thread, live.session.clone()) {
                    tokio::spawn(self.clone().process(id, thread, session));
                }
            }
            // The transcript was written with the session's details by `process`.
            Effect::SaveHistory { id, .. } => {
                self.store.set_dictation_status(&id, "inserting", None)?;
            }
            Effect::Insert { id, text } => {
                let inserted_live = live
                    .session
                    .as_ref()
                    .and_then(|s| lock(&s.live_insertion).take());
                tokio::spawn(self.clone().insert(id, text, inserted_live));
            }
            Effect::Completed { id } => {
                tracing::info!(%id, "dictation completed");
                self.store.set_dictation_status(&id, "completed", None)?;
                let clock = live.session.as_ref().map(|s| s.clock.clone());
                let clock = clock.as_ref().map(|c| lock(c));
                let stopped = clock.as_ref().and_then(|c| c.stopped);
                let (to_text, text) = clock
                    .as_ref()
                    .and_then(|c| c.text_ready.clone())
                    .unwrap_or_default();
                let to_insert = stopped.map_or(Duration::ZERO, |s| s.elapsed());
                let fields = json!({
                    "text": text,
                    "stop_to_text_ms": to_text.as_millis() as u64,
                    "stop_to_insert_ms": to_insert.as_millis() as u64,
                });
                self.publish("dictation.completed", &id, fields);
            }
            Effect::Failed { id, error } => {
                tracing::warn!(%id, "dictation failed: {error}");
                live.stop_capture();
                // What was heard so far is not kept: the session failed before it was stopped.
                if let Some(session) = &live.session
                    && let Some(transcription) = lock(&session.transcription).take()
                {
                    transcription.abort();
                }
                self.publish("dictation.failed", &id, json!({"error": error}));
                self.store
                    .set_dictation_status(&id, "failed", Some(&error))?;
            }
        }
        Ok(())
    }
}

impl Dictation {
    /// Dictation from `microphone` into the application `app_context` tells, with `insertion`;
    /// sessions are kept in `store` and transcribed by `transcriber`.
    pub fn new(
        store: Arc<Store>,
        microphone: Arc<dyn AudioSource>,
        app_context: Arc<dyn AppContextSource>,
        insertion: InserterChoice,
        transcriber: Arc<Transcriber>,
    ) -> Dictation {
        Dictation {
            store,
            microphone,
            app_context,
            insertion,
            transcriber,
            driver: Driver::new(State::Idle),
            events: EventHub::default(),
        }
    }

    /// The sessions' live events (see the contract's third wave).
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// Publishes the event `kind` of session `id` with `fields` (an object).
    fn publish(&self, kind: &str, id: &Uuid, fields: serde_json::Value) {
        self.events.publish_session(kind, id, fields);
    }

    /// The machine's state and the active session's workflow.
    pub async fn status(&self) -> Status {
        let live = self.driver.lock().await;
        let active = live.state.active().and(live.session.as_ref());
        Status {
            state: live.state.name(),
            is_recording: matches!(live.state, State::Recording { .. }),
            active_workflow: active
                .and_then(|s| s.workflow.as_ref())
                .map(|w| (w.id, w.name.clone())),
            active_model: active.map(|s| s.model),
        }
    }

    /// Starts a session with `workflow` (already checked), else the workflow whose rules match
    /// the focused application. Answers once the microphone is capturing.
    pub async fn start(
        self: &Arc<Self>,
        workflow: Option<Workflow>,
    ) -> Result<Started, DictationError> {
        let mut live = self.driver.lock().await;
        let id = Uuid::new_v4();
        let next = live.check(Event::Start { id })?;
        let choosing = self.clone();
        let setup = session::blocking("reading the rules stopped", move || {
            choosing.setup(workflow)
        })
        .await?;
        let planned = self.ready_to_transcribe(id, &setup).await?;
        planned.preload_model();
        let model = planned.resolved().offer.spec.id;
        let opening = self.clone();
        let (feed, session, max_samples) =
            session::blocking("opening the microphone stopped", move || {
                opening.open(id, setup, model)
            })
            .await?;
        let post = session::poster(self);
        let (heard, blocks) = std::sync::mpsc::channel();
        let audio = LiveAudio::new(blocks);
        let stopping = audio.stopping.clone();
        let capture = Capture::spawn(format!("dictation-{id}"), move |stop| {
            capture(feed, stop, max_samples, post, heard, stopping)
        })?;
        let reporting = self.clone();
        let mut pieces = lock(&session.live_insertion)
            .as_ref()
            .map(LiveInsertion::pieces);
        let on_progress: ProgressSink = Box::new(move |progress| {
            if let (Progress::Segments(timed), Some(pieces)) = (progress, &mut pieces) {
                let texts: Vec<&str> = timed.iter().map(|t| t.text.trim()).collect();
                pieces.send(&texts.join(" "));
            }
            reporting
                .events
                .publish_progress("dictation", &id, progress)
        });
        let running = planned.run_streaming(Audio::Live(audio), Some(on_progress));
        *lock(&session.transcription) = Some(tokio::spawn(running));
        let workflow = session.workflow.as_ref().map(|w| (w.id, w.name.clone()));
        live.begin(next, capture, session);
        let workflow_id = workflow.as_ref().map(|w| crate::wire::format_uuid(&w.0));
        let fields = json!({"model": model, "workflow_id": workflow_id});
        self.publish("dictation.started", &id, fields);
        tracing::info!(%id, "dictation started");
        Ok(Started { id, workflow })
    }

    /// Refuses a start that nobody could transcribe (no model selected, the profile's or the
    /// selected model's weights missing) before anything is captured: the person learns it
    /// before speaking, not after. Answers the planned transcription.
    async fn ready_to_transcribe(
        &self,
        id: Uuid,
        setup: &Setup,
    ) -> Result<Planned, DictationError> {
        let options = session_options(setup.workflow.as_ref(), setup.profile.as_ref());
        let named_model = options.model.clone();
        let caller = Caller::Dictation(Dictated {
            id,
            started_at: Utc::now(),
            app_name: setup.context.app_name.clone(),
            app_bundle_id: setup.context.app_id.clone(),
            app_url: setup.context.url.clone(),
        });
        let planned = self.transcriber.plan(options, false, caller).await;
        let err = match planned {
            Ok(planned) => return Ok(planned),
            Err(err) => err,
        };
        let reason = match err {
            TranscribeError::NoEngineSelected => {
                "no model is selected (verbatim models select ID)".to_owned()
            }
            TranscribeError::NotConfigured(_) if named_model.is_some() => format!(
                "the model '{0}' of the profile '{1}' is not downloaded (verbatim models download {0})",
                named_model.unwrap_or_default(),
                setup.profile.as_ref().map_or("", |p| p.name.as_str()),
            ),
            TranscribeError::NotConfigured(_) => {
                let transcriber = self.transcriber.clone();
                let selected = session::blocking("reading the selection stopped", move || {
                    Ok::<_, DictationError>(transcriber.selected()?)
                })
                .await
                .ok()
                .flatten();
                match selected {
                    Some(resolved) => format!(
                        "the model '{0}' is not downloaded (verbatim models download {0})",
                        resolved.offer.spec.id
                    ),
                    None => "the selected model is not downloaded".to_owned(),
                }
            }
            other => match &setup.profile {
                Some(profile) => {
                    format!("the profile '{}': {}", profile.name, other.public_message())
                }
                None => other.public_message(),
            },
        };
        Err(DictationError::NoModelReady(reason))
    }

    /// Stops recording and begins processing; returns the session id.
    pub async fn stop(self: &Arc<Self>) -> Result<Uuid, DictationError> {
        session::stop(self, Event::Stop).await
    }

    /// The focused application and the workflow (`workflow`, else the one whose rules match
    /// the application) and profile that apply to it. Blocks.
    fn setup(&self, workflow: Option<Workflow>) -> Result<Setup, DictationError> {
        let context = self.app_context.current();
        let workflow = match workflow {
            Some(w) => Some(w),
            None => matching_rule(&self.store.workflows()?, &context).cloned(),
        };
        let profile = matching_rule(&self.store.profiles()?, &context).cloned();
        Ok(Setup {
            workflow,
            profile,
            context,
        })
    }

    /// Opens the microphone and records the session set up with `setup`, transcribed by
    /// `model`; answers the microphone, the session and how many samples it may capture.
    /// Blocks.
    fn open(
        &self,
        id: Uuid,
        setup: Setup,
        model: &'static str,
    ) -> Result<(Feed, ActiveDictation, usize), DictationError> {
        let max_seconds = self.store.pref_int(&preferences::MAX_DICTATION_SECONDS)?;
        let live_insertion = if self
            .store
            .pref_bool(&preferences::DICTATION_LIVE_INSERTION)?
        {
            let started = LiveInsertion::start(self.inserter())
                .map_err(|e| Internal::new("starting the live insertion", e))?;
            Some(started)
        } else {
            None
        };
        let stream = self.microphone.open()?;
        let session = ActiveDictation {
            started_at: Utc::now(),
            workflow: setup.workflow,
            model,
            transcription: LiveTranscription::default(),
            clock: Arc::default(),
            live_insertion: Arc::new(std::sync::Mutex::new(live_insertion)),
        };
        self.store.insert_dictation_session(&DictationSession {
            id,
            status: "recording".into(),
            started_at: session.started_at,
            workflow_id: session.workflow.as_ref().map(|w| w.id),
            workflow_name: session.workflow.as_ref().map(|w| w.name.clone()),
            error: None,
        })?;
        let max_samples = max_seconds.max(1) as usize * TARGET_RATE as usize;
        Ok((Feed::new(stream, TARGET_RATE), session, max_samples))
    }

    /// Transcribes what was captured and saves it to history, then hands the text on for
    /// insertion.
    async fn process(
        self: Arc<Self>,
        id: Uuid,
        thread: JoinHandle<Vec<f32>>,
        session: ActiveDictation,
    ) {
        let result =
            transcribe_and_save(&self.transcriber, id, thread, &session.transcription).await;
        match &result {
            Ok(text) => {
                let mut clock = lock(&session.clock);
                let to_text = clock.stopped.map_or(Duration::ZERO, |s| s.elapsed());
                clock.text_ready = Some((to_text, text.clone()));
                drop(clock);
                self.events
                    .publish_item("completed", &id, json!({"transcript": text}));
            }
            Err(error) => {
                let error = json!({"type": "transcription_error", "message": error});
                self.events
                    .publish_item("failed", &id, json!({ "error": error }));
            }
        }
        if let Err(err) = session::handle(&self, Event::Transcribed(result)).await {
            tracing::error!(%id, "dictation: {err}");
        }
    }

    /// Inserts the text on a blocking thread and reports how it went; with a live insertion,
    /// waits for its last piece instead (the text went in as it was transcribed).
    async fn insert(self: Arc<Self>, id: Uuid, text: String, inserted_live: Option<LiveInsertion>) {
        let inserting = self.clone();
        let result = tokio::task::spawn_blocking(move || match inserted_live {
            Some(live) => live.finish().map(drop),
            None => inserting
                .inserter()
                .insert(&text)
                .map_err(|e| e.to_string()),
        })
        .await
        .unwrap_or_else(|_| Err("The text insertion stopped unexpectedly".into()));
        if let Err(err) = session::handle(&self, Event::Inserted(result)).await {
            tracing::error!(%id, "dictation: {err}");
        }
    }

    /// Where dictated text goes: the fixed backend, else the one the preference names now.
    fn inserter(&self) -> Arc<dyn Inserter> {
        match &self.insertion {
            InserterChoice::Fixed(inserter) => inserter.clone(),
            InserterChoice::Preference => {
                let choice = self
                    .store
                    .pref_text(&preferences::DICTATION_INSERTION)
                    .unwrap_or_default();
                insert::for_preference(&choice)
            }
        }
    }
}

/// Reads the microphone until stopped, the maximum length passes or the device is lost; hands
/// each block read to `heard` (the live transcription) as it comes, and answers every sample.
/// `stopping` is set as soon as the capture ends (no more provisional text).
fn capture(
    mut feed: Feed,
    stop: &AtomicBool,
    max_samples: usize,
    post: impl Fn(Event),
    heard: std::sync::mpsc::Sender<Vec<f32>>,
    stopping: crate::cancel::Cancel,
) -> Vec<f32> {
    let _stopping = stopping.cancel_on_drop();
    let mut samples = Vec::new();
    // A transcription that stopped listening (its engine failed) reports through its result.
    let hand_on = |samples: &[f32], from: usize| {
        if samples.len() > from {
            let _ = heard.send(samples[from..].to_vec());
        }
    };
    while !stop.load(Ordering::Acquire) {
        let before = samples.len();
        if let Err(err) = feed.pull(&mut samples, READ_SLICE) {
            // The session fails: what was heard is not transcribed.
            let _ = heard.send(Vec::new());
            post(Event::CaptureFailed {
                reason: err.to_string(),
            });
            return samples;
        }
        hand_on(&samples, before);
        if samples.len() >= max_samples {
            post(Event::MaxLengthReached);
            break;
        }
    }
    // What the microphone captured up to the stop, not yet read.
    let before = samples.len();
    let _ = feed.pull(&mut samples, Duration::ZERO);
    feed.finish(&mut samples);
    hand_on(&samples, before);
    samples
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Dictations a previous run left unfinished fail with a message saying so.
pub fn recover_interrupted(store: &Store) -> Result<usize, StoreError> {
    store.fail_unfinished_dictations(
        "Verbatim stopped before this dictation finished; its text, if any was transcribed, is in history.",
    )
}
