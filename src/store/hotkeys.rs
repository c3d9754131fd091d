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

    /// Binds `hotkey.shortcut` to its slot, replacing the slot's binding, unless another slot's
    /// shortcut is the same combination (`same` decides, beside a case-insensitive match): then
    /// nothing changes and that slot is answered. One transaction.
    pub fn bind_hotkey(
        &self,
        hotkey: &Hotkey,
        same: impl Fn(&str) -> bool,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let taken = all(&tx)?.into_iter().find(|other| {
            other.slot != hotkey.slot
                && (other.shortcut.eq_ignore_ascii_case(&hotkey.shortcut) || same(&other.shortcut))
        });
        if let Some(other) = taken {
            return Ok(Some(other.slot));
        }
        tx.prepare_cached(
            "INSERT INTO hotkeys (slot, shortcut) VALUES (?1, ?2)
             ON CONFLICT (slot) DO UPDATE SET shortcut = excluded.shortcut",
        )?
        .execute(params![hotkey.slot, hotkey.shortcut])?;
        tx.commit()?;
        Ok(None)
    }

    /// Removes the binding of `slot`; answers whether there was one.
    pub fn unbind_hotkey(&self, slot: &str) -> Result<bool, StoreError> {
        let removed = self
            .conn()
            .prepare_cached("DELETE FROM hotkeys WHERE slot = ?1")?
            .execute([slot])?;
        Ok(removed > 0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    fn hotkey(slot: &str, shortcut: &str) -> Hotkey {
        Hotkey {
            slot: slot.into(),
            shortcut: shortcut.into(),
        }
    }

    #[test]
    fn a_slot_is_rebound_cleared_and_never_shares_a_combination() {
        let (_dir, store) = temp_store();
        let never = |_: &str| false;
        assert_eq!(
            store.bind_hotkey(&hotkey("a", "Ctrl+A"), never).unwrap(),
            None
        );
        assert_eq!(
            store.bind_hotkey(&hotkey("a", "Ctrl+B"), never).unwrap(),
            None
        );
        assert_eq!(store.hotkeys().unwrap(), vec![hotkey("a", "Ctrl+B")]);
        // Same text in another case, or the same combination as `same` sees it: refused.
        assert_eq!(
            store.bind_hotkey(&hotkey("b", "ctrl+b"), never).unwrap(),
            Some("a".into())
        );
        let control_b = |other: &str| other == "Ctrl+B";
        assert_eq!(
            store
                .bind_hotkey(&hotkey("b", "Control+B"), control_b)
                .unwrap(),
            Some("a".into())
        );
        assert_eq!(store.hotkeys().unwrap(), vec![hotkey("a", "Ctrl+B")]);
        // A slot may be rebound to its own combination.
        assert_eq!(
            store
                .bind_hotkey(&hotkey("a", "Ctrl+B"), control_b)
                .unwrap(),
            None
        );
        assert!(store.unbind_hotkey("a").unwrap());
        assert!(!store.unbind_hotkey("a").unwrap());
        assert_eq!(
            store.bind_hotkey(&hotkey("b", "Ctrl+B"), never).unwrap(),
            None
        );
        assert_eq!(store.hotkeys().unwrap(), vec![hotkey("b", "Ctrl+B")]);
    }
}
