//! Decoding tests against the fixtures in `tests/fixtures/audio/` (see `make.sh` there).

use std::io::Write;
use std::path::{Path, PathBuf};

use verbatim::audio::decode::{
    DecodeError, DecodedAudio, MAX_DURATION_SECS, TARGET_SAMPLE_RATE, decode_file, decode_opened,
    open_regular,
};
use verbatim::cancel::Cancel;

use crate::common::flac;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio")
        .join(name)
}

/// Amplitude of the `freq` component of `x` (sampled at 16 kHz), via the Goertzel algorithm.
fn amplitude_at(x: &[f32], freq: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * freq / f64::from(TARGET_SAMPLE_RATE);
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &v in x {
        let s0 = f64::from(v) + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    2.0 * power.max(0.0).sqrt() / x.len() as f64
}

/// The strongest frequency between 100 Hz and 2 kHz, on a 10 Hz grid.
fn dominant_frequency(x: &[f32]) -> f64 {
    (10..=200)
        .map(|k| f64::from(k) * 10.0)
        .max_by(|&a, &b| amplitude_at(x, a).total_cmp(&amplitude_at(x, b)))
        .unwrap()
}

/// The middle part of a clip, away from codec start-up and tail effects.
fn middle(x: &[f32]) -> &[f32] {
    let edge = x.len() / 10;
    &x[edge..x.len() - edge]
}

fn decode_ok(name: &str) -> DecodedAudio {
    match decode_file(&fixture(name), None) {
        Ok(audio) => audio,
        Err(e) => panic!("{name}: {e} ({e:?})"),
    }
}

fn assert_sane(name: &str, audio: &DecodedAudio, expected_secs: f64) {
    let tolerance = expected_secs * 0.02;
    assert!(
        (audio.duration_secs - expected_secs).abs() <= tolerance,
        "{name}: duration {} s, expected {expected_secs} s",
        audio.duration_secs
    );
    let expected_len = expected_secs * f64::from(TARGET_SAMPLE_RATE);
    assert!(
        (audio.samples.len() as f64 - expected_len).abs() <= expected_len * 0.02,
        "{name}: {} samples at 16 kHz, expected about {expected_len}",
        audio.samples.len()
    );
    let from_duration = audio.duration_secs * f64::from(TARGET_SAMPLE_RATE);
    assert!(
        (audio.samples.len() as f64 - from_duration).abs() <= 1.0,
        "{name}: sample count does not match duration_secs"
    );
    assert!(
        audio
            .samples
            .iter()
            .all(|s| s.is_finite() && s.abs() <= 1.5),
        "{name}: samples out of range"
    );
}

/// (file, expected duration in seconds, source rate, source channels)
const TONES: &[(&str, f64, u32, u16)] = &[
    ("tone_8k_mono_u8.wav", 1.0, 8_000, 1),
    ("tone_22k05_mono_s24.wav", 0.5, 22_050, 1),
    ("tone_48k_mono_f32.wav", 0.25, 48_000, 1),
    ("tone_44k1_mono.mp3", 2.0, 44_100, 1),
    ("tone_16k_mono.flac", 2.0, 16_000, 1),
    ("tone_44k1_mono.ogg", 2.0, 44_100, 1),
    ("tone_44k1_mono.m4a", 2.0, 44_100, 1),
    ("tone_48k_stereo_with_video.mov", 2.0, 48_000, 2),
    ("tone_48k_mono.opus", 0.5, 48_000, 1),
    ("tone_22k05_mono.aiff", 0.5, 22_050, 1),
    ("tone_44k1_mono_alac.caf", 0.5, 44_100, 1),
    ("tone_16k_mono_s16.caf", 0.25, 16_000, 1),
    ("tone_44k1_mono_alac.m4a", 0.25, 44_100, 1),
    ("tone_44k1_mono_with_video.mkv", 2.0, 44_100, 1),
];

/// Duration of the espeak-ng phrase (see make.sh).
const SPEECH_SECS: f64 = 2.325625;

#[test]
fn tones_decode_to_the_expected_duration_and_frequency() {
    for &(name, secs, rate, channels) in TONES {
        let audio = decode_ok(name);
        assert_sane(name, &audio, secs);
        assert_eq!(audio.source_sample_rate, rate, "{name}");
        assert_eq!(audio.source_channels, channels, "{name}");

        let mid = middle(&audio.samples);
        assert_eq!(dominant_frequency(mid), 440.0, "{name}");
        // ffmpeg's sine source has an amplitude of 1/8.
        let amp = amplitude_at(mid, 440.0);
        assert!(
            (amp - 0.125).abs() < 0.125 * 0.15,
            "{name}: 440 Hz amplitude {amp}"
        );
    }
}

#[test]
fn stereo_is_averaged_to_mono() {
    // Left channel: 440 Hz, right channel: 1000 Hz, both at amplitude 1/8.
    let name = "tone_44k1_stereo_s16.wav";
    let audio = decode_ok(name);
    assert_sane(name, &audio, 0.5);
    assert_eq!(audio.source_sample_rate, 44_100);
    assert_eq!(audio.source_channels, 2);

    let mid = middle(&audio.samples);
    let left = amplitude_at(mid, 440.0);
    let right = amplitude_at(mid, 1000.0);
    // Averaging halves each channel's amplitude: 1/16 each.
    assert!((left - 0.0625).abs() < 0.005, "440 Hz amplitude {left}");
    assert!((right - 0.0625).abs() < 0.005, "1000 Hz amplitude {right}");
}

#[test]
fn speech_decodes_from_wav_and_mp3() {
    let wav = decode_ok("speech_16k_mono_s16.wav");
    assert_sane("speech wav", &wav, SPEECH_SECS);
    assert_eq!(wav.source_sample_rate, 16_000);

    let mp3 = decode_ok("speech_22k05_mono.mp3");
    assert_sane("speech mp3", &mp3, SPEECH_SECS);
    assert_eq!(mp3.source_sample_rate, 22_050);

    for audio in [&wav, &mp3] {
        let rms =
            (audio.samples.iter().map(|s| s * s).sum::<f32>() / audio.samples.len() as f32).sqrt();
        assert!(rms > 0.02, "speech is nearly silent: rms {rms}");
    }
}

#[test]
fn hints_do_not_change_the_result() {
    for (name, hint) in [
        ("tone_44k1_mono.mp3", "audio/mpeg"),
        ("tone_44k1_mono.mp3", "wav"), // a wrong hint is harmless
        ("tone_44k1_mono.m4a", "m4a"),
        ("tone_16k_mono.flac", "flac"),
        ("tone_44k1_mono.ogg", "ogg"),
        ("speech_48k_mono.webm", "audio/webm;codecs=opus"),
        ("speech_48k_mono.opus", "audio/ogg; codecs=opus"),
        ("tone_22k05_mono.aiff", "audio/x-aiff"),
        ("tone_44k1_mono_alac.caf", "caf"),
        ("tone_44k1_mono_with_video.mkv", "video/x-matroska"),
        ("tone_48k_mono.opus", "mp3"), // a wrong hint is harmless
    ] {
        let hinted = decode_file(&fixture(name), Some(hint)).unwrap();
        assert_eq!(
            hinted.samples,
            decode_ok(name).samples,
            "{name} with hint {hint}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Rejected input

fn write_temp(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
    file
}

fn decode_bytes(bytes: &[u8]) -> Result<DecodedAudio, DecodeError> {
    let file = write_temp(bytes);
    decode_file(file.path(), None)
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

/// Deterministic pseudo-random bytes (xorshift64*).
fn pseudo_random_bytes(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

#[test]
fn empty_file_is_empty() {
    let err = decode_bytes(b"").unwrap_err();
    assert!(matches!(err, DecodeError::Empty), "{err:?}");
    assert_eq!(err.to_string(), "The audio data is empty.");
}

#[test]
fn text_file_is_not_audio() {
    let text = "Meeting notes\n\nThis is not an audio file, just some text.\n".repeat(20);
    let err = decode_bytes(text.as_bytes()).unwrap_err();
    assert!(matches!(err, DecodeError::NotAudio), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("Could not recognise the audio format")
    );
}

#[test]
fn random_bytes_are_not_audio() {
    // Random data is full of byte pairs that look like MP3/AAC frame syncs; the format must
    // still be rejected as a whole rather than "decoded" into noise.
    for seed in 1..=16u64 {
        let err = decode_bytes(&pseudo_random_bytes(64 * 1024, seed)).unwrap_err();
        assert!(matches!(err, DecodeError::NotAudio), "seed {seed}: {err:?}");
    }
}

#[test]
fn truncated_wav_header_is_corrupt() {
    let wav = fixture_bytes("tone_44k1_stereo_s16.wav");
    for cut in [12, 20, 30, 40] {
        let err = decode_bytes(&wav[..cut]).unwrap_err();
        assert!(
            matches!(err, DecodeError::Corrupt(_)),
            "cut at {cut}: {err:?}"
        );
        assert!(
            err.to_string()
                .starts_with("The audio file is corrupt or truncated: ")
        );
    }
}

#[test]
fn wav_without_samples_is_empty() {
    // Keep the header (44 bytes) but no sample data.
    let wav = fixture_bytes("tone_8k_mono_u8.wav");
    let header_len = wav.windows(4).position(|w| w == b"data").unwrap() + 8;
    let err = decode_bytes(&wav[..header_len]).unwrap_err();
    assert!(matches!(err, DecodeError::Empty), "{err:?}");
}

#[test]
fn truncated_mp3_header_is_corrupt() {
    let mp3 = fixture_bytes("tone_44k1_mono.mp3");
    // The ID3 tag plus the start of the first frame.
    let err = decode_bytes(&mp3[..60]).unwrap_err();
    assert!(matches!(err, DecodeError::Corrupt(_)), "{err:?}");
}

#[test]
fn truncated_files_keep_the_audio_before_the_cut() {
    // (file, duration, least fraction of the audio expected back from the first 80% of bytes)
    for (name, secs, least) in [
        ("tone_44k1_mono.mp3", 2.0, 0.7),
        ("tone_16k_mono.flac", 2.0, 0.7),
        ("tone_44k1_mono.m4a", 2.0, 0.7), // index at the front, cut inside the media data
        ("tone_8k_mono_u8.wav", 1.0, 0.75),
        ("tone_44k1_stereo_s16.wav", 0.5, 0.75),
        // Ogg loses the whole partial page; at this bitrate a page holds about a second.
        ("tone_44k1_mono.ogg", 2.0, 0.45),
        ("tone_22k05_mono.aiff", 0.5, 0.75),
        // Matroska with its cues at the end (which are lost): blocks interleaved with video.
        ("tone_44k1_mono_with_video.mkv", 2.0, 0.5),
    ] {
        let bytes = fixture_bytes(name);
        let cut = bytes.len() * 8 / 10;
        let audio =
            decode_bytes(&bytes[..cut]).unwrap_or_else(|e| panic!("{name} cut to 80%: {e:?}"));
        let kept = audio.duration_secs / secs;
        assert!(
            (least..=0.85).contains(&kept),
            "{name}: kept {kept:.2} of the audio"
        );
        assert_eq!(dominant_frequency(middle(&audio.samples)), 440.0, "{name}");
    }
}

#[test]
fn mp4_cut_before_its_index_is_corrupt() {
    // This file keeps its index (moov) at the end, so any cut loses it.
    let mov = fixture_bytes("tone_48k_stereo_with_video.mov");
    for cut in [mov.len() / 2, mov.len() - 100] {
        let err = decode_bytes(&mov[..cut]).unwrap_err();
        assert!(
            matches!(err, DecodeError::Corrupt(_)),
            "cut at {cut}: {err:?}"
        );
    }
}

#[test]
fn mp4_tables_with_absurd_entry_counts_are_rejected() {
    // The demuxer sizes its tables from these counts before reading them; an unchecked
    // count of ~4 billion makes it request tens of gigabytes and abort the process.
    let m4a = fixture_bytes("tone_44k1_mono.m4a");
    for (table, count_offset) in [("stts", 4), ("stsc", 4), ("stco", 4), ("stsz", 8)] {
        let at = m4a.windows(4).position(|w| w == table.as_bytes()).unwrap();
        let mut bomb = m4a.clone();
        let field = at + 4 + count_offset;
        bomb[field..field + 4].copy_from_slice(&0xFFFF_FFF0u32.to_be_bytes());
        let err = decode_bytes(&bomb).unwrap_err();
        assert!(matches!(err, DecodeError::Corrupt(_)), "{table}: {err:?}");
    }
}

#[test]
fn other_binary_files_are_not_audio() {
    // A ZIP archive and a PDF header followed by compressed-looking bytes.
    let mut zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    zip.extend(pseudo_random_bytes(20_000, 42));
    let mut pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    pdf.extend(pseudo_random_bytes(20_000, 43));
    for bytes in [zip, pdf] {
        let err = decode_bytes(&bytes).unwrap_err();
        assert!(matches!(err, DecodeError::NotAudio), "{err:?}");
    }
}

#[test]
fn known_unsupported_formats_are_named() {
    // An ASF (WMA) header, and AMR.
    let mut wma = vec![0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11];
    wma.resize(4096, 0);
    let err = decode_bytes(&wma).unwrap_err();
    assert!(
        matches!(&err, DecodeError::UnsupportedCodec(name) if name.contains("WMA")),
        "{err:?}"
    );
    let mut amr = b"#!AMR\n".to_vec();
    amr.resize(4096, 0x3C);
    let err = decode_bytes(&amr).unwrap_err();
    assert!(err.to_string().contains("AMR"), "{err}");
}

#[test]
fn damaged_aiff_and_webm_headers_are_corrupt() {
    // Once unsupported, now decoded: their damaged headers are corrupt files.
    let mut aiff = b"FORM\x00\x00\x10\x00AIFFCOMM".to_vec();
    aiff.resize(4096, 0);
    let mut webm = vec![0x1A, 0x45, 0xDF, 0xA3];
    webm.resize(4096, 0x42);
    for bytes in [aiff, webm] {
        let err = decode_bytes(&bytes).unwrap_err();
        assert!(matches!(err, DecodeError::Corrupt(_)), "{err:?}");
    }
}

#[test]
fn missing_file_is_io_error() {
    let err = decode_file(Path::new("/nonexistent/verbatim/audio.wav"), None).unwrap_err();
    assert!(matches!(err, DecodeError::Io(_)), "{err:?}");
}

#[test]
fn directories_and_devices_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = decode_file(dir.path(), None).unwrap_err();
    assert!(matches!(err, DecodeError::Io(_)), "{err:?}");
    #[cfg(unix)]
    {
        let err = decode_file(Path::new("/dev/zero"), None).unwrap_err();
        assert!(matches!(err, DecodeError::Io(_)), "{err:?}");
    }
}

#[test]
fn video_without_audio_has_no_audio_track() {
    let err = decode_file(&fixture("video_only.mov"), Some("mov")).unwrap_err();
    assert!(matches!(err, DecodeError::NoAudioTrack), "{err:?}");
}

#[test]
fn unknown_bytes_named_as_wma_are_an_unsupported_format() {
    // Nothing in the bytes says what they are; the hint names a format that is not decoded.
    let mut bytes = b"not a known signature".to_vec();
    bytes.resize(4096, 0x55);
    let file = write_temp(&bytes);
    let err = decode_file(file.path(), Some("audio/x-ms-wma")).unwrap_err();
    assert!(
        matches!(&err, DecodeError::UnsupportedCodec(name) if name == "Windows Media Audio"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "The audio format is not supported: Windows Media Audio."
    );
}

fn temp_file(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file
}

#[test]
fn silence_decodes_to_exactly_its_length_into_a_vector_sized_from_the_header() {
    let file = temp_file(&flac::silent_flac(600, 16_000));
    let audio = decode_file(file.path(), None).unwrap();
    assert_eq!(audio.samples.len(), 600 * 16_000);
    assert!(audio.samples.iter().all(|s| *s == 0.0));
    // Reserved once from STREAMINFO: no doubling left a vector up to twice the size.
    let spare = audio.samples.capacity() - audio.samples.len();
    assert!(spare <= 16_384, "{spare} samples of spare capacity");
}

#[test]
fn a_stream_declaring_more_than_the_maximum_is_refused_before_decoding() {
    // One second of audio whose header claims five hours.
    let declared = 5 * 3600 * 16_000;
    let file = temp_file(&flac::silent_flac_declaring(1, 16_000, declared));
    match decode_file(file.path(), None) {
        Err(DecodeError::TooLong { max_secs }) => assert_eq!(max_secs, MAX_DURATION_SECS),
        other => panic!("expected TooLong, got {other:?}"),
    }
}

#[test]
fn a_header_that_declares_nothing_still_stops_at_the_maximum() {
    let file = temp_file(&flac::silent_flac_declaring(
        MAX_DURATION_SECS + 60,
        16_000,
        0,
    ));
    assert!(matches!(
        decode_file(file.path(), None),
        Err(DecodeError::TooLong { .. })
    ));
}

#[test]
fn a_header_that_declares_too_little_costs_no_more_than_the_audio() {
    let file = temp_file(&flac::silent_flac_declaring(30, 16_000, 16_000));
    let audio = decode_file(file.path(), None).unwrap();
    assert_eq!(audio.samples.len(), 30 * 16_000);
}

#[test]
fn a_cancelled_decode_stops_at_the_next_packet() {
    let file = temp_file(&flac::silent_flac(MAX_DURATION_SECS, 16_000));
    let cancel = Cancel::new();
    cancel.cancel();
    let opened = open_regular(file.path()).unwrap();
    assert!(matches!(
        decode_opened(opened, None, &cancel),
        Err(DecodeError::Cancelled)
    ));

    // Cancelled from another thread while it runs: it gives up long before four hours of
    // audio have come out.
    let cancel = Cancel::new();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            cancel.cancel();
        })
    };
    let opened = open_regular(file.path()).unwrap();
    let started = std::time::Instant::now();
    let result = decode_opened(opened, None, &cancel);
    canceller.join().unwrap();
    assert!(
        matches!(result, Err(DecodeError::Cancelled)),
        "after {:?}: {:?}",
        started.elapsed(),
        result.map(|a| a.samples.len())
    );
}
