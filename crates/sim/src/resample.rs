//! Resampling by linear interpolation: how devices deliver 16 kHz corpus clips at their own rate.
//! Exact on the shared sample grid (48 kHz back to 16 kHz returns the original samples).

/// Resamples by linear interpolation (no anti-aliasing filter: meant for upsampling clips).
/// The output has `round(len * to / from)` samples.
pub fn resample_linear(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let (from, to) = (u64::from(from), u64::from(to));
    let len = (samples.len() as u64 * to + from / 2) / from;
    (0..len)
        .map(|j| {
            let position = j * from;
            let i = (position / to) as usize;
            let frac = (position % to) as f32 / to as f32;
            let a = samples[i.min(samples.len() - 1)];
            let b = samples[(i + 1).min(samples.len() - 1)];
            a + frac * (b - a)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_resampling_keeps_samples_on_the_grid_and_interpolates_between() {
        let up = resample_linear(&[0.0, 0.3, -0.3], 16_000, 48_000);
        assert_eq!(up.len(), 9);
        assert_eq!(up[0], 0.0);
        assert!((up[1] - 0.1).abs() < 1e-6);
        assert!((up[3] - 0.3).abs() < 1e-6);
        assert!((up[8] + 0.3).abs() < 1e-6, "the last sample is held");
        assert_eq!(resample_linear(&[0.5; 10], 16_000, 44_100).len(), 28);
    }
}
