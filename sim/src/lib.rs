//! Simulated audio devices, replay engine and virtual clock for Verbatim.
//!
//! This crate knows nothing of the application; `verbatim` adapts it to its ports.
//!
//! - [`corpus`]: `corpus/clips.toml`, the clips (16 kHz mono) and the recordings per model.
//! - [`recording`]: the recorded engine output format, `corpus/recordings/<model>.json`.
//! - [`fingerprint`]: recognises corpus clips, alone or in sequence, in decoded audio.
//! - [`replay`]: the replay engine: recorded output for recognised audio.
//! - [`resample`]: linear-interpolation resampling of clips to a device's rate.

pub mod corpus;
mod features;
pub mod fingerprint;
pub mod recording;
pub mod replay;
pub mod resample;

pub use corpus::{Clip, ClipEntry, ClipKind, ClipSource, Corpus, CorpusError, SAMPLE_RATE};
pub use fingerprint::{FingerprintIndex, MATCH_THRESHOLD, Match};
pub use recording::{RecordedClip, Recording, Segment};
pub use replay::{Latency, Replay, ReplayEngine, ReplayError, ReplayedClip};
pub use resample::resample_linear;
