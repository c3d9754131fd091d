//! One chunk of a request, heard on its own through a window fitted to it, heard again as the
//! recovery says when the loop guard or the window's doubts reject the text (a loop that
//! survives every attempt is cut out); the rest after the last decoded timestamp through a
//! window of its own. What each pass shares is `pass`'s; one decode through whisper.cpp is
//! `decode`'s.

use whisper_rs::WhisperState;

use super::super::guard::{self, Trouble};
use super::super::{EngineError, EngineRequest, Segment};
use super::context::Decoders;
#[cfg(test)]
use super::decode::{
    PROMPT_TAIL_BYTES, is_non_speech_marker, most_text_tokens, padded_for_dtw, prompt_tail,
};
use super::decode::{in_timeline, transcribe_chunk};
use super::end_again::hear_end_again;
#[cfg(test)]
use super::pass::Said;
use super::pass::{Chunk, Retries, SAMPLE_RATE, Settings, gives_way_to_alone};
use super::recovery::Verdict;
use super::window::{Doubt, doubt};

/// The most rests of one chunk heard on their own after its text stopped early.
const MAX_RESTS: usize = 3;

/// One chunk through the attempts of the recovery until the guard accepts the text; else the
/// least bad attempt, its loop cut out. Silence (the decoder's no-speech verdict) is no text.
/// A chunk whose start was said before ([`Chunk::said`]) is also heard without that start, and
/// that text is kept when it reads better ([`guard::better_alone`]), or when the reading after
/// that start loops over a longer part ([`ALONE_AFTER_LOOP_SECONDS`]): whisper, made to read
/// the text said before, sometimes says it again after it, says the chunk twice, or nothing.
pub(super) fn hear_chunk(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<Vec<Segment>, EngineError> {
    let Some(said) = chunk.said else {
        return Ok(hear_attempts(state, decoders, request, chunk, settings, retries)?.0);
    };
    let start = ((said.seconds * SAMPLE_RATE) as usize).min(chunk.samples.len());
    let rest = Chunk {
        samples: &chunk.samples[start..],
        said: None,
        ..*chunk
    };
    if rest.samples.is_empty() {
        return Ok(Vec::new());
    }
    let hear_alone = |state: &mut WhisperState, retries: &mut Retries| {
        let (alone, _) = hear_attempts(state, decoders, request, &rest, settings, retries)?;
        Ok::<_, EngineError>(in_timeline(alone, &(start..chunk.samples.len())).collect::<Vec<_>>())
    };
    if said.tokens.is_empty() {
        return hear_alone(state, retries);
    }
    let (after, verdict) = hear_attempts(state, decoders, request, chunk, settings, retries)?;
    let after_text = guard::joined(&after);
    let alone = hear_alone(state, retries)?;
    let alone_text = guard::joined(&alone);
    let keeps_after = if gives_up_after_loop(verdict, rest.samples.len() as f64 / SAMPLE_RATE) {
        alone.is_empty()
    } else {
        !guard::better_alone(&after_text, &alone_text, &said.text)
    };
    if keeps_after {
        return Ok(after);
    }
    tracing::debug!(
        after = after_text,
        alone = alone_text,
        "the chunk heard alone reads better than after what was said before"
    );
    retries.alone += 1;
    Ok(alone)
}

/// Whether a reading after the text said before that came out as `verdict`, over `seconds`
/// after that text, gives way to the chunk heard alone ([`ALONE_AFTER_LOOP_SECONDS`]).
fn gives_up_after_loop(verdict: Verdict, seconds: f64) -> bool {
    verdict.is_loop() && gives_way_to_alone(seconds)
}

/// [`hear_chunk`]'s attempts on one chunk, its start (if said before) read as its text, and the
/// verdict on the best of them. When the text kept stops well before the chunk does
/// ([`Doubt::EarlyStop`]: whisper ended its text at a pause with more speech after it, which
/// whisper.cpp then skips), the rest after its last segment is heard as a chunk of its own, the
/// text so far its prompt, up to [`MAX_RESTS`] times (only in audio trimmed to its speech, and
/// not for tentative text, which the next pass replaces). A loop cut out is not gone past.
fn hear_attempts(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<(Vec<Segment>, Verdict), EngineError> {
    let whole = chunk.samples.len() as f64 / SAMPLE_RATE;
    let before = chunk.said.map_or(0.0, |said| said.seconds.min(whole));
    let seconds = whole - before;
    let (mut heard, verdict) = best_attempt(state, decoders, request, chunk, settings, retries)?;
    let mut rests = 0;
    // Only audio trimmed to speech holds more to hear: a chunk heard whole may end in quiet.
    let hears_rests = request.trimmed_to_speech && !request.provisional;
    while hears_rests && !verdict.is_loop() && rests < MAX_RESTS {
        let (Some(Doubt::EarlyStop), Some(last)) = (doubt(&heard, seconds), heard.last()) else {
            break;
        };
        let from = last.end;
        let text = guard::joined(&heard);
        let start = (((before + from) * SAMPLE_RATE) as usize).min(chunk.samples.len());
        let rest = Chunk {
            samples: &chunk.samples[start..],
            said: None,
            heard_before: Some(&text),
            ..*chunk
        };
        rests += 1;
        retries.rests += 1;
        // What the rest says again of the text before stays: it starts after the last segment,
        // so a sentence said again there was said again.
        let (rest_heard, rest_verdict) =
            best_attempt(state, decoders, request, &rest, settings, retries)?;
        tracing::debug!(
            from = before + from,
            seconds = rest.samples.len() as f64 / SAMPLE_RATE,
            text = guard::joined(&rest_heard),
            "the text stopped early: the rest heard on its own"
        );
        let goes_further = rest_heard.last().is_some_and(|s| s.end > 0.0);
        heard.extend(rest_heard.into_iter().map(|s| s.shifted(from)));
        if !goes_further || rest_verdict.is_loop() {
            break;
        }
    }
    let heard = heard.into_iter().map(|s| s.shifted(before)).collect();
    Ok((heard, verdict))
}

/// The best of the recovery's attempts on one chunk, in the timeline after its start said
/// before, and the verdict on it (a loop in it cut out).
fn best_attempt(
    state: &mut WhisperState,
    decoders: &Decoders,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<(Vec<Segment>, Verdict), EngineError> {
    let whole = chunk.samples.len() as f64 / SAMPLE_RATE;
    let fitted = settings.window.frames_for(whole);
    // What comes after audio said before is judged on its own, in its own timeline.
    let before = chunk.said.map_or(0.0, |said| said.seconds.min(whole));
    let seconds = whole - before;
    let after_said = |heard: Vec<Segment>| -> Vec<Segment> {
        heard
            .into_iter()
            .map(|s| s.retimed(|t| (t - before).max(0.0)))
            .collect()
    };
    // Where someone speaks after the part said before, looked for only when a segment says
    // earlier text again (see `guard::drop_repeats_without_voice`), once for every attempt.
    let voiced = std::cell::OnceCell::new();
    let start_after_said = ((before * SAMPLE_RATE) as usize).min(chunk.samples.len());
    let mut best: Option<(Vec<Segment>, Verdict)> = None;
    let attempts = settings.recovery.attempts(fitted);
    let retries_after_first = attempts.len() > 1;
    for (n, attempt) in attempts.into_iter().enumerate() {
        if n == 1 {
            retries.chunks += 1;
        }
        if n > 0 {
            retries.passes += 1;
        }
        let decoded = if attempt.sampled {
            let mut fresh = decoders.fresh_state()?;
            transcribe_chunk(&mut fresh, request, chunk, &attempt, settings, retries)?
        } else {
            transcribe_chunk(state, request, chunk, &attempt, settings, retries)?
        };
        let mut heard = guard::drop_echoes(after_said(decoded.segments), seconds);
        heard = guard::drop_repeats_without_voice(heard, seconds, || {
            voiced
                .get_or_init(|| voiced_seconds(&chunk.samples[start_after_said..]))
                .clone()
        });
        if let Some(said) = chunk.said {
            heard = guard::drop_said_again(heard, &said.text);
        }
        if guard::is_silence(&heard, guard::no_speech_bar(request.provisional)) {
            return Ok((Vec::new(), Verdict::Fine));
        }
        let verdict = if decoded.said_its_start_again {
            Verdict::Loop(Trouble::Repetition)
        } else {
            Verdict::of(&heard, seconds, attempt.window.is_some())
        };
        if verdict == Verdict::Fine {
            return Ok((heard, verdict));
        }
        // A phrase said twice at the end of a fitted window's text: its end alone heard again,
        // not the whole chunk through a wider window.
        if verdict == Verdict::Doubted(Doubt::EndSaidTwice)
            && n == 0
            && retries_after_first
            && let Some(ended) =
                hear_end_again(state, request, chunk, &heard, seconds, settings, retries)?
        {
            return Ok((ended, Verdict::Fine));
        }
        tracing::debug!(
            "{seconds:.1} s chunk, window {:?}, sampled {}: {verdict:?} in {:?}",
            attempt.window,
            attempt.sampled,
            heard
                .iter()
                .map(|s| s.text.as_str())
                .collect::<String>()
                .chars()
                .take(160)
                .collect::<String>()
        );
        // Nothing heard after the text said before, or a loop in a longer part after it: the
        // chunk heard alone comes next ([`hear_chunk`]). A wider window heard nothing too in
        // 15 of the 17 pairs of the corpus's recordings where nothing was heard (tiny.en), and
        // the turns of every development set read the same without either retry
        // (`turn_context --said-before`, docs/journal/2026-12.md).
        let gives_up = chunk.said.is_some()
            && (verdict == Verdict::Doubted(Doubt::Nothing)
                || gives_up_after_loop(verdict, seconds));
        if best.as_ref().is_none_or(|(_, worst)| verdict <= *worst) {
            best = Some((heard, verdict));
        }
        if gives_up {
            break;
        }
    }
    let Some((heard, verdict)) = best else {
        return Ok((Vec::new(), Verdict::Fine));
    };
    if verdict.is_loop() {
        retries.cut += 1;
        let cut = guard::within_time(guard::cut_loops(heard), seconds);
        return Ok((cut, verdict));
    }
    Ok((heard, verdict))
}

/// Where a voice is heard in `samples` (16 kHz), in seconds from their start.
fn voiced_seconds(samples: &[f32]) -> Vec<std::ops::Range<f64>> {
    use crate::audio::vad;
    let frame_seconds = vad::FRAME as f64 / SAMPLE_RATE;
    vad::voiced_frames(&vad::frame_scores(samples))
        .into_iter()
        .map(|frames| frames.start as f64 * frame_seconds..frames.end as f64 * frame_seconds)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decode_after_text_said_before_writes_what_the_part_after_it_holds() {
        let said = Said {
            text: "And I should be all. Thanks.".into(),
            tokens: vec![1; 9],
            seconds: 8.6,
        };
        let after = guard::max_tokens(4.7);
        assert_eq!(most_text_tokens(13.3, Some(&said)), after + 9);
        assert!(most_text_tokens(13.3, Some(&said)) < guard::max_tokens(13.3));
        assert_eq!(most_text_tokens(13.3, None), guard::max_tokens(13.3));
        // Audio no longer than what was said before leaves room for that text alone.
        assert_eq!(
            most_text_tokens(8.0, Some(&said)),
            guard::max_tokens(0.0) + 9
        );
    }

    #[test]
    fn audio_too_short_for_dtw_is_padded_with_silence_only_with_dtw() {
        let short = vec![0.5; 2_000];
        assert_eq!(padded_for_dtw(&short, false).len(), 2_000);
        let padded = padded_for_dtw(&short, true);
        assert_eq!(padded.len(), 3_200);
        assert_eq!(&padded[..2_000], &short[..]);
        assert!(padded[2_000..].iter().all(|&s| s == 0.0));
        assert_eq!(padded_for_dtw(&[0.5; 4_000], true).len(), 4_000);
        assert!(padded_for_dtw(&[], true).is_empty());
    }

    #[test]
    fn a_long_prompt_is_cut_to_its_last_words_within_the_bytes_whisper_takes_at_once() {
        assert_eq!(prompt_tail("Kubernetes, Verbatim"), "Kubernetes, Verbatim");
        let long = "word ".repeat(400) + "Kubernetes Verbatim";
        let tail = prompt_tail(&long);
        assert!(tail.len() <= PROMPT_TAIL_BYTES, "{}", tail.len());
        assert!(tail.starts_with("word ") && tail.ends_with("Kubernetes Verbatim"));
        // Not cut inside a character or a word.
        let wide = "明天 ".repeat(300);
        let tail = prompt_tail(&wide);
        assert!(
            tail.len() <= PROMPT_TAIL_BYTES && tail.starts_with("明天"),
            "{tail:?}"
        );
        // One word longer than the limit: its end.
        assert!(prompt_tail(&"x".repeat(5_000)).len() == PROMPT_TAIL_BYTES);
    }

    #[test]
    fn bracketed_markers_are_not_speech() {
        assert!(is_non_speech_marker("[BLANK_AUDIO]"));
        assert!(is_non_speech_marker("[ Silence ]"));
        assert!(!is_non_speech_marker("[1] Hello"));
        assert!(!is_non_speech_marker("Hello [laughs]"));
    }

    #[test]
    fn segments_move_to_the_request_timeline_and_stay_in_their_chunk() {
        let heard = vec![Segment::new(0.0, 2.5, "a"), Segment::new(2.5, 30.0, "b")];
        let moved: Vec<Segment> = in_timeline(heard, &(160_000..208_000)).collect();
        assert_eq!((moved[0].start, moved[0].end), (10.0, 12.5));
        assert_eq!((moved[1].start, moved[1].end), (12.5, 13.0));
    }
}
