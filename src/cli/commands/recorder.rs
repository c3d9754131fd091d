//! `verbatim recorder start [--mic BOOL] [--system-audio BOOL] [--follow] | stop | status |
//! watch [--once] | session ID [--wait]`.

use super::super::output::{print_answer, print_lines};
use super::super::{CliError, Client, Globals};
use super::live_text::watch;
use super::sessions::{ensure_completed, read_session, stop};
use crate::wire::format_uuid;
use crate::wire::sessions::{RecorderSession, RecorderStatus, SessionState};

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
        /// Print the text as it is transcribed, until the session ends (stop it from another
        /// terminal or with `verbatim recorder stop`).
        #[arg(long)]
        follow: bool,
    },
    /// Stop the recording; it is finalized (and transcribed when enabled).
    Stop,
    /// Show whether the Recorder is recording.
    Status,
    /// Print every recording's text as it is transcribed, a line per recording, as long as
    /// the server runs (`--json`: every event, a JSON object a line).
    Watch {
        /// End after the first recording that ends.
        #[arg(long)]
        once: bool,
    },
    /// Show a session: its status, file and text.
    Session {
        /// The session id `verbatim recorder start` printed.
        id: String,
        /// Wait until the session has completed or failed.
        #[arg(long)]
        wait: bool,
    },
}

pub fn run(globals: &Globals, command: RecorderCommand) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    match command {
        RecorderCommand::Start {
            mic,
            system_audio,
            follow,
        } => {
            let query: Vec<(&str, String)> = [("mic", mic), ("system_audio", system_audio)]
                .into_iter()
                .filter_map(|(name, flag)| Some((name, flag?.to_string())))
                .collect();
            let answer: SessionState = client.send_query("POST", "/v1/recorder/start", &query)?;
            print_answer(globals.json, &answer, |answer| {
                println!("Recording; session {}.", format_uuid(&answer.id))
            });
            if follow {
                watch(
                    globals,
                    &client,
                    "recorder",
                    Some(Some(format_uuid(&answer.id))),
                )?;
            }
        }
        RecorderCommand::Watch { once } => {
            watch(globals, &client, "recorder", once.then_some(None))?
        }
        RecorderCommand::Stop => stop(globals, &client, "/v1/recorder/stop", "finalized")?,
        RecorderCommand::Status => {
            let answer: RecorderStatus = client.get("/v1/recorder/status")?;
            print_answer(globals.json, &answer, |answer| {
                if answer.recording {
                    println!("Recording.");
                } else {
                    println!("Not recording.");
                }
            });
        }
        RecorderCommand::Session { id, wait } => {
            let answer: RecorderSession = read_session(&client, "/v1/recorder/session", &id, wait)?;
            print_answer(globals.json, &answer, |answer| {
                println!("Status: {}", answer.status);
                print_lines(&[("File: ", &answer.output_file), ("", &answer.text)]);
            });
            return ensure_completed(&answer, "Recording");
        }
    }
    Ok(())
}
