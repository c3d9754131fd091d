//! `verbatim recorder start [--mic BOOL] [--system-audio BOOL] | stop | status | session ID [--wait]`.

use serde_json::{Value, json};

use super::super::output::{print_json, text_field};
use super::super::{CliError, Client, Globals};
use super::sessions::{ensure_completed, wait_for_end};

#[derive(Debug, clap::Subcommand)]
pub enum RecorderCommand {
    /// Start a recording (sources not given follow the Recorder preferences).
    Start {
        /// Capture the microphone (true or false).
        #[arg(long, value_parser = clap::value_parser!(bool))]
        mic: Option<bool>,
        /// Capture system audio, what the speakers play (true or false).
        #[arg(long, value_parser = clap::value_parser!(bool))]
        system_audio: Option<bool>,
    },
    /// Stop the recording; it is finalized (and transcribed when enabled).
    Stop,
    /// Show whether the Recorder is recording.
    Status,
    /// Show a session: its status, file and text.
    Session {
        id: String,
        /// Wait until the session has completed or failed.
        #[arg(long)]
        wait: bool,
    },
}

pub fn run(globals: &Globals, command: RecorderCommand) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        RecorderCommand::Start { mic, system_audio } => {
            let mut query = Vec::new();
            if let Some(mic) = mic {
                query.push(("mic", mic.to_string()));
            }
            if let Some(system) = system_audio {
                query.push(("system_audio", system.to_string()));
            }
            let answer = client.send_query("POST", "/v1/recorder/start", &query)?;
            if globals.json {
                print_json(&answer);
            } else {
                println!("Recording; session {}.", text_field(&answer, "id"));
            }
            Ok(())
        }
        RecorderCommand::Stop => {
            let answer = client.post_json("/v1/recorder/stop", &json!({}))?;
            if globals.json {
                print_json(&answer);
            } else {
                println!(
                    "Stopped; session {} is being finalized.",
                    text_field(&answer, "id")
                );
            }
            Ok(())
        }
        RecorderCommand::Status => {
            let answer = client.get("/v1/recorder/status")?;
            if globals.json {
                print_json(&answer);
            } else if answer.get("recording").and_then(Value::as_bool) == Some(true) {
                println!("Recording.");
            } else {
                println!("Not recording.");
            }
            Ok(())
        }
        RecorderCommand::Session { id, wait } => {
            let answer = if wait {
                wait_for_end(&client, "/v1/recorder/session", &id)?
            } else {
                client.get_with_query("/v1/recorder/session", &[("id", id)])?
            };
            if globals.json {
                print_json(&answer);
            } else {
                println!("Status: {}", text_field(&answer, "status"));
                let file = text_field(&answer, "output_file");
                if !file.is_empty() {
                    println!("File: {file}");
                }
                let text = text_field(&answer, "text");
                if !text.is_empty() {
                    println!("{text}");
                }
            }
            ensure_completed(&answer, "Recording")
        }
    }
}
