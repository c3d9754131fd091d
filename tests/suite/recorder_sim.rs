//! The Recorder over HTTP in sim mode: full lifecycles on the simulated devices, the WAV files it
//! writes, device faults, conflicts, concurrent starts, restarts and crash recovery.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{SpawnedServer, http_json, poll_until_done, recorded_text, serve_scenario};
use serde_json::Value;

/// The microphone says "The company was founded in 2006." (3.5 s) at 44.1 kHz; system audio
/// plays the weather sentence at 48 kHz.
const SCENARIO: &str = r#"
[microphone]
sample_rate = 44100
items = [{ clip = "en-founded" }]

[system_audio]
items = [{ clip = "en-weather" }]

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"#;

fn port(server: &SpawnedServer) -> u16 {
    server.discovery.port
}

fn start(server: &SpawnedServer, query: &str) -> (u16, Value) {
    http_json(
        port(server),
        "POST",
        &format!("/v1/recorder/start{query}"),
        None,
    )
}

fn session_path(id: &str) -> String {
    format!("/v1/recorder/session?id={id}")
}

fn wav_spec(path: &Path) -> (hound::WavSpec, f64) {
    let reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    let seconds = reader.duration() as f64 / f64::from(spec.sample_rate);
    (spec, seconds)
}

fn record_for(server: &SpawnedServer, query: &str, seconds: f64) -> Value {
    let (code, started) = start(server, query);
    assert_eq!(code, 200, "{started}");
    assert_eq!(started["status"], "recording");
    let id = started["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let (code, stopped) = http_json(port(server), "POST", "/v1/recorder/stop", None);
    assert_eq!(code, 200, "{stopped}");
    assert_eq!(
        (stopped["id"].as_str(), stopped["status"].as_str()),
        (Some(id.as_str()), Some("finalizing"))
    );
    poll_until_done(port(server), &session_path(&id), Duration::from_secs(20))
}

#[test]
fn a_microphone_recording_is_a_48k_wav_in_the_recordings_folder_with_its_transcript() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let (_, status) = http_json(port(&server), "GET", "/v1/recorder/status", None);
    assert_eq!(status, serde_json::json!({ "recording": false }));

    let session = record_for(&server, "?mic=true&system_audio=0", 4.0);
    assert_eq!(session["status"], "completed", "{session}");
    assert_eq!(
        session["text"].as_str(),
        Some(recorded_text("en-founded").as_str())
    );
    assert!(session.get("error").is_none());
    let file = PathBuf::from(session["output_file"].as_str().unwrap());
    assert!(file.is_absolute());
    assert_eq!(file.parent().unwrap(), home.path().join("data/recordings"));
    let (spec, seconds) = wav_spec(&file);
    assert_eq!((spec.sample_rate, spec.channels), (48_000, 1));
    assert!((3.6..5.5).contains(&seconds), "{seconds} s recorded");
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let (_, status) = http_json(port(&server), "GET", "/v1/recorder/status", None);
    assert_eq!(status["recording"], false);
}

#[test]
fn both_sources_are_mixed_to_mono_or_kept_apart_in_stereo() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let mono = record_for(&server, "?mic=1&system_audio=1", 1.0);
    assert_eq!(mono["status"], "completed", "{mono}");
    let (spec, _) = wav_spec(Path::new(mono["output_file"].as_str().unwrap()));
    assert_eq!(spec.channels, 1);

    let set = common::verbatim(&home.path().join("data"))
        .args(["config", "set", "recorderStereo", "true"])
        .output()
        .unwrap();
    assert!(set.status.success());
    let stereo = record_for(&server, "?mic=1&system_audio=1", 1.0);
    let file = PathBuf::from(stereo["output_file"].as_str().unwrap());
    let mut reader = hound::WavReader::open(&file).unwrap();
    assert_eq!(reader.spec().channels, 2);
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    let energy = |channel: usize| -> f64 {
        samples
            .iter()
            .skip(channel)
            .step_by(2)
            .map(|&s| f64::from(s).powi(2))
            .sum()
    };
    assert!(
        energy(0) > 0.0 && energy(1) > 0.0,
        "both channels carry audio"
    );
    assert_ne!(energy(0), energy(1), "left and right are different sources");
}

#[test]
fn requests_that_conflict_with_the_state_are_refused_and_change_nothing() {
    let home = tempfile::tempdir().unwrap();
    // Transcription takes 1.5 s, so a session stays `finalizing` long enough to observe.
    let slow = SCENARIO.replace("[engine]\n", "[engine]\nlatency_seconds = 1.5\n");
    let server = serve_scenario(home.path(), &slow);
    let port = port(&server);
    let err = |body: &Value| body["error"]["message"].as_str().unwrap_or("").to_string();

    let (code, body) = http_json(port, "POST", "/v1/recorder/stop", None);
    assert_eq!((code, err(&body).as_str()), (409, "Not recording"));
    let (code, body) = start(&server, "?mic=maybe");
    assert_eq!(
        (code, err(&body).as_str()),
        (400, "Invalid 'mic' query parameter")
    );
    let (code, body) = start(&server, "?system_audio=yes");
    assert_eq!(
        (code, err(&body).as_str()),
        (400, "Invalid 'system_audio' query parameter")
    );
    let (code, body) = start(&server, "?mic=false&system_audio=false");
    assert_eq!(
        (code, err(&body).as_str()),
        (400, "At least one audio source must be enabled.")
    );
    let (code, body) = http_json(
        port,
        "GET",
        "/v1/recorder/session?id=0F8FAD5B-D9CB-469F-A165-70867728950E",
        None,
    );
    assert_eq!(
        (code, err(&body).as_str()),
        (404, "Recorder session not found")
    );
    let (code, _) = http_json(port, "GET", "/v1/recorder/session?id=nope", None);
    assert_eq!(code, 400);

    let (code, started) = start(&server, "");
    assert_eq!(code, 200);
    let (code, body) = start(&server, "?mic=1");
    assert_eq!((code, err(&body).as_str()), (409, "Already recording"));
    std::thread::sleep(Duration::from_millis(500));
    let (code, _) = http_json(port, "POST", "/v1/recorder/stop", None);
    assert_eq!(code, 200);
    let (code, body) = start(&server, "");
    assert_eq!((code, err(&body).as_str()), (409, "Recorder is finalizing"));
    let (code, body) = http_json(port, "POST", "/v1/recorder/stop", None);
    assert_eq!((code, err(&body).as_str()), (409, "Not recording"));
    let id = started["id"].as_str().unwrap();
    let done = poll_until_done(port, &session_path(id), Duration::from_secs(20));
    assert_eq!(done["status"], "completed");
    // Idle again: a new session starts.
    let (code, _) = start(&server, "");
    assert_eq!(code, 200);
}

#[test]
fn concurrent_starts_give_exactly_one_session() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = port(&server);
    common::assert_one_of_concurrent_posts_wins(port, "/v1/recorder/start");
}

#[test]
fn a_missing_device_is_a_conflict_and_a_lost_one_fails_the_session_keeping_the_audio() {
    let home = tempfile::tempdir().unwrap();
    let scenario = r#"
[microphone]
sample_rate = 16000
items = [{ clip = "en-founded" }]

[microphone.faults]
lost_after_seconds = 1.5

[system_audio]
present = false

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"#;
    let server = serve_scenario(home.path(), scenario);
    let port = port(&server);
    let (code, body) = start(&server, "?mic=0&system_audio=1");
    assert_eq!(code, 409);
    assert_eq!(body["error"]["message"], "No system audio source available");

    let (code, started) = start(&server, "?mic=1&system_audio=0");
    assert_eq!(code, 200, "{started}");
    let id = started["id"].as_str().unwrap();
    let session = poll_until_done(port, &session_path(id), Duration::from_secs(10));
    assert_eq!(session["status"], "failed", "{session}");
    let error = session["error"].as_str().unwrap();
    assert!(error.contains("microphone was lost"), "{error}");
    let (_, seconds) = wav_spec(Path::new(session["output_file"].as_str().unwrap()));
    assert!((1.4..1.6).contains(&seconds), "kept {seconds} s");
    let (_, status) = http_json(port, "GET", "/v1/recorder/status", None);
    assert_eq!(status["recording"], false);
}

#[test]
fn sessions_survive_a_restart_and_a_crash_mid_recording_keeps_the_audio() {
    let home = tempfile::tempdir().unwrap();
    let mut server = serve_scenario(home.path(), SCENARIO);
    let done = record_for(&server, "?mic=1&system_audio=0", 1.0);
    let done_id = done["id"].as_str().unwrap().to_string();
    let transcription_off = common::verbatim(&home.path().join("data"))
        .args(["config", "set", "recorderTranscriptionEnabled", "false"])
        .output()
        .unwrap();
    assert!(transcription_off.status.success());
    let quiet = record_for(&server, "?mic=1&system_audio=0", 4.0);
    assert_eq!(quiet["status"], "completed");
    assert!(quiet.get("text").is_none(), "{quiet}");

    let (_, started) = start(&server, "?mic=1&system_audio=0");
    let crashed_id = started["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(1500));
    server.signal(libc::SIGKILL);
    server.wait_exit();

    let server = serve_scenario(home.path(), SCENARIO);
    let port = port(&server);
    let (_, again) = http_json(port, "GET", &session_path(&done_id), None);
    assert_eq!(
        again, done,
        "a finished session reads the same after a restart"
    );
    let (_, recovered) = http_json(port, "GET", &session_path(&crashed_id), None);
    assert_eq!(recovered["status"], "failed", "{recovered}");
    assert!(
        recovered["error"]
            .as_str()
            .unwrap()
            .contains("the audio captured until then was saved"),
        "{recovered}"
    );
    let (spec, seconds) = wav_spec(Path::new(recovered["output_file"].as_str().unwrap()));
    assert_eq!(spec.sample_rate, 48_000);
    assert!(seconds > 0.5, "recovered {seconds} s");
    let (_, status) = http_json(port, "GET", "/v1/recorder/status", None);
    assert_eq!(status["recording"], false);
}

#[test]
fn an_overrun_leaves_silence_in_its_place_and_the_timeline_intact() {
    let home = tempfile::tempdir().unwrap();
    let scenario = r#"
[microphone]
sample_rate = 48000
items = [{ tone = 440.0, seconds = 10.0, volume = 0.5 }]

[microphone.faults]
overruns = [{ at_seconds = 0.5, samples = 4800 }]

[system_audio]
present = false

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"#;
    let server = serve_scenario(home.path(), scenario);
    let session = record_for(&server, "?mic=1&system_audio=0", 1.5);
    assert_eq!(session["status"], "completed", "{session}");
    let mut reader = hound::WavReader::open(session["output_file"].as_str().unwrap()).unwrap();
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    assert!(samples.len() > 48_000, "{} samples", samples.len());
    // 0.5 s to 0.6 s was dropped by the device: silence, with the tone on either side.
    assert!(samples[24_000..28_800].iter().all(|&s| s == 0));
    let loud = |range: std::ops::Range<usize>| samples[range].iter().any(|&s| s.abs() > 10_000);
    assert!(loud(23_000..24_000) && loud(28_800..29_800));
    // The tone goes on in phase after the gap: nothing shifted.
    let expected = |i: usize| {
        (0.5 * (std::f64::consts::TAU * 440.0 * i as f64 / 48_000.0).sin() as f32 * 32767.0).round()
            as i32
    };
    for i in [28_800, 30_000, 40_000] {
        assert!(
            (i32::from(samples[i]) - expected(i)).abs() <= 1,
            "sample {i}"
        );
    }
}

#[test]
fn every_listener_follows_a_recording_from_start_to_its_text() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let events = common::sse_follow(port(&server), "/v1/recorder/events");
    // The sentence (3.5 s) and a pause: its text comes while it records.
    let session = record_for(&server, "?mic=1&system_audio=0", 6.0);
    assert_eq!(session["status"], "completed", "{session}");
    let id = session["id"].as_str().unwrap();
    let within = Duration::from_secs(20);
    let next = |name: &str| {
        let event = common::next_event(&events, name, within);
        assert_eq!(event["id"], id, "{event}");
        event
    };
    next("recorder.started");
    // The sentence is found, committed at its pause, and its text comes before the stop.
    let speech = next("input_audio_buffer.speech_started");
    assert_eq!(speech["item_id"], id);
    let stopped = next("input_audio_buffer.speech_stopped");
    let spoke =
        stopped["audio_end_ms"].as_u64().unwrap() - speech["audio_start_ms"].as_u64().unwrap();
    assert!((3_000..5_000).contains(&spoke), "{speech} {stopped}");
    next("input_audio_buffer.committed");
    let expected = recorded_text("en-founded");
    let delta = next("conversation.item.input_audio_transcription.delta");
    assert_eq!(delta["delta"], expected.as_str());
    next("recorder.stopped");
    let heard = next("conversation.item.input_audio_transcription.completed");
    assert_eq!(heard["transcript"], expected.as_str());
    let done = next("recorder.completed");
    assert_eq!(done["text"], session["text"]);
    assert_eq!(done["output_file"], session["output_file"]);
    assert!(done["stop_to_text_ms"].as_u64().is_some(), "{done}");
}

#[test]
fn a_recording_that_fails_is_an_event_with_its_reason() {
    let home = tempfile::tempdir().unwrap();
    let faulty = format!("{SCENARIO}\n[microphone.faults]\nlost_after_seconds = 1.0\n");
    let server = serve_scenario(home.path(), &faulty);
    let events = common::sse_follow(port(&server), "/v1/recorder/events");
    let (code, started) = start(&server, "?mic=1&system_audio=0");
    assert_eq!(code, 200, "{started}");
    let failed = common::next_event(&events, "recorder.failed", Duration::from_secs(10));
    assert_eq!(failed["id"], started["id"]);
    assert!(!failed["error"].as_str().unwrap().is_empty(), "{failed}");
}
