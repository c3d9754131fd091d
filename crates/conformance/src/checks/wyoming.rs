//! The Wyoming listener given with `--wyoming HOST:PORT` (the contract's fourth wave): `describe`
//! → `info`, `ping` → `pong`, an utterance's events in order, unknown events answered with an
//! `error` on a connection that goes on, a payload claimed beyond any limit refused at once.
//! The kit frames the events itself, as the PyPI `wyoming` package does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Check, Ctx, Needs, Step, fail};

const WYOMING: &str = "Additions (fourth wave): Wyoming";

/// How long the kit waits for any answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// A connection to the listener.
struct Wire {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Wire {
    fn connect(cx: &Ctx) -> Step<Wire> {
        let address = cx.wyoming.clone().unwrap_or_default();
        let stream = TcpStream::connect(&address)
            .or_else(|e| fail(format!("a Wyoming listener at {address}"), e.to_string()))?;
        let _ = stream.set_read_timeout(Some(ANSWER_WITHIN));
        let _ = stream.set_write_timeout(Some(ANSWER_WITHIN));
        let reader = BufReader::new(
            stream
                .try_clone()
                .or_else(|e| fail("a usable connection", e.to_string()))?,
        );
        Ok(Wire { stream, reader })
    }

    /// Sends an event: its header line, its data after it, then its payload.
    fn send(&mut self, kind: &str, data: Value, payload: &[u8]) -> Step {
        let data = data.to_string();
        let mut header = json!({"type": kind, "data_length": data.len(), "version": "1.0.0"});
        if !payload.is_empty() {
            header["payload_length"] = json!(payload.len());
        }
        let mut bytes = format!("{header}\n{data}").into_bytes();
        bytes.extend_from_slice(payload);
        self.send_raw(&bytes)
    }

    fn send_raw(&mut self, bytes: &[u8]) -> Step {
        self.stream
            .write_all(bytes)
            .or_else(|e| fail("the listener to read what the kit sends", e.to_string()))
    }

    /// The next event's type and data (data inline and after the header merged); None when
    /// the listener closed the connection.
    fn read(&mut self) -> Step<Option<(String, Value)>> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return fail("an event within 30 s", e.to_string()),
        }
        let header: Value = serde_json::from_str(&line)
            .or_else(|e| fail("a JSON header line", format!("{line:?} ({e})")))?;
        let mut data = match &header["data"] {
            Value::Object(_) => header["data"].clone(),
            _ => json!({}),
        };
        if let Some(length) = header["data_length"].as_u64().filter(|l| *l > 0) {
            let mut bytes = vec![0; length.min(1 << 20) as usize];
            self.reader
                .read_exact(&mut bytes)
                .or_else(|e| fail(format!("{length} bytes of data"), e.to_string()))?;
            let more: Value = serde_json::from_slice(&bytes)
                .or_else(|e| fail("data that is a JSON object", e.to_string()))?;
            if let (Some(data), Some(more)) = (data.as_object_mut(), more.as_object()) {
                data.extend(more.clone());
            }
        }
        if let Some(length) = header["payload_length"].as_u64().filter(|l| *l > 0) {
            let mut bytes = vec![0; length.min(1 << 20) as usize];
            self.reader
                .read_exact(&mut bytes)
                .or_else(|e| fail(format!("{length} bytes of payload"), e.to_string()))?;
        }
        let kind = header["type"].as_str().unwrap_or_default().to_string();
        Ok(Some((kind, data)))
    }

    /// The next event, which must be there.
    fn expect(&mut self, what: &str) -> Step<(String, Value)> {
        match self.read()? {
            Some(event) => Ok(event),
            None => fail(what.to_string(), "the connection closed"),
        }
    }
}

/// 1.5 s of a quiet tone as 16-bit PCM.
fn tone_pcm() -> Vec<u8> {
    (0..24_000)
        .flat_map(|i| {
            let phase = 2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0;
            ((phase.sin() * 2_000.0) as i16).to_le_bytes()
        })
        .collect()
}

fn is_error(event: &(String, Value)) -> bool {
    event.0 == "error" && event.1["text"].is_string() && event.1["code"].is_string()
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "wyoming.describe",
            (
                WYOMING,
                "`describe` → `info` (one `asr` program ... every installed model)",
            ),
            Needs::WYOMING,
            |cx| {
                let mut wire = Wire::connect(cx)?;
                wire.send("describe", json!({}), &[])?;
                let (kind, data) = wire.expect("an info event")?;
                let programs = data["asr"].as_array().cloned().unwrap_or_default();
                let models_ok = programs.first().is_some_and(|p| {
                    p["models"].as_array().is_some_and(|models| {
                        models.iter().all(|m| {
                            m["name"].is_string()
                                && m["languages"].is_array()
                                && m["installed"] == true
                                && m["attribution"]["name"].is_string()
                        })
                    })
                });
                if kind != "info"
                    || programs.len() != 1
                    || programs[0]["supports_transcript_streaming"] != true
                    || !models_ok
                {
                    return fail(
                        "info: one asr program, installed models with name, languages, installed and attribution, supports_transcript_streaming true",
                        format!("{kind} {data}"),
                    );
                }
                Ok(())
            },
        ),
        Check::new(
            "wyoming.ping",
            (WYOMING, "`ping` → `pong`"),
            Needs::WYOMING,
            |cx| {
                let mut wire = Wire::connect(cx)?;
                wire.send("ping", json!({"text": "kit"}), &[])?;
                let (kind, data) = wire.expect("a pong")?;
                if kind != "pong" || data["text"] != "kit" {
                    return fail("pong with the ping's text", format!("{kind} {data}"));
                }
                Ok(())
            },
        ),
        Check::new(
            "wyoming.utterance",
            (
                WYOMING,
                "`audio-start` / `audio-chunk` / `audio-stop` → `transcript`, preceded by `transcript-start` ... `transcript-stop`",
            ),
            Needs::WYOMING,
            |cx| {
                let mut wire = Wire::connect(cx)?;
                let format = json!({"rate": 16000, "width": 2, "channels": 1});
                wire.send("transcribe", json!({}), &[])?;
                wire.send("audio-start", format.clone(), &[])?;
                for chunk in tone_pcm().chunks(2_048) {
                    wire.send("audio-chunk", format.clone(), chunk)?;
                }
                wire.send("audio-stop", json!({}), &[])?;
                let mut kinds = Vec::new();
                let last = loop {
                    let event = wire.expect("the utterance's transcript")?;
                    if is_error(&event) {
                        return fail("a transcript", format!("{}", event.1));
                    }
                    kinds.push(event.0.clone());
                    if event.0 == "transcript" {
                        break event.1;
                    }
                };
                let ordered = kinds.first().map(String::as_str) == Some("transcript-start")
                    && kinds.len() >= 3
                    && kinds[kinds.len() - 2] == "transcript-stop"
                    && kinds[1..kinds.len() - 2]
                        .iter()
                        .all(|k| k == "transcript-chunk");
                if !ordered || !last["text"].is_string() {
                    return fail(
                        "transcript-start, transcript-chunk..., transcript-stop, transcript {text}",
                        format!("{kinds:?} {last}"),
                    );
                }
                Ok(())
            },
        ),
        Check::new(
            "wyoming.unknown-event",
            (
                WYOMING,
                "anything else or malformed → `error` (`text`, `code`)",
            ),
            Needs::WYOMING,
            |cx| {
                let mut wire = Wire::connect(cx)?;
                wire.send("kit-no-such-event", json!({}), &[])?;
                let answer = wire.expect("an error event")?;
                if !is_error(&answer) {
                    return fail("error {text, code}", format!("{} {}", answer.0, answer.1));
                }
                // The framing is intact: the connection goes on.
                wire.send("ping", json!({"text": "after"}), &[])?;
                let (kind, _) = wire.expect("a pong after the error")?;
                if kind != "pong" {
                    return fail("pong on the same connection", kind);
                }
                Ok(())
            },
        ),
        Check::new(
            "wyoming.payload-limit",
            (
                WYOMING,
                "limits (audio per utterance, header and payload size, connections)",
            ),
            Needs::WYOMING,
            |cx| {
                let mut wire = Wire::connect(cx)?;
                let asked = Instant::now();
                wire.send_raw(b"{\"type\": \"audio-chunk\", \"payload_length\": 2000000000}\n")?;
                let answer = wire.expect("an error at once")?;
                if !is_error(&answer) {
                    return fail("error {text, code}", format!("{} {}", answer.0, answer.1));
                }
                if wire.read()?.is_some() {
                    return fail("the connection closed after the error", "it stayed open");
                }
                if asked.elapsed() > Duration::from_secs(5) {
                    return fail(
                        "the refusal within 5 s (nothing read)",
                        format!("{:?}", asked.elapsed()),
                    );
                }
                Ok(())
            },
        ),
    ]
}
