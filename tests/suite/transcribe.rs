//! Both transcription routes: every error of the contract (snapshotted), and real transcription
//! with the installed tiny.en model.

use crate::common;

use std::path::Path;

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, request, send, speak, test_models, word_error_rate};
use serde_json::{Value, json};
use verbatim::engine::models::ModelDir;
use verbatim::engine::models::catalog::whisper_model;

/// A multipart/form-data upload to `/v1/transcribe`.
fn multipart(fields: &[(&str, &str)], file: Option<(&str, &[u8])>) -> Request {
    common::multipart("/v1/transcribe", fields, file)
}

type Request = axum::http::Request<Body>;

fn local_file(body: Value) -> Request {
    request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn raw(content_type: &str, bytes: Vec<u8>, headers: &[(&str, &str)]) -> Request {
    let mut builder = request("POST", "/v1/transcribe").header("content-type", content_type);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from(bytes)).unwrap()
}

/// Weights that are "installed" (file + manifest agree) but never loaded: enough for every
/// check that happens before the engine runs.
fn installed_placeholder(models: &ModelDir, id: &str) {
    let spec = whisper_model(id).unwrap();
    let temp = models.temp_path(spec).unwrap();
    std::fs::write(&temp, b"not a real model").unwrap();
    models.install(spec, &temp, "0", "test").unwrap();
}

/// An app with tiny.en selected but no weights, and one with placeholder weights.
fn apps() -> (TestApp, TestApp) {
    let missing = TestApp::real(ModelDir::new(tempfile::tempdir().unwrap().keep()));
    missing.select("tiny.en");
    let placeholder_dir = ModelDir::new(tempfile::tempdir().unwrap().keep());
    installed_placeholder(&placeholder_dir, "tiny.en");
    let installed = TestApp::real(placeholder_dir);
    installed.select("tiny.en");
    (missing, installed)
}

async fn error_case(app: &TestApp, req: Request) -> (StatusCode, Value) {
    let (status, _, body) = send(&app.router(), req).await;
    (status, body)
}

#[tokio::test]
async fn every_transcription_error_matches_its_snapshot() {
    let (missing, installed) = apps();
    let unselected = TestApp::real(ModelDir::new(tempfile::tempdir().unwrap().keep()));
    let wav = b"RIFF....WAVEfmt ".to_vec();
    let dir = tempfile::tempdir().unwrap();
    let text_file = dir.path().join("notes.txt");
    std::fs::write(&text_file, "hello").unwrap();
    let not_audio = dir.path().join("notes.wav");
    std::fs::write(&not_audio, "this is not audio at all").unwrap();

    let cases: Vec<(&str, &TestApp, Request, StatusCode)> = vec![
        (
            "unknown_engine",
            &installed,
            multipart(&[("engine", "nope")], Some(("a.wav", &wav))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "unknown_model",
            &installed,
            multipart(&[("model", "huge-v9")], Some(("a.wav", &wav))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "model_not_offered",
            &installed,
            multipart(
                &[("engine", "whisper"), ("model", "huge-v9")],
                Some(("a.wav", &wav)),
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "language_and_hint",
            &installed,
            multipart(
                &[("language", "en"), ("language_hint", "de")],
                Some(("a.wav", &wav)),
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "bad_task",
            &installed,
            multipart(&[("task", "summarize")], Some(("a.wav", &wav))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "translate_on_english_model",
            &installed,
            multipart(&[("task", "translate")], Some(("a.wav", &wav))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "not_configured",
            &missing,
            multipart(&[], Some(("a.wav", &wav))),
            StatusCode::CONFLICT,
        ),
        (
            "target_language",
            &installed,
            multipart(&[("target_language", "de")], Some(("a.wav", &wav))),
            StatusCode::NOT_IMPLEMENTED,
        ),
        (
            "no_engine_selected",
            &unselected,
            multipart(&[], Some(("a.wav", &wav))),
            StatusCode::SERVICE_UNAVAILABLE,
        ),
        (
            "bad_audio",
            &installed,
            multipart(&[], Some(("a.wav", b"definitely not audio data"))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "missing_file_part",
            &installed,
            multipart(&[("language", "en")], None),
            StatusCode::BAD_REQUEST,
        ),
        (
            "empty_file_part",
            &installed,
            multipart(&[], Some(("a.wav", b""))),
            StatusCode::BAD_REQUEST,
        ),
        (
            "empty_raw_body",
            &installed,
            raw("audio/wav", vec![], &[]),
            StatusCode::BAD_REQUEST,
        ),
        (
            "unsupported_raw_type",
            &installed,
            raw("text/plain", b"hello".to_vec(), &[]),
            StatusCode::BAD_REQUEST,
        ),
        (
            "raw_header_language_and_hints",
            &installed,
            raw(
                "audio/wav",
                wav.clone(),
                &[("x-language", "en"), ("x-language-hints", "de,fr")],
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "raw_bad_boolean_header",
            &installed,
            raw(
                "audio/wav",
                wav.clone(),
                &[("x-apply-corrections", "maybe")],
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_not_found",
            &installed,
            local_file(json!({"path": "/no/such/file.wav"})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_relative_path",
            &installed,
            local_file(json!({"path": "clip.wav"})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_unsupported_extension",
            &installed,
            local_file(json!({"path": text_file})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_not_audio",
            &installed,
            local_file(json!({"path": not_audio})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_missing_path",
            &installed,
            local_file(json!({"language": "en"})),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_invalid_json",
            &installed,
            request("POST", "/v1/transcribe/local-file")
                .header("content-type", "application/json")
                .body(Body::from("{\"path\":"))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "local_file_not_json",
            &installed,
            request("POST", "/v1/transcribe/local-file")
                .body(Body::from("path=/x.wav"))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            "bad_await_download",
            &installed,
            request("POST", "/v1/transcribe/local-file?await_download=maybe")
                .header("content-type", "application/json")
                .body(Body::from(json!({"path": "/x.wav"}).to_string()))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "payload_too_large",
            &installed,
            request("POST", "/v1/transcribe")
                .header("content-type", "audio/wav")
                .header("content-length", "300000000")
                .body(Body::empty())
                .unwrap(),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
    ];
    let _snapshots = common::snapshot_settings().bind_to_scope();
    for (name, app, req, expected) in cases {
        let (status, body) = error_case(app, req).await;
        assert_eq!(status, expected, "{name}: {body}");
        insta::assert_json_snapshot!(format!("transcribe_{name}"), body);
    }
}

#[tokio::test]
async fn status_and_models_follow_the_selection_and_the_installed_weights() {
    let (missing, installed) = apps();
    let status = |app: &TestApp| {
        let router = app.router();
        async move {
            send(
                &router,
                request("GET", "/v1/status").body(Body::empty()).unwrap(),
            )
            .await
            .2
        }
    };
    let s = status(&missing).await;
    assert_eq!(
        (
            s["status"].as_str(),
            s["engine"].as_str(),
            s["model"].as_str()
        ),
        (Some("no_model"), Some("whisper"), Some("tiny.en"))
    );
    let s = status(&installed).await;
    assert_eq!(s["status"], "ready");
    // The whisper engine sends segments as it decodes them; tiny.en cannot translate.
    assert_eq!(
        (&s["supports_streaming"], &s["supports_translation"]),
        (&json!(true), &json!(false))
    );
    let (_, _, models) = send(
        &installed.router(),
        request("GET", "/v1/models").body(Body::empty()).unwrap(),
    )
    .await;
    let models = models["models"].as_array().unwrap();
    let tiny = models.iter().find(|m| m["id"] == "tiny.en").unwrap();
    assert_eq!(
        tiny,
        &json!({"id": "tiny.en", "engine": "whisper", "name": "Whisper Tiny (English)", "size_description": "75 MB",
                "language_count": 1, "status": "ready", "selected": true, "downloaded": true, "loaded": false,
                "capabilities": {"languages": ["en"], "translate": false, "prompt": true,
                                 "word_timestamps": true, "live": true}})
    );
    let base = models.iter().find(|m| m["id"] == "base").unwrap();
    assert_eq!(
        (
            base["status"].as_str(),
            base["selected"].as_bool(),
            base["language_count"].as_u64()
        ),
        (Some("not_configured"), Some(false), Some(99))
    );
}

/// The real engine: upload, raw body and local file agree, and the text is right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_transcription_through_every_route() {
    let Some(models) = test_models() else { return };
    let app = TestApp::real(models);
    app.select("tiny.en");
    let dir = tempfile::tempdir().unwrap();
    let sentence = "We will meet at the library after lunch to discuss the new project plan.";
    let clip = speak(dir.path(), "library", sentence);
    let bytes = std::fs::read(&clip).unwrap();

    let (status, headers, by_path) = send(
        &app.router(),
        local_file(json!({"path": clip, "response_format": "verbose_json"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{by_path}");
    assert_stage_times_add_up(&headers, &by_path);
    let text = by_path["text"].as_str().unwrap();
    let wer = word_error_rate(sentence, text);
    assert!(wer <= 0.2, "word error rate {wer:.2}: {text}");
    assert_eq!(
        (
            by_path["engine"].as_str(),
            by_path["model"].as_str(),
            by_path["language"].as_str()
        ),
        (Some("whisper"), Some("tiny.en"), Some("en"))
    );
    let duration = by_path["duration"].as_f64().unwrap();
    assert!((4.0..8.0).contains(&duration), "duration {duration}");
    assert!(by_path["processing_time"].as_f64().unwrap() > 0.0);

    // Segments are ordered, within the audio, and cover it.
    let segments = by_path["segments"].as_array().unwrap();
    assert!(!segments.is_empty());
    let mut previous_end = 0.0;
    for segment in segments {
        let (start, end) = (
            segment["start"].as_f64().unwrap(),
            segment["end"].as_f64().unwrap(),
        );
        assert!(
            start >= previous_end - 0.01 && end >= start && end <= duration + 0.5,
            "{segments:?}"
        );
        previous_end = end;
    }
    assert!(segments[0]["start"].as_f64().unwrap() < 1.0);
    assert!(
        previous_end > duration - 1.5,
        "segments end at {previous_end} of {duration}"
    );

    let (status, headers, by_upload) = send(
        &app.router(),
        multipart(
            &[("response_format", "json")],
            Some(("library.wav", &bytes)),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_stage_times_add_up(&headers, &by_upload);
    assert_eq!(by_upload["text"], by_path["text"]);
    assert!(
        by_upload.get("segments").is_none(),
        "plain json has no segments"
    );

    let (status, headers, by_raw) = send(
        &app.router(),
        raw(
            "application/octet-stream",
            bytes,
            &[("x-response-format", "verbose_json")],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_stage_times_add_up(&headers, &by_raw);
    assert_eq!(by_raw["text"], by_path["text"]);
    assert!(by_raw["segments"].is_array());
}

/// The `Server-Timing` header names each stage once, and decode, voice activity detection,
/// engine and post-processing add up to the body's `processing_time` (which excludes the queue).
fn assert_stage_times_add_up(headers: &axum::http::HeaderMap, body: &Value) {
    let timing = headers
        .get("server-timing")
        .expect("a Server-Timing header")
        .to_str()
        .unwrap();
    let stages: Vec<(&str, f64)> = timing
        .split(", ")
        .map(|entry| {
            let (name, dur) = entry.split_once(";dur=").expect(timing);
            (name, dur.parse().expect(timing))
        })
        .collect();
    let names: Vec<&str> = stages.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        ["decode", "queue", "vad", "engine", "post"],
        "{timing}"
    );
    let ms = |stage: &str| stages.iter().find(|(n, _)| *n == stage).unwrap().1;
    assert!(ms("engine") > 10.0, "{timing}");
    let busy = ms("decode") + ms("vad") + ms("engine") + ms("post");
    let processing_ms = body["processing_time"].as_f64().unwrap() * 1000.0;
    assert!(
        (busy - processing_ms).abs() < 1.0,
        "{timing} against processing_time {processing_ms} ms"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spoken_numbers_become_digits_unless_switched_off() {
    let Some(models) = test_models() else { return };
    let app = TestApp::real(models);
    app.select("tiny.en");
    let dir = tempfile::tempdir().unwrap();
    let clip = speak(
        dir.path(),
        "numbers",
        "There were fifteen people and forty two chairs.",
    );
    let ask = |normalize: Option<bool>| {
        let mut body = json!({"path": clip});
        if let Some(n) = normalize {
            body["normalize_numbers"] = json!(n);
        }
        let router = app.router();
        async move {
            send(&router, local_file(body)).await.2["text"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let normalized = ask(None).await;
    assert!(
        normalized.contains("15") && normalized.contains("42"),
        "{normalized}"
    );
    let words = ask(Some(false)).await;
    assert!(
        !words.contains("42") || !normalized.contains("forty"),
        "{words}"
    );
}

#[test]
fn word_error_rate_counts_edits() {
    assert_eq!(word_error_rate("a b c d", "a b c d"), 0.0);
    assert_eq!(word_error_rate("a b c d", "a x c"), 0.5);
    assert!(Path::new("/").is_absolute());
}

/// The dictionary shapes transcription: terms join the prompt, corrections run last (unless
/// switched off), and history keeps the result only when the preference says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dictionary_and_history_preference_shape_transcription() {
    let Some(models) = test_models() else { return };
    let app = TestApp::real(models);
    app.select("tiny.en");
    let router = app.router();
    let put = |path: &str, body: Value| {
        request("PUT", path)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    // "Please send the quarterly report to Siobhan before Friday.": tiny.en mishears the name
    // unless it is a recognition term.
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-siobhan.wav");
    let history = |router: axum::Router| async move {
        send(
            &router,
            request("GET", "/v1/history").body(Body::empty()).unwrap(),
        )
        .await
        .2
    };

    let (_, _, plain) = send(&router, local_file(json!({"path": clip}))).await;
    let plain = plain["text"].as_str().unwrap().to_string();
    assert!(!plain.contains("Siobhan"), "{plain}");
    assert_eq!(
        history(router.clone()).await["total"],
        0,
        "history is off by default"
    );

    let (status, _, _) = send(
        &router,
        put("/v1/dictionary/terms", json!({"terms": ["Siobhan"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(
        &router,
        put(
            "/v1/dictionary/corrections",
            json!({"original": "report", "replacement": "summary", "caseSensitive": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    app.app
        .store
        .set_pref(
            &verbatim::store::preferences::SAVE_API_TRANSCRIPTIONS_TO_HISTORY,
            &verbatim::store::PrefValue::Bool(true),
        )
        .unwrap();

    let (_, _, corrected) = send(&router, local_file(json!({"path": clip}))).await;
    let text = corrected["text"].as_str().unwrap();
    assert!(
        text.contains("Siobhan"),
        "the term steers the model: {text}"
    );
    assert!(
        text.contains("summary") && !text.contains("report"),
        "the correction runs: {text}"
    );
    let (_, _, raw) = send(
        &router,
        local_file(json!({"path": clip, "apply_corrections": false})),
    )
    .await;
    assert!(raw["text"].as_str().unwrap().contains("report"), "{raw}");

    let saved = history(router.clone()).await;
    assert_eq!(saved["total"], 2, "{saved}");
    let corrected_entry = &saved["entries"][1]; // newest first: [0] is the uncorrected request
    assert_eq!(corrected_entry["text"].as_str(), Some(text));
    assert!(
        corrected_entry["raw_text"]
            .as_str()
            .unwrap()
            .contains("report"),
        "raw text is the engine's: {corrected_entry}"
    );
    assert_eq!(
        (
            corrected_entry["engine"].as_str(),
            corrected_entry["model"].as_str()
        ),
        (Some("whisper"), Some("tiny.en"))
    );
}

/// A transcription whose client leaves is cancelled, and that is no error: one `cancelled` line
/// at info level, and no ERROR in the log (whisper.cpp's "failed to encode" of the pass stopped
/// on purpose is the engine's own doing).
#[cfg(feature = "whisper")]
#[test]
fn a_transcription_whose_client_leaves_is_cancelled_without_an_error() {
    use std::io::Write;
    let Some(models) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let mut server = common::serve_model(home.path(), &models, "tiny.en", &[]);
    let port = server.discovery.port;
    // Three minutes of speech: the engine is mid-pass when the client leaves.
    let wav = common::long_speech_wav("real-two-cities", 180);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nContent-Length: {}\r\n\r\n",
        wav.len()
    )
    .unwrap();
    stream.write_all(&wav).unwrap();
    // Three minutes take the engine far longer than this, however busy the machine.
    std::thread::sleep(std::time::Duration::from_secs(4));
    drop(stream);
    // The engine is free again: a short clip is answered.
    let short = common::long_speech_wav("real-goforward", 2);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /v1/transcribe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: audio/wav\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        short.len()
    )
    .unwrap();
    stream.write_all(&short).unwrap();
    let mut answer = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut answer).unwrap();
    assert_eq!(common::parse_response(&answer).0, 200);
    server.signal(libc::SIGTERM);
    server.wait_exit();
    let log = server.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("cancelled")),
        "{log}"
    );
    assert!(!log.contains("ERROR"), "{log}");
}
