//! Fingerprint: every speech clip is recognised from itself and after lossy round trips, sequences
//! are recognised in order, and silence, noise, tones and unknown speech are not recognised.

mod common;

use std::path::PathBuf;
use std::time::Instant;

use common::*;
use verbatim_sim::{FingerprintIndex, MATCH_THRESHOLD, Match};

fn index() -> FingerprintIndex {
    FingerprintIndex::from_corpus(&corpus())
}

fn ids(matches: &[Match]) -> Vec<&str> {
    matches.iter().map(|m| m.clip_id.as_str()).collect()
}

#[test]
fn every_speech_clip_is_indexed_and_recognised_from_itself() {
    let index = index();
    assert_eq!(index.len(), speech_ids().len());
    assert!(index.len() >= 20);
    for id in speech_ids() {
        let samples = clip(&id);
        let found = index.recognise_sequence(&samples);
        assert_eq!(ids(&found), [id.as_str()], "{id}");
        assert_eq!(found[0].start_sample, 0, "{id}");
        assert_eq!(found[0].end_sample, samples.len(), "{id}");
        assert!(found[0].score > 0.99, "{id}: {}", found[0].score);
    }
}

fn recognised_after_round_trip(format: &Format, decode: fn(&[PathBuf]) -> Vec<Vec<f32>>) {
    if !ffmpeg_available() {
        eprintln!("skipped: ffmpeg is not installed, so no re-encoded audio can be made");
        return;
    }
    let index = index();
    let dir = tempfile::tempdir().unwrap();
    let clip_ids = speech_ids();
    let clips: Vec<Vec<f32>> = clip_ids.iter().map(|id| clip(id)).collect();
    let named: Vec<(&str, &[f32])> = clip_ids
        .iter()
        .zip(&clips)
        .map(|(id, samples)| (id.as_str(), samples.as_slice()))
        .collect();
    let decoded = decode(&encode_all(dir.path(), &named, format));
    let mut lowest = 1.0f32;
    for (id, decoded) in clip_ids.iter().zip(&decoded) {
        let found = index.recognise_sequence(decoded);
        assert_eq!(ids(&found), [id.as_str()], "{id} as {}", format.ext);
        lowest = lowest.min(found[0].score);
    }
    eprintln!("{}: lowest score {lowest}", format.ext);
}

#[test]
fn recognised_after_mp3_at_44k1_stereo() {
    recognised_after_round_trip(&MP3, decode_all_16k_mono);
}

#[test]
fn recognised_after_ogg_vorbis_at_44k1_stereo() {
    recognised_after_round_trip(&OGG, decode_all_16k_mono);
}

#[test]
fn recognised_after_flac_at_44k1_stereo() {
    recognised_after_round_trip(&FLAC, decode_all_16k_mono);
}

#[test]
fn recognised_after_mp3_downmixed_and_resampled_by_linear_interpolation() {
    recognised_after_round_trip(&MP3, decode_all_native_then_resample);
}

#[test]
fn a_sequence_with_gaps_is_recognised_in_order_and_in_place() {
    let index = index();
    let (a, b, c) = (clip("en-hello"), clip("fr-weather"), clip("en-siobhan"));
    let (gap1, gap2) = (silence(1.0), silence(0.35));
    let input = concat(&[&silence(0.2), &a, &gap1, &b, &gap2, &c, &silence(0.5)]);
    let found = index.recognise_sequence(&input);
    assert_eq!(ids(&found), ["en-hello", "fr-weather", "en-siobhan"]);
    let starts = [
        3200,
        3200 + a.len() + 16_000,
        3200 + a.len() + 16_000 + b.len() + 5600,
    ];
    for (m, start) in found.iter().zip(starts) {
        assert!(
            m.start_sample.abs_diff(start) <= 160,
            "{} at {} instead of {start}",
            m.clip_id,
            m.start_sample
        );
        assert!(m.score >= MATCH_THRESHOLD);
    }
}

#[test]
fn back_to_back_clips_and_a_repeated_clip_are_all_found() {
    let index = index();
    let input = concat(&[
        &clip("en-percent"),
        &clip("de-books"),
        &clip("en-percent"),
        &silence(0.1),
        &clip("es-madrid"),
    ]);
    let found = index.recognise_sequence(&input);
    assert_eq!(
        ids(&found),
        ["en-percent", "de-books", "en-percent", "es-madrid"]
    );
}

#[test]
fn a_sequence_survives_an_mp3_round_trip() {
    if !ffmpeg_available() {
        eprintln!("skipped: ffmpeg is not installed, so no re-encoded audio can be made");
        return;
    }
    let input = concat(&[
        &clip("en-kubernetes"),
        &silence(0.8),
        &clip("de-morning"),
        &silence(2.0),
        &clip("en-invoice"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let decoded = decode_16k_mono(&encode(dir.path(), "sequence", &input, &MP3));
    let found = index().recognise_sequence(&decoded);
    assert_eq!(ids(&found), ["en-kubernetes", "de-morning", "en-invoice"]);
}

#[test]
fn a_clip_inside_unrelated_audio_is_found() {
    let input = concat(&[&noise(1.0, 0.05, 7), &clip("en-coffee"), &tone(300.0, 1.0)]);
    let found = index().recognise_sequence(&input);
    assert_eq!(ids(&found), ["en-coffee"]);
}

#[test]
fn a_clip_cut_slightly_is_found_and_half_a_clip_is_not() {
    let index = index();
    let whole = clip("en-update");
    let cut = &whole[..whole.len() * 96 / 100];
    let found = index.recognise_sequence(cut);
    assert_eq!(ids(&found), ["en-update"]);
    assert_eq!(found[0].end_sample, cut.len());
    let late = &whole[whole.len() * 4 / 100..];
    let found = index.recognise_sequence(late);
    assert_eq!(ids(&found), ["en-update"]);
    assert!(found[0].clip_offset > 0 && found[0].clip_offset <= whole.len() * 5 / 100);
    assert!(
        index
            .recognise_sequence(&whole[..whole.len() / 2])
            .is_empty()
    );
}

#[test]
fn silence_noise_and_tones_are_not_recognised() {
    let index = index();
    let corpus = corpus();
    let mut inputs: Vec<(String, Vec<f32>)> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.kind != verbatim_sim::ClipKind::Speech)
        .map(|c| (c.id().to_owned(), c.samples.to_vec()))
        .collect();
    inputs.extend([
        ("empty".to_owned(), Vec::new()),
        ("one sample".to_owned(), vec![0.5]),
        ("silence 30 s".to_owned(), silence(30.0)),
        ("white noise".to_owned(), noise(10.0, 0.3, 42)),
        ("quiet noise".to_owned(), noise(4.0, 0.001, 3)),
        ("tone 440 Hz".to_owned(), tone(440.0, 5.0)),
        ("tone 1 kHz".to_owned(), tone(1000.0, 2.0)),
        (
            "noise bursts".to_owned(),
            concat(&[
                &silence(0.5),
                &noise(1.2, 0.3, 9),
                &silence(0.5),
                &noise(3.0, 0.3, 11),
            ]),
        ),
        (
            "tone bursts".to_owned(),
            concat(&[
                &tone(200.0, 0.4),
                &silence(0.3),
                &tone(800.0, 0.9),
                &silence(0.3),
            ]),
        ),
        ("not finite".to_owned(), vec![f32::NAN; 16_000]),
    ]);
    for (name, samples) in inputs {
        let found = index.recognise_sequence(&samples);
        assert!(found.is_empty(), "{name} was taken for {:?}", ids(&found));
    }
}

#[test]
fn no_clip_is_taken_for_another() {
    // Each clip searched in an index of every other clip: nothing may match.
    let all = index();
    for id in speech_ids() {
        let mut others = all.clone();
        assert!(others.remove(&id));
        assert_eq!(others.len(), all.len() - 1);
        let input = concat(&[&silence(1.0), &clip(&id), &silence(1.0)]);
        let found = others.recognise_sequence(&input);
        assert!(found.is_empty(), "{id} taken for {found:?}");
    }
}

#[test]
fn speech_that_is_not_in_the_corpus_is_not_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("unknown.wav");
    let spoke = std::process::Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&wav)
        .arg("This sentence was never recorded for the corpus, so nothing should match it.")
        .status();
    if !spoke.is_ok_and(|s| s.success()) {
        eprintln!("skipped: espeak-ng is not installed, so no unknown speech can be made");
        return;
    }
    let (samples, rate, _) = read_wav(&wav);
    let samples = verbatim_sim::resample_linear(&samples, rate, 16_000);
    assert!(index().recognise_sequence(&samples).is_empty());
}

#[test]
fn too_short_or_flat_clips_are_not_indexed() {
    let mut index = FingerprintIndex::new();
    assert!(!index.insert("short", &clip("en-hello")[..4000]));
    assert!(!index.insert("silence", &silence(3.0)));
    assert!(!index.insert("tone", &tone(440.0, 3.0)));
    assert!(index.is_empty());
}

#[test]
fn recognising_ten_seconds_against_the_corpus_is_fast() {
    let index = index();
    let input = concat(&[
        &clip("en-flight"),
        &silence(0.5),
        &clip("fr-table"),
        &silence(0.5),
        &noise(1.5, 0.05, 5),
    ]);
    assert!(input.len() >= 10 * 16_000 - 1600);
    index.recognise_sequence(&input);
    let runs = 10;
    let start = Instant::now();
    for _ in 0..runs {
        assert_eq!(index.recognise_sequence(&input).len(), 2);
    }
    let each = start.elapsed() / runs;
    eprintln!(
        "10 s input against {} clips: {each:?} per search",
        index.len()
    );
    if cfg!(debug_assertions) {
        assert!(each.as_secs_f64() < 5.0, "{each:?}");
    } else {
        assert!(each.as_millis() < 100, "{each:?}");
    }
}
