//! Text said again that nobody said again: echoes of the chunk's text in no time, a line said
//! again over audio without voice, the text said before a chunk read a second time; and which of
//! a chunk's two readings (after the words before, or alone) to keep.

use std::ops::Range;

use super::*;

/// `segments` without their echoes. At the end of a window whisper sometimes says part of the
/// text before again where there is no time left to say it: "… is to be ill-disposed." then
/// "Is to be ill-disposed?" in the last 0.3 s of the chunk, a sentence's first fourteen words
/// again in its last 0.3 s (base, a live turn of read speech), or a 15 s excerpt's 21 words,
/// spread over several segments, all again in 0.37 s (tiny.en q8_0). A segment of two or more
/// words that the chunk's text before it says in the same order (punctuation and case aside),
/// squeezed into less time than anyone takes to say them, is such an echo and is dropped; time
/// past the end of the chunk's `seconds` of audio (the window's padding) does not count. A line
/// said again in its own time, or a one-word answer said twice, is speech and stays.
pub fn drop_echoes(segments: Vec<Segment>, seconds: f64) -> Vec<Segment> {
    let mut kept: Vec<Segment> = Vec::with_capacity(segments.len());
    let mut earlier: Vec<String> = Vec::new();
    for segment in segments {
        if is_echo(&earlier, &segment, seconds) {
            tracing::debug!("echo dropped: {:?}", segment.text);
            continue;
        }
        earlier.extend(words(&segment.text));
        kept.push(segment);
    }
    kept
}

/// Whether `segment` only says words of `earlier` (the chunk's words before it) again, in too
/// little time to be speech.
pub(super) fn is_echo(earlier: &[String], segment: &Segment, chunk_seconds: f64) -> bool {
    let said = words(&segment.text);
    said.len() >= 2
        && said.len() as f64 > 1.0 + spoken_seconds(segment, chunk_seconds) * MAX_WORDS_PER_SECOND
        && earlier
            .windows(said.len())
            .any(|run| says_again(run, &said))
}

/// `segments` without those that say the chunk's text before them again over audio where
/// nobody speaks. Whisper, given a chunk whose voice ends early, may fill the quiet after it
/// with the text it just heard: tiny.en (f16, q8_0 and q5_1 alike) read a 4.4 s falsetto
/// recording of "this is all very high pitched", spoken from 0.7 to 2.5 s, as that sentence at
/// 0.3-2.3 s and again at 2.3-4.3 s, over silence, at a believable pace. A segment of
/// [`MIN_SAID_AGAIN_WORDS`] or more words that the text before it in the chunk says in order,
/// during less voice (`voiced`: the chunk's speech, in seconds) than anyone needs to say them,
/// is dropped. A speaker who says a line again says it in voice, and is heard twice. `voiced`
/// is asked for only when a segment says earlier text again.
pub fn drop_repeats_without_voice(
    segments: Vec<Segment>,
    seconds: f64,
    voiced: impl FnOnce() -> Vec<Range<f64>>,
) -> Vec<Segment> {
    let mut voiced = Some(voiced);
    let mut regions: Option<Vec<Range<f64>>> = None;
    let mut kept: Vec<Segment> = Vec::with_capacity(segments.len());
    let mut earlier: Vec<String> = Vec::new();
    for segment in segments {
        let said = words(&segment.text);
        let repeats = said.len() >= MIN_SAID_AGAIN_WORDS
            && earlier
                .windows(said.len())
                .any(|run| says_again(run, &said));
        if repeats {
            let regions =
                regions.get_or_insert_with(|| voiced.take().map_or_else(Vec::new, |f| f()));
            let span = segment.start..segment.end.min(seconds);
            let voice: f64 = regions
                .iter()
                .map(|r| (r.end.min(span.end) - r.start.max(span.start)).max(0.0))
                .sum();
            if voice * MAX_WORDS_PER_SECOND < said.len() as f64 {
                tracing::debug!("said again without voice, dropped: {:?}", segment.text);
                continue;
            }
        }
        earlier.extend(said);
        kept.push(segment);
    }
    kept
}

/// Whether `said` says the words of `run` again, its last word perhaps cut short: whisper
/// stops mid-word where its window ends ("... there might be pr" for "... there might be
/// prudently").
pub(super) fn says_again(run: &[String], said: &[String]) -> bool {
    let Some((last, rest)) = said.split_last() else {
        return false;
    };
    run.len() == said.len()
        && run[..rest.len()] == *rest
        && run[rest.len()].starts_with(last.as_str())
}

/// The fewest words of a chunk's two readings for [`better_alone`] to tell by the words they
/// share whether they heard the same audio.
pub(super) const MIN_WORDS_TO_COMPARE: usize = 4;

/// Phrases compared by [`better_alone`], in words.
pub(super) const PHRASE_WORDS: usize = 4;

/// Whether a chunk heard after the text said before it (`said`), as `after`, is worse than the
/// same audio heard alone, as `alone`: `after` says nothing where `alone` says something; or it
/// says a phrase of [`PHRASE_WORDS`] words more often than `alone` does that is a phrase of
/// `said` (whisper, made to read the text said before, said it again) or that it says twice
/// itself; or all it says is said twice where `alone` says it once ("Wednesday. Wednesday.",
/// "29340 29340" for "two nine three four zero"). Everything else is taken as the better
/// reading: the words before let whisper hear the chunk as one file would (a word said twice
/// within a longer text, "very, very very clear", is left to the guard), unless the two
/// readings of [`MIN_WORDS_TO_COMPARE`] words or more share fewer than half their words: then
/// whisper read the text before over other audio than its own, and wrote that audio as the
/// chunk's ("Go forward 10 meters." after "Go somewhere and do something." read over it). So
/// is `alone` when it says a run of [`MIN_SAID_AGAIN_WORDS`] words of `said` more often than
/// `after`: the speaker said those words again, and [`drop_said_again`] took them for whisper
/// saying them again ("Laugh less heartily so." for "Laugh less heartily, so we have still
/// that resource." after "We laugh less heartily, so we have still that resource."). A
/// shorter chunk is one word or two, which the readings may well all hear differently
/// ("Foxtrot" after the words before, "Foxtrad" alone).
pub fn better_alone(after: &str, alone: &str, said: &str) -> bool {
    let (after, alone, said) = (words(after), words(alone), words(said));
    if after.is_empty() {
        return !alone.is_empty();
    }
    let longer = after.len().max(alone.len());
    if longer >= MIN_WORDS_TO_COMPARE && 2 * shared_words(&after, &alone) < longer {
        return true;
    }
    let says_again = after.windows(PHRASE_WORDS).any(|phrase| {
        let times = times_said(phrase, &after);
        times > times_said(phrase, &alone) && (times > 1 || times_said(phrase, &said) > 0)
    });
    // Words the speaker said again, dropped from the reading after as said again.
    let left_out = alone.windows(MIN_SAID_AGAIN_WORDS).any(|phrase| {
        times_said(phrase, &said) > 0 && times_said(phrase, &alone) > times_said(phrase, &after)
    });
    says_again || left_out || (said_twice(&after) && !said_twice(&alone))
}

/// Whether `words` say one phrase twice and nothing else (a word after them aside).
pub(super) fn said_twice(words: &[String]) -> bool {
    let half = words.len() / 2;
    half > 0 && words.len() - 2 * half <= 1 && words[..half] == words[half..2 * half]
}

/// How many words `one` and `other` share, each word of one matched once in the other.
pub(super) fn shared_words(one: &[String], other: &[String]) -> usize {
    let mut left: Vec<&String> = other.iter().collect();
    one.iter()
        .filter(|word| {
            let found = left.iter().position(|w| w == word);
            found.map(|i| left.swap_remove(i)).is_some()
        })
        .count()
}

/// How many times the words `within` hold `phrase`.
pub(super) fn times_said(phrase: &[String], within: &[String]) -> usize {
    within
        .windows(phrase.len())
        .filter(|run| *run == phrase)
        .count()
}

/// The fewest words a segment says again of the text said before for it to be dropped
/// ([`drop_said_again`]): "Yes." after "Yes." is speech.
pub(super) const MIN_SAID_AGAIN_WORDS: usize = 3;

/// `segments` heard after audio said before (whose text, `said`, the decoder was made to read
/// first), without those that say a run of that text again: with it forced in front, whisper
/// sometimes goes on to say it a second time over the new audio ("Press 4 to mark this message
/// as urgent." then "Please hold while I try to locate the person you are calling." again, at
/// the pace of speech). A segment of [`MIN_SAID_AGAIN_WORDS`] or more words that the text said
/// before holds in the same order (punctuation and case aside) is such a repeat.
pub fn drop_said_again(segments: Vec<Segment>, said: &str) -> Vec<Segment> {
    let earlier = words(said);
    segments
        .into_iter()
        .filter(|segment| {
            let again = words(&segment.text);
            let repeats = again.len() >= MIN_SAID_AGAIN_WORDS
                && earlier
                    .windows(again.len())
                    .any(|run| run == again.as_slice());
            if repeats {
                tracing::debug!("said again dropped: {:?}", segment.text);
            }
            !repeats
        })
        .collect()
}
