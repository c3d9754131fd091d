//! Model downloads against a local stand-in of the model server: success with progress,
//! checksum mismatch, a connection dropped mid-stream, and `?await_download=1`.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, request, send, speak, test_models};
use serde_json::json;
use sha2::{Digest, Sha256};
use verbatim::engine::models::catalog::whisper_model;
use verbatim::engine::models::fetch::{DownloadError, download};
use verbatim::engine::models::{ModelDir, hex};
use verbatim::store::{PrefValue, preferences};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn sha(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Nothing but the installed model (no temporary files) is left in the folder.
fn files_in(dir: &ModelDir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_is_verified_installed_and_reports_progress() {
    let server = MockServer::start().await;
    let weights: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    Mock::given(method("GET"))
        .and(path("/models/ggml-tiny.en.bin"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-linked-etag", format!("\"{}\"", sha(&weights)).as_str())
                .set_body_bytes(weights.clone()),
        )
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let spec = whisper_model("tiny.en").unwrap();
    let base = format!("{}/models", server.uri());
    let (result, calls) = tokio::task::spawn_blocking(move || {
        let mut calls = Vec::new();
        let result = download(
            &base,
            spec,
            &ModelDir::new(tmp.path()),
            &mut |done, total| calls.push((done, total)),
        );
        (result.map_err(|e| e.to_string()), (calls, tmp))
    })
    .await
    .unwrap();
    let (calls, _tmp) = calls;
    result.unwrap();
    assert!(models.is_installed(spec));
    assert_eq!(std::fs::read(models.weights_path(spec)).unwrap(), weights);
    assert_eq!(models.manifest(spec).unwrap().sha256, sha(&weights));
    assert!(
        calls.len() > 2,
        "progress reported as bytes arrive: {calls:?}"
    );
    assert_eq!(
        calls.last().unwrap(),
        &(weights.len() as u64, weights.len() as u64)
    );
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(
        files_in(&models),
        vec!["ggml-tiny.en.bin", "ggml-tiny.en.json"]
    );
}

/// Downloads tiny.en from `server` into a fresh folder, expecting a failure.
async fn failed_download(server: &MockServer) -> (DownloadError, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let uri = server.uri();
    let err = tokio::task::spawn_blocking(move || {
        let spec = whisper_model("tiny.en").unwrap();
        download(&uri, spec, &ModelDir::new(dir), &mut |_, _| {}).unwrap_err()
    })
    .await
    .unwrap();
    (err, tmp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_checksum_leaves_no_file() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("etag", format!("\"{}\"", sha(b"something else")).as_str())
                .set_body_bytes(b"the weights".to_vec()),
        )
        .mount(&server)
        .await;
    let (err, tmp) = failed_download(&server).await;
    assert!(
        matches!(err, DownloadError::ChecksumMismatch { .. }),
        "{err}"
    );
    assert!(
        files_in(&ModelDir::new(tmp.path())).is_empty(),
        "{:?}",
        files_in(&ModelDir::new(tmp.path()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_published_checksum_is_refused() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"weights".to_vec()))
        .mount(&server)
        .await;
    let (err, tmp) = failed_download(&server).await;
    assert!(matches!(err, DownloadError::NoChecksum { .. }), "{err}");
    assert!(files_in(&ModelDir::new(tmp.path())).is_empty());
}

#[test]
fn a_connection_dropped_mid_stream_leaves_no_file() {
    // A server that announces 1 MB, sends 64 KiB and hangs up.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        let sha = "0".repeat(64);
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\nETag: \"{sha}\"\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&vec![7u8; 65536]).unwrap();
    });
    let tmp = tempfile::tempdir().unwrap();
    let models = ModelDir::new(tmp.path());
    let err = download(
        &format!("http://127.0.0.1:{port}"),
        whisper_model("tiny.en").unwrap(),
        &models,
        &mut |_, _| {},
    )
    .unwrap_err();
    server.join().unwrap();
    assert!(
        matches!(
            err,
            DownloadError::Interrupted { .. } | DownloadError::SizeMismatch { .. }
        ),
        "{err}"
    );
    assert!(files_in(&models).is_empty(), "{:?}", files_in(&models));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn await_download_fetches_the_model_then_transcribes() {
    let Some(installed) = test_models() else {
        return;
    };
    let spec = whisper_model("tiny.en").unwrap();
    let weights = std::fs::read(installed.weights_path(spec)).unwrap();
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ggml-tiny.en.bin"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-linked-etag", format!("\"{}\"", sha(&weights)).as_str())
                .set_body_bytes(weights),
        )
        .expect(1)
        .mount(&server)
        .await;

    let empty = tempfile::tempdir().unwrap();
    let app = TestApp::real(ModelDir::new(empty.path()));
    app.select("tiny.en");
    app.app
        .store
        .set_pref(
            &preferences::MODEL_DOWNLOAD_BASE_URL,
            &PrefValue::Text(server.uri()),
        )
        .unwrap();
    let clip = speak(
        empty.path(),
        "message",
        "Thank you for calling. Please leave a message after the tone.",
    );
    let ask = |query: &str| {
        request("POST", &format!("/v1/transcribe/local-file{query}"))
            .header("content-type", "application/json")
            .body(Body::from(json!({"path": clip}).to_string()))
            .unwrap()
    };
    // Without the flag the engine is not configured.
    let (status, _, body) = send(&app.router(), ask("")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    // With it, two concurrent requests share one download and both transcribe.
    let router = app.router();
    let (a, b) = tokio::join!(
        send(&router, ask("?await_download=1")),
        send(&router, ask("?await_download=true"))
    );
    for (status, _, body) in [a, b] {
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            body["text"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("leave a message"),
            "{body}"
        );
    }
    assert!(app.app.models.is_installed(spec));
}
