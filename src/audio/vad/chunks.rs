//! What the engine transcribes: the speech regions, padded, packed in order into chunks of at
//! most 30 s (Whisper's window) cut at silences; the audio before the first and after the last
//! region, and long pauses between regions, are left out.

use std::ops::Range;

use super::{FRAME, SAMPLE_RATE, speech_frames};

/// The longest chunk: Whisper's 30 s window.
pub const MAX_CHUNK_SAMPLES: usize = 30 * SAMPLE_RATE;
const MAX_CHUNK_FRAMES: usize = MAX_CHUNK_SAMPLES / FRAME;
/// Non-speech kept on each side of a region (0.4 s): of 0, 0.08, 0.24, 0.4 and 0.64 s, the
/// lowest word error rate on the corpus's English clips as they are, with a second of silence
/// around them and with noise around them (tiny.en).
pub const PADDING_FRAMES: usize = 25;
/// A pause at least this long (3.2 s) between regions ends a chunk: transcribing it would cost
/// encoder time for nothing.
const LONG_PAUSE_FRAMES: usize = 200;
/// The stretch (160 ms) whose mean score places a cut in a region longer than a chunk.
const CUT_WINDOW_FRAMES: usize = 10;
/// A region longer than a chunk is cut at its quietest frame no earlier than this (20 s) into
/// the chunk.
const EARLIEST_CUT_FRAMES: usize = 20 * SAMPLE_RATE / FRAME;

/// The chunks to transcribe in audio of `len` samples whose frames scored `scores`, as sample
/// ranges in order, none overlapping, each at most [`MAX_CHUNK_SAMPLES`]; empty when nobody
/// speaks.
pub fn plan_chunks(scores: &[f32], len: usize) -> Vec<Range<usize>> {
    plan_chunks_padded(scores, len, PADDING_FRAMES)
}

/// [`plan_chunks`] with `padding` frames of non-speech kept on each side of a region.
pub fn plan_chunks_padded(scores: &[f32], len: usize, padding: usize) -> Vec<Range<usize>> {
    let frames = scores.len();
    let mut chunks: Vec<Range<usize>> = Vec::new();
    for region in speech_frames(scores) {
        let padded = region.start.saturating_sub(padding)..(region.end + padding).min(frames);
        match chunks.last_mut() {
            // Padding that meets the previous region's: one stretch of speech.
            Some(last) if padded.start <= last.end => last.end = padded.end,
            Some(last)
                if padded.start - last.end < LONG_PAUSE_FRAMES
                    && padded.end - last.start <= MAX_CHUNK_FRAMES =>
            {
                last.end = padded.end
            }
            _ => chunks.push(padded),
        }
    }
    chunks
        .into_iter()
        .flat_map(|chunk| split_long(chunk, scores))
        .map(|frames| frames.start * FRAME..(frames.end * FRAME).min(len))
        .filter(|samples| !samples.is_empty())
        .collect()
}

/// `chunk` cut into pieces of at most [`MAX_CHUNK_FRAMES`], each cut in the quietest stretch
/// (lowest mean score over [`CUT_WINDOW_FRAMES`]; the latest of equals) between
/// [`EARLIEST_CUT_FRAMES`] and the longest chunk: a pause between sentences rather than
/// between words.
fn split_long(mut chunk: Range<usize>, scores: &[f32]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    while chunk.len() > MAX_CHUNK_FRAMES {
        let window = chunk.start + EARLIEST_CUT_FRAMES..chunk.start + MAX_CHUNK_FRAMES;
        let quietness = |frame: usize| -> f32 {
            let around = frame.saturating_sub(CUT_WINDOW_FRAMES / 2)
                ..(frame + CUT_WINDOW_FRAMES / 2).min(scores.len());
            scores[around].iter().sum()
        };
        let cut = window
            .clone()
            .map(|frame| (frame, quietness(frame)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map_or(window.end, |(frame, _)| frame);
        pieces.push(chunk.start..cut);
        chunk.start = cut;
    }
    pieces.push(chunk);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: usize = SAMPLE_RATE / FRAME; // 62.5 frames: 62

    /// Scores with speech (0.9) over the given frame ranges and silence (0.0) elsewhere.
    fn scores(frames: usize, speech: &[Range<usize>]) -> Vec<f32> {
        let mut scores = vec![0.0; frames];
        for range in speech {
            scores[range.clone()].fill(0.9);
        }
        scores
    }

    fn in_frames(chunks: Vec<Range<usize>>) -> Vec<Range<usize>> {
        chunks
            .into_iter()
            .map(|c| c.start / FRAME..c.end.div_ceil(FRAME))
            .collect()
    }

    #[test]
    fn leading_and_trailing_silence_is_trimmed_to_the_padding() {
        let s = scores(500, &[100..300]);
        let chunks = in_frames(plan_chunks(&s, 500 * FRAME));
        assert_eq!(chunks, vec![100 - PADDING_FRAMES..300 + PADDING_FRAMES]);
        // Padding stops at the audio's edges, and the last partial frame ends at `len`.
        let s = scores(200, &[0..200]);
        assert_eq!(plan_chunks(&s, 200 * FRAME - 7), vec![0..200 * FRAME - 7]);
    }

    #[test]
    fn no_speech_gives_no_chunk() {
        assert!(plan_chunks(&scores(1000, &[]), 1000 * FRAME).is_empty());
        assert!(plan_chunks(&[], 0).is_empty());
    }

    #[test]
    fn short_pauses_stay_inside_a_chunk_and_long_ones_end_it() {
        let short = 2 * PADDING_FRAMES + LONG_PAUSE_FRAMES - 1;
        let s = scores(2000, &[100..200, 200 + short..400 + short]);
        assert_eq!(plan_chunks(&s, 2000 * FRAME).len(), 1);
        let long = 2 * PADDING_FRAMES + LONG_PAUSE_FRAMES;
        let s = scores(2000, &[100..200, 200 + long..300 + long]);
        let chunks = in_frames(plan_chunks(&s, 2000 * FRAME));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].end, 200 + PADDING_FRAMES);
        assert_eq!(chunks[1].start, 200 + long - PADDING_FRAMES);
    }

    #[test]
    fn chunks_never_exceed_thirty_seconds_and_cut_at_silences() {
        // Five 8 s sentences with 1 s pauses: 44 s of audio.
        let sentences: Vec<Range<usize>> = (0..5)
            .map(|n| n * 9 * SECOND..(n * 9 + 8) * SECOND)
            .collect();
        let frames = 45 * SECOND;
        let chunks = in_frames(plan_chunks(&scores(frames, &sentences), frames * FRAME));
        assert_eq!(chunks.len(), 2);
        for chunk in &chunks {
            assert!(chunk.len() <= MAX_CHUNK_FRAMES, "{chunk:?}");
            // Every sentence lies wholly inside one chunk.
            for sentence in &sentences {
                let inside = chunk.start <= sentence.start && sentence.end <= chunk.end;
                let outside = sentence.end <= chunk.start || chunk.end <= sentence.start;
                assert!(inside || outside, "{chunk:?} cuts {sentence:?}");
            }
        }
        assert!(chunks[0].end <= chunks[1].start);
    }

    #[test]
    fn speech_without_pauses_is_cut_in_its_quietest_stretch() {
        let frames = 70 * SECOND;
        let mut s = scores(frames, &[0..frames]);
        let quiet = 25 * SECOND;
        s[quiet - 2..quiet + 3].fill(0.4); // still speech, but the quietest moment
        s[quiet + 200] = 0.0; // quieter, but only for a frame
        let chunks = in_frames(plan_chunks(&s, frames * FRAME));
        assert_eq!(chunks[0].start, 0);
        assert!(
            (quiet - 2..=quiet + 3).contains(&chunks[0].end),
            "{chunks:?}"
        );
        assert!(chunks.iter().all(|c| c.len() <= MAX_CHUNK_FRAMES));
        assert_eq!(chunks.last().unwrap().end, frames);
        // Pieces follow each other with nothing left out.
        for pair in chunks.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
    }
}
