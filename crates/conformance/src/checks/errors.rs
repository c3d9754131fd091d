//! The Error object: its exact shape, its content type and headers, and the code that goes
//! with each status the server can be made to answer without side effects.

use serde_json::Value;

use crate::http::{Body, Request};
use crate::{Check, Needs, skip};

const ERRORS: &str = "Error object";

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "errors.shape",
            (ERRORS, "`{\"error\":{\"code\":C,\"message\":M}}`"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/conformance-kit-nowhere"))?;
                let json: Value = ex.json()?;
                let only_error = json.as_object().is_some_and(|o| o.len() == 1);
                let inner = json["error"].as_object();
                let two_strings = inner.is_some_and(|o| {
                    o.len() == 2
                        && o.get("code").is_some_and(Value::is_string)
                        && o.get("message").is_some_and(Value::is_string)
                });
                ex.ensure(
                    only_error && two_strings,
                    "exactly {\"error\":{\"code\":string,\"message\":string}}",
                    &json,
                )
            },
        ),
        Check::new(
            "errors.content-type",
            (ERRORS, "JSON bodies, `Content-Type: application/json`"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/conformance-kit-nowhere"))?;
                let kind = ex.header("content-type").unwrap_or_default();
                ex.ensure(
                    kind.starts_with("application/json"),
                    "Content-Type application/json on an error",
                    kind,
                )
            },
        ),
        Check::new(
            "errors.bad-request",
            (ERRORS, "400 `bad_request`"),
            Needs::ACCESS,
            |cx| {
                cx.get("/v1/history?limit=lots")?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "errors.conflict",
            (ERRORS, "409 `conflict`"),
            Needs::ACCESS,
            |cx| {
                let (_, status) = cx.get_json("/v1/recorder/status")?;
                if status["recording"] == true {
                    return skip("the Recorder is recording: stopping it is not the kit's to do");
                }
                let ex = cx.send(Request::new("POST", "/v1/recorder/stop"))?;
                ex.error_message(409, "conflict", "Not recording")
            },
        ),
        Check::new(
            "errors.unsupported-media-type",
            (ERRORS, "415 `unsupported_media_type`"),
            Needs::ACCESS,
            |cx| {
                let body = Body::Bytes {
                    bytes: b"{}".to_vec(),
                    content_type: "text/plain".into(),
                    label: "backup.txt".into(),
                };
                cx.send(Request::new("POST", "/v1/settings/import").body(body))?
                    .error(415, "unsupported_media_type")
                    .map(drop)
            },
        ),
        Check::new(
            "errors.service-unavailable",
            (
                ERRORS,
                "No engine selected and no override → 503 `No engine selected. Select an engine first.`",
            ),
            Needs::ACCESS,
            |cx| {
                if cx.status()?.get("engine").is_some() {
                    return skip("an engine is selected on this server");
                }
                let body = Body::Bytes {
                    bytes: crate::audio::silence_wav(),
                    content_type: "audio/wav".into(),
                    label: "silence.wav".into(),
                };
                cx.send(Request::new("POST", "/v1/transcribe").body(body))?
                    .error_message(
                        503,
                        "service_unavailable",
                        "No engine selected. Select an engine first.",
                    )
            },
        ),
    ]
}
