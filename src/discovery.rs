//! The data folder, the discovery file (`api-discovery.json`), the server lock and the API token.
//!
//! The discovery file exists only while a server runs; a lock held for the server's lifetime
//! tells a live server from a stale file left by a killed one.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::files::{self, write_private_atomically};
use crate::store::{Store, StoreError};

pub const DISCOVERY_FILE: &str = "api-discovery.json";
const LOCK_FILE: &str = "server.lock";
const DATABASE_FILE: &str = "verbatim.sqlite3";
const TOKEN_SECRET: &str = "apiToken";

/// The per-user folder holding the database, models, recordings and the discovery file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// `$VERBATIM_HOME`, else `$XDG_DATA_HOME/verbatim`, else `~/.local/share/verbatim`
    /// (`verbatim-dev` for the two defaults when `dev` is set).
    pub fn resolve(dev: bool) -> io::Result<DataDir> {
        let name = if dev { "verbatim-dev" } else { "verbatim" };
        let non_empty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
        let root = if let Some(home) = non_empty("VERBATIM_HOME") {
            PathBuf::from(home)
        } else if let Some(xdg) = non_empty("XDG_DATA_HOME") {
            PathBuf::from(xdg).join(name)
        } else if let Some(home) = non_empty("HOME") {
            PathBuf::from(home).join(".local/share").join(name)
        } else {
            return Err(io::Error::other(
                "cannot find the data folder: set VERBATIM_HOME or HOME",
            ));
        };
        Ok(DataDir { root })
    }

    pub fn at(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates the folder (and parents) if needed and makes it owner-only (0700).
    pub fn ensure(&self) -> io::Result<()> {
        files::ensure_private_dir(&self.root)
    }

    pub fn database_path(&self) -> PathBuf {
        self.root.join(DATABASE_FILE)
    }

    pub fn discovery_path(&self) -> PathBuf {
        self.root.join(DISCOVERY_FILE)
    }

    fn lock_path(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }

    /// Opens the store in this folder, creating both if needed.
    pub fn open_store(&self) -> Result<Store, StoreError> {
        self.ensure().map_err(|e| StoreError::Open {
            path: self.database_path(),
            source: rusqlite::Error::ToSqlConversionFailure(Box::new(e)),
        })?;
        Store::open(&self.database_path())
    }
}

/// Contents of the discovery file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    pub port: u16,
    pub token: String,
    pub version: u32,
    pub pid: u32,
}

/// Reads the discovery file, if present and well formed.
pub fn read(dir: &DataDir) -> Option<Discovery> {
    let text = fs::read_to_string(dir.discovery_path()).ok()?;
    serde_json::from_str(&text).ok()
}

/// Held for the lifetime of a server: proves that server is alive.
#[derive(Debug)]
pub struct ServerLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another Verbatim server is already running with this data folder ({0})")]
    AlreadyRunning(String),
    #[error("cannot take the server lock {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl ServerLock {
    /// Takes the lock without waiting; fails when a live server holds it.
    pub fn acquire(dir: &DataDir) -> Result<ServerLock, LockError> {
        let path = dir.lock_path();
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => Ok(ServerLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => {
                let who = read(dir)
                    .map(|d| format!("pid {}, port {}", d.pid, d.port))
                    .unwrap_or_else(|| "starting up".into());
                Err(LockError::AlreadyRunning(who))
            }
            Err(fs::TryLockError::Error(e)) => Err(io_err(e)),
        }
    }

    /// True when some process holds the lock, i.e. a server is running on this folder.
    pub fn is_held(dir: &DataDir) -> bool {
        let Ok(file) = OpenOptions::new().read(true).open(dir.lock_path()) else {
            return false;
        };
        matches!(file.try_lock_shared(), Err(fs::TryLockError::WouldBlock))
    }
}

/// Writes the discovery file atomically: a fresh owner-only temporary file, fsync, rename.
/// A symlink planted at the discovery path is replaced, never written through.
pub fn publish(dir: &DataDir, discovery: &Discovery) -> io::Result<()> {
    let json = serde_json::to_vec_pretty(discovery).map_err(io::Error::other)?;
    write_private_atomically(&dir.discovery_path(), &json)
}

/// Removes the discovery file if it is still the one this process published.
pub fn unpublish(dir: &DataDir, pid: u32) {
    let path = dir.discovery_path();
    let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file())
        && read(dir).is_some_and(|d| d.pid == pid);
    if ours && let Err(e) = fs::remove_file(&path) {
        tracing::warn!("could not remove {}: {e}", path.display());
    }
}

/// A new token: 32 random bytes, base64url without padding, never starting with `-` (which
/// command lines would read as an option: `--api-token -x…`).
pub fn generate_token() -> String {
    loop {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        if !token.starts_with('-') {
            return token;
        }
    }
}

/// The API token, created on first use and kept across restarts.
pub fn token(store: &Store) -> Result<String, StoreError> {
    store.secret_or_insert(TOKEN_SECRET, generate_token)
}

/// The API token as it is now, read without waiting behind a write; created (through the
/// writer) only when there is none yet.
pub fn current_token(store: &Store) -> Result<String, StoreError> {
    match store.secret(TOKEN_SECRET)? {
        Some(token) => Ok(token),
        None => token(store),
    }
}

/// Replaces the token. A running server sees the new one on its next request, and its
/// discovery file is rewritten so clients pick it up.
pub fn rotate_token(dir: &DataDir, store: &Store) -> Result<String, RotateError> {
    let token = generate_token();
    store.set_secret(TOKEN_SECRET, &token)?;
    // Browsers signed in with the page lose their session with the old token.
    store.end_web_sessions()?;
    if ServerLock::is_held(dir)
        && let Some(mut published) = read(dir)
    {
        published.token = token.clone();
        publish(dir, &published).map_err(RotateError::Discovery)?;
    }
    Ok(token)
}

#[derive(Debug, thiserror::Error)]
pub enum RotateError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the token was rotated but the discovery file could not be rewritten: {0}")]
    Discovery(io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_are_43_url_safe_characters_and_differ() {
        let a = generate_token();
        let b = generate_token();
        assert_eq!(a.len(), 43);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_ne!(a, b);
        // One in 64 encodings starts with `-`; none of 2,000 tokens may.
        assert!((0..2000).all(|_| !generate_token().starts_with('-')));
    }

    #[test]
    fn the_token_persists_and_rotation_replaces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("data"));
        let store = dir.open_store().unwrap();
        let first = token(&store).unwrap();
        assert_eq!(token(&store).unwrap(), first);
        let rotated = rotate_token(&dir, &store).unwrap();
        assert_ne!(rotated, first);
        assert_eq!(token(&store).unwrap(), rotated);
    }

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path());
        let lock = ServerLock::acquire(&dir).unwrap();
        assert!(ServerLock::is_held(&dir));
        assert!(matches!(
            ServerLock::acquire(&dir),
            Err(LockError::AlreadyRunning(_))
        ));
        drop(lock);
        assert!(!ServerLock::is_held(&dir));
        ServerLock::acquire(&dir).unwrap();
    }

    #[test]
    fn the_data_folder_is_made_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("a/b"));
        dir.ensure().unwrap();
        let mode = fs::metadata(dir.root()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
