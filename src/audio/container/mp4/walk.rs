//! The walk over the box tree of an MP4/MOV file: bounded in boxes and depth, it rejects
//! sample tables that claim more entries than their box holds and reads timescales and edit
//! lists.

use std::fs::File;

use super::{Mp4Scan, TrackEdits};
use crate::audio::container::read_at;

/// At most this many boxes are examined; no real file comes near it.
const MAX_BOXES: u32 = 1_000_000;
/// Maximum nesting depth of boxes.
const MAX_DEPTH: u32 = 16;

/// Boxes whose payload is a list of boxes.
const CONTAINERS: [&[u8; 4]; 13] = [
    b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"udta", b"mvex", b"traf", b"mfra",
    b"meta", b"ilst", b"tref",
];

/// Edit lists longer than this are not the gapless form; only these entries are read.
const MAX_EDITS_READ: u32 = 8;

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
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read.
    fn read(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize, String> {
        read_at(self.file, pos, buf).map_err(|e| e.to_string())
    }

    /// Reads the box header at `pos`; `parent_end` bounds the box (`u64::MAX` at the top
    /// level, where a box may run past the end of a truncated file). A size of 0 ("to the
    /// end") is reported with `end == u64::MAX` at the top level.
    fn header(&mut self, pos: u64, parent_end: u64) -> Result<Option<BoxHeader>, String> {
        self.boxes += 1;
        if self.boxes > MAX_BOXES {
            return Err("the file has an implausible number of boxes".to_owned());
        }
        let mut b = [0u8; 16];
        let n = self.read(pos, &mut b)?;
        if n < 8 {
            return Ok(None);
        }
        let kind = [b[4], b[5], b[6], b[7]];
        let (header_len, size, large) = match be_u32(&b) {
            1 => {
                if n < 16 {
                    return Ok(None);
                }
                (16u64, Some(be_u64(&b[8..])), true)
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
            let n = self.read(pos, &mut b)?;
            if n == 8
                && !b[4..8]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b' ')
            {
                pos += 4;
            }
        }
        if &parent.kind == b"trak" {
            self.scan.tracks.push(TrackEdits::default());
        }
        while pos + 8 <= parent_end {
            let Some(h) = self.header(pos, parent_end)? else {
                break;
            };
            self.check(&h, parent, depth)?;
            pos = h.end;
        }
        // The demuxer reads one more box header wherever its parent has bytes left, even fewer
        // than a header's eight: spanning the parent's end, it would take the next box's bytes
        // for a box no check has seen. Only a zero size (QuickTime's terminator) ends it there.
        if pos < parent_end && parent_end != u64::MAX {
            let mut size = [0u8; 4];
            let n = self.read(pos, &mut size)?;
            if n < 4 || size != [0; 4] {
                return Err(format!(
                    "a box header is cut off at the end of {}",
                    printable(&parent.kind)
                ));
            }
        }
        Ok(())
    }

    /// Descends into container boxes and checks or reads the boxes that matter.
    fn check(&mut self, h: &BoxHeader, parent: &BoxHeader, depth: u32) -> Result<(), String> {
        if CONTAINERS.contains(&&h.kind) || &parent.kind == b"ilst" {
            return self.children(h, h.end, depth + 1);
        }
        if let Some(layout) = table_layout(&h.kind) {
            return self.check_table(h, layout);
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

    /// Rejects a table whose entry count does not fit in its box; reads an edit list.
    fn check_table(&mut self, h: &BoxHeader, (fixed, per_entry): (u64, u64)) -> Result<(), String> {
        let payload = h.end - h.payload;
        let mut b = [0u8; 12];
        let n = self.read(h.payload, &mut b)?;
        if (n as u64) < fixed.min(payload) || payload < fixed {
            return Err(format!("the {} table is cut short", printable(&h.kind)));
        }
        let version = b[0];
        let (count, per_entry) = match &h.kind {
            b"stsz" => {
                let sample_size = be_u32(&b[4..]);
                let count = be_u32(&b[8..]);
                (if sample_size == 0 { count } else { 0 }, per_entry)
            }
            b"elst" => (be_u32(&b[4..]), edit_len(version)),
            _ => (be_u32(&b[4..]), per_entry),
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
        Ok(())
    }

    /// Timescale and duration from an `mvhd` or `mdhd` box.
    fn read_timescale(&mut self, h: &BoxHeader) -> Result<(u32, u64), String> {
        let mut b = [0u8; 32];
        let n = self.read(h.payload, &mut b)?;
        let avail = (n as u64).min(h.end - h.payload) as usize;
        let b = &b[..avail];
        let parsed = match b.first() {
            Some(1) if b.len() >= 32 => Some((be_u32(&b[20..]), be_u64(&b[24..]))),
            Some(_) if b.len() >= 20 => Some((be_u32(&b[12..]), u64::from(be_u32(&b[16..])))),
            _ => None,
        };
        parsed.ok_or_else(|| format!("the {} box is cut short", printable(&h.kind)))
    }

    /// Reads the edit list of the current track: its single plain edit, if that is its form.
    fn read_edits(&mut self, pos: u64, count: u32, version: u8) -> Result<(), String> {
        if self.scan.tracks.is_empty() {
            return Ok(()); // an edit list outside a track
        }
        let entry_len = edit_len(version);
        let mut plain = Vec::new();
        let mut complex = false;
        // Only the first few entries matter for the gapless form.
        for i in 0..count.min(MAX_EDITS_READ) {
            let mut b = [0u8; 20];
            let n = self.read(pos + u64::from(i) * entry_len, &mut b[..entry_len as usize])?;
            if n < entry_len as usize {
                return Err("the edit list is cut short".to_owned());
            }
            let (duration, media_time, rate) = edit_entry(&b, version);
            if media_time < 0 {
                complex = true; // an empty edit (inserted silence)
            } else {
                if rate != [0, 1, 0, 0] {
                    complex = true;
                }
                plain.push((media_time as u64, duration));
            }
        }
        if count > MAX_EDITS_READ || plain.len() != 1 {
            complex = true;
        }
        let t = self.scan.tracks.last_mut().expect("checked above");
        t.edit = plain.first().copied();
        t.complex_edits = complex;
        Ok(())
    }
}

/// (bytes before the table, bytes per entry) for the tables the demuxer pre-allocates.
fn table_layout(kind: &[u8; 4]) -> Option<(u64, u64)> {
    match kind {
        b"stts" | b"ctts" | b"co64" => Some((8, 8)),
        b"stsc" => Some((8, 12)),
        b"stco" | b"stss" => Some((8, 4)),
        b"stsz" => Some((12, 4)),
        b"elst" => Some((8, 12)),
        _ => None,
    }
}

/// Bytes per edit-list entry.
fn edit_len(version: u8) -> u64 {
    if version == 1 { 20 } else { 12 }
}

/// (duration in movie units, media time, media rate) of an edit-list entry.
fn edit_entry(b: &[u8; 20], version: u8) -> (u64, i64, &[u8]) {
    if version == 1 {
        (be_u64(&b[0..]), be_u64(&b[8..]) as i64, &b[16..20])
    } else {
        (
            u64::from(be_u32(&b[0..])),
            i64::from(be_u32(&b[4..]) as i32),
            &b[8..12],
        )
    }
}

/// The big-endian `u32` at the start of `b`.
fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

/// The big-endian `u64` at the start of `b`.
fn be_u64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().expect("8 bytes"))
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
