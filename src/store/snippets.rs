//! Snippets: a spoken trigger expands to a stored text. Triggers are unique case- and
//! accent-insensitively.

use rusqlite::{Connection, params};

use super::text::fold;
use super::{Store, StoreError};

/// A snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub trigger: String,
    pub text: String,
    pub enabled: bool,
}

impl Store {
    /// Every snippet, in the order they were added.
    pub fn snippets(&self) -> Result<Vec<Snippet>, StoreError> {
        self.reading(all)
    }

    /// Deletes the snippet whose trigger is `trigger` (case- and accent-insensitively);
    /// returns whether there was one.
    pub fn delete_snippet(&self, trigger: &str) -> Result<bool, StoreError> {
        let deleted = self.conn().execute(
            "DELETE FROM snippets WHERE trigger_key = ?1",
            [fold(trigger)],
        )?;
        Ok(deleted > 0)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Snippet>> {
    let mut stmt =
        conn.prepare_cached("SELECT trigger, text, enabled FROM snippets ORDER BY seq")?;
    stmt.query_map([], |row| {
        Ok(Snippet {
            trigger: row.get(0)?,
            text: row.get(1)?,
            enabled: row.get(2)?,
        })
    })?
    .collect()
}

/// Adds `snippet` unless its trigger is taken; returns whether it was added.
pub(crate) fn insert_if_new(conn: &Connection, snippet: &Snippet) -> rusqlite::Result<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO snippets (trigger, trigger_key, text, enabled) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(trigger_key) DO NOTHING",
        )?
        .execute(params![
            snippet.trigger,
            fold(&snippet.trigger),
            snippet.text,
            snippet.enabled
        ])?;
    Ok(added > 0)
}
