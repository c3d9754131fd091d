//! The formats browsers record (WebM and Ogg with Opus) and the Apple and Matroska containers:
//! Opus speech against the WAV it was made from, the details of the Opus header (pre-skip,
//! output gain, channel mapping families), damaged and hostile Opus, WebM, CAF and ALAC.

use std::io::Write;
use std::path::{Path, PathBuf};

use verbatim::audio::decode::{DecodeError, DecodedAudio, decode_file};

use crate::common::webm;

use webm::{SILENT_PACKET, opus_head};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audio")
        .join(name)
}

fn decode_fixture(name: &str) -> DecodedAudio {
    decode_file(&fixture(name), None).unwrap_or_else(|e| panic!("{name}: {e} ({e:?})"))
}

fn decode_bytes(bytes: &[u8]) -> Result<DecodedAudio, DecodeError> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
    decode_file(file.path(), None)
}

fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|&s| f64::from(s) * f64::from(s)).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

/// The lag of `b` against `a` (in samples, within `max_lag`) where they correlate best, and the
/// normalised correlation there.
fn best_alignment(a: &[f32], b: &[f32], max_lag: isize) -> (isize, f64) {
    (-max_lag..=max_lag)
        .map(|lag| {
            let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
            for (i, &x) in a.iter().enumerate() {
                let Some(&y) = b.get((i as isize + lag) as usize) else {
                    continue;
                };
                if i as isize + lag < 0 {
                    continue;
                }
                ab += f64::from(x) * f64::from(y);
                aa += f64::from(x) * f64::from(x);
                bb += f64::from(y) * f64::from(y);
            }
            (lag, ab / (aa * bb).sqrt().max(1e-12))
        })
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap()
}

/// The corpus clip the Opus fixtures were made from (see make.sh).
fn source_speech() -> DecodedAudio {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    decode_file(&path, None).unwrap()
}

#[test]
fn opus_speech_matches_the_wav_it_was_made_from() {
    let wav = source_speech();
    for (name, end_padding) in [
        // Ogg's final granule position trims the stream to the sample.
        ("speech_48k_mono.opus", 0),
        // Matroska keeps the last packet whole: up to 20 ms (320 samples at 16 kHz) more.
        ("speech_48k_mono.webm", 320),
    ] {
        let opus = decode_fixture(name);
        assert_eq!(
            (opus.source_sample_rate, opus.source_channels),
            (48_000, 1),
            "{name}"
        );
        let extra = opus.samples.len() as i64 - wav.samples.len() as i64;
        assert!(
            (0..=end_padding + 1).contains(&extra),
            "{name}: {} samples against the WAV's {}",
            opus.samples.len(),
            wav.samples.len()
        );
        // The pre-skip is dropped: the speech lines up with the WAV to the sample (without it,
        // it would come 312 / 3 = 104 samples late).
        let (lag, correlation) = best_alignment(&wav.samples, &opus.samples, 160);
        eprintln!("{name}: lag {lag}, correlation {correlation:.3}");
        assert!(lag.abs() <= 1, "{name}: off by {lag} samples");
        assert!(correlation > 0.95, "{name}: correlation {correlation:.3}");
        let level = rms(&opus.samples) / rms(&wav.samples);
        assert!((0.85..1.15).contains(&level), "{name}: level {level:.3}");
    }
}

#[test]
fn stereo_opus_is_averaged_to_mono() {
    let audio = decode_fixture("tone_48k_stereo.opus");
    assert_eq!(audio.source_channels, 2);
    assert_eq!(audio.samples.len(), 16_000);
    let mid = &audio.samples[2_000..14_000];
    // Left 440 Hz, right 1000 Hz, each 1/8: halved by the average.
    for freq in [440.0, 1000.0] {
        let amp = amplitude_at(mid, freq);
        assert!((amp - 0.0625).abs() < 0.008, "{freq} Hz amplitude {amp}");
    }
}

/// Amplitude of the `freq` component of 16 kHz audio (Goertzel).
fn amplitude_at(x: &[f32], freq: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * freq / 16_000.0;
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &v in x {
        let s0 = f64::from(v) + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    2.0 * (s1 * s1 + s2 * s2 - coeff * s1 * s2).max(0.0).sqrt() / x.len() as f64
}

/// The speech WebM with the output gain of its identification header set to `q78` (Q7.8 dB).
fn webm_with_gain(q78: i16) -> Vec<u8> {
    let mut bytes = std::fs::read(fixture("speech_48k_mono.webm")).unwrap();
    let head = bytes.windows(8).position(|w| w == b"OpusHead").unwrap();
    bytes[head + 16..head + 18].copy_from_slice(&q78.to_le_bytes());
    bytes
}

#[test]
fn the_output_gain_of_the_header_is_applied() {
    let plain = decode_bytes(&webm_with_gain(0)).unwrap();
    // -6.02 dB halves the amplitude.
    let quieter = decode_bytes(&webm_with_gain(-1541)).unwrap();
    let ratio = rms(&quieter.samples) / rms(&plain.samples);
    assert!((ratio - 0.5).abs() < 0.01, "ratio {ratio:.4}");
}

#[test]
fn a_pre_skip_longer_than_the_first_packets_spans_them() {
    // 25 silent packets of 20 ms (0.5 s at 48 kHz); a pre-skip of 0.1 s leaves 0.4 s.
    let packets = vec![SILENT_PACKET.to_vec(); 25];
    let audio = decode_bytes(&webm::webm(&opus_head(1, 4800, 0, 0, &[]), 1, &packets)).unwrap();
    assert_eq!(audio.samples.len(), 6_400);
    assert!((audio.duration_secs - 0.4).abs() < 1e-9);
}

#[test]
fn multistream_opus_decodes_up_to_eight_channels() {
    // 5.1 in mapping family 1: four streams, two of them coupled. Each packet holds four
    // silent frames, self-delimited but for the last.
    let packet = vec![0xF8, 0x00, 0xF8, 0x00, 0xF8, 0x00, 0xF8];
    let head = opus_head(6, 312, 0, 1, &[4, 2, 0, 4, 1, 2, 3, 5]);
    let audio = decode_bytes(&webm::webm(&head, 6, &vec![packet; 50])).unwrap();
    assert_eq!(audio.source_channels, 6);
    assert_eq!(audio.samples.len(), (48_000 - 312) / 3);

    // Ten channels (family 255) are refused by name.
    let table = [10, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    let head = opus_head(10, 312, 0, 255, &table);
    let err = decode_bytes(&webm::webm(&head, 10, &[SILENT_PACKET.to_vec()])).unwrap_err();
    assert!(
        matches!(&err, DecodeError::UnsupportedCodec(what) if what.contains("more than 8 channels")),
        "{err:?}"
    );
}

#[test]
fn malformed_opus_is_a_decode_error() {
    // TOC code 3 with a frame count of zero: every packet malformed.
    let bad = vec![vec![0x03, 0x00]; 20];
    let err = decode_bytes(&webm::webm(&opus_head(1, 312, 0, 0, &[]), 1, &bad)).unwrap_err();
    assert!(
        matches!(&err, DecodeError::Corrupt(why) if why.contains("opus")),
        "{err:?}"
    );
    // A few bad packets among good ones are skipped.
    let mut packets = vec![SILENT_PACKET.to_vec(); 50];
    packets[10] = vec![0x03, 0x00];
    packets[20] = Vec::new();
    let audio = decode_bytes(&webm::webm(&opus_head(1, 0, 0, 0, &[]), 1, &packets)).unwrap();
    assert_eq!(audio.samples.len(), 48 * 320);

    // A header that is not an identification header, and a malformed one.
    for head in [
        b"OpusTags\0\0\0\0\0\0\0\0\0\0\0".to_vec(),
        opus_head(3, 0, 0, 0, &[]),
    ] {
        let err = decode_bytes(&webm::webm(&head, 1, &[SILENT_PACKET.to_vec()])).unwrap_err();
        assert!(matches!(err, DecodeError::Corrupt(_)), "{err:?}");
    }
}

#[test]
fn hostile_matroska_sizes_are_refused_without_allocating() {
    // EBML lacing (flags 0x06) of two frames, the first claiming 2^40 bytes: the demuxer
    // would allocate that much. The file ends before that block: the packets before it stay.
    let mut packets = vec![SILENT_PACKET.to_vec(); 10];
    let bytes = webm::webm(&opus_head(1, 0, 0, 0, &[]), 1, &packets);
    let block = bytes
        .windows(5)
        .rposition(|w| w == [0xA3, 0x01, 0, 0, 0])
        .unwrap();
    let mut bomb = bytes[..block].to_vec();
    let laced = [
        &[0x81, 0, 200, 0x06, 1][..],
        &[0x01, 0, 1, 0, 0, 0, 0, 0],
        &[0xF8; 8],
    ]
    .concat();
    bomb.extend(webm::element(&[0xA3], &laced));
    let audio = decode_bytes(&bomb).unwrap();
    assert_eq!(audio.samples.len(), 9 * 320);

    // A codec private size of 2^50 bytes, before any cluster: corrupt.
    packets.truncate(1);
    let mut bytes = webm::webm(&opus_head(1, 0, 0, 0, &[]), 1, &packets);
    let private = bytes.windows(2).position(|w| w == [0x63, 0xA2]).unwrap();
    bytes[private + 2..private + 10].copy_from_slice(&((1u64 << 56) | (1 << 50)).to_be_bytes());
    let err = decode_bytes(&bytes).unwrap_err();
    assert!(matches!(err, DecodeError::Corrupt(_)), "{err:?}");
}

#[test]
fn hostile_caf_and_alac_sizes_are_refused() {
    let caf = std::fs::read(fixture("tone_44k1_mono_alac.caf")).unwrap();
    let at = |tag: &[u8]| caf.windows(4).position(|w| w == tag).unwrap();

    // A magic cookie declared as 2^50 bytes.
    let mut bomb = caf.clone();
    let kuki = at(b"kuki");
    bomb[kuki + 4..kuki + 12].copy_from_slice(&(1i64 << 50).to_be_bytes());
    assert!(matches!(decode_bytes(&bomb), Err(DecodeError::Corrupt(_))));

    // A packet table claiming 2^40 packets.
    let mut bomb = caf.clone();
    let pakt = at(b"pakt");
    bomb[pakt + 12..pakt + 20].copy_from_slice(&(1i64 << 40).to_be_bytes());
    assert!(matches!(decode_bytes(&bomb), Err(DecodeError::Corrupt(_))));

    // An ALAC frame length of 2^32 - 1 (the decoder allocates frames x channels up front).
    let mut bomb = caf;
    let config = bomb.windows(8).rposition(|w| w == b"alac\0\0\0\0").unwrap() + 8;
    bomb[config..config + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(decode_bytes(&bomb), Err(DecodeError::Corrupt(_))));
}

#[test]
fn opus_survives_the_cut_of_a_recording() {
    // A recording stopped short: the WebM and the Ogg keep the audio before the cut.
    let wav_secs = source_speech().duration_secs;
    for name in ["speech_48k_mono.webm", "speech_48k_mono.opus"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let audio = decode_bytes(&bytes[..bytes.len() * 8 / 10]).unwrap();
        let kept = audio.duration_secs / wav_secs;
        assert!((0.5..=0.9).contains(&kept), "{name}: kept {kept:.2}");
    }
}
