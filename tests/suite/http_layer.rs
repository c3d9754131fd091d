//! The wire rules of the contract's second wave, over real sockets: request heads the HTTP
//! layer refuses get the Error object, `HEAD` answers as `GET` without a body, a repeated query
//! key takes its last value, unknown query and JSON keys are ignored, and a chunked body over a
//! JSON route's limit is a 413 Error object.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{RunningServer, TestApp, parse_response, raw_http};
use serde_json::{Value, json};

/// Sends raw bytes (the server may answer before reading them all) and reads the answer.
fn exchange(port: u16, request: &[u8]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = stream.write_all(request);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn get(port: u16, method: &str, target: &str) -> (u16, String, String) {
    raw_http(
        port,
        &format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        ),
    )
}

fn send_json(port: u16, method: &str, target: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let (status, _, answer) = raw_http(
        port,
        &format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    (status, serde_json::from_str(&answer).unwrap())
}

/// Runs `checks` (blocking) against a sim-mode server on a real socket, given its port and the
/// path of a short silent WAV file.
async fn with_server(checks: impl FnOnce(u16, &str) + Send + 'static) {
    let t = TestApp::new();
    let server = RunningServer::start(|port| verbatim::api::router(t.app.clone(), port)).await;
    let port = server.port;
    let wav = tempfile::Builder::new().suffix(".wav").tempfile().unwrap();
    std::fs::write(wav.path(), common::wav_bytes(vec![0i16; 8000])).unwrap();
    let path = wav.path().to_str().unwrap().to_string();
    tokio::task::spawn_blocking(move || checks(port, &path))
        .await
        .unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_heads_the_http_layer_refuses_are_error_objects() {
    with_server(|port, _| {
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let many_headers: String = (0..150).map(|i| format!("X-Extra-{i}: 1\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("head_not_http", b"GARBAGE\r\n\r\n".to_vec()),
        (
            "head_bad_header_line",
            format!("GET /v1/status HTTP/1.1\r\n{host}No colon here\r\n\r\n").into_bytes(),
        ),
        (
            "head_too_many_headers",
            format!("GET /v1/status HTTP/1.1\r\n{host}{many_headers}\r\n").into_bytes(),
        ),
        (
            "head_uri_too_long",
            format!(
                "GET /v1/history?q={} HTTP/1.1\r\n{host}\r\n",
                "a".repeat(70_000)
            )
            .into_bytes(),
        ),
    ];
    let mut shown = Vec::new();
    for (name, request) in cases {
        let (status, head, body) = exchange(port, &request);
        assert_eq!(
            header(&head, "content-type"),
            Some("application/json"),
            "{name}: {head}"
        );
        assert_eq!(header(&head, "cache-control"), Some("no-store"), "{name}");
        assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
        let body: Value = serde_json::from_str(&body).unwrap();
        shown.push(json!({ "case": name, "status": status, "body": body }));
    }
    let statuses: Vec<_> = shown
        .iter()
        .map(|s| s["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [400, 400, 431, 414]);
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_json_snapshot!("http_layer_refused_heads", shown);
    });

    // The server goes on answering after each of them.
    assert_eq!(get(port, "GET", "/v1/status").0, 200);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_on_every_get_route_answers_as_get_without_a_body() {
    with_server(|port, _| {
        let unknown = "7C9E6679-7425-40DE-944B-E07FC1F90AE7";
        let routes = [
            ("/v1/status".to_string(), 200),
            ("/v1/models".into(), 200),
            ("/v1/history?limit=3".into(), 200),
            ("/v1/dictionary/terms".into(), 200),
            ("/v1/dictionary/corrections".into(), 200),
            ("/v1/rules".into(), 200),
            ("/v1/profiles".into(), 200),
            ("/v1/settings/export".into(), 200),
            ("/v1/dictation/status".into(), 200),
            (format!("/v1/dictation/transcription?id={unknown}"), 404),
            ("/v1/recorder/status".into(), 200),
            (format!("/v1/recorder/session?id={unknown}"), 404),
            ("/v1/nowhere".into(), 404),
        ];
        for (route, expected) in routes {
            let (get_status, get_head, get_body) = get(port, "GET", &route);
            let (head_status, head_head, head_body) = get(port, "HEAD", &route);
            assert_eq!(get_status, expected, "{route}: {get_body}");
            assert_eq!(head_status, get_status, "{route}");
            assert!(head_body.is_empty(), "{route}: HEAD sent a body");
            assert!(!get_body.is_empty(), "{route}");
            for name in ["content-type", "cache-control", "x-content-type-options"] {
                assert_eq!(
                    header(&head_head, name),
                    header(&get_head, name),
                    "{route}: {name}"
                );
            }
            // The export's `exportedAt` moves with the clock, and a 404 for an unknown route
            // names the method; every other body is the same.
            if route != "/v1/settings/export" && route != "/v1/nowhere" {
                assert_eq!(
                    header(&head_head, "content-length"),
                    Some(get_body.len().to_string().as_str()),
                    "{route}"
                );
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_query_key_takes_its_last_value_and_unknown_keys_are_ignored() {
    with_server(|port, path| {
        let (status, _, body) = get(port, "GET", "/v1/history?limit=1&limit=3&colour=blue");
        assert_eq!(status, 200);
        let page: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(page["limit"], 3);

        // The last `await_download` decides; an invalid earlier one does not matter.
        let body = json!({ "path": path });
        let (status, answer) = send_json(
            port,
            "POST",
            "/v1/transcribe/local-file?await_download=maybe&await_download=0&extra=1",
            &body,
        );
        assert_eq!(status, 200, "{answer}");
        let (status, answer) = send_json(
            port,
            "POST",
            "/v1/transcribe/local-file?await_download=0&await_download=maybe",
            &body,
        );
        assert_eq!(status, 400);
        assert_eq!(
            answer["error"]["message"],
            "Invalid 'await_download' query parameter 'maybe': use 1 or 0 (true or false)."
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_json_keys_are_ignored() {
    with_server(|port, path| {
        // Keys other implementations' clients send, and made-up ones.
        let extras = json!({ "await_download": true, "stream_id": 7, "nested": { "a": [1] } });
        let mut body = json!({ "path": path, "response_format": "verbose_json" });
        body.as_object_mut()
            .unwrap()
            .extend(extras.as_object().unwrap().clone());
        let (status, answer) = send_json(port, "POST", "/v1/transcribe/local-file", &body);
        assert_eq!(status, 200, "{answer}");
        assert!(answer["segments"].is_array());

        body["path"] = json!("/no/such/file.wav");
        let (status, answer) = send_json(port, "POST", "/v1/transcribe/local-file", &body);
        assert_eq!(
            (status, answer["error"]["message"].as_str()),
            (400, Some("File not found"))
        );

        let (status, answer) = send_json(
            port,
            "PUT",
            "/v1/dictionary/corrections",
            &json!({ "original": "teh", "replacement": "the", "source": "elsewhere" }),
        );
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["count"], 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_past_a_json_routes_limit_is_a_413_error_object() {
    with_server(|port, _| {
        let mut request = format!(
            "POST /v1/dictation/start HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        .into_bytes();
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..20 {
            request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            request.extend_from_slice(&chunk);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let (status, head, body) = exchange(port, &request);
        assert_eq!(status, 413, "{head}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            body,
            json!({ "error": {
                "code": "payload_too_large",
                "message": "Payload too large. Maximum request body size is 1 MiB."
            }})
        );
    })
    .await;
}
