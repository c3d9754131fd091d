//! `verbatim dictation start [--workflow ID] | stop | status | result ID [--wait]`.

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
    },
    /// Stop recording; the text is transcribed and inserted.
    Stop,
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
}

pub fn run(globals: &Globals, command: DictationCommand) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        DictationCommand::Start { workflow } => {
            let body = StartDictation {
                workflow_id: workflow,
            };
            let answer: DictationStarted = client.send("POST", "/v1/dictation/start", &body)?;
            print_answer(globals.json, &answer, |answer| {
                let with = non_empty(&answer.workflow_name)
                    .map(|workflow| format!(" with workflow '{workflow}'"))
                    .unwrap_or_default();
                println!("Dictating{with}; session {}.", format_uuid(&answer.id));
            });
        }
        DictationCommand::Stop => stop(globals, &client, "/v1/dictation/stop", "transcribed")?,
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
                if let Some(entry) = &answer.transcription {
                    println!("{}", entry.text);
                } else if answer.status != "failed" {
                    println!("Status: {}", answer.status);
                }
            });
            return ensure_completed(&answer, "Dictation");
        }
    }
    Ok(())
}
