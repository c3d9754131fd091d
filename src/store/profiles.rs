//! Profiles: per-app transcription setups (engine, model, languages) kept as a settings
//! backup carries them. The API's `/v1/profiles` routes are aliases of the rules (workflows).

use rusqlite::Row;
use rusqlite::types::ToSql;

use super::lists::ListTable;
use super::rules::{Rule, RuleKind};
use super::{Store, StoreError};

/// A profile.
pub type Profile = Rule<ProfileFields>;

/// What a profile adds to the shared rule fields: the engine and model it uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProfileFields {
    pub engine: Option<String>,
    pub model: Option<String>,
}

impl RuleKind for ProfileFields {
    const TABLE: &'static str = "profiles";
    const ITEMS: ListTable = ListTable {
        table: "profile_items",
        owner: "profile_id",
    };
    const COLUMNS: &'static [&'static str] = &["engine", "model"];

    fn read(row: &Row<'_>, first: usize) -> rusqlite::Result<Self> {
        Ok(ProfileFields {
            engine: row.get(first)?,
            model: row.get(first + 1)?,
        })
    }

    fn values(&self) -> Vec<&dyn ToSql> {
        vec![&self.engine, &self.model]
    }
}

impl Store {
    /// Every profile, by priority (ties in the order they were added).
    pub fn profiles(&self) -> Result<Vec<Profile>, StoreError> {
        self.reading(Profile::all)
    }

    /// Deletes the profile `id` with its application and address lists; returns whether there
    /// was one.
    pub fn delete_profile(&self, id: &uuid::Uuid) -> Result<bool, StoreError> {
        // The lists go with it (ON DELETE CASCADE).
        let deleted = self.conn().execute(
            "DELETE FROM profiles WHERE id = ?1",
            [crate::wire::format_uuid(id)],
        )?;
        Ok(deleted > 0)
    }
}
