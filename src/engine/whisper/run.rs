//! One request on one decoder state, its language settled: each chunk transcribed on its own,
//! through a window fitted to it (again through the full window when the text looks wrong),
//! with its segments moved to the request's timeline.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use whisper_rs::{FullParams, SamplingStrategy, WhisperState};

use super::super::words::{shorten_words_at_pauses, start_words_at_speech};
use super::super::{EngineError, EngineOutput, EngineRequest, Segment, Task};
use super::tokens::{self, Reading};
use super::window::{EncoderWindow, doubt};

/// Samples per second of the audio whisper takes.
const SAMPLE_RATE: f64 = 16_000.0;
/// The one sampling temperature: decoding is greedy, without fallback to higher ones (it
/// samples at random from the pooled state's generator, so the same audio could read
/// differently from one request to the next).
pub(super) const TEMPERATURE: f32 = 0.0;

fn failed(e: whisper_rs::WhisperError) -> EngineError {
    EngineError::Failed(e.to_string())
}

/// How the engine runs a request.
pub(super) struct Settings {
    /// The language every chunk is decoded in; None detects (audio without chunks only).
    pub language: Option<String>,
    pub threads: usize,
    /// The window for each chunk.
    pub window: EncoderWindow,
    /// How decoded segments are read (words timed or not).
    pub reading: Reading,
}

/// The request's output, and how many chunks were heard again through the full window.
pub(super) fn run(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    settings: &Settings,
) -> Result<(EngineOutput, u64), EngineError> {
    let chunks: Vec<&[f32]> = request
        .chunks
        .iter()
        .filter_map(|range| request.samples.get(range.clone()))
        .collect();
    let language = settings.language.clone();
    let mut segments = Vec::new();
    let mut reruns = 0;
    for (range, samples) in request.chunks.iter().zip(&chunks) {
        let seconds = samples.len() as f64 / SAMPLE_RATE;
        let fitted = settings.window.frames_for(seconds);
        let mut chunk = Chunk {
            samples,
            language: language.as_deref(),
            window: fitted,
        };
        let mut heard = transcribe_chunk(state, request, &chunk, settings)?;
        if let Some(frames) = fitted
            && let Some(doubt) = doubt(&heard, seconds)
        {
            tracing::debug!(
                "{seconds:.1} s chunk in a {frames}-frame window: {doubt:?}; heard again in full"
            );
            chunk.window = None;
            heard = transcribe_chunk(state, request, &chunk, settings)?;
            reruns += 1;
        }
        segments.extend(in_timeline(heard, range));
    }
    let text = segments
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let output = EngineOutput {
        text,
        language,
        segments,
        processing_time: None,
    };
    Ok((output, reruns))
}

/// One chunk as whisper is asked to hear it.
struct Chunk<'a> {
    samples: &'a [f32],
    /// None detects.
    language: Option<&'a str>,
    /// The encoder window in frames; None: the model's full window.
    window: Option<usize>,
}

/// whisper.cpp's abort callback: whether the request's cancel flag is set.
unsafe extern "C" fn cancel_requested(flag: *mut c_void) -> bool {
    // SAFETY: `params` hands in a pointer to the request's AtomicBool, alive during the call.
    unsafe { (*(flag as *const AtomicBool)).load(Ordering::Relaxed) }
}

/// The decoding parameters of a chunk.
fn params<'a>(
    request: &'a EngineRequest<'_>,
    prompt: Option<&'a str>,
    chunk: &Chunk<'a>,
    settings: &Settings,
) -> FullParams<'a, 'a> {
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    params.set_n_threads(settings.threads as i32);
    params.set_language(Some(chunk.language.unwrap_or("auto")));
    if let Some(frames) = chunk.window {
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
    params.set_translate(request.task == Task::Translate);
    params.set_no_context(true);
    params.set_print_special(false);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    params.set_temperature(TEMPERATURE);
    params.set_temperature_inc(0.0);
    // Times for each token (cheap; DTW's, when the context aligns, come on top).
    params.set_token_timestamps(settings.reading.words);
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        params.set_initial_prompt(prompt);
    }
    params
}

/// What whisper heard in one chunk: its segments, timed from the chunk's start.
fn transcribe_chunk(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    chunk: &Chunk<'_>,
    settings: &Settings,
) -> Result<Vec<Segment>, EngineError> {
    let prompt = request
        .initial_prompt
        .as_deref()
        .map(|p| p.replace('\0', ""));
    if request.cancel.is_cancelled() {
        return Err(EngineError::Cancelled);
    }
    let params = params(request, prompt.as_deref(), chunk, settings);
    let heard = state.full(params, chunk.samples);
    if request.cancel.is_cancelled() {
        return Err(EngineError::Cancelled);
    }
    heard.map_err(failed)?;
    let mut segments = Vec::new();
    // Every segment is read, kept or not, for DTW's moments run on from one to the next.
    let mut reader = tokens::Reader::new(&settings.reading);
    for segment in state.as_iter() {
        let text = segment.to_str_lossy().map_err(failed)?.trim().to_string();
        let read = reader.read(&segment, text)?;
        if !read.text.is_empty() && !is_non_speech_marker(&read.text) {
            segments.push(read);
        }
    }
    if settings.reading.words {
        start_words_at_speech(&mut segments, chunk.samples);
        shorten_words_at_pauses(&mut segments);
    }
    Ok(segments)
}

/// A chunk's segments moved from its own timeline to the request's, and kept inside the chunk.
fn in_timeline(segments: Vec<Segment>, chunk: &Range<usize>) -> impl Iterator<Item = Segment> {
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
