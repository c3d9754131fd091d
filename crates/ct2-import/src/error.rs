//! What can go wrong importing a CTranslate2 model, each error naming the file at fault.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Ct2Error {
    #[error("required file {path} does not exist")]
    MissingFile { path: PathBuf },
    #[error("model directory {dir} has no vocabulary.json, vocabulary.txt or tokenizer.json")]
    MissingVocabulary { dir: PathBuf },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is truncated: it ends inside {what}")]
    Truncated { path: PathBuf, what: String },
    #[error(
        "{path} has CTranslate2 binary version {version}, but only versions 4 to 6 can be read"
    )]
    UnsupportedVersion { path: PathBuf, version: u32 },
    #[error("{path} holds a CTranslate2 `{spec}` model, not a Whisper model (`WhisperSpec`)")]
    NotWhisper { path: PathBuf, spec: String },
    #[error("{path} is malformed: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("{path} lacks the variable `{name}` that a Whisper model needs")]
    MissingVariable { path: PathBuf, name: String },
    #[error("{path} has variable `{name}` with shape {found:?} where {expected:?} was expected")]
    BadShape {
        path: PathBuf,
        name: String,
        found: Vec<u64>,
        expected: Vec<u64>,
    },
    #[error("{path} stores variable `{name}` in a form that cannot be converted: {reason}")]
    UnsupportedVariable {
        path: PathBuf,
        name: String,
        reason: String,
    },
    #[error("{path} describes a model whisper.cpp cannot run: {reason}")]
    Unsupported { path: PathBuf, reason: String },
    #[error("{path} is not a valid model configuration: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("{path} does not fit the model: {reason}")]
    Vocabulary { path: PathBuf, reason: String },
}

impl Ct2Error {
    /// Opening (or reading the metadata of) `path` failed: a missing file is named as such.
    pub(super) fn opening(path: &Path, source: io::Error) -> Ct2Error {
        if source.kind() == io::ErrorKind::NotFound {
            Ct2Error::MissingFile {
                path: path.to_path_buf(),
            }
        } else {
            Ct2Error::reading(path)(source)
        }
    }

    /// Reading `path` failed, for `map_err`.
    pub(super) fn reading(path: &Path) -> impl Fn(io::Error) -> Ct2Error + '_ {
        move |source| Ct2Error::Read {
            path: path.to_path_buf(),
            source,
        }
    }
}
