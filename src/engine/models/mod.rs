//! The whisper models: the catalog, its pinned digests and its languages, the models folder on
//! disk, fetching one model's weights over HTTPS (resumable, verified, space checked first) and
//! the downloads in flight shared between requests.

pub mod catalog;
pub mod expected;
pub mod fetch;
pub mod folder;
pub mod ggml_header;
pub mod inflight;
pub mod languages;
pub mod partial;
pub mod space;

pub use catalog::{ModelSpec, Pin, WHISPER_MODELS, whisper_model};
pub use expected::Expected;
pub use fetch::{DownloadError, download, download_verified};
pub use folder::{Manifest, ModelDir, hex, sha256_file};
pub use ggml_header::GgmlHeader;
pub use inflight::{Downloads, Progress as DownloadProgress};
pub use languages::{is_accepted_language, is_known_language, language_name, normalize_language};
