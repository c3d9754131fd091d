//! Authentication matrix, local-web defences, OPTIONS, unknown routes and response headers,
//! through the real router in process.

use crate::common;

use axum::body::Body;
use axum::http::StatusCode;
use common::{PORT, TestApp, request, send};
use verbatim::api::ApiError;
use verbatim::store::{PrefValue, preferences};

const PROTECTED: &str = "/v1/models";

/// A named case: the header to send and the status or error expected.
type AuthCase = (&'static str, Option<(&'static str, String)>, StatusCode);
type AttackCase = (&'static str, Vec<(&'static str, String)>, ApiError);

#[tokio::test]
async fn with_token_checking_off_every_route_is_open() {
    let t = TestApp::new();
    for path in ["/v1/status", PROTECTED] {
        let (status, _, _) = send(
            &t.router(),
            request("GET", path).body(Body::empty()).unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn with_token_checking_on_only_a_valid_token_opens_protected_routes() {
    let t = TestApp::requiring_token();
    let token = t.token();
    let router = t.router();
    let wrong_same_length: String = token
        .chars()
        .map(|c| if c == 'A' { 'B' } else { 'A' })
        .collect();
    let prefix = &token[..token.len() - 1];
    let cases: Vec<AuthCase> = vec![
        ("missing", None, StatusCode::UNAUTHORIZED),
        (
            "wrong, same length",
            Some(("authorization", format!("Bearer {wrong_same_length}"))),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "prefix of the token",
            Some(("authorization", format!("Bearer {prefix}"))),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "token plus a character",
            Some(("authorization", format!("Bearer {token}x"))),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "token without scheme",
            Some(("authorization", token.clone())),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "Bearer",
            Some(("authorization", format!("Bearer {token}"))),
            StatusCode::OK,
        ),
        (
            "lowercase bearer",
            Some(("authorization", format!("bearer {token}"))),
            StatusCode::OK,
        ),
        (
            "header form",
            Some(("x-verbatim-api-token", token.clone())),
            StatusCode::OK,
        ),
        (
            "header form, wrong",
            Some(("x-verbatim-api-token", wrong_same_length.clone())),
            StatusCode::UNAUTHORIZED,
        ),
    ];
    for (name, header, expected) in cases {
        let mut req = request("GET", PROTECTED);
        if let Some((key, value)) = header {
            req = req.header(key, value);
        }
        let (status, headers, body) = send(&router, req.body(Body::empty()).unwrap()).await;
        assert_eq!(status, expected, "{name}");
        if expected == StatusCode::UNAUTHORIZED {
            assert_eq!(
                body,
                serde_json::to_value(ApiError::Unauthorized.body()).unwrap(),
                "{name}"
            );
            assert_eq!(headers["www-authenticate"], "Bearer", "{name}");
        }
    }
    // Status is public either way.
    let (status, _, body) = send(
        &router,
        request("GET", "/v1/status").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["api_version"], "1.1");
}

#[tokio::test]
async fn the_preference_switches_token_checking_on_a_running_app() {
    let t = TestApp::new();
    let router = t.router();
    let get = || request("GET", PROTECTED).body(Body::empty()).unwrap();
    assert_eq!(send(&router, get()).await.0, StatusCode::OK);
    t.app
        .store
        .set_pref(
            &preferences::API_SERVER_REQUIRES_AUTHENTICATION,
            &PrefValue::Bool(true),
        )
        .unwrap();
    assert_eq!(send(&router, get()).await.0, StatusCode::UNAUTHORIZED);
    // A rotated token applies at once, and the old one stops working.
    let old = t.token();
    let new = verbatim::discovery::rotate_token(&t.app.data_dir, &t.app.store).unwrap();
    let with = |token: &str| {
        request("GET", PROTECTED)
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(send(&router, with(&old)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(send(&router, with(&new)).await.0, StatusCode::OK);
}

#[tokio::test]
async fn requests_from_other_hosts_or_web_pages_get_403_on_every_method() {
    let t = TestApp::requiring_token();
    let token = t.token();
    let router = t.router();
    let host = |h: &str| ("host", h.to_string());
    let attacks: Vec<AttackCase> = vec![
        (
            "evil host",
            vec![host("evil.example:8978")],
            ApiError::HostNotAllowed { port: 8978 },
        ),
        (
            "localhost subdomain",
            vec![host("localhost.evil.example:8978")],
            ApiError::HostNotAllowed { port: 8978 },
        ),
        (
            "rebinding name",
            vec![host("127.0.0.1.nip.io:8978")],
            ApiError::HostNotAllowed { port: 8978 },
        ),
        (
            "empty host",
            vec![host("")],
            ApiError::HostNotAllowed { port: 8978 },
        ),
        (
            "other port",
            vec![host("127.0.0.1:1")],
            ApiError::HostNotAllowed { port: 8978 },
        ),
        (
            "foreign origin",
            vec![
                host("127.0.0.1:8978"),
                ("origin", "https://evil.example".into()),
            ],
            ApiError::CrossOrigin,
        ),
        (
            "null origin",
            vec![host("localhost:8978"), ("origin", "null".into())],
            ApiError::CrossOrigin,
        ),
        (
            "cross-site fetch",
            vec![host("[::1]:8978"), ("sec-fetch-site", "cross-site".into())],
            ApiError::CrossOrigin,
        ),
    ];
    for (name, headers, expected) in attacks {
        for method in ["GET", "POST", "PUT", "DELETE", "OPTIONS"] {
            for path in ["/v1/status", PROTECTED, "/v1/unknown"] {
                let mut req = axum::http::Request::builder()
                    .method(method)
                    .uri(path)
                    .header("authorization", format!("Bearer {token}"));
                for (k, v) in &headers {
                    req = req.header(*k, v.as_str());
                }
                let (status, _, body) = send(&router, req.body(Body::empty()).unwrap()).await;
                assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {method} {path}");
                assert_eq!(
                    body,
                    serde_json::to_value(expected.body()).unwrap(),
                    "{name}"
                );
            }
        }
    }
    // Nothing changed: the token is the same and the app still answers local requests.
    assert_eq!(t.token(), token);
    let (status, _, _) = send(
        &router,
        request("GET", "/v1/status").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_request_without_host_is_refused() {
    let t = TestApp::new();
    let req = axum::http::Request::builder()
        .uri("/v1/status")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&t.router(), req).await.0, StatusCode::FORBIDDEN);
}

/// Only the server's own origin may appear in `Origin`: a page served by another local port is
/// a stranger on every route (the page, its sign-in link and assets included), token off or
/// on. Without `Origin`, `Sec-Fetch-Site: same-site` may read but never change anything.
#[tokio::test]
async fn only_the_servers_own_origin_gets_in() {
    for app in [TestApp::new(), TestApp::requiring_token()] {
        let router = app.router();
        let bearer = format!("Bearer {}", app.token());
        let answer = |method: &str, path: &str, headers: &[(&str, String)]| {
            let mut req = request(method, path).header("authorization", bearer.as_str());
            for (name, value) in headers {
                req = req.header(*name, value.as_str());
            }
            let router = router.clone();
            let req = req.body(Body::empty()).unwrap();
            async move { send(&router, req).await }
        };
        for own in [
            format!("http://127.0.0.1:{PORT}"),
            format!("http://localhost:{PORT}"),
            format!("http://[::1]:{PORT}"),
        ] {
            let (status, _, _) = answer("GET", "/v1/status", &[("origin", own.clone())]).await;
            assert_eq!(status, StatusCode::OK, "{own}");
            let (status, _, _) = answer("POST", "/v1/dictation/stop", &[("origin", own)]).await;
            assert_ne!(status, StatusCode::FORBIDDEN);
        }
        for stranger in [
            format!("http://127.0.0.1:{}", PORT + 1),
            "http://localhost:3000".to_string(),
            "http://127.0.0.1".to_string(),
            format!("https://127.0.0.1:{PORT}"),
        ] {
            for (method, path) in [
                ("GET", "/v1/status"),
                ("GET", "/"),
                ("GET", "/login?code=x"),
                ("GET", "/assets/app.js"),
                ("GET", "/v1/dictation/events"),
                ("POST", "/v1/dictation/start"),
                ("POST", "/page/token/rotate"),
                ("PUT", "/v1/dictionary/terms"),
                ("OPTIONS", "/v1/transcribe"),
            ] {
                let (status, _, body) = answer(method, path, &[("origin", stranger.clone())]).await;
                assert_eq!(status, StatusCode::FORBIDDEN, "{stranger}: {method} {path}");
                assert_eq!(
                    body,
                    serde_json::to_value(ApiError::CrossOrigin.body()).unwrap()
                );
            }
        }
        // No Origin: what the browser says of the site decides.
        let same_site = || vec![("sec-fetch-site", "same-site".to_string())];
        let (status, _, _) = answer("GET", "/v1/status", &same_site()).await;
        assert_eq!(status, StatusCode::OK);
        for (method, path) in [
            ("POST", "/v1/dictation/start"),
            ("POST", "/page/sign-out"),
            ("PUT", "/v1/rules/toggle"),
            ("DELETE", "/v1/history"),
        ] {
            let (status, _, _) = answer(method, path, &same_site()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "same-site {method} {path}");
        }
        let (status, _, _) =
            answer("GET", "/", &[("sec-fetch-site", "cross-site".to_string())]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(
            app.app.dictation.status().await.state,
            "idle",
            "nothing a stranger sent started dictation"
        );
    }
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_are_404_before_the_token_check() {
    let t = TestApp::requiring_token();
    let router = t.router();
    for (method, path) in [
        ("GET", "/v1/nope"),
        ("POST", "/v1/status"),
        ("DELETE", PROTECTED),
        // `/` is the page (GET only); any other method is an unknown route.
        ("POST", "/"),
        ("GET", "/assets/missing.css"),
    ] {
        let (status, headers, body) =
            send(&router, request(method, path).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(body["error"]["code"], "not_found");
        assert_eq!(
            body["error"]["message"],
            format!("Not found: {method} {path}")
        );
        assert!(headers.get("allow").is_none());
    }
}

#[tokio::test]
async fn options_answers_204_without_cors_headers() {
    let t = TestApp::requiring_token();
    for path in ["/v1/status", PROTECTED, "/v1/anything/else"] {
        let req = request("OPTIONS", path)
            .header("access-control-request-method", "POST")
            .body(Body::empty())
            .unwrap();
        let (status, headers, body) = send(&t.router(), req).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{path}");
        assert_eq!(body, serde_json::Value::Null);
        assert!(
            headers
                .keys()
                .all(|k| !k.as_str().starts_with("access-control-")),
            "{headers:?}"
        );
    }
}

#[tokio::test]
async fn every_response_carries_the_security_headers_and_no_cors() {
    let t = TestApp::requiring_token();
    let requests = [
        request("GET", "/v1/status").body(Body::empty()).unwrap(),
        request("GET", PROTECTED).body(Body::empty()).unwrap(),
        request("GET", "/v1/nope").body(Body::empty()).unwrap(),
        request("GET", "/v1/status")
            .header("origin", "https://evil.example")
            .body(Body::empty())
            .unwrap(),
    ];
    for req in requests {
        let (status, headers, _) = send(&t.router(), req).await;
        assert_eq!(headers["cache-control"], "no-store", "{status}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{status}");
        assert!(
            headers
                .keys()
                .all(|k| !k.as_str().starts_with("access-control-"))
        );
    }
}

#[tokio::test]
async fn status_reports_no_model_and_the_api_version() {
    // Real backends, nothing selected and no weights installed.
    let models = tempfile::tempdir().unwrap();
    let t = TestApp::real(verbatim::engine::models::ModelDir::new(models.path()));
    let (status, headers, body) = send(
        &t.router(),
        request("GET", "/v1/status").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        body,
        serde_json::json!({
            "status": "no_model",
            "api_version": "1.1",
            "supports_workflow_dictation": true,
            "supports_streaming": false,
            "supports_translation": false,
        })
    );
    let (_, _, models) = send(
        &t.router(),
        request("GET", PROTECTED).body(Body::empty()).unwrap(),
    )
    .await;
    let listed = models["models"].as_array().unwrap();
    assert!(!listed.is_empty());
    assert!(
        listed
            .iter()
            .all(|m| m["status"] == "not_configured" && m["selected"] == false)
    );
}

#[tokio::test]
async fn web_pages_cannot_change_or_read_personal_data() {
    let t = TestApp::new();
    let router = t.router();
    let (status, _) = common::call(
        &router,
        "PUT",
        "/v1/dictionary/terms",
        Some(serde_json::json!({"terms": ["original"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let attacks = [
        (
            "PUT",
            "/v1/dictionary/terms",
            r#"{"terms":["pwned"],"replace":true}"#,
        ),
        ("DELETE", "/v1/dictionary/terms", r#"{"term":"original"}"#),
        (
            "PUT",
            "/v1/dictionary/corrections",
            r#"{"original":"a","replacement":"b"}"#,
        ),
        (
            "POST",
            "/v1/settings/import",
            r#"{"schemaVersion":1,"preferences":{"historyRetentionDays":1}}"#,
        ),
        ("GET", "/v1/settings/export", ""),
        ("GET", "/v1/history", ""),
    ];
    for (method, path, body) in attacks {
        for (header, value) in [
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ] {
            let req = request(method, path)
                .header("content-type", "application/json")
                .header(header, value)
                .body(Body::from(body))
                .unwrap();
            let (status, _, answer) = send(&router, req).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path} {header}");
            assert_eq!(
                answer,
                serde_json::to_value(ApiError::CrossOrigin.body()).unwrap()
            );
        }
    }
    let terms = t.app.store.enabled_terms().unwrap();
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0].term, "original");
    assert!(t.app.store.enabled_corrections().unwrap().is_empty());
    assert_eq!(
        t.app
            .store
            .pref_int(&preferences::HISTORY_RETENTION_DAYS)
            .unwrap(),
        0
    );
}

/// A client that sends a whole upload with a wrong token, then reads the answer (as the OpenAI
/// SDK does), gets the 401: the server reads the body it refuses rather than closing the
/// connection on unread bytes, which would reset it before the answer is read.
#[tokio::test]
async fn an_upload_with_a_wrong_token_is_answered_401_not_reset() {
    let t = TestApp::requiring_token();
    let server =
        common::RunningServer::start(|port| verbatim::api::router(t.app.clone(), port)).await;
    let port = server.port;
    let answers = tokio::task::spawn_blocking(move || {
        (0..3)
            .map(|_| {
                use std::io::{Read, Write};
                let body = vec![b'x'; 4 << 20];
                let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(20)))
                    .unwrap();
                let head = format!(
                    "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                     Authorization: Bearer wrong\r\nContent-Type: audio/wav\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let sent = stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(&body));
                let mut raw = Vec::new();
                let read = stream.read_to_end(&mut raw);
                (
                    sent.is_ok(),
                    read.is_ok(),
                    String::from_utf8_lossy(&raw).to_string(),
                )
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    server.stop().await;
    for (sent, read, raw) in answers {
        assert!(sent && read, "sent {sent}, read {read}: {raw}");
        assert!(raw.starts_with("HTTP/1.1 401"), "{raw}");
    }
}
