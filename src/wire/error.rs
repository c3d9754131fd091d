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
}
