//! `server_vad` turn detection: a session's settings (threshold, padding, the silence that ends a
//! turn) and the chunk limits they make, with how long a turn may run.

use crate::audio::resample::TARGET_RATE;
use crate::audio::vad::FRAME;
use crate::audio::vad::chunks::Limits;

/// Samples per second of the audio turns are cut from.
const RATE: usize = TARGET_RATE as usize;

/// A turn holding this much speech ends at the next pause or dip of the voice, the speech
/// after it the next turn (`Limits::cutting_at_dips_after`). Held open until its speech passed
/// 15 s instead, a turn's text came up to 7 s after its audio with 20 sessions at once. Cut
/// after 10 s, a phone prompt read on for 20-30 s came out in two or three turns, each heard
/// without the rest, and the turns' text read 3.7 % wrong against 2.8 % as one file; after
/// 20 s, 3.0 %, with one turn for all but three of 23 prompts, and 20 sessions at once still
/// within 1.5 s of their audio (`scripts/bench-realtime`, docs/journal/2026-12.md).
const CUT_AT_DIPS_AFTER_SECONDS: f64 = 20.0;
/// The longest turn: Whisper hears 30 s at once.
pub const LONGEST_TURN_SECONDS: usize = 28;

/// `server_vad`: when a turn begins and ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnDetection {
    /// Voice probability (0..1) at which speech begins.
    pub threshold: f32,
    /// Audio kept before the speech (and after it).
    pub prefix_padding_ms: u32,
    /// Silence after speech that ends the turn.
    pub silence_duration_ms: u32,
}

impl TurnDetection {
    /// Dictation's live limits (`Limits::LIVE`): 0.24 s of padding, a turn ends after 0.72 s
    /// without speech.
    pub const DEFAULT: TurnDetection = TurnDetection {
        threshold: 0.5,
        prefix_padding_ms: 240,
        silence_duration_ms: 720,
    };

    /// The chunk limits: padding on both sides of the speech; a turn settles once
    /// `silence_duration_ms` (or twice the padding, if longer) passed without speech; once it
    /// holds [`CUT_AT_DIPS_AFTER_SECONDS`], at its next pause or dip of the voice; at most
    /// [`LONGEST_TURN_SECONDS`], cut at the quietest moment after
    /// [`CUT_AT_DIPS_AFTER_SECONDS`].
    pub fn limits(&self) -> Limits {
        let frames = |ms: u32| ms as usize * RATE / 1000 / FRAME;
        let padding = frames(self.prefix_padding_ms);
        Limits {
            padding,
            long_pause: frames(self.silence_duration_ms).saturating_sub(2 * padding),
            threshold: self.threshold,
            max_chunk: LONGEST_TURN_SECONDS * RATE / FRAME,
            earliest_cut: (CUT_AT_DIPS_AFTER_SECONDS * RATE as f64) as usize / FRAME,
            ..Limits::LIVE
        }
        .cutting_at_dips_after(CUT_AT_DIPS_AFTER_SECONDS)
    }
}
