//! The Recorder and dictation on the real backends: cpal capture from the private PulseAudio
//! server `scripts/test` starts, and the installed tiny.en model. A corpus clip played into the
//! null sink is recorded through the Recorder's system-audio path and dictated through the
//! virtual microphone (the sink's monitor remapped as the default source). Skipped outside
//! `scripts/test`, failed under `CI` when the sound server or the model is missing.
#![cfg(all(feature = "capture", feature = "whisper"))]

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use axum::body::Body;
use common::{TestApp, request, send, word_error_rate};
use serde_json::Value;
use verbatim::store::{PrefValue, preferences};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::Corpus;

async fn call(app: &TestApp, method: &str, path: &str) -> (u16, Value) {
    let req = request(method, path).body(Body::empty()).unwrap();
    let (status, _, body) = send(&app.router(), req).await;
    (status.as_u16(), body)
}

async fn poll(app: &TestApp, path: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = call(app, "GET", path).await;
        assert_eq!(code, 200, "{body}");
        if matches!(body["status"].as_str(), Some("completed" | "failed")) {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} did not end: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Plays a corpus clip into the test server's null sink and waits until it has been heard.
async fn play(id: &str) -> String {
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let clip = corpus.clip(id).unwrap();
    let file: PathBuf = corpus.dir().join(&clip.entry.file);
    let player = file.clone();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("paplay")
            .args(["--device=verbatim_sink", "--latency-msec=50"])
            .arg(&player)
            .status()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(status.success(), "paplay {}", file.display());
    // The sink's and the source's latency.
    tokio::time::sleep(Duration::from_millis(400)).await;
    clip.entry.text.clone()
}

fn set(app: &TestApp, pref: &preferences::Pref, value: PrefValue) {
    app.app.store.set_pref(pref, &value).unwrap();
}

/// The test sound server (held for the test) and an application on the real devices with
/// tiny.en, inserting nothing; None where the test is skipped.
fn real_app() -> Option<(common::pulse::Pulse, TestApp)> {
    let pulse = common::pulse::pulse()?;
    let app = TestApp::real(common::test_models()?);
    app.select("tiny.en");
    set(
        &app,
        &preferences::DICTATION_INSERTION,
        PrefValue::Text("none".into()),
    );
    Some((pulse, app))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_recorder_and_dictation_capture_real_devices() {
    let Some((_pulse, app)) = real_app() else {
        return;
    };

    // The Recorder hears what the speakers play (the sink's monitor).
    let (code, started) = call(&app, "POST", "/v1/recorder/start?mic=0&system_audio=1").await;
    assert_eq!(code, 200, "{started}");
    let spoken = play("en-founded").await;
    let (code, _) = call(&app, "POST", "/v1/recorder/stop").await;
    assert_eq!(code, 200);
    let id = started["id"].as_str().unwrap();
    let session = poll(&app, &format!("/v1/recorder/session?id={id}")).await;
    assert_eq!(session["status"], "completed", "{session}");
    let text = session["text"].as_str().unwrap_or("");
    let wer = word_error_rate(
        &verbatim::transcribe::numbers::normalize_numbers(&spoken),
        text,
    );
    assert!(
        wer <= 0.2,
        "recorded {text:?} for {spoken:?} (WER {wer:.2})"
    );
    let reader = hound::WavReader::open(session["output_file"].as_str().unwrap()).unwrap();
    assert_eq!(reader.spec().sample_rate, 48_000);
    let seconds = f64::from(reader.duration()) / 48_000.0;
    assert!(seconds >= 3.5, "{seconds} s recorded");

    // Dictation hears the virtual microphone (the default source).
    let (code, started) = call(&app, "POST", "/v1/dictation/start").await;
    assert_eq!(code, 200, "{started}");
    let spoken = play("en-founded").await;
    let (code, _) = call(&app, "POST", "/v1/dictation/stop").await;
    assert_eq!(code, 200);
    let id = started["id"].as_str().unwrap();
    let done = poll(&app, &format!("/v1/dictation/transcription?id={id}")).await;
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["transcription"]["text"].as_str().unwrap();
    let wer = word_error_rate(
        &verbatim::transcribe::numbers::normalize_numbers(&spoken),
        text,
    );
    assert!(
        wer <= 0.2,
        "dictated {text:?} for {spoken:?} (WER {wer:.2})"
    );
    assert_eq!(done["transcription"]["engine"], "whisper");

    // Insertion into the clipboard with no display: the session fails naming the problem, and
    // the text is in history all the same.
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        set(
            &app,
            &preferences::DICTATION_INSERTION,
            PrefValue::Text("clipboard".into()),
        );
        let (_, started) = call(&app, "POST", "/v1/dictation/start").await;
        play("en-hello").await;
        call(&app, "POST", "/v1/dictation/stop").await;
        let id = started["id"].as_str().unwrap();
        let failed = poll(&app, &format!("/v1/dictation/transcription?id={id}")).await;
        assert_eq!(failed["status"], "failed", "{failed}");
        let error = failed["error"].as_str().unwrap();
        assert!(error.to_lowercase().contains("display"), "{error}");
        let entry = app
            .app
            .store
            .history_entry(&uuid::Uuid::parse_str(id).unwrap())
            .unwrap();
        assert!(
            entry.is_some_and(|e| !e.text.is_empty()),
            "the text was saved before insertion"
        );
    }
}

/// A session's events as they come, and those read so far.
struct Events {
    stream: tokio::sync::mpsc::UnboundedReceiver<(String, Value)>,
    seen: Vec<(String, Value)>,
}

impl Events {
    /// The next event named `name` within `within`, reading past (and keeping) others.
    async fn next(&mut self, name: &str, within: Duration) -> Option<Value> {
        let (stream, seen) = (&mut self.stream, &mut self.seen);
        tokio::time::timeout(within, async {
            while let Some((got, data)) = stream.recv().await {
                seen.push((got.clone(), data.clone()));
                if got == name {
                    return Some(data);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
    }

    /// The names of the events read so far.
    fn names(&self) -> Vec<&str> {
        self.seen.iter().map(|(name, _)| name.as_str()).collect()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dictation_transcribes_each_sentence_while_the_person_speaks() {
    let Some((_pulse, app)) = real_app() else {
        return;
    };
    let mut events = Events {
        stream: common::sse_follow_app(&app, "/v1/dictation/events").await,
        seen: Vec::new(),
    };
    let (code, started) = call(&app, "POST", "/v1/dictation/start").await;
    assert_eq!(code, 200, "{started}");
    let first = play("en-founded").await;
    // A pause: the first sentence is committed while the microphone still records (no stop is
    // sent before it comes). The wait is generous: in the one test binary another test may be
    // running an engine on the same two cores.
    let delta = "conversation.item.input_audio_transcription.delta";
    let committed = events
        .next(delta, Duration::from_secs(30))
        .await
        .expect("the first sentence's text while recording");
    // Speech started, provisional text while it went on, then the pause committed it.
    let names = events.names();
    let order = |name: &str| names.iter().position(|n| *n == name);
    let started_at = order("input_audio_buffer.speech_started");
    let tentative_at = order("dictation.tentative");
    let stopped_at = order("input_audio_buffer.speech_stopped");
    let committed_at = order("input_audio_buffer.committed");
    assert!(
        started_at < tentative_at && tentative_at < stopped_at && stopped_at < committed_at,
        "{names:?}"
    );
    assert!(started_at.is_some(), "{names:?}");
    let (_, tentative) = &events.seen[tentative_at.unwrap()];
    assert!(
        !tentative["text"].as_str().unwrap().is_empty(),
        "{tentative}"
    );
    let (_, stopped) = &events.seen[stopped_at.unwrap()];
    let (_, speech) = &events.seen[started_at.unwrap()];
    let spoke_ms =
        stopped["audio_end_ms"].as_u64().unwrap() - speech["audio_start_ms"].as_u64().unwrap();
    assert!((3_000..5_000).contains(&spoke_ms), "{speech} {stopped}");
    let (_, status) = call(&app, "GET", "/v1/dictation/status").await;
    assert_eq!(status["state"], "recording", "{status}");
    let early = committed["delta"].as_str().unwrap().to_string();
    let first_heard = normalize_numbers(&first);
    assert!(
        word_error_rate(&first_heard, &early) <= 0.25,
        "{early:?} for {first:?}"
    );
    // A real voice: tiny.en hears the synthetic "Hello world." as "The World" even from the file.
    let second = play("real-something").await;
    let (code, _) = call(&app, "POST", "/v1/dictation/stop").await;
    assert_eq!(code, 200);
    let done = events
        .next("dictation.completed", Duration::from_secs(30))
        .await
        .expect("the dictation completes");
    let id = started["id"].as_str().unwrap();
    assert_eq!(done["id"], id);
    let text = done["text"].as_str().unwrap();
    assert!(
        text.starts_with(early.trim()),
        "committed text is never rewritten: {text:?}"
    );
    let spoken = normalize_numbers(&format!("{first} {second}"));
    let wer = word_error_rate(&spoken, text);
    assert!(
        wer <= 0.2,
        "dictated {text:?} for {spoken:?} (WER {wer:.2})"
    );
    assert!(done["stop_to_text_ms"].as_u64().is_some(), "{done}");
    let session = poll(&app, &format!("/v1/dictation/transcription?id={id}")).await;
    assert_eq!(session["transcription"]["text"], text);
}
