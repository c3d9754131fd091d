//! System-wide dictation: a pure state machine ([`machine`]) driven by a service that owns the
//! microphone, the engine and the insertion backend ([`insert`]) in the desktop session
//! ([`desktop`]).

pub mod desktop;
pub mod insert;
pub mod machine;
