//! The Recorder service: drives the state machine, runs the capture thread that mixes the sources
//! at 48 kHz and streams them to a WAV file, finalizes (rename, optional transcription) and keeps
//! every session in SQLite. Sessions a crash interrupted are recovered at the next start.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::Utc;
use uuid::Uuid;

use super::machine::{Effect, Event, Finalized, RecorderError, Sources, State, apply};
use crate::api::ApiError;
use crate::app::App;
use crate::audio::capture::{CaptureError, Feed, SourceKind};
use crate::audio::mix::{interleave_into, mix_into};
use crate::audio::wav::{self, WavSink};
use crate::store::{RecorderEnd, RecorderSession, Store, StoreError, preferences};
use crate::transcribe::{Audio, Job, Origin, TranscribeError};
use crate::wire::transcription::TranscribeOptions;

/// The rate recordings are written at.
pub const RECORDING_RATE: u32 = 48_000;

/// How long one pass of the capture loop waits for each source.
const READ_SLICE: Duration = Duration::from_millis(20);

/// A source running ahead of the other by more than this is not waited for any longer: the
/// late one is padded with silence, so a stalled device cannot make memory grow.
const MAX_SKEW: usize = RECORDING_RATE as usize;

/// The Recorder of one application.
#[derive(Default)]
pub struct Recorder {
    inner: tokio::sync::Mutex<Inner>,
}

struct Inner {
    state: State,
    stop: Arc<AtomicBool>,
    capture: Option<JoinHandle<CaptureEnd>>,
}

impl Default for Inner {
    fn default() -> Self {
        Inner {
            state: State::Idle,
            stop: Arc::new(AtomicBool::new(false)),
            capture: None,
        }
    }
}

/// What the capture thread hands to finalization.
struct CaptureEnd {
    sink: WavSink,
    /// Why capture ended early (device lost, disk error).
    failure: Option<String>,
}

fn now() -> f64 {
    Utc::now().timestamp_millis() as f64 / 1000.0
}

fn machine_error(err: RecorderError) -> ApiError {
    match err {
        RecorderError::NoSource => ApiError::BadRequest(err.to_string()),
        RecorderError::AlreadyRecording
        | RecorderError::Finalizing
        | RecorderError::NotRecording => ApiError::Conflict(err.to_string()),
        RecorderError::Unexpected { .. } => ApiError::internal("recorder state", err),
    }
}

/// A device that cannot be opened is a conflict with the machine's state, not a server fault.
pub fn capture_error(err: CaptureError) -> ApiError {
    ApiError::Conflict(err.to_string())
}

impl Recorder {
    /// Whether a session is capturing (`GET /v1/recorder/status`).
    pub async fn is_recording(&self) -> bool {
        self.inner.lock().await.state.is_recording()
    }

    /// Starts a session; `None` sources inherit the preferences. Answers once capture runs.
    pub async fn start(
        &self,
        app: &Arc<App>,
        mic: Option<bool>,
        system_audio: Option<bool>,
    ) -> Result<Uuid, ApiError> {
        let sources = Sources {
            mic: match mic {
                Some(m) => m,
                None => app.store.pref_bool(&preferences::RECORDER_MIC_ENABLED)?,
            },
            system_audio: match system_audio {
                Some(s) => s,
                None => app
                    .store
                    .pref_bool(&preferences::RECORDER_SYSTEM_AUDIO_ENABLED)?,
            },
        };
        let mut inner = self.inner.lock().await;
        let id = Uuid::new_v4();
        let (next, _) =
            apply(&inner.state, Event::Start { id, sources }, now()).map_err(machine_error)?;
        let opening = app.clone();
        let (feeds, sink, stereo) =
            tokio::task::spawn_blocking(move || open_session(&opening, id, sources))
                .await
                .map_err(|e| ApiError::internal("opening the devices stopped", e))??;
        let stop = Arc::new(AtomicBool::new(false));
        let on_failure = {
            let app = app.clone();
            let runtime = tokio::runtime::Handle::current();
            move |reason: String| {
                runtime.spawn(async move {
                    let _ = app
                        .recorder
                        .handle(&app, Event::DeviceLost { reason })
                        .await;
                });
            }
        };
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("recorder-{id}"))
            .spawn(move || capture(feeds, sink, stereo, &thread_stop, on_failure))
            .map_err(|e| ApiError::internal("could not start the capture thread", e))?;
        inner.state = next;
        inner.stop = stop;
        inner.capture = Some(thread);
        tracing::info!(%id, mic = sources.mic, system_audio = sources.system_audio, "recording started");
        Ok(id)
    }

    /// Stops the active session and begins finalizing it; returns its id.
    pub async fn stop(&self, app: &Arc<App>) -> Result<Uuid, ApiError> {
        let mut inner = self.inner.lock().await;
        let State::Recording { id, .. } = inner.state else {
            return Err(machine_error(RecorderError::NotRecording));
        };
        self.dispatch(app, &mut inner, Event::Stop)?;
        Ok(id)
    }

    /// Applies an event from the capture thread or finalization.
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
                    unreachable!("start opens the devices itself before committing the state")
                }
                Effect::Finalize { id } => {
                    inner.stop.store(true, Ordering::Release);
                    app.store.set_recorder_status(&id, "finalizing")?;
                    if let Some(thread) = inner.capture.take() {
                        tokio::spawn(finalize(app.clone(), id, thread));
                    }
                }
                Effect::Completed {
                    id,
                    output_file,
                    text,
                } => {
                    tracing::info!(%id, file = %output_file.display(), "recording completed");
                    app.store.end_recorder_session(
                        &id,
                        &RecorderEnd {
                            status: "completed",
                            output_file: Some(output_file),
                            text,
                            error: None,
                        },
                    )?;
                }
                Effect::Failed {
                    id,
                    error,
                    output_file,
                } => {
                    tracing::warn!(%id, "recording failed: {error}");
                    app.store.end_recorder_session(
                        &id,
                        &RecorderEnd {
                            status: "failed",
                            output_file,
                            text: None,
                            error: Some(error),
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Opens the sources, creates the WAV file and records the session.
fn open_session(
    app: &App,
    id: Uuid,
    sources: Sources,
) -> Result<(Vec<Feed>, WavSink, bool), ApiError> {
    let mut feeds = Vec::new();
    for (wanted, kind) in [
        (sources.mic, SourceKind::Microphone),
        (sources.system_audio, SourceKind::SystemAudio),
    ] {
        if wanted {
            let stream = app.devices.source(kind).open().map_err(capture_error)?;
            feeds.push(Feed::new(stream, RECORDING_RATE));
        }
    }
    let stereo = feeds.len() == 2 && app.store.pref_bool(&preferences::RECORDER_STEREO)?;
    let dir = recordings_dir(app)?;
    let started = Utc::now();
    let target = dir.join(format!(
        "recording-{}-{}.wav",
        started.format("%Y%m%d-%H%M%S"),
        &id.simple().to_string()[..8]
    ));
    let sink = WavSink::create(&target, RECORDING_RATE, if stereo { 2 } else { 1 })
        .map_err(|e| ApiError::internal("could not create the recording file", e))?;
    app.store.insert_recorder_session(&RecorderSession {
        id,
        status: "recording".into(),
        started_at: started,
        mic: sources.mic,
        system_audio: sources.system_audio,
        target,
        output_file: None,
        text: None,
        error: None,
    })?;
    Ok((feeds, sink, stereo))
}

/// The recordings folder (preference `recordingsFolder`, else `recordings/` in the data
/// folder), created private if missing.
pub fn recordings_dir(app: &App) -> Result<PathBuf, ApiError> {
    let configured = app.store.pref_text(&preferences::RECORDINGS_FOLDER)?;
    let dir = if configured.trim().is_empty() {
        app.data_dir.root().join("recordings")
    } else {
        PathBuf::from(configured.trim())
    };
    create_private_dir(&dir)
        .map_err(|e| ApiError::internal("could not create the recordings folder", e))?;
    Ok(dir)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// The capture loop: reads every source, mixes what all of them have delivered and appends it to
/// the file, until told to stop or a source fails (then `on_failure` gets the reason).
fn capture(
    mut feeds: Vec<Feed>,
    mut sink: WavSink,
    stereo: bool,
    stop: &AtomicBool,
    on_failure: impl FnOnce(String),
) -> CaptureEnd {
    let mut pending: Vec<Vec<f32>> = vec![Vec::new(); feeds.len()];
    let mut scratch = Vec::new();
    let slice = READ_SLICE / feeds.len().max(1) as u32;
    let mut failure = None;
    'capture: while !stop.load(Ordering::Acquire) {
        for (feed, buffer) in feeds.iter_mut().zip(pending.iter_mut()) {
            if let Err(err) = feed.pull(buffer, slice) {
                failure = Some(err.to_string());
                break 'capture;
            }
        }
        let shortest = pending.iter().map(Vec::len).min().unwrap_or(0);
        let longest = pending.iter().map(Vec::len).max().unwrap_or(0);
        let ready = shortest.max(longest.saturating_sub(MAX_SKEW));
        if let Err(err) = write_mixed(&mut sink, &mut pending, ready, stereo, &mut scratch) {
            failure = Some(format!("Could not write the recording: {err}"));
            break;
        }
    }
    for (mut feed, buffer) in feeds.into_iter().zip(pending.iter_mut()) {
        if failure.is_none() {
            // What the device captured up to the stop, not yet read; a late fault changes nothing.
            let _ = feed.pull(buffer, Duration::ZERO);
        }
        feed.finish(buffer);
    }
    let rest = pending.iter().map(Vec::len).max().unwrap_or(0);
    if let Err(err) = write_mixed(&mut sink, &mut pending, rest, stereo, &mut scratch) {
        failure.get_or_insert(format!("Could not write the recording: {err}"));
    }
    if let Some(reason) = &failure {
        on_failure(reason.clone());
    }
    CaptureEnd { sink, failure }
}

/// Writes the first `n` samples of each source (padding a short one with silence) as one mono
/// mix, or as stereo (microphone left, system audio right), and removes them from `pending`.
fn write_mixed(
    sink: &mut WavSink,
    pending: &mut [Vec<f32>],
    n: usize,
    stereo: bool,
    scratch: &mut Vec<f32>,
) -> std::io::Result<()> {
    if n == 0 {
        return Ok(());
    }
    for buffer in pending.iter_mut() {
        if buffer.len() < n {
            buffer.resize(n, 0.0);
        }
    }
    match pending {
        [only] => mix_into(Some(&only[..n]), None, scratch),
        [mic, system] if stereo => interleave_into(&mic[..n], &system[..n], scratch),
        [mic, system] => mix_into(Some(&mic[..n]), Some(&system[..n]), scratch),
        _ => scratch.clear(),
    }
    sink.write(scratch)?;
    for buffer in pending.iter_mut() {
        buffer.drain(..n);
    }
    Ok(())
}

/// Waits for the capture thread, completes the file and transcribes it when enabled.
async fn finalize(app: Arc<App>, id: Uuid, thread: JoinHandle<CaptureEnd>) {
    let result = finish_recording(&app, thread).await;
    if let Err(err) = app
        .recorder
        .handle(&app, Event::FinalizationEnded(result))
        .await
    {
        tracing::error!(%id, "could not record the end of the recording: {}", err.message());
    }
}

async fn finish_recording(
    app: &Arc<App>,
    thread: JoinHandle<CaptureEnd>,
) -> Result<Finalized, String> {
    let ended = tokio::task::spawn_blocking(move || thread.join())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or("The capture stopped unexpectedly; nothing could be saved.")?;
    let seconds = ended.sink.seconds();
    let output_file = tokio::task::spawn_blocking(move || ended.sink.finish())
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(|e| format!("Could not finalize the recording: {e}"))?;
    let mut done = Finalized {
        output_file,
        text: None,
        transcription_error: None,
    };
    let enabled = app
        .store
        .pref_bool(&preferences::RECORDER_TRANSCRIPTION_ENABLED)
        .unwrap_or(true);
    // Nothing to transcribe in a recording stopped at once (or cut short by a fault).
    if enabled && seconds >= 0.1 && ended.failure.is_none() {
        match transcribe(app, &done.output_file).await {
            Ok(text) => done.text = Some(text),
            Err(err) => {
                done.transcription_error = Some(format!(
                    "The recording was saved, but transcribing it failed: {}",
                    err.public_message()
                ))
            }
        }
    }
    Ok(done)
}

async fn transcribe(app: &Arc<App>, file: &Path) -> Result<String, TranscribeError> {
    let job = Job {
        audio: Audio::File {
            path: file.to_path_buf(),
            hint: Some("wav".into()),
        },
        options: TranscribeOptions::default(),
        await_download: false,
        origin: Origin::Recorder,
    };
    Ok(app.transcriber.run(job).await?.text)
}

/// Sessions a previous run left unfinished: a file still under its temporary name gets its
/// header repaired and is renamed into place; the session fails with a message saying so.
/// Returns how many sessions were recovered.
pub fn recover_interrupted(store: &Store) -> Result<usize, StoreError> {
    let sessions = store.unfinished_recorder_sessions()?;
    for session in &sessions {
        let temp = wav::temp_path(&session.target);
        let end = if temp.exists() {
            match wav::repair_header(&temp).and_then(|_| std::fs::rename(&temp, &session.target)) {
                Ok(()) => RecorderEnd {
                    status: "failed",
                    output_file: Some(session.target.clone()),
                    text: None,
                    error: Some(
                        "Verbatim stopped during this recording; the audio captured until then was saved."
                            .into(),
                    ),
                },
                Err(err) => RecorderEnd {
                    status: "failed",
                    output_file: None,
                    text: None,
                    error: Some(format!(
                        "Verbatim stopped during this recording and its audio could not be recovered: {err}"
                    )),
                },
            }
        } else if session.target.exists() {
            RecorderEnd {
                status: "completed",
                output_file: Some(session.target.clone()),
                text: None,
                error: None,
            }
        } else {
            RecorderEnd {
                status: "failed",
                output_file: None,
                text: None,
                error: Some("Verbatim stopped during this recording; no audio was saved.".into()),
            }
        };
        tracing::warn!(id = %session.id, "recovered an interrupted recording ({})", end.status);
        store.end_recorder_session(&session.id, &end)?;
    }
    Ok(sessions.len())
}
