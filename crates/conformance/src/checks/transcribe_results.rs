//! Transcription results: their shape by `response_format`, the boolean words, streaming,
//! word timestamps, local files. Each transcribes the kit's own clip, so each first asks
//! [`Ctx::may_transcribe`] (a ready model; history written only when the run may write).

use serde_json::{Value, json};

use super::transcribe_requests::{events, form, post_form, result_fields, wav};
use crate::audio::{silence_wav, tone_wav};
use crate::context::Exchange;
use crate::expect::{Kind, fields};
use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step};

const TRANSCRIPTION: &str = "Transcription";
const SECOND: &str = "Additions (second wave)";
const WIRE: &str = "Wire conventions";

fn transcribed(cx: &mut Ctx, fields: &[(&str, &str)]) -> Step<(Exchange, Value)> {
    cx.may_transcribe()?;
    let ex = post_form(cx, fields)?;
    let json = ex.ok_json()?;
    result_fields(&ex, &json)?;
    Ok((ex, json))
}

fn streamed(cx: &mut Ctx, request: Request) -> Step {
    cx.may_transcribe()?;
    let ex = cx.send(request)?;
    ex.expect_status(200)?;
    let kind = ex.header("content-type").unwrap_or_default();
    ex.ensure(
        kind.starts_with("text/event-stream"),
        "Content-Type text/event-stream",
        kind,
    )?;
    let all = events(&ex.response.text());
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    let last = all.last().filter(|(name, _)| name == "done");
    let Some((_, data)) = last else {
        return Err(ex.fail(
            "`event: segment`s then `event: done`",
            format!("events {names:?}"),
        ));
    };
    ex.ensure(
        names[..names.len() - 1].iter().all(|n| *n == "segment"),
        "only `segment` events before `done`",
        format!("{names:?}"),
    )?;
    let done: Value = serde_json::from_str(data).map_err(|e| {
        ex.fail(
            "`done` carries the result as JSON",
            format!("{data:?} ({e})"),
        )
    })?;
    result_fields(&ex, &done)
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "transcribe.multipart",
            (
                TRANSCRIPTION,
                "Result: `{text, language?, duration, processing_time, engine, model?}`",
            ),
            Needs::ACCESS,
            |cx| transcribed(cx, &[]).map(drop),
        ),
        Check::new(
            "transcribe.raw-body",
            (TRANSCRIPTION, "Raw body: format from `Content-Type`"),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let ex = cx.send(Request::new("POST", "/v1/transcribe").body(wav(tone_wav())))?;
                let json = ex.ok_json()?;
                result_fields(&ex, &json)
            },
        ),
        Check::new(
            "transcribe.octet-stream",
            (TRANSCRIPTION, "`application/octet-stream` is sniffed"),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let body = Body::Bytes {
                    bytes: tone_wav(),
                    content_type: "application/octet-stream".into(),
                    label: "clip.wav".into(),
                };
                let ex = cx.send(Request::new("POST", "/v1/transcribe").body(body))?;
                let json = ex.ok_json()?;
                result_fields(&ex, &json)
            },
        ),
        Check::new(
            "transcribe.duration",
            (WIRE, "Durations and times are seconds as JSON numbers"),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = transcribed(cx, &[])?;
                let seconds = json["duration"].as_f64().unwrap_or(-1.0);
                ex.ensure(
                    (seconds - 1.5).abs() < 0.1,
                    "duration 1.5 (the clip's length in seconds)",
                    seconds,
                )
            },
        ),
        Check::new(
            "transcribe.plain-shape",
            (
                TRANSCRIPTION,
                "with `response_format=verbose_json` also `segments`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = transcribed(cx, &[("response_format", "json")])?;
                ex.ensure(
                    json.get("segments").is_none(),
                    "no `segments` without verbose_json",
                    &json,
                )
            },
        ),
        Check::new(
            "transcribe.other-format-plain",
            (
                TRANSCRIPTION,
                "Any other `response_format` value gives the plain shape",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = transcribed(cx, &[("response_format", "conformance-kit-format")])?;
                ex.ensure(json.get("segments").is_none(), "the plain shape", &json)
            },
        ),
        Check::new(
            "transcribe.verbose-segments",
            (
                TRANSCRIPTION,
                "segments:[{start, end, text, speaker?, speaker_confidence?}]",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) =
                    transcribed(cx, &[("response_format", "verbose_json"), ("vad", "off")])?;
                let Some(segments) = json["segments"].as_array() else {
                    return Err(ex.fail("`segments` array with verbose_json", json.to_string()));
                };
                for segment in segments {
                    fields(
                        &ex,
                        segment,
                        "segment",
                        &[
                            ("start", Kind::Num),
                            ("end", Kind::Num),
                            ("text", Kind::Str),
                        ],
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "transcribe.no-speakers",
            (
                SECOND,
                "`segments[].speaker` / `speaker_confidence` are omitted: no engine diarizes",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) =
                    transcribed(cx, &[("response_format", "verbose_json"), ("vad", "off")])?;
                let speakers =
                    json["segments"].as_array().into_iter().flatten().any(|s| {
                        s.get("speaker").is_some() || s.get("speaker_confidence").is_some()
                    });
                ex.ensure(!speakers, "no speaker fields", &json)
            },
        ),
        Check::new(
            "transcribe.word-timestamps",
            (
                SECOND,
                "`timestamp_granularities` ... with `response_format=verbose_json` adds top-level `words`",
            ),
            Needs::ACCESS,
            |cx| {
                let (ex, json) = transcribed(
                    cx,
                    &[
                        ("response_format", "verbose_json"),
                        ("timestamp_granularities", "word,segment"),
                        ("vad", "off"),
                    ],
                )?;
                let Some(words) = json["words"].as_array() else {
                    return Err(ex.fail("a top-level `words` array", json.to_string()));
                };
                for word in words {
                    fields(
                        &ex,
                        word,
                        "word",
                        &[
                            ("word", Kind::Str),
                            ("start", Kind::Num),
                            ("end", Kind::Num),
                        ],
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "transcribe.no-speech",
            (
                SECOND,
                "`vad` ... default on ... No speech: `text` is `\"\"`",
            ),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let ex =
                    cx.send(Request::new("POST", "/v1/transcribe").body(wav(silence_wav())))?;
                let json = ex.ok_json()?;
                ex.ensure(
                    json["text"] == "",
                    "text \"\" for 1.5 s of silence",
                    &json["text"],
                )
            },
        ),
        Check::new(
            "transcribe.boolean-words",
            (
                WIRE,
                "Booleans ... accept `1/true/yes/on` and `0/false/no/off`, case-insensitive",
            ),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let request = Request::new("POST", "/v1/transcribe")
                    .body(wav(silence_wav()))
                    .header("X-Apply-Corrections", "YES")
                    .header("X-Normalize-Numbers", "Off")
                    .header("X-Vad", "on");
                cx.send(request)?.ok_json()?;
                transcribed(
                    cx,
                    &[
                        ("apply_corrections", "No"),
                        ("normalize_numbers", "TRUE"),
                        ("vad", "1"),
                    ],
                )
                .map(drop)
            },
        ),
        Check::new(
            "transcribe.hints-header",
            (
                TRANSCRIPTION,
                "`X-Language-Hints` is comma-separated, items trimmed, empties dropped",
            ),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let request = Request::new("POST", "/v1/transcribe")
                    .body(wav(silence_wav()))
                    .header("X-Language-Hints", " en , ,");
                cx.send(request)?.ok_json().map(drop)
            },
        ),
        Check::new(
            "transcribe.await-download-words",
            (TRANSCRIPTION, "with `?await_download=1` (also `true`)"),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                for query in ["await_download=1", "await_download=true"] {
                    let ex = cx.send(
                        Request::new("POST", &format!("/v1/transcribe?{query}")).body(form(&[])),
                    )?;
                    ex.ok_json()?;
                }
                Ok(())
            },
        ),
        Check::new(
            "transcribe.repeated-query-key",
            (SECOND, "A repeated query key: the last value wins"),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let ex = cx.send(
                    Request::new("POST", "/v1/transcribe?await_download=1&await_download=0")
                        .body(form(&[])),
                )?;
                let json = ex.ok_json()?;
                result_fields(&ex, &json)
            },
        ),
        Check::new(
            "transcribe.stream",
            (
                SECOND,
                "`stream=true` ... answers `text/event-stream`: one `event: segment` per segment ... then `event: done`",
            ),
            Needs::ACCESS,
            |cx| {
                streamed(
                    cx,
                    Request::new("POST", "/v1/transcribe").body(form(&[("stream", "true")])),
                )
            },
        ),
        Check::new(
            "transcribe.stream-accept",
            (
                SECOND,
                "or `Accept: text/event-stream` answers `text/event-stream`",
            ),
            Needs::ACCESS,
            |cx| {
                streamed(
                    cx,
                    Request::new("POST", "/v1/transcribe")
                        .body(wav(tone_wav()))
                        .header("Accept", "text/event-stream"),
                )
            },
        ),
        Check::new(
            "transcribe.local-file",
            (
                TRANSCRIPTION,
                "Local file: `POST /v1/transcribe/local-file`, JSON `{path, ...}`",
            ),
            Needs::ACCESS,
            |cx| {
                cx.may_transcribe()?;
                let path = cx.scratch()?.join("clip.wav");
                std::fs::write(&path, tone_wav()).map_err(|e| {
                    crate::Outcome::Skip(format!("cannot write {}: {e}", path.display()))
                })?;
                let ex = cx.send(
                    Request::new("POST", "/v1/transcribe/local-file")
                        .json(&json!({"path": path, "response_format": "verbose_json"})),
                )?;
                let json = ex.ok_json()?;
                result_fields(&ex, &json)?;
                ex.ensure(
                    json["segments"].is_array(),
                    "`segments` with verbose_json",
                    &json,
                )
            },
        ),
    ]
}
