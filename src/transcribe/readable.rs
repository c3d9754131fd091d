//! Segments for reading where the engine times only whole chunks (Moonshine: one segment for
//! each chunk of up to 30 s): split as subtitle cues are, at most 7 s and two lines of 42
//! characters, at a clause where one falls right, each piece timed by its share of the
//! characters. Engines that time their own segments (Whisper) are left as they are.

use std::borrow::Cow;

use crate::engine::Segment;
use crate::wire::subtitles::split_for_reading;
use crate::wire::transcription::TranscriptionSegment;

/// `segments` as people read them; `timed_finely`: the engine times words or short segments
/// (then they are borrowed as they are, nothing copied).
pub(crate) fn readable(segments: &[Segment], timed_finely: bool) -> Cow<'_, [Segment]> {
    if timed_finely {
        return Cow::Borrowed(segments);
    }
    let split: Vec<Segment> = segments
        .iter()
        .flat_map(|segment| {
            let whole = TranscriptionSegment {
                start: segment.start,
                end: segment.end,
                text: segment.text.clone(),
            };
            let pieces = split_for_reading(&whole);
            if pieces.len() == 1 {
                vec![segment.clone()]
            } else {
                pieces
                    .into_iter()
                    .map(|piece| Segment::new(piece.start, piece.end, &piece.text))
                    .collect()
            }
        })
        .collect();
    Cow::Owned(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_chunk_becomes_segments_of_at_most_seven_seconds() {
        let text = "The meeting moved to Tuesday, so we have more time to check the figures, \
                    the charts and the summary before we send them to the finance team.";
        let chunk = Segment::new(2.0, 24.0, text);
        let split = readable(std::slice::from_ref(&chunk), false);
        assert!(split.len() >= 3, "{split:?}");
        assert!(split.iter().all(|s| s.end - s.start <= 7.0 + 1e-6));
        assert_eq!(split[0].start, 2.0);
        assert_eq!(split.last().unwrap().end, 24.0);
        let words: Vec<&str> = split
            .iter()
            .flat_map(|s| s.text.split_whitespace())
            .collect();
        assert_eq!(
            words.join(" "),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        // An engine with its own times keeps them.
        let kept = readable(std::slice::from_ref(&chunk), true);
        assert!(matches!(kept, Cow::Borrowed(_)));
        assert_eq!(kept.as_ref(), std::slice::from_ref(&chunk));
    }
}
