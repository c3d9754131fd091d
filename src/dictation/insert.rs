//! Where dictated text goes: nowhere, the clipboard, keystrokes, or (sim mode) a record.

use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InsertError(pub String);

pub trait Inserter: Send + Sync {
    fn name(&self) -> &'static str;
    fn insert(&self, text: &str) -> Result<(), InsertError>;
}

pub struct NoInsertion;

impl Inserter for NoInsertion {
    fn name(&self) -> &'static str {
        "none"
    }
    fn insert(&self, _: &str) -> Result<(), InsertError> {
        Ok(())
    }
}

pub struct SimInserter {
    log: PathBuf,
    inserted: Mutex<Vec<String>>,
}

impl SimInserter {
    pub fn new(log: PathBuf) -> SimInserter {
        SimInserter {
            log,
            inserted: Mutex::new(Vec::new()),
        }
    }
    pub fn inserted(&self) -> Vec<String> {
        self.inserted.lock().unwrap().clone()
    }
}

impl Inserter for SimInserter {
    fn name(&self) -> &'static str {
        "sim"
    }
    fn insert(&self, text: &str) -> Result<(), InsertError> {
        let _ = &self.log;
        self.inserted.lock().unwrap().push(text.into());
        Ok(())
    }
}

pub fn for_preference(_value: &str) -> Box<dyn Inserter> {
    Box::new(NoInsertion)
}
