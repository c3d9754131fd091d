//! The transcription step of a finished dictation: the session's workflow settings, the engine,
//! snippets and corrections, and the history entry it is saved as.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use uuid::Uuid;

use super::service::Session;
use crate::audio::resample::TARGET_RATE;
use crate::engine::Task;
use crate::session;
use crate::store::{LanguageMode, NewHistoryEntry, Store, Workflow};
use crate::transcribe::corrections::{Correction, apply_corrections};
use crate::transcribe::options::TranscribeOptions;
use crate::transcribe::service::{PostProcessing, Transcriber};

/// Transcribes what was captured with the session's workflow and saves it to history (the
/// session id is the entry id); answers the saved text, or the message the session fails with.
pub(super) async fn transcribe_and_save(
    store: &Arc<Store>,
    transcriber: &Transcriber,
    id: Uuid,
    thread: JoinHandle<Vec<f32>>,
    session: &Session,
) -> Result<String, String> {
    use crate::api::ApiError;
    let saved = async {
        let samples = session::join(thread).await.ok_or_else(|| {
            ApiError::internal("capture", "the capture thread stopped unexpectedly")
        })?;
        let duration = samples.len() as f64 / f64::from(TARGET_RATE);
        let mut options = workflow_options(session.workflow.as_ref());
        if options.task == Some(Task::Translate)
            && !transcriber
                .selected(store)?
                .is_some_and(|r| r.offer.spec.multilingual())
        {
            tracing::warn!(%id, "the workflow asks for English output but the model is English-only; not translating");
            options.task = None;
        }
        let resolved = transcriber.plan(store, &options, false)?;
        let post = PostProcessing::from_store(store)?;
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
                transcriber
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
        let snippets: Vec<Correction> = store
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
        let saving = store.clone();
        let saved = tokio::task::spawn_blocking(move || saving.insert_history(&entry))
            .await
            .map_err(|e| ApiError::internal("saving the transcript stopped", e))??;
        Ok::<_, ApiError>(saved.text)
    };
    saved.await.map_err(|e| e.message())
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
