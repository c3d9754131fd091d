//! Bounds on history search: the words of a search text (deduplicated, at most
//! [`MAX_SEARCH_WORDS`] of at most [`MAX_WORD_CHARS`] characters) and a deadline
//! ([`SEARCH_DEADLINE`]) past which SQLite interrupts the search. Searches also take a
//! long-read slot, so they never occupy every read connection.

use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};
use unicode_normalization::char::is_combining_mark;

use super::{Store, StoreError};

/// Words of a search text that count; later ones are ignored.
pub const MAX_SEARCH_WORDS: usize = 16;
/// Characters of a word that count; a longer word is matched by its first ones.
pub const MAX_WORD_CHARS: usize = 32;
/// A search still running after this (waiting for its turn included) is stopped.
pub const SEARCH_DEADLINE: Duration = Duration::from_secs(2);
/// SQLite virtual machine steps between two looks at the clock.
const STEPS_PER_CHECK: i32 = 1_000;

/// The words of a search text, split like the `unicode61` tokenizer splits them: repeated
/// words (ignoring case) and words that start another word of the text are dropped, since
/// every word must match as a prefix anyway; the first [`MAX_SEARCH_WORDS`] that remain
/// count, each cut to [`MAX_WORD_CHARS`] characters.
pub fn search_words(search: &str) -> Vec<String> {
    let mut kept: Vec<(String, String)> = Vec::new(); // (word, its lowercase)
    let words = search
        .split(|c: char| !(c.is_alphanumeric() || is_combining_mark(c)))
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().take(MAX_WORD_CHARS).collect::<String>());
    for word in words {
        let lower = word.to_lowercase();
        if kept.iter().any(|(_, k)| k.starts_with(&lower)) {
            continue;
        }
        if let Some(shorter) = kept.iter_mut().find(|(_, k)| lower.starts_with(k.as_str())) {
            *shorter = (word, lower);
        } else if kept.len() < MAX_SEARCH_WORDS {
            kept.push((word, lower));
        }
    }
    kept.into_iter().map(|(word, _)| word).collect()
}

/// An FTS5 query for a search text: every word must appear, each as a prefix (so `transcr`
/// finds `transcription`). Each word is quoted, so no search text can inject FTS5 syntax.
/// None when the text holds no word.
pub fn fts_query(search: &str) -> Option<String> {
    let words = search_words(search);
    (!words.is_empty()).then(|| {
        words
            .iter()
            .map(|w| format!("\"{w}\"*"))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

impl Store {
    /// Runs the search `work` on a read connection, within [`SEARCH_DEADLINE`] of now:
    /// [`StoreError::SearchTooLong`] when no long-read slot frees up in time or SQLite is
    /// interrupted at the deadline.
    pub(crate) fn search<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let deadline = Instant::now() + SEARCH_DEADLINE;
        let _slot = self
            .long_reads
            .take_until(deadline)
            .ok_or(StoreError::SearchTooLong)?;
        let conn = self.read()?;
        within(&conn, deadline, work)
    }
}

/// Runs `work` on `conn`, interrupted once `deadline` passes.
pub(crate) fn within<T>(
    conn: &Connection,
    deadline: Instant,
    work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    let _watch = Watch::install(conn, deadline);
    work(conn).map_err(|err| match err.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => StoreError::SearchTooLong,
        _ => err.into(),
    })
}

/// The progress handler that interrupts `conn` past a deadline, removed when dropped so the
/// connection goes back to its pool without it.
struct Watch<'c> {
    conn: &'c Connection,
}

impl<'c> Watch<'c> {
    fn install(conn: &'c Connection, deadline: Instant) -> Watch<'c> {
        conn.progress_handler(STEPS_PER_CHECK, Some(move || Instant::now() >= deadline));
        Watch { conn }
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        self.conn.progress_handler(0, None::<fn() -> bool>);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    #[test]
    fn words_are_deduplicated_ignoring_case_and_prefixes_of_others() {
        assert_eq!(search_words("café Café CAFÉ"), vec!["café"]);
        assert_eq!(search_words("caf café ca"), vec!["café"]);
        assert_eq!(
            search_words("trans transcription t x"),
            vec!["transcription", "x"]
        );
        assert_eq!(
            search_words("e e e e e e e e e e e e e e e e e e e"),
            vec!["e"]
        );
        assert_eq!(
            search_words("\" OR * NEAR(a b)"),
            vec!["OR", "NEAR", "a", "b"]
        );
        assert!(search_words("  ,;  ").is_empty());
        assert_eq!(fts_query("Mail cafe"), Some("\"Mail\"* \"cafe\"*".into()));
        assert_eq!(fts_query(" - "), None);
    }

    #[test]
    fn words_are_capped_in_number_and_length() {
        let many: Vec<String> = (0..100).map(|i| format!("w{i:03}")).collect();
        let words = search_words(&many.join(" "));
        assert_eq!(words, many[..MAX_SEARCH_WORDS].to_vec());
        // A word already kept may still be replaced by a longer one past the cap.
        let words = search_words(&format!("{} w000xyz", many.join(" ")));
        assert_eq!(words[0], "w000xyz");
        assert_eq!(words.len(), MAX_SEARCH_WORDS);
        let long = "é".repeat(500);
        assert_eq!(search_words(&long), vec!["é".repeat(MAX_WORD_CHARS)]);
        // 6 KB of one short word in every case mix is a single word.
        let hostile = "aB Ab ab AB ".repeat(512);
        assert_eq!(search_words(&hostile), vec!["aB"]);
    }

    #[test]
    fn a_statement_past_the_deadline_is_interrupted_and_the_connection_stays_usable() {
        let (_dir, store) = temp_store();
        let conn = store.read().unwrap();
        // Minutes of work: only the deadline ends it in time.
        let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                       WHERE i < 1000000000) SELECT count(*) FROM n";
        let started = Instant::now();
        let result = within(&conn, started + Duration::from_millis(200), |conn| {
            conn.query_row(endless, [], |r| r.get::<_, i64>(0))
        });
        let took = started.elapsed();
        assert!(
            matches!(result, Err(StoreError::SearchTooLong)),
            "{result:?}"
        );
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // The handler is gone: a later statement runs to its end.
        let counted: i64 = conn
            .query_row(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
                 SELECT count(*) FROM n",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(counted, 100_000);
    }

    #[test]
    fn a_search_that_cannot_get_a_slot_before_the_deadline_is_refused() {
        let (_dir, store) = temp_store();
        let _taken: Vec<_> = (0..super::super::readers::LONG_READS)
            .map(|_| store.long_reads.take())
            .collect();
        let started = Instant::now();
        let result = store.search(|_| Ok(()));
        assert!(matches!(result, Err(StoreError::SearchTooLong)));
        assert!(started.elapsed() >= SEARCH_DEADLINE);
    }
}
