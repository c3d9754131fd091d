//! The hotkey slots Verbatim knows (`dictation.toggle`, `recorder.start`...) and what a press
//! of each does to the running application.

use std::sync::Arc;

use crate::app::App;

/// What a hotkey does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    DictationToggle,
    DictationStart,
    DictationStop,
    RecorderToggle,
    RecorderStart,
    RecorderStop,
}

/// A slot: its stored name, what it does and a line for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub name: &'static str,
    pub action: Action,
    pub description: &'static str,
}

/// Every slot, in the order they are listed.
pub const SLOTS: &[Slot] = &[
    Slot {
        name: "dictation.toggle",
        action: Action::DictationToggle,
        description: "Start dictating when idle, stop when recording",
    },
    Slot {
        name: "dictation.start",
        action: Action::DictationStart,
        description: "Start dictating",
    },
    Slot {
        name: "dictation.stop",
        action: Action::DictationStop,
        description: "Stop dictating; the text is transcribed and inserted",
    },
    Slot {
        name: "recorder.toggle",
        action: Action::RecorderToggle,
        description: "Start the Recorder, or stop it when recording",
    },
    Slot {
        name: "recorder.start",
        action: Action::RecorderStart,
        description: "Start the Recorder",
    },
    Slot {
        name: "recorder.stop",
        action: Action::RecorderStop,
        description: "Stop the Recorder; the recording is finalized",
    },
];

/// A slot name that is none of [`SLOTS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{name}' is not a hotkey slot. Slots: {}", slot_names().join(", "))]
pub struct UnknownSlot {
    pub name: String,
}

/// The slot named `name` (exact, any case).
pub fn find(name: &str) -> Result<&'static Slot, UnknownSlot> {
    SLOTS
        .iter()
        .find(|slot| slot.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| UnknownSlot {
            name: name.to_string(),
        })
}

pub fn slot_names() -> Vec<&'static str> {
    SLOTS.iter().map(|slot| slot.name).collect()
}

/// Carries out `action` on `app` and logs what happened. A press that does not fit the state
/// (stop while idle, a toggle while the last dictation is still being processed) is logged,
/// not an error: nobody is there to answer.
pub async fn perform(app: &Arc<App>, action: Action, slot: &str) {
    match action {
        Action::DictationToggle => match app.dictation.status().await.state {
            "idle" | "error" => start_dictation(app, slot).await,
            "recording" => stop_dictation(app, slot).await,
            busy => tracing::info!(
                "hotkey {slot}: the last dictation is still {busy}; press again once its text is inserted"
            ),
        },
        Action::DictationStart => start_dictation(app, slot).await,
        Action::DictationStop => stop_dictation(app, slot).await,
        Action::RecorderToggle if app.recorder.is_recording().await => {
            stop_recorder(app, slot).await
        }
        Action::RecorderToggle | Action::RecorderStart => {
            match app.recorder.start(None, None).await {
                Ok(id) => tracing::info!(%id, "hotkey {slot}: Recorder started"),
                Err(err) => tracing::warn!("hotkey {slot}: the Recorder did not start: {err}"),
            }
        }
        Action::RecorderStop => stop_recorder(app, slot).await,
    }
}

async fn start_dictation(app: &Arc<App>, slot: &str) {
    match app.dictation.start(None).await {
        Ok(started) => tracing::info!(id = %started.id, "hotkey {slot}: dictation started"),
        Err(err) => tracing::warn!("hotkey {slot}: dictation did not start: {err}"),
    }
}

async fn stop_dictation(app: &Arc<App>, slot: &str) {
    match app.dictation.stop().await {
        Ok(id) => tracing::info!(%id, "hotkey {slot}: dictation stopped; transcribing"),
        Err(err) => tracing::warn!("hotkey {slot}: dictation did not stop: {err}"),
    }
}

async fn stop_recorder(app: &Arc<App>, slot: &str) {
    match app.recorder.stop().await {
        Ok(id) => tracing::info!(%id, "hotkey {slot}: Recorder stopped; finalizing"),
        Err(err) => tracing::warn!("hotkey {slot}: the Recorder did not stop: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_found_by_name_and_unknown_ones_list_the_valid_names() {
        assert_eq!(
            find("dictation.toggle").unwrap().action,
            Action::DictationToggle
        );
        assert_eq!(
            find(" Recorder.Stop ").unwrap().action,
            Action::RecorderStop
        );
        let message = find("dictation.pause").unwrap_err().to_string();
        assert_eq!(
            message,
            "'dictation.pause' is not a hotkey slot. Slots: dictation.toggle, dictation.start, \
             dictation.stop, recorder.toggle, recorder.start, recorder.stop"
        );
    }
}
