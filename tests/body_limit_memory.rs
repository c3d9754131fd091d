//! A chunked body (no Content-Length) past 256 MiB sent to the real binary's settings import
//! is answered 413 while the server's memory stays bounded: the body is never held whole.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{SpawnedServer, parse_response};

/// Peak resident memory of `pid` in KiB (`VmHWM` in `/proc/<pid>/status`).
fn peak_memory_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

#[test]
fn a_chunked_body_past_256_mib_is_refused_with_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(tmp.path(), &[]);
    let port = server.discovery.port;
    let before = peak_memory_kib(server.pid());

    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut reader = stream.try_clone().unwrap();
    let answer = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let _ = reader.read_to_end(&mut raw);
        raw
    });
    write!(
        stream,
        "POST /v1/settings/import HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    // 257 MiB of a valid-looking JSON string, generated chunk by chunk: the client never
    // holds more than one chunk either.
    let chunk = vec![b'a'; 64 * 1024];
    let mut sent: u64 = 0;
    let mut write = |bytes: &[u8]| -> std::io::Result<()> {
        write!(stream, "{:x}\r\n", bytes.len())?;
        stream.write_all(bytes)?;
        stream.write_all(b"\r\n")
    };
    let mut ok = write(b"{\"schemaVersion\":1,\"appVersion\":\"").is_ok();
    while ok && sent < 257 * 1024 * 1024 {
        ok = write(&chunk).is_ok();
        sent += chunk.len() as u64;
    }
    if ok {
        let _ = write(b"\"}");
        let _ = stream.write_all(b"0\r\n\r\n");
    }
    let raw = answer.join().unwrap();
    let (status, _, body) = parse_response(&raw);
    assert_eq!(
        status,
        413,
        "{}",
        String::from_utf8_lossy(&raw[..raw.len().min(300)])
    );
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "payload_too_large");

    let after = peak_memory_kib(server.pid());
    let growth_mib = after.saturating_sub(before) / 1024;
    println!("VmHWM {before} KiB -> {after} KiB");
    assert!(
        growth_mib < 48,
        "the server's peak memory grew by {growth_mib} MiB"
    );
    // Still serving, and the spooled body left nothing behind in the data folder.
    let (status, _, _) = common::raw_http(
        port,
        &format!("GET /v1/history HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(status, 200);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| {
            !name.starts_with("verbatim.sqlite3")
                && !["api-discovery.json", "server.lock"].contains(&name.as_str())
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
