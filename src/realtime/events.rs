//! The JSON of a realtime session's events: what the client sends, read into [`ClientEvent`],
//! and what the server sends, each with its `type` and a fresh `event_id`, in OpenAI's shapes.
//! (An `error` for a transcription error takes its type and code from the API's Error object:
//! the API layer renders those.)

use serde_json::{Value, json};

use super::config::{ConfigError, Shape};
use super::transcribe::TurnReport;
use super::turns::Heard;

/// A client event Verbatim acts on.
#[derive(Debug)]
pub enum ClientEvent {
    Update {
        session: Value,
        shape: Shape,
    },
    /// `audio`: base64 PCM16 at the session's rate.
    Append {
        audio: String,
    },
    Commit,
    Clear,
}

/// The code of a refusal that is the server's fault (the session cannot go on).
pub const SERVER_ERROR: &str = "server_error";

/// A client event that cannot be acted on: the `error` event to answer with.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    pub param: Option<String>,
}

impl Refusal {
    pub fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            param: None,
        }
    }
}

impl From<ConfigError> for Refusal {
    fn from(err: ConfigError) -> Refusal {
        Refusal {
            code: err.code,
            message: err.message,
            param: Some(err.param),
        }
    }
}

/// Reads one text message: the event and the client's `event_id` (for the error it may get).
pub fn read(text: &str) -> (Option<String>, Result<ClientEvent, Refusal>) {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            let refusal = Refusal::new(
                "invalid_json",
                format!("a client event is a JSON object with a \"type\" ({e})"),
            );
            return (None, Err(refusal));
        }
    };
    let event_id = value
        .get("event_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    (event_id, event(value))
}

fn event(mut value: Value) -> Result<ClientEvent, Refusal> {
    let Some(kind) = value
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err(Refusal::new(
            "invalid_event",
            "a client event is a JSON object with a \"type\"",
        ));
    };
    let session = || value.get("session").cloned().unwrap_or(Value::Null);
    match kind.as_str() {
        "session.update" => Ok(ClientEvent::Update {
            session: session(),
            shape: Shape::Ga,
        }),
        "transcription_session.update" => Ok(ClientEvent::Update {
            session: session(),
            shape: Shape::Beta,
        }),
        "input_audio_buffer.append" => match value.get_mut("audio").map(Value::take) {
            Some(Value::String(audio)) => Ok(ClientEvent::Append { audio }),
            _ => Err(Refusal {
                param: Some("audio".into()),
                ..Refusal::new(
                    "invalid_value",
                    "input_audio_buffer.append needs \"audio\": base64 PCM16 mono",
                )
            }),
        },
        "input_audio_buffer.commit" => Ok(ClientEvent::Commit),
        "input_audio_buffer.clear" => Ok(ClientEvent::Clear),
        other if other.starts_with("conversation.") || other.starts_with("response.") => {
            Err(Refusal::new(
                "unsupported",
                format!(
                    "'{}' is not served: a transcription session takes session.update and input_audio_buffer.append, commit and clear",
                    crate::wire::echo(other)
                ),
            ))
        }
        other => Err(Refusal::new(
            "unknown_event",
            format!(
                "unknown client event '{}': a transcription session takes session.update and input_audio_buffer.append, commit and clear",
                crate::wire::echo(other)
            ),
        )),
    }
}

/// A server event of `kind` with `fields` (an object) and a fresh `event_id`.
pub fn server(kind: &str, fields: Value) -> Value {
    let mut event = json!({
        "type": kind,
        "event_id": format!("event_{}", uuid::Uuid::new_v4().simple()),
    });
    if let (Some(event), Value::Object(fields)) = (event.as_object_mut(), fields) {
        event.extend(fields);
    }
    event
}

/// `error` for a client event that could not be acted on (`event_id`: the client's); a
/// refusal coded `server_error` is the server's fault and typed so.
pub fn refused(refusal: &Refusal, event_id: Option<&str>) -> Value {
    let kind = if refusal.code == SERVER_ERROR {
        "server_error"
    } else {
        "invalid_request_error"
    };
    server(
        "error",
        json!({"error": {
            "type": kind,
            "code": refusal.code,
            "message": refusal.message,
            "param": refusal.param,
            "event_id": event_id,
        }}),
    )
}

/// The event of what the audio brought (a committed turn's audio goes to the engine; the
/// event names it).
pub fn heard(heard: &Heard) -> Value {
    match heard {
        Heard::SpeechStarted {
            item_id,
            audio_start_ms,
        } => server(
            "input_audio_buffer.speech_started",
            json!({"audio_start_ms": audio_start_ms, "item_id": item_id}),
        ),
        Heard::SpeechStopped {
            item_id,
            audio_end_ms,
        } => server(
            "input_audio_buffer.speech_stopped",
            json!({"audio_end_ms": audio_end_ms, "item_id": item_id}),
        ),
        Heard::Committed(turn) => server(
            "input_audio_buffer.committed",
            json!({"item_id": turn.item_id, "previous_item_id": turn.previous_item_id}),
        ),
    }
}

/// The event of a turn's transcription (None for the backlog's bookkeeping and for a failed
/// turn, whose event the API layer renders).
pub fn report(report: TurnReport) -> Option<Value> {
    const ITEM: &str = "conversation.item.input_audio_transcription";
    Some(match report {
        TurnReport::Delta { item_id, delta } => server(
            &format!("{ITEM}.delta"),
            json!({"item_id": item_id, "content_index": 0, "delta": delta}),
        ),
        TurnReport::Completed {
            item_id,
            transcript,
            seconds,
        } => server(
            &format!("{ITEM}.completed"),
            json!({
                "item_id": item_id,
                "content_index": 0,
                "transcript": transcript,
                "usage": {"type": "duration", "seconds": seconds},
            }),
        ),
        TurnReport::Failed { .. } | TurnReport::Done { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_events_are_read_with_their_event_id() {
        let (id, event) =
            read(r#"{"type":"input_audio_buffer.append","audio":"AAA=","event_id":"e1"}"#);
        assert_eq!(id.as_deref(), Some("e1"));
        assert!(matches!(event, Ok(ClientEvent::Append { audio }) if audio == "AAA="));
        let (_, event) = read(r#"{"type":"transcription_session.update","session":{}}"#);
        assert!(matches!(
            event,
            Ok(ClientEvent::Update {
                shape: Shape::Beta,
                ..
            })
        ));
        for (text, code) in [
            ("not json", "invalid_json"),
            (r#"{"audio":"AAA="}"#, "invalid_event"),
            (r#"{"type":"input_audio_buffer.append"}"#, "invalid_value"),
            (r#"{"type":"response.create"}"#, "unsupported"),
            (r#"{"type":"what"}"#, "unknown_event"),
        ] {
            assert_eq!(read(text).1.unwrap_err().code, code, "{text}");
        }
    }

    #[test]
    fn server_events_carry_type_and_a_fresh_event_id() {
        let a = server("session.updated", json!({"session": {}}));
        let b = server("session.updated", json!({"session": {}}));
        assert_eq!(a["type"], "session.updated");
        assert!(a["event_id"].as_str().unwrap().starts_with("event_"));
        assert_ne!(a["event_id"], b["event_id"]);
        let refusal = Refusal::new("unknown_event", "no");
        let error = refused(&refusal, Some("e7"));
        assert_eq!(error["error"]["event_id"], "e7");
        assert_eq!(error["error"]["type"], "invalid_request_error");
        let lost = refused(&Refusal::new(SERVER_ERROR, "lost"), None);
        assert_eq!(lost["error"]["type"], "server_error");
    }
}
