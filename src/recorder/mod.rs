//! The Recorder: a pure state machine ([`machine`]) driven by a service ([`service`]) that owns
//! the devices, the WAV file and the optional transcription.

pub mod machine;
pub mod service;
