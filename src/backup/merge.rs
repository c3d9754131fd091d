//! The import's merge rules, applied inside one transaction: never overwrite, append
//! workflows and profiles after the existing ones, skip duplicates, keep occupied hotkey
//! slots, and leave out history outside the retention window.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use rusqlite::Transaction;
use uuid::Uuid;

use super::Backup;
use crate::store::preferences::{self, HISTORY_RETENTION_DAYS, Pref, PrefValue, UPDATE_CHANNEL};
use crate::store::rules::{Rule, RuleKind};
use crate::store::{Plugin, dictionary, history, hotkeys, plugins, prompt_actions, snippets};
use crate::wire::ImportSummary;

/// Whether `value` for `pref` is a history retention window shorter than the one in force
/// (0 keeps history forever): an import never makes history expire sooner.
fn shortens_retention(
    tx: &Transaction<'_>,
    pref: &Pref,
    value: &PrefValue,
) -> rusqlite::Result<bool> {
    if pref.key != HISTORY_RETENTION_DAYS.key {
        return Ok(false);
    }
    let current = preferences::stored_on(tx, pref)?.unwrap_or_else(|| pref.default_value());
    Ok(match (current, value) {
        (PrefValue::Int(current), PrefValue::Int(days)) => {
            *days > 0 && (current == 0 || *days < current)
        }
        _ => false,
    })
}

/// Merges `backup` into the store through `tx`. `fetched` holds the registry's metadata for
/// the plugins that can be installed.
pub fn apply(
    tx: &Transaction<'_>,
    backup: &Backup,
    fetched: &HashMap<String, Plugin>,
    now: DateTime<Utc>,
) -> rusqlite::Result<ImportSummary> {
    let mut summary = ImportSummary::default();

    // Preferences first: the retention window that decides about history is the one in
    // force once the import is done.
    for (pref, value) in &backup.preferences {
        if shortens_retention(tx, pref, value)? {
            summary.preferences_skipped.push(pref.key.to_string());
        } else if preferences::stored_on(tx, pref)?.is_none() {
            preferences::set_on(tx, pref, value)?;
            summary.preferences_applied += 1;
        }
    }
    if let Some(channel) = &backup.update_channel
        && preferences::stored_on(tx, &UPDATE_CHANNEL)?.is_none()
    {
        preferences::set_on(tx, &UPDATE_CHANNEL, &PrefValue::Text(channel.clone()))?;
        summary.update_channel_applied = true;
    }

    summary.workflows_imported = append_rules(tx, &backup.workflows)?;

    for entry in &backup.dictionary {
        if dictionary::insert_if_new(tx, entry)? {
            summary.dictionary_imported += 1;
        } else {
            summary.dictionary_skipped += 1;
        }
    }

    for snippet in &backup.snippets {
        if snippets::insert_if_new(tx, snippet)? {
            summary.snippets_imported += 1;
        } else {
            summary.snippets_skipped += 1;
        }
    }

    for action in &backup.prompt_actions {
        if prompt_actions::insert_if_new(tx, action)? {
            summary.prompt_actions_imported += 1;
        }
    }

    summary.profiles_imported = append_rules(tx, &backup.profiles)?;

    for hotkey in &backup.hotkeys {
        if hotkeys::bind_if_free(tx, hotkey)? {
            summary.hotkeys_applied += 1;
        } else {
            summary.hotkeys_skipped += 1;
        }
    }

    for plugin in &backup.plugins {
        match fetched.get(&plugin.id) {
            Some(found) if !plugins::is_installed(tx, &plugin.id)? => {
                plugins::install(tx, found)?;
                summary.plugins_installed += 1;
            }
            _ => summary.plugins_skipped += 1,
        }
    }

    let cutoff = history::retention_cutoff(tx, now)?;
    for entry in &backup.history {
        if history::exists(tx, &entry.id)? {
            continue;
        }
        if cutoff.is_some_and(|cutoff| entry.timestamp < cutoff) {
            summary.history_skipped_by_retention += 1;
            continue;
        }
        history::insert(tx, entry)?;
        summary.history_imported += 1;
    }
    Ok(summary)
}

/// Adds the rules whose id is new here after the existing ones of their kind; returns how
/// many were added.
fn append_rules<T: RuleKind + Clone>(
    tx: &Transaction<'_>,
    rules: &[Rule<T>],
) -> rusqlite::Result<u64> {
    let fresh = new_by_id(rules, |r| r.id, |id| Rule::<T>::exists(tx, id))?;
    let shift = append_shift(
        Rule::<T>::max_priority(tx)?,
        fresh.iter().map(|r| r.priority),
    );
    for rule in &fresh {
        let mut rule = (*rule).clone();
        rule.priority = rule.priority.saturating_add(shift);
        rule.insert(tx)?;
    }
    Ok(fresh.len() as u64)
}

/// The items whose id is neither in the store nor earlier in the list, in order.
fn new_by_id<T>(
    items: &[T],
    id_of: impl Fn(&T) -> Uuid,
    stored: impl Fn(&Uuid) -> rusqlite::Result<bool>,
) -> rusqlite::Result<Vec<&T>> {
    let mut seen = HashSet::new();
    let mut fresh = Vec::new();
    for item in items {
        let id = id_of(item);
        if seen.insert(id) && !stored(&id)? {
            fresh.push(item);
        }
    }
    Ok(fresh)
}

/// What to add to imported priorities so the imported items come after the existing ones,
/// keeping their order and spacing. Nothing moves in an empty store, so a backup restored
/// into a fresh data folder keeps its priorities exactly.
fn append_shift(existing_max: Option<i64>, imported: impl Iterator<Item = i64>) -> i64 {
    match (existing_max, imported.min()) {
        (Some(max), Some(min)) => max.saturating_add(1).saturating_sub(min),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_priorities_follow_the_existing_ones() {
        assert_eq!(append_shift(None, [3, 5].into_iter()), 0);
        assert_eq!(append_shift(Some(2), [0, 1].into_iter()), 3);
        assert_eq!(append_shift(Some(2), [10, 12].into_iter()), -7);
        assert_eq!(append_shift(Some(2), std::iter::empty()), 0);
    }
}
