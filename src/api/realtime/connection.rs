//! One realtime session on its WebSocket: `session.created` first, then client events in order
//! (audio is resampled and cut into turns off the async runtime), each committed turn handed to
//! its transcription in order, and its deltas and text sent as they come.
//!
//! Limits: [`MAX_SESSIONS`] at once (one more is told and closed); a message over
//! [`MAX_MESSAGE_BYTES`] ends the session (1009); committed speech waiting for the engine over
//! [`MAX_BACKLOG_SECONDS`] (a client sending faster than its turns are transcribed) is told and
//! cut (1008); a client silent for `App::realtime_idle` (`realtime::IDLE_TIMEOUT`) with nothing
//! waiting is told and closed.
//! A session whose client is gone stops: its transcription is cancelled.

use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use base64::Engine as _;
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use super::events::{self, ClientEvent, Refusal, SERVER_ERROR};
use crate::app::App;
use crate::realtime::config::{SessionConfig, Shape};
use crate::realtime::transcribe::{TurnJob, TurnReport, check, transcribe_turns};
use crate::realtime::turns::{Heard, TurnError, Turns};
use crate::realtime::{MAX_BACKLOG_SECONDS, MAX_MESSAGE_BYTES, MAX_SESSIONS};
use crate::wire::transcription::TranscribeOptions;

/// Close codes (RFC 6455).
const NORMAL: u16 = 1000;
const POLICY: u16 = 1008;
const TOO_BIG: u16 = 1009;
const INTERNAL: u16 = 1011;
const TRY_AGAIN_LATER: u16 = 1013;

/// Samples per second of the audio turns hold.
const RATE: usize = 16_000;

/// How the session goes on after a client event.
enum Flow {
    Continue,
    Close(u16, String),
}

/// Serves one session on `socket` (`permit`: its place among the sessions; None when full).
pub async fn serve(app: Arc<App>, socket: WebSocket, permit: Option<OwnedSemaphorePermit>) {
    let mut session = Connection::new(app, socket);
    let Some(_permit) = permit else {
        let refusal = Refusal::new(
            "session_limit_reached",
            format!(
                "Verbatim serves at most {MAX_SESSIONS} realtime sessions at once; try again later"
            ),
        );
        session.send(events::refused(&refusal, None)).await;
        session.close(TRY_AGAIN_LATER, "too many sessions").await;
        return;
    };
    session.run().await;
}

struct Connection {
    app: Arc<App>,
    socket: WebSocket,
    id: String,
    config: SessionConfig,
    /// What each turn is transcribed with, and the model that does it (None: no model can
    /// transcribe with this configuration; turns fail with the reason).
    options: TranscribeOptions,
    model: Option<&'static str>,
    /// Off the async runtime while it hears an append.
    turns: Option<Box<Turns>>,
    /// A byte of a sample split between two appends.
    odd_byte: Option<u8>,
    /// Committed samples not yet transcribed.
    backlog: usize,
    jobs: Option<UnboundedSender<TurnJob>>,
    /// The socket is gone: nothing more can be sent.
    gone: bool,
}

impl Connection {
    fn new(app: Arc<App>, socket: WebSocket) -> Connection {
        let config = SessionConfig::default();
        let turns = Turns::new(config.rate, config.turn_detection);
        Connection {
            app,
            socket,
            id: format!("sess_{}", uuid::Uuid::new_v4().simple()),
            config,
            options: TranscribeOptions::default(),
            model: None,
            turns: Some(Box::new(turns)),
            odd_byte: None,
            backlog: 0,
            jobs: None,
            gone: false,
        }
    }

    async fn run(&mut self) {
        let (jobs, pending) = unbounded_channel();
        let (reports_to, mut reports) = unbounded_channel();
        self.jobs = Some(jobs);
        let worker = tokio::spawn(transcribe_turns(
            self.app.transcriber.clone(),
            pending,
            reports_to,
        ));
        let _stop_worker = AbortOnDrop(worker);
        let checked = check(&self.app.transcriber, &self.config).await;
        self.model = checked.as_ref().ok().map(|(_, model)| *model);
        let created = self.rendered(Shape::Ga);
        self.send(events::server(
            "session.created",
            json!({ "session": created }),
        ))
        .await;
        match checked {
            Ok((options, _)) => self.options = options,
            Err(err) => self.send(events::failed(err, None)).await,
        }
        let mut last_heard = Instant::now();
        while !self.gone {
            let idle = tokio::time::sleep_until(last_heard + self.app.realtime_idle);
            let flow = tokio::select! {
                biased;
                Some(report) = reports.recv() => {
                    self.reported(report).await;
                    Flow::Continue
                }
                message = self.socket.recv() => {
                    last_heard = Instant::now();
                    match message {
                        Some(Ok(message)) => self.received(message).await,
                        Some(Err(err)) => read_failed(err),
                        None => break,
                    }
                }
                () = idle, if self.backlog == 0 => {
                    let refusal = Refusal::new(
                        "session_idle",
                        format!(
                            "the session was idle for {} s and is closed",
                            self.app.realtime_idle.as_secs_f64()
                        ),
                    );
                    self.send(events::refused(&refusal, None)).await;
                    Flow::Close(NORMAL, "idle".into())
                }
            };
            if let Flow::Close(code, reason) = flow {
                self.close(code, &reason).await;
                break;
            }
        }
    }

    async fn reported(&mut self, report: TurnReport) {
        if let TurnReport::Done { samples } = report {
            self.backlog = self.backlog.saturating_sub(samples);
        } else if let Some(event) = events::report(report) {
            self.send(event).await;
        }
    }

    async fn received(&mut self, message: Message) -> Flow {
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => {
                let refusal = Refusal::new(
                    "invalid_event",
                    "send client events as JSON text messages (audio as base64 in input_audio_buffer.append)",
                );
                self.send(events::refused(&refusal, None)).await;
                return Flow::Continue;
            }
            Message::Close(_) => return Flow::Close(NORMAL, String::new()),
            Message::Ping(_) | Message::Pong(_) => return Flow::Continue,
        };
        let (event_id, event) = events::read(text.as_str());
        let outcome = match event {
            Ok(event) => self.act(event, event_id.as_deref()).await,
            Err(refusal) => Err(refusal),
        };
        match outcome {
            Ok(flow) => flow,
            Err(refusal) => {
                self.send(events::refused(&refusal, event_id.as_deref()))
                    .await;
                // The session's audio is gone: it cannot go on.
                if refusal.code == SERVER_ERROR {
                    Flow::Close(INTERNAL, refusal.message)
                } else {
                    Flow::Continue
                }
            }
        }
    }

    async fn act(&mut self, event: ClientEvent, event_id: Option<&str>) -> Result<Flow, Refusal> {
        match event {
            ClientEvent::Update { session, shape } => {
                self.update(&session, shape, event_id).await?;
                Ok(Flow::Continue)
            }
            ClientEvent::Append { audio } => self.append(audio).await,
            ClientEvent::Commit => {
                let heard = self.hear(|turns| turns.commit()).await?;
                self.take(heard.map_err(turn_refusal)?).await
            }
            ClientEvent::Clear => {
                if let Some(turns) = &mut self.turns {
                    turns.clear();
                }
                self.odd_byte = None;
                self.send(events::server("input_audio_buffer.cleared", json!({})))
                    .await;
                Ok(Flow::Continue)
            }
        }
    }

    /// Applies a session update, all or nothing: the new configuration is checked against the
    /// server (model, language, prompt) before it replaces the old one.
    async fn update(
        &mut self,
        session: &Value,
        shape: Shape,
        event_id: Option<&str>,
    ) -> Result<(), Refusal> {
        let next = self.config.updated(session, shape)?;
        let (options, model) = match check(&self.app.transcriber, &next).await {
            Ok(checked) => checked,
            Err(err) => {
                self.send(events::failed(err, event_id)).await;
                return Ok(());
            }
        };
        let (rate, detection) = (next.rate, next.turn_detection);
        let changed_detection = detection != self.config.turn_detection;
        let heard = self
            .hear(move |turns| {
                let mut heard = turns.set_rate(rate);
                if changed_detection {
                    heard.extend(turns.set_detection(detection));
                }
                Ok::<_, Refusal>(heard)
            })
            .await??;
        (self.config, self.options, self.model) = (next, options, Some(model));
        let kind = match shape {
            Shape::Ga => "session.updated",
            Shape::Beta => "transcription_session.updated",
        };
        let session = self.rendered(shape);
        self.send(events::server(kind, json!({ "session": session })))
            .await;
        if let Flow::Close(code, reason) = self.take(heard).await? {
            self.close(code, &reason).await;
        }
        Ok(())
    }

    /// Decodes and hears an append (off the async runtime).
    async fn append(&mut self, audio: String) -> Result<Flow, Refusal> {
        let odd = self.odd_byte.take();
        let (heard, odd) = self
            .hear(move |turns| {
                let mut bytes = base64::engine::general_purpose::STANDARD
                    .decode(audio.trim())
                    .map_err(|e| Refusal {
                        param: Some("audio".into()),
                        ..Refusal::new("invalid_value", format!("audio is not base64 ({e})"))
                    })?;
                if let Some(odd) = odd {
                    bytes.insert(0, odd);
                }
                let odd = (bytes.len() % 2 == 1).then(|| bytes.pop()).flatten();
                let pcm: Vec<i16> = bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect();
                let heard = turns.append(&pcm).map_err(turn_refusal)?;
                Ok::<_, Refusal>((heard, odd))
            })
            .await??;
        self.odd_byte = odd;
        self.take(heard).await
    }

    /// Runs `work` on the session's audio off the async runtime.
    async fn hear<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut Turns) -> T + Send + 'static,
    ) -> Result<T, Refusal> {
        let Some(mut turns) = self.turns.take() else {
            return Err(Refusal::new(SERVER_ERROR, "the session's audio was lost"));
        };
        let done = tokio::task::spawn_blocking(move || {
            let out = work(&mut turns);
            (turns, out)
        })
        .await;
        match done {
            Ok((turns, out)) => {
                self.turns = Some(turns);
                Ok(out)
            }
            Err(e) => {
                tracing::error!("a realtime session's audio work failed: {e}");
                Err(Refusal::new(SERVER_ERROR, "the session's audio was lost"))
            }
        }
    }

    /// Sends what the audio brought and hands each committed turn to its transcription.
    async fn take(&mut self, heard: Vec<Heard>) -> Result<Flow, Refusal> {
        for heard in heard {
            self.send(events::heard(&heard)).await;
            let Heard::Committed(turn) = heard else {
                continue;
            };
            self.backlog += turn.samples.len();
            if self.backlog > MAX_BACKLOG_SECONDS * RATE {
                let refusal = Refusal::new(
                    "falling_behind",
                    format!(
                        "more than {MAX_BACKLOG_SECONDS} s of committed audio wait for the engine: send audio at real time"
                    ),
                );
                self.send(events::refused(&refusal, None)).await;
                return Ok(Flow::Close(POLICY, "falling behind".into()));
            }
            let job = TurnJob {
                turn,
                options: self.options.clone(),
                save: self.config.save_to_history,
            };
            if let Some(jobs) = &self.jobs {
                let _ = jobs.send(job);
            }
        }
        Ok(Flow::Continue)
    }

    /// The session object in `shape`, naming the model that transcribes (or the one asked).
    fn rendered(&self, shape: Shape) -> Value {
        let model = self
            .model
            .map(str::to_string)
            .or_else(|| self.config.model.clone())
            .unwrap_or_default();
        self.config.render(&self.id, &model, shape)
    }

    async fn send(&mut self, event: Value) {
        if self.gone {
            return;
        }
        if self
            .socket
            .send(Message::Text(event.to_string().into()))
            .await
            .is_err()
        {
            self.gone = true;
        }
    }

    async fn close(&mut self, code: u16, reason: &str) {
        if self.gone {
            return;
        }
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        let _ = self.socket.send(Message::Close(Some(frame))).await;
        self.gone = true;
    }
}

/// A message the socket could not read: too large (told with 1009), or the connection broke.
fn read_failed(err: axum::Error) -> Flow {
    let too_big = err
        .into_inner()
        .downcast_ref::<tungstenite::Error>()
        .is_some_and(|e| matches!(e, tungstenite::Error::Capacity(_)));
    if too_big {
        Flow::Close(
            TOO_BIG,
            format!("messages are at most {MAX_MESSAGE_BYTES} bytes"),
        )
    } else {
        Flow::Close(INTERNAL, "the connection failed".into())
    }
}

fn turn_refusal(err: TurnError) -> Refusal {
    let code = match err {
        TurnError::BufferFull => "input_audio_buffer_full",
        TurnError::TooShort | TurnError::NoSpeech => "input_audio_buffer_commit_empty",
    };
    Refusal::new(code, err.to_string())
}

/// Aborts the turns' transcription when the session ends, cancelling the engine's work.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
