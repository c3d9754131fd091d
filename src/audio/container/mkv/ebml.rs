//! Reading EBML as the Matroska demuxer reads it: element headers (with its resynchronisation
//! after a byte that cannot start an ID, and its reading of sizes), variable-size integers,
//! and the file through a window.

use std::fs::File;
use std::io;

use crate::audio::container::read_at;

pub(super) const CLUSTER: u32 = 0x1F43_B675;

/// Where the demuxer resynchronises.
const TOP_LEVEL: [u32; 6] = [
    CLUSTER,
    0x1C53_BB6B, // Cues
    0x1549_A966, // Info
    0x114D_9B74, // SeekHead
    0x1254_C367, // Tags
    0x1654_AE6B, // Tracks
];

/// Bytes read from the file at a time.
const WINDOW: usize = 64 * 1024;

/// An element header as the demuxer reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub id: u32,
    pub pos: u64,
    pub data: u64,
    /// The declared size as the demuxer reads it (0 for the one-byte unknown size).
    pub size: u64,
    /// Whether the size is unknown: 0, or all ones at any width (the demuxer reads only the
    /// one-byte form so, but writers use wider ones: browsers do for live WebM).
    pub unknown: bool,
}

impl Header {
    /// Where a master element ends, if it says.
    pub(super) fn known_end(&self) -> Option<u64> {
        (!self.unknown).then(|| self.data.saturating_add(self.size))
    }
}

/// An EBML variable-size integer as read.
pub(super) enum Vint {
    /// The value and its length in bytes (the one-byte all-ones form reads as `u64::MAX`, as
    /// the demuxer has it).
    Value(u64, u32),
    /// The data ended first.
    End,
    /// A zero first byte, which the demuxer misreads.
    Zero,
}

/// A read position inside a block, not past its end.
pub(super) struct Cursor {
    pub pos: u64,
    pub end: u64,
}

impl Cursor {
    pub(super) fn byte(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<u8>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let b = bytes.byte(self.pos)?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn vint(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Vint> {
        let Some(first) = self.byte(bytes)? else {
            return Ok(Vint::End);
        };
        if first == 0xFF {
            return Ok(Vint::Value(u64::MAX, 1));
        }
        if first == 0 {
            return Ok(Vint::Zero);
        }
        let width = first.leading_zeros();
        let mut value = u64::from(first ^ (0x80 >> width));
        for _ in 0..width {
            let Some(b) = self.byte(bytes)? else {
                return Ok(Vint::End);
            };
            value = (value << 8) | u64::from(b);
        }
        Ok(Vint::Value(value, width + 1))
    }

    /// A Xiph lace size: a run of 255s and the byte that ends it, added up.
    pub(super) fn xiph(&mut self, bytes: &mut Bytes<'_>) -> io::Result<Option<u64>> {
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
pub(super) struct Bytes<'a> {
    file: &'a mut File,
    pub len: u64,
    buf: Vec<u8>,
    start: u64,
}

impl<'a> Bytes<'a> {
    pub(super) fn new(file: &'a mut File, len: u64) -> Self {
        Bytes {
            file,
            len,
            buf: Vec::new(),
            start: 0,
        }
    }

    /// The byte at `pos`; `None` past the end of the file.
    pub(super) fn byte(&mut self, pos: u64) -> io::Result<Option<u8>> {
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
    pub(super) fn uint(&mut self, pos: u64, size: u64) -> io::Result<u64> {
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
    /// start an ID, the next top-level ID is taken. `None` where the file ends first; an error
    /// with the element's position where the demuxer would misread its size.
    pub(super) fn header(&mut self, pos: u64) -> io::Result<Option<Result<Header, u64>>> {
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
        let (size, size_len) = match r.vint(self)? {
            Vint::Value(size, len) => (size, len),
            Vint::End => return Ok(None),
            Vint::Zero => return Ok(Some(Err(id_pos))),
        };
        let one_byte_unknown = size == u64::MAX;
        let all_ones = one_byte_unknown || size == (1u64 << (7 * size_len)) - 1;
        let size = if one_byte_unknown { 0 } else { size };
        Ok(Some(Ok(Header {
            id,
            pos: id_pos,
            data: r.pos,
            size,
            unknown: size == 0 || all_ones,
        })))
    }
}
