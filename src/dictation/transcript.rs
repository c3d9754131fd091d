//! The transcription step of a finished dictation: the session's workflow settings, the engine,
//! snippets and corrections, and the history entry it is saved as.

use std::sync::Arc;
use std::thread::JoinHandle;

use uuid::Uuid;

use super::service::Session;
use crate::engine::Task;
use crate::session;
use crate::store::{LanguageMode, Workflow};
use crate::transcribe::{Audio, Dictated, Job, Origin, TranscribeError, Transcriber};
use crate::wire::transcription::TranscribeOptions;

/// Transcribes what was captured with the session's workflow and saves it to history (the
/// session id is the entry id); answers the saved text, or the message the session fails with.
pub(super) async fn transcribe_and_save(
    transcriber: &Arc<Transcriber>,
    id: Uuid,
    thread: JoinHandle<Vec<f32>>,
    session: &Session,
) -> Result<String, String> {
    let samples = session::join(thread).await.ok_or_else(|| {
        TranscribeError::internal("capture", "the capture thread stopped unexpectedly")
            .public_message()
    })?;
    let job = Job {
        audio: Audio::Samples(samples),
        options: workflow_options(session.workflow.as_ref()),
        await_download: false,
        origin: Origin::Dictation(Dictated {
            id,
            started_at: session.started_at,
            app_name: session.context.app_name.clone(),
            app_bundle_id: session.context.app_id.clone(),
            app_url: session.context.url.clone(),
        }),
    };
    match transcriber.run(job).await {
        Ok(transcript) => Ok(transcript.text),
        Err(err) => Err(err.public_message()),
    }
}

/// Transcription options from a workflow's language settings.
fn workflow_options(workflow: Option<&Workflow>) -> TranscribeOptions {
    let mut options = TranscribeOptions::default();
    let Some(workflow) = workflow else {
        return options;
    };
    match workflow.extra.language_mode {
        LanguageMode::Inherit | LanguageMode::Auto => {}
        LanguageMode::Exact => options.language = workflow.input_language.clone(),
        LanguageMode::Multiple => options.language_hints = workflow.extra.language_hints.clone(),
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
