//! Authentication: `/v1/status` stays public; with token checking on, every other route
//! answers 401 without the token, and takes it as Bearer (any case) or in the token header.

use serde_json::json;

use crate::http::{Body, Request};
use crate::{Check, Ctx, Needs, Step};

const AUTH: &str = "Discovery and authentication";
const ERRORS: &str = "Error object";

/// Every protected route, with a request that changes nothing even where the token is not checked.
fn protected_routes() -> Vec<Request> {
    let json =
        |method: &str, path: &str, body: serde_json::Value| Request::new(method, path).json(&body);
    vec![
        Request::new("GET", "/v1/models"),
        Request::new("POST", "/v1/transcribe").body(Body::Bytes {
            bytes: Vec::new(),
            content_type: "audio/wav".into(),
            label: "empty.wav".into(),
        }),
        json(
            "POST",
            "/v1/transcribe/local-file",
            json!({"path": "relative.wav"}),
        ),
        Request::new("GET", "/v1/history"),
        Request::new("DELETE", "/v1/history?id=not-a-uuid"),
        Request::new("GET", "/v1/dictionary/terms"),
        json("PUT", "/v1/dictionary/terms", json!({})),
        json("DELETE", "/v1/dictionary/terms", json!({})),
        Request::new("GET", "/v1/dictionary/corrections"),
        json(
            "PUT",
            "/v1/dictionary/corrections",
            json!({"original": "", "replacement": ""}),
        ),
        json("DELETE", "/v1/dictionary/corrections", json!({})),
        Request::new("GET", "/v1/settings/export"),
        json("POST", "/v1/settings/import", json!({})),
        Request::new("GET", "/v1/rules"),
        Request::new("PUT", "/v1/rules/toggle?id=not-a-uuid"),
        Request::new("GET", "/v1/profiles"),
        Request::new("PUT", "/v1/profiles/toggle?id=not-a-uuid"),
        json(
            "POST",
            "/v1/dictation/start",
            json!({"workflow_id": "not-a-uuid"}),
        ),
        Request::new("GET", "/v1/dictation/status"),
        Request::new("GET", "/v1/dictation/transcription?id=not-a-uuid"),
        Request::new("POST", "/v1/recorder/start?mic=maybe"),
        Request::new("GET", "/v1/recorder/status"),
        Request::new("GET", "/v1/recorder/session?id=not-a-uuid"),
        Request::new("POST", "/v1/audio/transcriptions").body(Body::Form {
            fields: vec![],
            file: None,
        }),
        Request::new("POST", "/v1/audio/translations").body(Body::Form {
            fields: vec![],
            file: None,
        }),
    ]
}

fn unauthorized(cx: &mut Ctx, request: Request) -> Step {
    let ex = cx.send_anonymous(request)?;
    ex.error_message(401, "unauthorized", "Missing or invalid API token")
}

fn accepted(cx: &mut Ctx, name: &str, value: &str) -> Step {
    let ex = cx.send_anonymous(Request::new("GET", "/v1/models").header(name, value))?;
    ex.ok_json().map(drop)
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "auth.status-public",
            (AUTH, "GET /v1/status is always public"),
            Needs::NOTHING,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/status"))?;
                ex.ok_json()?;
                let ex = cx.send_anonymous(
                    Request::new("GET", "/v1/status")
                        .header("Authorization", "Bearer wrong-conformance-token"),
                )?;
                ex.ok_json().map(drop)
            },
        ),
        Check::new(
            "auth.missing-token",
            (
                ERRORS,
                "401 `unauthorized` (message `Missing or invalid API token`...)",
            ),
            Needs::TOKEN,
            |cx| unauthorized(cx, Request::new("GET", "/v1/models")),
        ),
        Check::new(
            "auth.www-authenticate",
            (ERRORS, "401 ... header `WWW-Authenticate: Bearer`"),
            Needs::TOKEN,
            |cx| {
                let ex = cx.send_anonymous(Request::new("GET", "/v1/models"))?;
                let header = ex.header("www-authenticate").unwrap_or_default();
                ex.ensure(
                    ex.status() == 401 && header.starts_with("Bearer"),
                    "401 with WWW-Authenticate: Bearer",
                    format!("{} WWW-Authenticate {header:?}", ex.status()),
                )
            },
        ),
        Check::new(
            "auth.wrong-bearer",
            (AUTH, "A missing or invalid token ... gives 401"),
            Needs::TOKEN,
            |cx| {
                unauthorized(
                    cx,
                    Request::new("GET", "/v1/models")
                        .header("Authorization", "Bearer wrong-conformance-token"),
                )
            },
        ),
        Check::new(
            "auth.wrong-header-token",
            (AUTH, "A missing or invalid token ... gives 401"),
            Needs::TOKEN,
            |cx| {
                let name = cx.token_header.clone();
                unauthorized(
                    cx,
                    Request::new("GET", "/v1/models").header(&name, "wrong-conformance-token"),
                )
            },
        ),
        Check::new(
            "auth.bearer",
            (AUTH, "`Authorization: Bearer` (prefix case-insensitive)"),
            Needs::TOKEN,
            |cx| {
                let token = cx.token.clone().unwrap_or_default();
                accepted(cx, "Authorization", &format!("Bearer {token}"))
            },
        ),
        Check::new(
            "auth.bearer-any-case",
            (AUTH, "`Authorization: Bearer` (prefix case-insensitive)"),
            Needs::TOKEN,
            |cx| {
                let token = cx.token.clone().unwrap_or_default();
                accepted(cx, "Authorization", &format!("bEARER {token}"))
            },
        ),
        Check::new(
            "auth.token-header",
            (AUTH, "or `X-Verbatim-API-Token`"),
            Needs::TOKEN,
            |cx| {
                let (name, token) = (
                    cx.token_header.clone(),
                    cx.token.clone().unwrap_or_default(),
                );
                accepted(cx, &name, &token)
            },
        ),
        Check::new(
            "auth.every-route",
            (
                AUTH,
                "every endpoint except GET /v1/status requires the discovery token",
            ),
            Needs::TOKEN,
            |cx| {
                for request in protected_routes() {
                    unauthorized(cx, request)?;
                }
                Ok(())
            },
        ),
    ]
}
