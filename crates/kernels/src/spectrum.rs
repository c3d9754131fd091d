//! realfft's forward real-to-complex FFT on `f32`, planned here so that its butterflies are
//! compiled once, optimised, for every crate that takes a spectrum (the resamplers' FFTs are
//! the same code).

use std::sync::Arc;

pub use realfft::RealToComplex;
pub use realfft::num_complex::Complex32;

/// A forward FFT of `len` real samples (`len / 2 + 1` complex bins out).
pub fn forward_fft(len: usize) -> Arc<dyn RealToComplex<f32>> {
    realfft::RealFftPlanner::<f32>::new().plan_fft_forward(len)
}
