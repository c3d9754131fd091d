//! A planned job's audio heard inside its slot: decoded (or taken live, block by block) into
//! the engine stage as it comes, the stage's reports handed on, and the language a live
//! transcription settles kept for the next one on the same model.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use super::planned::{Planned, Slots, audio_error, post_process};
use super::readable::readable;
use super::resolve::language_choice;
use super::run::{Progress, ProgressSink, blocking};
use super::speech::{EngineCall, EngineSink, HeldSlot, Listened, Listener};
use super::{Audio, StageTimes, TimedText, TranscribeError};
use crate::audio::decode::{DecodeError, decode_into, open_regular};
use crate::cancel::Cancel;
use crate::engine::{EngineOutput, LanguageChoice, Task};

/// Hears live audio block by block until its senders are gone; whenever every block captured
/// so far is heard, the open chunk may be heard provisionally, the blocks that come meanwhile
/// heard beside that pass ([`Listener::provisional`]). An empty block means the capture failed:
/// what it heard is abandoned.
fn hear_live(
    blocks: &std::sync::mpsc::Receiver<Vec<f32>>,
    listener: &mut Listener,
    cancel: &Cancel,
) {
    use std::sync::mpsc::TryRecvError;
    loop {
        let block = match blocks.try_recv() {
            Ok(block) => block,
            Err(TryRecvError::Empty) => {
                listener.provisional(Some(blocks));
                match blocks.recv() {
                    Ok(block) => block,
                    Err(_) => return,
                }
            }
            Err(TryRecvError::Disconnected) => return,
        };
        if block.is_empty() {
            cancel.cancel();
        }
        if !listener.hear(&block) {
            return;
        }
    }
}

impl Planned {
    /// Decodes `audio` and hands it, as it comes, to voice activity detection and the engine,
    /// on a blocking thread that keeps `slot` to the end (even when the request is gone: then
    /// `cancel` stops the decode at its next packet and the engine at its next step). Gives
    /// the output, the samples heard and the time of each stage.
    pub(super) async fn listen(
        &self,
        audio: Audio,
        slots: Slots,
        cancel: Cancel,
        on_segments: Option<ProgressSink>,
    ) -> Result<(EngineOutput, usize, StageTimes), TranscribeError> {
        let call = EngineCall {
            engine: self.resolved.engine.clone(),
            model: self.resolved.offer.spec,
            vad: self.vad,
            language: language_choice(&self.options),
            task: self.options.task.unwrap_or(Task::Transcribe),
            initial_prompt: self.post.initial_prompt(self.options.prompt.as_deref()),
            words: self.options.wants_words(),
            cancel: cancel.clone(),
            live: None,
            held: None,
            language_guess: None,
        };
        let live_languages = self.transcriber.live_languages.clone();
        let guess_language = matches!(slots, Slots::PerChunk(_))
            && !matches!(call.language, LanguageChoice::Exact(_));
        let spec = self.resolved.offer.spec;
        let session_language = self
            .transcriber
            .session_language
            .clone()
            .filter(|code| guess_language && spec.multilingual() && spec.knows_language(code));
        let timed_finely = self.resolved.offer.spec.capabilities.word_timestamps;
        let on_segments = on_segments.map(|mut sink| {
            let (post, options) = (self.post.clone(), self.options.clone());
            let sink: EngineSink = Box::new(move |listened| {
                let timed = |segments: &[_], language| -> Vec<TimedText> {
                    readable(segments, timed_finely)
                        .iter()
                        .map(|s| {
                            TimedText::from_segment(s, |t| {
                                post_process(&post, &options, language, t)
                            })
                        })
                        .collect()
                };
                match listened {
                    Listened::Segments(segments, language) => {
                        sink(Progress::Segments(&timed(segments, language)))
                    }
                    Listened::SpeechStarted { at } => sink(Progress::SpeechStarted { at }),
                    Listened::Committed {
                        start,
                        end,
                        goes_on,
                    } => sink(Progress::Committed {
                        start,
                        end,
                        goes_on,
                    }),
                    Listened::Tentative(segments, language) => {
                        let texts: Vec<String> = timed(segments, language)
                            .into_iter()
                            .map(|t| t.text.trim().to_owned())
                            .filter(|t| !t.is_empty())
                            .collect();
                        sink(Progress::Tentative(&texts.join(" ")))
                    }
                }
            });
            sink
        });
        let engine_id = self.resolved.engine.id();
        let residency = self.transcriber.residency.clone();
        let model_id = self.resolved.offer.spec.id;
        let queue = self.transcriber.queue.clone();
        let runtime = tokio::runtime::Handle::current();
        blocking("the engine stopped", move || {
            let (held, live) = match slots {
                Slots::Held(slot) => (Some(slot), None),
                Slots::PerChunk(live) => (None, Some(live)),
            };
            let held = held.map(|slot| HeldSlot {
                slot: Some(slot),
                queue: queue.clone(),
                runtime: runtime.clone(),
            });
            // The language the last live transcription settled on, else the session's; a
            // guess outside the request's shortlist is no guess.
            let language_guess = guess_language
                .then(|| lock(&live_languages).get(model_id).cloned())
                .flatten()
                .or(session_language)
                .filter(|guess| match &call.language {
                    LanguageChoice::Shortlist(codes) => {
                        codes.iter().any(|c| c.eq_ignore_ascii_case(guess))
                    }
                    _ => true,
                });
            let call = EngineCall {
                live,
                held,
                language_guess,
                ..call
            };
            let _in_use = residency.begin(engine_id, model_id);
            let started = Instant::now();
            let mut listener = Listener::new(call, on_segments);
            let decoded = match audio {
                Audio::Samples(samples) => {
                    listener.hear(&samples);
                    Ok(())
                }
                Audio::Live(live) => {
                    listener.stop_provisional_on(live.stopping);
                    hear_live(&live.blocks, &mut listener, &cancel);
                    Ok(())
                }
                Audio::File { path, hint } => open_regular(&path)
                    .map_err(DecodeError::Io)
                    .and_then(|file| decode_into(file, hint.as_deref(), &cancel, &mut listener))
                    .map(drop),
                Audio::Opened { file, hint } => {
                    decode_into(file, hint.as_deref(), &cancel, &mut listener).map(drop)
                }
            };
            // Said once, wherever the cancel found the work: decoding, between two chunks or
            // inside an engine call.
            if cancel.is_cancelled() {
                tracing::info!(model = model_id, "cancelled");
            }
            let engine_failed = listener.failed();
            if let (Err(err), false) = (decoded, engine_failed) {
                return Err(audio_error(err));
            }
            let heard = listener.finish();
            let output = heard
                .output
                .map_err(|e| TranscribeError::from_engine(e, engine_id))?;
            if let (true, Some(language)) = (guess_language, &output.language) {
                lock(&live_languages).insert(model_id, language.clone());
            }
            let stages = StageTimes {
                decode: started.elapsed().saturating_sub(heard.vad + heard.engine),
                vad: heard.vad,
                engine: heard.engine,
                ..StageTimes::default()
            };
            Ok((output, heard.samples, stages))
        })
        .await
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
