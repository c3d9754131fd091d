//! Opening the container: recognise it from its leading bytes, check the structure of the
//! containers that need it (MP4, Matroska, CAF) and open exactly that demuxer on exactly what
//! was checked; other files go through symphonia's probe.

use std::fs::File;

use symphonia::core::formats::{FormatOptions, FormatReader};
use symphonia::core::io::{MediaSource, MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use super::DecodeError;
use super::errors::open_error;
use super::hint::classify_hint;
use crate::audio::container::{self, Container, Mp4Scan, Sniffed};

/// A container ready to be read.
pub(super) struct Opened {
    /// The demuxer.
    pub format: Box<dyn FormatReader>,
    /// What the MP4 scan found, for MP4/MOV files.
    pub mp4: Option<Mp4Scan>,
    /// The container, as recognised from the leading bytes.
    pub container: Container,
}

/// Recognises the container of `file` (`len` bytes) and opens its demuxer; `hint` is a
/// normalised format hint.
pub(super) fn open_container(
    mut file: File,
    len: u64,
    hint: Option<&str>,
) -> Result<Opened, DecodeError> {
    let (hint_ext, unsupported_by_hint) = hint.map_or((None, None), classify_hint);
    let kind = recognise(&mut file, unsupported_by_hint)?;
    let (source, mp4) = media_source(file, len, kind)?;
    let format = match kind {
        Container::Mp4 | Container::Matroska | Container::Caf => open_checked(source, kind)?,
        _ => probe(source, hint_ext)?,
    };
    Ok(Opened {
        format,
        mp4,
        container: kind,
    })
}

/// Identifies the container from its leading bytes before any demuxer sees the file. Where
/// the bytes are unknown, a hint naming an unsupported format gives the better message.
fn recognise(
    file: &mut File,
    unsupported_by_hint: Option<&'static str>,
) -> Result<Container, DecodeError> {
    match container::sniff(file)? {
        Sniffed::Supported(kind) => Ok(kind),
        Sniffed::Unsupported(name) => Err(DecodeError::UnsupportedCodec(name.to_owned())),
        Sniffed::Unknown => Err(match unsupported_by_hint {
            Some(name) => DecodeError::UnsupportedCodec(name.to_owned()),
            None => DecodeError::NotAudio,
        }),
    }
}

/// The file as the demuxer should read it: MP4 and Matroska files checked (and where cut
/// short, ended or patched) by their scans, CAF files checked. Every file is read through a
/// [`ScannedSource`](container::ScannedSource), so an offset in the file that points before
/// its start is a data error, never an error of the operating system's.
fn media_source(
    mut file: File,
    len: u64,
    kind: Container,
) -> Result<(Box<dyn MediaSource>, Option<Mp4Scan>), DecodeError> {
    match kind {
        Container::Mp4 => {
            let scan = container::scan_mp4(&mut file, len).map_err(DecodeError::Corrupt)?;
            let source = scan.source(file);
            return Ok((Box::new(source), Some(scan)));
        }
        Container::Matroska => {
            let scan = container::scan_mkv(&mut file, len).map_err(DecodeError::Corrupt)?;
            return Ok((Box::new(scan.source(file)), None));
        }
        Container::Caf => container::scan_caf(&mut file, len).map_err(DecodeError::Corrupt)?,
        _ => {}
    }
    Ok((Box::new(container::ScannedSource::new(file, len)), None))
}

fn format_options() -> FormatOptions {
    FormatOptions {
        // Trim encoder delay and padding (MP3, AAC) so durations match the source.
        enable_gapless: true,
        ..FormatOptions::default()
    }
}

/// Opens the demuxer of a container whose structure was checked, reading from the start of
/// the file as the check did. (The probe would look for a marker further on when the first
/// bytes hold none of its own, and hand the demuxer boxes no check had seen: a fuzzed MP4 that
/// began with `moov` had an `ftyp` at byte 216 whose sample table asked for 32 GB.)
fn open_checked(
    source: Box<dyn MediaSource>,
    kind: Container,
) -> Result<Box<dyn FormatReader>, DecodeError> {
    use symphonia::default::formats::{CafReader, IsoMp4Reader, MkvReader};
    let mss = MediaSourceStream::new(source, MediaSourceStreamOptions::default());
    let options = format_options();
    let format: Box<dyn FormatReader> = match kind {
        Container::Mp4 => Box::new(IsoMp4Reader::try_new(mss, &options).map_err(open_error)?),
        Container::Matroska => Box::new(MkvReader::try_new(mss, &options).map_err(open_error)?),
        _ => Box::new(CafReader::try_new(mss, &options).map_err(open_error)?),
    };
    Ok(format)
}

/// Opens the demuxer through symphonia's probe.
fn probe(
    source: Box<dyn MediaSource>,
    hint_ext: Option<&str>,
) -> Result<Box<dyn FormatReader>, DecodeError> {
    let mut sym_hint = Hint::new();
    if let Some(ext) = hint_ext {
        sym_hint.with_extension(ext);
    }
    let mss = MediaSourceStream::new(source, MediaSourceStreamOptions::default());
    let probed = symphonia::default::get_probe()
        .format(
            &sym_hint,
            mss,
            &format_options(),
            &MetadataOptions::default(),
        )
        .map_err(open_error)?;
    Ok(probed.format)
}
