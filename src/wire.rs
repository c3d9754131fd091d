//! JSON shapes that travel on the wire, shared by the server and the CLI client.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize, Serializer};
use uuid::Uuid;

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

/// A UUID as the API writes it: upper-case, hyphenated.
pub fn format_uuid(id: &Uuid) -> String {
    id.hyphenated()
        .encode_upper(&mut Uuid::encode_buffer())
        .to_string()
}

/// A UUID as the API accepts it: any case.
pub fn parse_uuid(text: &str) -> Option<Uuid> {
    Uuid::try_parse(text.trim()).ok()
}

/// Serializes a UUID upper-case (`#[serde(serialize_with = "wire::upper_uuid")]`).
pub fn upper_uuid<S: Serializer>(id: &Uuid, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_uuid(id))
}

/// An optional UUID upper-case (pair with `skip_serializing_if = "Option::is_none"`).
pub fn upper_uuid_opt<S: Serializer>(id: &Option<Uuid>, serializer: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => serializer.serialize_str(&format_uuid(id)),
        None => serializer.serialize_none(),
    }
}

/// A timestamp as the API writes it: ISO 8601 UTC without fractional seconds.
pub fn format_timestamp(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Accepts any RFC 3339 timestamp (offset or `Z`, with or without fractions), as UTC.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

/// Serializes a timestamp in the API's format.
pub fn timestamp<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format_timestamp(at))
}

/// `POST /v1/settings/import`: what the import did, category by category.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSummary {
    pub workflows_imported: u64,
    pub dictionary_imported: u64,
    pub dictionary_skipped: u64,
    pub snippets_imported: u64,
    pub snippets_skipped: u64,
    pub prompt_actions_imported: u64,
    pub profiles_imported: u64,
    pub hotkeys_applied: u64,
    pub hotkeys_skipped: u64,
    pub plugins_installed: u64,
    pub plugins_skipped: u64,
    pub plugins_registry_fetch_failed: bool,
    pub history_imported: u64,
    pub history_skipped_by_retention: u64,
    pub update_channel_applied: bool,
    pub preferences_applied: u64,
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
    fn uuids_are_written_upper_case_and_read_in_any_case() {
        let id = parse_uuid("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap();
        assert_eq!(format_uuid(&id), "0F8FAD5B-D9CB-469F-A165-70867728950E");
        assert_eq!(parse_uuid(&format_uuid(&id)), Some(id));
        assert_eq!(parse_uuid("not-a-uuid"), None);
    }

    #[test]
    fn timestamps_are_utc_without_fractions() {
        let at = parse_timestamp("2026-04-13T12:15:00.750+02:00").unwrap();
        assert_eq!(format_timestamp(&at), "2026-04-13T10:15:00Z");
        assert_eq!(parse_timestamp("13/04/2026"), None);
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
