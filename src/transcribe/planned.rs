//! A planned job run: [`Transcriber::plan`] checks everything that needs no audio (on a blocking
//! thread); [`Planned::run`] and [`Planned::run_streaming`] then wait for the download, take the
//! queue, decode and hear the audio inside the slot, post-process and apply the history policy.

use std::sync::Arc;
use std::time::Instant;

use super::job::ActionRan;
use super::job::round_ms;
use super::queue::Slot;
use super::readable::readable;
use super::resolve::{Resolved, check};
use super::run::{ProgressSink, Transcriber, blocking};
use super::speech::LiveSlots;
use super::{Audio, Caller, PostProcessing, StageTimes, TimedText, TranscribeError, Transcript};
use crate::audio::decode::DecodeError;
use crate::audio::vad::MAX_CHUNK_SAMPLES;
use crate::cancel::Cancel;
use crate::chat::ReadyAction;
use crate::engine::{EngineOutput, Task};
use crate::store::{NewHistoryEntry, preferences};
use crate::wire::transcription::TranscribeOptions;

/// Samples per second of the audio the engines take.
const SAMPLE_RATE: f64 = 16_000.0;

/// How a job takes the engine: one slot for the whole audio, or one per chunk (live audio).
pub(super) enum Slots {
    Held(Slot),
    PerChunk(LiveSlots),
}

/// A job that passed every check that needs no audio; [`Planned::run`] transcribes the audio.
pub struct Planned {
    pub(super) transcriber: Arc<Transcriber>,
    pub(super) resolved: Resolved,
    pub(super) options: TranscribeOptions,
    pub(super) caller: Caller,
    pub(super) post: PostProcessing,
    pub(super) save_api_history: bool,
    /// Voice activity detection before the engine (the option, else the preference).
    pub(super) vad: bool,
    /// The prompt action the request names, checked: it runs on the transcript.
    pub(super) action: Option<PlannedAction>,
}

impl Transcriber {
    /// Everything before the audio: options, engine and model, language codes, translation,
    /// weights (a model without them passes when `await_download`), the dictionary.
    pub async fn plan(
        self: &Arc<Self>,
        options: TranscribeOptions,
        await_download: bool,
        caller: Caller,
    ) -> Result<Planned, TranscribeError> {
        let transcriber = self.clone();
        blocking("planning the transcription", move || {
            transcriber.plan_now(options, await_download, caller)
        })
        .await
    }

    pub(super) fn plan_now(
        self: Arc<Self>,
        mut options: TranscribeOptions,
        await_download: bool,
        caller: Caller,
    ) -> Result<Planned, TranscribeError> {
        options.validate()?;
        let resolved = self.engines.resolve(
            &self.store,
            options.engine.as_deref(),
            options.model.as_deref(),
        )?;
        check(
            &resolved,
            &self.engines,
            &mut options,
            await_download,
            caller.untranslatable(),
        )?;
        let post = match caller {
            Caller::Corpus => PostProcessing::default(),
            Caller::Dictation(_) => PostProcessing::from_store(&self.store, true)?,
            Caller::Api | Caller::Recorder | Caller::Stream { .. } => {
                PostProcessing::from_store(&self.store, false)?
            }
        };
        let save_api_history = matches!(caller, Caller::Api)
            && self
                .store
                .pref_bool(&preferences::SAVE_API_TRANSCRIPTIONS_TO_HISTORY)?;
        let vad = match options.vad {
            Some(vad) => vad,
            None => self
                .store
                .pref_bool(&preferences::VOICE_ACTIVITY_DETECTION)?,
        };
        let action = match options.prompt_action.as_deref() {
            Some(key) => match (crate::chat::prepare(&self.store, &self.chat, key), &caller) {
                (Ok(ready), _) => Some(PlannedAction::Ready(Box::new(ready))),
                // A dictation is never refused for its workflow's action: its words are
                // inserted as heard, with why the action did not run.
                (Err(refused), Caller::Dictation(_)) => Some(PlannedAction::Refused {
                    key: key.to_string(),
                    why: refused.to_string(),
                }),
                (Err(refused), _) => return Err(refused.into()),
            },
            None => None,
        };
        Ok(Planned {
            transcriber: self,
            resolved,
            options,
            caller,
            post,
            save_api_history,
            vad,
            action,
        })
    }

    /// Fetches the weights of `resolved`'s model, sharing a download already running.
    pub(super) async fn download(&self, resolved: &Resolved) -> Result<(), TranscribeError> {
        self.fetch(resolved.engine.clone(), resolved.offer.spec)
            .await
    }
}

impl Planned {
    /// The engine and model the job runs on.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// Loads the job's model in the background now, so that its first engine call does not
    /// wait for the weights (live audio: while the person begins to speak; from a cold disk,
    /// tiny.en took 1.5 s). A failure is left for that call to report.
    pub fn preload_model(&self) {
        if !self.resolved.offer.downloaded {
            return;
        }
        let engine = self.resolved.engine.clone();
        let model = self.resolved.offer.spec.id;
        let residency = self.transcriber.residency.clone();
        tokio::task::spawn_blocking(move || {
            let _in_use = residency.begin(engine.id(), model);
            if let Err(err) = engine.preload(model) {
                tracing::debug!(model, %err, "the model could not be loaded ahead");
            }
        });
    }

    /// Transcribes `audio`, first waiting for the model's download when the plan allowed that.
    pub async fn run(self, audio: Audio) -> Result<Transcript, TranscribeError> {
        self.run_streaming(audio, None).await
    }

    /// [`Planned::run`], reporting to `on_segments` as it goes: each chunk's segments as soon
    /// as the engine has them (before the transcript is post-processed) and, for live audio,
    /// speech starting, chunks committed and provisional text.
    pub async fn run_streaming(
        mut self,
        audio: Audio,
        on_segments: Option<ProgressSink>,
    ) -> Result<Transcript, TranscribeError> {
        if !self.resolved.offer.downloaded {
            self.transcriber.download(&self.resolved).await?;
            let planned = self
                .transcriber
                .plan(self.options, false, self.caller)
                .await?;
            self = planned;
        }
        let cancel = Cancel::new();
        let _cancel_when_dropped = cancel.cancel_on_drop();
        let queued = Instant::now();
        let slot = match &audio {
            Audio::Samples(samples) if samples.is_empty() => None,
            // Each chunk takes the engine for itself as it comes.
            Audio::Live(_) => Some(Slots::PerChunk(LiveSlots {
                queue: self.transcriber.queue.clone(),
                runtime: tokio::runtime::Handle::current(),
            })),
            // A clip of at most one window (a realtime turn) holds the engine for a few seconds'
            // decoding: with others waiting, it may share a slot.
            Audio::Samples(samples) if samples.len() <= MAX_CHUNK_SAMPLES => {
                let at_once = self.resolved.engine.chunks_at_once();
                Some(Slots::Held(
                    self.transcriber.queue.acquire_share(at_once).await?,
                ))
            }
            _ => Some(Slots::Held(self.transcriber.queue.acquire().await?)),
        };
        let queue = queued.elapsed();
        let calls_at_once = match &slot {
            Some(Slots::Held(slot)) => slot.calls_at_once(),
            _ => 1,
        };
        let (output, samples, stages) = match slot {
            Some(slots) => self.listen(audio, slots, cancel, on_segments).await?,
            None => (EngineOutput::default(), 0, StageTimes::default()),
        };
        let reported = output.processing_time;
        let post_started = Instant::now();
        let mut transcript = self.finish(output, samples as f64 / SAMPLE_RATE);
        transcript.stages = StageTimes {
            queue,
            post: post_started.elapsed(),
            ..stages
        };
        transcript.processing_time =
            round_ms(reported.unwrap_or(transcript.stages.busy().as_secs_f64()));
        tracing::debug!(
            seconds = transcript.duration,
            queue_ms = queue.as_millis() as u64,
            engine_ms = transcript.stages.engine.as_millis() as u64,
            calls_at_once,
            "transcribed"
        );
        if let Some(action) = self.action.take() {
            transcript = run_action(action, transcript).await;
        }
        self.save(transcript).await
    }

    /// Post-processes the engine's output into a transcript (the caller fills in the stage
    /// times and the processing time).
    fn finish(&self, output: EngineOutput, duration: f64) -> Transcript {
        let language = output.language.as_deref();
        let finish = |text: &str| post_process(&self.post, &self.options, language, text);
        let timed_finely = self.resolved.offer.spec.capabilities.word_timestamps;
        let segments = readable(&output.segments, timed_finely)
            .iter()
            .map(|s| TimedText::from_segment(s, finish))
            .collect();
        Transcript {
            text: finish(&output.text),
            raw_text: output.text,
            language: output.language,
            duration: round_ms(duration),
            processing_time: 0.0,
            engine: self.resolved.engine.id().into(),
            model: self.resolved.offer.spec.id,
            segments,
            stages: StageTimes::default(),
            action: None,
        }
    }

    /// The history policy of the job's caller. An API transcription that heard nothing is not
    /// kept; a dictation always is, empty or not (the contract: a session id is also its
    /// history entry id, so a finished session stays readable).
    async fn save(self, mut transcript: Transcript) -> Result<Transcript, TranscribeError> {
        if transcript.text.trim().is_empty()
            && matches!(self.caller, Caller::Api | Caller::Stream { .. })
        {
            return Ok(transcript);
        }
        let action = transcript.action.as_ref();
        let mut entry = NewHistoryEntry {
            text: transcript.text.clone(),
            raw_text: transcript.raw_text.clone(),
            duration: transcript.duration,
            language: transcript.language.clone(),
            engine: transcript.engine.clone(),
            model: Some(transcript.model.into()),
            transcribed_text: action.map(|a| a.transcribed_text.clone()),
            prompt_action_error: action.and_then(|a| a.error.clone()),
            ..NewHistoryEntry::default()
        };
        match &self.caller {
            Caller::Api if self.save_api_history => {}
            Caller::Stream { save: true } => entry.text = entry.text.trim().to_string(),
            Caller::Dictation(dictated) => {
                entry.id = Some(dictated.id);
                entry.text = entry.text.trim().to_string();
                entry.timestamp = Some(dictated.started_at);
                entry.app_name = dictated.app_name.clone();
                entry.app_bundle_id = dictated.app_bundle_id.clone();
                entry.app_url = dictated.app_url.clone();
            }
            _ => return Ok(transcript),
        }
        let store = self.transcriber.store.clone();
        let saved = blocking("saving the transcript stopped", move || {
            Ok(store.insert_history(&entry)?)
        })
        .await?;
        transcript.text = saved.text;
        Ok(transcript)
    }
}

/// The prompt action of a job: ready to run, or refused (a dictation's, which goes on without).
pub(super) enum PlannedAction {
    Ready(Box<ReadyAction>),
    Refused { key: String, why: String },
}

/// `transcript` with `action` run on its text: the action's output as its text, or, when the
/// call fails, the text as it was and why. Nothing is run on a transcript without text.
async fn run_action(action: PlannedAction, mut transcript: Transcript) -> Transcript {
    if transcript.text.trim().is_empty() {
        return transcript;
    }
    let action = match action {
        PlannedAction::Ready(ready) => *ready,
        PlannedAction::Refused { key, why } => {
            transcript.action = Some(ActionRan {
                name: key,
                transcribed_text: transcript.text.clone(),
                error: Some(why),
                ..ActionRan::default()
            });
            return transcript;
        }
    };
    let stop = Cancel::new();
    let _stop_when_dropped = stop.cancel_on_drop();
    let mut ran = ActionRan {
        name: action.action.name.clone(),
        transcribed_text: transcript.text.clone(),
        ..ActionRan::default()
    };
    let text = transcript.text.clone();
    let started = Instant::now();
    let result = tokio::task::spawn_blocking(move || action.run(&text, &stop)).await;
    ran.seconds = round_ms(started.elapsed().as_secs_f64());
    match result {
        Ok(Ok(reply)) => {
            ran.model = reply.model;
            transcript.text = reply.text;
        }
        Ok(Err(error)) => ran.error = Some(error.to_string()),
        Err(stopped) => {
            ran.error = Some(format!(
                "The prompt action stopped unexpectedly ({stopped})"
            ));
        }
    }
    if let Some(error) = &ran.error {
        tracing::info!(
            action = ran.name,
            error,
            "prompt action failed: the transcript is kept"
        );
    }
    transcript.action = Some(ran);
    transcript
}

/// `text` through the request's post-processing; numbers are written as digits in English
/// (what an English-only model or a translation produces, or the language heard).
pub(super) fn post_process(
    post: &PostProcessing,
    options: &TranscribeOptions,
    language: Option<&str>,
    text: &str,
) -> String {
    let task = options.task.unwrap_or(Task::Transcribe);
    let english = language.is_none_or(|l| l == "en") || task == Task::Translate;
    post.apply(text, english, options)
}

pub(super) fn audio_error(err: DecodeError) -> TranscribeError {
    match err {
        DecodeError::Io(e) => TranscribeError::internal("could not read the spooled audio", e),
        other => TranscribeError::Audio(other),
    }
}
