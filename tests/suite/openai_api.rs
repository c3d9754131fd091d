//! The OpenAI-compatible routes, `POST /v1/audio/transcriptions` and `/v1/audio/translations`:
//! driven by the official `openai` Python package (every response format, words, streaming,
//! translations, errors) against the real binary, and by raw requests as curl sends them (each
//! error body snapshotted with its OpenAI `type`). Subtitles are parsed back and checked
//! against the segments of `verbose_json`.
//!
//! The SDK tests need the package: `scripts/test` installs it in a private virtual environment
//! and names its interpreter in `VERBATIM_TEST_OPENAI_PYTHON`; without it they are skipped.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use axum::body::Body;
use axum::http::StatusCode;
use common::{SpawnedServer, TestApp, request, snapshot_settings, test_models, verbatim};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

fn clip(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/clips/{id}.wav"))
}

/// A multipart/form-data request to `path` with text fields and an optional audio file.
fn multipart(
    path: &str,
    fields: &[(&str, &str)],
    file: Option<&[u8]>,
) -> axum::http::Request<Body> {
    common::multipart(path, fields, file.map(|bytes| ("clip.wav", bytes)))
}

/// Status, content type and body text of an in-process request.
async fn exchange(app: &TestApp, req: axum::http::Request<Body>) -> (StatusCode, String, String) {
    let response = app.router().oneshot(req).await.unwrap();
    let status = response.status();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, kind, String::from_utf8(bytes.to_vec()).unwrap())
}

/// One subtitle cue: start and end in seconds, and its text lines joined with spaces.
#[derive(Debug, PartialEq)]
struct Cue {
    start: f64,
    end: f64,
    text: String,
}

/// `00:01:02,345` (SRT, `separator` ',') or `00:01:02.345` (WebVTT, '.') in seconds; panics on
/// anything else.
fn parse_time(text: &str, separator: char) -> f64 {
    let (clock, millis) = text
        .split_once(separator)
        .unwrap_or_else(|| panic!("no '{separator}' in {text:?}"));
    let parts: Vec<u64> = clock.split(':').map(|p| p.parse().unwrap()).collect();
    assert_eq!(parts.len(), 3, "{text:?}");
    assert!(
        parts[1] < 60 && parts[2] < 60 && millis.len() == 3,
        "{text:?}"
    );
    let millis: u64 = millis.parse().unwrap();
    (parts[0] * 3600 + parts[1] * 60 + parts[2]) as f64 + millis as f64 / 1000.0
}

/// Parses a cue block's timing line and text lines.
fn parse_cue(lines: &[&str], separator: char) -> Cue {
    let (start, end) = lines[0]
        .split_once(" --> ")
        .unwrap_or_else(|| panic!("no timing line: {lines:?}"));
    let text: Vec<&str> = lines[1..].to_vec();
    assert!(
        !text.is_empty() && text.iter().all(|l| !l.trim().is_empty()),
        "{lines:?}"
    );
    let cue = Cue {
        start: parse_time(start, separator),
        end: parse_time(end, separator),
        text: text.join(" "),
    };
    assert!(cue.start <= cue.end, "{cue:?}");
    cue
}

/// Parses a SubRip file strictly: cues numbered 1, 2, ... each followed by its timing line and
/// text, separated by one blank line, the file ending with one.
fn parse_srt(file: &str) -> Vec<Cue> {
    assert!(file.ends_with("\n\n") || file.is_empty(), "{file:?}");
    file.split("\n\n")
        .filter(|block| !block.is_empty())
        .enumerate()
        .map(|(index, block)| {
            let lines: Vec<&str> = block.lines().collect();
            assert_eq!(lines[0], (index + 1).to_string(), "{file}");
            parse_cue(&lines[1..], ',')
        })
        .collect()
}

/// Parses a WebVTT file strictly: the `WEBVTT` header, then cues of a timing line and text.
fn parse_vtt(file: &str) -> Vec<Cue> {
    let cues = file
        .strip_prefix("WEBVTT\n\n")
        .unwrap_or_else(|| panic!("no header: {file:?}"));
    cues.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| parse_cue(&block.lines().collect::<Vec<_>>(), '.'))
        .collect()
}

/// The cues `verbose_json`'s segments should give.
fn cues_of(verbose: &Value) -> Vec<Cue> {
    verbose["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Cue {
            start: s["start"].as_f64().unwrap(),
            end: s["end"].as_f64().unwrap(),
            text: s["text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect()
}

/// The interpreter of the virtual environment holding the `openai` package, if set up.
fn openai_python() -> Option<PathBuf> {
    let python = std::env::var_os("VERBATIM_TEST_OPENAI_PYTHON").map(PathBuf::from);
    if python.is_none() {
        common::skip("VERBATIM_TEST_OPENAI_PYTHON is not set (the openai package's interpreter)");
    }
    python
}

/// Runs the SDK cases against `port` with `key`; the answer of each case by name.
fn sdk(python: &Path, port: u16, key: &str, cases: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai/sdk_cases.py");
    let output = Command::new(python)
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .arg(key)
        .arg(cases.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A sim-mode server (tiny.en selected) that requires its token.
fn sim_server(home: &Path) -> SpawnedServer {
    let set = verbatim(home)
        .args(["config", "set", "apiServerRequiresAuthentication", "yes"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    SpawnedServer::start(home, &["--sim"])
}

fn value<'a>(answers: &'a Value, case: &str) -> &'a Value {
    let answer = &answers[case];
    assert!(answer.get("value").is_some(), "{case}: {answer}");
    &answer["value"]
}

fn error<'a>(answers: &'a Value, case: &str) -> &'a Value {
    let answer = &answers[case];
    assert!(answer.get("error").is_some(), "{case}: {answer}");
    &answer["error"]
}

#[test]
fn the_openai_sdk_reads_every_format_from_sim_mode() {
    let Some(python) = openai_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let server = sim_server(home.path());
    let weather = clip("en-weather");
    let file = weather.to_str().unwrap();
    let case = |name: &str, extra: Value| {
        let mut case = json!({"name": name, "route": "transcriptions", "file": file});
        case.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        case
    };
    let answers = sdk(
        &python,
        server.discovery.port,
        &server.discovery.token,
        json!([
            case("json", json!({})),
            case("by_id", json!({"model": "tiny.en"})),
            case(
                "other_name",
                json!({"model": "gpt-4o-transcribe", "language": "en"})
            ),
            case("text", json!({"response_format": "text"})),
            case("srt", json!({"response_format": "srt"})),
            case("vtt", json!({"response_format": "vtt"})),
            case("verbose", json!({"response_format": "verbose_json"})),
            case(
                "words",
                json!({"response_format": "verbose_json",
                "timestamp_granularities": ["word", "segment"]})
            ),
            case("stream", json!({"stream": true})),
            case("bad_format", json!({"response_format": "diarized_json"})),
            case("bad_key", json!({"api_key": "not-the-token"})),
            json!({"name": "translation", "route": "translations", "file": file}),
        ]),
    );
    let expected = common::recorded_text("en-weather");
    let json_answer = value(&answers, "json");
    assert_eq!(json_answer["text"], expected.as_str());
    assert_eq!(json_answer["usage"]["type"], "duration");
    assert_eq!(json_answer["usage"]["seconds"].as_f64(), Some(4.0));
    assert_eq!(value(&answers, "by_id")["text"], expected.as_str());
    assert_eq!(value(&answers, "other_name")["text"], expected.as_str());
    assert_eq!(value(&answers, "text"), &json!(format!("{expected}\n")));

    let verbose = value(&answers, "verbose");
    assert_eq!(verbose["task"], "transcribe");
    assert_eq!(verbose["language"], "english");
    assert_eq!(verbose["text"], expected.as_str());
    assert!((verbose["duration"].as_f64().unwrap() - 3.437).abs() < 0.01);
    assert!(verbose.get("words").is_none(), "{verbose}");
    let segments = verbose["segments"].as_array().unwrap();
    assert!(!segments.is_empty());
    for (id, segment) in segments.iter().enumerate() {
        assert_eq!(segment["id"], id);
        for field in [
            "seek",
            "tokens",
            "temperature",
            "avg_logprob",
            "compression_ratio",
            "no_speech_prob",
        ] {
            assert!(segment.get(field).is_some(), "{field}: {segment}");
        }
    }
    let words = value(&answers, "words")["words"]
        .as_array()
        .unwrap()
        .clone();
    let duration = verbose["duration"].as_f64().unwrap();
    common::assert_words_spell(&words, &expected, duration);

    let expected_cues = cues_of(verbose);
    let srt = value(&answers, "srt").as_str().unwrap();
    assert_eq!(parse_srt(srt), expected_cues, "{srt}");
    let vtt = value(&answers, "vtt").as_str().unwrap();
    assert_eq!(parse_vtt(vtt), expected_cues, "{vtt}");

    let events = value(&answers, "stream").as_array().unwrap();
    let (done, deltas) = events.split_last().unwrap();
    assert_eq!(done["type"], "transcript.text.done");
    assert_eq!(done["text"], expected.as_str());
    assert!(!deltas.is_empty());
    let streamed: String = deltas
        .iter()
        .map(|d| {
            assert_eq!(d["type"], "transcript.text.delta");
            d["delta"].as_str().unwrap()
        })
        .collect();
    assert_eq!(streamed, expected);

    let bad_format = error(&answers, "bad_format");
    assert_eq!(
        (bad_format["class"].as_str(), bad_format["status"].as_u64()),
        (Some("BadRequestError"), Some(400))
    );
    assert_eq!(bad_format["body"]["type"], "invalid_request_error");
    let bad_key = error(&answers, "bad_key");
    assert_eq!(
        (bad_key["class"].as_str(), bad_key["status"].as_u64()),
        (Some("AuthenticationError"), Some(401))
    );
    assert_eq!(bad_key["body"]["type"], "authentication_error");
    assert_eq!(bad_key["body"]["message"], "Missing or invalid API token");
    let translation = error(&answers, "translation");
    assert_eq!(translation["status"], 400);
    assert!(
        translation["message"]
            .as_str()
            .unwrap()
            .contains("cannot translate"),
        "{translation}"
    );
}

#[test]
fn the_openai_sdk_translates_streams_and_times_words_with_real_models() {
    let (Some(python), Some(models)) = (openai_python(), test_models()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "base", &[]);
    let (german, minutes) = (clip("de-morning"), clip("en-long-minutes"));
    let answers = sdk(
        &python,
        server.discovery.port,
        "any-key",
        json!([
            {"name": "translation", "route": "translations", "file": german,
             "response_format": "verbose_json"},
            {"name": "translation_text", "route": "translations", "file": german,
             "response_format": "text"},
            {"name": "words", "route": "transcriptions", "file": minutes, "model": "tiny.en",
             "response_format": "verbose_json", "timestamp_granularities": ["word"]},
            {"name": "stream", "route": "transcriptions", "file": minutes, "model": "tiny.en",
             "stream": true},
        ]),
    );
    let translation = value(&answers, "translation");
    assert_eq!(
        (
            translation["task"].as_str(),
            translation["language"].as_str()
        ),
        (Some("translate"), Some("english"))
    );
    let text = translation["text"].as_str().unwrap().to_lowercase();
    assert!(
        text.contains("morning") && !text.contains("guten"),
        "{text}"
    );
    let plain = value(&answers, "translation_text").as_str().unwrap();
    assert_eq!(plain.trim(), translation["text"].as_str().unwrap());

    let words = value(&answers, "words");
    let timed = words["words"].as_array().unwrap();
    assert!(timed.len() > 80, "{words}");
    let duration = words["duration"].as_f64().unwrap();
    let mut last_start = 0.0;
    for word in timed {
        let (start, end) = (
            word["start"].as_f64().unwrap(),
            word["end"].as_f64().unwrap(),
        );
        assert!(
            start >= last_start && start <= end && end <= duration + 0.01,
            "{word}"
        );
        last_start = start;
    }
    for segment in words["segments"].as_array().unwrap() {
        assert!(segment["avg_logprob"].as_f64().unwrap() < 0.0, "{segment}");
        assert!(
            !segment["tokens"].as_array().unwrap().is_empty(),
            "{segment}"
        );
    }

    // A minute of speech is decoded in chunks: text arrives in several pieces before the end.
    let events = value(&answers, "stream").as_array().unwrap();
    let (done, deltas) = events.split_last().unwrap();
    assert!(deltas.len() >= 2, "{events:?}");
    let streamed: String = deltas
        .iter()
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    let words_of = |t: &str| t.split_whitespace().count();
    let done_text = done["text"].as_str().unwrap();
    assert!(
        words_of(&streamed).abs_diff(words_of(done_text)) <= 2,
        "{streamed} / {done_text}"
    );
}

#[tokio::test]
async fn every_openai_error_is_the_error_object_with_its_type() {
    let app = TestApp::new();
    let locked = TestApp::requiring_token();
    let wav = std::fs::read(clip("en-hello")).unwrap();
    let transcriptions = "/v1/audio/transcriptions";
    let long_prompt = "x".repeat(70 * 1024);
    let hint = "y".repeat(60 * 1024);
    let many_fields: Vec<(&str, &str)> = (0..5).map(|_| ("prompt", hint.as_str())).collect();
    let cases: Vec<(&str, &TestApp, axum::http::Request<Body>, StatusCode)> = vec![
        (
            "missing_file",
            &app,
            multipart(transcriptions, &[("model", "whisper-1")], None),
            StatusCode::BAD_REQUEST,
        ),
        (
            "bad_response_format",
            &app,
            multipart(transcriptions, &[("response_format", "xml")], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "bad_temperature",
            &app,
            multipart(transcriptions, &[("temperature", "hot")], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "bad_stream",
            &app,
            multipart(transcriptions, &[("stream", "maybe")], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "bad_granularity",
            &app,
            multipart(
                transcriptions,
                &[("timestamp_granularities[]", "sentence")],
                Some(&wav),
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "long_field",
            &app,
            multipart(transcriptions, &[("prompt", &long_prompt)], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "many_fields",
            &app,
            multipart(transcriptions, &many_fields, Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "unknown_language",
            &app,
            multipart(transcriptions, &[("language", "xx")], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "not_audio",
            &app,
            multipart(transcriptions, &[], Some(b"not audio at all")),
            StatusCode::BAD_REQUEST,
        ),
        (
            "not_multipart",
            &app,
            request("POST", transcriptions)
                .header("content-type", "audio/wav")
                .body(Body::from(wav.clone()))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            "translation_english_only",
            &app,
            multipart("/v1/audio/translations", &[], Some(&wav)),
            StatusCode::BAD_REQUEST,
        ),
        (
            "no_token",
            &locked,
            multipart(transcriptions, &[], Some(&wav)),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "too_large",
            &app,
            request("POST", transcriptions)
                .header("content-type", "multipart/form-data; boundary=x")
                .header("content-length", (300u64 << 20).to_string())
                .body(Body::empty())
                .unwrap(),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "wrong_method",
            &app,
            request("GET", transcriptions).body(Body::empty()).unwrap(),
            StatusCode::NOT_FOUND,
        ),
        (
            "cross_origin",
            &app,
            request("POST", transcriptions)
                .header("origin", "https://example.com")
                .body(Body::empty())
                .unwrap(),
            StatusCode::FORBIDDEN,
        ),
    ];
    for (name, app, req, expected) in cases {
        let (status, kind, body) = exchange(app, req).await;
        assert_eq!(status, expected, "{name}: {body}");
        assert!(kind.starts_with("application/json"), "{name}: {kind}");
        let body: Value = serde_json::from_str(&body).unwrap();
        let expected_type = match status.as_u16() {
            401 => "authentication_error",
            500.. => "server_error",
            _ => "invalid_request_error",
        };
        assert_eq!(body["error"]["type"], expected_type, "{name}: {body}");
        snapshot_settings().bind(|| {
            insta::assert_json_snapshot!(format!("openai_{name}"), body);
        });
    }
}

#[tokio::test]
async fn curl_style_requests_get_each_format_with_its_media_type() {
    let app = TestApp::new();
    let wav = std::fs::read(clip("en-weather")).unwrap();
    let expected = common::recorded_text("en-weather");
    let path = "/v1/audio/transcriptions";
    for (format, media_type) in [
        ("json", "application/json"),
        ("verbose_json", "application/json"),
        ("text", "text/plain; charset=utf-8"),
        ("srt", "text/plain; charset=utf-8"),
        ("vtt", "text/vtt; charset=utf-8"),
    ] {
        let req = multipart(
            path,
            &[("model", "whisper-1"), ("response_format", format)],
            Some(&wav),
        );
        let (status, kind, body) = exchange(&app, req).await;
        assert_eq!(
            (status, kind.as_str()),
            (StatusCode::OK, media_type),
            "{body}"
        );
        let flowing = body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flowing.contains(&expected), "{format}: {body}");
    }
    // A Verbatim error elsewhere keeps its plain Error object, without `type`.
    let (status, _, body) = exchange(
        &app,
        request("GET", "/v1/history/not-an-id")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(!body.contains("\"type\""), "{body}");
    // Streamed: data-only events, the deltas then the whole text.
    let req = multipart(path, &[("stream", "true")], Some(&wav));
    let (status, kind, body) = exchange(&app, req).await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::OK, "text/event-stream")
    );
    let events: Vec<Value> = body
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert_eq!(
        events.last().unwrap(),
        &json!({"type": "transcript.text.done", "text": expected,
                "usage": {"type": "duration", "seconds": 4}})
    );
    assert_eq!(events[0]["type"], "transcript.text.delta");
}
