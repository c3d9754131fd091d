//! Sim mode's insertion: a record of every text, in memory and as JSON lines that tests can read.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{InsertError, Inserter};
use crate::wire;

/// One insertion the [`SimInserter`] received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insertion {
    pub text: String,
    #[serde(serialize_with = "wire::timestamp")]
    pub at: DateTime<Utc>,
}

/// Sim mode's insertion: remembers every text and appends it as one JSON line
/// `{"text":"...","at":"2025-01-01T00:00:00Z"}` to a file, so tests outside the process can see
/// what would have been typed.
#[derive(Debug)]
pub struct SimInserter {
    log: Option<PathBuf>,
    inserted: Mutex<Vec<Insertion>>,
}

impl SimInserter {
    /// Records into `log` (created, with its parent folders, on the first insertion; appended to
    /// when it exists).
    pub fn new(log: impl Into<PathBuf>) -> Self {
        SimInserter {
            log: Some(log.into()),
            inserted: Mutex::default(),
        }
    }

    /// Records in memory only.
    pub fn in_memory() -> Self {
        SimInserter {
            log: None,
            inserted: Mutex::default(),
        }
    }

    /// The file insertions are appended to, if any.
    pub fn log(&self) -> Option<&std::path::Path> {
        self.log.as_deref()
    }

    /// Every text inserted so far, oldest first.
    pub fn inserted(&self) -> Vec<String> {
        self.insertions().into_iter().map(|i| i.text).collect()
    }

    /// Every insertion so far with its time, oldest first.
    pub fn insertions(&self) -> Vec<Insertion> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Insertion>> {
        self.inserted
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn append(path: &std::path::Path, insertion: &Insertion) -> io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut line = serde_json::to_vec(insertion).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        file.write_all(&line)?;
        file.flush()?;
        file.sync_data()
    }
}

impl Inserter for SimInserter {
    fn name(&self) -> &'static str {
        "sim"
    }

    /// Appends to the file first (holding the lock, so lines keep the order of the memory
    /// record); a text that could not be written is not recorded at all.
    fn insert(&self, text: &str) -> Result<(), InsertError> {
        let insertion = Insertion {
            text: text.to_owned(),
            at: Utc::now(),
        };
        let mut inserted = self.lock();
        if let Some(path) = &self.log {
            Self::append(path, &insertion).map_err(|source| InsertError::Record {
                path: path.clone(),
                source,
            })?;
        }
        inserted.push(insertion);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    #[test]
    fn the_sim_inserter_keeps_order_in_memory_and_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/folder/inserted.jsonl");
        let sim = SimInserter::new(&path);
        sim.insert("first").unwrap();
        sim.insert("zweite \"Zeile\"\n").unwrap();
        assert_eq!(sim.inserted(), ["first", "zweite \"Zeile\"\n"]);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["text"], "zweite \"Zeile\"\n");
        let at = lines[0]["at"].as_str().unwrap();
        assert_eq!(
            wire::parse_timestamp(at),
            Some(sim.insertions()[0].at.with_nanosecond(0).unwrap())
        );
    }

    #[test]
    fn a_sim_log_that_cannot_be_written_fails_and_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let sim = SimInserter::new(blocker.join("inserted.jsonl"));
        let err = sim.insert("lost").unwrap_err();
        assert!(matches!(err, InsertError::Record { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("Could not record the insertion in ")
        );
        assert!(sim.inserted().is_empty());
    }
}
