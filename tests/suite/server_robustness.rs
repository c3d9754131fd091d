//! The server over real TCP: body limits, the header read timeout and panic capture.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use common::{RunningServer, TestApp, parse_response, raw_http};
use verbatim::api::ApiError;

fn error_json(err: ApiError) -> serde_json::Value {
    serde_json::to_value(err.body()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_content_length_is_refused_at_once_without_reading() {
    let t = TestApp::new();
    let app = t.app.clone();
    let server = RunningServer::start(|port| verbatim::api::router(app, port)).await;
    let port = server.port;
    let (status, elapsed, body) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let (status, _, body) = raw_http(
            port,
            &format!(
                "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 10000000000\r\nConnection: close\r\n\r\n"
            ),
        );
        (status, started.elapsed(), body)
    })
    .await
    .unwrap();
    assert_eq!(status, 413);
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body, error_json(ApiError::PayloadTooLarge { limit_mib: 1 }));
    server.stop().await;
}

/// Reads until the server closes the connection; returns how long that took.
fn time_until_closed(mut stream: TcpStream, trickle: bool) -> Duration {
    let started = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let head = b"GET /v1/status HTTP/1.1\r\n";
    let mut sent = 0;
    let mut buf = [0u8; 1024];
    loop {
        if trickle && sent < head.len() && stream.write_all(&head[sent..sent + 1]).is_ok() {
            sent += 1;
        }
        match stream.read(&mut buf) {
            Ok(0) => return started.elapsed(),
            Ok(_) => {} // a 408 or similar may precede the close
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return started.elapsed(),
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "connection never closed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_trickling_connections_are_closed_within_the_header_timeout() {
    let t = TestApp::new();
    let app = t.app.clone();
    let server = RunningServer::start(|port| verbatim::api::router(app, port)).await;
    let port = server.port;
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let trickler = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let silent = tokio::task::spawn_blocking(move || time_until_closed(silent, false));
    let trickler = tokio::task::spawn_blocking(move || time_until_closed(trickler, true));
    // Meanwhile the server keeps answering others.
    for _ in 0..5 {
        let (status, _, _) = tokio::task::spawn_blocking(move || {
            raw_http(
                port,
                &format!(
                    "GET /v1/status HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
                ),
            )
        })
        .await
        .unwrap();
        assert_eq!(status, 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let limit = verbatim::server::HEADER_READ_TIMEOUT + Duration::from_secs(2);
    let silent = silent.await.unwrap();
    let trickler = trickler.await.unwrap();
    assert!(silent <= limit, "silent connection open for {silent:?}");
    assert!(
        trickler <= limit,
        "trickling connection open for {trickler:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_gives_500_and_the_server_keeps_serving() {
    let server = RunningServer::start(|port| {
        let routes = Router::new()
            .route("/v1/boom", get(boom))
            .route("/v1/fine", get(|| async { "fine" }));
        verbatim::api::with_common_layers(routes, port)
    })
    .await;
    let port = server.port;
    let ask = move |path: &'static str| {
        tokio::task::spawn_blocking(move || {
            raw_http(
                port,
                &format!(
                    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
                ),
            )
        })
    };
    for _ in 0..3 {
        let (status, head, body) = ask("/v1/boom").await.unwrap();
        assert_eq!(status, 500);
        assert!(
            head.to_ascii_lowercase()
                .contains("cache-control: no-store")
        );
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body, error_json(ApiError::HandlerPanicked));
        assert!(
            !body.to_string().contains("handler bug"),
            "panic text leaked"
        );
        let (status, _, body) = ask("/v1/fine").await.unwrap();
        assert_eq!((status, body.as_str()), (200, "fine"));
    }
    server.stop().await;
}

async fn boom() -> &'static str {
    panic!("handler bug")
}

#[test]
fn parse_response_reads_status_and_body() {
    let (status, head, body) = parse_response(b"HTTP/1.1 404 Not Found\r\nA: b\r\n\r\n{}");
    assert_eq!(
        (status, head.as_str(), body.as_str()),
        (404, "HTTP/1.1 404 Not Found\r\nA: b", "{}")
    );
}

/// Peak resident memory of a process, from `/proc/<pid>/status`, in KiB.
#[test]
fn a_chunked_upload_past_256_mib_gets_413_with_bounded_memory() {
    use verbatim::engine::models::ModelDir;
    use verbatim::engine::models::catalog::whisper_model;

    let home = tempfile::tempdir().unwrap();
    let models_dir = tempfile::tempdir().unwrap();
    // A selected model whose weights are in place, so the route reads the body.
    let models = ModelDir::new(models_dir.path());
    let spec = whisper_model("tiny.en").unwrap();
    let temp = models.temp_path(spec).unwrap();
    std::fs::write(&temp, b"placeholder").unwrap();
    models.install(spec, &temp, "0", "test").unwrap();
    let select = common::verbatim(home.path())
        .env("VERBATIM_MODELS_DIR", models_dir.path())
        .args(["models", "select", "tiny.en"])
        .output()
        .unwrap();
    assert!(select.status.success());
    let server = common::SpawnedServer::start_with_env(
        home.path(),
        &[],
        &[("VERBATIM_MODELS_DIR", models_dir.path())],
    );
    let pid = server.child.id();
    let before = common::probe::peak_memory_kib(pid as i32);

    let port = server.discovery.port;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    // 257 MiB in 1 MiB chunks, streamed from one reused buffer.
    let chunk = vec![0x55u8; 1 << 20];
    let chunk_head = format!("{:x}\r\n", chunk.len());
    let mut sent = 0u64;
    for _ in 0..257 {
        let ok = stream.write_all(chunk_head.as_bytes()).is_ok()
            && stream.write_all(&chunk).is_ok()
            && stream.write_all(b"\r\n").is_ok();
        if !ok {
            break; // the server answered and closed early
        }
        sent += chunk.len() as u64;
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let (status, _, body) = parse_response(&raw);
    assert_eq!(status, 413, "after {sent} bytes: {body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body,
        error_json(ApiError::PayloadTooLarge { limit_mib: 256 })
    );

    let growth_mib = (common::probe::peak_memory_kib(pid as i32) - before) / 1024;
    assert!(growth_mib < 64, "server memory grew by {growth_mib} MiB");
    // Nothing was kept: no spooled upload is left in the temporary folder.
    let leftovers = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("verbatim-upload-")
                && e.metadata().map(|m| m.len() > (200 << 20)).unwrap_or(false)
        })
        .count();
    assert_eq!(leftovers, 0, "a spooled upload was left behind");
}

/// The local-file route against a path that keeps turning into a FIFO (and back, or away): every
/// request answers 200 or 400 at once, and the server keeps answering `/v1/status`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_swapped_in_for_the_file_never_stalls_the_server() {
    let t = TestApp::new();
    let app = t.app.clone();
    let server = RunningServer::start(|port| verbatim::api::router(app, port)).await;
    let port = server.port;
    let dir = tempfile::tempdir().unwrap();
    let (regular, fifo, target) = (
        dir.path().join("regular.wav"),
        dir.path().join("fifo.wav"),
        dir.path().join("clip.wav"),
    );
    let clip = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/clips/en-apples.wav");
    std::fs::copy(clip, &regular).unwrap();
    let fifo_name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo_name.as_ptr(), 0o600) }, 0);

    let swapping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let swapper = std::thread::spawn({
        let swapping = swapping.clone();
        let (regular, fifo, target) = (regular.clone(), fifo.clone(), target.clone());
        move || {
            while swapping.load(std::sync::atomic::Ordering::Relaxed) {
                for name in [&regular, &fifo] {
                    std::fs::rename(name, &target).unwrap();
                    std::thread::yield_now();
                    std::fs::rename(&target, name).unwrap();
                }
            }
        }
    });
    let body = serde_json::json!({ "path": target }).to_string();
    let answers = tokio::task::spawn_blocking(move || {
        (0..40)
            .map(|_| {
                let request = format!(
                    "POST /v1/transcribe/local-file HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let (status, _, answer) = raw_http(port, &request);
                (status, answer)
            })
            .collect::<Vec<_>>()
    });
    let answers = tokio::time::timeout(Duration::from_secs(60), answers)
        .await
        .expect("every request was answered")
        .unwrap();
    swapping.store(false, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    for (status, answer) in &answers {
        assert!(
            *status == 200 || (*status == 400 && answer.contains("File not found")),
            "{status} {answer}"
        );
    }
    let started = Instant::now();
    let (status, _, _) = tokio::task::spawn_blocking(move || {
        raw_http(
            port,
            &format!(
                "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            ),
        )
    })
    .await
    .unwrap();
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(2));
    server.stop().await;
}
