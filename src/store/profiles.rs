//! Profiles: per-app transcription setups (engine, model, languages) kept as a settings
//! backup carries them. The API's `/v1/profiles` routes are aliases of the rules (workflows).

use rusqlite::{Connection, Row, params};
use uuid::Uuid;

use super::lists::{ListTable, take};
use super::{Store, StoreError};
use crate::wire;

/// A profile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Profile {
    pub id: Uuid,
    pub name: String,
    pub enabled: bool,
    /// Lower numbers come first.
    pub priority: i64,
    pub bundle_identifiers: Vec<String>,
    pub url_patterns: Vec<String>,
    pub input_language: Option<String>,
    pub translation_target_language: Option<String>,
    pub engine: Option<String>,
    pub model: Option<String>,
}

const ITEMS: ListTable = ListTable {
    table: "profile_items",
    owner: "profile_id",
};
const APPS: &str = "app";
const URLS: &str = "url";

const COLUMNS: &str =
    "id, name, enabled, priority, input_language, translation_target_language, engine, model";

impl Store {
    /// Every profile, by priority (ties in the order they were added).
    pub fn profiles(&self) -> Result<Vec<Profile>, StoreError> {
        Ok(all(&self.conn())?)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Profile>> {
    let mut lists = ITEMS.load_all(conn)?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM profiles ORDER BY priority, seq"
    ))?;
    let rows = stmt.query_map([], read_row)?;
    rows.map(|row| {
        let (key, mut profile) = row?;
        profile.bundle_identifiers = take(&mut lists, &key, APPS);
        profile.url_patterns = take(&mut lists, &key, URLS);
        Ok(profile)
    })
    .collect()
}

pub(crate) fn exists(conn: &Connection, id: &Uuid) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM profiles WHERE id = ?1")?
        .exists([wire::format_uuid(id)])
}

/// The highest priority in use, None when there are no profiles.
pub(crate) fn max_priority(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row("SELECT max(priority) FROM profiles", [], |row| row.get(0))
}

pub(crate) fn insert(conn: &Connection, profile: &Profile) -> rusqlite::Result<()> {
    let id = wire::format_uuid(&profile.id);
    conn.prepare_cached(&format!(
        "INSERT INTO profiles ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    ))?
    .execute(params![
        id,
        profile.name,
        profile.enabled,
        profile.priority,
        profile.input_language,
        profile.translation_target_language,
        profile.engine,
        profile.model,
    ])?;
    ITEMS.insert(conn, &id, APPS, &profile.bundle_identifiers)?;
    ITEMS.insert(conn, &id, URLS, &profile.url_patterns)
}

fn read_row(row: &Row<'_>) -> rusqlite::Result<(String, Profile)> {
    let id: String = row.get(0)?;
    Ok((
        id.clone(),
        Profile {
            id: wire::parse_uuid(&id).unwrap_or_default(),
            name: row.get(1)?,
            enabled: row.get(2)?,
            priority: row.get(3)?,
            input_language: row.get(4)?,
            translation_target_language: row.get(5)?,
            engine: row.get(6)?,
            model: row.get(7)?,
            ..Profile::default()
        },
    ))
}
