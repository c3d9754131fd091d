//! Audio: decoding uploaded files, resampling, capture from devices, mixing and WAV recording.

pub mod capture;
mod container;
pub mod decode;
pub mod mix;
pub mod resample;
pub mod vad;
pub mod wav;
