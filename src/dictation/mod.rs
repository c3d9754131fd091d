//! System-wide dictation: a pure state machine ([`machine`]) driven by a service ([`service`])
//! that owns the microphone, transcribes ([`transcript`]) and inserts the text ([`insert`]; as
//! it is transcribed with [`live_insert`]), and records which application it dictated into
//! ([`context`]) in the desktop session ([`desktop`]), choosing the workflow and the profile
//! whose rules match it ([`rule_match`]).

pub mod context;
pub mod desktop;
pub mod insert;
mod live_insert;
pub mod machine;
pub mod rule_match;
pub mod service;
mod transcript;

pub use transcript::FAILED_AUDIO_FOLDER;
