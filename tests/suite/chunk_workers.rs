//! How the whisper engine hears a file's chunks: shared out among several decoder states, with
//! the same text and segment times as one state hearing them in turn, segments in the file's
//! order, and a cancelled request stopping every worker; the short tail after a chunk's last
//! decoded timestamp heard through a window of its own, its words kept; the Moonshine engine's
//! chunks shared out among copies of its model the same way. Skipped without
//! VERBATIM_TEST_MODELS (fails under CI).

#![cfg(feature = "whisper")]

use crate::common;

use common::engine::hear;
use common::test_models;
use verbatim::audio::vad;
use verbatim::engine::whisper::WhisperEngine;
use verbatim::engine::{Engine, EngineError, EngineOutput, EngineRequest, Task};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::{Corpus, word_errors};

/// The corpus's real English recordings joined with 4 s of silence, so that each is a chunk of
/// its own.
fn recordings_apart() -> Vec<f32> {
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let mut samples = Vec::new();
    let real = corpus
        .clips()
        .iter()
        .filter(|c| c.id().starts_with("real-") && c.entry.language == "en")
        .filter(|c| c.duration() < 15.0)
        .take(5);
    for clip in real {
        samples.extend_from_slice(&clip.samples);
        samples.extend(std::iter::repeat_n(0.0, 4 * 16_000));
    }
    samples
}

/// A request for `samples` in English, cancelled before it is made.
fn cancelled(samples: &[f32]) -> EngineRequest<'_> {
    let request = common::engine::request(samples, true, "en", Task::Transcribe, false);
    request.cancel.cancel();
    request
}

/// What `engine` hears of `samples` with `model`, in English, speech detection on.
fn hear_english(engine: &dyn Engine, model: &str, samples: &[f32], words: bool) -> EngineOutput {
    hear(engine, model, samples, true, "en", Task::Transcribe, words)
}

#[test]
fn chunks_heard_by_two_workers_read_as_by_one() {
    let Some(models) = test_models() else { return };
    let samples = recordings_apart();
    let chunks = vad::chunks_to_hear(&samples, true);
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    for words in [false, true] {
        // One thread per decoder state either way (`common::ENGINE_THREADS`: threads that
        // wait for each other spin on a busy machine).
        let alone = WhisperEngine::new(models.clone(), common::ENGINE_THREADS).with_workers(1);
        let shared = WhisperEngine::new(models.clone(), 2).with_workers(2);
        let one = hear_english(&alone, "tiny.en", &samples, words);
        let two = hear_english(&shared, "tiny.en", &samples, words);
        assert!(one.segments.len() >= chunks.len(), "{:?}", one.segments);
        assert_eq!(one.text, two.text, "words={words}");
        assert_eq!(one.segments, two.segments, "words={words}");
        assert!(
            two.segments.windows(2).all(|w| w[0].start <= w[1].start),
            "{:?}",
            two.segments
        );
    }
}

#[test]
fn a_cancelled_request_stops_every_worker() {
    let Some(models) = test_models() else { return };
    let samples = recordings_apart();
    let engine = WhisperEngine::new(models, 2).with_workers(2);
    let result = engine.transcribe("tiny.en", &cancelled(&samples));
    assert!(matches!(result, Err(EngineError::Cancelled)), "{result:?}");
    // The engine still hears the next request.
    let heard = hear_english(&engine, "tiny.en", &samples, false);
    assert!(!heard.text.is_empty());
}

#[test]
fn the_short_tail_after_the_last_timestamp_is_heard_and_kept() {
    let Some(models) = test_models() else { return };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    // tiny.en ends its first decode of this 29 s chunk of read speech seconds before the
    // chunk's end; the rest ("In short, ...") is the tail.
    let clip = corpus.clip("real-two-cities").unwrap();
    let engine = WhisperEngine::new(models, common::ENGINE_THREADS);
    let output = hear_english(&engine, "tiny.en", &clip.samples, false);
    assert!(engine.retries().tails >= 1, "{:?}", engine.retries());
    let chunks = vad::chunks_to_hear(&clip.samples, true);
    let first_end = chunks[0].end as f64 / 16_000.0;
    let last_in_first = output
        .segments
        .iter()
        .rfind(|s| s.start < first_end)
        .unwrap();
    assert!(
        first_end - last_in_first.end < 1.5,
        "the first chunk ends at {first_end:.2} s, its text at {:.2} s: {:?}",
        last_in_first.end,
        output.segments
    );
    let (errors, words) = word_errors(
        &normalize_numbers(&clip.entry.text),
        &normalize_numbers(&output.text),
    );
    assert!(errors * 10 <= words, "{errors} of {words}: {}", output.text);
}

/// The Moonshine engine shares a file's chunks out among copies of the model, one thread each,
/// and reads them as one copy hearing them in turn.
#[cfg(feature = "moonshine")]
#[test]
fn moonshine_chunks_heard_side_by_side_read_as_in_turn() {
    use verbatim::engine::moonshine::MoonshineEngine;
    let Some(models) = common::test_models_with_moonshine_base() else {
        return;
    };
    let samples = recordings_apart();
    let chunks = vad::chunks_to_hear(&samples, true);
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    let alone = MoonshineEngine::new(models.clone(), common::ENGINE_THREADS).with_workers(1);
    let shared = MoonshineEngine::new(models.clone(), 2).with_workers(2);
    let one = hear_english(&alone, "moonshine-base", &samples, false);
    let two = hear_english(&shared, "moonshine-base", &samples, false);
    assert_eq!(one.segments.len(), chunks.len(), "{:?}", one.segments);
    assert_eq!(one.text, two.text);
    assert_eq!(one.segments, two.segments);

    // A cancelled request stops both copies; the engine hears the next one.
    let result = shared.transcribe("moonshine-base", &cancelled(&samples));
    assert!(matches!(result, Err(EngineError::Cancelled)), "{result:?}");
    let again = hear_english(&shared, "moonshine-base", &samples, false);
    assert_eq!(again.text, one.text);
}
