//! `POST /v1/transcribe` and `/local-file`: the refusals, each of which the server must give
//! before transcribing anything (so they run even where transcribing would write history).

use serde_json::{Value, json};

use crate::audio::{silence_wav, tone_wav};
use crate::context::Exchange;
use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step, skip};

use super::transcribe_requests::{post_form, wav};

const TRANSCRIPTION: &str = "Transcription";
const WIRE: &str = "Wire conventions";

fn bad_request(cx: &mut Ctx, fields: &[(&str, &str)], message: Option<&str>) -> Step {
    let ex = post_form(cx, fields)?;
    match message {
        Some(message) => ex.error_message(400, "bad_request", message),
        None => ex.error(400, "bad_request").map(drop),
    }
}

fn local_file(cx: &mut Ctx, body: Value) -> Step<Exchange> {
    cx.send(Request::new("POST", "/v1/transcribe/local-file").json(&body))
}

pub fn checks() -> Vec<Check> {
    let mut checks = vec![
        Check::new(
            "transcribe.missing-file",
            (
                TRANSCRIPTION,
                "field `file` required (400 `Missing 'file' part in multipart form data`)",
            ),
            Needs::ACCESS,
            |cx| {
                let body = Body::Form {
                    fields: vec![("language".into(), "en".into())],
                    file: None,
                };
                cx.send(Request::new("POST", "/v1/transcribe").body(body))?
                    .error_message(
                        400,
                        "bad_request",
                        "Missing 'file' part in multipart form data",
                    )
            },
        ),
        Check::new(
            "transcribe.empty-body",
            (TRANSCRIPTION, "empty body 400 `No audio data provided`"),
            Needs::ACCESS,
            |cx| {
                cx.send(Request::new("POST", "/v1/transcribe").body(wav(Vec::new())))?
                    .error_message(400, "bad_request", "No audio data provided")
            },
        ),
        Check::new(
            "transcribe.language-and-hint",
            (
                TRANSCRIPTION,
                "`language` + `language_hint` together: 400 `Use either 'language' or 'language_hint', not both`",
            ),
            Needs::ACCESS,
            |cx| {
                bad_request(
                    cx,
                    &[("language", "en"), ("language_hint", "de")],
                    Some("Use either 'language' or 'language_hint', not both"),
                )
            },
        ),
        Check::new(
            "transcribe.language-and-hint-before-decoding",
            (TRANSCRIPTION, "(checked before decoding)"),
            Needs::ACCESS,
            |cx| {
                let body = Body::Bytes {
                    bytes: b"not audio at all".to_vec(),
                    content_type: "audio/wav".into(),
                    label: "not-audio.wav".into(),
                };
                let request = Request::new("POST", "/v1/transcribe")
                    .body(body)
                    .header("X-Language", "en")
                    .header("X-Language-Hints", "de,fr");
                cx.send(request)?.error_message(
                    400,
                    "bad_request",
                    "Use either 'language' or 'language_hint', not both",
                )
            },
        ),
        Check::new(
            "transcribe.bad-task",
            (
                TRANSCRIPTION,
                "`task` other than `transcribe`/`translate`: 400",
            ),
            Needs::ACCESS,
            |cx| bad_request(cx, &[("task", "summarise")], None),
        ),
        Check::new(
            "transcribe.translate-english-only",
            (
                TRANSCRIPTION,
                "`translate` on a model that cannot translate (e.g. `.en`): 400 naming the model",
            ),
            Needs::ACCESS,
            |cx| {
                let model = cx.status()?["model"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if !model.contains(".en") {
                    return skip(format!(
                        "the selected model ({model:?}) is not an English-only one"
                    ));
                }
                let ex = post_form(cx, &[("task", "translate")])?;
                let message = ex.error(400, "bad_request")?;
                ex.ensure(
                    message.contains(&model),
                    format!("a message naming {model:?}"),
                    format!("{message:?}"),
                )
            },
        ),
        Check::new(
            "transcribe.target-language",
            (
                TRANSCRIPTION,
                "`target_language`: without a translation provider on this host, 501 `not_implemented`",
            ),
            Needs::ACCESS,
            |cx| {
                post_form(cx, &[("target_language", "de")])?.error_message(501, "not_implemented", "Target-language translation needs a translation provider; none is configured on this host")
            },
        ),
        Check::new(
            "transcribe.unknown-engine",
            (TRANSCRIPTION, "unknown engine 400 `Unknown engine '<e>'`"),
            Needs::ACCESS,
            |cx| {
                bad_request(
                    cx,
                    &[("engine", "conformance-kit-engine")],
                    Some("Unknown engine 'conformance-kit-engine'"),
                )
            },
        ),
        Check::new(
            "transcribe.unknown-model",
            (
                TRANSCRIPTION,
                "model only → ... 0 matches: 400 `Unknown model '<m>'`",
            ),
            Needs::ACCESS,
            |cx| {
                bad_request(
                    cx,
                    &[("model", "conformance-kit-model")],
                    Some("Unknown model 'conformance-kit-model'"),
                )
            },
        ),
        Check::new(
            "transcribe.model-not-offered",
            (
                TRANSCRIPTION,
                "both → 400 `Model '<m>' is not offered by engine '<e>'` when absent",
            ),
            Needs::ACCESS,
            |cx| {
                let Some(engine) = cx.status()?["engine"].as_str().map(str::to_string) else {
                    return skip("no engine is selected on this server");
                };
                let message =
                    format!("Model 'conformance-kit-model' is not offered by engine '{engine}'");
                bad_request(
                    cx,
                    &[("engine", &engine), ("model", "conformance-kit-model")],
                    Some(&message),
                )
            },
        ),
        Check::new(
            "transcribe.not-configured",
            (
                TRANSCRIPTION,
                "Not configured ... → 409 `Engine '<e>' is not configured ...`",
            ),
            Needs::ACCESS,
            |cx| {
                let (_, models) = cx.get_json("/v1/models")?;
                let idle = models["models"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|m| m["status"] == "not_configured")
                    .cloned();
                let Some(model) = idle else {
                    return skip("every model on this server is ready");
                };
                let (engine, id) = (
                    model["engine"].as_str().unwrap_or_default(),
                    model["id"].as_str().unwrap_or_default(),
                );
                let ex = post_form(cx, &[("engine", engine), ("model", id)])?;
                ex.error_message(409, "conflict", &format!("Engine '{engine}' is not configured (missing API key or downloaded weights). Pass ?await_download=1 to wait for the download."))
            },
        ),
        Check::new(
            "transcribe.undecodable",
            (
                TRANSCRIPTION,
                "Undecodable audio: 400 naming the format problem",
            ),
            Needs::ACCESS,
            |cx| {
                let body = Body::Bytes {
                    bytes: b"RIFF\0\0\0\0WAVEnothing useful".to_vec(),
                    content_type: "audio/wav".into(),
                    label: "broken.wav".into(),
                };
                cx.send(Request::new("POST", "/v1/transcribe").body(body))?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "transcribe.bad-boolean",
            (
                WIRE,
                "Booleans in form fields, headers and query strings accept ... Anything else is 400",
            ),
            Needs::ACCESS,
            |cx| {
                let request = Request::new("POST", "/v1/transcribe")
                    .body(wav(silence_wav()))
                    .header("X-Apply-Corrections", "maybe");
                cx.send(request)?.error(400, "bad_request")?;
                bad_request(cx, &[("vad", "perhaps")], None)
            },
        ),
        Check::new(
            "transcribe.local-file-relative",
            (TRANSCRIPTION, "`path` must be absolute"),
            Needs::ACCESS,
            |cx| {
                local_file(cx, json!({"path": "conformance-kit/clip.wav"}))?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "transcribe.local-file-missing",
            (TRANSCRIPTION, "missing file 400 `File not found`"),
            Needs::ACCESS,
            |cx| {
                local_file(cx, json!({"path": "/nonexistent-conformance-kit/clip.wav"}))?
                    .error_message(400, "bad_request", "File not found")
            },
        ),
        Check::new(
            "transcribe.local-file-extension",
            (
                TRANSCRIPTION,
                "extensions wav, mp3, m4a, flac, aac, ogg, wma, mp4, mov, mkv, avi, else 400 `Unsupported audio format`",
            ),
            Needs::ACCESS,
            |cx| {
                let path = cx.scratch()?.join("notes.txt");
                std::fs::write(&path, tone_wav()).map_err(|e| {
                    crate::Outcome::Skip(format!("cannot write {}: {e}", path.display()))
                })?;
                local_file(cx, json!({"path": path}))?.error_message(
                    400,
                    "bad_request",
                    "Unsupported audio format",
                )
            },
        ),
        Check::new(
            "transcribe.local-file-language-and-hint",
            (TRANSCRIPTION, "`language` + `language_hint` together: 400"),
            Needs::ACCESS,
            |cx| {
                let body = json!({"path": "/nonexistent-conformance-kit/clip.wav", "language": "en", "language_hints": ["de"]});
                local_file(cx, body)?.error(400, "bad_request").map(drop)
            },
        ),
    ];
    checks.extend(super::transcribe_results::checks());
    checks
}
