//! Simulated audio devices, replay engine and virtual clock for Verbatim.
//!
//! This crate knows nothing of the application; `verbatim` adapts it to its ports.
