//! Property tests: `decode_file` must never panic, whatever the bytes.
//!
//! The inputs are random bytes, fixtures cut at random points, and fixtures with random
//! bytes overwritten (which gets past format detection and exercises the demuxers and
//! codecs). A decode that succeeds must still return well-formed output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use verbatim::audio::decode::{
    DecodeError, DecodedAudio, MAX_DURATION_SECS, TARGET_SAMPLE_RATE, decode_file,
};

use crate::common::mutate;

const FIXTURES: &[&str] = &[
    "tone_44k1_stereo_s16.wav",
    "tone_8k_mono_u8.wav",
    "tone_22k05_mono_s24.wav",
    "tone_48k_mono_f32.wav",
    "speech_16k_mono_s16.wav",
    "tone_44k1_mono.mp3",
    "speech_22k05_mono.mp3",
    "tone_16k_mono.flac",
    "tone_44k1_mono.ogg",
    "tone_44k1_mono.m4a",
    "tone_48k_stereo_with_video.mov",
    "tone_48k_mono.opus",
    "video_only.mov",
    "speech_48k_mono.webm",
    "speech_48k_mono.opus",
    "tone_48k_stereo.opus",
    "tone_22k05_mono.aiff",
    "tone_44k1_mono_alac.caf",
    "tone_16k_mono_s16.caf",
    "tone_44k1_mono_alac.m4a",
    "tone_44k1_mono_with_video.mkv",
];

fn fixtures() -> &'static Vec<Vec<u8>> {
    static DATA: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audio");
        FIXTURES
            .iter()
            .map(|name| std::fs::read(dir.join(name)).unwrap())
            .collect()
    })
}

fn temp_path(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(bytes).unwrap();
    (dir, path)
}

/// Decodes `bytes` and checks the invariants of a successful result.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let (_dir, path) = temp_path(bytes);
    // Any panic escaping decode_file fails the property.
    match decode_file(&path, None) {
        Ok(audio) => check_output(&audio)?,
        // An I/O error is the machine's fault (answered 500): the file's content must never
        // cause one.
        Err(DecodeError::Io(e)) => prop_assert!(false, "I/O error from the content: {e}"),
        Err(_) => {}
    }
    Ok(())
}

fn check_output(audio: &DecodedAudio) -> Result<(), TestCaseError> {
    prop_assert!(audio.samples.iter().all(|s| s.is_finite()));
    prop_assert!(!audio.samples.is_empty());
    prop_assert!(audio.source_channels >= 1);
    prop_assert!(audio.source_sample_rate > 0);
    prop_assert!(audio.duration_secs > 0.0 && audio.duration_secs <= MAX_DURATION_SECS as f64);
    let expected = audio.duration_secs * f64::from(TARGET_SAMPLE_RATE);
    prop_assert!((audio.samples.len() as f64 - expected).abs() <= 1.0);
    Ok(())
}

/// Inputs kept from coverage-guided runs (`scripts/fuzz decode`): the smallest of the corpus
/// it built, and any input that ever crashed the decoder. Each one is decoded again here.
#[test]
fn inputs_kept_from_fuzzing_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz/decode");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        if let Err(failure) = check(&bytes) {
            panic!("{}: {failure}", path.display());
        }
        replayed += 1;
    }
    assert!(replayed > 0, "no kept inputs in {}", dir.display());
}

/// The MP4 found on the build that opened containers with their own demuxer: an `stbl` whose
/// children end 7 bytes short of its end, where the demuxer would read a box header spanning
/// into the next box (an `stsc` asking for 29 GB). The structure walk refuses it by name, before
/// any demuxer reads it.
#[test]
fn a_box_header_cut_off_at_its_parents_end_is_refused_by_the_walk() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz/decode/mp4-box-header-across-its-parents-end");
    match decode_file(&path, None) {
        Err(DecodeError::Io(e)) => panic!("I/O error from the content: {e}"),
        Err(refusal) => assert!(
            refusal
                .to_string()
                .contains("a box header is cut off at the end of"),
            "{refusal}"
        ),
        Ok(audio) => panic!("decoded {} samples", audio.samples.len()),
    }
}

/// Every fixture (every container) damaged where its demuxer trusts the file, by the
/// structure-aware mutator the fuzz targets use: decoded or refused as data, never an I/O error.
#[test]
fn structurally_damaged_fixtures_are_decoded_or_refused_as_data() {
    let mut changed = 0;
    let mut failures = Vec::new();
    for (name, data) in FIXTURES.iter().zip(fixtures()) {
        for seed in 0..300u64 {
            let mut bytes = data.clone();
            changed += usize::from(mutate::mutate(&mut bytes, seed, 1 << 20));
            if let Err(failure) = check(&bytes) {
                failures.push(format!("{name} mutated with seed {seed}: {failure}"));
                if std::env::var_os("KEEP_FAILING").is_some() {
                    std::fs::write(format!("/tmp/failing-{seed}-{name}"), &bytes).unwrap();
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        changed > FIXTURES.len() * 250,
        "only {changed} inputs were changed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        check(&bytes)?;
    }

    #[test]
    fn fixture_header_with_random_tail_never_panics(
        index in 0..FIXTURES.len(),
        header_fraction in 0.0f64..0.5,
        tail in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        let data = &fixtures()[index];
        let keep = (data.len() as f64 * header_fraction) as usize;
        let mut bytes = data[..keep].to_vec();
        bytes.extend_from_slice(&tail);
        check(&bytes)?;
    }

    #[test]
    fn truncated_fixtures_never_panic(index in 0..FIXTURES.len(), fraction in 0.0f64..=1.0) {
        let data = &fixtures()[index];
        let cut = (data.len() as f64 * fraction) as usize;
        check(&data[..cut])?;
    }

    #[test]
    fn corrupted_fixtures_never_panic(
        index in 0..FIXTURES.len(),
        edits in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 1..24),
        fraction in 0.5f64..=1.0,
    ) {
        let mut data = fixtures()[index].clone();
        for (position, value) in edits {
            let at = (data.len() as f64 * position) as usize;
            let last = data.len() - 1;
            data[at.min(last)] = value;
        }
        let cut = (data.len() as f64 * fraction) as usize;
        check(&data[..cut])?;
    }
}
