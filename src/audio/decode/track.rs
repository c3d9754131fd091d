//! Choosing the track to decode and making its decoder, refusing codec parameters that
//! would make the decoder allocate absurd buffers.

use symphonia::core::codecs::{
    CODEC_TYPE_NULL, CODEC_TYPE_OPUS, CodecParameters, Decoder, DecoderOptions,
};
use symphonia::core::formats::{FormatReader, Track};

use super::alac;
use super::errors::decoder_error;
use super::{DecodeError, MAX_SAMPLES_PER_PACKET, check_rate};
use crate::audio::container::Container;

/// The length a track's header declares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Declared {
    pub frames: u64,
    pub rate: u32,
}

impl Declared {
    pub fn secs(self) -> f64 {
        self.frames as f64 / f64::from(self.rate)
    }
}

/// The length track `track_id` declares, where it declares one that can be trusted to bound
/// the decode. WAV's is left out: streaming writers put a placeholder (up to 4 GiB) there.
pub(super) fn declared_frames(
    format: &dyn FormatReader,
    track_id: u32,
    container: Container,
) -> Option<Declared> {
    if container == Container::Wav {
        return None;
    }
    let params = &format
        .tracks()
        .iter()
        .find(|t| t.id == track_id)?
        .codec_params;
    let rate = params.sample_rate.filter(|r| *r > 0)?;
    let length = params.n_frames.filter(|n| *n > 0)?;
    // The length is in the track's time base: frames for most containers, but Matroska counts
    // in its timestamp units (milliseconds by default).
    let frames = match params.time_base {
        Some(tb)
            if tb.denom > 0 && u64::from(tb.numer) * u64::from(rate) != u64::from(tb.denom) =>
        {
            let frames =
                u128::from(length) * u128::from(tb.numer) * u128::from(rate) / u128::from(tb.denom);
            u64::try_from(frames).unwrap_or(u64::MAX)
        }
        _ => length,
    };
    Some(Declared {
        frames: Some(frames).filter(|f| *f > 0)?,
        rate,
    })
}

/// The frames an Ogg Opus track holds after the pre-skip: its final granule position less the
/// pre-skip (RFC 7845 §4.5). The demuxer trims the end padding off the last packet of a stream
/// spread over several pages, but not of a stream on one page, where this bounds the output.
pub(super) fn ogg_opus_length(
    format: &dyn FormatReader,
    track_id: u32,
    container: Container,
) -> Option<u64> {
    if container != Container::Ogg {
        return None;
    }
    let params = &format
        .tracks()
        .iter()
        .find(|t| t.id == track_id)?
        .codec_params;
    let head = params.extra_data.as_deref()?;
    if params.codec != CODEC_TYPE_OPUS || head.len() < 12 {
        return None;
    }
    let pre_skip = u16::from_le_bytes([head[10], head[11]]);
    params.n_frames?.checked_sub(u64::from(pre_skip))
}

/// The default track if it is audio, else the first audio track that can be decoded: its id
/// and its decoder. Where none can be decoded, the error of the first one tried.
pub(super) fn choose_track(
    format: &dyn FormatReader,
) -> Result<(u32, Box<dyn Decoder>), DecodeError> {
    let candidates = candidates(format);
    if candidates.is_empty() {
        return Err(DecodeError::NoAudioTrack);
    }
    let mut first_failure = None;
    for track in &candidates {
        match make_decoder(&track.codec_params) {
            Ok(decoder) => return Ok((track.id, decoder)),
            Err(e) => {
                first_failure.get_or_insert(e);
            }
        }
    }
    Err(first_failure.unwrap_or(DecodeError::NoAudioTrack))
}

/// The tracks with a codec, the default track first.
fn candidates(format: &dyn FormatReader) -> Vec<&Track> {
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
    candidates
}

fn make_decoder(params: &CodecParameters) -> Result<Box<dyn Decoder>, DecodeError> {
    let params = alac::with_plain_cookie(params);
    check_params(&params)?;
    let codecs = super::opus::codecs();
    codecs
        .make(&params, &DecoderOptions::default())
        .map_err(|e| decoder_error(e, codecs, params.codec))
}

/// Rejects codec parameters that would make the decoder allocate absurd buffers.
fn check_params(params: &CodecParameters) -> Result<(), DecodeError> {
    if let Some(rate) = params.sample_rate {
        check_rate(rate)?;
    }
    let channels = params.channels.map_or(1, |c| c.count().max(1)) as u64;
    let too_big =
        |frames: u64, channels: u64| frames.saturating_mul(channels) > MAX_SAMPLES_PER_PACKET;
    if let Some(frames) = params.max_frames_per_packet
        && too_big(frames, channels)
    {
        return Err(DecodeError::Corrupt("implausible packet size".to_owned()));
    }
    // The ALAC decoder sizes its buffer from its magic cookie, not from these parameters.
    if let Some((frames, channels)) = alac::frame_size(params)
        && too_big(frames, channels)
    {
        return Err(DecodeError::Corrupt("implausible packet size".to_owned()));
    }
    Ok(())
}
