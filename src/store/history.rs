//! Transcription history: durable entries, full-text search (FTS5, case- and accent-insensitive
//! over text, raw text and app name), newest-first paging and the retention window.
//!
//! Row ids follow time (see [`SEQ_SHIFT`]), so a search walks its matches newest first and
//! stops after one page instead of sorting every match.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rusqlite::{Connection, OptionalExtension, Row, ToSql, params};
use uuid::Uuid;

use super::preferences::{self, HISTORY_RETENTION_DAYS};
use super::search::fts_query;
use super::text::count_words;
use super::{Store, StoreError};
use crate::wire;

/// A history entry: its shape is the wire's (`GET /v1/history` lists it as stored).
pub use crate::wire::HistoryEntry;

/// What a transcription or dictation hands to [`Store::insert_history`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewHistoryEntry {
    /// The entry's id; a new random one when None (a dictation session passes its own id).
    pub id: Option<Uuid>,
    pub text: String,
    pub raw_text: String,
    /// When the audio was captured; now when None. Stored to the second.
    pub timestamp: Option<DateTime<Utc>>,
    pub app_name: Option<String>,
    pub app_bundle_id: Option<String>,
    pub app_url: Option<String>,
    pub duration: f64,
    pub language: Option<String>,
    pub engine: String,
    pub model: Option<String>,
    /// Under a prompt action: the words before it, and why it gave no text.
    pub transcribed_text: Option<String>,
    pub prompt_action_error: Option<String>,
}

impl NewHistoryEntry {
    fn into_entry(self, now: DateTime<Utc>) -> HistoryEntry {
        HistoryEntry {
            id: self.id.unwrap_or_else(Uuid::new_v4),
            words_count: count_words(&self.text),
            text: self.text,
            raw_text: self.raw_text,
            timestamp: whole_seconds(self.timestamp.unwrap_or(now)),
            app_name: self.app_name,
            app_bundle_id: self.app_bundle_id,
            app_url: self.app_url,
            duration: self.duration,
            language: self.language,
            engine: self.engine,
            model: self.model,
            transcribed_text: self.transcribed_text,
            prompt_action_error: self.prompt_action_error,
        }
    }
}

/// A page of `GET /v1/history`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryQuery {
    /// Search text; None or blank lists everything.
    pub query: Option<String>,
    pub limit: u32,
    pub offset: u64,
}

/// One page of entries (newest first) and how many match in all.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    pub total: u64,
}

/// A row id is the entry's second (`timestamp << SEQ_SHIFT`) plus a counter for entries
/// within the same second, so row id order is newest-first order read backwards.
pub const SEQ_SHIFT: u32 = 20;

const COLUMNS: &str = "id, text, raw_text, timestamp, app_name, app_bundle_id, app_url, \
                       duration, language, engine, model, words_count, transcribed_text, \
                       prompt_action_error";

impl Store {
    /// Writes one history entry durably, then applies the retention window.
    pub fn insert_history(&self, entry: &NewHistoryEntry) -> Result<HistoryEntry, StoreError> {
        let mut written = self.insert_history_many(std::slice::from_ref(entry))?;
        Ok(written.remove(0))
    }

    /// Writes several entries in one transaction, then applies the retention window.
    pub fn insert_history_many(
        &self,
        entries: &[NewHistoryEntry],
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let now = Utc::now();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut written = Vec::with_capacity(entries.len());
        for entry in entries {
            let entry = entry.clone().into_entry(now);
            insert(&tx, &entry)?;
            written.push(entry);
        }
        apply_retention(&tx, now)?;
        tx.commit()?;
        Ok(written)
    }

    /// One page of history, newest first, optionally filtered by a search text (a search
    /// is bounded: see [`super::search`]). Reads never wait behind a write.
    pub fn history_page(&self, query: &HistoryQuery) -> Result<HistoryPage, StoreError> {
        let limit = i64::from(query.limit);
        let offset = i64::try_from(query.offset).unwrap_or(i64::MAX);
        let search = query.query.as_deref().map(str::trim).unwrap_or("");
        let (total, entries) = if search.is_empty() {
            list_page(&*self.read()?, limit, offset)?
        } else if let Some(matcher) = fts_query(search) {
            self.search(|conn| search_page(conn, &matcher, limit, offset))?
        } else {
            (0, Vec::new())
        };
        Ok(HistoryPage {
            entries,
            total: total as u64,
        })
    }

    /// The entry with this id, if any.
    pub fn history_entry(&self, id: &Uuid) -> Result<Option<HistoryEntry>, StoreError> {
        let conn = self.read()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM history WHERE id = ?1"))?;
        Ok(stmt
            .query_row([wire::format_uuid(id)], read_entry)
            .optional()?)
    }

    /// Deletes one entry; false when there was none with this id.
    pub fn delete_history(&self, id: &Uuid) -> Result<bool, StoreError> {
        let deleted = self
            .conn()
            .execute("DELETE FROM history WHERE id = ?1", [wire::format_uuid(id)])?;
        Ok(deleted > 0)
    }

    /// Deletes entries older than the retention window (`historyRetentionDays`, 0 keeps
    /// everything); returns how many went. Runs at start and after every history write.
    pub fn apply_history_retention(&self) -> Result<usize, StoreError> {
        Ok(apply_retention(&self.conn(), Utc::now())?)
    }
}

/// How many entries there are, and one page of them.
fn list_page(
    conn: &Connection,
    limit: i64,
    offset: i64,
) -> rusqlite::Result<(i64, Vec<HistoryEntry>)> {
    // The page's row ids come from the narrow timestamp index, then the rows.
    let page = format!(
        "SELECT {COLUMNS} FROM history WHERE seq IN
             (SELECT seq FROM history ORDER BY timestamp DESC, seq DESC
              LIMIT ?1 OFFSET ?2)
         ORDER BY seq DESC"
    );
    let count = "SELECT count(*) FROM history";
    counted_page(conn, (count, params![]), (&page, params![limit, offset]))
}

/// How many entries match the FTS5 query `matcher`, and one page of them.
fn search_page(
    conn: &Connection,
    matcher: &str,
    limit: i64,
    offset: i64,
) -> rusqlite::Result<(i64, Vec<HistoryEntry>)> {
    let page = format!(
        "SELECT {COLUMNS} FROM history WHERE seq IN
             (SELECT rowid FROM history_fts WHERE history_fts MATCH ?1
              ORDER BY rowid DESC LIMIT ?2 OFFSET ?3)
         ORDER BY seq DESC"
    );
    let count = "SELECT count(*) FROM history_fts WHERE history_fts MATCH ?1";
    counted_page(
        conn,
        (count, params![matcher]),
        (&page, params![matcher, limit, offset]),
    )
}

/// Runs the `count` and `page` statements in one read transaction, so the total and the
/// page agree even while entries are written.
fn counted_page(
    conn: &Connection,
    (count, count_params): (&str, &[&dyn ToSql]),
    (page, page_params): (&str, &[&dyn ToSql]),
) -> rusqlite::Result<(i64, Vec<HistoryEntry>)> {
    let tx = conn.unchecked_transaction()?;
    let total: i64 = tx.query_row(count, count_params, |r| r.get(0))?;
    let entries = tx
        .prepare_cached(page)?
        .query_map(page_params, read_entry)?
        .collect::<Result<_, _>>()?;
    tx.commit()?;
    Ok((total, entries))
}

/// The oldest timestamp the retention window keeps, or None when history is kept forever.
pub(crate) fn retention_cutoff(
    conn: &Connection,
    now: DateTime<Utc>,
) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let days = preferences::int_on(conn, &HISTORY_RETENTION_DAYS)?;
    Ok((days > 0).then(|| now - Duration::days(days)))
}

fn apply_retention(conn: &Connection, now: DateTime<Utc>) -> rusqlite::Result<usize> {
    match retention_cutoff(conn, now)? {
        // Row ids follow time: older than the cutoff means a lower row id.
        Some(cutoff) => conn.execute(
            "DELETE FROM history WHERE seq < ?1",
            [first_seq_of(cutoff.timestamp())],
        ),
        None => Ok(0),
    }
}

/// The lowest row id of an entry in second `seconds`.
fn first_seq_of(seconds: i64) -> i64 {
    seconds.saturating_mul(1 << SEQ_SHIFT)
}

/// The row id for a new entry in second `seconds`: after every entry of that second.
fn next_seq(conn: &Connection, seconds: i64) -> rusqlite::Result<i64> {
    let first = first_seq_of(seconds);
    let last: Option<i64> = conn
        .prepare_cached("SELECT max(seq) FROM history WHERE seq >= ?1 AND seq < ?2")?
        .query_row([first, first_seq_of(seconds.saturating_add(1))], |row| {
            row.get(0)
        })?;
    Ok(last.map_or(first, |last| last.saturating_add(1)))
}

/// Inserts `entry` as it is (id, timestamp and word count included).
pub(crate) fn insert(conn: &Connection, entry: &HistoryEntry) -> rusqlite::Result<()> {
    let seq = next_seq(conn, entry.timestamp.timestamp())?;
    let mut stmt = conn.prepare_cached(&format!(
        "INSERT INTO history (seq, {COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
    ))?;
    stmt.execute(params![
        seq,
        wire::format_uuid(&entry.id),
        entry.text,
        entry.raw_text,
        entry.timestamp.timestamp(),
        entry.app_name,
        entry.app_bundle_id,
        entry.app_url,
        entry.duration,
        entry.language,
        entry.engine,
        entry.model,
        entry.words_count,
        entry.transcribed_text,
        entry.prompt_action_error,
    ])?;
    Ok(())
}

/// Whether an entry with this id exists.
pub(crate) fn exists(conn: &Connection, id: &Uuid) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM history WHERE id = ?1")?;
    stmt.exists([wire::format_uuid(id)])
}

/// Every entry, oldest first (the order a backup lists them in).
pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<HistoryEntry>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM history ORDER BY seq"))?;
    stmt.query_map([], read_entry)?.collect()
}

fn read_entry(row: &Row<'_>) -> rusqlite::Result<HistoryEntry> {
    let id: String = row.get(0)?;
    let seconds: i64 = row.get(3)?;
    Ok(HistoryEntry {
        id: wire::parse_uuid(&id).unwrap_or_default(),
        text: row.get(1)?,
        raw_text: row.get(2)?,
        timestamp: Utc.timestamp_opt(seconds, 0).single().unwrap_or_default(),
        app_name: row.get(4)?,
        app_bundle_id: row.get(5)?,
        app_url: row.get(6)?,
        duration: row.get(7)?,
        language: row.get(8)?,
        engine: row.get(9)?,
        model: row.get(10)?,
        words_count: row.get(11)?,
        transcribed_text: row.get(12)?,
        prompt_action_error: row.get(13)?,
    })
}

fn whole_seconds(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.timestamp_opt(at.timestamp(), 0).single().unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PrefValue;
    use crate::store::temp_store;

    fn entry(text: &str, app: Option<&str>, at: DateTime<Utc>) -> NewHistoryEntry {
        NewHistoryEntry {
            text: text.into(),
            raw_text: text.to_lowercase(),
            timestamp: Some(at),
            app_name: app.map(Into::into),
            duration: 1.5,
            engine: "whisper".into(),
            ..NewHistoryEntry::default()
        }
    }

    #[test]
    fn search_ignores_case_and_accents_and_is_a_prefix_match() {
        let (_dir, store) = temp_store();
        let now = Utc::now();
        store
            .insert_history(&entry("Rendez-vous au Café", Some("Mail"), now))
            .unwrap();
        store
            .insert_history(&entry("Transcription test", Some("Éditeur"), now))
            .unwrap();
        let find = |q: &str| {
            store
                .history_page(&HistoryQuery {
                    query: Some(q.into()),
                    limit: 10,
                    offset: 0,
                })
                .unwrap()
                .total
        };
        assert_eq!(find("cafe"), 1);
        assert_eq!(find("CAFÉ"), 1);
        assert_eq!(find("transcr"), 1);
        assert_eq!(find("editeur"), 1);
        assert_eq!(find("mail cafe"), 1);
        assert_eq!(find("mail transcription"), 0);
        assert_eq!(find("\" OR *"), 0);
        assert_eq!(find("cafe\u{301}"), 1);
        // Raw text is searched too.
        store
            .insert_history(&NewHistoryEntry {
                raw_text: "euh hello world".into(),
                ..entry("Hello world", None, now)
            })
            .unwrap();
        assert_eq!(find("euh"), 1);
        assert_eq!(find("hello"), 1);
        assert_eq!(find("  "), 3);
        // The index agrees with the history it was built from.
        store
            .conn()
            .execute(
                "INSERT INTO history_fts (history_fts) VALUES ('integrity-check')",
                [],
            )
            .unwrap();
    }

    #[test]
    fn a_search_past_its_deadline_is_interrupted() {
        let (_dir, store) = temp_store();
        let now = Utc::now();
        let entries: Vec<_> = (0..5_000)
            .map(|i| entry(&format!("entry {i} of the history"), None, now))
            .collect();
        store.insert_history_many(&entries).unwrap();
        let conn = store.read().unwrap();
        let search = |conn: &Connection| search_page(conn, "\"entry\"* \"of\"*", 50, 0);
        let late = super::super::search::within(&conn, std::time::Instant::now(), search);
        assert!(matches!(late, Err(StoreError::SearchTooLong)), "{late:?}");
        let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let (total, page) = super::super::search::within(&conn, far, search).unwrap();
        assert_eq!((total, page.len()), (5_000, 50));
    }

    #[test]
    fn entries_of_the_same_second_list_newest_insert_first() {
        let (_dir, store) = temp_store();
        let at = Utc::now();
        for text in ["first", "second", "third"] {
            store.insert_history(&entry(text, None, at)).unwrap();
        }
        store
            .insert_history(&entry("older", None, at - Duration::seconds(1)))
            .unwrap();
        let page = store
            .history_page(&HistoryQuery {
                limit: 10,
                ..HistoryQuery::default()
            })
            .unwrap();
        let texts: Vec<&str> = page.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, vec!["third", "second", "first", "older"]);
    }

    #[test]
    fn retention_drops_old_entries_on_write() {
        let (_dir, store) = temp_store();
        let now = Utc::now();
        let old = store
            .insert_history(&entry("old", None, now - Duration::days(40)))
            .unwrap();
        store
            .set_pref(&HISTORY_RETENTION_DAYS, &PrefValue::Int(30))
            .unwrap();
        assert!(store.history_entry(&old.id).unwrap().is_some());
        store.insert_history(&entry("new", None, now)).unwrap();
        assert!(store.history_entry(&old.id).unwrap().is_none());
        assert_eq!(
            store
                .history_page(&HistoryQuery {
                    limit: 10,
                    ..HistoryQuery::default()
                })
                .unwrap()
                .total,
            1
        );
    }

    #[test]
    fn entries_keep_their_fields_and_are_deleted_by_id() {
        let (_dir, store) = temp_store();
        let written = store
            .insert_history(&NewHistoryEntry {
                app_bundle_id: Some("org.gnome.TextEditor".into()),
                app_url: Some("https://example.org".into()),
                language: Some("fr".into()),
                model: Some("base".into()),
                ..entry("un deux trois", Some("Editor"), Utc::now())
            })
            .unwrap();
        assert_eq!(written.words_count, 3);
        assert_eq!(
            store.history_entry(&written.id).unwrap(),
            Some(written.clone())
        );
        assert!(store.delete_history(&written.id).unwrap());
        assert!(!store.delete_history(&written.id).unwrap());
    }
}
