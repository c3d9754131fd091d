//! Audio input: decoding uploaded files and resampling to the 16 kHz mono the models use.

mod container;
pub mod decode;
pub mod mix;
pub mod resample;
pub mod wav;
