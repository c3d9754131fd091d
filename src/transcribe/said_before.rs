//! What live audio said before each chunk: the audio of the last seconds and the text
//! committed for the chunks in it. An engine that can ([`Engine::hears_said_before`]) hears a
//! committed chunk with the chunks that started up to [`CONTEXT_SECONDS`] before it in front,
//! made to read them as the text already committed for them, so that the chunk is heard with
//! what came before it, as one file would be, and nothing committed is written again: dictated
//! text then reads as well as one file (docs/journal/2026-12.md, "The turns before, read as
//! their committed text").
//!
//! [`Engine::hears_said_before`]: crate::engine::Engine::hears_said_before

use std::collections::VecDeque;
use std::ops::Range;

use crate::audio::vad::SpeechChunk;
use crate::engine::SaidBefore;

/// Samples per second of the audio the engines take.
const SAMPLE_RATE: usize = 16_000;
/// Chunks that started up to this long before a chunk are heard in front of it. 10 s read as
/// well as 15 s or better and cost a third less engine time: every token of the text before is
/// one decoder step, and the window holds its audio (`examples/turn_context.rs --said-within`,
/// docs/journal/2026-12.md, "Ten seconds before, not fifteen"); shorter read worse.
pub const CONTEXT_SECONDS: usize = 10;
/// The most audio a chunk is heard with, what was said before it included: whisper hears 30 s
/// at once, and the rest would be heard apart, without what came before.
pub const MOST_HEARD_SECONDS: usize = 28;

/// Audio kept beyond [`MOST_HEARD_SECONDS`]: a chunk is committed once the pause after it has
/// lasted, and heard ahead in that pause, with the audio of the pause already taken.
const KEPT_AFTER_SECONDS: usize = 4;

/// The recent audio of a live transcription and the committed chunks in it.
pub struct SaidBeforeChunks {
    /// Chunks that started up to this many samples before a chunk are heard in front of it.
    context: usize,
    /// The last [`MOST_HEARD_SECONDS`] and [`KEPT_AFTER_SECONDS`] of audio, from sample
    /// `audio_start` of the timeline.
    audio: VecDeque<f32>,
    audio_start: usize,
    /// Committed chunks still within the context of the audio's end, oldest first:
    /// where each lies in the audio, and its text.
    committed: VecDeque<(Range<usize>, String)>,
}

impl Default for SaidBeforeChunks {
    fn default() -> SaidBeforeChunks {
        SaidBeforeChunks::within(CONTEXT_SECONDS as f64)
    }
}

impl SaidBeforeChunks {
    /// Chunks that started up to `seconds` before a chunk are heard in front of it.
    pub fn within(seconds: f64) -> SaidBeforeChunks {
        SaidBeforeChunks {
            context: (seconds.max(0.0) * SAMPLE_RATE as f64) as usize,
            audio: VecDeque::new(),
            audio_start: 0,
            committed: VecDeque::new(),
        }
    }

    /// Takes the next samples of the audio; older audio than any chunk can be heard with is let
    /// go, so that memory stays bounded whatever the length.
    pub fn hear(&mut self, samples: &[f32]) {
        self.audio.extend(samples);
        let kept = (MOST_HEARD_SECONDS + KEPT_AFTER_SECONDS) * SAMPLE_RATE;
        if self.audio.len() > kept {
            let excess = self.audio.len() - kept;
            self.audio.drain(..excess);
            self.audio_start += excess;
        }
        let end = self.audio_start + self.audio.len();
        let earliest = end.saturating_sub(self.context + kept);
        while self
            .committed
            .front()
            .is_some_and(|(range, _)| range.start < earliest)
        {
            self.committed.pop_front();
        }
    }

    /// Notes that the chunk at `range` was committed as `text`.
    pub fn committed(&mut self, range: Range<usize>, text: &str) {
        self.committed
            .retain(|(earlier, _)| earlier.end <= range.start);
        self.committed.push_back((range, text.trim().to_string()));
    }

    /// The audio `chunk` is heard with (the chunks said before it, then its own samples) and
    /// what was said before it; None when no committed chunk started within
    /// the context before it with room for it in [`MOST_HEARD_SECONDS`], or their
    /// audio is gone.
    pub fn before(&self, chunk: &SpeechChunk) -> Option<(Vec<f32>, SaidBefore)> {
        let earliest = chunk.start.saturating_sub(self.context);
        let most = MOST_HEARD_SECONDS * SAMPLE_RATE;
        // A chunk heard as nothing has no text to read its audio as: the ones after it only.
        let after_nothing = self
            .committed
            .iter()
            .rposition(|(_, text)| text.is_empty())
            .map_or(0, |nothing| nothing + 1);
        let first = after_nothing
            + self
                .committed
                .iter()
                .skip(after_nothing)
                .position(|(range, _)| {
                    range.start >= earliest.max(self.audio_start)
                        && range.end <= chunk.start
                        && chunk.start - range.start + chunk.samples.len() <= most
                })?;
        let said = &self.committed.range(first..).collect::<Vec<_>>();
        if said.iter().any(|(range, _)| range.end > chunk.start) {
            return None;
        }
        let from = said[0].0.start - self.audio_start;
        let to = chunk.start.checked_sub(self.audio_start)?;
        if to > self.audio.len() {
            return None;
        }
        let mut samples: Vec<f32> = self.audio.range(from..to).copied().collect();
        let text: Vec<&str> = said.iter().map(|(_, text)| text.as_str()).collect();
        let before = samples.len();
        samples.extend_from_slice(&chunk.samples);
        Some((
            samples,
            SaidBefore {
                text: text.join(" "),
                samples: before,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: usize = SAMPLE_RATE;

    /// `seconds` of audio whose every sample tells the second it lies in.
    fn audio(from: usize, seconds: usize) -> Vec<f32> {
        (from * SECOND..(from + seconds) * SECOND)
            .map(|i| (i / SECOND) as f32)
            .collect()
    }

    fn chunk(start: usize, seconds: usize) -> SpeechChunk {
        SpeechChunk {
            start: start * SECOND,
            samples: audio(start, seconds),
            cuts: Vec::new(),
        }
    }

    #[test]
    fn a_chunk_is_heard_after_the_committed_chunks_of_the_seconds_before_it() {
        let mut said = SaidBeforeChunks::default();
        said.hear(&audio(0, 20));
        assert!(said.before(&chunk(2, 3)).is_none(), "nothing committed yet");
        said.committed(SECOND..4 * SECOND, " Ten of clubs. ");
        said.committed(6 * SECOND..9 * SECOND, "Four queen of clubs.");
        let (samples, before) = said.before(&chunk(11, 3)).unwrap();
        assert_eq!(before.text, "Ten of clubs. Four queen of clubs.");
        // From the first chunk's start up to the new chunk's, then the new chunk.
        assert_eq!(before.samples, 10 * SECOND);
        assert_eq!(samples.len(), 13 * SECOND);
        assert_eq!((samples[0], samples[before.samples - 1]), (1.0, 10.0));
        assert_eq!(samples[before.samples], 11.0);
        // A chunk heard as nothing: only the chunks after it are said before.
        said.committed(12 * SECOND..13 * SECOND, "");
        assert!(said.before(&chunk(14, 2)).is_none());
        said.committed(14 * SECOND..16 * SECOND, "Seven of clubs.");
        let (_, before) = said.before(&chunk(17, 2)).unwrap();
        assert_eq!(before.text, "Seven of clubs.");
    }

    #[test]
    fn only_chunks_that_started_within_the_context_and_fit_the_window_are_heard_before() {
        let mut said = SaidBeforeChunks::default();
        said.hear(&audio(0, 30));
        said.committed(0..3 * SECOND, "one");
        said.committed(4 * SECOND..9 * SECOND, "two");
        said.committed(12 * SECOND..14 * SECOND, "three");
        // 14 s in: "one" started 14 s before, out of the 10 s context.
        assert_eq!(CONTEXT_SECONDS, 10);
        let (_, before) = said.before(&chunk(14, 2)).unwrap();
        assert_eq!(before.text, "two three");
        // A 15 s chunk at 14 s: "two" and it make 25 s, within the window...
        assert_eq!(said.before(&chunk(14, 15)).unwrap().1.text, "two three");
        // ... and "two" in front of one at 18 s would make 29 s: "three" alone.
        assert_eq!(said.before(&chunk(18, 15)).unwrap().1.text, "three");
        // A shorter context leaves "two" out.
        let mut near = SaidBeforeChunks::within(5.0);
        near.hear(&audio(0, 30));
        near.committed(4 * SECOND..9 * SECOND, "two");
        near.committed(12 * SECOND..14 * SECOND, "three");
        assert_eq!(near.before(&chunk(14, 2)).unwrap().1.text, "three");
    }

    #[test]
    fn audio_and_chunks_older_than_any_chunk_can_be_heard_with_are_let_go() {
        let mut said = SaidBeforeChunks::default();
        said.hear(&audio(0, 10));
        said.committed(2 * SECOND..4 * SECOND, "early");
        for second in 10..100 {
            said.hear(&audio(second, 1));
        }
        assert_eq!(
            said.audio.len(),
            (MOST_HEARD_SECONDS + KEPT_AFTER_SECONDS) * SECOND
        );
        assert!(said.committed.is_empty());
        assert!(said.before(&chunk(100, 2)).is_none());
    }

    #[test]
    fn a_chunk_whose_audio_before_is_gone_is_heard_alone() {
        let mut said = SaidBeforeChunks::default();
        said.hear(&audio(0, 30));
        said.committed(SECOND..3 * SECOND, "gone");
        said.hear(&audio(30, 9));
        // The audio now starts 7 s in: the chunk at 1 s cannot be heard again.
        assert!(said.before(&chunk(10, 2)).is_none());
    }
}
