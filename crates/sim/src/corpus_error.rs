//! Why a corpus file could not be taken: it could not be read, or it is not what the corpus
//! expects. Shared by the clip manifest and the recordings.

use std::path::{Path, PathBuf};

/// A corpus file that could not be read or is not what the corpus expects; names the file.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl CorpusError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        CorpusError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        CorpusError::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
