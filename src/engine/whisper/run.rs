//! One request on one decoder state: the language settled once (given, detected among a
//! shortlist, or detected by the first chunk), then each chunk transcribed on its own with its
//! segments moved to the request's timeline.

use std::ops::Range;

use whisper_rs::{FullParams, SamplingStrategy, WhisperState};

use super::super::{EngineError, EngineOutput, EngineRequest, LanguageChoice, Segment, Task};

/// Samples per second of the audio whisper takes.
const SAMPLE_RATE: f64 = 16_000.0;

fn failed(e: whisper_rs::WhisperError) -> EngineError {
    EngineError::Failed(e.to_string())
}

pub(super) fn run(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    multilingual: bool,
    threads: usize,
) -> Result<EngineOutput, EngineError> {
    let chunks: Vec<&[f32]> = request
        .chunks
        .iter()
        .filter_map(|range| request.samples.get(range.clone()))
        .collect();
    // The language to decode with; None means detect (with the first chunk).
    let mut language = settle_language(state, request, &chunks, multilingual, threads)?;
    let mut segments = Vec::new();
    for (range, samples) in request.chunks.iter().zip(&chunks) {
        let heard = transcribe_chunk(state, request, samples, language.as_deref(), threads)?;
        if language.is_none() {
            language =
                whisper_rs::get_lang_str(state.full_lang_id_from_state()).map(str::to_string);
        }
        segments.extend(in_timeline(heard, range));
    }
    let text = segments
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(EngineOutput {
        text,
        language,
        segments,
        processing_time: None,
    })
}

/// The language every chunk is decoded in: English for English-only models, the one given, the
/// most probable of a shortlist (judged on the first chunk), or None to detect.
fn settle_language(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    chunks: &[&[f32]],
    multilingual: bool,
    threads: usize,
) -> Result<Option<String>, EngineError> {
    if !multilingual {
        return Ok(Some("en".into()));
    }
    match &request.language {
        LanguageChoice::Auto => Ok(None),
        LanguageChoice::Exact(code) => {
            language_id(code).ok_or_else(|| EngineError::UnknownLanguage(code.clone()))?;
            Ok(Some(code.to_ascii_lowercase()))
        }
        LanguageChoice::Shortlist(codes) => {
            let ids = codes
                .iter()
                .map(|c| language_id(c).ok_or_else(|| EngineError::UnknownLanguage(c.clone())))
                .collect::<Result<Vec<_>, _>>()?;
            let Some(first) = chunks.first() else {
                return Ok(codes.first().map(|c| c.to_ascii_lowercase()));
            };
            state.pcm_to_mel(first, threads).map_err(failed)?;
            let (_, probabilities) = state.lang_detect(0, threads).map_err(failed)?;
            let probability = |id: &i32| probabilities.get(*id as usize).copied().unwrap_or(0.0);
            Ok(ids
                .iter()
                .zip(codes)
                .max_by(|(a, _), (b, _)| probability(a).total_cmp(&probability(b)))
                .map(|(_, code)| code.to_ascii_lowercase()))
        }
    }
}

/// The decoding parameters of every chunk (the language: None detects).
fn params<'a>(
    request: &'a EngineRequest<'_>,
    prompt: Option<&'a str>,
    language: Option<&'a str>,
    threads: usize,
) -> FullParams<'a, 'a> {
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    params.set_n_threads(threads as i32);
    params.set_language(Some(language.unwrap_or("auto")));
    params.set_translate(request.task == Task::Translate);
    params.set_no_context(true);
    params.set_print_special(false);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    // No temperature fallback: it samples at random from the pooled state's generator, so the
    // same audio could read differently from one request to the next.
    params.set_temperature(0.0);
    params.set_temperature_inc(0.0);
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        params.set_initial_prompt(prompt);
    }
    params
}

/// What whisper heard in one chunk: its segments, timed from the chunk's start.
fn transcribe_chunk(
    state: &mut WhisperState,
    request: &EngineRequest<'_>,
    samples: &[f32],
    language: Option<&str>,
    threads: usize,
) -> Result<Vec<Segment>, EngineError> {
    let prompt = request
        .initial_prompt
        .as_deref()
        .map(|p| p.replace('\0', ""));
    let params = params(request, prompt.as_deref(), language, threads);
    state.full(params, samples).map_err(failed)?;
    let mut segments = Vec::new();
    for segment in state.as_iter() {
        let text = segment.to_str_lossy().map_err(failed)?.trim().to_string();
        if text.is_empty() || is_non_speech_marker(&text) {
            continue;
        }
        segments.push(Segment {
            start: segment.start_timestamp() as f64 / 100.0,
            end: segment.end_timestamp() as f64 / 100.0,
            text,
        });
    }
    Ok(segments)
}

/// A chunk's segments moved from its own timeline to the request's, and kept inside the chunk.
fn in_timeline(segments: Vec<Segment>, chunk: &Range<usize>) -> impl Iterator<Item = Segment> {
    let start = chunk.start as f64 / SAMPLE_RATE;
    let end = chunk.end as f64 / SAMPLE_RATE;
    segments.into_iter().map(move |s| Segment {
        start: (start + s.start).min(end),
        end: (start + s.end).min(end),
        text: s.text,
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

/// A language code whisper knows, checked without handing odd bytes to C.
fn language_id(code: &str) -> Option<i32> {
    if code.is_empty() || code.len() > 8 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    whisper_rs::get_lang_id(&code.to_ascii_lowercase())
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
        let heard = vec![
            Segment {
                start: 0.0,
                end: 2.5,
                text: "a".into(),
            },
            Segment {
                start: 2.5,
                end: 30.0,
                text: "b".into(),
            },
        ];
        let moved: Vec<Segment> = in_timeline(heard, &(160_000..208_000)).collect();
        assert_eq!((moved[0].start, moved[0].end), (10.0, 12.5));
        assert_eq!((moved[1].start, moved[1].end), (12.5, 13.0));
    }
}
