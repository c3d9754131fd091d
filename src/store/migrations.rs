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
