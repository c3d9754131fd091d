//! `verbatim dictation start [--workflow ID] [--follow] | stop | toggle [--workflow ID] |
//! status | result ID [--wait] | retry ID | watch [--once]`.

use super::super::output::{non_empty, print_answer, print_lines};
use super::super::{CliError, Client, Globals};
use super::sessions::{ensure_completed, read_session, stop};
use crate::wire::format_uuid;
use crate::wire::sessions::{DictationSession, DictationStarted, DictationStatus, StartDictation};

#[derive(Debug, clap::Subcommand)]
pub enum DictationCommand {
    /// Start dictating from the microphone (optionally with a workflow).
    Start {
        /// The workflow (rule) id to use; default: the rule matching the focused application.
        #[arg(long)]
        workflow: Option<String>,
        /// Print the text as it is transcribed, until the session ends (stop it from another
        /// terminal, a hotkey or `verbatim dictation stop`).
        #[arg(long)]
        follow: bool,
    },
    /// Stop recording; the text is transcribed and inserted.
    Stop,
    /// Start dictating when idle, stop when recording: the command to bind to a key in the
    /// desktop's keyboard settings. Fails (exit 3) while the last dictation is still being
    /// transcribed or inserted.
    Toggle {
        /// The workflow (rule) id to use when it starts.
        #[arg(long)]
        workflow: Option<String>,
    },
    /// Show the dictation state.
    Status,
    /// Show a session's result.
    Result {
        /// The session id `verbatim dictation start` printed.
        id: String,
        /// Wait until the session has completed or failed.
        #[arg(long)]
        wait: bool,
    },
    /// Transcribe again the audio of a dictation that failed (kept in the data folder's
    /// `failed-dictations/`), and print its text.
    Retry {
        /// The failed session's id (its error names it).
        id: String,
    },
    /// Print every dictation's text as it is transcribed, a line per dictation, as long as
    /// the server runs (`--json`: every event, a JSON object a line).
    Watch {
        /// End after the first dictation that ends.
        #[arg(long)]
        once: bool,
    },
}

pub fn run(globals: &Globals, command: DictationCommand) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        DictationCommand::Start { workflow, follow } => {
            let id = start(globals, &client, workflow)?;
            if follow {
                watch(globals, &client, Some(Some(id)))?;
            }
        }
        DictationCommand::Watch { once } => watch(globals, &client, once.then_some(None))?,
        DictationCommand::Stop => stop(globals, &client, STOP, "transcribed")?,
        DictationCommand::Toggle { workflow } => toggle(globals, &client, workflow)?,
        DictationCommand::Retry { id } => retry(globals, &client, &id)?,
        DictationCommand::Status => {
            let answer: DictationStatus = client.get("/v1/dictation/status")?;
            print_answer(globals.json, &answer, |answer| {
                println!("State: {}", answer.state);
                print_lines(&[
                    ("Model: ", &answer.active_model),
                    ("Workflow: ", &answer.active_workflow),
                ]);
            });
        }
        DictationCommand::Result { id, wait } => {
            let answer: DictationSession =
                read_session(&client, "/v1/dictation/transcription", &id, wait)?;
            print_answer(globals.json, &answer, |answer| {
                match &answer.transcription {
                    Some(entry) if entry.text.trim().is_empty() => {
                        eprintln!("No speech was heard.")
                    }
                    Some(entry) => {
                        println!("{}", entry.text);
                        eprintln!(
                            "(kept in history as {}: `verbatim history` lists it)",
                            crate::wire::format_uuid(&answer.id)
                        );
                    }
                    None if answer.status != "failed" => println!("Status: {}", answer.status),
                    None => {}
                }
            });
            return ensure_completed(&answer, "Dictation");
        }
    }
    Ok(())
}

/// Transcribes the kept audio of the failed session `id` through the local-file route (the
/// server reads the file; nothing is uploaded) and prints the text; the file stays until the
/// person deletes it.
fn retry(globals: &Globals, client: &Client, id: &str) -> Result<(), CliError> {
    let session = crate::wire::parse_uuid(id).ok_or_else(|| {
        CliError::Local(format!(
            "'{}' is not a session id (a UUID, as the failure message names it)",
            crate::wire::echo(id)
        ))
    })?;
    let data = crate::discovery::DataDir::resolve(globals.dev).map_err(CliError::local)?;
    let path = data
        .root()
        .join(crate::dictation::FAILED_AUDIO_FOLDER)
        .join(format!("{}.wav", crate::wire::format_uuid(&session)));
    if !path.is_file() {
        return Err(CliError::Local(format!(
            "No kept audio for dictation {}: {} does not exist (only a dictation whose transcription failed keeps its audio)",
            crate::wire::format_uuid(&session),
            path.display()
        )));
    }
    let body = crate::wire::transcription::LocalFileRequest::new(
        path.display().to_string(),
        &crate::wire::transcription::TranscribeOptions::default(),
    );
    let answer: crate::wire::transcription::Transcription =
        client.send("POST", "/v1/transcribe/local-file", &body)?;
    print_answer(globals.json, &answer, |answer| {
        println!("{}", answer.text);
        eprintln!(
            "(the audio stays in {}; delete it when you have the text)",
            path.display()
        );
    });
    Ok(())
}

/// Says at once, on standard error, when the text will not reach a window (no display, no
/// insertion tool: `verbatim doctor`'s checks), rather than after the person has spoken.
fn warn_if_text_cannot_be_inserted(globals: &Globals) {
    let Ok(context) = crate::doctor::Context::from_env(globals.dev, globals.port) else {
        return;
    };
    if let Some((problem, fix)) = crate::doctor::insertion_problem(&context) {
        eprintln!(
            "Warning: the text cannot be typed into a window here ({problem}); it will be kept in history. Fix: {fix}"
        );
    }
}

const STATUS: &str = "/v1/dictation/status";
const STOP: &str = "/v1/dictation/stop";

/// Starts a dictation; answers its session id.
fn start(globals: &Globals, client: &Client, workflow: Option<String>) -> Result<String, CliError> {
    let body = StartDictation {
        workflow_id: workflow,
    };
    let answer: DictationStarted = client.send("POST", "/v1/dictation/start", &body)?;
    warn_if_text_cannot_be_inserted(globals);
    print_answer(globals.json, &answer, |answer| {
        let with = non_empty(&answer.workflow_name)
            .map(|workflow| format!(" with workflow '{workflow}'"))
            .unwrap_or_default();
        println!("Dictating{with}; session {}.", format_uuid(&answer.id));
    });
    Ok(format_uuid(&answer.id))
}

/// Follows `GET /v1/dictation/events`: prints each committed piece of text as it comes and ends
/// the line when a dictation ends (a failure goes to standard error); on a terminal, the
/// provisional text of what is being said follows it, dimmed, replaced as it changes. With
/// `--json`, every event as a line. `until`: None follows for good; `Some(None)` ends after the
/// first dictation that ends; `Some(Some(id))` after that session ends.
fn watch(
    globals: &Globals,
    client: &Client,
    until: Option<Option<String>>,
) -> Result<(), CliError> {
    use std::io::{IsTerminal, Write};
    let mut out = std::io::stdout();
    let terminal = out.is_terminal() && std::env::var("TERM").is_ok_and(|t| t != "dumb");
    let mut text = WatchedText::new(terminal);
    client.get_events("/v1/dictation/events", |name, data| {
        let event: serde_json::Value = serde_json::from_str(data).map_err(CliError::local)?;
        let id = event["id"].as_str().unwrap_or_default();
        let ours = match &until {
            Some(Some(wanted)) => wanted.eq_ignore_ascii_case(id),
            _ => true,
        };
        if !ours {
            return Ok(true);
        }
        let ended = matches!(name, "dictation.completed" | "dictation.failed");
        if globals.json {
            writeln!(out, "{data}").map_err(CliError::local)?;
        } else {
            text.show(name, &event, &mut out).map_err(CliError::local)?;
            if name == "dictation.failed" {
                let error = event["error"].as_str().unwrap_or_default();
                eprintln!("Dictation {id} failed: {error}");
            }
        }
        out.flush().map_err(CliError::local)?;
        Ok(!(ended && until.is_some()))
    })
}

/// The text `dictation watch` prints: committed pieces on one line per dictation and, on a
/// terminal, the provisional tail after them (dimmed; the cursor is saved before it and
/// restored to replace it).
struct WatchedText {
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
    fn new(terminal: bool) -> WatchedText {
        WatchedText {
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
        match name {
            "conversation.item.input_audio_transcription.delta" => {
                self.erase_tentative(out)?;
                let delta = event["delta"].as_str().unwrap_or_default();
                write!(out, "{}{delta}", self.separator())?;
                self.line_open = true;
            }
            "dictation.tentative" if self.terminal => {
                self.erase_tentative(out)?;
                let tentative = event["text"].as_str().unwrap_or_default().trim();
                if !tentative.is_empty() {
                    let separator = self.separator();
                    write!(out, "{SAVE}{separator}{DIM}{tentative}{PLAIN}")?;
                    self.tentative_shown = true;
                }
            }
            "dictation.completed" | "dictation.failed" => {
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

/// Starts when idle (or after a failed session), stops when recording. A start or stop that
/// loses a race (409: another client, or a hotkey, changed the state between the status read
/// and the request) is fine when the state is now what the toggle asked for; the command then
/// says so (with `--json`, the new status) and succeeds.
fn toggle(globals: &Globals, client: &Client, workflow: Option<String>) -> Result<(), CliError> {
    let status: DictationStatus = client.get(STATUS)?;
    let (result, wanted_recording) = match status.state.as_str() {
        "idle" | "error" => (start(globals, client, workflow).map(drop), true),
        "recording" => (stop(globals, client, STOP, "transcribed"), false),
        busy => {
            let doing = match busy {
                "inserting" => "inserted",
                _ => "transcribed",
            };
            return Err(CliError::Refused(format!(
                "The last dictation is still being {doing}; toggle again once its text is inserted."
            )));
        }
    };
    match result {
        Err(CliError::Server { status: 409, .. }) => {
            let now: DictationStatus = client.get(STATUS)?;
            if now.is_recording != wanted_recording {
                return result;
            }
            print_answer(globals.json, &now, |now| {
                let what = if wanted_recording {
                    "started"
                } else {
                    "stopped"
                };
                println!(
                    "Dictation was {what} just now by another client; it is {}.",
                    now.state
                );
            });
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(terminal: bool, events: &[(&str, serde_json::Value)]) -> String {
        let mut text = WatchedText::new(terminal);
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
