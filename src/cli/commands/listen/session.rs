//! The WebSocket session of `verbatim listen`: the handshake (the token as a header), audio
//! appended as base64 PCM16, the server's events read as they come, and the wait for the last
//! turns' text.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use super::super::super::{CliError, Client};
use super::printer::Printer;
use crate::wire::ErrorBody;

/// How long the last turns may take to come back after the audio ends.
const LAST_TEXT_WAIT: Duration = Duration::from_secs(60);

/// The WebSocket session.
pub(super) struct RealtimeClient {
    socket: WebSocket<TcpStream>,
    /// Turns committed whose text has not come yet.
    waiting: usize,
}

impl RealtimeClient {
    pub(super) fn connect(client: &Client) -> Result<RealtimeClient, CliError> {
        let url = format!(
            "{}/v1/realtime?intent=transcription",
            client.base_url().replacen("http://", "ws://", 1)
        );
        let mut request = url.into_client_request().map_err(CliError::local)?;
        if let Some(token) = client.token() {
            let value = format!("Bearer {token}").parse().map_err(CliError::local)?;
            request.headers_mut().insert("authorization", value);
        }
        let cannot_connect = |e: &dyn std::fmt::Display| {
            CliError::CannotConnect(format!(
                "Cannot connect to the Verbatim server at {} ({e}). Is it running? Start it with `verbatim serve`.",
                client.base_url()
            ))
        };
        let address = client.base_url().trim_start_matches("http://").to_string();
        let stream = TcpStream::connect(&address).map_err(|e| cannot_connect(&e))?;
        let (socket, _) = tungstenite::client::client(request, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response)) => {
                refused(*response)
            }
            tungstenite::HandshakeError::Failure(e) => cannot_connect(&e),
            tungstenite::HandshakeError::Interrupted(_) => cannot_connect(&"interrupted"),
        })?;
        socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(5)))
            .map_err(CliError::local)?;
        Ok(RealtimeClient { socket, waiting: 0 })
    }

    pub(super) fn send(&mut self, event: &Value) -> Result<(), CliError> {
        self.socket
            .send(Message::text(event.to_string()))
            .map_err(|e| CliError::Local(format!("the session ended: {e}")))
    }

    pub(super) fn append(&mut self, samples: &[f32]) -> Result<(), CliError> {
        let bytes: Vec<u8> = samples
            .iter()
            .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0) as i16).to_le_bytes())
            .collect();
        let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.send(&json!({"type": "input_audio_buffer.append", "audio": audio}))
    }

    /// Prints the events already there; fails on the server's errors that end the session.
    pub(super) fn read_available(&mut self, printer: &mut Printer) -> Result<(), CliError> {
        while let Some(event) = self.read()? {
            self.take(event, printer)?;
        }
        Ok(())
    }

    /// Waits for the text of every turn committed, then closes.
    pub(super) fn finish(&mut self, printer: &mut Printer) -> Result<(), CliError> {
        // The commit is answered with its turn, or an error when nothing was being said.
        let deadline = Instant::now() + LAST_TEXT_WAIT;
        let mut answered = false;
        while (!answered || self.waiting > 0) && Instant::now() < deadline {
            match self.read()? {
                Some(event) => {
                    let kind = event["type"].as_str().unwrap_or_default();
                    answered |= kind == "input_audio_buffer.committed"
                        || (kind == "error" && event["error"]["event_id"] == "listen-end");
                    if kind == "error" && event["error"]["event_id"] == "listen-end" {
                        continue;
                    }
                    self.take(event, printer)?;
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
        printer.end();
        Ok(())
    }

    /// The next event if one has come.
    pub(super) fn read(&mut self) -> Result<Option<Value>, CliError> {
        match self.socket.read() {
            Ok(Message::Text(text)) => Ok(serde_json::from_str(&text).ok()),
            Ok(Message::Close(frame)) => Err(CliError::Local(format!(
                "the server ended the session{}",
                frame.map(|f| format!(": {}", f.reason)).unwrap_or_default()
            ))),
            Ok(_) => Ok(None),
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(CliError::Local(format!("the session ended: {e}"))),
        }
    }

    pub(super) fn take(&mut self, event: Value, printer: &mut Printer) -> Result<(), CliError> {
        let kind = event["type"].as_str().unwrap_or_default();
        match kind {
            "input_audio_buffer.committed" => self.waiting += 1,
            "conversation.item.input_audio_transcription.completed"
            | "conversation.item.input_audio_transcription.failed" => {
                self.waiting = self.waiting.saturating_sub(1)
            }
            _ => {}
        }
        printer.show(&event);
        if kind == "error" {
            // A session that cannot transcribe (no model, a refused option) is no session.
            printer.end();
            let error = &event["error"];
            return Err(CliError::Server {
                status: if error["type"] == "server_error" {
                    500
                } else {
                    400
                },
                code: error["code"].as_str().unwrap_or("error").into(),
                message: error["message"].as_str().unwrap_or_default().into(),
            });
        }
        Ok(())
    }
}

/// A handshake the server refused: its Error object.
fn refused(response: tungstenite::http::Response<Option<Vec<u8>>>) -> CliError {
    let status = response.status().as_u16();
    let body = response.into_body().unwrap_or_default();
    match serde_json::from_slice::<ErrorBody>(&body) {
        Ok(body) => CliError::Server {
            status,
            code: body.error.code,
            message: body.error.message,
        },
        Err(_) => CliError::Server {
            status,
            code: "unknown".into(),
            message: String::from_utf8_lossy(&body).into_owned(),
        },
    }
}
