//! The transcription path: decode -> resample -> engine -> numbers -> corrections.

pub mod corrections;
pub mod numbers;
mod words;
