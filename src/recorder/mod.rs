//! The Recorder: a pure state machine ([`machine`]) driven by a service ([`service`]) that owns
//! the devices, the capture thread writing the WAV file ([`capture`]) and the optional
//! transcription.

mod capture;
pub mod machine;
pub mod service;
