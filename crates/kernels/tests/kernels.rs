//! The kernels through their public types: the voice detector's handling of silence, bad,
//! short and repeated frames, the downmix, both resamplers, the forward FFT and the weights'
//! number formats. One test binary that links the optimised library, rather than unit tests,
//! which would compile the whole crate a second time at opt-level 3 (24 s of a fresh build on
//! 2 cores: docs/journal/2026-11.md, "The build, trimmed").

use verbatim_kernels::downmix::downmix;
use verbatim_kernels::resampler::{
    SincInterpolationParameters, SincInterpolationType, WindowFunction,
};
use verbatim_kernels::spectrum::forward_fft;
use verbatim_kernels::weights::{
    BLOCK_VALUES, Element, Q8_0_BLOCK_BYTES, decode_le, encode_f16_le, encode_f32_le, quantize_q8_0,
};
use verbatim_kernels::{FRAME, MonoResampler, VoiceDetector};

use symphonia_core::audio::{AudioBuffer, AudioBufferRef, Channels, Signal, SignalSpec};

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
fn repeated_frames_score_as_earshot_scores_them_after_the_detector_settles() {
    // A tone, 20,000 frames of digital silence (5 min 20 s), a tone again, a constant level,
    // silence: the same scores, bit for bit, as earshot's own detector gives every frame.
    let tone = tone(FRAME);
    let level = [0.25f32; FRAME];
    let silence = [0f32; FRAME];
    let mut frames: Vec<&[f32]> = vec![&tone; 50];
    frames.extend(std::iter::repeat_n(&silence[..], 20_000));
    frames.extend(std::iter::repeat_n(&tone[..], 30));
    frames.extend(std::iter::repeat_n(&level[..], 20_000));
    frames.extend(std::iter::repeat_n(&silence[..], 100));
    let mut ours = VoiceDetector::default();
    let mut earshots = earshot::Detector::default_boxed();
    let mut settled = vec![];
    for (i, frame) in frames.iter().enumerate() {
        let score = ours.score(frame);
        assert_eq!(
            score.to_bits(),
            earshots.predict_f32(frame).to_bits(),
            "frame {i}"
        );
        settled.push(ours.is_settled());
    }
    // It settled within each long run, and not at once.
    let first_settled = |run: std::ops::Range<usize>| run.clone().find(|&i| settled[i]);
    let in_silence = first_settled(50..20_050).expect("settles in the silence");
    assert!(in_silence > 50 + 1_000, "{in_silence}");
    assert!(
        first_settled(20_080..40_080).is_some(),
        "settles on the level"
    );
    // A different frame is scored again.
    assert!(!settled[20_050] && !settled[40_080]);
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

#[test]
fn weights_decode_each_format_and_round_trip_through_f16_and_f32() {
    let mut out = Vec::new();
    // bf16 0x3fc0 is 1.5; int8 0xff is -1; int16 0x8000 is -32768; int32 0x00010000 is 65536.
    decode_le(Element::BF16, &[0xc0, 0x3f], &mut out);
    decode_le(Element::I8, &[0xff], &mut out);
    decode_le(Element::I16, &[0x00, 0x80], &mut out);
    decode_le(Element::I32, &[0x00, 0x00, 0x01, 0x00], &mut out);
    assert_eq!(out, [1.5, -1.0, -32768.0, 65536.0]);

    let values = tone(1000);
    let (mut f16_bytes, mut f32_bytes) = (Vec::new(), Vec::new());
    encode_f16_le(&values, &mut f16_bytes);
    encode_f32_le(&values, &mut f32_bytes);
    assert_eq!((f16_bytes.len(), f32_bytes.len()), (2000, 4000));
    let (mut from_f16, mut from_f32) = (Vec::new(), Vec::new());
    decode_le(Element::F16, &f16_bytes, &mut from_f16);
    decode_le(Element::F32, &f32_bytes, &mut from_f32);
    assert_eq!(from_f32, values);
    for (back, value) in from_f16.iter().zip(&values) {
        // f16 keeps 11 significant bits: within 2^-11 of a value under 1.
        assert!(
            (back - value).abs() <= 1.0 / 2048.0,
            "{value} came back as {back}"
        );
    }
}

#[test]
fn q8_0_blocks_hold_a_scale_and_one_byte_a_value() {
    let values = tone(3 * BLOCK_VALUES + 5);
    let mut out = Vec::new();
    quantize_q8_0(&values, &mut out);
    // The 5 values past the last whole block are left out.
    assert_eq!(out.len(), 3 * Q8_0_BLOCK_BYTES);
    for (block, bytes) in values
        .chunks_exact(BLOCK_VALUES)
        .zip(out.chunks_exact(Q8_0_BLOCK_BYTES))
    {
        let mut scale = Vec::new();
        decode_le(Element::F16, &bytes[..2], &mut scale);
        for (value, &q) in block.iter().zip(&bytes[2..]) {
            assert!(
                (q as i8 as f32 * scale[0] - value).abs() <= scale[0],
                "{value}"
            );
        }
        // The largest magnitude takes the full range.
        assert!(bytes[2..].iter().any(|&q| (q as i8).unsigned_abs() == 127));
    }
}

#[test]
fn downmix_averages_channels_and_makes_floats_safe() {
    let spec = SignalSpec::new(16_000, Channels::FRONT_LEFT | Channels::FRONT_RIGHT);
    let mut buf = AudioBuffer::<f32>::new(4, spec);
    buf.render_reserved(Some(4));
    buf.chan_mut(0).copy_from_slice(&[1.0, 0.5, f32::NAN, 0.0]);
    buf.chan_mut(1).copy_from_slice(&[0.0, 0.5, 0.0, -1.0]);
    let mut out = Vec::new();
    downmix(
        &AudioBufferRef::F32(std::borrow::Cow::Borrowed(&buf)),
        &mut out,
    );
    assert_eq!(out, vec![0.5, 0.5, 0.0, -0.5]);

    buf.chan_mut(0)
        .copy_from_slice(&[f32::INFINITY, 1e30, -1e30, 0.25]);
    downmix(
        &AudioBufferRef::F32(std::borrow::Cow::Borrowed(&buf)),
        &mut out,
    );
    assert!(
        out.iter().all(|s| s.is_finite() && s.abs() <= 1.0),
        "{out:?}"
    );

    // Integer samples are scaled to -1..1 before they are averaged.
    let mut ints = AudioBuffer::<i16>::new(2, spec);
    ints.render_reserved(Some(2));
    ints.chan_mut(0).copy_from_slice(&[i16::MIN, 16_384]);
    ints.chan_mut(1).copy_from_slice(&[i16::MIN, 0]);
    downmix(
        &AudioBufferRef::S16(std::borrow::Cow::Borrowed(&ints)),
        &mut out,
    );
    assert_eq!(out, vec![-1.0, 0.25]);
}
