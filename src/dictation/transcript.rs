//! The transcription step of a finished dictation: the session's workflow and profile settings,
//! the engine, snippets and corrections, and the history entry it is saved as.

use std::sync::Arc;
use std::thread::JoinHandle;

use uuid::Uuid;

use crate::engine::Task;
use crate::session;
use crate::store::{LanguageMode, Profile, Workflow};
use crate::transcribe::{ActionRan, TranscribeError, Transcriber, Transcript};
use crate::wire::transcription::TranscribeOptions;

/// A transcription that hears the audio as it is captured; taken once, when it is awaited.
pub(super) type LiveTranscription =
    Arc<std::sync::Mutex<Option<tokio::task::JoinHandle<Result<Transcript, TranscribeError>>>>>;

/// Waits for the session's live transcription to hear the end of what was captured; it saves
/// the text to history (the session id is the entry id). Answers the saved text (with the
/// prompt action that made it, if one ran), or the message the session fails with.
pub(super) async fn transcribe_and_save(
    transcriber: &Arc<Transcriber>,
    id: Uuid,
    thread: JoinHandle<Vec<f32>>,
    transcription: &LiveTranscription,
) -> Result<(String, Option<ActionRan>), String> {
    // Every sample, kept for a failure: the audio is then written out, so nothing is lost.
    let kept = session::join(thread).await.ok_or_else(|| {
        TranscribeError::internal("capture", "the capture thread stopped unexpectedly")
            .public_message()
    })?;
    let running = transcription
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let result = match running {
        Some(running) => running
            .await
            .unwrap_or_else(|e| Err(TranscribeError::internal("the transcription stopped", e))),
        None => Err(TranscribeError::internal(
            "dictation",
            "the session had no transcription",
        )),
    };
    match result {
        Ok(transcript) => Ok((transcript.text, transcript.action)),
        Err(err) => {
            let message = err.public_message();
            let folder = transcriber.data_folder().join(FAILED_AUDIO_FOLDER);
            let saved = session::blocking("keeping the audio stopped", move || {
                keep_audio(&folder, id, &kept)
            })
            .await;
            Err(match saved {
                Ok(path) => format!(
                    "{message} The audio is kept in {}; `verbatim dictation retry {}` transcribes it again.",
                    path.display(),
                    crate::wire::format_uuid(&id)
                ),
                Err(e) => {
                    tracing::error!(%id, "the dictation's audio could not be kept: {e}");
                    message
                }
            })
        }
    }
}

/// The folder of the data folder where the audio of dictations that could not be transcribed
/// is kept, as `<session id>.wav` (16 kHz mono, 16-bit).
pub const FAILED_AUDIO_FOLDER: &str = "failed-dictations";

/// Writes `samples` (16 kHz mono) as `<folder>/<ID>.wav`, atomically; returns its path.
fn keep_audio(
    folder: &std::path::Path,
    id: Uuid,
    samples: &[f32],
) -> Result<std::path::PathBuf, crate::session::Internal> {
    let failed = |e: std::io::Error| crate::session::Internal::new("keeping the audio", e);
    crate::files::create_private_dir(folder).map_err(failed)?;
    let path = folder.join(format!("{}.wav", crate::wire::format_uuid(&id)));
    let mut sink =
        crate::audio::wav::WavSink::create(&path, crate::audio::resample::TARGET_RATE, 1)
            .map_err(failed)?;
    sink.write(samples).map_err(failed)?;
    sink.finish().map_err(failed)
}

/// Transcription options of a session: the workflow's language settings and prompt action;
/// the profile's engine and model, and its language and translation where the workflow sets
/// none.
pub(super) fn session_options(
    workflow: Option<&Workflow>,
    profile: Option<&Profile>,
) -> TranscribeOptions {
    let mut options = TranscribeOptions::default();
    let mode = workflow.map_or(LanguageMode::Inherit, |w| w.extra.language_mode);
    match (mode, workflow) {
        (LanguageMode::Exact, Some(workflow)) => options.language = workflow.input_language.clone(),
        (LanguageMode::Multiple, Some(workflow)) => {
            options.language_hints = workflow.extra.language_hints.clone()
        }
        (LanguageMode::Auto, _) => {}
        _ => options.language = profile.and_then(|p| p.input_language.clone()),
    }
    let target = workflow
        .and_then(|w| w.translation_target_language.as_deref())
        .or_else(|| profile.and_then(|p| p.translation_target_language.as_deref()));
    // Whisper translates into English only; other targets are left untranslated.
    if target.is_some_and(|t| t.eq_ignore_ascii_case("en")) {
        options.task = Some(Task::Translate);
    }
    options.prompt_action = workflow
        .and_then(|w| w.extra.prompt_action_id)
        .map(|action| crate::wire::format_uuid(&action.0));
    if let Some(profile) = profile {
        options.engine = profile
            .extra
            .engine
            .clone()
            .filter(|e| !e.trim().is_empty());
        options.model = profile.extra.model.clone().filter(|m| !m.trim().is_empty());
    }
    options
}
