//! `GET /v1/status` and `GET /v1/models`.

use serde::{Deserialize, Serialize};

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
    /// What the model can do (third wave; additive, so absent from older servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ModelCapabilities>,
    /// Why the model cannot run on this machine (its engine's runtime is built for another);
    /// absent where it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// `capabilities` of a model entry: its languages and what it can do beyond transcribing them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCapabilities {
    pub languages: Vec<String>,
    pub translate: bool,
    pub prompt: bool,
    pub word_timestamps: bool,
    pub live: bool,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    pub models: Vec<ModelEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::API_VERSION;

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
