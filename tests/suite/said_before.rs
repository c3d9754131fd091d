//! A chunk heard after what was said before it, on the real whisper engine and real voices: the
//! decoder made to read the audio in front as its committed text returns only the words after
//! it, timed after it; a text in front that does not match its audio never costs the chunk its
//! words (the chunk heard alone is kept where the reading after it fails).
//! Skipped without VERBATIM_TEST_MODELS.

#![cfg(feature = "whisper")]

use crate::common;

use verbatim::engine::whisper::WhisperEngine;
use verbatim::engine::{Engine, EngineOutput, EngineRequest, SaidBefore, Task};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::{Clip, Corpus, word_errors};

const RATE: f64 = 16_000.0;

/// `before`, half a second of silence, then `after`; and where `after` starts.
fn joined(before: &Clip, after: &Clip) -> (Vec<f32>, usize) {
    let mut samples = before.samples.to_vec();
    samples.resize(samples.len() + 8_000, 0.0);
    let start = samples.len();
    samples.extend_from_slice(&after.samples);
    (samples, start)
}

/// `samples` heard as one chunk whose first `said` samples were said as `text`.
fn hear_after(engine: &WhisperEngine, samples: &[f32], said: usize, text: &str) -> EngineOutput {
    let request = EngineRequest {
        said_before: Some(SaidBefore {
            text: text.into(),
            samples: said,
        }),
        chunks: std::iter::once(0..samples.len()).collect(),
        ..common::engine::request(samples, true, "en", Task::Transcribe, false)
    };
    engine.transcribe("tiny.en", &request).expect("transcribed")
}

/// The engine, the corpus's "go forward" then "go somewhere" recordings joined, where the second
/// starts and what it says; None without the models.
fn two_recordings() -> Option<(WhisperEngine, Vec<f32>, usize, String)> {
    let (engine, samples, start, _, second) = recordings("real-goforward", "real-something")?;
    Some((engine, samples, start, second))
}

/// The engine, the corpus's recordings `first` then `second` joined, where the second starts,
/// and what each says; None without the models.
fn recordings(
    first: &str,
    second: &str,
) -> Option<(WhisperEngine, Vec<f32>, usize, String, String)> {
    let models = common::test_models()?;
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let (first, second) = (corpus.clip(first).unwrap(), corpus.clip(second).unwrap());
    let (samples, start) = joined(first, second);
    let engine = WhisperEngine::new(models, common::ENGINE_THREADS);
    let texts = (first.entry.text.clone(), second.entry.text.clone());
    Some((engine, samples, start, texts.0, texts.1))
}

fn errors(reference: &str, heard: &str) -> usize {
    word_errors(&normalize_numbers(reference), &normalize_numbers(heard)).0
}

#[test]
fn a_chunk_read_after_its_committed_start_returns_only_the_words_after_it() {
    let Some((engine, samples, start, second)) = two_recordings() else {
        return;
    };
    assert!(engine.hears_said_before());
    let heard = hear_after(&engine, &samples, start, "Go forward 10 meters.");
    assert_eq!(errors(&second, &heard.text), 0, "{}", heard.text);
    let from = start as f64 / RATE;
    assert!(
        heard.segments.iter().all(|s| s.start >= from - 0.01),
        "{:?}",
        heard.segments
    );
    assert_eq!(engine.retries().alone, 0, "{:?}", engine.retries());
}

#[test]
fn a_text_in_front_that_its_audio_does_not_say_never_costs_the_chunk_its_words() {
    let Some((engine, samples, start, second)) = two_recordings() else {
        return;
    };
    // The text in front already says the chunk's words: read after it, whisper has nothing
    // left to say (or says them again), and the chunk heard alone is kept.
    let heard = hear_after(&engine, &samples, start, "Go somewhere and do something.");
    assert_eq!(errors(&second, &heard.text), 0, "{}", heard.text);
    // Audio in front with no text (a chunk heard as nothing) is not heard at all.
    let heard = hear_after(&engine, &samples, start, "");
    assert_eq!(errors(&second, &heard.text), 0, "{}", heard.text);
}

/// The corpus's recordings `first` then `second`, the second read after the text in front
/// that `in_front` picks of their two texts: the chunk heard alone follows that reading at once
/// (no retry through a wider window), and is kept.
fn heard_alone_at_once(
    first: &str,
    second: &str,
    in_front: for<'a> fn(&'a str, &'a str) -> &'a str,
) {
    let Some((engine, samples, start, first, second)) = recordings(first, second) else {
        return;
    };
    let heard = hear_after(&engine, &samples, start, in_front(&first, &second));
    assert!(errors(&second, &heard.text) <= 2, "{}", heard.text);
    let retries = engine.retries();
    assert_eq!((retries.alone, retries.passes), (1, 0), "{retries:?}");
}

#[test]
fn a_reading_after_the_text_in_front_ends_where_it_says_its_own_start_again() {
    // Read after "Go somewhere and do something.", tiny.en says the wizard sentence and starts
    // it over; the decode ends there rather than run on, and the chunk heard alone is kept.
    let Some((engine, samples, start, first, second)) = recordings("real-something", "real-wizard")
    else {
        return;
    };
    let heard = hear_after(&engine, &samples, start, &first);
    assert!(errors(&second, &heard.text) <= 2, "{}", heard.text);
    let retries = engine.retries();
    assert_eq!(
        (retries.start_said_again, retries.alone),
        (1, 1),
        "{retries:?}"
    );
}

#[test]
fn a_sentence_its_speaker_says_twice_after_the_text_in_front_is_heard_twice() {
    // The reading after the text in front ends where the sentence starts again, and the chunk
    // heard alone keeps both sayings.
    let Some((engine, mut samples, start, first, second)) =
        recordings("real-something", "real-wizard")
    else {
        return;
    };
    let said_again = samples[start..].to_vec();
    samples.resize(samples.len() + 8_000, 0.0);
    samples.extend_from_slice(&said_again);
    let heard = hear_after(&engine, &samples, start, &first);
    let twice = format!("{second} {second}");
    assert!(errors(&twice, &heard.text) <= 2, "{}", heard.text);
    assert_eq!(
        engine.retries().start_said_again,
        1,
        "{:?}",
        engine.retries()
    );
}

#[test]
fn a_reading_after_the_text_in_front_that_hears_nothing_is_not_heard_again_wider() {
    // Read after the wizard sentence, tiny.en hears nothing in the Overwatch one (and did
    // through a window twice as wide, when it was tried).
    heard_alone_at_once("real-wizard", "real-overwatch", |first, _| first);
}

#[test]
fn a_longer_reading_after_the_text_in_front_that_loops_is_not_heard_again_wider() {
    // The wizard sentence written in front of its own audio, after the long Dickens passage:
    // made to read past it, tiny.en says the sentence twice over the 4.9 s after it (a loop,
    // which a window twice as wide did again when it was tried).
    heard_alone_at_once("real-two-cities", "real-wizard", |_, second| second);
}
