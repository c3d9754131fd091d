//! The request log of `verbatim serve` and the `X-Request-Id` of every answer: one line per
//! request with method, path, status, latency, id and size, in text or JSON, and never a token or
//! a search.

use crate::common;

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
