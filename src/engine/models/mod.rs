//! The whisper models: the catalog and its languages, the models folder on disk, fetching one
//! model's weights over HTTP and the downloads in flight shared between requests.

pub mod catalog;
pub mod fetch;
pub mod folder;
pub mod inflight;
pub mod languages;

pub use catalog::{ModelSpec, WHISPER_MODELS, whisper_model};
pub use fetch::{DownloadError, download};
pub use folder::{Manifest, ModelDir, hex, sha256_file};
pub use inflight::Downloads;
pub use languages::{is_known_language, language_name};
