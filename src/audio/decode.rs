//! Decoding of uploaded audio files into 16 kHz mono `f32` samples.
//!
//! Supported inputs: WAV (PCM 8/16/24/32-bit, float, A-law/µ-law, IMA/MS ADPCM), MP3, FLAC,
//! Ogg Vorbis, and MP4/M4A/MOV with AAC (or MP3/FLAC/PCM) audio, plus raw ADTS AAC.
//!
//! The file is streamed: packets are read and decoded one at a time, each decoded buffer is
//! averaged down to mono and pushed through a [`StreamingResampler`], so only the 16 kHz
//! result is kept in memory.
//!
//! # Format detection
//!
//! The format is recognised from the leading bytes of the file (after any ID3v2 tag), not
//! from the name: see `container::sniff`. Unrecognised bytes are [`DecodeError::NotAudio`];
//! recognisable but unsupported formats (Opus, WebM, AIFF, WMA, AMR, ...) are
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
//! * Decompression bombs are bounded: decoding stops with [`DecodeError::TooLong`] once more
//!   than [`MAX_DURATION_SECS`] of audio has come out.
//! * MP4 sample tables whose entry counts exceed their box are rejected before the demuxer
//!   sees them: it pre-allocates from those counts, and a failed allocation aborts the
//!   process instead of unwinding. Allocation aborts elsewhere cannot be caught; a
//!   memory-limited worker process is the only complete guard against those.

use std::fs::File;
use std::io::{ErrorKind, Seek, SeekFrom};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use symphonia::core::audio::{AudioBuffer, AudioBufferRef, Signal};
use symphonia::core::codecs::{CODEC_TYPE_NULL, CodecParameters, CodecType, DecoderOptions};
use symphonia::core::conv::IntoSample;
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::{FormatOptions, FormatReader};
use symphonia::core::io::{MediaSource, MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;
use symphonia::core::sample::Sample;

use super::container::{self, Container, Sniffed, Trim};
use super::resample::StreamingResampler;

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

/// Why a file could not be decoded. The `Display` text is a user-facing sentence.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The file is empty, or its audio stream holds no samples.
    #[error("The audio data is empty.")]
    Empty,
    /// The bytes are not in any supported audio format.
    #[error(
        "Could not recognise the audio format (expected WAV, MP3, FLAC, Ogg Vorbis, M4A/MP4 with AAC)."
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
    /// The file could not be read.
    #[error("Could not read the audio file: {0}.")]
    Io(#[from] std::io::Error),
}

/// Decodes the audio file at `path` to 16 kHz mono.
///
/// `hint` is a file extension or a MIME subtype ("wav", "mp3", "mpeg", "m4a", "mp4", "flac",
/// "ogg", "aac", ...) or None to sniff. The format is always detected from the content; the
/// hint only improves the error message for known formats that are not supported.
///
/// See the module documentation for how damaged input is handled.
pub fn decode_file(path: &Path, hint: Option<&str>) -> Result<DecodedAudio, DecodeError> {
    // Check before opening: opening a FIFO would block, and a device could stream forever.
    if !std::fs::metadata(path)?.is_file() {
        return Err(DecodeError::Io(std::io::Error::new(
            ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.len() == 0 {
        return Err(DecodeError::Empty);
    }
    let hint = hint.map(normalize_hint);
    let len = meta.len();

    match panic::catch_unwind(AssertUnwindSafe(|| {
        decode_stream(file, len, hint.as_deref())
    })) {
        Ok(result) => result,
        Err(_) => Err(DecodeError::Corrupt(
            "the decoder failed on malformed data".to_owned(),
        )),
    }
}

/// Lower-cases a hint and reduces a MIME type ("audio/x-wav") to its subtype ("x-wav").
fn normalize_hint(hint: &str) -> String {
    let hint = hint.trim();
    let hint = hint.rsplit('/').next().unwrap_or(hint);
    let hint = hint.split(';').next().unwrap_or(hint).trim();
    hint.trim_start_matches('.').to_ascii_lowercase()
}

/// Maps a normalized hint to a file extension symphonia knows, and tells whether the hint
/// names a format that is known not to be supported (returned as its display name).
fn classify_hint(hint: &str) -> (Option<&'static str>, Option<&'static str>) {
    let ext = match hint {
        "wav" | "wave" | "x-wav" | "vnd.wave" | "x-pn-wav" => "wav",
        "mp3" | "mpeg" | "mpeg3" | "x-mpeg" | "x-mp3" | "mpga" => "mp3",
        "flac" | "x-flac" => "flac",
        "ogg" | "oga" | "x-ogg" | "vorbis" => "ogg",
        "m4a" | "x-m4a" | "mp4a-latm" => "m4a",
        "mp4" | "m4v" | "m4b" => "mp4",
        "mov" | "quicktime" => "mov",
        "aac" | "aacp" | "x-aac" | "adts" => "aac",
        "opus" => return (None, Some("Opus")),
        "webm" | "x-matroska" | "mkv" | "mka" => return (None, Some("WebM/Matroska")),
        "wma" | "x-ms-wma" | "asf" => return (None, Some("Windows Media Audio")),
        "amr" | "3gpp" | "3gp" | "3gpp2" | "3g2" => return (None, Some("AMR/3GPP")),
        "aiff" | "aif" | "x-aiff" => return (None, Some("AIFF")),
        "alac" => return (None, Some("Apple Lossless (ALAC)")),
        "ac3" | "eac3" => return (None, Some("Dolby Digital (AC-3)")),
        _ => return (None, None),
    };
    (Some(ext), None)
}

/// Display name for codecs that can appear in a supported container but cannot be decoded.
fn codec_name(codec: CodecType) -> String {
    use symphonia::core::codecs as c;
    let name = match codec {
        c::CODEC_TYPE_OPUS => "Opus",
        c::CODEC_TYPE_ALAC => "Apple Lossless (ALAC)",
        c::CODEC_TYPE_EAC3 | c::CODEC_TYPE_AC4 => "Dolby Digital",
        c::CODEC_TYPE_DCA => "DTS",
        c::CODEC_TYPE_SPEEX => "Speex",
        c::CODEC_TYPE_WAVPACK => "WavPack",
        c::CODEC_TYPE_MP1 => "MPEG Layer I",
        c::CODEC_TYPE_MP2 => "MPEG Layer II",
        c::CODEC_TYPE_ATRAC3 | c::CODEC_TYPE_ATRAC3PLUS => "ATRAC",
        c::CODEC_TYPE_WMA => "Windows Media Audio",
        _ => return format!("an audio codec with id {codec}"),
    };
    name.to_owned()
}

/// Maps a symphonia error raised while opening the container.
fn open_error(err: SymphoniaError) -> DecodeError {
    match err {
        SymphoniaError::Unsupported(what) if what.starts_with("core (probe)") => {
            DecodeError::NotAudio
        }
        SymphoniaError::Unsupported(what) => DecodeError::UnsupportedCodec(what.to_owned()),
        SymphoniaError::IoError(e) if e.kind() == ErrorKind::UnexpectedEof => {
            DecodeError::Corrupt("the file ends inside the header".to_owned())
        }
        SymphoniaError::IoError(e) => DecodeError::Io(e),
        SymphoniaError::DecodeError(msg) => {
            DecodeError::Corrupt(format!("malformed header ({msg})"))
        }
        SymphoniaError::LimitError(msg) => {
            DecodeError::Corrupt(format!("a size limit was exceeded ({msg})"))
        }
        SymphoniaError::SeekError(_) | SymphoniaError::ResetRequired => {
            DecodeError::Corrupt("the container could not be read".to_owned())
        }
    }
}

/// Rejects codec parameters that would make the decoder allocate absurd buffers.
fn check_params(params: &CodecParameters) -> Result<(), DecodeError> {
    if let Some(rate) = params.sample_rate
        && !SOURCE_RATE_RANGE.contains(&rate)
    {
        return Err(DecodeError::Corrupt(format!(
            "implausible sample rate of {rate} Hz"
        )));
    }
    let channels = params.channels.map_or(1, |c| c.count().max(1)) as u64;
    if let Some(frames) = params.max_frames_per_packet
        && frames.saturating_mul(channels) > MAX_SAMPLES_PER_PACKET
    {
        return Err(DecodeError::Corrupt("implausible packet size".to_owned()));
    }
    Ok(())
}

/// Where decoded audio goes, set up from the first decoded buffer.
struct Output {
    resampler: StreamingResampler,
    /// Source sample rate; packets at another rate are rejected as damaged.
    rate: u32,
    /// Source channel count, as reported.
    channels: u16,
}

fn decode_stream(
    mut file: File,
    len: u64,
    hint: Option<&str>,
) -> Result<DecodedAudio, DecodeError> {
    let (hint_ext, unsupported_by_hint) = hint.map_or((None, None), classify_hint);
    let mut sym_hint = Hint::new();
    if let Some(ext) = hint_ext {
        sym_hint.with_extension(ext);
    }

    // Identify the container from its leading bytes before any demuxer sees the file.
    let kind = match container::sniff(&mut file)? {
        Sniffed::Supported(kind) => kind,
        Sniffed::Unsupported(name) => return Err(DecodeError::UnsupportedCodec(name.to_owned())),
        Sniffed::Unknown => {
            return Err(match unsupported_by_hint {
                Some(name) => DecodeError::UnsupportedCodec(name.to_owned()),
                None => DecodeError::NotAudio,
            });
        }
    };
    let mut mp4 = None;
    let source: Box<dyn MediaSource> = if kind == Container::Mp4 {
        let scan = container::scan_mp4(&mut file, len).map_err(DecodeError::Corrupt)?;
        let source = scan.source(file);
        mp4 = Some(scan);
        Box::new(source)
    } else {
        file.seek(SeekFrom::Start(0))?;
        Box::new(file)
    };

    let mss = MediaSourceStream::new(source, MediaSourceStreamOptions::default());
    let format_opts = FormatOptions {
        // Trim encoder delay and padding (MP3, AAC) so durations match the source.
        enable_gapless: true,
        ..FormatOptions::default()
    };
    let probed = symphonia::default::get_probe()
        .format(&sym_hint, mss, &format_opts, &MetadataOptions::default())
        .map_err(open_error)?;
    let mut format: Box<dyn FormatReader> = probed.format;

    // Pick the default track if it is audio, else the first audio track we can decode.
    let mut candidates: Vec<_> = format
        .tracks()
        .iter()
        .filter(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .collect();
    if let Some(default) = format.default_track()
        && let Some(pos) = candidates.iter().position(|t| t.id == default.id)
    {
        let track = candidates.remove(pos);
        candidates.insert(0, track);
    }
    if candidates.is_empty() {
        return Err(DecodeError::NoAudioTrack);
    }
    let codecs = symphonia::default::get_codecs();
    let decoder_opts = DecoderOptions::default();
    let mut chosen = None;
    let mut first_failure = None;
    for track in &candidates {
        let attempt = check_params(&track.codec_params).and_then(|()| {
            codecs
                .make(&track.codec_params, &decoder_opts)
                .map_err(|e| match e {
                    SymphoniaError::Unsupported(_) => match codecs
                        .get_codec(track.codec_params.codec)
                    {
                        Some(desc) => DecodeError::UnsupportedCodec(format!(
                            "{} with these parameters",
                            desc.long_name
                        )),
                        None => DecodeError::UnsupportedCodec(codec_name(track.codec_params.codec)),
                    },
                    other => open_error(other),
                })
        });
        match attempt {
            Ok(decoder) => {
                chosen = Some((track.id, decoder));
                break;
            }
            Err(e) => {
                first_failure.get_or_insert(e);
            }
        }
    }
    let Some((track_id, mut decoder)) = chosen else {
        return Err(first_failure.unwrap_or(DecodeError::NoAudioTrack));
    };
    drop(candidates);

    let mut stream: Option<Output> = None; // set by the first decoded buffer
    let mut mono: Vec<f32> = Vec::new();
    // Encoder delay / padding of MP4 tracks, once the sample rate is known.
    let mut trim = Trim {
        start: 0,
        keep: None,
    };
    let mut decoded_frames: u64 = 0;
    let mut kept_frames: u64 = 0;
    let mut good_packets: u64 = 0;
    let mut bad_packets: u64 = 0;
    let mut consecutive_bad: u32 = 0;
    let mut first_problem: Option<String> = None;

    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            // End of stream, or the file was cut short.
            Err(SymphoniaError::IoError(e)) if e.kind() == ErrorKind::UnexpectedEof => break,
            // A new chained stream starts; the first one is what we transcribe.
            Err(SymphoniaError::ResetRequired) => break,
            Err(SymphoniaError::IoError(e)) if !is_data_error(&e) => {
                return Err(DecodeError::Io(e));
            }
            Err(err) => {
                // The container itself is damaged past this point.
                if decoded_frames > 0 {
                    break;
                }
                return Err(DecodeError::Corrupt(format!(
                    "unreadable container ({err})"
                )));
            }
        };
        if packet.track_id() != track_id {
            continue;
        }

        let buf = match decoder.decode(&packet) {
            Ok(buf) => buf,
            Err(SymphoniaError::DecodeError(msg)) => {
                first_problem.get_or_insert_with(|| msg.to_owned());
                bad_packets += 1;
                consecutive_bad += 1;
                if consecutive_bad > MAX_CONSECUTIVE_BAD_PACKETS {
                    break;
                }
                continue;
            }
            // A packet shorter than its own headers claim.
            Err(SymphoniaError::IoError(e)) if is_data_error(&e) => {
                first_problem.get_or_insert_with(|| "a packet is cut short".to_owned());
                bad_packets += 1;
                consecutive_bad += 1;
                if consecutive_bad > MAX_CONSECUTIVE_BAD_PACKETS {
                    break;
                }
                continue;
            }
            Err(SymphoniaError::Unsupported(what)) => {
                if decoded_frames > 0 {
                    break;
                }
                return Err(DecodeError::UnsupportedCodec(what.to_owned()));
            }
            Err(SymphoniaError::IoError(e)) => return Err(DecodeError::Io(e)),
            Err(err) => {
                if decoded_frames > 0 {
                    break;
                }
                return Err(DecodeError::Corrupt(err.to_string()));
            }
        };

        let frames = buf.frames();
        if frames == 0 {
            continue;
        }
        let spec = *buf.spec();
        if stream.is_none() {
            if !SOURCE_RATE_RANGE.contains(&spec.rate) {
                return Err(DecodeError::Corrupt(format!(
                    "implausible sample rate of {} Hz",
                    spec.rate
                )));
            }
            if let Some(t) = mp4.as_ref().and_then(|scan| scan.trim(track_id, spec.rate)) {
                trim = t;
            }
            stream = Some(Output {
                resampler: StreamingResampler::new(spec.rate),
                rate: spec.rate,
                channels: u16::try_from(spec.channels.count()).unwrap_or(u16::MAX),
            });
        }
        let out = stream.as_mut().expect("initialised above");
        if spec.rate != out.rate || spec.channels.count() == 0 {
            // A damaged frame header: the stream cannot change rate mid-way.
            first_problem.get_or_insert_with(|| "the sample rate changes mid-stream".to_owned());
            bad_packets += 1;
            consecutive_bad += 1;
            if consecutive_bad > MAX_CONSECUTIVE_BAD_PACKETS {
                break;
            }
            continue;
        }

        downmix(&buf, &mut mono);
        let kept = trim.apply(&mono);
        out.resampler.push(kept);
        kept_frames += kept.len() as u64;
        decoded_frames += frames as u64;
        good_packets += 1;
        consecutive_bad = 0;

        if decoded_frames > MAX_DURATION_SECS * u64::from(out.rate) {
            return Err(DecodeError::TooLong {
                max_secs: MAX_DURATION_SECS,
            });
        }
    }

    let Some(Output {
        resampler,
        rate,
        channels,
    }) = stream
    else {
        return Err(match first_problem {
            Some(problem) => DecodeError::Corrupt(format!("no audio could be decoded ({problem})")),
            None => DecodeError::Empty,
        });
    };
    if kept_frames == 0 {
        return Err(DecodeError::Empty);
    }
    if bad_packets > good_packets {
        return Err(DecodeError::Corrupt(format!(
            "{bad_packets} of {} audio packets could not be decoded ({})",
            bad_packets + good_packets,
            first_problem.as_deref().unwrap_or("malformed data")
        )));
    }

    Ok(DecodedAudio {
        samples: resampler.finish(),
        source_sample_rate: rate,
        source_channels: channels,
        duration_secs: kept_frames as f64 / f64::from(rate),
    })
}

/// Whether an I/O error raised by the demuxer or decoder reflects the data (a short read on
/// malformed or truncated input) rather than a failing device.
fn is_data_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::UnexpectedEof
            | ErrorKind::InvalidData
            | ErrorKind::InvalidInput
            | ErrorKind::Other
    )
}

/// Averages all channels of `buf` into `out` (cleared first). Float samples are sanitized
/// (see [`sanitize`]).
fn downmix(buf: &AudioBufferRef<'_>, out: &mut Vec<f32>) {
    match buf {
        AudioBufferRef::U8(b) => downmix_planes(b, out),
        AudioBufferRef::U16(b) => downmix_planes(b, out),
        AudioBufferRef::U24(b) => downmix_planes(b, out),
        AudioBufferRef::U32(b) => downmix_planes(b, out),
        AudioBufferRef::S8(b) => downmix_planes(b, out),
        AudioBufferRef::S16(b) => downmix_planes(b, out),
        AudioBufferRef::S24(b) => downmix_planes(b, out),
        AudioBufferRef::S32(b) => downmix_planes(b, out),
        AudioBufferRef::F32(b) => {
            downmix_planes(b, out);
            sanitize(out);
        }
        AudioBufferRef::F64(b) => {
            downmix_planes(b, out);
            sanitize(out);
        }
    }
}

fn downmix_planes<S>(buf: &AudioBuffer<S>, out: &mut Vec<f32>)
where
    S: Sample + IntoSample<f32>,
{
    out.clear();
    let channels = buf.spec().channels.count();
    if channels == 0 {
        return;
    }
    out.extend(buf.chan(0).iter().map(|&s| s.into_sample()));
    for ch in 1..channels {
        for (o, &s) in out.iter_mut().zip(buf.chan(ch)) {
            *o += IntoSample::<f32>::into_sample(s);
        }
    }
    if channels > 1 {
        let scale = 1.0 / channels as f32;
        out.iter_mut().for_each(|o| *o *= scale);
    }
}

/// Float streams carry no range guarantee: NaN becomes silence and everything is clipped to
/// full scale, so damaged data cannot overflow the resampler.
fn sanitize(samples: &mut [f32]) {
    for s in samples {
        *s = if s.is_nan() { 0.0 } else { s.clamp(-1.0, 1.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_normalized() {
        assert_eq!(normalize_hint("audio/x-WAV"), "x-wav");
        assert_eq!(normalize_hint(".MP3"), "mp3");
        assert_eq!(normalize_hint("audio/mpeg; charset=binary"), "mpeg");
        assert_eq!(classify_hint("mpeg").0, Some("mp3"));
        assert_eq!(classify_hint("opus").1, Some("Opus"));
        assert_eq!(classify_hint("nonsense"), (None, None));
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
            DecodeError::Io(std::io::Error::new(ErrorKind::NotFound, "not found")),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(msg.ends_with('.'), "{msg}");
            assert!(msg.chars().next().unwrap().is_uppercase(), "{msg}");
        }
    }

    #[test]
    fn downmix_averages_channels() {
        use symphonia::core::audio::{Channels, SignalSpec};
        let spec = SignalSpec::new(16_000, Channels::FRONT_LEFT | Channels::FRONT_RIGHT);
        let mut buf = AudioBuffer::<f32>::new(4, spec);
        buf.render_reserved(Some(4));
        buf.chan_mut(0).copy_from_slice(&[1.0, 0.5, f32::NAN, 0.0]);
        buf.chan_mut(1).copy_from_slice(&[0.0, 0.5, 0.0, -1.0]);
        let mut out = Vec::new();
        downmix(
            &AudioBufferRef::F32(std::borrow::Cow::Borrowed(&buf)),
            &mut out,
        );
        assert_eq!(out, vec![0.5, 0.5, 0.0, -0.5]);

        buf.chan_mut(0)
            .copy_from_slice(&[f32::INFINITY, 1e30, -1e30, 0.25]);
        downmix(
            &AudioBufferRef::F32(std::borrow::Cow::Borrowed(&buf)),
            &mut out,
        );
        assert!(
            out.iter().all(|s| s.is_finite() && s.abs() <= 1.0),
            "{out:?}"
        );
    }
}
