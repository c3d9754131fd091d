//! `verbatim config hotkey` (bind, show, list, clear, and the refusals) and `verbatim dictation
//! toggle` against a sim-mode server (start, stop, the refusal while processing) and against a
//! scripted server that loses the start race.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use common::{SpawnedServer, http_json, poll_until_done, write_scenario};
use predicates::prelude::*;
use serde_json::{Value, json};

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(common::binary());
    cmd.env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN");
    cmd
}

fn json_out(cmd: &mut Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn a_hotkey_is_bound_in_canonical_form_shown_listed_and_cleared() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    cli(home)
        .args(["config", "hotkey", "dictation.toggle", "control+alt+SPACE"])
        .assert()
        .success()
        .stdout("dictation.toggle = Ctrl+Alt+Space\n");
    cli(home)
        .args(["config", "hotkey", "Recorder.Start", "win + f9"])
        .assert()
        .success()
        .stdout("recorder.start = Super+F9\n");
    cli(home)
        .args(["config", "hotkey", "dictation.toggle"])
        .assert()
        .success()
        .stdout("dictation.toggle = Ctrl+Alt+Space\n");
    let listed = json_out(cli(home).args(["config", "hotkeys", "--json"]));
    assert_eq!(
        listed,
        json!({
            "dictation.toggle": "Ctrl+Alt+Space",
            "dictation.start": null,
            "dictation.stop": null,
            "recorder.toggle": null,
            "recorder.start": "Super+F9",
            "recorder.stop": null,
        })
    );
    cli(home)
        .args(["config", "hotkey"])
        .assert()
        .success()
        .stdout(
        predicate::str::contains("SLOT              SHORTCUT        ACTION")
            .and(predicate::str::contains(
                "dictation.toggle  Ctrl+Alt+Space  Start dictating when idle, stop when recording",
            ))
            .and(predicate::str::contains("recorder.stop     -")),
    );
    // Rebinding a slot replaces its shortcut.
    cli(home)
        .args(["config", "hotkey", "dictation.toggle", "Ctrl+Shift+D"])
        .assert()
        .success();
    let shown = json_out(cli(home).args(["--json", "config", "hotkey", "dictation.toggle"]));
    assert_eq!(shown, json!({ "dictation.toggle": "Ctrl+Shift+D" }));
    let cleared =
        json_out(cli(home).args(["--json", "config", "hotkey", "dictation.toggle", "--clear"]));
    assert_eq!(cleared, json!({ "dictation.toggle": null }));
    cli(home)
        .args(["config", "hotkey", "dictation.toggle"])
        .assert()
        .success()
        .stdout("dictation.toggle is not bound\n");
}

#[test]
fn bad_slots_shortcuts_and_taken_combinations_are_refused_with_the_valid_choices() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    cli(home)
        .args(["config", "hotkey", "dictation.toggle", "Ctrl+Alt+Space"])
        .assert()
        .success();
    cli(home)
        .args(["config", "hotkey", "dictation.pause", "Ctrl+Alt+P"])
        .assert()
        .code(1)
        .stderr(
            "Error: 'dictation.pause' is not a hotkey slot. Slots: dictation.toggle, \
             dictation.start, dictation.stop, recorder.toggle, recorder.start, recorder.stop\n",
        );
    cli(home)
        .args(["config", "hotkey", "recorder.start", "Ctrl+Alt+Spcae"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::starts_with(
                "Error: 'Ctrl+Alt+Spcae': 'Spcae' is not a key name. Valid keys: A, B,",
            )
            .and(predicate::str::contains("F24, Space, Enter"))
            .and(predicate::str::contains(
                "Modifiers: Ctrl (Control), Alt, Shift, Super (Meta, Win)",
            )),
        );
    for (shortcut, says) in [
        ("Shift+A", "would take a key from typing"),
        ("Ctrl+Alt", "has no key besides its modifiers"),
        ("Ctrl++A", "has an empty part"),
        ("", "the shortcut is empty"),
    ] {
        cli(home)
            .args(["config", "hotkey", "recorder.start", shortcut])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(says));
    }
    // The same combination, however it is spelled, belongs to one slot.
    cli(home)
        .args(["config", "hotkey", "recorder.start", "alt+control+space"])
        .assert()
        .code(1)
        .stderr(
            "Error: Ctrl+Alt+Space is already the hotkey of dictation.toggle; free it first with \
             `verbatim config hotkey dictation.toggle --clear`\n",
        );
    cli(home)
        .args(["config", "hotkey", "--clear"])
        .assert()
        .code(1);
    cli(home)
        .args(["config", "hotkey", "nope", "--clear"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("'nope' is not a hotkey slot"));
    let listed = json_out(cli(home).args(["--json", "config", "hotkeys"]));
    assert_eq!(listed["dictation.toggle"], "Ctrl+Alt+Space");
    assert_eq!(
        listed["recorder.start"],
        Value::Null,
        "nothing refused was stored"
    );
}

#[test]
fn toggle_starts_stops_and_refuses_while_the_last_dictation_is_processed() {
    let home = tempfile::tempdir().unwrap();
    // The microphone says the "update" sentence; each transcription takes 3 s.
    let scenario = write_scenario(
        home.path(),
        &common::microphone_scenario("en-update", "latency_seconds = 3.0"),
    );
    let data = home.path().join("data");
    let server = SpawnedServer::start(
        &data,
        &[
            "--sim",
            "--no-hotkeys",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
    );
    let port = server.discovery.port;
    cli(&data)
        .args(["dictation", "toggle"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Dictating; session "));
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    assert_eq!(status["state"], "recording");
    std::thread::sleep(Duration::from_millis(500));
    let stopped = json_out(cli(&data).args(["dictation", "toggle", "--json"]));
    assert_eq!(stopped["status"], "stopped");
    let id = stopped["id"].as_str().unwrap().to_string();
    // Transcribing takes 3 s: a toggle now is refused, and changes nothing.
    cli(&data)
        .args(["dictation", "toggle"])
        .assert()
        .code(3)
        .stderr(
            "Error: The last dictation is still being transcribed; toggle again once its text is inserted.\n",
        );
    let done = poll_until_done(
        port,
        &format!("/v1/dictation/transcription?id={id}"),
        Duration::from_secs(20),
    );
    assert_eq!(done["status"], "completed", "{done}");
    let started = json_out(cli(&data).args(["dictation", "toggle", "--json"]));
    assert_eq!(started["status"], "recording");
    assert_ne!(started["id"], id.as_str());
}

#[test]
fn toggle_with_nothing_listening_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let port = common::closed_port().to_string();
    cli(home.path())
        .args(["dictation", "toggle", "--port", &port])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Cannot connect"));
}

/// A server that answers each request with the next of `answers` (status, JSON body) and
/// records the request lines; one connection per request.
fn scripted_server(answers: Vec<(u16, Value)>) -> (u16, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (status, body) in answers {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            requests.push(line.trim().to_string());
            let mut length = 0;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                if let Some(value) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body_in = vec![0; length];
            std::io::Read::read_exact(&mut reader, &mut body_in).unwrap();
            let text = body.to_string();
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            )
            .unwrap();
        }
        requests
    });
    (port, handle)
}

#[test]
fn toggle_that_loses_the_start_race_reports_the_recording_it_found() {
    let home = tempfile::tempdir().unwrap();
    let conflict = json!({ "error": { "code": "conflict", "message": "Dictation is not idle" } });
    let recording = json!({ "state": "recording", "is_recording": true });
    let (port, server) = scripted_server(vec![
        (200, json!({ "state": "idle", "is_recording": false })),
        (409, conflict.clone()),
        (200, recording.clone()),
    ]);
    cli(home.path())
        .args(["dictation", "toggle", "--port", &port.to_string()])
        .assert()
        .success()
        .stdout("Dictation was started just now by another client; it is recording.\n");
    assert_eq!(
        server.join().unwrap(),
        [
            "GET /v1/dictation/status HTTP/1.1",
            "POST /v1/dictation/start HTTP/1.1",
            "GET /v1/dictation/status HTTP/1.1",
        ]
    );
    // Lost to a stop instead (the state is not what the toggle wanted): the 409 stands.
    let (port, server) = scripted_server(vec![
        (200, json!({ "state": "idle", "is_recording": false })),
        (409, conflict),
        (200, json!({ "state": "processing", "is_recording": false })),
    ]);
    cli(home.path())
        .args(["dictation", "toggle", "--port", &port.to_string()])
        .assert()
        .code(3)
        .stderr("Error: Server returned 409 - Dictation is not idle\n");
    server.join().unwrap();
}
