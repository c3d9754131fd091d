//! The audio the kit sends: short 16 kHz mono WAV clips made in code (a quiet tone, silence).

/// 1.5 s of a quiet 440 Hz tone.
pub fn tone_wav() -> Vec<u8> {
    wav((0..24_000).map(|i| {
        let phase = 2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0;
        (phase.sin() * 2_000.0) as i16
    }))
}

/// 1.5 s of silence.
pub fn silence_wav() -> Vec<u8> {
    wav(std::iter::repeat_n(0, 24_000))
}

fn wav(samples: impl Iterator<Item = i16>) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).expect("writing to memory");
    for sample in samples {
        writer.write_sample(sample).expect("writing to memory");
    }
    writer.finalize().expect("writing to memory");
    bytes.into_inner()
}
