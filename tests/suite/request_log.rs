//! The request log of `verbatim serve` and the `X-Request-Id` of every answer: one line per
//! request with method, path, status, latency, id and size, in text or JSON, and never a token or
//! a search.

use crate::common;

use std::io::{Read, Write};

use common::{SpawnedServer, raw_http};
use serde_json::Value;

const TOKEN_SECRET: &str = "not-the-token-but-still-secret";
const SEARCH_SECRET: &str = "my-diary-entry";

fn request(port: u16, method: &str, target: &str, extra: &str) -> (u16, String) {
    let (status, head, _) = raw_http(
        port,
        &format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{extra}\r\n"
        ),
    );
    (status, head)
}

fn request_id(head: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case("x-request-id")
            .then(|| value.trim().to_string())
    })
}

/// Requests of every kind, each answered with a request id; returns (id, method, status) per request.
fn exercise(port: u16) -> Vec<(String, &'static str, u16)> {
    let secrets =
        format!("Authorization: Bearer {TOKEN_SECRET}\r\nX-Verbatim-API-Token: {TOKEN_SECRET}\r\n");
    let cases: Vec<(&str, String, String)> = vec![
        ("GET", "/v1/status".into(), String::new()),
        (
            "GET",
            format!("/v1/history?q={SEARCH_SECRET}&limit=2"),
            secrets.clone(),
        ),
        (
            "GET",
            "/v1/models".into(),
            "X-Request-Id: build-42.step_7\r\n".into(),
        ),
        (
            "GET",
            "/v1/models".into(),
            "X-Request-Id: two words\r\n".into(),
        ),
        ("GET", "/v1/nowhere".into(), String::new()),
        ("OPTIONS", "/v1/status".into(), String::new()),
        (
            "GET",
            "/v1/models".into(),
            "Origin: https://evil.example\r\n".into(),
        ),
    ];
    let mut seen = Vec::new();
    for (method, target, extra) in cases {
        let (status, head) = request(port, method, &target, &extra);
        let id = request_id(&head).unwrap_or_else(|| panic!("{method} {target}: no id in {head}"));
        if extra.contains("build-42") {
            assert_eq!(id, "build-42.step_7", "a plain client id is echoed");
        } else {
            assert!(uuid::Uuid::parse_str(&id).is_ok(), "{target}: {id}");
        }
        seen.push((id, method, status));
    }
    let statuses: Vec<u16> = seen.iter().map(|s| s.2).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 404, 204, 403]);
    seen
}

#[test]
fn every_request_has_one_json_log_line_and_no_secret_is_logged() {
    let home = tempfile::tempdir().unwrap();
    let mut server = SpawnedServer::start(home.path(), &["--sim", "--log-format", "json"]);
    let seen = exercise(server.discovery.port);
    server.signal(libc::SIGTERM);
    server.wait_exit();
    let log = server.stderr();
    assert!(!log.contains(TOKEN_SECRET), "{log}");
    assert!(!log.contains(SEARCH_SECRET), "{log}");
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let answered: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"] == "answered")
        .collect();
    assert_eq!(answered.len(), seen.len(), "{log}");
    for (id, method, status) in &seen {
        let line = answered
            .iter()
            .find(|l| l["span"]["id"] == id.as_str())
            .unwrap_or_else(|| panic!("no line for {id}: {log}"));
        assert_eq!(line["span"]["method"], *method);
        assert_eq!(line["status"], *status);
        assert!(line["latency_ms"].as_f64().unwrap() >= 0.0);
        assert!(line["bytes"].is_u64() || line["streamed"] == true, "{line}");
        assert!(line["span"]["path"].as_str().unwrap().starts_with("/v1/"));
    }
    let history = answered
        .iter()
        .find(|l| {
            l["span"]["path"]
                .as_str()
                .unwrap()
                .starts_with("/v1/history")
        })
        .unwrap();
    assert_eq!(history["span"]["path"], "/v1/history?q=…&limit=2");
}

#[test]
fn the_text_log_names_method_path_status_and_id() {
    let home = tempfile::tempdir().unwrap();
    let mut server = SpawnedServer::start(home.path(), &["--sim"]);
    let port = server.discovery.port;
    let (status, head) = request(port, "GET", "/v1/status", "X-Request-Id: trace-me\r\n");
    assert_eq!(
        (status, request_id(&head).as_deref()),
        (200, Some("trace-me"))
    );
    server.signal(libc::SIGTERM);
    server.wait_exit();
    let log = server.stderr();
    let line = log
        .lines()
        .find(|l| l.contains("id=trace-me"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("method=GET path=/v1/status"), "{line}");
    assert!(line.contains("status=200"), "{line}");
    assert!(line.contains("bytes="), "{line}");
    assert!(
        !line.contains('\u{1b}'),
        "no colours off a terminal: {line}"
    );
}

/// `GET path` with `extra` header lines: (status, head).
fn get(port: u16, path: &str, extra: &str) -> (u16, String) {
    request(port, "GET", path, extra)
}

/// The value of header `name` in a response head.
fn header_value(head: &str, name: &str) -> String {
    head.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no {name} in {head}"))
}

/// With everything logged (`RUST_LOG=trace`), a session that used every secret a client can
/// send — the token as `Authorization`, as `X-Verbatim-API-Token` and as a WebSocket
/// subprotocol, a sign-in code, the page's cookie and session secret, and sign-out — leaves
/// none of them in the log.
#[test]
fn no_secret_a_client_sends_reaches_the_log_at_any_level() {
    let home = tempfile::tempdir().unwrap();
    let mut server = SpawnedServer::start_with_env(
        home.path(),
        &["--sim", "--require-token"],
        &[("RUST_LOG", std::path::Path::new("trace"))],
    );
    let port = server.discovery.port;
    let token = server.discovery.token.clone();
    let (status, _) = get(
        port,
        "/v1/history",
        &format!("Authorization: Bearer {token}\r\n"),
    );
    assert_eq!(status, 200);
    let (status, _) = get(
        port,
        "/v1/models",
        &format!("X-Verbatim-API-Token: {token}\r\n"),
    );
    assert_eq!(status, 200);
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        socket,
        "GET /v1/realtime?intent=transcription HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: realtime, openai-insecure-api-key.{token}\r\n\r\n"
    )
    .unwrap();
    let mut answer = [0u8; 256];
    let n = socket.read(&mut answer).unwrap();
    assert_eq!(common::parse_response(&answer[..n]).0, 101);
    drop(socket);

    let out = common::verbatim(home.path())
        .args(["open", "--print-url"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let link = String::from_utf8(out.stdout).unwrap();
    let code = link.trim().rsplit_once("code=").unwrap().1.to_owned();
    let (status, head) = get(port, &format!("/login?code={code}"), "");
    assert_eq!(status, 303, "{head}");
    let cookie = header_value(&head, "set-cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let secret = header_value(&head, "location")
        .strip_prefix("/#session=")
        .unwrap()
        .to_owned();
    let signed_in = format!("Cookie: {cookie}\r\nX-Verbatim-Session: {secret}\r\n");
    let (status, _) = get(port, "/v1/history", &signed_in);
    assert_eq!(status, 200);
    let (status, _) = request(port, "POST", "/page/sign-out", &signed_in);
    assert_eq!(status, 200);

    server.signal(libc::SIGTERM);
    server.wait_exit();
    let log = server.stderr();
    assert!(
        log.contains("/login?code=…"),
        "the sign-in is logged, its code is not"
    );
    let cookie_value = cookie.split_once('=').unwrap().1;
    for (what, secret) in [
        ("the token", token.as_str()),
        ("the sign-in code", code.as_str()),
        ("the session cookie", cookie_value),
        ("the session secret", secret.as_str()),
    ] {
        assert!(!log.contains(secret), "{what} is in the log");
    }
}
