//! Why a transcription was refused or failed. The API maps each case to a status and the
//! contract's message (`api/transcribe.rs`); dictation and the Recorder keep the message.

use crate::audio::decode::DecodeError;
use crate::engine::EngineError;
use crate::store::StoreError;
use crate::wire::echo;
use crate::wire::transcription::FieldError;

#[derive(Debug, thiserror::Error)]
pub enum TranscribeError {
    /// An option value or combination the request must change.
    #[error(transparent)]
    Option(#[from] FieldError),
    #[error("Unknown engine '{}'", echo(.0))]
    UnknownEngine(String),
    #[error("Engine '{}' offers no model", echo(.0))]
    NoModelOffered(String),
    #[error("Unknown model '{}'", echo(.0))]
    UnknownModel(String),
    #[error(
        "Ambiguous model id '{}' -- matches engines: {engines}. Specify 'engine' too.",
        echo(model)
    )]
    AmbiguousModel { model: String, engines: String },
    #[error("Model '{}' is not offered by engine '{}'", echo(model), echo(engine))]
    ModelNotOffered { model: String, engine: String },
    #[error("Unknown language code '{}'", echo(.0))]
    UnknownLanguage(String),
    #[error(
        "Model '{0}' cannot translate: it is English-only. Use a multilingual model such as 'base'."
    )]
    CannotTranslate(&'static str),
    #[error(
        "Target-language translation needs a translation provider; none is configured on this host"
    )]
    NoTranslationProvider,
    /// An option the model's engine cannot honour (never silently ignored).
    #[error("Engine '{engine}' does not support {what}")]
    NotSupported { engine: &'static str, what: String },
    /// The engine cannot do what the request asks on this host.
    #[error("{0}")]
    Unsupported(String),
    #[error("No engine selected. Select an engine first.")]
    NoEngineSelected,
    /// The model's weights are missing and the request did not ask to wait for them.
    #[error(
        "Engine '{0}' is not configured (missing API key or downloaded weights). Pass ?await_download=1 to wait for the download."
    )]
    NotConfigured(String),
    /// Selecting a model whose weights are not installed: refused, the selection kept.
    #[error(
        "Model '{model}' is not downloaded: download it first (verbatim models download {model}); the selection is unchanged"
    )]
    NotDownloaded { model: &'static str },
    /// The model's engine cannot run on this machine (its runtime is built for another one).
    #[error("Model '{model}' cannot run on this machine: {why}. Nothing was downloaded.")]
    Unavailable { model: &'static str, why: String },
    #[error("Downloading model '{model}' failed: {cause}. Try again later.")]
    DownloadFailed { model: &'static str, cause: String },
    /// Every slot is taken and the queue is full.
    #[error(
        "The engine is busy with other transcriptions. Try again in {retry_after_secs} seconds."
    )]
    Busy { retry_after_secs: u32 },
    /// The audio could not be decoded (`Io`: reading it failed, a fault of the server).
    #[error(transparent)]
    Audio(DecodeError),
    /// The request's prompt action cannot run (unknown, disabled, no provider set).
    #[error(transparent)]
    Action(#[from] crate::chat::Refused),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A failure of the server; `short` is safe to show, `detail` goes to the log.
    #[error("{short}: {detail}")]
    Internal { short: &'static str, detail: String },
}

impl TranscribeError {
    pub(crate) fn internal(short: &'static str, detail: impl std::fmt::Display) -> Self {
        TranscribeError::Internal {
            short,
            detail: detail.to_string(),
        }
    }

    /// An engine failure, seen from the request that ran on `engine`.
    pub(crate) fn from_engine(err: EngineError, engine: &str) -> Self {
        match err {
            EngineError::UnknownLanguage(code) => TranscribeError::UnknownLanguage(code),
            EngineError::UnknownModel(model) => TranscribeError::UnknownModel(model),
            EngineError::Unsupported(what) => TranscribeError::Unsupported(what),
            EngineError::NotInstalled { .. } => TranscribeError::NotConfigured(engine.into()),
            EngineError::Load { .. } | EngineError::Failed(_) | EngineError::NotInBuild(_) => {
                TranscribeError::internal("transcription failed", err)
            }
            // Only a request whose client has gone is cancelled: nobody reads this.
            EngineError::Cancelled => TranscribeError::internal("transcription cancelled", err),
        }
    }
}

impl TranscribeError {
    /// The message shown to a person (a session's `error`): internal details go to the log.
    pub fn public_message(&self) -> String {
        match self {
            TranscribeError::Internal { short, detail } => {
                tracing::error!("{short}: {detail}");
                format!("Internal error: {short}")
            }
            TranscribeError::Store(err) => {
                tracing::error!("database error: {err}");
                "Internal error: database error".into()
            }
            other => other.to_string(),
        }
    }
}
