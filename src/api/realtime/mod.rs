//! `GET /v1/realtime?intent=transcription`: OpenAI's Realtime API for transcription sessions
//! over a WebSocket. Before the upgrade, every route's checks apply (Host allowlist; an
//! `Origin` other than the server's own is 403, which matters here as WebSockets are not
//! covered by CORS; the token as a header or, for browsers, the subprotocol
//! `openai-insecure-api-key.<token>`); another `intent` or a request that is no WebSocket handshake is 400. The session itself is
//! [`connection`]'s; its events' JSON is [`events`]'.

mod connection;

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::http::{HeaderValue, Uri};
use axum::response::Response;
use axum::routing::get;

use super::ApiError;
use super::query::Query;
use crate::app::App;
use crate::realtime::MAX_MESSAGE_BYTES;

/// The subprotocol OpenAI's browser clients name besides the one carrying the token.
const REALTIME_PROTOCOL: &str = "realtime";

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/v1/realtime", get(upgrade))
}

async fn upgrade(
    State(app): State<Arc<App>>,
    uri: Uri,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    match Query::of(&uri).get("intent") {
        None | Some("transcription") => {}
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "Verbatim serves transcription sessions only: connect with ?intent=transcription (not '{}')",
                crate::wire::echo(other)
            )));
        }
    }
    let mut ws = ws.map_err(|rejection| {
        ApiError::BadRequest(format!(
            "GET /v1/realtime opens a WebSocket: send a WebSocket handshake (Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Version: 13, Sec-WebSocket-Key) ({rejection})"
        ))
    })?;
    if let Some(protocol) = chosen_protocol(ws.requested_protocols()) {
        ws.set_selected_protocol(protocol);
    }
    let permit = app.realtime_sessions.clone().try_acquire_owned().ok();
    Ok(ws
        .max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| connection::serve(app, socket, permit)))
}

/// The subprotocol answered: `realtime` when offered, else the token's own (a browser fails a
/// handshake whose answer names none of the subprotocols it offered).
fn chosen_protocol<'a>(offered: impl Iterator<Item = &'a HeaderValue>) -> Option<HeaderValue> {
    let offered: Vec<&HeaderValue> = offered.collect();
    offered
        .iter()
        .find(|p| p.as_bytes() == REALTIME_PROTOCOL.as_bytes())
        .or_else(|| {
            offered.iter().find(|p| {
                p.as_bytes()
                    .starts_with(super::security::TOKEN_PROTOCOL.as_bytes())
            })
        })
        .map(|p| (*p).clone())
}
