//! Verbatim's own page: `GET /` and its assets (all inside the binary, served under a strict
//! Content-Security-Policy) and the sign-in link `GET /login?code=` that `verbatim open` makes
//! when the API needs a token (`POST /page/sign-out` ends the session it opened). The page talks to the `/v1/` API like any other client, and to
//! the few routes of its own under `/page/` (models, settings, the token).

mod assets;
mod own;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

pub use assets::{ASSETS, Asset};

use super::browser_session;
use super::security::unix_now;
use super::{ApiError, blocking};
use crate::app::App;
use crate::store::sign_in::SESSION_LIFETIME_SECS;

/// The policy of every page response: nothing but the server's own scripts, styles, images
/// and connections; no inline script or style, no plugins, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page's own API routes under `/page/` (behind the token check, like `/v1/`).
pub fn api_routes() -> Router<Arc<App>> {
    own::routes()
}

/// The page's routes (public: the page holds no data; its API calls need the token or a
/// signed-in browser).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(|| async { page(&assets::INDEX) }))
        .route("/assets/{file}", get(asset))
        .route("/login", get(login))
}

async fn asset(Path(file): Path<String>) -> Response {
    match assets::find(&file) {
        Some(asset) => page(asset),
        None => ApiError::RouteNotFound {
            method: axum::http::Method::GET,
            path: format!("/assets/{file}"),
        }
        .into_response(),
    }
}

/// `asset` with the page's security headers.
fn page(asset: &Asset) -> Response {
    with_page_headers(
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            )],
            asset.body,
        )
            .into_response(),
    )
}

fn with_page_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[derive(Deserialize)]
struct LoginQuery {
    code: Option<String>,
}

/// Spends the one-time code: a valid one opens a browser session of two halves (see
/// `browser_session`): the cookie (HttpOnly, SameSite=Strict), and the secret in the fragment of
/// the redirect to `/`, which the page keeps in its own origin's storage. A used, late or
/// unknown code gets a page saying what to do.
async fn login(State(app): State<Arc<App>>, Query(query): Query<LoginQuery>) -> Response {
    let code = query.code.unwrap_or_default();
    let cookie = crate::discovery::generate_token();
    let secret = crate::discovery::generate_token();
    let session = browser_session::key(&cookie, &secret);
    let redeemed = blocking(&app, move |app| {
        Ok(app.store.redeem_sign_in_code(&code, &session, unix_now())?)
    })
    .await;
    match redeemed {
        Ok(true) => {
            let location = format!("/#{}{secret}", browser_session::FRAGMENT_PREFIX);
            let cookie = browser_session::set_cookie(&cookie, SESSION_LIFETIME_SECS);
            let mut response = StatusCode::SEE_OTHER.into_response();
            for (name, value) in [(header::LOCATION, location), (header::SET_COOKIE, cookie)] {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    response.headers_mut().insert(name, value);
                }
            }
            with_page_headers(response)
        }
        Ok(false) => with_page_headers(
            (
                StatusCode::UNAUTHORIZED,
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/html; charset=utf-8"),
                )],
                assets::LINK_SPENT.body,
            )
                .into_response(),
        ),
        Err(err) => err.into_response(),
    }
}
