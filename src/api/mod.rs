//! The `/v1/` HTTP API: `router(app, port)` builds every route with its middleware.
//!
//! Request order: request id and log -> security headers -> OpenAI error types (`/v1/audio/`
//! only) -> Host / Origin checks (403) -> `OPTIONS` (204) -> route match (404) -> token (401) ->
//! body size (413; too slow: 408) -> handler (panics become 500).

mod backup;
pub mod browser_session;
mod dictation;
mod dictionary;
pub mod error;
mod events;
mod history;
pub mod json;
pub mod limits;
mod openai;
pub mod origin;
pub mod page;
mod prompt_actions;
mod query;
mod realtime;
mod recorder;
pub mod request_log;
mod rules;
pub mod security;
mod status;
mod transcribe;
mod upload;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{get, post};
use tower_http::catch_panic::CatchPanicLayer;

pub use error::{ApiError, ApiErrorKind, HeadProblem};

use crate::app::App;

/// Every route of the API for an application listening on `port` (the Host check needs it).
pub fn router(app: Arc<App>, port: u16) -> Router {
    let protected = Router::new()
        .route("/v1/models", get(status::models))
        .route("/v1/transcribe", post(transcribe::upload))
        .route("/v1/transcribe/local-file", post(transcribe::local_file))
        .merge(history::routes())
        .merge(dictionary::routes())
        .merge(rules::routes())
        .merge(prompt_actions::routes())
        .merge(backup::routes())
        .merge(dictation::routes())
        .merge(recorder::routes())
        .merge(openai::routes())
        .merge(realtime::routes())
        .merge(page::api_routes())
        // Body sizes are `limits::body_limit`'s alone: axum's own 2 MB default is off.
        .layer(DefaultBodyLimit::disable())
        .route_layer(from_fn(limits::limit_body))
        .route_layer(from_fn_with_state(app.clone(), security::require_token));
    let public = Router::new()
        .route("/v1/status", get(status::status))
        .merge(page::routes());
    with_common_layers(protected.merge(public).with_state(app), port)
}

/// The layers every route shares: 404 for unknown routes and methods, panic capture,
/// `OPTIONS`, the local-web defences and the security headers.
pub fn with_common_layers(routes: Router, port: u16) -> Router {
    let routes = routes
        .fallback(route_not_found)
        .method_not_allowed_fallback(route_not_found);
    // Wrapped as one service so the layers see the finished response of every route.
    let layered = Router::new()
        .fallback_service(routes)
        .layer(CatchPanicLayer::custom(security::panic_response))
        .layer(from_fn(security::answer_options))
        .layer(from_fn_with_state(
            security::LocalOnly { port },
            security::local_only,
        ))
        .layer(from_fn(openai::typed_errors))
        .layer(from_fn(security::security_headers));
    request_log::with_request_log(layered)
}

/// Runs store work on a blocking thread, so a long transaction never holds up the
/// async workers that answer other requests.
pub(crate) async fn blocking<T, F>(app: &Arc<App>, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
{
    let app = app.clone();
    tokio::task::spawn_blocking(move || work(&app))
        .await
        .unwrap_or_else(|join| std::panic::resume_unwind(join.into_panic()))
}

async fn route_not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::RouteNotFound {
        method,
        path: uri.path().to_string(),
    }
}

/// A header map of `pairs` (repeated names kept), for the tests of the request checks.
#[cfg(test)]
pub(crate) fn test_headers(pairs: &[(&str, &str)]) -> axum::http::HeaderMap {
    let mut map = axum::http::HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            axum::http::HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}
