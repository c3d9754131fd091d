//! The Moonshine engine on the moonshine-tiny model that `scripts/test` installs, through the
//! HTTP API: real recordings heard right, chunk times from voice activity detection, the models
//! list with engines and capabilities, and every option it cannot honour refused with a 400
//! naming the engine.

#![cfg(feature = "moonshine")]

mod common;

use axum::body::Body;
use axum::http::StatusCode;
use common::{TestApp, request, send, test_models_with_moonshine, word_error_rate};
use serde_json::{Value, json};

fn corpus(clip: &str) -> String {
    format!("{}/corpus/clips/{clip}.wav", env!("CARGO_MANIFEST_DIR"))
}

async fn transcribe(app: &TestApp, body: Value) -> (StatusCode, Value) {
    let req = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, _, answer) = send(&app.router(), req).await;
    (status, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_recordings_are_heard_right_with_the_times_of_their_speech() {
    let Some(models) = test_models_with_moonshine() else {
        return;
    };
    let app = TestApp::real(models);
    app.select("moonshine-tiny");
    let clips = [
        ("real-goforward", "Go forward 10 meters."),
        (
            "real-beckett",
            "Ever tried, ever failed, no matter try again, fail again, fail better.",
        ),
        ("real-something", "Go somewhere and do something."),
    ];
    for (clip, expected) in clips {
        let (status, answer) = transcribe(
            &app,
            json!({"path": corpus(clip), "response_format": "verbose_json"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["engine"], "moonshine");
        assert_eq!(answer["model"], "moonshine-tiny");
        assert_eq!(answer["language"], "en");
        let text = answer["text"].as_str().unwrap();
        let wer = word_error_rate(expected, text);
        assert!(wer <= 0.15, "{clip}: {text:?} ({wer})");
        // One segment per chunk of speech, inside the clip.
        let duration = answer["duration"].as_f64().unwrap();
        let segments = answer["segments"].as_array().unwrap();
        assert!(!segments.is_empty(), "{answer}");
        for segment in segments {
            let (start, end) = (
                segment["start"].as_f64().unwrap(),
                segment["end"].as_f64().unwrap(),
            );
            assert!(
                0.0 <= start && start < end && end <= duration + 0.01,
                "{segment}"
            );
        }
    }
    // A long recording (44 s, read aloud) comes back whole, in several chunks, without a loop.
    let (status, answer) = transcribe(
        &app,
        json!({"path": corpus("real-two-cities"), "response_format": "verbose_json"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let text = answer["text"].as_str().unwrap();
    assert!(text.starts_with("It was the best of times"), "{text}");
    assert!(
        text.contains("superlative degree of comparison only"),
        "{text}"
    );
    assert!(
        answer["segments"].as_array().unwrap().len() >= 2,
        "{answer}"
    );
    assert!(
        verbatim::engine::guard::repetition(text).is_none(),
        "{text}"
    );

    // Streamed: one `segment` event per chunk of speech as it is heard, then `done`.
    let req = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"path": corpus("real-two-cities"), "stream": true}).to_string(),
        ))
        .unwrap();
    let response = tower::ServiceExt::oneshot(app.router(), req).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let events = String::from_utf8(body.to_vec()).unwrap();
    assert!(events.matches("event: segment").count() >= 2, "{events}");
    assert!(events.contains("It was the best of times"), "{events}");
    assert!(events.contains("event: done"), "{events}");

    // Silence gives no text.
    let (status, answer) = transcribe(&app, json!({"path": corpus("silence-3s")})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["text"], "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_moonshine_cannot_honour_are_refused_naming_the_engine() {
    let Some(models) = test_models_with_moonshine() else {
        return;
    };
    let app = TestApp::real(models);
    let clip = corpus("real-goforward");
    let refused = [
        (
            json!({"task": "translate"}),
            "Engine 'moonshine' does not support translation",
        ),
        (
            json!({"language": "de"}),
            "Engine 'moonshine' does not support the language 'de'",
        ),
        (
            json!({"prompt": "Names: Siobhan"}),
            "Engine 'moonshine' does not support a prompt",
        ),
        (
            json!({"response_format": "verbose_json", "timestamp_granularities": ["word"]}),
            "Engine 'moonshine' does not support word timestamps",
        ),
    ];
    for (options, message) in refused {
        let mut body = json!({"path": clip, "model": "moonshine-tiny"});
        body.as_object_mut()
            .unwrap()
            .extend(options.as_object().unwrap().clone());
        let (status, answer) = transcribe(&app, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {answer}");
        assert_eq!(answer["error"]["message"], message, "{body}");
    }
    // English by name or code is fine; an unknown code stays an unknown code.
    let (status, answer) = transcribe(
        &app,
        json!({"path": clip, "model": "moonshine-tiny", "language": "en"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = transcribe(
        &app,
        json!({"path": clip, "model": "moonshine-tiny", "language": "xx"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["message"], "Unknown language code 'xx'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_list_shows_every_engine_with_its_capabilities() {
    let Some(models) = test_models_with_moonshine() else {
        return;
    };
    let app = TestApp::real(models);
    let (status, _, answer) = send(
        &app.router(),
        request("GET", "/v1/models").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let models = answer["models"].as_array().unwrap();
    let find = |id: &str| {
        models
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let tiny = find("moonshine-tiny");
    assert_eq!(tiny["engine"], "moonshine");
    assert_eq!(tiny["status"], "ready");
    assert_eq!(
        tiny["capabilities"],
        json!({"languages": ["en"], "translate": false, "prompt": false,
               "word_timestamps": false, "live": true})
    );
    let base_installed = verbatim::engine::catalog::is_installed(
        &app.app.models,
        verbatim::engine::catalog::find_model("moonshine-base").unwrap(),
    );
    assert_eq!(find("moonshine-base")["downloaded"], base_installed);
    let whisper_en = find("tiny.en");
    assert_eq!(whisper_en["engine"], "whisper");
    assert_eq!(whisper_en["capabilities"]["translate"], false);
    assert_eq!(whisper_en["capabilities"]["word_timestamps"], true);
    let base = &find("base")["capabilities"];
    assert_eq!(base["translate"], true);
    assert_eq!(base["languages"].as_array().unwrap().len(), 99);
    assert_eq!(
        find("large-v3")["capabilities"]["languages"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
}
