//! JSON shapes that travel on the wire, shared by the server and the CLI client.

use serde::{Deserialize, Serialize};

/// The current API version reported by `GET /v1/status`.
pub const API_VERSION: &str = "1.1";

/// Largest request body accepted anywhere (uploads, JSON documents): 256 MiB.
pub const MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;

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

/// `GET /v1/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub api_version: String,
    pub supports_workflow_dictation: bool,
    pub supports_streaming: bool,
    pub supports_translation: bool,
}

/// One entry of `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEntry {
    pub id: String,
    pub engine: String,
    pub name: String,
    pub size_description: String,
    pub language_count: u32,
    pub status: String,
    pub selected: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downloaded: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded: Option<bool>,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    pub models: Vec<ModelEntry>,
}

/// Parses the contract's boolean words (`1/true/yes/on`, `0/false/no/off`, any case).
pub fn parse_bool_word(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_words_follow_the_contract() {
        for yes in ["1", "true", "YES", "On"] {
            assert_eq!(parse_bool_word(yes), Some(true), "{yes}");
        }
        for no in ["0", "False", "no", "OFF"] {
            assert_eq!(parse_bool_word(no), Some(false), "{no}");
        }
        for bad in ["", "2", "enabled", "t"] {
            assert_eq!(parse_bool_word(bad), None, "{bad}");
        }
    }

    #[test]
    fn optional_status_fields_are_omitted_not_null() {
        let status = Status {
            status: "no_model".into(),
            engine: None,
            model: None,
            api_version: API_VERSION.into(),
            supports_workflow_dictation: true,
            supports_streaming: false,
            supports_translation: false,
        };
        let json = serde_json::to_string(&status).unwrap();
        assert!(!json.contains("engine") && !json.contains("null"), "{json}");
    }
}
