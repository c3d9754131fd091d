//! A file as a demuxer reads it after a container scan: the end moved to where the scan found
//! the file cut short or unusable, and a few bytes patched (an MP4 box cut short, Matroska seek
//! entries that lead nowhere).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use symphonia::core::io::MediaSource;

/// A file as the demuxer should see it: only its first `len` bytes, with a few bytes replaced.
pub(crate) struct ScannedSource {
    file: File,
    len: u64,
    pos: u64,
    /// (position, bytes shown there instead).
    patches: Vec<(u64, Vec<u8>)>,
}

impl ScannedSource {
    /// Shows the first `len` bytes of `file`.
    pub(crate) fn new(file: File, len: u64) -> Self {
        ScannedSource {
            file,
            len,
            pos: 0,
            patches: Vec::new(),
        }
    }

    /// Shows `bytes` at `at` instead of what the file has there.
    pub(super) fn with_patch(mut self, at: u64, bytes: Vec<u8>) -> Self {
        self.patches.push((at, bytes));
        self
    }

    /// Shows the first `len` bytes of `file`; `truncated_box` is the position of the size field
    /// of an MP4 box cut short, its new length and whether the size is in the 64-bit field.
    pub(super) fn mp4(file: File, len: u64, truncated_box: Option<(u64, u64, bool)>) -> Self {
        let source = Self::new(file, len);
        match truncated_box {
            Some((pos, new_len, true)) => {
                source.with_patch(pos + 8, new_len.to_be_bytes().to_vec())
            }
            Some((pos, new_len, false)) => {
                source.with_patch(pos, (new_len as u32).to_be_bytes().to_vec())
            }
            None => source,
        }
    }
}

impl Read for ScannedSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len {
            return Ok(0);
        }
        let max = ((self.len - self.pos).min(buf.len() as u64)) as usize;
        self.file.seek(SeekFrom::Start(self.pos))?;
        let n = self.file.read(&mut buf[..max])?;
        for (at, bytes) in &self.patches {
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

impl Seek for ScannedSource {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "an offset in the file points before its start",
            )
        })?;
        self.pos = target;
        Ok(target)
    }
}

impl MediaSource for ScannedSource {
    fn is_seekable(&self) -> bool {
        true
    }

    fn byte_len(&self) -> Option<u64> {
        Some(self.len)
    }
}
