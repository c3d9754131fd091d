//! Wire conventions: JSON answers without `null`, timestamps, UUIDs, unknown routes and
//! methods, `OPTIONS`, `HEAD`, query and body leniency, and the HTTP layer's own refusals.

use serde_json::{Value, json};

use crate::expect::{find_null, fresh_uuid, is_timestamp, is_upper_uuid};
use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const WIRE: &str = "Wire conventions";
const SECOND: &str = "Additions (second wave)";

/// Every GET route whose answer is a JSON document.
pub const JSON_READS: &[&str] = &[
    "/v1/status",
    "/v1/models",
    "/v1/history?limit=200",
    "/v1/dictionary/terms",
    "/v1/dictionary/corrections",
    "/v1/rules",
    "/v1/profiles",
    "/v1/dictation/status",
    "/v1/recorder/status",
    "/v1/settings/export",
];

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "wire.json-content-type",
            (WIRE, "JSON bodies, `Content-Type: application/json`"),
            Needs::ACCESS,
            |cx| {
                for path in JSON_READS {
                    let ex = cx.get(path)?;
                    let kind = ex.header("content-type").unwrap_or_default().to_string();
                    ex.ensure(
                        kind.starts_with("application/json"),
                        format!("{path}: Content-Type application/json"),
                        format!("Content-Type {kind:?}"),
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "wire.no-null",
            (
                WIRE,
                "Optional fields with no value are **omitted**, never `null`",
            ),
            Needs::ACCESS,
            |cx| {
                for path in JSON_READS {
                    let (ex, json) = cx.get_json(path)?;
                    if let Some(at) = find_null(&json, "") {
                        return Err(
                            ex.fail(format!("{path}: no null anywhere"), format!("null at {at}"))
                        );
                    }
                }
                Ok(())
            },
        ),
        Check::new(
            "wire.timestamps",
            (WIRE, "Timestamps: ISO 8601 UTC without fractional seconds"),
            Needs::ACCESS,
            |cx| {
                let (ex, export) = cx.get_json("/v1/settings/export")?;
                let exported = export["exportedAt"].as_str().unwrap_or_default();
                ex.ensure(
                    is_timestamp(exported),
                    "exportedAt like 2026-04-13T10:15:00Z",
                    exported,
                )?;
                let (ex, page) = cx.get_json("/v1/history?limit=200")?;
                for entry in page["entries"].as_array().into_iter().flatten() {
                    let at = entry["timestamp"].as_str().unwrap_or_default();
                    ex.ensure(
                        is_timestamp(at),
                        "history timestamps like 2026-04-13T10:15:00Z",
                        at,
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "wire.uuid-upper-case",
            (WIRE, "UUIDs are written upper-case"),
            Needs::ACCESS,
            |cx| {
                let mut seen = 0;
                for (path, list) in [("/v1/history?limit=200", "entries"), ("/v1/rules", "rules")] {
                    let (ex, json) = cx.get_json(path)?;
                    for item in json[list].as_array().into_iter().flatten() {
                        let id = item["id"].as_str().unwrap_or_default();
                        ex.ensure(
                            is_upper_uuid(id),
                            format!("{path}: ids are upper-case UUIDs"),
                            id,
                        )?;
                        seen += 1;
                    }
                }
                if seen == 0 {
                    return skip("no history entry or rule on this server to read an id from");
                }
                Ok(())
            },
        ),
        Check::new(
            "wire.uuid-any-case",
            (WIRE, "UUIDs ... accepted in any case"),
            Needs::ACCESS,
            |cx| {
                let lower = fresh_uuid().to_lowercase();
                let ex = cx.send(Request::new("DELETE", &format!("/v1/history?id={lower}")))?;
                ex.error(404, "not_found").map(drop)?;
                let ex = cx.send(Request::new("PUT", &format!("/v1/rules/toggle?id={lower}")))?;
                ex.error(404, "not_found").map(drop)
            },
        ),
        Check::new(
            "wire.unknown-route",
            (
                WIRE,
                "Unknown route or wrong method: 404 `not_found`, message `Not found: <METHOD> <PATH>`",
            ),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/conformance-kit-nowhere"))?;
                ex.error_message(
                    404,
                    "not_found",
                    "Not found: GET /v1/conformance-kit-nowhere",
                )
            },
        ),
        Check::new(
            "wire.wrong-method",
            (WIRE, "Unknown route or wrong method: 404 `not_found`"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("DELETE", "/v1/status"))?;
                ex.error_message(404, "not_found", "Not found: DELETE /v1/status")
            },
        ),
        Check::new(
            "wire.not-found-before-auth",
            (WIRE, "404 `not_found` ... answered before the auth check"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("POST", "/v1/models"))?;
                ex.error_message(404, "not_found", "Not found: POST /v1/models")
            },
        ),
        Check::new(
            "wire.options",
            (
                WIRE,
                "`OPTIONS` on any path: 204, empty body, no CORS headers",
            ),
            Needs::NOTHING,
            |cx| {
                for path in ["/v1/transcribe", "/v1/conformance-kit-nowhere"] {
                    let ex = cx.send_anonymous(Request::new("OPTIONS", path))?;
                    ex.ensure(
                        ex.status() == 204 && ex.response.body.is_empty(),
                        format!("OPTIONS {path}: 204 with an empty body"),
                        ex.summary(),
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "wire.unknown-query-key",
            (SECOND, "unknown query keys too [are ignored]"),
            Needs::ACCESS,
            |cx| {
                let (ex, page) = cx.get_json("/v1/history?limit=1&conformance_kit=1")?;
                ex.ensure(page["limit"] == 1, "limit 1", &page["limit"])
            },
        ),
        Check::new(
            "wire.repeated-query-key",
            (SECOND, "A repeated query key: the last value wins"),
            Needs::ACCESS,
            |cx| {
                let (ex, page) = cx.get_json("/v1/history?limit=1&limit=3")?;
                ex.ensure(
                    page["limit"] == 3,
                    "limit 3 (the last value)",
                    &page["limit"],
                )
            },
        ),
        Check::new(
            "wire.unknown-json-key",
            (SECOND, "Unknown JSON keys in request bodies are ignored"),
            Needs::ACCESS,
            |cx| {
                let body = json!({"path": "/nonexistent-conformance-kit/clip.wav", "await_download": true, "conformance_kit": 1});
                let ex = cx.send(Request::new("POST", "/v1/transcribe/local-file").json(&body))?;
                ex.error_message(400, "bad_request", "File not found")?;
                let body = json!({"workflow_id": "not-a-uuid", "conformance_kit": 1});
                let ex = cx.send(Request::new("POST", "/v1/dictation/start").json(&body))?;
                ex.error_message(400, "bad_request", "Missing or invalid 'workflow_id'")
            },
        ),
        Check::new(
            "wire.head-public",
            (
                SECOND,
                "`HEAD` on a GET route answers as GET would, without a body",
            ),
            Needs::NOTHING,
            |cx| head_like_get(cx, "/v1/status"),
        ),
        Check::new(
            "wire.head-protected",
            (
                SECOND,
                "`HEAD` on a GET route answers as GET would, without a body",
            ),
            Needs::ACCESS,
            |cx| head_like_get(cx, "/v1/dictionary/corrections"),
        ),
        Check::new(
            "wire.malformed-head",
            (
                SECOND,
                "Every error the server sends, including those of the HTTP layer (malformed requests...), is the Error object",
            ),
            Needs::NOTHING,
            |cx| {
                let mut request = Request::new("GARBAGE", "");
                request.raw = Some(b"GARBAGE\r\n\r\n".to_vec());
                cx.send_anonymous(request)?
                    .error(400, "bad_request")
                    .map(drop)
            },
        ),
        Check::new(
            "wire.too-many-headers",
            (
                SECOND,
                "including those of the HTTP layer ... is the Error object",
            ),
            Needs::NOTHING,
            |cx| {
                let mut request = Request::new("GET", "/v1/status");
                for i in 0..150 {
                    request = request.header(&format!("X-Conformance-{i}"), "1");
                }
                http_layer_error(cx, request, 431)
            },
        ),
        Check::new(
            "wire.uri-too-long",
            (
                SECOND,
                "including those of the HTTP layer ... is the Error object",
            ),
            Needs::NOTHING,
            |cx| {
                let path = format!("/v1/history?q={}", "a".repeat(70_000));
                http_layer_error(cx, Request::new("GET", &path), 414)
            },
        ),
    ]
}

fn head_like_get(cx: &mut Ctx, path: &str) -> Step {
    let get = cx.get(path)?;
    let head = cx.send(Request::new("HEAD", path))?;
    head.ensure(
        head.status() == get.status() && head.response.body.is_empty(),
        format!("HEAD {path}: status {} as GET, no body", get.status()),
        format!(
            "{} with {} body bytes",
            head.status(),
            head.response.body.len()
        ),
    )?;
    let kind = |ex: &crate::context::Exchange| ex.header("content-type").map(str::to_string);
    head.ensure(
        kind(&head) == kind(&get),
        format!("Content-Type {:?} as GET", kind(&get)),
        format!("{:?}", kind(&head)),
    )
}

/// A refusal of the HTTP layer: `status` with a JSON Error object.
fn http_layer_error(cx: &mut Ctx, request: Request, status: u16) -> Step {
    let ex = cx.send_anonymous(request)?;
    ex.expect_status(status)?;
    let json: Value = ex.json()?;
    ex.ensure(
        json["error"]["code"].is_string() && json["error"]["message"].is_string(),
        "an Error object",
        &json,
    )
}
