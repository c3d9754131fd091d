//! Recorder and dictation sessions: their status as the polling routes report it, kept in SQLite
//! so a session stays readable after a restart and an interrupted one is found at the next start.

use std::path::PathBuf;

use chrono::{DateTime, TimeZone, Utc};
use rusqlite::{OptionalExtension, Row, params};
use uuid::Uuid;

use super::{Store, StoreError};
use crate::wire;

/// A Recorder session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RecorderSession {
    pub id: Uuid,
    /// `recording`, `finalizing`, `completed` or `failed`.
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub mic: bool,
    pub system_audio: bool,
    /// Where the recording goes once finalized (written under a temporary name until then).
    pub target: PathBuf,
    /// Set once the file is complete.
    pub output_file: Option<PathBuf>,
    pub text: Option<String>,
    pub error: Option<String>,
}

/// A dictation session as stored; its transcript is the history entry with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct DictationSession {
    pub id: Uuid,
    /// `recording`, `processing`, `inserting`, `completed` or `failed`.
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub workflow_id: Option<Uuid>,
    pub workflow_name: Option<String>,
    pub error: Option<String>,
}

/// How a Recorder session ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecorderEnd {
    pub status: &'static str,
    pub output_file: Option<PathBuf>,
    pub text: Option<String>,
    pub error: Option<String>,
}

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(seconds, 0).single().unwrap_or_default()
}

fn uuid_column(row: &Row, index: usize) -> rusqlite::Result<Uuid> {
    let text: String = row.get(index)?;
    wire::parse_uuid(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("not a UUID: {text}").into(),
        )
    })
}

fn recorder_row(row: &Row) -> rusqlite::Result<RecorderSession> {
    Ok(RecorderSession {
        id: uuid_column(row, 0)?,
        status: row.get(1)?,
        started_at: at(row.get(2)?),
        mic: row.get(3)?,
        system_audio: row.get(4)?,
        target: PathBuf::from(row.get::<_, String>(5)?),
        output_file: row.get::<_, Option<String>>(6)?.map(PathBuf::from),
        text: row.get(7)?,
        error: row.get(8)?,
    })
}

fn dictation_row(row: &Row) -> rusqlite::Result<DictationSession> {
    let workflow: Option<String> = row.get(3)?;
    Ok(DictationSession {
        id: uuid_column(row, 0)?,
        status: row.get(1)?,
        started_at: at(row.get(2)?),
        workflow_id: workflow.as_deref().and_then(wire::parse_uuid),
        workflow_name: row.get(4)?,
        error: row.get(5)?,
    })
}

const RECORDER_COLUMNS: &str =
    "id, status, started_at, mic, system_audio, target, output_file, text, error";
const DICTATION_COLUMNS: &str = "id, status, started_at, workflow_id, workflow_name, error";

fn path_text(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

impl Store {
    /// Records a Recorder session that has just started.
    pub fn insert_recorder_session(&self, session: &RecorderSession) -> Result<(), StoreError> {
        self.conn().execute(
            &format!("INSERT INTO recorder_sessions ({RECORDER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
            params![
                wire::format_uuid(&session.id),
                session.status,
                session.started_at.timestamp(),
                session.mic,
                session.system_audio,
                path_text(&session.target),
                session.output_file.as_deref().map(path_text),
                session.text,
                session.error,
            ],
        )?;
        Ok(())
    }

    pub fn recorder_session(&self, id: &Uuid) -> Result<Option<RecorderSession>, StoreError> {
        Ok(self
            .read()?
            .query_row(
                &format!("SELECT {RECORDER_COLUMNS} FROM recorder_sessions WHERE id = ?1"),
                [wire::format_uuid(id)],
                recorder_row,
            )
            .optional()?)
    }

    /// Sessions a previous run left `recording` or `finalizing`.
    pub fn unfinished_recorder_sessions(&self) -> Result<Vec<RecorderSession>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {RECORDER_COLUMNS} FROM recorder_sessions WHERE status IN ('recording', 'finalizing')"
        ))?;
        let rows = stmt.query_map([], recorder_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn set_recorder_status(&self, id: &Uuid, status: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE recorder_sessions SET status = ?2 WHERE id = ?1",
            params![wire::format_uuid(id), status],
        )?;
        Ok(())
    }

    pub fn end_recorder_session(&self, id: &Uuid, end: &RecorderEnd) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE recorder_sessions SET status = ?2, output_file = ?3, text = ?4, error = ?5 WHERE id = ?1",
            params![
                wire::format_uuid(id),
                end.status,
                end.output_file.as_deref().map(path_text),
                end.text,
                end.error,
            ],
        )?;
        Ok(())
    }

    /// Records a dictation session that has just started.
    pub fn insert_dictation_session(&self, session: &DictationSession) -> Result<(), StoreError> {
        self.conn().execute(
            &format!("INSERT INTO dictation_sessions ({DICTATION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
            params![
                wire::format_uuid(&session.id),
                session.status,
                session.started_at.timestamp(),
                session.workflow_id.as_ref().map(wire::format_uuid),
                session.workflow_name,
                session.error,
            ],
        )?;
        Ok(())
    }

    pub fn dictation_session(&self, id: &Uuid) -> Result<Option<DictationSession>, StoreError> {
        Ok(self
            .read()?
            .query_row(
                &format!("SELECT {DICTATION_COLUMNS} FROM dictation_sessions WHERE id = ?1"),
                [wire::format_uuid(id)],
                dictation_row,
            )
            .optional()?)
    }

    /// Sets a dictation session's status (and its error when it failed).
    pub fn set_dictation_status(
        &self,
        id: &Uuid,
        status: &str,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE dictation_sessions SET status = ?2, error = ?3 WHERE id = ?1",
            params![wire::format_uuid(id), status, error],
        )?;
        Ok(())
    }

    /// Marks every dictation a previous run left unfinished as failed; returns how many.
    pub fn fail_unfinished_dictations(&self, error: &str) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "UPDATE dictation_sessions SET status = 'failed', error = ?1
             WHERE status IN ('recording', 'processing', 'inserting')",
            [error],
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_and_unfinished_ones_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let id = Uuid::new_v4();
        let session = RecorderSession {
            id,
            status: "recording".into(),
            started_at: at(1_700_000_000),
            mic: true,
            system_audio: false,
            target: dir.path().join("a.wav"),
            output_file: None,
            text: None,
            error: None,
        };
        store.insert_recorder_session(&session).unwrap();
        assert_eq!(store.recorder_session(&id).unwrap(), Some(session.clone()));
        assert_eq!(store.unfinished_recorder_sessions().unwrap().len(), 1);
        let end = RecorderEnd {
            status: "completed",
            output_file: Some(session.target.clone()),
            text: Some("hello".into()),
            error: None,
        };
        store.end_recorder_session(&id, &end).unwrap();
        let done = store.recorder_session(&id).unwrap().unwrap();
        assert_eq!(
            (done.status.as_str(), done.text.as_deref()),
            ("completed", Some("hello"))
        );
        assert!(store.unfinished_recorder_sessions().unwrap().is_empty());

        let dictation = DictationSession {
            id,
            status: "processing".into(),
            started_at: at(1_700_000_000),
            workflow_id: None,
            workflow_name: None,
            error: None,
        };
        store.insert_dictation_session(&dictation).unwrap();
        assert_eq!(store.fail_unfinished_dictations("stopped").unwrap(), 1);
        let failed = store.dictation_session(&id).unwrap().unwrap();
        assert_eq!(
            (failed.status.as_str(), failed.error.as_deref()),
            ("failed", Some("stopped"))
        );
    }
}
