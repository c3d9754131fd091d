//! The Recorder service: drives the state machine, runs the capture thread that mixes the sources
//! at 48 kHz and streams them to a WAV file, transcribes the mix while it records (as dictation
//! does, with the same live events), finalizes (rename; the text is ready when it stops) and keeps
//! every session in SQLite. Sessions a crash interrupted are recovered at the next start.

mod driven;
mod finish;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use chrono::Utc;
use serde_json::json;
use uuid::Uuid;

use super::capture::{CaptureEnd, Listener, RECORDING_RATE, capture};
use super::machine::{Effect, Event, Finalized, Refused, Sources, State, apply};
use crate::audio::capture::{CaptureError, Devices, Feed, SourceKind};
use crate::audio::wav::{self, WavSink};
use crate::session::{self, Capture, Driven, Driver, Internal, Live};
use crate::session_events::EventHub;
use crate::store::{RecorderEnd, RecorderSession, Store, StoreError, preferences};
use crate::transcribe::{
    Audio, Caller, Job, LiveAudio, ProgressSink, TranscribeError, Transcriber, Transcript,
};
use crate::wire::transcription::TranscribeOptions;

/// Why the Recorder refused or failed a request.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// The state machine refused the request (no source, already recording, finalizing, not
    /// recording).
    #[error(transparent)]
    Refused(#[from] Refused),
    /// A source is missing or could not be opened.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Internal(#[from] Internal),
}

/// The Recorder of one application.
pub struct Recorder {
    store: Arc<Store>,
    devices: Devices,
    /// The data folder, whose `recordings/` is the default recordings folder.
    data_root: PathBuf,
    transcriber: Arc<Transcriber>,
    driver: Driver<Recorder>,
    events: EventHub,
}

/// A transcription that hears the recording as it is captured.
type LiveTranscription = tokio::task::JoinHandle<Result<Transcript, TranscribeError>>;

/// The active session's live transcription and when it stopped.
pub struct ActiveRecording {
    /// None when transcription is off, or no model could transcribe at the start (the file is
    /// then transcribed once it is complete, and the reason given there).
    transcription: Option<LiveTranscription>,
    stopped: Option<Instant>,
}

impl Recorder {
    /// The Recorder of `devices`, keeping sessions in `store`, recordings under `data_root`
    /// unless the preference names a folder, and transcribing with `transcriber`.
    pub fn new(
        store: Arc<Store>,
        devices: Devices,
        data_root: PathBuf,
        transcriber: Arc<Transcriber>,
    ) -> Recorder {
        Recorder {
            store,
            devices,
            data_root,
            transcriber,
            driver: Driver::new(State::Idle),
            events: EventHub::default(),
        }
    }

    /// The sessions' live events (see the contract's third wave).
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// Whether a session is capturing (`GET /v1/recorder/status`).
    pub async fn is_recording(&self) -> bool {
        self.driver.lock().await.state.is_recording()
    }

    /// Starts a session; `None` sources inherit the preferences. Answers once capture runs.
    pub async fn start(
        self: &Arc<Self>,
        mic: Option<bool>,
        system_audio: Option<bool>,
    ) -> Result<Uuid, RecorderError> {
        let reading = self.clone();
        let sources = session::blocking("reading the preferences stopped", move || {
            reading
                .sources(mic, system_audio)
                .map_err(RecorderError::from)
        })
        .await?;
        let mut live = self.driver.lock().await;
        let id = Uuid::new_v4();
        let next = live.check(Event::Start { id, sources })?;
        let opening = self.clone();
        let (feeds, sink, stereo) = session::blocking("opening the devices stopped", move || {
            opening.open_session(id, sources)
        })
        .await?;
        let (listener, transcription) = match self.live_transcription(id).await {
            Some((listener, transcription)) => (Some(listener), Some(transcription)),
            None => (None, None),
        };
        let post = session::poster(self);
        let on_failure = move |reason| post(Event::DeviceLost { reason });
        let capture = Capture::spawn(format!("recorder-{id}"), move |stop| {
            capture(feeds, sink, stereo, listener, stop, on_failure)
        });
        let capture = match capture {
            Ok(capture) => capture,
            Err(err) => {
                if let Some(running) = transcription {
                    running.abort();
                }
                return Err(err.into());
            }
        };
        let session = ActiveRecording {
            transcription,
            stopped: None,
        };
        live.begin(next, capture, session);
        self.events
            .publish_session("recorder.started", &id, json!({}));
        tracing::info!(%id, mic = sources.mic, system_audio = sources.system_audio, "recording started");
        Ok(id)
    }

    /// A transcription of session `id` that hears the mix as it is recorded, when transcription
    /// is on and a model can transcribe now; otherwise the file is transcribed at the end (or
    /// not at all), as before.
    async fn live_transcription(
        self: &Arc<Self>,
        id: Uuid,
    ) -> Option<(Listener, LiveTranscription)> {
        let store = self.store.clone();
        let enabled = session::blocking("reading the preferences stopped", move || {
            Ok::<_, RecorderError>(store.pref_bool(&preferences::RECORDER_TRANSCRIPTION_ENABLED)?)
        })
        .await
        .unwrap_or(true);
        if !enabled {
            return None;
        }
        let planned = self
            .transcriber
            .plan(TranscribeOptions::default(), false, Caller::Recorder)
            .await
            .inspect_err(
                |err| tracing::info!(%id, "the recording is transcribed at its end: {err}"),
            )
            .ok()?;
        planned.preload_model();
        let (blocks, heard) = std::sync::mpsc::channel();
        let audio = LiveAudio::new(heard);
        let listener = Listener::new(blocks, audio.stopping.clone());
        let reporting = self.clone();
        let on_progress: ProgressSink =
            Box::new(move |progress| reporting.events.publish_progress("recorder", &id, progress));
        let running = planned.run_streaming(Audio::Live(audio), Some(on_progress));
        Some((listener, tokio::spawn(running)))
    }

    /// Stops the active session and begins finalizing it; returns its id.
    pub async fn stop(self: &Arc<Self>) -> Result<Uuid, RecorderError> {
        session::stop(self, Event::Stop).await
    }

    /// The sources asked for, the preferences for those not given.
    fn sources(
        &self,
        mic: Option<bool>,
        system_audio: Option<bool>,
    ) -> Result<Sources, StoreError> {
        let preferred = |asked: Option<bool>, preference| match asked {
            Some(asked) => Ok(asked),
            None => self.store.pref_bool(preference),
        };
        Ok(Sources {
            mic: preferred(mic, &preferences::RECORDER_MIC_ENABLED)?,
            system_audio: preferred(system_audio, &preferences::RECORDER_SYSTEM_AUDIO_ENABLED)?,
        })
    }

    /// Opens the sources, creates the WAV file and records the session. Blocks.
    fn open_session(
        &self,
        id: Uuid,
        sources: Sources,
    ) -> Result<(Vec<Feed>, WavSink, bool), RecorderError> {
        let mut feeds = Vec::new();
        for (wanted, kind) in [
            (sources.mic, SourceKind::Microphone),
            (sources.system_audio, SourceKind::SystemAudio),
        ] {
            if wanted {
                let stream = self.devices.source(kind).open()?;
                feeds.push(Feed::new(stream, RECORDING_RATE));
            }
        }
        let stereo = feeds.len() == 2 && self.store.pref_bool(&preferences::RECORDER_STEREO)?;
        let dir = recordings_dir(&self.store, &self.data_root)?;
        let started = Utc::now();
        let target = dir.join(format!(
            "recording-{}-{}.wav",
            started.format("%Y%m%d-%H%M%S"),
            &id.simple().to_string()[..8]
        ));
        let sink = WavSink::create(&target, RECORDING_RATE, if stereo { 2 } else { 1 })
            .map_err(|e| Internal::new("could not create the recording file", e))?;
        self.store.insert_recorder_session(&RecorderSession {
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
}

/// A live transcription that is stopped unless taken (a recording that failed, or was too short
/// to transcribe).
struct AbortOnDrop(Option<LiveTranscription>);

impl AbortOnDrop {
    fn take(mut self) -> Option<LiveTranscription> {
        self.0.take()
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(running) = self.0.take() {
            running.abort();
        }
    }
}

/// The recordings folder (preference `recordingsFolder`, else `recordings/` in the data
/// folder `data_root`), created private if missing.
pub fn recordings_dir(store: &Store, data_root: &Path) -> Result<PathBuf, RecorderError> {
    let configured = store.pref_text(&preferences::RECORDINGS_FOLDER)?;
    let dir = if configured.trim().is_empty() {
        data_root.join("recordings")
    } else {
        PathBuf::from(configured.trim())
    };
    crate::files::create_private_dir(&dir)
        .map_err(|e| Internal::new("could not create the recordings folder", e))?;
    Ok(dir)
}

/// Transcribes the recording with the selected model; the error is the message to show.
async fn transcribe(transcriber: &Arc<Transcriber>, file: &Path) -> Result<String, String> {
    let job = Job {
        audio: Audio::File {
            path: file.to_path_buf(),
            hint: Some("wav".into()),
        },
        options: TranscribeOptions::default(),
        await_download: false,
        caller: Caller::Recorder,
    };
    match transcriber.run(job).await {
        Ok(transcript) => Ok(transcript.text),
        Err(err) => Err(err.public_message()),
    }
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
