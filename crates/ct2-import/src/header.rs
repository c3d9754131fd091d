//! Bounded sequential reading of a `model.bin` header: little-endian integers and
//! length-prefixed strings, never past the end of the file whatever the counts say.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;

use super::Ct2Error;

/// Sequential reader over the header that knows the file length, so that no
/// count or size read from the file can make it read past the end.
pub(super) struct HeaderReader<'a> {
    inner: BufReader<&'a File>,
    pos: u64,
    len: u64,
    path: &'a Path,
}

impl<'a> HeaderReader<'a> {
    /// Reads `file` (opened from `path`) from its start.
    pub fn new(file: &'a File, path: &'a Path) -> Result<Self, Ct2Error> {
        let len = file.metadata().map_err(Ct2Error::reading(path))?.len();
        Ok(HeaderReader {
            inner: BufReader::new(file),
            pos: 0,
            len,
            path,
        })
    }

    /// Bytes read so far: the file offset of what comes next.
    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn truncated(&self, what: &str) -> Ct2Error {
        Ct2Error::Truncated {
            path: self.path.to_path_buf(),
            what: what.to_string(),
        }
    }

    pub fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Ct2Error> {
        let mut buf = [0u8; N];
        match self.inner.read_exact(&mut buf) {
            Ok(()) => {
                self.pos += N as u64;
                Ok(buf)
            }
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(self.truncated(what)),
            Err(source) => Err(Ct2Error::reading(self.path)(source)),
        }
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, Ct2Error> {
        Ok(self.bytes::<1>(what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16, Ct2Error> {
        Ok(u16::from_le_bytes(self.bytes(what)?))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, Ct2Error> {
        Ok(u32::from_le_bytes(self.bytes(what)?))
    }

    pub fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    pub fn string(&mut self, what: &str) -> Result<String, Ct2Error> {
        let n = self.u16(what)? as usize;
        if n as u64 > self.remaining() {
            return Err(self.truncated(what));
        }
        let mut buf = vec![0u8; n];
        match self.inner.read_exact(&mut buf) {
            Ok(()) => self.pos += n as u64,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Err(self.truncated(what)),
            Err(source) => return Err(Ct2Error::reading(self.path)(source)),
        }
        if buf.pop() != Some(0) {
            return Err(self.malformed(format!("a string in {what} is not NUL-terminated")));
        }
        String::from_utf8(buf)
            .map_err(|_| self.malformed(format!("a string in {what} is not valid UTF-8")))
    }

    pub fn skip(&mut self, n: u64, what: &str) -> Result<(), Ct2Error> {
        if n > self.remaining() {
            return Err(self.truncated(what));
        }
        let delta = i64::try_from(n).map_err(|_| self.truncated(what))?;
        self.inner
            .seek_relative(delta)
            .map_err(Ct2Error::reading(self.path))?;
        self.pos += n;
        Ok(())
    }

    pub fn malformed(&self, reason: String) -> Ct2Error {
        Ct2Error::Malformed {
            path: self.path.to_path_buf(),
            reason,
        }
    }
}
