//! One module per CLI command.

pub mod backup;
pub mod completions;
pub mod config;
pub mod conformance;
pub mod corpus;
pub mod dictation;
pub mod dictionary;
pub mod doctor;
pub mod history;
mod hotkey;
pub mod listen;
mod live_text;
pub mod local_data;
mod local_store;
pub mod man;
pub mod models;
pub mod open;
mod pick;
pub mod recorder;
pub mod rules;
pub mod serve;
pub mod service;
mod sessions;
pub mod status;
pub mod token;
pub mod transcribe;
