//! Body limits per route: 413 with the route's limit in the message, answered from
//! `Content-Length` before any body byte is sent, or as soon as a chunked body crosses it.

use std::time::Duration;

use serde_json::json;

use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step};

const ERRORS: &str = "Error object";
const SECOND: &str = "Additions (second wave)";
const MIB: u64 = 1024 * 1024;

/// A request that announces one byte over `limit_mib` and sends no body: the server must answer.
fn withheld(cx: &mut Ctx, path: &str, content_type: &str, limit_mib: u64) -> Step {
    let body = Body::Withheld {
        length: limit_mib * MIB + 1,
        content_type: content_type.into(),
    };
    let ex = cx.send(
        Request::new(
            if path.contains("dictionary") {
                "PUT"
            } else {
                "POST"
            },
            path,
        )
        .body(body)
        .timeout(Duration::from_secs(10)),
    )?;
    let message = ex.error(413, "payload_too_large")?;
    let expected = format!("Payload too large. Maximum request body size is {limit_mib} MiB.");
    ex.ensure(
        message == expected,
        format!("message {expected:?}"),
        format!("{message:?}"),
    )
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "limits.upload-before-body",
            (
                ERRORS,
                "413 `payload_too_large` (message `Payload too large. Maximum request body size is 256 MiB.`)",
            ),
            Needs::ACCESS,
            |cx| withheld(cx, "/v1/transcribe", "audio/wav", 256),
        ),
        Check::new(
            "limits.openai-upload",
            (SECOND, "256 MiB for audio uploads"),
            Needs::ACCESS,
            |cx| {
                withheld(
                    cx,
                    "/v1/audio/transcriptions",
                    "multipart/form-data; boundary=x",
                    256,
                )
            },
        ),
        Check::new(
            "limits.import",
            (SECOND, "64 MiB for `POST /v1/settings/import`"),
            Needs::ACCESS,
            |cx| withheld(cx, "/v1/settings/import", "application/json", 64),
        ),
        Check::new(
            "limits.json",
            (SECOND, "1 MiB for every other JSON body"),
            Needs::ACCESS,
            |cx| withheld(cx, "/v1/dictionary/terms", "application/json", 1),
        ),
        Check::new(
            "limits.local-file-json",
            (SECOND, "1 MiB for every other JSON body"),
            Needs::ACCESS,
            |cx| withheld(cx, "/v1/transcribe/local-file", "application/json", 1),
        ),
        Check::new(
            "limits.chunked",
            (ERRORS, "or as soon as the limit is crossed (chunked)"),
            Needs::ACCESS,
            |cx| {
                let body = Body::Chunked {
                    bytes: vec![b' '; (MIB + MIB / 4) as usize],
                    content_type: "application/json".into(),
                };
                let ex = cx.send(Request::new("PUT", "/v1/dictionary/terms").body(body))?;
                ex.error_message(
                    413,
                    "payload_too_large",
                    "Payload too large. Maximum request body size is 1 MiB.",
                )
            },
        ),
        Check::new(
            "limits.json-at-limit",
            (SECOND, "1 MiB for every other JSON body"),
            Needs::ACCESS,
            |cx| {
                // Exactly 1 MiB: `{}` and spaces. Within the limit, so the route judges it (400).
                let mut text = "{}".to_string();
                text.push_str(&" ".repeat(MIB as usize - 2));
                let ex =
                    cx.send(Request::new("PUT", "/v1/dictionary/terms").body(Body::Json(text)))?;
                ex.error(400, "bad_request").map(drop)
            },
        ),
        Check::new(
            "limits.import-above-json-limit",
            (SECOND, "64 MiB for `POST /v1/settings/import`"),
            Needs::ACCESS,
            |cx| {
                let mut text = json!({"conformance_kit": "not a backup"}).to_string();
                text.push_str(&" ".repeat(2 * MIB as usize));
                let ex =
                    cx.send(Request::new("POST", "/v1/settings/import").body(Body::Json(text)))?;
                ex.error_starting(
                    400,
                    "bad_request",
                    "The document is not a valid Verbatim settings backup.",
                )
                .map(drop)
            },
        ),
    ]
}
