//! Global hotkeys: the stored slots (`dictation.toggle`, `recorder.start`...) bound to key
//! combinations that work whichever window has the focus. Under X11 the keys are grabbed on the
//! root window ([`x11`]); under Wayland they are registered with the desktop portal's
//! GlobalShortcuts interface ([`portal`]) where the desktop offers it. Elsewhere a log line says
//! to bind `verbatim dictation toggle` in the desktop's keyboard settings instead.
//!
//! Presses are carried out one after the other on the runtime, so a quick start-stop pair is
//! seen in the order it was pressed.

mod bindings;
mod portal;
pub mod shortcut;
pub mod slots;
mod x11;

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::app::App;
use slots::Slot;

/// What the advice in every "hotkeys are off" line says.
pub const FALLBACK_ADVICE: &str = "bind the command `verbatim dictation toggle` to a key in your desktop's keyboard settings instead (it works on every desktop, Wayland included)";

/// The variables that tell which display server a session runs on. Empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionVars {
    /// `XDG_SESSION_TYPE`: `x11`, `wayland`, `tty`...
    pub session_type: Option<String>,
    /// `DISPLAY`.
    pub display: Option<String>,
    /// `WAYLAND_DISPLAY`.
    pub wayland_display: Option<String>,
}

impl SessionVars {
    pub fn from_env() -> SessionVars {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        SessionVars {
            session_type: var("XDG_SESSION_TYPE"),
            display: var("DISPLAY"),
            wayland_display: var("WAYLAND_DISPLAY"),
        }
    }
}

/// Which backend serves the hotkeys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Grab the keys on this X11 display.
    X11 { display: String },
    /// Register them with the desktop portal (a Wayland session).
    Portal,
    /// No global hotkeys, and why.
    Off { reason: String },
}

impl Plan {
    /// One line for people: the backend, or why there is none and what to do instead.
    pub fn describe(&self) -> String {
        match self {
            Plan::X11 { display } => format!("X11: keys grabbed on display {display}"),
            Plan::Portal => {
                "Wayland: keys registered with the desktop portal (GlobalShortcuts), where the desktop offers it"
                    .into()
            }
            Plan::Off { reason } => format!("off: {reason}; {FALLBACK_ADVICE}"),
        }
    }
}

/// The backend for a session: Wayland (by `XDG_SESSION_TYPE` or `WAYLAND_DISPLAY`) uses the
/// portal even with an Xwayland `DISPLAY` beside it, since an X11 grab there only sees keys
/// typed into X11 windows; X11 uses `DISPLAY`.
pub fn plan(vars: &SessionVars, enabled: bool) -> Plan {
    if !enabled {
        return Plan::Off {
            reason: "switched off (--no-hotkeys)".into(),
        };
    }
    let session_type = vars.session_type.as_deref().map(str::to_ascii_lowercase);
    if session_type.as_deref() == Some("wayland") || vars.wayland_display.is_some() {
        return Plan::Portal;
    }
    match &vars.display {
        Some(display) => Plan::X11 {
            display: display.clone(),
        },
        None if session_type.as_deref() == Some("x11") => Plan::Off {
            reason: "the session is X11 but DISPLAY is not set".into(),
        },
        None => Plan::Off {
            reason: "no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set)".into(),
        },
    }
}

/// Where the hotkeys stand, for the log and for a diagnostic command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// `x11` or `portal` while a backend serves the hotkeys; None when they are off.
    pub backend: Option<&'static str>,
    /// What it is doing, or why there are none.
    pub detail: String,
}

impl Status {
    fn off(reason: impl Into<String>) -> Status {
        Status {
            backend: None,
            detail: reason.into(),
        }
    }
}

/// The status a backend keeps up to date.
#[derive(Debug, Clone)]
pub(crate) struct SharedStatus(Arc<Mutex<Status>>);

impl SharedStatus {
    fn set(&self, status: Status) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }

    /// Hotkeys are off for `reason`: logged (warning) with the advice to bind the CLI instead.
    fn give_up(&self, reason: String) {
        tracing::warn!("global hotkeys are off: {reason}; {FALLBACK_ADVICE}");
        self.set(Status::off(reason));
    }
}

/// The running hotkeys of a server.
pub struct Hotkeys {
    status: SharedStatus,
}

impl Hotkeys {
    pub fn status(&self) -> Status {
        self.status
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Where a backend sends the slots whose keys were pressed.
pub(crate) type Presses = mpsc::UnboundedSender<&'static Slot>;

/// Starts the hotkeys `plan` chose for `app`. Call inside the runtime that should carry out
/// the presses; a backend that fails logs why and leaves the server running without hotkeys.
pub fn start(app: Arc<App>, plan: Plan) -> Hotkeys {
    let status = SharedStatus(Arc::new(Mutex::new(Status::off("starting"))));
    match plan {
        Plan::X11 { display } => {
            let presses = dispatch(app.clone());
            x11::spawn(display, app.store.clone(), presses, status.clone());
        }
        Plan::Portal => {
            let presses = dispatch(app.clone());
            tokio::spawn(portal::run(app.store.clone(), presses, status.clone()));
        }
        Plan::Off { reason } => {
            tracing::info!("global hotkeys are off: {reason}");
            status.set(Status::off(reason));
        }
    }
    Hotkeys { status }
}

/// A task that carries out presses in order; answers where to send them.
fn dispatch(app: Arc<App>) -> Presses {
    let (sender, mut receiver) = mpsc::unbounded_channel::<&'static Slot>();
    tokio::spawn(async move {
        while let Some(slot) = receiver.recv().await {
            tracing::debug!("hotkey {} pressed", slot.name);
            slots::perform(&app, slot.action, slot.name).await;
        }
    });
    sender
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(
        session_type: Option<&str>,
        display: Option<&str>,
        wayland: Option<&str>,
    ) -> SessionVars {
        SessionVars {
            session_type: session_type.map(Into::into),
            display: display.map(Into::into),
            wayland_display: wayland.map(Into::into),
        }
    }

    #[test]
    fn the_session_chooses_the_backend() {
        let x11 = |d: &str| Plan::X11 { display: d.into() };
        assert_eq!(plan(&vars(None, Some(":0"), None), true), x11(":0"));
        assert_eq!(plan(&vars(Some("x11"), Some(":1"), None), true), x11(":1"));
        // Xwayland's DISPLAY beside a Wayland session: the portal.
        assert_eq!(
            plan(&vars(None, Some(":0"), Some("wayland-0")), true),
            Plan::Portal
        );
        assert_eq!(
            plan(&vars(Some("Wayland"), Some(":0"), None), true),
            Plan::Portal
        );
        assert_eq!(plan(&vars(Some("wayland"), None, None), true), Plan::Portal);
        let off = |reason: &str| Plan::Off {
            reason: reason.into(),
        };
        assert_eq!(
            plan(&vars(Some("tty"), None, None), true),
            off("no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set)")
        );
        assert_eq!(
            plan(&vars(Some("x11"), None, None), true),
            off("the session is X11 but DISPLAY is not set")
        );
        assert_eq!(
            plan(&vars(None, Some(":0"), None), false),
            off("switched off (--no-hotkeys)")
        );
        assert_eq!(x11(":0").describe(), "X11: keys grabbed on display :0");
        assert!(
            off("no display")
                .describe()
                .starts_with("off: no display; bind the command `verbatim dictation toggle`")
        );
    }
}
