//! Global hotkeys end to end: `verbatim serve --sim` on a private Xvfb display, keys bound with
//! `verbatim config hotkey`, pressed with xdotool; dictation and the Recorder start and stop, a
//! binding changed while serving applies, a key another program holds is reported, and sessions
//! without X11 (Wayland with no portal, no display) say what to do instead. The Xvfb tests are
//! skipped (with a note) where Xvfb or xdotool is missing, unless `CI` is set.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{ChildStderr, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use common::xvfb::Xvfb;
use common::{SpawnedServer, http_json, poll_until_done, recorded_text, verbatim, write_scenario};
use serde_json::Value;

/// A generous bound for anything the server does after a key press, on a loaded machine.
const LIMIT: Duration = Duration::from_secs(15);

/// The server's log, line by line, as it is written.
struct Log {
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Log {
    fn follow(stderr: ChildStderr) -> Log {
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Log {
            lines,
            seen: Vec::new(),
        }
    }

    /// The first line not yet returned that contains every one of `needles`, waiting up to
    /// [`LIMIT`] for it.
    fn wait_for(&mut self, needles: &[&str]) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = needles.iter().all(|n| line.contains(n));
                    self.seen.push(line.clone());
                    if found {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => panic!(
                    "no log line with {needles:?} within {LIMIT:?}; the log:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

/// The id a log line names (`id=...`), upper-case as the API writes it.
fn logged_id(line: &str) -> String {
    let id = line.split("id=").nth(1).expect("no id in the line");
    id.split_whitespace().next().unwrap().to_uppercase()
}

/// `verbatim serve --sim` on the scenario with exactly the given session variables (the
/// developer's own `DISPLAY` and the like are removed), its log followed.
fn serve(home: &Path, session: &[(&str, &str)], extra: &[&str]) -> (SpawnedServer, Log) {
    // The microphone says the "update" sentence (4.2 s); system audio is absent.
    let scenario = write_scenario(home, &common::microphone_scenario("en-update", ""));
    let data = home.join("data");
    let mut command = verbatim(&data);
    for name in [
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_SESSION_TYPE",
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        command.env_remove(name);
    }
    command.envs(session.iter().copied());
    let mut child = command
        .args(["serve", "--port", "0", "--sim", "--scenario"])
        .arg(&scenario)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = Log::follow(child.stderr.take().unwrap());
    (SpawnedServer::adopt(child, &data), log)
}

/// `verbatim config hotkey SLOT SHORTCUT` on the data folder of `home`.
fn bind(home: &Path, slot: &str, shortcut: &str) {
    let output = verbatim(&home.join("data"))
        .args(["config", "hotkey", slot, shortcut])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

/// Polls `path` until `done(answer)` (at most [`LIMIT`]); answers the last answer.
fn poll(port: u16, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let (code, body) = http_json(port, "GET", path, None);
        assert_eq!(code, 200, "{path}: {body}");
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} never got there: {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn dictation_state(port: u16) -> String {
    let (_, status) = http_json(port, "GET", "/v1/dictation/status", None);
    status["state"].as_str().unwrap_or_default().to_string()
}

#[test]
fn one_key_starts_a_dictation_and_the_same_key_stops_it() {
    let Some(x) = Xvfb::start() else { return };
    let home = tempfile::tempdir().unwrap();
    bind(home.path(), "dictation.toggle", "Ctrl+Alt+Space");
    let (server, mut log) = serve(home.path(), &[("DISPLAY", &x.display)], &[]);
    let port = server.discovery.port;
    log.wait_for(&["global hotkeys (X11", "dictation.toggle (Ctrl+Alt+Space)"]);
    assert_eq!(dictation_state(port), "idle");

    x.key("ctrl+alt+space");
    let started = log.wait_for(&["hotkey dictation.toggle: dictation started"]);
    let id = logged_id(&started);
    poll(port, "/v1/dictation/status", |s| s["state"] == "recording");
    // The whole sentence (4.2 s), then the same key again.
    std::thread::sleep(Duration::from_millis(4600));
    x.key("ctrl+alt+space");
    let stopped = log.wait_for(&["hotkey dictation.toggle: dictation stopped"]);
    assert_eq!(logged_id(&stopped), id);
    let path = format!("/v1/dictation/transcription?id={id}");
    let done = poll_until_done(port, &path, LIMIT);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["transcription"]["text"].as_str(),
        Some(recorded_text("en-update").as_str())
    );
    assert_eq!(dictation_state(port), "idle");
}

#[test]
fn recorder_keys_work_through_caps_lock_and_a_binding_changed_while_serving_applies() {
    let Some(x) = Xvfb::start() else { return };
    let home = tempfile::tempdir().unwrap();
    bind(home.path(), "recorder.start", "Ctrl+Alt+R");
    bind(home.path(), "recorder.stop", "ctrl+alt+s");
    let (server, mut log) = serve(home.path(), &[("DISPLAY", &x.display)], &[]);
    let port = server.discovery.port;
    let recording =
        |port| http_json(port, "GET", "/v1/recorder/status", None).1["recording"] == true;
    log.wait_for(&["recorder.start (Ctrl+Alt+R)", "recorder.stop (Ctrl+Alt+S)"]);

    // CapsLock on: the grab of the lock variant still catches the press.
    x.key("Caps_Lock");
    x.key("ctrl+alt+r");
    let id = logged_id(&log.wait_for(&["hotkey recorder.start: Recorder started"]));
    assert!(recording(port));
    x.key("Caps_Lock");
    x.key("ctrl+alt+s");
    log.wait_for(&["hotkey recorder.stop: Recorder stopped"]);
    let done = poll_until_done(port, &format!("/v1/recorder/session?id={id}"), LIMIT);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(!recording(port));

    // Rebound while serving: the old key is released, the new one grabbed.
    bind(home.path(), "recorder.start", "Super+F9");
    log.wait_for(&["recorder.start (Super+F9)"]);
    x.key("ctrl+alt+r");
    x.key("super+F9");
    let line = log.wait_for(&["hotkey recorder."]);
    assert!(
        line.contains("hotkey recorder.start: Recorder started"),
        "{line}"
    );
    assert!(recording(port));
    // One start only: the released Ctrl+Alt+R did nothing (a second start would be refused
    // and logged before this stop).
    x.key("ctrl+alt+s");
    let line = log.wait_for(&["hotkey recorder."]);
    assert!(
        line.contains("hotkey recorder.stop: Recorder stopped"),
        "{line}"
    );
}

#[test]
fn a_key_another_program_holds_is_reported_with_the_fix() {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ConnectionExt, GrabMode, ModMask};
    let Some(x) = Xvfb::start() else { return };
    // Another client takes Ctrl+Alt+Space first (keycode 65 is Space in Xvfb's keymap).
    let (conn, screen) = x11rb::connect(Some(&x.display)).unwrap();
    let root = conn.setup().roots[screen].root;
    let space = {
        let setup = conn.setup();
        let (first, count) = (setup.min_keycode, setup.max_keycode - setup.min_keycode + 1);
        let map = conn
            .get_keyboard_mapping(first, count)
            .unwrap()
            .reply()
            .unwrap();
        let per = usize::from(map.keysyms_per_keycode);
        let index = map
            .keysyms
            .chunks(per)
            .position(|row| row[0] == 0x20)
            .unwrap();
        first + index as u8
    };
    let mods = ModMask::CONTROL | ModMask::M1;
    conn.grab_key(false, root, mods, space, GrabMode::ASYNC, GrabMode::ASYNC)
        .unwrap()
        .check()
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    bind(home.path(), "dictation.toggle", "Ctrl+Alt+Space");
    let (_server, mut log) = serve(home.path(), &[("DISPLAY", &x.display)], &[]);
    let line = log.wait_for(&["hotkey dictation.toggle (Ctrl+Alt+Space)"]);
    assert!(line.contains("another program already holds"), "{line}");
    assert!(
        line.contains("verbatim config hotkey dictation.toggle SHORTCUT"),
        "{line}"
    );
}

#[test]
fn wayland_without_a_portal_and_no_display_say_to_bind_the_toggle_command() {
    let home = tempfile::tempdir().unwrap();
    bind(home.path(), "dictation.toggle", "Ctrl+Alt+Space");
    let (mut server, mut log) = serve(
        home.path(),
        &[
            ("WAYLAND_DISPLAY", "wayland-test"),
            ("XDG_SESSION_TYPE", "wayland"),
            ("DISPLAY", ":0"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"),
        ],
        &[],
    );
    let line = log.wait_for(&["global hotkeys are off"]);
    assert!(line.contains("GlobalShortcuts"), "{line}");
    assert!(
        line.contains("bind the command `verbatim dictation toggle`"),
        "{line}"
    );
    // The server goes on serving.
    assert_eq!(dictation_state(server.discovery.port), "idle");
    let _ = server.child.kill();
    let _ = server.child.wait();

    let home = tempfile::tempdir().unwrap();
    let (_server, mut log) = serve(home.path(), &[], &[]);
    let line = log.wait_for(&["global hotkeys are off"]);
    assert!(line.contains("no graphical session"), "{line}");
    let home = tempfile::tempdir().unwrap();
    let (_server, mut log) = serve(home.path(), &[("DISPLAY", ":0")], &["--no-hotkeys"]);
    let line = log.wait_for(&["global hotkeys are off"]);
    assert!(line.contains("--no-hotkeys"), "{line}");
}
