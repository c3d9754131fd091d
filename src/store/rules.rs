//! What workflows and profiles share: a named, ordered rule for some apps and websites with the
//! languages it sets, stored as one row plus its lists. Each kind adds its own fields.

use rusqlite::types::ToSql;
use rusqlite::{Connection, OptionalExtension, Row, params_from_iter};
use uuid::Uuid;

use super::lists::{ListTable, Lists, take};
use crate::wire;

/// A rule: the apps and websites it applies to, its place in the order and the languages it
/// sets. `T` holds what its kind adds ([`super::Workflow`], [`super::Profile`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rule<T> {
    pub id: Uuid,
    pub name: String,
    pub enabled: bool,
    /// Lower numbers come first.
    pub priority: i64,
    /// Application ids (on Linux the desktop-file id or WM_CLASS) the rule applies to.
    pub bundle_identifiers: Vec<String>,
    /// Patterns of the website addresses the rule applies to.
    pub url_patterns: Vec<String>,
    pub input_language: Option<String>,
    pub translation_target_language: Option<String>,
    /// What this kind of rule adds.
    pub extra: T,
}

/// A kind of rule: where its rows live and how its own fields are stored.
pub(crate) trait RuleKind: Default {
    /// The table with one row per rule.
    const TABLE: &'static str;
    /// The table with the rules' lists.
    const ITEMS: ListTable;
    /// This kind's own columns, stored after the shared ones.
    const COLUMNS: &'static [&'static str];

    /// Reads this kind's columns, the first at index `first`.
    fn read(row: &Row<'_>, first: usize) -> rusqlite::Result<Self>;

    /// The values of this kind's columns, in [`RuleKind::COLUMNS`] order.
    fn values(&self) -> Vec<&dyn ToSql>;

    /// This kind's own lists, by list name.
    fn lists(&self) -> Vec<(&'static str, &[String])> {
        Vec::new()
    }

    /// Fills this kind's own lists; `take` hands out a list by name.
    fn take_lists(&mut self, _take: &mut dyn FnMut(&'static str) -> Vec<String>) {}
}

const APPS: &str = "app";
const URLS: &str = "url";

/// The columns every kind has, first in every query.
const SHARED_COLUMNS: &[&str] = &[
    "id",
    "name",
    "enabled",
    "priority",
    "input_language",
    "translation_target_language",
];

// The bound sits on each method: the trait is the crate's own, the type is public.
impl<T> Rule<T> {
    /// Every rule of this kind, by priority (ties in the order they were added).
    pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Rule<T>>>
    where
        T: RuleKind,
    {
        let mut lists = T::ITEMS.load_all(conn)?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {} FROM {} ORDER BY priority, seq",
            columns::<T>(),
            T::TABLE
        ))?;
        let rows = stmt.query_map([], read_row::<T>)?;
        rows.map(|row| Ok(with_lists(row?, &mut lists))).collect()
    }

    /// The rule with this id, if any.
    pub(crate) fn find(conn: &Connection, id: &Uuid) -> rusqlite::Result<Option<Rule<T>>>
    where
        T: RuleKind,
    {
        let key = wire::format_uuid(id);
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {} FROM {} WHERE id = ?1",
            columns::<T>(),
            T::TABLE
        ))?;
        let Some(row) = stmt.query_row([&key], read_row::<T>).optional()? else {
            return Ok(None);
        };
        let mut lists = T::ITEMS.load_one(conn, &key)?;
        Ok(Some(with_lists(row, &mut lists)))
    }

    pub(crate) fn exists(conn: &Connection, id: &Uuid) -> rusqlite::Result<bool>
    where
        T: RuleKind,
    {
        conn.prepare_cached(&format!("SELECT 1 FROM {} WHERE id = ?1", T::TABLE))?
            .exists([wire::format_uuid(id)])
    }

    /// The highest priority in use, None when there are no rules of this kind.
    pub(crate) fn max_priority(conn: &Connection) -> rusqlite::Result<Option<i64>>
    where
        T: RuleKind,
    {
        conn.query_row(
            &format!("SELECT max(priority) FROM {}", T::TABLE),
            [],
            |row| row.get(0),
        )
    }

    /// Flips the rule's enabled state; returns it with the new state, None when unknown.
    pub(crate) fn toggle(conn: &Connection, id: &Uuid) -> rusqlite::Result<Option<Rule<T>>>
    where
        T: RuleKind,
    {
        let changed = conn.execute(
            &format!(
                "UPDATE {} SET enabled = 1 - enabled WHERE id = ?1",
                T::TABLE
            ),
            [wire::format_uuid(id)],
        )?;
        if changed == 0 {
            return Ok(None);
        }
        Rule::find(conn, id)
    }

    /// Adds the rule (its id must be new) with its lists.
    pub(crate) fn insert(&self, conn: &Connection) -> rusqlite::Result<()>
    where
        T: RuleKind,
    {
        let id = wire::format_uuid(&self.id);
        let shared: [&dyn ToSql; 6] = [
            &id,
            &self.name,
            &self.enabled,
            &self.priority,
            &self.input_language,
            &self.translation_target_language,
        ];
        let values: Vec<&dyn ToSql> = shared.into_iter().chain(self.extra.values()).collect();
        let placeholders: Vec<String> = (1..=values.len()).map(|n| format!("?{n}")).collect();
        conn.prepare_cached(&format!(
            "INSERT INTO {} ({}) VALUES ({})",
            T::TABLE,
            columns::<T>(),
            placeholders.join(", ")
        ))?
        .execute(params_from_iter(values))?;
        let shared_lists = [
            (APPS, self.bundle_identifiers.as_slice()),
            (URLS, self.url_patterns.as_slice()),
        ];
        for (list, items) in shared_lists.into_iter().chain(self.extra.lists()) {
            T::ITEMS.insert(conn, &id, list, items)?;
        }
        Ok(())
    }
}

/// The columns of kind `T`, as a select or insert lists them.
fn columns<T: RuleKind>() -> String {
    SHARED_COLUMNS
        .iter()
        .chain(T::COLUMNS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// A rule row without its lists, with its stored id.
fn read_row<T: RuleKind>(row: &Row<'_>) -> rusqlite::Result<(String, Rule<T>)> {
    let id: String = row.get(0)?;
    let rule = Rule {
        id: wire::parse_uuid(&id).unwrap_or_default(),
        name: row.get(1)?,
        enabled: row.get(2)?,
        priority: row.get(3)?,
        bundle_identifiers: Vec::new(),
        url_patterns: Vec::new(),
        input_language: row.get(4)?,
        translation_target_language: row.get(5)?,
        extra: T::read(row, SHARED_COLUMNS.len())?,
    };
    Ok((id, rule))
}

fn with_lists<T: RuleKind>((key, mut rule): (String, Rule<T>), lists: &mut Lists) -> Rule<T> {
    rule.bundle_identifiers = take(lists, &key, APPS);
    rule.url_patterns = take(lists, &key, URLS);
    rule.extra.take_lists(&mut |list| take(lists, &key, list));
    rule
}
