//! The dictionary: recognition terms (hints for the engine) and corrections (rewrites after
//! transcription), with the contract's merge, de-duplication, re-casing and clamping rules.

use std::collections::HashSet;

use rusqlite::{Connection, Row, params};

use super::text::{case_key, display_order, fold};
use super::{Store, StoreError};

/// A recognition term as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub term: String,
    /// Similarity threshold for CTC-based engines, 0..=1.
    pub ctc_min_similarity: Option<f64>,
}

/// A correction: `original` is replaced by `replacement` wherever it occurs as whole words
/// (the transcription path applies them, see `transcribe::corrections`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Correction {
    /// Text to look for; may span several words and contain punctuation ("C plus plus").
    pub original: String,
    /// Text written in place of each match, verbatim.
    pub replacement: String,
    /// When `false`, letters match in any case; when `true`, they must match exactly.
    pub case_sensitive: bool,
}

/// One dictionary entry with its enabled state, as a settings backup carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum DictionaryEntry {
    Term {
        term: Term,
        enabled: bool,
    },
    Correction {
        correction: Correction,
        enabled: bool,
    },
}

impl Store {
    /// Enabled recognition terms, sorted case-insensitively (the transcription path joins
    /// them into the engine's prompt).
    pub fn enabled_terms(&self) -> Result<Vec<Term>, StoreError> {
        self.reading(enabled_terms)
    }

    /// Adds terms, or with `replace` makes them the whole list: terms are trimmed, empty
    /// ones dropped, duplicates removed case- and accent-insensitively (the first wins), a
    /// term matching an existing one re-cases it (and keeps its threshold unless a new one is
    /// given), thresholds are clamped to 0..=1. Returns the enabled terms afterwards.
    pub fn put_terms(&self, terms: &[Term], replace: bool) -> Result<Vec<Term>, StoreError> {
        let terms = normalize_terms(terms);
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for term in &terms {
            let key = fold(&term.term);
            tx.execute(
                "INSERT INTO dictionary_terms (term, term_key, enabled, ctc_min_similarity)
                 VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT(term_key) DO UPDATE SET
                     term = excluded.term,
                     enabled = 1,
                     ctc_min_similarity = coalesce(excluded.ctc_min_similarity, ctc_min_similarity)",
                params![term.term, key, term.ctc_min_similarity],
            )?;
        }
        if replace {
            let keep: HashSet<String> = terms.iter().map(|t| fold(&t.term)).collect();
            let mut keys = tx.prepare("SELECT term_key FROM dictionary_terms")?;
            let stale: Vec<String> = keys
                .query_map([], |row| row.get::<_, String>(0))?
                .filter(|key| key.as_ref().map_or(true, |k| !keep.contains(k)))
                .collect::<Result<_, _>>()?;
            drop(keys);
            for key in stale {
                tx.execute("DELETE FROM dictionary_terms WHERE term_key = ?1", [key])?;
            }
        }
        let listed = enabled_terms(&tx)?;
        tx.commit()?;
        Ok(listed)
    }

    /// Deletes the term matching `term` case- and accent-insensitively. Returns whether one
    /// was deleted and how many enabled terms remain.
    pub fn delete_term(&self, term: &str) -> Result<(bool, usize), StoreError> {
        let key = fold(term.trim());
        Ok(delete_by_key(
            &self.conn(),
            "dictionary_terms",
            "term_key",
            &key,
        )?)
    }

    /// Enabled corrections, sorted case-insensitively by original (the transcription path
    /// applies them last).
    pub fn enabled_corrections(&self) -> Result<Vec<Correction>, StoreError> {
        self.reading(enabled_corrections)
    }

    /// Adds or updates (by case-insensitive original) one correction and enables it; returns
    /// the enabled corrections. The caller rejects an empty original.
    pub fn put_correction(&self, correction: &Correction) -> Result<Vec<Correction>, StoreError> {
        let original = correction.original.trim();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO dictionary_corrections
                 (original, original_key, replacement, case_sensitive, enabled)
             VALUES (?1, ?2, ?3, ?4, 1)
             ON CONFLICT(original_key) DO UPDATE SET
                 original = excluded.original,
                 replacement = excluded.replacement,
                 case_sensitive = excluded.case_sensitive,
                 enabled = 1",
            params![
                original,
                case_key(original),
                correction.replacement,
                correction.case_sensitive
            ],
        )?;
        Ok(enabled_corrections(&conn)?)
    }

    /// Deletes the correction whose original matches case-insensitively. Returns whether one
    /// was deleted and how many enabled corrections remain.
    pub fn delete_correction(&self, original: &str) -> Result<(bool, usize), StoreError> {
        let key = case_key(original.trim());
        Ok(delete_by_key(
            &self.conn(),
            "dictionary_corrections",
            "original_key",
            &key,
        )?)
    }
}

/// Deletes the row of `table` whose `key_column` is `key`. Returns whether one was deleted and
/// how many enabled rows remain.
fn delete_by_key(
    conn: &Connection,
    table: &str,
    key_column: &str,
    key: &str,
) -> rusqlite::Result<(bool, usize)> {
    let deleted = conn.execute(
        &format!("DELETE FROM {table} WHERE {key_column} = ?1"),
        [key],
    )?;
    let count: i64 = conn.query_row(
        &format!("SELECT count(*) FROM {table} WHERE enabled = 1"),
        [],
        |r| r.get(0),
    )?;
    Ok((deleted > 0, count as usize))
}

/// Trims, drops empty terms, removes later duplicates and clamps thresholds.
fn normalize_terms(terms: &[Term]) -> Vec<Term> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for term in terms {
        let text = term.term.trim();
        if text.is_empty() || !seen.insert(fold(text)) {
            continue;
        }
        out.push(Term {
            term: text.to_string(),
            ctc_min_similarity: term.ctc_min_similarity.map(clamp_similarity),
        });
    }
    out
}

/// Clamps a similarity threshold to 0..=1 (a NaN becomes 0).
pub fn clamp_similarity(value: f64) -> f64 {
    if value.is_nan() {
        0.0
    } else {
        value.clamp(0.0, 1.0)
    }
}

fn enabled_terms(conn: &Connection) -> rusqlite::Result<Vec<Term>> {
    let mut stmt = conn.prepare_cached(
        "SELECT term, ctc_min_similarity FROM dictionary_terms WHERE enabled = 1",
    )?;
    let mut terms: Vec<Term> = stmt
        .query_map([], |row| {
            Ok(Term {
                term: row.get(0)?,
                ctc_min_similarity: row.get(1)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    terms.sort_by(|a, b| display_order(&a.term, &b.term));
    Ok(terms)
}

fn enabled_corrections(conn: &Connection) -> rusqlite::Result<Vec<Correction>> {
    let mut stmt = conn.prepare_cached(
        "SELECT original, replacement, case_sensitive FROM dictionary_corrections
         WHERE enabled = 1",
    )?;
    let mut corrections: Vec<Correction> = stmt
        .query_map([], read_correction)?
        .collect::<Result<_, _>>()?;
    corrections.sort_by(|a, b| display_order(&a.original, &b.original));
    Ok(corrections)
}

fn read_correction(row: &Row<'_>) -> rusqlite::Result<Correction> {
    Ok(Correction {
        original: row.get(0)?,
        replacement: row.get(1)?,
        case_sensitive: row.get(2)?,
    })
}

/// Every entry, enabled or not: terms then corrections, each in the order they were added.
pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<DictionaryEntry>> {
    let mut terms = conn
        .prepare("SELECT term, ctc_min_similarity, enabled FROM dictionary_terms ORDER BY seq")?;
    let mut entries: Vec<DictionaryEntry> = terms
        .query_map([], |row| {
            Ok(DictionaryEntry::Term {
                term: Term {
                    term: row.get(0)?,
                    ctc_min_similarity: row.get(1)?,
                },
                enabled: row.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut corrections = conn.prepare(
        "SELECT original, replacement, case_sensitive, enabled FROM dictionary_corrections
         ORDER BY seq",
    )?;
    let listed = corrections.query_map([], |row| {
        Ok(DictionaryEntry::Correction {
            correction: read_correction(row)?,
            enabled: row.get(3)?,
        })
    })?;
    for entry in listed {
        entries.push(entry?);
    }
    Ok(entries)
}

/// Adds `entry` unless an entry with the same key exists (a term matching case- and
/// accent-insensitively, a correction whose original matches case-insensitively).
/// Returns whether it was added.
pub(crate) fn insert_if_new(conn: &Connection, entry: &DictionaryEntry) -> rusqlite::Result<bool> {
    let added = match entry {
        DictionaryEntry::Term { term, enabled } => {
            let text = term.term.trim();
            conn.prepare_cached(
                "INSERT INTO dictionary_terms (term, term_key, enabled, ctc_min_similarity)
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT(term_key) DO NOTHING",
            )?
            .execute(params![
                text,
                fold(text),
                enabled,
                term.ctc_min_similarity.map(clamp_similarity)
            ])?
        }
        DictionaryEntry::Correction {
            correction,
            enabled,
        } => {
            let original = correction.original.trim();
            conn.prepare_cached(
                "INSERT INTO dictionary_corrections
                     (original, original_key, replacement, case_sensitive, enabled)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(original_key) DO NOTHING",
            )?
            .execute(params![
                original,
                case_key(original),
                correction.replacement,
                correction.case_sensitive,
                enabled
            ])?
        }
    };
    Ok(added > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    fn term(text: &str, ctc: Option<f64>) -> Term {
        Term {
            term: text.into(),
            ctc_min_similarity: ctc,
        }
    }

    fn texts(terms: &[Term]) -> Vec<&str> {
        terms.iter().map(|t| t.term.as_str()).collect()
    }

    #[test]
    fn terms_merge_recase_and_keep_their_threshold() {
        let (_dir, store) = temp_store();
        store
            .put_terms(
                &[term("Kubernetes", Some(0.7)), term(" zebra ", None)],
                false,
            )
            .unwrap();
        let listed = store
            .put_terms(&[term("KUBERNETES", None), term("Äpfel", Some(4.0))], false)
            .unwrap();
        assert_eq!(
            listed,
            vec![
                term("Äpfel", Some(1.0)),
                term("KUBERNETES", Some(0.7)),
                term("zebra", None),
            ]
        );
    }

    #[test]
    fn duplicates_in_one_request_keep_the_first_and_replace_drops_the_rest() {
        let (_dir, store) = temp_store();
        store
            .put_terms(&[term("old", None), term("Café", None)], false)
            .unwrap();
        let listed = store
            .put_terms(
                &[term("cafe", Some(-1.0)), term("CAFÉ", None), term("", None)],
                true,
            )
            .unwrap();
        assert_eq!(listed, vec![term("cafe", Some(0.0))]);
        assert_eq!(store.delete_term("CAFE").unwrap(), (true, 0));
        assert_eq!(store.delete_term("cafe").unwrap(), (false, 0));
    }

    #[test]
    fn corrections_upsert_by_case_insensitive_original() {
        let (_dir, store) = temp_store();
        let put = |original: &str, replacement: &str| {
            store
                .put_correction(&Correction {
                    original: original.into(),
                    replacement: replacement.into(),
                    case_sensitive: false,
                })
                .unwrap()
        };
        put("teh", "the");
        put("Cafe", "café");
        let listed = put("TEH", "THE");
        assert_eq!(texts_of(&listed), vec![("Cafe", "café"), ("TEH", "THE")]);
        // Accents are significant for corrections.
        put("café", "cafe");
        assert_eq!(store.enabled_corrections().unwrap().len(), 3);
        assert_eq!(store.delete_correction("teh").unwrap(), (true, 2));
    }

    fn texts_of(list: &[Correction]) -> Vec<(&str, &str)> {
        list.iter()
            .map(|c| (c.original.as_str(), c.replacement.as_str()))
            .collect()
    }

    #[test]
    fn sorting_is_case_insensitive() {
        let (_dir, store) = temp_store();
        let listed = store
            .put_terms(
                &[term("beta", None), term("Alpha", None), term("gamma", None)],
                false,
            )
            .unwrap();
        assert_eq!(texts(&listed), vec!["Alpha", "beta", "gamma"]);
    }
}
