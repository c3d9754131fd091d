//! Browser recordings: a corpus clip as MediaRecorder would upload it (WebM/Opus and Ogg/Opus
//! at 48 kHz, made with ffmpeg: see tests/fixtures/audio/make.sh) transcribes to the same text
//! as the WAV it was made from, through the real binary over HTTP. In sim mode the replay
//! engine recognises the decoded Opus by its fingerprint; with the real tiny.en model (when
//! `VERBATIM_TEST_MODELS` holds one) the model hears the same words.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use common::{SpawnedServer, recorded_text, test_models};
use serde_json::Value;

const CLIP: &str = "en-weather";
const BOUNDARY: &str = "browser-recording-boundary";

/// (file name, content type, bytes) of the WAV and of the two Opus recordings of the clip.
fn recordings() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| std::fs::read(root.join(path)).unwrap();
    vec![
        (
            "en-weather.wav",
            "audio/wav",
            read("corpus/clips/en-weather.wav"),
        ),
        (
            "recording.webm",
            "audio/webm;codecs=opus",
            read("tests/fixtures/audio/speech_48k_mono.webm"),
        ),
        (
            "recording.ogg",
            "audio/ogg;codecs=opus",
            read("tests/fixtures/audio/speech_48k_mono.opus"),
        ),
    ]
}

/// Uploads `bytes` as the `file` part of a multipart form (as a page sends a recorded Blob
/// with FormData) over a socket; the status and the JSON answer.
fn upload(port: u16, file_name: &str, content_type: &str, bytes: &[u8]) -> (u16, Value) {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\nverbose_json\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
         Content-Type: {content_type}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let head = format!(
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let (status, _, text) = common::parse_response(&raw);
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, json)
}

/// Uploads every recording to `server`; their texts and durations, in the order of
/// [`recordings`], each checked to be a 200.
fn transcribe_all(server: &SpawnedServer) -> Vec<(String, f64)> {
    recordings()
        .into_iter()
        .map(|(name, content_type, bytes)| {
            let (status, answer) = upload(server.discovery.port, name, content_type, &bytes);
            assert_eq!(status, 200, "{name}: {answer}");
            let text = answer["text"].as_str().unwrap_or_default().to_owned();
            let duration = answer["duration"].as_f64().unwrap_or_default();
            eprintln!("{name}: {text:?} ({duration} s)");
            (text, duration)
        })
        .collect()
}

/// Every recording took as long as the WAV (the WebM keeps up to 20 ms of end padding).
fn assert_same_length(answers: &[(String, f64)]) {
    let wav = answers[0].1;
    for (_, duration) in answers {
        assert!(
            (duration - wav).abs() <= 0.025,
            "{duration} s against the WAV's {wav} s"
        );
    }
}

#[test]
fn opus_recordings_replay_as_their_wav_in_sim_mode() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim"]);
    let answers = transcribe_all(&server);
    // The WAV is the corpus clip itself; the Opus recordings are recognised as that clip.
    let expected = recorded_text(CLIP);
    assert!(!expected.is_empty());
    for (text, _) in &answers {
        assert_eq!(text, &expected);
    }
    assert_same_length(&answers);
}

#[test]
fn opus_recordings_transcribe_as_their_wav_with_the_real_model() {
    let Some(models) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "tiny.en", &[]);
    let answers = transcribe_all(&server);
    let wav_text = &answers[0].0;
    assert!(
        wav_text.to_lowercase().contains("today"),
        "the WAV was not heard: {wav_text:?}"
    );
    for (text, _) in &answers[1..] {
        assert_eq!(text, wav_text);
    }
    assert_same_length(&answers);
}

/// A raw body named by its browser MIME type, and a local `.webm` or `.opus` file, are taken
/// like the multipart upload (sim mode, in process).
#[tokio::test]
async fn raw_bodies_and_local_files_take_the_browser_formats() {
    use axum::body::Body;
    use common::{TestApp, request, send};
    let app = TestApp::new();
    let expected = recorded_text(CLIP);
    let dir = tempfile::tempdir().unwrap();
    for (name, content_type, bytes) in recordings().into_iter().skip(1) {
        let raw = request("POST", "/v1/transcribe")
            .header("content-type", content_type)
            .body(Body::from(bytes.clone()))
            .unwrap();
        let (status, _, answer) = send(&app.router(), raw).await;
        assert_eq!(
            (status.as_u16(), &answer["text"]),
            (200, &Value::from(expected.as_str())),
            "{name}"
        );
        let extension = if name.ends_with(".webm") {
            "webm"
        } else {
            "opus"
        };
        let path = dir.path().join(format!("recording.{extension}"));
        std::fs::write(&path, &bytes).unwrap();
        let local = request("POST", "/v1/transcribe/local-file")
            .header("content-type", "application/json")
            .body(Body::from(serde_json::json!({"path": path}).to_string()))
            .unwrap();
        let (status, _, answer) = send(&app.router(), local).await;
        assert_eq!(
            (status.as_u16(), &answer["text"]),
            (200, &Value::from(expected.as_str())),
            "{path:?}"
        );
    }
}
