//! Decoding of uploaded audio files into 16 kHz mono `f32` samples.
//!
//! Supported inputs: WAV (PCM 8/16/24/32-bit, float, A-law/µ-law, IMA/MS ADPCM), MP3, FLAC,
//! Ogg (Vorbis, Opus, FLAC), WebM and Matroska (Opus, Vorbis, FLAC, AAC, PCM; what browsers'
//! MediaRecorder writes), MP4/M4A/MOV (AAC, ALAC, MP3, FLAC, PCM), AIFF/AIFC, CAF (ALAC, AAC,
//! PCM and the rest symphonia decodes), plus raw ADTS AAC. Opus is decoded by the system
//! libopus (see `opus`), everything else by symphonia.
//!
//! The file is streamed: packets are read and decoded one at a time, each decoded buffer is
//! averaged down to mono and pushed through a
//! [`StreamingResampler`](super::resample::StreamingResampler), and the 16 kHz result goes to a
//! [`SampleSink`] as it comes: [`decode_opened`] collects it, [`decode_into`] hands it on (the
//! transcription path listens to it as it comes, in bounded memory).
//!
//! # Format detection
//!
//! The format is recognised from the leading bytes of the file (after any ID3v2 tag), not
//! from the name: see `container::sniff`. Unrecognised bytes are [`DecodeError::NotAudio`];
//! recognisable but unsupported formats (WMA, AMR, WavPack, RF64, ...) are
//! [`DecodeError::UnsupportedCodec`] with the format's name.
//!
//! # Damaged input
//!
//! The rule for damaged or hostile input:
//!
//! * A packet the codec rejects as malformed is skipped, and decoding goes on with the next
//!   one. If more than [`MAX_CONSECUTIVE_BAD_PACKETS`] packets in a row are rejected, the
//!   rest of the stream is treated as garbage and decoding stops there.
//! * The stream ending early (a truncated file) or the container becoming unreadable after
//!   some audio was decoded ends decoding; everything decoded up to that point is kept. A
//!   file cut short therefore yields the audio before the cut (for MP4, as long as its index
//!   comes before the media data; Ogg loses the partial last page).
//! * The result is an error if no audio frame was decoded at all ([`DecodeError::Corrupt`]
//!   when packets were rejected or the header is cut short, [`DecodeError::Empty`] when the
//!   stream simply holds no samples), or if more packets were rejected than decoded (such
//!   audio is too gappy to transcribe faithfully).
//! * A panic inside the decoding libraries is caught and reported as
//!   [`DecodeError::Corrupt`]. (The panic message still goes to the process panic hook.)
//! * Float samples are clipped to [-1, 1] and NaN is replaced by silence.
//! * Decompression bombs are bounded: a stream whose header declares more than
//!   [`MAX_DURATION_SECS`] is refused with [`DecodeError::TooLong`] before any packet is
//!   decoded (WAV excepted: streaming writers leave a placeholder length there), and decoding
//!   stops with the same error once more than that has come out. The output is reserved from
//!   the declared length, so a long stream never pays for the vector doubling.
//! * A [`Cancel`] token stops decoding at the next packet ([`DecodeError::Cancelled`]).
//! * MP4 sample tables whose entry counts exceed their box are rejected before the demuxer
//!   sees them: it pre-allocates from those counts, and a failed allocation aborts the
//!   process instead of unwinding. Allocation aborts elsewhere cannot be caught; a
//!   memory-limited worker process is the only complete guard against those. Matroska element
//!   and lace sizes and CAF cookie, packet table and packet sizes are checked the same way
//!   (the demuxers allocate from them unchecked), and so is the frame length of an ALAC
//!   stream.

mod alac;
mod errors;
mod hint;
mod open;
mod opus;
mod packets;
mod track;

pub use hint::{FILE_EXTENSIONS, hint_for_mime};

use std::fs::File;
use std::io::ErrorKind;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use crate::cancel::Cancel;

/// Sample rate of [`DecodedAudio::samples`], in Hz.
pub const TARGET_SAMPLE_RATE: u32 = 16_000;

/// Longest audio accepted, in seconds of decoded audio (4 hours).
pub const MAX_DURATION_SECS: u64 = 4 * 60 * 60;

/// Decoding gives up on the rest of a stream after this many malformed packets in a row.
pub const MAX_CONSECUTIVE_BAD_PACKETS: u32 = 64;

/// Source sample rates outside this range are rejected as corrupt.
const SOURCE_RATE_RANGE: std::ops::RangeInclusive<u32> = 1_000..=768_000;

/// Refuse codec parameters whose per-packet buffer (frames x channels) would exceed this many
/// samples; no real stream comes close, and the decoder would allocate it up front.
const MAX_SAMPLES_PER_PACKET: u64 = 1 << 22;

/// Decoded audio, converted to [`TARGET_SAMPLE_RATE`] mono.
#[derive(Debug, Clone)]
pub struct DecodedAudio {
    /// Mono samples at 16 kHz, nominally in `[-1.0, 1.0]`.
    pub samples: Vec<f32>,
    /// Sample rate of the source stream, in Hz.
    pub source_sample_rate: u32,
    /// Channel count of the source stream (before the downmix).
    pub source_channels: u16,
    /// Duration of the decoded audio, in seconds.
    pub duration_secs: f64,
}

/// What a stream was, besides its samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamInfo {
    /// Sample rate of the source stream, in Hz.
    pub source_sample_rate: u32,
    /// Channel count of the source stream (before the downmix).
    pub source_channels: u16,
    /// Duration of the decoded audio, in seconds.
    pub duration_secs: f64,
}

/// Where decoded 16 kHz mono samples go as they come out of the decoder.
pub trait SampleSink {
    /// About this many samples are to come in all (from the stream's declared length).
    fn expect(&mut self, _samples: usize) {}
    /// Takes the next samples; false stops the decode ([`DecodeError::Cancelled`]).
    fn take(&mut self, samples: &[f32]) -> bool;
}

/// Collects the whole audio, its room reserved from the declared length (untouched pages cost
/// no memory until written).
impl SampleSink for Vec<f32> {
    fn expect(&mut self, samples: usize) {
        self.reserve(samples.saturating_sub(self.len()));
    }

    fn take(&mut self, samples: &[f32]) -> bool {
        self.extend_from_slice(samples);
        true
    }
}

/// Why a file could not be decoded. The `Display` text is a user-facing sentence.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The file is empty, or its audio stream holds no samples.
    #[error("The audio data is empty.")]
    Empty,
    /// The bytes are not in any supported audio format.
    #[error(
        "Could not recognise the audio format (expected WAV, MP3, FLAC, Ogg, Opus, WebM/Matroska, M4A/MP4, AIFF or CAF)."
    )]
    NotAudio,
    /// The container was recognised, but its audio codec or format is not supported.
    #[error("The audio format is not supported: {0}.")]
    UnsupportedCodec(String),
    /// The container was recognised, but it has no audio track.
    #[error("The file contains no audio track.")]
    NoAudioTrack,
    /// The file is damaged, truncated before any audio, or otherwise malformed.
    #[error("The audio file is corrupt or truncated: {0}.")]
    Corrupt(String),
    /// The decoded audio exceeds [`MAX_DURATION_SECS`].
    #[error("The audio is longer than the supported maximum of {} minutes.", max_secs / 60)]
    TooLong {
        /// The limit that was exceeded, in seconds.
        max_secs: u64,
    },
    /// The decode was cancelled (its request went away).
    #[error("Decoding stopped: the request was cancelled.")]
    Cancelled,
    /// The file could not be read.
    #[error("Could not read the audio file: {0}.")]
    Io(#[from] std::io::Error),
}

/// Decodes the audio file at `path` to 16 kHz mono.
///
/// `hint` is a file extension or a MIME type or subtype ("wav", "mp3", "mpeg", "m4a", "webm",
/// "audio/ogg; codecs=opus", ...; see [`hint_for_mime`]) or None to sniff. The format is always
/// detected from the content; the hint only improves the error message for known formats that
/// are not supported.
///
/// See the module documentation for how damaged input is handled.
pub fn decode_file(path: &Path, hint: Option<&str>) -> Result<DecodedAudio, DecodeError> {
    decode_opened(open_regular(path)?, hint, &Cancel::new())
}

/// How long the audio in `path` lasts by what its header says, without decoding it (for a
/// progress bar). A WAV file's from its size: its declared length may be a placeholder.
pub fn declared_duration(path: &Path) -> Option<f64> {
    let len = open_regular(path).ok()?.metadata().ok()?.len();
    let wav = open_regular(path).map(std::io::BufReader::new).ok()?;
    if let Ok(reader) = hound::WavReader::new(wav) {
        let spec = reader.spec();
        let bytes_per_second = u64::from(spec.sample_rate)
            * u64::from(spec.channels)
            * u64::from(spec.bits_per_sample).div_ceil(8);
        return (bytes_per_second > 0)
            .then(|| len.saturating_sub(44) as f64 / bytes_per_second as f64);
    }
    let opened = open::open_container(open_regular(path).ok()?, len, None).ok()?;
    let (track_id, _) = track::choose_track(opened.format.as_ref()).ok()?;
    track::declared_frames(opened.format.as_ref(), track_id, opened.container).map(|d| d.secs())
}

/// Opens `path` for reading without ever blocking in `open`: with `O_NONBLOCK`, so a FIFO or a
/// device put in the file's place cannot hang the call, then checks on the opened handle (not
/// the path, which may have changed since) that it is a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_a_regular_file());
    }
    Ok(file)
}

fn not_a_regular_file() -> std::io::Error {
    std::io::Error::new(ErrorKind::InvalidInput, "not a regular file")
}

/// Decodes an opened regular file (see [`open_regular`]) like [`decode_file`], giving up at
/// the next packet once `cancel` is cancelled.
pub fn decode_opened(
    file: File,
    hint: Option<&str>,
    cancel: &Cancel,
) -> Result<DecodedAudio, DecodeError> {
    let mut samples = Vec::new();
    let info = decode_into(file, hint, cancel, &mut samples)?;
    // A header that declared more than the stream held leaves unused room behind.
    if samples.capacity() > samples.len() + samples.len() / 8 {
        samples.shrink_to_fit();
    }
    Ok(DecodedAudio {
        samples,
        source_sample_rate: info.source_sample_rate,
        source_channels: info.source_channels,
        duration_secs: info.duration_secs,
    })
}

/// Decodes an opened regular file packet by packet into `sink`, so the whole audio need never
/// be in memory; otherwise as [`decode_opened`].
pub fn decode_into(
    file: File,
    hint: Option<&str>,
    cancel: &Cancel,
    sink: &mut dyn SampleSink,
) -> Result<StreamInfo, DecodeError> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(DecodeError::Io(not_a_regular_file()));
    }
    if meta.len() == 0 {
        return Err(DecodeError::Empty);
    }
    let hint = hint.map(hint::normalize_hint);
    let len = meta.len();

    match panic::catch_unwind(AssertUnwindSafe(|| {
        decode_stream(file, len, hint.as_deref(), cancel, sink)
    })) {
        Ok(result) => result,
        Err(_) => Err(DecodeError::Corrupt(
            "the decoder failed on malformed data".to_owned(),
        )),
    }
}

/// The decoding steps: recognise and open the container, choose the track, check its declared
/// length, decode its packets.
fn decode_stream(
    file: File,
    len: u64,
    hint: Option<&str>,
    cancel: &Cancel,
    sink: &mut dyn SampleSink,
) -> Result<StreamInfo, DecodeError> {
    let opened = open::open_container(file, len, hint)?;
    let (track_id, decoder) = track::choose_track(opened.format.as_ref())?;
    let declared = track::declared_frames(opened.format.as_ref(), track_id, opened.container);
    if let Some(declared) = declared
        && declared.secs() > MAX_DURATION_SECS as f64
    {
        return Err(DecodeError::TooLong {
            max_secs: MAX_DURATION_SECS,
        });
    }
    let keep = track::ogg_opus_length(opened.format.as_ref(), track_id, opened.container);
    let stream = packets::Stream {
        format: opened.format,
        decoder,
        track_id,
        mp4: opened.mp4.as_ref(),
        declared,
        keep,
    };
    packets::decode_packets(stream, cancel, sink)
}

/// Rejects a source sample rate outside [`SOURCE_RATE_RANGE`].
fn check_rate(rate: u32) -> Result<(), DecodeError> {
    if SOURCE_RATE_RANGE.contains(&rate) {
        Ok(())
    } else {
        Err(DecodeError::Corrupt(format!(
            "implausible sample rate of {rate} Hz"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_duration_comes_from_the_header_without_decoding() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audio");
        for name in [
            "tone_44k1_stereo_s16.wav",
            "tone_16k_mono.flac",
            "tone_44k1_mono.ogg",
        ] {
            let path = fixtures.join(name);
            let decoded = decode_file(&path, None).unwrap().duration_secs;
            let declared = declared_duration(&path).unwrap_or_else(|| panic!("{name}: none"));
            assert!(
                (declared - decoded).abs() < 0.1,
                "{name}: {declared} vs {decoded}"
            );
        }
        assert_eq!(declared_duration(&fixtures.join("Make.sh")), None);
    }

    #[test]
    fn messages_are_sentences() {
        let errors = [
            DecodeError::Empty,
            DecodeError::NotAudio,
            DecodeError::UnsupportedCodec("Opus".into()),
            DecodeError::NoAudioTrack,
            DecodeError::Corrupt("the file ends inside the header".into()),
            DecodeError::TooLong { max_secs: 10 },
            DecodeError::Cancelled,
            DecodeError::Io(std::io::Error::new(ErrorKind::NotFound, "not found")),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(msg.ends_with('.'), "{msg}");
            assert!(msg.chars().next().unwrap().is_uppercase(), "{msg}");
        }
    }
}
