//! Mixing the Recorder's sources (microphone and system audio) into one stream without clipping.

/// Mixes two equally long blocks of samples into `out` (cleared first).
///
/// With both sources present each gets half the gain (6 dB of headroom), so two full-scale
/// signals still stay within [-1, 1]; a lone source passes through unchanged. Samples outside
/// [-1, 1] from a device are clamped, and NaN becomes silence.
pub fn mix_into(mic: Option<&[f32]>, system: Option<&[f32]>, out: &mut Vec<f32>) {
    out.clear();
    let clean = |s: f32| if s.is_nan() { 0.0 } else { s.clamp(-1.0, 1.0) };
    match (mic, system) {
        (Some(a), Some(b)) => {
            let n = a.len().max(b.len());
            out.extend((0..n).map(|i| {
                let x = a.get(i).copied().map(clean).unwrap_or(0.0);
                let y = b.get(i).copied().map(clean).unwrap_or(0.0);
                0.5 * (x + y)
            }));
        }
        (Some(only), None) | (None, Some(only)) => out.extend(only.iter().copied().map(clean)),
        (None, None) => {}
    }
}

/// Interleaves two mono blocks into stereo (left = microphone, right = system audio).
pub fn interleave_into(left: &[f32], right: &[f32], out: &mut Vec<f32>) {
    out.clear();
    let n = left.len().max(right.len());
    let clean =
        |s: Option<&f32>| s.map_or(0.0, |s| if s.is_nan() { 0.0 } else { s.clamp(-1.0, 1.0) });
    for i in 0..n {
        out.push(clean(left.get(i)));
        out.push(clean(right.get(i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_source_passes_through_and_two_get_headroom() {
        let mut out = Vec::new();
        mix_into(Some(&[0.5, -0.25]), None, &mut out);
        assert_eq!(out, vec![0.5, -0.25]);
        mix_into(Some(&[1.0, -1.0, 0.5]), Some(&[1.0, -1.0]), &mut out);
        assert_eq!(out, vec![1.0, -1.0, 0.25]);
        interleave_into(&[0.1, 0.2], &[0.3], &mut out);
        assert_eq!(out, vec![0.1, 0.3, 0.2, 0.0]);
    }

    proptest! {
        #[test]
        fn a_mix_never_clips(a in proptest::collection::vec(-4.0f32..4.0, 0..200), b in proptest::collection::vec(-4.0f32..4.0, 0..200)) {
            let mut out = Vec::new();
            mix_into(Some(&a), Some(&b), &mut out);
            prop_assert_eq!(out.len(), a.len().max(b.len()));
            prop_assert!(out.iter().all(|s| (-1.0..=1.0).contains(s)));
        }
    }
}
