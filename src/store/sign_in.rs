//! The web page's sign-in: one-time codes (`verbatim open`) and the browser sessions they open.
//! Only the SHA-256 of each value is stored; none is part of a settings backup.

use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};

use super::{Store, StoreError};

/// A code opens a session within this many seconds of being made, once.
pub const CODE_LIFETIME_SECS: i64 = 120;
/// A browser session lasts this long (30 days), or until the API token is rotated.
pub const SESSION_LIFETIME_SECS: i64 = 30 * 24 * 3600;

fn hash(value: &str) -> String {
    Sha256::digest(value.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Store {
    /// Records a one-time sign-in code made at `now` (Unix seconds); codes and sessions past
    /// their lifetime are dropped at the same time.
    pub fn add_sign_in_code(&self, code: &str, now: i64) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM web_sign_ins WHERE (kind = 'code' AND created_at < ?1)
                 OR (kind = 'session' AND created_at < ?2)",
            [now - CODE_LIFETIME_SECS, now - SESSION_LIFETIME_SECS],
        )?;
        tx.execute(
            "INSERT INTO web_sign_ins (hash, kind, created_at) VALUES (?1, 'code', ?2)",
            rusqlite::params![hash(code), now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Spends `code`: whether it was valid at `now` (made at most [`CODE_LIFETIME_SECS`]
    /// before, never spent); if so, `session` is recorded as a signed-in browser. A code is
    /// gone after its first use, valid or late.
    pub fn redeem_sign_in_code(
        &self,
        code: &str,
        session: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let made: Option<i64> = tx
            .query_row(
                "DELETE FROM web_sign_ins WHERE hash = ?1 AND kind = 'code' RETURNING created_at",
                [hash(code)],
                |row| row.get(0),
            )
            .optional()?;
        let valid = made.is_some_and(|made| made <= now && now - made <= CODE_LIFETIME_SECS);
        if valid {
            tx.execute(
                "INSERT INTO web_sign_ins (hash, kind, created_at) VALUES (?1, 'session', ?2)",
                rusqlite::params![hash(session), now],
            )?;
        }
        tx.commit()?;
        Ok(valid)
    }

    /// Whether `session` is a signed-in browser at `now`. Read without waiting behind a write.
    pub fn web_session_valid(&self, session: &str, now: i64) -> Result<bool, StoreError> {
        let conn = self.read()?;
        let mut stmt = conn.prepare_cached(
            "SELECT created_at FROM web_sign_ins WHERE hash = ?1 AND kind = 'session'",
        )?;
        let made: Option<i64> = stmt
            .query_row([hash(session)], |row| row.get(0))
            .optional()?;
        Ok(made.is_some_and(|made| now - made <= SESSION_LIFETIME_SECS))
    }

    /// Ends one browser session (signing out); whether it was open.
    pub fn end_web_session(&self, session: &str) -> Result<bool, StoreError> {
        let ended = self.conn().execute(
            "DELETE FROM web_sign_ins WHERE hash = ?1 AND kind = 'session'",
            [hash(session)],
        )?;
        Ok(ended > 0)
    }

    /// Signs every browser out and spends every code (the token was rotated).
    pub fn end_web_sessions(&self) -> Result<usize, StoreError> {
        Ok(self.conn().execute("DELETE FROM web_sign_ins", [])?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("verbatim.sqlite3")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_code_opens_one_session_once_and_only_in_time() {
        let (_dir, store) = store();
        store.add_sign_in_code("code-a", 1_000).unwrap();
        assert!(!store.web_session_valid("browser-1", 1_001).unwrap());
        assert!(
            store
                .redeem_sign_in_code("code-a", "browser-1", 1_010)
                .unwrap()
        );
        assert!(store.web_session_valid("browser-1", 1_011).unwrap());
        // Spent: the same code opens nothing again.
        assert!(
            !store
                .redeem_sign_in_code("code-a", "browser-2", 1_012)
                .unwrap()
        );
        assert!(!store.web_session_valid("browser-2", 1_013).unwrap());
        // Late: a code past its two minutes is refused, and spent all the same.
        store.add_sign_in_code("code-b", 2_000).unwrap();
        assert!(
            !store
                .redeem_sign_in_code("code-b", "browser-3", 2_000 + CODE_LIFETIME_SECS + 1)
                .unwrap()
        );
        assert!(
            !store
                .redeem_sign_in_code("code-b", "browser-3", 2_001)
                .unwrap()
        );
        // Unknown codes open nothing; the stored value is a hash, not the code.
        assert!(
            !store
                .redeem_sign_in_code("guess", "browser-4", 2_001)
                .unwrap()
        );
        let stored: Vec<String> = store
            .conn()
            .prepare("SELECT hash FROM web_sign_ins")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            stored
                .iter()
                .all(|h| h.len() == 64 && !h.contains("browser"))
        );
    }

    #[test]
    fn sessions_expire_and_rotation_ends_them() {
        let (_dir, store) = store();
        store.add_sign_in_code("code", 0).unwrap();
        assert!(store.redeem_sign_in_code("code", "browser", 10).unwrap());
        assert!(
            store
                .web_session_valid("browser", 10 + SESSION_LIFETIME_SECS)
                .unwrap()
        );
        assert!(
            !store
                .web_session_valid("browser", 11 + SESSION_LIFETIME_SECS)
                .unwrap()
        );
        store.add_sign_in_code("code-2", 10).unwrap();
        assert!(store.redeem_sign_in_code("code-2", "other", 10).unwrap());
        assert!(store.end_web_session("other").unwrap());
        assert!(!store.end_web_session("other").unwrap());
        assert!(!store.web_session_valid("other", 20).unwrap());
        assert!(store.web_session_valid("browser", 20).unwrap());
        assert_eq!(store.end_web_sessions().unwrap(), 1);
        assert!(!store.web_session_valid("browser", 20).unwrap());
    }
}
