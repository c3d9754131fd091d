//! Every error of the dictation and Recorder routes, in process on sim devices, each body in an
//! insta snapshot (`snapshots/session_*.snap`) with its status.

use crate::common;

use axum::body::Body;
use common::{TestApp, json_request, request, send};
use serde_json::{Value, json};

/// A microphone, no system audio, and a transcription slow enough to catch `finalizing`.
const SCENARIO: &str = r#"
[microphone]
items = [{ clip = "en-hello" }]

[system_audio]
present = false

[engine]
selected_model = "tiny.en"
latency_seconds = 2.0

[models]
"tiny.en" = "present"
"#;

const NO_MICROPHONE: &str = r#"
[microphone]
present = false

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"#;

async fn call(app: &TestApp, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let req = match body {
        Some(body) => json_request(method, path, &body),
        None => request(method, path).body(Body::empty()).unwrap(),
    };
    let (status, _, body) = send(&app.router(), req).await;
    (status.as_u16(), body)
}

fn snapshot(name: &str, status: u16, body: Value) {
    insta::assert_json_snapshot!(
        format!("session_{name}"),
        json!({ "status": status, "body": body })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn recorder_errors() {
    let _snapshots = common::snapshot_settings().bind_to_scope();
    let app = TestApp::with_scenario(SCENARIO);
    let cases = [
        ("recorder_stop_idle", "POST", "/v1/recorder/stop"),
        (
            "recorder_invalid_mic",
            "POST",
            "/v1/recorder/start?mic=maybe",
        ),
        (
            "recorder_invalid_system_audio",
            "POST",
            "/v1/recorder/start?system_audio=on",
        ),
        (
            "recorder_no_source",
            "POST",
            "/v1/recorder/start?mic=0&system_audio=false",
        ),
        (
            "recorder_no_system_audio",
            "POST",
            "/v1/recorder/start?mic=0&system_audio=1",
        ),
        (
            "recorder_session_not_found",
            "GET",
            "/v1/recorder/session?id=0F8FAD5B-D9CB-469F-A165-70867728950E",
        ),
        (
            "recorder_session_bad_id",
            "GET",
            "/v1/recorder/session?id=42",
        ),
    ];
    for (name, method, path) in cases {
        let (status, body) = call(&app, method, path, None).await;
        snapshot(name, status, body);
    }
    let (status, _) = call(
        &app,
        "POST",
        "/v1/recorder/start?mic=1&system_audio=0",
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = call(&app, "POST", "/v1/recorder/start", None).await;
    snapshot("recorder_already_recording", status, body);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (status, _) = call(&app, "POST", "/v1/recorder/stop", None).await;
    assert_eq!(status, 200);
    let (status, body) = call(&app, "POST", "/v1/recorder/start?mic=1", None).await;
    snapshot("recorder_finalizing", status, body);
    let (status, body) = call(&app, "GET", "/v1/recorder/status", None).await;
    assert_eq!((status, body), (200, json!({ "recording": false })));
}

#[tokio::test(flavor = "multi_thread")]
async fn dictation_errors() {
    let _snapshots = common::snapshot_settings().bind_to_scope();
    let app = TestApp::with_scenario(SCENARIO);
    let mut disabled = verbatim::store::Workflow {
        id: uuid::Uuid::new_v4(),
        name: "Off".into(),
        ..Default::default()
    };
    disabled.enabled = false;
    app.app.store.add_workflow(&disabled).unwrap();
    let start = "/v1/dictation/start";
    let cases = [
        ("dictation_stop_idle", "POST", "/v1/dictation/stop", None),
        (
            "dictation_invalid_workflow_id",
            "POST",
            start,
            Some(json!({ "workflow_id": "mail" })),
        ),
        (
            "dictation_workflow_not_found",
            "POST",
            start,
            Some(json!({ "workflow_id": "0F8FAD5B-D9CB-469F-A165-70867728950E" })),
        ),
        (
            "dictation_workflow_disabled",
            "POST",
            start,
            Some(json!({ "workflow_id": disabled.id.to_string() })),
        ),
        (
            "dictation_session_not_found",
            "GET",
            "/v1/dictation/transcription?id=0F8FAD5B-D9CB-469F-A165-70867728950E",
            None,
        ),
        (
            "dictation_session_missing_id",
            "GET",
            "/v1/dictation/transcription",
            None,
        ),
    ];
    for (name, method, path, body) in cases {
        let (status, body) = call(&app, method, path, body).await;
        snapshot(name, status, body);
    }
    let (status, _) = call(&app, "POST", start, None).await;
    assert_eq!(status, 200);
    let (status, body) = call(&app, "POST", start, None).await;
    snapshot("dictation_not_idle", status, body);
    let (status, _) = call(&app, "POST", "/v1/dictation/stop", None).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_microphone_errors() {
    let _snapshots = common::snapshot_settings().bind_to_scope();
    let app = TestApp::with_scenario(NO_MICROPHONE);
    let (status, body) = call(&app, "POST", "/v1/dictation/start", None).await;
    snapshot("dictation_no_microphone", status, body);
    let (status, body) = call(&app, "POST", "/v1/recorder/start?mic=1", None).await;
    snapshot("recorder_no_microphone", status, body);
}
