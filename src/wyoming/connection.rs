//! One Wyoming connection: `describe` → `info`, `ping` → `pong`, and utterances (`transcribe`,
//! `audio-start`, `audio-chunk`..., `audio-stop`) transcribed through the one transcription
//! queue, live as their audio comes when it comes at the pace of speech: `transcript-start`, a `transcript-chunk` as each stretch of
//! speech is settled, `transcript-stop`, then the whole `transcript`. Bad input gets an `error`
//! event; where the stream cannot go on (its framing or audio is broken), the connection closes.
//! Work stops when the client leaves.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::task::JoinHandle;

use super::audio::{Format, Utterance};
use super::event::{Event, ReadError, read_event, write_event};
use super::info::info_data;
use crate::api::ApiError;
use crate::app::App;
use crate::cancel::Cancel;
use crate::store::preferences;
use crate::transcribe::{Audio, Caller, LiveAudio, Progress, ProgressSink, TranscribeError};
use crate::wire::transcription::TranscribeOptions;

/// A connection with no event under way and no transcription running closes after this long.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Once an event has begun, all of it (header, data, payload) must arrive within this time.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(10);
/// A client that reads nothing for this long is gone.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the reading half hands the connection.
enum Incoming {
    Event(Event),
    /// The framing is lost (or the client was silent too long): say why and close.
    Broken(ReadError),
    Idle,
}

/// Serves `stream` until the client leaves, the stream breaks or it stays idle.
pub async fn serve(app: Arc<App>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let (out, outgoing) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_all(write, outgoing));
    let (incoming_tx, mut incoming) = mpsc::channel(1);
    let reader = tokio::spawn(read_all(read, incoming_tx));
    let mut connection = Connection {
        app,
        out,
        model: None,
        language: None,
        open: None,
        running: None,
    };
    loop {
        let next = match connection.running.as_mut() {
            // A transcription under way: no idle limit; its end frees the connection for more.
            Some(job) => tokio::select! {
                next = incoming.recv() => next,
                _ = &mut job.handle => {
                    connection.running = None;
                    continue;
                }
            },
            None => incoming.recv().await,
        };
        let keep_going = match next {
            Some(Incoming::Event(event)) => connection.handle(event).await,
            Some(Incoming::Broken(ReadError::Closed)) | None => false,
            Some(Incoming::Broken(error)) => {
                connection.error(error.code(), &error.to_string());
                false
            }
            Some(Incoming::Idle) => connection.running.is_some(),
        };
        if !keep_going {
            break;
        }
    }
    reader.abort();
    // A transcription still running is abandoned (its handle's drop aborts it, and with it the
    // engine's work); what was said before the close is still written.
    drop(connection);
    let _ = writer.await;
}

/// Reads events into `incoming` until the stream ends or breaks.
async fn read_all(read: OwnedReadHalf, incoming: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(read);
    loop {
        let next = match tokio::time::timeout(IDLE_TIMEOUT, reader.fill_buf()).await {
            Err(_) => Incoming::Idle,
            Ok(Err(error)) => Incoming::Broken(error.into()),
            Ok(Ok(_)) => match tokio::time::timeout(EVENT_TIMEOUT, read_event(&mut reader)).await {
                Ok(Ok(event)) => Incoming::Event(event),
                Ok(Err(error)) => Incoming::Broken(error),
                Err(_) => Incoming::Broken(ReadError::Io(std::io::ErrorKind::TimedOut.into())),
            },
        };
        let ends = matches!(next, Incoming::Broken(_));
        if incoming.send(next).await.is_err() || ends {
            return;
        }
    }
}

/// Writes every event sent to `outgoing`, in order, until every sender is gone or the client
/// stops reading.
async fn write_all(write: OwnedWriteHalf, mut outgoing: mpsc::UnboundedReceiver<Event>) {
    let mut write = tokio::io::BufWriter::new(write);
    while let Some(event) = outgoing.recv().await {
        match tokio::time::timeout(WRITE_TIMEOUT, write_event(&mut write, &event)).await {
            Ok(Ok(())) => {}
            _ => return,
        }
    }
}

/// An utterance whose audio is still coming.
struct Open {
    audio: Utterance,
    heard: Heard,
}

/// Audio that has come for [`LIVE_AFTER`] is transcribed live (a microphone's, sent at real
/// time: its text firms up as the person speaks and is mostly ready at the stop). Audio that
/// ends sooner (sent faster than it plays, a recording) is transcribed at the stop, stretch by
/// stretch as live audio is (which reads short commands with pauses better than a file's long
/// chunks: 4.4 % against 8.9 % WER on the development `pocketsphinx` set), without the
/// provisional passes live text costs.
pub const LIVE_AFTER: Duration = Duration::from_secs(1);

/// Audio that came at once and lasts longer than this (6 s at 16 kHz) is heard as a file is,
/// packed into long chunks that two decoders share: stretch by stretch, each stretch is read
/// twice (after the text before it, and alone), which for longer readings costs more than it
/// gains (docs/performance.md, "Wyoming").
const WHOLE_AFTER_SAMPLES: usize = 6 * 16_000;

/// Where an utterance's audio goes.
enum Heard {
    /// Kept until it is clear how the audio comes.
    Pending {
        planned: Box<crate::transcribe::Planned>,
        samples: Vec<f32>,
        since: std::time::Instant,
    },
    /// To the live transcription, with its stop signal.
    Live {
        blocks: std::sync::mpsc::Sender<Vec<f32>>,
        stopping: Cancel,
    },
    /// Nowhere: the utterance was refused (its model or language). The rest of its audio is read
    /// and dropped, so that the client, which sends it all before it reads, gets to read why.
    Refused,
}

/// A transcription under way; dropping it abandons it.
struct Running {
    handle: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

struct Connection {
    app: Arc<App>,
    out: UnboundedSender<Event>,
    /// What the last `transcribe` asked for.
    model: Option<String>,
    language: Option<String>,
    open: Option<Open>,
    running: Option<Running>,
}

impl Connection {
    fn send(&self, kind: &str, data: Value) {
        let _ = self.out.send(Event::new(kind, data));
    }

    fn error(&self, code: &str, text: &str) {
        tracing::debug!(code, text, "wyoming: error");
        self.send("error", json!({"text": text, "code": code}));
    }

    /// Handles one event; false: the connection closes.
    async fn handle(&mut self, event: Event) -> bool {
        match event.kind.as_str() {
            "describe" => {
                let transcriber = self.app.transcriber.clone();
                let offers = tokio::task::spawn_blocking(move || {
                    transcriber
                        .engines()
                        .iter()
                        .flat_map(|engine| engine.models())
                        .collect::<Vec<_>>()
                })
                .await
                .unwrap_or_default();
                self.send("info", info_data(&offers));
                true
            }
            "ping" => {
                self.send("pong", json!({"text": event.data.get("text")}));
                true
            }
            "transcribe" => self.transcribe(&event),
            "audio-start" => self.audio_start(&event).await,
            "audio-chunk" => self.audio_chunk(event),
            "audio-stop" => self.audio_stop(),
            other => {
                self.error("bad_request", &format!("Unknown event type '{other}'"));
                true
            }
        }
    }

    fn transcribe(&mut self, event: &Event) -> bool {
        let field = |key: &str| match event.data.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("'{key}' must be a string")),
        };
        match (field("name"), field("language")) {
            (Ok(model), Ok(language)) => {
                // The program's own name asks for no model in particular: the selected one.
                self.model = model.filter(|name| name != super::PROGRAM_NAME);
                self.language = language;
                true
            }
            (Err(why), _) | (_, Err(why)) => {
                self.error("bad_request", &why);
                true
            }
        }
    }

    async fn audio_start(&mut self, event: &Event) -> bool {
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
        // The transcript of the utterance before comes first.
        if let Some(mut running) = self.running.take() {
            let _ = (&mut running.handle).await;
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
                let (blocks, received) = std::sync::mpsc::channel();
                let live = LiveAudio::new(received);
                let stopping = live.stopping.clone();
                let pending = std::mem::replace(&mut open.heard, Heard::Live { blocks, stopping });
                if let (
                    Heard::Pending {
                        planned, samples, ..
                    },
                    Heard::Live { blocks, .. },
                ) = (pending, &open.heard)
                {
                    if !samples.is_empty() {
                        let _ = blocks.send(samples);
                    }
                    self.start(*planned, Audio::Live(live));
                }
            }
        }
    }

    fn audio_chunk(&mut self, event: Event) -> bool {
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

    fn audio_stop(&mut self) -> bool {
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
                    let (blocks, received) = std::sync::mpsc::channel();
                    let live = LiveAudio::new(received);
                    live.stopping.cancel();
                    let _ = blocks.send(samples);
                    drop(blocks);
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
