//! Checks on the raw bytes of an uploaded file, done before the demuxers see it.
//!
//! * [`sniff`] identifies the container from the first bytes. The demuxer probe searches the
//!   first megabyte for any format marker, so arbitrary binary data (a ZIP, a PDF, random
//!   bytes) would often be mistaken for MP3 or ADTS frames and "decoded" into noise; here the
//!   signature must sit at the start of the file (after ID3v2 tags and zero padding).
//! * [`scan_mp4`] walks the box tree of MP4/M4A/MOV files. It rejects sample tables whose
//!   entry count cannot fit in their box (the demuxer pre-allocates from that count, and a
//!   failed allocation aborts the process), patches the size of a final box cut short by
//!   truncation so the audio before the cut stays readable, and reads the edit list that
//!   marks the AAC encoder delay and padding.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use symphonia::core::io::MediaSource;

/// A container recognised by its leading bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    Wav,
    Flac,
    Ogg,
    Mp4,
    MpegAudio,
    Adts,
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

/// Reads up to `buf.len()` bytes at `pos`; returns how many were read (short at EOF).
fn read_at(file: &mut File, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
    file.seek(SeekFrom::Start(pos))?;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

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
        return Some(Unsupported("AIFF"));
    }
    if at(0, b"caff") {
        return Some(Unsupported("Core Audio Format (CAF)"));
    }
    if at(0, &[0x1A, 0x45, 0xDF, 0xA3]) {
        return Some(Unsupported("WebM/Matroska"));
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

// ---------------------------------------------------------------------------------------
// MP4 / QuickTime

/// An edit-list entry of a track, in the track's own units.
#[derive(Debug, Clone, Copy, Default)]
struct TrackEdits {
    /// Timescale of the track's media (`mdhd`).
    media_timescale: u32,
    /// Duration of the media in `media_timescale` units (`mdhd`).
    media_duration: u64,
    /// The single non-empty edit: (start in media units, duration in movie units).
    edit: Option<(u64, u64)>,
    /// Whether the edit list had a form other than a single plain edit.
    complex_edits: bool,
}

/// Frames to drop at the start of a track and how many to keep after that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trim {
    pub start: u64,
    pub keep: Option<u64>,
}

impl Trim {
    /// Drops the frames of `frames` (the next decoded frames of the track) that fall outside
    /// the trimmed range, and advances the trim state.
    pub(crate) fn apply<'a>(&mut self, frames: &'a [f32]) -> &'a [f32] {
        let skip = self.start.min(frames.len() as u64) as usize;
        self.start -= skip as u64;
        let mut kept = &frames[skip..];
        if let Some(keep) = self.keep.as_mut() {
            let n = (*keep).min(kept.len() as u64) as usize;
            *keep -= n as u64;
            kept = &kept[..n];
        }
        kept
    }
}

/// What [`scan_mp4`] found.
#[derive(Debug, Default)]
pub(crate) struct Mp4Scan {
    movie_timescale: u32,
    /// One entry per `trak`, in file order (the demuxer's track ids are these indices).
    tracks: Vec<TrackEdits>,
    /// Position of the size field of a top-level box cut short by truncation, and its length.
    truncated_box: Option<(u64, u64, bool)>,
    /// Length the demuxer should see (drops a partial box header at the end).
    visible_len: u64,
}

impl Mp4Scan {
    /// The encoder delay and padding to trim from track `track_id`, in frames at
    /// `sample_rate`. Only the gapless form of edit lists is honoured: one edit that starts
    /// at most one second into the media and ends at most one second before its end.
    pub(crate) fn trim(&self, track_id: u32, sample_rate: u32) -> Option<Trim> {
        let t = self.tracks.get(track_id as usize)?;
        let (start, duration) = t.edit?;
        if t.complex_edits || t.media_timescale == 0 || self.movie_timescale == 0 {
            return None;
        }
        let media_ts = u128::from(t.media_timescale);
        let duration_media = u128::from(duration) * media_ts / u128::from(self.movie_timescale);
        let one_second = media_ts;
        if u128::from(start) > one_second {
            return None;
        }
        let end = u128::from(start) + duration_media;
        let keep = (duration > 0
            && end <= u128::from(t.media_duration)
            && u128::from(t.media_duration) - end <= one_second)
            .then(|| (duration_media * u128::from(sample_rate) / media_ts) as u64);
        Some(Trim {
            start: (u128::from(start) * u128::from(sample_rate) / media_ts) as u64,
            keep,
        })
    }

    /// Wraps `file` so the demuxer sees the truncation fixes made by the scan.
    pub(crate) fn source(&self, file: File) -> Mp4Source {
        let patch = self.truncated_box.map(|(pos, new_len, large)| {
            if large {
                (pos + 8, new_len.to_be_bytes().to_vec())
            } else {
                (pos, (new_len as u32).to_be_bytes().to_vec())
            }
        });
        Mp4Source {
            file,
            len: self.visible_len,
            pos: 0,
            patch,
        }
    }
}

/// At most this many boxes are examined; no real file comes near it.
const MAX_BOXES: u32 = 1_000_000;
/// Maximum nesting depth of boxes.
const MAX_DEPTH: u32 = 16;

struct Walker<'a> {
    file: &'a mut File,
    boxes: u32,
    scan: Mp4Scan,
}

struct BoxHeader {
    kind: [u8; 4],
    /// Position of the box (its size field).
    pos: u64,
    payload: u64,
    end: u64,
    /// Whether the size is stored in the 64-bit field.
    large: bool,
}

/// Validates the box structure of an MP4/MOV file; see the module docs.
pub(crate) fn scan_mp4(file: &mut File, file_len: u64) -> Result<Mp4Scan, String> {
    let mut w = Walker {
        file,
        boxes: 0,
        scan: Mp4Scan {
            visible_len: file_len,
            ..Mp4Scan::default()
        },
    };
    let mut pos = 0u64;
    let mut seen_moov = false;
    while pos < file_len {
        if file_len - pos < 8 {
            // A partial box header at the very end: hide it.
            w.scan.visible_len = pos;
            break;
        }
        let Some(h) = w.header(pos, u64::MAX)? else {
            w.scan.visible_len = pos;
            break;
        };
        let end = if h.end == u64::MAX { file_len } else { h.end };
        if end > file_len {
            if &h.kind == b"moov" {
                return Err("the file is cut off inside its index".to_owned());
            }
            // The last box was cut short; let the demuxer see it end at the end of the file.
            w.scan.truncated_box = Some((h.pos, file_len - h.pos, h.large));
            if &h.kind == b"moof" {
                break;
            }
        }
        match &h.kind {
            b"moov" => {
                seen_moov = true;
                w.children(&h, end, 1)?;
            }
            b"moof" => w.children(&h, end, 1)?,
            _ => {}
        }
        pos = end;
    }
    if !seen_moov {
        return Err("the file has no index (moov box); it is probably truncated".to_owned());
    }
    Ok(w.scan)
}

impl Walker<'_> {
    /// Reads the box header at `pos`; `parent_end` bounds the box (`u64::MAX` at the top
    /// level, where a box may run past the end of a truncated file). A size of 0 ("to the
    /// end") is reported with `end == u64::MAX` at the top level.
    fn header(&mut self, pos: u64, parent_end: u64) -> Result<Option<BoxHeader>, String> {
        self.boxes += 1;
        if self.boxes > MAX_BOXES {
            return Err("the file has an implausible number of boxes".to_owned());
        }
        let mut b = [0u8; 16];
        let n = read_at(self.file, pos, &mut b).map_err(|e| e.to_string())?;
        if n < 8 {
            return Ok(None);
        }
        let size32 = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let kind = [b[4], b[5], b[6], b[7]];
        let (header_len, size, large) = match size32 {
            1 => {
                if n < 16 {
                    return Ok(None);
                }
                let s = u64::from_be_bytes(b[8..16].try_into().expect("8 bytes"));
                (16u64, Some(s), true)
            }
            0 => (8, None, false),
            s => (8, Some(u64::from(s)), false),
        };
        let end = match size {
            Some(s) if s < header_len => {
                return Err(format!(
                    "a box of type {} has an invalid size",
                    printable(&kind)
                ));
            }
            Some(s) => pos.checked_add(s).ok_or("a box size overflows")?,
            None if parent_end == u64::MAX => u64::MAX,
            None => parent_end,
        };
        if parent_end != u64::MAX && end > parent_end {
            return Err(format!(
                "a box of type {} extends past its parent",
                printable(&kind)
            ));
        }
        Ok(Some(BoxHeader {
            kind,
            pos,
            payload: pos + header_len,
            end,
            large,
        }))
    }

    fn children(&mut self, parent: &BoxHeader, parent_end: u64, depth: u32) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("boxes are nested implausibly deep".to_owned());
        }
        let mut pos = parent.payload;
        // `meta` is a full box in ISO files (version and flags first) but not in QuickTime.
        if &parent.kind == b"meta" {
            let mut b = [0u8; 8];
            let n = read_at(self.file, pos, &mut b).map_err(|e| e.to_string())?;
            if n == 8
                && !b[4..8]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b' ')
            {
                pos += 4;
            }
        }
        let is_track = &parent.kind == b"trak";
        if is_track {
            self.scan.tracks.push(TrackEdits::default());
        }
        while pos + 8 <= parent_end {
            let Some(h) = self.header(pos, parent_end)? else {
                break;
            };
            self.check(&h, parent, depth)?;
            pos = h.end;
        }
        Ok(())
    }

    fn check(&mut self, h: &BoxHeader, parent: &BoxHeader, depth: u32) -> Result<(), String> {
        const CONTAINERS: [&[u8; 4]; 13] = [
            b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"mvex", b"traf",
            b"mfra", b"meta", b"ilst", b"tref",
        ];
        if CONTAINERS.contains(&&h.kind) || &parent.kind == b"ilst" {
            return self.children(h, h.end, depth + 1);
        }
        let payload = h.end - h.payload;
        // (bytes before the table, bytes per entry) for tables the demuxer pre-allocates.
        let table = match &h.kind {
            b"stts" | b"ctts" | b"co64" => Some((8, 8)),
            b"stsc" => Some((8, 12)),
            b"stco" | b"stss" => Some((8, 4)),
            b"stsz" => Some((12, 4)),
            b"elst" => Some((8, 12)),
            _ => None,
        };
        if let Some((fixed, per_entry)) = table {
            let mut b = [0u8; 12];
            let n = read_at(self.file, h.payload, &mut b).map_err(|e| e.to_string())?;
            if (n as u64) < fixed.min(payload) || payload < fixed {
                return Err(format!("the {} table is cut short", printable(&h.kind)));
            }
            let version = b[0];
            let (count, per_entry) = match &h.kind {
                b"stsz" => {
                    let sample_size = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    let count = u32::from_be_bytes([b[8], b[9], b[10], b[11]]);
                    (if sample_size == 0 { count } else { 0 }, per_entry)
                }
                b"elst" => {
                    let count = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    (count, if version == 1 { 20 } else { 12 })
                }
                _ => (u32::from_be_bytes([b[4], b[5], b[6], b[7]]), per_entry),
            };
            if fixed + u64::from(count) * per_entry > payload {
                return Err(format!(
                    "the {} table claims more entries than it holds",
                    printable(&h.kind)
                ));
            }
            if &h.kind == b"elst" {
                self.read_edits(h.payload + fixed, count, version)?;
            }
            return Ok(());
        }
        match &h.kind {
            b"mvhd" => {
                let (timescale, _) = self.read_timescale(h)?;
                self.scan.movie_timescale = timescale;
            }
            b"mdhd" => {
                let (timescale, duration) = self.read_timescale(h)?;
                if let Some(t) = self.scan.tracks.last_mut() {
                    t.media_timescale = timescale;
                    t.media_duration = duration;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Timescale and duration from an `mvhd` or `mdhd` box.
    fn read_timescale(&mut self, h: &BoxHeader) -> Result<(u32, u64), String> {
        let mut b = [0u8; 32];
        let n = read_at(self.file, h.payload, &mut b).map_err(|e| e.to_string())?;
        let avail = (n as u64).min(h.end - h.payload) as usize;
        let b = &b[..avail];
        let parsed = match b.first() {
            Some(1) if b.len() >= 32 => Some((
                u32::from_be_bytes(b[20..24].try_into().expect("4 bytes")),
                u64::from_be_bytes(b[24..32].try_into().expect("8 bytes")),
            )),
            Some(_) if b.len() >= 20 => Some((
                u32::from_be_bytes(b[12..16].try_into().expect("4 bytes")),
                u64::from(u32::from_be_bytes(b[16..20].try_into().expect("4 bytes"))),
            )),
            _ => None,
        };
        parsed.ok_or_else(|| format!("the {} box is cut short", printable(&h.kind)))
    }

    fn read_edits(&mut self, pos: u64, count: u32, version: u8) -> Result<(), String> {
        if self.scan.tracks.is_empty() {
            return Ok(()); // an edit list outside a track
        }
        let entry_len = if version == 1 { 20 } else { 12 };
        let mut plain = Vec::new();
        let mut complex = false;
        // Only the first few entries matter for the gapless form.
        for i in 0..count.min(8) {
            let mut b = [0u8; 20];
            let n = read_at(
                self.file,
                pos + u64::from(i) * entry_len,
                &mut b[..entry_len as usize],
            )
            .map_err(|e| e.to_string())?;
            if n < entry_len as usize {
                return Err("the edit list is cut short".to_owned());
            }
            let (duration, media_time, rate) = if version == 1 {
                (
                    u64::from_be_bytes(b[0..8].try_into().expect("8 bytes")),
                    i64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
                    &b[16..20],
                )
            } else {
                (
                    u64::from(u32::from_be_bytes(b[0..4].try_into().expect("4 bytes"))),
                    i64::from(i32::from_be_bytes(b[4..8].try_into().expect("4 bytes"))),
                    &b[8..12],
                )
            };
            if media_time < 0 {
                complex = true; // an empty edit (inserted silence)
            } else {
                if rate != [0, 1, 0, 0] {
                    complex = true;
                }
                plain.push((media_time as u64, duration));
            }
        }
        if count > 8 || plain.len() != 1 {
            complex = true;
        }
        let t = self.scan.tracks.last_mut().expect("checked above");
        t.edit = plain.first().copied();
        t.complex_edits = complex;
        Ok(())
    }
}

fn printable(kind: &[u8; 4]) -> String {
    kind.iter()
        .map(|&c| {
            if c.is_ascii_graphic() || c == b' ' {
                c as char
            } else {
                '?'
            }
        })
        .collect()
}

/// A file as the MP4 demuxer should see it: with a trailing partial box header hidden and
/// the size of a truncated last box patched to end at the end of the file.
pub(crate) struct Mp4Source {
    file: File,
    len: u64,
    pos: u64,
    patch: Option<(u64, Vec<u8>)>,
}

impl Read for Mp4Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len {
            return Ok(0);
        }
        let max = ((self.len - self.pos).min(buf.len() as u64)) as usize;
        self.file.seek(SeekFrom::Start(self.pos))?;
        let n = self.file.read(&mut buf[..max])?;
        if let Some((at, bytes)) = &self.patch {
            let (start, end) = (self.pos, self.pos + n as u64);
            let (p_start, p_end) = (*at, *at + bytes.len() as u64);
            let lo = start.max(p_start);
            let hi = end.min(p_end);
            if lo < hi {
                buf[(lo - start) as usize..(hi - start) as usize]
                    .copy_from_slice(&bytes[(lo - p_start) as usize..(hi - p_start) as usize]);
            }
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Mp4Source {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek to a negative or overflowing position",
            )
        })?;
        self.pos = target;
        Ok(target)
    }
}

impl MediaSource for Mp4Source {
    fn is_seekable(&self) -> bool {
        true
    }

    fn byte_len(&self) -> Option<u64> {
        Some(self.len)
    }
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

    #[test]
    fn gapless_trim_from_an_edit_list() {
        let scan = Mp4Scan {
            movie_timescale: 1000,
            tracks: vec![TrackEdits {
                media_timescale: 44_100,
                media_duration: 90_112,   // 88 AAC frames
                edit: Some((1024, 2000)), // skip the priming frame, keep 2 s
                complex_edits: false,
            }],
            ..Mp4Scan::default()
        };
        assert_eq!(
            scan.trim(0, 44_100),
            Some(Trim {
                start: 1024,
                keep: Some(88_200)
            })
        );
        // Other output rates scale, unknown tracks have no trim.
        assert_eq!(scan.trim(0, 22_050).unwrap().start, 512);
        assert_eq!(scan.trim(1, 44_100), None);

        // An edit that cuts deep into the media is a real edit, not gapless info: ignored.
        let mut deep = scan;
        deep.tracks[0].edit = Some((44_100 * 5, 2000));
        assert_eq!(deep.trim(0, 44_100), None);
    }

    #[test]
    fn trim_applies_across_buffers() {
        let mut trim = Trim {
            start: 3,
            keep: Some(4),
        };
        let a = [1.0, 2.0];
        let b = [3.0, 4.0, 5.0];
        let c = [6.0, 7.0, 8.0, 9.0];
        assert!(trim.apply(&a).is_empty());
        assert_eq!(trim.apply(&b), &[4.0, 5.0]);
        assert_eq!(trim.apply(&c), &[6.0, 7.0]);
        assert!(trim.apply(&c).is_empty());
    }
}
