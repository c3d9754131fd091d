//! One utterance on a Wyoming connection: `audio-start` plans it as the HTTP routes plan
//! theirs (its model and language refused alike), `audio-chunk`s bring its audio (converted to
//! 16 kHz mono), `audio-stop` ends it; its transcription reports `transcript-chunk`s, then
//! `transcript-stop` and the `transcript`. Audio that comes at the pace of speech is heard live;
//! audio sent all at once, at the stop.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::audio::{Format, Utterance};
use super::connection::{Connection, Heard, LIVE_AFTER, Open, Running, WHOLE_AFTER_SAMPLES};
use super::event::Event;
use crate::api::ApiError;
use crate::app::App;
use crate::store::preferences;
use crate::transcribe::{Audio, Caller, LiveAudio, Progress, ProgressSink, TranscribeError};
use crate::wire::transcription::TranscribeOptions;

impl Connection {
    pub(super) async fn audio_start(&mut self, event: &Event) -> bool {
        if self.open.is_some() {
            self.error(
                "bad_request",
                "audio-start inside an utterance: send audio-stop first",
            );
            return false;
        }
        let format = match Format::from_data(&event.data) {
            Ok(format) => format,
            Err(why) => {
                self.error("bad_request", &format!("audio-start: {why}"));
                return false;
            }
        };
        // The transcript of the utterance before comes first, unless the client leaves before
        // it (the transcription is then abandoned with the connection).
        if let Some(mut running) = self.running.take() {
            let mut gone = self.gone.clone();
            tokio::select! {
                _ = &mut running.handle => {}
                _ = gone.wait_for(|gone| *gone) => {
                    self.running = Some(running);
                    return false;
                }
            }
        }
        let options = TranscribeOptions {
            model: self.model.clone(),
            language: self.language.clone(),
            ..TranscribeOptions::default()
        };
        let planned = match plan(self.app.clone(), options).await {
            Ok(planned) => planned,
            Err(error) => {
                let (code, text) = refusal(error, self.model.as_deref());
                self.error(code, &text);
                self.open = Some(Open {
                    audio: Utterance::new(format),
                    heard: Heard::Refused,
                });
                return true;
            }
        };
        planned.preload_model();
        self.send("transcript-start", language_data(self.language.as_deref()));
        self.open = Some(Open {
            audio: Utterance::new(format),
            heard: Heard::Pending {
                planned: Box::new(planned),
                samples: Vec::new(),
                since: std::time::Instant::now(),
            },
        });
        true
    }

    /// Starts transcribing `audio` with `planned`, its reports going to the client.
    fn start(&mut self, planned: crate::transcribe::Planned, audio: Audio) {
        let handle = tokio::spawn(transcribe(planned, audio, self.out.clone()));
        self.running = Some(Running { handle });
    }

    /// Hands `samples` on: kept while pending, and once the audio has come for
    /// [`LIVE_AFTER`], everything so far to a live transcription.
    fn hear(&mut self, samples: Vec<f32>) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        match &mut open.heard {
            Heard::Refused => {}
            Heard::Live { blocks, .. } => {
                if !samples.is_empty() {
                    let _ = blocks.send(samples);
                }
            }
            Heard::Pending {
                samples: kept,
                since,
                ..
            } => {
                kept.extend(samples);
                if since.elapsed() < LIVE_AFTER {
                    return;
                }
                let (blocks, live) = live_from(std::mem::take(kept));
                let stopping = live.stopping.clone();
                let live_now = Heard::Live { blocks, stopping };
                if let Heard::Pending { planned, .. } = std::mem::replace(&mut open.heard, live_now)
                {
                    self.start(*planned, Audio::Live(live));
                }
            }
        }
    }

    pub(super) fn audio_chunk(&mut self, event: Event) -> bool {
        let Some(open) = self.open.as_mut() else {
            self.error(
                "bad_request",
                "audio-chunk outside an utterance: send audio-start first",
            );
            return false;
        };
        if matches!(open.heard, Heard::Refused) {
            return true;
        }
        let converted = Format::from_data(&event.data).and_then(|format| {
            open.audio
                .convert(format, event.payload.as_deref().unwrap_or(&[]))
        });
        match converted {
            Ok(samples) => {
                self.hear(samples);
                true
            }
            Err(why) => {
                let code = if why == super::audio::AudioError::TooLong {
                    "payload_too_large"
                } else {
                    "bad_request"
                };
                self.error(code, &format!("audio-chunk: {why}"));
                false
            }
        }
    }

    pub(super) fn audio_stop(&mut self) -> bool {
        let Some(open) = self.open.take() else {
            self.error(
                "bad_request",
                "audio-stop outside an utterance: send audio-start first",
            );
            return false;
        };
        let rest = open.audio.finish();
        match open.heard {
            Heard::Refused => {}
            Heard::Pending {
                planned,
                mut samples,
                ..
            } => {
                samples.extend(rest);
                if samples.len() > WHOLE_AFTER_SAMPLES {
                    self.start(*planned, Audio::Samples(samples));
                } else {
                    // All of it, ended at once: no provisional pass.
                    let (_, live) = live_from(samples);
                    live.stopping.cancel();
                    self.start(*planned, Audio::Live(live));
                }
            }
            Heard::Live { blocks, stopping } => {
                if !rest.is_empty() {
                    let _ = blocks.send(rest);
                }
                // The audio ends with its sender; a provisional pass under way is dropped so
                // that the last words are heard at once.
                stopping.cancel();
                drop(blocks);
            }
        }
        true
    }
}

/// Live audio that begins with `samples`, and the sender of what follows (dropping it ends the
/// audio).
fn live_from(samples: Vec<f32>) -> (std::sync::mpsc::Sender<Vec<f32>>, LiveAudio) {
    let (blocks, received) = std::sync::mpsc::channel();
    if !samples.is_empty() {
        let _ = blocks.send(samples);
    }
    (blocks, LiveAudio::new(received))
}

/// The request planned as the HTTP routes plan theirs, saved to history only when
/// `wyomingHistory` is on.
async fn plan(
    app: Arc<App>,
    options: TranscribeOptions,
) -> Result<crate::transcribe::Planned, TranscribeError> {
    let store = app.store.clone();
    let save = tokio::task::spawn_blocking(move || store.pref_bool(&preferences::WYOMING_HISTORY))
        .await
        .map_err(|e| TranscribeError::internal("reading a preference", e))??;
    app.transcriber
        .plan(options, false, Caller::Stream { save })
        .await
}

/// The `error` for an utterance the server refuses: the HTTP routes' code and message, but
/// for a model that is not installed the command that installs it (the routes' hint,
/// `?await_download=1`, means nothing here).
fn refusal(error: TranscribeError, model: Option<&str>) -> (&'static str, String) {
    let missing = matches!(
        error,
        TranscribeError::NotConfigured(_) | TranscribeError::NotDownloaded { .. }
    );
    let error = ApiError::from(error);
    match model {
        Some(model) if missing => (
            error.code(),
            format!("Model '{model}' is not installed: `verbatim models download {model}` gets it"),
        ),
        _ => (error.code(), error.message()),
    }
}

/// `{"language": ...}` when one is known.
fn language_data(language: Option<&str>) -> Value {
    match language {
        Some(language) => json!({"language": language}),
        None => json!({}),
    }
}

/// Transcribes an utterance's audio, each settled stretch of speech sent as a
/// `transcript-chunk`, then `transcript-stop` and the `transcript` (or an `error`).
async fn transcribe(
    planned: crate::transcribe::Planned,
    audio: Audio,
    out: UnboundedSender<Event>,
) {
    let chunks = out.clone();
    let mut said_any = false;
    let sink: ProgressSink = Box::new(move |progress| {
        if let Progress::Segments(segments) = progress {
            let text = segments
                .iter()
                .map(|s| s.text.trim())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            if !text.is_empty() {
                let text = if said_any { format!(" {text}") } else { text };
                said_any = true;
                let _ = chunks.send(Event::new("transcript-chunk", json!({"text": text})));
            }
        }
    });
    let result = planned.run_streaming(audio, Some(sink)).await;
    let _ = out.send(Event::new("transcript-stop", json!({})));
    match result {
        Ok(transcript) => {
            let mut data = json!({"text": transcript.text});
            if let Some(language) = transcript.language {
                data["language"] = Value::String(language);
            }
            let _ = out.send(Event::new("transcript", data));
        }
        Err(error) => {
            let message = error.public_message();
            let code = ApiError::from(error).code();
            let _ = out.send(Event::new("error", json!({"text": message, "code": code})));
        }
    }
}
