//! earshot's voice detector on one 16 ms frame at a time.

/// Samples per frame the detector scores (16 ms at 16 kHz).
pub const FRAME: usize = 256;

/// earshot's built-in network, with the state it carries from frame to frame.
pub struct VoiceDetector {
    detector: Box<earshot::Detector>,
}

impl Default for VoiceDetector {
    fn default() -> VoiceDetector {
        VoiceDetector {
            detector: earshot::Detector::default_boxed(),
        }
    }
}

impl VoiceDetector {
    /// The voice probability (0..1) of one frame of at most [`FRAME`] samples: a shorter frame
    /// is padded with silence, samples are clamped to -1..1 (resampling can overshoot a little)
    /// and anything not finite counts as silence.
    pub fn score(&mut self, samples: &[f32]) -> f32 {
        let mut frame = [0f32; FRAME];
        for (slot, sample) in frame.iter_mut().zip(samples) {
            *slot = if sample.is_finite() {
                sample.clamp(-1.0, 1.0)
            } else {
                0.0
            };
        }
        self.detector.predict_f32(&frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
