//! The `verbatim` CLI end to end: status, models, config and token, with exit codes.

use crate::common;

use assert_cmd::Command;
use common::{SpawnedServer, closed_port};
use predicates::prelude::*;

fn cli(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(common::binary());
    cmd.env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN");
    cmd
}

#[test]
fn status_prints_text_and_sorted_json() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    cli(tmp.path())
        .arg("status")
        .assert()
        .success()
        .stdout(
            "No model selected and none downloaded: run `verbatim models download tiny.en && verbatim models select tiny.en`\n",
        );
    let out = cli(tmp.path())
        .args(["status", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["status"], "no_model");
    assert_eq!(json["api_version"], "1.1");
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"').and_then(|l| l.split('"').next()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "keys are printed sorted");
}

#[test]
fn nothing_listening_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let port = closed_port().to_string();
    cli(tmp.path())
        .args(["status", "--port", &port])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("Cannot connect").and(predicate::str::contains(port.as_str())),
        );
}

#[test]
fn a_server_error_exits_3_with_its_message() {
    let tmp = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(tmp.path(), &["--require-token"]);
    cli(tmp.path())
        .args(["models", "--api-token", "wrong"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 401 - Missing or invalid API token\n");
    // A token starting with `-` (base64url allows it) is the option's value, not an option.
    cli(tmp.path())
        .args(["models", "--api-token", "-wrong"])
        .assert()
        .code(3)
        .stderr("Error: Server returned 401 - Missing or invalid API token\n");
    // The environment variable is the next source, the discovery file the last.
    cli(tmp.path())
        .arg("models")
        .env("VERBATIM_API_TOKEN", "wrong")
        .assert()
        .code(3);
    let table = predicate::str::is_match(
        r"(?m)^tiny\.en +whisper +Whisper Tiny \(English\) +75 MB +1 +not downloaded$",
    )
    .unwrap();
    cli(tmp.path())
        .arg("models")
        .assert()
        .success()
        .stdout(table);
    let out = cli(tmp.path())
        .args(["models", "--json"])
        .env("VERBATIM_API_TOKEN", &server.discovery.token)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let models = json["models"].as_array().unwrap();
    assert!(
        models
            .iter()
            .any(|m| m["id"] == "base" && m["status"] == "not_configured")
    );
}

#[test]
fn the_port_flag_wins_over_the_discovery_file() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    let port = closed_port().to_string();
    cli(tmp.path())
        .args(["status", "--port", &port])
        .assert()
        .code(2);
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    cli(tmp.path()).arg("no-such-command").assert().code(1);
    cli(tmp.path())
        .args(["status", "--port", "notaport"])
        .assert()
        .code(1);
    cli(tmp.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("serve"));
}

#[test]
fn config_sets_typed_preferences_and_refuses_bad_ones() {
    let tmp = tempfile::tempdir().unwrap();
    cli(tmp.path())
        .args(["config", "get", "apiServerRequiresAuthentication"])
        .assert()
        .success()
        .stdout("apiServerRequiresAuthentication = false\n");
    cli(tmp.path())
        .args(["config", "set", "apiServerRequiresAuthentication", "yes"])
        .assert()
        .success()
        .stdout("apiServerRequiresAuthentication = true\n");
    cli(tmp.path())
        .args(["config", "set", "apiServerPort", "70000"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("from 0 to 65535"));
    cli(tmp.path())
        .args(["config", "set", "noSuchKey", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown preference 'noSuchKey'"));
    let out = cli(tmp.path())
        .args(["config", "list", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["apiServerRequiresAuthentication"], true);
    assert_eq!(json["apiServerPort"], 8978);
}

#[test]
fn switching_auth_on_with_config_applies_to_the_running_server() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    cli(tmp.path())
        .args(["models", "--api-token", "wrong"])
        .assert()
        .success();
    cli(tmp.path())
        .args(["config", "set", "apiServerRequiresAuthentication", "true"])
        .assert()
        .success();
    cli(tmp.path())
        .args(["models", "--api-token", "wrong"])
        .assert()
        .code(3);
    cli(tmp.path()).arg("models").assert().success();
}

#[test]
fn the_configured_port_is_used_by_serve() {
    let tmp = tempfile::tempdir().unwrap();
    let port = closed_port();
    cli(tmp.path())
        .args(["config", "set", "apiServerPort", &port.to_string()])
        .assert()
        .success();
    let child = common::verbatim(tmp.path())
        .arg("serve")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut server = common::SpawnedServer::adopt(child, tmp.path());
    assert_eq!(server.discovery.port, port);
    cli(tmp.path()).arg("status").assert().success();
    server.signal(libc::SIGTERM);
    server.wait_exit();
}

/// Runs `args` with standard output a pipe whose reader has already gone away (`| head` that
/// has read enough): the command ends quietly, killed by SIGPIPE as `ls` would be or done,
/// with nothing on standard error (no panic, no "Broken pipe").
fn run_into_a_closed_pipe(home: &std::path::Path, args: &[&str]) {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    let mut fds = [0; 2];
    // SAFETY: pipe writes two new descriptors into `fds`.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here alone.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    let out = std::process::Command::new(common::binary())
        .env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN")
        .args(args)
        .stdout(std::process::Stdio::from(writer))
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{args:?} printed: {stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{args:?}: {:?}",
        out.status
    );
}

#[test]
fn every_listing_ends_quietly_when_its_reader_goes_away() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &["--sim"]);
    // (history's note on standard error would not be a failure, but this test wants none)
    cli(tmp.path())
        .args(["config", "set", "saveApiTranscriptionsToHistory", "true"])
        .assert()
        .success();
    for args in [
        &["status"][..],
        &["models"],
        &["--json", "models"],
        &["history"],
        &["dictionary", "terms"],
        &["dictionary", "corrections"],
        &["rules"],
        &["snippets"],
        &["profiles"],
        &["prompt-actions"],
        &["config", "list"],
        &["token", "show"],
        &["dictation", "status"],
        &["recorder", "status"],
        &["doctor"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
    ] {
        run_into_a_closed_pipe(tmp.path(), args);
    }
}

/// Runs `command` (a shell line) under `script`, on a pseudo-terminal as a person would: what
/// the terminal showed, and whether the command succeeded.
fn on_a_terminal(home: &std::path::Path, command: &str) -> (String, bool) {
    let out = std::process::Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (bsdutils) runs");
    (
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
        out.status.success(),
    )
}

#[test]
fn people_at_a_terminal_read_what_to_do_instead_of_http() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &[]);
    let bin = common::binary().display().to_string();
    let clip = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio/speech_16k_mono_s16.wav")
        .display()
        .to_string();
    let mut shown_all = String::new();
    let mut show = |label: &str, command: String| -> (String, bool) {
        let (shown, ok) = on_a_terminal(tmp.path(), &command);
        shown_all.push_str(&format!("$ verbatim {label}\n{shown}\n"));
        (shown, ok)
    };

    // A model that is not downloaded: named, with the command that downloads it.
    let (shown, ok) = show(
        "transcribe speech.wav --model base.en",
        format!("{bin} transcribe {clip} --model base.en --no-progress"),
    );
    assert!(!ok);
    assert!(
        shown.contains("Error: The model 'base.en' is not downloaded."),
        "{shown}"
    );
    assert!(
        shown.contains("fix: verbatim models download base.en"),
        "{shown}"
    );
    assert!(
        !shown.contains("Server returned") && !shown.contains("API key"),
        "{shown}"
    );

    // Nothing selected: how to select, or first download.
    let (shown, _) = show(
        "transcribe speech.wav",
        format!("{bin} transcribe {clip} --no-progress"),
    );
    assert!(shown.contains("Error: No model is selected."), "{shown}");
    assert!(
        shown.contains("verbatim models download tiny.en"),
        "{shown}"
    );

    // No file on a terminal: the usage, at once, instead of a silent wait.
    let started = std::time::Instant::now();
    let (shown, ok) = show("transcribe", format!("{bin} transcribe < /dev/tty"));
    assert!(!ok);
    assert!(
        shown.contains("No audio file given. Usage: verbatim transcribe FILE"),
        "{shown}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    // A session id that is not one, and the status of nothing selected.
    show("dictation result 42", format!("{bin} dictation result 42"));
    show("status", format!("{bin} status"));
    common::snapshot_settings()
        .bind(|| insta::assert_snapshot!("cli_errors_for_people", shown_all));

    // Scripts (no terminal) still get the contract's line, and --json the Error object too.
    let out = cli(tmp.path())
        .args(["--json", "transcribe", &clip, "--model", "base.en"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error: Server returned 409 - Engine 'whisper' is not configured"),
        "{stderr}"
    );
    let error: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["code"], "conflict", "{error}");
}

#[test]
fn a_huge_value_is_echoed_cut_short() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &["--sim"]);
    let clip = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio/speech_16k_mono_s16.wav");
    let language = "x".repeat(100_000);
    let out = cli(tmp.path())
        .arg("transcribe")
        .arg(&clip)
        .args(["--language", &language])
        .assert()
        .failure()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.len() < 300, "{} bytes: {stderr}", stderr.len());
    assert!(
        stderr.contains(&format!("'{}…'", "x".repeat(64))),
        "{stderr}"
    );
}

#[test]
fn config_unset_brings_back_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    cli(tmp.path())
        .args(["config", "set", "apiServerPort", "9123"])
        .assert()
        .success();
    cli(tmp.path())
        .args(["config", "unset", "apiServerPort"])
        .assert()
        .success()
        .stdout("apiServerPort = 8978 (default)\n");
    cli(tmp.path())
        .args(["config", "get", "apiServerPort"])
        .assert()
        .success()
        .stdout(predicate::str::contains("8978"));
    cli(tmp.path())
        .args(["config", "unset", "apiServerPort"])
        .assert()
        .success()
        .stdout("apiServerPort = 8978 (default; it was not set)\n");
    cli(tmp.path())
        .args(["config", "unset", "noSuchPreference"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "unknown preference 'noSuchPreference'",
        ));
}

#[test]
fn history_says_when_api_transcriptions_are_not_saved_and_how_to_save_them() {
    let tmp = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(tmp.path(), &["--sim"]);
    cli(tmp.path())
        .arg("history")
        .assert()
        .success()
        .stdout("No history entries.\n")
        .stderr(predicate::str::contains(
            "`verbatim config set saveApiTranscriptionsToHistory true` saves them",
        ));
    cli(tmp.path())
        .args(["config", "set", "saveApiTranscriptionsToHistory", "true"])
        .assert()
        .success();
    cli(tmp.path()).arg("history").assert().success().stderr("");
}

#[test]
fn a_malformed_session_id_is_refused_before_asking_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let port = closed_port().to_string();
    for args in [
        ["dictation", "result", "not-a-uuid"],
        ["recorder", "session", "xyz"],
    ] {
        cli(tmp.path())
            .args(args)
            .args(["--port", &port])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("is not a session id (a UUID"));
    }
}
