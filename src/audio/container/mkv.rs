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
//! for a file cut short).
//!
//! The demuxer also reads the elements the seek head points to, and gives up on the whole file
//! (with a panic, for a target past the end) when one cannot be read: the cues at the end of a
//! file cut short, a stale entry. Those targets are checked the same way, and the entries of
//! those that would fail are hidden from the demuxer (their element ID reads as an unknown one).

mod ebml;

use std::fs::File;
use std::io;

use super::ScannedSource;
use ebml::{Bytes, CLUSTER, Cursor, Vint};

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

const EBML_HEADER: u32 = 0x1A45_DFA3;
const SEGMENT: u32 = 0x1853_8067;
const SEEK: u32 = 0x4DBB;
const SEEK_ID: u32 = 0x53AB;
const SEEK_POSITION: u32 = 0x53AC;
const SIMPLE_BLOCK: u32 = 0xA3;
const BLOCK: u32 = 0xA1;
/// The elements the demuxer reads where the seek head points: Tracks, Info, Tags, Cues.
const READ_FROM_SEEK_HEAD: [u32; 4] = [0x1654_AE6B, 0x1549_A966, 0x1254_C367, 0x1C53_BB6B];

/// At most this many elements are examined (a four-hour WebM has under a million).
const MAX_ELEMENTS: u64 = 20_000_000;

/// What [`scan_mkv`] found: how much of the file the demuxer should see, and the seek entries
/// to hide from it.
#[derive(Debug)]
pub(crate) struct MkvScan {
    visible_len: u64,
    /// (position, length) of the element IDs of seek entries that lead nowhere.
    hidden_seeks: Vec<(u64, u64)>,
}

impl MkvScan {
    /// The file as the demuxer should read it.
    pub(crate) fn source(&self, file: File) -> ScannedSource {
        let source = ScannedSource::new(file, self.visible_len);
        self.hidden_seeks.iter().fold(source, |source, &(at, len)| {
            source.with_patch(at, vec![0xFF; len as usize])
        })
    }
}

/// An entry of a seek head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SeekEntry {
    /// The element ID it points to, and where that ID is written (position, length).
    id: u32,
    id_at: (u64, u64),
    /// Where the element is, from the start of the segment's data.
    position: u64,
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
    let mut hidden_seeks = Vec::new();
    for seek in std::mem::take(&mut walker.seeks) {
        // The demuxer skips IDs it does not know, and reads only these four.
        if !READ_FROM_SEEK_HEAD.contains(&seek.id) || seek.id_at.1 > 8 {
            continue;
        }
        let target = walker
            .segment_data
            .and_then(|s| s.checked_add(seek.position));
        let readable = match target {
            Some(at) if at < visible_len => walker.target_reads(at, seek.id, visible_len)?,
            _ => false,
        };
        if !readable {
            hidden_seeks.push(seek.id_at);
        }
    }
    Ok(MkvScan {
        visible_len,
        hidden_seeks,
    })
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

struct Walker<'a> {
    bytes: Bytes<'a>,
    elements: u64,
    /// The entries of the seek heads.
    seeks: Vec<SeekEntry>,
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
            let h = match self.bytes.header(pos)? {
                Some(Ok(h)) => h,
                Some(Err(at)) => {
                    return Err(fail(in_clusters, at, "an element size is unreadable"));
                }
                None => return Ok(()), // the file ends inside a header: the demuxer stops there
            };
            in_clusters |= h.id == CLUSTER;
            let parent_end = open.last().copied().unwrap_or(u64::MAX);
            if h.id == SEGMENT && self.segment_data.is_none() {
                self.segment_data = Some(h.data);
            }
            // The demuxer reads the EBML header's children as strings and numbers sized from
            // what it takes their sizes to be; one of unknown size, or one inside another
            // element, sends it reading sizes out of the wrong bytes (a 62-byte file asked for
            // 287 GB). The header has a known size and comes first, at the top.
            if h.id == EBML_HEADER && (h.unknown || !open.is_empty() || pos != start) {
                return Err(fail(
                    in_clusters,
                    h.pos,
                    "an EBML header of unknown size or out of place",
                ));
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
                SEEK_ID => seek_id = Some((self.bytes.uint(h.data, size)? as u32, (h.data, size))),
                SEEK_POSITION => {
                    if let Some((id, id_at)) = seek_id {
                        let position = self.bytes.uint(h.data, size)?;
                        self.seeks.push(SeekEntry {
                            id,
                            id_at,
                            position,
                        });
                    }
                }
                _ => {}
            }
            pos = elem_end;
        }
        Ok(())
    }

    /// Whether the demuxer can read the element with ID `id` that a seek entry points to at
    /// `at`: the element is there (after a byte that cannot start an ID, the demuxer takes the
    /// next top-level element), with a known size within the first `visible_len` bytes (the
    /// demuxer reads an element of unknown size to the end of the file, and fails there), and
    /// all of its own elements are sound.
    fn target_reads(&mut self, at: u64, id: u32, visible_len: u64) -> Result<bool, String> {
        let header = self.bytes.header(at).map_err(|e| e.to_string())?;
        let Some(Ok(h)) = header.filter(|h| h.is_ok_and(|h| h.id == id)) else {
            return Ok(false);
        };
        let Some(end) = h.known_end().filter(|&end| end <= visible_len) else {
            return Ok(false);
        };
        Ok(self.walk(h.pos, end, false).is_ok())
    }

    /// Whether the lace sizes of the block whose data (`size` bytes) is at `data` fit in it,
    /// read as the demuxer reads them. A block that ends before its sizes do is the demuxer's
    /// to refuse (it fails reading them); a size it would misread (a zero first byte, a
    /// negative or overflowing EBML lace) does not fit.
    fn laces_fit(&mut self, data: u64, size: u64) -> Result<bool, Stop> {
        let bytes = &mut self.bytes;
        let end = data + size;
        let mut r = Cursor { pos: data, end };
        // Track number, relative timestamp, flags.
        match r.vint(bytes)? {
            Vint::Value(..) => {}
            Vint::End => return Ok(true),
            Vint::Zero => return Ok(false),
        }
        r.pos += 2;
        let Some(flags) = r.byte(bytes)? else {
            return Ok(true);
        };
        let lacing = (flags >> 1) & 0b11;
        if lacing == 0b00 || lacing == 0b10 {
            return Ok(true); // no lacing, or equal sizes that divide the block
        }
        let Some(count) = r.byte(bytes)? else {
            return Ok(true);
        };
        let mut sizes: Vec<u64> = Vec::with_capacity(usize::from(count));
        while sizes.len() < usize::from(count) {
            let next = if lacing == 0b01 {
                r.xiph(bytes)?.map_or(Vint::End, |s| Vint::Value(s, 1))
            } else {
                r.vint(bytes)?
            };
            let (value, len) = match next {
                Vint::Value(value, len) => (value, len),
                Vint::End => return Ok(true),
                Vint::Zero => return Ok(false),
            };
            let size = match sizes.last() {
                Some(&last) if lacing == 0b11 => {
                    // A signed difference from the previous size.
                    let half_range = (1i64 << (len * 7 - 1)) - 1;
                    let delta = (value as i64).wrapping_sub(half_range);
                    let Some(size) = i64::try_from(last)
                        .ok()
                        .and_then(|last| last.checked_add(delta))
                        .and_then(|s| u64::try_from(s).ok())
                    else {
                        return Ok(false);
                    };
                    size
                }
                _ => value,
            };
            sizes.push(size);
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
        // A zero first byte of its size: unreadable.
        let mut bytes = file(b"OpusHead", 8, &[0x81, 0, 0, 0x80, 1, 2, 3]);
        let private = bytes.windows(2).position(|w| w == [0x63, 0xA2]).unwrap();
        bytes[private + 2] = 0;
        assert!(scan(&bytes).unwrap_err().contains("unreadable"));
    }

    #[test]
    fn seek_entries_that_lead_nowhere_are_hidden() {
        let seek = |id: &[u8], position: u64| {
            let body = [
                element(&[0x53, 0xAB], id.len() as u64, 1, id),
                element(&[0x53, 0xAC], 8, 1, &position.to_be_bytes()),
            ]
            .concat();
            element(&[0x4D, 0xBB], body.len() as u64, 1, &body)
        };
        let cues = [0x1C, 0x53, 0xBB, 0x6B];
        let tracks = [0x16, 0x54, 0xAE, 0x6B];
        // Cues past the end of the file, and Tracks where they are: right after the seek head,
        // whose length does not depend on the positions (eight bytes each).
        let seek_head = |tracks_at: u64| {
            let entries = [seek(&cues, 1 << 20), seek(&tracks, tracks_at)].concat();
            element(&[0x11, 0x4D, 0x9B, 0x74], entries.len() as u64, 1, &entries)
        };
        let head = seek_head(seek_head(0).len() as u64);
        let plain = file(b"OpusHead", 8, &[0x81, 0, 0, 0x80, 1]);
        // Put the seek head first in the segment (after its 12-byte header).
        let segment = plain
            .windows(4)
            .position(|w| w == [0x18, 0x53, 0x80, 0x67])
            .unwrap();
        let at = segment + 12;
        let bytes = [&plain[..at], &head, &plain[at..]].concat();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&bytes).unwrap();
        let scan = scan_mkv(&mut f, bytes.len() as u64).unwrap();
        assert_eq!(scan.visible_len, bytes.len() as u64);
        // Only the Cues entry is hidden: its ID, after the SeekHead, Seek and SeekID headers.
        let cues_id = (at + 5 + 3 + 3) as u64;
        assert_eq!(scan.hidden_seeks, vec![(cues_id, 4)]);
        assert_eq!(&bytes[cues_id as usize..cues_id as usize + 4], cues);
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
        // EBML lacing of three frames: 5 bytes, then 5 - 10 (53 less the bias of 63): negative.
        let block = [0x81, 0, 0, 0x06, 2, 0x85, 0x80 | 53, 1, 2, 3, 4, 5, 6];
        let bytes = file(b"OpusHead", 8, &block);
        assert!(scan(&bytes).unwrap() < (bytes.len() - block.len()) as u64);
        // A zero byte where the track number starts: the demuxer would misread it.
        let block = [0x00, 0x81, 0, 0, 0x80, 1, 2];
        let bytes = file(b"OpusHead", 8, &block);
        assert!(scan(&bytes).unwrap() < (bytes.len() - block.len()) as u64);
        // Xiph lacing (flags 0x02) whose sizes fit is fine.
        let block = [0x81, 0, 0, 0x02, 1, 3, 1, 2, 3, 4, 5];
        let bytes = file(b"OpusHead", 8, &block);
        assert_eq!(scan(&bytes), Ok(bytes.len() as u64));
    }
}
