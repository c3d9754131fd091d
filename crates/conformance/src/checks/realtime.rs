//! Realtime transcription, `GET /v1/realtime?intent=transcription`: a session over a WebSocket
//! (`session.created`, an update, a committed turn of silence and its end, a refused event), the
//! token as a subprotocol, and the handshake's refusals.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

use crate::http::{self, Request, Target};
use crate::{Check, Ctx, Needs, Step, fail};

const REALTIME: &str = "Additions (third wave)";
const PATH: &str = "/v1/realtime?intent=transcription";

/// A handshake with `headers` (name, value); the session's socket, or what refused it.
fn open(target: &Target, headers: &[(&str, String)]) -> Result<WebSocket<TcpStream>, String> {
    let url = format!("ws://{}{PATH}", target.authority());
    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    for (name, value) in headers {
        let name = tungstenite::http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| e.to_string())?;
        request
            .headers_mut()
            .insert(name, value.parse().map_err(|e| format!("{e}"))?);
    }
    let stream = http::connect(target)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    match tungstenite::client::client(request, stream) {
        Ok((socket, _)) => Ok(socket),
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            Err(format!("the handshake was answered {}", response.status()))
        }
        Err(e) => Err(format!("the handshake failed: {e}")),
    }
}

/// The next server event (a JSON object with `type`), within 30 s.
fn next_event(socket: &mut WebSocket<TcpStream>) -> Result<Value, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        match socket.read() {
            Ok(Message::Text(text)) => {
                let event: Value = serde_json::from_str(&text)
                    .map_err(|e| format!("a message that is not JSON ({e}): {text}"))?;
                if !event["type"].is_string() {
                    return Err(format!("an event without a type: {event}"));
                }
                return Ok(event);
            }
            Ok(Message::Close(frame)) => return Err(format!("the server closed: {frame:?}")),
            Ok(_) => continue,
            Err(e) => return Err(format!("reading the session: {e}")),
        }
    }
    Err("no event within 30 s".into())
}

/// Events until one of type `kind`, which is returned.
fn until(socket: &mut WebSocket<TcpStream>, kind: &str) -> Result<Value, String> {
    loop {
        let event = next_event(socket)?;
        if event["type"] == kind {
            return Ok(event);
        }
        if event["type"] == "error" {
            return Err(format!("an error event while waiting for {kind}: {event}"));
        }
    }
}

fn send(socket: &mut WebSocket<TcpStream>, event: Value) -> Result<(), String> {
    socket
        .send(Message::text(event.to_string()))
        .map_err(|e| format!("sending {}: {e}", event["type"]))
}

/// The token as a header, when the kit has one.
fn bearer(cx: &Ctx) -> Vec<(&'static str, String)> {
    cx.token
        .iter()
        .map(|t| ("authorization", format!("Bearer {t}")))
        .collect()
}

/// A session from its creation through a client-committed turn of silence to its end, and a
/// refused client event.
fn session(cx: &mut Ctx) -> Step {
    let failed = |what: &str, observed: String| fail::<()>(what.to_string(), observed);
    let mut socket = match open(&cx.target, &bearer(cx)) {
        Ok(socket) => socket,
        Err(e) => return failed("a WebSocket session (101)", e),
    };
    let steps = (|| -> Result<(), (String, String)> {
        let step = |what: &str| {
            let what = what.to_string();
            move |observed: String| (what, observed)
        };
        let created = next_event(&mut socket).map_err(step("session.created first"))?;
        let session = &created["session"];
        if created["type"] != "session.created" || session["type"] != "transcription" {
            return Err((
                "session.created with session.type \"transcription\"".into(),
                created.to_string(),
            ));
        }
        if !created["event_id"].is_string() {
            return Err((
                "every server event has an event_id".into(),
                created.to_string(),
            ));
        }
        send(
            &mut socket,
            json!({"type": "session.update", "session": {"type": "transcription", "audio": {
                "input": {"format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": null}
            }}}),
        )
        .map_err(step("session.update sent"))?;
        let updated = until(&mut socket, "session.updated").map_err(step("session.updated"))?;
        if updated["session"]["audio"]["input"]["turn_detection"] != Value::Null {
            return Err((
                "session.updated with turn_detection null".into(),
                updated.to_string(),
            ));
        }
        let silence = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 24_000]);
        send(
            &mut socket,
            json!({"type": "input_audio_buffer.append", "audio": silence}),
        )
        .map_err(step("input_audio_buffer.append sent"))?;
        send(&mut socket, json!({"type": "input_audio_buffer.commit"}))
            .map_err(step("input_audio_buffer.commit sent"))?;
        let committed = until(&mut socket, "input_audio_buffer.committed")
            .map_err(step("input_audio_buffer.committed {item_id}"))?;
        let item = committed["item_id"].clone();
        if !item.is_string() {
            return Err(("committed with an item_id".into(), committed.to_string()));
        }
        loop {
            let event =
                next_event(&mut socket).map_err(step("the turn's ...completed or ...failed"))?;
            let kind = event["type"].as_str().unwrap_or_default();
            let done = kind.ends_with("input_audio_transcription.completed")
                || kind.ends_with("input_audio_transcription.failed");
            if done {
                if event["item_id"] != item {
                    return Err(("the turn's own item_id".into(), event.to_string()));
                }
                break;
            }
        }
        send(
            &mut socket,
            json!({"type": "kit.unknown", "event_id": "kit-1"}),
        )
        .map_err(step("an unknown event sent"))?;
        let error = next_event(&mut socket).map_err(step("an error event"))?;
        let detail = &error["error"];
        if error["type"] != "error" || !detail["message"].is_string() || !detail["type"].is_string()
        {
            return Err((
                "error {error: {type, code, message, ...}} for an unknown event".into(),
                error.to_string(),
            ));
        }
        Ok(())
    })();
    let _ = socket.close(None);
    steps.or_else(|(expected, observed)| fail(expected, observed))
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "realtime.session",
            (
                REALTIME,
                "`GET /v1/realtime?intent=transcription` upgrades to a WebSocket speaking OpenAI's Realtime API for transcription sessions",
            ),
            Needs::ACCESS,
            session,
        ),
        Check::new(
            "realtime.subprotocol-token",
            (
                REALTIME,
                "as a header or, for browsers, the subprotocol `openai-insecure-api-key.<token>`",
            ),
            Needs::TOKEN,
            |cx| {
                let token = cx.token.clone().unwrap_or_default();
                let offered = format!("realtime, openai-insecure-api-key.{token}");
                match open(&cx.target, &[("sec-websocket-protocol", offered)]) {
                    Ok(mut socket) => {
                        let first = next_event(&mut socket);
                        let _ = socket.close(None);
                        match first {
                            Ok(event) if event["type"] == "session.created" => Ok(()),
                            Ok(event) => fail("session.created", event.to_string()),
                            Err(e) => fail("session.created", e),
                        }
                    }
                    Err(e) => fail("a session opened with the token as a subprotocol", e),
                }
            },
        ),
        Check::new(
            "realtime.foreign-origin",
            (
                REALTIME,
                "A handshake with an `Origin` other than the server's own is 403.",
            ),
            Needs::ACCESS,
            |cx| {
                let handshake = Request::new("GET", PATH)
                    .header("Connection", "Upgrade")
                    .header("Upgrade", "websocket")
                    .header("Sec-WebSocket-Version", "13")
                    .header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
                    .header("Origin", "https://conformance.invalid");
                cx.send(handshake)?.error(403, "forbidden").map(drop)
            },
        ),
    ]
}
