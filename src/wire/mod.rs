//! The wire vocabulary: the request and response types of the routes, shared by the server and
//! the CLI client, and the one table of transcription fields (form name, header, JSON key).

mod backup;
mod error;
mod formats;
mod status;
pub mod transcription;

pub use backup::ImportSummary;
pub use error::{ErrorBody, ErrorDetail};
pub use formats::{
    format_timestamp, format_uuid, parse_bool_word, parse_timestamp, parse_uuid, timestamp,
    upper_uuid, upper_uuid_opt,
};
pub use status::{ModelEntry, ModelList, Status};

/// The current API version reported by `GET /v1/status`.
pub const API_VERSION: &str = "1.1";

/// Largest request body accepted anywhere (uploads, JSON documents): 256 MiB.
pub const MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;
