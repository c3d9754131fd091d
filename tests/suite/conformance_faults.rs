//! The conformance kit catches planted faults: a small proxy in front of a real sim server
//! changes exactly one thing per variant, and the kit must report exactly the checks of that
//! contract point as failed. Through the proxy with no fault, nothing fails.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use common::{SpawnedServer, verbatim};
use serde_json::Value;
use verbatim::conformance::http::{Response, parse};

/// What the proxy changes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// `/v1/status` without `api_version`.
    DropApiVersion,
    /// An unknown route (GET) answered 400 instead of 404.
    UnknownRoute400,
    /// `/v1/dictation/status` with `"active_workflow": null` instead of omitting it.
    NullField,
    /// `Access-Control-Allow-Origin: *` on every answer.
    CorsHeader,
    /// A request for a foreign `Host` forwarded as one for the server's own (answered 200).
    ForeignHostAccepted,
    /// Errors without `Cache-Control: no-store`.
    CacheableErrors,
    /// `limit=1000` on the history not clamped in the answer.
    LimitNotClamped,
    /// 413s of the 1 MiB JSON routes name the 256 MiB limit.
    WrongLimitMessage,
    /// Every dictation and Recorder session that completed is reported `failed`.
    SessionsFail,
}

/// Starts the proxy on an ephemeral port in front of `upstream`; runs until the test ends.
fn proxy(upstream: u16, fault: Fault) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = relay(client, port, upstream, fault);
            });
        }
    });
    port
}

/// One connection: the request head (its Host mapped to the server), the rest piped as it
/// comes, and the whole answer (the kit always says `Connection: close`), maybe rewritten; an
/// event stream's answer and a realtime session are piped as they come.
fn relay(mut client: TcpStream, own: u16, upstream: u16, fault: Fault) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let head = map_host(&head, own, upstream, fault);
    let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
    server.write_all(head.as_bytes())?;
    let (mut from_client, mut to_server) = (client.try_clone()?, server.try_clone()?);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_server);
    });
    // A live event stream and a realtime session never end by themselves: they are piped
    // through as they come, unchanged.
    let request_line = head.lines().next().unwrap_or_default();
    if request_line
        .split(' ')
        .nth(1)
        .is_some_and(|p| p.ends_with("/events") || p.starts_with("/v1/realtime"))
    {
        std::io::copy(&mut server, &mut client)?;
        return client.shutdown(std::net::Shutdown::Both);
    }
    let mut answer = Vec::new();
    let _ = server.read_to_end(&mut answer);
    let answer = rewrite(&head, answer, fault);
    client.write_all(&answer)?;
    client.shutdown(std::net::Shutdown::Both)
}

/// The kit addresses the proxy's port: a Host naming it is sent on naming the server's, and so
/// is an Origin of the proxy's own (the server's own origin, seen through the proxy). With
/// [`Fault::ForeignHostAccepted`], any other Host is too.
fn map_host(head: &str, own: u16, upstream: u16, fault: Fault) -> String {
    head.split("\r\n")
        .map(|line| match line.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("origin") => {
                match value.trim().rsplit_once(':') {
                    Some((site, port)) if port == own.to_string() => {
                        format!("Origin: {site}:{upstream}")
                    }
                    _ => line.to_string(),
                }
            }
            Some((name, value)) if name.eq_ignore_ascii_case("host") => {
                let value = value.trim();
                match value.rsplit_once(':') {
                    Some((host, port))
                        if port == own.to_string()
                            && ["127.0.0.1", "localhost", "[::1]"]
                                .contains(&host.to_ascii_lowercase().as_str()) =>
                    {
                        format!("Host: {host}:{upstream}")
                    }
                    _ if fault == Fault::ForeignHostAccepted => {
                        format!("Host: 127.0.0.1:{upstream}")
                    }
                    _ => line.to_string(),
                }
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\r\n")
}

fn rewrite(head: &str, raw: Vec<u8>, fault: Fault) -> Vec<u8> {
    let request_line = head.lines().next().unwrap_or_default().to_string();
    let is_head = request_line.starts_with("HEAD ");
    let Ok(mut response) = parse(&raw, is_head) else {
        return raw;
    };
    let path = request_line.split(' ').nth(1).unwrap_or_default();
    let json = || serde_json::from_slice::<Value>(&response.body).ok();
    let changed = match fault {
        Fault::None | Fault::ForeignHostAccepted => false,
        Fault::DropApiVersion if path == "/v1/status" && !is_head => {
            let mut status = json().unwrap();
            status.as_object_mut().unwrap().remove("api_version");
            response.body = status.to_string().into_bytes();
            true
        }
        Fault::UnknownRoute400
            if request_line.starts_with("GET ")
                && response.status == 404
                && response.text().contains("Not found: GET") =>
        {
            response.status = 400;
            true
        }
        Fault::NullField if path == "/v1/dictation/status" && !is_head => {
            let mut status = json().unwrap();
            status
                .as_object_mut()
                .unwrap()
                .entry("active_workflow")
                .or_insert(Value::Null);
            response.body = status.to_string().into_bytes();
            true
        }
        Fault::CorsHeader => {
            response
                .headers
                .push(("access-control-allow-origin".into(), "*".into()));
            true
        }
        Fault::CacheableErrors if response.status >= 400 => {
            response.headers.retain(|(name, _)| name != "cache-control");
            true
        }
        Fault::LimitNotClamped if path.starts_with("/v1/history?limit=1000") => {
            let mut page = json().unwrap();
            page["limit"] = 1000.into();
            response.body = page.to_string().into_bytes();
            true
        }
        Fault::SessionsFail
            if (path.starts_with("/v1/dictation/transcription")
                || path.starts_with("/v1/recorder/session"))
                && json().is_some_and(|j| j["status"] == "completed") =>
        {
            let mut session = json().unwrap();
            session["status"] = "failed".into();
            session["error"] = "Planted: the session failed".into();
            response.body = session.to_string().into_bytes();
            true
        }
        Fault::WrongLimitMessage
            if response.status == 413 && response.text().contains(" 1 MiB.") =>
        {
            response.body = response.text().replace(" 1 MiB.", " 256 MiB.").into_bytes();
            true
        }
        _ => false,
    };
    if changed {
        serialize(&response, is_head)
    } else {
        raw
    }
}

fn serialize(response: &Response, is_head: bool) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {} Planted\r\n", response.status);
    for (name, value) in &response.headers {
        let framing = name == "transfer-encoding" || name == "content-length";
        if !framing || (is_head && name == "content-length") {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    if !is_head {
        out.push_str(&format!("content-length: {}\r\n", response.body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&response.body);
    bytes
}

/// Runs the kit (read-only, JSON report) against the proxy; the ids of the failed checks.
fn failed_checks(home: &Path, port: u16) -> Vec<String> {
    failed_checks_with(home, port, &[])
}

/// [`failed_checks`] with more of the kit's options (`--allow-audio`, say).
fn failed_checks_with(home: &Path, port: u16, options: &[&str]) -> Vec<String> {
    let out = verbatim(&home.join("client"))
        .args(["conformance", "--format", "json", "--url"])
        .arg(format!("http://127.0.0.1:{port}"))
        .args(options)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let failed: Vec<String> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "fail")
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let expected_code = if failed.is_empty() { 0 } else { 4 };
    assert_eq!(out.status.code(), Some(expected_code), "{failed:?}");
    failed
}

#[test]
fn every_planted_fault_fails_exactly_its_checks() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let upstream = server.discovery.port;
    let cases: &[(Fault, &[&str])] = &[
        (Fault::None, &[]),
        (Fault::DropApiVersion, &["status.api-version"]),
        (Fault::UnknownRoute400, &["wire.unknown-route"]),
        (Fault::NullField, &["wire.no-null"]),
        (Fault::CorsHeader, &["security.no-cors"]),
        (
            Fault::ForeignHostAccepted,
            &[
                "security.host-foreign",
                "security.host-wrong-port",
                "security.host-on-writes",
            ],
        ),
        (Fault::CacheableErrors, &["security.no-store"]),
        (Fault::LimitNotClamped, &["history.limit-max"]),
        (
            Fault::WrongLimitMessage,
            &["limits.json", "limits.local-file-json", "limits.chunked"],
        ),
    ];
    let mut wrong = Vec::new();
    for &(fault, expected) in cases {
        let failed = failed_checks(home.path(), proxy(upstream, fault));
        if failed != expected {
            wrong.push(format!(
                "{fault:?}: expected {expected:?}, the kit failed {failed:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A server whose dictation and Recorder sessions always end `failed` fails the kit's session
/// checks (run with audio); the same server unchanged passes them.
#[test]
fn sessions_that_always_fail_fail_the_kit() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let upstream = server.discovery.port;
    let options = ["--allow-writes", "--allow-audio"];
    let passing = failed_checks_with(home.path(), proxy(upstream, Fault::None), &options);
    assert_eq!(passing, Vec::<String>::new());
    let failed = failed_checks_with(home.path(), proxy(upstream, Fault::SessionsFail), &options);
    for check in [
        "dictation.result",
        "dictation.history-entry",
        "recorder.session",
        "recorder.output-file",
    ] {
        assert!(
            failed.iter().any(|f| f == check),
            "{check} passed: {failed:?}"
        );
    }
}
