//! The work Verbatim does on every sample of audio: the downmix of what symphonia decodes,
//! earshot's voice detector, rubato's resamplers and realfft's forward FFT, behind concrete
//! (not generic) types; and on every value of a model it converts: weights decoded, encoded
//! and quantized (`weights`).
//!
//! Generic code is compiled in the crate that names its types, at that crate's optimisation
//! level. Called from the `verbatim` crate, earshot's network and rubato's FFTs were compiled
//! with it, unoptimised in debug builds (tests, `cargo run`), and ran several times slower than
//! in a release build, as did the loops over a model's weights. Here they are named once, in a
//! crate built optimised in every profile (the workspace's `Cargo.toml` sets
//! `verbatim-kernels = { opt-level = 3 }` under `[profile.dev.package]`); `verbatim` calls only
//! the functions below. What to detect and how to resample stays in `verbatim::audio`, what to
//! convert in `verbatim::engine::import_ct2`.

pub mod detector;
pub mod downmix;
pub mod resampler;
pub mod spectrum;
pub mod weights;

pub use detector::{FRAME, VoiceDetector};
pub use resampler::MonoResampler;
