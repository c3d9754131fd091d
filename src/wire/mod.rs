//! The wire vocabulary: the request and response types of the routes, one file per resource,
//! used by the server's handlers and by the CLI's typed client, and the one table of
//! transcription fields (form name, header, JSON key).
//!
//! Wire types depend on nothing in the store: the handlers in `api/` build them from store
//! records. One record is its own wire shape: [`history::HistoryEntry`] lives here and the store
//! re-exports it, so the history page, a dictation's transcript and the CLI read one type. A
//! settings backup stays JSON ([`SettingsDocument`]); the backup module gives it its structure.

mod backup;
pub mod dictionary;
mod error;
mod formats;
pub mod history;
pub mod openai;
pub mod prompt_actions;
pub mod rules;
pub mod sessions;
mod status;
pub mod subtitles;
pub mod transcription;

pub use backup::{ImportSummary, SettingsDocument};
pub use error::{ECHO_LIMIT, ErrorBody, ErrorDetail, echo};
pub use formats::{
    format_timestamp, format_uuid, parse_bool_word, parse_timestamp, parse_uuid, timestamp,
    upper_uuid, upper_uuid_opt,
};
pub use history::HistoryEntry;
pub use status::{ModelCapabilities, ModelEntry, ModelList, Status};

/// The current API version reported by `GET /v1/status`.
pub const API_VERSION: &str = "1.1";

/// Largest request body accepted anywhere: an audio upload, 256 MiB.
pub const MAX_BODY_BYTES: u64 = 256 * MIB;

/// Largest settings backup `POST /v1/settings/import` takes: 64 MiB.
pub const MAX_IMPORT_BYTES: u64 = 64 * MIB;

/// Largest JSON body of every other route: 1 MiB.
pub const MAX_JSON_BYTES: u64 = MIB;

const MIB: u64 = 1024 * 1024;
