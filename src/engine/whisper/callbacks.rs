//! The callbacks whisper.cpp calls during a pass, and what they watch: the decoder's tokens for
//! a loop or more text than the chunk can hold, the request's cancel flag, and the encoder
//! passes of a chunk for a short tail to hear apart.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use super::super::guard;

/// What the decoder is watched for while it decodes a chunk: the most text tokens the chunk can
/// hold, and the tokens that end a decode.
pub(super) struct Watch {
    pub(super) max_tokens: usize,
    /// whisper's end-of-text token: text tokens come before it.
    pub(super) eot: i32,
    /// The timestamp token of the chunk's end (whisper's first timestamp token plus one per
    /// 20 ms).
    pub(super) end_timestamp: i32,
}

/// whisper.cpp's logits filter, called before each token is chosen: once the text tokens so
/// far end in a loop or exceed what the chunk can hold, the decode is made to end at once (the
/// segment closed at the chunk's end, then the text ended) instead of looping to its limit; the
/// loop guard then judges the text as usual.
pub(super) unsafe extern "C" fn stop_loops(
    ctx: *mut whisper_rs::WhisperSysContext,
    _state: *mut whisper_rs::WhisperSysState,
    tokens: *const whisper_rs::WhisperTokenData,
    n_tokens: std::ffi::c_int,
    logits: *mut f32,
    user_data: *mut c_void,
) {
    if tokens.is_null() || logits.is_null() || user_data.is_null() || n_tokens <= 0 {
        return;
    }
    // SAFETY: whisper.cpp passes the decoder's tokens so far and the logits of the whole
    // vocabulary; `user_data` is the Watch that `params` hands in, alive during the call.
    let (watch, tokens, logits) = unsafe {
        let watch = &*(user_data as *const Watch);
        let tokens = std::slice::from_raw_parts(tokens, n_tokens as usize);
        let n_vocab = whisper_rs::whisper_rs_sys::whisper_n_vocab(ctx).max(0) as usize;
        (
            watch,
            tokens,
            std::slice::from_raw_parts_mut(logits, n_vocab),
        )
    };
    let text: Vec<i32> = tokens
        .iter()
        .map(|t| t.id)
        .filter(|&id| id < watch.eot)
        .collect();
    if text.len() < watch.max_tokens && !guard::ends_in_loop(&text) {
        return;
    }
    let last_is_text = tokens.last().is_some_and(|t| t.id < watch.eot);
    let only = if last_is_text {
        watch.end_timestamp
    } else {
        watch.eot
    };
    if (only as usize) < logits.len() {
        for (id, logit) in logits.iter_mut().enumerate() {
            if id != only as usize {
                *logit = f32::NEG_INFINITY;
            }
        }
    }
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
}

/// whisper.cpp's callback before each encoder pass of a `full` call: the first goes ahead; a
/// later one (the audio after the last decoded timestamp, through a window as wide as the
/// first) is stopped, its start kept for [`super::run`]'s decode to hear the rest through a
/// window fitted to it.
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
        if segments <= 0 {
            return true;
        }
        let end =
            whisper_rs::whisper_rs_sys::whisper_full_get_segment_t1_from_state(state, segments - 1);
        let left = watch.length_centiseconds - end;
        if end <= 0 || left <= 0 {
            return true;
        }
        watch.stopped_at.store(end, Ordering::Relaxed);
        false
    }
}
