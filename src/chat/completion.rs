//! One chat completion as OpenAI's API defines it (`POST {base}/chat/completions`): the request
//! a prompt action sends (the action's prompt as the system message, the text as the user's),
//! and its answer read either way a provider gives it: one JSON object, or server-sent events
//! (`data: {...}` lines of deltas, then `data: [DONE]`). Answers are read within
//! [`MAX_ANSWER_BYTES`], whatever the provider sends.

use std::io::{BufRead, BufReader, Read};

use serde_json::{Value, json};

use crate::cancel::Cancel;

/// The most of an answer read: far more than any rewritten transcript.
pub const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// The request body: what the `openai` SDK sends for `chat.completions.create(model=...,
/// messages=[system, user], stream=True)`.
pub fn request_body(model: &str, prompt: &str, text: &str) -> Vec<u8> {
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": text},
        ],
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

/// What a provider answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    /// The model the provider says answered, when it says.
    pub model: Option<String>,
}

/// Why an answer is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// Not a chat completion; says what was wrong.
    Malformed(String),
    /// A completion with no text in it.
    Empty,
    /// Stopped by `cancel`.
    Cancelled,
    /// The connection failed or stalled while the answer came.
    Broken(String),
}

/// Reads an answer of `content_type` from `body`, stopping when `cancel` is set.
pub fn read_answer(
    content_type: &str,
    body: impl Read,
    cancel: &Cancel,
) -> Result<Answer, AnswerError> {
    let body = body.take(MAX_ANSWER_BYTES + 1);
    if content_type.starts_with("text/event-stream") {
        return read_events(BufReader::new(body), cancel);
    }
    let mut bytes = Vec::new();
    BufReader::new(body)
        .read_to_end(&mut bytes)
        .map_err(|e| AnswerError::Broken(e.to_string()))?;
    if bytes.len() as u64 > MAX_ANSWER_BYTES {
        return Err(too_long());
    }
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| AnswerError::Malformed(format!("not JSON: {e}")))?;
    let message = value
        .pointer("/choices/0/message")
        .ok_or_else(|| AnswerError::Malformed("no choices[0].message".into()))?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err(AnswerError::Malformed("its content is not text".into())),
    };
    finished(text, model_of(&value))
}

/// Server-sent events: the deltas' content joined, up to `data: [DONE]` or the end.
fn read_events(body: impl BufRead, cancel: &Cancel) -> Result<Answer, AnswerError> {
    let (mut text, mut model, mut events) = (String::new(), None, 0);
    let mut read = 0u64;
    for line in body.lines() {
        if cancel.is_cancelled() {
            return Err(AnswerError::Cancelled);
        }
        let line = line.map_err(|e| AnswerError::Broken(e.to_string()))?;
        read += line.len() as u64 + 1;
        if read > MAX_ANSWER_BYTES {
            return Err(too_long());
        }
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            break;
        }
        let event: Value = serde_json::from_str(data)
            .map_err(|e| AnswerError::Malformed(format!("an event is not JSON: {e}")))?;
        if let Some(message) = event.pointer("/error/message").and_then(Value::as_str) {
            return Err(AnswerError::Malformed(format!("it failed: {message}")));
        }
        events += 1;
        if model.is_none() {
            model = model_of(&event);
        }
        match event.pointer("/choices/0/delta/content") {
            Some(Value::String(piece)) => text.push_str(piece),
            Some(Value::Null) | None => {}
            Some(_) => return Err(AnswerError::Malformed("a delta is not text".into())),
        }
    }
    if events == 0 {
        return Err(AnswerError::Malformed("no completion events".into()));
    }
    finished(text, model)
}

fn finished(text: String, model: Option<String>) -> Result<Answer, AnswerError> {
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(AnswerError::Empty);
    }
    Ok(Answer { text, model })
}

fn model_of(value: &Value) -> Option<String> {
    value
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
}

fn too_long() -> AnswerError {
    AnswerError::Malformed(format!(
        "longer than {} MiB",
        MAX_ANSWER_BYTES / (1024 * 1024)
    ))
}

/// The message of an error answer (OpenAI's `{"error": {"message"}}`, Ollama's `{"error": "..."}`
/// or plain text), cut to a sentence's length.
pub fn error_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(value) => value
            .pointer("/error/message")
            .or_else(|| value.get("error"))
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_default(),
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(content_type: &str, body: &str) -> Result<Answer, AnswerError> {
        read_answer(content_type, body.as_bytes(), &Cancel::new())
    }

    #[test]
    fn the_request_is_the_system_prompt_and_the_text_streamed() {
        let body: Value =
            serde_json::from_slice(&request_body("llama3.2", "Fix it.", "hi")).unwrap();
        assert_eq!(body["model"], "llama3.2");
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "Fix it."})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "hi"})
        );
        assert_eq!(body["stream"], true);
    }

    #[test]
    fn an_answer_is_read_as_one_object_or_as_events() {
        let whole =
            r#"{"model":"m1","choices":[{"message":{"role":"assistant","content":" Hello. "}}]}"#;
        assert_eq!(
            read("application/json", whole),
            Ok(Answer {
                text: "Hello.".into(),
                model: Some("m1".into())
            })
        );
        let events = "data: {\"model\":\"m2\",\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n\
                      data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
                      : a comment\n\
                      data: {\"choices\":[{\"delta\":{\"content\":\"lo.\"}}]}\n\n\
                      data: [DONE]\n\n";
        assert_eq!(
            read("text/event-stream; charset=utf-8", events),
            Ok(Answer {
                text: "Hello.".into(),
                model: Some("m2".into())
            })
        );
    }

    #[test]
    fn answers_that_are_not_completions_or_hold_no_text_are_refused() {
        assert!(matches!(
            read("application/json", "<html>"),
            Err(AnswerError::Malformed(_))
        ));
        assert!(matches!(
            read("application/json", "{}"),
            Err(AnswerError::Malformed(_))
        ));
        let empty = r#"{"choices":[{"message":{"content":"  "}}]}"#;
        assert_eq!(read("application/json", empty), Err(AnswerError::Empty));
        let null = r#"{"choices":[{"message":{"content":null}}]}"#;
        assert_eq!(read("application/json", null), Err(AnswerError::Empty));
        assert!(matches!(
            read("text/event-stream", "data: nope\n"),
            Err(AnswerError::Malformed(_))
        ));
        assert!(matches!(
            read("text/event-stream", ""),
            Err(AnswerError::Malformed(_))
        ));
        let failed = "data: {\"error\":{\"message\":\"model not loaded\"}}\n";
        assert_eq!(
            read("text/event-stream", failed),
            Err(AnswerError::Malformed("it failed: model not loaded".into()))
        );
        let huge = format!(
            r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#,
            "a".repeat(MAX_ANSWER_BYTES as usize)
        );
        assert!(
            matches!(read("application/json", &huge), Err(AnswerError::Malformed(m)) if m.contains("MiB"))
        );
        let cancel = Cancel::new();
        cancel.cancel();
        let events = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n";
        assert_eq!(
            read_answer("text/event-stream", events.as_bytes(), &cancel),
            Err(AnswerError::Cancelled)
        );
    }

    #[test]
    fn error_messages_are_read_from_either_shape_and_cut_short() {
        assert_eq!(
            error_message(br#"{"error":{"message":"model 'x' not found","type":"invalid"}}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_message(br#"{"error":"model \"x\" not found"}"#),
            "model \"x\" not found"
        );
        assert_eq!(error_message(b"Bad\n gateway"), "Bad gateway");
        assert_eq!(
            error_message("é".repeat(300).as_bytes()).chars().count(),
            203
        );
    }
}
