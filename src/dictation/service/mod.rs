//! The dictation service: drives the state machine, captures the microphone at 16 kHz on its own
//! thread and transcribes while the person speaks (each chunk of speech as soon as a short pause
//! ends it, with the session's workflow and profile: the profile's engine and model), so at stop
//! only the last words remain; then saves the transcript to history (the session id is the
//! entry id) and inserts it. ActiveDictation status is kept in SQLite.

mod capture;
mod driven;
mod ready;

use capture::capture;

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
    /// The prompt action run on the text, if the workflow names one.
    action: Option<crate::transcribe::ActionRan>,
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
        // Under a prompt action the action's output is inserted, once: pieces of the words as
        // heard would be text the action replaces.
        let acts = setup
            .workflow
            .as_ref()
            .is_some_and(|w| w.extra.prompt_action_id.is_some());
        let live_insertion = if !acts
            && self
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
        let result = result.map(|(text, action)| {
            lock(&session.clock).action = action;
            text
        });
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

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Dictations a previous run left unfinished fail with a message saying so.
pub fn recover_interrupted(store: &Store) -> Result<usize, StoreError> {
    store.fail_unfinished_dictations(
        "Verbatim stopped before this dictation finished; its text, if any was transcribed, is in history.",
    )
}
