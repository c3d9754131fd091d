//! The stored hotkeys as the backends use them: each slot with its parsed shortcut, re-read
//! from the store on a short period so that `verbatim config hotkey` (or an import) applies to a
//! running server without a restart.

use std::time::Duration;

use super::shortcut::Shortcut;
use super::slots::{self, Slot};
use crate::store::{Hotkey, Store};

/// How often the backends look for changed bindings: one small read of the store.
pub const POLL: Duration = Duration::from_secs(1);

/// A slot bound to a valid shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub slot: &'static Slot,
    pub shortcut: Shortcut,
}

/// The bindings of `hotkeys`; stored slots this build does not know and shortcuts it cannot
/// read (from an imported backup, say) are logged and left out.
pub fn resolve(hotkeys: &[Hotkey]) -> Vec<Binding> {
    hotkeys
        .iter()
        .filter_map(|hotkey| {
            let slot = slots::find(&hotkey.slot)
                .inspect_err(|_| {
                    tracing::warn!(
                        "hotkey slot '{}' ({}) is not one this version knows; ignored",
                        hotkey.slot,
                        hotkey.shortcut
                    )
                })
                .ok()?;
            let shortcut = hotkey
                .shortcut
                .parse::<Shortcut>()
                .inspect_err(|err| {
                    tracing::warn!(
                        "hotkey {} is ignored: {err}. Set it again with `verbatim config hotkey {} SHORTCUT`",
                        slot.name,
                        slot.name
                    )
                })
                .ok()?;
            Some(Binding { slot, shortcut })
        })
        .collect()
}

/// Tells when the stored hotkeys changed.
#[derive(Debug, Default)]
pub struct Watch {
    last: Option<Vec<Hotkey>>,
}

impl Watch {
    /// The bindings when they differ from the last call's (always on the first call); None when
    /// unchanged or when the store could not be read (logged). Blocks on the store.
    pub fn changed(&mut self, store: &Store) -> Option<Vec<Binding>> {
        let hotkeys = match store.hotkeys() {
            Ok(hotkeys) => hotkeys,
            Err(err) => {
                tracing::warn!("cannot read the hotkeys: {err}");
                return None;
            }
        };
        if self.last.as_ref() == Some(&hotkeys) {
            return None;
        }
        let bindings = resolve(&hotkeys);
        self.last = Some(hotkeys);
        Some(bindings)
    }
}

/// `slot (Shortcut), ...` for a log line; `none` when empty.
pub fn describe(bindings: &[Binding]) -> String {
    if bindings.is_empty() {
        return "none".into();
    }
    bindings
        .iter()
        .map(|b| format!("{} ({})", b.slot.name, b.shortcut))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    #[test]
    fn unknown_slots_and_unreadable_shortcuts_are_left_out() {
        let hotkeys = [
            ("dictation.toggle", "control+alt+space"),
            ("dictation.pause", "Ctrl+P"),
            ("recorder.start", "Ctrl+Hyper+R"),
        ]
        .map(|(slot, shortcut)| Hotkey {
            slot: slot.into(),
            shortcut: shortcut.into(),
        });
        let bindings = resolve(&hotkeys);
        assert_eq!(describe(&bindings), "dictation.toggle (Ctrl+Alt+Space)");
    }

    #[test]
    fn a_change_is_reported_once() {
        let (_dir, store) = temp_store();
        let mut watch = Watch::default();
        assert_eq!(watch.changed(&store), Some(vec![]));
        assert_eq!(watch.changed(&store), None);
        let hotkey = Hotkey {
            slot: "recorder.stop".into(),
            shortcut: "Super+F8".into(),
        };
        store.bind_hotkey(&hotkey, |_| false).unwrap();
        let changed = watch.changed(&store).unwrap();
        assert_eq!(describe(&changed), "recorder.stop (Super+F8)");
        assert_eq!(watch.changed(&store), None);
    }
}
