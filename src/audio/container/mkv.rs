//! Matroska / WebM: a walk over the EBML elements, done before the demuxer sees the file.
//!
//! The demuxer reads binary and string elements into buffers sized from the element's
//! declared length, and the frames of a laced block into buffers sized from the lace sizes,
//! without checking either against the file: a damaged or hostile size asks for terabytes,
//! and a failed allocation aborts the process. The walk follows the elements as the demuxer
//! does (it descends into every master element, steps over every other one, and resynchronises
//! on the next top-level element after a byte that cannot start an element ID) and refuses:
//!
//! * an element that ends past the end of the file (other than a master element, whose
//!   children are checked one by one), or past the end of the master element around it;
//! * a laced block whose lace sizes add up to more than the block holds.
//!
//! Such an element before the first cluster makes the file corrupt. After it, the file is
//! treated as if it ended where the element begins (the audio before it stays readable, as
//! for a file cut short). The elements the seek head points the demuxer to are checked too.

use std::fs::File;
use std::io;

use super::{ScannedSource, read_at};

/// EBML IDs of the master elements (those the demuxer reads children of).
const MASTERS: [u32; 30] = [
    0x1A45_DFA3, // EBML
    0x1853_8067, // Segment
    0x114D_9B74, // SeekHead
    0x4DBB,      // Seek
    0x1549_A966, // Info
    0x1F43_B675, // Cluster
    0xA0,        // BlockGroup
    0x75A1,      // BlockAdditions
    0xA6,        // BlockMore
    0x1654_AE6B, // Tracks
    0xAE,        // TrackEntry
    0xE0,        // Video
    0xE1,        // Audio
    0x6D80,      // ContentEncodings
    0x6240,      // ContentEncoding
    0x5035,      // ContentEncryption
    0x47E7,      // ContentEncAESSettings
    0x55B0,      // Colour
    0x55D0,      // MasteringMetadata
    0x1C53_BB6B, // Cues
    0xBB,        // CuePoint
    0xB7,        // CueTrackPositions
    0x1043_A770, // Chapters
    0x45B9,      // EditionEntry
    0xB6,        // ChapterAtom
    0x80,        // ChapterDisplay
    0x1254_C367, // Tags
    0x7373,      // Tag
    0x63C0,      // Targets
    0x67C8,      // SimpleTag
];

const SEGMENT: u32 = 0x1853_8067;
const CLUSTER: u32 = 0x1F43_B675;
const SEEK: u32 = 0x4DBB;
const SEEK_ID: u32 = 0x53AB;
const SEEK_POSITION: u32 = 0x53AC;
const SIMPLE_BLOCK: u32 = 0xA3;
const BLOCK: u32 = 0xA1;
/// Where the demuxer resynchronises, and what it follows the seek head to.
const TOP_LEVEL: [u32; 6] = [
    CLUSTER,
    0x1C53_BB6B, // Cues
    0x1549_A966, // Info
    0x114D_9B74, // SeekHead
    0x1254_C367, // Tags
    0x1654_AE6B, // Tracks
];

/// At most this many elements are examined (a four-hour WebM has under a million).
const MAX_ELEMENTS: u64 = 20_000_000;
/// Bytes read from the file at a time.
const WINDOW: usize = 64 * 1024;

/// What [`scan_mkv`] found: how much of the file the demuxer should see.
#[derive(Debug)]
pub(crate) struct MkvScan {
    visible_len: u64,
}

impl MkvScan {
    /// The file as the demuxer should read it.
    pub(crate) fn source(&self, file: File) -> ScannedSource {
        ScannedSource::new(file, self.visible_len)
    }
}

/// Walks the elements of a Matroska / WebM file of `len` bytes; see the module docs.
pub(crate) fn scan_mkv(file: &mut File, len: u64) -> Result<MkvScan, String> {
    let mut walker = Walker {
        bytes: Bytes::new(file, len),
        elements: 0,
        seeks: Vec::new(),
        segment_data: None,
    };
    let visible_len = match walker.walk(0, len, true) {
        Ok(()) => len,
        Err(Stop::Cut(pos)) => pos,
        Err(Stop::Bad(why)) => return Err(why),
    };
    // The demuxer reads what the seek head points to before the first cluster.
    let mut seeks = std::mem::take(&mut walker.seeks);
    seeks.sort_unstable();
    seeks.dedup();
    for (id, position) in seeks {
        let Some(at) = walker.segment_data.and_then(|s| s.checked_add(position)) else {
            continue;
        };
        if at < visible_len && TOP_LEVEL.contains(&id) {
            walker.walk_target(at, id, visible_len)?;
        }
    }
    Ok(MkvScan { visible_len })
}

/// Why a walk ended early.
#[derive(Debug)]
enum Stop {
    /// Treat the file as ending here (an element past this point is unusable).
    Cut(u64),
    /// The file cannot be read at all.
    Bad(String),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Bad(format!("the file could not be read ({e})"))
    }
}

/// An element header as the demuxer reads it.
#[derive(Debug, Clone, Copy)]
struct Header {
    id: u32,
    pos: u64,
    data: u64,
    /// The declared size as the demuxer reads it (0 for the one-byte unknown size).
    size: u64,
    /// Whether the size is unknown: 0, or all ones at any width (the demuxer reads only the
    /// one-byte form so, but writers use wider ones: browsers do for live WebM).
    unknown: bool,
}

impl Header {
    /// Where a master element ends, if it says.
    fn known_end(&self) -> Option<u64> {
        (!self.unknown).then(|| self.data.saturating_add(self.size))
    }
}

struct Walker<'a> {
    bytes: Bytes<'a>,
    elements: u64,
    /// (element ID, position in the segment) of each seek head entry.
    seeks: Vec<(u32, u64)>,
    /// Where the segment's data begins (seek positions count from there).
    segment_data: Option<u64>,
}

impl Walker<'_> {
    /// Walks the elements from `start` up to `end` (the whole file, or one element). Problems
    /// are fatal until a cluster was seen when `cut_after_cluster`, then cut the file.
    fn walk(&mut self, start: u64, end: u64, cut_after_cluster: bool) -> Result<(), Stop> {
        let len = self.bytes.len;
        let mut pos = start;
        // Ends of the master elements around `pos`, innermost last.
        let mut open: Vec<u64> = Vec::new();
        let mut in_clusters = false;
        let mut seek_id = None;
        let fail = |in_clusters: bool, at: u64, why: &str| {
            if in_clusters && cut_after_cluster {
                Stop::Cut(at)
            } else {
                Stop::Bad(format!("{why} at byte {at}"))
            }
        };
        while pos < end {
            while open.last().is_some_and(|&e| e <= pos) {
                open.pop();
            }
            self.elements += 1;
            if self.elements > MAX_ELEMENTS {
                return Err(Stop::Bad("too many Matroska elements".to_owned()));
            }
            let Some(h) = self.bytes.header(pos)? else {
                return Ok(()); // the file ends inside a header: the demuxer stops there
            };
            in_clusters |= h.id == CLUSTER;
            let parent_end = open.last().copied().unwrap_or(u64::MAX);
            if h.id == SEGMENT && self.segment_data.is_none() {
                self.segment_data = Some(h.data);
            }
            if MASTERS.contains(&h.id) {
                let own_end = h.known_end();
                if own_end.is_some_and(|e| e > parent_end) {
                    return Err(fail(in_clusters, h.pos, "an element overruns its parent"));
                }
                if h.id == SEEK {
                    seek_id = None;
                }
                open.extend(own_end);
                pos = h.data;
                continue;
            }
            // Everything else is stepped over, or read whole.
            let size = h.size;
            let Some(elem_end) = h.data.checked_add(size).filter(|&e| e <= len) else {
                return Err(fail(in_clusters, h.pos, "an element overruns the file"));
            };
            if elem_end > parent_end {
                return Err(fail(in_clusters, h.pos, "an element overruns its parent"));
            }
            match h.id {
                SIMPLE_BLOCK | BLOCK if !self.laces_fit(h.data, size)? => {
                    return Err(fail(in_clusters, h.pos, "a laced block overruns itself"));
                }
                SEEK_ID => seek_id = Some(self.bytes.uint(h.data, size)? as u32),
                SEEK_POSITION => {
                    if let Some(id) = seek_id {
                        self.seeks.push((id, self.bytes.uint(h.data, size)?));
                    }
                }
                _ => {}
            }
            pos = elem_end;
        }
        Ok(())
    }

    /// Checks the element with ID `id` the seek head points to at `at`, as the demuxer reads it
    /// (the whole rest of the file when its size is unknown).
    fn walk_target(&mut self, at: u64, id: u32, visible_len: u64) -> Result<(), String> {
        let header = self.bytes.header(at).map_err(|e| e.to_string())?;
        // After a byte that cannot start an ID, the demuxer reads the next top-level element.
        let Some(h) = header.filter(|h| h.id == id) else {
            return Ok(()); // the demuxer refuses a wrong element there itself
        };
        let end = h.known_end().unwrap_or(visible_len);
        match self.walk(h.pos, end.min(visible_len), false) {
            Ok(()) | Err(Stop::Cut(_)) => Ok(()),
            Err(Stop::Bad(why)) => Err(why),
        }
    }

    /// Whether the lace sizes of the block whose data (`size` bytes) is at `data` fit in it,
    /// read as the demuxer reads them.
    fn laces_fit(&mut self, data: u64, size: u64) -> Result<bool, Stop> {
        let end = data + size;
        let mut r = Cursor { pos: data, end };
        // Track number, relative timestamp, flags.
        let Some(_) = r.vint(&mut self.bytes)? else {
            return Ok(true);
        };
        r.pos += 2;
        let Some(flags) = r.byte(&mut self.bytes)? else {
            return Ok(true);
        };
        let lacing = (flags >> 1) & 0b11;
        if lacing == 0b00 || lacing == 0b10 {
            return Ok(true); // no lacing, or equal sizes that divide the block
        }
        let Some(count) = r.byte(&mut self.bytes)? else {
            return Ok(true);
        };
        let mut sizes = Vec::with_capacity(usize::from(count));
        while sizes.len() < usize::from(count) {
            let next = if lacing == 0b01 {
                r.xiph(&mut self.bytes)?
            } else if let Some(&last) = sizes.last() {
                r.signed_vint(&mut self.bytes)?
                    .and_then(|d| i64::try_from(last).ok()?.checked_add(d))
                    .and_then(|s| u64::try_from(s).ok())
            } else {
                r.vint(&mut self.bytes)?.map(|(v, _)| v)
            };
            match next {
                Some(s) => sizes.push(s),
                None => return Ok(true), // the block ends in its sizes: the demuxer fails there
            }
        }
        let mut left = end.saturating_sub(r.pos);
        for s in sizes {
            if s > left {
                return Ok(false);
            }
            left -= s;
        }
        Ok(true)
    }
}

/// A read position inside a block, not past its end.
struct Cursor {
    pos: u64,
    end: u64,
}

impl Cursor {
    fn byte(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<u8>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let b = bytes.byte(self.pos)?;
        self.pos += 1;
        Ok(b)
    }

    /// An EBML variable-size integer and its length in bytes (the all-ones one-byte form reads
    /// as `u64::MAX`, as the demuxer has it); `None` at the end or for a zero first byte.
    fn vint(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<(u64, u32)>> {
        let Some(first) = self.byte(bytes)? else {
            return Ok(None);
        };
        if first == 0xFF {
            return Ok(Some((u64::MAX, 1)));
        }
        if first == 0 {
            return Ok(None);
        }
        let width = first.leading_zeros();
        let mut value = u64::from(first ^ (0x80 >> width));
        for _ in 0..width {
            let Some(b) = self.byte(bytes)? else {
                return Ok(None);
            };
            value = (value << 8) | u64::from(b);
        }
        Ok(Some((value, width + 1)))
    }

    fn signed_vint(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<i64>> {
        Ok(self.vint(bytes)?.map(|(value, len)| {
            let half_range = (1i64 << (len * 7 - 1)) - 1;
            (value as i64).wrapping_sub(half_range)
        }))
    }

    /// A Xiph lace size: a run of 255s and the byte that ends it, added up.
    fn xiph(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<u64>> {
        let mut size = 0u64;
        loop {
            match self.byte(bytes)? {
                Some(255) => size += 255,
                Some(b) => return Ok(Some(size + u64::from(b))),
                None => return Ok(None),
            }
        }
    }
}

/// The file, read through a window.
struct Bytes<'a> {
    file: &'a mut File,
    len: u64,
    buf: Vec<u8>,
    start: u64,
}

impl<'a> Bytes<'a> {
    fn new(file: &'a mut File, len: u64) -> Self {
        Bytes {
            file,
            len,
            buf: Vec::new(),
            start: 0,
        }
    }

    /// The byte at `pos`; `None` past the end of the file.
    fn byte(&mut self, pos: u64) -> io::Result<Option<u8>> {
        if pos >= self.len {
            return Ok(None);
        }
        if pos < self.start || pos >= self.start + self.buf.len() as u64 {
            self.buf.resize(WINDOW, 0);
            let n = read_at(self.file, pos, &mut self.buf)?;
            self.buf.truncate(n);
            self.start = pos;
        }
        Ok(self.buf.get((pos - self.start) as usize).copied())
    }

    /// The big-endian unsigned integer of `size` bytes at `pos` (0 when longer than 8 bytes).
    fn uint(&mut self, pos: u64, size: u64) -> io::Result<u64> {
        if size > 8 {
            return Ok(0);
        }
        let mut value = 0u64;
        for i in 0..size {
            value = (value << 8) | u64::from(self.byte(pos + i)?.unwrap_or(0));
        }
        Ok(value)
    }

    /// The element header at `pos`, read as the demuxer reads it: after a byte that cannot
    /// start an ID, the next top-level ID is taken. `None` where the file ends first, or where
    /// the demuxer would fail on the header.
    fn header(&mut self, pos: u64) -> io::Result<Option<Header>> {
        let mut r = Cursor { pos, end: self.len };
        let Some(first) = r.byte(self)? else {
            return Ok(None);
        };
        let width = first.leading_zeros();
        let (id, id_pos) = if width <= 3 {
            let mut id = u32::from(first);
            for _ in 0..width {
                let Some(b) = r.byte(self)? else {
                    return Ok(None);
                };
                id = (id << 8) | u32::from(b);
            }
            (id, pos)
        } else {
            let mut id = 0u32;
            loop {
                if TOP_LEVEL.contains(&id) {
                    break (id, r.pos - 4);
                }
                let Some(b) = r.byte(self)? else {
                    return Ok(None);
                };
                id = (id << 8) | u32::from(b);
            }
        };
        let Some((size, size_len)) = r.vint(self)? else {
            return Ok(None);
        };
        let one_byte_unknown = size == u64::MAX;
        let all_ones = one_byte_unknown || size == (1u64 << (7 * size_len)) - 1;
        let size = if one_byte_unknown { 0 } else { size };
        Ok(Some(Header {
            id,
            pos: id_pos,
            data: r.pos,
            size,
            unknown: size == 0 || all_ones,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn vint(value: u64, width: u32) -> Vec<u8> {
        let marked = value | (1u64 << (7 * width));
        marked.to_be_bytes()[8 - width as usize..].to_vec()
    }

    fn element(id: &[u8], size: u64, width: u32, data: &[u8]) -> Vec<u8> {
        [id, &vint(size, width), data].concat()
    }

    /// An EBML header, a segment of unknown size, a track entry with `private` as its codec
    /// private data (declared as `private_size` bytes), and a cluster with `block`.
    fn file(private: &[u8], private_size: u64, block: &[u8]) -> Vec<u8> {
        let doctype = element(&[0x42, 0x82], 4, 1, b"webm");
        let ebml = element(&[0x1A, 0x45, 0xDF, 0xA3], doctype.len() as u64, 1, &doctype);
        let codec_private = element(&[0x63, 0xA2], private_size, 8, private);
        let entry = element(&[0xAE], codec_private.len() as u64, 1, &codec_private);
        let tracks = element(&[0x16, 0x54, 0xAE, 0x6B], entry.len() as u64, 2, &entry);
        let simple_block = element(&[0xA3], block.len() as u64, 2, block);
        let timestamp = element(&[0xE7], 1, 1, &[0]);
        let cluster_body = [timestamp, simple_block].concat();
        let cluster = element(
            &[0x1F, 0x43, 0xB6, 0x75],
            cluster_body.len() as u64,
            4,
            &cluster_body,
        );
        let mut segment = vec![
            0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        ];
        segment.extend_from_slice(&tracks);
        segment.extend_from_slice(&cluster);
        [ebml, segment].concat()
    }

    fn scan(bytes: &[u8]) -> Result<u64, String> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        scan_mkv(&mut f, bytes.len() as u64).map(|s| s.visible_len)
    }

    #[test]
    fn a_well_formed_file_is_seen_whole() {
        let bytes = file(b"OpusHead", 8, &[0x81, 0, 0, 0x80, 1, 2, 3]);
        assert_eq!(scan(&bytes), Ok(bytes.len() as u64));
        // Cut inside the block: the block overruns the file, so the file ends before it.
        let cut = &bytes[..bytes.len() - 2];
        assert!(scan(cut).unwrap() < cut.len() as u64 - 7);
    }

    #[test]
    fn a_codec_private_size_past_the_file_is_corrupt() {
        let bytes = file(b"OpusHead", 1 << 50, &[0x81, 0, 0, 0x80, 1, 2, 3]);
        assert!(scan(&bytes).unwrap_err().contains("overruns"));
    }

    #[test]
    fn laces_bigger_than_their_block_cut_the_file_there() {
        // EBML lacing (flags 0x06), two frames, the first declared as 2^48 bytes.
        let mut block = vec![0x81, 0, 0, 0x06, 1];
        block.extend(vint(1 << 48, 7));
        block.extend_from_slice(&[9; 16]);
        let bytes = file(b"OpusHead", 8, &block);
        let visible = scan(&bytes).unwrap();
        assert!(
            visible < bytes.len() as u64 - block.len() as u64,
            "{visible}"
        );
        // Xiph lacing (flags 0x02) whose sizes fit is fine.
        let block = [0x81, 0, 0, 0x02, 1, 3, 1, 2, 3, 4, 5];
        let bytes = file(b"OpusHead", 8, &block);
        assert_eq!(scan(&bytes), Ok(bytes.len() as u64));
    }
}
