//! The desktop session dictation works in: which display (X11 or Wayland) it can reach and where
//! the helper tools are found. Read from the environment once, passed explicitly after that.

use std::ffi::OsString;
use std::time::Duration;

/// The display server a session runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayServer {
    Wayland,
    X11,
}

/// What the insertion backends and the app context source see of the desktop session.
///
/// Tests build one by hand instead of changing the process environment.
#[derive(Debug, Clone, PartialEq)]
pub struct DesktopEnv {
    /// The X11 display (`DISPLAY`), e.g. `:0`.
    pub display: Option<String>,
    /// The Wayland display (`WAYLAND_DISPLAY`), e.g. `wayland-0`.
    pub wayland_display: Option<String>,
    /// The search path for the helper tools (`PATH`); None: the process's own.
    pub path: Option<OsString>,
    /// How long one helper tool or X11 query may take before it is abandoned.
    pub timeout: Duration,
}

impl DesktopEnv {
    /// How long a helper tool may run unless told otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// The session of this process: `DISPLAY`, `WAYLAND_DISPLAY` and `PATH` (empty values count
    /// as unset).
    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        DesktopEnv {
            display: var("DISPLAY"),
            wayland_display: var("WAYLAND_DISPLAY"),
            path: std::env::var_os("PATH"),
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// A session with no display at all (a server or a container).
    pub fn headless() -> Self {
        DesktopEnv {
            display: None,
            wayland_display: None,
            path: None,
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// An X11 session on `display` only.
    pub fn x11(display: impl Into<String>) -> Self {
        DesktopEnv {
            display: Some(display.into()),
            ..Self::headless()
        }
    }

    /// Wayland when `WAYLAND_DISPLAY` is set (even with an X11 display beside it, as under
    /// Xwayland), else X11 when `DISPLAY` is set, else None.
    pub fn session(&self) -> Option<DisplayServer> {
        if self.wayland_display.is_some() {
            Some(DisplayServer::Wayland)
        } else if self.display.is_some() {
            Some(DisplayServer::X11)
        } else {
            None
        }
    }

    /// A command for a helper tool that runs in this session: its `DISPLAY`, `WAYLAND_DISPLAY`
    /// and `PATH` (which is also where the program is looked up) replace the process's own.
    pub(crate) fn command(&self, program: &str) -> std::process::Command {
        let mut command = std::process::Command::new(program);
        for (name, value) in [
            ("DISPLAY", &self.display),
            ("WAYLAND_DISPLAY", &self.wayland_display),
        ] {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        if let Some(path) = &self.path {
            command.env("PATH", path);
        }
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wayland_wins_over_x11_and_nothing_means_no_session() {
        let mut env = DesktopEnv::x11(":0");
        assert_eq!(env.session(), Some(DisplayServer::X11));
        env.wayland_display = Some("wayland-0".into());
        assert_eq!(env.session(), Some(DisplayServer::Wayland));
        assert_eq!(DesktopEnv::headless().session(), None);
    }
}
