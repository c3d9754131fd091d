//! A chunk whose text ends in its last phrase said twice ([`Doubt::EndSaidTwice`]): whisper
//! reads a chunk that ends right where its speech does so, through a window fitted to it, and
//! says the phrase once through a window with quiet after the speech. Rather than the whole
//! chunk through a wider window, only its end is heard again, with that quiet after it: said
//! twice there too, the speaker said it twice; else the second time is dropped. The end is a
//! part of the chunk, so this costs a fraction of a wider window's pass (which more than
//! doubled the time of a 10 s reading).
//!
//! [`Doubt::EndSaidTwice`]: super::window::Doubt::EndSaidTwice

use whisper_rs::WhisperState;

use super::super::guard;
use super::super::{EngineError, EngineRequest, Segment};
use super::decode::transcribe_chunk;
use super::pass::{Chunk, Retries, SAMPLE_RATE, Settings};
use super::recovery::Attempt;
use super::window::{FRAMES_PER_SECOND, FULL_WINDOW_FRAMES, WINDOW_STEP_FRAMES};

/// Quiet the window holds after the end heard again: a wider window with 1.3 s more than a
/// fitted one still read the phrase twice in some of the development `voices` readings, 2.6 s
/// more read each once (`scripts/bench-wyoming`, tiny.en q8_0).
const QUIET_AFTER_SECONDS: f64 = 2.6;
/// The end heard again holds the phrase twice at this many seconds a word (150 words a minute,
/// an unhurried reading pace), and this much before it, which leaves room for a slower one.
const SECONDS_PER_WORD: f64 = 0.4;
const LEAD_SECONDS: f64 = 1.0;
/// An end longer than this share of the chunk is not heard again alone: the recovery's wider
/// window hears the whole chunk.
const MOST_OF_CHUNK: f64 = 0.6;

/// `heard`, the text of `chunk`'s last `seconds` (after anything said before it), which ends
/// in its last words twice: as it is when its end heard again says them twice too, else
/// without their second time. None when it does not end so, or the phrase is too long for its
/// end to be heard alone.
pub(super) fn hear_end_again(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    heard: &[Segment],
    seconds: f64,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<Option<Vec<Segment>>, EngineError> {
    let said = guard::joined(heard);
    let Some(n) = guard::last_words_said_twice(&said) else {
        return Ok(None);
    };
    let Some((end, window)) = end_to_hear(n, seconds) else {
        return Ok(None);
    };
    let from = chunk.samples.len() - (end * SAMPLE_RATE) as usize;
    let tail = Chunk {
        samples: &chunk.samples[from..],
        said: None,
        heard_before: None,
        ..*chunk
    };
    let attempt = Attempt {
        window: Some(window),
        sampled: false,
    };
    retries.ends += 1;
    let again = transcribe_chunk(state, request, &tail, &attempt, settings, retries)?;
    let again = guard::joined(&again.segments);
    let twice = guard::ends_in_twice(&again, &said, n);
    tracing::debug!(
        seconds = end,
        window,
        again,
        twice,
        "a chunk's last words said twice: its end heard again"
    );
    Ok(Some(if twice {
        heard.to_vec()
    } else {
        guard::drop_last_words(heard.to_vec(), n)
    }))
}

/// How long an end holds a phrase of `n` words said twice in a chunk of `seconds`, and the
/// window it is heard through; None when that is most of the chunk.
fn end_to_hear(n: usize, seconds: f64) -> Option<(f64, usize)> {
    let end = LEAD_SECONDS + 2.0 * n as f64 * SECONDS_PER_WORD;
    if end > MOST_OF_CHUNK * seconds {
        return None;
    }
    let frames = ((end + QUIET_AFTER_SECONDS) * FRAMES_PER_SECOND).ceil() as usize;
    let window = frames.div_ceil(WINDOW_STEP_FRAMES) * WINDOW_STEP_FRAMES;
    (window < FULL_WINDOW_FRAMES).then_some((end, window))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_holds_the_phrase_twice_with_quiet_after_it_and_is_never_most_of_the_chunk() {
        // Four words twice in a 9.7 s reading: 4.2 s, in a 7.68 s window (6.8 s rounded up).
        let rounded = |heard: Option<(f64, usize)>| heard.map(|(s, w)| ((s * 100.0).round(), w));
        assert_eq!(rounded(end_to_hear(4, 9.7)), Some((420.0, 384)));
        assert_eq!(rounded(end_to_hear(3, 9.7)), Some((340.0, 320)));
        // Most of a short chunk: the wider window hears it all.
        assert_eq!(end_to_hear(4, 6.5), None);
        assert_eq!(end_to_hear(14, 20.0), None);
    }
}
