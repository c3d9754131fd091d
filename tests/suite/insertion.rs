//! Insertion backends and the X11 app context against a private Xvfb server, plus the errors for
//! missing displays and tools. Skipped (with a note) where Xvfb is not installed, unless `CI` is
//! set.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::xvfb::Xvfb;

use verbatim::dictation::context::{AppContext, AppContextSource, X11Context, detect_in};
use verbatim::dictation::desktop::DesktopEnv;
use verbatim::dictation::insert::{Clipboard, InsertError, Inserter, SimInserter, Typing};
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, InputFocus, PropMode, Window,
    WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// The clipboard's text, read by xclip from another process.
fn clipboard_text(display: &str) -> String {
    let output = Command::new("timeout")
        .args(["10", "xclip", "-o", "-selection", "clipboard"])
        .env("DISPLAY", display)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A folder holding only the given tools, as links to other programs.
fn tools(links: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, target) in links {
        std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap();
    }
    dir
}

fn with_path(mut env: DesktopEnv, dir: &Path) -> DesktopEnv {
    env.path = Some(dir.as_os_str().to_owned());
    env
}

fn wayland() -> DesktopEnv {
    DesktopEnv {
        wayland_display: Some("wayland-test".into()),
        ..DesktopEnv::headless()
    }
}

fn connect(display: &str) -> (RustConnection, Window) {
    let (conn, screen) = x11rb::connect(Some(display)).unwrap();
    let root = conn.setup().roots[screen].root;
    (conn, root)
}

fn atom(conn: &RustConnection, name: &str) -> u32 {
    conn.intern_atom(false, name.as_bytes())
        .unwrap()
        .reply()
        .unwrap()
        .atom
}

fn create_window(conn: &RustConnection, root: Window) -> Window {
    let window = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        window,
        root,
        0,
        0,
        200,
        100,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new().event_mask(EventMask::KEY_PRESS | EventMask::STRUCTURE_NOTIFY),
    )
    .unwrap();
    window
}

/// Waits until the server has handled every request sent so far.
fn roundtrip(conn: &RustConnection) {
    conn.get_input_focus().unwrap().reply().unwrap();
}

fn set_active(conn: &RustConnection, root: Window, window: Window) {
    let active = atom(conn, "_NET_ACTIVE_WINDOW");
    conn.change_property32(PropMode::REPLACE, root, active, AtomEnum::WINDOW, &[window])
        .unwrap();
    roundtrip(conn);
}

#[test]
fn the_clipboard_backend_sets_the_clipboard_and_returns() {
    let Some(x) = Xvfb::start() else { return };
    let clipboard = Clipboard::new(DesktopEnv::x11(&x.display));
    let text = "Grüße, 日本語 ✓ — \"quoted\" $HOME `id` -n\nsecond line";
    let started = Instant::now();
    clipboard.insert(text).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "xclip was awaited too long"
    );
    assert_eq!(clipboard_text(&x.display), text);
    // The next dictation replaces it.
    clipboard.insert("-selection").unwrap();
    assert_eq!(clipboard_text(&x.display), "-selection");
}

#[test]
fn the_typing_backend_sends_keystrokes_to_the_focused_window() {
    let Some(x) = Xvfb::start() else { return };
    let (conn, root) = connect(&x.display);
    let window = create_window(&conn, root);
    conn.map_window(window).unwrap();
    conn.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match conn.poll_for_event().unwrap() {
            Some(Event::MapNotify(_)) => break,
            Some(_) => {}
            None => {
                assert!(Instant::now() < deadline, "the window was never mapped");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    conn.set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)
        .unwrap();
    roundtrip(&conn);

    let text = "hi é -x";
    Typing::new(DesktopEnv::x11(&x.display))
        .insert(text)
        .unwrap();

    let mut presses = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while presses < text.chars().count() && Instant::now() < deadline {
        match conn.poll_for_event().unwrap() {
            Some(Event::KeyPress(press)) => {
                assert_eq!(press.event, window);
                presses += 1;
            }
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert!(
        presses >= text.chars().count(),
        "only {presses} key presses arrived for {text:?}"
    );
}

#[test]
fn the_x11_context_names_the_active_window() {
    let Some(x) = Xvfb::start() else { return };
    let (conn, root) = connect(&x.display);
    let source = X11Context::new(&x.display).with_timeout(Duration::from_secs(10));

    // No window manager has set _NET_ACTIVE_WINDOW yet.
    assert_eq!(source.current(), AppContext::default());

    let editor = create_window(&conn, root);
    conn.change_property8(
        PropMode::REPLACE,
        editor,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"verbatim-notes\0Org.Example.Notes\0",
    )
    .unwrap();
    let (net_wm_name, utf8) = (atom(&conn, "_NET_WM_NAME"), atom(&conn, "UTF8_STRING"));
    conn.change_property8(
        PropMode::REPLACE,
        editor,
        net_wm_name,
        utf8,
        "Entwurf — Notizen ✓".as_bytes(),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        editor,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"Entwurf - Notizen",
    )
    .unwrap();
    set_active(&conn, root, editor);
    let expected = AppContext {
        app_name: Some("Entwurf — Notizen ✓".into()),
        app_id: Some("Org.Example.Notes".into()),
        url: None,
    };
    assert_eq!(source.query(), Ok(expected.clone()));
    assert_eq!(detect_in(&DesktopEnv::x11(&x.display)).current(), expected);

    // An older client: WM_NAME in Latin-1 only, no class.
    let old = create_window(&conn, root);
    conn.change_property8(
        PropMode::REPLACE,
        old,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"Caf\xe9",
    )
    .unwrap();
    set_active(&conn, root, old);
    assert_eq!(
        source.current(),
        AppContext {
            app_name: Some("Café".into()),
            ..AppContext::default()
        }
    );

    // A window that is gone: an X error, read as no context.
    conn.destroy_window(old).unwrap();
    roundtrip(&conn);
    assert_eq!(source.current(), AppContext::default());

    set_active(&conn, root, 0);
    assert_eq!(source.current(), AppContext::default());
}

#[test]
fn without_a_display_there_is_no_context_and_no_insertion() {
    let env = DesktopEnv::headless();
    assert_eq!(detect_in(&env).current(), AppContext::default());
    for inserter in [
        Box::new(Clipboard::new(env.clone())) as Box<dyn Inserter>,
        Box::new(Typing::new(env.clone())),
    ] {
        let err = inserter.insert("hello").unwrap_err();
        assert!(matches!(err, InsertError::NoDisplay), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("No X11 or Wayland display is available"),
            "{err}"
        );
    }
    // A display nobody serves.
    let source = X11Context::new(":4091").with_timeout(Duration::from_secs(10));
    assert!(source.query().is_err());
    assert_eq!(source.current(), AppContext::default());
}

#[test]
fn missing_tools_are_named_with_what_to_install() {
    let empty = tools(&[]);
    for env in [DesktopEnv::x11(":4090"), wayland()] {
        let env = with_path(env, empty.path());
        let err = Clipboard::new(env.clone()).insert("hello").unwrap_err();
        assert!(matches!(err, InsertError::ClipboardToolMissing), "{err:?}");
        assert_eq!(
            err.to_string(),
            "Inserting into the clipboard needs xclip or xsel (Debian: apt install xclip) under \
             X11, or wl-clipboard under Wayland"
        );
        let err = Typing::new(env).insert("hello").unwrap_err();
        assert!(matches!(err, InsertError::TypingToolMissing), "{err:?}");
        assert!(err.to_string().contains("apt install xdotool"), "{err}");
    }
}

#[test]
fn xsel_is_used_when_xclip_is_missing() {
    let dir = tools(&[("xsel", "/bin/true")]);
    let env = with_path(DesktopEnv::x11(":4090"), dir.path());
    Clipboard::new(env).insert("hello").unwrap();
}

#[test]
fn a_failing_tool_reports_its_complaint() {
    // `ls -selection clipboard` fails with "invalid option" on stderr.
    let dir = tools(&[("xclip", "/bin/ls"), ("xdotool", "/bin/false")]);
    let env = with_path(DesktopEnv::x11(":4090"), dir.path());
    let err = Clipboard::new(env.clone()).insert("hello").unwrap_err();
    assert!(
        matches!(err, InsertError::ToolFailed { tool: "xclip", .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("xclip could not insert the text: "),
        "{err}"
    );
    assert!(err.to_string().contains("invalid option"), "{err}");
    let err = Typing::new(env).insert("hello").unwrap_err();
    assert_eq!(
        err.to_string(),
        "xdotool could not insert the text: it exited with exit status: 1"
    );
}

#[test]
fn a_hung_tool_is_stopped_at_the_timeout() {
    let hang = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tools/hang");
    let dir = tools(&[("xclip", hang)]);
    let mut env = with_path(DesktopEnv::x11(":4090"), dir.path());
    env.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let err = Clipboard::new(env).insert("hello").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(err, InsertError::TimedOut { tool: "xclip", .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("xclip did not finish within 0.3 s"),
        "{err}"
    );
}

#[test]
fn the_sim_inserter_writes_one_json_line_per_insertion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sim/inserted.jsonl");
    let sim = SimInserter::new(&path);
    sim.insert("Hallo Welt").unwrap();
    sim.insert("second\tline ✓").unwrap();
    assert_eq!(sim.inserted(), ["Hallo Welt", "second\tline ✓"]);
    // A second inserter on the same file appends.
    SimInserter::new(&path).insert("third").unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Hallo Welt", "second\tline ✓", "third"]);
    for line in &lines {
        let at = line["at"].as_str().unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(at).is_ok() && at.ends_with('Z'),
            "{at}"
        );
        assert_eq!(line.as_object().unwrap().len(), 2);
    }
}
