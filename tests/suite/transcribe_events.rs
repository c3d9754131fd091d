//! Streamed answers on `/v1/transcribe` and `/v1/transcribe/local-file` (sim mode): each way of
//! asking (`stream` form field, `X-Stream` header, JSON key, `Accept: text/event-stream`) gives
//! `segment` events then `done` with the Transcription object; a failure before the stream
//! begins keeps its status; word timestamps and `target_language: "en"` on Verbatim's routes.

use crate::common;

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, request, send};
use serde_json::{Value, json};

fn clip(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/clips/{id}.wav"))
}

fn multipart(fields: &[(&str, &str)], file: &[u8]) -> axum::http::Request<Body> {
    common::multipart("/v1/transcribe", fields, Some(("a.wav", file)))
}

/// Segments then `done`: the segments' text is the transcript's, in order.
fn assert_segments_then_done(events: &[(String, Value)], expected: &str) -> Value {
    let (done, segments) = events.split_last().unwrap();
    assert_eq!(done.0, "done", "{events:?}");
    assert!(!segments.is_empty());
    let mut said = Vec::new();
    for (name, segment) in segments {
        assert_eq!(name, "segment");
        assert!(segment["start"].as_f64() <= segment["end"].as_f64());
        said.push(segment["text"].as_str().unwrap().trim().to_string());
    }
    assert_eq!(said.join(" "), expected);
    assert_eq!(done.1["text"], expected);
    assert_eq!(done.1["engine"], "whisper");
    done.1.clone()
}

#[tokio::test]
async fn every_way_of_asking_for_a_stream_gives_segments_then_done() {
    let app = TestApp::new();
    let wav = std::fs::read(clip("en-weather")).unwrap();
    let expected = common::recorded_text("en-weather");

    let form = common::sse_events(&app, multipart(&[("stream", "true")], &wav)).await;
    let done = assert_segments_then_done(&form, &expected);
    assert!(done.get("segments").is_none(), "{done}");

    let verbose = multipart(
        &[("stream", "yes"), ("response_format", "verbose_json")],
        &wav,
    );
    let done = assert_segments_then_done(&common::sse_events(&app, verbose).await, &expected);
    assert!(done["segments"].as_array().is_some_and(|s| !s.is_empty()));

    let raw = request("POST", "/v1/transcribe")
        .header("content-type", "audio/wav")
        .header("x-stream", "1")
        .body(Body::from(wav.clone()))
        .unwrap();
    assert_segments_then_done(&common::sse_events(&app, raw).await, &expected);

    let accept = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(Body::from(json!({"path": clip("en-weather")}).to_string()))
        .unwrap();
    assert_segments_then_done(&common::sse_events(&app, accept).await, &expected);

    let key = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"path": clip("en-weather"), "stream": true}).to_string(),
        ))
        .unwrap();
    assert_segments_then_done(&common::sse_events(&app, key).await, &expected);

    // `stream=false` wins over the Accept header: the Transcription object.
    let declined = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(Body::from(
            json!({"path": clip("en-weather"), "stream": false}).to_string(),
        ))
        .unwrap();
    let (status, headers, body) = send(&app.router(), declined).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.contains_key("server-timing"));
    assert_eq!(body["text"], expected.as_str());
}

#[tokio::test]
async fn a_failure_before_the_stream_begins_keeps_its_status() {
    let app = TestApp::new();
    let (status, _, body) = send(
        &app.router(),
        multipart(&[("stream", "true")], b"this is not audio"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "bad_request");
    let (status, _, body) = send(
        &app.router(),
        multipart(&[("stream", "sometimes")], b"RIFF"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Invalid 'stream' value 'sometimes': use true or false."
    );
    common::snapshot_settings().bind(|| {
        insta::assert_json_snapshot!("transcribe_bad_stream", body);
    });
}

#[tokio::test]
async fn verbose_json_times_words_when_asked() {
    let app = TestApp::new();
    let wav = std::fs::read(clip("en-weather")).unwrap();
    let expected = common::recorded_text("en-weather");
    let ask = |fields: &'static [(&'static str, &'static str)]| multipart(fields, &wav);
    let (_, _, plain) = send(&app.router(), ask(&[("response_format", "verbose_json")])).await;
    assert!(plain.get("words").is_none(), "{plain}");
    let (status, _, timed) = send(
        &app.router(),
        ask(&[
            ("response_format", "verbose_json"),
            ("timestamp_granularities", "segment,word"),
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{timed}");
    let words = timed["words"].as_array().unwrap();
    common::assert_words_spell(words, &expected, timed["duration"].as_f64().unwrap());
    // Words without verbose_json are not asked for.
    let (_, _, short) = send(&app.router(), ask(&[("timestamp_granularities", "word")])).await;
    assert!(short.get("words").is_none(), "{short}");
}

#[tokio::test]
async fn english_as_target_language_translates_with_a_multilingual_model() {
    let multilingual = TestApp::with_scenario(
        "[engine]\nselected_model = \"base\"\n\n[models]\n\"base\" = \"present\"\n",
    );
    let english_only = TestApp::new();
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
    assert_eq!(status(&multilingual).await["supports_translation"], true);
    assert_eq!(status(&english_only).await["supports_translation"], false);
    let german = json!({"path": clip("de-morning"), "target_language": "EN"});
    let local = |body: &Value| {
        request("POST", "/v1/transcribe/local-file")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    // The translate task reaches the engine: the replay engine has recorded transcriptions
    // only, so it translates English speech (to itself) and refuses the rest by name.
    let (code, _, body) = send(&multilingual.router(), local(&german)).await;
    assert_eq!(code, StatusCode::NOT_IMPLEMENTED, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Sim mode replays recorded transcriptions and has no recorded translation of this 'de' \
         speech. Translate with a real model."
    );
    common::snapshot_settings().bind(|| {
        insta::assert_json_snapshot!("transcribe_sim_translation", body);
    });
    let english = json!({"path": clip("en-weather"), "target_language": "en"});
    let (code, _, body) = send(&multilingual.router(), local(&english)).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert_eq!(
        body["text"],
        common::recorded_text_of("base", "en-weather").as_str()
    );
    let (code, _, body) = send(&english_only.router(), local(&german)).await;
    assert_eq!(code, StatusCode::NOT_IMPLEMENTED, "{body}");
    let french = json!({"path": clip("de-morning"), "target_language": "fr"});
    let (code, _, _) = send(&multilingual.router(), local(&french)).await;
    assert_eq!(code, StatusCode::NOT_IMPLEMENTED);
}
