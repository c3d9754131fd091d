//! One decode of a chunk through whisper.cpp: its parameters (window, prompt, the text said
//! before it forced in front, the callbacks that stop loops early), the pass itself, and its
//! segments placed in the chunk's timeline.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use whisper_rs::{FullParams, SamplingStrategy, WhisperState};

use super::super::guard::{self};
use super::super::words::{shorten_words_at_pauses, start_words_at_speech};
use super::super::{EngineError, EngineRequest, Segment, Task};
use super::callbacks::{
    DTW_MIN_CENTISECONDS, DTW_MIN_END_STEPS, SAMPLES_PER_CENTISECOND, SHORT_TAIL_CENTISECONDS,
    TailWatch, Watch, cancel_requested, stop_before_the_rest, stop_loops,
};
use super::pass::{
    Chunk, FALLBACK_TEMPERATURE, Retries, SAMPLE_RATE, Said, Settings, TEMPERATURE, failed,
    gives_way_to_alone,
};
use super::recovery::Attempt;
use super::tokens::{self, Reading};
use super::window::FULL_WINDOW_FRAMES;

/// The most text tokens a decode of `seconds` of audio writes after the text said before (the
/// tokens it is made to read first): what the audio after that part can hold, and room for that
/// text read once more, which [`guard::drop_said_again`] drops. A loop after the words before
/// then stops where the part after them is full, not where the whole audio would be, which
/// makes such a loop a third shorter (`scripts/bench-dictation`, docs/journal/2026-12.md).
pub(super) fn most_text_tokens(seconds: f64, said: Option<&Said>) -> usize {
    match said {
        Some(said) => guard::max_tokens(seconds - said.seconds.min(seconds)) + said.tokens.len(),
        None => guard::max_tokens(seconds),
    }
}

/// The decoding parameters of a chunk.
pub(super) fn params<'a>(
    request: &'a EngineRequest<'_>,
    prompt: Option<&'a str>,
    chunk: &Chunk<'a>,
    attempt: &Attempt,
    watch: &'a Watch,
    settings: &Settings,
) -> FullParams<'a, 'a> {
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    params.set_n_threads(settings.threads as i32);
    params.set_language(Some(chunk.language.unwrap_or("auto")));
    if let Some(frames) = attempt.window {
        params.set_audio_ctx(frames as i32);
    }
    // whisper.cpp polls the request's cancel flag between the steps of every encoder and
    // decoder pass. (whisper-rs's set_abort_callback_safe passes its boxed closure under the
    // wrong type, so the flag goes in as plain data.)
    // SAFETY: the flag belongs to `request`, which the parameters cannot outlive ('a).
    unsafe {
        params.set_abort_callback(Some(cancel_requested));
        params.set_abort_callback_user_data(
            request.cancel.flag() as *const AtomicBool as *mut c_void,
        );
    }
    // SAFETY: the watch outlives the parameters ('a) and is only read.
    unsafe {
        params.set_filter_logits_callback(Some(stop_loops));
        params.set_filter_logits_callback_user_data(watch as *const Watch as *mut c_void);
    }
    params.set_translate(request.task == Task::Translate);
    // whisper.cpp drops a decode it takes for silence; the guard judges it with the same rule.
    params.set_no_speech_thold(guard::no_speech_bar(request.provisional) as f32);
    params.set_no_context(true);
    params.set_print_special(false);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    if attempt.sampled {
        params.set_temperature(FALLBACK_TEMPERATURE);
        params.set_temperature_inc(FALLBACK_TEMPERATURE);
    } else {
        params.set_temperature(TEMPERATURE);
        params.set_temperature_inc(0.0);
    }
    // Times for each token (cheap; DTW's, when the context aligns, come on top).
    params.set_token_timestamps(settings.reading.words);
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        params.set_initial_prompt(prompt_tail(prompt));
    }
    params
}

/// The most of a prompt whisper.cpp is handed: its first try at tokenizing holds 1,024 tokens
/// (a longer prompt is tokenized again, with an error in its log, for every pass), and a token
/// is at least a byte. It keeps only the last 224 tokens anyway; English averages about 4 bytes
/// a token.
pub(super) const PROMPT_TAIL_BYTES: usize = 1_024;

/// The end of `prompt` that whisper.cpp is handed: at most [`PROMPT_TAIL_BYTES`], from the
/// first word that starts within them.
pub(super) fn prompt_tail(prompt: &str) -> &str {
    if prompt.len() <= PROMPT_TAIL_BYTES {
        return prompt;
    }
    let mut start = prompt.len() - PROMPT_TAIL_BYTES;
    while !prompt.is_char_boundary(start) {
        start += 1;
    }
    let tail = &prompt[start..];
    match tail.find(char::is_whitespace) {
        Some(space) if !prompt[..start].ends_with(char::is_whitespace) => {
            tail[space..].trim_start()
        }
        _ => tail.trim_start(),
    }
}

/// What one decode of a chunk heard: its segments, timed from the chunk's start.
pub(super) struct Decoded {
    pub(super) segments: Vec<Segment>,
    /// The decode was ended where its text said its own start again (a loop;
    /// [`Watch::ends_at_start_said_again`]).
    pub(super) said_its_start_again: bool,
}

/// What whisper heard in one chunk.
pub(super) fn transcribe_chunk(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    attempt: &Attempt,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<Decoded, EngineError> {
    let prompt = match (request.initial_prompt.as_deref(), chunk.heard_before) {
        (Some(given), Some(heard)) => Some(format!("{given} {heard}")),
        (given, heard) => given.or(heard).map(str::to_string),
    }
    .map(|p| p.replace('\0', ""));
    decode(
        state,
        request,
        prompt.as_deref(),
        chunk,
        attempt,
        settings,
        retries,
    )
}

/// One whisper.cpp pass over a chunk. whisper.cpp goes on from the last timestamp it decoded
/// when that falls short of the chunk's end, with another encoder pass as wide as the first;
/// that pass is stopped and the rest is heard here through a window fitted to it (the full one
/// when the chunk's was), with the text so far as the prompt as whisper.cpp would (none for a
/// rest under [`SHORT_TAIL_CENTISECONDS`], as whisper.cpp hears a short tail). So a request
/// whose words are timed by DTW is heard as one without words (see
/// [`super::callbacks::later_pass`] for what DTW cannot hear).
pub(super) fn decode(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    prompt: Option<&str>,
    chunk: &Chunk<'_>,
    attempt: &Attempt,
    settings: &Settings,
    retries: &mut Retries,
) -> Result<Decoded, EngineError> {
    if request.cancel.is_cancelled() {
        return Err(EngineError::Cancelled);
    }
    // With DTW, audio too short for its filter is heard with silence after it.
    let padded = padded_for_dtw(chunk.samples, settings.aligned);
    let samples: &[f32] = &padded;
    let seconds = samples.len() as f64 / SAMPLE_RATE;
    let said_tokens = chunk.said.map_or(&[][..], |said| &said.tokens[..]);
    let watch = Watch {
        forced: match chunk.said {
            Some(said) => std::iter::once(settings.first_timestamp)
                .chain(said.tokens.iter().copied())
                .collect(),
            None => Vec::new(),
        },
        max_tokens: most_text_tokens(seconds, chunk.said),
        eot: settings.reading.first_special,
        end_timestamp: settings.first_timestamp
            + ((seconds * 50.0).ceil() as i32).min(FULL_WINDOW_FRAMES as i32),
        first_timestamp: settings.first_timestamp,
        earliest_end: settings.first_timestamp + DTW_MIN_END_STEPS * i32::from(settings.aligned),
        sampled: attempt.sampled,
        ends_at_start_said_again: chunk
            .said
            .is_some_and(|said| gives_way_to_alone(seconds - said.seconds.min(seconds))),
        said_its_start_again: AtomicBool::new(false),
    };
    let tail = TailWatch {
        length_centiseconds: (seconds * 100.0) as i64,
        passes: AtomicUsize::new(0),
        stopped_at: AtomicI64::new(-1),
        aligned: settings.aligned,
    };
    let mut params = params(request, prompt, chunk, attempt, &watch, settings);
    // SAFETY: `tail` outlives the call to `full`, which is the only user of the pointer.
    unsafe {
        params.set_start_encoder_callback(Some(stop_before_the_rest));
        params.set_start_encoder_callback_user_data(&tail as *const TailWatch as *mut c_void);
    }
    let started = std::time::Instant::now();
    let heard = {
        let _watching = super::log::watching(request.cancel.flag());
        state.full(params, samples)
    };
    if request.cancel.is_cancelled() {
        return Err(EngineError::Cancelled);
    }
    heard.map_err(failed)?;
    tracing::trace!(
        seconds,
        window = attempt.window,
        forced = watch.forced.len(),
        tokens = state.as_iter().map(|s| s.n_tokens().max(0)).sum::<i32>(),
        took_ms = started.elapsed().as_millis() as u64,
        "whisper pass"
    );
    let mut segments = Vec::new();
    // Every segment is read, kept or not, for DTW's moments run on from one to the next.
    let reading = Reading {
        temperature: if attempt.sampled {
            FALLBACK_TEMPERATURE
        } else {
            TEMPERATURE
        },
        ..settings.reading
    };
    let mut reader = tokens::Reader::new(&reading).skipping(said_tokens.len());
    for segment in state.as_iter() {
        let text = segment.to_str_lossy().map_err(failed)?.trim().to_string();
        let read = reader.read(&segment, text)?;
        if !read.text.is_empty() && !is_non_speech_marker(&read.text) {
            segments.push(read);
        }
    }
    if samples.len() > chunk.samples.len() {
        segments = in_timeline(segments, &(0..chunk.samples.len())).collect();
    }
    if settings.reading.words {
        start_words_at_speech(&mut segments, chunk.samples);
        shorten_words_at_pauses(&mut segments);
    }
    let stopped_at = tail.stopped_at.load(Ordering::Relaxed);
    if stopped_at > 0 {
        let start = (stopped_at as usize * SAMPLES_PER_CENTISECOND).min(samples.len());
        let rest = &samples[start..];
        let rest_seconds = rest.len() as f64 / SAMPLE_RATE;
        let tail_attempt = Attempt {
            // A pass through the full window hears its rest through the full window too.
            window: attempt
                .window
                .and_then(|_| settings.window.frames_for(rest_seconds)),
            ..*attempt
        };
        let tail_chunk = Chunk {
            samples: rest,
            language: chunk.language,
            said: None,
            heard_before: None,
        };
        retries.tails += 1;
        // The text so far is the rest's prompt, as whisper.cpp's next pass would have it, but
        // for a short rest (whisper.cpp drops the prompt there).
        let said =
            (rest.len() >= SHORT_TAIL_CENTISECONDS as usize * SAMPLES_PER_CENTISECOND).then(|| {
                let said: Vec<&str> = prompt
                    .into_iter()
                    .chain(segments.iter().map(|s| s.text.as_str()))
                    .collect();
                said.join(" ")
            });
        let heard = decode(
            state,
            request,
            said.as_deref(),
            &tail_chunk,
            &tail_attempt,
            settings,
            retries,
        )?;
        segments.extend(in_timeline(heard.segments, &(start..samples.len())));
    }
    let said_its_start_again = watch.said_its_start_again.load(Ordering::Relaxed);
    if said_its_start_again {
        retries.start_said_again += 1;
    }
    Ok(Decoded {
        segments,
        said_its_start_again,
    })
}

/// `samples`, with silence after them up to [`DTW_MIN_CENTISECONDS`] when the decoders align by
/// DTW.
pub(super) fn padded_for_dtw(samples: &[f32], aligned: bool) -> std::borrow::Cow<'_, [f32]> {
    let least = DTW_MIN_CENTISECONDS as usize * SAMPLES_PER_CENTISECOND;
    if !aligned || samples.len() >= least || samples.is_empty() {
        return std::borrow::Cow::Borrowed(samples);
    }
    let mut padded = samples.to_vec();
    padded.resize(least, 0.0);
    std::borrow::Cow::Owned(padded)
}

/// A chunk's segments moved from its own timeline to the request's, and kept inside the chunk.
pub(super) fn in_timeline(
    segments: Vec<Segment>,
    chunk: &Range<usize>,
) -> impl Iterator<Item = Segment> {
    let start = chunk.start as f64 / SAMPLE_RATE;
    let end = chunk.end as f64 / SAMPLE_RATE;
    segments.into_iter().map(move |s| {
        let mut moved = s.shifted(start);
        moved.start = moved.start.min(end);
        moved.end = moved.end.min(end);
        for word in &mut moved.words {
            word.start = word.start.min(end);
            word.end = word.end.min(end);
        }
        moved
    })
}

/// whisper.cpp's markers for stretches without speech (`[BLANK_AUDIO]`, `[ Silence ]`): not
/// words anyone said, so silence transcribes to empty text.
pub(super) fn is_non_speech_marker(text: &str) -> bool {
    let inner = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    inner.is_some_and(|t| {
        t.chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
    })
}
