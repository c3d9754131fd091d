//! Recognising the container from the first bytes of a file: signatures at offset 0, and
//! MPEG audio, ADTS or FLAC after ID3v2 tags and zero padding.

use std::fs::File;
use std::io;

use super::read_at;

/// A container recognised by its leading bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    Wav,
    Flac,
    Ogg,
    Mp4,
    MpegAudio,
    Adts,
    /// Matroska and WebM.
    Matroska,
    Aiff,
    Caf,
}

/// The result of [`sniff`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    Supported(Container),
    /// A known audio format this decoder does not handle, by display name.
    Unsupported(&'static str),
    Unknown,
}

/// Upper bound for ID3v2 tags plus zero padding skipped before the first audio frame.
const MAX_LEADING_BYTES: u64 = 16 * 1024 * 1024;

/// Identifies the container of `file` from its first bytes. Leaves the file position
/// unspecified.
pub(crate) fn sniff(file: &mut File) -> io::Result<Sniffed> {
    let mut head = [0u8; 16];
    let n = read_at(file, 0, &mut head)?;
    if let Some(found) = sniff_head(&head[..n]) {
        return Ok(found);
    }

    // MPEG audio, ADTS and FLAC may follow ID3v2 tags and zero padding.
    let mut pos = 0u64;
    let mut buf = [0u8; 4096];
    let mut skipped_tag = false;
    while pos < MAX_LEADING_BYTES {
        let n = read_at(file, pos, &mut buf)?;
        let data = &buf[..n];
        if data.len() >= 10 && &data[..3] == b"ID3" {
            let size = syncsafe(&data[6..10]);
            let footer = if data[5] & 0x10 != 0 { 10 } else { 0 };
            pos += 10 + u64::from(size) + footer;
            skipped_tag = true;
            continue;
        }
        let zeros = data.iter().take_while(|&&b| b == 0).count();
        if zeros == data.len() {
            if n < buf.len() {
                break; // only zeros up to the end of the file
            }
            pos += zeros as u64;
            continue;
        }
        if zeros > 0 {
            pos += zeros as u64;
            continue;
        }
        if skipped_tag && data.starts_with(b"fLaC") {
            return Ok(Sniffed::Supported(Container::Flac));
        }
        return Ok(mpeg_or_adts(data).map_or(Sniffed::Unknown, Sniffed::Supported));
    }
    Ok(Sniffed::Unknown)
}

fn syncsafe(b: &[u8]) -> u32 {
    b.iter()
        .fold(0u32, |acc, &x| (acc << 7) | u32::from(x & 0x7f))
}

/// Signatures found at offset 0.
fn sniff_head(h: &[u8]) -> Option<Sniffed> {
    use Sniffed::{Supported, Unsupported};
    let at = |off: usize, sig: &[u8]| h.len() >= off + sig.len() && &h[off..off + sig.len()] == sig;
    if at(0, b"RIFF") && at(8, b"WAVE") {
        return Some(Supported(Container::Wav));
    }
    if at(0, b"fLaC") {
        return Some(Supported(Container::Flac));
    }
    if at(0, b"OggS") {
        return Some(Supported(Container::Ogg));
    }
    const MP4_FIRST_BOXES: [&[u8]; 7] = [
        b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot",
    ];
    if MP4_FIRST_BOXES.iter().any(|t| at(4, t)) {
        return Some(Supported(Container::Mp4));
    }
    if (at(0, b"RF64") || at(0, b"BW64")) && at(8, b"WAVE") {
        return Some(Unsupported("RF64 WAV"));
    }
    if at(0, b"FORM") && (at(8, b"AIFF") || at(8, b"AIFC")) {
        return Some(Supported(Container::Aiff));
    }
    if at(0, b"caff") {
        return Some(Supported(Container::Caf));
    }
    if at(0, &[0x1A, 0x45, 0xDF, 0xA3]) {
        return Some(Supported(Container::Matroska));
    }
    if at(0, &[0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) {
        return Some(Unsupported("Windows Media Audio (WMA)"));
    }
    if at(0, b"#!AMR") {
        return Some(Unsupported("AMR"));
    }
    if at(0, b"wvpk") {
        return Some(Unsupported("WavPack"));
    }
    if at(0, b"MAC ") {
        return Some(Unsupported("Monkey's Audio (APE)"));
    }
    None
}

/// Whether `d` starts with a plausible MPEG audio or ADTS frame header.
fn mpeg_or_adts(d: &[u8]) -> Option<Container> {
    if d.len() < 4 || d[0] != 0xFF || d[1] & 0xE0 != 0xE0 {
        return None;
    }
    let layer = (d[1] >> 1) & 0b11;
    if layer == 0 {
        // ADTS: 12-bit sync, layer 00, sampling frequency index < 13.
        let sync_ok = d[1] & 0xF6 == 0xF0;
        let sf_index = (d[2] >> 2) & 0x0F;
        return (sync_ok && sf_index < 13).then_some(Container::Adts);
    }
    let version = (d[1] >> 3) & 0b11;
    let bitrate = d[2] >> 4;
    let rate = (d[2] >> 2) & 0b11;
    (version != 0b01 && bitrate != 0b1111 && rate != 0b11).then_some(Container::MpegAudio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sync_patterns() {
        // MPEG-1 Layer III, 128 kb/s, 44.1 kHz.
        assert_eq!(
            mpeg_or_adts(&[0xFF, 0xFB, 0x90, 0x64]),
            Some(Container::MpegAudio)
        );
        // ADTS, MPEG-4 AAC LC, 44.1 kHz.
        assert_eq!(
            mpeg_or_adts(&[0xFF, 0xF1, 0x50, 0x80]),
            Some(Container::Adts)
        );
        // Reserved version, bad bitrate index, reserved rate, no sync.
        assert_eq!(mpeg_or_adts(&[0xFF, 0xEB, 0x90, 0x64]), None);
        assert_eq!(mpeg_or_adts(&[0xFF, 0xFB, 0xF0, 0x64]), None);
        assert_eq!(mpeg_or_adts(&[0xFF, 0xFB, 0x9C, 0x64]), None);
        assert_eq!(mpeg_or_adts(&[0x00, 0xFB, 0x90, 0x64]), None);
    }

    #[test]
    fn leading_signatures() {
        assert_eq!(
            sniff_head(b"RIFF\0\0\0\0WAVEfmt "),
            Some(Sniffed::Supported(Container::Wav))
        );
        assert_eq!(sniff_head(b"RIFF\0\0\0\0AVI LIST"), None);
        assert_eq!(
            sniff_head(b"\0\0\0\x20ftypM4A "),
            Some(Sniffed::Supported(Container::Mp4))
        );
        assert_eq!(
            sniff_head(b"OggS\0\x02"),
            Some(Sniffed::Supported(Container::Ogg))
        );
        assert_eq!(
            sniff_head(b"\x1A\x45\xDF\xA3\x9F\x42\x86\x81"),
            Some(Sniffed::Supported(Container::Matroska))
        );
        assert_eq!(
            sniff_head(b"FORM\0\0\x10\0AIFCFVER"),
            Some(Sniffed::Supported(Container::Aiff))
        );
        assert_eq!(
            sniff_head(b"caff\0\x01\0\0desc"),
            Some(Sniffed::Supported(Container::Caf))
        );
        assert_eq!(sniff_head(b"#!AMR\n"), Some(Sniffed::Unsupported("AMR")));
        assert_eq!(sniff_head(b"Hello"), None);
    }

    #[test]
    fn flac_after_an_id3_tag_is_recognised() {
        let mut bytes = b"ID3\x04\x00\x00\x00\x00\x00\x05hello".to_vec();
        bytes.extend_from_slice(&[0; 100]); // padding after the tag
        bytes.extend_from_slice(b"fLaC\x00\x00\x00\x22");
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        assert_eq!(
            sniff(&mut file).unwrap(),
            Sniffed::Supported(Container::Flac)
        );
    }
}
