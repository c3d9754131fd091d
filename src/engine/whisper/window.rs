//! The encoder window: whisper.cpp's `audio_ctx` fitted to a chunk (the encoder's cost grows
//! with its window, and Whisper pads everything to 30 s), never under a floor; and the doubts
//! particular to a fitted window (the text stops early, or nothing where speech was found).

use super::super::Segment;
use super::super::guard;

/// Encoder frames per second of audio (one frame per 20 ms).
pub(super) const FRAMES_PER_SECOND: f64 = 50.0;
/// Whisper's full window: 30 s.
pub const FULL_WINDOW_FRAMES: usize = 1500;
/// The shortest fitted window (5 s), chosen by measurement on the corpus: the fastest and most
/// accurate of floors from 0 to 1000 frames (under 5 s the guard trips on most short clips).
pub const DEFAULT_FLOOR_FRAMES: usize = 250;

/// A fitted window is a multiple of this many frames (1.28 s): whisper.cpp's encoder runs
/// windows of other lengths far slower (measured with `examples/window_floor`: five minutes of
/// real speech in 30 s chunks took 19.8 s in windows fitted to the frame, 11.7 s in multiples of
/// 64 frames, 12.8 s in multiples of 250; short clips 0.175 s against 0.163 s a clip).
pub const WINDOW_STEP_FRAMES: usize = 64;

/// How long the encoder's window is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncoderWindow {
    /// Always 30 s, as Whisper was trained.
    Full,
    /// The chunk's length, at least `floor` frames; the full window again when the guard trips.
    Fitted { floor: usize },
}

impl Default for EncoderWindow {
    fn default() -> EncoderWindow {
        EncoderWindow::Fitted {
            floor: DEFAULT_FLOOR_FRAMES,
        }
    }
}

impl EncoderWindow {
    /// The window for a chunk of `seconds`, in encoder frames (the chunk's length, at least the
    /// floor, rounded up to [`WINDOW_STEP_FRAMES`]); None: the model's full window.
    pub fn frames_for(self, seconds: f64) -> Option<usize> {
        match self {
            EncoderWindow::Full => None,
            EncoderWindow::Fitted { floor } => {
                let fitted = (seconds * FRAMES_PER_SECOND).ceil() as usize;
                let frames = fitted.max(floor).div_ceil(WINDOW_STEP_FRAMES) * WINDOW_STEP_FRAMES;
                (frames < FULL_WINDOW_FRAMES).then_some(frames)
            }
        }
    }
}

/// Why the text of a chunk heard through a fitted window is doubted (loops are the guard's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Doubt {
    /// The text ends in its last phrase said twice ([`guard::ends_in_its_last_words_twice`]),
    /// which a window that ends where the speech does makes whisper read.
    EndSaidTwice,
    /// The text ends well before the chunk does (voice activity detection trims every chunk to
    /// its speech, so there was more to hear).
    EarlyStop,
    /// Nothing at all where voice activity detection found speech.
    Nothing,
}

/// Silence a chunk may end with after its last segment: its padding, a pause kept inside it,
/// and whisper's timestamp error.
const EARLY_STOP_SLACK_SECONDS: f64 = 2.5;

/// Whether `segments` (timed from the chunk's start) stop too early for a chunk of `seconds`, or
/// end in their last words said twice.
pub fn doubt(segments: &[Segment], seconds: f64) -> Option<Doubt> {
    let Some(last) = segments.last() else {
        return Some(Doubt::Nothing);
    };
    if last.end < seconds - EARLY_STOP_SLACK_SECONDS {
        return Some(Doubt::EarlyStop);
    }
    guard::ends_in_its_last_words_twice(&guard::joined(segments)).then_some(Doubt::EndSaidTwice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(start: f64, end: f64, text: &str) -> Segment {
        Segment::new(start, end, text)
    }

    #[test]
    fn the_window_fits_the_chunk_above_the_floor_and_below_thirty_seconds() {
        let fitted = EncoderWindow::Fitted { floor: 500 };
        assert_eq!(fitted.frames_for(3.2), Some(512));
        assert_eq!(fitted.frames_for(12.01), Some(640));
        assert_eq!(fitted.frames_for(29.0), Some(1472));
        assert_eq!(fitted.frames_for(29.5), None);
        assert_eq!(fitted.frames_for(30.0), None);
        assert_eq!(EncoderWindow::Fitted { floor: 0 }.frames_for(1.0), Some(64));
        assert_eq!(EncoderWindow::Full.frames_for(3.0), None);
    }

    #[test]
    fn early_stops_and_silence_are_doubted() {
        let fine = [segment(
            0.0,
            3.6,
            "Please send the report to Siobhan before Friday.",
        )];
        assert_eq!(doubt(&fine, 4.0), None);
        assert_eq!(doubt(&[], 4.0), Some(Doubt::Nothing));
        let stopped = [segment(0.0, 2.0, "Please send the report")];
        assert_eq!(doubt(&stopped, 8.0), Some(Doubt::EarlyStop));
        // What tiny.en q8_0 made of LJ001-0003 (LJSpeech, the TTS package's test clips) through
        // a window fitted to its 9.6 s: the last phrase twice, in one segment or two.
        let twice = [segment(
            0.0,
            9.6,
            "For although the Chinese took impressions from wood blocks engraved in relief for \
             centuries before the woodcutters of the Netherlands by a similar process, by a \
             similar process.",
        )];
        assert_eq!(doubt(&twice, 9.6), Some(Doubt::EndSaidTwice));
        let apart = [
            segment(
                0.0,
                8.0,
                "the woodcutters of the Netherlands by a similar process.",
            ),
            segment(8.0, 9.6, "By a similar process."),
        ];
        assert_eq!(doubt(&apart, 9.6), Some(Doubt::EndSaidTwice));
    }
}
