//! SQLite store (bundled SQLite): one database file in the data folder, schema migrations,
//! WAL with `synchronous=FULL` so an acknowledged write survives a crash. Holds preferences,
//! history, the dictionary, workflows and the other categories a settings backup carries.
//! One writer connection behind a mutex; reads go to a small pool of read-only connections
//! ([`readers`]), so no read waits behind a long write.

pub mod dictionary;
pub mod history;
pub mod hotkeys;
mod lists;
mod migrations;
pub mod plugins;
pub mod preferences;
pub mod profiles;
pub mod prompt_actions;
mod readers;
pub mod rules;
pub mod search;
pub mod secrets;
pub mod sessions;
pub mod sign_in;
pub mod snippets;
pub mod text;
pub mod workflows;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

pub use dictionary::{Correction, DictionaryEntry, Term};
pub use history::{HistoryEntry, HistoryPage, HistoryQuery, NewHistoryEntry};
pub use hotkeys::Hotkey;
pub use plugins::Plugin;
pub use preferences::{Pref, PrefError, PrefKind, PrefValue};
pub use profiles::{Profile, ProfileFields};
pub use prompt_actions::PromptAction;
pub use readers::Reader;
pub use rules::Rule;
pub use search::SEARCH_DEADLINE;
pub use sessions::{DictationSession, RecorderEnd, RecorderSession};
pub use snippets::Snippet;
pub use workflows::{LanguageMode, Workflow, WorkflowFields};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("database migration {version} failed: {source}")]
    Migration {
        version: usize,
        source: rusqlite::Error,
    },
    #[error(
        "the database {path} was written by a newer Verbatim (schema {found}, this build knows {known}); upgrade Verbatim"
    )]
    TooNew {
        path: PathBuf,
        found: usize,
        known: usize,
    },
    /// A history search ran past [`SEARCH_DEADLINE`] (waiting for its turn included).
    #[error("the history search ran past its deadline of {} s", SEARCH_DEADLINE.as_secs())]
    SearchTooLong,
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// Page cache of each connection, in KiB.
const CACHE_KIB: i64 = 32 * 1024;

/// The application's database: the writer behind a mutex (every write, and reads that decide
/// a write), and read-only connections for everything else. Both block: call them from
/// blocking threads.
pub struct Store {
    conn: Mutex<Connection>,
    readers: readers::Readers,
    /// Searches and exports: fewer than the readers, so short reads always find one.
    long_reads: readers::Slots,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(open_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        // Room for the history search index, so searches do not re-read it from the file.
        conn.pragma_update(None, "cache_size", -CACHE_KIB)
            .map_err(open_err)?;
        migrations::apply(&mut conn, path)?;
        Ok(Store {
            conn: Mutex::new(conn),
            readers: readers::Readers::new(path),
            long_reads: readers::Slots::new(readers::LONG_READS),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The writer connection, for one unit of write work. A panic elsewhere never locks the
    /// store out: an open transaction is rolled back when it is dropped, so the connection is
    /// still sound.
    pub fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A read-only connection for a short read; it never waits behind a write. Each statement
    /// (or explicit transaction) reads the latest committed state.
    pub fn read(&self) -> Result<Reader<'_>, StoreError> {
        self.readers.take()
    }

    /// Runs `read` in one read transaction on a read connection: its statements see one
    /// committed state, and it never waits behind a write.
    pub(crate) fn reading<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.read()?;
        let tx = conn.unchecked_transaction()?;
        let value = read(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// A read connection for a long read (an export), after waiting for a long-read slot.
    pub(crate) fn long_read(&self) -> Result<(readers::Slot<'_>, Reader<'_>), StoreError> {
        let slot = self.long_reads.take();
        Ok((slot, self.read()?))
    }

    /// The schema version this database is at.
    pub fn schema_version(&self) -> Result<usize, StoreError> {
        Ok(migrations::current_version(&self.conn())?)
    }
}

/// A store in a fresh temporary folder, for tests (the folder goes when the guard drops).
#[cfg(test)]
pub(crate) fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("verbatim.sqlite3")).unwrap();
    (dir, store)
}
