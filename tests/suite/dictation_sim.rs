//! Dictation over HTTP in sim mode: full lifecycles on the simulated microphone with the
//! scenario's app context, workflows, the recorded insertions, faults, silence, the maximum
//! length, conflicts, concurrent starts and restarts, and a workflow's prompt action.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{http_json, poll_until_done, recorded_text, serve_scenario};
use serde_json::{Value, json};

/// The microphone says the "update" sentence (4.2 s) into Firefox's mail composer.
const SCENARIO: &str = r#"
[microphone]
sample_rate = 44100
items = [{ clip = "en-update" }]

[system_audio]
present = false

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"

[app_context]
app_name = "Firefox"
app_id = "org.mozilla.firefox"
url = "https://mail.example.com/compose"
"#;

fn result_path(id: &str) -> String {
    format!("/v1/dictation/transcription?id={id}")
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or("")
}

/// Starts (with `body`), waits `seconds`, stops; returns the start answer and the ended session.
fn dictate(port: u16, body: Option<&Value>, seconds: f64) -> (Value, Value) {
    let (code, started) = http_json(port, "POST", "/v1/dictation/start", body);
    assert_eq!(code, 200, "{started}");
    let id = started["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let (code, stopped) = http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!(code, 200, "{stopped}");
    assert_eq!(stopped, json!({ "id": id, "status": "stopped" }));
    let ended = poll_until_done(port, &result_path(&id), Duration::from_secs(20));
    (started, ended)
}

fn insertions(home: &Path) -> Vec<String> {
    match std::fs::read_to_string(home.join("data").join(verbatim::app::SIM_INSERTIONS_FILE)) {
        Ok(text) => text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["text"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_dictation_is_transcribed_saved_to_history_and_inserted() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let (_, idle) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(
        idle,
        json!({ "state": "idle", "is_recording": false, "active_model": "tiny.en" })
    );

    let (code, started) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(code, 200);
    assert_eq!(started["status"], "recording");
    assert!(
        started.get("workflow_id").is_none(),
        "no rule matches: {started}"
    );
    let id = started["id"].as_str().unwrap().to_string();
    assert_eq!(id, id.to_uppercase());
    let (_, live) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(
        (live["state"].as_str(), live["is_recording"].as_bool()),
        (Some("recording"), Some(true))
    );
    let (_, polled) = http_json(port, "GET", &result_path(&id), None);
    assert_eq!(polled, json!({ "id": id, "status": "recording" }));

    std::thread::sleep(Duration::from_millis(4600));
    let (code, _) = http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!(code, 200);
    let done = poll_until_done(port, &result_path(&id), Duration::from_secs(20));
    assert_eq!(done["status"], "completed", "{done}");
    let expected = recorded_text("en-update");
    let entry = &done["transcription"];
    assert!(
        entry.get("id").is_none(),
        "the entry is shown without its id"
    );
    assert_eq!(entry["text"].as_str(), Some(expected.as_str()));
    assert_eq!(entry["app_name"], "Firefox");
    assert_eq!(entry["app_bundle_id"], "org.mozilla.firefox");
    assert_eq!(entry["app_url"], "https://mail.example.com/compose");
    assert_eq!(
        (entry["engine"].as_str(), entry["model"].as_str()),
        (Some("whisper"), Some("tiny.en"))
    );
    assert_eq!(entry["language"], "en");
    let duration = entry["duration"].as_f64().unwrap();
    assert!((4.4..6.0).contains(&duration), "{duration}");
    assert!(entry["words_count"].as_u64().unwrap() > 5);
    assert!(entry["timestamp"].as_str().unwrap().ends_with('Z'));

    let (_, history) = http_json(port, "GET", "/v1/history", None);
    assert_eq!(
        history["entries"][0]["id"],
        id.as_str(),
        "the session id is the entry id"
    );
    assert_eq!(insertions(home.path()), vec![expected]);
    let (_, idle) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(idle["state"], "idle");
}

#[test]
fn workflows_are_chosen_by_id_or_by_the_focused_application() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let backup = json!({
        "schemaVersion": 1, "exportedAt": "2026-04-13T10:15:00Z", "appVersion": "0.1.0",
        "workflows": [
            {"id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "isEnabled": true,
             "priority": 1, "bundleIdentifiers": ["org.mozilla.firefox"], "urlPatterns": [],
             "languageMode": "exact", "inputLanguage": "en", "languageHints": []},
            {"id": "7C9E6679-7425-40DE-944B-E07FC1F90AE7", "name": "Off", "isEnabled": false,
             "priority": 0, "bundleIdentifiers": ["org.mozilla.firefox"], "urlPatterns": [],
             "languageMode": "auto", "languageHints": []}
        ],
        "dictionaryEntries": [], "snippets": [], "promptActions": [], "profiles": [],
        "hotkeys": [], "plugins": [], "history": [], "preferences": {}
    });
    let (code, summary) = http_json(port, "POST", "/v1/settings/import", Some(&backup));
    assert_eq!(code, 200, "{summary}");

    let cases = [
        (
            json!({ "workflow_id": "nope" }),
            400,
            "Missing or invalid 'workflow_id'",
        ),
        (
            json!({ "workflow_id": 12 }),
            400,
            "Missing or invalid 'workflow_id'",
        ),
        (
            json!({ "workflow_id": "16FD2706-8BAF-433B-82EB-8C7FADA847DA" }),
            404,
            "Workflow not found",
        ),
        (
            json!({ "workflow_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7" }),
            409,
            "Workflow is disabled",
        ),
    ];
    for (body, code, text) in cases {
        let (got, answer) = http_json(port, "POST", "/v1/dictation/start", Some(&body));
        assert_eq!((got, message(&answer)), (code, text), "{body}");
    }
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["state"], "idle", "refused starts change nothing");

    // No workflow named: the enabled rule for the focused app (Firefox) applies.
    let (code, started) = http_json(port, "POST", "/v1/dictation/start", Some(&json!({})));
    assert_eq!(code, 200);
    assert_eq!(
        (
            started["workflow_id"].as_str(),
            started["workflow_name"].as_str()
        ),
        (Some("0F8FAD5B-D9CB-469F-A165-70867728950E"), Some("Mail"))
    );
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["active_workflow"], "Mail");
    assert_eq!(
        status["active_workflow_id"],
        "0F8FAD5B-D9CB-469F-A165-70867728950E"
    );
    let (code, body) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!((code, message(&body)), (409, "Dictation is not idle"));
    http_json(port, "POST", "/v1/dictation/stop", None);
    let id = started["id"].as_str().unwrap();
    poll_until_done(port, &result_path(id), Duration::from_secs(20));

    // Named explicitly (any case).
    let body = json!({ "workflow_id": "0f8fad5b-d9cb-469f-a165-70867728950e" });
    let (started, done) = dictate(port, Some(&body), 0.5);
    assert_eq!(started["workflow_name"], "Mail");
    assert_eq!(done["status"], "completed");
}

#[test]
fn conflicts_unknown_sessions_and_concurrent_starts() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let (code, body) = http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!((code, message(&body)), (409, "Not recording"));
    let (code, body) = http_json(
        port,
        "GET",
        &result_path("0F8FAD5B-D9CB-469F-A165-70867728950E"),
        None,
    );
    assert_eq!((code, message(&body)), (404, "Dictation session not found"));
    let (code, _) = http_json(port, "GET", "/v1/dictation/transcription", None);
    assert_eq!(code, 400);

    common::assert_one_of_concurrent_posts_wins(port, "/v1/dictation/start");
}

#[test]
fn silence_completes_with_empty_text_and_inserts_nothing() {
    let home = tempfile::tempdir().unwrap();
    let silent = SCENARIO.replace(r#"{ clip = "en-update" }"#, r#"{ clip = "silence-3s" }"#);
    let server = serve_scenario(home.path(), &silent);
    let (_, done) = dictate(server.discovery.port, None, 1.0);
    assert_eq!(done["status"], "completed", "{done}");
    // Kept in history even so: a session id is also its history entry id (the contract).
    assert_eq!(done["transcription"]["text"], "");
    assert!(insertions(home.path()).is_empty());
}

#[test]
fn a_forgotten_dictation_stops_at_the_maximum_length() {
    let home = tempfile::tempdir().unwrap();
    let set = common::verbatim(&home.path().join("data"))
        .args(["config", "set", "maxDictationSeconds", "5"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let (_, started) = http_json(port, "POST", "/v1/dictation/start", None);
    let id = started["id"].as_str().unwrap();
    let done = poll_until_done(port, &result_path(id), Duration::from_secs(15));
    assert_eq!(done["status"], "completed", "{done}");
    let duration = done["transcription"]["duration"].as_f64().unwrap();
    assert!((5.0..5.2).contains(&duration), "stopped at {duration} s");
    let (code, body) = http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!((code, message(&body)), (409, "Not recording"));
}

#[test]
fn device_and_engine_faults_fail_the_session_with_the_reason() {
    let home = tempfile::tempdir().unwrap();
    let faulty = format!(
        "{}\n[microphone.faults]\nlost_after_seconds = 1.0\n",
        SCENARIO.replace("[engine]\n", "[engine]\nfail_requests = [1]\n")
    );
    let server = serve_scenario(home.path(), &faulty);
    let port = server.discovery.port;
    let (_, started) = http_json(port, "POST", "/v1/dictation/start", None);
    let id = started["id"].as_str().unwrap();
    let lost = poll_until_done(port, &result_path(id), Duration::from_secs(10));
    assert_eq!(lost["status"], "failed", "{lost}");
    assert!(
        lost["error"]
            .as_str()
            .unwrap()
            .contains("microphone was lost"),
        "{lost}"
    );
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(
        (status["state"].as_str(), status["is_recording"].as_bool()),
        (Some("error"), Some(false))
    );

    // A new start is allowed after an error; this time the engine fails (its first request).
    let (_, failed) = dictate(port, None, 0.5);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(!failed["error"].as_str().unwrap().is_empty());
    assert!(insertions(home.path()).is_empty());
}

#[test]
fn a_missing_microphone_is_a_conflict() {
    let home = tempfile::tempdir().unwrap();
    let absent = SCENARIO.replace("[microphone]\n", "[microphone]\npresent = false\n");
    let server = serve_scenario(home.path(), &absent);
    let (code, body) = http_json(server.discovery.port, "POST", "/v1/dictation/start", None);
    assert_eq!((code, message(&body)), (409, "No microphone available"));
    let (_, status) = http_json(server.discovery.port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["state"], "idle");
}

/// Nobody could transcribe it: the start is refused before the microphone opens, with the
/// model and the command that fixes it, and nothing is captured.
#[test]
fn a_start_with_no_model_ready_is_refused_before_capture() {
    let home = tempfile::tempdir().unwrap();
    let missing = SCENARIO.replace(r#""tiny.en" = "present""#, r#""tiny.en" = "absent""#);
    let server = serve_scenario(home.path(), &missing);
    let port = server.discovery.port;
    let (code, body) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(
        (code, message(&body)),
        (
            409,
            "No model is ready: the model 'tiny.en' is not downloaded (verbatim models download tiny.en)"
        )
    );
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(
        (status["state"].as_str(), status["is_recording"].as_bool()),
        (Some("idle"), Some(false))
    );
    let (_, history) = http_json(port, "GET", "/v1/history", None);
    assert_eq!(history["total"], 0);

    let none = SCENARIO.replace("selected_model = \"tiny.en\"\n", "");
    let other_home = tempfile::tempdir().unwrap();
    let server = serve_scenario(other_home.path(), &none);
    let (code, body) = http_json(server.discovery.port, "POST", "/v1/dictation/start", None);
    assert_eq!(code, 409, "{body}");
    assert!(
        message(&body).starts_with("No model is ready: no model is selected"),
        "{body}"
    );
}

#[test]
fn a_finished_session_reads_the_same_after_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let mut server = serve_scenario(home.path(), SCENARIO);
    let (started, done) = dictate(server.discovery.port, None, 1.0);
    assert_eq!(done["status"], "completed");
    server.signal(libc::SIGTERM);
    assert!(server.wait_exit().success());
    let server = serve_scenario(home.path(), SCENARIO);
    let id = started["id"].as_str().unwrap();
    let (_, again) = http_json(server.discovery.port, "GET", &result_path(id), None);
    assert_eq!(again, done);
}

/// A settings backup holding `profiles` and nothing else.
fn backup_with_profiles(profiles: Value) -> Value {
    json!({
        "schemaVersion": 1, "exportedAt": "2026-11-25T10:15:00Z", "appVersion": "0.1.0",
        "workflows": [], "dictionaryEntries": [], "snippets": [], "promptActions": [],
        "profiles": profiles, "hotkeys": [], "plugins": [], "history": [], "preferences": {}
    })
}

#[test]
fn the_profile_of_the_focused_application_chooses_the_engine_and_model() {
    let home = tempfile::tempdir().unwrap();
    let scenario = SCENARIO.replace(
        r#""tiny.en" = "present""#,
        "\"tiny.en\" = \"present\"\n\"moonshine-tiny\" = \"present\"",
    );
    let server = serve_scenario(home.path(), &scenario);
    let port = server.discovery.port;
    let profiles = json!([
        {"id": "5B1F0B3A-31C4-4B41-9E54-6D1C8A8E4A10", "name": "Mail in Moonshine",
         "isEnabled": true, "priority": 1, "bundleIdentifiers": ["ORG.mozilla.firefox"],
         "urlPatterns": [], "engine": "moonshine", "model": "moonshine-tiny"},
        {"id": "0C3E2A53-2B7B-4C32-9A45-7F6D2C1B9E21", "name": "Off", "isEnabled": false,
         "priority": 0, "bundleIdentifiers": ["org.mozilla.firefox"], "urlPatterns": [],
         "model": "base"}
    ]);
    let backup = backup_with_profiles(profiles);
    let (code, summary) = http_json(port, "POST", "/v1/settings/import", Some(&backup));
    assert_eq!(code, 200, "{summary}");

    let (code, started) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(code, 200, "{started}");
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["active_model"], "moonshine-tiny", "{status}");
    std::thread::sleep(Duration::from_secs(5));
    http_json(port, "POST", "/v1/dictation/stop", None);
    let id = started["id"].as_str().unwrap();
    let done = poll_until_done(port, &result_path(id), Duration::from_secs(20));
    assert_eq!(done["status"], "completed", "{done}");
    let (_, history) = http_json(port, "GET", "/v1/history", None);
    let entry = &history["entries"][0];
    assert_eq!(
        entry["id"].as_str().map(str::to_lowercase),
        Some(id.to_lowercase())
    );
    assert_eq!(
        (entry["engine"].as_str(), entry["model"].as_str()),
        (Some("moonshine"), Some("moonshine-tiny")),
        "{entry}"
    );
    assert_eq!(
        entry["text"],
        common::recorded_text_of("moonshine-tiny", "en-update")
    );
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(
        status["active_model"], "tiny.en",
        "idle: the selected model"
    );
}

#[test]
fn a_profile_naming_a_model_that_is_not_downloaded_refuses_the_start() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let profiles = json!([
        {"id": "5B1F0B3A-31C4-4B41-9E54-6D1C8A8E4A10", "name": "Mail", "isEnabled": true,
         "priority": 1, "bundleIdentifiers": [], "urlPatterns": ["mail.example.com"],
         "model": "moonshine-tiny"}
    ]);
    let backup = backup_with_profiles(profiles);
    let (code, summary) = http_json(port, "POST", "/v1/settings/import", Some(&backup));
    assert_eq!(code, 200, "{summary}");
    let (code, body) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(
        (code, message(&body)),
        (
            409,
            "No model is ready: the model 'moonshine-tiny' of the profile 'Mail' is not downloaded (verbatim models download moonshine-tiny)"
        )
    );
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["state"], "idle");
}

#[test]
fn every_listener_follows_a_dictation_from_start_to_completion() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let listeners = [
        common::sse_follow(port, "/v1/dictation/events"),
        common::sse_follow(port, "/v1/dictation/events"),
    ];
    let (started, done) = dictate(port, None, 5.0);
    assert_eq!(done["status"], "completed", "{done}");
    let id = started["id"].as_str().unwrap();
    let expected = recorded_text("en-update");
    let within = Duration::from_secs(20);
    for events in &listeners {
        let begun = common::next_event(events, "dictation.started", within);
        assert_eq!(
            (begun["id"].as_str(), begun["model"].as_str()),
            (Some(id), Some("tiny.en"))
        );
        // The clip is followed by silence: it is committed and its text comes while the
        // microphone still records, as with a real engine.
        let speech = common::next_event(events, "input_audio_buffer.speech_started", within);
        assert_eq!(
            (speech["id"].as_str(), speech["item_id"].as_str()),
            (Some(id), Some(id))
        );
        let stopped = common::next_event(events, "input_audio_buffer.speech_stopped", within);
        assert!(
            stopped["audio_end_ms"].as_u64() > speech["audio_start_ms"].as_u64(),
            "{speech} {stopped}"
        );
        common::next_event(events, "input_audio_buffer.committed", within);
        let delta = common::next_event(
            events,
            "conversation.item.input_audio_transcription.delta",
            within,
        );
        assert_eq!(
            (delta["id"].as_str(), delta["item_id"].as_str()),
            (Some(id), Some(id))
        );
        assert_eq!(delta["delta"], expected.as_str());
        let stopped = common::next_event(events, "dictation.stopped", within);
        assert_eq!(stopped["id"], id);
        let heard = common::next_event(
            events,
            "conversation.item.input_audio_transcription.completed",
            within,
        );
        assert_eq!(heard["transcript"], expected.as_str());
        let completed = common::next_event(events, "dictation.completed", within);
        assert_eq!(completed["type"], "dictation.completed");
        assert_eq!(completed["text"], expected.as_str());
        let to_text = completed["stop_to_text_ms"].as_u64().unwrap();
        let to_insert = completed["stop_to_insert_ms"].as_u64().unwrap();
        assert!(to_text <= to_insert, "{completed}");
    }
}

#[test]
fn a_failed_dictation_is_an_event_with_its_reason() {
    let home = tempfile::tempdir().unwrap();
    let faulty = format!("{SCENARIO}\n[microphone.faults]\nlost_after_seconds = 1.0\n");
    let server = serve_scenario(home.path(), &faulty);
    let port = server.discovery.port;
    let events = common::sse_follow(port, "/v1/dictation/events");
    let (_, started) = http_json(port, "POST", "/v1/dictation/start", None);
    let failed = common::next_event(&events, "dictation.failed", Duration::from_secs(10));
    assert_eq!(failed["id"], started["id"]);
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("microphone was lost"),
        "{failed}"
    );
}

#[test]
fn with_live_insertion_the_text_goes_in_as_it_is_transcribed_and_only_once() {
    let home = tempfile::tempdir().unwrap();
    let set = common::verbatim(&home.path().join("data"))
        .args(["config", "set", "dictationLiveInsertion", "true"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let (code, started) = http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(code, 200, "{started}");
    // The sentence, then a pause: it is inserted while the microphone still records.
    let expected = recorded_text("en-update");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while insertions(home.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing inserted while recording"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["state"], "recording", "{status}");
    let (code, _) = http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!(code, 200);
    let id = started["id"].as_str().unwrap();
    let done = poll_until_done(port, &result_path(id), Duration::from_secs(20));
    assert_eq!(done["status"], "completed", "{done}");
    // Nothing inserted again at the end.
    assert_eq!(insertions(home.path()), [expected]);
}

/// A workflow that names a prompt action: the dictation's text is the action's output (what is
/// inserted and kept in history), its event says what the engine heard and how long the action
/// took; when the provider fails, the words as heard are inserted and the event says why. The
/// provider is a stand-in on loopback (see `prompt_actions.rs`).
#[test]
fn a_workflows_prompt_action_makes_the_dictations_text_and_a_failure_keeps_the_words() {
    use crate::prompt_actions::provider_answering;
    use wiremock::ResponseTemplate;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let provider = |answer| runtime.block_on(provider_answering(answer));
    let rewritten = json!({"model": "llama3.2", "choices": [{"message": {"role": "assistant",
        "content": "Dear team, here is the update."}}]});
    let working = provider(ResponseTemplate::new(200).set_body_json(rewritten));
    let broken = provider(ResponseTemplate::new(500).set_body_string("out of memory"));

    let home = tempfile::tempdir().unwrap();
    let scenario = format!("{SCENARIO}\n[chat]\nprovider = \"preferences\"\n");
    let server = serve_scenario(home.path(), &scenario);
    let port = server.discovery.port;
    let config = |key: &str, value: &str| {
        let out = std::process::Command::new(common::binary())
            .env("VERBATIM_HOME", home.path().join("data"))
            .args(["config", "set", key, value])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    config("chatBaseUrl", &format!("{}/v1", working.uri()));
    config("chatModel", "llama3.2");
    let action = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
    let backup = json!({
        "schemaVersion": 1, "exportedAt": "2026-04-13T10:15:00Z", "appVersion": "0.1.0",
        "workflows": [
            {"id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "isEnabled": true,
             "priority": 1, "bundleIdentifiers": ["org.mozilla.firefox"], "urlPatterns": [],
             "languageMode": "inherit", "languageHints": [], "promptActionId": action}
        ],
        "dictionaryEntries": [], "snippets": [], "profiles": [], "hotkeys": [], "plugins": [],
        "promptActions": [{"id": action, "name": "Email", "prompt": "Write it as an email.",
                           "isEnabled": true}],
        "history": [], "preferences": {}
    });
    let (code, summary) = http_json(port, "POST", "/v1/settings/import", Some(&backup));
    assert_eq!(code, 200, "{summary}");
    let (_, rules) = http_json(port, "GET", "/v1/rules", None);
    assert_eq!(rules["rules"][0]["prompt_action_id"], action);

    let heard = recorded_text("en-update");
    let events = common::sse_follow(port, "/v1/dictation/events");
    let (_, done) = dictate(port, None, 5.0);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["transcription"]["text"],
        "Dear team, here is the update."
    );
    let within = Duration::from_secs(20);
    let completed = common::next_event(&events, "dictation.completed", within);
    assert_eq!(completed["text"], "Dear team, here is the update.");
    assert_eq!(completed["transcribed_text"], heard.as_str());
    assert!(completed["action_ms"].as_u64().is_some(), "{completed}");
    assert!(
        completed.get("prompt_action_error").is_none(),
        "{completed}"
    );
    let sent = runtime.block_on(working.received_requests()).unwrap();
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(body["messages"][1]["content"], heard.as_str());

    config("chatBaseUrl", &format!("{}/v1", broken.uri()));
    let (_, done) = dictate(port, None, 5.0);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["transcription"]["text"], heard.as_str());
    let completed = common::next_event(&events, "dictation.completed", within);
    assert_eq!(completed["text"], heard.as_str());
    let why = completed["prompt_action_error"].as_str().unwrap();
    assert!(
        why.contains("answered 500") && why.contains("out of memory"),
        "{why}"
    );
    // History keeps both texts (and the failure), as does a backup of it.
    let (_, history) = http_json(port, "GET", "/v1/history", None);
    let (failed, acted) = (&history["entries"][0], &history["entries"][1]);
    assert_eq!(acted["text"], "Dear team, here is the update.");
    assert_eq!(acted["transcribed_text"], heard.as_str());
    assert!(acted.get("prompt_action_error").is_none(), "{acted}");
    assert_eq!(failed["transcribed_text"], heard.as_str());
    assert!(
        failed["prompt_action_error"]
            .as_str()
            .unwrap()
            .contains("answered 500")
    );
    let (_, backup) = http_json(port, "GET", "/v1/settings/export", None);
    assert_eq!(backup["history"][0]["transcribedText"], heard.as_str());
    assert_eq!(
        insertions(home.path()),
        vec!["Dear team, here is the update.".to_string(), heard]
    );
}
