//! The OpenAI-compatible routes: response formats, streaming events, typed errors.

use serde_json::Value;

use super::transcribe_requests::{events, form};
use crate::context::Exchange;
use crate::expect::{Kind, fields};
use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step};

const SECOND: &str = "Additions (second wave)";

fn transcription(cx: &mut Ctx, fields: &[(&str, &str)]) -> Step<Exchange> {
    cx.may_transcribe()?;
    let mut all = vec![("model", "whisper-1")];
    all.extend_from_slice(fields);
    cx.send(Request::new("POST", "/v1/audio/transcriptions").body(form(&all)))
}

fn typed_error(ex: &Exchange, status: u16, kind: &str) -> Step {
    ex.expect_status(status)?;
    let json: Value = ex.json()?;
    let error = &json["error"];
    ex.ensure(
        error["code"].is_string() && error["message"].is_string() && error["type"] == kind,
        format!("the Error object plus \"type\":\"{kind}\""),
        &json,
    )
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "openai.json",
            (
                SECOND,
                "OpenAI-compatible routes `POST /v1/audio/transcriptions` ... follow OpenAI's API reference",
            ),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[])?;
                let json = ex.ok_json()?;
                fields(&ex, &json, "transcription", &[("text", Kind::Str)])
            },
        ),
        Check::new(
            "openai.any-model-name",
            (
                SECOND,
                "`whisper-1` or any other name uses the selected model",
            ),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[("model", "conformance-kit-model")])?;
                ex.ok_json().map(drop)
            },
        ),
        Check::new(
            "openai.text",
            (SECOND, "follow OpenAI's API reference (fields, formats...)"),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[("response_format", "text")])?;
                ex.expect_status(200)?;
                let kind = ex.header("content-type").unwrap_or_default();
                ex.ensure(
                    kind.starts_with("text/plain"),
                    "response_format=text: Content-Type text/plain",
                    kind,
                )
            },
        ),
        Check::new(
            "openai.verbose-json",
            (SECOND, "follow OpenAI's API reference (fields, formats...)"),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[("response_format", "verbose_json")])?;
                let json = ex.ok_json()?;
                fields(
                    &ex,
                    &json,
                    "verbose transcription",
                    &[
                        ("text", Kind::Str),
                        ("language", Kind::Str),
                        ("duration", Kind::Num),
                        ("segments", Kind::Arr),
                    ],
                )
            },
        ),
        Check::new(
            "openai.vtt",
            (SECOND, "follow OpenAI's API reference (fields, formats...)"),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[("response_format", "vtt")])?;
                ex.expect_status(200)?;
                ex.ensure(
                    ex.response.text().starts_with("WEBVTT"),
                    "a WebVTT document (starts with WEBVTT)",
                    ex.summary(),
                )
            },
        ),
        Check::new(
            "openai.stream",
            (
                SECOND,
                "`transcript.text.delta`/`transcript.text.done` events",
            ),
            Needs::ACCESS,
            |cx| {
                let ex = transcription(cx, &[("stream", "true")])?;
                ex.expect_status(200)?;
                let all = events(&ex.response.text());
                let types: Vec<String> = all
                    .iter()
                    .map(|(_, data)| {
                        serde_json::from_str::<Value>(data)
                            .ok()
                            .and_then(|v| v["type"].as_str().map(str::to_string))
                            .unwrap_or_default()
                    })
                    .collect();
                let deltas_then_done = types.last().is_some_and(|t| t == "transcript.text.done")
                    && types[..types.len() - 1]
                        .iter()
                        .all(|t| t == "transcript.text.delta");
                ex.ensure(
                    deltas_then_done,
                    "`transcript.text.delta` events, then `transcript.text.done`",
                    format!("{types:?}"),
                )
            },
        ),
        Check::new(
            "openai.missing-file",
            (
                SECOND,
                "Errors: the Error object plus `\"type\"` (`invalid_request_error`...)",
            ),
            Needs::ACCESS,
            |cx| {
                let body = Body::Form {
                    fields: vec![("model".into(), "whisper-1".into())],
                    file: None,
                };
                let ex = cx.send(Request::new("POST", "/v1/audio/transcriptions").body(body))?;
                typed_error(&ex, 400, "invalid_request_error")
            },
        ),
        Check::new(
            "openai.translations-route",
            (
                SECOND,
                "`/v1/audio/translations` follow OpenAI's API reference",
            ),
            Needs::ACCESS,
            |cx| {
                let body = Body::Form {
                    fields: vec![("model".into(), "whisper-1".into())],
                    file: None,
                };
                let ex = cx.send(Request::new("POST", "/v1/audio/translations").body(body))?;
                typed_error(&ex, 400, "invalid_request_error")
            },
        ),
        Check::new(
            "openai.unauthorized",
            (
                SECOND,
                "Errors: the Error object plus `\"type\"` (... `authentication_error` ...). Same auth",
            ),
            Needs::TOKEN,
            |cx| {
                let body = Body::Form {
                    fields: vec![("model".into(), "whisper-1".into())],
                    file: None,
                };
                let ex =
                    cx.send_anonymous(Request::new("POST", "/v1/audio/transcriptions").body(body))?;
                typed_error(&ex, 401, "authentication_error")
            },
        ),
    ]
}
