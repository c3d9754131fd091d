//! The callbacks whisper.cpp calls during a pass, and what they watch: the decoder's tokens for
//! a loop or more text than the chunk can hold, the request's cancel flag, and the encoder
//! passes of a chunk for a short tail to hear apart.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use super::super::guard;

/// What the decoder is watched for while it decodes a chunk: the most text tokens the chunk can
/// hold, and the tokens that end a decode.
pub(super) struct Watch {
    /// Tokens the decode must start with (`<|0.00|>` and the text of audio said before), in the
    /// first pass; the loop and the most tokens are watched after them.
    pub(super) forced: Vec<i32>,
    /// The most text tokens after the forced ones (`run::most_text_tokens`).
    pub(super) max_tokens: usize,
    /// whisper's end-of-text token: text tokens come before it.
    pub(super) eot: i32,
    /// The timestamp token of the chunk's end (whisper's first timestamp token plus one per
    /// 20 ms).
    pub(super) end_timestamp: i32,
    /// whisper's first timestamp token (`<|0.00|>`).
    pub(super) first_timestamp: i32,
    /// The earliest timestamp token that may end a segment: the first timestamp token, or
    /// [`DTW_MIN_END_STEPS`] after it when the decoders align by DTW.
    pub(super) earliest_end: i32,
    /// The decoder samples (a retry at temperature) rather than taking the likeliest token.
    pub(super) sampled: bool,
    /// The decode after the forced tokens ends where its text says its own start again
    /// ([`guard::says_its_start_again`]): set for a reading after the text said before whose
    /// part after that text is long enough to be heard alone instead (`run::hear_chunk`).
    pub(super) ends_at_start_said_again: bool,
    /// Set when the decode was ended so.
    pub(super) said_its_start_again: AtomicBool,
}

/// Why a decode is made to end at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Its text tokens end in a loop, or are more than the chunk can hold.
    Loop,
    /// Its text says its own start again ([`Watch::ends_at_start_said_again`]).
    StartSaidAgain,
}

impl Watch {
    /// Whether the text tokens decoded so far (after the forced ones) end the decode.
    fn ending(&self, text: &[i32]) -> Option<Ending> {
        if text.len() >= self.max_tokens || guard::ends_in_loop(text) {
            Some(Ending::Loop)
        } else if self.ends_at_start_said_again && guard::says_its_start_again(text) {
            Some(Ending::StartSaidAgain)
        } else {
            None
        }
    }
}

/// whisper.cpp aligns a pass's tokens by DTW over the audio up to its last decoded timestamp,
/// or what is left of the audio if less, through a median filter 7 encoder frames wide, and
/// aborts the whole process when that is 7 frames or fewer (0.14 s: `filter_width <
/// a->ne[2]`). So with DTW every pass hears at least this much audio (0.2 s; shorter audio is
/// heard with silence after it, a shorter rest is not heard) ...
pub(super) const DTW_MIN_CENTISECONDS: i64 = 20;
/// ... and no segment ends before this many timestamp steps of 20 ms (0.16 s, 8 encoder
/// frames) into it.
pub(super) const DTW_MIN_END_STEPS: i32 = 8;

/// whisper.cpp's logits filter, called before each token is chosen: the decode of a first pass
/// starts with the watch's forced tokens; once the text tokens after them end in a loop or
/// exceed what the chunk can hold, or say their own start again where the watch asks
/// ([`Watch::ends_at_start_said_again`], noted in [`Watch::said_its_start_again`]), the decode
/// is made to end at once (the segment closed at the chunk's end, then the text ended) instead
/// of looping to its limit; the loop guard then judges the text as usual. With DTW, segments
/// are also kept from ending too early for it ([`keep_segments_from_ending_early`]).
pub(super) unsafe extern "C" fn stop_loops(
    ctx: *mut whisper_rs::WhisperSysContext,
    state: *mut whisper_rs::WhisperSysState,
    tokens: *const whisper_rs::WhisperTokenData,
    n_tokens: std::ffi::c_int,
    logits: *mut f32,
    user_data: *mut c_void,
) {
    if (tokens.is_null() && n_tokens > 0) || logits.is_null() || user_data.is_null() {
        return;
    }
    // SAFETY: whisper.cpp passes the decoder's tokens so far and the logits of the whole
    // vocabulary; `user_data` is the Watch that `params` hands in, alive during the call; the
    // state is the one decoding, whose segments so far it lets us count.
    let (watch, tokens, logits, first_pass) = unsafe {
        let watch = &*(user_data as *const Watch);
        let tokens = match usize::try_from(n_tokens) {
            Ok(n) if n > 0 => std::slice::from_raw_parts(tokens, n),
            _ => &[],
        };
        let n_vocab = whisper_rs::whisper_rs_sys::whisper_n_vocab(ctx).max(0) as usize;
        let first_pass = state.is_null()
            || whisper_rs::whisper_rs_sys::whisper_full_n_segments_from_state(state) == 0;
        (
            watch,
            tokens,
            std::slice::from_raw_parts_mut(logits, n_vocab),
            first_pass,
        )
    };
    if let Some(next) = first_pass.then(|| forced_next(watch, tokens)).flatten() {
        only(logits, next);
        return;
    }
    if tokens.is_empty() {
        return;
    }
    keep_segments_from_ending_early(watch, tokens, logits);
    let after_forced = first_pass && starts_with_forced(watch, tokens);
    let own = if after_forced {
        &tokens[watch.forced.len()..]
    } else {
        tokens
    };
    let text: Vec<i32> = own
        .iter()
        .map(|t| t.id)
        .filter(|&id| id < watch.eot)
        .collect();
    match watch.ending(&text) {
        None => return,
        Some(Ending::StartSaidAgain) if !after_forced => return,
        Some(Ending::StartSaidAgain) => watch.said_its_start_again.store(true, Ordering::Relaxed),
        Some(Ending::Loop) => {}
    }
    let last_is_text = tokens.last().is_some_and(|t| t.id < watch.eot);
    only(
        logits,
        if last_is_text {
            watch.end_timestamp
        } else {
            watch.eot
        },
    );
}

/// Whether the decoder's tokens so far start with every forced token.
fn starts_with_forced(watch: &Watch, tokens: &[whisper_rs::WhisperTokenData]) -> bool {
    !watch.forced.is_empty()
        && tokens.len() >= watch.forced.len()
        && tokens.iter().zip(&watch.forced).all(|(t, &id)| t.id == id)
}

/// The forced token the decoder takes next: while its tokens so far are the forced ones'
/// beginning.
fn forced_next(watch: &Watch, tokens: &[whisper_rs::WhisperTokenData]) -> Option<i32> {
    let next = *watch.forced.get(tokens.len())?;
    tokens
        .iter()
        .zip(&watch.forced)
        .all(|(t, &id)| t.id == id)
        .then_some(next)
}

/// Every logit but `token`'s made impossible.
fn only(logits: &mut [f32], token: i32) {
    if (token as usize) < logits.len() {
        for (id, logit) in logits.iter_mut().enumerate() {
            if id != token as usize {
                *logit = f32::NEG_INFINITY;
            }
        }
    }
}

/// With DTW, after text, while no timestamp of the pass reaches [`Watch::earliest_end`]: the
/// timestamps before it may not end the segment when the decoder would take one of them
/// (whisper's rule: a timestamp when all of them together are likelier than any other token,
/// the likeliest timestamp not before the last one), or whenever it samples; so the pass's last
/// timestamp is never under it. Otherwise nothing is touched, and the decode and its figures
/// are the same as without DTW.
fn keep_segments_from_ending_early(
    watch: &Watch,
    tokens: &[whisper_rs::WhisperTokenData],
    logits: &mut [f32],
) {
    let first = watch.first_timestamp.max(0) as usize;
    let earliest = (watch.earliest_end.max(0) as usize).min(logits.len());
    if earliest <= first || tokens.last().is_none_or(|t| t.id >= watch.eot) {
        return;
    }
    let latest_so_far = tokens
        .iter()
        .map(|t| t.id)
        .filter(|&id| id >= watch.first_timestamp)
        .max();
    if latest_so_far.is_some_and(|id| id >= watch.earliest_end) {
        return;
    }
    let allowed = latest_so_far.map_or(first, |id| id as usize);
    if watch.sampled || takes_an_early_timestamp(logits, first, allowed, earliest) {
        for logit in &mut logits[first..earliest] {
            *logit = f32::NEG_INFINITY;
        }
    }
}

/// Whether a greedy decoder takes a timestamp from `allowed..earliest`: the timestamps from
/// `allowed` on (those from `first`, whisper's first, before it are masked) are together
/// likelier than every token before `first`, and the likeliest of them is under `earliest`.
fn takes_an_early_timestamp(logits: &[f32], first: usize, allowed: usize, earliest: usize) -> bool {
    let (Some(stamps), Some(others)) = (logits.get(allowed..), logits.get(..first)) else {
        return false;
    };
    let Some((likeliest, &top)) = stamps.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))
    else {
        return false;
    };
    if allowed + likeliest >= earliest || top == f32::NEG_INFINITY {
        return false;
    }
    let together = top + stamps.iter().map(|&l| (l - top).exp()).sum::<f32>().ln();
    let best_other = others.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    together > best_other
}

/// whisper.cpp's abort callback: whether the request's cancel flag is set.
pub(super) unsafe extern "C" fn cancel_requested(flag: *mut c_void) -> bool {
    // SAFETY: `params` hands in a pointer to the request's AtomicBool, alive during the call.
    unsafe { (*(flag as *const AtomicBool)).load(Ordering::Relaxed) }
}

/// What is left of a chunk after the last timestamp under which whisper.cpp hears it without
/// the text so far as the prompt (its own rule: 5 s).
pub(super) const SHORT_TAIL_CENTISECONDS: i64 = 500;
/// 16 kHz samples in whisper's time unit (10 ms).
pub(super) const SAMPLES_PER_CENTISECOND: usize = 160;

/// The encoder passes of one `full` call, and where it was stopped before the chunk's rest.
pub(super) struct TailWatch {
    pub(super) length_centiseconds: i64,
    pub(super) passes: AtomicUsize,
    /// The last decoded segment's end (centiseconds) when the pass over the rest was stopped;
    /// -1: not stopped.
    pub(super) stopped_at: AtomicI64,
    /// The decoders align tokens by DTW ([`DTW_MIN_CENTISECONDS`]).
    pub(super) aligned: bool,
}

/// What becomes of an encoder pass of a `full` call after its first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LaterPass {
    /// whisper.cpp goes on from its last decoded timestamp.
    Goes,
    /// Nothing more of the chunk is heard.
    Declined,
    /// Stopped; the engine hears the rest from this moment (centiseconds) itself.
    HeardApart(i64),
}

/// Whisper's full window in centiseconds.
const FULL_WINDOW_CENTISECONDS: i64 = 3_000;

/// What becomes of a pass after the first over a chunk of `length` centiseconds whose last
/// decoded segment ends at `last_end` (None: none decoded). The rest after that segment is heard
/// apart (through a window fitted to it); with DTW a rest too short for it is not heard, and
/// whisper.cpp never goes on by itself, since where its own pass starts is not known here (a
/// pass it took for silence moves it on without a segment).
pub(super) fn later_pass(length: i64, last_end: Option<i64>, aligned: bool) -> LaterPass {
    match last_end {
        Some(end) if end > 0 && end < length => {
            if aligned && length - end < DTW_MIN_CENTISECONDS {
                LaterPass::Declined
            } else {
                LaterPass::HeardApart(end)
            }
        }
        _ if !aligned => LaterPass::Goes,
        // The first pass, through at least the chunk's own length up to 30 s, heard no speech
        // or heard it to the end.
        _ if length <= FULL_WINDOW_CENTISECONDS => LaterPass::Declined,
        Some(end) if end >= length => LaterPass::Declined,
        _ => LaterPass::HeardApart(FULL_WINDOW_CENTISECONDS),
    }
}

/// whisper.cpp's callback before each encoder pass of a `full` call: the first goes ahead; a
/// later one (the audio after the last decoded timestamp, through a window as wide as the
/// first) is stopped, its start kept for [`super::run`]'s decode to hear the rest through a
/// window fitted to it ([`later_pass`]).
pub(super) unsafe extern "C" fn stop_before_the_rest(
    _ctx: *mut whisper_rs::WhisperSysContext,
    state: *mut whisper_rs::WhisperSysState,
    user_data: *mut c_void,
) -> bool {
    if state.is_null() || user_data.is_null() {
        return true;
    }
    // SAFETY: `user_data` is the TailWatch `decode` hands in, alive during the call; `state` is
    // the state whisper.cpp is running, whose segments so far it lets us read.
    unsafe {
        let watch = &*(user_data as *const TailWatch);
        if watch.passes.fetch_add(1, Ordering::Relaxed) == 0 {
            return true;
        }
        let segments = whisper_rs::whisper_rs_sys::whisper_full_n_segments_from_state(state);
        let last_end = (segments > 0).then(|| {
            whisper_rs::whisper_rs_sys::whisper_full_get_segment_t1_from_state(state, segments - 1)
        });
        match later_pass(watch.length_centiseconds, last_end, watch.aligned) {
            LaterPass::Goes => true,
            LaterPass::Declined => false,
            LaterPass::HeardApart(from) => {
                watch.stopped_at.store(from, Ordering::Relaxed);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(max_tokens: usize, ends_at_start_said_again: bool) -> Watch {
        Watch {
            forced: vec![50_364, 7, 8],
            max_tokens,
            eot: 50_256,
            end_timestamp: 50_500,
            first_timestamp: 50_364,
            earliest_end: 50_364,
            sampled: false,
            ends_at_start_said_again,
            said_its_start_again: AtomicBool::new(false),
        }
    }

    #[test]
    fn a_decode_ends_at_a_loop_at_its_most_tokens_and_where_asked_at_its_start_said_again() {
        let sentence = [10, 11, 12, 13, 14, 15, 16];
        let twice: Vec<i32> = sentence.iter().chain(&sentence[..5]).copied().collect();
        assert_eq!(watch(40, true).ending(&twice), Some(Ending::StartSaidAgain));
        assert_eq!(watch(40, false).ending(&twice), None);
        assert_eq!(watch(40, true).ending(&sentence), None);
        assert_eq!(watch(7, true).ending(&sentence), Some(Ending::Loop));
        assert_eq!(watch(40, false).ending(&[3; 8]), Some(Ending::Loop));
    }

    #[test]
    fn an_early_timestamp_is_taken_only_when_timestamps_win_and_it_is_the_likeliest() {
        // Tokens 0..4 text, 4.. timestamps; 4..6 too early.
        let logits = |text: f32, stamps: [f32; 4]| {
            let mut l = vec![text; 4];
            l.extend(stamps);
            l
        };
        assert!(takes_an_early_timestamp(
            &logits(0.0, [5.0, 1.0, 1.0, 1.0]),
            4,
            4,
            6
        ));
        // Text is likelier than the timestamps together.
        assert!(!takes_an_early_timestamp(
            &logits(6.0, [5.0, 1.0, 1.0, 1.0]),
            4,
            4,
            6
        ));
        // The likeliest timestamp ends late enough.
        assert!(!takes_an_early_timestamp(
            &logits(0.0, [1.0, 1.0, 5.0, 1.0]),
            4,
            4,
            6
        ));
        // Timestamps before the last one are masked: the likeliest left is late enough.
        assert!(!takes_an_early_timestamp(
            &logits(0.0, [5.0, 1.0, 3.0, 1.0]),
            4,
            5,
            6
        ));
        // Together they beat text though none alone does.
        assert!(takes_an_early_timestamp(
            &logits(2.0, [1.9, 1.8, 1.0, 1.0]),
            4,
            4,
            6
        ));
    }

    #[test]
    fn a_rest_after_the_last_segment_is_heard_apart_unless_too_short_for_dtw() {
        assert_eq!(
            later_pass(1_200, Some(1_185), false),
            LaterPass::HeardApart(1_185)
        );
        assert_eq!(later_pass(1_200, Some(1_185), true), LaterPass::Declined);
        assert_eq!(
            later_pass(1_200, Some(1_180), true),
            LaterPass::HeardApart(1_180)
        );
        assert_eq!(
            later_pass(1_200, Some(600), true),
            LaterPass::HeardApart(600)
        );
    }

    #[test]
    fn with_dtw_whisper_never_goes_on_by_itself() {
        // Nothing decoded, or decoded to the end: whisper.cpp would go on from where its own
        // pass is, which may leave it too little audio.
        for last_end in [None, Some(0), Some(1_200), Some(1_300)] {
            assert_eq!(later_pass(1_200, last_end, false), LaterPass::Goes);
            assert_eq!(later_pass(1_200, last_end, true), LaterPass::Declined);
        }
        // Longer than one window: the rest after it is heard apart.
        assert_eq!(later_pass(4_000, None, true), LaterPass::HeardApart(3_000));
        assert_eq!(later_pass(4_000, Some(4_000), true), LaterPass::Declined);
    }
}
