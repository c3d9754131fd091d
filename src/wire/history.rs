//! `GET /v1/history` (one page of entries) and `DELETE /v1/history?id=`. The entry is also the
//! store's record: the store re-exports [`HistoryEntry`] and builds it from its rows.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{timestamp, upper_uuid};

/// A history entry as stored and as `GET /v1/history` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    #[serde(serialize_with = "upper_uuid")]
    pub id: Uuid,
    pub text: String,
    pub raw_text: String,
    #[serde(serialize_with = "timestamp")]
    pub timestamp: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_bundle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_url: Option<String>,
    /// Audio length in seconds.
    pub duration: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub engine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub words_count: u32,
    /// Under a prompt action: the words as transcribed (after numbers and corrections); `text`
    /// is the action's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcribed_text: Option<String>,
    /// Under a prompt action that gave no text: why (`text` is then the words as heard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_action_error: Option<String>,
}

/// `GET /v1/history`: one page of entries (newest first) and how many match in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    pub entries: Vec<HistoryEntry>,
    pub total: u64,
    pub limit: i64,
    pub offset: i64,
}

/// `DELETE /v1/history?id=`: `{"deleted":true}` (an unknown id is a 404).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_what_it_writes() {
        let json = r#"{"id":"0F8FAD5B-D9CB-469F-A165-70867728950E","text":"Hi","raw_text":"hi","timestamp":"2026-04-13T10:15:00Z","duration":1.5,"engine":"whisper","words_count":1}"#;
        let entry: HistoryEntry = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&entry).unwrap(), json);
    }
}
