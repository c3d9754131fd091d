//! The Recorder: a pure state machine ([`machine`]) driven by a service that owns the devices.

pub mod machine;
