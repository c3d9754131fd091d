//! Workflows, which the API lists as rules: the apps and websites a workflow applies to, its
//! language settings and translation target. Listed by priority, toggled on and off.

use std::fmt;
use std::str::FromStr;

use rusqlite::Row;
use rusqlite::types::{ToSql, ToSqlOutput};
use uuid::Uuid;

use super::lists::ListTable;
use super::rules::{Rule, RuleKind};
use super::{Store, StoreError};

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

/// A workflow (the API's rule).
pub type Workflow = Rule<WorkflowFields>;

/// What a workflow adds to the shared rule fields: how it picks the language, and the prompt
/// action its dictations run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkflowFields {
    pub language_mode: LanguageMode,
    /// The languages to detect among in [`LanguageMode::Multiple`].
    pub language_hints: Vec<String>,
    /// The prompt action a dictation under this workflow runs on its text.
    pub prompt_action_id: Option<ActionId>,
}

/// A prompt action's id, stored as its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionId(pub Uuid);

impl ToSql for ActionId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(crate::wire::format_uuid(&self.0).into())
    }
}

const HINTS: &str = "hint";

impl RuleKind for WorkflowFields {
    const TABLE: &'static str = "workflows";
    const ITEMS: ListTable = ListTable {
        table: "workflow_items",
        owner: "workflow_id",
    };
    const COLUMNS: &'static [&'static str] = &["language_mode", "prompt_action_id"];

    fn read(row: &Row<'_>, first: usize) -> rusqlite::Result<Self> {
        let mode: String = row.get(first)?;
        let action: Option<String> = row.get(first + 1)?;
        Ok(WorkflowFields {
            language_mode: mode.parse().unwrap_or_default(),
            language_hints: Vec::new(),
            prompt_action_id: action
                .as_deref()
                .and_then(crate::wire::parse_uuid)
                .map(ActionId),
        })
    }

    fn values(&self) -> Vec<&dyn ToSql> {
        vec![&self.language_mode, &self.prompt_action_id]
    }

    fn lists(&self) -> Vec<(&'static str, &[String])> {
        vec![(HINTS, self.language_hints.as_slice())]
    }

    fn take_lists(&mut self, take: &mut dyn FnMut(&'static str) -> Vec<String>) {
        self.language_hints = take(HINTS);
    }
}

impl ToSql for LanguageMode {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl Store {
    /// Every workflow, by priority (ties in the order they were added).
    pub fn workflows(&self) -> Result<Vec<Workflow>, StoreError> {
        self.reading(Workflow::all)
    }

    /// The workflow with this id, if any.
    pub fn workflow(&self, id: &Uuid) -> Result<Option<Workflow>, StoreError> {
        self.reading(|conn| Workflow::find(conn, id))
    }

    /// Adds a workflow (its id must be new).
    pub fn add_workflow(&self, workflow: &Workflow) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        workflow.insert(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// Flips a workflow's enabled state; returns it with the new state, None when unknown.
    pub fn toggle_workflow(&self, id: &Uuid) -> Result<Option<Workflow>, StoreError> {
        Ok(Workflow::toggle(&self.conn(), id)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflows_are_listed_by_priority_and_toggled() {
        let (_dir, store) = crate::store::temp_store();
        let second = Workflow {
            id: Uuid::new_v4(),
            name: "Mail".into(),
            enabled: true,
            priority: 5,
            bundle_identifiers: vec!["org.gnome.Evolution".into(), "thunderbird".into()],
            extra: WorkflowFields {
                language_mode: LanguageMode::Multiple,
                language_hints: vec!["de".into(), "en".into()],
                prompt_action_id: None,
            },
            ..Workflow::default()
        };
        let first = Workflow {
            id: Uuid::new_v4(),
            name: "Browser".into(),
            priority: 1,
            url_patterns: vec!["*.example.org".into()],
            input_language: Some("fr".into()),
            translation_target_language: Some("en".into()),
            extra: WorkflowFields {
                language_mode: LanguageMode::Exact,
                ..WorkflowFields::default()
            },
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
