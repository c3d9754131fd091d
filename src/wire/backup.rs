//! `GET /v1/settings/export` (the backup document) and `POST /v1/settings/import` (the summary
//! of what an import did).

use serde::{Deserialize, Serialize};

/// `GET /v1/settings/export` answers, and `POST /v1/settings/import` takes, a settings backup
/// document (`schemaVersion` 1). The backup module writes and reads it (`Backup::to_json`,
/// `Backup::from_json`, which names the first problem); it stays JSON on the wire so that an
/// exported file holds exactly what the server sent.
pub type SettingsDocument = serde_json::Value;

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
    /// Preferences the import left as they were on purpose (a shorter `historyRetentionDays`).
    #[serde(default)]
    pub preferences_skipped: Vec<String>,
}
