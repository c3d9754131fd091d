//! Settings backups: the document (`GET /v1/settings/export`), its validation, and the import
//! that merges every category in one transaction (all or nothing) without overwriting anything.

mod budget;
mod format;
mod merge;
mod reader;
pub mod registry;
mod stream;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::TransactionBehavior;

pub use reader::Problem;
pub use registry::{HttpRegistry, PluginSource, RegistryUnreachable};

use crate::store::preferences::{self, NOT_IN_BACKUP, Pref, PrefValue, UPDATE_CHANNEL};
use crate::store::{
    DictionaryEntry, HistoryEntry, Hotkey, Plugin, Profile, PromptAction, Snippet, Store,
    StoreError, Workflow, dictionary, history, hotkeys, plugins, prompt_actions, snippets,
};
use crate::wire::ImportSummary;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// The update channels a backup may name.
pub const UPDATE_CHANNELS: &[&str] = &["stable", "beta"];

/// A settings backup, category by category.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Backup {
    /// When the document was written (absent in hand-written documents).
    pub exported_at: Option<DateTime<Utc>>,
    /// The Verbatim version that wrote it.
    pub app_version: Option<String>,
    pub workflows: Vec<Workflow>,
    pub dictionary: Vec<DictionaryEntry>,
    pub snippets: Vec<Snippet>,
    pub prompt_actions: Vec<PromptAction>,
    pub profiles: Vec<Profile>,
    pub hotkeys: Vec<Hotkey>,
    pub plugins: Vec<PluginRef>,
    pub history: Vec<HistoryEntry>,
    pub update_channel: Option<String>,
    /// Explicitly set preferences that travel in backups (see [`NOT_IN_BACKUP`]).
    pub preferences: Vec<(&'static Pref, PrefValue)>,
}

/// A non-bundled plugin as a backup names it: which one, which version, and whether it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    pub id: String,
    pub version: String,
    pub enabled: bool,
}

/// Why a backup document cannot be read.
#[derive(Debug)]
pub enum DocumentError {
    /// Not JSON: a syntax error, a truncated document, nesting too deep, a read failure.
    Malformed(serde_json::Error),
    /// JSON, but not a valid backup; the problem names the first invalid field.
    Invalid(Problem),
}

impl Backup {
    /// Reads and validates a parsed document; the problem names the first invalid field.
    pub fn from_json(value: &serde_json::Value) -> Result<Backup, Problem> {
        let budget = budget::ValueBudget::start();
        // A parsed value cannot be malformed; the readers themselves never fail.
        format::read(value).unwrap_or_else(|err| {
            Err(if budget.exceeded() {
                budget::ValueBudget::problem()
            } else {
                Problem {
                    path: String::new(),
                    what: err.to_string(),
                }
            })
        })
    }

    /// Reads and validates a document as it streams from `reader` (give it a buffered one):
    /// besides the backup, one category item at a time is held, never the whole document.
    /// A document holding more than [`budget::MAX_VALUES`] values is refused as it is read.
    pub fn from_reader(reader: impl std::io::Read) -> Result<Backup, DocumentError> {
        let budget = budget::ValueBudget::start();
        let mut de = serde_json::Deserializer::from_reader(reader);
        let read = format::read(&mut de).map_err(|err| {
            if budget.exceeded() {
                DocumentError::Invalid(budget::ValueBudget::problem())
            } else {
                DocumentError::Malformed(err)
            }
        })?;
        de.end().map_err(DocumentError::Malformed)?;
        read.map_err(DocumentError::Invalid)
    }

    /// The document, `schemaVersion` first in the schema, camelCase keys.
    pub fn to_json(&self) -> serde_json::Value {
        format::write(self)
    }

    /// How many items each category holds, for receipts.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("workflows", self.workflows.len()),
            ("dictionaryEntries", self.dictionary.len()),
            ("snippets", self.snippets.len()),
            ("promptActions", self.prompt_actions.len()),
            ("profiles", self.profiles.len()),
            ("hotkeys", self.hotkeys.len()),
            ("plugins", self.plugins.len()),
            ("history", self.history.len()),
            ("updateChannel", usize::from(self.update_channel.is_some())),
            ("preferences", self.preferences.len()),
        ]
    }
}

/// Everything the store holds that a backup carries, read in one transaction so the
/// document is a consistent snapshot. A long read: it never waits behind a write.
pub fn export(store: &Store) -> Result<Backup, StoreError> {
    let (_slot, mut conn) = store.long_read()?;
    let tx = conn.transaction()?;
    let prefs = preferences::ALL
        .iter()
        .filter(|pref| !NOT_IN_BACKUP.contains(&pref.key))
        .filter_map(|pref| match preferences::stored_on(&tx, pref) {
            Ok(Some(value)) => Some(Ok((pref, value))),
            Ok(None) => None,
            Err(err) => Some(Err(err)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let update_channel = match preferences::stored_on(&tx, &UPDATE_CHANNEL)? {
        Some(PrefValue::Text(channel)) => Some(channel),
        _ => None,
    };
    let backup = Backup {
        exported_at: Some(Utc::now()),
        app_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        workflows: Workflow::all(&tx)?,
        dictionary: dictionary::all(&tx)?,
        snippets: snippets::all(&tx)?,
        prompt_actions: prompt_actions::all(&tx)?,
        profiles: Profile::all(&tx)?,
        hotkeys: hotkeys::all(&tx)?,
        plugins: plugins::all(&tx)?
            .into_iter()
            .map(|p| PluginRef {
                id: p.id,
                version: p.version,
                enabled: p.enabled,
            })
            .collect(),
        history: history::all(&tx)?,
        update_channel,
        preferences: prefs,
    };
    tx.commit()?;
    Ok(backup)
}

/// Imports `backup`: plugins missing here are fetched from `registry` first (None: no
/// registry configured), then every category is merged in one transaction.
pub fn import(
    store: &Store,
    backup: &Backup,
    registry: Option<&dyn PluginSource>,
) -> Result<ImportSummary, StoreError> {
    let wanted = {
        let conn = store.conn();
        let mut wanted: Vec<&PluginRef> = Vec::new();
        for plugin in &backup.plugins {
            if !plugins::is_installed(&conn, &plugin.id)?
                && !wanted.iter().any(|w| w.id == plugin.id)
            {
                wanted.push(plugin);
            }
        }
        wanted
    };
    // Fetched before the write transaction, and without holding the store.
    let (fetched, registry_failed) = fetch_plugins(registry, &wanted);
    let mut conn = store.conn();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut summary = merge::apply(&tx, backup, &fetched, Utc::now())?;
    summary.plugins_registry_fetch_failed = registry_failed;
    tx.commit()?;
    Ok(summary)
}

/// Metadata for every plugin the registry offers; true when the registry could not be
/// reached (or none is configured) while plugins were wanted. After a failure the remaining
/// plugins are not asked for.
fn fetch_plugins(
    registry: Option<&dyn PluginSource>,
    wanted: &[&PluginRef],
) -> (HashMap<String, Plugin>, bool) {
    let mut fetched = HashMap::new();
    if wanted.is_empty() {
        return (fetched, false);
    }
    let Some(registry) = registry else {
        return (fetched, true);
    };
    for plugin in wanted {
        match registry.fetch(&plugin.id, &plugin.version) {
            Ok(Some(mut found)) => {
                found.enabled = plugin.enabled;
                fetched.insert(plugin.id.clone(), found);
            }
            Ok(None) => {}
            Err(RegistryUnreachable(why)) => {
                tracing::warn!("plugin registry unreachable: {why}");
                return (fetched, true);
            }
        }
    }
    (fetched, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Correction, NewHistoryEntry, Term, temp_store};
    use uuid::Uuid;

    /// A registry offering every plugin but `missing`.
    struct Offering;

    impl PluginSource for Offering {
        fn fetch(&self, id: &str, version: &str) -> Result<Option<Plugin>, RegistryUnreachable> {
            Ok((id != "missing").then(|| Plugin {
                id: id.into(),
                version: version.into(),
                name: format!("Plugin {id}"),
                description: None,
                download_url: None,
                sha256: None,
                enabled: true,
            }))
        }
    }

    struct Down;

    impl PluginSource for Down {
        fn fetch(&self, _: &str, _: &str) -> Result<Option<Plugin>, RegistryUnreachable> {
            Err(RegistryUnreachable("connection refused".into()))
        }
    }

    fn sample() -> Backup {
        Backup {
            workflows: vec![Workflow {
                id: Uuid::new_v4(),
                name: "Mail".into(),
                enabled: true,
                priority: 3,
                bundle_identifiers: vec!["thunderbird".into()],
                ..Workflow::default()
            }],
            dictionary: vec![
                DictionaryEntry::Term {
                    term: Term {
                        term: "Kubernetes".into(),
                        ctc_min_similarity: Some(0.5),
                    },
                    enabled: true,
                },
                DictionaryEntry::Correction {
                    correction: Correction {
                        original: "teh".into(),
                        replacement: "the".into(),
                        case_sensitive: false,
                    },
                    enabled: false,
                },
            ],
            hotkeys: vec![Hotkey {
                slot: "dictation.toggle".into(),
                shortcut: "Ctrl+Alt+Space".into(),
            }],
            plugins: vec![
                PluginRef {
                    id: "punctuation".into(),
                    version: "1.2.0".into(),
                    enabled: true,
                },
                PluginRef {
                    id: "missing".into(),
                    version: "1.0".into(),
                    enabled: true,
                },
            ],
            update_channel: Some("beta".into()),
            preferences: vec![(&preferences::HISTORY_RETENTION_DAYS, PrefValue::Int(30))],
            ..Backup::default()
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let mut backup = sample();
        backup.exported_at = Some(chrono::DateTime::from_timestamp(1_776_000_000, 0).unwrap());
        backup.app_version = Some("0.1.0".into());
        assert_eq!(Backup::from_json(&backup.to_json()).unwrap(), backup);
    }

    #[test]
    fn importing_twice_skips_everything_the_second_time() {
        let (_dir, store) = temp_store();
        let first = import(&store, &sample(), Some(&Offering)).unwrap();
        assert_eq!(
            first,
            ImportSummary {
                workflows_imported: 1,
                dictionary_imported: 2,
                hotkeys_applied: 1,
                plugins_installed: 1,
                plugins_skipped: 1,
                update_channel_applied: true,
                // 30 days would shorten the store's keep-forever window: never imported.
                preferences_skipped: vec!["historyRetentionDays".into()],
                ..ImportSummary::default()
            }
        );
        let second = import(&store, &sample(), Some(&Offering)).unwrap();
        assert_eq!(
            second,
            ImportSummary {
                workflows_imported: 1, // a new id each time sample() is built
                dictionary_skipped: 2,
                hotkeys_skipped: 1,
                plugins_skipped: 2,
                preferences_skipped: vec!["historyRetentionDays".into()],
                ..ImportSummary::default()
            }
        );
        // Appended after the first one.
        let priorities: Vec<i64> = store
            .workflows()
            .unwrap()
            .iter()
            .map(|w| w.priority)
            .collect();
        assert_eq!(priorities, vec![3, 4]);
    }

    #[test]
    fn downloads_and_insertion_never_travel_in_a_backup() {
        let (_dir, store) = temp_store();
        let mirror = PrefValue::Text("http://evil.example/models".into());
        store
            .set_pref(&preferences::MODEL_DOWNLOAD_BASE_URL, &mirror)
            .unwrap();
        store
            .set_pref(&preferences::PACKAGE_DOWNLOAD_BASE_URL, &mirror)
            .unwrap();
        store
            .set_pref(
                &preferences::DICTATION_INSERTION,
                &PrefValue::Text("type".into()),
            )
            .unwrap();
        let exported = export(&store).unwrap().to_json().to_string();
        assert!(!exported.contains("modelDownloadBaseUrl"), "{exported}");
        assert!(!exported.contains("packageDownloadBaseUrl"), "{exported}");
        assert!(!exported.contains("dictationInsertion"), "{exported}");

        let (_dir, fresh) = temp_store();
        let doc = serde_json::json!({"schemaVersion": 1, "preferences": {
            "modelDownloadBaseUrl": "http://evil.example/models",
            "packageDownloadBaseUrl": "http://evil.example/pkgs", "dictationInsertion": "type"}});
        let backup = Backup::from_json(&doc).unwrap();
        let summary = import(&fresh, &backup, None).unwrap();
        assert_eq!(summary.preferences_applied, 0);
        assert_eq!(
            fresh
                .pref_text(&preferences::PACKAGE_DOWNLOAD_BASE_URL)
                .unwrap(),
            ""
        );
        assert_eq!(
            fresh
                .pref_text(&preferences::MODEL_DOWNLOAD_BASE_URL)
                .unwrap(),
            preferences::MODEL_DOWNLOAD_BASE_URL
                .default_value()
                .to_string()
        );
    }

    #[test]
    fn a_shorter_history_retention_is_never_imported() {
        let (_dir, store) = temp_store();
        let with_days = |days: i64| Backup {
            preferences: vec![(&preferences::HISTORY_RETENTION_DAYS, PrefValue::Int(days))],
            ..Backup::default()
        };
        // Keep-forever (the default) is longer than any window.
        let summary = import(&store, &with_days(1), None).unwrap();
        assert_eq!(summary.preferences_skipped, vec!["historyRetentionDays"]);
        assert_eq!(
            store
                .pref_int(&preferences::HISTORY_RETENTION_DAYS)
                .unwrap(),
            0
        );
        store
            .set_pref(&preferences::HISTORY_RETENTION_DAYS, &PrefValue::Int(30))
            .unwrap();
        let shorter = import(&store, &with_days(7), None).unwrap();
        assert_eq!(shorter.preferences_skipped, vec!["historyRetentionDays"]);
        let longer = import(&store, &with_days(90), None).unwrap();
        assert!(longer.preferences_skipped.is_empty());
        assert_eq!(
            store
                .pref_int(&preferences::HISTORY_RETENTION_DAYS)
                .unwrap(),
            30
        );
    }

    #[test]
    fn an_unreachable_registry_skips_plugins_and_imports_the_rest() {
        let (_dir, store) = temp_store();
        let summary = import(&store, &sample(), Some(&Down)).unwrap();
        assert!(summary.plugins_registry_fetch_failed);
        assert_eq!((summary.plugins_installed, summary.plugins_skipped), (0, 2));
        assert_eq!(summary.workflows_imported, 1);
        let (_other, unconfigured) = temp_store();
        let summary = import(&unconfigured, &sample(), None).unwrap();
        assert!(summary.plugins_registry_fetch_failed);
    }

    #[test]
    fn history_outside_the_retention_window_is_counted_not_imported() {
        let (_dir, store) = temp_store();
        let (_source_dir, source) = temp_store();
        let now = Utc::now();
        for days in [1, 10, 100] {
            source
                .insert_history(&NewHistoryEntry {
                    text: format!("{days} days ago"),
                    timestamp: Some(now - chrono::Duration::days(days)),
                    engine: "whisper".into(),
                    ..NewHistoryEntry::default()
                })
                .unwrap();
        }
        store
            .set_pref(&preferences::HISTORY_RETENTION_DAYS, &PrefValue::Int(30))
            .unwrap();
        let summary = import(&store, &export(&source).unwrap(), None).unwrap();
        assert_eq!(
            (
                summary.history_imported,
                summary.history_skipped_by_retention
            ),
            (2, 1)
        );
    }
}
