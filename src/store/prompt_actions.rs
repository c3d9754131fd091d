//! Prompt actions: named instructions applied to a transcript (rewrite, summarise...).

use rusqlite::{Connection, params};
use uuid::Uuid;

use super::{Store, StoreError};
use crate::wire;

/// A prompt action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptAction {
    pub id: Uuid,
    pub name: String,
    pub prompt: String,
    pub enabled: bool,
}

impl Store {
    /// Every prompt action, in the order they were added.
    pub fn prompt_actions(&self) -> Result<Vec<PromptAction>, StoreError> {
        self.reading(all)
    }

    /// Deletes the prompt action `id`; returns whether there was one.
    pub fn delete_prompt_action(&self, id: &Uuid) -> Result<bool, StoreError> {
        let deleted = self.conn().execute(
            "DELETE FROM prompt_actions WHERE id = ?1",
            [wire::format_uuid(id)],
        )?;
        Ok(deleted > 0)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<PromptAction>> {
    let mut stmt =
        conn.prepare_cached("SELECT id, name, prompt, enabled FROM prompt_actions ORDER BY seq")?;
    stmt.query_map([], |row| {
        let id: String = row.get(0)?;
        Ok(PromptAction {
            id: wire::parse_uuid(&id).unwrap_or_default(),
            name: row.get(1)?,
            prompt: row.get(2)?,
            enabled: row.get(3)?,
        })
    })?
    .collect()
}

/// Adds `action` unless one with its id exists; returns whether it was added.
pub(crate) fn insert_if_new(conn: &Connection, action: &PromptAction) -> rusqlite::Result<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO prompt_actions (id, name, prompt, enabled) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(id) DO NOTHING",
        )?
        .execute(params![
            wire::format_uuid(&action.id),
            action.name,
            action.prompt,
            action.enabled
        ])?;
    Ok(added > 0)
}
