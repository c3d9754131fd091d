//! An utterance's audio as Wyoming sends it: PCM of any rate, sample width and channel count
//! the protocol allows, each chunk converted to 16 kHz mono as it comes (the channels averaged,
//! the rate converted by the streaming resampler every input goes through), and its length
//! bounded.

use crate::audio::resample::{StreamingResampler, TARGET_RATE};

/// The lowest and highest sample rates taken (telephone audio to studio audio).
pub const RATES: std::ops::RangeInclusive<u32> = 8_000..=192_000;
/// The most channels taken.
pub const MAX_CHANNELS: u16 = 8;
/// The longest utterance, in seconds of audio (a voice command lasts seconds; a dictated
/// paragraph a few minutes).
pub const MAX_UTTERANCE_SECONDS: u64 = 600;

/// The format of PCM chunks (`audio-start`, `audio-chunk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub rate: u32,
    /// Bytes a sample: 1 (unsigned 8-bit, as in WAV and the `wyoming` package's converter), 2,
    /// 3 or 4 (signed little-endian).
    pub width: u8,
    pub channels: u16,
}

/// Why audio was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AudioError {
    #[error("'{0}' must be a whole number")]
    Missing(&'static str),
    #[error("rate {0} Hz is outside 8000-192000")]
    Rate(u64),
    #[error("width {0} is not 1, 2, 3 or 4 bytes")]
    Width(u64),
    #[error("channels {0} is not 1 to {MAX_CHANNELS}")]
    Channels(u64),
    #[error("{bytes} bytes of audio are not whole frames of {frame} bytes")]
    PartialFrame { bytes: usize, frame: usize },
    #[error("the utterance is over {MAX_UTTERANCE_SECONDS} s of audio")]
    TooLong,
}

impl Format {
    /// The format an event's data gives (`rate`, `width`, `channels`).
    pub fn from_data(
        data: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Format, AudioError> {
        let field = |key: &'static str| {
            data.get(key)
                .and_then(serde_json::Value::as_u64)
                .ok_or(AudioError::Missing(key))
        };
        let rate = field("rate")?;
        let width = field("width")?;
        let channels = field("channels")?;
        if !RATES.contains(&u32::try_from(rate).unwrap_or(u32::MAX)) {
            return Err(AudioError::Rate(rate));
        }
        if !(1..=4).contains(&width) {
            return Err(AudioError::Width(width));
        }
        if !(1..=u64::from(MAX_CHANNELS)).contains(&channels) {
            return Err(AudioError::Channels(channels));
        }
        Ok(Format {
            rate: rate as u32,
            width: width as u8,
            channels: channels as u16,
        })
    }

    fn frame_bytes(self) -> usize {
        usize::from(self.width) * usize::from(self.channels)
    }
}

/// One utterance's audio, converted as it comes.
pub struct Utterance {
    format: Format,
    resampler: StreamingResampler,
    /// Samples at 16 kHz given out so far.
    samples: u64,
    mono: Vec<f32>,
}

impl Utterance {
    pub fn new(format: Format) -> Utterance {
        Utterance {
            format,
            resampler: StreamingResampler::new(format.rate),
            samples: 0,
            mono: Vec::new(),
        }
    }

    /// The 16 kHz mono samples `pcm` in `format` makes (what the resampler has ready: it holds
    /// back less than a block). A chunk in another format than the one before ends that
    /// format's audio first.
    pub fn convert(&mut self, format: Format, pcm: &[u8]) -> Result<Vec<f32>, AudioError> {
        let frame = format.frame_bytes();
        if !pcm.len().is_multiple_of(frame) {
            return Err(AudioError::PartialFrame {
                bytes: pcm.len(),
                frame,
            });
        }
        let mut out = Vec::new();
        if format != self.format {
            let old = std::mem::replace(&mut self.resampler, StreamingResampler::new(format.rate));
            out = old.finish();
            self.format = format;
        }
        to_mono(format, pcm, &mut self.mono);
        self.resampler.push(&self.mono);
        out.extend(self.resampler.take_output());
        self.count(out.len())?;
        Ok(out)
    }

    /// The rest of the audio, at its end.
    pub fn finish(self) -> Vec<f32> {
        self.resampler.finish()
    }

    fn count(&mut self, samples: usize) -> Result<(), AudioError> {
        self.samples += samples as u64;
        if self.samples > MAX_UTTERANCE_SECONDS * u64::from(TARGET_RATE) {
            return Err(AudioError::TooLong);
        }
        Ok(())
    }
}

/// `pcm` (whole frames in `format`) as mono samples in [-1, 1], into `out` (cleared first).
fn to_mono(format: Format, pcm: &[u8], out: &mut Vec<f32>) {
    out.clear();
    let width = usize::from(format.width);
    let channels = usize::from(format.channels);
    let sample = |bytes: &[u8]| -> f32 {
        match width {
            1 => (f32::from(bytes[0]) - 128.0) / 128.0,
            2 => f32::from(i16::from_le_bytes([bytes[0], bytes[1]])) / 32_768.0,
            3 => (i32::from_le_bytes([0, bytes[0], bytes[1], bytes[2]]) >> 8) as f32 / 8_388_608.0,
            _ => {
                i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32
                    / 2_147_483_648.0
            }
        }
    };
    out.extend(
        pcm.chunks_exact(width * channels)
            .map(|frame| frame.chunks_exact(width).map(sample).sum::<f32>() / channels as f32),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn format(rate: u32, width: u8, channels: u16) -> Format {
        Format {
            rate,
            width,
            channels,
        }
    }

    #[test]
    fn formats_outside_the_limits_are_refused() {
        let data = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert_eq!(
            Format::from_data(&data(json!({"rate": 16000, "width": 2, "channels": 1}))),
            Ok(format(16_000, 2, 1))
        );
        for (value, error) in [
            (
                json!({"width": 2, "channels": 1}),
                AudioError::Missing("rate"),
            ),
            (
                json!({"rate": 16000.5, "width": 2, "channels": 1}),
                AudioError::Missing("rate"),
            ),
            (
                json!({"rate": 4000, "width": 2, "channels": 1}),
                AudioError::Rate(4000),
            ),
            (
                json!({"rate": 4294967296u64, "width": 2, "channels": 1}),
                AudioError::Rate(4294967296),
            ),
            (
                json!({"rate": 16000, "width": 8, "channels": 1}),
                AudioError::Width(8),
            ),
            (
                json!({"rate": 16000, "width": 2, "channels": 0}),
                AudioError::Channels(0),
            ),
            (
                json!({"rate": 16000, "width": 2, "channels": 9}),
                AudioError::Channels(9),
            ),
        ] {
            assert_eq!(Format::from_data(&data(value)), Err(error));
        }
    }

    #[test]
    fn every_width_reads_full_scale_and_channels_are_averaged() {
        let mut out = Vec::new();
        to_mono(format(16_000, 1, 1), &[0x00, 0xff, 0x80], &mut out);
        assert_eq!(out, [-1.0, 127.0 / 128.0, 0.0]);
        to_mono(format(16_000, 2, 1), &[0x00, 0x80, 0x00, 0x40], &mut out);
        assert_eq!(out, [-1.0, 0.5]);
        to_mono(
            format(16_000, 3, 1),
            &[0x00, 0x00, 0x80, 0x00, 0x00, 0x40],
            &mut out,
        );
        assert_eq!(out, [-1.0, 0.5]);
        to_mono(
            format(16_000, 4, 1),
            &[0, 0, 0, 0x80, 0, 0, 0, 0x40],
            &mut out,
        );
        assert_eq!(out, [-1.0, 0.5]);
        // Left full scale, right silent: half.
        to_mono(format(16_000, 2, 2), &[0x00, 0x40, 0x00, 0x00], &mut out);
        assert_eq!(out, [0.25]);
    }

    #[test]
    fn audio_of_any_rate_comes_out_at_16_khz_and_partial_frames_are_refused() {
        for rate in [8_000, 16_000, 22_050, 44_100, 48_000] {
            let mut utterance = Utterance::new(format(rate, 2, 2));
            let second = vec![0u8; rate as usize * 4];
            let mut samples = 0;
            for _ in 0..3 {
                samples += utterance
                    .convert(format(rate, 2, 2), &second)
                    .unwrap()
                    .len();
            }
            samples += utterance.finish().len();
            assert!((samples as i64 - 48_000).abs() <= 2, "{rate} Hz: {samples}");
        }
        let mut utterance = Utterance::new(format(16_000, 2, 2));
        assert_eq!(
            utterance.convert(format(16_000, 2, 2), &[0; 6]),
            Err(AudioError::PartialFrame { bytes: 6, frame: 4 })
        );
    }

    #[test]
    fn an_utterance_is_bounded_whatever_its_chunks_claim() {
        let mut utterance = Utterance::new(format(16_000, 1, 1));
        let chunk = vec![0u8; 16_000 * 60];
        let mut minutes = 0;
        let error = loop {
            match utterance.convert(format(16_000, 1, 1), &chunk) {
                Ok(_) => minutes += 1,
                Err(error) => break error,
            }
        };
        assert_eq!(error, AudioError::TooLong);
        assert_eq!(minutes, MAX_UTTERANCE_SECONDS / 60);
    }
}
