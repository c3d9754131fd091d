//! rubato's resamplers on mono `f32` audio, one block at a time.

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Async, Fft, FixedAsync, FixedSync, Indexing, Resampler};
pub use rubato::{SincInterpolationParameters, SincInterpolationType, WindowFunction};

/// A resampler of one channel: rubato's synchronous FFT resampler or its asynchronous sinc one.
pub struct MonoResampler {
    inner: Box<dyn Resampler<f32>>,
}

impl MonoResampler {
    /// The synchronous FFT resampler from `from_rate` to `to_rate`, taking `chunk` input frames
    /// a call; None when rubato refuses the sizes.
    pub fn fft(from_rate: usize, to_rate: usize, chunk: usize) -> Option<MonoResampler> {
        let fft = Fft::<f32>::new(from_rate, to_rate, chunk, 1, FixedSync::Both).ok()?;
        Some(MonoResampler {
            inner: Box::new(fft),
        })
    }

    /// The asynchronous sinc resampler for any `ratio` (output rate over input rate), taking
    /// `chunk` input frames a call.
    ///
    /// # Panics
    /// Panics if `ratio` is not positive and finite or `chunk` is 0.
    pub fn sinc(ratio: f64, params: &SincInterpolationParameters, chunk: usize) -> MonoResampler {
        let sinc = Async::<f32>::new_sinc(ratio, 1.0, params, chunk, 1, FixedAsync::Input)
            .expect("a positive finite ratio and non-zero chunk size are always accepted");
        MonoResampler {
            inner: Box::new(sinc),
        }
    }

    /// Output frames the resampler delays its output by (its start-up).
    pub fn output_delay(&self) -> usize {
        self.inner.output_delay()
    }

    /// The most input frames a call may take.
    pub fn input_frames_max(&self) -> usize {
        self.inner.input_frames_max()
    }

    /// Input frames the next call takes.
    pub fn input_frames_next(&self) -> usize {
        self.inner.input_frames_next()
    }

    /// Output frames the next call may write.
    pub fn output_frames_next(&self) -> usize {
        self.inner.output_frames_next()
    }

    /// Resamples one block: `input` holds [`input_frames_next`](Self::input_frames_next)
    /// frames, or for the last block `partial_len` real frames (the rest taken as silence);
    /// `out` holds at least [`output_frames_next`](Self::output_frames_next). Gives the frames
    /// written to `out`.
    pub fn process(&mut self, input: &[f32], partial_len: Option<usize>, out: &mut [f32]) -> usize {
        let out_frames = out.len();
        let buf_in = InterleavedSlice::new(input, 1, input.len())
            .expect("a mono slice always fits its own length");
        let mut buf_out = InterleavedSlice::new_mut(out, 1, out_frames)
            .expect("a mono slice always fits its own length");
        let indexing = partial_len.map(|n| Indexing::new().partial_len(n));
        let (_, written) = self
            .inner
            .process_into_buffer(&buf_in, &mut buf_out, indexing.as_ref())
            .expect("buffers are sized from the resampler's own frame counts");
        written
    }
}
