//! Waiting for a dictation or Recorder session to end: polls its route with a spinner until the
//! status is `completed` or `failed`.

use std::time::Duration;

use serde_json::Value;

use super::super::output::text_field;
use super::super::{CliError, Client};

/// Time between two polls.
const POLL: Duration = Duration::from_millis(250);

/// Polls `path?id=` until the session ends; returns its last answer. A spinner shows the status
/// on a terminal.
pub fn wait_for_end(client: &Client, path: &str, id: &str) -> Result<Value, CliError> {
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(100));
    loop {
        let answer = client.get_with_query(path, &[("id", id.to_string())])?;
        let status = text_field(&answer, "status");
        if status == "completed" || status == "failed" {
            spinner.finish_and_clear();
            return Ok(answer);
        }
        spinner.set_message(format!("{status}..."));
        std::thread::sleep(POLL);
    }
}

/// A session that ended `failed` is an error (exit code 3) carrying the server's reason.
pub fn ensure_completed(answer: &Value, what: &str) -> Result<(), CliError> {
    if text_field(answer, "status") == "failed" {
        let reason = text_field(answer, "error");
        return Err(CliError::SessionFailed(format!(
            "{what} {} failed: {}",
            text_field(answer, "id"),
            if reason.is_empty() {
                "no reason given"
            } else {
                &reason
            }
        )));
    }
    Ok(())
}
