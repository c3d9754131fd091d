//! Transcribing a realtime session's turns: one at a time, in the order they were committed,
//! each through the one transcription path (the engine queue with everyone else's work, the
//! dictionary and numbers, the history policy of [`Caller::Stream`]). The segments of a turn are
//! reported as deltas as soon as the engine has them, then its whole text.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::config::SessionConfig;
use super::turns::Turn;
use crate::transcribe::{
    Audio, Caller, Planned, Progress, ProgressSink, TranscribeError, Transcriber,
};
use crate::wire::transcription::TranscribeOptions;

/// A committed turn and how to transcribe it.
pub struct TurnJob {
    pub turn: Turn,
    pub options: TranscribeOptions,
    pub save: bool,
}

/// What the transcription of turns reports, in order.
#[derive(Debug)]
pub enum TurnReport {
    /// Text of the turn, appended to what came before (with the space between).
    Delta { item_id: String, delta: String },
    /// The turn's whole text and its audio length.
    Completed {
        item_id: String,
        transcript: String,
        seconds: f64,
    },
    Failed {
        item_id: String,
        error: TranscribeError,
    },
    /// The turn of this many samples no longer waits (the session's backlog shrinks by it).
    Done { samples: usize },
}

/// A session's configuration checked against the server: the options each turn is
/// transcribed with and the id of the model that transcribes them. `model` names an installed
/// model, or any other name (`whisper-1`, `gpt-4o-transcribe`) means the selected one.
pub async fn check(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, &'static str), TranscribeError> {
    let (options, planned) = planned(transcriber, config).await?;
    Ok((options, planned.resolved().offer.spec.id))
}

/// [`check`] for a session that opens, its model then loaded in the background. Only the
/// opening loads ahead: a client sending `session.update` after `session.update` with other
/// models names would otherwise load every installed model into memory.
pub async fn check_and_preload(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, &'static str), TranscribeError> {
    let (options, planned) = planned(transcriber, config).await?;
    planned.preload_model();
    Ok((options, planned.resolved().offer.spec.id))
}

/// The options each turn of a session with `config` is transcribed with, and their plan.
async fn planned(
    transcriber: &Arc<Transcriber>,
    config: &SessionConfig,
) -> Result<(TranscribeOptions, Planned), TranscribeError> {
    let asked = config.model.clone();
    let resolver = transcriber.clone();
    let model = tokio::task::spawn_blocking(move || asked.filter(|m| resolver.installed(m)))
        .await
        .map_err(|e| TranscribeError::internal("checking the model", e))?;
    let options = TranscribeOptions {
        model,
        language: config.language.clone(),
        prompt: config.prompt.clone(),
        ..TranscribeOptions::default()
    };
    let caller = Caller::Stream {
        save: config.save_to_history,
    };
    let planned = transcriber.plan(options.clone(), false, caller).await?;
    Ok((options, planned))
}

/// Transcribes the turns `jobs` brings, in order, until it ends; reports go to `reports`.
pub async fn transcribe_turns(
    transcriber: Arc<Transcriber>,
    mut jobs: UnboundedReceiver<TurnJob>,
    reports: UnboundedSender<TurnReport>,
) {
    while let Some(job) = jobs.recv().await {
        let samples = job.turn.samples.len();
        let item_id = job.turn.item_id.clone();
        let report = match transcribe_turn(&transcriber, job, &reports).await {
            Ok((transcript, seconds)) => TurnReport::Completed {
                item_id,
                transcript,
                seconds,
            },
            Err(error) => TurnReport::Failed { item_id, error },
        };
        let gone =
            reports.send(report).is_err() || reports.send(TurnReport::Done { samples }).is_err();
        if gone {
            return;
        }
    }
}

async fn transcribe_turn(
    transcriber: &Arc<Transcriber>,
    job: TurnJob,
    reports: &UnboundedSender<TurnReport>,
) -> Result<(String, f64), TranscribeError> {
    let planned = transcriber
        .plan(job.options, false, Caller::Stream { save: job.save })
        .await?;
    let (item_id, sender) = (job.turn.item_id.clone(), reports.clone());
    let mut said_anything = false;
    let deltas: ProgressSink = Box::new(move |progress| {
        let Progress::Segments(segments) = progress else {
            return;
        };
        for text in segments
            .iter()
            .map(|s| s.text.trim())
            .filter(|t| !t.is_empty())
        {
            let delta = if said_anything {
                format!(" {text}")
            } else {
                text.to_string()
            };
            said_anything = true;
            let _ = sender.send(TurnReport::Delta {
                item_id: item_id.clone(),
                delta,
            });
        }
    });
    let transcript = planned
        .run_streaming(Audio::Samples(job.turn.samples), Some(deltas))
        .await?;
    Ok((transcript.text.trim().to_string(), transcript.duration))
}
