//! The desktop session: the display dictation inserts into (X11 reachable, Wayland socket), the
//! text insertion tools the `dictationInsertion` preference needs, and the hotkey backend.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Context, Finding, Status};
use crate::dictation::desktop::{DesktopEnv, DisplayServer};
use crate::hotkeys;

const DISPLAY: &str = "display";
const INSERTION: &str = "text insertion";
const HOTKEYS: &str = "hotkeys";

pub fn display(context: &Context) -> Finding {
    let desktop = &context.desktop;
    match desktop.session() {
        None => Finding::fail(
            DISPLAY,
            "no graphical session: DISPLAY and WAYLAND_DISPLAY are not set",
            "run Verbatim inside your desktop session; for the background service run \
             `verbatim service install` from a terminal of that session",
        ),
        Some(DisplayServer::Wayland) => {
            let name = desktop.wayland_display.clone().unwrap_or_default();
            let socket = if Path::new(&name).is_absolute() {
                Some(PathBuf::from(&name))
            } else {
                context.runtime_dir.as_ref().map(|dir| dir.join(&name))
            };
            match socket {
                Some(socket) if socket.exists() => {
                    Finding::ok(DISPLAY, format!("Wayland ({name}, {})", socket.display()))
                }
                _ => Finding::fail(
                    DISPLAY,
                    format!("WAYLAND_DISPLAY is {name} but its socket is not in XDG_RUNTIME_DIR"),
                    "run Verbatim inside your desktop session (XDG_RUNTIME_DIR and \
                     WAYLAND_DISPLAY as the session sets them)",
                ),
            }
        }
        Some(DisplayServer::X11) => {
            let name = desktop.display.clone().unwrap_or_default();
            match connect_x11(&name, desktop.timeout) {
                Ok(()) => Finding::ok(DISPLAY, format!("X11 ({name}) answers")),
                Err(why) => Finding::fail(
                    DISPLAY,
                    format!("the X11 display {name} cannot be reached: {why}"),
                    "check DISPLAY and XAUTHORITY (as `echo $DISPLAY $XAUTHORITY` shows them \
                     in a desktop terminal); for the service, reinstall it from there",
                ),
            }
        }
    }
}

/// Connects to the X server once, giving up after `timeout`.
fn connect_x11(display: &str, timeout: Duration) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let display = display.to_string();
    std::thread::spawn(move || {
        let _ = tx.send(
            x11rb::connect(Some(&display))
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    });
    rx.recv_timeout(timeout)
        .unwrap_or_else(|_| Err(format!("no answer within {} s", timeout.as_secs())))
}

/// With insertion off a display is not needed: its failure is only a warning then.
pub fn relax_unless_inserting(mut check: Finding, insertion: &str) -> Finding {
    if insertion == "none" && check.status == Status::Fail {
        check.status = Status::Warn;
    }
    check
}

/// The tools each insertion mode runs (see `dictation::insert::tools`), any one of a list.
fn tools_for(session: DisplayServer, mode: &str) -> &'static [&'static str] {
    match (session, mode) {
        (DisplayServer::X11, "clipboard") => &["xclip", "xsel"],
        (DisplayServer::X11, "type") => &["xdotool"],
        (DisplayServer::Wayland, "clipboard") => &["wl-copy"],
        (DisplayServer::Wayland, "type") => &["wtype"],
        _ => &[],
    }
}

/// The Debian package that has `tool`.
fn package_of(tool: &str) -> &str {
    match tool {
        "wl-copy" => "wl-clipboard",
        other => other,
    }
}

pub fn insertion_tools(desktop: &DesktopEnv, mode: &str) -> Finding {
    if mode == "none" {
        return Finding::ok(
            INSERTION,
            "off (dictationInsertion = none): dictated text stays in the history",
        );
    }
    let Some(session) = desktop.session() else {
        return Finding::fail(
            INSERTION,
            format!("dictationInsertion = {mode} needs a graphical session, and there is none"),
            "run Verbatim inside your desktop session, or `verbatim config set \
             dictationInsertion none` to keep dictated text in the history only",
        );
    };
    let session_name = match session {
        DisplayServer::X11 => "X11",
        DisplayServer::Wayland => "Wayland",
    };
    let found = |mode: &str| {
        tools_for(session, mode)
            .iter()
            .find(|tool| on_path(desktop, tool))
            .copied()
    };
    let other = if mode == "type" { "clipboard" } else { "type" };
    let also = match found(other) {
        Some(tool) => format!("; {other} would use {tool}"),
        None => format!("; {other} has no tool"),
    };
    match found(mode) {
        Some(tool) => Finding::ok(
            INSERTION,
            format!("{mode} under {session_name} with {tool}{also}"),
        ),
        None => {
            let wanted = tools_for(session, mode);
            Finding::fail(
                INSERTION,
                format!(
                    "dictationInsertion = {mode} under {session_name} needs {}, not installed",
                    wanted.join(" or ")
                ),
                format!("sudo apt install {}", package_of(wanted[0])),
            )
        }
    }
}

/// Whether `tool` is an executable file in the session's search path.
fn on_path(desktop: &DesktopEnv, tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = desktop
        .path
        .clone()
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(tool))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// Where global hotkeys would come from, as `verbatim serve` decides it (`hotkeys::plan`): key
/// grabs on a reachable X11 display; on Wayland the desktop's GlobalShortcuts portal, else a
/// shortcut the user binds to the CLI. Never a failure: dictation also starts from the command
/// line.
pub fn hotkey_backend(desktop: &DesktopEnv, display_reachable: bool) -> Finding {
    const BIND: &str = "bind a keyboard shortcut in your desktop's settings to run \
        `verbatim dictation toggle`";
    let vars = hotkeys::SessionVars {
        session_type: None,
        display: desktop.display.clone(),
        wayland_display: desktop.wayland_display.clone(),
    };
    let plan = hotkeys::plan(&vars, true);
    match plan {
        hotkeys::Plan::X11 { .. } if display_reachable => Finding::ok(HOTKEYS, plan.describe()),
        hotkeys::Plan::X11 { display } => Finding::warn(
            HOTKEYS,
            format!("X11 display {display} cannot be reached: no key grabs"),
            format!("check DISPLAY and XAUTHORITY, or {BIND}"),
        ),
        hotkeys::Plan::Portal => Finding::warn(
            HOTKEYS,
            format!(
                "{}; `verbatim serve` logs whether the desktop accepted them",
                plan.describe()
            ),
            format!("if the log says the portal is missing, {BIND}"),
        ),
        hotkeys::Plan::Off { reason } => Finding::warn(
            HOTKEYS,
            format!("off: {reason}"),
            format!("start dictation from the command line, or {BIND}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tools(tools: &[&str]) -> (tempfile::TempDir, DesktopEnv) {
        use std::os::unix::fs::PermissionsExt;
        let bin = tempfile::tempdir().unwrap();
        for tool in tools {
            let path = bin.path().join(tool);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut env = DesktopEnv::x11(":99");
        env.path = Some(bin.path().as_os_str().to_owned());
        (bin, env)
    }

    #[test]
    fn the_insertion_mode_decides_which_tool_is_needed() {
        let (_bin, env) = with_tools(&["xsel"]);
        let clipboard = insertion_tools(&env, "clipboard");
        assert_eq!(clipboard.status, Status::Ok, "{clipboard:?}");
        assert!(clipboard.detail.contains("xsel"));
        let typing = insertion_tools(&env, "type");
        assert_eq!(typing.status, Status::Fail);
        assert_eq!(typing.fix.unwrap(), "sudo apt install xdotool");
        let mut wayland = env.clone();
        wayland.wayland_display = Some("wayland-0".into());
        assert_eq!(
            insertion_tools(&wayland, "clipboard").fix.unwrap(),
            "sudo apt install wl-clipboard"
        );
        assert_eq!(insertion_tools(&env, "none").status, Status::Ok);
        assert_eq!(
            insertion_tools(&DesktopEnv::headless(), "clipboard").status,
            Status::Fail
        );
    }

    #[test]
    fn hotkeys_are_never_a_failure() {
        let mut wayland = DesktopEnv::headless();
        wayland.wayland_display = Some("wayland-0".into());
        for (env, reachable) in [
            (DesktopEnv::x11(":0"), true),
            (DesktopEnv::x11(":0"), false),
            (wayland, true),
            (DesktopEnv::headless(), false),
        ] {
            assert_ne!(hotkey_backend(&env, reachable).status, Status::Fail);
        }
        assert_eq!(
            hotkey_backend(&DesktopEnv::x11(":0"), true).status,
            Status::Ok
        );
    }
}
