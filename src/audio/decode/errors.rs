//! How errors raised by symphonia while opening a file map to [`DecodeError`].

use std::io::ErrorKind;

use symphonia::core::codecs::{CODEC_TYPE_OPUS, CodecRegistry, CodecType};
use symphonia::core::errors::Error as SymphoniaError;

use super::DecodeError;

/// Maps a symphonia error raised while opening the container.
pub(super) fn open_error(err: SymphoniaError) -> DecodeError {
    match err {
        SymphoniaError::Unsupported(what) if what.starts_with("core (probe)") => {
            DecodeError::NotAudio
        }
        SymphoniaError::Unsupported(what) => DecodeError::UnsupportedCodec(what.to_owned()),
        SymphoniaError::IoError(e) if e.kind() == ErrorKind::UnexpectedEof => {
            DecodeError::Corrupt("the file ends inside the header".to_owned())
        }
        // A seek before the start, a length that runs past any end: the file's content.
        SymphoniaError::IoError(e) if is_data_error(&e) => {
            DecodeError::Corrupt(format!("malformed header ({e})"))
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

/// Maps a failure to make a decoder for a track of codec `codec`.
pub(super) fn decoder_error(
    err: SymphoniaError,
    codecs: &CodecRegistry,
    codec: CodecType,
) -> DecodeError {
    match err {
        // The Opus decoder names the form it does not handle ("Opus with more than 8 channels").
        SymphoniaError::Unsupported(what) if codec == CODEC_TYPE_OPUS => {
            DecodeError::UnsupportedCodec(what.to_owned())
        }
        SymphoniaError::Unsupported(_) => match codecs.get_codec(codec) {
            Some(desc) => {
                DecodeError::UnsupportedCodec(format!("{} with these parameters", desc.long_name))
            }
            None => DecodeError::UnsupportedCodec(codec_name(codec)),
        },
        other => open_error(other),
    }
}

/// Display name for codecs that can appear in a supported container but cannot be decoded.
fn codec_name(codec: CodecType) -> String {
    use symphonia::core::codecs as c;
    let name = match codec {
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

/// Whether an I/O error raised by the demuxer or decoder reflects the data (a short read on
/// malformed or truncated input) rather than a failing device.
pub(super) fn is_data_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::UnexpectedEof
            | ErrorKind::InvalidData
            | ErrorKind::InvalidInput
            | ErrorKind::Other
    )
}
