//! System-wide dictation: a pure state machine ([`machine`]) driven by a service ([`service`])
//! that owns the microphone, the engine and the insertion backend.

pub mod context;
pub mod insert;
pub mod machine;
pub mod service;
