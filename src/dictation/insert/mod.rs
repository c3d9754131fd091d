//! Where dictated text goes. The port ([`Inserter`], [`InsertError`]) and the choice of adapter by
//! the `dictationInsertion` preference; adapters: the desktop tools ([`tools`]: nowhere, the
//! clipboard or keystrokes) and sim mode's record ([`sim`]).

mod sim;
mod tools;

pub use sim::{Insertion, SimInserter};
pub use tools::{Clipboard, NoInsertion, Typing};

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::desktop::DesktopEnv;

/// Puts dictated text somewhere. Implementations block (they may run a helper tool for up to its
/// timeout): call them from a blocking thread, not from async code.
pub trait Inserter: Send + Sync {
    /// The backend's name: the `dictationInsertion` preference value that selects it, or `sim`.
    fn name(&self) -> &'static str;
    fn insert(&self, text: &str) -> Result<(), InsertError>;
}

/// Why text could not be inserted; the message is shown to the user as the dictation's error.
#[derive(Debug, thiserror::Error)]
pub enum InsertError {
    #[error(
        "No X11 or Wayland display is available to insert text into (neither DISPLAY nor \
         WAYLAND_DISPLAY is set): run Verbatim inside the desktop session or set \
         dictationInsertion to none"
    )]
    NoDisplay,
    #[error(
        "Inserting into the clipboard needs xclip or xsel (Debian: apt install xclip) under X11, \
         or wl-clipboard under Wayland"
    )]
    ClipboardToolMissing,
    #[error(
        "Typing text needs xdotool (Debian: apt install xdotool) under X11, or wtype (Debian: \
         apt install wtype) under Wayland"
    )]
    TypingToolMissing,
    #[error(
        "{tool} did not finish within {} s and was stopped, so the text may not have been \
         inserted; check that the desktop session is responsive",
        seconds(*after)
    )]
    TimedOut { tool: &'static str, after: Duration },
    #[error("{tool} could not insert the text: {detail}")]
    ToolFailed { tool: &'static str, detail: String },
    #[error("Could not run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("Could not record the insertion in {}: {source}", path.display())]
    Record {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// `5` for whole seconds, `0.25` otherwise.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    }
}

/// Which backend dictation inserts with.
#[derive(Clone)]
pub enum InserterChoice {
    /// The one the `dictationInsertion` preference names at each insertion (the desktop).
    Preference,
    /// Always this one (sim mode's record).
    Fixed(Arc<dyn Inserter>),
}

/// The backend the `dictationInsertion` preference names (`none`, `clipboard` or `type`), in this
/// process's desktop session. An unknown value, which the preference store does not accept, gets
/// the preference's default, the clipboard.
pub fn for_preference(value: &str) -> Arc<dyn Inserter> {
    for_preference_in(value, DesktopEnv::from_env())
}

/// [`for_preference`] in the given desktop session.
pub fn for_preference_in(value: &str, env: DesktopEnv) -> Arc<dyn Inserter> {
    match value {
        "none" => Arc::new(NoInsertion),
        "type" => Arc::new(Typing::new(env)),
        _ => Arc::new(Clipboard::new(env)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PrefKind;
    use crate::store::preferences::DICTATION_INSERTION;

    #[test]
    fn every_preference_value_selects_the_backend_of_that_name() {
        let PrefKind::Choice { default, options } = DICTATION_INSERTION.kind else {
            panic!("dictationInsertion is a choice");
        };
        for option in options {
            let inserter = for_preference_in(option, DesktopEnv::headless());
            assert_eq!(inserter.name(), *option);
        }
        assert_eq!(
            for_preference_in("unknown", DesktopEnv::headless()).name(),
            default
        );
    }

    #[test]
    fn without_a_display_the_desktop_backends_say_so() {
        for inserter in [
            for_preference_in("clipboard", DesktopEnv::headless()),
            for_preference_in("type", DesktopEnv::headless()),
        ] {
            let err = inserter.insert("hello").unwrap_err();
            assert!(matches!(err, InsertError::NoDisplay), "{err:?}");
            assert!(err.to_string().contains("No X11 or Wayland display"));
        }
        NoInsertion.insert("hello").unwrap();
    }

    #[test]
    fn timeouts_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(5)), "5");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25");
    }
}
