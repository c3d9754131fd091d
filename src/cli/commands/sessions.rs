//! What dictation and Recorder sessions share: stopping one, and reading one, optionally
//! waiting for it to end (polling its route with a spinner until it is `completed` or `failed`).

use std::time::Duration;

use serde::de::DeserializeOwned;
use uuid::Uuid;

use super::super::output::print_answer;
use super::super::{CliError, Client, Globals};
use crate::wire::format_uuid;
use crate::wire::sessions::{DictationSession, RecorderSession, SessionState};

/// Time between two polls.
const POLL: Duration = Duration::from_millis(250);

/// What the CLI reads of a polled session.
pub trait Polled: DeserializeOwned {
    /// Its id, its status and, when it failed, why.
    fn state(&self) -> (Uuid, &str, Option<&str>);
}

impl Polled for DictationSession {
    fn state(&self) -> (Uuid, &str, Option<&str>) {
        (self.id, &self.status, self.error.as_deref())
    }
}

impl Polled for RecorderSession {
    fn state(&self) -> (Uuid, &str, Option<&str>) {
        (self.id, &self.status, self.error.as_deref())
    }
}

/// `POST path` that stops a session: prints `Stopped; session ID is being <next>.`.
pub fn stop(globals: &Globals, client: &Client, path: &str, next: &str) -> Result<(), CliError> {
    let answer: SessionState = client.post_empty(path)?;
    print_answer(globals.json, &answer, |answer| {
        println!(
            "Stopped; session {} is being {next}.",
            format_uuid(&answer.id)
        )
    });
    Ok(())
}

/// The session `path?id=` shows; with `wait`, its answer once it has ended (a spinner shows the
/// status on a terminal meanwhile).
pub fn read_session<T: Polled>(
    client: &Client,
    path: &str,
    id: &str,
    wait: bool,
) -> Result<T, CliError> {
    if crate::wire::parse_uuid(id).is_none() {
        return Err(CliError::Local(format!(
            "'{}' is not a session id (a UUID, as `start` and `status` print it)",
            crate::wire::echo(id)
        )));
    }
    let query = [("id", id.to_string())];
    if !wait {
        return client.get_with_query(path, &query);
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(100));
    loop {
        let answer: T = client.get_with_query(path, &query)?;
        let (_, status, _) = answer.state();
        if status == "completed" || status == "failed" {
            spinner.finish_and_clear();
            return Ok(answer);
        }
        spinner.set_message(format!("{status}..."));
        std::thread::sleep(POLL);
    }
}

/// A session that ended `failed` is an error (exit code 3) carrying the server's reason.
pub fn ensure_completed(answer: &impl Polled, what: &str) -> Result<(), CliError> {
    let (id, status, error) = answer.state();
    if status == "failed" {
        return Err(CliError::SessionFailed(format!(
            "{what} {} failed: {}",
            format_uuid(&id),
            error
                .filter(|reason| !reason.is_empty())
                .unwrap_or("no reason given")
        )));
    }
    Ok(())
}
