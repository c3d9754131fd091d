//! A signed-in browser, for the page when the API needs a token.
//!
//! Browsers send a cookie for 127.0.0.1 or localhost to every port of that host, so another
//! local server the person visits receives it: a cookie alone must never sign anyone in. The
//! one-time link (`/login?code=`) therefore opens a session of two halves: an HttpOnly,
//! SameSite=Strict cookie, and a secret handed to the page in the redirect's fragment (which
//! browsers never send to any server), kept in the page origin's own storage and sent by the
//! page's script as the [`SESSION_HEADER`]. Only both together, from this server's own origin,
//! count. Another origin can read neither the storage nor, without CORS (never granted), set
//! the header; what it receives (the cookie) is useless alone.

use axum::http::{HeaderMap, header};

/// The cookie half of a browser session (set by `/login`).
pub const SESSION_COOKIE: &str = "verbatim_session";
/// The header carrying the secret half, which the page keeps in its origin's storage.
pub const SESSION_HEADER: &str = "x-verbatim-session";
/// The fragment of the redirect after sign-in that hands the page its secret: `/#session=S`.
pub const FRAGMENT_PREFIX: &str = "session=";

/// The value of the [`SESSION_COOKIE`] in `headers`, if any.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
}

/// The value of the [`SESSION_HEADER`], when sent exactly once.
fn secret(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(SESSION_HEADER).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => value.to_str().ok().map(str::trim),
        _ => None,
    }
}

/// The key a session is stored under: both halves, so that neither alone finds it.
pub fn key(cookie: &str, secret: &str) -> String {
    format!("{cookie}:{secret}")
}

/// The session key a request presents: both halves, non-empty; None when either is missing.
pub fn presented(headers: &HeaderMap) -> Option<String> {
    let (cookie, secret) = (cookie(headers)?, secret(headers)?);
    (!cookie.is_empty() && !secret.is_empty()).then(|| key(cookie, secret))
}

/// The `Set-Cookie` value that gives a browser the cookie half, for `lifetime_secs`.
pub fn set_cookie(value: &str, lifetime_secs: i64) -> String {
    format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={lifetime_secs}")
}

/// The `Set-Cookie` value that removes the cookie half (signing out).
pub fn clear_cookie() -> String {
    set_cookie("", 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::api::test_headers as headers;

    #[test]
    fn a_session_is_presented_only_with_both_halves() {
        let both = headers(&[
            ("cookie", "theme=dark; verbatim_session=c00kie"),
            (SESSION_HEADER, "s3cret"),
        ]);
        assert_eq!(presented(&both), Some(key("c00kie", "s3cret")));
        for partial in [
            headers(&[("cookie", "verbatim_session=c00kie")]),
            headers(&[(SESSION_HEADER, "s3cret")]),
            headers(&[("cookie", "verbatim_session="), (SESSION_HEADER, "s3cret")]),
            headers(&[("cookie", "verbatim_session=c00kie"), (SESSION_HEADER, "")]),
            headers(&[
                ("cookie", "verbatim_session=c00kie"),
                (SESSION_HEADER, "s3cret"),
                (SESSION_HEADER, "s3cret"),
            ]),
        ] {
            assert_eq!(presented(&partial), None, "{partial:?}");
        }
    }

    #[test]
    fn the_cookie_is_http_only_and_strict_and_can_be_cleared() {
        let set = set_cookie("v", 60);
        for wanted in [
            "verbatim_session=v",
            "Path=/",
            "HttpOnly",
            "SameSite=Strict",
            "Max-Age=60",
        ] {
            assert!(set.split("; ").any(|a| a == wanted), "{set}");
        }
        assert!(clear_cookie().contains("Max-Age=0"));
    }
}
