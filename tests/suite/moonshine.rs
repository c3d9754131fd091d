//! The Moonshine engine on the moonshine-tiny model that `scripts/test` installs, through the
//! HTTP API: real recordings heard right, chunk times from voice activity detection, the models
//! list with engines and capabilities, and every option it cannot honour refused with a 400
//! naming the engine.

#![cfg(feature = "moonshine")]

use crate::common;

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
            "Engine 'moonshine' does not support the language 'de' with model 'moonshine-tiny'; ",
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
        // The language's refusal goes on to name the models that can hear it.
        let said = answer["error"]["message"].as_str().unwrap();
        assert!(
            said == message || said.starts_with(message),
            "{body}: {said}"
        );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_gives_each_chunk_as_a_segment_as_it_is_heard() {
    let Some(models) = test_models_with_moonshine() else {
        return;
    };
    let app = TestApp::real(models);
    app.select("moonshine-tiny");
    let body = json!({"path": corpus("real-two-cities"), "stream": true});
    let req = request("POST", "/v1/transcribe/local-file")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let events = common::sse_events(&app, req).await;
    let (done, segments) = events.split_last().unwrap();
    assert_eq!(done.0, "done", "{events:?}");
    assert_eq!(done.1["engine"], "moonshine");
    assert_eq!(done.1["model"], "moonshine-tiny");
    assert!(segments.len() >= 2, "one segment per chunk: {events:?}");
    let mut said = Vec::new();
    let mut last_end = 0.0;
    for (name, segment) in segments {
        assert_eq!(name, "segment");
        let (start, end) = (
            segment["start"].as_f64().unwrap(),
            segment["end"].as_f64().unwrap(),
        );
        assert!(last_end <= start && start < end, "{events:?}");
        last_end = end;
        said.push(segment["text"].as_str().unwrap().trim().to_string());
    }
    assert_eq!(said.join(" "), done.1["text"].as_str().unwrap().trim());
    let corpus = verbatim_sim::Corpus::load(&verbatim_sim::Corpus::source_dir()).unwrap();
    let reference = corpus
        .clips()
        .iter()
        .find(|c| c.id() == "real-two-cities")
        .map(|c| c.entry.text.clone())
        .unwrap();
    let wer = word_error_rate(&reference, &said.join(" "));
    assert!(wer < 0.1, "WER {wer}: {said:?}");
}

/// Whether `/v1/models` says `model` is in memory.
async fn is_loaded(app: &TestApp, model: &str) -> bool {
    let (_, _, answer) = send(
        &app.router(),
        request("GET", "/v1/models").body(Body::empty()).unwrap(),
    )
    .await;
    let models = answer["models"].as_array().unwrap();
    let entry = models.iter().find(|m| m["id"] == model).unwrap();
    entry["loaded"] == true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_models_leave_memory_and_come_back_on_the_next_request() {
    use std::time::{Duration, Instant};
    use verbatim::store::{PrefValue, preferences};
    let Some(models) = test_models_with_moonshine() else {
        return;
    };
    let app = TestApp::real(models);
    app.select("tiny.en");
    let clip = corpus("real-goforward");
    let heard = |answer: &Value| answer["text"].as_str().unwrap().to_lowercase();

    // A model a request names leaves after five idle minutes; the selected one stays.
    for model in ["moonshine-tiny", "tiny.en"] {
        let (status, answer) = transcribe(&app, json!({"path": clip, "model": model})).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(heard(&answer).contains("forward"), "{answer}");
        assert!(is_loaded(&app, model).await);
    }
    let transcriber = app.app.transcriber.clone();
    let sweep = |after: Duration| {
        let unloaded = transcriber.unload_idle(Instant::now() + after).unwrap();
        unloaded.into_iter().map(|u| u.model).collect::<Vec<_>>()
    };
    assert!(sweep(Duration::from_secs(4 * 60)).is_empty());
    assert_eq!(sweep(Duration::from_secs(6 * 60)), ["moonshine-tiny"]);
    assert!(!is_loaded(&app, "moonshine-tiny").await);
    assert!(sweep(Duration::from_secs(24 * 3600)).is_empty());
    assert!(is_loaded(&app, "tiny.en").await);

    // With the preference set, the selected model leaves too.
    app.app
        .store
        .set_pref(
            &preferences::UNLOAD_MODEL_AFTER_IDLE_MINUTES,
            &PrefValue::Int(2),
        )
        .unwrap();
    assert_eq!(sweep(Duration::from_secs(3 * 60)), ["tiny.en"]);
    assert!(!is_loaded(&app, "tiny.en").await);

    // The next request loads it again and is heard the same.
    let (status, answer) = transcribe(&app, json!({"path": clip})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(heard(&answer).contains("forward"), "{answer}");
    assert!(is_loaded(&app, "tiny.en").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moonshine_base_ships_in_ort_format_and_is_heard_right_with_int8_weights() {
    let Some(models) = common::test_models_with_moonshine_base() else {
        return;
    };
    let app = TestApp::real(models);
    app.select("moonshine-base");
    let clips = [
        ("real-goforward", "Go forward 10 meters."),
        (
            "real-beckett",
            "Ever tried, ever failed, no matter try again, fail again, fail better.",
        ),
    ];
    for (clip, expected) in clips {
        let (status, answer) = transcribe(&app, json!({"path": corpus(clip)})).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["model"], "moonshine-base");
        let heard = answer["text"].as_str().unwrap();
        // One word wrong at most ("metres" for "meters").
        let words = expected.split_whitespace().count() as f64;
        let wer = word_error_rate(expected, heard);
        assert!(wer * words <= 1.0, "{clip}: {heard:?} (WER {wer:.2})");
    }
}
