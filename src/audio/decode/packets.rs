//! The packet loop: reads the chosen track packet by packet, skips damaged packets within
//! the limits, and pushes the audio, downmixed and trimmed, through the resampler.

use std::io::ErrorKind;

use symphonia::core::audio::{AudioBufferRef, SignalSpec};
use symphonia::core::codecs::Decoder;
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::{FormatReader, Packet};

use super::errors::is_data_error;
use super::track::Declared;
use super::{
    DecodeError, MAX_CONSECUTIVE_BAD_PACKETS, MAX_DURATION_SECS, SampleSink, StreamInfo,
    TARGET_SAMPLE_RATE, check_rate,
};
use crate::audio::container::{Mp4Scan, Trim};
use crate::audio::resample::{StreamingResampler, expected_output_len};
use crate::cancel::Cancel;
use verbatim_kernels::downmix::downmix;

/// An opened stream and the track to decode.
pub(super) struct Stream<'a> {
    pub format: Box<dyn FormatReader>,
    pub decoder: Box<dyn Decoder>,
    pub track_id: u32,
    /// The MP4 scan of the file, if it is one.
    pub mp4: Option<&'a Mp4Scan>,
    /// The track's declared length (within the maximum), to reserve the output up front.
    pub declared: Option<Declared>,
    /// Frames to keep, where the container bounds the decoded stream and the decoder cannot
    /// (see `track::ogg_opus_length`).
    pub keep: Option<u64>,
}

/// What the loop does next.
enum Step<T> {
    Use(T),
    /// Go on with the next packet.
    Skip,
    /// Stop decoding and keep what was decoded.
    Stop,
}

/// Decodes the packets of the stream's track to the end of the stream or the first point where
/// the rest has to be given up, handing the 16 kHz samples to `sink` as they come; stops with
/// [`DecodeError::Cancelled`] once `cancel` is set or the sink wants no more.
pub(super) fn decode_packets(
    stream: Stream<'_>,
    cancel: &Cancel,
    sink: &mut dyn SampleSink,
) -> Result<StreamInfo, DecodeError> {
    let Stream {
        mut format,
        mut decoder,
        track_id,
        mp4,
        declared,
        keep,
    } = stream;
    let mut tally = Tally::default();
    let mut output: Option<Output> = None; // set by the first decoded buffer
    while let Some(packet) = next_packet(format.as_mut(), tally.decoded_frames > 0)? {
        if cancel.is_cancelled() {
            return Err(DecodeError::Cancelled);
        }
        if packet.track_id() != track_id {
            continue;
        }
        let buf = match decode_packet(decoder.as_mut(), &packet, &mut tally)? {
            Step::Use(buf) => buf,
            Step::Skip => continue,
            Step::Stop => break,
        };
        let frames = buf.frames();
        if frames == 0 {
            continue;
        }
        let spec = *buf.spec();
        if output.is_none() {
            let trim = mp4
                .and_then(|scan| scan.trim(track_id, spec.rate))
                .unwrap_or(Trim { start: 0, keep });
            output = Some(Output::start(&spec, trim, declared, sink)?);
        }
        let out = output.as_mut().expect("initialised above");
        if spec.rate != out.rate || spec.channels.count() == 0 {
            // A damaged frame header: the stream cannot change rate mid-way.
            match tally.reject::<()>(|| "the sample rate changes mid-stream".to_owned()) {
                Step::Stop => break,
                _ => continue,
            }
        }

        let kept = out.push(&buf);
        tally.accept(frames as u64, kept);
        if !out.hand_over(sink) {
            return Err(DecodeError::Cancelled);
        }
        if tally.decoded_frames > MAX_DURATION_SECS * u64::from(out.rate) {
            return Err(DecodeError::TooLong {
                max_secs: MAX_DURATION_SECS,
            });
        }
    }
    tally.finish(output, sink)
}

/// The next packet; `None` at the end of the stream, or where the container becomes unreadable
/// after some audio was decoded (`decoded_any`).
fn next_packet(
    format: &mut dyn FormatReader,
    decoded_any: bool,
) -> Result<Option<Packet>, DecodeError> {
    match format.next_packet() {
        Ok(packet) => Ok(Some(packet)),
        // End of stream, or the file was cut short.
        Err(SymphoniaError::IoError(e)) if e.kind() == ErrorKind::UnexpectedEof => Ok(None),
        // A new chained stream starts; the first one is what we transcribe.
        Err(SymphoniaError::ResetRequired) => Ok(None),
        Err(SymphoniaError::IoError(e)) if !is_data_error(&e) => Err(DecodeError::Io(e)),
        // The container itself is damaged past this point.
        Err(_) if decoded_any => Ok(None),
        Err(err) => Err(DecodeError::Corrupt(format!(
            "unreadable container ({err})"
        ))),
    }
}

/// Decodes one packet; a packet the codec rejects as malformed is counted in `tally` and
/// skipped.
fn decode_packet<'d>(
    decoder: &'d mut dyn Decoder,
    packet: &Packet,
    tally: &mut Tally,
) -> Result<Step<AudioBufferRef<'d>>, DecodeError> {
    let decoded_any = tally.decoded_frames > 0;
    match decoder.decode(packet) {
        Ok(buf) => Ok(Step::Use(buf)),
        Err(SymphoniaError::DecodeError(msg)) => Ok(tally.reject(|| msg.to_owned())),
        // A packet shorter than its own headers claim.
        Err(SymphoniaError::IoError(e)) if is_data_error(&e) => {
            Ok(tally.reject(|| "a packet is cut short".to_owned()))
        }
        Err(SymphoniaError::Unsupported(_)) if decoded_any => Ok(Step::Stop),
        Err(SymphoniaError::Unsupported(what)) => {
            Err(DecodeError::UnsupportedCodec(what.to_owned()))
        }
        Err(SymphoniaError::IoError(e)) => Err(DecodeError::Io(e)),
        Err(_) if decoded_any => Ok(Step::Stop),
        Err(err) => Err(DecodeError::Corrupt(err.to_string())),
    }
}

/// Where decoded audio goes, set up from the first decoded buffer.
struct Output {
    resampler: StreamingResampler,
    /// Source sample rate; packets at another rate are rejected as damaged.
    rate: u32,
    /// Source channel count, as reported.
    channels: u16,
    /// Encoder delay / padding of MP4 tracks, end padding of one-page Ogg Opus streams.
    trim: Trim,
    /// The downmix of the current buffer.
    mono: Vec<f32>,
}

impl Output {
    /// Set up from the first decoded buffer, once its rate is known; room for the declared
    /// length is reserved (untouched pages cost no memory until written).
    fn start(
        spec: &SignalSpec,
        trim: Trim,
        declared: Option<Declared>,
        sink: &mut dyn SampleSink,
    ) -> Result<Self, DecodeError> {
        check_rate(spec.rate)?;
        let resampler = StreamingResampler::new(spec.rate);
        if let Some(declared) = declared.filter(|d| d.rate == spec.rate) {
            let frames = declared
                .frames
                .min(MAX_DURATION_SECS * u64::from(spec.rate));
            // A little room past the exact length for the resampler's flushed tail.
            sink.expect(expected_output_len(frames, spec.rate) as usize + 8192);
        }
        Ok(Output {
            resampler,
            rate: spec.rate,
            channels: u16::try_from(spec.channels.count()).unwrap_or(u16::MAX),
            trim,
            mono: Vec::new(),
        })
    }

    /// Downmixes and trims `buf` and feeds it to the resampler; returns how many frames were
    /// kept.
    fn push(&mut self, buf: &AudioBufferRef<'_>) -> u64 {
        downmix(buf, &mut self.mono);
        let kept = self.trim.apply(&self.mono);
        self.resampler.push(kept);
        kept.len() as u64
    }

    /// Hands the resampled output so far to `sink`; false when the sink wants no more.
    fn hand_over(&mut self, sink: &mut dyn SampleSink) -> bool {
        self.resampler
            .drain_output(&mut |samples| sink.take(samples))
    }
}

/// The counts that decide whether a stream is usable.
#[derive(Default)]
struct Tally {
    decoded_frames: u64,
    kept_frames: u64,
    good_packets: u64,
    bad_packets: u64,
    consecutive_bad: u32,
    first_problem: Option<String>,
}

impl Tally {
    /// Counts a packet rejected as damaged: skip it, or stop once more than
    /// [`MAX_CONSECUTIVE_BAD_PACKETS`] in a row were rejected (the rest is garbage).
    fn reject<T>(&mut self, problem: impl FnOnce() -> String) -> Step<T> {
        self.first_problem.get_or_insert_with(problem);
        self.bad_packets += 1;
        self.consecutive_bad += 1;
        if self.consecutive_bad > MAX_CONSECUTIVE_BAD_PACKETS {
            Step::Stop
        } else {
            Step::Skip
        }
    }

    /// Counts a decoded packet of `frames` frames, `kept` of them kept after trimming.
    fn accept(&mut self, frames: u64, kept: u64) {
        self.kept_frames += kept;
        self.decoded_frames += frames;
        self.good_packets += 1;
        self.consecutive_bad = 0;
    }

    /// The result: an error where nothing was decoded, or more packets were rejected than
    /// decoded.
    fn finish(
        self,
        output: Option<Output>,
        sink: &mut dyn SampleSink,
    ) -> Result<StreamInfo, DecodeError> {
        let Some(Output {
            resampler,
            rate,
            channels,
            ..
        }) = output
        else {
            return Err(match self.first_problem {
                Some(problem) => {
                    DecodeError::Corrupt(format!("no audio could be decoded ({problem})"))
                }
                None => DecodeError::Empty,
            });
        };
        // Less than one output sample (a single frame at 44.1 kHz, say) holds no audio.
        if self.kept_frames * u64::from(TARGET_SAMPLE_RATE) < u64::from(rate) {
            return Err(DecodeError::Empty);
        }
        if self.bad_packets > self.good_packets {
            return Err(DecodeError::Corrupt(format!(
                "{} of {} audio packets could not be decoded ({})",
                self.bad_packets,
                self.bad_packets + self.good_packets,
                self.first_problem.as_deref().unwrap_or("malformed data")
            )));
        }
        if !sink.take(&resampler.finish()) {
            return Err(DecodeError::Cancelled);
        }
        Ok(StreamInfo {
            source_sample_rate: rate,
            source_channels: channels,
            duration_secs: self.kept_frames as f64 / f64::from(rate),
        })
    }
}
