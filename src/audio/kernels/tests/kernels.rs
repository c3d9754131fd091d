//! The kernels through their public types: the voice detector's handling of silence, bad and
//! short frames, both resamplers and the forward FFT. One test binary that links the optimised
//! library, rather than unit tests, which would compile the whole crate a second time at
//! opt-level 3 (24 s of a fresh build on 2 cores: docs/development.md, "The build, trimmed").

use verbatim_kernels::resampler::{
    SincInterpolationParameters, SincInterpolationType, WindowFunction,
};
use verbatim_kernels::spectrum::forward_fft;
use verbatim_kernels::{FRAME, MonoResampler, VoiceDetector};

fn tone(len: usize) -> Vec<f32> {
    (0..len).map(|i| (i as f32 * 0.2).sin() * 0.5).collect()
}

#[test]
fn silence_scores_low_and_bad_samples_count_as_silence() {
    let mut detector = VoiceDetector::default();
    let mut clean = VoiceDetector::default();
    for _ in 0..20 {
        let silence = clean.score(&[0.0; FRAME]);
        assert!(silence < 0.5, "{silence}");
        assert_eq!(detector.score(&[f32::NAN; FRAME]), silence);
    }
}

#[test]
fn a_short_frame_is_padded_and_loud_samples_clamped() {
    let short = tone(100);
    let mut padded = short.clone();
    padded.resize(FRAME, 0.0);
    let (mut a, mut b) = (VoiceDetector::default(), VoiceDetector::default());
    assert_eq!(a.score(&short), b.score(&padded));
    let loud: Vec<f32> = tone(FRAME).iter().map(|s| s * 10.0).collect();
    let clamped: Vec<f32> = loud.iter().map(|s| s.clamp(-1.0, 1.0)).collect();
    assert_eq!(a.score(&loud), b.score(&clamped));
}

#[test]
fn a_block_of_a_sine_comes_out_at_the_new_rate() {
    let mut resampler = MonoResampler::fft(48_000, 16_000, 3_072).unwrap();
    let mut out = Vec::new();
    let mut fed = 0;
    while out.len() < 4_000 {
        let need = resampler.input_frames_next();
        let input: Vec<f32> = (fed..fed + need)
            .map(|i| (i as f32 * 2.0 * std::f32::consts::PI * 440.0 / 48_000.0).sin())
            .collect();
        fed += need;
        let mut block = vec![0.0; resampler.output_frames_next()];
        let written = resampler.process(&input, None, &mut block);
        out.extend_from_slice(&block[..written]);
    }
    // Past the start-up delay, a 440 Hz sine at 16 kHz: one period every 36.4 samples.
    let delay = resampler.output_delay();
    let rising = out[delay..]
        .windows(2)
        .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
        .count() as f64;
    let periods = (out.len() - delay) as f64 * 440.0 / 16_000.0;
    assert!(
        (rising - periods).abs() <= 2.0,
        "{rising} against {periods}"
    );
}

#[test]
fn the_sinc_resampler_takes_any_ratio() {
    let params = SincInterpolationParameters::new(128, WindowFunction::BlackmanHarris2)
        .oversampling_factor(256)
        .interpolation(SincInterpolationType::Linear);
    let mut resampler = MonoResampler::sinc(16_000.0 / 44_101.0, &params, 1_024);
    let input = vec![0.25; resampler.input_frames_next()];
    let mut out = vec![0.0; resampler.output_frames_next()];
    let written = resampler.process(&input, None, &mut out);
    assert!(written > 0 && written <= out.len(), "{written}");
}

#[test]
fn the_forward_fft_puts_a_tone_in_its_bin() {
    // 1 kHz at 16 kHz over 512 samples: bin 32, a whole number of periods.
    let fft = forward_fft(512);
    let mut input: Vec<f32> = (0..512)
        .map(|i| (i as f32 * 2.0 * std::f32::consts::PI * 1_000.0 / 16_000.0).sin())
        .collect();
    let mut spectrum = fft.make_output_vec();
    assert_eq!(spectrum.len(), 257);
    fft.process(&mut input, &mut spectrum).unwrap();
    let power: Vec<f32> = spectrum.iter().map(|c| c.norm_sqr()).collect();
    let loudest = (0..power.len())
        .max_by(|&a, &b| power[a].total_cmp(&power[b]))
        .unwrap();
    assert_eq!(loudest, 32);
    let rest: f32 = power
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 32)
        .map(|(_, p)| p)
        .sum();
    assert!(rest < power[32] * 1e-6, "{rest} against {}", power[32]);
}
