//! The text of live sessions as it comes (`dictation watch`, `dictation start --follow`,
//! `recorder watch`, `recorder start --follow`), from a service's live events.

use super::super::{CliError, Client, Globals};

/// Follows `GET /v1/<service>/events` (`dictation` or `recorder`): prints each committed piece
/// of text as it comes and ends the line when a session ends (a failure goes to standard
/// error); on a terminal, the provisional text of what is being said follows it, dimmed,
/// replaced as it changes. With `--json`, every event as a line. `until`: None follows for
/// good; `Some(None)` ends after the first session that ends; `Some(Some(id))` after that
/// session ends.
pub fn watch(
    globals: &Globals,
    client: &Client,
    service: &str,
    until: Option<Option<String>>,
) -> Result<(), CliError> {
    use std::io::{IsTerminal, Write};
    let mut out = std::io::stdout();
    let terminal = out.is_terminal() && std::env::var("TERM").is_ok_and(|t| t != "dumb");
    let mut text = WatchedText::new(service, terminal);
    let (completed, failed) = (format!("{service}.completed"), format!("{service}.failed"));
    let title = match service {
        "dictation" => "Dictation",
        _ => "Recording",
    };
    client.get_events(&format!("/v1/{service}/events"), |name, data| {
        let event: serde_json::Value = serde_json::from_str(data).map_err(CliError::local)?;
        let id = event["id"].as_str().unwrap_or_default();
        let ours = match &until {
            Some(Some(wanted)) => wanted.eq_ignore_ascii_case(id),
            _ => true,
        };
        if !ours {
            return Ok(true);
        }
        let ended = name == completed || name == failed;
        if globals.json {
            writeln!(out, "{data}").map_err(CliError::local)?;
        } else {
            text.show(name, &event, &mut out).map_err(CliError::local)?;
            if name == failed {
                let error = event["error"].as_str().unwrap_or_default();
                eprintln!("{title} {id} failed: {error}");
            }
        }
        out.flush().map_err(CliError::local)?;
        Ok(!(ended && until.is_some()))
    })
}

/// The text `dictation watch` prints: committed pieces on one line per session and, on a
/// terminal, the provisional tail after them (dimmed; the cursor is saved before it and
/// restored to replace it).
struct WatchedText {
    /// `dictation` or `recorder`: the prefix of the service's own events.
    service: String,
    terminal: bool,
    /// Text of the current dictation has been printed on this line.
    line_open: bool,
    /// A provisional tail is on screen after the saved cursor position.
    tentative_shown: bool,
}

/// Saves the cursor; restores it and erases to the end of the screen; dim; plain.
const SAVE: &str = "\x1b7";
const RESTORE_ERASE: &str = "\x1b8\x1b[J";
const DIM: &str = "\x1b[2m";
const PLAIN: &str = "\x1b[0m";

impl WatchedText {
    fn new(service: &str, terminal: bool) -> WatchedText {
        WatchedText {
            service: service.to_owned(),
            terminal,
            line_open: false,
            tentative_shown: false,
        }
    }

    /// Prints what the event `name` changes.
    fn show(
        &mut self,
        name: &str,
        event: &serde_json::Value,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        let own = name
            .strip_prefix(self.service.as_str())
            .and_then(|n| n.strip_prefix('.'));
        match (name, own) {
            ("conversation.item.input_audio_transcription.delta", _) => {
                self.erase_tentative(out)?;
                let delta = event["delta"].as_str().unwrap_or_default();
                write!(out, "{}{delta}", self.separator())?;
                self.line_open = true;
            }
            (_, Some("tentative")) if self.terminal => {
                self.erase_tentative(out)?;
                let tentative = event["text"].as_str().unwrap_or_default().trim();
                if !tentative.is_empty() {
                    let separator = self.separator();
                    write!(out, "{SAVE}{separator}{DIM}{tentative}{PLAIN}")?;
                    self.tentative_shown = true;
                }
            }
            (_, Some("completed" | "failed")) => {
                self.erase_tentative(out)?;
                if self.line_open {
                    writeln!(out)?;
                    self.line_open = false;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn separator(&self) -> &'static str {
        if self.line_open { " " } else { "" }
    }

    fn erase_tentative(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        if std::mem::take(&mut self.tentative_shown) {
            write!(out, "{RESTORE_ERASE}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(terminal: bool, events: &[(&str, serde_json::Value)]) -> String {
        let mut text = WatchedText::new("dictation", terminal);
        let mut out = Vec::new();
        for (name, event) in events {
            text.show(name, event, &mut out).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    fn dictation() -> Vec<(&'static str, serde_json::Value)> {
        let delta = "conversation.item.input_audio_transcription.delta";
        vec![
            ("dictation.tentative", json!({"text": "The come"})),
            ("dictation.tentative", json!({"text": "The company was"})),
            (delta, json!({"delta": "The company was founded."})),
            ("dictation.tentative", json!({"text": "Go some"})),
            (delta, json!({"delta": "Go somewhere."})),
            (
                "dictation.completed",
                json!({"text": "The company was founded. Go somewhere."}),
            ),
        ]
    }

    #[test]
    fn a_terminal_sees_the_provisional_tail_dimmed_and_replaced() {
        let printed = shown(true, &dictation());
        assert_eq!(
            printed,
            format!(
                "{SAVE}{DIM}The come{PLAIN}{RESTORE_ERASE}{SAVE}{DIM}The company was{PLAIN}\
                 {RESTORE_ERASE}The company was founded.{SAVE} {DIM}Go some{PLAIN}\
                 {RESTORE_ERASE} Go somewhere.\n"
            )
        );
    }

    #[test]
    fn a_pipe_gets_only_committed_text_one_line_per_dictation() {
        let mut events = dictation();
        events.extend(dictation());
        assert_eq!(
            shown(false, &events),
            "The company was founded. Go somewhere.\nThe company was founded. Go somewhere.\n"
        );
    }

    #[test]
    fn a_failure_erases_the_provisional_tail_and_ends_the_line() {
        let events = [
            ("dictation.tentative", json!({"text": "Hel"})),
            (
                "dictation.failed",
                json!({"error": "the microphone was lost"}),
            ),
        ];
        assert_eq!(
            shown(true, &events),
            format!("{SAVE}{DIM}Hel{PLAIN}{RESTORE_ERASE}")
        );
    }
}
