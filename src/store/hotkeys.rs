//! Hotkeys: one key combination per slot (for example `dictation.toggle`), and no combination
//! bound to two slots.

use rusqlite::{Connection, params};

use super::{Store, StoreError};

/// A hotkey binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hotkey {
    /// What the hotkey does, for example `dictation.toggle` or `recorder.start`.
    pub slot: String,
    /// The key combination, for example `Ctrl+Alt+Space`.
    pub shortcut: String,
}

impl Store {
    /// Every binding, by slot.
    pub fn hotkeys(&self) -> Result<Vec<Hotkey>, StoreError> {
        self.reading(all)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Hotkey>> {
    let mut stmt = conn.prepare_cached("SELECT slot, shortcut FROM hotkeys ORDER BY slot")?;
    stmt.query_map([], |row| {
        Ok(Hotkey {
            slot: row.get(0)?,
            shortcut: row.get(1)?,
        })
    })?
    .collect()
}

/// Binds `hotkey` unless its slot is occupied or its combination is bound to another slot;
/// returns whether it was bound.
pub(crate) fn bind_if_free(conn: &Connection, hotkey: &Hotkey) -> rusqlite::Result<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO hotkeys (slot, shortcut)
             SELECT ?1, ?2 WHERE NOT EXISTS
                 (SELECT 1 FROM hotkeys WHERE slot = ?1 OR lower(shortcut) = lower(?2))",
        )?
        .execute(params![hotkey.slot, hotkey.shortcut])?;
    Ok(added > 0)
}
