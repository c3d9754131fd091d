//! Resampling of mono `f32` audio to the 16 kHz rate the speech models expect.
//!
//! Two entry points:
//!
//! * [`resample_to_16k`] for a whole clip that is already in memory;
//! * [`StreamingResampler`] for audio that arrives in pieces (the decoder feeds it one
//!   packet at a time, so the source rate audio is never held in full).
//!
//! Both produce exactly `round(len * 16000 / from_rate)` output samples, aligned with the
//! input (the resampler's start-up delay is trimmed off).
//!
//! Engine choice: for every common rate the synchronous FFT resampler of `rubato` is used
//! (fixed ratio, high quality, and the fastest option). It needs `from_rate / gcd(from_rate,
//! 16000)` input frames per block, which stays small for real-world rates (44.1 kHz -> 441,
//! 48 kHz -> 3) but becomes huge for odd ones (a prime rate gives a block as long as one
//! second). Rates whose block would exceed [`MAX_FFT_BLOCK`] frames fall back to the
//! asynchronous sinc resampler, which handles any ratio with a bounded amount of memory.

use verbatim_kernels::MonoResampler;
use verbatim_kernels::resampler::{
    SincInterpolationParameters, SincInterpolationType, WindowFunction,
};

/// The output rate of this module, in Hz.
pub const TARGET_RATE: u32 = 16_000;

/// Largest FFT block (in input frames) the synchronous resampler may use. Above this the
/// asynchronous sinc resampler is used instead (see the module docs).
pub const MAX_FFT_BLOCK: u32 = 4_096;

/// Target FFT block, in input frames (see [`fft_block`] for the exact choice). A longer
/// block gives a sharper anti-aliasing filter: at 44.1 kHz, 3969 frames put the cutoff at
/// 7.9 kHz (441 frames: 7.3 kHz), against the 8 kHz Nyquist limit. The speed hardly
/// depends on the length; the cost is a start-up delay of half a block, which is trimmed
/// from the output.
const FFT_CHUNK_FRAMES: usize = 4_096;

/// Input frames per processing call for the asynchronous fallback.
const ASYNC_CHUNK_FRAMES: usize = 1_024;

/// Number of output samples that `input_len` samples at `from_rate` turn into:
/// `round(input_len * 16000 / from_rate)`, halves rounded up. Returns 0 for `from_rate == 0`.
pub fn expected_output_len(input_len: u64, from_rate: u32) -> u64 {
    output_len_between(input_len, from_rate, TARGET_RATE)
}

/// `round(input_len * to_rate / from_rate)`, halves rounded up; 0 for `from_rate == 0`.
pub fn output_len_between(input_len: u64, from_rate: u32, to_rate: u32) -> u64 {
    if from_rate == 0 {
        return 0;
    }
    let num = u128::from(input_len) * u128::from(to_rate) + u128::from(from_rate / 2);
    (num / u128::from(from_rate)) as u64
}

/// Resamples a whole mono clip from `from_rate` Hz to 16 kHz.
///
/// Returns a copy of the input when it is already at 16 kHz, and an empty vector when
/// `from_rate` is 0 (there is no meaningful conversion). The output has exactly
/// [`expected_output_len`] samples.
pub fn resample_to_16k(samples: &[f32], from_rate: u32) -> Vec<f32> {
    if from_rate == 0 {
        return Vec::new();
    }
    let mut resampler = StreamingResampler::new(from_rate);
    resampler.reserve_output(expected_output_len(samples.len() as u64, from_rate) as usize);
    resampler.push(samples);
    resampler.finish()
}

/// Incremental mono resampler (to 16 kHz unless made with [`StreamingResampler::between`]).
///
/// Feed input of any length with [`push`](Self::push), then call [`finish`](Self::finish) to
/// flush the tail and get the output. Input is processed as soon as a full block is
/// available, so only one block of source-rate audio is buffered at a time; the output
/// accumulates inside and is handed over by `finish`.
pub struct StreamingResampler {
    from_rate: u32,
    to_rate: u32,
    /// Output samples already handed over by [`StreamingResampler::take_output`].
    taken: u64,
    engine: Option<MonoResampler>,
    /// Input frames that did not yet fill a whole block.
    pending: Vec<f32>,
    /// Output frames still to drop at the start (the resampler's start-up delay).
    delay_left: usize,
    /// Total input frames pushed so far.
    input_frames: u64,
    out: Vec<f32>,
}

impl StreamingResampler {
    /// Creates a resampler from `from_rate` Hz to 16 kHz.
    ///
    /// # Panics
    /// Panics if `from_rate` is 0.
    pub fn new(from_rate: u32) -> Self {
        Self::between(from_rate, TARGET_RATE)
    }

    /// Creates a resampler from `from_rate` Hz to `to_rate` Hz.
    ///
    /// # Panics
    /// Panics if either rate is 0.
    pub fn between(from_rate: u32, to_rate: u32) -> Self {
        assert!(from_rate > 0, "the source sample rate must be positive");
        assert!(to_rate > 0, "the target sample rate must be positive");
        let engine = if from_rate == to_rate {
            None
        } else {
            Some(make_engine(from_rate, to_rate))
        };
        let delay_left = engine.as_ref().map_or(0, |e| e.output_delay());
        let pending_cap = engine.as_ref().map_or(0, |e| e.input_frames_max());
        Self {
            from_rate,
            to_rate,
            taken: 0,
            engine,
            pending: Vec::with_capacity(pending_cap),
            delay_left,
            input_frames: 0,
            out: Vec::new(),
        }
    }

    /// The source rate this resampler converts from.
    pub fn from_rate(&self) -> u32 {
        self.from_rate
    }

    /// Number of output samples produced so far (before the final flush).
    pub fn output_len(&self) -> usize {
        self.out.len()
    }

    /// Hands over the output produced so far (what [`finish`](Self::finish) returns is then
    /// only the rest): lets a long stream be written out as it goes.
    pub fn take_output(&mut self) -> Vec<f32> {
        let out = std::mem::take(&mut self.out);
        self.taken += out.len() as u64;
        out
    }

    /// Hands the output produced so far to `take` and forgets it (keeping the buffer for what
    /// comes next); gives what `take` returned.
    pub fn drain_output(&mut self, take: &mut dyn FnMut(&[f32]) -> bool) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let wanted = take(&self.out);
        self.taken += self.out.len() as u64;
        self.out.clear();
        wanted
    }

    /// Reserves room for `additional` more output samples.
    pub fn reserve_output(&mut self, additional: usize) {
        self.out.reserve(additional);
    }

    /// Feeds more mono input samples.
    pub fn push(&mut self, mut input: &[f32]) {
        self.input_frames += input.len() as u64;
        let Some(engine) = self.engine.as_mut() else {
            self.out.extend_from_slice(input);
            return;
        };

        // Complete a partially filled block first.
        if !self.pending.is_empty() {
            let need = engine.input_frames_next() - self.pending.len();
            let take = need.min(input.len());
            self.pending.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.pending.len() < engine.input_frames_next() {
                return;
            }
            run_block(
                engine,
                &self.pending,
                None,
                &mut self.out,
                &mut self.delay_left,
            );
            self.pending.clear();
        }

        // Then process whole blocks straight from the caller's slice.
        loop {
            let need = engine.input_frames_next();
            if input.len() < need {
                break;
            }
            run_block(
                engine,
                &input[..need],
                None,
                &mut self.out,
                &mut self.delay_left,
            );
            input = &input[need..];
        }
        self.pending.extend_from_slice(input);
    }

    /// Flushes the remaining input and returns all output not yet taken: in total exactly
    /// [`output_len_between`]`(total input, from_rate, to_rate)` samples.
    pub fn finish(mut self) -> Vec<f32> {
        let expected = output_len_between(self.input_frames, self.from_rate, self.to_rate)
            .saturating_sub(self.taken) as usize;
        if let Some(engine) = self.engine.as_mut() {
            if !self.pending.is_empty() {
                let len = self.pending.len();
                run_block(
                    engine,
                    &self.pending,
                    Some(len),
                    &mut self.out,
                    &mut self.delay_left,
                );
                self.pending.clear();
            }
            // Push silence through until the delayed tail of the real input has come out.
            // Each call yields at least one frame, so this terminates.
            while self.out.len() < expected {
                let before = self.out.len() + self.delay_left;
                run_block(engine, &[], Some(0), &mut self.out, &mut self.delay_left);
                if self.out.len() + self.delay_left == before {
                    // Defensive: a resampler that produces nothing would loop forever.
                    break;
                }
            }
        }
        self.out.resize(expected, 0.0);
        self.out
    }
}

/// Runs one processing call of `engine` on `input`, appending the output to `out` and
/// dropping the first `*delay_left` output frames overall.
fn run_block(
    engine: &mut MonoResampler,
    input: &[f32],
    partial_len: Option<usize>,
    out: &mut Vec<f32>,
    delay_left: &mut usize,
) {
    let out_frames = engine.output_frames_next();
    let start = out.len();
    out.resize(start + out_frames, 0.0);
    let written = engine.process(input, partial_len, &mut out[start..]);
    out.truncate(start + written);

    if *delay_left > 0 {
        let drop = (*delay_left).min(written);
        out.drain(start..start + drop);
        *delay_left -= drop;
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn largest_prime_factor(mut n: usize) -> usize {
    let mut largest = 1;
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            largest = p;
            n /= p;
        }
        p += 1;
    }
    largest.max(n)
}

/// Picks the FFT block (in input frames): a multiple of the minimal block `block_in`
/// (whose output side is `block_out`) within a factor of two of [`FFT_CHUNK_FRAMES`],
/// preferring sizes without large prime factors (they make the FFT several times slower:
/// at 48 kHz, 4095 input frames = 3·3·5·7·13 cost twice as much as 3072 = 3·2^10), then
/// the size closest to the target (48 kHz gets 3888 = 2^4·3^5).
fn fft_block(block_in: usize, block_out: usize) -> usize {
    let k_min = (FFT_CHUNK_FRAMES / 2 / block_in).max(1);
    let k_max = (2 * FFT_CHUNK_FRAMES / block_in).max(k_min);
    let k = (k_min..=k_max)
        .min_by_key(|&k| {
            let roughness =
                largest_prime_factor(k * block_in).max(largest_prime_factor(k * block_out));
            (roughness, (k * block_in).abs_diff(FFT_CHUNK_FRAMES))
        })
        .unwrap_or(1);
    k * block_in
}

fn make_engine(from_rate: u32, to_rate: u32) -> MonoResampler {
    let g = gcd(from_rate, to_rate);
    let block = from_rate / g;
    if block <= MAX_FFT_BLOCK {
        let chunk = fft_block(block as usize, (to_rate / g) as usize);
        if let Some(fft) = MonoResampler::fft(from_rate as usize, to_rate as usize, chunk) {
            return fft;
        }
    }
    let ratio = f64::from(to_rate) / f64::from(from_rate);
    let params = SincInterpolationParameters::new(128, WindowFunction::BlackmanHarris2)
        .oversampling_factor(256)
        .interpolation(SincInterpolationType::Linear);
    MonoResampler::sinc(ratio, &params, ASYNC_CHUNK_FRAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(freq: f32, rate: u32, len: usize) -> Vec<f32> {
        (0..len)
            .map(|i| (2.0 * std::f32::consts::PI * freq * i as f32 / rate as f32).sin() * 0.5)
            .collect()
    }

    /// Power of `freq` in `x` (Goertzel), normalised by the length.
    fn goertzel(x: &[f32], rate: u32, freq: f32) -> f64 {
        let w = 2.0 * std::f64::consts::PI * f64::from(freq) / f64::from(rate);
        let coeff = 2.0 * w.cos();
        let (mut s1, mut s2) = (0.0f64, 0.0f64);
        for &v in x {
            let s0 = f64::from(v) + coeff * s1 - s2;
            s2 = s1;
            s1 = s0;
        }
        (s1 * s1 + s2 * s2 - coeff * s1 * s2) / (x.len() as f64).powi(2)
    }

    fn dominant(x: &[f32]) -> f32 {
        (200..=1000)
            .step_by(10)
            .map(|f| f as f32)
            .max_by(|&a, &b| goertzel(x, TARGET_RATE, a).total_cmp(&goertzel(x, TARGET_RATE, b)))
            .unwrap()
    }

    #[test]
    fn identity_at_16k() {
        let x = sine(440.0, 16_000, 1234);
        assert_eq!(resample_to_16k(&x, 16_000), x);
    }

    #[test]
    fn zero_rate_gives_empty() {
        assert!(resample_to_16k(&[0.1, 0.2], 0).is_empty());
    }

    #[test]
    fn lengths_match_the_ratio() {
        for rate in [
            8_000, 11_025, 12_000, 22_050, 24_000, 32_000, 44_100, 48_000, 88_200, 96_000, 192_000,
            7_919, 44_101, 1_000, 768_000,
        ] {
            for len in [0usize, 1, 2, 100, 441, 4_410, 44_100, 100_003] {
                let x = sine(440.0, rate, len);
                let y = resample_to_16k(&x, rate);
                assert_eq!(
                    y.len() as u64,
                    expected_output_len(len as u64, rate),
                    "rate {rate}, len {len}"
                );
            }
        }
    }

    #[test]
    fn keeps_the_tone_frequency_and_level() {
        for rate in [8_000, 22_050, 44_100, 48_000, 96_000, 44_101] {
            let x = sine(440.0, rate, rate as usize); // one second
            let y = resample_to_16k(&x, rate);
            assert_eq!(dominant(&y), 440.0, "rate {rate}");
            // Amplitude 0.5 sine has RMS 0.354; check the middle to skip edge effects.
            let mid = &y[2_000..14_000];
            let rms = (mid.iter().map(|v| v * v).sum::<f32>() / mid.len() as f32).sqrt();
            assert!((rms - 0.3536).abs() < 0.01, "rate {rate}: rms {rms}");
        }
    }

    #[test]
    fn output_is_aligned_with_the_input() {
        // A click at 0.5 s must come out at 0.5 s.
        for rate in [44_100, 48_000, 8_000, 44_101] {
            let mut x = vec![0.0f32; rate as usize];
            x[rate as usize / 2] = 1.0;
            let y = resample_to_16k(&x, rate);
            let peak = y
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .unwrap()
                .0;
            assert!(
                (peak as i64 - 8_000).abs() <= 2,
                "rate {rate}: peak at {peak}"
            );
        }
    }

    #[test]
    fn streaming_matches_one_shot() {
        let x = sine(440.0, 44_100, 50_000);
        let whole = resample_to_16k(&x, 44_100);
        let mut s = StreamingResampler::new(44_100);
        // Irregular piece sizes, including empty ones.
        let mut pos = 0;
        for (i, n) in [0usize, 1, 1152, 3, 4410, 0, 7000, 999]
            .iter()
            .cycle()
            .enumerate()
        {
            if pos >= x.len() || i > 10_000 {
                break;
            }
            let end = (pos + n).min(x.len());
            s.push(&x[pos..end]);
            pos = end;
        }
        let pieces = s.finish();
        assert_eq!(pieces.len(), whole.len());
        let max_diff = pieces
            .iter()
            .zip(&whole)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(max_diff < 1e-5, "max diff {max_diff}");
    }

    #[test]
    fn fft_blocks_avoid_large_prime_factors() {
        for rate in [
            8_000, 11_025, 12_000, 22_050, 24_000, 32_000, 44_100, 48_000, 88_200, 96_000, 176_400,
            192_000,
        ] {
            let g = gcd(rate, TARGET_RATE);
            let (block_in, block_out) = ((rate / g) as usize, (TARGET_RATE / g) as usize);
            let block = fft_block(block_in, block_out);
            let out = block / block_in * block_out;
            assert_eq!(block % block_in, 0, "rate {rate}");
            assert!((2_048..=8_192).contains(&block), "rate {rate}: {block}");
            assert!(
                largest_prime_factor(block).max(largest_prime_factor(out)) <= 7,
                "rate {rate}: {block} -> {out}"
            );
        }
        // 48 kHz would otherwise get 4095 = 3·3·5·7·13.
        assert_eq!(fft_block(3, 1), 3_888);
        assert_eq!(largest_prime_factor(4_095), 13);
        assert_eq!(largest_prime_factor(3_888), 3);
        assert_eq!(largest_prime_factor(1), 1);
        assert_eq!(largest_prime_factor(7_919), 7_919);
    }

    #[test]
    fn fallback_is_used_for_awkward_rates() {
        assert!(44_100 / gcd(44_100, TARGET_RATE) <= MAX_FFT_BLOCK);
        assert!(44_101 / gcd(44_101, TARGET_RATE) > MAX_FFT_BLOCK);
    }

    #[test]
    fn output_taken_as_it_goes_adds_up_to_the_whole_conversion() {
        let input = sine(440.0, 44_100, 44_100 * 2 + 123);
        let mut whole = StreamingResampler::between(44_100, 48_000);
        whole.push(&input);
        let whole = whole.finish();
        let mut streamed = StreamingResampler::between(44_100, 48_000);
        let mut out = Vec::new();
        for piece in input.chunks(1_000) {
            streamed.push(piece);
            out.extend(streamed.take_output());
        }
        out.extend(streamed.finish());
        assert_eq!(
            out.len() as u64,
            output_len_between(input.len() as u64, 44_100, 48_000)
        );
        assert_eq!(out, whole);
    }
}
