//! One realtime session on its WebSocket: the socket's side of `realtime::session::Session`
//! (which acts on the client's events and keeps the backlog of committed speech within
//! `realtime::MAX_BACKLOG_SECONDS`, closing with 1008 past it). Here: [`MAX_SESSIONS`] at once
//! (one more is told and closed); a message over [`MAX_MESSAGE_BYTES`] ends the session (1009);
//! a client silent for `App::realtime_idle` (`realtime::IDLE_TIMEOUT`) with nothing waiting is
//! told and closed; transcription errors rendered as OpenAI's error object from the API's Error
//! object. A session whose client is gone stops: its transcription is cancelled. A session the
//! server closes reads (and drops) what its client still sends, for at most
//! [`CLOSE_DRAIN`], until the client's close frame, so the client reads the reason.

use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::mpsc::unbounded_channel;
use tokio::time::Instant;

use crate::api::ApiError;
use crate::app::App;
use crate::realtime::events::{self, Refusal};
use crate::realtime::session::{INTERNAL, NORMAL, Output, Session};
use crate::realtime::transcribe::{transcribe_turns, turn_channels};
use crate::realtime::{CLOSE_DRAIN, MAX_MESSAGE_BYTES, MAX_SESSIONS};
use crate::transcribe::TranscribeError;

/// Close codes (RFC 6455) of the socket's own.
const TOO_BIG: u16 = 1009;
const TRY_AGAIN_LATER: u16 = 1013;

/// Serves one session on `socket` (`permit`: its place among the sessions; None when full).
pub async fn serve(app: Arc<App>, socket: WebSocket, permit: Option<OwnedSemaphorePermit>) {
    let mut socket = Socket {
        socket,
        gone: false,
    };
    let Some(permit) = permit else {
        let refusal = Refusal::new(
            "session_limit_reached",
            format!(
                "Verbatim serves at most {MAX_SESSIONS} realtime sessions at once; try again later"
            ),
        );
        socket.send(events::refused(&refusal, None)).await;
        socket.close(TRY_AGAIN_LATER, "too many sessions").await;
        socket.drain().await;
        return;
    };
    let mut socket = run(app, socket).await;
    // The session is over: its place is free while the socket drains.
    drop(permit);
    socket.drain().await;
}

/// The session loop: the transcription of turns reports, the client speaks, or the session
/// has been idle too long with nothing waiting. Returns the socket once the session is over
/// (its transcription stopped).
async fn run(app: Arc<App>, mut socket: Socket) -> Socket {
    let (jobs, pending) = turn_channels();
    let (reports_to, mut reports) = unbounded_channel();
    let worker = tokio::spawn(transcribe_turns(
        app.transcriber.clone(),
        pending,
        reports_to,
    ));
    let _stop_worker = AbortOnDrop(worker);
    let mut session = Session::new(app.transcriber.clone(), jobs);
    let opened = session.open().await;
    socket.deliver(opened).await;
    let mut last_heard = Instant::now();
    while !socket.gone {
        let idle = tokio::time::sleep_until(last_heard + app.realtime_idle);
        let out = tokio::select! {
            biased;
            Some(report) = reports.recv() => session.report(report),
            message = socket.socket.recv() => {
                last_heard = Instant::now();
                match message {
                    Some(Ok(Message::Text(text))) => session.text(text.as_str()).await,
                    Some(Ok(Message::Binary(_))) => session.binary(),
                    Some(Ok(Message::Close(_))) => vec![Output::Close(NORMAL, String::new())],
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => Vec::new(),
                    Some(Err(err)) => vec![read_failed(err)],
                    None => break,
                }
            }
            () = idle, if !session.waiting() => {
                let refusal = Refusal::new(
                    "session_idle",
                    format!(
                        "the session was idle for {} s and is closed",
                        app.realtime_idle.as_secs_f64()
                    ),
                );
                vec![
                    Output::Event(events::refused(&refusal, None)),
                    Output::Close(NORMAL, "idle".into()),
                ]
            }
        };
        socket.deliver(out).await;
    }
    socket
}

/// The WebSocket, and whether it is gone (nothing more can be sent).
struct Socket {
    socket: WebSocket,
    gone: bool,
}

impl Socket {
    /// Sends the session's outputs in order; a close ends the socket.
    async fn deliver(&mut self, out: Vec<Output>) {
        for output in out {
            match output {
                Output::Event(event) => self.send(event).await,
                Output::Failed { error, event_id } => {
                    let error = error_object(error, event_id.as_deref());
                    self.send(events::server("error", json!({ "error": error })))
                        .await;
                }
                Output::TurnFailed { item_id, error } => {
                    let fields = json!({
                        "item_id": item_id,
                        "content_index": 0,
                        "error": error_object(error, None),
                    });
                    self.send(events::server(
                        "conversation.item.input_audio_transcription.failed",
                        fields,
                    ))
                    .await;
                }
                Output::Close(code, reason) => {
                    self.close(code, &reason).await;
                    return;
                }
            }
        }
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

    /// Reads and drops what the client still sends, until its close frame, the end of the
    /// stream or [`CLOSE_DRAIN`]: closed with unread data, the connection would be reset and
    /// the client could lose what was sent last.
    async fn drain(&mut self) {
        let deadline = Instant::now() + CLOSE_DRAIN;
        while let Ok(Some(Ok(message))) =
            tokio::time::timeout_at(deadline, self.socket.recv()).await
        {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    }
}

/// OpenAI's error object for a transcription error: its type from the Error object's status,
/// and the Error object's code and message.
fn error_object(err: TranscribeError, event_id: Option<&str>) -> Value {
    let api = ApiError::from(err);
    let kind = if api.status().is_server_error() {
        "server_error"
    } else {
        "invalid_request_error"
    };
    json!({
        "type": kind,
        "code": api.code(),
        "message": api.message(),
        "param": null,
        "event_id": event_id,
    })
}

/// A message the socket could not read: too large (told with 1009), or the connection broke.
fn read_failed(err: axum::Error) -> Output {
    let too_big = err
        .into_inner()
        .downcast_ref::<tungstenite::Error>()
        .is_some_and(|e| matches!(e, tungstenite::Error::Capacity(_)));
    if too_big {
        Output::Close(
            TOO_BIG,
            format!("messages are at most {MAX_MESSAGE_BYTES} bytes"),
        )
    } else {
        Output::Close(INTERNAL, "the connection failed".into())
    }
}

/// Aborts the turns' transcription when the session ends, cancelling the engine's work.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
