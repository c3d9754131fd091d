//! The count of values a backup document may hold: a document of many tiny values costs far
//! more as a typed backup than its size, so the count, not the size, bounds what reading one
//! costs. Counted per thread: a document is read on one thread from start to end.

use std::cell::Cell;

use serde::de::Error;

use super::reader::Problem;

/// Values one document may hold that the readers keep: about three times what a 64 MiB backup
/// of history holds (12 values an entry), and at most about 250 MiB as a typed backup whatever
/// the shape (one-character strings are the costliest, about 60 bytes each).
pub const MAX_VALUES: usize = 4_000_000;

thread_local! {
    /// Values kept so far by the document being read on this thread.
    static KEPT: Cell<usize> = const { Cell::new(0) };
}

/// The count of kept values for one document, read on one thread from start to end.
pub struct ValueBudget;

impl ValueBudget {
    /// Starts counting a new document on this thread.
    pub fn start() -> ValueBudget {
        KEPT.set(0);
        ValueBudget
    }

    /// Whether the document read since [`ValueBudget::start`] went past [`MAX_VALUES`].
    pub fn exceeded(&self) -> bool {
        KEPT.get() > MAX_VALUES
    }

    /// The problem to report when it did.
    pub fn problem() -> Problem {
        Problem {
            path: String::new(),
            what: format!(
                "The document holds more than {MAX_VALUES} values, more than a settings backup may hold."
            ),
        }
    }
}

/// Counts one kept value; past the budget, reading stops.
pub(super) fn keep<E: Error>() -> Result<(), E> {
    let kept = KEPT.get() + 1;
    KEPT.set(kept);
    if kept > MAX_VALUES {
        Err(E::custom("too many values"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backup::{Backup, DocumentError};

    #[test]
    fn a_document_of_too_many_tiny_values_is_refused_as_it_is_read() {
        let ids = vec!["a"; MAX_VALUES + 1];
        let document = serde_json::json!({
            "schemaVersion": 1,
            "workflows": [{"id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail",
                "isEnabled": true, "priority": 0, "bundleIdentifiers": ids, "urlPatterns": []}]
        })
        .to_string();
        match Backup::from_reader(document.as_bytes()) {
            Err(DocumentError::Invalid(problem)) => assert_eq!(problem, ValueBudget::problem()),
            Err(DocumentError::Malformed(err)) => panic!("malformed: {err}"),
            Ok(_) => panic!("a document past the budget was read"),
        }
        // The next document on the same thread starts from zero.
        let small = r#"{"schemaVersion": 1, "workflows": []}"#;
        assert!(Backup::from_reader(small.as_bytes()).is_ok());
    }
}
