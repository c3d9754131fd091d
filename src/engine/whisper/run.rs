//! One chunk of a request, heard on its own through a window fitted to it, heard again as the
//! recovery says when the loop guard or the window's doubts reject the text (a loop that
//! survives every attempt is cut out); the rest after the last decoded timestamp through a
//! window of its own.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use whisper_rs::{FullParams, SamplingStrategy, WhisperState};

use super::super::guard::{self, Trouble};
use super::super::words::{shorten_words_at_pauses, start_words_at_speech};
use super::super::{EngineError, EngineRequest, Segment, Task};
use super::callbacks::{
    DTW_MIN_CENTISECONDS, DTW_MIN_END_STEPS, SAMPLES_PER_CENTISECOND, SHORT_TAIL_CENTISECONDS,
    TailWatch, Watch, cancel_requested, stop_before_the_rest, stop_loops,
};
use super::context::Decoders;
use super::recovery::{Attempt, Recovery, Verdict};
use super::tokens::{self, Reading};
use super::window::{Doubt, EncoderWindow, FULL_WINDOW_FRAMES, doubt};

/// Samples per second of the audio whisper takes.
const SAMPLE_RATE: f64 = 16_000.0;
/// The most rests of one chunk heard on their own after its text stopped early.
const MAX_RESTS: usize = 3;
/// The first attempt's temperature: greedy.
pub(super) const TEMPERATURE: f32 = 0.0;
/// A retry at temperature samples from 0.2 up to 1.0 in steps of 0.2 (whisper.cpp's fallback,
/// which keeps the encoder's output and stops at the first decode its thresholds accept).
const FALLBACK_TEMPERATURE: f32 = 0.2;

fn failed(e: whisper_rs::WhisperError) -> EngineError {
    EngineError::Failed(e.to_string())
}

/// How the engine runs a request.
#[derive(Clone)]
pub(super) struct Settings {
    /// The language every chunk is decoded in; None detects (audio without chunks only).
    pub language: Option<String>,
    pub threads: usize,
    /// Decoder states the chunks are shared out among, `threads` split between them.
    pub workers: usize,
    /// The window for each chunk.
    pub window: EncoderWindow,
    /// How a chunk is heard again when its text is rejected.
    pub recovery: Recovery,
    /// How decoded segments are read (words timed or not).
    pub reading: Reading,
    /// whisper's first timestamp token (`<|0.00|>`).
    pub first_timestamp: i32,
    /// The decoders align tokens by DTW: no pass may hear too little audio for it
    /// ([`DTW_MIN_CENTISECONDS`]).
    pub aligned: bool,
    /// What the start of the request's first chunk was heard as ([`EngineRequest::said_before`]).
    pub said_before: Option<Said>,
}

/// The start of a chunk said before: its text, the tokens of it the decoder is made to read
/// first (after `<|0.00|>`), and how long it lasts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Said {
    pub text: String,
    pub tokens: Vec<i32>,
    pub seconds: f64,
}

/// What a request cost besides its first pass over each chunk.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Chunks heard more than once.
    pub chunks: u64,
    /// Passes after the first, over all chunks.
    pub passes: u64,
    /// Chunks whose every attempt looped, cut where the loop starts.
    pub cut: u64,
    /// Rests after a chunk's last decoded timestamp heard through a window of their own
    /// instead of another pass as wide as the chunk's window.
    pub tails: u64,
    /// Chunks heard after what was said before whose text heard alone was kept instead.
    pub alone: u64,
    /// Rests of chunks whose text stopped early, heard on their own.
    pub rests: u64,
    /// Readings after what was said before ended where they said their own start again
    /// (then heard alone).
    pub start_said_again: u64,
}

impl std::ops::AddAssign for Retries {
    fn add_assign(&mut self, other: Retries) {
        self.chunks += other.chunks;
        self.passes += other.passes;
        self.cut += other.cut;
        self.tails += other.tails;
        self.alone += other.alone;
        self.rests += other.rests;
        self.start_said_again += other.start_said_again;
    }
}

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

/// The part of a chunk after the text said before lasts at least this long (seconds) for a
/// loop in its reading after that text to send it straight to the chunk heard alone, that
/// reading neither heard again nor kept: whisper, made to read the text before, says the
/// chunk's sentence twice ("He began a confused complaint against the wizard... He began a
/// confused complaint...") where it reads it alone once, and a wider window took up to 1.2 s
/// of a live dictation's last chunk to loop again (`scripts/bench-dictation`). Shorter parts
/// are a word or two, which their own audio alone reads worse ("70." after the phone
/// prompts' words before, "7D" alone) and whose retries are cheap (docs/journal/2026-12.md).
const ALONE_AFTER_LOOP_SECONDS: f64 = 3.0;

/// Whether a reading after the text said before that came out as `verdict`, over `seconds`
/// after that text, gives way to the chunk heard alone ([`ALONE_AFTER_LOOP_SECONDS`]).
fn gives_up_after_loop(verdict: Verdict, seconds: f64) -> bool {
    verdict.is_loop() && gives_way_to_alone(seconds)
}

/// Whether a loop in a reading after the text said before, over `seconds` after that text,
/// sends the chunk to be heard alone ([`ALONE_AFTER_LOOP_SECONDS`]): such a reading also ends
/// where it says its own start again ([`Watch::ends_at_start_said_again`]), a loop.
fn gives_way_to_alone(seconds: f64) -> bool {
    seconds >= ALONE_AFTER_LOOP_SECONDS
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
    for (n, attempt) in settings.recovery.attempts(fitted).into_iter().enumerate() {
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

/// The most text tokens a decode of `seconds` of audio writes after the text said before (the
/// tokens it is made to read first): what the audio after that part can hold, and room for that
/// text read once more, which [`guard::drop_said_again`] drops. A loop after the words before
/// then stops where the part after them is full, not where the whole audio would be, which
/// makes such a loop a third shorter (`scripts/bench-dictation`, docs/journal/2026-12.md).
fn most_text_tokens(seconds: f64, said: Option<&Said>) -> usize {
    match said {
        Some(said) => guard::max_tokens(seconds - said.seconds.min(seconds)) + said.tokens.len(),
        None => guard::max_tokens(seconds),
    }
}

/// One chunk as whisper is asked to hear it.
#[derive(Clone, Copy)]
pub(super) struct Chunk<'a> {
    pub(super) samples: &'a [f32],
    /// None detects.
    pub(super) language: Option<&'a str>,
    /// Its start, said before.
    pub(super) said: Option<&'a Said>,
    /// The text heard in the audio just before it, in the same call (the rest of a chunk
    /// whose text stopped early): the prompt goes on from it.
    pub(super) heard_before: Option<&'a str>,
}

/// The decoding parameters of a chunk.
fn params<'a>(
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
const PROMPT_TAIL_BYTES: usize = 1_024;

/// The end of `prompt` that whisper.cpp is handed: at most [`PROMPT_TAIL_BYTES`], from the
/// first word that starts within them.
fn prompt_tail(prompt: &str) -> &str {
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
struct Decoded {
    segments: Vec<Segment>,
    /// The decode was ended where its text said its own start again (a loop;
    /// [`Watch::ends_at_start_said_again`]).
    said_its_start_again: bool,
}

/// What whisper heard in one chunk.
fn transcribe_chunk(
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
fn decode(
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
fn padded_for_dtw(samples: &[f32], aligned: bool) -> std::borrow::Cow<'_, [f32]> {
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
fn is_non_speech_marker(text: &str) -> bool {
    let inner = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    inner.is_some_and(|t| {
        t.chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
    })
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
