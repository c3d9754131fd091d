//! `verbatim dictation ...` and `verbatim recorder ...` end to end against a sim-mode server:
//! output for people and `--json`, `--wait`, and exit codes for conflicts and failed sessions.

use crate::common;

use std::time::Duration;

use assert_cmd::Command;
use common::{SpawnedServer, serve_scenario};
use predicates::prelude::*;
use serde_json::Value;

const SCENARIO: &str = r#"
[microphone]
sample_rate = 44100
items = [{ clip = "en-founded" }]

[system_audio]
present = false

[engine]
selected_model = "tiny.en"

[models]
"tiny.en" = "present"
"#;

fn cli(server: &SpawnedServer) -> Command {
    let mut command = Command::new(common::binary());
    command
        .env("VERBATIM_HOME", &server.home)
        .env_remove("VERBATIM_API_TOKEN");
    command
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn recorder_commands_record_wait_and_report() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    cli(&server)
        .args(["recorder", "status"])
        .assert()
        .success()
        .stdout("Not recording.\n");
    let started = cli(&server)
        .args([
            "recorder",
            "start",
            "--mic",
            "true",
            "--system-audio",
            "false",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(started.status.success());
    let id = json_of(&started)["id"].as_str().unwrap().to_string();
    cli(&server)
        .args(["recorder", "status"])
        .assert()
        .success()
        .stdout("Recording.\n");
    // A second start is a conflict: exit code 3 with the server's message.
    cli(&server)
        .args(["recorder", "start"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 409 - Already recording\n");
    std::thread::sleep(Duration::from_millis(3800));
    cli(&server)
        .args(["recorder", "stop"])
        .assert()
        .success()
        .stdout(format!("Stopped; session {id} is being finalized.\n"));
    let waited = cli(&server)
        .args(["recorder", "session", &id, "--wait"])
        .output()
        .unwrap();
    assert!(waited.status.success(), "{waited:?}");
    let text = String::from_utf8(waited.stdout).unwrap();
    assert!(text.starts_with("Status: completed\nFile: /"), "{text}");
    assert!(
        text.contains("recording-") && text.ends_with("The company was founded in 2006.\n"),
        "{text}"
    );
    cli(&server)
        .args([
            "recorder",
            "session",
            "0F8FAD5B-D9CB-469F-A165-70867728950E",
        ])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("404 - Recorder session not found"));
    cli(&server)
        .args(["recorder", "start", "--mic", "maybe"])
        .assert()
        .code(1);
}

#[test]
fn dictation_commands_dictate_wait_and_print_the_text() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    cli(&server)
        .args(["dictation", "stop"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 409 - Not recording\n");
    let started = cli(&server).args(["dictation", "start"]).output().unwrap();
    assert!(started.status.success());
    let line = String::from_utf8(started.stdout).unwrap();
    let id = line
        .trim_end()
        .strip_prefix("Dictating; session ")
        .and_then(|rest| rest.strip_suffix('.'))
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    cli(&server)
        .args(["dictation", "status"])
        .assert()
        .success()
        .stdout("State: recording\nModel: tiny.en\n");
    std::thread::sleep(Duration::from_millis(3800));
    cli(&server).args(["dictation", "stop"]).assert().success();
    cli(&server)
        .args(["dictation", "result", &id, "--wait"])
        .assert()
        .success()
        .stdout("The company was founded in 2006.\n");
    let json = cli(&server)
        .args(["dictation", "result", &id, "--json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&json)["transcription"]["words_count"], 6);
    cli(&server)
        .args(["dictation", "start", "--workflow", "nope"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 400 - Missing or invalid 'workflow_id'\n");
}

#[test]
fn a_failed_session_exits_with_code_3_and_its_reason() {
    let home = tempfile::tempdir().unwrap();
    let lost = format!("{SCENARIO}\n[microphone.faults]\nlost_after_seconds = 0.5\n");
    let server = serve_scenario(home.path(), &lost);
    let started = cli(&server)
        .args(["dictation", "start", "--json"])
        .output()
        .unwrap();
    let id = json_of(&started)["id"].as_str().unwrap().to_string();
    cli(&server)
        .args(["dictation", "result", &id, "--wait"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(format!(
            "Dictation {id} failed: The microphone was lost"
        )));
}

/// A dictation whose transcription fails keeps what was said: the error names the WAV kept in
/// the data folder, and `dictation retry` transcribes it again.
#[test]
fn a_failed_transcription_keeps_the_audio_and_retry_transcribes_it() {
    let home = tempfile::tempdir().unwrap();
    let failing = SCENARIO.replace("[engine]\n", "[engine]\nfail_requests = [1]\n");
    let server = serve_scenario(home.path(), &failing);
    let started = cli(&server)
        .args(["dictation", "start", "--json"])
        .output()
        .unwrap();
    let id = json_of(&started)["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(3800));
    cli(&server).args(["dictation", "stop"]).assert().success();
    let failed = cli(&server)
        .args(["dictation", "result", &id, "--wait"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(3));
    let error = String::from_utf8_lossy(&failed.stderr).to_string();
    let kept = server
        .home
        .join("failed-dictations")
        .join(format!("{id}.wav"));
    assert!(
        error.contains(&format!("The audio is kept in {}", kept.display()))
            && error.contains(&format!("`verbatim dictation retry {id}`")),
        "{error}"
    );
    let wav = hound::WavReader::open(&kept).unwrap();
    assert_eq!((wav.spec().sample_rate, wav.spec().channels), (16_000, 1));
    assert!(wav.duration() > 16_000 * 3, "{} samples", wav.duration());

    cli(&server)
        .args(["dictation", "retry", &id])
        .assert()
        .success()
        .stdout("The company was founded in 2006.\n")
        .stderr(predicate::str::contains("the audio stays in"));
    cli(&server)
        .args(["dictation", "retry", "0F8FAD5B-D9CB-469F-A165-70867728950E"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No kept audio for dictation"));
}

/// `verbatim ARGS` against `server`, started now, its output read once it ends.
fn spawn_cli(server: &SpawnedServer, args: &[&str]) -> std::process::Child {
    std::process::Command::new(common::binary())
        .args(args)
        .env("VERBATIM_HOME", &server.home)
        .env_remove("VERBATIM_API_TOKEN")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits at most `within` for `child` to end; its output.
fn finished(mut child: std::process::Child, within: Duration) -> std::process::Output {
    let deadline = std::time::Instant::now() + within;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!(
                "still running after {within:?}: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn watch_prints_each_dictation_as_it_is_transcribed_and_follow_ends_with_its_session() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let expected = common::recorded_text("en-founded");

    let watching = spawn_cli(&server, &["dictation", "watch", "--once"]);
    // Time for the watcher to connect (it hears dictations from then on).
    std::thread::sleep(Duration::from_secs(2));
    let (code, _) = common::http_json(port, "POST", "/v1/dictation/start", None);
    assert_eq!(code, 200);
    std::thread::sleep(Duration::from_secs(5));
    common::http_json(port, "POST", "/v1/dictation/stop", None);
    let watched = finished(watching, Duration::from_secs(20));
    assert!(watched.status.success(), "{watched:?}");
    assert_eq!(
        String::from_utf8_lossy(&watched.stdout),
        format!("{expected}\n")
    );

    let following = spawn_cli(&server, &["dictation", "start", "--follow"]);
    std::thread::sleep(Duration::from_secs(5));
    let (code, stopped) = common::http_json(port, "POST", "/v1/dictation/stop", None);
    assert_eq!(code, 200, "{stopped}");
    let followed = finished(following, Duration::from_secs(20));
    assert!(followed.status.success(), "{followed:?}");
    let printed = String::from_utf8_lossy(&followed.stdout);
    let id = stopped["id"].as_str().unwrap();
    assert_eq!(
        printed,
        format!("Dictating; session {id}.\n{expected}\n"),
        "{followed:?}"
    );
}

#[test]
fn recorder_watch_and_follow_print_each_recordings_text() {
    let home = tempfile::tempdir().unwrap();
    let server = serve_scenario(home.path(), SCENARIO);
    let port = server.discovery.port;
    let expected = common::recorded_text("en-founded");

    let watching = spawn_cli(&server, &["recorder", "watch", "--once"]);
    std::thread::sleep(Duration::from_secs(2));
    let (code, _) = common::http_json(
        port,
        "POST",
        "/v1/recorder/start?mic=1&system_audio=0",
        None,
    );
    assert_eq!(code, 200);
    std::thread::sleep(Duration::from_secs(5));
    common::http_json(port, "POST", "/v1/recorder/stop", None);
    let watched = finished(watching, Duration::from_secs(20));
    assert!(watched.status.success(), "{watched:?}");
    assert_eq!(
        String::from_utf8_lossy(&watched.stdout),
        format!("{expected}\n")
    );

    let following = spawn_cli(
        &server,
        &[
            "recorder",
            "start",
            "--mic",
            "true",
            "--system-audio",
            "false",
            "--follow",
        ],
    );
    std::thread::sleep(Duration::from_secs(5));
    let (code, stopped) = common::http_json(port, "POST", "/v1/recorder/stop", None);
    assert_eq!(code, 200, "{stopped}");
    let followed = finished(following, Duration::from_secs(20));
    assert!(followed.status.success(), "{followed:?}");
    let id = stopped["id"].as_str().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&followed.stdout),
        format!("Recording; session {id}.\n{expected}\n"),
        "{followed:?}"
    );
}
