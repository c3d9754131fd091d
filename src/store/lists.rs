//! Ordered string lists that belong to a row (a workflow's app ids, URL patterns and language
//! hints; a profile's app ids and URL patterns), kept in a child table, one row per item.

use std::collections::HashMap;

use rusqlite::{Connection, params};

/// A child table `(owner_id, list, position, value)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListTable {
    pub table: &'static str,
    pub owner: &'static str,
}

/// Lists by (owner id, list name).
pub(crate) type Lists = HashMap<(String, String), Vec<String>>;

impl ListTable {
    /// Every list in the table, items in order.
    pub fn load_all(&self, conn: &Connection) -> rusqlite::Result<Lists> {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {owner}, list, value FROM {table} ORDER BY {owner}, list, position",
            owner = self.owner,
            table = self.table
        ))?;
        let mut lists = Lists::new();
        let rows = stmt.query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get(2)?,
            ))
        })?;
        for row in rows {
            let (owner, list, value) = row?;
            lists.entry((owner, list)).or_default().push(value);
        }
        Ok(lists)
    }

    /// The lists of one owner.
    pub fn load_one(&self, conn: &Connection, owner_id: &str) -> rusqlite::Result<Lists> {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT list, value FROM {table} WHERE {owner} = ?1 ORDER BY list, position",
            owner = self.owner,
            table = self.table
        ))?;
        let mut lists = Lists::new();
        let rows = stmt.query_map([owner_id], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (list, value) = row?;
            lists
                .entry((owner_id.to_string(), list))
                .or_default()
                .push(value);
        }
        Ok(lists)
    }

    /// Writes `values` as the list `list` of `owner_id` (which has none yet).
    pub fn insert(
        &self,
        conn: &Connection,
        owner_id: &str,
        list: &str,
        values: &[String],
    ) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare_cached(&format!(
            "INSERT INTO {table} ({owner}, list, position, value) VALUES (?1, ?2, ?3, ?4)",
            owner = self.owner,
            table = self.table
        ))?;
        for (position, value) in values.iter().enumerate() {
            stmt.execute(params![owner_id, list, position as i64, value])?;
        }
        Ok(())
    }
}

/// Takes one list out of `lists` (empty when absent).
pub(crate) fn take(lists: &mut Lists, owner_id: &str, list: &str) -> Vec<String> {
    lists
        .remove(&(owner_id.to_string(), list.to_string()))
        .unwrap_or_default()
}
