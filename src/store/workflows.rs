//! Workflows, which the API lists as rules: the apps and websites a workflow applies to, its
//! language settings and translation target. Listed by priority, toggled on and off.

use std::fmt;
use std::str::FromStr;

use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use super::lists::{ListTable, Lists, take};
use super::{Store, StoreError};
use crate::wire;

/// How a workflow picks the transcription language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LanguageMode {
    /// Use the application's setting.
    #[default]
    Inherit,
    /// Detect the language.
    Auto,
    /// Always `input_language`.
    Exact,
    /// Detect among `language_hints`.
    Multiple,
}

impl LanguageMode {
    /// Every mode, in the order the contract lists them.
    pub const ALL: [LanguageMode; 4] = [
        LanguageMode::Inherit,
        LanguageMode::Auto,
        LanguageMode::Exact,
        LanguageMode::Multiple,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LanguageMode::Inherit => "inherit",
            LanguageMode::Auto => "auto",
            LanguageMode::Exact => "exact",
            LanguageMode::Multiple => "multiple",
        }
    }
}

impl fmt::Display for LanguageMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LanguageMode {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        LanguageMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or(())
    }
}

/// A workflow (rule).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workflow {
    pub id: Uuid,
    pub name: String,
    pub enabled: bool,
    /// Lower numbers come first.
    pub priority: i64,
    /// Application ids (on Linux the desktop-file id or WM_CLASS) the workflow applies to.
    pub bundle_identifiers: Vec<String>,
    pub url_patterns: Vec<String>,
    pub input_language: Option<String>,
    pub language_mode: LanguageMode,
    pub language_hints: Vec<String>,
    pub translation_target_language: Option<String>,
}

const ITEMS: ListTable = ListTable {
    table: "workflow_items",
    owner: "workflow_id",
};
const APPS: &str = "app";
const URLS: &str = "url";
const HINTS: &str = "hint";

const COLUMNS: &str =
    "id, name, enabled, priority, input_language, language_mode, translation_target_language";

impl Store {
    /// Every workflow, by priority (ties in the order they were added).
    pub fn workflows(&self) -> Result<Vec<Workflow>, StoreError> {
        Ok(all(&self.conn())?)
    }

    /// The workflow with this id, if any.
    pub fn workflow(&self, id: &Uuid) -> Result<Option<Workflow>, StoreError> {
        Ok(find(&self.conn(), id)?)
    }

    /// Adds a workflow (its id must be new).
    pub fn add_workflow(&self, workflow: &Workflow) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        insert(&tx, workflow)?;
        tx.commit()?;
        Ok(())
    }

    /// Flips a workflow's enabled state; returns it with the new state, None when unknown.
    pub fn toggle_workflow(&self, id: &Uuid) -> Result<Option<Workflow>, StoreError> {
        let conn = self.conn();
        let changed = conn.execute(
            "UPDATE workflows SET enabled = 1 - enabled WHERE id = ?1",
            [wire::format_uuid(id)],
        )?;
        if changed == 0 {
            return Ok(None);
        }
        Ok(find(&conn, id)?)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Workflow>> {
    let mut lists = ITEMS.load_all(conn)?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM workflows ORDER BY priority, seq"
    ))?;
    let rows = stmt.query_map([], read_row)?;
    rows.map(|row| Ok(with_lists(row?, &mut lists))).collect()
}

fn find(conn: &Connection, id: &Uuid) -> rusqlite::Result<Option<Workflow>> {
    let key = wire::format_uuid(id);
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM workflows WHERE id = ?1"))?;
    let Some(row) = stmt.query_row([&key], read_row).optional()? else {
        return Ok(None);
    };
    let mut lists = ITEMS.load_one(conn, &key)?;
    Ok(Some(with_lists(row, &mut lists)))
}

pub(crate) fn exists(conn: &Connection, id: &Uuid) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM workflows WHERE id = ?1")?
        .exists([wire::format_uuid(id)])
}

/// The highest priority in use, None when there are no workflows.
pub(crate) fn max_priority(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row("SELECT max(priority) FROM workflows", [], |row| row.get(0))
}

pub(crate) fn insert(conn: &Connection, workflow: &Workflow) -> rusqlite::Result<()> {
    let id = wire::format_uuid(&workflow.id);
    conn.prepare_cached(&format!(
        "INSERT INTO workflows ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    ))?
    .execute(params![
        id,
        workflow.name,
        workflow.enabled,
        workflow.priority,
        workflow.input_language,
        workflow.language_mode.as_str(),
        workflow.translation_target_language,
    ])?;
    ITEMS.insert(conn, &id, APPS, &workflow.bundle_identifiers)?;
    ITEMS.insert(conn, &id, URLS, &workflow.url_patterns)?;
    ITEMS.insert(conn, &id, HINTS, &workflow.language_hints)
}

/// A workflow row without its lists, with its stored id.
fn read_row(row: &Row<'_>) -> rusqlite::Result<(String, Workflow)> {
    let id: String = row.get(0)?;
    let mode: String = row.get(5)?;
    Ok((
        id.clone(),
        Workflow {
            id: wire::parse_uuid(&id).unwrap_or_default(),
            name: row.get(1)?,
            enabled: row.get(2)?,
            priority: row.get(3)?,
            input_language: row.get(4)?,
            language_mode: mode.parse().unwrap_or_default(),
            translation_target_language: row.get(6)?,
            ..Workflow::default()
        },
    ))
}

fn with_lists((key, mut workflow): (String, Workflow), lists: &mut Lists) -> Workflow {
    workflow.bundle_identifiers = take(lists, &key, APPS);
    workflow.url_patterns = take(lists, &key, URLS);
    workflow.language_hints = take(lists, &key, HINTS);
    workflow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflows_are_listed_by_priority_and_toggled() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite3")).unwrap();
        let second = Workflow {
            id: Uuid::new_v4(),
            name: "Mail".into(),
            enabled: true,
            priority: 5,
            bundle_identifiers: vec!["org.gnome.Evolution".into(), "thunderbird".into()],
            language_mode: LanguageMode::Multiple,
            language_hints: vec!["de".into(), "en".into()],
            ..Workflow::default()
        };
        let first = Workflow {
            id: Uuid::new_v4(),
            name: "Browser".into(),
            priority: 1,
            url_patterns: vec!["*.example.org".into()],
            input_language: Some("fr".into()),
            language_mode: LanguageMode::Exact,
            translation_target_language: Some("en".into()),
            ..Workflow::default()
        };
        store.add_workflow(&second).unwrap();
        store.add_workflow(&first).unwrap();
        assert_eq!(store.workflows().unwrap(), vec![first.clone(), second]);
        let toggled = store.toggle_workflow(&first.id).unwrap().unwrap();
        assert!(toggled.enabled);
        assert_eq!(toggled.url_patterns, first.url_patterns);
        assert!(store.toggle_workflow(&Uuid::new_v4()).unwrap().is_none());
    }
}
