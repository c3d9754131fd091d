//! The transcription path: decode -> resample -> engine -> numbers -> corrections.

pub mod corrections;
pub mod numbers;
pub mod options;
pub mod service;
mod words;
