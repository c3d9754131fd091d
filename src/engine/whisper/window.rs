//! The encoder window: whisper.cpp's `audio_ctx` fitted to a chunk (the encoder's cost grows
//! with its window, and Whisper pads everything to 30 s), never under a floor; and the guard that
//! sends a chunk back to the full window when the short one made Whisper loop or stop early.

use super::super::Segment;

/// Encoder frames per second of audio (one frame per 20 ms).
const FRAMES_PER_SECOND: f64 = 50.0;
/// Whisper's full window: 30 s.
pub const FULL_WINDOW_FRAMES: usize = 1500;
/// The shortest fitted window (5 s), chosen by measurement on the corpus: the fastest and most
/// accurate of floors from 0 to 1000 frames (under 5 s the guard trips on most short clips).
pub const DEFAULT_FLOOR_FRAMES: usize = 250;

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
    /// The window for a chunk of `seconds`, in encoder frames; None: the model's full window.
    pub fn frames_for(self, seconds: f64) -> Option<usize> {
        match self {
            EncoderWindow::Full => None,
            EncoderWindow::Fitted { floor } => {
                let fitted = (seconds * FRAMES_PER_SECOND).ceil() as usize;
                let frames = fitted.max(floor);
                (frames < FULL_WINDOW_FRAMES).then_some(frames)
            }
        }
    }
}

/// Why a chunk heard through a fitted window is heard again through the full one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// The same words over and over, or more words than anyone says in that time.
    Loop,
    /// The text ends well before the chunk does (voice activity detection trims every chunk to
    /// its speech, so there was more to hear).
    EarlyStop,
    /// Nothing at all where voice activity detection found speech.
    Nothing,
}

/// More words per second than fast speech has (about 4).
const MAX_WORDS_PER_SECOND: f64 = 6.0;
/// Silence a chunk may end with after its last segment: its padding, a pause kept inside it,
/// and whisper's timestamp error.
const EARLY_STOP_SLACK_SECONDS: f64 = 2.5;

/// Whether `segments` (timed from the chunk's start) look wrong for a chunk of `seconds`.
pub fn doubt(segments: &[Segment], seconds: f64) -> Option<Doubt> {
    let Some(last) = segments.last() else {
        return Some(Doubt::Nothing);
    };
    let words: Vec<String> = segments
        .iter()
        .flat_map(|s| s.text.split_whitespace())
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let repeated_segment = segments
        .windows(2)
        .any(|pair| pair[0].text.trim() == pair[1].text.trim());
    if repeated_segment
        || words.len() as f64 > 4.0 + seconds * MAX_WORDS_PER_SECOND
        || repeats_in_a_row(&words)
    {
        return Some(Doubt::Loop);
    }
    (last.end < seconds - EARLY_STOP_SLACK_SECONDS).then_some(Doubt::EarlyStop)
}

/// An n-gram said again and again without a break: a word four times, or two to four words
/// three times.
fn repeats_in_a_row(words: &[String]) -> bool {
    (1..=4).any(|n| {
        let needed = if n == 1 { 4 } else { 3 };
        let span = n * needed;
        words.len() >= span
            && (0..=words.len() - span).any(|start| {
                let first = &words[start..start + n];
                (1..needed).all(|k| &words[start + k * n..start + (k + 1) * n] == first)
            })
    })
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
        assert_eq!(fitted.frames_for(3.2), Some(500));
        assert_eq!(fitted.frames_for(12.01), Some(601));
        assert_eq!(fitted.frames_for(30.0), None);
        assert_eq!(EncoderWindow::Fitted { floor: 0 }.frames_for(1.0), Some(50));
        assert_eq!(EncoderWindow::Full.frames_for(3.0), None);
    }

    #[test]
    fn loops_early_stops_and_silence_are_doubted() {
        let fine = [segment(
            0.0,
            3.6,
            "Please send the report to Siobhan before Friday.",
        )];
        assert_eq!(doubt(&fine, 4.0), None);
        assert_eq!(doubt(&[], 4.0), Some(Doubt::Nothing));
        let stopped = [segment(0.0, 2.0, "Please send the report")];
        assert_eq!(doubt(&stopped, 8.0), Some(Doubt::EarlyStop));
        for looping in [
            "the the the the end",
            "We're not here, we're not here, we're not here",
            "one two three four one two three four one two three four",
        ] {
            assert_eq!(
                doubt(&[segment(0.0, 4.0, looping)], 4.0),
                Some(Doubt::Loop),
                "{looping}"
            );
        }
        let chatter = "word ".repeat(20).replace("word", "a b");
        assert_eq!(
            doubt(&[segment(0.0, 2.0, &chatter)], 2.0),
            Some(Doubt::Loop)
        );
        let twice = [
            segment(0.0, 2.0, "Thank you."),
            segment(2.0, 4.0, "Thank you."),
        ];
        assert_eq!(doubt(&twice, 4.0), Some(Doubt::Loop));
        // A word said twice, or a phrase twice, is speech.
        let speech = [segment(0.0, 3.8, "no no, I said the red one, the red one")];
        assert_eq!(doubt(&speech, 4.0), None);
    }
}
