//! Simulated audio devices, replay engine and virtual clock for Verbatim.
//!
//! This crate knows nothing of the application; `verbatim` adapts it to its ports.
//!
//! - [`corpus`]: `corpus/clips.toml`, the clips (16 kHz mono) and the recordings per model.
//! - [`recording`]: the recorded engine output format, `corpus/recordings/<model>.json`.
//! - [`fingerprint`]: recognises corpus clips, alone or in sequence, in decoded audio.
//! - [`replay`]: the replay engine: recorded output for recognised audio.
//! - [`clock`]: real and virtual time.
//! - [`playlist`]: what a device plays (clips, silence, tones) at its own rate.
//! - [`resample`]: linear-interpolation resampling of clips to a device's rate.
//! - [`device`]: simulated microphone and system audio with scripted faults.
//! - [`scenario`]: the scenario file (TOML) and its checks.
//! - [`simulation`]: everything a scenario describes, assembled.
//! - [`wer`]: word error rate against the corpus's reference texts.

pub mod clock;
pub mod corpus;
mod corpus_error;
pub mod device;
mod features;
pub mod fingerprint;
pub mod playlist;
pub mod recording;
pub mod replay;
pub mod resample;
pub mod scenario;
pub mod simulation;
pub mod wer;

pub use clock::{Clock, RealClock, VirtualClock};
pub use corpus::{Clip, ClipEntry, ClipKind, ClipSource, Corpus, SAMPLE_RATE};
pub use corpus_error::CorpusError;
pub use device::{
    Capture, Chunk, DeviceError, DeviceKind, Faults, Overrun, OverrunFault, Playback, SimDevice,
};
pub use fingerprint::{FingerprintIndex, MATCH_THRESHOLD, Match};
pub use playlist::{After, Item, Playlist};
pub use recording::{RecordedClip, Recording, Segment};
pub use replay::{Latency, Replay, ReplayEngine, ReplayError, ReplayedClip};
pub use resample::resample_linear;
pub use scenario::{
    AppContext, ChatFault, ChatSpec, DeviceSpec, EngineSpec, ModelState, Scenario, ScenarioError,
};
pub use simulation::{SimError, Simulation};
pub use wer::{word_error_rate, word_errors};
