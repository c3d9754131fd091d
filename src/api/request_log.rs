//! The request log and request ids: one line per request (method, path, status, latency, request
//! id, response bytes) through tower-http's `TraceLayer`, and an `X-Request-Id` on every answer.
//!
//! A client's own `X-Request-Id` is kept and echoed when it is a plain token (at most 64 of
//! `A-Z a-z 0-9 . _ -`); otherwise, or when absent, the server makes one (a UUID). The log never
//! carries secrets: the token headers, cookies, WebSocket subprotocols (which may carry the
//! token) and the page's session header are marked sensitive (shown as `Sensitive` by anything
//! that prints headers), as are a sign-in's `Set-Cookie` and `Location` (the page's secret);
//! of the query string only the keys and the values of [`SHOWN_QUERY_KEYS`] are written; every
//! other value (a history search, a login code) is `…`.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, Response, header};
use axum::middleware::{Next, from_fn};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::{
    SetSensitiveRequestHeadersLayer, SetSensitiveResponseHeadersLayer,
};
use tower_http::trace::TraceLayer;
use tracing::Span;

use super::browser_session::SESSION_HEADER;
use super::security::TOKEN_HEADER;

/// The request id header, read from requests and set on every response.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Query keys whose values are never personal or secret, so the log shows them.
pub const SHOWN_QUERY_KEYS: &[&str] = &[
    "limit",
    "offset",
    "id",
    "await_download",
    "mic",
    "system_audio",
];

/// The longest client-chosen request id that is kept.
const MAX_CLIENT_ID: usize = 64;

/// Wraps `routes` (every layer of the API inside) with request ids and the request log.
pub fn with_request_log(routes: Router) -> Router {
    routes
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(())
                .on_response(log_response)
                .on_failure(()),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
        .layer(from_fn(drop_unusable_client_id))
        .layer(SetSensitiveResponseHeadersLayer::new([
            header::SET_COOKIE,
            header::LOCATION,
        ]))
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            header::COOKIE,
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderName::from_static(TOKEN_HEADER),
            HeaderName::from_static(SESSION_HEADER),
        ]))
}

/// A client id that is not a plain short token is dropped, and the server makes one.
async fn drop_unusable_client_id(mut request: Request, next: Next) -> Response<Body> {
    let usable = request
        .headers()
        .get(&REQUEST_ID)
        .is_none_or(|id| is_plain_id(id.as_bytes()));
    if !usable {
        request.headers_mut().remove(&REQUEST_ID);
    }
    next.run(request).await
}

fn is_plain_id(id: &[u8]) -> bool {
    (1..=MAX_CLIENT_ID).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn request_span(request: &Request) -> Span {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!(
        "request",
        id = %id,
        method = %request.method(),
        path = %shown_target(request.uri().path(), request.uri().query()),
    )
}

/// The answer's line: its size when known up front, else `streamed` (server-sent events, files).
fn log_response(response: &Response<Body>, latency: Duration, _span: &Span) {
    let status = response.status().as_u16();
    let latency_ms = (latency.as_secs_f64() * 10_000.0).round() / 10.0;
    let declared = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    match http_body::Body::size_hint(response.body())
        .exact()
        .or(declared)
    {
        Some(bytes) => tracing::info!(status, latency_ms, bytes, "answered"),
        None => tracing::info!(status, latency_ms, streamed = true, "answered"),
    }
}

/// The longest path written whole; a longer one (up to 64 KiB get through) is cut, so that a
/// client cannot make every log line that large.
const MAX_SHOWN_PATH: usize = 256;

/// The path (cut at [`MAX_SHOWN_PATH`]) with its query reduced to what may be logged.
pub fn shown_target(path: &str, query: Option<&str>) -> String {
    let path = match path.char_indices().nth(MAX_SHOWN_PATH) {
        Some((end, _)) => format!("{}…", &path[..end]),
        None => path.to_string(),
    };
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return path;
    };
    let shown: Vec<String> = form_urlencoded::parse(query.as_bytes())
        .map(|(key, value)| {
            let key: String = key.chars().take(32).filter(|c| !c.is_control()).collect();
            if SHOWN_QUERY_KEYS.contains(&key.as_str()) {
                let value: String = value.chars().take(64).filter(|c| !c.is_control()).collect();
                format!("{key}={value}")
            } else {
                format!("{key}=…")
            }
        })
        .collect();
    format!("{path}?{}", shown.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_shown_only_for_harmless_keys() {
        assert_eq!(shown_target("/v1/status", None), "/v1/status");
        assert_eq!(
            shown_target("/v1/history", Some("q=my%20secret&limit=5&token=abc")),
            "/v1/history?q=…&limit=5&token=…"
        );
        let long = format!("/v1/{}", "a".repeat(10_000));
        let shown = shown_target(&long, Some("limit=1"));
        assert_eq!(shown, format!("{}…?limit=1", &long[..MAX_SHOWN_PATH]));
    }

    #[test]
    fn only_plain_short_ids_are_kept() {
        assert!(is_plain_id(b"build-42.step_7"));
        assert!(!is_plain_id(b""));
        assert!(!is_plain_id(b"with space"));
        assert!(!is_plain_id(&[b'a'; 65]));
    }
}
