//! `verbatim dictation start [--workflow ID] | stop | status | result ID [--wait]`.

use serde_json::json;

use super::super::output::{print_json, text_field};
use super::super::{CliError, Client, Globals};
use super::sessions::{ensure_completed, wait_for_end};

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
            let body = match workflow {
                Some(id) => json!({ "workflow_id": id }),
                None => json!({}),
            };
            let answer = client.post_json("/v1/dictation/start", &body)?;
            if globals.json {
                print_json(&answer);
            } else {
                let workflow = text_field(&answer, "workflow_name");
                let with = if workflow.is_empty() {
                    String::new()
                } else {
                    format!(" with workflow '{workflow}'")
                };
                println!("Dictating{with}; session {}.", text_field(&answer, "id"));
            }
            Ok(())
        }
        DictationCommand::Stop => {
            let answer = client.post_json("/v1/dictation/stop", &json!({}))?;
            if globals.json {
                print_json(&answer);
            } else {
                println!(
                    "Stopped; session {} is being transcribed.",
                    text_field(&answer, "id")
                );
            }
            Ok(())
        }
        DictationCommand::Status => {
            let answer = client.get("/v1/dictation/status")?;
            if globals.json {
                print_json(&answer);
            } else {
                println!("State: {}", text_field(&answer, "state"));
                for (label, key) in [("Model", "active_model"), ("Workflow", "active_workflow")] {
                    let value = text_field(&answer, key);
                    if !value.is_empty() {
                        println!("{label}: {value}");
                    }
                }
            }
            Ok(())
        }
        DictationCommand::Result { id, wait } => {
            let answer = if wait {
                wait_for_end(&client, "/v1/dictation/transcription", &id)?
            } else {
                client.get_with_query("/v1/dictation/transcription", &[("id", id)])?
            };
            if globals.json {
                print_json(&answer);
            } else if let Some(entry) = answer.get("transcription") {
                println!("{}", text_field(entry, "text"));
            } else if text_field(&answer, "status") != "failed" {
                println!("Status: {}", text_field(&answer, "status"));
            }
            ensure_completed(&answer, "Dictation")
        }
    }
}
