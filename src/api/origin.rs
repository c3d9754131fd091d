//! Who may address the server: the Host allowlist (against DNS rebinding) and the one origin
//! it trusts, its own. This is the single rule every route applies (the API, the page and its
//! sign-in link, event streams and the Realtime handshake), with the token off or on.
//!
//! A browser tells where a request comes from in `Origin` (sent on every POST, every
//! cross-origin request, every WebSocket handshake) and `Sec-Fetch-Site`. Only
//! `http://` + an allowlisted host name + this server's port is this server's own origin: a
//! page served by another local port (a dev server, a notebook) is a stranger like any other
//! site. A request without `Origin` that the browser marks `same-site` or `cross-site` is
//! refused where it could change something (every method but GET and HEAD), and everywhere
//! when `cross-site`. Programs that send neither header (curl, the CLI, SDKs) are unaffected.

use axum::http::{HeaderMap, Method, header};

/// The host names a request may address the server by (with its port).
const HOST_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// `Host` must be `127.0.0.1:P`, `localhost:P` or `[::1]:P`, any case.
pub fn host_allowed(headers: &HeaderMap, port: u16) -> bool {
    let mut hosts = headers.get_all(header::HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return false;
    };
    host.to_str()
        .is_ok_and(|host| names_this_server(&host.to_ascii_lowercase(), port))
}

/// `authority` (lower case) is an allowlisted name with `port`.
fn names_this_server(authority: &str, port: u16) -> bool {
    HOST_NAMES
        .iter()
        .any(|name| authority == format!("{name}:{port}"))
}

/// `origin` is the server's own: `http://`, an allowlisted name and the server's `port`.
pub fn is_own_origin(origin: &str, port: u16) -> bool {
    origin
        .to_ascii_lowercase()
        .strip_prefix("http://")
        .is_some_and(|authority| names_this_server(authority, port))
}

/// Whether a request with `method` and `headers`, sent to a server on `port`, comes from this
/// server's own page or from a program rather than from another origin: every `Origin` it
/// carries is the server's own, and without one the browser does not say it comes from
/// another site (`cross-site` anywhere, `same-site` on a method that can change state).
pub fn from_own_origin(method: &Method, headers: &HeaderMap, port: u16) -> bool {
    let mut origins = headers.get_all(header::ORIGIN).iter().peekable();
    if origins.peek().is_some() {
        return origins.all(|origin| origin.to_str().is_ok_and(|o| is_own_origin(o, port)));
    }
    let fetch_sites: Vec<&[u8]> = headers
        .get_all("sec-fetch-site")
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    let said = |site: &[u8]| fetch_sites.iter().any(|v| v.eq_ignore_ascii_case(site));
    let reads_only = matches!(*method, Method::GET | Method::HEAD);
    !(said(b"cross-site") || (said(b"same-site") && !reads_only))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::api::test_headers as headers;

    #[test]
    fn host_must_name_loopback_and_the_port() {
        for ok in ["127.0.0.1:8978", "LOCALHOST:8978", "[::1]:8978"] {
            assert!(host_allowed(&headers(&[("host", ok)]), 8978), "{ok}");
        }
        for bad in [
            "127.0.0.1:8979",
            "127.0.0.1",
            "localhost.evil.example:8978",
            "127.0.0.1.nip.io:8978",
            "evil.example:8978",
            "",
        ] {
            assert!(!host_allowed(&headers(&[("host", bad)]), 8978), "{bad}");
        }
        assert!(!host_allowed(&HeaderMap::new(), 8978));
        assert!(!host_allowed(
            &headers(&[("host", "127.0.0.1:8978"), ("host", "evil.example:8978")]),
            8978
        ));
    }

    #[test]
    fn only_the_servers_own_origin_is_its_own() {
        for own in [
            "http://127.0.0.1:8978",
            "http://localhost:8978",
            "HTTP://[::1]:8978",
        ] {
            assert!(is_own_origin(own, 8978), "{own}");
        }
        for other in [
            "http://127.0.0.1:8979",
            "http://localhost:3000",
            "http://localhost",
            "http://[::1]",
            "https://localhost:8978",
            "http://localhost:8978/",
            "http://evil.example:8978",
            "http://localhost.evil.example:8978",
            "null",
            "",
        ] {
            assert!(!is_own_origin(other, 8978), "{other}");
        }
    }

    #[test]
    fn other_local_origins_are_strangers_on_every_method() {
        for method in [Method::GET, Method::POST, Method::PUT, Method::OPTIONS] {
            for origin in [
                "http://127.0.0.1:3000",
                "http://localhost:8888",
                "https://127.0.0.1:8978",
                "null",
                "https://evil.example",
            ] {
                let sent = headers(&[("origin", origin)]);
                assert!(!from_own_origin(&method, &sent, 8978), "{method} {origin}");
            }
            let own = headers(&[("origin", "http://localhost:8978")]);
            assert!(from_own_origin(&method, &own, 8978), "{method}");
            let mixed = headers(&[
                ("origin", "http://localhost:8978"),
                ("origin", "http://localhost:3000"),
            ]);
            assert!(!from_own_origin(&method, &mixed, 8978), "{method}");
            // Programs send neither header.
            assert!(from_own_origin(&method, &HeaderMap::new(), 8978));
        }
    }

    #[test]
    fn without_an_origin_the_browsers_fetch_site_decides() {
        let site = |value: &str| headers(&[("sec-fetch-site", value)]);
        for method in [Method::GET, Method::HEAD, Method::POST, Method::DELETE] {
            assert!(!from_own_origin(&method, &site("cross-site"), 8978));
            assert!(from_own_origin(&method, &site("same-origin"), 8978));
            assert!(from_own_origin(&method, &site("none"), 8978));
        }
        // A link or image from another local port reads; it never changes anything.
        assert!(from_own_origin(&Method::GET, &site("same-site"), 8978));
        assert!(from_own_origin(&Method::HEAD, &site("Same-Site"), 8978));
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
            assert!(
                !from_own_origin(&method, &site("same-site"), 8978),
                "{method}"
            );
        }
    }
}
