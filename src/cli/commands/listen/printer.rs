//! How `verbatim listen` shows a session: each turn's text on its own line, or every event as
//! JSON.

use std::io::{IsTerminal, Write};

use serde_json::Value;

/// Prints the session: each turn's text on its own line (on a terminal, its deltas as they
/// come); with `--json`, every event as a line.
pub(super) struct Printer {
    json: bool,
    terminal: bool,
    line_open: bool,
}

impl Printer {
    pub(super) fn new(json: bool) -> Printer {
        Printer {
            json,
            terminal: std::io::stdout().is_terminal(),
            line_open: false,
        }
    }

    pub(super) fn show(&mut self, event: &Value) {
        let mut out = std::io::stdout();
        let kind = event["type"].as_str().unwrap_or_default();
        if self.json {
            let _ = writeln!(out, "{event}");
        } else {
            match kind {
                "conversation.item.input_audio_transcription.delta" if self.terminal => {
                    let _ = write!(out, "{}", event["delta"].as_str().unwrap_or_default());
                    self.line_open = true;
                }
                "conversation.item.input_audio_transcription.completed" => {
                    let text = event["transcript"].as_str().unwrap_or_default();
                    if self.terminal {
                        if !self.line_open && !text.is_empty() {
                            let _ = write!(out, "{text}");
                        }
                        if self.line_open || !text.is_empty() {
                            let _ = writeln!(out);
                        }
                    } else if !text.is_empty() {
                        let _ = writeln!(out, "{text}");
                    }
                    self.line_open = false;
                }
                "conversation.item.input_audio_transcription.failed" => {
                    let message = event["error"]["message"].as_str().unwrap_or_default();
                    eprintln!("A turn could not be transcribed: {message}");
                }
                _ => {}
            }
        }
        let _ = out.flush();
    }

    pub(super) fn end(&mut self) {
        if self.line_open {
            println!();
            self.line_open = false;
        }
    }
}
