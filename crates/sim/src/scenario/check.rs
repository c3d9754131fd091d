//! The checks every part of a scenario shares: errors that name their key and where the
//! scenario came from, and times in seconds.

use super::ScenarioError;

/// Longest item or fault time accepted, in seconds (one day).
pub(super) const MAX_SECONDS: f64 = 86_400.0;

/// Checks values of the scenario read from `origin`.
pub(super) struct Check<'a> {
    origin: &'a str,
}

impl<'a> Check<'a> {
    pub(super) fn new(origin: &'a str) -> Check<'a> {
        Check { origin }
    }

    pub(super) fn error(
        &self,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Invalid {
            origin: self.origin.to_owned(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// A time in seconds: finite, 0 or more, at most a day.
    pub(super) fn seconds(&self, key: &str, value: f64) -> Result<f64, ScenarioError> {
        if value.is_finite() && (0.0..=MAX_SECONDS).contains(&value) {
            Ok(value)
        } else {
            Err(self.error(
                key,
                format!("{value} is not a time in seconds from 0 to {MAX_SECONDS}"),
            ))
        }
    }
}
