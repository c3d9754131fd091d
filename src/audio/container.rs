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
//! * [`scan_mkv`] walks the EBML elements of Matroska / WebM files and [`scan_caf`] the chunks
//!   of CAF files, refusing the sizes those demuxers would allocate buffers from unchecked
//!   (see their modules).

mod caf;
mod mkv;
mod mp4;
mod sniff;
mod source;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

pub(crate) use caf::scan_caf;
pub(crate) use mkv::scan_mkv;
pub(crate) use mp4::{Mp4Scan, Trim, scan_mp4};
pub(crate) use sniff::{Container, Sniffed, sniff};
pub(crate) use source::ScannedSource;

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
