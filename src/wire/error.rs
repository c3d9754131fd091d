//! The contract's Error object, as every failed request answers it.

use serde::{Deserialize, Serialize};

/// The contract's Error object: `{"error":{"code":C,"message":M}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
    /// OpenAI's error type, on the OpenAI-compatible routes only (`invalid_request_error`,
    /// `authentication_error`, `server_error`), so OpenAI clients show the message.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// The longest part of a client's value an error message repeats, in characters.
pub const ECHO_LIMIT: usize = 64;

/// `value` as an error message repeats it: whole when short, else its first [`ECHO_LIMIT`]
/// characters and "…" (a 100,000-character language code is not sent back whole).
pub fn echo(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(ECHO_LIMIT) {
        None => value.into(),
        Some((cut, _)) => format!("{}…", &value[..cut]).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_at_the_echo_limit() {
        assert_eq!(echo("en"), "en");
        let exact = "é".repeat(ECHO_LIMIT);
        assert_eq!(echo(&exact), exact);
        let long = "é".repeat(100_000);
        let echoed = echo(&long);
        assert_eq!(echoed.chars().count(), ECHO_LIMIT + 1);
        assert!(echoed.ends_with('…'));
    }
}
