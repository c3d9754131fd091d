//! System-wide dictation: a pure state machine ([`machine`]) driven by a service that owns the
//! microphone, the engine and the insertion backend.

pub mod machine;
