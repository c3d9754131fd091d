//! Secrets kept in the store (the API token, the chat provider's key). Never part of a
//! settings backup.

use rusqlite::OptionalExtension;

use super::{Store, StoreError};

impl Store {
    pub fn secret(&self, name: &str) -> Result<Option<String>, StoreError> {
        let conn = self.read()?;
        let mut stmt = conn.prepare_cached("SELECT value FROM secrets WHERE name = ?1")?;
        Ok(stmt
            .query_row([name], |row| row.get::<_, String>(0))
            .optional()?)
    }

    pub fn set_secret(&self, name: &str, value: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO secrets (name, value) VALUES (?1, ?2)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            [name, value],
        )?;
        Ok(())
    }

    /// Removes the secret `name`; returns whether it was set.
    pub fn delete_secret(&self, name: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .execute("DELETE FROM secrets WHERE name = ?1", [name])?
            > 0)
    }

    /// Returns the secret `name`, creating it with `make` in the same transaction if absent,
    /// so two processes starting at once agree on one value.
    pub fn secret_or_insert(
        &self,
        name: &str,
        make: impl FnOnce() -> String,
    ) -> Result<String, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: Option<String> = tx
            .query_row("SELECT value FROM secrets WHERE name = ?1", [name], |row| {
                row.get(0)
            })
            .optional()?;
        let value = match existing {
            Some(value) => value,
            None => {
                let value = make();
                tx.execute(
                    "INSERT INTO secrets (name, value) VALUES (?1, ?2)",
                    [name, &value],
                )?;
                value
            }
        };
        tx.commit()?;
        Ok(value)
    }
}
