//! One module per CLI command.

pub mod config;
pub mod models;
pub mod serve;
pub mod status;
pub mod token;
pub mod transcribe;
