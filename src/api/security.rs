//! Security middleware: the Host and Origin rule (`origin`) against DNS rebinding and other
//! origins, the API token or a signed-in browser (`browser_session`), panic capture and the
//! headers on every response.

use std::any::Any;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::ApiError;
use super::browser_session;
use super::origin::{from_own_origin, host_allowed};
use crate::app::App;

/// The header carrying the token as an alternative to `Authorization: Bearer`.
pub const TOKEN_HEADER: &str = "x-verbatim-api-token";
/// In a WebSocket handshake, a subprotocol carrying the token (browsers cannot set headers on
/// a WebSocket): `openai-insecure-api-key.<token>`.
pub const TOKEN_PROTOCOL: &str = "openai-insecure-api-key.";

/// The port the Host header must name.
#[derive(Debug, Clone, Copy)]
pub struct LocalOnly {
    pub port: u16,
}

/// Refuses requests addressed to another host name (DNS rebinding) or sent by any origin but
/// the server's own (see `origin`).
pub async fn local_only(State(local): State<LocalOnly>, request: Request, next: Next) -> Response {
    if !host_allowed(request.headers(), local.port) {
        return ApiError::HostNotAllowed { port: local.port }.into_response();
    }
    if !from_own_origin(request.method(), request.headers(), local.port) {
        return ApiError::CrossOrigin.into_response();
    }
    next.run(request).await
}

/// `OPTIONS` on any path: 204 with an empty body and no CORS headers.
pub async fn answer_options(request: Request, next: Next) -> Response {
    if request.method() == Method::OPTIONS {
        return StatusCode::NO_CONTENT.into_response();
    }
    next.run(request).await
}

/// Checks the token when token checking is on (preference or `--require-token`). The store
/// is read on a blocking thread, from a read connection that never waits behind a write.
pub async fn require_token(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let headers = request.headers().clone();
    match super::blocking(&app, move |app| token_allows(app, &headers)).await {
        Ok(true) => next.run(request).await,
        Ok(false) => {
            discard_body(request.into_body()).await;
            ApiError::Unauthorized.into_response()
        }
        Err(err) => err.into_response(),
    }
}

/// The most of a refused request's body read and thrown away before the answer.
const DISCARD_BYTES: usize = 16 << 20;
/// The longest the server spends on that.
const DISCARD_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads and throws away a refused request's body (up to [`DISCARD_BYTES`] within
/// [`DISCARD_TIME`]), so that a client sending a whole upload before it reads (the OpenAI SDK
/// does) gets the answer: closing the connection on bytes not read resets it, and the client
/// sees a broken connection instead of the 401.
async fn discard_body(body: axum::body::Body) {
    use http_body_util::BodyExt;
    let mut body = body;
    let _ = tokio::time::timeout(DISCARD_TIME, async {
        let mut seen = 0;
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, |data| data.len());
            if seen > DISCARD_BYTES {
                break;
            }
        }
    })
    .await;
}

fn token_allows(app: &App, headers: &HeaderMap) -> Result<bool, ApiError> {
    if !app.token_required()? {
        return Ok(true);
    }
    if token_matches(headers, &app.token()?) {
        return Ok(true);
    }
    // A signed-in browser: both halves of its session (the `local_only` layer has already
    // refused every origin but the server's own).
    match browser_session::presented(headers) {
        Some(session) => Ok(app.store.web_session_valid(&session, unix_now())?),
        None => Ok(false),
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// True when the Bearer token, the `X-Verbatim-API-Token` header or, in a WebSocket handshake,
/// a [`TOKEN_PROTOCOL`] subprotocol equals `expected`, compared in constant time.
pub fn token_matches(headers: &HeaderMap, expected: &str) -> bool {
    let bearer = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    let custom = headers
        .get_all(TOKEN_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::trim);
    let websocket = headers
        .get_all(header::UPGRADE)
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    let protocols = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter(|_| websocket)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|p| p.trim().strip_prefix(TOKEN_PROTOCOL));
    let mut matched = false;
    for candidate in bearer.chain(custom).chain(protocols) {
        matched |= bool::from(candidate.as_bytes().ct_eq(expected.as_bytes()));
    }
    matched
}

/// `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` on every response.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // A wrong method is answered as an unknown route: no `Allow` list.
    headers.remove(header::ALLOW);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A panic in a handler becomes a 500 Error object; the server keeps serving.
pub fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!("request handler panicked: {what}");
    ApiError::HandlerPanicked.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::api::test_headers as headers;

    #[test]
    fn tokens_are_accepted_in_both_forms() {
        let t = "secret-token";
        assert!(token_matches(
            &headers(&[("authorization", "Bearer secret-token")]),
            t
        ));
        assert!(token_matches(
            &headers(&[("authorization", "bearer secret-token")]),
            t
        ));
        assert!(token_matches(
            &headers(&[(TOKEN_HEADER, "secret-token")]),
            t
        ));
        assert!(!token_matches(
            &headers(&[("authorization", "Bearer secret-tokem")]),
            t
        ));
        assert!(!token_matches(
            &headers(&[("authorization", "Bearer secret")]),
            t
        ));
        assert!(!token_matches(
            &headers(&[("authorization", "Basic secret-token")]),
            t
        ));
        assert!(!token_matches(
            &headers(&[("authorization", "secret-token")]),
            t
        ));
        assert!(!token_matches(&HeaderMap::new(), t));
        let offered = "realtime, openai-insecure-api-key.secret-token";
        assert!(token_matches(
            &headers(&[
                ("upgrade", "websocket"),
                ("sec-websocket-protocol", offered)
            ]),
            t
        ));
        assert!(
            !token_matches(&headers(&[("sec-websocket-protocol", offered)]), t),
            "only in a WebSocket handshake"
        );
        assert!(!token_matches(
            &headers(&[
                ("upgrade", "websocket"),
                ("sec-websocket-protocol", "openai-insecure-api-key.secret")
            ]),
            t
        ));
    }
}
