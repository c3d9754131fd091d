//! One Wyoming connection: its events read (bounded, a reader of their own) and written (in
//! order, a writer of their own); `describe` → `info`, `ping` → `pong`, `transcribe` noted for
//! the utterances after it, which `utterance` hears (the state of the one under way is kept
//! here). Bad input gets an `error` event; where the stream cannot go on (its framing or audio
//! is broken), the connection closes. Work stops when the client leaves.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::{self, UnboundedSender};
use tokio::task::JoinHandle;

use super::audio::Utterance;
use super::event::{Event, ReadError, read_event, write_event};
use super::info::info_data;
use crate::app::App;
use crate::cancel::Cancel;

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
    let (gone_tx, gone) = tokio::sync::watch::channel(false);
    let reader = tokio::spawn(read_all(read, incoming_tx, gone_tx));
    let mut connection = Connection {
        app,
        out,
        gone,
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

/// Reads events into `incoming` until the stream ends or breaks, and then says so on `gone`
/// at once (the events read before it may still wait to be handled).
async fn read_all(
    read: OwnedReadHalf,
    incoming: mpsc::Sender<Incoming>,
    gone: tokio::sync::watch::Sender<bool>,
) {
    let mut reader = BufReader::new(read);
    loop {
        let next = match tokio::time::timeout(IDLE_TIMEOUT, reader.fill_buf()).await {
            Err(_) => Incoming::Idle,
            Ok(Err(error)) => Incoming::Broken(error.into()),
            Ok(Ok(_)) => match tokio::time::timeout(EVENT_TIMEOUT, read_event(&mut reader)).await {
                Ok(Ok(event)) => Incoming::Event(event),
                Ok(Err(error)) => Incoming::Broken(error),
                Err(_) => Incoming::Broken(ReadError::Slow(EVENT_TIMEOUT.as_secs())),
            },
        };
        let ends = matches!(next, Incoming::Broken(_));
        if ends {
            gone.send_replace(true);
        }
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
pub(super) struct Open {
    pub(super) audio: Utterance,
    pub(super) heard: Heard,
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
/// gains. Chosen between 6 and 12 s on the development `pocketsphinx` and `voices` sets with
/// `scripts/bench-wyoming` (docs/performance.md, "Wyoming").
pub(super) const WHOLE_AFTER_SAMPLES: usize = 6 * 16_000;

/// Where an utterance's audio goes.
pub(super) enum Heard {
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
pub(super) struct Running {
    pub(super) handle: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

pub(super) struct Connection {
    pub(super) app: Arc<App>,
    pub(super) out: UnboundedSender<Event>,
    /// True once the client left (or its stream broke).
    pub(super) gone: tokio::sync::watch::Receiver<bool>,
    /// What the last `transcribe` asked for.
    pub(super) model: Option<String>,
    pub(super) language: Option<String>,
    pub(super) open: Option<Open>,
    pub(super) running: Option<Running>,
}

impl Connection {
    pub(super) fn send(&self, kind: &str, data: Value) {
        let _ = self.out.send(Event::new(kind, data));
    }

    pub(super) fn error(&self, code: &str, text: &str) {
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
}
