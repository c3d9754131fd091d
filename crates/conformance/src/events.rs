//! Following a live event stream (`GET /v1/dictation/events`, `GET /v1/recorder/events`): a
//! thread reads the server-sent events as they come, and the contract's shape of each session
//! event is checked once the session has ended.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::http::Target;

/// Events read so far from one stream, as `(event name, data)`.
pub struct EventStream {
    events: Receiver<Result<(String, Value), String>>,
    seen: Vec<(String, Value)>,
    /// Shut down when the stream is dropped, which ends the reading thread.
    connection: TcpStream,
}

impl Drop for EventStream {
    fn drop(&mut self) {
        let _ = self.connection.shutdown(std::net::Shutdown::Both);
    }
}

impl EventStream {
    /// Connects to `path` with `headers` (the token) and reads its events on a thread of its
    /// own until the stream or the process ends.
    pub fn follow(
        target: &Target,
        path: &str,
        headers: &[(String, String)],
    ) -> Result<EventStream, String> {
        let mut stream = super::http::connect(target)?;
        let mut head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n",
            target.authority()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(head.as_bytes())
            .map_err(|e| format!("cannot send GET {path}: {e}"))?;
        let connection = stream
            .try_clone()
            .map_err(|e| format!("cannot follow GET {path}: {e}"))?;
        let (sender, events) = channel();
        std::thread::spawn(move || {
            let mut reader = SseReader::default();
            let mut buffer = [0u8; 8192];
            loop {
                let read = match stream.read(&mut buffer) {
                    Ok(0) => return,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = sender.send(Err(e.to_string()));
                        return;
                    }
                };
                for event in reader.take(&buffer[..read]) {
                    if sender.send(event).is_err() {
                        return;
                    }
                }
            }
        });
        Ok(EventStream {
            events,
            seen: Vec::new(),
            connection,
        })
    }

    /// Reads until an event named one of `ends` comes for session `id`, or `within` passes;
    /// answers every event read so far.
    pub fn until(&mut self, id: &str, ends: &[&str], within: Duration) -> &[(String, Value)] {
        let deadline = Instant::now() + within;
        let ended = |seen: &[(String, Value)]| {
            seen.iter()
                .any(|(name, data)| ends.contains(&name.as_str()) && data["id"] == id)
        };
        while !ended(&self.seen) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Ok(event)) => self.seen.push(event),
                Ok(Err(_)) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    break;
                }
            }
        }
        &self.seen
    }
}

/// Turns the bytes of an answer into its events: skips the head, undoes chunked transfer
/// encoding, splits at blank lines. A status other than 200 is one error.
#[derive(Default)]
struct SseReader {
    raw: Vec<u8>,
    head_done: bool,
    chunked: bool,
    text: String,
}

impl SseReader {
    fn take(&mut self, bytes: &[u8]) -> Vec<Result<(String, Value), String>> {
        self.raw.extend_from_slice(bytes);
        let mut out = Vec::new();
        if !self.head_done {
            let Some(end) = find(&self.raw, b"\r\n\r\n") else {
                return out;
            };
            let head = String::from_utf8_lossy(&self.raw[..end]).to_string();
            self.raw.drain(..end + 4);
            self.head_done = true;
            if !head.starts_with("HTTP/1.1 200") {
                out.push(Err(head.lines().next().unwrap_or_default().to_string()));
                return out;
            }
            self.chunked = head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked");
        }
        self.dechunk();
        while let Some(end) = self.text.find("\n\n") {
            let block: String = self.text.drain(..end + 2).collect();
            let name = block.lines().find_map(|l| l.strip_prefix("event:"));
            let data = block.lines().find_map(|l| l.strip_prefix("data:"));
            if let (Some(name), Some(data)) = (name, data) {
                let parsed = serde_json::from_str(data.trim())
                    .map_err(|e| format!("event {name}: data is not JSON ({e}): {data}"));
                out.push(parsed.map(|data| (name.trim().to_string(), data)));
            }
        }
        out
    }

    fn dechunk(&mut self) {
        if !self.chunked {
            self.text
                .push_str(&String::from_utf8_lossy(&std::mem::take(&mut self.raw)));
            return;
        }
        while let Some(line_end) = find(&self.raw, b"\r\n") {
            let size = String::from_utf8_lossy(&self.raw[..line_end]);
            let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
            else {
                return;
            };
            if self.raw.len() < line_end + 2 + size + 2 {
                return;
            }
            let start = line_end + 2;
            let chunk = String::from_utf8_lossy(&self.raw[start..start + size]).to_string();
            self.text.push_str(&chunk);
            self.raw.drain(..start + size + 2);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What a field of an event must be.
#[derive(Clone, Copy)]
enum Field {
    Text,
    Count,
    TextOrNull,
    Object,
}

impl Field {
    fn holds(self, value: &Value) -> bool {
        match self {
            Field::Text => value.is_string(),
            Field::Count => value.is_u64(),
            Field::TextOrNull => value.is_string() || value.is_null(),
            Field::Object => value.is_object(),
        }
    }
}

/// The fields the contract gives each event of a `service` (`dictation` or `recorder`)
/// session, besides `type` and `id`; None for a name it does not define.
fn shape(service: &str, name: &str) -> Option<Vec<(&'static str, Field)>> {
    use Field::*;
    let own = name
        .strip_prefix(service)
        .and_then(|rest| rest.strip_prefix('.'));
    Some(match (name, own) {
        ("input_audio_buffer.speech_started", _) => {
            vec![("item_id", Text), ("audio_start_ms", Count)]
        }
        ("input_audio_buffer.speech_stopped", _) => {
            vec![("item_id", Text), ("audio_end_ms", Count)]
        }
        ("input_audio_buffer.committed", _) => {
            vec![("item_id", Text), ("previous_item_id", TextOrNull)]
        }
        ("conversation.item.input_audio_transcription.delta", _) => {
            vec![("item_id", Text), ("content_index", Count), ("delta", Text)]
        }
        ("conversation.item.input_audio_transcription.completed", _) => vec![
            ("item_id", Text),
            ("content_index", Count),
            ("transcript", Text),
        ],
        ("conversation.item.input_audio_transcription.failed", _) => vec![
            ("item_id", Text),
            ("content_index", Count),
            ("error", Object),
        ],
        (_, Some("started" | "stopped")) => vec![],
        (_, Some("tentative")) => vec![("text", Text)],
        (_, Some("completed")) if service == "dictation" => vec![
            ("text", Text),
            ("stop_to_text_ms", Count),
            ("stop_to_insert_ms", Count),
        ],
        (_, Some("completed")) => vec![("text", Text)],
        (_, Some("failed")) => vec![("error", Text)],
        _ => return None,
    })
}

/// Checks the events of session `id` of `service` against the contract: every data line an
/// object whose `type` is the event's name and whose `id` is the session's; the fields each
/// event has; the session started, stopped and ended once each, in that order; deltas joined
/// are the completed text. Answers what is wrong.
pub fn check_session(service: &str, id: &str, events: &[(String, Value)]) -> Result<(), String> {
    let ours: Vec<&(String, Value)> = events.iter().filter(|(_, d)| d["id"] == id).collect();
    let mut order = Vec::new();
    for (name, data) in &ours {
        if data["type"] != name.as_str() {
            return Err(format!("event {name}: `type` is {}", data["type"]));
        }
        let Some(fields) = shape(service, name) else {
            return Err(format!("event {name} is not one the contract defines"));
        };
        for (field, kind) in fields {
            if !kind.holds(&data[field]) {
                return Err(format!(
                    "event {name}: `{field}` is {}: {data}",
                    data[field]
                ));
            }
        }
        if name.starts_with(&format!("{service}.")) && !name.ends_with(".tentative") {
            order.push(name.trim_start_matches(&format!("{service}.")).to_string());
        }
    }
    let ended = order.last().map(String::as_str);
    let expected_end = ["completed", "failed"];
    if order.first().map(String::as_str) != Some("started")
        || !order.iter().any(|n| n == "stopped")
        || !ended.is_some_and(|e| expected_end.contains(&e))
        || order.len() != 3
    {
        return Err(format!(
            "{service}.started, .stopped, then .completed or .failed, once each; got {order:?}"
        ));
    }
    let text_of = |event: &str, field: &str| -> Vec<String> {
        ours.iter()
            .filter(|(n, _)| n == event)
            .filter_map(|(_, d)| d[field].as_str().map(str::to_owned))
            .collect()
    };
    let transcript = text_of(
        "conversation.item.input_audio_transcription.completed",
        "transcript",
    );
    let deltas = text_of("conversation.item.input_audio_transcription.delta", "delta");
    if transcript.iter().any(|t| !t.trim().is_empty()) && deltas.is_empty() {
        return Err(format!(
            "the text ({transcript:?}) came in `delta` events before it was completed"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunked_events_split_anywhere_come_out_whole() {
        let body = "event: a\ndata: {\"type\":\"a\",\"id\":\"X\"}\n\n: keep-alive\n\nevent: b\ndata: {\"type\":\"b\"}\n\n";
        let mut raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        for piece in body.as_bytes().chunks(7) {
            raw.extend(format!("{:x}\r\n", piece.len()).as_bytes());
            raw.extend(piece);
            raw.extend(b"\r\n");
        }
        for split in [1, 3, 10, raw.len()] {
            let mut reader = SseReader::default();
            let events: Vec<_> = raw
                .chunks(split)
                .flat_map(|bytes| reader.take(bytes))
                .map(Result::unwrap)
                .collect();
            let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["a", "b"], "split {split}");
        }
    }

    #[test]
    fn a_refused_stream_is_one_error() {
        let mut reader = SseReader::default();
        let events = reader.take(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
        assert!(matches!(&events[..], [Err(line)] if line.contains("401")));
    }

    fn session(events: &[(&str, Value)]) -> Vec<(String, Value)> {
        events
            .iter()
            .map(|(name, fields)| {
                let mut data = json!({"type": name, "id": "S"});
                data.as_object_mut()
                    .unwrap()
                    .extend(fields.as_object().unwrap().clone());
                (name.to_string(), data)
            })
            .collect()
    }

    fn good() -> Vec<(&'static str, Value)> {
        vec![
            (
                "dictation.started",
                json!({"model": "tiny.en", "workflow_id": null}),
            ),
            (
                "input_audio_buffer.speech_started",
                json!({"item_id": "S", "audio_start_ms": 96}),
            ),
            ("dictation.tentative", json!({"text": "The com"})),
            (
                "input_audio_buffer.speech_stopped",
                json!({"item_id": "S", "audio_end_ms": 3776}),
            ),
            (
                "input_audio_buffer.committed",
                json!({"item_id": "S", "previous_item_id": null}),
            ),
            (
                "conversation.item.input_audio_transcription.delta",
                json!({"item_id": "S", "content_index": 0, "delta": "Hello."}),
            ),
            ("dictation.stopped", json!({})),
            (
                "conversation.item.input_audio_transcription.completed",
                json!({"item_id": "S", "content_index": 0, "transcript": "Hello."}),
            ),
            (
                "dictation.completed",
                json!({"text": "Hello.", "stop_to_text_ms": 12, "stop_to_insert_ms": 15}),
            ),
        ]
    }

    #[test]
    fn a_session_as_the_contract_says_passes() {
        assert_eq!(check_session("dictation", "S", &session(&good())), Ok(()));
    }

    #[test]
    fn wrong_shapes_names_and_orders_are_caught() {
        let mut missing_field = good();
        missing_field[1].1 = json!({"item_id": "S"});
        let mut unknown = good();
        unknown.insert(2, ("dictation.partial", json!({})));
        let mut no_stop = good();
        no_stop.remove(6);
        let mut twice = good();
        twice.push(("dictation.completed", good()[8].1.clone()));
        let mut no_delta = good();
        no_delta.remove(5);
        for (case, events) in [
            ("missing field", missing_field),
            ("unknown event", unknown),
            ("no stop", no_stop),
            ("ended twice", twice),
            ("text without a delta", no_delta),
        ] {
            assert!(
                check_session("dictation", "S", &session(&events)).is_err(),
                "{case}"
            );
        }
        let mut wrong_type = session(&good());
        wrong_type[0].1["type"] = json!("dictation.begun");
        assert!(check_session("dictation", "S", &wrong_type).is_err());
    }
}
