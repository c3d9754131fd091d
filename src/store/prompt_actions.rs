//! Prompt actions: named instructions applied to a transcript (rewrite, summarise...), run
//! through the chat provider (`crate::chat`). Found by id or by name (any case); two actions
//! never share a name through the API.

use rusqlite::{Connection, OptionalExtension, params};
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

    /// The prompt action whose id or name (any case, spaces around it ignored) is `key`.
    pub fn find_prompt_action(&self, key: &str) -> Result<Found, StoreError> {
        let key = key.trim();
        let actions = self.prompt_actions()?;
        if let Some(id) = wire::parse_uuid(key)
            && let Some(action) = actions.iter().find(|a| a.id == id)
        {
            return Ok(Found::One(action.clone()));
        }
        let named: Vec<PromptAction> = actions
            .into_iter()
            .filter(|a| same_name(&a.name, key))
            .collect();
        Ok(match named.len() {
            0 => Found::None,
            1 => Found::One(named.into_iter().next().unwrap_or_else(|| unreachable!())),
            _ => Found::Several,
        })
    }

    /// Creates the action (`id` None) or changes action `id`, keeping its enabled state when
    /// `enabled` is None (a new one is enabled); refused when another action has its name.
    pub fn put_prompt_action(
        &self,
        id: Option<Uuid>,
        name: &str,
        prompt: &str,
        enabled: Option<bool>,
    ) -> Result<Put, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing = match id {
            Some(id) => match by_id(&tx, &id)? {
                Some(action) => Some(action),
                None => return Ok(Put::NotFound),
            },
            None => None,
        };
        if all(&tx)?
            .iter()
            .any(|other| same_name(&other.name, name) && Some(other.id) != id)
        {
            return Ok(Put::NameTaken);
        }
        let action = PromptAction {
            id: id.unwrap_or_else(Uuid::new_v4),
            name: name.trim().to_string(),
            prompt: prompt.to_string(),
            enabled: enabled.unwrap_or(existing.as_ref().is_none_or(|a| a.enabled)),
        };
        if existing.is_some() {
            tx.execute(
                "UPDATE prompt_actions SET name = ?2, prompt = ?3, enabled = ?4 WHERE id = ?1",
                params![
                    wire::format_uuid(&action.id),
                    action.name,
                    action.prompt,
                    action.enabled
                ],
            )?;
        } else {
            insert_if_new(&tx, &action)?;
        }
        tx.commit()?;
        Ok(Put::Saved(action))
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

/// What a look-up by id or name found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    One(PromptAction),
    None,
    /// More than one action has the name (a settings import may bring such a pair).
    Several,
}

/// What [`Store::put_prompt_action`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    Saved(PromptAction),
    NotFound,
    NameTaken,
}

/// Whether two action names are the same to a person: any case, spaces around them ignored.
fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

fn by_id(conn: &Connection, id: &Uuid) -> rusqlite::Result<Option<PromptAction>> {
    conn.query_row(
        "SELECT name, prompt, enabled FROM prompt_actions WHERE id = ?1",
        [wire::format_uuid(id)],
        |row| {
            Ok(PromptAction {
                id: *id,
                name: row.get(0)?,
                prompt: row.get(1)?,
                enabled: row.get(2)?,
            })
        },
    )
    .optional()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_created_changed_and_found_by_id_or_name_in_any_case() {
        let (_dir, store) = crate::store::temp_store();
        let Put::Saved(fix) = store
            .put_prompt_action(None, " Fix grammar ", "Fix the grammar.", None)
            .unwrap()
        else {
            panic!("not saved")
        };
        assert_eq!((fix.name.as_str(), fix.enabled), ("Fix grammar", true));
        assert_eq!(
            store
                .put_prompt_action(None, "fix GRAMMAR", "Other.", None)
                .unwrap(),
            Put::NameTaken
        );
        assert_eq!(
            store
                .put_prompt_action(Some(Uuid::new_v4()), "Email", "As an email.", None)
                .unwrap(),
            Put::NotFound
        );
        // Changed in place: the same id, its enabled state kept unless given.
        let Put::Saved(changed) = store
            .put_prompt_action(
                Some(fix.id),
                "Fix grammar",
                "Fix grammar and spelling.",
                None,
            )
            .unwrap()
        else {
            panic!("not saved")
        };
        assert_eq!((changed.id, changed.enabled), (fix.id, true));
        store
            .put_prompt_action(Some(fix.id), "Fix grammar", "x", Some(false))
            .unwrap();
        assert_eq!(store.prompt_actions().unwrap().len(), 1);
        let Found::One(found) = store.find_prompt_action("FIX grammar").unwrap() else {
            panic!("not found by name")
        };
        assert_eq!((found.id, found.enabled), (fix.id, false));
        let Found::One(found) = store
            .find_prompt_action(&wire::format_uuid(&fix.id).to_lowercase())
            .unwrap()
        else {
            panic!("not found by id")
        };
        assert_eq!(found.prompt, "x");
        assert_eq!(store.find_prompt_action("Summarise").unwrap(), Found::None);
        // Two of one name, as an import may bring: neither is taken by name.
        insert_if_new(
            &store.conn(),
            &PromptAction {
                id: Uuid::new_v4(),
                name: "fix grammar".into(),
                prompt: "y".into(),
                enabled: true,
            },
        )
        .unwrap();
        assert_eq!(
            store.find_prompt_action("Fix grammar").unwrap(),
            Found::Several
        );
    }
}
