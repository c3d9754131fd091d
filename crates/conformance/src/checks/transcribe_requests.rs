//! The requests and answers the transcription checks share: a WAV body, a multipart form
//! posted to `/v1/transcribe`, the fields every Transcription object has, and the events of a
//! streamed answer.

use serde_json::Value;

use crate::audio::tone_wav;
use crate::context::Exchange;
use crate::expect::{Kind, fields};
use crate::http::{Body, Request};
use crate::{Ctx, Step};

/// A WAV body (`Content-Type: audio/wav`).
pub fn wav(bytes: Vec<u8>) -> Body {
    Body::Bytes {
        bytes,
        content_type: "audio/wav".into(),
        label: "clip.wav (1.5 s, 16 kHz mono)".into(),
    }
}

/// A multipart form with text fields and the kit's tone as `file`.
pub fn form(fields: &[(&str, &str)]) -> Body {
    Body::Form {
        fields: fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        file: Some(("clip.wav".into(), tone_wav())),
    }
}

/// `POST /v1/transcribe` with a multipart form.
pub fn post_form(cx: &mut Ctx, fields: &[(&str, &str)]) -> Step<Exchange> {
    cx.send(Request::new("POST", "/v1/transcribe").body(form(fields)))
}

/// The transcription result's fields.
pub fn result_fields(ex: &Exchange, json: &Value) -> Step {
    use Kind::*;
    fields(
        ex,
        json,
        "transcription result",
        &[
            ("text", Str),
            ("language?", Str),
            ("duration", Num),
            ("processing_time", Num),
            ("engine", Str),
            ("model?", Str),
        ],
    )
}

/// Server-sent events of a body: `(event name, data)`, the name `message` where none is given.
pub fn events(text: &str) -> Vec<(String, String)> {
    text.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(|block| {
            let mut name = "message".to_string();
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_string();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            (!data.is_empty()).then(|| (name, data.join("\n")))
        })
        .collect()
}
