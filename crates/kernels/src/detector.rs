//! earshot's voice detector on one 16 ms frame at a time, with no work on audio that repeats
//! itself once the detector has settled on it.
//!
//! Fed the same frame over and over (digital silence: a muted microphone, system audio with
//! nothing playing, or a compressed file of hours of it), earshot's state stops changing after
//! a while (6,000 to 14,000 frames of zeros, 100 to 230 s, depending on what came before; its
//! recurrent units creep by one step of their fixed-point state until they reach it). From
//! then on every further copy of that frame scores the same and leaves the state as it was, so
//! [`VoiceDetector::score`] answers with that score without running the network. The scores
//! are the same, bit for bit, as without the shortcut.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use earshot::{DefaultPredictor, Detector, Predictor};

/// Samples per frame the detector scores (16 ms at 16 kHz).
pub const FRAME: usize = 256;

/// Frames identical to the one before after which everything earshot keeps besides its network's
/// state is constant: the pre-emphasis's last sample (after 1), the 768-sample window of the
/// last three frames (after 3) and the features of the last three windows (after 5).
const REPEATS_BEFORE_STEADY_INPUT: usize = 6;

/// earshot's built-in network, with the state it carries from frame to frame.
pub struct VoiceDetector {
    detector: Box<Detector<WatchedPredictor>>,
    /// Set by the network when its last frame changed its state.
    state_changed: Arc<AtomicBool>,
    /// The last frame scored, as the detector took it (padded, clamped); NaN before the first
    /// (no frame is, so the first is never taken for a repeat).
    last_frame: [f32; FRAME],
    /// How many frames in a row were the same, bit for bit, as the one before.
    repeats: usize,
    /// The score of `last_frame` once another copy of it can change nothing.
    settled: Option<f32>,
}

impl Default for VoiceDetector {
    fn default() -> VoiceDetector {
        let state_changed = Arc::new(AtomicBool::new(true));
        let predictor = WatchedPredictor {
            inner: DefaultPredictor::new(),
            state_changed: Arc::clone(&state_changed),
        };
        VoiceDetector {
            detector: Detector::new_boxed(predictor),
            state_changed,
            last_frame: [f32::NAN; FRAME],
            repeats: 0,
            settled: None,
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
        if same_bits(&frame, &self.last_frame) {
            self.repeats += 1;
        } else {
            self.repeats = 0;
            self.settled = None;
            self.last_frame = frame;
        }
        if let Some(score) = self.settled {
            return score;
        }
        let score = self.detector.predict_f32(&frame);
        if self.repeats >= REPEATS_BEFORE_STEADY_INPUT
            && !self.state_changed.load(Ordering::Relaxed)
        {
            // The same input left the whole state as it found it: so will every next copy.
            self.settled = Some(score);
        }
        score
    }

    /// Whether the detector answers copies of the last frame without running its network.
    pub fn is_settled(&self) -> bool {
        self.settled.is_some()
    }
}

fn same_bits(a: &[f32; FRAME], b: &[f32; FRAME]) -> bool {
    a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits())
}

/// earshot's network, telling whether a frame changed its state.
struct WatchedPredictor {
    inner: DefaultPredictor,
    state_changed: Arc<AtomicBool>,
}

impl WatchedPredictor {
    /// The network's whole state, as bytes. `DefaultPredictor` (earshot 1.2.2, pinned) is its
    /// recurrent units' state and nothing else, `[i16; 128]`: 256 bytes with no padding.
    fn state(&self) -> [u8; 256] {
        const { assert!(size_of::<DefaultPredictor>() == 256) };
        // SAFETY: the value is 256 initialised bytes (an array of i16, no padding, no pointer)
        // and is read, not written, through a properly aligned reference.
        unsafe { std::ptr::read((&raw const self.inner).cast::<[u8; 256]>()) }
    }
}

impl Predictor for WatchedPredictor {
    fn reset(&mut self) {
        self.inner.reset();
        self.state_changed.store(true, Ordering::Relaxed);
    }

    fn normalize(&self, features: &mut [f32]) {
        self.inner.normalize(features);
    }

    fn predict(&mut self, features: &[f32], buffer: &mut [f32]) -> f32 {
        let before = self.state();
        let score = self.inner.predict(features, buffer);
        self.state_changed
            .store(self.state() != before, Ordering::Relaxed);
        score
    }
}
