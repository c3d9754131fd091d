//! One module per CLI command.

pub mod backup;
pub mod config;
pub mod corpus;
pub mod dictionary;
pub mod history;
pub mod models;
pub mod rules;
pub mod serve;
pub mod status;
pub mod token;
pub mod transcribe;
