//! Ordered schema migrations; `PRAGMA user_version` records how many have been applied.
//! Each migration runs in its own transaction, so a crash leaves the schema at a known version.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// Append only: never edit a migration that has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: preferences and secrets
    "CREATE TABLE preferences (
        key   TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    ) STRICT;
    CREATE TABLE secrets (
        name  TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    ) STRICT;",
    // 2: history with its full-text index (external content, kept in step by triggers);
    // seq follows time (store::history::SEQ_SHIFT). The index reads the view, which leaves
    // out a raw text equal to the final text but for ASCII case: half the index to search.
    "CREATE TABLE history (
        seq           INTEGER PRIMARY KEY,
        id            TEXT NOT NULL UNIQUE,
        text          TEXT NOT NULL,
        raw_text      TEXT NOT NULL,
        timestamp     INTEGER NOT NULL,
        app_name      TEXT,
        app_bundle_id TEXT,
        app_url       TEXT,
        duration      REAL NOT NULL,
        language      TEXT,
        engine        TEXT NOT NULL,
        model         TEXT,
        words_count   INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX history_by_time ON history (timestamp);
    CREATE VIEW history_search (seq, text, raw_text, app_name) AS
        SELECT seq, text, iif(lower(raw_text) = lower(text), NULL, raw_text), app_name
        FROM history;
    CREATE VIRTUAL TABLE history_fts USING fts5(
        text, raw_text, app_name,
        content = 'history_search', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2',
        prefix = '1 2 3'
    );
    CREATE TRIGGER history_fts_insert AFTER INSERT ON history BEGIN
        INSERT INTO history_fts (rowid, text, raw_text, app_name)
        VALUES (new.seq, new.text, iif(lower(new.raw_text) = lower(new.text), NULL, new.raw_text),
                new.app_name);
    END;
    CREATE TRIGGER history_fts_delete AFTER DELETE ON history BEGIN
        INSERT INTO history_fts (history_fts, rowid, text, raw_text, app_name)
        VALUES ('delete', old.seq, old.text,
                iif(lower(old.raw_text) = lower(old.text), NULL, old.raw_text), old.app_name);
    END;
    CREATE TRIGGER history_fts_update AFTER UPDATE ON history BEGIN
        INSERT INTO history_fts (history_fts, rowid, text, raw_text, app_name)
        VALUES ('delete', old.seq, old.text,
                iif(lower(old.raw_text) = lower(old.text), NULL, old.raw_text), old.app_name);
        INSERT INTO history_fts (rowid, text, raw_text, app_name)
        VALUES (new.seq, new.text, iif(lower(new.raw_text) = lower(new.text), NULL, new.raw_text),
                new.app_name);
    END;",
    // 3: dictionary; the *_key columns hold the matching keys (see store::text)
    "CREATE TABLE dictionary_terms (
        seq                INTEGER PRIMARY KEY,
        term               TEXT NOT NULL,
        term_key           TEXT NOT NULL UNIQUE,
        enabled            INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        ctc_min_similarity REAL CHECK (ctc_min_similarity BETWEEN 0 AND 1)
    ) STRICT;
    CREATE TABLE dictionary_corrections (
        seq            INTEGER PRIMARY KEY,
        original       TEXT NOT NULL,
        original_key   TEXT NOT NULL UNIQUE,
        replacement    TEXT NOT NULL,
        case_sensitive INTEGER NOT NULL CHECK (case_sensitive IN (0, 1)),
        enabled        INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1))
    ) STRICT;",
    // 4: workflows (the API's rules) and profiles, with their ordered lists
    "CREATE TABLE workflows (
        seq                         INTEGER PRIMARY KEY,
        id                          TEXT NOT NULL UNIQUE,
        name                        TEXT NOT NULL,
        enabled                     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        priority                    INTEGER NOT NULL,
        input_language              TEXT,
        language_mode               TEXT NOT NULL
            CHECK (language_mode IN ('inherit', 'auto', 'exact', 'multiple')),
        translation_target_language TEXT
    ) STRICT;
    CREATE TABLE workflow_items (
        workflow_id TEXT NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
        list        TEXT NOT NULL CHECK (list IN ('app', 'url', 'hint')),
        position    INTEGER NOT NULL,
        value       TEXT NOT NULL,
        PRIMARY KEY (workflow_id, list, position)
    ) STRICT;
    CREATE TABLE profiles (
        seq                         INTEGER PRIMARY KEY,
        id                          TEXT NOT NULL UNIQUE,
        name                        TEXT NOT NULL,
        enabled                     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        priority                    INTEGER NOT NULL,
        input_language              TEXT,
        translation_target_language TEXT,
        engine                      TEXT,
        model                       TEXT
    ) STRICT;
    CREATE TABLE profile_items (
        profile_id TEXT NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
        list       TEXT NOT NULL CHECK (list IN ('app', 'url')),
        position   INTEGER NOT NULL,
        value      TEXT NOT NULL,
        PRIMARY KEY (profile_id, list, position)
    ) STRICT;",
    // 5: snippets, prompt actions, hotkeys and installed plugins
    "CREATE TABLE snippets (
        seq         INTEGER PRIMARY KEY,
        trigger     TEXT NOT NULL,
        trigger_key TEXT NOT NULL UNIQUE,
        text        TEXT NOT NULL,
        enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1))
    ) STRICT;
    CREATE TABLE prompt_actions (
        seq     INTEGER PRIMARY KEY,
        id      TEXT NOT NULL UNIQUE,
        name    TEXT NOT NULL,
        prompt  TEXT NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1))
    ) STRICT;
    CREATE TABLE hotkeys (
        slot     TEXT PRIMARY KEY NOT NULL,
        shortcut TEXT NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX hotkeys_by_shortcut ON hotkeys (lower(shortcut));
    CREATE TABLE plugins (
        id           TEXT PRIMARY KEY NOT NULL,
        version      TEXT NOT NULL,
        name         TEXT NOT NULL,
        description  TEXT,
        download_url TEXT,
        sha256       TEXT,
        enabled      INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        installed_at INTEGER NOT NULL
    ) STRICT;",
    // 6: Recorder and dictation sessions (a finished dictation's text is its history entry)
    "CREATE TABLE recorder_sessions (
        id           TEXT PRIMARY KEY NOT NULL,
        status       TEXT NOT NULL CHECK (status IN ('recording', 'finalizing', 'completed', 'failed')),
        started_at   INTEGER NOT NULL,
        mic          INTEGER NOT NULL CHECK (mic IN (0, 1)),
        system_audio INTEGER NOT NULL CHECK (system_audio IN (0, 1)),
        target       TEXT NOT NULL,
        output_file  TEXT,
        text         TEXT,
        error        TEXT
    ) STRICT;
    CREATE TABLE dictation_sessions (
        id            TEXT PRIMARY KEY NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('recording', 'processing', 'inserting', 'completed', 'failed')),
        started_at    INTEGER NOT NULL,
        workflow_id   TEXT,
        workflow_name TEXT,
        error         TEXT
    ) STRICT;",
    // 7: the web page's one-time sign-in codes and the browser sessions they open (SHA-256
    // of each, never the value; never part of a backup)
    "CREATE TABLE web_sign_ins (
        hash       TEXT PRIMARY KEY NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('code', 'session')),
        created_at INTEGER NOT NULL
    ) STRICT;",
    // 8: the prompt action a workflow's dictations run
    "ALTER TABLE workflows ADD COLUMN prompt_action_id TEXT;",
    // 9: under a prompt action, the words before it and why it gave no text
    "ALTER TABLE history ADD COLUMN transcribed_text TEXT;
    ALTER TABLE history ADD COLUMN prompt_action_error TEXT;",
];

pub fn current_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.pragma_query_value(None, "user_version", |row| row.get::<_, i64>(0))
        .map(|v| v.max(0) as usize)
}

pub fn apply(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found = current_version(conn)?;
    if found > MIGRATIONS.len() {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known: MIGRATIONS.len(),
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        let version = index + 1;
        let migrate = |conn: &mut Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", version as i64)?;
            tx.commit()
        };
        migrate(conn).map_err(|source| StoreError::Migration { version, source })?;
    }
    Ok(())
}

#[cfg(test)]
pub fn latest_version() -> usize {
    MIGRATIONS.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_and_record_their_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let mut conn = Connection::open(&path).unwrap();
        apply(&mut conn, &path).unwrap();
        assert_eq!(current_version(&conn).unwrap(), latest_version());
        // A second run is a no-op rather than a "table exists" failure.
        apply(&mut conn, &path).unwrap();
        assert_eq!(current_version(&conn).unwrap(), latest_version());
    }

    #[test]
    fn a_database_from_a_newer_build_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let mut conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 9999).unwrap();
        let err = apply(&mut conn, &path).unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found: 9999, .. }),
            "{err}"
        );
    }
}
