//! Installed plugins that do not ship with Verbatim, with the metadata the plugin registry
//! gave when they were installed.

use chrono::Utc;
use rusqlite::{Connection, params};

use super::{Store, StoreError};

/// An installed plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub id: String,
    pub version: String,
    pub name: String,
    pub description: Option<String>,
    pub download_url: Option<String>,
    pub sha256: Option<String>,
    pub enabled: bool,
}

impl Store {
    /// Every installed plugin, by id.
    pub fn plugins(&self) -> Result<Vec<Plugin>, StoreError> {
        self.reading(all)
    }
}

pub(crate) fn all(conn: &Connection) -> rusqlite::Result<Vec<Plugin>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, version, name, description, download_url, sha256, enabled
         FROM plugins ORDER BY id",
    )?;
    stmt.query_map([], |row| {
        Ok(Plugin {
            id: row.get(0)?,
            version: row.get(1)?,
            name: row.get(2)?,
            description: row.get(3)?,
            download_url: row.get(4)?,
            sha256: row.get(5)?,
            enabled: row.get(6)?,
        })
    })?
    .collect()
}

pub(crate) fn is_installed(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM plugins WHERE id = ?1")?
        .exists([id])
}

pub(crate) fn install(conn: &Connection, plugin: &Plugin) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO plugins
             (id, version, name, description, download_url, sha256, enabled, installed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        plugin.id,
        plugin.version,
        plugin.name,
        plugin.description,
        plugin.download_url,
        plugin.sha256,
        plugin.enabled,
        Utc::now().timestamp(),
    ])?;
    Ok(())
}
