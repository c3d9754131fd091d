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
