//! Spectral features of 16 kHz mono audio for the fingerprint: log energies in mel-spaced bands
//! over 25 ms frames every 10 ms, less each frame's mean (the spectral shape, not the loudness).
//! Coarse features average four frames for a fast first search.

use std::sync::Arc;

use verbatim_kernels::spectrum::{Complex32, RealToComplex, forward_fft};

/// Samples between frame starts (10 ms at 16 kHz).
pub(crate) const HOP: usize = 160;
/// Frames averaged into one coarse frame.
pub(crate) const COARSE: usize = 4;
/// Bands per frame.
pub(crate) const BANDS: usize = 16;

const WINDOW: usize = 400;
const FFT_LEN: usize = 512;
const LOW_HZ: f32 = 150.0;
/// Below the anti-aliasing cut of any resampler that brings audio back to 16 kHz.
const HIGH_HZ: f32 = 7000.0;
/// Added to every band energy before the logarithm: about 70 dB under a full-scale tone, so
/// digital silence and the faint noise of a lossy codec look the same.
const FLOOR: f32 = 1e-4;

/// A feature matrix (frames x [`BANDS`], row-major) with per-band prefix sums, so the correlation
/// of any window with another matrix costs one dot product plus O(BANDS).
#[derive(Debug, Clone)]
pub(crate) struct Features {
    pub frames: usize,
    /// Row-major values, centred per band over the whole matrix (keeps the sums well conditioned).
    pub data: Vec<f32>,
    /// `sums[t * BANDS + b]`: sum of band `b` over frames `0..t`.
    sums: Vec<f64>,
    /// Same for squares.
    squares: Vec<f64>,
}

impl Features {
    fn new(mut data: Vec<f32>) -> Self {
        let frames = data.len() / BANDS;
        if frames > 0 {
            for b in 0..BANDS {
                let mean = (0..frames)
                    .map(|t| f64::from(data[t * BANDS + b]))
                    .sum::<f64>()
                    / frames as f64;
                for t in 0..frames {
                    data[t * BANDS + b] -= mean as f32;
                }
            }
        }
        let mut sums = vec![0.0; (frames + 1) * BANDS];
        let mut squares = vec![0.0; (frames + 1) * BANDS];
        for t in 0..frames {
            for b in 0..BANDS {
                let v = f64::from(data[t * BANDS + b]);
                sums[(t + 1) * BANDS + b] = sums[t * BANDS + b] + v;
                squares[(t + 1) * BANDS + b] = squares[t * BANDS + b] + v * v;
            }
        }
        Features {
            frames,
            data,
            sums,
            squares,
        }
    }

    /// Averages groups of [`COARSE`] frames (a trailing partial group is dropped).
    pub fn coarse(&self) -> Features {
        let frames = self.frames / COARSE;
        let mut data = vec![0.0f32; frames * BANDS];
        for (t, row) in data.chunks_exact_mut(BANDS).enumerate() {
            for k in 0..COARSE {
                let src = &self.data[(t * COARSE + k) * BANDS..][..BANDS];
                for (d, s) in row.iter_mut().zip(src) {
                    *d += s / COARSE as f32;
                }
            }
        }
        Features::new(data)
    }

    fn band_sums(&self, start: usize, len: usize, b: usize) -> (f64, f64) {
        let (i, j) = (start * BANDS + b, (start + len) * BANDS + b);
        (
            self.sums[j] - self.sums[i],
            self.squares[j] - self.squares[i],
        )
    }
}

/// Correlation of `a[a_start..a_start+len]` with `b[b_start..b_start+len]`: Pearson over all
/// values after removing each band's mean in the window, so only the shape over time counts (a
/// constant spectrum such as silence or a steady tone scores 0). Returns -1..1.
pub(crate) fn correlation(
    a: &Features,
    a_start: usize,
    b: &Features,
    b_start: usize,
    len: usize,
) -> f32 {
    if len == 0 {
        return 0.0;
    }
    let x = &a.data[a_start * BANDS..(a_start + len) * BANDS];
    let y = &b.data[b_start * BANDS..(b_start + len) * BANDS];
    let n = len as f64;
    let (mut mean_product, mut var_a, mut var_b) = (0.0, 0.0, 0.0);
    for band in 0..BANDS {
        let (sa, qa) = a.band_sums(a_start, len, band);
        let (sb, qb) = b.band_sums(b_start, len, band);
        mean_product += sa * sb / n;
        var_a += qa - sa * sa / n;
        var_b += qb - sb * sb / n;
    }
    // Windows with (almost) no variation over time say nothing about a match.
    let quiet = 1e-3 * n * BANDS as f64;
    if var_a <= quiet || var_b <= quiet {
        return 0.0;
    }
    let covariance = dot(x, y) - mean_product;
    ((covariance / (var_a * var_b).sqrt()) as f32).clamp(-1.0, 1.0)
}

/// Dot product in eight independent lanes, which the compiler turns into SIMD.
fn dot(x: &[f32], y: &[f32]) -> f64 {
    let mut lanes = [0.0f32; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f32 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..8 {
            lanes[k] += a[k] * b[k];
        }
    }
    lanes.iter().map(|&v| f64::from(v)).sum::<f64>() + f64::from(tail)
}

/// Computes [`Features`]; holds the FFT plan, window and band edges.
#[derive(Clone)]
pub(crate) struct Extractor {
    fft: Arc<dyn RealToComplex<f32>>,
    window: Vec<f32>,
    /// FFT bin range `[lo, hi)` of each band.
    bands: Vec<(usize, usize)>,
}

impl Extractor {
    pub fn new() -> Self {
        let fft = forward_fft(FFT_LEN);
        let window = (0..WINDOW)
            .map(|i| {
                let phase = 2.0 * std::f32::consts::PI * i as f32 / WINDOW as f32;
                0.5 - 0.5 * phase.cos()
            })
            .collect();
        let mel = |hz: f32| 2595.0 * (1.0 + hz / 700.0).log10();
        let hz = |mel: f32| 700.0 * (10f32.powf(mel / 2595.0) - 1.0);
        let bin_hz = 16_000.0 / FFT_LEN as f32;
        let (lo, hi) = (mel(LOW_HZ), mel(HIGH_HZ));
        let edges: Vec<usize> = (0..=BANDS)
            .map(|k| (hz(lo + (hi - lo) * k as f32 / BANDS as f32) / bin_hz).round() as usize)
            .collect();
        let bands = edges
            .windows(2)
            .map(|w| (w[0], w[1].max(w[0] + 1)))
            .collect();
        Extractor { fft, window, bands }
    }

    /// Features of `samples` (16 kHz mono); no frames when shorter than one window.
    pub fn features(&self, samples: &[f32]) -> Features {
        let frames = if samples.len() < WINDOW {
            0
        } else {
            (samples.len() - WINDOW) / HOP + 1
        };
        let mut input = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut work = self.fft.make_scratch_vec();
        let mut power = vec![0.0f32; spectrum.len()];
        let mut data = Vec::with_capacity(frames * BANDS);
        for t in 0..frames {
            let frame = &samples[t * HOP..t * HOP + WINDOW];
            for ((d, s), w) in input.iter_mut().zip(frame).zip(&self.window) {
                *d = s * w;
            }
            input[WINDOW..].fill(0.0);
            self.fft
                .process_with_scratch(&mut input, &mut spectrum, &mut work)
                .expect("buffers come from the plan");
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = Complex32::norm_sqr(c);
            }
            let start = data.len();
            data.extend(
                self.bands
                    .iter()
                    .map(|&(lo, hi)| (power[lo..hi].iter().sum::<f32>() + FLOOR).ln()),
            );
            let row = &mut data[start..];
            let mean = row.iter().sum::<f32>() / BANDS as f32;
            row.iter_mut().for_each(|v| *v -= mean);
        }
        Features::new(data)
    }
}
