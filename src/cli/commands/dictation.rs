//! `verbatim dictation start [--workflow ID] [--follow] | stop | toggle [--workflow ID] |
//! status | result ID [--wait] | retry ID | watch [--once]`.

use super::super::output::{non_empty, print_answer, print_lines};
use super::super::{CliError, Client, Globals};
use super::live_text::watch;
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
                watch(globals, &client, "dictation", Some(Some(id)))?;
            }
        }
        DictationCommand::Watch { once } => {
            watch(globals, &client, "dictation", once.then_some(None))?
        }
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
