//! The OpenAI-compatible routes on the wire (`POST /v1/audio/transcriptions` and
//! `/v1/audio/translations`), shaped as OpenAI's API reference documents them: the response
//! formats, the `json` and `verbose_json` objects and the streamed events.

use serde::{Deserialize, Serialize};

use super::transcription::{FieldError, TranscriptionWord};

/// OpenAI's `response_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenAiFormat {
    #[default]
    Json,
    Text,
    Srt,
    Vtt,
    VerboseJson,
}

impl OpenAiFormat {
    /// Reads the form field (any case); anything else is refused with the accepted values.
    pub fn parse(value: &str) -> Result<OpenAiFormat, FieldError> {
        Ok(match value.trim().to_ascii_lowercase().as_str() {
            "json" => OpenAiFormat::Json,
            "text" => OpenAiFormat::Text,
            "srt" => OpenAiFormat::Srt,
            "vtt" => OpenAiFormat::Vtt,
            "verbose_json" => OpenAiFormat::VerboseJson,
            _ => {
                return Err(FieldError(format!(
                    "Invalid 'response_format' value '{}': use json, text, srt, verbose_json or vtt.",
                    crate::wire::echo(value.trim())
                )));
            }
        })
    }
}

/// How much audio a request used (OpenAI bills whisper-1 by the second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Always `duration`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The audio's length, rounded up to whole seconds.
    pub seconds: u64,
}

impl Usage {
    pub fn of_audio(duration: f64) -> Usage {
        Usage {
            kind: "duration".into(),
            seconds: duration.max(0.0).ceil() as u64,
        }
    }
}

/// The `json` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiTranscription {
    pub text: String,
    pub usage: Usage,
}

/// The `verbose_json` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiVerboseTranscription {
    /// `transcribe` or `translate`.
    pub task: String,
    /// The language's English name in lower case, as OpenAI writes it (`english`); a
    /// translation's is `english`, the language of its text.
    pub language: String,
    /// The audio's length in seconds.
    pub duration: f64,
    pub text: String,
    pub segments: Vec<OpenAiSegment>,
    /// With the `word` timestamp granularity only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<TranscriptionWord>>,
    pub usage: Usage,
}

/// A segment of `verbose_json`, with the decoder's figures (zero from an engine without them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiSegment {
    /// Its index, from 0.
    pub id: usize,
    /// Where it starts, in 10 ms frames (whisper's unit).
    pub seek: u64,
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub tokens: Vec<i32>,
    pub temperature: f64,
    pub avg_logprob: f64,
    pub compression_ratio: f64,
    pub no_speech_prob: f64,
}

/// One server-sent event of a streamed answer (`stream=true`), as its `data` line carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum OpenAiStreamEvent {
    /// More text: the deltas joined give the text as decoded so far.
    #[serde(rename = "transcript.text.delta")]
    Delta { delta: String },
    /// The end: the whole text (post-processed), and the audio used.
    #[serde(rename = "transcript.text.done")]
    Done { text: String, usage: Usage },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_read_in_any_case_and_others_refused() {
        assert_eq!(
            OpenAiFormat::parse(" Verbose_JSON").unwrap(),
            OpenAiFormat::VerboseJson
        );
        assert_eq!(OpenAiFormat::parse("srt").unwrap(), OpenAiFormat::Srt);
        let err = OpenAiFormat::parse("diarized_json").unwrap_err();
        assert_eq!(
            err.0,
            "Invalid 'response_format' value 'diarized_json': use json, text, srt, verbose_json or vtt."
        );
    }

    #[test]
    fn stream_events_carry_openai_type_names() {
        let delta = serde_json::to_value(OpenAiStreamEvent::Delta {
            delta: " Hello".into(),
        })
        .unwrap();
        assert_eq!(
            delta,
            serde_json::json!({"type": "transcript.text.delta", "delta": " Hello"})
        );
        let done = serde_json::to_value(OpenAiStreamEvent::Done {
            text: "Hello".into(),
            usage: Usage::of_audio(2.2),
        })
        .unwrap();
        assert_eq!(
            done,
            serde_json::json!({"type": "transcript.text.done", "text": "Hello",
                "usage": {"type": "duration", "seconds": 3}})
        );
    }
}
