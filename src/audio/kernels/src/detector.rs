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
