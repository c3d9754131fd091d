//! Replay engine: recorded output for recognised clips and sequences, the fallback for clips with
//! no recording, the fixed result for unknown audio, latency settings and injected failures.

mod common;

use std::sync::Arc;

use common::*;
use verbatim_sim::{Latency, ReplayEngine, ReplayError, Segment};

fn engine() -> ReplayEngine {
    ReplayEngine::new(corpus_with_recording())
}

#[test]
fn a_recognised_clip_answers_its_recording() {
    let samples = clip("en-siobhan");
    let replay = engine().transcribe("tiny.en", &samples).unwrap();
    assert!(replay.recognised);
    assert_eq!(
        replay.text,
        "Please send the quarterly report to Shivon before Friday."
    );
    assert_eq!(replay.language.as_deref(), Some("en"));
    assert_eq!(replay.duration, samples.len() as f64 / 16_000.0);
    assert_eq!(replay.processing_time, 1.38);
    assert_eq!(replay.segments.len(), 2);
    assert_eq!(replay.segments[1].text, " to Shivon before Friday.");
    assert_eq!(replay.clips.len(), 1);
    assert!(replay.clips[0].recorded);
}

#[test]
fn a_sequence_joins_texts_and_shifts_segments() {
    let hello = clip("en-hello");
    let input = concat(&[
        &silence(0.5),
        &hello,
        &silence(1.0),
        &clip("en-siobhan"),
        &silence(0.3),
    ]);
    let replay = engine().transcribe("tiny.en", &input).unwrap();
    assert_eq!(
        replay.text,
        "Hello world. Please send the quarterly report to Shivon before Friday."
    );
    assert_eq!(replay.language.as_deref(), Some("en"));
    assert_eq!(replay.duration, input.len() as f64 / 16_000.0);
    assert!((replay.processing_time - (1.31 + 1.38)).abs() < 1e-9);
    let second_start = 0.5 + hello.len() as f64 / 16_000.0 + 1.0;
    let expected = [
        (0.5, 1.6),
        (second_start, second_start + 2.0),
        (second_start + 2.0, second_start + 3.8),
    ];
    assert_eq!(replay.segments.len(), 3);
    for (segment, (start, end)) in replay.segments.iter().zip(expected) {
        assert!(
            (segment.start - start).abs() <= 0.011,
            "{segment:?} vs {start}"
        );
        assert!((segment.end - end).abs() <= 0.011, "{segment:?} vs {end}");
    }
    let ids: Vec<&str> = replay.clips.iter().map(|c| c.clip_id.as_str()).collect();
    assert_eq!(ids, ["en-hello", "en-siobhan"]);
}

#[test]
fn the_language_is_that_of_the_first_clip() {
    let input = concat(&[&clip("de-morning"), &silence(0.5), &clip("en-hello")]);
    let replay = engine().transcribe("tiny.en", &input).unwrap();
    assert_eq!(replay.language.as_deref(), Some("de"));
    assert_eq!(
        replay.text,
        "Guten Morgen, wie geht es Ihnen heute? Hello world."
    );
}

#[test]
fn a_clip_without_a_recording_answers_its_script() {
    let samples = clip("fr-weather");
    let replay = engine().transcribe("tiny.en", &samples).unwrap();
    assert_eq!(replay.text, "Il fait très beau aujourd'hui à Paris.");
    assert_eq!(replay.language.as_deref(), Some("fr"));
    assert_eq!(
        replay.segments,
        [Segment {
            start: 0.0,
            end: samples.len() as f64 / 16_000.0,
            text: "Il fait très beau aujourd'hui à Paris.".into()
        }]
    );
    assert!(!replay.clips[0].recorded);
    assert_eq!(replay.processing_time, 0.0);
    // A model with no recording at all (the corpus has tiny.en and base) behaves the same.
    let replay = engine().transcribe("small", &clip("en-hello")).unwrap();
    assert_eq!(replay.text, "Hello world.");
}

#[test]
fn unknown_audio_answers_the_documented_empty_result() {
    let fixed = engine().with_latency(Latency::Fixed(0.25));
    for (name, samples) in [
        ("silence", silence(2.0)),
        ("silence clip", clip("silence-1s")),
        ("noise", noise(3.0, 0.2, 1)),
        ("tone", tone(440.0, 2.0)),
        ("empty", Vec::new()),
        ("nan", vec![f32::NAN; 8000]),
    ] {
        let replay = fixed.transcribe("tiny.en", &samples).unwrap();
        assert!(!replay.recognised, "{name}");
        assert_eq!(replay.text, "", "{name}");
        assert_eq!(replay.language, None, "{name}");
        assert!(
            replay.segments.is_empty() && replay.clips.is_empty(),
            "{name}"
        );
        assert_eq!(replay.duration, samples.len() as f64 / 16_000.0, "{name}");
        assert_eq!(replay.processing_time, 0.25, "{name}");
    }
    // Recorded latency: nothing recognised, nothing recorded to report.
    let recorded = engine().transcribe("tiny.en", &silence(1.0)).unwrap();
    assert_eq!(recorded.processing_time, 0.0);
}

#[test]
fn latency_can_be_fixed_or_a_real_time_factor() {
    let samples = clip("en-hello");
    let duration = samples.len() as f64 / 16_000.0;
    let fixed = engine().with_latency(Latency::Fixed(0.7));
    assert_eq!(
        fixed
            .transcribe("tiny.en", &samples)
            .unwrap()
            .processing_time,
        0.7
    );
    let factor = engine().with_latency(Latency::RealTimeFactor(0.5));
    let replay = factor.transcribe("tiny.en", &samples).unwrap();
    assert!((replay.processing_time - 0.5 * duration).abs() < 1e-12);
}

#[test]
fn the_scripted_requests_fail_and_the_others_succeed() {
    let engine = ReplayEngine::new(corpus()).with_failures([2, 4]);
    let samples = clip("en-hello");
    let outcomes: Vec<bool> = (0..5)
        .map(|_| engine.transcribe("tiny.en", &samples).is_ok())
        .collect();
    assert_eq!(outcomes, [true, false, true, false, true]);
    assert_eq!(engine.requests(), 5);
    let engine = ReplayEngine::new(corpus()).with_failures([1]);
    let error = engine.transcribe("tiny.en", &samples).unwrap_err();
    assert_eq!(error, ReplayError::Injected { request: 1 });
    assert_eq!(error.to_string(), "simulated engine failure on request 1");
}

#[test]
fn the_engine_can_be_shared_between_threads() {
    let engine = Arc::new(engine());
    let handles: Vec<_> = ["en-hello", "en-siobhan", "en-apples"]
        .into_iter()
        .map(|id| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || engine.transcribe("tiny.en", &clip(id)).unwrap().text)
        })
        .collect();
    let texts: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(texts[0], "Hello world.");
    assert_eq!(engine.requests(), 3);
}
