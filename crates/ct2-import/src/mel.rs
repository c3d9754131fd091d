//! Mel filterbank stored in ggml Whisper files.
//!
//! whisper.cpp computes the log-mel spectrogram with the filterbank embedded in
//! the model file, so it must equal the one Whisper was trained with:
//! `librosa.filters.mel(sr=16000, n_fft=400, n_mels=N)` (Slaney mel scale,
//! Slaney area normalisation). The result is bit-identical to the
//! `mel_filters.npz` shipped with Whisper.

/// Sample rate Whisper works at.
const SAMPLE_RATE: f64 = 16_000.0;
/// FFT size Whisper works with.
const N_FFT: usize = 400;
/// Number of frequency bins of a real FFT of `N_FFT` points (`1 + N_FFT / 2`).
pub(super) const N_FREQ_BINS: usize = 1 + N_FFT / 2;

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;
const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / log_step()
    } else {
        hz / F_SP
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel >= MIN_LOG_MEL {
        MIN_LOG_HZ * (log_step() * (mel - MIN_LOG_MEL)).exp()
    } else {
        F_SP * mel
    }
}

/// `numpy.linspace(start, stop, num)` (endpoint included).
fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    match num {
        0 => Vec::new(),
        1 => vec![start],
        _ => {
            let step = (stop - start) / (num - 1) as f64;
            let mut v: Vec<f64> = (0..num).map(|i| start + i as f64 * step).collect();
            v[num - 1] = stop;
            v
        }
    }
}

/// Row-major `n_mels x N_FREQ_BINS` filterbank, as librosa computes it.
pub(super) fn mel_filters(n_mels: usize) -> Vec<f32> {
    let fmax = SAMPLE_RATE / 2.0;
    let fft_freqs = linspace(0.0, fmax, N_FREQ_BINS);
    let mel_pts = linspace(hz_to_mel(0.0), hz_to_mel(fmax), n_mels + 2);
    let mel_f: Vec<f64> = mel_pts.into_iter().map(mel_to_hz).collect();

    let mut out = Vec::with_capacity(n_mels * N_FREQ_BINS);
    for i in 0..n_mels {
        let fdiff_lo = mel_f[i + 1] - mel_f[i];
        let fdiff_hi = mel_f[i + 2] - mel_f[i + 1];
        let enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for &f in &fft_freqs {
            let lower = -(mel_f[i] - f) / fdiff_lo;
            let upper = (mel_f[i + 2] - f) / fdiff_hi;
            // librosa fills a float32 array, then scales it in place by the
            // f64 normalisation: round to f32 twice, exactly as it does.
            let w = 0.0f64.max(lower.min(upper)) as f32;
            out.push((w as f64 * enorm) as f32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(f: &[f32], mel: usize, bin: usize) -> f32 {
        f[mel * N_FREQ_BINS + bin]
    }

    /// Reference values: Whisper's own `mel_filters.npz` (`mel_80`), exact
    /// (the f64 literals are the decimal expansions of the stored f32 values).
    #[test]
    fn mel80_matches_whisper_reference() {
        let f = mel_filters(80);
        assert_eq!(f.len(), 80 * 201);
        let known: [(usize, usize, f64); 10] = [
            (0, 1, 0.024_862_594_902_515_41),
            (1, 1, 0.001_990_821_911_022_067),
            (1, 2, 0.022_871_771_827_340_126),
            (10, 10, 0.019_908_217_713_236_81),
            (10, 11, 0.004_954_374_860_972_166),
            (40, 42, 0.005_411_104_764_789_343),
            (40, 43, 0.014_735_566_452_145_576),
            (40, 44, 0.006_518_189_795_315_266),
            (79, 186, 0.000_366_741_674_952_209),
            (79, 189, 0.001_765_726_832_672_953_6),
        ];
        for (m, b, v) in known {
            assert_eq!(at(&f, m, b) as f64, v, "mel {m} bin {b}");
        }
        // Number of non-zero bins per filter, as in the reference.
        let nz = |m: usize| (0..N_FREQ_BINS).filter(|&b| at(&f, m, b) != 0.0).count();
        assert_eq!((nz(0), nz(1), nz(10), nz(40), nz(79)), (1, 2, 2, 3, 14));
        assert_eq!(at(&f, 0, 0), 0.0);
        assert_eq!(at(&f, 40, 45), 0.0);
        // Sum over the whole bank (reference: 1.999024092387117).
        let sum: f64 = f.iter().map(|&x| x as f64).sum();
        assert!((sum - 1.999_024_092_387_117).abs() < 1e-9, "sum {sum}");
    }

    /// Same for `mel_128` (large-v3 models).
    #[test]
    fn mel128_matches_whisper_reference() {
        let f = mel_filters(128);
        assert_eq!(f.len(), 128 * 201);
        assert_eq!(at(&f, 0, 1) as f64, 0.012_373_986_653_983_593);
        assert_eq!(at(&f, 64, 42) as f64, 0.006_749_682_594_090_7);
        assert_eq!(at(&f, 64, 43) as f64, 0.018_091_518_431_901_932);
        assert_eq!(at(&f, 127, 191) as f64, 0.000_475_695_094_792_172_3);
        assert_eq!(at(&f, 127, 192) as f64, 0.001_617_171_685_211_360_5);
        let nz = |m: usize| (0..N_FREQ_BINS).filter(|&b| at(&f, m, b) != 0.0).count();
        assert_eq!((nz(0), nz(64), nz(127)), (1, 2, 9));
        let sum: f64 = f.iter().map(|&x| x as f64).sum();
        assert!((sum - 3.190_985_540_940_346_3).abs() < 1e-9, "sum {sum}");
    }

    #[test]
    fn mel_scale_round_trips() {
        for hz in [0.0, 100.0, 999.0, 1000.0, 4000.0, 8000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-9);
        }
    }
}
